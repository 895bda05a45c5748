//! Where a node is in its update, read from the annotations the Machine
//! Config Daemon and the drain controller leave on it, and the condition
//! writes that upstream makes on the way there.

use crate::conditions::*;
use crate::disruption;
use crate::reconcile;
use crate::validate::QUOTE;
use crate::{
    ANNOTATION_PREFIX,
    ConditionStatus::{self, False, True, Unknown},
    ConfigImage, ConfigVersion, DisruptionAction, Facts, MachineConfigNode, Node, NodeStatus, Pool,
};
use mco_k8s_rules::{bounded, is_dns1123_subdomain, is_image_digest, quote};

/// Upstream keeps at most this much of a failure in the `reason` annotation
/// (bytes, like every bound here).
const MAX_REASON: usize = 2000;

/// The daemon-written annotations the derivation reads, already validated.
pub struct NodeAnnotations<'a> {
    node: &'a str,
    current: &'a str,
    desired: &'a str,
    state: &'a str,
    reason: String,
    desired_drain: &'a str,
    last_applied_drain: &'a str,
    post_config_action: &'a str,
    current_image: Option<&'a str>,
    desired_image: Option<&'a str>,
    single_node: bool,
}

impl<'a> NodeAnnotations<'a> {
    /// Fails on a config or image name the MCN CRD would reject, naming the
    /// annotation, so a damaged node gets an error instead of a failed apply.
    pub fn read(node: &'a Node) -> Result<Self, String> {
        let get = |key: &str| {
            node.annotations
                .get(&format!("{ANNOTATION_PREFIX}{key}"))
                .map(String::as_str)
        };
        let config = |key: &str| -> Result<&'a str, String> {
            let value = node
                .annotations
                .get(&format!("{ANNOTATION_PREFIX}{key}"))
                .map_or("", String::as_str);
            if value.is_empty() || is_dns1123_subdomain(value) {
                Ok(value)
            } else {
                Err(invalid(
                    node,
                    key,
                    value,
                    "is not a valid rendered config name",
                ))
            }
        };
        let image = |key: &str| -> Result<Option<&'a str>, String> {
            match node.annotations.get(&format!("{ANNOTATION_PREFIX}{key}")) {
                Some(value) if !value.is_empty() && !is_image_digest(value) => Err(invalid(
                    node,
                    key,
                    value,
                    "is not an image pinned by sha256 digest",
                )),
                Some(value) if !value.is_empty() => Ok(Some(value.as_str())),
                _ => Ok(None),
            }
        };
        let reason = get("reason").unwrap_or_default();
        Ok(NodeAnnotations {
            node: &node.name,
            current: config("currentConfig")?,
            desired: config("desiredConfig")?,
            state: get("state").unwrap_or_default(),
            reason: bounded(reason.to_owned(), MAX_REASON),
            desired_drain: get("desiredDrain").unwrap_or_default(),
            last_applied_drain: get("lastAppliedDrain").unwrap_or_default(),
            post_config_action: get("post-config-action").unwrap_or_default(),
            current_image: image("currentImage")?,
            desired_image: image("desiredImage")?,
            single_node: get("controlPlaneTopology") == Some("SingleReplica"),
        })
    }

    fn drain_request(&self) -> String {
        format!("drain-{}", self.desired)
    }

    fn uncordon_request(&self) -> String {
        format!("uncordon-{}", self.desired)
    }

    fn rebooting(&self) -> bool {
        self.post_config_action == "Rebooting"
    }

    /// `spec.configVersion.desired`: the annotation or the placeholder.
    pub fn desired_or_placeholder(&self) -> &'a str {
        if self.desired.is_empty() {
            NOT_YET_SET
        } else {
            self.desired
        }
    }

    pub fn desired_image(&self) -> Option<&'a str> {
        self.desired_image
    }

    /// The node's OS image changes (image mode, or leaving it).
    fn image_changes(&self) -> bool {
        self.current_image != self.desired_image
    }

    /// The node is not on its desired config or image.
    fn update_pending(&self) -> bool {
        !self.desired.is_empty() && (self.current != self.desired || self.image_changes())
    }

    /// Only the OS image changes: the daemon runs an update to the config
    /// the node is on, so its drain requests carry the name the last
    /// update's did.
    fn image_only(&self) -> bool {
        self.current == self.desired && self.image_changes()
    }

    /// MCO's `IsNodeDone`: on its desired config and image, state Done.
    fn done(&self) -> bool {
        !self.desired.is_empty() && !self.update_pending() && self.state == "Done"
    }
}

