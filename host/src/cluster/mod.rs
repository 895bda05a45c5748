//! Cluster plumbing both jobs share, and no job logic: the client, the
//! field manager, the catalogue of resource types, the watch helper and its
//! per-object decoding, the own-write cache,
//! the other writers' field managers, the served-CRD check,
//! the condition merge and the Event publisher. Neither job imports the
//! other; both import this.

pub mod client;
pub mod conditions;
pub mod decode;
pub mod events;
pub mod managers;
#[cfg(test)]
pub mod mock;
pub mod own_writes;
pub mod resources;
pub mod served_crd;
pub mod watch;

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
