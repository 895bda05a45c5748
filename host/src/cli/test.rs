//! `mco-host guests test CASES...`: case folders in the layout of
//! `tests/golden/<job>/` run against any module (`--guest`) or the
//! registry's, each entry's candidate beside its active module. Every case
//! is reported, never only the first failure, so a team sees everything a
//! change of its module breaks.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use tracing::info_span;

use super::eval::{bootimage_decision, load_slot};
use super::{Failure, SandboxArgs, print};
use crate::bootimage::BootImageGuest;
use crate::cases::{self, Case, CaseFailure, CaseJob, Pass};
use crate::mcn::McnGuest;
use crate::mcn::guest::McnGuestExt as _;
use crate::runtime::{Guest, Runtime, World};
use crate::{bootimage, mcn};
use mco_registry::entries::Entry;
use mco_registry::slot::Slot;
use mco_registry::table::Registry;
use mco_registry::{Job, Remote};

#[derive(Args)]
pub(super) struct TestArgs {
    /// Case folders (`expected.json` beside the files `eval` reads, named
    /// after its flags, and an optional `now.txt`), or folders of them.
    #[arg(required = true, value_name = "CASES")]
    cases: Vec<PathBuf>,
    /// Run every case against this module instead of the registry's (and
    /// no candidate).
    #[arg(long, value_name = "FILE", conflicts_with = "registry")]
    guest: Option<PathBuf>,
    /// Also write a JUnit XML report here.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

/// Which of an entry's modules a case ran against.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Active,
    Candidate,
}

/// One case run against one module.
struct Outcome {
    case: Case,
    /// The entry that decided (none: the host rules decided alone, or the
    /// registry names no guest for the platform).
    job: Option<Job>,
    role: Role,
    result: Result<Pass, CaseFailure>,
    time: Duration,
}

impl Outcome {
    fn label(&self) -> String {
        let mut label = self.case.dir.display().to_string();
        if let Some(job) = &self.job {
            let _ = write!(label, " [{job}");
            if self.role == Role::Candidate {
                label.push_str(" candidate");
            }
            label.push(']');
        }
        label
    }
}

/// Where the modules come from.
struct Source {
    /// `--guest FILE`: one module for every job, instead of the registry's.
    guest: Option<Entry>,
    registry: Registry,
    /// The registry's OCI modules, pulled once.
    remote: Remote,
}

/// Modules loaded on first use, one slot per job (a load error is kept
/// too, and fails every case of that job).
struct Slots<G>(BTreeMap<Job, Result<Slot<G>, String>>);

impl<G> Slots<G> {
    fn has_candidate(&self, job: &Job) -> bool {
        matches!(
            self.0.get(job),
            Some(Ok(Slot {
                candidate: Some(_),
                ..
            }))
        )
    }
}

impl<G> Default for Slots<G> {
    fn default() -> Self {
        Slots(BTreeMap::new())
    }
}

struct Guests {
    runtime: Runtime,
    source: Source,
    mcn: Slots<McnGuest>,
    bootimage: Slots<BootImageGuest>,
}

impl Source {
    /// The job's slot, loaded on its first case; `None` when the registry
    /// names no module for the job.
    fn slot<'s, W: World>(
        &self,
        slots: &'s mut Slots<Guest<W>>,
        runtime: &Runtime,
        job: &Job,
    ) -> Result<Option<&'s Slot<Guest<W>>>, String> {
        let Some(entry) = self.guest.as_ref().or_else(|| self.registry.get(job)) else {
            return Ok(None);
        };
        slots
            .0
            .entry(job.clone())
            .or_insert_with(|| {
                load_slot(runtime, job, entry, &self.remote).map_err(|e| e.to_string())
            })
            .as_ref()
            .map(Some)
            .map_err(Clone::clone)
    }
}

