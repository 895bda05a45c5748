//! What the command line and `run` need of a job, beyond what the registry
//! needs ([`JobKind`]): each job implements [`Job`] in its own crate, and
//! `mco_host::JOBS` lists the jobs once, for the registry and for
//! every command that loops over them (`eval`, the case runner of
//! `guests test` and the golden tests, `guests bench` and `guests new`).

pub mod bench;
pub mod scaffold;

use std::ops::Deref;
use std::path::Path;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::audit_files::FileAudit;
use crate::case_check::{CaseFailure, Pass};
use crate::preflight::Checks;
use crate::run_context::{Runner, RunnerError};
use crate::status_section::StatusSection;
use bench::{BenchCaseError, BenchModule, Timed};
use mco_registry::{self, Fetched, JobKind, Served, Slot};
use mco_runtime::{GuestError, LoadError, Runtime};
use scaffold::Scaffold;

/// What the command line needs of a job.
pub trait Job: JobKind {
    /// The WIT world a module of this job is built for (it exports
    /// [`JobKind::interface`]), as `guests inspect` names it.
    fn world(&self) -> &'static str;

    /// The object files that make a case folder this job's (beside
    /// `expected.json`, see `cases.rs`); none: the job has no cases.
    fn case_files(&self) -> &'static [&'static str] {
        &[]
    }

    /// Loads `fetched`'s modules with every check `run` makes but the
    /// smoke evaluation, so a case or `eval` runs any module that links.
    fn load_unchecked(&self, runtime: &Runtime, fetched: &Fetched) -> Result<Served, LoadError>;

    /// Checks the case in `dir` against `role`'s module of this job's
    /// entry, from `modules`: the entry that decided (none: the host rules
    /// decided alone, or no module is named for it) and the outcome.
    fn check_case(
        &self,
        dir: &Path,
        modules: &mut dyn Modules,
        role: Role,
    ) -> (Option<mco_registry::EntryName>, Result<Pass, CaseFailure>);

    /// `eval <name>`: the subcommand, with the job's arguments (its
    /// `#[derive(Args)]` struct); none: the job has no `eval`.
    fn eval_command(&self) -> Option<clap::Command> {
        None
    }

    /// `eval <name>` on the subcommand's `matches`: the decision as the
    /// eval contract prints it.
    fn eval(
        &self,
        matches: &clap::ArgMatches,
        modules: &mut dyn Modules,
    ) -> Result<serde_json::Value, EvalError> {
        let _ = (matches, modules);
        Err(EvalError::NoEval(self.name()))
    }

    // `guests bench` and `guests new`: a job's side of measuring a module
    // on its cases and of making a guest crate for it.

    /// `guests bench`: times `runs` decisions of the case in `dir` with
    /// `module` as the guest of the entry the case reaches; `Ok(None)`:
    /// the host rules decide the case alone. By default the job has
    /// nothing to bench.
    fn bench_case(
        &self,
        dir: &Path,
        module: &mut BenchModule,
        runs: u32,
    ) -> Result<Option<Timed>, BenchCaseError> {
        let _ = (dir, module, runs);
        Err(BenchCaseError::NoBench(self.name()))
    }

    /// `guests new --job <name>`: the job's crate template; none: the job
    /// has no `guests new`.
    fn scaffold(&self) -> Option<&'static dyn Scaffold> {
        None
    }

    /// `run`: the job's flags added to the subcommand (its
    /// `#[derive(Args)]` struct's `augment_args`); by default none.
    fn run_args(&self, command: clap::Command) -> clap::Command {
        command
    }

    /// `run`, before the host connects: registers the job's series in
    /// `registry` (prefixed already) whether the job starts or not, so
    /// `/metrics` describes the same families on every replica, and reads
    /// its flags from `matches` (the `run` subcommand's, with every job's).
    /// None: nothing to start.
    fn runner(
        &self,
        matches: &clap::ArgMatches,
        registry: &mut prometheus_client::registry::Registry,
    ) -> Result<Option<Box<dyn Runner>>, RunnerError> {
        let _ = (matches, registry);
        Ok(None)
    }

    /// `crds`: the CustomResourceDefinitions the job writes to that the
    /// host ships, each with the path under `deploy/` that keeps it.
    fn crds(&self) -> Vec<(&'static str, CustomResourceDefinition)> {
        Vec::new()
    }

    /// `status`: the job's section of the view (what it reads, its part
    /// of the summary, its text and JSON), which the view shows after the
    /// sections of the jobs listed before it; none: the job shows nothing
    /// there.
    fn status(&self) -> Option<&'static dyn StatusSection> {
        None
    }

    /// `status`: the job's flags added to the subcommand (its
    /// `#[derive(Args)]` struct's `augment_args`), after the view's own,
    /// which its section reads from the subcommand's matches
    /// ([`Flags`](crate::status_section::Flags)); by default none.
    fn status_args(&self, command: clap::Command) -> clap::Command {
        command
    }

    /// `preflight`: what this job checks of a cluster before the host is
    /// installed there, for the host's ServiceAccount `user` (its
    /// `preflight.rs`); none: it has nothing to check, and `preflight` does
    /// not list it.
    fn preflight<'a>(&'a self, client: &'a kube::Client, user: &'a str) -> Option<Checks<'a>> {
        let _ = (client, user);
        None
    }

    /// `guests audit --job <this job>` from files: the flags naming them
    /// and the audit of what they hold (its `audit.rs`); none: the job is
    /// audited on the cluster only ([`JobKind::audit`]).
    fn file_audit(&self) -> Option<&'static FileAudit> {
        None
    }

    /// The feature gates the job's decisions follow, each with its value in
    /// the Default feature set of the release the project models
    /// (openshift/api `features/features.go`): the host follows every
    /// job's, reports them (`mco_feature_gate`) and hands them to guests.
    fn feature_gates(&self) -> &'static [(&'static str, bool)] {
        &[]
    }
}

