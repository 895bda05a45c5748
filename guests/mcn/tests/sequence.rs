//! Walks nodes through whole updates (one standard reboot update as
//! upstream's `pkg/upgrademonitor` writes it, and its variants), feeding each derivation the previous one's conditions, and
//! checks the conditions upstream shows after every step.

use std::collections::BTreeMap;

use ConditionStatus::{False, True, Unknown};
use mco_mcn::{
    Condition, ConditionStatus, Decision, DisruptionAction, DisruptionPolicies, Facts,
    LabelSelector, MachineConfigNode, Node, NodeStatus, Pool, RenderedConfig, StoredNode, derive,
};
use serde_json::json;

const P: &str = "machineconfiguration.openshift.io/";

/// One node moving from rendered config A to B, step by step.
struct Walk {
    facts: Facts,
    last: Option<MachineConfigNode>,
    /// The stored MCN's `metadata.generation`, as the API server keeps it:
    /// 1 on create, one more for every spec change.
    generation: i64,
}

/// A rendered config's spec: an OS image, one SSH key, some files.
fn spec(os: &str, key: &str, files: &[(&str, &str)]) -> String {
    let files: Vec<_> = files
        .iter()
        .map(|(path, data)| json!({"path": path, "contents": {"source": format!("data:,{data}")}}))
        .collect();
    json!({"osImageURL": os, "config": {"ignition": {"version": "3.4.0"},
        "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": [key]}]},
        "storage": {"files": files}}})
    .to_string()
}

fn status(mcn: &MachineConfigNode) -> &NodeStatus {
    mcn.status
        .as_ref()
        .unwrap_or_else(|| panic!("an MCN without status: {mcn:?}"))
}

impl Walk {
    fn new(os_b: &str, ssh_b: &str) -> Walk {
        Walk::between(spec("os-a", "key-a", &[]), spec(os_b, ssh_b, &[]))
    }

    fn between(spec_a: String, spec_b: String) -> Walk {
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
                RenderedConfig::new("rendered-worker-a", &spec_a),
                RenderedConfig::new("rendered-worker-b", &spec_b),
            ],
            policies: DisruptionPolicies::defaults(),
            stored: None,
            previous: vec![],
            feature_gates: Default::default(),
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
        Walk {
            facts,
            last: None,
            generation: 0,
        }
    }

    /// Applies annotation changes and derives, carrying the conditions on.
    fn step(&mut self, changes: &[(&str, &str)]) -> &MachineConfigNode {
        set(&mut self.facts.node.annotations, changes);
        let mcn = match derive(&self.facts) {
            Decision::Apply(mcn) => mcn,
            other => panic!("expected an MCN, got {other:?}"),
        };
        // Read back as the controller would: the spec applied first (the
        // API server bumps the generation on a change), then the status.
        let stored = self.facts.stored.take();
        let spec_changed = stored.as_ref().is_none_or(|s| {
            (&s.pool, &s.desired_config, &s.desired_image)
                != (&mcn.pool, &mcn.desired_config, &mcn.desired_image)
        });
        self.generation += i64::from(spec_changed);
        let observed = mcn.status.as_ref().map(|s| s.observed_generation);
        if let (Some(old), Some(new)) = (
            stored.as_ref().and_then(|s| s.observed_generation),
            observed,
        ) {
            assert!(new >= old, "observedGeneration fell from {old} to {new}");
        }
        assert_eq!(observed, Some(self.generation + 1), "observedGeneration");
        self.facts.stored = Some(StoredNode {
            generation: Some(self.generation),
            observed_generation: observed,
            pool: mcn.pool.clone(),
            desired_config: mcn.desired_config.clone(),
            desired_image: mcn.desired_image.clone(),
            current_config: status(&mcn).config_version.current.clone(),
        });
        self.facts.previous = status(&mcn).conditions.clone();
        // Observe mode derives beside the daemon from the MCN the daemon
        // wrote: upstream's own output must derive to itself.
        match derive(&self.facts) {
            Decision::Apply(again) => assert_eq!(
                status(&again).conditions,
                status(&mcn).conditions,
                "the derivation is not a fixed point of its own output"
            ),
            other => panic!("expected an MCN, got {other:?}"),
        }
        self.last.insert(mcn)
    }

    fn condition(&self, type_: &str) -> Condition {
        let conditions = self
            .last
            .as_ref()
            .map(|m| status(m).conditions.as_slice())
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
            .map(|m| status(m).conditions.as_slice())
            .unwrap_or_default();
        conditions
            .iter()
            .map(|c| (c.type_.clone(), c.status))
            .collect()
    }

    /// Asserts the listed conditions and that every other one is False.
    fn expect(&self, expected: &[(&str, ConditionStatus)]) {
        let statuses = self.statuses();
        let defaults = mco_mcn::default_condition_types(self.facts.image_mode_status_reporting());
        assert_eq!(statuses.len(), defaults.len(), "{statuses:?}");
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

    /// A finished node, evaluated again unchanged, derives the same MCN.
    fn derives_the_same_again(&mut self) {
        let done = self.last.clone();
        self.step(&[]);
        assert_eq!(
            self.last, done,
            "a finished node derives the same MCN again"
        );
    }
}

