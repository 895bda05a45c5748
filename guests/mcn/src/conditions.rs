//! The MCN condition list and the two ways upstream changes it: a write that
//! moves one phase forward, and the reset that an `Updated` write performs.

use crate::validate::MAX_MESSAGE;
use crate::{Condition, ConditionStatus};
use mco_k8s_rules::{bounded, is_condition_reason};

/// The feature gate of `configImage` and the per-phase image mode
/// conditions (openshift/api `features.go`; off in the Default set).
pub const IMAGE_MODE_STATUS_REPORTING: &str = "ImageModeStatusReporting";

/// Placeholder upstream writes where a name is not known yet.
pub const NOT_YET_SET: &str = "not-yet-set";

/// Condition types every MCN carries, in upstream's default order (feature
/// gate `ImageModeStatusReporting` off).
pub const DEFAULT_CONDITION_TYPES: [&str; 14] = [
    UPDATE_PREPARED,
    UPDATE_EXECUTED,
    UPDATE_POST_ACTION_COMPLETE,
    UPDATE_COMPLETE,
    RESUMED,
    DRAINED,
    APPLIED_FILES_AND_OS,
    CORDONED,
    REBOOTED_NODE,
    UPDATED,
    UNCORDONED,
    NODE_DEGRADED,
    "PinnedImageSetsDegraded",
    "PinnedImageSetsProgressing",
];

/// The default list with gate `ImageModeStatusReporting` on: the files
/// and the OS image each get a condition, and so does the image pull.
pub const IMAGE_MODE_CONDITION_TYPES: [&str; 16] = [
    UPDATE_PREPARED,
    UPDATE_EXECUTED,
    UPDATE_POST_ACTION_COMPLETE,
    UPDATE_COMPLETE,
    RESUMED,
    DRAINED,
    APPLIED_FILES,
    APPLIED_OS_IMAGE,
    CORDONED,
    REBOOTED_NODE,
    UPDATED,
    UNCORDONED,
    IMAGE_PULLED_FROM_REGISTRY,
    NODE_DEGRADED,
    "PinnedImageSetsDegraded",
    "PinnedImageSetsProgressing",
];

/// Condition types the CRD's set allows beyond the gate-off defaults (the
/// `ImageModeStatusReporting` gate, the internal release image manager).
pub const OTHER_CONDITION_TYPES: [&str; 4] = [
    APPLIED_FILES,
    APPLIED_OS_IMAGE,
    IMAGE_PULLED_FROM_REGISTRY,
    "InternalReleaseImageDegraded",
];

/// The condition types every MCN carries, in upstream's order, for the
/// gate `ImageModeStatusReporting` (MCO `pkg/upgrademonitor/upgrade_monitor.go`).
pub fn default_condition_types(image_mode: bool) -> &'static [&'static str] {
    if image_mode {
        &IMAGE_MODE_CONDITION_TYPES
    } else {
        &DEFAULT_CONDITION_TYPES
    }
}

pub const UPDATE_PREPARED: &str = "UpdatePrepared";
pub const UPDATE_EXECUTED: &str = "UpdateExecuted";
pub const UPDATE_POST_ACTION_COMPLETE: &str = "UpdatePostActionComplete";
pub const UPDATE_COMPLETE: &str = "UpdateComplete";
pub const RESUMED: &str = "Resumed";
pub const DRAINED: &str = "Drained";
pub const APPLIED_FILES_AND_OS: &str = "AppliedFilesAndOS";
pub const APPLIED_FILES: &str = "AppliedFiles";
pub const APPLIED_OS_IMAGE: &str = "AppliedOSImage";
pub const IMAGE_PULLED_FROM_REGISTRY: &str = "ImagePulledFromRegistry";
pub const CORDONED: &str = "Cordoned";
pub const REBOOTED_NODE: &str = "RebootedNode";
pub const UPDATED: &str = "Updated";
pub const UNCORDONED: &str = "Uncordoned";
pub const NODE_DEGRADED: &str = "NodeDegraded";

/// Conditions in list order, one per type.
#[derive(Clone, Debug)]
pub struct ConditionSet {
    items: Vec<Condition>,
}

