//! A boot image decision's patch as the host reads it before it disposes:
//! the providerSpec with the patch applied (`patched`), every path it
//! changes, the fields a platform owns, and the rules a decision can break
//! (`refusal`). It sits below the platform table (`bootimage/platform`),
//! whose image checks read a [`Proposal`], and the authority
//! (`bootimage/authority`), which builds one and looks its platform up in
//! the table; it names neither.

use std::collections::BTreeSet;

use mco_bootimage::Stream;
use mco_bootimage::ec2::Ec2Facts;
use mco_bootimage::vcenter::{TemplateImport, VcenterFacts};
use mco_k8s_rules::bounded;
use serde_json::Value;

mod patched;
mod refusal;

pub(crate) use patched::Patched;
pub use refusal::{Refusal, Rule};

/// How much of an offending value a message quotes, in bytes.
pub(crate) const QUOTE: usize = 120;

/// What a decision may do to one owned field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum May {
    /// Set it to the image the stream publishes (checked per platform).
    SetImage,
    /// Remove it (merge patch `null`); any other value is refused.
    Clear,
}

/// One providerSpec.value path a platform's boot image decision may change.
/// `[]` stands for any index of an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owned {
    pub path: &'static str,
    pub may: May,
}

pub(crate) const fn owned(path: &'static str, may: May) -> Owned {
    Owned { path, may }
}

/// A patch as each platform's image check reads it: the providerSpec
/// before and after it, and every path it changes; on vSphere also the
/// template import it asks for and what the host read from vCenter.
pub(crate) struct Proposal<'a> {
    pub stream: &'a Stream,
    pub arch: &'a str,
    pub before: &'a Value,
    pub after: &'a Patched<'a>,
    pub changes: &'a [Change<'a>],
    pub import: Option<&'a TemplateImport>,
    pub vcenter: Option<&'a VcenterFacts>,
    /// AWS: what the host read from EC2 for the MachineSet.
    pub ec2: Option<&'a Ec2Facts>,
}

#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

/// One changed leaf (or a subtree that changed shape).
pub(crate) struct Change<'a> {
    path: Vec<Seg>,
    pub(crate) after: Option<&'a Value>,
}

impl Change<'_> {
    fn render(&self, index: impl Fn(usize) -> String) -> String {
        let mut out = String::new();
        for seg in &self.path {
            match seg {
                Seg::Key(key) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(key);
                }
                Seg::Index(i) => out.push_str(&index(*i)),
            }
        }
        bounded(out, QUOTE)
    }

    pub(crate) fn display(&self) -> String {
        self.render(|i| format!("[{i}]"))
    }

    /// The path as [`Owned::path`] spells it.
    pub(crate) fn pattern(&self) -> String {
        self.render(|_| "[]".into())
    }

    pub(crate) fn index(&self) -> Option<usize> {
        self.path.iter().find_map(|seg| match seg {
            Seg::Index(i) => Some(*i),
            Seg::Key(_) => None,
        })
    }
}

/// Every path where `before` and `after` differ. Objects are compared key
/// by key and arrays of equal length index by index, so an owned leaf deep
/// inside (a boot disk's image) is told apart from its siblings. Equal
/// subtrees hold no change and are not walked: a patch changes a leaf or
/// two of a providerSpec, and the walk costs what the path to them costs.
fn diff<'a>(
    path: &mut Vec<Seg>,
    before: Option<&'a Value>,
    after: Option<&'a Value>,
    out: &mut Vec<Change<'a>>,
) {
    match (before, after) {
        (Some(Value::Object(b)), Some(Value::Object(a))) => {
            let keys: BTreeSet<&String> = b.keys().chain(a.keys()).collect();
            for key in keys {
                diff_field(path, key, b.get(key), a.get(key), out);
            }
        }
        (Some(Value::Array(b)), Some(Value::Array(a))) if a.len() == b.len() => {
            for (i, (b, a)) in b.iter().zip(a).enumerate() {
                if b != a {
                    path.push(Seg::Index(i));
                    diff(path, Some(b), Some(a), out);
                    path.pop();
                }
            }
        }
        (b, a) if b != a => out.push(Change {
            path: path.clone(),
            after: a,
        }),
        _ => {}
    }
}

/// [`diff`] below the object field `key`, when it differs.
fn diff_field<'a>(
    path: &mut Vec<Seg>,
    key: &str,
    before: Option<&'a Value>,
    after: Option<&'a Value>,
    out: &mut Vec<Change<'a>>,
) {
    if before != after {
        path.push(Seg::Key(key.to_owned()));
        diff(path, before, after, out);
        path.pop();
    }
}

pub(crate) fn str_at<'v>(value: &'v Value, pointer: &str) -> Option<&'v str> {
    value.pointer(pointer).and_then(Value::as_str)
}
