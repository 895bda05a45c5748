//! Which guest module serves which job, for jobs it knows only as each
//! describes itself (`job`): the registry (`table`, its entries in
//! `entries`, or as cluster objects in `crd`), the module bytes (`fetch`,
//! from OCI registries in `oci`, signed as `signature_policy` requires,
//! with signers ClusterImagePolicies may name: `image_policy`; those three
//! are the `mco-fetch` crate), a job's
//! loaded guests (`slot`), the set serving now (`set`), hot swap (`swap`,
//! over what `read` reads of the cluster), shadow evaluation of candidates
//! (`shadow`), their rollout to the objects (`rollout`), the protocol a
//! job's controller asks for decisions through (`decide`), audits the lease
//! holder runs on request (`audit`) and what `/guests` shows (`serving`).

pub use mco_fetch::{image_policy, oci, signature_policy};
pub use mco_registry_formats::cosign;
pub mod audit;
pub mod crd;
pub mod decide;
pub mod entries;
pub mod fetch;
pub mod job;
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
pub use job::{Audited, Job, JobKind, Jobs};
pub use set::{
    Built, Fallback, GuestSet, Guests, JobError, Outcome, StartError, Started, build,
    fetched_bytes, initial, read_local, remember, start as start_set,
};
pub use slot::{EntryKey, Fetched, Served, Slot, load};
