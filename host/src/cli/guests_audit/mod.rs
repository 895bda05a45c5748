//! `mco-host guests audit`: what a candidate module would decide
//! differently from the active one, over every object of its job at once,
//! from files (`files`, each job's `FileAudit`) or the cluster's current
//! objects (the job's `JobKind::audit`, as MachineConfigGuest `spec.audit`
//! runs it). The two modules come from the registry (an entry and its
//! `candidate`, or `--guest` in its candidate's place) or from files
//! (`--active`), loaded with every check `eval` makes; each job's folder
//! decides and keys the objects (its `audit.rs`), `mco_registry::audit`
//! compares and counts, and `render` draws the report as a table.

mod files;
mod render;

use std::path::PathBuf;

use clap::Args;

use super::{Failure, SandboxArgs, print};
use crate::JOBS;
use mco_job::audit_files::FilesError;
use mco_job::manifests::InputError;
use mco_registry::audit::cluster::ReadError;
use mco_registry::audit::{self, Module, Report};
use mco_registry::entries::{self, Entry};
use mco_registry::{EntryName, Remote, Served};

#[derive(Args)]
pub(super) struct AuditArgs {
    /// The registry entry audited: `mcn` or `bootImage.<Platform>` (the
    /// Infrastructure's platform type: `AWS`, `GCP`, `Azure`, …).
    #[arg(long, value_name = "JOB")]
    job: String,
    /// The candidate module (default: the registry entry's `candidate`).
    #[arg(long, value_name = "FILE")]
    guest: Option<PathBuf>,
    /// The active module, instead of the registry entry's.
    #[arg(long, value_name = "FILE", requires = "guest")]
    active: Option<PathBuf>,
    /// Read the objects from this cluster (default without input files:
    /// the in-cluster config, or $KUBECONFIG). Read-only: lists and gets.
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    #[command(flatten)]
    files: files::FileArgs,
    /// Differences (and failures) shown, the first by object name.
    #[arg(long, value_name = "N", default_value_t = audit::SAMPLE_LIMIT)]
    sample: usize,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Why an audit could not start.
#[derive(Debug, thiserror::Error)]
pub(super) enum AuditError {
    #[error("--job {given}: not a job (give {jobs})")]
    Job { given: String, jobs: String },
    #[error("the registry has no entry {0}")]
    NoEntry(String),
    #[error("registry entry {0} has no candidate; give one with --guest FILE")]
    NoCandidate(String),
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Connect(#[from] crate::cli::ConnectError),
    #[error("reading {what} from the cluster: {source}")]
    Read {
        what: &'static str,
        #[source]
        source: kube::Error,
    },
}

impl From<ReadError> for AuditError {
    fn from(err: ReadError) -> AuditError {
        match err {
            ReadError::Read { what, source } => AuditError::Read { what, source },
            ReadError::Cluster(message) => AuditError::Usage(message),
            ReadError::NoCandidate(job) => AuditError::NoCandidate(job),
        }
    }
}

impl From<FilesError> for AuditError {
    fn from(err: FilesError) -> AuditError {
        match err {
            FilesError::Input(e) => AuditError::Input(e),
            FilesError::Read(e) => AuditError::from(e),
            FilesError::Missing { .. } => AuditError::Usage(err.to_string()),
        }
    }
}

impl AuditError {
    /// 2 for what the command was given, 1 for a cluster it cannot read.
    pub(super) fn exit_code(&self) -> u8 {
        match self {
            AuditError::Connect(_) | AuditError::Read { .. } => 1,
            _ => 2,
        }
    }
}

pub(super) fn run(sandbox: &SandboxArgs, args: AuditArgs) -> Result<(), Failure> {
    let job = parse_job(&args.job)?;
    let kind = JOBS.of(&job).ok_or_else(|| not_a_job(&args.job))?;
    args.files.only_for(kind)?;
    let runtime = sandbox.runtime()?;
    let served = modules(sandbox, &args, &job, kind, &runtime)?;
    let (active, _) = served.active();
    let candidate = served
        .candidate()
        .ok_or_else(|| AuditError::NoCandidate(job.to_string()))?;
    let audit = match args.files.of(kind)? {
        Some((from_files, files)) => {
            (from_files.audit)(&files, &served, &job, args.sample, &crate::FEATURE_GATES)
                .map_err(AuditError::from)?
        }
        None => on_cluster(args.kubeconfig.as_deref(), async |client| {
            let gates = &crate::FEATURE_GATES;
            job.kind()
                .audit(client, &served, &job, args.sample, gates)
                .await
        })?,
    };
    let report = audit.report(job.to_string(), Module::of(active), Module::of(candidate));
    output(&report, args.json)
}

fn output(report: &Report, json: bool) -> Result<(), Failure> {
    let text = if json {
        serde_json::to_string_pretty(report).map_err(|e| Failure::Other(e.to_string()))? + "\n"
    } else {
        render::table(report)
    };
    print(&text)
}

/// Runs `audit` against the cluster of `kubeconfig` (default: in-cluster
/// config or $KUBECONFIG).
fn on_cluster<T>(
    kubeconfig: Option<&std::path::Path>,
    audit: impl AsyncFnOnce(&kube::Client) -> Result<T, ReadError>,
) -> Result<T, Failure> {
    super::offline::runtime()?.block_on(async {
        let client = crate::cli::connect(kubeconfig)
            .await
            .map_err(AuditError::from)?;
        Ok(audit(&client).await.map_err(AuditError::from)?)
    })
}

/// A job of [`JOBS`] by its name: `mcn`, or `bootImage.<Platform>` with
/// a platform named (a keyed job needs its key, a single one has none).
fn parse_job(text: &str) -> Result<EntryName, AuditError> {
    let (name, key) = match text.split_once('.') {
        None => (text, None),
        Some((name, key)) => (name, Some(key)),
    };
    let kind = JOBS.named(name).ok_or_else(|| not_a_job(text))?;
    match (kind.key(), key) {
        (None, None) => Ok(EntryName::single(kind)),
        (Some(_), Some(key)) if !key.is_empty() => Ok(EntryName::keyed(kind, key)),
        _ => Err(not_a_job(text)),
    }
}

/// `--job` naming no job, with the jobs there are: each by its name, or
/// as `<name>.<Platform>` for a job with an entry per platform.
fn not_a_job(text: &str) -> AuditError {
    let jobs: Vec<String> = JOBS
        .iter()
        .map(|kind| match kind.key() {
            None => kind.name().to_owned(),
            Some(_) => format!("{}.<Platform>", kind.name()),
        })
        .collect();
    AuditError::Job {
        given: text.to_owned(),
        jobs: jobs.join(" or "),
    }
}

/// The two modules, as one registry entry: `--active` and `--guest`; or
/// the registry's entry, with `--guest` as its candidate if given. Loaded
/// under the entry's limits with every check `eval` makes.
fn modules(
    sandbox: &SandboxArgs,
    args: &AuditArgs,
    job: &EntryName,
    kind: &dyn mco_job::jobs::Job,
    runtime: &mco_runtime::Runtime,
) -> Result<Served, Failure> {
    let module = |path: &PathBuf| entries::Module {
        source: entries::Source::Path(path.clone()),
        sha256: None,
    };
    let (entry, remote) = match (&args.active, &args.guest) {
        (Some(active), Some(guest)) => {
            let mut entry = Entry::path(active.clone());
            entry.candidate = Some(module(guest));
            (entry, Remote::default())
        }
        (_, guest) => {
            let registry = sandbox.registry()?;
            let mut entry = registry
                .get(job)
                .cloned()
                .ok_or_else(|| AuditError::NoEntry(job.to_string()))?;
            if let Some(guest) = guest {
                entry.candidate = Some(module(guest));
            }
            if entry.candidate.is_none() {
                return Err(AuditError::NoCandidate(job.to_string()).into());
            }
            let remote = super::offline::pull_offline(sandbox, &registry)?;
            (entry, remote)
        }
    };
    let fetched = mco_registry::fetch(job, &entry, &remote)?;
    Ok((kind.contract().load_unchecked)(runtime, &fetched)?)
}