/// The argument id of an `eval` subcommand's `--guest FILE`, the module
/// that runs instead of the registry's: `eval` gives it to the job's
/// [`Modules`].
pub const GUEST_ARG: &str = "guest";

/// Where a command finds the modules of an entry: loaded on first use,
/// with [`Job::load_unchecked`].
pub trait Modules {
    /// The modules of `job`'s entry; `None` when none is named for it.
    fn served(&mut self, job: &mco_registry::EntryName) -> Result<Option<&Served>, ModulesError>;
}

/// Why the modules of an entry could not be had: the command's own error,
/// which it gets back from the job unchanged.
pub type ModulesError = Box<dyn std::error::Error + Send + Sync>;

/// Which of an entry's modules runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Active,
    Candidate,
}

impl Role {
    /// The role's module of `slot`; the active one when it has no
    /// candidate.
    pub fn pick<G>(self, slot: &Slot<G>) -> &G {
        match (self, &slot.candidate) {
            (Role::Candidate, Some(candidate)) => candidate,
            _ => &slot.active,
        }
    }
}

/// Why `eval <job>` failed, as its command line maps it to the exit
/// statuses of the eval contract.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// An input file is missing or malformed (exit status 2).
    #[error(transparent)]
    Input(Box<dyn std::error::Error + Send + Sync>),
    /// The guest failed (exit status 3).
    #[error(transparent)]
    Guest(#[from] GuestError),
    /// What [`Modules::served`] returned.
    #[error(transparent)]
    Modules(ModulesError),
    /// Anything else (exit status 1).
    #[error("{0}")]
    Other(String),
    #[error("job {0} has no eval")]
    NoEval(&'static str),
}

/// The jobs of the host, each once: the registry's view of them is the
/// same list ([`Deref`]).
pub struct Jobs {
    jobs: &'static [&'static dyn Job],
    registry: mco_registry::Jobs,
}

impl Jobs {
    /// Use [`jobs!`], which lists each job once for both.
    pub const fn new(jobs: &'static [&'static dyn Job], registry: mco_registry::Jobs) -> Jobs {
        Jobs { jobs, registry }
    }

    pub fn iter(&self) -> impl Iterator<Item = &'static dyn Job> + '_ {
        self.jobs.iter().copied()
    }

    /// The job of a registry entry.
    pub fn of(&self, entry: &mco_registry::EntryName) -> Option<&'static dyn Job> {
        self.iter().find(|job| entry.is(*job))
    }
}

impl Deref for Jobs {
    type Target = mco_registry::Jobs;

    fn deref(&self) -> &mco_registry::Jobs {
        &self.registry
    }
}