fn invalid(node: &Node, key: &str, value: &str, problem: &str) -> String {
    format!(
        "node {}: annotation {ANNOTATION_PREFIX}{key} {problem}: {}",
        node.name,
        quote(value, QUOTE)
    )
}

/// The phases of one update, in the order the daemon goes through them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    /// A new desired config was set; the daemon has not started.
    Requested,
    /// The daemon validated the update (state Working).
    Preparing,
    /// Cordon and drain requested, not finished.
    Draining,
    /// Drained; files and OS being written.
    ApplyingFiles,
    /// Files and OS written; rebooting.
    Rebooting,
    /// Back from the reboot, not yet asking to be uncordoned.
    Rebooted,
    /// In the desired config, asking to be uncordoned.
    Resuming,
    /// Uncordoned; the daemon is about to mark the node Done.
    Uncordoned,
    /// Done on the desired config: the update that was in flight finished.
    Completed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Nothing to report beyond what is stored (no desired config yet, or a
    /// finished node whose pool already targets something newer).
    Idle,
    /// The node is up to date.
    Done,
    /// State `Degraded` or `Unreconcilable`, with the phase of the update
    /// under way, if any. The daemon does not set `Working` again on a
    /// failed node (MCO `pkg/daemon/update.go`, `update`), so a retry that
    /// succeeds runs under this state and its progress shows as on a
    /// working node.
    Failed(Option<Phase>),
    Updating(Phase),
}

/// The stage the annotations show. The checks run in order and the first
/// that holds wins.
fn stage(a: &NodeAnnotations, pool_target: &str, previous: &ConditionSet) -> Stage {
    if a.done() && (pool_target.is_empty() || pool_target == a.desired) {
        return Stage::Done;
    }
    let update = a.update_pending();
    match a.state {
        // Drift on the current config is no update; an unreconcilable
        // update never gets past its validation.
        "Degraded" if update => Stage::Failed(phase(a, previous)),
        "Unreconcilable" if update => Stage::Failed(Some(Phase::Requested)),
        "Degraded" | "Unreconcilable" => Stage::Failed(None),
        _ if a.desired.is_empty() => Stage::Idle,
        _ => phase(a, previous).map_or(Stage::Idle, Stage::Updating),
    }
}

/// The phase of the update the annotations show, if one is under way.
fn phase(a: &NodeAnnotations, previous: &ConditionSet) -> Option<Phase> {
    let drain = a.drain_request();
    let dd = a.desired_drain;
    let drained = !dd.is_empty() && a.last_applied_drain == dd;
    let uncordon = dd == a.uncordon_request() && !(drained && leftover_uncordon(a, previous));
    let working = matches!(a.state, "Working" | "Degraded");
    // W17 follows a reboot whatever the drain annotations say: a
    // single-node cluster reboots without ever asking for a drain.
    let rebooted = previous.has_started(REBOOTED_NODE);
    let phase = if a.update_pending() && a.state == "Done" && dd != drain {
        Phase::Requested
    } else if working && !a.rebooting() && dd != drain && !uncordon {
        if rebooted {
            Phase::Rebooted
        } else {
            Phase::Preparing
        }
    } else if dd == drain && !drained {
        Phase::Draining
    } else if dd == drain && !a.rebooting() {
        if rebooted {
            Phase::Rebooted
        } else {
            Phase::ApplyingFiles
        }
    } else if a.rebooting() {
        Phase::Rebooting
    } else if uncordon && !drained {
        Phase::Resuming
    } else if uncordon && a.state != "Done" {
        Phase::Uncordoned
    } else {
        return None;
    };
    Some(phase)
}

