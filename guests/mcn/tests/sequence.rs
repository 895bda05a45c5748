//! Walks nodes through whole updates (the spec's §5.1 table and its
//! variants), feeding each derivation the previous one's conditions, and
//! checks the conditions upstream shows after every step.

use std::collections::BTreeMap;

use ConditionStatus::{False, True, Unknown};
use mco_mcn::{
    Condition, ConditionStatus, Decision, Facts, LabelSelector, MachineConfigNode, Node, Pool,
    RenderedConfig, derive,
};
use serde_json::json;

const P: &str = "machineconfiguration.openshift.io/";

/// One node moving from rendered config A to B, step by step.
struct Walk {
    facts: Facts,
    last: Option<MachineConfigNode>,
}

impl Walk {
    fn new(os_b: &str, ssh_b: &str) -> Walk {
        let spec = |os: &str, key: &str| {
            json!({"osImageURL": os, "config": {"ignition": {"version": "3.4.0"},
                "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": [key]}]}}})
            .to_string()
        };
        let mut facts = Facts {
            node: Node {
                name: "worker-0".into(),
                labels: [("node-role.kubernetes.io/worker".to_string(), String::new())].into(),
                ..Node::default()
            },
            pools: vec![Pool {
                name: "worker".into(),
                node_selector: Some(LabelSelector {
                    match_labels: [("node-role.kubernetes.io/worker".to_string(), String::new())]
                        .into(),
                    match_expressions: vec![],
                }),
                target_config: "rendered-worker-a".into(),
            }],
            configs: vec![
                RenderedConfig {
                    name: "rendered-worker-a".into(),
                    spec: spec("os-a", "key-a"),
                },
                RenderedConfig {
                    name: "rendered-worker-b".into(),
                    spec: spec(os_b, ssh_b),
                },
            ],
            previous: vec![],
            stored_generation: None,
        };
        set(
            &mut facts.node.annotations,
            &[
                ("currentConfig", "rendered-worker-a"),
                ("desiredConfig", "rendered-worker-a"),
                ("state", "Done"),
                ("desiredDrain", "uncordon-rendered-worker-a"),
                ("lastAppliedDrain", "uncordon-rendered-worker-a"),
            ],
        );
        Walk { facts, last: None }
    }

    /// Applies annotation changes and derives, carrying the conditions on.
    fn step(&mut self, changes: &[(&str, &str)]) -> &MachineConfigNode {
        set(&mut self.facts.node.annotations, changes);
        let mcn = match derive(&self.facts) {
            Decision::Apply(mcn) => mcn,
            other => panic!("expected an MCN, got {other:?}"),
        };
        self.facts.previous = mcn.status.conditions.clone();
        self.last.insert(mcn)
    }

    fn condition(&self, type_: &str) -> Condition {
        let conditions = self
            .last
            .as_ref()
            .map(|m| m.status.conditions.as_slice())
            .unwrap_or_default();
        conditions
            .iter()
            .find(|c| c.type_ == type_)
            .cloned()
            .unwrap_or_else(|| panic!("no {type_} condition"))
    }

    fn statuses(&self) -> BTreeMap<String, ConditionStatus> {
        let conditions = self
            .last
            .as_ref()
            .map(|m| m.status.conditions.as_slice())
            .unwrap_or_default();
        conditions
            .iter()
            .map(|c| (c.type_.clone(), c.status))
            .collect()
    }

    /// Asserts the listed conditions and that every other one is False.
    fn expect(&self, expected: &[(&str, ConditionStatus)]) {
        let statuses = self.statuses();
        assert_eq!(statuses.len(), 14, "{statuses:?}");
        for (type_, status) in &statuses {
            let want = expected
                .iter()
                .find(|(t, _)| t == type_)
                .map_or(False, |(_, s)| *s);
            assert_eq!(*status, want, "{type_} in {statuses:?}");
        }
    }

    fn message(&self, type_: &str) -> String {
        self.condition(type_).message
    }
}

