//! The {{platform}} boot image guest: for each MachineSet (or the
//! ControlPlaneMachineSet) of a {{platform}} cluster that the host's own
//! rules let through (enrolled, not Windows, no owner, a stable cluster),
//! decide whether its boot image moves to the one the `coreos-bootimages`
//! stream publishes for its architecture.
//!
//! As made by `mco-host guests new`, it reads the stream and the MachineSet
//! and leaves every MachineSet alone (`noop`), or `skip`s one whose
//! architecture the stream has no images for. Your rule goes in `decide`.

use exports::mco::machine_config::boot_image::{
    self as wit, Cluster, CoreosStreamBorrow, Decision, Ec2Facts, MachineSet, VcenterFacts,
};
use serde_json::Value;

wit_bindgen::generate!({ world: "boot-image-selector", path: "wit" });

/// The Infrastructure `status.platformStatus.type` this guest serves.
const PLATFORM: &str = "{{platform}}";

/// The stream, parsed once per version of the ConfigMap: the host keeps
/// one resource for every MachineSet of a pass.
pub struct Stream(Result<Value, String>);

impl wit::GuestCoreosStream for Stream {
    fn new(json: Option<String>) -> Self {
        Stream(match json {
            None => Err("the coreos-bootimages ConfigMap has no stream".into()),
            Some(text) => {
                serde_json::from_str(&text).map_err(|e| format!("the stream is not JSON: {e}"))
            }
        })
    }
}

struct Guest;

impl wit::Guest for Guest {
    type CoreosStream = Stream;

    fn decide(
        metadata: CoreosStreamBorrow<'_>,
        machine_set: MachineSet,
        cluster: Cluster,
        _user_data: Option<String>,
        // vSphere only: what the host read from vCenter for this MachineSet.
        _vcenter: Option<VcenterFacts>,
        // AWS only: what the host read from EC2 about the MachineSet's AMI
        // (`None`: EC2 was not consulted).
        _ec2: Option<Ec2Facts>,
    ) -> Decision {
        let stream: &Stream = metadata.get();
        match &stream.0 {
            Ok(stream) => decide(stream, &machine_set, &cluster),
            Err(why) => Decision::Error(why.clone()),
        }
    }
}

export!(Guest);

fn decide(stream: &Value, machine_set: &MachineSet, cluster: &Cluster) -> Decision {
    let name = &machine_set.name;
    let Some(provider_spec) = &machine_set.provider_spec else {
        return Decision::Error(format!("machineset {name} has no providerSpec.value"));
    };
    let _provider_spec: Value = match serde_json::from_str(provider_spec) {
        Ok(spec) => spec,
        Err(e) => return Decision::Error(format!("machineset {name}: providerSpec.value: {e}")),
    };
    let arch = arch(machine_set).unwrap_or(cluster.control_plane_arch.as_str());
    let Some(_images) = stream.pointer(&format!("/architectures/{arch}/images")) else {
        return Decision::Skip(format!(
            "machineset {name}: the stream publishes no {arch} boot images"
        ));
    };
    // Your rule: find the boot image in `_provider_spec`, the stream's
    // image for `arch` in `_images`, and when they differ return
    // `Decision::Patch` with an RFC 7386 merge patch of the MachineSet
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
