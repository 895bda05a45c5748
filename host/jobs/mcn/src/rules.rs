//! The MachineConfigNode job's host rules, sans-IO: cluster objects in,
//! the guest's facts out; the guest's result in, the object to apply out.
//! The controller and `eval mcn` both go through these two functions.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, OwnerReference, Time};
use k8s_openapi::jiff::Timestamp;
use mco_mcn::{self as logic, ANNOTATION_PREFIX};

use super::crd;
use super::objects::{MachineConfig, MachineConfigPool};
use mco_cluster::conditions::{self, Transition};
use mco_job::feature_gates::FeatureGates;

/// The rendered configs the guest may need for `node`: those its
/// annotations name, and the one its stored MCN last saw it on (so the plan
/// of an update that just finished stays known).
pub fn wanted_configs<'a>(
    node: &'a Node,
    previous: Option<&'a crd::MachineConfigNode>,
) -> Vec<&'a str> {
    let annotations = node.metadata.annotations.as_ref();
    let mut wanted: Vec<&str> = ["currentConfig", "desiredConfig"]
        .iter()
        .filter_map(|key| annotations?.get(&format!("{ANNOTATION_PREFIX}{key}")))
        .map(String::as_str)
        .collect();
    wanted.extend(stored_current(previous));
    wanted
}

fn stored_current(previous: Option<&crd::MachineConfigNode>) -> Option<&str> {
    previous?
        .status
        .as_ref()?
        .config_version
        .as_ref()?
        .current
        .as_deref()
}

/// The guest's input for one node. Only the rendered configs
/// [`wanted_configs`] names are passed along.
pub fn facts(
    node: &Node,
    pools: &[&MachineConfigPool],
    configs: &[&MachineConfig],
    policies: logic::DisruptionPolicies,
    previous: Option<&crd::MachineConfigNode>,
    gates: &FeatureGates,
) -> logic::Facts {
    let annotations = node
        .metadata
        .annotations
        .iter()
        .flatten()
        .filter(|(key, _)| key.starts_with(ANNOTATION_PREFIX))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    let wanted = wanted_configs(node, previous);
    let configs = configs
        .iter()
        .filter_map(|mc| {
            let name = mc.metadata.name.as_deref()?;
            wanted.contains(&name).then(|| logic::RenderedConfig {
                name: name.to_string(),
                spec: Arc::clone(&mc.spec.0),
            })
        })
        .collect();
    logic::Facts {
        node: logic::Node {
            name: node.metadata.name.clone().unwrap_or_default(),
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
        pools: pools.iter().map(|p| pool(p)).collect(),
        configs,
        policies,
        stored: previous.map(|mcn| logic::StoredNode {
            generation: mcn.metadata.generation,
            observed_generation: mcn.status.as_ref().and_then(|s| s.observed_generation),
            pool: mcn.spec.pool.name.clone(),
            desired_config: mcn.spec.config_version.desired.clone(),
            desired_image: mcn
                .spec
                .config_image
                .as_ref()
                .map(|i| i.desired_image.clone()),
            current_config: stored_current(Some(mcn)).map(str::to_string),
        }),
        previous: previous.map(previous_conditions).unwrap_or_default(),
        feature_gates: gates.enabled_names().clone(),
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

/// The object the controller applies for `node`. A condition whose status,
/// reason and message did not change keeps its stored transition time. A
/// decision without status (a Windows node) gives an object without one.
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
    let Some(status) = status else {
        return object_spec(&name, node, pool, desired_config, desired_image);
    };
    let wanted = status
        .conditions
        .into_iter()
        .map(|c| Condition {
            last_transition_time: Time(now),
            message: c.message,
            observed_generation: None,
            reason: c.reason,
            status: c.status.as_str().to_string(),
            type_: c.type_,
        })
        .collect();
    let (conditions, _) = conditions::merge(stored, wanted, &Time(now), Transition::AnyChange);
    let mut object = object_spec(&name, node, pool, desired_config, desired_image);
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
        ..crd::MachineConfigNodeStatus::default()
    });
    object
}

/// The object with its spec and owner, no status.
fn object_spec(
    name: &str,
    node: &Node,
    pool: String,
    desired_config: String,
    desired_image: Option<String>,
) -> crd::MachineConfigNode {
    let owner = node.metadata.uid.clone().map(|uid| OwnerReference {
        api_version: "v1".into(),
        kind: "Node".into(),
        name: name.to_string(),
        uid,
        ..OwnerReference::default()
    });
    let mut object = crd::MachineConfigNode::new(
        name,
        crd::MachineConfigNodeSpec {
            node: crd::ObjectName {
                name: name.to_string(),
            },
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
    object
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guest_gets_only_the_daemons_annotations() {
        let node: Node = serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": "worker-0",
                "annotations": {
                    "machineconfiguration.openshift.io/desiredConfig": "rendered-worker-1",
                    "k8s.ovn.org/l3-gateway-config": "{\"default\":{}}"
                }
            }
        }))
        .unwrap();
        let facts = facts(
            &node,
            &[],
            &[],
            logic::DisruptionPolicies::default(),
            None,
            &FeatureGates::default_of(crate::FEATURE_GATES),
        );
        assert_eq!(
            facts.node.annotations.into_iter().collect::<Vec<_>>(),
            [(
                "machineconfiguration.openshift.io/desiredConfig".to_string(),
                "rendered-worker-1".to_string()
            )]
        );
    }
}