/// Whether an applied `uncordon-<config>` request may be the last
/// update's. An image-only update asks for `drain-<config>` and then
/// `uncordon-<config>` (MCO `pkg/daemon/drain.go` `performDrain`,
/// `pkg/daemon/daemon.go` `completeUpdate`), the names the last update
/// left, so the request is this update's only once this update's drain or
/// reboot was seen. A single-node cluster never drains: there the request
/// never changes and the drain controller never uncordons.
fn leftover_uncordon(a: &NodeAnnotations, previous: &ConditionSet) -> bool {
    let drained_or_rebooted = [CORDONED, DRAINED, REBOOTED_NODE]
        .iter()
        .any(|type_| previous.has_started(type_));
    a.image_only() && (a.single_node || !drained_or_rebooted)
}

/// What is known about the pending update from the rendered configs and
/// the disruption policies.
enum Plan {
    Known(disruption::Plan),
    /// The configs were not given (or one is missing from the cluster).
    Unknown,
    /// A config could not be read; upstream reports this on UpdatePrepared.
    Broken(String),
    /// The daemon's reconcilability check fails (the error it reports):
    /// the update stops before it is prepared.
    Unreconcilable(String),
}

/// The config the update runs from. Once the node is on its desired
/// config the annotations no longer say where it came from; the stored
/// status still names the config it was on (`status.configVersion.current`).
/// Empty when neither tells.
fn update_source<'a>(facts: &'a Facts, a: &NodeAnnotations<'a>) -> &'a str {
    if a.current == a.desired && !a.image_changes() {
        let stored = facts
            .stored
            .as_ref()
            .and_then(|s| s.current_config.as_deref());
        stored.unwrap_or_default()
    } else {
        a.current
    }
}

impl Plan {
    /// The plan of the update from `from` to the desired config, so the
    /// plan of an update that just finished stays known. Without both
    /// configs, the plan is unknown and only what was observed on the way
    /// counts. With `validating` (the daemon is at its reconcilability
    /// check), an update the check refuses is `Unreconcilable`, as the
    /// daemon runs the check before it plans.
    fn for_update(facts: &Facts, a: &NodeAnnotations, from: &str, validating: bool) -> Plan {
        if from.is_empty() || a.desired.is_empty() {
            return Plan::Unknown;
        }
        if from == a.desired {
            // An update that keeps the config changes the OS image (or is
            // forced, which reboots too): no config to read.
            return Plan::Known(disruption::Plan::os_image_only());
        }
        let find = |name: &str| facts.configs.iter().find(|c| c.name == name);
        let (Some(current), Some(desired)) = (find(from), find(a.desired)) else {
            return Plan::Unknown;
        };
        if validating && let Err(err) = reconcile::check(current, desired) {
            return Plan::Unreconcilable(err);
        }
        match disruption::plan(
            &current.spec,
            &desired.spec,
            &facts.policies,
            a.image_changes(),
        ) {
            Ok(plan) => Plan::Known(plan),
            Err(err) => Plan::Broken(err),
        }
    }

    fn known(&self) -> Option<&disruption::Plan> {
        match self {
            Plan::Known(plan) => Some(plan),
            _ => None,
        }
    }
}

