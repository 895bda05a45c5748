//! Where a node is in its update, read back from its MachineConfigNode's
//! conditions. Shared by `mco-host status` (the terminal view) and the
//! controller's `mco_node_phase_seconds` gauge, so both name a phase the
//! same way.
//!
//! The conditions follow upstream's upgrade monitor
//! (`pkg/upgrademonitor/upgrade_monitor.go`, and the MachineConfigNode
//! enhancement's workflow): within one update cycle a phase's
//! condition goes False (not started) → Unknown (in progress, or errored)
//! → True (done), and `Updated` flips to False when the cycle starts and to
//! True when it ends (resetting the others to False). So the phase is the
//! latest step whose condition is Unknown; if none is, the node sits
//! between steps and waits for the one after the latest True step.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

use super::crd::MachineConfigNode;

/// A node's place in its update. Bounded set: the gauge's `phase` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Phase {
    /// The cycle started (`Updated=False`), no step has yet.
    Pending,
    Preparing,
    Cordoning,
    Draining,
    Applying,
    Rebooting,
    /// A rebootless post-config action (reload of a service).
    PostAction,
    Resuming,
    Uncordoning,
    /// `NodeDegraded=True`.
    Degraded,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Pending => "Pending",
            Phase::Preparing => "Preparing",
            Phase::Cordoning => "Cordoning",
            Phase::Draining => "Draining",
            Phase::Applying => "Applying",
            Phase::Rebooting => "Rebooting",
            Phase::PostAction => "PostAction",
            Phase::Resuming => "Resuming",
            Phase::Uncordoning => "Uncordoning",
            Phase::Degraded => "Degraded",
        }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The steps of a cycle in order, each with the condition types that
/// report it (`AppliedFiles`/`AppliedOSImage` replace `AppliedFilesAndOS`
/// when image-mode status reporting is on).
const STEPS: &[(Phase, &[&str])] = &[
    (Phase::Preparing, &["UpdatePrepared"]),
    (Phase::Cordoning, &["Cordoned"]),
    (Phase::Draining, &["Drained"]),
    (
        Phase::Applying,
        &["AppliedFilesAndOS", "AppliedFiles", "AppliedOSImage"],
    ),
    (Phase::Rebooting, &["RebootedNode"]),
    (Phase::PostAction, &["UpdatePostActionComplete"]),
    (Phase::Resuming, &["Resumed"]),
    (Phase::Uncordoning, &["Uncordoned"]),
];

/// A node's phase, since when it has been in it, and the condition that
/// says so.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    pub phase: Phase,
    pub since: Timestamp,
    /// The condition type the phase was read from.
    pub condition: String,
    pub reason: String,
    pub message: String,
}

fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

fn placement(phase: Phase, c: &Condition) -> Placement {
    Placement {
        phase,
        since: c.last_transition_time.0,
        condition: c.type_.clone(),
        reason: c.reason.clone(),
        message: c.message.clone(),
    }
}

/// Whether the node is updated (`Updated=True`).
pub fn is_updated(mcn: &MachineConfigNode) -> bool {
    mcn.status
        .as_ref()
        .and_then(|s| find(&s.conditions, "Updated"))
        .is_some_and(|c| c.status == "True")
}

/// `NodeDegraded=True`, as a placement in [`Phase::Degraded`].
pub fn degraded(mcn: &MachineConfigNode) -> Option<Placement> {
    let c = find(&mcn.status.as_ref()?.conditions, "NodeDegraded")?;
    (c.status == "True").then(|| placement(Phase::Degraded, c))
}

