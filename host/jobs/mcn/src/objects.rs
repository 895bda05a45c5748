//! The cluster objects the MachineConfigNode job reads besides Nodes and
//! its own MCNs, reduced to the fields it uses. They are decoded once per
//! watch event (the reflector stores them typed), each on its own: one
//! that cannot be decoded is reported and left out
//! (`cluster::decode`), rather than stalling the watch for the others.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, NodeSpec, NodeStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::core::ClusterResourceScope;
use serde::Deserialize;

use mco_cluster::resources::{MACHINE_CONFIG, MACHINE_CONFIG_POOL};
use mco_mcn::Summary;

/// A MachineConfigPool: which nodes it selects and its target config.
#[derive(Deserialize, Clone, Debug, Default)]
pub struct MachineConfigPool {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: PoolSpec,
}

#[derive(Deserialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct PoolSpec {
    pub node_selector: Option<LabelSelector>,
    pub configuration: Option<ConfigurationRef>,
}

#[derive(Deserialize, Clone, Debug, Default)]
pub struct ConfigurationRef {
    #[serde(default)]
    pub name: String,
}

/// A rendered MachineConfig. Its spec is read into its summary (the
/// digests the guest compares, `mco_mcn::Summary`) once, natively, when
/// the watch event arrives: so once per resourceVersion, rather than on
/// every reconcile of every node that names it, and no guest parses or
/// hashes it.
#[derive(Deserialize, Clone, Debug, Default)]
pub struct MachineConfig {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: SpecSummary,
}

/// The summary of a spec; that of `null` when the object has none.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecSummary(pub Arc<Summary>);

impl Default for SpecSummary {
    fn default() -> Self {
        SpecSummary(Arc::new(Summary::read("null")))
    }
}

impl<'de> Deserialize<'de> for SpecSummary {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        Ok(SpecSummary(Arc::new(Summary::read(&value.to_string()))))
    }
}

/// Drops from a cached Node what the job never reads: a real Node's status
/// (images, conditions, addresses, node info) is most of its size, and the
/// guest needs only its phase; of the spec, only `unschedulable`; of the
/// annotations, only the daemon's (a network plugin's can run to kilobytes).
pub fn trim_node(node: &mut Node) {
    if let Some(annotations) = node.metadata.annotations.as_mut() {
        annotations.retain(|key, _| key.starts_with(mco_mcn::ANNOTATION_PREFIX));
    }
    let phase = node.status.take().and_then(|s| s.phase);
    node.status = phase.map(|phase| NodeStatus {
        phase: Some(phase),
        ..NodeStatus::default()
    });
    let unschedulable = node.spec.take().and_then(|s| s.unschedulable);
    node.spec = Some(NodeSpec {
        unschedulable,
        ..NodeSpec::default()
    });
}

mco_cluster::typed_resource!(MachineConfigPool, MACHINE_CONFIG_POOL, ClusterResourceScope);
mco_cluster::typed_resource!(MachineConfig, MACHINE_CONFIG, ClusterResourceScope);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trimmed_node_keeps_what_the_job_reads_and_nothing_else() {
        let mut node: Node = serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": "worker-0",
                "labels": {"node-role.kubernetes.io/worker": ""},
                "annotations": {
                    "machineconfiguration.openshift.io/state": "Done",
                    "k8s.ovn.org/node-subnets": "{\"default\":[\"10.128.2.0/23\"]}",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true"
                }
            },
            "spec": {"unschedulable": true, "podCIDR": "10.128.2.0/23"},
            "status": {"phase": "Running", "images": [{"names": ["quay.io/x@sha256:0"]}]}
        }))
        .unwrap();
        trim_node(&mut node);
        let trimmed = serde_json::to_value(&node).unwrap();
        assert_eq!(
            trimmed,
            serde_json::json!({
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": "worker-0",
                    "labels": {"node-role.kubernetes.io/worker": ""},
                    "annotations": {"machineconfiguration.openshift.io/state": "Done"}
                },
                "spec": {"unschedulable": true},
                "status": {"phase": "Running"}
            })
        );
    }
}
