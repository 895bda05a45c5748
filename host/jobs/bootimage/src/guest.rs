//! The boot image guest: the calls of world `boot-image-selector`, the
//! conversions, and the one place where a decision is checked before
//! anyone acts on it. One instance decides for a batch of MachineSets,
//! each call lent the host's parse of the stream and the MachineSet's
//! providerSpec (`inputs`); guests are pure, so nothing leaks from one
//! MachineSet to the next. A failed call poisons the instance, so the next
//! MachineSet gets a new one.

use std::sync::Arc;

use mco_bootimage::ec2::{Ec2Facts, Ec2Image};
use mco_bootimage::vcenter::{TemplateImport, VcenterFacts};
use mco_bootimage::{
    ClusterFacts, Decision, MachineKind, MachineSetView, Stream, UserData, UserDataUpgrade,
};
use wasmtime::Store;
use wasmtime::component::{HasSelf, Linker, Resource};
use wasmtime_wasi::WasiView as _;

use super::authority::{self, JobInputs};
use super::inputs::wit_bindings::exports::mco::machine_config::boot_image as wit;
use super::inputs::wit_bindings::{BootImageSelector, BootImageSelectorPre};
use super::inputs::{Lent, LoadedStream, wit_inputs};
use mco_runtime::{Guest, GuestError, GuestState, World};

/// The interface a boot image guest must export.
pub const BOOT_IMAGE_INTERFACE: &str = "mco:machine-config/boot-image@0.6.0";

impl World for BootImageSelectorPre<GuestState> {
    const INTERFACE: &'static str = BOOT_IMAGE_INTERFACE;
    fn bind(pre: wasmtime::component::InstancePre<GuestState>) -> wasmtime::Result<Self> {
        BootImageSelectorPre::new(pre)
    }
    fn link(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
        wit_inputs::add_to_linker::<_, HasSelf<_>>(linker, |state| state)
    }
}

/// A loaded platform guest, ready for any number of sessions.
pub type BootImageGuest = Guest<BootImageSelectorPre<GuestState>>;

/// One MachineSet to decide, with what the guest is told about it.
#[derive(Debug, Clone)]
pub struct BatchItem {
    pub machineset: MachineSetView,
    pub cluster: ClusterFacts,
    /// The decoded stub of its user-data Secret, once the host read it.
    pub user_data: Option<String>,
}

/// The stream a pass gives its guests: the host's parse of the
/// ConfigMap's `data.stream`, which every guest call is lent and against
/// which every decision is checked (see [`super::authority`]). The
/// controller builds one per ConfigMap version and keeps it between
/// passes, so a stream is parsed once, by the host, not once per instance.
#[derive(Debug, Clone)]
pub struct StreamInput(Arc<LoadedStream>);

impl StreamInput {
    /// `text`: the ConfigMap's `data.stream`, `None` when it has none.
    pub fn new(text: Option<&str>) -> Self {
        StreamInput(Arc::new(LoadedStream::load(text)))
    }

    /// The host's parse, or why the text is no usable stream.
    pub fn index(&self) -> Result<&Stream, &str> {
        self.0.index()
    }
}

impl Default for StreamInput {
    fn default() -> Self {
        StreamInput::new(None)
    }
}

/// One instance, for one platform and one stream.
pub struct Session<'g> {
    guest: &'g BootImageGuest,
    store: Store<GuestState>,
    bindings: BootImageSelector,
    platform: String,
    input: &'g StreamInput,
}

/// What the host asks of a platform guest. The guest handle lives in
/// `mco-runtime`, which knows no job, so the job's calls on it are a trait;
/// each is documented where it is implemented, below.
pub trait BootImageGuestExt {
    fn session<'g>(
        &'g self,
        platform: &str,
        input: &'g StreamInput,
    ) -> Result<Session<'g>, GuestError>;
    fn decide_batch<'a>(
        &self,
        platform: &str,
        stream: &StreamInput,
        batch: impl IntoIterator<Item = &'a BatchItem, IntoIter: ExactSizeIterator>,
    ) -> Vec<Result<Decision, GuestError>>;
    fn decide_one(
        &self,
        platform: &str,
        stream: &StreamInput,
        machineset: &MachineSetView,
        cluster: &ClusterFacts,
        user_data: Option<&str>,
    ) -> Result<Decision, GuestError>;
}

