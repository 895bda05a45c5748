//! The MachineConfigNode guest: derives a node's MachineConfigNode (its
//! pool, desired and current rendered config, conditions) from the Node,
//! the MachineConfigPools, the rendered MachineConfigs and the MCN stored
//! in the cluster, which the host passes as `facts`. The node's labels and
//! the rendered configs are handles the host lends for the call: look a
//! label up by key (`labels.label(key)`), and a config's digests up by
//! name (`configs.summary(name)`); never keep a handle past the call.
//!
//! As made by `mco-host guests new`, it reports the pool that selects the
//! node, the configs from the node's annotations, and of the conditions
//! `Updated` and `NodeDegraded`. Your rules go in `derive`.

use exports::mco::machine_config::node_state::{
    self as wit, ConfigVersion, Decision, Facts, LabelSelector, MachineConfigNode, NodeLabels,
    NodeStatus, RenderedConfigs,
};
use mco::machine_config::types::{Condition, ConditionStatus};

wit_bindgen::generate!({ world: "node-state-reporter", path: "wit" });

/// The prefix of the annotations the Machine Config Daemon writes.
const ANNOTATIONS: &str = "machineconfiguration.openshift.io/";
/// The pool upstream reports for a node no pool selects.
const NOT_YET_SET: &str = "not-yet-set";
/// The conditions every MachineConfigNode status carries, one of each
/// (upstream's default list, which the host requires); this guest derives
/// `Updated` and `NodeDegraded` and reports the steps of an update as not
/// yet occurred.
const CONDITIONS: [&str; 14] = [
    "UpdatePrepared",
    "UpdateExecuted",
    "UpdatePostActionComplete",
    "UpdateComplete",
    "Resumed",
    "Drained",
    "AppliedFilesAndOS",
    "Cordoned",
    "RebootedNode",
    "Updated",
    "Uncordoned",
    "NodeDegraded",
    "PinnedImageSetsDegraded",
    "PinnedImageSetsProgressing",
];
/// The feature gate that replaces `AppliedFilesAndOS` with
/// [`IMAGE_MODE_CONDITIONS`] (and lets the MCN carry `configImage`).
const IMAGE_MODE_STATUS_REPORTING: &str = "ImageModeStatusReporting";
/// The list with that gate on.
const IMAGE_MODE_CONDITIONS: [&str; 16] = [
    "UpdatePrepared",
    "UpdateExecuted",
    "UpdatePostActionComplete",
    "UpdateComplete",
    "Resumed",
    "Drained",
    "AppliedFiles",
    "AppliedOSImage",
    "Cordoned",
    "RebootedNode",
    "Updated",
    "Uncordoned",
    "ImagePulledFromRegistry",
    "NodeDegraded",
    "PinnedImageSetsDegraded",
    "PinnedImageSetsProgressing",
];

struct Guest;

impl wit::Guest for Guest {
    fn derive(labels: &NodeLabels, _configs: &RenderedConfigs, facts: Facts) -> Decision {
        derive(labels, &facts)
    }
}

export!(Guest);

fn derive(labels: &NodeLabels, facts: &Facts) -> Decision {
    let node = &facts.node;
    if matches!(node.phase.as_str(), "Pending" | "Provisioning") {
        return Decision::Skip(format!("node {} is {}", node.name, node.phase));
    }
    let annotation = |key: &str| {
        node.annotations
            .iter()
            .find(|(k, _)| k.strip_prefix(ANNOTATIONS) == Some(key))
            .map(|(_, value)| value.as_str())
    };
    let pool = facts
        .pools
        .iter()
        .find(|pool| selects(pool.node_selector.as_ref(), labels));
    let desired = annotation("desiredConfig")
        .or(pool.map(|p| p.target_config.as_str()))
        .unwrap_or(NOT_YET_SET);
    let current = annotation("currentConfig");
    let updated = current == Some(desired) && annotation("state") == Some("Done");
    let degraded = annotation("state") == Some("Degraded");
    let image_mode = facts
        .feature_gates
        .iter()
        .any(|gate| gate == IMAGE_MODE_STATUS_REPORTING);
    let kinds: &[&str] = if image_mode {
        &IMAGE_MODE_CONDITIONS
    } else {
        &CONDITIONS
    };
    let conditions = kinds
        .iter()
        .map(|&kind| match kind {
            "Updated" if updated => condition(
                kind,
                ConditionStatus::True,
                "Updated",
                format!("Node {} is on {desired}", node.name),
            ),
            "Updated" => condition(
                kind,
                ConditionStatus::False,
                "Updating",
                format!("Node {} moves to {desired}", node.name),
            ),
            "NodeDegraded" if degraded => condition(
                kind,
                ConditionStatus::True,
                "NodeDegraded",
                annotation("reason")
                    .unwrap_or("the daemon reports the node degraded")
                    .into(),
            ),
            _ => condition(
                kind,
                ConditionStatus::False,
                "NotYetOccurred",
                format!("This node has not yet entered the {kind} phase"),
            ),
        })
        .collect();
    // One past what the stored MCN has seen: the host's write makes it so.
    let seen = facts.stored.as_ref().map_or(0, |stored| {
        stored
            .generation
            .unwrap_or(0)
            .max(stored.observed_generation.unwrap_or(0))
    });
    Decision::Apply(MachineConfigNode {
        pool: pool.map_or(NOT_YET_SET, |p| p.name.as_str()).into(),
        desired_config: desired.into(),
        desired_image: None,
        status: Some(NodeStatus {
            observed_generation: seen + 1,
            config_version: ConfigVersion {
                current: current.map(Into::into),
                desired: desired.into(),
            },
            config_image: None,
            conditions,
        }),
    })
}

fn condition(kind: &str, status: ConditionStatus, reason: &str, message: String) -> Condition {
    Condition {
        type_: kind.into(),
        status,
        reason: reason.into(),
        message,
    }
}

/// Kubernetes label selector semantics; no selector, or an empty one,
/// selects no node (as a MachineConfigPool's does).
fn selects(selector: Option<&LabelSelector>, labels: &NodeLabels) -> bool {
    let Some(selector) = selector else {
        return false;
    };
    if selector.match_labels.is_empty() && selector.match_expressions.is_empty() {
        return false;
    }
    let labels_match = selector
        .match_labels
        .iter()
        .all(|(key, value)| labels.label(key).as_ref() == Some(value));
    labels_match
        && selector.match_expressions.iter().all(|requirement| {
            let value = labels.label(&requirement.key);
            match requirement.operator.as_str() {
                "In" => value.is_some_and(|v| requirement.values.contains(&v)),
                "NotIn" => value.is_none_or(|v| !requirement.values.contains(&v)),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => false,
            }
        })
}
