//! `eval <job>` and `guests`: the controllers' decisions from files, and
//! a registry checked without a cluster.

use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{ArgMatches, FromArgMatches, Subcommand};
use serde_json::Value;

use super::{Failure, SandboxArgs};
use crate::JOBS;
use mco_job::jobs::{EvalCommand, GUEST_ARG, Modules, ModulesError};
use mco_registry::entries::Entry;
use mco_registry::{self, Remote, Served};

/// `eval <job>`: one subcommand for each job of [`JOBS`] that has one
/// ([`Contract::eval`](mco_job::jobs::Contract::eval)), with the matches
/// it was given.
pub(super) struct EvalJob {
    eval: &'static dyn EvalCommand,
    matches: ArgMatches,
}

impl EvalJob {
    /// Every job's `eval`, in [`JOBS`] order.
    fn all() -> impl Iterator<Item = &'static dyn EvalCommand> {
        JOBS.iter().filter_map(|job| job.contract().eval)
    }

    /// The `eval` subcommand `name`.
    fn named(name: &str) -> Option<&'static dyn EvalCommand> {
        EvalJob::all().find(|eval| eval.name() == name)
    }
}

impl FromArgMatches for EvalJob {
    fn from_arg_matches(matches: &ArgMatches) -> Result<EvalJob, clap::Error> {
        let (name, matches) = matches
            .subcommand()
            .ok_or_else(|| clap::Error::new(ErrorKind::MissingSubcommand))?;
        let eval =
            EvalJob::named(name).ok_or_else(|| clap::Error::new(ErrorKind::InvalidSubcommand))?;
        Ok(EvalJob {
            eval,
            matches: matches.clone(),
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = EvalJob::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Subcommand for EvalJob {
    fn augment_subcommands(command: clap::Command) -> clap::Command {
        EvalJob::all()
            .map(|eval| eval.command())
            .fold(command, clap::Command::subcommand)
    }

    fn augment_subcommands_for_update(command: clap::Command) -> clap::Command {
        EvalJob::augment_subcommands(command)
    }

    fn has_subcommand(name: &str) -> bool {
        EvalJob::named(name).is_some()
    }
}

/// The modules `eval` runs: `--guest FILE` under the host's limits, else
/// the registry's (digest pin and limits included, OCI modules pulled as
/// `mco-host guests` pulls them; candidates are not run).
struct EvalModules<'a> {
    sandbox: &'a SandboxArgs,
    guest: Option<PathBuf>,
    loaded: Option<Served>,
}

impl Modules for EvalModules<'_> {
    fn served(&mut self, job: &mco_registry::EntryName) -> Result<Option<&Served>, ModulesError> {
        let Some((entry, remote)) = eval_entry(self.sandbox, self.guest.take(), job)? else {
            return Ok(None);
        };
        let runtime = self.sandbox.runtime().map_err(Failure::from)?;
        let fetched = mco_registry::fetch(job, &entry, &remote).map_err(Failure::from)?;
        let kind = JOBS
            .of(job)
            .ok_or_else(|| Failure::Other(format!("{job}: not a job of this host")))?;
        let served = (kind.contract().load_unchecked)(&runtime, &fetched).map_err(Failure::from)?;
        Ok(Some(self.loaded.insert(served)))
    }
}

/// `eval <job>`: the job's decision from the files its arguments name.
pub(super) fn eval(sandbox: &SandboxArgs, eval: &EvalJob) -> Result<Value, Failure> {
    let mut modules = EvalModules {
        sandbox,
        guest: eval.matches.get_one::<PathBuf>(GUEST_ARG).cloned(),
        loaded: None,
    };
    Ok(eval
        .eval
        .eval(&eval.matches, &mut modules, &crate::FEATURE_GATES)?)
}

/// The entry `eval` runs and what it is read from: `--guest FILE` under
/// the host's limits, else the registry's. `None`: the registry names no
/// module for `job`.
fn eval_entry(
    sandbox: &SandboxArgs,
    guest: Option<PathBuf>,
    job: &mco_registry::EntryName,
) -> Result<Option<(Entry, Remote)>, Failure> {
    if let Some(path) = guest {
        return Ok(Some((Entry::path(path), Remote::default())));
    }
    let registry = sandbox.registry()?;
    let Some(entry) = registry.get(job).cloned() else {
        return Ok(None);
    };
    let remote = super::offline::pull_offline(sandbox, &registry)?;
    Ok(Some((entry, remote)))
}

/// `mco-host guests`: the registry resolved and checked as `run` would at
/// start, so a registry can be tried before it is deployed.
pub(super) fn check_guests(sandbox: &SandboxArgs) -> Result<Value, Failure> {
    let runtime = sandbox.runtime()?;
    let location = sandbox.location();
    let registry = mco_registry::read_local(&location, &JOBS)?;
    let remote = super::offline::pull_offline(sandbox, &registry)?;
    let (guests, _) = mco_registry::initial(&runtime, &JOBS, &registry, &remote)?;
    guests.with_status(|status| status.registry = location.to_string());
    serde_json::to_value(guests.status()).map_err(|e| Failure::Other(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `eval` has one subcommand for each job of [`JOBS`] that has one,
    /// in its order, and finds each job by it.
    #[test]
    fn eval_has_a_subcommand_for_every_job() {
        let cli = <super::super::Cli as clap::CommandFactory>::command();
        let eval = cli
            .find_subcommand("eval")
            .unwrap_or_else(|| panic!("no eval subcommand"));
        let shown: Vec<&str> = eval.get_subcommands().map(|c| c.get_name()).collect();
        assert_eq!(shown, ["mcn", "bootimage"]);
        let listed: Vec<&str> = EvalJob::all().map(|eval| eval.name()).collect();
        let found: Vec<&str> = shown
            .iter()
            .filter_map(|name| EvalJob::named(name))
            .map(|eval| eval.name())
            .collect();
        assert_eq!((&found, &listed), (&shown, &shown));
        assert_eq!(listed.len(), JOBS.iter().count());
    }
}
