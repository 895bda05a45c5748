//! The one condition merge: the conditions a job wants, with the
//! `lastTransitionTime` carried over from the stored ones wherever the
//! condition did not transition. Both jobs write `metav1.Condition`s and
//! must not move a time on a resync, or every pass would be a write.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use mco_k8s_rules::bounded;

/// `metav1.Condition` `message` maxLength, in bytes: a longer message makes
/// the apiserver refuse the whole status write.
pub const MESSAGE_LIMIT: usize = 32_768;

/// What counts as a transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// Any change of status, reason or message (MachineConfigNodes: each
    /// step of an update is news, and its time is when it happened).
    AnyChange,
    /// A change of status only, as apimachinery's `SetStatusCondition`; a
    /// condition whose status and message hold keeps its reason too (the
    /// boot image conditions, whose reason names the trigger of the pass
    /// that last changed them).
    Status,
}

/// `wanted`, each with its time (and, under [`Transition::Status`], its
/// reason) carried from `stored` where nothing transitioned, and whether
/// any of them differs from what is stored. A message over
/// [`MESSAGE_LIMIT`] is cut there (a job that lists many errors cuts its
/// list more readably first).
pub fn merge(
    stored: &[Condition],
    wanted: Vec<Condition>,
    now: &Time,
    transition: Transition,
) -> (Vec<Condition>, bool) {
    let mut changed = false;
    let merged = wanted
        .into_iter()
        .map(|want| Condition {
            message: bounded(want.message, MESSAGE_LIMIT),
            ..want
        })
        .map(|want| {
            let Some(old) = stored.iter().find(|s| s.type_ == want.type_) else {
                changed = true;
                return Condition {
                    last_transition_time: now.clone(),
                    ..want
                };
            };
            let same_status = old.status == want.status;
            let same = match transition {
                Transition::AnyChange => {
                    same_status && old.reason == want.reason && old.message == want.message
                }
                Transition::Status => same_status && old.message == want.message,
            };
            if same {
                return Condition {
                    last_transition_time: old.last_transition_time.clone(),
                    reason: old.reason.clone(),
                    ..want
                };
            }
            changed = true;
            let keeps_time = transition == Transition::Status && same_status;
            Condition {
                last_transition_time: if keeps_time {
                    old.last_transition_time.clone()
                } else {
                    now.clone()
                },
                ..want
            }
        })
        .collect();
    (merged, changed)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::jiff::Timestamp;

    use super::*;

    fn at(second: i64) -> Time {
        Time(Timestamp::from_second(second).unwrap_or(Timestamp::UNIX_EPOCH))
    }

    fn condition(status: &str, reason: &str, message: &str, time: i64) -> Condition {
        Condition {
            type_: "Ready".into(),
            status: status.into(),
            reason: reason.into(),
            message: message.into(),
            last_transition_time: at(time),
            observed_generation: None,
        }
    }

    #[test]
    fn a_message_over_the_api_limit_is_cut_the_same_way_every_pass() {
        let long = "é".repeat(MESSAGE_LIMIT);
        let (first, changed) = merge(
            &[],
            vec![condition("True", "A", &long, 0)],
            &at(1),
            Transition::Status,
        );
        assert!(changed);
        assert!(first[0].message.len() <= MESSAGE_LIMIT);
        assert!(first[0].message.ends_with('…'), "{}", first[0].message);
        let (again, changed) = merge(
            &first,
            vec![condition("True", "A", &long, 0)],
            &at(2),
            Transition::Status,
        );
        assert!(!changed, "a resync must not rewrite a cut message");
        assert_eq!(again, first);
    }

    #[test]
    fn any_change_is_a_transition_for_mcns() {
        let stored = [condition("True", "A", "m", 1)];
        let (same, changed) = merge(
            &stored,
            vec![condition("True", "A", "m", 9)],
            &at(9),
            Transition::AnyChange,
        );
        assert_eq!(
            (same[0].last_transition_time.clone(), changed),
            (at(1), false)
        );
        for next in [
            condition("False", "A", "m", 0),
            condition("True", "B", "m", 0),
            condition("True", "A", "n", 0),
        ] {
            let (merged, changed) = merge(&stored, vec![next], &at(9), Transition::AnyChange);
            assert_eq!(
                (merged[0].last_transition_time.clone(), changed),
                (at(9), true)
            );
        }
        let (fresh, changed) = merge(
            &[],
            vec![condition("True", "A", "m", 0)],
            &at(9),
            Transition::AnyChange,
        );
        assert_eq!(
            (fresh[0].last_transition_time.clone(), changed),
            (at(9), true)
        );
    }

    #[test]
    fn only_the_status_moves_the_time_for_operator_conditions() {
        let stored = [condition("False", "First", "m", 1)];
        // Another trigger, same state: the stored reason and time stay.
        let (same, changed) = merge(
            &stored,
            vec![condition("False", "Second", "m", 0)],
            &at(9),
            Transition::Status,
        );
        assert!(!changed);
        assert_eq!(
            (
                same[0].reason.as_str(),
                same[0].last_transition_time.clone()
            ),
            ("First", at(1))
        );
        // A new message: the new reason, the old time.
        let (message, changed) = merge(
            &stored,
            vec![condition("False", "Second", "n", 0)],
            &at(9),
            Transition::Status,
        );
        assert!(changed);
        assert_eq!(
            (
                message[0].reason.as_str(),
                message[0].last_transition_time.clone()
            ),
            ("Second", at(1))
        );
        // The status flips: now.
        let (flipped, changed) = merge(
            &stored,
            vec![condition("True", "Second", "n", 0)],
            &at(9),
            Transition::Status,
        );
        assert!(changed);
        assert_eq!(flipped[0].last_transition_time, at(9));
    }
}