fn set(annotations: &mut BTreeMap<String, String>, changes: &[(&str, &str)]) {
    for (key, value) in changes {
        annotations.insert(format!("{P}{key}"), value.to_string());
    }
}

/// Starts a walk at step 1 of §5.1: the pool targets B.
fn requested(os_b: &str, ssh_b: &str) -> Walk {
    let mut walk = Walk::new(os_b, ssh_b);
    walk.step(&[]);
    walk.expect(&[("Updated", True)]);
    assert_eq!(walk.message("Updated"), "Node worker-0 Updated");
    walk.facts.pools[0].target_config = "rendered-worker-b".into();
    walk.step(&[("desiredConfig", "rendered-worker-b")]);
    walk
}

#[test]
fn reboot_update_follows_upstream_step_by_step() {
    let mut walk = requested("os-b", "key-a");
    walk.expect(&[]);
    assert_eq!(walk.message("Updated"), "Node worker-0 needs an update");
    let mcn = walk.last.clone().unwrap_or_default();
    assert_eq!(
        (
            mcn.desired_config.as_str(),
            mcn.status.config_version.desired.as_str()
        ),
        ("rendered-worker-b", "rendered-worker-b")
    );
    assert_eq!(
        mcn.status.config_version.current.as_deref(),
        Some("rendered-worker-a")
    );

    walk.step(&[("state", "Working")]);
    walk.expect(&[("UpdatePrepared", True)]);
    assert_eq!(
        walk.message("UpdatePrepared"),
        "Update Compatible. Post Cfg Actions: [reboot] Drain Required: true"
    );

    walk.step(&[("desiredDrain", "drain-rendered-worker-b")]);
    walk.expect(&[
        ("UpdatePrepared", True),
        ("UpdateExecuted", Unknown),
        ("Drained", Unknown),
    ]);
    assert_eq!(
        walk.message("UpdateExecuted"),
        "Draining Node as part of update executed phase"
    );

    walk.facts.node.unschedulable = true;
    walk.step(&[]);
    walk.expect(&[
        ("UpdatePrepared", True),
        ("UpdateExecuted", Unknown),
        ("Drained", Unknown),
        ("Cordoned", True),
    ]);
    assert_eq!(walk.condition("Cordoned").reason, "UpdateExecutedCordoned");

    walk.step(&[("lastAppliedDrain", "drain-rendered-worker-b")]);
    walk.expect(&[
        ("UpdatePrepared", True),
        ("UpdateExecuted", Unknown),
        ("Drained", True),
        ("Cordoned", True),
        ("AppliedFilesAndOS", Unknown),
    ]);
    assert_eq!(
        walk.message("AppliedFilesAndOS"),
        "Applying files and new OS config to node. OS will need an update. SSH Keys will not need an update"
    );

    walk.step(&[("post-config-action", "Rebooting")]);
    let after_files = [
        ("UpdatePrepared", True),
        ("UpdateExecuted", True),
        ("Drained", True),
        ("Cordoned", True),
        ("AppliedFilesAndOS", True),
    ];
    walk.expect(&[after_files.as_slice(), &[("RebootedNode", Unknown)]].concat());
    assert_eq!(
        walk.message("NodeDegraded"),
        "Node worker-0 upgrade succeeded"
    );

    walk.step(&[("post-config-action", "")]);
    walk.expect(&[after_files.as_slice(), &[("RebootedNode", True)]].concat());

    walk.step(&[("desiredDrain", "uncordon-rendered-worker-b")]);
    walk.expect(
        &[
            after_files.as_slice(),
            &[("RebootedNode", True), ("Resumed", True)],
        ]
        .concat(),
    );
    assert_eq!(
        walk.message("Resumed"),
        "In desired config rendered-worker-b. Resumed normal operations. Applying proper annotations."
    );

    walk.facts.node.unschedulable = false;
    walk.step(&[("lastAppliedDrain", "uncordon-rendered-worker-b")]);
    let uncordoned = [
        ("RebootedNode", True),
        ("Resumed", True),
        ("UpdateComplete", True),
        ("Uncordoned", True),
    ];
    walk.expect(&[after_files.as_slice(), &uncordoned].concat());
    assert_eq!(walk.condition("UpdateComplete").reason, "Uncordoned");

    walk.step(&[("state", "Done"), ("currentConfig", "rendered-worker-b")]);
    walk.expect(&[("Updated", True)]);
    assert_eq!(
        walk.message("Resumed"),
        "Action during update to rendered-worker-b: In desired config rendered-worker-b. Resumed normal operations."
    );
    assert_eq!(
        walk.message("Drained"),
        "Action during update to rendered-worker-b: Drained node. The drain is complete as the desired drainer matches current drainer: drain-rendered-worker-b"
    );
    assert_eq!(
        walk.message("NodeDegraded"),
        "Node worker-0 upgrade succeeded"
    );
    assert_eq!(
        walk.condition("UpdatePostActionComplete").reason,
        "NotYetOccurred"
    );
    let done = walk.last.clone();
    walk.step(&[]);
    assert_eq!(
        walk.last, done,
        "a finished node derives the same MCN again"
    );
}

