//! A providerSpec with a merge patch applied, built without copying it.
//!
//! A boot image patch sets a field or two (`ami`, a disk's `image`, the
//! `image` block, `template`), while a providerSpec carries tags, block
//! devices, security groups and more. Cloning the whole providerSpec for
//! every decision to apply the patch to was a third of the authority
//! check's time (docs/dev/records/benchmarks.md). A JSON merge patch (RFC 7396) whose
//! top level is an object changes each top-level field of an object
//! independently, so only the fields the patch names are merged here, from
//! copies of those fields alone; every other field is the original's.

use serde_json::{Map, Value};

use super::{Change, diff, diff_field};

/// `before` after a merge patch, as far as the authority check reads it.
pub(crate) enum Patched<'a> {
    /// `before` is an object: the fields the patch names, in key order,
    /// each merged (`None`: the patch removes it); every other field is
    /// `before`'s own.
    Fields {
        before: &'a Map<String, Value>,
        fields: Vec<(&'a str, Option<Value>)>,
    },
    /// `before` is not an object (or the patch is not), so the patch
    /// replaces it whole: a patch object turns anything else into an
    /// object first.
    Whole { before: &'a Value, after: Value },
}

impl<'a> Patched<'a> {
    /// `patch` is the providerSpec part of the decision's merge patch;
    /// `None` when the decision leaves the providerSpec alone.
    pub(crate) fn new(before: &'a Value, patch: Option<&'a Value>) -> Patched<'a> {
        match (before, patch) {
            (Value::Object(before), None) => Patched::Fields {
                before,
                fields: Vec::new(),
            },
            (Value::Object(before), Some(Value::Object(patch))) => Patched::Fields {
                before,
                // serde_json's map iterates in key order, as `diff` walks.
                fields: patch
                    .iter()
                    .map(|(key, value)| {
                        let merged = (!value.is_null()).then(|| {
                            let mut field = before.get(key).cloned().unwrap_or(Value::Null);
                            json_patch::merge(&mut field, value);
                            field
                        });
                        (key.as_str(), merged)
                    })
                    .collect(),
            },
            (before, patch) => {
                let mut after = before.clone();
                if let Some(patch) = patch {
                    json_patch::merge(&mut after, patch);
                }
                Patched::Whole { before, after }
            }
        }
    }

    /// The top-level field `key` after the patch.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Patched::Fields { before, fields } => match fields.iter().find(|(k, _)| *k == key) {
                Some((_, merged)) => merged.as_ref(),
                None => before.get(key),
            },
            Patched::Whole { after, .. } => after.get(key),
        }
    }

    /// [`Value::pointer`] on the providerSpec after the patch, for a
    /// pointer into one of its fields (`""`, the whole providerSpec, is
    /// not one: `None`).
    pub(crate) fn pointer(&self, pointer: &str) -> Option<&Value> {
        match self {
            Patched::Whole { .. } if pointer.is_empty() => None,
            Patched::Whole { after, .. } => after.pointer(pointer),
            Patched::Fields { .. } => {
                let rest = pointer.strip_prefix('/')?;
                let (first, rest) = match rest.find('/') {
                    Some(at) => rest.split_at(at),
                    None => (rest, ""),
                };
                let key = first.replace("~1", "/").replace("~0", "~");
                self.get(&key)?.pointer(rest)
            }
        }
    }

    /// The string at `pointer` after the patch, if there is one.
    pub(crate) fn str_at(&self, pointer: &str) -> Option<&str> {
        self.pointer(pointer).and_then(Value::as_str)
    }

    /// Every path where the patch changes `before` (see [`diff`]), in the
    /// order `diff` finds them on the materialized result; none when the
    /// patch leaves it exactly as it was.
    pub(crate) fn changes(&self) -> Vec<Change<'_>> {
        let mut changes = Vec::new();
        match self {
            Patched::Fields { before, fields } => {
                let mut path = Vec::new();
                for (key, merged) in fields {
                    diff_field(
                        &mut path,
                        key,
                        before.get(*key),
                        merged.as_ref(),
                        &mut changes,
                    );
                }
            }
            Patched::Whole { before, after } => {
                diff(&mut Vec::new(), Some(before), Some(after), &mut changes)
            }
        }
        changes
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    /// JSON values small enough to collide: few keys, shallow, with nulls
    /// (a merge patch's removal) and every scalar kind.
    fn value() -> impl Strategy<Value = Value> {
        let key = prop::sample::select(vec!["a", "b", "c", "a/b", "t~0"]);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (0..3i64).prop_map(Value::from),
            prop::sample::select(vec!["x", "y"]).prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::btree_map(key.clone(), inner, 0..4).prop_map(|m| {
                    Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                }),
            ]
        })
    }

    fn shown(changes: &[Change<'_>]) -> Vec<(String, Option<Value>)> {
        changes
            .iter()
            .map(|c| (c.display(), c.after.cloned()))
            .collect()
    }

    proptest! {
        // A failure prints its minimal case; nothing is written beside the source.
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

        /// Reading the patched view is reading the patched copy: every
        /// field and pointer, whether anything changed, and the changes in
        /// the same order.
        #[test]
        fn agrees_with_the_merged_copy(before in value(), patch in value()) {
            let mut merged = before.clone();
            json_patch::merge(&mut merged, &patch);
            let patched = Patched::new(&before, Some(&patch));
            prop_assert_eq!(patched.changes().is_empty(), merged == before);
            let mut expected = Vec::new();
            diff(&mut Vec::new(), Some(&before), Some(&merged), &mut expected);
            prop_assert_eq!(shown(&patched.changes()), shown(&expected));
            for pointer in ["/a", "/b/a", "/a~1b", "/a~1b/c", "/t~00", "/c/0", "/a/1/b", "a"] {
                prop_assert_eq!(patched.pointer(pointer), merged.pointer(pointer), "{}", pointer);
            }
            for key in ["a", "b", "c", "a/b", "t~0"] {
                prop_assert_eq!(patched.get(key), merged.get(key));
            }
        }
    }

    #[test]
    fn only_the_fields_the_patch_names_are_copied() {
        let before = json!({"ami": {"id": "ami-old"}, "tags": [{"name": "a", "value": "b"}]});
        let patch = json!({"ami": {"id": "ami-new", "arn": null}});
        let Patched::Fields { fields, .. } = Patched::new(&before, Some(&patch)) else {
            panic!("an object providerSpec keeps its fields");
        };
        assert_eq!(fields, [("ami", Some(json!({"id": "ami-new"})))]);
    }

    #[test]
    fn no_patch_changes_nothing() {
        for before in [json!({"template": "t"}), json!(["not", "an", "object"])] {
            let patched = Patched::new(&before, None);
            assert!(patched.changes().is_empty());
            assert_eq!(patched.pointer("/template"), before.pointer("/template"));
        }
    }

    #[test]
    fn a_provider_spec_that_is_not_an_object_is_replaced() {
        let before = json!("not an object");
        let patch = json!({"ami": {"id": "ami-new"}});
        let patched = Patched::new(&before, Some(&patch));
        assert_eq!(patched.pointer("/ami/id"), Some(&json!("ami-new")));
        assert!(!patched.changes().is_empty());
    }
}
