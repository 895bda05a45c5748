//! Auditing a candidate guest: every object of one job decided by two
//! modules, the active one and a candidate, and the two decisions compared
//! key by key with [`crate::compare`]. Only counts and bounded samples are
//! kept, so an audit of 5,000 nodes holds no decision longer than it takes
//! to compare it. Each job keys its own decisions, in its own folder
//! (`JobKind::audit`); this file counts them and `cluster` reads the cluster
//! for them. A MachineConfigGuest's `spec.audit` is answered in
//! `crd::audit`.

pub mod cluster;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::slot::Slot;
use crate::compare::{Counts, Difference, Summary, keep_smallest, keyed};
use mco_runtime::{GuestError, GuestModule};

/// Differences, and failures, a report shows by default.
pub const SAMPLE_LIMIT: usize = 20;

/// The module and the candidate of `slot`, if it has a candidate.
pub fn pair<G>(slot: &Slot<G>) -> Option<(&G, &G)> {
    slot.candidate
        .as_ref()
        .map(|candidate| (&slot.active, candidate))
}

/// Which of the two modules decided.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum Role {
    Active,
    Candidate,
}

impl Role {
    pub fn label(self) -> &'static str {
        match self {
            Role::Active => "active",
            Role::Candidate => "candidate",
        }
    }
}

/// One decision as its keys and values, or the module's failure.
pub type Keyed = Result<Vec<(String, String)>, GuestError>;

/// The comparison so far: the differences (in [`Summary`]) of the objects
/// both modules decided, and the failures of the others.
pub struct Audit {
    compared: Summary,
    failed: u64,
    failures: Failures,
    failure_sample: Vec<Failed>,
    omitted_failures: u64,
    limit: usize,
}

/// Failed evaluations per module, by kind (`trap`, `deadline`,
/// `memory_limit`, `stack_overflow`, `invalid_output`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Failures {
    pub active: BTreeMap<String, u64>,
    pub candidate: BTreeMap<String, u64>,
}

/// One failed evaluation, in short.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct Failed {
    pub object: String,
    pub module: Role,
    pub kind: String,
    pub error: String,
}

impl Audit {
    /// `limit`: differences, and failures, kept in each sample.
    pub fn new(limit: usize) -> Audit {
        Audit {
            compared: Summary::new(limit),
            failed: 0,
            failures: Failures::default(),
            failure_sample: Vec::new(),
            omitted_failures: 0,
            limit,
        }
    }

    /// One object as both modules decided it. An object either module
    /// failed on is counted failed, not compared: a failure has no keys to
    /// compare, and counting it as a difference would hide what it was.
    pub fn add(&mut self, object: &str, active: Keyed, candidate: Keyed) {
        match (active, candidate) {
            (Ok(active), Ok(candidate)) => self.compared.add(object, &keyed(candidate, active)),
            (active, candidate) => {
                self.failed += 1;
                let failures = [(Role::Active, active), (Role::Candidate, candidate)];
                for (role, result) in failures {
                    if let Err(error) = result {
                        self.fail(object, role, &error);
                    }
                }
            }
        }
    }

    fn fail(&mut self, object: &str, role: Role, error: &GuestError) {
        let counts = match role {
            Role::Active => &mut self.failures.active,
            Role::Candidate => &mut self.failures.candidate,
        };
        *counts.entry(error.kind().to_owned()).or_default() += 1;
        let failed = Failed {
            object: object.to_owned(),
            module: role,
            kind: error.kind().to_owned(),
            error: mco_k8s_rules::bounded(error.to_string(), crate::compare::SIDE_MAX_BYTES),
        };
        if !keep_smallest(&mut self.failure_sample, failed, self.limit) {
            self.omitted_failures += 1;
        }
    }

    /// The report of everything added, for `job` audited with these modules.
    pub fn report(self, job: String, active: Module, candidate: Module) -> Report {
        let Audit {
            compared,
            failed,
            failures,
            failure_sample,
            omitted_failures,
            ..
        } = self;
        Report {
            job,
            active,
            candidate,
            objects: compared.objects + failed,
            agree: compared.objects - compared.differing_objects,
            differ: compared.differing_objects,
            failed,
            failures,
            sample: compared.sample.into_iter().map(Sampled::from).collect(),
            omitted: compared.omitted,
            failure_sample,
            omitted_failures,
            keys: compared.keys,
        }
    }
}

/// A module audited: where it came from and its digest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Module {
    pub module: String,
    pub sha256: String,
}

impl Module {
    pub fn of(module: &GuestModule) -> Module {
        Module {
            module: module.name.clone(),
            sha256: module.digest.clone(),
        }
    }
}

/// One difference as the audit shows it: the candidate's side and the
/// active module's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Sampled {
    pub object: String,
    pub key: String,
    pub candidate: String,
    pub active: String,
}

impl From<Difference> for Sampled {
    fn from(difference: Difference) -> Sampled {
        Sampled {
            object: difference.object,
            key: difference.outcome.key,
            candidate: difference.outcome.ours,
            active: difference.outcome.theirs,
        }
    }
}