/// Builds the MCN for a node in `pool`; a node in no pool reports under
/// the placeholder, and only being Done counts as up to date.
pub fn report(facts: &Facts, pool: Option<&Pool>, a: &NodeAnnotations) -> MachineConfigNode {
    let image_mode = facts.image_mode_status_reporting();
    let mut set = ConditionSet::from_previous(&facts.previous, image_mode);
    let target = pool.map_or("", |p| p.target_config.as_str());
    let stage = stage(a, target, &set);
    let from = update_source(facts, a);
    let validating = matches!(
        stage,
        Stage::Updating(Phase::Preparing) | Stage::Failed(Some(Phase::Preparing))
    );
    let plan = Plan::for_update(facts, a, from, validating);
    {
        let mut update = Update::new(
            a,
            from,
            &plan,
            facts.node.unschedulable,
            image_mode,
            &mut set,
        );
        match stage {
            Stage::Idle => {}
            Stage::Done => update.finish(),
            Stage::Failed(phase) => update.failed(phase),
            Stage::Updating(phase) => update.replay(phase),
        }
    }
    let desired = a.desired_or_placeholder();
    // Only the gate's CRD has `configImage` (a Default cluster's refuses it).
    let config_image = (image_mode && (a.current_image.is_some() || a.desired_image.is_some()))
        .then(|| ConfigImage {
            current_image: a.current_image.map(str::to_string),
            desired_image: a.desired_image.map(str::to_string),
        });
    let mut mcn = MachineConfigNode {
        pool: pool.map_or(NOT_YET_SET, |p| p.name.as_str()).to_string(),
        desired_config: desired.to_string(),
        desired_image: a.desired_image.filter(|_| image_mode).map(str::to_string),
        status: None,
    };
    mcn.status = Some(NodeStatus {
        observed_generation: observed_generation(facts, &mcn),
        config_version: ConfigVersion {
            current: (!a.current.is_empty()).then(|| a.current.to_string()),
            // W3 and W4 set the placeholder, but the W16 deferred before
            // them always follows and writes the annotation back.
            desired: desired.to_string(),
        },
        config_image,
        conditions: set.into_vec(),
    });
    mcn
}

/// As upstream's `pkg/upgrademonitor/upgrade_monitor.go` writes it
/// (`WithObservedGeneration(generation + 1)`): the generation the object
/// holds once the host has applied `mcn`'s spec, plus one, and never below
/// the stored value (the CRD's rule: it must not decrease).
fn observed_generation(facts: &Facts, mcn: &MachineConfigNode) -> i64 {
    let Some(stored) = &facts.stored else {
        // Created with our spec: generation 1.
        return 2;
    };
    let previous = stored
        .generation
        .filter(|g| *g >= 1)
        .or_else(|| {
            stored
                .observed_generation
                .map(|o| o.saturating_sub(1))
                .filter(|g| *g >= 1)
        })
        .unwrap_or(1);
    let spec_changes = stored.pool != mcn.pool
        || stored.desired_config != mcn.desired_config
        || stored.desired_image.as_deref().unwrap_or_default()
            != mcn.desired_image.as_deref().unwrap_or_default();
    let generation = previous.saturating_add(i64::from(spec_changes));
    generation
        .saturating_add(1)
        .max(stored.observed_generation.unwrap_or(0))
}

const NO_DRAIN: &str = "Node Drain Not required for this update.";

/// Replays upstream's condition writes for one update onto the stored set.
struct Update<'a> {
    a: &'a NodeAnnotations<'a>,
    /// The config the update runs from (see [`update_source`]).
    from: &'a str,
    plan: &'a Plan,
    unschedulable: bool,
    /// Gate `ImageModeStatusReporting`: the files and the OS are reported
    /// apart, and resets name the image the MCN holds.
    image_mode: bool,
    set: &'a mut ConditionSet,
    /// Whether this update drains the node, from what was seen, planned
    /// or (plan unknown) assumed: decides W6.
    drains: bool,
    /// Whether a drain is known to happen: seen, or planned on a node that
    /// is not single-node. Only this may claim `Cordoned`/`Drained` True.
    drain_known: bool,
    /// Whether this update reboots the node, from what was seen or planned.
    reboots: bool,
    /// Whether the drain controller uncordons at the end (W20). Not on a
    /// single-node cluster when the update keeps its config: the uncordon
    /// request names what was already applied, so the controller has
    /// nothing to do (`syncNode` returns when desired and applied match).
    uncordons: bool,
}

