//! The {{platform}} boot image guest: for each MachineSet (or the
//! ControlPlaneMachineSet) of a {{platform}} cluster that the host's own
//! rules let through (enrolled, not Windows, no owner, a stable cluster),
//! decide whether its boot image moves to the one the `coreos-bootimages`
//! stream publishes for its architecture.
//!
//! As made by `mco-host guests new`, it asks the host's stream and the
//! MachineSet's providerSpec what it needs, and leaves every MachineSet alone (`noop`), or `skip`s one whose
//! architecture the stream has no images for. Your rule goes in `decide`.

use exports::mco::machine_config::boot_image::{
    self as wit, Cluster, Decision, Ec2Facts, MachineSet, VcenterFacts,
};
use mco::machine_config::boot_image_inputs::{CoreosStream, JsonKind, ProviderSpec};

wit_bindgen::generate!({ world: "boot-image-selector", path: "wit" });

/// The Infrastructure `status.platformStatus.type` this guest serves.
const PLATFORM: &str = "{{platform}}";

struct Guest;

impl wit::Guest for Guest {
    /// `stream` is the host's parse of the `coreos-bootimages` stream, and
    /// `provider_spec` the MachineSet's `providerSpec.value`: handles, lent
    /// for this call, that answer lookups by architecture, region, ... and
    /// by field.
    fn decide(
        stream: &CoreosStream,
        provider_spec: Option<&ProviderSpec>,
        machine_set: MachineSet,
        cluster: Cluster,
        _user_data: Option<String>,
        // vSphere only: what the host read from vCenter for this MachineSet.
        _vcenter: Option<VcenterFacts>,
        // AWS only: what the host read from EC2 about the MachineSet's AMI
        // (`None`: EC2 was not consulted).
        _ec2: Option<Ec2Facts>,
    ) -> Decision {
        match stream.unusable() {
            None => decide(stream, provider_spec, &machine_set, &cluster),
            Some(why) => Decision::Error(why),
        }
    }
}

export!(Guest);

fn decide(
    stream: &CoreosStream,
    provider_spec: Option<&ProviderSpec>,
    machine_set: &MachineSet,
    cluster: &Cluster,
) -> Decision {
    let name = &machine_set.name;
    let Some(provider_spec) = provider_spec else {
        return Decision::Error(format!("machineset {name} has no providerSpec.value"));
    };
    if provider_spec.kind() != JsonKind::Object {
        return Decision::Error(format!(
            "machineset {name}: providerSpec.value is not an object"
        ));
    }
    let arch = arch(machine_set).unwrap_or(cluster.control_plane_arch.as_str());
    if !stream.has_architecture(arch) {
        return Decision::Skip(format!(
            "machineset {name}: the stream publishes no {arch} boot images"
        ));
    }
    // Your rule: read the boot image from the providerSpec's fields, as
    // JSON text by key (`provider_spec.field("disks")`, ...), ask the
    // stream for its image for `arch` (`stream.gcp_image(arch)`, ...), and
    // when they differ return `Decision::Patch` with an RFC 7386 merge patch of the MachineSet
    // that changes only the image fields (the host refuses any other
    // change, and decides again after the patch, which must give `noop`).
    Decision::Noop(format!(
        "machineset {name}: the {PLATFORM} guest does not update {arch} boot images yet"
    ))
}

/// The MachineSet's architecture as the stream names it, from the
/// `kubernetes.io/arch` the cluster autoscaler's capacity annotation
/// carries (none: the control plane's).
fn arch(machine_set: &MachineSet) -> Option<&'static str> {
    let (_, labels) = machine_set
        .annotations
        .iter()
        .find(|(key, _)| key == "capacity.cluster-autoscaler.kubernetes.io/labels")?;
    let arch = labels
        .split(',')
        .find_map(|label| label.trim().strip_prefix("kubernetes.io/arch="))?;
    match arch {
        "amd64" => Some("x86_64"),
        "arm64" => Some("aarch64"),
        "ppc64le" => Some("ppc64le"),
        "s390x" => Some("s390x"),
        _ => None,
    }
}