impl ConditionSet {
    /// Starts from the stored conditions and adds every default type that is
    /// missing, as upstream does on the first status write. Stored entries
    /// that the CRD would reject (or repeat a type) are dropped, so one bad
    /// stored condition cannot block every later write.
    ///
    /// With `image_mode` (gate `ImageModeStatusReporting`) this is also
    /// upstream's one-time migration (MCO `pkg/controller/node/node_controller.go`,
    /// `migrateMCNConditionsToImageModeStatusReporting`): `AppliedFilesAndOS`
    /// goes, and the gate's types are appended as not yet occurred. Upstream
    /// does not migrate back when the gate goes off, so neither does this:
    /// leftovers of the gate's types stay as they are.
    pub fn from_previous(previous: &[Condition], image_mode: bool) -> Self {
        let mut set = ConditionSet {
            items: Vec::with_capacity(previous.len().max(14)),
        };
        for condition in previous {
            // A stored type outside the CRD's set cannot be written back.
            let known = DEFAULT_CONDITION_TYPES
                .iter()
                .chain(&OTHER_CONDITION_TYPES)
                .any(|t| *t == condition.type_);
            let valid = known
                && is_condition_reason(&condition.type_)
                && is_condition_reason(&condition.reason)
                && condition.message.len() <= MAX_MESSAGE;
            let migrated = image_mode && condition.type_ == APPLIED_FILES_AND_OS;
            if valid && !migrated && set.get(&condition.type_).is_none() {
                set.items.push(condition.clone());
            }
        }
        for type_ in default_condition_types(image_mode) {
            if set.get(type_).is_none() {
                set.items.push(Condition {
                    type_: type_.to_string(),
                    status: ConditionStatus::False,
                    reason: "NotYetOccurred".to_string(),
                    message: format!("This node has not yet entered the {type_} phase"),
                });
            }
        }
        set
    }

    pub fn get(&self, type_: &str) -> Option<&Condition> {
        self.items.iter().find(|c| c.type_ == type_)
    }

    pub fn status(&self, type_: &str) -> ConditionStatus {
        self.get(type_).map_or(ConditionStatus::False, |c| c.status)
    }

    /// Whether the condition has left its starting state in this cycle.
    pub fn has_started(&self, type_: &str) -> bool {
        self.status(type_) != ConditionStatus::False
    }

    pub fn has_value(&self, type_: &str, status: ConditionStatus, message: &str) -> bool {
        self.get(type_)
            .is_some_and(|c| c.status == status && c.message == message)
    }

    /// Overwrites (or appends) one condition.
    pub fn put(&mut self, type_: &str, status: ConditionStatus, reason: &str, message: String) {
        let message = bounded(message, MAX_MESSAGE);
        let condition = Condition {
            type_: type_.to_string(),
            status,
            reason: reason.to_string(),
            message,
        };
        match self.items.iter_mut().find(|c| c.type_ == type_) {
            Some(existing) => *existing = condition,
            None => self.items.push(condition),
        }
    }

    /// Records progress of one phase. A phase that completed in this update
    /// cycle stays complete until the next `Updated` reset, so a late or
    /// replayed observation never moves it backwards.
    pub fn advance(&mut self, type_: &str, status: ConditionStatus, reason: &str, message: String) {
        if self.status(type_) != ConditionStatus::True {
            self.put(type_, status, reason, message);
        }
    }

    /// A parent write with its child (`<Parent><Child>` reason convention).
    pub fn advance_pair(
        &mut self,
        parent: (&str, ConditionStatus, String),
        child: (&str, ConditionStatus, String),
    ) {
        let (parent_type, parent_status, parent_message) = parent;
        let (child_type, child_status, child_message) = child;
        self.advance(
            child_type,
            child_status,
            &format!("{parent_type}{child_type}"),
            child_message,
        );
        self.advance(parent_type, parent_status, child_type, parent_message);
    }

    /// What writing `Updated` does to every other condition: anything not
    /// False becomes False, its message prefixed with the update it belonged to.
    pub fn reset(&mut self, target: &str) {
        for condition in self.items.iter_mut() {
            if condition.type_ != UPDATED && condition.status != ConditionStatus::False {
                condition.status = ConditionStatus::False;
                condition.message = bounded(
                    format!("Action during update to {target}: {}", condition.message),
                    MAX_MESSAGE,
                );
            }
        }
    }

