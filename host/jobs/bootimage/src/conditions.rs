//! `BootImageUpdateProgressing` and `BootImageUpdateDegraded` on
//! MachineConfiguration `cluster`, in upstream's message formats, which
//! dashboards and `oc` users already read. This host manages MachineAPI
//! MachineSets and ControlPlaneMachineSets; the CAPI kinds keep their
//! upstream segments at 0.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use mco_bootimage::MachineKind;
use mco_k8s_rules::bounded;

use mco_cluster::conditions::{self, MESSAGE_LIMIT, Transition};

use super::ec2::Unconsulted;

pub const PROGRESSING: &str = "BootImageUpdateProgressing";
pub const DEGRADED: &str = "BootImageUpdateDegraded";

/// One kind's part of a pass.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Count {
    /// Enrolled objects of the kind.
    pub total: usize,
    /// Reconciled without error (patched, already current, left alone).
    pub reconciled: usize,
    /// Of `reconciled`, those skipped for a reason (custom image, owner,
    /// ...). Always 0 for ControlPlaneMachineSets: upstream counts every
    /// one left alone as reconciled (`syncControlPlaneMachineSets`), and the
    /// guest says `noop`.
    pub skipped: usize,
    /// One message per object that failed.
    pub errors: Vec<String>,
}

impl Count {
    /// `Reconciled <a> of <b> <noun>[ (<s> skipped)]`.
    fn segment(&self, noun: &str) -> String {
        if self.skipped > 0 {
            format!(
                "Reconciled {} of {} {noun} ({} skipped)",
                self.reconciled - self.skipped.min(self.reconciled),
                self.total,
                self.skipped
            )
        } else {
            format!("Reconciled {} of {} {noun}", self.reconciled, self.total)
        }
    }

    /// Every object was either reconciled or failed.
    fn settled(&self) -> bool {
        self.total == self.reconciled + self.errors.len()
    }
}

/// One pass over the enrolled MachineSets and ControlPlaneMachineSets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub machinesets: Count,
    pub controlplanemachinesets: Count,
    /// The operator rule that enrolled or left out the MachineSets when
    /// the host computed enrollment itself (no published status):
    /// not obvious from the objects, so Progressing says it.
    pub enrollment: Option<String>,
    /// AWS objects decided without EC2 (`<subject>: <why>`), which the
    /// static AMI lists decided for: Progressing says so, as a marketplace
    /// or ROSA MachineSet is then left alone until EC2 answers again.
    pub ec2_unconsulted: Vec<String>,
    /// As `ec2_unconsulted`, where EC2 refused the credentials
    /// ([`Unconsulted::Denied`]): a segment of its own, as the fix is in
    /// the Secret or its IAM policy, and waiting does not help.
    pub ec2_denied: Vec<String>,
}

const EC2_UNREACHABLE: &str = "EC2 could not be reached";

const EC2_DENIED: &str =
    "EC2 refused the credentials of Secret openshift-machine-api/aws-cloud-credentials";

/// What an Event on an AWS object adds when EC2 was not consulted for it:
/// the decision came from the static AMI lists, not EC2's owner rule.
pub fn ec2_unconsulted_note(unconsulted: &Unconsulted) -> String {
    let head = match unconsulted {
        Unconsulted::Unreachable(_) => EC2_UNREACHABLE,
        Unconsulted::Denied(_) => EC2_DENIED,
    };
    format!(
        "{head} ({}), so the static AMI lists decided",
        unconsulted.why()
    )
}

/// A condition as this host wants it; reason and time are filled in when
/// it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    pub type_: &'static str,
    pub status: bool,
    pub message: String,
}

impl Tally {
    pub fn count_mut(&mut self, kind: MachineKind) -> &mut Count {
        match kind {
            MachineKind::MachineSet => &mut self.machinesets,
            MachineKind::ControlPlaneMachineSet => &mut self.controlplanemachinesets,
        }
    }

