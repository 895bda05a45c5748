//! What `guests audit` reads from files for a job, known to no job: the
//! flags a job names its input files with ([`FileFlag`]), the paths given
//! for them ([`Files`]) and the job's audit of what they hold
//! ([`FileAudit`]). Each job describes its files and audits them in its
//! own `audit.rs` (through
//! [`Contract::file_audit`](crate::jobs::Contract::file_audit)); the command
//! (`cli/guests_audit/`) adds every job's flags and hands the audited
//! job the paths given.

use std::collections::BTreeMap;

use crate::feature_gates::Modelled;
use crate::manifests::InputError;
use mco_registry::audit::cluster::ReadError;
use mco_registry::audit::{self, Audit};
use mco_registry::{EntryName, Served};

/// How a job reads the file of one flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// The objects audited, any number: given, they are read instead of
    /// the cluster's.
    Objects,
    /// Read with the objects, which cannot go without it.
    Required,
    /// Read with the objects, when given.
    Optional,
    /// Read by several jobs and shown once: the help is the same in each,
    /// and what each job reads it for (if it says) follows it, as
    /// `help: what (job), …`.
    Shared(Option<&'static str>),
}

/// One input file flag, `--<name> FILE`, of a job's audit.
#[derive(Clone, Copy, Debug)]
pub struct FileFlag {
    pub name: &'static str,
    /// The help line, without a final period (clap's derive drops it).
    pub help: &'static str,
    pub read: Use,
}

impl FileFlag {
    pub const fn new(name: &'static str, read: Use, help: &'static str) -> FileFlag {
        FileFlag { name, help, read }
    }
}

/// `--featuregate`: what every job that follows the cluster's feature
/// gates reads them from.
pub const FEATUREGATE: FileFlag = FileFlag::new(
    "featuregate",
    Use::Shared(None),
    "FeatureGate `cluster` (default: the Default feature set), as for `eval`",
);

/// A job's audit from files: the flags naming them, the objects flag
/// first, in the order `guests audit --help` lists them, and the audit of
/// what they hold: every object of `files` decided with the module and the
/// candidate `served` holds for `job` under `gates` (every job's), and
/// compared, keeping `limit` of each sample.
pub struct FileAudit {
    pub flags: &'static [FileFlag],
    pub audit: fn(
        files: &Files,
        served: &Served,
        job: &EntryName,
        limit: usize,
        gates: &Modelled,
    ) -> Result<Audit, FilesError>,
}

/// The active module and the candidate `served` holds for `job`, as `G`.
pub fn pair<'s, G: 'static>(
    served: &'s Served,
    job: &EntryName,
) -> Result<(&'s G, &'s G), ReadError> {
    (served.get::<G>().and_then(audit::pair)).ok_or_else(|| ReadError::NoCandidate(job.to_string()))
}

/// The paths given for one job's flags (`-` is standard input).
pub struct Files<'a> {
    /// The objects flag and its path.
    objects: (&'static str, &'a str),
    given: &'a BTreeMap<&'static str, String>,
}

impl<'a> Files<'a> {
    /// The paths of `given`, flag name to path, with the objects flag's
    /// `objects`: (flag, path).
    pub fn new(
        objects: (&'static str, &'a str),
        given: &'a BTreeMap<&'static str, String>,
    ) -> Files<'a> {
        Files { objects, given }
    }

    /// The path of the objects audited.
    pub fn objects(&self) -> &'a str {
        self.objects.1
    }

    /// The path given for `--<flag>`, if any.
    pub fn get(&self, flag: &str) -> Option<&'a str> {
        self.given.get(flag).map(String::as_str)
    }

    /// The path given for a [`Use::Required`] `--<flag>` (the command line
    /// asks for it already; this says so again rather than guess).
    pub fn required(&self, flag: &'static str) -> Result<&'a str, FilesError> {
        self.get(flag).ok_or(FilesError::Missing {
            objects: self.objects.0,
            flag,
        })
    }
}

/// Why a job's audit from files could not run: all of it is the input's
/// fault (the command's exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    #[error(transparent)]
    Input(#[from] InputError),
    /// The objects read do not fit the job (another platform's
    /// Infrastructure, say), as a cluster's would not.
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("--{objects} needs --{flag}")]
    Missing {
        objects: &'static str,
        flag: &'static str,
    },
}
