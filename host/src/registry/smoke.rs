//! Smoke evaluations: built-in fixtures a new module must handle before it
//! may replace the one serving. Being a component of the right world only
//! proves the module links; a module that traps, times out or returns
//! garbage on an ordinary object would fail every evaluation once swapped in.

use std::collections::BTreeMap;

use mco_bootimage::{ClusterFacts, MachineSetView};
use mco_mcn as logic;
use serde_json::json;

use crate::bootimage::BootImageGuest;
use crate::mcn::McnGuest;
use crate::runtime::GuestError;

/// A worker node halfway through an update, in a pool that selects it: any
/// node-state guest must report it (`apply`, pool `worker`, desired config
/// the node's), and what it reports must pass the host's validation.
pub fn mcn_fixture() -> logic::Facts {
    let annotation = |key: &str| format!("machineconfiguration.openshift.io/{key}");
    logic::Facts {
        node: logic::Node {
            name: "smoke-worker-0".into(),
            phase: "Running".into(),
            unschedulable: false,
            labels: BTreeMap::from([("node-role.kubernetes.io/worker".into(), String::new())]),
            annotations: BTreeMap::from([
                (annotation("currentConfig"), "rendered-worker-a".into()),
                (annotation("desiredConfig"), "rendered-worker-b".into()),
                (annotation("state"), "Working".into()),
            ]),
        },
        pools: vec![logic::Pool {
            name: "worker".into(),
            node_selector: Some(logic::LabelSelector {
                match_labels: BTreeMap::from([(
                    "node-role.kubernetes.io/worker".into(),
                    String::new(),
                )]),
                match_expressions: Vec::new(),
            }),
            target_config: "rendered-worker-b".into(),
        }],
        configs: Vec::new(),
        policies: logic::DisruptionPolicies::defaults(),
        stored: None,
        previous: Vec::new(),
    }
}

pub fn mcn_guest(guest: &McnGuest) -> Result<(), String> {
    // Output the host refuses is already a failure here (see `derive`).
    let decision = guest.derive(&mcn_fixture()).map_err(|e| e.to_string())?;
    match decision {
        logic::Decision::Apply(node)
            if node.pool == "worker" && node.desired_config == "rendered-worker-b" =>
        {
            Ok(())
        }
        logic::Decision::Apply(node) => Err(format!(
            "fixture node smoke-worker-0 (pool worker, desired rendered-worker-b) was reported in pool {:?} with desired config {:?}",
            node.pool, node.desired_config
        )),
        other => Err(format!(
            "fixture node smoke-worker-0 in pool worker must be reported (apply), got {other:?}"
        )),
    }
}

/// A one-architecture stream with images for every shipped platform.
const STREAM: &str = r#"{"stream":"rhcos-smoke","metadata":{"last-modified":"2026-01-01T00:00:00Z"},
 "architectures":{"x86_64":{"artifacts":{},"images":{
  "aws":{"regions":{"us-east-1":{"release":"9.8.1","image":"ami-0123456789abcdef0"}}},
  "gcp":{"release":"9.8.1","project":"rhcos-cloud","name":"rhcos-9-8-1-gcp-x86-64"}},
  "rhel-coreos-extensions":{"marketplace":{"azure":{"no-purchase-plan":{
   "hyperVGen1":{"publisher":"azureopenshift","offer":"aro4","sku":"aro_420","version":"9.8.1"},
   "hyperVGen2":{"publisher":"azureopenshift","offer":"aro4","sku":"420-v2","version":"9.8.1"}}}}}}}}"#;

const OLD_AMI: &str = "ami-0c5a8e7f3b2d1e4f6";

/// An x86_64 worker MachineSet of `platform`, with an old RHCOS image.
pub fn boot_image_fixture(platform: &str) -> MachineSetView {
    let provider_spec = match platform {
        "GCP" => json!({
            "kind": "GCPMachineProviderSpec",
            "disks": [{"boot": true, "autoDelete": true, "sizeGb": 128,
                       "image": "projects/rhcos-cloud/global/images/rhcos-418-94-gcp-x86-64"}],
            "userDataSecret": {"name": "worker-user-data"},
        }),
        "AWS" => json!({
            "kind": "AWSMachineProviderConfig",
            "ami": {"id": OLD_AMI},
            "placement": {"region": "us-east-1", "availabilityZone": "us-east-1a"},
            "userDataSecret": {"name": "worker-user-data"},
        }),
        "Azure" => json!({
            "kind": "AzureMachineProviderSpec",
            "image": {"publisher": "azureopenshift", "offer": "aro4", "sku": "420-v2",
                      "version": "9.6.20251015", "type": "MarketplaceNoPlan"},
            "securityProfile": {},
            "userDataSecret": {"name": "worker-user-data"},
        }),
        _ => json!({"userDataSecret": {"name": "worker-user-data"}}),
    };
    MachineSetView {
        kind: Default::default(),
        name: "smoke-worker-a".into(),
        namespace: Some("openshift-machine-api".into()),
        labels: BTreeMap::new(),
        annotations: BTreeMap::from([(
            "capacity.cluster-autoscaler.kubernetes.io/labels".into(),
            "kubernetes.io/arch=amd64".into(),
        )]),
        template_labels: BTreeMap::new(),
        owner_references: Vec::new(),
        provider_spec: Some(provider_spec),
    }
}

/// Any decision is acceptable (a platform team's module may well skip an
/// object the shipped one patches), but it must come back in time and pass
/// the host's validation (which every guest call applies).
pub fn boot_image_guest(platform: &str, guest: &BootImageGuest) -> Result<(), String> {
    boot_image_decision(platform, guest)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// The guest's decision for `platform`'s fixture MachineSet.
pub fn boot_image_decision(
    platform: &str,
    guest: &BootImageGuest,
) -> Result<mco_bootimage::Decision, GuestError> {
    let cluster = ClusterFacts {
        control_plane_arch: "x86_64".into(),
        multi_arch: false,
        // The AWS fixture's current AMI, so it counts as an RHCOS image.
        known_images: [OLD_AMI.to_string()].into(),
    };
    guest.decide_one(
        platform,
        Some(STREAM),
        &boot_image_fixture(platform),
        &cluster,
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The native logic passes the fixtures the guests must pass.
    #[test]
    fn native_logic_passes_the_mcn_fixture() {
        let decision = logic::derive(&mcn_fixture());
        assert!(logic::validate(&decision).is_ok());
        assert!(
            matches!(&decision, logic::Decision::Apply(n) if n.pool == "worker"),
            "{decision:?}"
        );
    }
}