impl Guests {
    /// The case against the given role's module of its job; the job that
    /// decided is returned beside it, so its candidate can run next.
    fn run(&mut self, case: &Case, role: Role) -> (Option<Job>, Result<Pass, CaseFailure>) {
        let _span = info_span!("case", case = %case.dir.display()).entered();
        match case.job {
            CaseJob::Mcn => {
                let job = mcn::job::job();
                let result = cases::check_mcn(&case.dir, |inputs| {
                    let slot = self
                        .source
                        .slot(&mut self.mcn, &self.runtime, &job)?
                        .ok_or_else(|| mcn::job::MISSING.to_string())?;
                    pick(slot, role)
                        .derive(&inputs.facts())
                        .map_err(|e| e.to_string())
                });
                (Some(job), result)
            }
            CaseJob::BootImage => {
                let mut decided_by = None;
                let result = cases::check_bootimage(&case.dir, |inputs, now| {
                    bootimage_decision(inputs, now, |platform| {
                        let job = bootimage::job::job(platform);
                        let slot = self.source.slot(&mut self.bootimage, &self.runtime, &job);
                        decided_by = match &slot {
                            Ok(None) => None,
                            _ => Some(job),
                        };
                        Ok(slot.map_err(Failure::Other)?.map(|slot| pick(slot, role)))
                    })
                });
                (decided_by, result)
            }
        }
    }

    fn has_candidate(&self, job: &Job) -> bool {
        self.mcn.has_candidate(job) || self.bootimage.has_candidate(job)
    }
}

fn pick<G>(slot: &Slot<G>, role: Role) -> &G {
    match (role, &slot.candidate) {
        (Role::Candidate, Some(candidate)) => candidate,
        _ => &slot.active,
    }
}

pub(super) fn run(sandbox: &SandboxArgs, args: TestArgs) -> Result<(), Failure> {
    let found = cases::find(&args.cases)?;
    let source = match args.guest {
        Some(path) => Source {
            guest: Some(Entry::path(path)),
            registry: Registry::default(),
            remote: Remote::default(),
        },
        None => {
            let registry = sandbox.registry()?;
            let remote = super::offline::pull_offline(sandbox, &registry)?;
            Source {
                guest: None,
                registry,
                remote,
            }
        }
    };
    let mut guests = Guests {
        runtime: sandbox.runtime()?,
        source,
        mcn: Slots::default(),
        bootimage: Slots::default(),
    };
    let mut outcomes = Vec::new();
    for case in found {
        let mut role = Role::Active;
        loop {
            let started = Instant::now();
            let (job, result) = guests.run(&case, role);
            let again =
                role == Role::Active && job.as_ref().is_some_and(|j| guests.has_candidate(j));
            outcomes.push(Outcome {
                case: case.clone(),
                job,
                role,
                result,
                time: started.elapsed(),
            });
            if !again {
                break;
            }
            role = Role::Candidate;
        }
    }
    print(&report(&outcomes))?;
    if let Some(path) = &args.junit {
        let xml = junit(&outcomes)
            .to_string()
            .map_err(|e| Failure::Other(format!("JUnit report: {e}")))?;
        crate::blob::write_atomically(path, xml.as_bytes())
            .map_err(|e| Failure::Other(format!("writing {}: {e}", path.display())))?;
    }
    let failed = outcomes.iter().filter(|o| o.result.is_err()).count();
    if failed > 0 {
        return Err(Failure::CasesFailed {
            failed,
            total: outcomes.len(),
        });
    }
    Ok(())
}

/// One line per passing case, the failure indented under a failing one,
/// and the plain closing count.
fn report(outcomes: &[Outcome]) -> String {
    let mut text = String::new();
    for outcome in outcomes {
        let label = outcome.label();
        let _ = match &outcome.result {
            Ok(Pass::Decided) => writeln!(text, "ok    {label}"),
            Ok(Pass::PatchConverged) => writeln!(text, "ok    {label} (patch converges to noop)"),
            Err(failure) => writeln!(text, "FAIL  {label}: {failure}"),
        };
    }
    let failed = outcomes.iter().filter(|o| o.result.is_err()).count();
    let _ = writeln!(text, "{} passed, {failed} failed", outcomes.len() - failed);
    text
}

fn junit(outcomes: &[Outcome]) -> Report {
    let mut suite = TestSuite::new("mco-host guests test");
    for outcome in outcomes {
        let status = match &outcome.result {
            Ok(_) => TestCaseStatus::success(),
            Err(failure) => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_description(failure.to_string());
                status
            }
        };
        let mut case = TestCase::new(outcome.label(), status);
        case.set_classname(match outcome.case.job {
            CaseJob::Mcn => "mcn",
            CaseJob::BootImage => "bootImage",
        });
        case.set_time(outcome.time);
        suite.add_test_case(case);
    }
    let mut report = Report::new("mco-host guests test");
    report.add_test_suite(suite);
    report
}