    pub fn progressing(&self) -> Wanted {
        Wanted {
            type_: PROGRESSING,
            status: !(self.machinesets.settled() && self.controlplanemachinesets.settled()),
            message: format!(
                "{} | {} | Reconciled 0 of 0 CAPI MachineSets | Reconciled 0 of 0 CAPI MachineDeployments{}",
                self.machinesets.segment("MAPI MachineSets"),
                self.controlplanemachinesets
                    .segment("ControlPlaneMachineSets"),
                self.enrollment
                    .as_ref()
                    .map(|rule| format!(" | Enrollment {rule}"))
                    .unwrap_or_default()
            ) + &self.ec2_segments(),
        }
    }

    /// ` | EC2 could not be reached, the static AMI lists decided for:
    /// <objects>` and ` | EC2 refused the credentials of …, the static AMI
    /// lists decided for: <objects>`, bounded as Degraded's error list is
    /// (both together within one bound); nothing when EC2 answered.
    fn ec2_segments(&self) -> String {
        let segments = [
            (EC2_UNREACHABLE, &self.ec2_unconsulted),
            (EC2_DENIED, &self.ec2_denied),
        ];
        let shown = segments.iter().filter(|(_, l)| !l.is_empty()).count();
        let room = EC2_SEGMENT_LIMIT / shown.max(1);
        segments
            .iter()
            .filter(|(_, list)| !list.is_empty())
            .map(|(what, list)| {
                let head = format!(" | {what}, the static AMI lists decided for: ");
                let objects = aggregate(list, room.saturating_sub(head.len()));
                head + &objects
            })
            .collect()
    }

    /// One Degraded for both kinds (the project's choice; upstream
    /// lets its MachineSet pass overwrite the CPMS pass's status): errors
    /// of either make it True, the CPMS errors listed first.
    pub fn degraded(&self) -> Wanted {
        let errors: Vec<String> = self
            .controlplanemachinesets
            .errors
            .iter()
            .chain(&self.machinesets.errors)
            .cloned()
            .collect();
        let mut message = format!(
            "{} Degraded MAPI MachineSets | {} Degraded ControlPlaneMachineSets | 0 Degraded CAPI MachineSets | 0 Degraded CAPI MachineDeployments",
            self.machinesets.errors.len(),
            self.controlplanemachinesets.errors.len(),
        );
        if !errors.is_empty() {
            message.push_str(" | Error(s): ");
            let room = MESSAGE_LIMIT.saturating_sub(message.len());
            message.push_str(&aggregate(&errors, room));
        }
        Wanted {
            type_: DEGRADED,
            status: !errors.is_empty(),
            message,
        }
    }
}

/// Room for the EC2 segment of Progressing, whose upstream segments take
/// about 150 bytes of the condition message limit.
const EC2_SEGMENT_LIMIT: usize = MESSAGE_LIMIT / 2;

/// A failure before any MachineSet was looked at (MachineConfiguration not
/// ready, stream ConfigMap missing, invalid selector).
pub fn degraded_before_start(error: &str) -> Wanted {
    let tally = Tally {
        machinesets: Count {
            errors: vec![error.to_owned()],
            ..Count::default()
        },
        ..Tally::default()
    };
    tally.degraded()
}

/// Kubernetes' `utilerrors.NewAggregate` text: one error as is, several as
/// `[a, b]`, in at most `room` bytes. A list that does not fit keeps the
/// errors that do, in order, and says how many it left out (`[a, b, … and
/// 498 more]`), so the condition still names MachineSets and the status
/// write stays under the API's limit.
fn aggregate(errors: &[String], room: usize) -> String {
    let whole = match errors {
        [one] => return bounded(one.clone(), room),
        many => format!("[{}]", many.join(", ")),
    };
    if whole.len() <= room {
        return whole;
    }
    let rest = |left: usize| format!("… and {left} more]");
    let reserve = ", ".len() + rest(errors.len()).len();
    let mut out = String::from("[");
    let mut shown = 0;
    for error in errors {
        let separator = if shown == 0 { "" } else { ", " };
        if out.len() + separator.len() + error.len() + reserve > room {
            break;
        }
        out.push_str(separator);
        out.push_str(error);
        shown += 1;
    }
    if shown > 0 {
        out.push_str(", ");
    }
    out.push_str(&rest(errors.len() - shown));
    out
}

