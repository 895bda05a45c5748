//! The host side of WIT `node-inputs`: what a node-state guest is lent for
//! one `derive` call instead of a copy. The node's labels are looked up by
//! key, and each rendered config the call may read is handed over as the
//! summary the host computed natively when the MachineConfig was decoded
//! (`objects::SpecSummary`, once per resourceVersion), with only the file
//! and unit entries that are not the same in all of the call's configs:
//! equal entries are all a plan could learn from the rest, so what crosses
//! grows with the change, not with the configs.
//!
//! The handles live in the store's resource table for the call only: the
//! host takes them back as soon as the call returns ([`Lent::reclaim`]).
//! The component model's borrow rules trap a guest that keeps a handle
//! past the call or uses an index it was not lent; the host traps one
//! that looks up more than
//! [`LOOKUP_BUDGET`](mco_runtime::LOOKUP_BUDGET) times through one handle
//! in one call.

use std::collections::{BTreeMap, BTreeSet};

use mco_mcn as logic;
use mco_runtime::{GuestState, charge};
use wasmtime::component::{Resource, ResourceTable};
use wasmtime_wasi::WasiView as _;

/// The WIT binding of world `node-state-reporter`, here because its
/// handles are the types below.
pub(super) mod wit_bindings {
    wasmtime::component::bindgen!({
        world: "node-state-reporter",
        path: "../../../wit",
        // The facts are lowered straight from the host's own strings: no
        // copy of them is made for a call (`guest::with_wit`).
        ownership: Borrowing { duplicate_if_necessary: true },
        // A lookup past its budget traps the guest (`charge`).
        imports: { default: trappable },
        with: {
            "mco:machine-config/node-inputs.node-labels": super::NodeLabels,
            "mco:machine-config/node-inputs.rendered-configs": super::RenderedConfigs,
        },
    });
}

pub(super) use wit_bindings::mco::machine_config::node_inputs as wit_inputs;
use wit_inputs as wit;

/// The node's labels, for the call.
pub struct NodeLabels {
    labels: BTreeMap<String, String>,
    lookups: u32,
}

/// The rendered configs the call may read, by name.
pub struct RenderedConfigs {
    configs: Vec<logic::RenderedConfig>,
    /// The file paths whose entries [`differing`] finds.
    files: BTreeSet<String>,
    /// The unit names, likewise.
    units: BTreeSet<String>,
    lookups: u32,
}

impl RenderedConfigs {
    fn new(configs: Vec<logic::RenderedConfig>) -> RenderedConfigs {
        RenderedConfigs {
            files: differing(&configs, |d| &d.files),
            units: differing(&configs, |d| &d.units),
            configs,
            lookups: 0,
        }
    }
}

/// The keys whose entry is not the same in every readable config of the
/// call (present in some only, or with different digests): the union of
/// `mco_mcn::changed` over each pair. A plan between two of the configs
/// compares only keys in it, so an entry outside it tells a guest nothing.
/// A mechanical set difference: which changes matter stays the guest's.
fn differing(
    configs: &[logic::RenderedConfig],
    entries: impl Fn(&logic::Digests) -> &Result<logic::Entries, String>,
) -> BTreeSet<String> {
    let lists: Vec<&BTreeMap<String, logic::Digest>> = configs
        .iter()
        .filter_map(|c| c.spec.spec.as_ref().ok())
        .filter_map(|digests| entries(digests).as_ref().ok())
        .map(|entries| &entries.by_key)
        .collect();
    let mut keys = BTreeSet::new();
    for (i, a) in lists.iter().enumerate() {
        // The same config lent twice (one Arc) differs from itself nowhere.
        for b in lists[i + 1..].iter().filter(|b| !std::ptr::eq(*a, **b)) {
            keys.extend(logic::changed(a, b).into_iter().map(str::to_string));
        }
    }
    keys
}

/// The handles lent for one call.
pub struct Lent {
    pub labels: Resource<NodeLabels>,
    pub configs: Resource<RenderedConfigs>,
}

