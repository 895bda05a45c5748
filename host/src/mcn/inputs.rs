//! The host side of WIT `node-inputs`: what a node-state guest is lent for
//! one `derive` call instead of a copy. The node's labels are looked up by
//! key, and each rendered config the call may read is handed over as the
//! summary the host computed natively when the MachineConfig was decoded
//! (`objects::SpecSummary`, once per resourceVersion).
//!
//! The handles live in the store's resource table for the call only: the
//! host takes them back as soon as the call returns ([`Lent::reclaim`]).
//! The component model's borrow rules trap a guest that keeps a handle
//! past the call or uses an index it was not lent; the host traps one
//! that looks up more than [`LOOKUP_BUDGET`] times through one handle in
//! one call.

use std::collections::BTreeMap;

use mco_mcn as logic;
use mco_runtime::GuestState;
use wasmtime::component::{Resource, ResourceTable};
use wasmtime_wasi::WasiView as _;

/// The WIT binding of world `node-state-reporter`, here because its
/// handles are the types below.
pub(super) mod wit_bindings {
    wasmtime::component::bindgen!({
        world: "node-state-reporter",
        path: "../wit",
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

/// Lookups one handle answers in one call. The MCN guest makes one per
/// label a pool's selector names, and two per rendered config (at most
/// three): the budget is far above any honest call and far below a flood.
pub const LOOKUP_BUDGET: u32 = 1024;

/// The node's labels, for the call.
pub struct NodeLabels {
    labels: BTreeMap<String, String>,
    lookups: u32,
}

/// The rendered configs the call may read, by name.
pub struct RenderedConfigs {
    configs: Vec<logic::RenderedConfig>,
    lookups: u32,
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
            configs: table.push(RenderedConfigs {
                configs: facts.configs.clone(),
                lookups: 0,
            })?,
        })
    }

    /// Takes the handles back once the call has returned.
    pub fn reclaim(self, table: &mut ResourceTable) -> wasmtime::Result<()> {
        table.delete(self.labels)?;
        table.delete(self.configs)?;
        Ok(())
    }
}

/// Counts one lookup through a handle, and traps past the budget (the
/// boot image handles share it).
pub(crate) fn charge(lookups: &mut u32, what: &str) -> wasmtime::Result<()> {
    *lookups += 1;
    if *lookups > LOOKUP_BUDGET {
        wasmtime::bail!(
            "the guest looked up {what} more than {LOOKUP_BUDGET} times in one call (the lookup budget of a handle per call)"
        );
    }
    Ok(())
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
        Ok(config.map(|c| summary(&c.spec)))
    }

    /// Never called, as for the labels.
    fn drop(&mut self, configs: Resource<RenderedConfigs>) -> wasmtime::Result<()> {
        self.ctx().table.delete(configs)?;
        Ok(())
    }
}

fn summary(summary: &logic::Summary) -> wit::Summary {
    wit::Summary {
        spec: summary.spec.as_ref().map(digests).map_err(Clone::clone),
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

fn digests(digests: &logic::Digests) -> wit::Digests {
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
        files: digests.files.as_ref().map(entries).map_err(Clone::clone),
        units: digests.units.as_ref().map(entries).map_err(Clone::clone),
        registries_conf: digests
            .files
            .as_ref()
            .map(|f| f.registries_conf().to_string())
            .unwrap_or_default(),
    }
}

fn entries(entries: &logic::Entries) -> Vec<wit::Entry> {
    entries
        .by_key
        .iter()
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
