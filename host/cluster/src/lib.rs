//! `mco-cluster`: the cluster plumbing both jobs of `mco-host` share, and
//! no job logic: the client, the field manager, the catalogue of resource
//! types, the watch helper and its per-object decoding, the own-write
//! cache, the other writers' field managers, the served-CRD check, the
//! condition merge, the Event publisher and their series (`metrics`).
//! Neither job imports the other; both import this.
//!
//! It must never depend on `mco-host`, on a job's code or guest library
//! (`mco-mcn`, `mco-bootimage`), nor on the guest runtime: the host
//! depends on it, never the other way.

pub mod client;
pub mod conditions;
pub mod decode;
pub mod events;
pub mod managers;
pub mod metrics;
// The scripted API server of the writers' unit tests, here and in the
// host (feature `test-support`, a dev-dependency of the host's).
#[cfg(any(test, feature = "test-support"))]
pub mod mock;
pub mod own_writes;
pub mod resources;
pub mod served_crd;
pub mod watch;

pub use metrics::Metrics;

use kube::Resource;

/// The one field manager for everything this host writes.
pub const FIELD_MANAGER: &str = "mco-host";

/// etcd's resource versions increase; anything unparseable counts as old.
pub fn resource_version<K: Resource>(object: &K) -> u64 {
    object
        .meta()
        .resource_version
        .as_deref()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(0)
}

/// The API answered with `code` (404 not found, 409 conflict, ...).
pub fn is_status(err: &kube::Error, code: u16) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == code)
}
