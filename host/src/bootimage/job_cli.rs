//! How the boot image job describes itself to the command line
//! ([`Job`](mco_job::jobs::Job)): its world, its case folders and their
//! check (`case.rs`), its `eval` subcommand (`eval_command.rs`), what
//! `guests bench` times of a case (`bench.rs`), its `guests new` crate
//! template (`scaffold.rs`), its `run` flags and controller
//! (`run_command.rs`), its section of `status` (`status/`), its
//! `preflight` checks (`preflight.rs`) and its audit from files
//! (`audit.rs`).

use std::convert::Infallible;
use std::path::Path;

use clap::Args as _;

use super::BootImageGuest;
use super::eval_command::BootImageArgs;
use super::job::BootImage;
use mco_job::audit_files::FileAudit;
use mco_job::case_check::{CaseFailure, Pass};
use mco_job::jobs::bench::{BenchCaseError, BenchModule, Timed};
use mco_job::jobs::scaffold::Scaffold;
use mco_job::jobs::{EvalError, Modules, Role};
use mco_job::preflight::Checks;
use mco_job::run_context::{Runner, RunnerError};
use mco_registry::{EntryName, Fetched, Served};
use mco_runtime::{LoadError, Runtime};

impl mco_job::jobs::Job for BootImage {
    fn world(&self) -> &'static str {
        "boot-image-selector"
    }

    fn case_files(&self) -> &'static [&'static str] {
        super::case::FILES
    }

    fn load_unchecked(&self, runtime: &Runtime, fetched: &Fetched) -> Result<Served, LoadError> {
        Served::load(runtime, fetched, |_: &BootImageGuest| {
            Ok::<_, Infallible>(())
        })
    }

    fn check_case(
        &self,
        dir: &Path,
        modules: &mut dyn Modules,
        role: Role,
    ) -> (Option<EntryName>, Result<Pass, CaseFailure>) {
        super::case::check_with(dir, modules, role)
    }

    fn eval_command(&self) -> Option<clap::Command> {
        Some(BootImageArgs::augment_args(clap::Command::new("bootimage")))
    }

    fn eval(
        &self,
        matches: &clap::ArgMatches,
        modules: &mut dyn Modules,
    ) -> Result<serde_json::Value, EvalError> {
        super::eval_command::eval(matches, modules)
    }

    fn bench_case(
        &self,
        dir: &Path,
        module: &mut BenchModule,
        runs: u32,
    ) -> Result<Option<Timed>, BenchCaseError> {
        super::bench::case(dir, module, runs)
    }

    fn scaffold(&self) -> Option<&'static dyn Scaffold> {
        Some(&super::scaffold::BootImageScaffold)
    }

    fn run_args(&self, command: clap::Command) -> clap::Command {
        super::run_command::BootImageRunArgs::augment_args(command)
    }

    fn runner(
        &self,
        matches: &clap::ArgMatches,
        registry: &mut prometheus_client::registry::Registry,
    ) -> Result<Option<Box<dyn Runner>>, RunnerError> {
        super::run_command::runner(matches, registry)
    }

    fn status(&self) -> Option<&'static dyn mco_job::status_section::StatusSection> {
        Some(&super::status::Section)
    }

    fn status_args(&self, command: clap::Command) -> clap::Command {
        super::status::RecordFlag::augment_args(command)
    }

    fn preflight<'a>(&'a self, client: &'a kube::Client, user: &'a str) -> Option<Checks<'a>> {
        Some(Box::pin(super::preflight::checks(client, user)))
    }

    fn file_audit(&self) -> Option<&'static FileAudit> {
        Some(&super::audit::FROM_FILES)
    }

    fn feature_gates(&self) -> &'static [(&'static str, bool)] {
        super::FEATURE_GATES
    }
}