impl BootImageGuestExt for BootImageGuest {
    /// A fresh instance lent `stream` (the ConfigMap's `data.stream`) in
    /// each call, deciding for MachineSets of `platform` (Infrastructure
    /// `status.platformStatus.type`), whose field ownership applies.
    fn session<'g>(
        &'g self,
        platform: &str,
        input: &'g StreamInput,
    ) -> Result<Session<'g>, GuestError> {
        let mut store = self.store();
        let started = self.bindings().instantiate(&mut store);
        let bindings = self.finish(&store, started)?;
        Ok(Session {
            guest: self,
            store,
            bindings,
            platform: platform.to_owned(),
            input,
        })
    }

    /// Decides several MachineSets in one instance. A failed call poisons
    /// the instance, so the next MachineSet gets a new one; an instance
    /// that cannot even start fails them all with the same error instead
    /// of paying the deadline again for each.
    fn decide_batch<'a>(
        &self,
        platform: &str,
        stream: &StreamInput,
        batch: impl IntoIterator<Item = &'a BatchItem, IntoIter: ExactSizeIterator>,
    ) -> Vec<Result<Decision, GuestError>> {
        let batch = batch.into_iter();
        let total = batch.len();
        let mut session = None;
        let mut results = Vec::with_capacity(total);
        for item in batch {
            let current = match &mut session {
                Some(current) => current,
                None => match self.session(platform, stream) {
                    Ok(started) => session.insert(started),
                    Err(err) => {
                        results.resize(total, Err(err));
                        return results;
                    }
                },
            };
            let result = current.decide(&item.machineset, &item.cluster, item.user_data.as_deref());
            if result.is_err() {
                session = None;
            }
            results.push(result);
        }
        results
    }

    /// Decides one MachineSet in its own instance.
    fn decide_one(
        &self,
        platform: &str,
        stream: &StreamInput,
        machineset: &MachineSetView,
        cluster: &ClusterFacts,
        user_data: Option<&str>,
    ) -> Result<Decision, GuestError> {
        self.session(platform, stream)?
            .decide(machineset, cluster, user_data)
    }
}

impl Session<'_> {
    /// Each call gets the full deadline, and is lent the stream and the
    /// providerSpec for its duration.
    pub fn decide(
        &mut self,
        machineset: &MachineSetView,
        cluster: &ClusterFacts,
        user_data: Option<&str>,
    ) -> Result<Decision, GuestError> {
        let guest = self.guest;
        guest.rearm(&mut self.store);
        let input = to_wit(machineset);
        let facts = cluster;
        let vcenter = cluster.vcenter.as_ref().map(vcenter_to_wit);
        let ec2 = cluster.ec2.as_ref().map(ec2_to_wit);
        let cluster = wit::Cluster {
            control_plane_arch: cluster.control_plane_arch.clone(),
            multi_arch: cluster.multi_arch,
            known_images: cluster.known_images.iter().cloned().collect(),
        };
        let table = self.store.data_mut().ctx().table;
        let result =
            Lent::new(table, &self.input.0, machineset.provider_spec.as_ref()).and_then(|lent| {
                let stream = Resource::new_borrow(lent.stream.rep());
                let spec = lent
                    .provider_spec
                    .as_ref()
                    .map(|spec| Resource::new_borrow(spec.rep()));
                let decision = self.bindings.mco_machine_config_boot_image().call_decide(
                    &mut self.store,
                    stream,
                    spec,
                    &input,
                    &cluster,
                    user_data,
                    vcenter.as_ref(),
                    ec2.as_ref(),
                )?;
                // A failed call leaves them in the table: its store is not
                // used again.
                lent.reclaim(self.store.data_mut().ctx().table)?;
                Ok(decision)
            });
        let decision = guest.finish(&self.store, result)?;
        // Checked before anyone can act on it, with this job's own inputs:
        // only the platform's image fields change, to an image the stream
        // publishes for this MachineSet, a template import is the stream's
        // OVA into the MachineSet's own folder and template, and a stub
        // upgrade is the MachineSet's own Secret, faithfully converted
        // (`authority`); then bounded texts and a valid Secret upgrade
        // (`validate_decision_for`).
        let job = JobInputs {
            platform: &self.platform,
            machineset,
            cluster: facts,
            user_data,
            stream: self.input.index(),
        };
        let decision = from_wit(decision).map_err(|e| guest.invalid_output(e.to_string()))?;
        authority::check(&job, &decision).map_err(|e| guest.invalid_output(e.to_string()))?;
        mco_bootimage::validate_decision_for(&decision, machineset.kind)
            .map_err(|detail| guest.invalid_output(detail))?;
        Ok(decision)
    }
}

