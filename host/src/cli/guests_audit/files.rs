//! `guests audit` from files: every job's input file flags (its
//! [`FileAudit::flags`]), each shown once, under `Input files (<job>)`
//! when the job alone reads it; and the paths given, checked against the
//! job audited. The files are read as `eval` reads them (YAML or JSON, one
//! object, a `List`, several documents; `-` is standard input).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use clap::{Arg, ArgMatches, Command, FromArgMatches};

use super::AuditError;
use crate::JOBS;
use mco_job::audit_files::{FileAudit, FileFlag, Files, Use};
use mco_job::jobs::Job;

/// The paths given for the input file flags of every job.
pub(in crate::cli) struct FileArgs {
    given: BTreeMap<&'static str, String>,
}

/// The flags of `job`'s audit from files; none if it has none.
fn flags(job: &dyn Job) -> &'static [FileFlag] {
    job.contract().file_audit.map_or(&[], |audit| audit.flags)
}

/// The flag naming `job`'s objects, if it is audited from files.
fn objects(job: &dyn Job) -> Option<&'static str> {
    flags(job)
        .iter()
        .find(|flag| flag.read == Use::Objects)
        .map(|flag| flag.name)
}

/// Every job's flags, each once, in the order of [`JOBS`].
fn all_flags() -> impl Iterator<Item = (&'static dyn Job, &'static FileFlag)> {
    let mut seen = Vec::new();
    JOBS.iter()
        .flat_map(|job| flags(job).iter().map(move |flag| (job, flag)))
        .filter(move |(_, flag)| {
            let first = !seen.contains(&flag.name);
            seen.push(flag.name);
            first
        })
}

/// `Input files (<job>)`, the help heading of the flags `job` alone
/// reads. Made once per job for the life of the process: clap keeps
/// headings `'static`.
fn heading(job: &dyn Job) -> &'static str {
    static HEADINGS: OnceLock<Vec<(&'static str, &'static str)>> = OnceLock::new();
    let headings = HEADINGS.get_or_init(|| {
        JOBS.iter()
            .map(|job| {
                let heading = format!("Input files ({})", job.name());
                (job.name(), &*Box::leak(heading.into_boxed_str()))
            })
            .collect()
    });
    headings
        .iter()
        .find(|(name, _)| *name == job.name())
        .map_or("Input files", |(_, heading)| heading)
}

/// The help of a flag several jobs read: its help, then what each job
/// that says reads it for (`help: what (job), …`).
fn shared_help(flag: &FileFlag) -> String {
    let uses: Vec<String> = JOBS
        .iter()
        .filter_map(|job| {
            let same = flags(job).iter().find(|f| f.name == flag.name)?;
            match same.read {
                Use::Shared(Some(what)) => Some(format!("{what} ({})", job.name())),
                _ => None,
            }
        })
        .collect();
    match uses.is_empty() {
        true => flag.help.to_owned(),
        false => format!("{}: {}", flag.help, uses.join(", ")),
    }
}

impl clap::Args for FileArgs {
    fn augment_args(mut cmd: Command) -> Command {
        for (job, flag) in all_flags() {
            let arg = Arg::new(flag.name)
                .long(flag.name)
                .value_name("FILE")
                .value_parser(clap::value_parser!(String));
            let own = |arg: Arg| arg.help(flag.help).help_heading(heading(job));
            cmd = cmd.arg(match flag.read {
                Use::Objects => flags(job)
                    .iter()
                    .filter(|other| other.read == Use::Required)
                    .fold(own(arg), |arg, other| arg.requires(other.name)),
                Use::Required | Use::Optional => {
                    own(arg).requires(objects(job).unwrap_or_default())
                }
                Use::Shared(_) => arg.help(shared_help(flag)),
            });
        }
        // `--kubeconfig` (declared before these) reads the objects the
        // files would give.
        let objects: Vec<&str> = JOBS.iter().filter_map(objects).collect();
        cmd.mut_arg("kubeconfig", |arg| arg.conflicts_with_all(objects))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for FileArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let given = all_flags()
            .filter_map(|(_, flag)| {
                let path = matches.get_one::<String>(flag.name)?;
                Some((flag.name, path.clone()))
            })
            .collect();
        Ok(FileArgs { given })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = FileArgs::from_arg_matches(matches)?;
        Ok(())
    }
}

/// How a refusal names the job whose inputs were given: `the mcn job`,
/// or `a bootImage job` for a job with an entry per key.
fn a_job(job: &dyn Job) -> String {
    match job.key() {
        None => format!("the {} job", job.name()),
        Some(_) => format!("a {} job", job.name()),
    }
}

impl FileArgs {
    /// Another job's objects are refused rather than ignored.
    pub(super) fn only_for(&self, job: &dyn Job) -> Result<(), AuditError> {
        let others = JOBS.iter().filter(|other| other.name() != job.name());
        match others
            .filter_map(|other| Some((other, objects(other)?)))
            .find(|(_, flag)| self.given.contains_key(flag))
        {
            Some((other, flag)) => Err(AuditError::Usage(format!(
                "--{flag} and its files are inputs of {}, not of {}",
                a_job(other),
                // The job audited: a single one by its bare name.
                match job.key() {
                    None => job.name().to_owned(),
                    Some(_) => a_job(job),
                }
            ))),
            None => Ok(()),
        }
    }

    /// The files given for `job`'s audit; none: its objects are read from
    /// the cluster, and a file given beside it would be silently ignored,
    /// so it is refused.
    pub(super) fn of(
        &self,
        job: &dyn Job,
    ) -> Result<Option<(&'static FileAudit, Files<'_>)>, AuditError> {
        let given = job.contract().file_audit.and_then(|audit| {
            let flag = objects(job)?;
            let path = self.given.get(flag)?;
            Some((audit, Files::new((flag, path.as_str()), &self.given)))
        });
        let stray = all_flags().find(|(_, flag)| self.given.contains_key(flag.name));
        if let (None, Some((_, flag))) = (&given, stray) {
            let objects: Vec<String> = JOBS
                .iter()
                .filter_map(|job| Some(format!("--{}", objects(job)?)))
                .collect();
            return Err(AuditError::Usage(format!(
                "--{} goes with {}; without them the cluster's objects are read",
                flag.name,
                objects.join(" or ")
            )));
        }
        Ok(given)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each job's audit from files names its objects first, and a flag
    /// several jobs read is shared by each, with one help.
    #[test]
    fn every_jobs_files_start_with_its_objects_and_shared_flags_agree() {
        for job in JOBS
            .iter()
            .filter(|job| job.contract().file_audit.is_some())
        {
            assert_eq!(flags(job).first().map(|f| f.read), Some(Use::Objects));
            for flag in flags(job) {
                for (other, same) in all_flags().filter(|(_, f)| f.name == flag.name) {
                    let shared = matches!(flag.read, Use::Shared(_));
                    assert!(
                        other.name() == job.name()
                            || (shared
                                && matches!(same.read, Use::Shared(_))
                                && same.help == flag.help),
                        "--{} of {} and {}",
                        flag.name,
                        job.name(),
                        other.name()
                    );
                }
            }
        }
    }
}