impl<'a> Update<'a> {
    fn new(
        a: &'a NodeAnnotations<'a>,
        from: &'a str,
        plan: &'a Plan,
        unschedulable: bool,
        image_mode: bool,
        set: &'a mut ConditionSet,
    ) -> Self {
        let planned = plan.known();
        let drain_seen = a.desired_drain == a.drain_request()
            || set.has_started(DRAINED)
            || set.has_started(CORDONED);
        let no_drain_seen = set.get(DRAINED).is_some_and(|c| c.message == NO_DRAIN);
        let drains =
            !a.single_node && (drain_seen || (!no_drain_seen && planned.is_none_or(|p| p.drain)));
        let drain_known = drain_seen || (!a.single_node && planned.is_some_and(|p| p.drain));
        let reboot_seen = a.rebooting() || set.has_started(REBOOTED_NODE);
        let reboots = reboot_seen || planned.is_some_and(disruption::Plan::reboots);
        let uncordons = !(a.single_node && from == a.desired);
        Update {
            a,
            from,
            plan,
            unschedulable,
            image_mode,
            set,
            drains,
            drain_known,
            reboots,
            uncordons,
        }
    }

    /// Where `Updated` resets point (`generateAndApplyMachineConfigNodes`):
    /// the desired image when `image_changes`, else the desired config.
    /// Upstream compares the MCN's own `configImage`, which only the gate
    /// writes: without it, the config.
    fn reset_target(&self, image_changes: bool) -> &str {
        if self.image_mode && image_changes {
            self.a.desired_image.unwrap_or("disable image mode")
        } else {
            self.a.desired
        }
    }

    fn needs_update_message(&self) -> String {
        format!("Node {} needs an update", self.a.node)
    }

    /// W1: the daemon saw the new config. Only the first sighting resets;
    /// later evaluations of the same cycle keep its progress.
    fn begin(&mut self) {
        let message = self.needs_update_message();
        if !self.set.has_value(UPDATED, False, &message) {
            let target = self.reset_target(self.a.image_changes()).to_string();
            self.set.reset(&target);
            self.set.put(UPDATED, False, UPDATED, message);
        }
    }

    /// Replays the cycle up to `phase`.
    fn replay(&mut self, phase: Phase) {
        use Phase::*;
        self.begin();
        if phase == Preparing && self.refused() {
            return;
        }
        if phase >= Preparing {
            self.prepared();
            if !self.drains {
                self.no_drain();
            }
        }
        if self.drains {
            // The drain controller cordons first and writes W7 and W8 only
            // then (`drainNode`): a request not yet cordoned shows nothing.
            if phase == Draining && self.unschedulable {
                self.cordoned();
                self.draining();
            }
            if phase >= ApplyingFiles && self.drain_known {
                self.cordoned();
                self.drained();
            }
        }
        if phase == ApplyingFiles {
            self.applying_files();
        }
        if phase >= Rebooting {
            self.applied_files();
        }
        if self.reboots {
            if phase >= Rebooting {
                self.reboot_requested();
                self.succeeded();
            }
            if phase >= Rebooted {
                self.rebooted();
            }
        } else if phase >= Resuming {
            self.post_action_done();
        }
        if phase >= Resuming {
            self.resumed();
        }
        if phase >= Uncordoned && self.uncordons {
            self.uncordoned();
        }
    }

    /// The daemon's checks before it prepares the update (MCO
    /// `pkg/daemon/update.go`, `update`): W3 when the configs are not
    /// reconcilable, W4 when the post-config actions cannot be computed,
    /// then the W16 deferred before both, with the error `update` returns.
    /// True when the update stops there.
    fn refused(&mut self) -> bool {
        let err = match self.plan {
            Plan::Unreconcilable(err) => {
                self.not_compatible(err);
                format!(
                    "can't reconcile config {} with {}: {err}",
                    self.a.current, self.a.desired
                )
            }
            Plan::Broken(err) => {
                self.not_available(err);
                err.clone()
            }
            Plan::Known(_) | Plan::Unknown => return false,
        };
        self.failure(&err);
        true
    }