/// The [`Jobs`] of the given job values, each named once.
#[macro_export]
macro_rules! jobs {
    ($($job:expr),* $(,)?) => {
        $crate::jobs::Jobs::new(
            &[$(&$job),*],
            ::mco_registry::Jobs::new(&[$(&$job),*]),
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use mco_registry::audit::cluster::ReadError;
    use mco_registry::{Audited, Fetched};

    /// A third job as its folder would write it: what the registry needs,
    /// and for the command line only what it cannot default.
    struct Skeleton;

    /// What the skeleton's canary selects: objects by name.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct SkeletonCanary {
        /// The skeleton job: these objects.
        #[allow(dead_code)]
        objects: Vec<String>,
    }

    impl JobKind for Skeleton {
        fn name(&self) -> &'static str {
            "skeleton"
        }

        fn key(&self) -> Option<&'static str> {
            None
        }

        fn interface(&self) -> &'static str {
            "mco:skeleton/none"
        }

        fn installed(&self) -> Vec<(Option<&'static str>, &'static str)> {
            vec![(None, "skeleton.wasm")]
        }

        fn required(&self) -> Option<&'static str> {
            None
        }

        fn on_failure(&self) -> &'static str {
            "nothing"
        }

        fn canary(&self) -> mco_registry::canary::CanaryField {
            mco_registry::canary::CanaryField::of::<SkeletonCanary>("objects", "the skeleton job")
        }

        fn load(
            &self,
            _: &Runtime,
            _: &mco_registry::EntryName,
            fetched: &Fetched,
        ) -> Result<Served, LoadError> {
            Err(LoadError::Smoke {
                module: fetched.entry.module.source.to_string(),
                detail: "the skeleton loads no module".into(),
            })
        }

        fn audit<'a>(
            &'a self,
            _: &'a kube::Client,
            _: &'a Served,
            _: &'a mco_registry::EntryName,
            _: usize,
        ) -> Audited<'a> {
            Box::pin(async { Err(ReadError::Cluster("the skeleton reads no cluster".into())) })
        }
    }

    impl Job for Skeleton {
        fn world(&self) -> &'static str {
            "skeleton"
        }

        fn load_unchecked(
            &self,
            runtime: &Runtime,
            fetched: &Fetched,
        ) -> Result<Served, LoadError> {
            self.load(
                runtime,
                &mco_registry::EntryName::single(&Skeleton),
                fetched,
            )
        }

        fn check_case(
            &self,
            _: &Path,
            _: &mut dyn Modules,
            _: Role,
        ) -> (Option<mco_registry::EntryName>, Result<Pass, CaseFailure>) {
            (None, Ok(Pass::Decided))
        }
    }

    static ONE: Jobs = crate::jobs![Skeleton];
    static NONE: Jobs = crate::jobs![];

    /// One line lists a job for the registry and the command line alike
    /// (`mco_host::JOBS` is held to the same in its crate).
    #[test]
    fn a_job_listed_once_is_a_job_of_the_registry_and_the_command_line() {
        let listed: Vec<&str> = ONE.iter().map(|job| job.name()).collect();
        let registered: Vec<&str> = ONE.deref().iter().map(|kind| kind.name()).collect();
        assert_eq!((listed, registered), (vec!["skeleton"], vec!["skeleton"]));
        let skeleton = mco_registry::EntryName::single(&Skeleton);
        assert_eq!(ONE.of(&skeleton).map(|job| job.name()), Some("skeleton"));
        assert!(NONE.of(&skeleton).is_none());
        assert_eq!(
            ONE.named("skeleton").map(|kind| kind.name()),
            Some("skeleton")
        );
        assert!(Skeleton.eval_command().is_none() && Skeleton.case_files().is_empty());
        assert!(Skeleton.scaffold().is_none() && Skeleton.status().is_none());
        assert!(Skeleton.file_audit().is_none() && Skeleton.feature_gates().is_empty());
        let runtime = Runtime::new(Default::default()).unwrap_or_else(|e| panic!("{e}"));
        let mut module = BenchModule::new("skeleton.wasm".into(), Vec::new(), runtime);
        assert!(matches!(
            Skeleton.bench_case(Path::new("."), &mut module, 1),
            Err(BenchCaseError::NoBench("skeleton"))
        ));
    }

    /// A job without a `run` side adds no flag to `run`, registers no
    /// series, starts nothing and ships no CRD.
    #[test]
    fn a_job_without_a_run_side_adds_no_flag_and_starts_nothing() {
        let run = Skeleton.run_args(clap::Command::new("run"));
        assert_eq!(run.get_arguments().count(), 0);
        let matches = run
            .try_get_matches_from(["run"])
            .unwrap_or_else(|e| panic!("{e}"));
        let mut registry = prometheus_client::registry::Registry::default();
        let runner = Skeleton
            .runner(&matches, &mut registry)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(runner.is_none());
        assert!(!format!("{registry:?}").contains("Descriptor"));
        assert!(Skeleton.crds().is_empty());
    }

    /// A job with nothing to check before an install is left out of
    /// `preflight`.
    #[tokio::test]
    async fn the_skeleton_has_nothing_to_check_before_an_install() {
        let url = "http://127.0.0.1:9"
            .parse()
            .unwrap_or_else(|e| panic!("{e}"));
        let client =
            kube::Client::try_from(kube::Config::new(url)).unwrap_or_else(|e| panic!("{e}"));
        assert!(Skeleton.preflight(&client, "nobody").is_none());
    }

    /// A job without a section of `status` adds no flag to it.
    #[test]
    fn a_job_without_a_status_section_adds_no_status_flag() {
        let status = Skeleton.status_args(clap::Command::new("status"));
        assert_eq!(status.get_arguments().count(), 0);
        assert!(Skeleton.status().is_none());
    }
}
