//! The `boot-image-selector` component glue every platform guest shares:
//! WIT values to library types and back, no decisions. A platform crate
//! exports its rule with `mco_bootimage::export_platform!(Rule);`.

use std::collections::BTreeMap;

use exports::mco::machine_config::boot_image as wit;
// Linked for its memcmp and bcmp, which replace wasi-libc's byte loops.
use mco_guest_memcmp as _;

use crate::ec2::{Ec2Facts, Ec2Image};
use crate::vcenter::{VcenterFacts, VcenterVm};
use crate::{
    ClusterFacts, Decision, MachineKind, MachineSetView, Platform, ProviderSpec, Stream,
    decide_loaded, load_stream,
};

wit_bindgen::generate!({
    world: "boot-image-selector",
    path: "../../wit",
    pub_export_macro: true,
    export_macro_name: "export_boot_image",
    default_bindings_module: "mco_bootimage::component",
});

/// What a platform crate provides: its rule.
pub trait PlatformGuest {
    fn rule() -> &'static dyn Platform;
}

/// Exports a platform rule (a unit struct implementing [`Platform`]) as the
/// `boot-image-selector` component.
#[macro_export]
macro_rules! export_platform {
    ($rule:expr) => {
        struct Component;

        impl $crate::component::PlatformGuest for Component {
            fn rule() -> &'static dyn $crate::Platform {
                &$rule
            }
        }

        $crate::component::export_boot_image!(Component);
    };
}

/// The stream resource: parsed once, or the reason it cannot be used.
pub struct LoadedStream(Result<Stream, String>);

impl wit::GuestCoreosStream for LoadedStream {
    fn new(json: Option<String>) -> Self {
        LoadedStream(load_stream(json.as_deref()))
    }
}

impl<T: PlatformGuest> wit::Guest for T {
    type CoreosStream = LoadedStream;

    fn decide(
        metadata: wit::CoreosStreamBorrow<'_>,
        machine_set: wit::MachineSet,
        cluster: wit::Cluster,
        user_data: Option<String>,
        vcenter: Option<wit::VcenterFacts>,
        ec2: Option<wit::Ec2Facts>,
    ) -> wit::Decision {
        let stream: &LoadedStream = metadata.get();
        let ms = match view(machine_set) {
            Ok(ms) => ms,
            Err(decision) => return to_wit(decision),
        };
        let cluster = ClusterFacts {
            control_plane_arch: cluster.control_plane_arch,
            multi_arch: cluster.multi_arch,
            known_images: cluster.known_images.into_iter().collect(),
            vcenter: vcenter.map(facts),
            ec2: ec2.map(|ec2| Ec2Facts {
                image: ec2.image.map(image),
                marketplace: ec2.marketplace.into_iter().map(image).collect(),
            }),
        };
        let loaded = stream.0.as_ref().map_err(String::as_str);
        let decision = decide_loaded(T::rule(), loaded, &ms, &cluster, user_data.as_deref());
        #[cfg(feature = "test-faults")]
        let decision = test_faults::apply(&ms, decision);
        to_wit(decision)
    }
}

/// The faults of the boot image rollout tests' candidate, chosen per
/// MachineSet by its label: `differ` turns the decision into a noop whose
/// reason ends in ` (candidate)` (writing nothing is within any authority,
/// and a MachineSet left on its image shows which module decided it);
/// `trap` panics.
#[cfg(feature = "test-faults")]
mod test_faults {
    const LABEL: &str = "mco-e2e.io/candidate-fault";

    pub fn apply(ms: &crate::MachineSetView, decision: crate::Decision) -> crate::Decision {
        match ms.labels.get(LABEL).map(String::as_str) {
            Some("trap") => panic!("candidate fault: trap on MachineSet {}", ms.name),
            Some("differ") => {
                let reason = match decision {
                    crate::Decision::Noop { reason } => reason,
                    _ => format!("MachineSet {} left alone", ms.name),
                };
                crate::Decision::Noop {
                    reason: format!("{reason} (candidate)"),
                }
            }
            _ => decision,
        }
    }
}

fn view(ms: wit::MachineSet) -> Result<MachineSetView, Decision> {
    let kind = match ms.kind {
        wit::MachineKind::MachineSet => MachineKind::MachineSet,
        wit::MachineKind::ControlPlaneMachineSet => MachineKind::ControlPlaneMachineSet,
    };
    let provider_spec = match ms.provider_spec {
        None => None,
        Some(text) => Some(ProviderSpec::parse(text).map_err(|e| {
            Decision::error(format!(
                "failed to reconcile {} {}, err: providerSpec is not valid JSON: {e}",
                kind.noun(),
                ms.name
            ))
        })?),
    };
    Ok(MachineSetView {
        kind,
        name: ms.name,
        namespace: ms.namespace,
        labels: ms.labels.into_iter().collect(),
        annotations: ms.annotations.into_iter().collect(),
        owner_references: ms.owner_references,
        template_labels: ms.template_labels.into_iter().collect(),
        provider_spec,
    })
}

fn facts(vcenter: wit::VcenterFacts) -> VcenterFacts {
    VcenterFacts {
        infrastructure_name: vcenter.infrastructure_name,
        failure_domain: vcenter.failure_domain,
        install_disk_type: vcenter.install_disk_type,
        vms: vcenter
            .vms
            .into_iter()
            .map(|vm| VcenterVm {
                name: vm.name,
                folder: vm.folder,
                template: vm.template,
                release: vm.release,
                disk_type: vm.disk_type,
            })
            .collect(),
    }
}

fn image(image: wit::Ec2Image) -> Ec2Image {
    Ec2Image {
        image_id: image.image_id,
        owner_id: image.owner_id,
        name: image.name,
        description: image.description,
        creation_date: image.creation_date,
    }
}

fn pairs(map: BTreeMap<String, String>) -> Vec<(String, String)> {
    map.into_iter().collect()
}

fn to_wit(decision: Decision) -> wit::Decision {
    match decision {
        Decision::Patch {
            target,
            patch,
            user_data_secret,
            import,
        } => wit::Decision::Patch(wit::Patch {
            target,
            merge_patch: patch.to_string(),
            user_data_secret: user_data_secret.map(|secret| wit::UserDataUpgrade {
                name: secret.name,
                user_data: secret.data.user_data,
                annotations: pairs(secret.annotations),
            }),
            template_import: import.map(|import| {
                let import = *import;
                wit::TemplateImport {
                    server: import.server,
                    datacenter: import.datacenter,
                    folder: import.folder,
                    template: import.template,
                    release: import.release,
                    url: import.url,
                    sha256: import.sha256,
                    disk_type: import.disk_type,
                }
            }),
        }),
        Decision::Noop { reason } => wit::Decision::Noop(reason),
        Decision::Skip { reason } => wit::Decision::Skip(reason),
        Decision::Error { message } => wit::Decision::Error(message),
    }
}
