//! What `mco-host run` hands every job it starts ([`RunContext`]), and how a
//! job starts ([`Runner`]): the contract between the composition root
//! (`run`) and each job's `run_command.rs`, so the root names no job.

use std::time::Duration;

use futures::future::{BoxFuture, Shared};

use crate::feature_gates::Gates;
use crate::leadership::Leadership;
use crate::metrics::Metrics;
use crate::ownership::Ownership;
use mco_cluster::decode::Failures;
use mco_cluster::watch::{Latest, Readiness};
use mco_registry::Guests;

/// Resolves on SIGTERM or Ctrl-C, or once a job's controller stopped
/// abnormally; every job's controller stops on it.
pub type Shutdown = Shared<BoxFuture<'static, ()>>;

/// What every job gets from `run`, whatever it does with it.
pub struct RunContext {
    pub client: kube::Client,
    /// The modules serving each registry entry, swapped as the registry changes.
    pub guests: Guests,
    /// The host's namespace (the lease, the host's own ConfigMaps).
    pub namespace: String,
    /// This replica's identity, as the reporter of its Events.
    pub identity: String,
    /// Period of the full re-check of every object.
    pub resync: Duration,
    /// Whether this replica holds the lease: only the holder writes.
    pub leadership: Leadership,
    /// `/readyz`: a job registers its watches here before it starts, so the
    /// host is not ready before they listed.
    pub readiness: Readiness,
    /// MachineConfiguration `cluster`, the operator's configuration, from
    /// one watch every job shares.
    pub machineconfiguration: Latest,
    /// The feature gates in force.
    pub gates: Gates,
    /// Each job's ownership mode and state (`/ownership`).
    pub ownership: Ownership,
    /// Reports the objects a watch cannot decode: one reporter for the
    /// whole host, so an object two watches share is reported once.
    pub failures: Failures,
    /// The job-free series (API writes, guest evaluations) a job writes to
    /// beside its own.
    pub metrics: Metrics,
    pub shutdown: Shutdown,
}

/// A job `run` starts, its flags read and its series registered
/// ([`Run`](crate::jobs::Run)).
pub trait Runner: Send {
    /// Starts the job's controller: registers its watches in
    /// `context.readiness` now, before `run` clears the guests' readiness
    /// problem, and returns the task that runs until `context.shutdown`.
    fn start(self: Box<Self>, context: &RunContext) -> BoxFuture<'static, ()>;
}

/// Why a job cannot start from its `run` flags: found before the host
/// connects to the cluster, so a misconfigured replica never competes for
/// the lease.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// A file a flag names cannot be read.
    #[error("{flag} {}: {source}", path.display())]
    Read {
        flag: &'static str,
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// This host cannot run the job (its architecture, say).
    #[error("{0}")]
    Unsupported(String),
    /// The job's flags are not among the matches (`run` did not add them).
    #[error(transparent)]
    Flags(#[from] clap::Error),
}