#[test]
fn rebootless_update_without_drain() {
    let mut walk = requested("os-a", "key-b");
    walk.step(&[("state", "Working")]);
    walk.expect(&[("UpdatePrepared", True), ("UpdateExecuted", Unknown)]);
    assert_eq!(
        walk.message("UpdatePrepared"),
        "Update Compatible. Post Cfg Actions: [none] Drain Required: false"
    );
    assert_eq!(
        walk.message("Drained"),
        "Node Drain Not required for this update."
    );
    assert_eq!(walk.condition("Drained").reason, "UpdateExecutedDrained");

    walk.step(&[("desiredDrain", "uncordon-rendered-worker-b")]);
    let resumed = [
        ("UpdatePrepared", True),
        ("UpdateExecuted", True),
        ("AppliedFilesAndOS", True),
        ("UpdatePostActionComplete", True),
        ("Resumed", True),
    ];
    walk.expect(&resumed);
    assert_eq!(walk.condition("UpdatePostActionComplete").reason, "None");
    assert_eq!(
        walk.message("AppliedFilesAndOS"),
        "Applied files and new OS config to node. OS did not need an update. SSH Keys did need an update"
    );

    walk.step(&[("lastAppliedDrain", "uncordon-rendered-worker-b")]);
    walk.expect(
        &[
            resumed.as_slice(),
            &[("UpdateComplete", True), ("Uncordoned", True)],
        ]
        .concat(),
    );

    walk.step(&[("state", "Done"), ("currentConfig", "rendered-worker-b")]);
    walk.expect(&[("Updated", True)]);
    assert_eq!(
        walk.message("NodeDegraded"),
        "Node worker-0 upgrade succeeded"
    );
    assert_eq!(
        walk.message("RebootedNode"),
        "This node has not yet entered the RebootedNode phase"
    );
    assert_eq!(
        walk.message("UpdatePostActionComplete"),
        "Action during update to rendered-worker-b: Changes do not require a reboot"
    );
}

#[test]
fn single_node_clusters_skip_the_drain() {
    let mut walk = requested("os-b", "key-a");
    walk.step(&[
        ("state", "Working"),
        ("controlPlaneTopology", "SingleReplica"),
    ]);
    walk.expect(&[("UpdatePrepared", True), ("UpdateExecuted", Unknown)]);
    assert_eq!(
        walk.message("UpdateExecuted"),
        "Node Drain Not required for this update."
    );
}

