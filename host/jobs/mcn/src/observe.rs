//! The MCN job beside the Machine Config Operator: how a derived MCN
//! compares with the one the cluster holds (observe mode), and whether the
//! operator's daemon writes MCN conditions (own mode refuses then). The
//! same keys compare two modules' decisions (`mco-host guests audit`).

use std::sync::Arc;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use mco_mcn as logic;

use super::crd::MachineConfigNode;
use super::rules;
use mco_cluster::managers;
use mco_registry::compare::{Outcome, keyed};

/// Where the daemon's condition writes land in an MCN's field set.
const CONDITIONS: &[&str] = &["f:status", "f:conditions"];

/// The keys of an MCN that are compared: spec fields, status config
/// versions and images, and one key per condition type, valued by its
/// status, reason and message (never its transition time, which two
/// writers never share).
fn fields(mcn: &MachineConfigNode) -> Vec<(String, String)> {
    let mut fields = vec![
        ("spec.pool".to_owned(), mcn.spec.pool.name.clone()),
        (
            "spec.configVersion.desired".to_owned(),
            mcn.spec.config_version.desired.clone(),
        ),
    ];
    if let Some(image) = &mcn.spec.config_image {
        fields.push((
            "spec.configImage.desiredImage".into(),
            image.desired_image.clone(),
        ));
    }
    let Some(status) = &mcn.status else {
        return fields;
    };
    if let Some(version) = &status.config_version {
        fields.push((
            "status.configVersion.desired".into(),
            version.desired.clone(),
        ));
        if let Some(current) = &version.current {
            fields.push(("status.configVersion.current".into(), current.clone()));
        }
    }
    if let Some(image) = &status.config_image {
        let pairs = [
            ("currentImage", &image.current_image),
            ("desiredImage", &image.desired_image),
        ];
        for (name, value) in pairs {
            if let Some(value) = value {
                fields.push((format!("status.configImage.{name}"), value.clone()));
            }
        }
    }
    for condition in &status.conditions {
        fields.push((
            condition.type_.clone(),
            format!(
                "{} {}: {}",
                condition.status, condition.reason, condition.message
            ),
        ));
    }
    fields
}

/// The key saying what a decision is: `apply`, or `skip` or `error` with
/// its text.
pub const DECISION: &str = "decision";

/// The keys of one node's decision: [`DECISION`], and for `apply` the
/// fields of the MCN the controller would write for it (stamped `now`,
/// which no key reads).
pub fn decision_fields(
    node: &Node,
    decision: logic::Decision,
    previous: Option<&MachineConfigNode>,
    now: Timestamp,
) -> Vec<(String, String)> {
    let (what, mcn) = match decision {
        logic::Decision::Apply(mcn) => ("apply".to_owned(), Some(mcn)),
        logic::Decision::Skip(reason) => (format!("skip: {reason}"), None),
        logic::Decision::Error(message) => (format!("error: {message}"), None),
    };
    let mut keyed = vec![(DECISION.to_owned(), what)];
    if let Some(mcn) = mcn {
        keyed.extend(fields(&rules::to_object(node, mcn, previous, now)));
    }
    keyed
}

/// Our derived MCN (`ours`) against the stored one, key by key.
pub fn outcomes(ours: &MachineConfigNode, theirs: Option<&MachineConfigNode>) -> Vec<Outcome> {
    keyed(fields(ours), theirs.map(fields).unwrap_or_default())
}