    /// The node is Done on its desired config (W2). If the stored status
    /// shows the update that got it there was still running, finish that
    /// update first so the final messages match upstream's.
    fn finish(&mut self) {
        let done = format!("Node {} Updated", self.a.node);
        if self.set.has_value(UPDATED, True, &done) {
            return;
        }
        if self
            .set
            .has_value(UPDATED, False, &self.needs_update_message())
        {
            self.replay(Phase::Completed);
            if self.reboots {
                // W19: the daemon's first sync after boot rewrites
                // Resumed, naming the config of the Node it read before
                // SetDone: the one the update came from.
                let from = if self.from.is_empty() {
                    self.a.current
                } else {
                    self.from
                };
                self.set.put(
                    RESUMED,
                    True,
                    RESUMED,
                    format!("In desired config {from}. Resumed normal operations."),
                );
            } else {
                self.succeeded();
            }
        }
        // Upstream's W2 compares the desired image with the image its
        // stored status still holds: the node's image until `SetDone`,
        // as every earlier write read the Node before it. Once either side
        // has an image the OS is the image (`newMachineConfigDiff`), so an
        // update that applied a new OS on a node with a desired image
        // changed the image.
        let image_changed =
            self.a.desired_image.is_some() && self.set.has_started(APPLIED_OS_IMAGE);
        let target = self.reset_target(image_changed).to_string();
        self.set.reset(&target);
        self.set.put(UPDATED, True, UPDATED, done);
    }

    /// A failed node (state Degraded or Unreconcilable): the progress of
    /// the update it retries, if any, then W16, and for Unreconcilable W3
    /// with the error the daemon reported (its `reason` without the
    /// `can't reconcile …` wrapping). Degradation is not a reset. A retry
    /// that rebooted has reported success (W16 False as `update` returned)
    /// although the state stays until the node is marked Done.
    fn failed(&mut self, phase: Option<Phase>) {
        match phase {
            Some(phase) => {
                self.replay(phase);
            }
            None if self.set.status(UPDATED) == True => self.set.put(
                UPDATED,
                False,
                UPDATED,
                "This node is not updated, sensed disruption via a manual update.".to_string(),
            ),
            None => {}
        }
        let reason = self.a.reason.as_str();
        if self.a.state == "Unreconcilable" {
            let wrapping = format!(
                "can't reconcile config {} with {}: ",
                self.a.current, self.a.desired
            );
            self.not_compatible(reason.strip_prefix(&wrapping).unwrap_or(reason));
        }
        let rebooted = self.reboots && phase.is_some_and(|p| p >= Phase::Rebooting);
        if !rebooted {
            self.failure(reason);
        }
    }

    /// W3.
    fn not_compatible(&mut self, err: &str) {
        self.validation_failed(&format!("not compatible. Err: {err}"));
    }

    /// W4.
    fn not_available(&mut self, err: &str) {
        self.validation_failed(&format!(
            "not available for update. Error calculating post config change actions: {err}"
        ));
    }

    /// W3 and W4: the two configs `are <problem>`.
    fn validation_failed(&mut self, problem: &str) {
        let message = format!(
            "Update Failed compatibility validation. MachineConfigs {} and {} are {problem}",
            self.a.current, self.a.desired
        );
        self.set
            .advance(UPDATE_PREPARED, Unknown, UPDATE_PREPARED, message);
    }

    /// W16 on failure.
    fn failure(&mut self, err: &str) {
        let message = format!("Node {} upgrade failure. {err}", self.a.node);
        self.set.put(NODE_DEGRADED, True, NODE_DEGRADED, message);
    }

    /// W5, or W4 when a rendered config cannot be read. After first boot
    /// the daemon's legacy action list is always empty (`[]`); the drain
    /// flag is the plan's, or true when the node was asked to drain or the
    /// plan is unknown (upstream's fallback, a reboot, drains).
    fn prepared(&mut self) {
        let drain_requested = self.a.desired_drain == self.a.drain_request();
        let drain = match self.plan {
            Plan::Known(plan) => plan.drain || drain_requested,
            // The check only runs while the daemon validates, where the
            // replay stops before this.
            Plan::Unknown | Plan::Unreconcilable(_) => true,
            Plan::Broken(err) => {
                self.not_available(err);
                return;
            }
        };
        let message = format!("Update Compatible. Post Cfg Actions: [] Drain Required: {drain}");
        // What the rendered configs say beats what was written without
        // them; otherwise the phase stays as written.
        if matches!(self.plan, Plan::Known(_)) {
            self.set
                .put(UPDATE_PREPARED, True, UPDATE_PREPARED, message);
        } else {
            self.set
                .advance(UPDATE_PREPARED, True, UPDATE_PREPARED, message);
        }
    }