#[test]
fn degraded_keeps_progress_and_recovers() {
    let mut walk = requested("os-b", "key-a");
    walk.step(&[("state", "Working")]);
    walk.step(&[("desiredDrain", "drain-rendered-worker-b")]);
    walk.step(&[
        ("state", "Degraded"),
        ("reason", "failed to drain node: pdb blocks eviction"),
    ]);
    walk.expect(&[
        ("UpdatePrepared", True),
        ("UpdateExecuted", Unknown),
        ("Drained", Unknown),
        ("NodeDegraded", True),
    ]);
    assert_eq!(
        walk.message("NodeDegraded"),
        "Node worker-0 upgrade failure. failed to drain node: pdb blocks eviction"
    );
    assert_eq!(walk.message("Updated"), "Node worker-0 needs an update");

    walk.step(&[
        ("state", "Working"),
        ("reason", ""),
        ("lastAppliedDrain", "drain-rendered-worker-b"),
    ]);
    walk.expect(&[
        ("UpdatePrepared", True),
        ("UpdateExecuted", Unknown),
        ("Drained", True),
        ("Cordoned", True),
        ("AppliedFilesAndOS", Unknown),
        ("NodeDegraded", True),
    ]);
    walk.step(&[("post-config-action", "Rebooting")]);
    assert_eq!(walk.condition("NodeDegraded").status, False);
}

#[test]
fn unreconcilable_update_leaves_desired_unset() {
    let mut walk = requested("os-b", "key-a");
    let mcn = walk
        .step(&[
            ("state", "Unreconcilable"),
            ("reason", "ignition kernelArguments changed"),
        ])
        .clone();
    assert_eq!(mcn.status.config_version.desired, "not-yet-set");
    assert_eq!(mcn.desired_config, "rendered-worker-b");
    walk.expect(&[("UpdatePrepared", Unknown), ("NodeDegraded", True)]);
    assert_eq!(
        walk.message("UpdatePrepared"),
        "Update Failed compatibility validation. MachineConfigs rendered-worker-a and rendered-worker-b are not compatible. Err: ignition kernelArguments changed"
    );
}

#[test]
fn drift_on_an_updated_node_is_reported_without_a_reset() {
    let mut walk = Walk::new("os-b", "key-a");
    walk.step(&[]);
    walk.step(&[
        ("state", "Degraded"),
        ("reason", "unexpected on-disk state"),
    ]);
    walk.expect(&[("NodeDegraded", True)]);
    assert_eq!(
        walk.message("Updated"),
        "This node is not updated, sensed disruption via a manual update."
    );
    walk.step(&[("state", "Done"), ("reason", "")]);
    walk.expect(&[("Updated", True)]);
    assert_eq!(
        walk.message("NodeDegraded"),
        "Action during update to rendered-worker-a: Node worker-0 upgrade failure. unexpected on-disk state"
    );
}

#[test]
fn a_new_update_resets_the_last_ones_leftovers() {
    let mut walk = requested("os-b", "key-a");
    walk.step(&[("state", "Working")]);
    walk.step(&[
        ("desiredDrain", "drain-rendered-worker-b"),
        ("lastAppliedDrain", "drain-rendered-worker-b"),
    ]);
    // Jumps straight to done: the controller missed the rest.
    walk.step(&[
        ("state", "Done"),
        ("currentConfig", "rendered-worker-b"),
        ("desiredDrain", "uncordon-rendered-worker-b"),
        ("lastAppliedDrain", "uncordon-rendered-worker-b"),
    ]);
    walk.expect(&[("Updated", True)]);
    assert!(
        walk.message("Uncordoned")
            .starts_with("Action during update to rendered-worker-b: UnCordoned node.")
    );
    assert!(
        walk.message("Drained")
            .starts_with("Action during update to rendered-worker-b: Drained node.")
    );
    // No reboot was observed and the annotations no longer show the old
    // config, so the update is reported as rebootless.
    assert_eq!(
        walk.message("RebootedNode"),
        "This node has not yet entered the RebootedNode phase"
    );
}

