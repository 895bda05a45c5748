//! `mco-host guests audit`: what a candidate module would decide
//! differently from the active one, over every object of its job at once,
//! from files (`files`) or the cluster's current objects (`cluster`). The
//! two modules come from the registry (an entry and its `candidate`, or
//! `--guest` in its candidate's place) or from files (`--active`), loaded
//! with every check `eval` makes; each job's folder decides and keys the
//! objects (its `audit.rs`), `mco_registry::audit` compares and counts, and
//! `render` draws the report as a table.

mod files;
mod render;

use std::path::PathBuf;

use clap::Args;

use super::eval::load_slot;
use super::{Failure, SandboxArgs, host_stream_arch, print};
use crate::runtime::{Guest, World};
use crate::{JOBS, bootimage, mcn};
use mco_registry::audit::cluster::ReadError;
use mco_registry::audit::{self, Module, Report};
use mco_registry::entries::{self, Entry};
use mco_registry::slot::Slot;
use mco_registry::{Job, Remote};

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
    #[arg(long, value_name = "FILE", conflicts_with_all = ["nodes", "machinesets"])]
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
    #[error("--job {0}: not a job (give mcn or bootImage.<Platform>)")]
    Job(String),
    #[error("the registry has no entry {0}")]
    NoEntry(String),
    #[error("registry entry {0} has no candidate; give one with --guest FILE")]
    NoCandidate(String),
    #[error("{0}")]
    Usage(String),
    #[error("connecting to the cluster: {0:#}")]
    Connect(anyhow::Error),
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
    let runtime = sandbox.runtime()?;
    let report = if job.is(&mcn::job::Mcn) {
        args.files.only_for_mcn()?;
        let slot = modules(sandbox, &args, &job, &runtime)?;
        let (active, candidate) = pair(&slot, &job)?;
        let audit = match args.files.nodes.as_deref() {
            Some(nodes) => files::mcn(nodes, &args.files, (active, candidate), args.sample)?,
            None => {
                args.files.none_given()?;
                let client = args.kubeconfig.as_deref();
                on_cluster(client, async |client| {
                    mcn::audit::on_cluster(client, (active, candidate), args.sample).await
                })?
            }
        };
        audit.report(
            job.to_string(),
            Module::of(active.module()),
            Module::of(candidate.module()),
        )
    } else {
        args.files.only_for_bootimage()?;
        let platform = job.key().unwrap_or_default();
        let slot = modules(sandbox, &args, &job, &runtime)?;
        let (active, candidate) = pair(&slot, &job)?;
        let arch = host_stream_arch()?;
        let audit = match args.files.machinesets.as_deref() {
            Some(machinesets) => files::bootimage(
                machinesets,
                &args.files,
                platform,
                (active, candidate),
                arch,
                args.sample,
            )?,
            None => {
                args.files.none_given()?;
                let client = args.kubeconfig.as_deref();
                on_cluster(client, async |client| {
                    let guests = (active, candidate);
                    bootimage::audit::on_cluster(client, platform, guests, arch, args.sample).await
                })?
            }
        };
        audit.report(
            job.to_string(),
            Module::of(active.module()),
            Module::of(candidate.module()),
        )
    };
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
        let client = crate::cluster::client::connect(kubeconfig)
            .await
            .map_err(AuditError::Connect)?;
        Ok(audit(&client).await.map_err(AuditError::from)?)
    })
}

/// A job of [`JOBS`] by its name: `mcn`, or `bootImage.<Platform>` with
/// a platform named (a keyed job needs its key, a single one has none).
fn parse_job(text: &str) -> Result<Job, AuditError> {
    let (name, key) = match text.split_once('.') {
        None => (text, None),
        Some((name, key)) => (name, Some(key)),
    };
    let not_a_job = || AuditError::Job(text.to_owned());
    let kind = JOBS.named(name).ok_or_else(not_a_job)?;
    match (kind.key(), key) {
        (None, None) => Ok(Job::single(kind)),
        (Some(_), Some(key)) if !key.is_empty() => Ok(Job::keyed(kind, key)),
        _ => Err(not_a_job()),
    }
}

/// The slot's active module and candidate.
fn pair<'s, G>(slot: &'s Slot<G>, job: &Job) -> Result<(&'s G, &'s G), AuditError> {
    audit::pair(slot).ok_or_else(|| AuditError::NoCandidate(job.to_string()))
}

/// The two modules, as one registry entry: `--active` and `--guest`; or
/// the registry's entry, with `--guest` as its candidate if given. Loaded
/// under the entry's limits with every check `eval` makes.
fn modules<W: World>(
    sandbox: &SandboxArgs,
    args: &AuditArgs,
    job: &Job,
    runtime: &crate::runtime::Runtime,
) -> Result<Slot<Guest<W>>, Failure> {
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
    load_slot(runtime, job, &entry, &remote)
}