impl Lent {
    /// Puts `facts`' labels and configs in the store's table for one call.
    /// The configs' summaries are shared, not copied.
    pub fn new(table: &mut ResourceTable, facts: &logic::Facts) -> wasmtime::Result<Lent> {
        Ok(Lent {
            labels: table.push(NodeLabels {
                labels: facts.node.labels.clone(),
                lookups: 0,
            })?,
            configs: table.push(RenderedConfigs::new(facts.configs.clone()))?,
        })
    }

    /// Takes the handles back once the call has returned.
    pub fn reclaim(self, table: &mut ResourceTable) -> wasmtime::Result<()> {
        table.delete(self.labels)?;
        table.delete(self.configs)?;
        Ok(())
    }
}

impl wit::Host for GuestState {}

impl wit::HostNodeLabels for GuestState {
    fn label(
        &mut self,
        labels: Resource<NodeLabels>,
        key: String,
    ) -> wasmtime::Result<Option<String>> {
        let labels = self.ctx().table.get_mut(&labels)?;
        charge(&mut labels.lookups, "labels")?;
        Ok(labels.labels.get(&key).cloned())
    }

    /// Never called: the guest is only ever lent borrows, which it does
    /// not own and so cannot drop.
    fn drop(&mut self, labels: Resource<NodeLabels>) -> wasmtime::Result<()> {
        self.ctx().table.delete(labels)?;
        Ok(())
    }
}

impl wit::HostRenderedConfigs for GuestState {
    fn names(&mut self, configs: Resource<RenderedConfigs>) -> wasmtime::Result<Vec<String>> {
        let configs = self.ctx().table.get_mut(&configs)?;
        charge(&mut configs.lookups, "rendered configs")?;
        Ok(configs.configs.iter().map(|c| c.name.clone()).collect())
    }

    fn summary(
        &mut self,
        configs: Resource<RenderedConfigs>,
        name: String,
    ) -> wasmtime::Result<Option<wit::Summary>> {
        let configs = self.ctx().table.get_mut(&configs)?;
        charge(&mut configs.lookups, "rendered configs")?;
        let config = configs.configs.iter().find(|c| c.name == name);
        let lent = Keys {
            files: Some(&configs.files),
            units: Some(&configs.units),
        };
        Ok(config.map(|c| summary(&c.spec, lent)))
    }

    /// Never called, as for the labels.
    fn drop(&mut self, configs: Resource<RenderedConfigs>) -> wasmtime::Result<()> {
        self.ctx().table.delete(configs)?;
        Ok(())
    }
}

/// Which entries of a summary cross: `None` all of them.
#[derive(Clone, Copy, Default)]
pub(super) struct Keys<'k> {
    pub files: Option<&'k BTreeSet<String>>,
    pub units: Option<&'k BTreeSet<String>>,
}

/// A config's summary as WIT `summary`, with the entries `keys` names.
pub(super) fn summary(summary: &logic::Summary, keys: Keys<'_>) -> wit::Summary {
    wit::Summary {
        spec: summary
            .spec
            .as_ref()
            .map(|d| digests(d, keys))
            .map_err(Clone::clone),
        view: summary.view.as_ref().map(|view| wit::View {
            users: view
                .users
                .iter()
                .map(|u| wit::User {
                    name: u.name.clone(),
                    set_fields: u.set_fields.clone(),
                    ssh_keys: u.ssh_keys,
                })
                .collect(),
            files: view
                .files
                .iter()
                .map(|f| wit::FileNote {
                    path: f.path.clone(),
                    appends: f.appends,
                })
                .collect(),
        }),
    }
}

fn digests(digests: &logic::Digests, keys: Keys<'_>) -> wit::Digests {
    let section = |s: logic::Section| digests.digest(s).map(words);
    use logic::Section as S;
    wit::Digests {
        sections: wit::Sections {
            os_image_url: section(S::OsImageUrl),
            extensions: section(S::Extensions),
            kernel_arguments: section(S::KernelArguments),
            passwd: section(S::Passwd),
            passwd_groups: section(S::PasswdGroups),
            passwd_users: section(S::PasswdUsers),
            ignition_kernel_arguments: section(S::IgnitionKernelArguments),
            files: section(S::Files),
            units: section(S::Units),
            disks: section(S::Disks),
            filesystems: section(S::Filesystems),
            raid: section(S::Raid),
            directories: section(S::Directories),
            links: section(S::Links),
        },
        kernel_type: digests.kernel_type.clone(),
        fips: digests.fips,
        files: digests
            .files
            .as_ref()
            .map(|e| entries(e, keys.files))
            .map_err(Clone::clone),
        units: digests
            .units
            .as_ref()
            .map(|e| entries(e, keys.units))
            .map_err(Clone::clone),
        registries_conf: digests
            .files
            .as_ref()
            .map(|f| f.registries_conf().to_string())
            .unwrap_or_default(),
    }
}