fn set(annotations: &mut BTreeMap<String, String>, changes: &[(&str, &str)]) {
    for (key, value) in changes {
        annotations.insert(format!("{P}{key}"), value.to_string());
    }
}

/// Starts a walk at its first step: the pool targets B.
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
            status(&mcn).config_version.desired.as_str()
        ),
        ("rendered-worker-b", "rendered-worker-b")
    );
    assert_eq!(
        status(&mcn).config_version.current.as_deref(),
        Some("rendered-worker-a")
    );

    walk.step(&[("state", "Working")]);
    walk.expect(&[("UpdatePrepared", True)]);
    assert_eq!(
        walk.message("UpdatePrepared"),
        "Update Compatible. Post Cfg Actions: [] Drain Required: true"
    );

    // Asked, not yet cordoned: the drain controller cordons before it
    // writes anything (`drainNode`), so the drain has not yet occurred.
    walk.step(&[("desiredDrain", "drain-rendered-worker-b")]);
    walk.expect(&[("UpdatePrepared", True)]);
    assert_eq!(walk.condition("Drained").reason, "NotYetOccurred");

    walk.facts.node.unschedulable = true;
    walk.step(&[]);
    walk.expect(&[
        ("UpdatePrepared", True),
        ("UpdateExecuted", Unknown),
        ("Drained", Unknown),
        ("Cordoned", True),
    ]);
    assert_eq!(walk.condition("Cordoned").reason, "UpdateExecutedCordoned");
    assert_eq!(
        walk.message("UpdateExecuted"),
        "Draining Node as part of update executed phase"
    );

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
        "Applying files and new OS config to node. OS will  need an update. SSH Keys will not need an update"
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
    // W19 names the config of the Node the daemon read before SetDone:
    // the one the update came from.
    assert_eq!(
        walk.message("Resumed"),
        "Action during update to rendered-worker-b: In desired config rendered-worker-a. Resumed normal operations."
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
    walk.derives_the_same_again();
}

