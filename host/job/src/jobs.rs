//! What the command line and `run` need of a job, beyond what the registry
//! needs ([`JobKind`]): each job implements [`Job`] in its own crate by
//! naming its [`Contract`], and `mco_host::JOBS` lists the jobs once, for
//! the registry and for every command that loops over them (`eval`, the
//! case runner of `guests test` and the golden tests, `guests bench` and
//! `guests new`).

pub mod bench;
pub mod contract;
pub mod scaffold;

use std::ops::Deref;

pub use contract::{
    Cases, Contract, Eval, EvalCommand, Preflight, Run, RunCommand, Status, StatusCommand,
    unchecked,
};
use mco_registry::{self, JobKind, Served, Slot};
use mco_runtime::GuestError;

/// What the command line needs of a job: its contract, constant.
pub trait Job: JobKind {
    fn contract(&self) -> &'static Contract;
}

/// The argument id of an `eval` subcommand's `--guest FILE`, the module
/// that runs instead of the registry's: `eval` gives it to the job's
/// [`Modules`].
pub const GUEST_ARG: &str = "guest";

/// Where a command finds the modules of an entry: loaded on first use,
/// with [`Contract::load_unchecked`].
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
    use crate::run_context::{Runner, RunnerError};
    use mco_registry::audit::cluster::ReadError;
    use mco_registry::{Audited, Fetched};
    use mco_runtime::{LoadError, Runtime};

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

        fn serves(&self) -> &'static str {
            "nothing"
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
            _: &'a crate::feature_gates::Modelled,
        ) -> Audited<'a> {
            Box::pin(async { Err(ReadError::Cluster("the skeleton reads no cluster".into())) })
        }
    }

    impl Job for Skeleton {
        fn contract(&self) -> &'static Contract {
            &SKELETON
        }
    }

    /// The skeleton's contract: its description, and no capability.
    static SKELETON: Contract = Contract::new("skeleton", load_unchecked);

    fn load_unchecked(runtime: &Runtime, fetched: &Fetched) -> Result<Served, LoadError> {
        Skeleton.load(
            runtime,
            &mco_registry::EntryName::single(&Skeleton),
            fetched,
        )
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
    }

    /// A skeleton job has what it declares and nothing else: no cases, no
    /// `eval`, no flag or runner of `run`, no CRD, no section or flag of
    /// `status`, nothing to check before an install, no audit from files,
    /// no crate template and no feature gate.
    #[test]
    fn a_skeleton_job_has_no_capability_it_does_not_declare() {
        let contract = Skeleton.contract();
        assert_eq!(contract.world, "skeleton");
        assert!(contract.feature_gates.is_empty());
        assert!(contract.cases.is_none() && contract.eval.is_none());
        assert!(contract.run.is_none() && contract.crds.is_none());
        assert!(contract.status.is_none() && contract.preflight.is_none());
        assert!(contract.file_audit.is_none() && contract.scaffold.is_none());
    }

    /// The flags of a test capability: one, with a default.
    #[derive(clap::Args)]
    struct Flag {
        #[arg(long, default_value = "1")]
        level: u32,
    }

    fn eval_level(
        flag: Flag,
        _: &mut dyn Modules,
        gates: &crate::feature_gates::Modelled,
    ) -> Result<serde_json::Value, EvalError> {
        Ok(serde_json::json!([flag.level, gates.len()]))
    }

    struct NoModules;

    impl Modules for NoModules {
        fn served(&mut self, _: &mco_registry::EntryName) -> Result<Option<&Served>, ModulesError> {
            Ok(None)
        }
    }

    /// `eval`'s subcommand is built from the capability's arguments and
    /// the action gets them parsed, with the gates given.
    #[test]
    fn an_eval_parses_the_arguments_it_adds() {
        let eval: &dyn EvalCommand = &Eval {
            name: "level",
            action: eval_level,
        };
        let command = eval.command();
        assert_eq!((command.get_name(), eval.name()), ("level", "level"));
        let matches = command
            .try_get_matches_from(["level", "--level", "7"])
            .unwrap_or_else(|e| panic!("{e}"));
        let decided = eval.eval(&matches, &mut NoModules, &[("Gate", true)]);
        assert_eq!(
            decided.unwrap_or_else(|e| panic!("{e}")),
            serde_json::json!([7, 1])
        );
    }

    fn start_nothing(
        flag: Flag,
        registry: &mut prometheus_client::registry::Registry,
    ) -> Result<Option<Box<dyn Runner>>, RunnerError> {
        let level = prometheus_client::metrics::gauge::Gauge::<i64>::default();
        level.set(flag.level.into());
        registry.register("level", "The flag given", level);
        Ok(None)
    }

    /// `run` gets the capability's flags, and its action reads them (here
    /// into a series) from the matches of `run`, every job's flags among
    /// them.
    #[test]
    fn a_run_reads_the_flags_it_adds() {
        let run: &dyn RunCommand = &Run {
            action: start_nothing,
        };
        let command = run.args(clap::Command::new("run").arg(clap::arg!(--other)));
        let names: Vec<&str> = command
            .get_arguments()
            .map(|a| a.get_id().as_str())
            .collect();
        assert_eq!(names, ["other", "level"]);
        let matches = command
            .try_get_matches_from(["run", "--level", "3", "--other"])
            .unwrap_or_else(|e| panic!("{e}"));
        let mut registry = prometheus_client::registry::Registry::default();
        let runner = run.runner(&matches, &mut registry);
        assert!(runner.unwrap_or_else(|e| panic!("{e}")).is_none());
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(text.contains("level 3"), "{text}");
    }
}