    /// W6.
    fn no_drain(&mut self) {
        self.set.advance_pair(
            (UPDATE_EXECUTED, Unknown, NO_DRAIN.to_string()),
            (DRAINED, False, NO_DRAIN.to_string()),
        );
    }

    /// W7. The daemon prints the node as it read it before cordoning.
    fn cordoned(&mut self) {
        self.set.advance_pair(
            (
                UPDATE_EXECUTED,
                Unknown,
                "Cordoned Node as part of update executed phase".to_string(),
            ),
            (
                CORDONED,
                True,
                "Cordoned node. The node is reporting Unschedulable = false".to_string(),
            ),
        );
    }

    /// W8.
    fn draining(&mut self) {
        let drain = self.a.drain_request();
        self.set.advance_pair(
            (UPDATE_EXECUTED, Unknown, "Draining Node as part of update executed phase".to_string()),
            (
                DRAINED,
                Unknown,
                format!(
                    "Draining node. The drain will not be complete until desired drainer {drain} matches current drainer {}",
                    self.a.last_applied_drain
                ),
            ),
        );
    }

    /// W9.
    fn drained(&mut self) {
        let drain = self.a.drain_request();
        self.set.advance_pair(
            (UPDATE_EXECUTED, Unknown, "Drained Node as part of update executed phase".to_string()),
            (
                DRAINED,
                True,
                format!("Drained node. The drain is complete as the desired drainer matches current drainer: {drain}"),
            ),
        );
    }

    fn os_and_ssh(&self) -> (bool, bool) {
        match self.plan {
            Plan::Known(plan) => (plan.os, plan.files_or_passwd),
            _ => (true, false),
        }
    }

    /// W10; with the gate, W10g: a write for the files and one for the OS,
    /// each only if that part changes.
    fn applying_files(&mut self) {
        let (os, ssh) = self.os_and_ssh();
        if self.image_mode {
            self.files_and_os_apart(
                Unknown,
                (
                    ssh,
                    "Updating the Files on disk as a part of the in progress phase",
                    "Applying files to node.",
                ),
                (
                    os,
                    "Updating the OS on disk as a part of the in progress phase",
                    "Applying new OS config to node.",
                ),
            );
            return;
        }
        self.set.advance_pair(
            (
                UPDATE_EXECUTED,
                Unknown,
                "Updating the Files and OS on disk as a part of the in progress phase".to_string(),
            ),
            (
                APPLIED_FILES_AND_OS,
                Unknown,
                format!(
                    "Applying files and new OS config to node. OS will {} need an update. SSH Keys will {} need an update",
                    not(os),
                    not(ssh)
                ),
            ),
        );
    }

    /// W11; with the gate, W11g.
    fn applied_files(&mut self) {
        let (os, ssh) = self.os_and_ssh();
        if self.image_mode {
            self.files_and_os_apart(
                True,
                (
                    ssh,
                    "Updated the Files on disk as a part of the in progress phase",
                    "Applied files. SSH Keys did need an update",
                ),
                (
                    os,
                    "Updated the OS on disk as a part of the in progress phase",
                    "Applied new OS config to node.",
                ),
            );
            return;
        }
        self.set.advance_pair(
            (
                UPDATE_EXECUTED,
                True,
                "Updated the Files and OS on disk as a part of the in progress phase".to_string(),
            ),
            (
                APPLIED_FILES_AND_OS,
                True,
                format!(
                    "Applied files and new OS config to node. OS did {} need an update. SSH Keys did {} need an update",
                    not(os),
                    not(ssh)
                ),
            ),
        );
    }