    pub fn into_vec(self) -> Vec<Condition> {
        self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ConditionStatus::*;

    #[test]
    fn defaults_fill_an_empty_list_in_upstream_order() {
        let set = ConditionSet::from_previous(&[], false).into_vec();
        let types: Vec<_> = set.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, DEFAULT_CONDITION_TYPES);
        assert_eq!(
            set[4].message,
            "This node has not yet entered the Resumed phase"
        );
        assert!(
            set.iter()
                .all(|c| c.status == False && c.reason == "NotYetOccurred")
        );
    }

    #[test]
    fn image_mode_defaults_replace_applied_files_and_os() {
        let set = ConditionSet::from_previous(&[], true).into_vec();
        let types: Vec<_> = set.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, IMAGE_MODE_CONDITION_TYPES);
        assert!(!types.contains(&APPLIED_FILES_AND_OS));
    }

    /// Upstream's migration: the gate-off condition goes, the gate's three
    /// are appended in its order, not yet occurred; the rest is kept as it
    /// was, in place.
    #[test]
    fn turning_the_gate_on_migrates_stored_conditions() {
        let mut stored = ConditionSet::from_previous(&[], false);
        stored.put(UPDATED, True, UPDATED, "Node n Updated".into());
        let stored = stored.into_vec();
        let migrated = ConditionSet::from_previous(&stored, true).into_vec();
        let types: Vec<_> = migrated.iter().map(|c| c.type_.as_str()).collect();
        let mut expected: Vec<_> = DEFAULT_CONDITION_TYPES
            .into_iter()
            .filter(|t| *t != APPLIED_FILES_AND_OS)
            .collect();
        expected.extend([APPLIED_FILES, APPLIED_OS_IMAGE, IMAGE_PULLED_FROM_REGISTRY]);
        assert_eq!(types, expected);
        let added = &migrated[migrated.len() - 1];
        assert_eq!(
            (added.status, added.reason.as_str(), added.message.as_str()),
            (
                False,
                "NotYetOccurred",
                "This node has not yet entered the ImagePulledFromRegistry phase"
            )
        );
        assert!(
            migrated
                .iter()
                .any(|c| c.type_ == UPDATED && c.status == True && c.message == "Node n Updated")
        );
        // Gate off again: nothing is migrated back.
        let back = ConditionSet::from_previous(&migrated, false).into_vec();
        assert!(back.iter().any(|c| c.type_ == APPLIED_FILES));
        assert_eq!(
            back.last().map(|c| c.type_.as_str()),
            Some(APPLIED_FILES_AND_OS)
        );
    }

    #[test]
    fn invalid_and_repeated_stored_conditions_are_dropped() {
        let good = Condition {
            type_: "Drained".into(),
            status: True,
            reason: "UpdateExecutedDrained".into(),
            message: "ok".into(),
        };
        let bad_reason = Condition {
            reason: "not a reason".into(),
            type_: "Cordoned".into(),
            ..good.clone()
        };
        let repeated = Condition {
            status: Unknown,
            ..good.clone()
        };
        let set = ConditionSet::from_previous(&[good, bad_reason, repeated], false);
        assert_eq!(set.status("Drained"), True);
        assert_eq!(
            set.get("Cordoned").map(|c| c.reason.as_str()),
            Some("NotYetOccurred")
        );
    }

    #[test]
    fn advance_never_moves_a_completed_phase_back() {
        let mut set = ConditionSet::from_previous(&[], false);
        set.advance(DRAINED, True, "UpdateExecutedDrained", "done".into());
        set.advance(DRAINED, Unknown, "UpdateExecutedDrained", "draining".into());
        assert_eq!(set.status(DRAINED), True);
    }

    #[test]
    fn reset_prefixes_and_clears_everything_but_updated() {
        let mut set = ConditionSet::from_previous(&[], false);
        set.put(RESUMED, True, RESUMED, "In desired config B.".into());
        set.put(UPDATED, True, UPDATED, "x".into());
        set.reset("B");
        let resumed = set.get(RESUMED).cloned().unwrap_or_default();
        assert_eq!(
            (resumed.status, resumed.message.as_str()),
            (False, "Action during update to B: In desired config B.")
        );
        assert_eq!(set.status(UPDATED), True);
    }

    #[test]
    fn huge_messages_are_cut_to_the_crd_limit() {
        let mut set = ConditionSet::from_previous(&[], false);
        set.put(NODE_DEGRADED, True, NODE_DEGRADED, "é".repeat(40_000));
        assert!(
            set.get(NODE_DEGRADED)
                .is_some_and(|c| c.message.len() <= MAX_MESSAGE)
        );
    }
}
