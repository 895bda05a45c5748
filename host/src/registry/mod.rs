//! Which guest module serves which job: the registry (`registry`, or as
//! cluster objects in `crd`), the module bytes (`fetch`, from OCI
//! registries in `oci`, signed as `cosign` checks), the set serving now
//! with one slot per job
//! (`set`), the checks a new module passes before it serves (`smoke`), hot
//! swap (`swap`), shadow evaluation of candidates (`shadow`) and what
//! `/guests` shows (`status`).

pub mod cosign;
pub mod crd;
pub mod entries;
pub mod fetch;
pub mod oci;
pub mod set;
pub mod shadow;
pub mod smoke;
pub mod status;
pub mod swap;

use std::fmt;

pub use fetch::{
    Access, ConfigMaps, FetchError, Fetched, Pulls, Remote, configmap_names, fetch, fetch_all,
    oci_sources, pull_all, verify_keys,
};
pub use set::{
    Built, EntryKey, Fallback, GuestSet, Guests, JobError, Outcome, Slot, StartError, Started,
    build, fetched_bytes, initial, load, read_local, remember, start as start_set,
};

/// One registry entry. Its name (`mcn`, `bootImage.<platform>`) is the
/// `job` label of every metric, log line and status the host writes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Job {
    Mcn,
    /// By Infrastructure `status.platformStatus.type`.
    BootImage(String),
}

impl Job {
    /// The interface a module must export to serve this job.
    pub fn interface(&self) -> &'static str {
        match self {
            Job::Mcn => crate::mcn::NODE_STATE_INTERFACE,
            Job::BootImage(_) => crate::bootimage::BOOT_IMAGE_INTERFACE,
        }
    }
}

impl fmt::Display for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Job::Mcn => f.write_str("mcn"),
            Job::BootImage(platform) => write!(f, "bootImage.{platform}"),
        }
    }
}
