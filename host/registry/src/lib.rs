//! `mco-registry`: which guest module serves which job, for jobs it knows
//! only as each describes itself (`job`). It depends on no job: the jobs and
//! the binary depend on it.
//!
//! - `table`, `entries`, `entry_error`: the registry, its entries, their errors;
//! - `fetch`: module bytes, over mco-fetch's pulls and signature policies;
//! - `slot`, `set`: a job's loaded guests, and the set serving now;
//! - `swap` (over `read`): hot swap; `shadow`, `rollout`, `canary`: candidates;
//! - `decide`: how a job's controller asks for decisions; `serving`: `/guests`;
//! - `crd`: the MachineConfigGuest CRD, its status and the audits it asks for;
//! - `compare`, `audit`: two decisions, two modules over a job's objects;
//! - `metrics`: this component's series.

pub mod audit;
pub mod canary;
pub mod compare;
pub mod crd;
pub mod decide;
pub mod entries;
mod entry_error;
pub mod fetch;
pub mod job;
pub mod metrics;
mod read;
pub mod rollout;
pub mod serving;
pub mod set;
pub mod shadow;
pub mod slot;
pub mod swap;
pub mod table;

pub use fetch::{
    Access, ConfigMaps, FetchError, InFlight, Pulls, Remote, Round, configmap_names, fetch,
    fetch_all, oci_sources, pull_all, read_policy,
};
pub use job::{Audited, EntryName, JobKind, Jobs};
pub use metrics::Metrics;
pub use set::{
    Built, Fallback, GuestSet, Guests, JobError, Outcome, StartError, Started, build,
    fetched_bytes, initial, read_local, remember, start as start_set,
};
pub use slot::{EntryKey, Fetched, Served, Slot, load};