#[test]
fn image_mode_reports_config_image() {
    let digest = format!("quay.io/openshift/os@sha256:{}", "ab".repeat(32));
    let mut walk = Walk::new("os-b", "key-a");
    let mcn = walk
        .step(&[("currentImage", &digest), ("desiredImage", &digest)])
        .clone();
    assert_eq!(mcn.desired_image.as_deref(), Some(digest.as_str()));
    let image = mcn.status.config_image.unwrap_or_default();
    assert_eq!(
        (image.current_image, image.desired_image),
        (Some(digest.clone()), Some(digest))
    );
}

#[test]
fn broken_annotations_and_configs_are_errors_not_panics() {
    let mut walk = Walk::new("os-b", "key-a");
    set(
        &mut walk.facts.node.annotations,
        &[("desiredConfig", "Not A Name")],
    );
    assert!(matches!(derive(&walk.facts), Decision::Error(m) if m.contains("desiredConfig")));
    set(
        &mut walk.facts.node.annotations,
        &[
            ("desiredConfig", "rendered-worker-b"),
            ("desiredImage", "quay.io/os:latest"),
        ],
    );
    assert!(matches!(derive(&walk.facts), Decision::Error(m) if m.contains("desiredImage")));

    let mut walk = requested("os-b", "key-a");
    walk.facts.configs[1].spec = "{\"config\": {\"storage\": {\"files\": 3}}}".into();
    let mcn = walk.step(&[("state", "Working")]).clone();
    assert_eq!(walk.condition("UpdatePrepared").status, Unknown);
    assert!(
        walk.message("UpdatePrepared")
            .contains("Error calculating post config change actions")
    );
    assert_eq!(mcn.status.config_version.desired, "not-yet-set");

    let mut walk = requested("os-b", "key-a");
    walk.facts
        .node
        .annotations
        .insert(format!("{P}reason"), "x".repeat(1 << 20));
    walk.step(&[("state", "Degraded")]);
    assert!(walk.message("NodeDegraded").len() < 2100);
}

#[test]
fn nodes_without_an_mcn() {
    let mut walk = Walk::new("os-b", "key-a");
    walk.facts.node.phase = "Pending".into();
    assert!(matches!(derive(&walk.facts), Decision::Skip(r) if r.contains("Pending")));
    walk.facts.node.phase = String::new();
    walk.facts
        .node
        .labels
        .insert("kubernetes.io/os".into(), "windows".into());
    assert!(matches!(derive(&walk.facts), Decision::Skip(r) if r.contains("Windows")));
    walk.facts.node.labels.clear();
    assert!(matches!(derive(&walk.facts), Decision::Skip(r) if r.contains("no MachineConfigPool")));
}

#[test]
fn a_fresh_node_gets_placeholders() {
    let mut walk = Walk::new("os-b", "key-a");
    walk.facts.node.annotations.clear();
    let mcn = walk.step(&[]).clone();
    assert_eq!(
        (
            mcn.desired_config.as_str(),
            mcn.status.config_version.desired.as_str()
        ),
        ("not-yet-set", "not-yet-set")
    );
    assert_eq!(mcn.status.config_version.current, None);
    assert_eq!(mcn.status.observed_generation, 1);
    walk.expect(&[]);
}

#[test]
fn a_message_written_before_the_configs_arrived_is_completed() {
    let mut walk = requested("os-b", "key-a");
    let configs = std::mem::take(&mut walk.facts.configs);
    walk.step(&[("state", "Working")]);
    assert_eq!(
        walk.message("UpdatePrepared"),
        "Update Compatible. Post Cfg Actions: [] Drain Required: true"
    );
    walk.facts.configs = configs;
    walk.step(&[]);
    assert_eq!(
        walk.message("UpdatePrepared"),
        "Update Compatible. Post Cfg Actions: [reboot] Drain Required: true"
    );
}