/// Why the `own` mode must not write: the MCNs (first by name) whose
/// conditions one of the operator's field managers wrote. `None` when none
/// has.
pub fn operator_writes(mcns: &[Arc<MachineConfigNode>]) -> Option<String> {
    let mut seen: Vec<(String, managers::Writer)> = mcns
        .iter()
        .filter_map(|mcn| {
            let writer = managers::operator_writers(mcn.managed_fields(), CONDITIONS)
                .into_iter()
                .next()?;
            Some((mcn.name_any(), writer))
        })
        .collect();
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    let (first, writer) = seen.first()?;
    let more = match seen.len() - 1 {
        0 => String::new(),
        n => format!(" (and {n} more)"),
    };
    Some(format!(
        "MachineConfigNode {first}{more}: conditions written by {writer}, the Machine Config \
         Operator's daemon; run this job with --mcn-mode observe beside it, or hand the \
         MachineConfigNodes over first"
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn mcn(conditions: Value, managed: Value) -> MachineConfigNode {
        serde_json::from_value(json!({
            "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigNode",
            "metadata": {"name": "worker-0", "managedFields": managed},
            "spec": {"node": {"name": "worker-0"}, "pool": {"name": "worker"},
                "configVersion": {"desired": "rendered-worker-a"}},
            "status": {"conditions": conditions,
                "configVersion": {"desired": "rendered-worker-a", "current": "rendered-worker-a"}},
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    fn condition(type_: &str, status: &str, message: &str, at: &str) -> Value {
        json!({"type": type_, "status": status, "reason": type_, "message": message,
            "lastTransitionTime": at})
    }

    #[test]
    fn conditions_compare_without_their_transition_times() {
        let ours = mcn(
            json!([
                condition(
                    "Updated",
                    "True",
                    "Node worker-0 Updated",
                    "2026-12-02T10:00:00Z"
                ),
                condition("Drained", "False", "not yet", "2026-12-02T10:00:00Z"),
            ]),
            json!([]),
        );
        let theirs = mcn(
            json!([
                condition(
                    "Updated",
                    "True",
                    "Node worker-0 Updated",
                    "2026-11-01T00:00:00Z"
                ),
                condition("Drained", "True", "drained", "2026-11-01T00:00:00Z"),
            ]),
            json!([]),
        );
        let outcomes = outcomes(&ours, Some(&theirs));
        let differing: Vec<&str> = outcomes
            .iter()
            .filter(|o| !o.agrees())
            .map(|o| o.key.as_str())
            .collect();
        assert_eq!(differing, ["Drained"]);
        assert!(outcomes.iter().any(|o| o.key == "Updated" && o.agrees()));
        assert!(outcomes.iter().any(|o| o.key == "spec.pool" && o.agrees()));
        let drained = outcomes.iter().find(|o| o.key == "Drained");
        assert_eq!(
            drained.map(|o| (o.ours.as_str(), o.theirs.as_str())),
            Some(("False Drained: not yet", "True Drained: drained"))
        );
    }

    #[test]
    fn a_decision_is_keyed_by_what_it_is_and_an_apply_by_its_mcn_too() {
        let node: Node = serde_json::from_value(json!({"metadata": {"name": "worker-0"}}))
            .unwrap_or_else(|e| panic!("{e}"));
        let now = Timestamp::UNIX_EPOCH;
        let skip = decision_fields(&node, logic::Decision::Skip("pending".into()), None, now);
        assert_eq!(skip, [(DECISION.to_owned(), "skip: pending".to_owned())]);
        let apply = logic::Decision::Apply(logic::MachineConfigNode {
            pool: "worker".into(),
            desired_config: "rendered-worker-b".into(),
            desired_image: None,
            status: None,
        });
        let keyed = decision_fields(&node, apply, None, now);
        assert_eq!(
            keyed,
            [
                (DECISION.to_owned(), "apply".to_owned()),
                ("spec.pool".to_owned(), "worker".to_owned()),
                (
                    "spec.configVersion.desired".to_owned(),
                    "rendered-worker-b".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn a_node_without_a_stored_mcn_differs_on_every_key() {
        let ours = mcn(
            json!([condition("Updated", "True", "m", "2026-12-02T10:00:00Z")]),
            json!([]),
        );
        let outcomes = outcomes(&ours, None);
        assert!(!outcomes.is_empty());
        assert!(
            outcomes
                .iter()
                .all(|o| !o.agrees() && o.theirs == mco_registry::compare::ABSENT)
        );
    }

    #[test]
    fn the_daemons_condition_writes_block_the_own_mode() {
        let daemon = json!([{
            "manager": "machine-config-operator", "operation": "Apply", "subresource": "status",
            "apiVersion": "machineconfiguration.openshift.io/v1", "fieldsType": "FieldsV1",
            "time": "2026-12-02T10:00:00Z",
            "fieldsV1": {"f:status": {"f:conditions": {"k:{\"type\":\"Updated\"}": {}}}},
        }]);
        let ours = json!([{
            "manager": "mco-host", "operation": "Apply", "subresource": "status",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": {"f:conditions": {"k:{\"type\":\"Updated\"}": {}}}},
        }]);
        let mut other = mcn(json!([]), daemon.clone());
        other.metadata.name = Some("worker-1".into());
        let blocked = vec![
            Arc::new(other),
            Arc::new(mcn(json!([]), daemon)),
            Arc::new(mcn(json!([]), ours.clone())),
        ];
        let reason = operator_writes(&blocked).unwrap_or_default();
        assert!(
            reason.starts_with("MachineConfigNode worker-0 (and 1 more): conditions written by machine-config-operator (Apply at 2026-12-02T10:00:00Z)"),
            "{reason}"
        );
        assert_eq!(operator_writes(&[Arc::new(mcn(json!([]), ours))]), None);
        assert_eq!(operator_writes(&[]), None);
    }
}