/// What `guests audit` prints (as JSON with `--json`): objects that agree
/// on every key, differ on one or more, or that a module failed on; the
/// agreement per key over the compared objects; the first differences and
/// failures by object (then key, or module), and how many more there were.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub job: String,
    pub active: Module,
    pub candidate: Module,
    pub objects: u64,
    pub agree: u64,
    pub differ: u64,
    pub failed: u64,
    pub failures: Failures,
    pub keys: BTreeMap<String, Counts>,
    pub sample: Vec<Sampled>,
    pub omitted: u64,
    pub failure_sample: Vec<Failed>,
    pub omitted_failures: u64,
}

impl Report {
    /// The counts in one line, as the table and the MachineConfigGuest's
    /// `status.audit` say them.
    pub fn summary(&self) -> String {
        format!(
            "{} objects: {} agree, {} differ, {} failed",
            self.objects, self.agree, self.differ, self.failed
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(items: &[(&str, &str)]) -> Keyed {
        Ok(items
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect())
    }

    fn trap(object: &str) -> Keyed {
        Err(GuestError::Trap {
            guest: "candidate.wasm".into(),
            detail: format!("unreachable on {object}"),
        })
    }

    fn module(name: &str) -> Module {
        Module {
            module: name.into(),
            sha256: format!("{name}-digest"),
        }
    }

    fn report(audit: Audit) -> Report {
        audit.report("mcn".into(), module("active"), module("candidate"))
    }

    #[test]
    fn objects_agree_differ_or_fail_and_keys_count_only_the_compared() {
        let mut audit = Audit::new(10);
        let same = [("decision", "apply"), ("Updated", "True")];
        audit.add("a", fields(&same), fields(&same));
        audit.add(
            "b",
            fields(&same),
            fields(&[("decision", "apply"), ("Updated", "False")]),
        );
        audit.add("c", fields(&same), trap("c"));
        audit.add(
            "d",
            Err(GuestError::Deadline {
                guest: "active.wasm".into(),
                deadline: std::time::Duration::from_secs(1),
            }),
            trap("d"),
        );
        let report = report(audit);
        assert_eq!(
            (report.objects, report.agree, report.differ, report.failed),
            (4, 1, 1, 2)
        );
        assert_eq!(
            report.keys["Updated"],
            Counts {
                agree: 1,
                differ: 1
            }
        );
        assert_eq!(
            report.keys["decision"],
            Counts {
                agree: 2,
                differ: 0
            }
        );
        assert_eq!(
            report.failures.candidate,
            BTreeMap::from([("trap".to_owned(), 2)])
        );
        assert_eq!(
            report.failures.active,
            BTreeMap::from([("deadline".to_owned(), 1)])
        );
        assert_eq!(
            report.sample,
            [Sampled {
                object: "b".into(),
                key: "Updated".into(),
                candidate: "False".into(),
                active: "True".into(),
            }]
        );
        let failed: Vec<(&str, Role, &str)> = report
            .failure_sample
            .iter()
            .map(|f| (f.object.as_str(), f.module, f.kind.as_str()))
            .collect();
        assert_eq!(
            failed,
            [
                ("c", Role::Candidate, "trap"),
                ("d", Role::Active, "deadline"),
                ("d", Role::Candidate, "trap"),
            ]
        );
        assert!(report.failure_sample[0].error.contains("unreachable on c"));
    }

    #[test]
    fn both_samples_are_bounded_and_the_same_in_any_order() {
        let names: Vec<String> = (0..40).map(|i| format!("node-{i:02}")).collect();
        fn run<'a>(names: impl Iterator<Item = &'a String>) -> Report {
            let mut audit = Audit::new(3);
            for name in names {
                if name.ends_with('7') {
                    audit.add(name, fields(&[("k", "1")]), trap(name));
                } else {
                    audit.add(name, fields(&[("k", "1")]), fields(&[("k", name)]));
                }
            }
            report(audit)
        }
        let forward = run(names.iter());
        let backward = run(names.iter().rev());
        assert_eq!(forward, backward);
        let sampled: Vec<&str> = forward.sample.iter().map(|s| s.object.as_str()).collect();
        assert_eq!(sampled, ["node-00", "node-01", "node-02"]);
        assert_eq!(forward.omitted, 36 - 3);
        let failed: Vec<&str> = forward
            .failure_sample
            .iter()
            .map(|f| f.object.as_str())
            .collect();
        assert_eq!(failed, ["node-07", "node-17", "node-27"]);
        assert_eq!(forward.omitted_failures, 1);
        assert_eq!((forward.differ, forward.failed), (36, 4));
    }

    #[test]
    fn a_hostile_error_is_cut_in_the_sample() {
        let mut audit = Audit::new(1);
        let huge = Err(GuestError::InvalidOutput {
            guest: "candidate.wasm".into(),
            detail: "x".repeat(1 << 20),
        });
        audit.add("n", fields(&[]), huge);
        let report = report(audit);
        assert!(report.failure_sample[0].error.len() <= crate::compare::SIDE_MAX_BYTES);
        assert_eq!(report.failure_sample[0].kind, "invalid_output");
    }
}
