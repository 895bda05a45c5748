//! The `boot-image-selector` component glue every platform guest shares:
//! WIT values to library types and back, and the host's handles behind the
//! library's stream lookups; no decisions. A platform crate exports its
//! rule with `mco_bootimage::export_platform!(Rule);`.

use std::collections::BTreeMap;

use exports::mco::machine_config::boot_image as wit;
use mco::machine_config::boot_image_inputs as inputs;
use serde_json::{Map, Value};
// Linked for its memcmp and bcmp, which replace wasi-libc's byte loops.
use mco_guest_memcmp as _;

use crate::ec2::{Ec2Facts, Ec2Image};
use crate::stream::{Artifact, AzureMarketplaceImage, AzureMarketplaceImages, SingleImage};
use crate::vcenter::{VcenterFacts, VcenterVm};
use crate::{
    AzureVariant, COMMON_PROVIDER_SPEC_FIELDS, ClusterFacts, Decision, LookupError, MachineKind,
    MachineSetView, Platform, ProviderSpec, StreamQuery, decide_loaded,
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

impl<T: PlatformGuest> wit::Guest for T {
    fn decide(
        metadata: &inputs::CoreosStream,
        provider_spec: Option<&inputs::ProviderSpec>,
        machine_set: wit::MachineSet,
        cluster: wit::Cluster,
        user_data: Option<String>,
        vcenter: Option<wit::VcenterFacts>,
        ec2: Option<wit::Ec2Facts>,
    ) -> wit::Decision {
        let rule = T::rule();
        let provider_spec = provider_spec.map(|spec| part(spec, rule.provider_spec_fields()));
        let ms = match view(machine_set, provider_spec) {
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
        let unusable = metadata.unusable();
        let stream = HostStream(metadata);
        let loaded: Result<&dyn StreamQuery, &str> = match &unusable {
            None => Ok(&stream),
            Some(why) => Err(why),
        };
        let decision = decide_loaded(rule, loaded, &ms, &cluster, user_data.as_deref());
        #[cfg(feature = "test-faults")]
        let decision = test_faults::apply(&ms, decision);
        to_wit(decision)
    }
}

/// The part of the providerSpec the rule reads ([`ProviderSpec::part`]),
/// from the host's answers: the fields it names, each parsed alone.
fn part(spec: &inputs::ProviderSpec, keys: &[&str]) -> Result<ProviderSpec, String> {
    let value = match spec.kind() {
        inputs::JsonKind::Object => {
            let mut object = Map::new();
            for key in keys.iter().chain(&COMMON_PROVIDER_SPEC_FIELDS) {
                if let Some(text) = spec.field(key) {
                    let field = serde_json::from_str(&text).map_err(|e| e.to_string())?;
                    object.insert((*key).to_owned(), field);
                }
            }
            Value::Object(object)
        }
        inputs::JsonKind::Array => Value::Array(Vec::new()),
        inputs::JsonKind::String => Value::String(String::new()),
        inputs::JsonKind::Number => Value::from(0),
        inputs::JsonKind::Boolean => Value::Bool(false),
    };
    Ok(ProviderSpec::new(value))
}

/// The host's parse of the stream, asked lookup by lookup.
struct HostStream<'a>(&'a inputs::CoreosStream);

impl HostStream<'_> {
    /// The library's error for what the host found missing, worded with
    /// the stream's name as stream-metadata-go words it.
    fn error(&self, error: inputs::LookupError, arch: &str, region: &str) -> LookupError {
        use inputs::LookupError as E;
        let stream = self.0.name();
        let arch = arch.to_owned();
        match error {
            E::NoArchitecture => LookupError::NoArchitecture { stream, arch },
            E::NoAwsImages => LookupError::NoAwsImages { stream, arch },
            E::NoAwsRegion => LookupError::NoAwsRegion {
                stream,
                arch,
                region: region.to_owned(),
            },
            E::NoGcpImage => LookupError::NoGcpImage { stream, arch },
            E::NoVmwareArtifact => LookupError::NoArtifact {
                stream,
                arch,
                artifact: "vmware",
            },
            E::NoVmwareOva => LookupError::NoDisk {
                stream,
                arch,
                artifact: "vmware",
                format: "ova",
            },
        }
    }
}

impl StreamQuery for HostStream<'_> {
    fn architecture(&self, arch: &str) -> Result<(), LookupError> {
        if self.0.has_architecture(arch) {
            Ok(())
        } else {
            Err(self.error(inputs::LookupError::NoArchitecture, arch, ""))
        }
    }

    fn aws_region_image(&self, arch: &str, region: &str) -> Result<SingleImage, LookupError> {
        match self.0.aws_region_image(arch, region) {
            Ok(found) => Ok(SingleImage {
                release: found.release,
                image: found.image,
            }),
            Err(e) => Err(self.error(e, arch, region)),
        }
    }

    fn contains_aws_ami(&self, ami: &str) -> bool {
        self.0.publishes_ami(ami)
    }

    fn gcp_image_path(&self, arch: &str) -> Result<String, LookupError> {
        self.0.gcp_image(arch).map_err(|e| self.error(e, arch, ""))
    }

    fn azure_variant(&self, arch: &str, variant: &str) -> AzureVariant {
        let image = |image: inputs::AzureImage| AzureMarketplaceImage {
            publisher: image.publisher,
            offer: image.offer,
            sku: image.sku,
            version: image.version,
        };
        match self.0.azure_marketplace(arch, variant) {
            inputs::AzureMarketplace::NoMarketplace => AzureVariant::NoMarketplace,
            inputs::AzureMarketplace::NoVariant => AzureVariant::NoVariant,
            inputs::AzureMarketplace::Images(set) => AzureVariant::Images(AzureMarketplaceImages {
                hyper_v_gen1: set.hyper_v_gen1.map(image),
                hyper_v_gen2: set.hyper_v_gen2.map(image),
            }),
        }
    }

    fn artifact_release(&self, arch: &str, artifact: &str) -> Result<Option<String>, LookupError> {
        self.0
            .artifact_release(arch, artifact)
            .map_err(|e| self.error(e, arch, ""))
    }

    fn vmware_release(&self, arch: &str) -> Result<String, LookupError> {
        self.0
            .vmware_release(arch)
            .map_err(|e| self.error(e, arch, ""))
    }

    fn vmware_ova(&self, arch: &str) -> Result<Artifact, LookupError> {
        match self.0.vmware_ova(arch) {
            Ok(ova) => Ok(Artifact {
                location: ova.location,
                sha256: ova.sha256,
                ..Artifact::default()
            }),
            Err(e) => Err(self.error(e, arch, "")),
        }
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

fn view(
    ms: wit::MachineSet,
    provider_spec: Option<Result<ProviderSpec, String>>,
) -> Result<MachineSetView, Decision> {
    let kind = match ms.kind {
        wit::MachineKind::MachineSet => MachineKind::MachineSet,
        wit::MachineKind::ControlPlaneMachineSet => MachineKind::ControlPlaneMachineSet,
    };
    let provider_spec = provider_spec.transpose().map_err(|e| {
        Decision::error(format!(
            "failed to reconcile {} {}, err: providerSpec is not valid JSON: {e}",
            kind.noun(),
            ms.name
        ))
    })?;
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