fn pairs(map: &std::collections::BTreeMap<String, String>) -> Vec<(String, String)> {
    map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn to_wit(ms: &MachineSetView) -> wit::MachineSet {
    wit::MachineSet {
        kind: match ms.kind {
            MachineKind::MachineSet => wit::MachineKind::MachineSet,
            MachineKind::ControlPlaneMachineSet => wit::MachineKind::ControlPlaneMachineSet,
        },
        name: ms.name.clone(),
        namespace: ms.namespace.clone(),
        labels: pairs(&ms.labels),
        annotations: pairs(&ms.annotations),
        template_labels: pairs(&ms.template_labels),
        owner_references: ms.owner_references.clone(),
    }
}

fn vcenter_to_wit(facts: &VcenterFacts) -> wit::VcenterFacts {
    wit::VcenterFacts {
        infrastructure_name: facts.infrastructure_name.clone(),
        failure_domain: facts.failure_domain.clone(),
        install_disk_type: facts.install_disk_type.clone(),
        vms: facts
            .vms
            .iter()
            .map(|vm| wit::VcenterVm {
                name: vm.name.clone(),
                folder: vm.folder.clone(),
                template: vm.template,
                release: vm.release.clone(),
                disk_type: vm.disk_type.clone(),
            })
            .collect(),
    }
}

fn ec2_to_wit(facts: &Ec2Facts) -> wit::Ec2Facts {
    let image = |image: &Ec2Image| wit::Ec2Image {
        image_id: image.image_id.clone(),
        owner_id: image.owner_id.clone(),
        name: image.name.clone(),
        description: image.description.clone(),
        creation_date: image.creation_date.clone(),
    };
    wit::Ec2Facts {
        image: facts.image.as_ref().map(image),
        marketplace: facts.marketplace.iter().map(image).collect(),
    }
}

/// A decision whose merge patch is not JSON text, as the WIT says it is.
#[derive(Debug, thiserror::Error)]
#[error("merge patch is not JSON: {0}")]
struct PatchNotJson(serde_json::Error);

fn from_wit(decision: wit::Decision) -> Result<Decision, PatchNotJson> {
    Ok(match decision {
        wit::Decision::Patch(patch) => Decision::Patch {
            target: patch.target,
            patch: serde_json::from_str(&patch.merge_patch).map_err(PatchNotJson)?,
            user_data_secret: patch.user_data_secret.map(|secret| UserDataUpgrade {
                name: secret.name,
                data: UserData {
                    user_data: secret.user_data,
                },
                annotations: secret.annotations.into_iter().collect(),
            }),
            import: patch.template_import.map(|import| {
                Box::new(TemplateImport {
                    server: import.server,
                    datacenter: import.datacenter,
                    folder: import.folder,
                    template: import.template,
                    release: import.release,
                    url: import.url,
                    sha256: import.sha256,
                    disk_type: import.disk_type,
                })
            }),
        },
        wit::Decision::Noop(reason) => Decision::Noop { reason },
        wit::Decision::Skip(reason) => Decision::Skip { reason },
        wit::Decision::Error(message) => Decision::Error { message },
    })
}