/// Both conditions to apply, or `None` when every wanted condition already
/// holds with the same status and message. An unchanged condition keeps
/// its reason and transition time, so a pass that changes nothing writes
/// nothing however it was triggered; the time moves only with the status.
/// A condition not wanted is carried over as it is: server-side apply
/// deletes one that this manager stops sending.
pub fn next_conditions(
    existing: &[Condition],
    wanted: &[Wanted],
    reason: &str,
    now: &Time,
) -> Option<Vec<Condition>> {
    let wanted_conditions = wanted
        .iter()
        .map(|want| Condition {
            type_: want.type_.to_owned(),
            status: if want.status { "True" } else { "False" }.to_owned(),
            reason: reason.to_owned(),
            message: want.message.clone(),
            last_transition_time: now.clone(),
            observed_generation: None,
        })
        .collect();
    let (mut next, changed) =
        conditions::merge(existing, wanted_conditions, now, Transition::Status);
    let carried = [PROGRESSING, DEGRADED]
        .into_iter()
        .filter(|t| wanted.iter().all(|w| w.type_ != *t))
        .filter_map(|t| existing.iter().find(|c| c.type_ == t).cloned());
    next.extend(carried);
    changed.then_some(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machinesets(count: Count) -> Tally {
        Tally {
            machinesets: count,
            ..Tally::default()
        }
    }

    #[test]
    fn progressing_says_which_objects_the_static_lists_decided_without_ec2() {
        let mut tally = machinesets(Count {
            total: 2,
            reconciled: 2,
            ..Count::default()
        });
        assert!(!tally.progressing().message.contains("EC2"));
        tally.ec2_unconsulted = vec![
            "machineset a: no credentials".into(),
            "machineset b: DescribeImages timed out".into(),
        ];
        assert_eq!(
            tally.progressing().message,
            "Reconciled 2 of 2 MAPI MachineSets | Reconciled 0 of 0 ControlPlaneMachineSets | Reconciled 0 of 0 CAPI MachineSets | Reconciled 0 of 0 CAPI MachineDeployments | EC2 could not be reached, the static AMI lists decided for: [machineset a: no credentials, machineset b: DescribeImages timed out]"
        );
        assert!(!tally.progressing().status);
        tally.ec2_unconsulted = (0..10_000)
            .map(|i| format!("machineset m{i}: {}", "x".repeat(100)))
            .collect();
        let message = tally.progressing().message;
        assert!(message.len() <= MESSAGE_LIMIT, "{}", message.len());
        assert!(message.ends_with("more]"), "{message}");
        assert_eq!(
            ec2_unconsulted_note(&Unconsulted::Unreachable("no credentials".into())),
            "EC2 could not be reached (no credentials), so the static AMI lists decided"
        );
    }

    #[test]
    fn credentials_ec2_refused_have_a_segment_of_their_own() {
        let mut tally = machinesets(Count {
            total: 2,
            reconciled: 2,
            ..Count::default()
        });
        let denied = "EC2 DescribeImages: HTTP 401: AuthFailure: AWS was not able to validate the provided access credentials";
        tally.ec2_denied = vec![format!("machineset a: {denied}")];
        tally.ec2_unconsulted = vec!["machineset b: DescribeImages timed out".into()];
        assert_eq!(
            tally.progressing().message,
            format!(
                "Reconciled 2 of 2 MAPI MachineSets | Reconciled 0 of 0 ControlPlaneMachineSets | Reconciled 0 of 0 CAPI MachineSets | Reconciled 0 of 0 CAPI MachineDeployments | EC2 could not be reached, the static AMI lists decided for: machineset b: DescribeImages timed out | EC2 refused the credentials of Secret openshift-machine-api/aws-cloud-credentials, the static AMI lists decided for: machineset a: {denied}"
            )
        );
        assert_eq!(
            ec2_unconsulted_note(&Unconsulted::Denied(denied.into())),
            format!(
                "EC2 refused the credentials of Secret openshift-machine-api/aws-cloud-credentials ({denied}), so the static AMI lists decided"
            )
        );
        // Both long lists together stay within the bound.
        let long = |prefix: &str| -> Vec<String> {
            (0..10_000)
                .map(|i| format!("machineset {prefix}{i}: {}", "x".repeat(100)))
                .collect()
        };
        tally.ec2_unconsulted = long("u");
        tally.ec2_denied = long("d");
        let message = tally.progressing().message;
        assert!(message.len() <= MESSAGE_LIMIT, "{}", message.len());
        assert!(message.contains("machineset u0") && message.contains("machineset d0"));
    }

    #[test]
    fn control_plane_machine_sets_have_their_own_segments_and_share_degraded() {
        let tally = Tally {
            machinesets: Count {
                total: 3,
                reconciled: 3,
                ..Count::default()
            },
            controlplanemachinesets: Count {
                total: 1,
                reconciled: 1,
                ..Count::default()
            },
            enrollment: None,
            ec2_unconsulted: Vec::new(),
            ec2_denied: Vec::new(),
        };
        assert_eq!(
            tally.progressing().message,
            "Reconciled 3 of 3 MAPI MachineSets | Reconciled 1 of 1 ControlPlaneMachineSets | Reconciled 0 of 0 CAPI MachineSets | Reconciled 0 of 0 CAPI MachineDeployments"
        );
        assert!(!tally.progressing().status && !tally.degraded().status);

        let failing = Tally {
            machinesets: Count {
                total: 1,
                errors: vec!["ms".into()],
                ..Count::default()
            },
            controlplanemachinesets: Count {
                total: 1,
                errors: vec!["cpms".into()],
                ..Count::default()
            },
            enrollment: None,
            ec2_unconsulted: Vec::new(),
            ec2_denied: Vec::new(),
        };
        let degraded = failing.degraded();
        assert!(degraded.status);
        assert_eq!(
            degraded.message,
            "1 Degraded MAPI MachineSets | 1 Degraded ControlPlaneMachineSets | 0 Degraded CAPI MachineSets | 0 Degraded CAPI MachineDeployments | Error(s): [cpms, ms]"
        );
        // A CPMS still in flight keeps Progressing True.
        let midway = Tally {
            controlplanemachinesets: Count {
                total: 1,
                ..Count::default()
            },
            ..Tally::default()
        };
        assert!(midway.progressing().status);
    }

    #[test]
    fn a_computed_enrollment_is_named_after_the_upstream_segments() {
        let tally = Tally {
            enrollment: Some("computed from spec.managedBootImages, as the operator would publish it: no machinesets entry, and AWS MachineSets are enrolled by default".into()),
            ec2_unconsulted: Vec::new(),
            ec2_denied: Vec::new(),
            ..Tally::default()
        };
        assert_eq!(
            tally.progressing().message,
            "Reconciled 0 of 0 MAPI MachineSets | Reconciled 0 of 0 ControlPlaneMachineSets | Reconciled 0 of 0 CAPI MachineSets | Reconciled 0 of 0 CAPI MachineDeployments | Enrollment computed from spec.managedBootImages, as the operator would publish it: no machinesets entry, and AWS MachineSets are enrolled by default"
        );
        // Degraded is not about enrollment.
        assert!(!tally.degraded().message.contains("Enrollment"));
    }

    /// 500 failing MachineSets, each error about 86 bytes as the host
    /// writes them, would make a 43 KB message the apiserver refuses.
    #[test]
    fn degraded_lists_what_fits_and_counts_the_rest() {
        let errors: Vec<String> = (0..500)
            .map(|i| format!("error syncing MAPI MachineSet worker-{i:03}: the GCP guest failed: trap: unreachable"))
            .collect();
        let tally = machinesets(Count {
            total: 500,
            errors: errors.clone(),
            ..Count::default()
        });
        let message = tally.degraded().message;
        assert!(message.len() <= MESSAGE_LIMIT, "{} bytes", message.len());
        assert!(message.starts_with("500 Degraded MAPI MachineSets | "));
        let shown = errors
            .iter()
            .take_while(|e| message.contains(e.as_str()))
            .count();
        assert!(shown > 300, "only {shown} errors shown");
        assert!(
            message.ends_with(&format!(", … and {} more]", 500 - shown)),
            "{}",
            &message[message.len() - 80..]
        );
        // None is shown after the cut.
        assert!(!errors[shown..].iter().any(|e| message.contains(e.as_str())));
        // A single error too long for the room is cut on its own.
        assert_eq!(aggregate(&["x".repeat(100)], 10).len(), 10);
        // Too little room for any error still says how many there are.
        assert_eq!(aggregate(&errors[..3], 25), "[… and 3 more]");
    }

    #[test]
    fn messages_follow_upstream() {
        let clean = machinesets(Count {
            total: 3,
            reconciled: 3,
            ..Count::default()
        });
        assert_eq!(
            clean.progressing().message,
            "Reconciled 3 of 3 MAPI MachineSets | Reconciled 0 of 0 ControlPlaneMachineSets | Reconciled 0 of 0 CAPI MachineSets | Reconciled 0 of 0 CAPI MachineDeployments"
        );
        assert!(!clean.progressing().status);
        assert_eq!(
            clean.degraded().message,
            "0 Degraded MAPI MachineSets | 0 Degraded ControlPlaneMachineSets | 0 Degraded CAPI MachineSets | 0 Degraded CAPI MachineDeployments"
        );
        assert!(!clean.degraded().status);

        let mixed = machinesets(Count {
            total: 5,
            reconciled: 3,
            skipped: 1,
            errors: vec!["a".into(), "b".into()],
        });
        assert!(
            mixed
                .progressing()
                .message
                .starts_with("Reconciled 2 of 5 MAPI MachineSets (1 skipped) | ")
        );
        assert!(!mixed.progressing().status);
        assert!(mixed.degraded().status);
        assert!(
            mixed
                .degraded()
                .message
                .starts_with("2 Degraded MAPI MachineSets | ")
        );
        assert!(mixed.degraded().message.ends_with(" | Error(s): [a, b]"));
        assert!(
            degraded_before_start("x")
                .message
                .ends_with(" | Error(s): x")
        );

        let midway = machinesets(Count {
            total: 2,
            reconciled: 1,
            ..Count::default()
        });
        assert!(midway.progressing().status);
    }

    fn at(second: i64) -> Time {
        Time(k8s_openapi::jiff::Timestamp::from_second(second).unwrap_or_default())
    }

    #[test]
    fn unchanged_conditions_are_not_rewritten() {
        let tally = machinesets(Count {
            total: 1,
            reconciled: 1,
            ..Count::default()
        });
        let wanted = [tally.progressing(), tally.degraded()];
        let first = next_conditions(&[], &wanted, "MAPIMachineSetAdded", &at(1)).unwrap();
        assert_eq!(first.len(), 2);
        assert_eq!(first[0].reason, "MAPIMachineSetAdded");
        // Same state, another trigger: nothing to write.
        assert_eq!(next_conditions(&first, &wanted, "Resync", &at(2)), None);
        // The message changes, the status does not: time kept, reason new.
        let more = machinesets(Count {
            total: 2,
            reconciled: 2,
            ..Count::default()
        });
        let next =
            next_conditions(&first, &[more.progressing(), more.degraded()], "R", &at(3)).unwrap();
        assert_eq!(next[0].last_transition_time, at(1));
        assert_eq!(next[0].reason, "R");
        assert_eq!(next[1], first[1]);
        // The status flips: new time.
        let failing = machinesets(Count {
            total: 1,
            errors: vec!["e".into()],
            ..Count::default()
        });
        let next = next_conditions(&first, &[failing.degraded()], "R", &at(4)).unwrap();
        assert_eq!(next[0].last_transition_time, at(4));
        assert_eq!(next[0].status, "True");
        // The condition not written this time is sent unchanged.
        assert_eq!(next.len(), 2);
        assert_eq!(next[1], first[0]);
    }
}