/// Where an updating node is: `None` when it is not in an update cycle
/// (`Updated` is True, or there is no status yet). Degradation is reported
/// separately ([`degraded`]); this still says which step it happened in.
pub fn in_flight(mcn: &MachineConfigNode) -> Option<Placement> {
    let conditions = &mcn.status.as_ref()?.conditions;
    let updated = find(conditions, "Updated")?;
    if updated.status == "True" {
        return None;
    }
    let step_conditions = || {
        STEPS.iter().flat_map(|(phase, types)| {
            types
                .iter()
                .filter_map(|t| find(conditions, t))
                .map(move |c| (*phase, c))
        })
    };
    if let Some((phase, c)) = step_conditions().rfind(|(_, c)| c.status == "Unknown") {
        return Some(placement(phase, c));
    }
    if let Some((phase, c)) = step_conditions().rfind(|(_, c)| c.status == "True") {
        // Between steps: waiting for the next one to start, since this one
        // ended. After the last step only `Updated` is left: still
        // uncordoning from the pool's point of view.
        let next = STEPS
            .iter()
            .position(|(p, _)| *p == phase)
            .and_then(|i| STEPS.get(i + 1))
            .map_or(Phase::Uncordoning, |(p, _)| *p);
        let next = match (phase, next) {
            // A finished post-config action means no reboot happens; after
            // a reboot no post-config action runs.
            (Phase::Applying, _) if post_action_done(conditions) => Phase::Resuming,
            (Phase::Rebooting, _) => Phase::Resuming,
            // Without a drain, the files come right after preparing.
            (Phase::Preparing, Phase::Cordoning) if !drain_required(conditions) => Phase::Applying,
            (_, next) => next,
        };
        return Some(placement(next, c));
    }
    Some(placement(Phase::Pending, updated))
}

/// `UpdatePrepared`'s message ends in `Drain Required: false` when the
/// update needs no drain (upstream's `update` in `pkg/daemon/update.go`).
fn drain_required(conditions: &[Condition]) -> bool {
    find(conditions, "UpdatePrepared").is_none_or(|c| !c.message.contains("Drain Required: false"))
}

fn post_action_done(conditions: &[Condition]) -> bool {
    find(conditions, "UpdatePostActionComplete").is_some_and(|c| c.status == "True")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn golden(case: &str) -> MachineConfigNode {
        let path = mco_job::crate_dir(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../../tests/golden/mcn/{case}/expected.json"));
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        serde_json::from_value(value["machineConfigNode"].clone())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn phases_of_the_reboot_walk() {
        let walk = [
            ("reboot-01-desired-config-set", Some(Phase::Pending)),
            // Prepared, the drain not yet requested: cordoning is next.
            ("reboot-02-working", Some(Phase::Cordoning)),
            // Asked for, not yet cordoned: the drain controller writes
            // nothing before its cordon, so cordoning is still next.
            ("reboot-03-drain-requested", Some(Phase::Cordoning)),
            ("reboot-04-cordoned", Some(Phase::Draining)),
            ("reboot-05-drained", Some(Phase::Applying)),
            ("reboot-06-rebooting", Some(Phase::Rebooting)),
            ("reboot-07-rebooted", Some(Phase::Resuming)),
            ("reboot-08-uncordon-requested", Some(Phase::Uncordoning)),
            ("reboot-09-uncordoned", Some(Phase::Uncordoning)),
            ("reboot-10-done", None),
            ("rebootless-01-desired-config-set", Some(Phase::Pending)),
            ("rebootless-02-working-no-drain", Some(Phase::Applying)),
            ("rebootless-03-uncordon-requested", Some(Phase::Uncordoning)),
            ("rebootless-05-done", None),
        ];
        let seen: Vec<_> = walk
            .iter()
            .map(|(case, _)| (*case, in_flight(&golden(case)).map(|p| p.phase)))
            .collect();
        let want: Vec<_> = walk.iter().map(|(c, p)| (*c, *p)).collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn degraded_node_is_placed() {
        let mcn = golden("degraded-03-drain-failed");
        let d = degraded(&mcn).map(|p| p.phase);
        let f = in_flight(&mcn).map(|p| p.phase);
        assert_eq!((d, f), (Some(Phase::Degraded), Some(Phase::Draining)));
    }
}
