//! `mco-registry`: which guest module serves which job, for jobs it knows
//! only as each describes itself (`job`). It depends on no job: the jobs
//! and the binary depend on it.
//!
//! Deciding which module serves: the registry (`table`, its entries in
//! `entries`), the module bytes (`fetch`, over `mco-fetch`'s OCI pulls,
//! signature policies and ClusterImagePolicy signers), a job's loaded
//! guests (`slot`), the set serving now (`set`), hot swap (`swap`, over
//! what `read` reads of the cluster), shadow evaluation of candidates
//! (`shadow`), their rollout to the objects (`rollout`, a canary subset
//! each job reads its own way: `canary`), the protocol a
//! job's controller asks for decisions through (`decide`) and what
//! `/guests` shows (`serving`).
//!
//! The registry as cluster objects: the MachineConfigGuest CRD, its status
//! and the audits it asks the lease holder for (`crd`).
//!
//! The comparison of two decisions (`compare`) and of two modules over a
//! job's objects (`audit`), and this component's series (`metrics`).

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
