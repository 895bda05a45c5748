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

use super::{Failure, SandboxArgs, print};
use crate::JOBS;
use crate::cases::{self, Case, CaseFailure, Pass};
use mco_job::jobs::{Modules, ModulesError, Role};
use mco_registry::entries::Entry;
use mco_registry::table::Registry;
use mco_registry::{self, EntryName, Remote, Served};
use mco_runtime::Runtime;

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

/// One case run against one module.
struct Outcome {
    case: Case,
    /// The entry that decided (none: the host rules decided alone, or the
    /// registry names no guest for the platform).
    job: Option<EntryName>,
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

/// Modules loaded on first use, one slot per entry (a load error is
/// kept too, and fails every case of that entry).
struct Guests {
    runtime: Runtime,
    source: Source,
    slots: BTreeMap<EntryName, Result<Served, String>>,
}

impl Modules for Guests {
    fn served(&mut self, job: &EntryName) -> Result<Option<&Served>, ModulesError> {
        let Some(entry) = (self.source.guest.as_ref()).or_else(|| self.source.registry.get(job))
        else {
            return Ok(None);
        };
        let (runtime, remote) = (&self.runtime, &self.source.remote);
        let served = self.slots.entry(job.clone()).or_insert_with(|| {
            let kind = JOBS
                .of(job)
                .ok_or_else(|| format!("{job}: not a job of this host"))?;
            let fetched = mco_registry::fetch(job, entry, remote).map_err(|e| e.to_string())?;
            (kind.contract().load_unchecked)(runtime, &fetched).map_err(|e| e.to_string())
        });
        match served {
            Ok(served) => Ok(Some(served)),
            Err(e) => Err(e.clone().into()),
        }
    }
}

impl Guests {
    /// The case against the given role's module of its job; the job that
    /// decided is returned beside it, so its candidate can run next.
    fn run(&mut self, case: &Case, role: Role) -> (Option<EntryName>, Result<Pass, CaseFailure>) {
        let _span = info_span!("case", case = %case.dir.display()).entered();
        (case.cases.check)(&case.dir, self, role, &crate::FEATURE_GATES)
    }

    fn has_candidate(&self, job: &EntryName) -> bool {
        matches!(self.slots.get(job), Some(Ok(served)) if served.candidate().is_some())
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
        slots: BTreeMap::new(),
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
        mco_registry_formats::blob::write_atomically(path, xml.as_bytes())
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
        case.set_classname(outcome.case.job.name());
        case.set_time(outcome.time);
        suite.add_test_case(case);
    }
    let mut report = Report::new("mco-host guests test");
    report.add_test_suite(suite);
    report
}