    /// The gate's writes (MCO `pkg/daemon/update.go`, `update`): for each
    /// part that changes (`files`, then `os`, each `(changes, parent
    /// message, child message)`), the part's own condition, and
    /// `UpdateExecuted` with the part's type as reason. Upstream writes the
    /// parts one after the other, so the parent ends with the last one.
    fn files_and_os_apart(
        &mut self,
        status: ConditionStatus,
        files: (bool, &str, &str),
        os: (bool, &str, &str),
    ) {
        let parts = [(APPLIED_FILES, files), (APPLIED_OS_IMAGE, os)];
        let mut last = None;
        for (child, (changes, parent_message, child_message)) in parts {
            if changes {
                let reason = format!("{UPDATE_EXECUTED}{child}");
                self.set
                    .advance(child, status, &reason, child_message.to_string());
                last = Some((child, parent_message));
            }
        }
        if let Some((child, parent_message)) = last {
            self.set
                .advance(UPDATE_EXECUTED, status, child, parent_message.to_string());
        }
    }

    /// W13.
    fn reboot_requested(&mut self) {
        self.set.advance(
            REBOOTED_NODE,
            Unknown,
            REBOOTED_NODE,
            "Upgrade requires a reboot.".to_string(),
        );
    }

    /// W17.
    fn rebooted(&mut self) {
        self.set.advance(
            REBOOTED_NODE,
            True,
            REBOOTED_NODE,
            "Node has rebooted".to_string(),
        );
    }

    /// W14 / W15: the rebootless post-config actions ran, in order; the
    /// last one that writes wins. Restart and Drain write nothing, so a
    /// plan of only those leaves the phase as it was.
    fn post_action_done(&mut self) {
        let none = (
            String::from("None"),
            "Changes do not require a reboot".to_string(),
        );
        let last = match self.plan {
            Plan::Known(plan) => plan
                .actions
                .iter()
                .filter_map(post_action_write)
                .next_back(),
            _ => Some(none),
        };
        if let Some((reason, message)) = last {
            self.set
                .advance(UPDATE_POST_ACTION_COMPLETE, True, &reason, message);
        }
    }

    /// W16 on success.
    fn succeeded(&mut self) {
        let message = format!("Node {} upgrade succeeded", self.a.node);
        self.set.put(NODE_DEGRADED, False, NODE_DEGRADED, message);
    }

    /// W18.
    fn resumed(&mut self) {
        let message = format!(
            "In desired config {}. Resumed normal operations. Applying proper annotations.",
            self.a.desired
        );
        self.set.advance(RESUMED, True, RESUMED, message);
    }

    /// W20. The drain controller prints the node as read before
    /// uncordoning: cordoned only if this cycle cordoned it.
    fn uncordoned(&mut self) {
        let cordoned = self.set.status(CORDONED) == True;
        self.set.advance_pair(
            (
                UPDATE_COMPLETE,
                True,
                "Uncordoned Node as part of completing upgrade phase".to_string(),
            ),
            (
                UNCORDONED,
                True,
                format!("UnCordoned node. The node is reporting Unschedulable = {cordoned}"),
            ),
        );
    }
}

/// Upstream prints `"OS did %s need"` with `not` or nothing, so a change
/// leaves two spaces.
fn not(changes: bool) -> &'static str {
    if changes { "" } else { "not" }
}

/// The condition write of one post-config action, if it makes one.
fn post_action_write(action: &DisruptionAction) -> Option<(String, String)> {
    let reloaded = |service: &str| {
        Some((
            UPDATE_POST_ACTION_COMPLETE.to_string(),
            format!("Node has reloaded service {service}"),
        ))
    };
    match action {
        DisruptionAction::None => Some((
            "None".to_string(),
            "Changes do not require a reboot".to_string(),
        )),
        DisruptionAction::Reload(service) => reloaded(service),
        DisruptionAction::Special => reloaded("crio"),
        DisruptionAction::DaemonReload => reloaded("daemon-reload"),
        DisruptionAction::Restart(_) | DisruptionAction::Drain | DisruptionAction::Reboot => None,
    }
}
