//! The MachineConfigNode job on the host side: cluster objects in, guest
//! output checked, the object to apply out. Shared by `eval` and tests.

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    Condition, LabelSelector, ObjectMeta, OwnerReference, Time,
};
use k8s_openapi::jiff::Timestamp;
use mco_mcn as logic;
use serde::Deserialize;

use crate::crd;

const ANNOTATION_PREFIX: &str = "machineconfiguration.openshift.io/";

/// A MachineConfigPool, reduced to what the job reads.
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

/// A rendered MachineConfig; its spec stays free-form JSON.
#[derive(Deserialize, Clone, Debug, Default)]
pub struct MachineConfig {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: serde_json::Value,
}

/// The guest's input for one node. Only the rendered configs the node's
/// annotations name are passed along.
pub fn facts(
    node: &Node,
    pools: &[MachineConfigPool],
    configs: &[MachineConfig],
    previous: Option<&crd::MachineConfigNode>,
) -> logic::Facts {
    let annotations = node.metadata.annotations.clone().unwrap_or_default();
    let wanted: Vec<&str> = ["currentConfig", "desiredConfig"]
        .iter()
        .filter_map(|key| {
            annotations
                .get(&format!("{ANNOTATION_PREFIX}{key}"))
                .map(String::as_str)
        })
        .collect();
    let configs = configs
        .iter()
        .filter_map(|mc| {
            let name = mc.metadata.name.as_deref()?;
            wanted.contains(&name).then(|| logic::RenderedConfig {
                name: name.to_string(),
                spec: mc.spec.to_string(),
            })
        })
        .collect();
    logic::Facts {
        node: logic::Node {
            name: node.metadata.name.clone().unwrap_or_default(),
            generation: node.metadata.generation.unwrap_or(0),
            phase: node
                .status
                .as_ref()
                .and_then(|s| s.phase.clone())
                .unwrap_or_default(),
            unschedulable: node
                .spec
                .as_ref()
                .and_then(|s| s.unschedulable)
                .unwrap_or(false),
            labels: node.metadata.labels.clone().unwrap_or_default(),
            annotations,
        },
        pools: pools.iter().map(pool).collect(),
        configs,
        previous: previous.map(previous_conditions).unwrap_or_default(),
    }
}

fn pool(pool: &MachineConfigPool) -> logic::Pool {
    logic::Pool {
        name: pool.metadata.name.clone().unwrap_or_default(),
        node_selector: pool
            .spec
            .node_selector
            .as_ref()
            .map(|s| logic::LabelSelector {
                match_labels: s.match_labels.clone().unwrap_or_default(),
                match_expressions: s
                    .match_expressions
                    .iter()
                    .flatten()
                    .map(|r| logic::SelectorRequirement {
                        key: r.key.clone(),
                        operator: r.operator.clone(),
                        values: r.values.clone().unwrap_or_default(),
                    })
                    .collect(),
            }),
        target_config: pool
            .spec
            .configuration
            .as_ref()
            .map(|c| c.name.clone())
            .unwrap_or_default(),
    }
}

fn previous_conditions(mcn: &crd::MachineConfigNode) -> Vec<logic::Condition> {
    let conditions = mcn
        .status
        .as_ref()
        .map(|s| s.conditions.as_slice())
        .unwrap_or_default();
    conditions
        .iter()
        .filter_map(|c| {
            let status = match c.status.as_str() {
                "True" => logic::ConditionStatus::True,
                "False" => logic::ConditionStatus::False,
                "Unknown" => logic::ConditionStatus::Unknown,
                _ => return None,
            };
            Some(logic::Condition {
                type_: c.type_.clone(),
                status,
                reason: c.reason.clone(),
                message: c.message.clone(),
            })
        })
        .collect()
}

/// Checks guest output against what the CRD accepts and what the job
/// promises (every default condition present), before anything is written.
/// The rules live in the guest library so the guest can hold itself to them
/// and the fuzz targets can reach them without the engine.
pub fn validate(decision: &logic::Decision) -> Result<(), String> {
    logic::validate(decision)
}

/// The object the controller applies for `node`. A condition whose status,
/// reason and message did not change keeps its stored transition time.
pub fn to_object(
    node: &Node,
    mcn: logic::MachineConfigNode,
    previous: Option<&crd::MachineConfigNode>,
    now: Timestamp,
) -> crd::MachineConfigNode {
    let name = node.metadata.name.clone().unwrap_or_default();
    let stored: &[Condition] = previous
        .and_then(|p| p.status.as_ref())
        .map(|s| s.conditions.as_slice())
        .unwrap_or_default();
    let logic::MachineConfigNode {
        pool,
        desired_config,
        desired_image,
        status,
    } = mcn;
    let conditions = status
        .conditions
        .into_iter()
        .map(|c| {
            let status = c.status.as_str().to_string();
            let unchanged = stored.iter().find(|s| {
                s.type_ == c.type_
                    && s.status == status
                    && s.reason == c.reason
                    && s.message == c.message
            });
            Condition {
                last_transition_time: unchanged
                    .map_or(Time(now), |s| s.last_transition_time.clone()),
                message: c.message,
                observed_generation: None,
                reason: c.reason,
                status,
                type_: c.type_,
            }
        })
        .collect();
    let owner = node.metadata.uid.clone().map(|uid| OwnerReference {
        api_version: "v1".into(),
        kind: "Node".into(),
        name: name.clone(),
        uid,
        ..OwnerReference::default()
    });
    let mut object = crd::MachineConfigNode::new(
        &name,
        crd::MachineConfigNodeSpec {
            node: crd::ObjectName { name: name.clone() },
            pool: crd::ObjectName { name: pool },
            config_version: crd::SpecConfigVersion {
                desired: desired_config,
            },
            config_image: desired_image.map(|desired_image| crd::SpecConfigImage { desired_image }),
        },
    );
    // The derive also stamps the CRD's own label on instances; MCNs carry none.
    object.metadata.labels = None;
    object.metadata.owner_references = owner.map(|o| vec![o]);
    object.status = Some(crd::MachineConfigNodeStatus {
        conditions,
        observed_generation: Some(status.observed_generation),
        config_version: Some(crd::StatusConfigVersion {
            current: status.config_version.current,
            desired: status.config_version.desired,
        }),
        config_image: status.config_image.map(|i| crd::StatusConfigImage {
            current_image: i.current_image,
            desired_image: i.desired_image,
        }),
    });
    object
}