#[test]
fn rebootless_update_without_drain() {
    let mut walk = requested("os-a", "key-b");
    walk.step(&[("state", "Working")]);
    walk.expect(&[("UpdatePrepared", True), ("UpdateExecuted", Unknown)]);
    assert_eq!(
        walk.message("UpdatePrepared"),
        "Update Compatible. Post Cfg Actions: [] Drain Required: false"
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
        "Applied files and new OS config to node. OS did not need an update. SSH Keys did  need an update"
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

/// A single-node cluster never drains: after the reboot the state is still
/// Working and the drain annotations still name the old config, yet the
/// daemon writes W17 on its first start after the reboot.
#[test]
fn single_node_reboot_shows_the_reboot_before_the_uncordon() {
    let mut walk = requested("os-b", "key-a");
    walk.step(&[
        ("state", "Working"),
        ("controlPlaneTopology", "SingleReplica"),
    ]);
    walk.expect(&[("UpdatePrepared", True), ("UpdateExecuted", Unknown)]);
    assert_eq!(
        walk.message("UpdatePrepared"),
        "Update Compatible. Post Cfg Actions: [] Drain Required: true"
    );
    walk.step(&[("post-config-action", "Rebooting")]);
    let applied = [
        ("UpdatePrepared", True),
        ("UpdateExecuted", True),
        ("AppliedFilesAndOS", True),
    ];
    walk.expect(&[applied.as_slice(), &[("RebootedNode", Unknown)]].concat());
    walk.step(&[("post-config-action", "")]);
    walk.expect(&[applied.as_slice(), &[("RebootedNode", True)]].concat());
    assert_eq!(walk.message("RebootedNode"), "Node has rebooted");
    assert_eq!(
        walk.message("Drained"),
        "Node Drain Not required for this update."
    );
    walk.step(&[("desiredDrain", "uncordon-rendered-worker-b")]);
    let resumed = [("RebootedNode", True), ("Resumed", True)];
    walk.expect(&[applied.as_slice(), &resumed].concat());
    walk.step(&[("lastAppliedDrain", "uncordon-rendered-worker-b")]);
    walk.expect(
        &[
            applied.as_slice(),
            &resumed,
            &[("UpdateComplete", True), ("Uncordoned", True)],
        ]
        .concat(),
    );
    assert_eq!(
        walk.message("Uncordoned"),
        "UnCordoned node. The node is reporting Unschedulable = false"
    );
    walk.step(&[("state", "Done"), ("currentConfig", "rendered-worker-b")]);
    walk.expect(&[("Updated", True)]);
    assert_eq!(
        walk.message("RebootedNode"),
        "Action during update to rendered-worker-b: Node has rebooted"
    );
    assert_eq!(
        walk.message("Resumed"),
        "Action during update to rendered-worker-b: In desired config rendered-worker-a. Resumed normal operations."
    );
}

/// A reload that fails degrades the node; the daemon's retry runs with
/// the state still Degraded (it sets Working only on a node that is not
/// failed) and its progress shows as on a working node, NodeDegraded True
/// until the node is marked Done.
#[test]
fn a_degraded_node_that_retries_shows_its_progress() {
    let policy = "/etc/containers/policy.json";
    let mut walk = Walk::between(
        spec("os-a", "key-a", &[(policy, "1")]),
        spec("os-a", "key-a", &[(policy, "2")]),
    );
    walk.step(&[]);
    walk.facts.pools[0].target_config = "rendered-worker-b".into();
    walk.step(&[("desiredConfig", "rendered-worker-b"), ("state", "Working")]);
    let prepared = [("UpdatePrepared", True), ("UpdateExecuted", Unknown)];
    walk.expect(&prepared);
    let failure =
        "could not apply update: reloading crio.service configuration failed. Error: exit status 1";
    walk.step(&[("state", "Degraded"), ("reason", failure)]);
    walk.expect(&[prepared.as_slice(), &[("NodeDegraded", True)]].concat());
    assert_eq!(
        walk.message("NodeDegraded"),
        format!("Node worker-0 upgrade failure. {failure}")
    );

    walk.step(&[("desiredDrain", "uncordon-rendered-worker-b")]);
    let resumed = [
        ("UpdatePrepared", True),
        ("UpdateExecuted", True),
        ("AppliedFilesAndOS", True),
        ("UpdatePostActionComplete", True),
        ("Resumed", True),
        ("NodeDegraded", True),
    ];
    walk.expect(&resumed);
    assert_eq!(
        walk.message("UpdatePostActionComplete"),
        "Node has reloaded service crio.service"
    );
    walk.step(&[("lastAppliedDrain", "uncordon-rendered-worker-b")]);
    walk.expect(
        &[
            resumed.as_slice(),
            &[("UpdateComplete", True), ("Uncordoned", True)],
        ]
        .concat(),
    );
    walk.step(&[
        ("state", "Done"),
        ("currentConfig", "rendered-worker-b"),
        ("reason", ""),
    ]);
    walk.expect(&[("Updated", True)]);
    assert_eq!(
        walk.message("NodeDegraded"),
        "Node worker-0 upgrade succeeded"
    );
}

/// A retry that reboots reports success (W16 False) as the daemon's
/// `update` returns, although the state stays Degraded until Done.
#[test]
fn a_degraded_retry_that_reboots_reports_success() {
    let mut walk = requested("os-b", "key-a");
    walk.step(&[("state", "Working")]);
    walk.facts.node.unschedulable = true;
    walk.step(&[
        ("desiredDrain", "drain-rendered-worker-b"),
        ("lastAppliedDrain", "drain-rendered-worker-b"),
    ]);
    walk.step(&[("state", "Degraded"), ("reason", "failed to update OS")]);
    assert_eq!(walk.condition("NodeDegraded").status, True);
    walk.step(&[("post-config-action", "Rebooting")]);
    assert_eq!(
        walk.condition("NodeDegraded"),
        Condition {
            type_: "NodeDegraded".into(),
            status: False,
            reason: "NodeDegraded".into(),
            message: "Node worker-0 upgrade succeeded".into(),
        }
    );
    walk.step(&[("post-config-action", "")]);
    assert_eq!(walk.condition("RebootedNode").status, True);
    assert_eq!(walk.condition("NodeDegraded").status, False);
}

#[test]
fn degraded_keeps_progress_and_recovers() {
    let mut walk = requested("os-b", "key-a");
    walk.step(&[("state", "Working")]);
    walk.facts.node.unschedulable = true;
    walk.step(&[("desiredDrain", "drain-rendered-worker-b")]);
    walk.step(&[
        ("state", "Degraded"),
        ("reason", "failed to drain node: pdb blocks eviction"),
    ]);
    walk.expect(&[
        ("UpdatePrepared", True),
        ("UpdateExecuted", Unknown),
        ("Drained", Unknown),
        ("Cordoned", True),
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

/// A walk to a config that adds a group, which the daemon cannot do in
/// place, up to the new desired config.
fn unreconcilable_requested() -> Walk {
    let mut groups: serde_json::Value =
        serde_json::from_str(&spec("os-a", "key-a", &[])).unwrap_or_default();
    groups["config"]["passwd"]["groups"] = json!([{"name": "wheel"}]);
    let mut walk = Walk::between(spec("os-a", "key-a", &[]), groups.to_string());
    walk.step(&[]);
    walk.facts.pools[0].target_config = "rendered-worker-b".into();
    walk.step(&[("desiredConfig", "rendered-worker-b")]);
    walk
}

const REFUSED: &str = "configs rendered-worker-a, rendered-worker-b are not reconcilable: new machineconfig \"rendered-worker-a\" is not reconcilable against \"rendered-worker-b\": invalid passwd change(s): ignition Passwd Groups section contains changes";

/// What upstream shows once the daemon refused the update: W3 with the
/// error, W16 with it wrapped, no W5 or W6, and the desired config in
/// status (W16, deferred before the check, writes it back).
fn expect_refused(walk: &Walk) {
    walk.expect(&[("UpdatePrepared", Unknown), ("NodeDegraded", True)]);
    assert_eq!(
        walk.message("UpdatePrepared"),
        format!(
            "Update Failed compatibility validation. MachineConfigs rendered-worker-a and rendered-worker-b are not compatible. Err: {REFUSED}"
        )
    );
    assert_eq!(
        walk.message("NodeDegraded"),
        format!(
            "Node worker-0 upgrade failure. can't reconcile config rendered-worker-a with rendered-worker-b: {REFUSED}"
        )
    );
    assert_eq!(walk.condition("UpdateExecuted").reason, "NotYetOccurred");
    assert_eq!(walk.message("Updated"), "Node worker-0 needs an update");
    let mcn = walk.last.clone().unwrap_or_default();
    assert_eq!(status(&mcn).config_version.desired, "rendered-worker-b");
    assert_eq!(mcn.desired_config, "rendered-worker-b");
}

#[test]
fn an_unreconcilable_update_is_refused_on_the_working_step() {
    let mut walk = unreconcilable_requested();
    walk.step(&[("state", "Working")]);
    expect_refused(&walk);
    let refused = walk.last.clone();
    let reason =
        format!("can't reconcile config rendered-worker-a with rendered-worker-b: {REFUSED}");
    walk.step(&[("state", "Unreconcilable"), ("reason", &reason)]);
    expect_refused(&walk);
    assert_eq!(walk.last, refused, "the state annotation adds nothing");
}

#[test]
fn an_unreconcilable_update_reads_the_error_when_working_was_not_seen() {
    let mut walk = unreconcilable_requested();
    let reason =
        format!("can't reconcile config rendered-worker-a with rendered-worker-b: {REFUSED}");
    walk.step(&[("state", "Unreconcilable"), ("reason", &reason)]);
    expect_refused(&walk);
    // An error the derivation cannot compute (the node's FIPS file) reads
    // as the daemon wrote it.
    let fips = "detected change to FIPS flag; refusing to modify FIPS on a running cluster";
    walk.step(&[("reason", fips)]);
    assert_eq!(
        walk.message("UpdatePrepared"),
        format!(
            "Update Failed compatibility validation. MachineConfigs rendered-worker-a and rendered-worker-b are not compatible. Err: {fips}"
        )
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
    // No reboot was observed, but the stored status still names the old
    // config, and its plan (a new OS) is a reboot: that is implied.
    assert_eq!(
        walk.message("RebootedNode"),
        "Action during update to rendered-worker-b: Node has rebooted"
    );
}

fn image_mode_on(walk: &mut Walk) {
    walk.facts
        .feature_gates
        .insert(mco_mcn::IMAGE_MODE_STATUS_REPORTING.to_string());
}

/// Only with gate ImageModeStatusReporting (off in the Default set) does
/// the MCN carry `configImage`: a Default cluster's CRD has no such field.
#[test]
fn config_image_follows_the_gate() {
    let digest = format!("quay.io/openshift/os@sha256:{}", "ab".repeat(32));
    let images = [("currentImage", digest.as_str()), ("desiredImage", &digest)];
    let mut walk = Walk::new("os-b", "key-a");
    let mcn = walk.step(&images).clone();
    assert_eq!(mcn.desired_image, None);
    assert_eq!(status(&mcn).config_image, None);
    walk.expect(&[("Updated", True)]);

    let mut walk = Walk::new("os-b", "key-a");
    image_mode_on(&mut walk);
    let mcn = walk.step(&images).clone();
    assert_eq!(mcn.desired_image.as_deref(), Some(digest.as_str()));
    let image = status(&mcn).config_image.clone().unwrap_or_default();
    assert_eq!(
        (image.current_image, image.desired_image),
        (Some(digest.clone()), Some(digest))
    );
    walk.expect(&[("Updated", True)]);
}

/// Gate on, an update that changes the files (an SSH key) and the OS:
/// upstream's daemon writes AppliedFiles, then AppliedOSImage, each with
/// UpdateExecuted (`pkg/daemon/update.go`), so UpdateExecuted ends with the
/// OS write; there is no AppliedFilesAndOS.
#[test]
fn image_mode_reports_files_and_os_apart() {
    let mut walk = Walk::new("os-b", "key-b");
    image_mode_on(&mut walk);
    walk.step(&[]);
    walk.facts.pools[0].target_config = "rendered-worker-b".into();
    walk.step(&[("desiredConfig", "rendered-worker-b"), ("state", "Working")]);
    walk.facts.node.unschedulable = true;
    walk.step(&[
        ("desiredDrain", "drain-rendered-worker-b"),
        ("lastAppliedDrain", "drain-rendered-worker-b"),
    ]);
    let applying = [
        ("UpdatePrepared", True),
        ("UpdateExecuted", Unknown),
        ("Drained", True),
        ("Cordoned", True),
        ("AppliedFiles", Unknown),
        ("AppliedOSImage", Unknown),
    ];
    walk.expect(&applying);
    let executed = walk.condition("UpdateExecuted");
    assert_eq!(
        (executed.reason.as_str(), executed.message.as_str()),
        (
            "AppliedOSImage",
            "Updating the OS on disk as a part of the in progress phase"
        )
    );
    assert_eq!(walk.message("AppliedFiles"), "Applying files to node.");
    assert_eq!(
        walk.condition("AppliedOSImage").reason,
        "UpdateExecutedAppliedOSImage"
    );

    walk.step(&[("post-config-action", "Rebooting")]);
    walk.expect(&[
        ("UpdatePrepared", True),
        ("UpdateExecuted", True),
        ("Drained", True),
        ("Cordoned", True),
        ("AppliedFiles", True),
        ("AppliedOSImage", True),
        ("RebootedNode", Unknown),
    ]);
    assert_eq!(
        walk.message("UpdateExecuted"),
        "Updated the OS on disk as a part of the in progress phase"
    );
    assert_eq!(
        walk.message("AppliedFiles"),
        "Applied files. SSH Keys did need an update"
    );
    assert_eq!(
        walk.message("AppliedOSImage"),
        "Applied new OS config to node."
    );
    assert_eq!(
        walk.condition("ImagePulledFromRegistry").reason,
        "NotYetOccurred"
    );
}

/// Gate on, an update that changes only the files: no OS write at all.
#[test]
fn image_mode_without_an_os_change_writes_only_the_files() {
    let mut walk = Walk::new("os-a", "key-b");
    image_mode_on(&mut walk);
    walk.step(&[]);
    walk.facts.pools[0].target_config = "rendered-worker-b".into();
    walk.step(&[("desiredConfig", "rendered-worker-b"), ("state", "Working")]);
    walk.step(&[("desiredDrain", "uncordon-rendered-worker-b")]);
    let executed = walk.condition("UpdateExecuted");
    assert_eq!(
        (
            executed.status,
            executed.reason.as_str(),
            executed.message.as_str()
        ),
        (
            True,
            "AppliedFiles",
            "Updated the Files on disk as a part of the in progress phase"
        )
    );
    assert_eq!(walk.condition("AppliedFiles").status, True);
    assert_eq!(walk.condition("AppliedOSImage").reason, "NotYetOccurred");
}

/// One step of a walk: the annotations the daemon or the drain controller
/// writes, whether the node is cordoned, the conditions not False then.
type Step<'a> = (
    &'a [(&'a str, &'a str)],
    bool,
    Vec<(&'a str, ConditionStatus)>,
);

const IMAGE_1: &str = "quay.io/openshift/os-layered@sha256:1111111111111111111111111111111111111111111111111111111111111111";
const IMAGE_2: &str = "quay.io/openshift/os-layered@sha256:2222222222222222222222222222222222222222222222222222222222222222";

/// A node in image mode, done on rendered config A and [`IMAGE_1`], whose
/// desired image moves to [`IMAGE_2`] (the config stays): the first step
/// of an image-only update.
fn image_only_requested(gate: bool) -> Walk {
    let mut walk = Walk::new("os-b", "key-a");
    if gate {
        image_mode_on(&mut walk);
    }
    walk.step(&[("currentImage", IMAGE_1), ("desiredImage", IMAGE_1)]);
    walk.expect(&[("Updated", True)]);
    walk.step(&[("desiredImage", IMAGE_2)]);
    walk.expect(&[]);
    assert_eq!(walk.message("Updated"), "Node worker-0 needs an update");
    walk
}

/// An update of the OS image alone, gate on, step by step. Upstream's
/// daemon sees an OS update (`newMachineConfigDiff` compares the images),
/// so it reboots (`calculatePostConfigChangeNodeDisruptionAction`) and
/// drains: `UpdatePostActionComplete` is never written. Its drain requests
/// carry the config's name, as the last update's did, so the applied
/// `uncordon-<config>` the node starts with is not this update's uncordon.
#[test]
fn an_image_only_update_drains_and_reboots() {
    let mut walk = image_only_requested(true);
    let image = status(walk.last.as_ref().unwrap_or_else(|| panic!("no MCN")))
        .config_image
        .clone()
        .unwrap_or_default();
    assert_eq!(
        (
            image.current_image.as_deref(),
            image.desired_image.as_deref()
        ),
        (Some(IMAGE_1), Some(IMAGE_2))
    );

    let (drain, uncordon) = ("drain-rendered-worker-a", "uncordon-rendered-worker-a");
    let prepared = ("UpdatePrepared", True);
    let cordoned = [prepared, ("UpdateExecuted", Unknown), ("Cordoned", True)];
    let drained = [cordoned.as_slice(), &[("Drained", True)]].concat();
    let applied = [
        prepared,
        ("UpdateExecuted", True),
        ("Cordoned", True),
        ("Drained", True),
        ("AppliedOSImage", True),
    ];
    let rebooted = [applied.as_slice(), &[("RebootedNode", True)]].concat();
    let resumed = [rebooted.as_slice(), &[("Resumed", True)]].concat();
    let steps: [Step; 8] = [
        // The applied `uncordon-<config>` is the last update's.
        (&[("state", "Working")], false, vec![prepared]),
        // Not cordoned yet: the drain has not yet occurred.
        (&[("desiredDrain", drain)], false, vec![prepared]),
        (
            &[],
            true,
            [cordoned.as_slice(), &[("Drained", Unknown)]].concat(),
        ),
        (
            &[("lastAppliedDrain", drain)],
            true,
            [drained.as_slice(), &[("AppliedOSImage", Unknown)]].concat(),
        ),
        (
            &[("post-config-action", "Rebooting")],
            true,
            [applied.as_slice(), &[("RebootedNode", Unknown)]].concat(),
        ),
        (&[("post-config-action", "")], true, rebooted),
        (&[("desiredDrain", uncordon)], true, resumed.clone()),
        (
            &[("lastAppliedDrain", uncordon)],
            false,
            [
                resumed.as_slice(),
                &[("UpdateComplete", True), ("Uncordoned", True)],
            ]
            .concat(),
        ),
    ];
    for (changes, unschedulable, expected) in steps {
        walk.facts.node.unschedulable = unschedulable;
        walk.step(changes);
        walk.expect(&expected);
    }
    assert_eq!(
        walk.message("UpdatePrepared"),
        "Update Compatible. Post Cfg Actions: [] Drain Required: true"
    );
    assert_eq!(
        walk.message("UpdateExecuted"),
        "Updated the OS on disk as a part of the in progress phase"
    );

    let mcn = walk
        .step(&[("state", "Done"), ("currentImage", IMAGE_2)])
        .clone();
    walk.expect(&[("Updated", True)]);
    // W2's reset names the desired image: upstream compares it with the
    // image its stored status still holds, the one before the update.
    assert_eq!(
        walk.message("RebootedNode"),
        format!("Action during update to {IMAGE_2}: Node has rebooted")
    );
    assert_eq!(
        walk.message("Resumed"),
        format!(
            "Action during update to {IMAGE_2}: In desired config rendered-worker-a. Resumed normal operations."
        )
    );
    assert_eq!(
        walk.condition("UpdatePostActionComplete").reason,
        "NotYetOccurred"
    );
    assert_eq!(status(&mcn).config_version.desired, "rendered-worker-a");
    walk.derives_the_same_again();
}

/// Gate off, the same update: the OS update is the daemon's all the same,
/// but the MCN has no `configImage`, so resets name the config.
#[test]
fn an_image_only_update_without_the_gate_names_the_config() {
    let mut walk = image_only_requested(false);
    assert_eq!(
        status(walk.last.as_ref().unwrap_or_else(|| panic!("no MCN"))).config_image,
        None
    );
    walk.step(&[("state", "Working")]);
    walk.expect(&[("UpdatePrepared", True)]);
    walk.facts.node.unschedulable = true;
    walk.step(&[
        ("desiredDrain", "drain-rendered-worker-a"),
        ("lastAppliedDrain", "drain-rendered-worker-a"),
    ]);
    assert_eq!(
        walk.message("AppliedFilesAndOS"),
        "Applying files and new OS config to node. OS will  need an update. SSH Keys will not need an update"
    );
    walk.step(&[("post-config-action", "Rebooting")]);
    walk.step(&[("post-config-action", "")]);
    walk.facts.node.unschedulable = false;
    walk.step(&[
        ("desiredDrain", "uncordon-rendered-worker-a"),
        ("lastAppliedDrain", "uncordon-rendered-worker-a"),
    ]);
    assert_eq!(walk.condition("Uncordoned").status, True);
    walk.step(&[("state", "Done"), ("currentImage", IMAGE_2)]);
    walk.expect(&[("Updated", True)]);
    assert_eq!(
        walk.message("RebootedNode"),
        "Action during update to rendered-worker-a: Node has rebooted"
    );
}

/// On a single-node cluster an image-only update never changes the drain
/// annotations: the daemon skips the drain, and its uncordon request
/// names what was already applied, so the drain controller never writes
/// W20. After the reboot the node shows the reboot, never an uncordon.
#[test]
fn an_image_only_update_on_a_single_node_cluster_never_uncordons() {
    let mut walk = image_only_requested(true);
    walk.step(&[
        ("state", "Working"),
        ("controlPlaneTopology", "SingleReplica"),
    ]);
    walk.expect(&[("UpdatePrepared", True), ("UpdateExecuted", Unknown)]);
    assert_eq!(
        walk.message("Drained"),
        "Node Drain Not required for this update."
    );
    walk.step(&[("post-config-action", "Rebooting")]);
    walk.step(&[("post-config-action", "")]);
    let rebooted = [
        ("UpdatePrepared", True),
        ("UpdateExecuted", True),
        ("AppliedOSImage", True),
        ("RebootedNode", True),
    ];
    walk.expect(&rebooted);
    walk.step(&[("state", "Done"), ("currentImage", IMAGE_2)]);
    walk.expect(&[("Updated", True)]);
    assert_eq!(walk.condition("Uncordoned").reason, "NotYetOccurred");
    assert_eq!(
        walk.message("Resumed"),
        format!(
            "Action during update to {IMAGE_2}: In desired config rendered-worker-a. Resumed normal operations."
        )
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
    walk.facts.configs[1].spec =
        mco_mcn::Summary::read("{\"config\": {\"storage\": {\"files\": 3}}}").into();
    let mcn = walk.step(&[("state", "Working")]).clone();
    // W4, then the W16 deferred before it, which fails the update with the
    // same error and writes the desired config back: no W5 or W6.
    walk.expect(&[("UpdatePrepared", Unknown), ("NodeDegraded", True)]);
    let prepared = walk.message("UpdatePrepared");
    let (_, err) = prepared
        .split_once("Error calculating post config change actions: ")
        .unwrap_or_else(|| panic!("not W4: {prepared}"));
    assert_eq!(
        walk.message("NodeDegraded"),
        format!("Node worker-0 upgrade failure. {err}")
    );
    assert_eq!(status(&mcn).config_version.desired, "rendered-worker-b");

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
    // A Windows node gets a spec-only MCN outside any pool (as `syncMachineConfigNodes`).
    let Decision::Apply(windows) = derive(&walk.facts) else {
        panic!("a Windows node gets an MCN");
    };
    assert_eq!(
        (windows.pool.as_str(), windows.desired_config.as_str()),
        ("not-yet-set", "rendered-worker-a")
    );
    assert_eq!(windows.status, None);
    // A Linux node in no pool reports under the placeholder; Done is all
    // "Updated" needs then.
    walk.facts.node.labels.clear();
    let mcn = walk.step(&[]).clone();
    assert_eq!(mcn.pool, "not-yet-set");
    walk.expect(&[("Updated", True)]);
    // Joining a pool is a spec change: the generation moves on by two.
    walk.facts.node.labels = [("node-role.kubernetes.io/worker".to_string(), String::new())].into();
    let joined = walk.step(&[]).clone();
    assert_eq!(joined.pool, "worker");
    assert_eq!(
        status(&joined).observed_generation,
        status(&mcn).observed_generation + 1
    );
}

#[test]
fn a_fresh_node_gets_placeholders() {
    let mut walk = Walk::new("os-b", "key-a");
    walk.facts.node.annotations.clear();
    let mcn = walk.step(&[]).clone();
    assert_eq!(
        (
            mcn.desired_config.as_str(),
            status(&mcn).config_version.desired.as_str()
        ),
        ("not-yet-set", "not-yet-set")
    );
    assert_eq!(status(&mcn).config_version.current, None);
    assert_eq!(status(&mcn).observed_generation, 2);
    walk.expect(&[]);
}

#[test]
fn a_message_written_before_the_configs_arrived_is_completed() {
    let mut walk = requested("os-a", "key-b");
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
        "Update Compatible. Post Cfg Actions: [] Drain Required: false"
    );
}

/// Walks a rebootless update (no drain request, no `Rebooting`) to Done and
/// asserts that no step claims a cordon, drain or reboot; returns the
/// UpdatePostActionComplete message seen once the node resumed.
fn rebootless_walk(
    files_a: &[(&str, &str)],
    files_b: &[(&str, &str)],
    policies: DisruptionPolicies,
) -> String {
    let mut walk = Walk::between(
        spec("os-a", "key-a", files_a),
        spec("os-a", "key-a", files_b),
    );
    walk.facts.policies = policies;
    walk.step(&[]);
    walk.facts.pools[0].target_config = "rendered-worker-b".into();
    let b = "rendered-worker-b";
    let uncordon = format!("uncordon-{b}");
    let steps: [&[(&str, &str)]; 5] = [
        &[("desiredConfig", b)],
        &[("state", "Working")],
        &[("desiredDrain", &uncordon)],
        &[("lastAppliedDrain", &uncordon)],
        &[("state", "Done"), ("currentConfig", b)],
    ];
    let mut post_action = String::new();
    for (index, changes) in steps.iter().enumerate() {
        walk.step(changes);
        for never in ["Drained", "Cordoned", "RebootedNode"] {
            assert_ne!(
                walk.condition(never).status,
                True,
                "{never} at step {index}"
            );
        }
        if index == 1 {
            assert_eq!(
                walk.message("UpdatePrepared"),
                "Update Compatible. Post Cfg Actions: [] Drain Required: false"
            );
            assert_eq!(
                walk.message("Drained"),
                "Node Drain Not required for this update."
            );
        }
        if index == 2 {
            post_action = walk.message("UpdatePostActionComplete");
            assert_eq!(
                walk.message("AppliedFilesAndOS"),
                "Applied files and new OS config to node. OS did not need an update. SSH Keys did  need an update"
            );
        }
        if index == 3 {
            assert_eq!(
                walk.message("Uncordoned"),
                "UnCordoned node. The node is reporting Unschedulable = false"
            );
        }
    }
    walk.expect(&[("Updated", True)]);
    post_action
}

const CA: &str = "/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt";

#[test]
fn rebootless_updates_never_claim_a_drain_or_a_reboot() {
    let defaults = DisruptionPolicies::defaults;
    // Restart writes no post-action condition.
    assert_eq!(
        rebootless_walk(&[(CA, "1")], &[(CA, "2")], defaults()),
        "This node has not yet entered the UpdatePostActionComplete phase"
    );
    assert_eq!(
        rebootless_walk(
            &[],
            &[("/etc/containers/registries.d/x.yaml", "1")],
            defaults()
        ),
        "Node has reloaded service crio.service"
    );
    assert_eq!(
        rebootless_walk(&[], &[("/etc/nmstate/openshift/eth0.yml", "1")], defaults()),
        "Changes do not require a reboot"
    );
    // An appended search registry is a safe registries.conf change.
    let conf = "/etc/containers/registries.conf";
    assert_eq!(
        rebootless_walk(
            &[(conf, "unqualified-search-registries%20%3D%20%5B%22a%22%5D")],
            &[(
                conf,
                "unqualified-search-registries%20%3D%20%5B%22a%22%2C%22b%22%5D"
            )],
            defaults()
        ),
        "Node has reloaded service crio"
    );
    // An admin policy on a file of their own; the last writing action wins.
    let mut admin = defaults();
    admin.files.push(mco_mcn::FilePolicy {
        path: "/etc/app".into(),
        actions: vec![
            DisruptionAction::Restart("app.service".into()),
            DisruptionAction::DaemonReload,
            DisruptionAction::Restart("other.service".into()),
        ],
    });
    assert_eq!(
        rebootless_walk(&[], &[("/etc/app/conf", "1")], admin),
        "Node has reloaded service daemon-reload"
    );
}

#[test]
fn an_unsafe_registries_change_drains_without_a_reboot() {
    let conf = "/etc/containers/registries.conf";
    let mut walk = Walk::between(
        spec(
            "os-a",
            "key-a",
            &[(conf, "unqualified-search-registries%20%3D%20%5B%22a%22%5D")],
        ),
        spec("os-a", "key-a", &[(conf, "")]),
    );
    walk.step(&[]);
    walk.facts.pools[0].target_config = "rendered-worker-b".into();
    walk.step(&[("desiredConfig", "rendered-worker-b")]);
    walk.step(&[("state", "Working")]);
    assert_eq!(
        walk.message("UpdatePrepared"),
        "Update Compatible. Post Cfg Actions: [] Drain Required: true"
    );
    walk.facts.node.unschedulable = true;
    walk.step(&[
        ("desiredDrain", "drain-rendered-worker-b"),
        ("lastAppliedDrain", "drain-rendered-worker-b"),
    ]);
    walk.step(&[("desiredDrain", "uncordon-rendered-worker-b")]);
    walk.expect(&[
        ("UpdatePrepared", True),
        ("UpdateExecuted", True),
        ("Drained", True),
        ("Cordoned", True),
        ("AppliedFilesAndOS", True),
        ("UpdatePostActionComplete", True),
        ("Resumed", True),
    ]);
    assert_eq!(
        walk.message("UpdatePostActionComplete"),
        "Node has reloaded service crio"
    );
}

#[test]
fn observed_generation_follows_the_stored_mcn_and_never_falls() {
    let mut walk = Walk::new("os-b", "key-a");
    // Another writer's MCN: generation 7, observedGeneration 12.
    let stored = |generation, observed| StoredNode {
        generation,
        observed_generation: observed,
        pool: "worker".into(),
        desired_config: "rendered-worker-a".into(),
        desired_image: None,
        current_config: None,
    };
    let observed = |facts: &Facts| match derive(facts) {
        Decision::Apply(mcn) => status(&mcn).observed_generation,
        other => panic!("{other:?}"),
    };
    set(&mut walk.facts.node.annotations, &[]);
    walk.facts.stored = Some(stored(Some(7), Some(12)));
    assert_eq!(observed(&walk.facts), 12);
    walk.facts.stored = Some(stored(Some(7), Some(3)));
    assert_eq!(observed(&walk.facts), 8);
    // No generation on the stored object: observedGeneration − 1 stands in.
    walk.facts.stored = Some(stored(None, Some(5)));
    assert_eq!(observed(&walk.facts), 5);
    walk.facts.stored = Some(stored(None, None));
    assert_eq!(observed(&walk.facts), 2);
    // A new desired config is a spec change.
    set(
        &mut walk.facts.node.annotations,
        &[("desiredConfig", "rendered-worker-b")],
    );
    walk.facts.stored = Some(stored(Some(7), Some(8)));
    assert_eq!(observed(&walk.facts), 9);
    walk.facts.stored = Some(stored(Some(i64::MAX), Some(i64::MAX)));
    assert_eq!(observed(&walk.facts), i64::MAX);
}
