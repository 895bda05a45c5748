//! Calling a platform's boot image guest. One instance parses the stream
//! once and then decides for a batch of MachineSets; guests are pure, so
//! nothing leaks from one MachineSet to the next. A failed call poisons the
//! instance, so callers start a new session for what remains.

use mco_bootimage::{ClusterFacts, Decision, MachineSetView, UserData, UserDataUpgrade};
use wasmtime::Store;
use wasmtime::component::ResourceAny;

use super::bindings::boot_image::BootImageSelector;
use super::bindings::boot_image::BootImageSelectorPre;
use super::bindings::boot_image::exports::mco::machine_config::boot_image as wit;
use super::engine::{GuestLimits, Runtime};
use super::error::{GuestError, LoadError};
use super::guest::{GuestModule, check_limits, link};
use super::store::GuestState;

/// The interface a boot image guest must export.
pub const BOOT_IMAGE_INTERFACE: &str = "mco:machine-config/boot-image@0.1.0";

/// A loaded platform guest, ready for any number of sessions.
#[derive(Clone)]
pub struct BootImageGuest {
    runtime: Runtime,
    module: GuestModule,
    pre: BootImageSelectorPre<GuestState>,
    limits: GuestLimits,
}

/// One MachineSet to decide, with what the guest is told about it.
#[derive(Debug, Clone)]
pub struct BatchItem {
    pub machineset: MachineSetView,
    pub cluster: ClusterFacts,
    /// The decoded stub of its user-data Secret, once the host read it.
    pub user_data: Option<String>,
}

/// One instance with one parsed stream.
pub struct Session<'g> {
    guest: &'g BootImageGuest,
    store: Store<GuestState>,
    bindings: BootImageSelector,
    stream: ResourceAny,
}

impl BootImageGuest {
    pub fn new(runtime: &Runtime, module: GuestModule) -> Result<Self, LoadError> {
        let pre = link(
            runtime,
            &module,
            BOOT_IMAGE_INTERFACE,
            BootImageSelectorPre::new,
        )?;
        Ok(BootImageGuest {
            runtime: runtime.clone(),
            module,
            pre,
            limits: runtime.default_limits(),
        })
    }

    /// The same guest under its registry entry's own limits.
    pub fn with_limits(mut self, limits: GuestLimits) -> Result<Self, LoadError> {
        check_limits(&self.runtime, &self.module, &limits)?;
        self.limits = limits;
        Ok(self)
    }

    pub fn module(&self) -> &GuestModule {
        &self.module
    }

    pub fn limits(&self) -> &GuestLimits {
        &self.limits
    }

    /// A fresh instance holding `stream` (the ConfigMap's `data.stream`).
    pub fn session(&self, stream: Option<&str>) -> Result<Session<'_>, GuestError> {
        let mut store = self.runtime.new_store(&self.limits);
        let started = self.pre.instantiate(&mut store).and_then(|bindings| {
            let stream = bindings
                .mco_machine_config_boot_image()
                .coreos_stream()
                .call_constructor(&mut store, stream)?;
            Ok((bindings, stream))
        });
        match started {
            Ok((bindings, stream)) => Ok(Session {
                guest: self,
                store,
                bindings,
                stream,
            }),
            Err(err) => {
                Err(self
                    .runtime
                    .classify(&self.module.name, &err, store.data(), &self.limits))
            }
        }
    }

    /// Decides several MachineSets in one instance that parses the stream
    /// once. A failed call poisons the instance, so the next MachineSet gets
    /// a new one; a stream the guest cannot even load fails them all with
    /// the same error instead of paying the deadline again for each.
    pub fn decide_batch(
        &self,
        stream: Option<&str>,
        batch: &[BatchItem],
    ) -> Vec<Result<Decision, GuestError>> {
        let mut session = None;
        let mut results = Vec::with_capacity(batch.len());
        for item in batch {
            let current = match &mut session {
                Some(current) => current,
                None => match self.session(stream) {
                    Ok(started) => session.insert(started),
                    Err(err) => {
                        results.resize(batch.len(), Err(err));
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
    pub fn decide_one(
        &self,
        stream: Option<&str>,
        machineset: &MachineSetView,
        cluster: &ClusterFacts,
        user_data: Option<&str>,
    ) -> Result<Decision, GuestError> {
        self.session(stream)?.decide(machineset, cluster, user_data)
    }
}

impl Session<'_> {
    /// Each call gets the full deadline; the instance keeps the stream.
    pub fn decide(
        &mut self,
        machineset: &MachineSetView,
        cluster: &ClusterFacts,
        user_data: Option<&str>,
    ) -> Result<Decision, GuestError> {
        let guest = self.guest;
        guest.runtime.rearm(&mut self.store, &guest.limits);
        let input = to_wit(machineset);
        let cluster = wit::Cluster {
            control_plane_arch: cluster.control_plane_arch.clone(),
            multi_arch: cluster.multi_arch,
            known_images: cluster.known_images.iter().cloned().collect(),
        };
        let result = self.bindings.mco_machine_config_boot_image().call_decide(
            &mut self.store,
            self.stream,
            &input,
            &cluster,
            user_data,
        );
        self.store.data().log_stderr(&guest.module.name);
        match result {
            // Checked before anyone can act on it: a patch only under
            // providerSpec.value, bounded texts, a valid Secret upgrade.
            Ok(decision) => from_wit(decision)
                .and_then(|d| crate::bootimage::validate(&d).map(|()| d))
                .map_err(|detail| GuestError::InvalidOutput {
                    guest: guest.module.name.clone(),
                    detail,
                }),
            Err(err) => Err(guest.runtime.classify(
                &guest.module.name,
                &err,
                self.store.data(),
                &guest.limits,
            )),
        }
    }
}

fn pairs(map: &std::collections::BTreeMap<String, String>) -> Vec<(String, String)> {
    map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn to_wit(ms: &MachineSetView) -> wit::MachineSet {
    wit::MachineSet {
        name: ms.name.clone(),
        namespace: ms.namespace.clone(),
        labels: pairs(&ms.labels),
        annotations: pairs(&ms.annotations),
        template_labels: pairs(&ms.template_labels),
        owner_references: ms.owner_references.clone(),
        provider_spec: ms.provider_spec.as_ref().map(|v| v.to_string()),
    }
}

fn from_wit(decision: wit::Decision) -> Result<Decision, String> {
    Ok(match decision {
        wit::Decision::Patch(patch) => Decision::Patch {
            target: patch.target,
            patch: serde_json::from_str(&patch.merge_patch)
                .map_err(|e| format!("merge patch is not JSON: {e}"))?,
            user_data_secret: patch.user_data_secret.map(|secret| UserDataUpgrade {
                name: secret.name,
                data: UserData {
                    user_data: secret.user_data,
                },
                annotations: secret.annotations.into_iter().collect(),
            }),
        },
        wit::Decision::Noop(reason) => Decision::Noop { reason },
        wit::Decision::Skip(reason) => Decision::Skip { reason },
        wit::Decision::Error(message) => Decision::Error { message },
    })
}