fn entries(entries: &logic::Entries, keys: Option<&BTreeSet<String>>) -> Vec<wit::Entry> {
    entries
        .by_key
        .iter()
        .filter(|(key, _)| keys.is_none_or(|keys| keys.contains(*key)))
        .map(|(key, digest)| wit::Entry {
            key: key.clone(),
            digest: words(digest),
        })
        .collect()
}

fn words(digest: &logic::Digest) -> wit::Digest {
    let [a, b, c, d] = logic::digest_to_words(digest);
    (a, b, c, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(name: &str, files: &[(&str, &str)], units: &[&str]) -> logic::RenderedConfig {
        let files: Vec<serde_json::Value> = files
            .iter()
            .map(|(path, source)| serde_json::json!({"path": path, "contents": {"source": source}}))
            .collect();
        let units: Vec<serde_json::Value> = units
            .iter()
            .map(|name| serde_json::json!({"name": name, "enabled": true}))
            .collect();
        let spec = serde_json::json!({"config": {"storage": {"files": files}, "systemd": {"units": units}}});
        logic::RenderedConfig::new(name, &spec.to_string())
    }

    /// Only keys that differ somewhere cross, from every pair of configs,
    /// and a config that is not readable adds none.
    #[test]
    fn the_entries_lent_are_those_not_equal_in_every_config() {
        let a = config(
            "a",
            &[("/etc/same", "x"), ("/etc/edited", "1"), ("/etc/gone", "x")],
            &["same.service"],
        );
        let b = config(
            "b",
            &[("/etc/same", "x"), ("/etc/edited", "2"), ("/etc/new", "x")],
            &["same.service"],
        );
        let c = config(
            "c",
            &[("/etc/same", "x"), ("/etc/edited", "1"), ("/etc/gone", "x")],
            &["same.service", "extra.service"],
        );
        let broken = logic::RenderedConfig::new("broken", "not json");
        let lent = RenderedConfigs::new(vec![a.clone(), b, broken]);
        assert_eq!(
            lent.files,
            BTreeSet::from(["/etc/edited", "/etc/gone", "/etc/new"].map(String::from))
        );
        assert!(lent.units.is_empty());
        let lent = RenderedConfigs::new(vec![a.clone(), c]);
        assert!(lent.files.is_empty());
        assert_eq!(lent.units, BTreeSet::from(["extra.service".to_string()]));
        let lent = RenderedConfigs::new(vec![a.clone(), a]);
        assert!(lent.files.is_empty() && lent.units.is_empty());
    }

    /// A summary lent through the handle carries only those entries, with
    /// each config's own digest.
    #[test]
    fn a_lent_summary_carries_only_the_differing_entries() {
        let a = config(
            "a",
            &[("/etc/same", "x"), ("/etc/containers/policy.json", "1")],
            &[],
        );
        let b = config(
            "b",
            &[("/etc/same", "x"), ("/etc/containers/policy.json", "2")],
            &[],
        );
        let lent = RenderedConfigs::new(vec![a.clone(), b.clone()]);
        let keys = Keys {
            files: Some(&lent.files),
            units: Some(&lent.units),
        };
        let files = |c: &logic::RenderedConfig| match summary(&c.spec, keys).spec {
            Ok(digests) => digests.files.unwrap_or_default(),
            Err(why) => panic!("{why}"),
        };
        assert_eq!(
            files(&a).iter().map(|e| e.key.as_str()).collect::<Vec<_>>(),
            ["/etc/containers/policy.json"]
        );
        assert_ne!(files(&a)[0].digest, files(&b)[0].digest);
    }
}
