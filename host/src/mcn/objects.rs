//! The cluster objects the MachineConfigNode job reads besides Nodes and
//! its own MCNs, reduced to the fields it uses. They are decoded once per
//! watch event (the reflector stores them typed); a malformed one is kept
//! as a `DeserializeGuard` error, logged and left out, rather than stalling
//! the watch for the others.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::core::ClusterResourceScope;
use serde::Deserialize;

use crate::kube::resources::{MACHINE_CONFIG, MACHINE_CONFIG_POOL};

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

/// A rendered MachineConfig; its spec stays free-form JSON (the guest
/// compares two of them).
#[derive(Deserialize, Clone, Debug, Default)]
pub struct MachineConfig {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: serde_json::Value,
}

crate::typed_resource!(MachineConfigPool, MACHINE_CONFIG_POOL, ClusterResourceScope);
crate::typed_resource!(MachineConfig, MACHINE_CONFIG, ClusterResourceScope);
