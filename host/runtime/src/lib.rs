//! `mco-runtime`: the wasmtime façade, for any guest of any job: one
//! engine, one store constructor, module checks, the compiled-guest cache
//! and one generic guest handle. Its caches name files by their sha256
//! (`mco_registry_formats::blob`).
//!
//! Nothing here knows about Kubernetes or about a job: this crate must never
//! depend on `mco-host`, on a job's guest library (`mco-mcn`,
//! `mco-bootimage`) or on kube; the host depends on it, never the other way.

mod cache;
mod engine;
mod error;
mod handle;
mod lookups;
mod module;
mod store;

pub use engine::{DEFAULT_MEMORY_MIB, DEFAULT_SLOTS, GuestLimits, Runtime, RuntimeConfig};
pub use error::{GuestError, LoadError};
pub use handle::{Guest, World};
pub use lookups::{LOOKUP_BUDGET, charge};
/// Whether an export serves an interface: the rule a pull applies to an
/// artifact's config, before the module is downloaded, and a load to it.
pub use mco_registry_formats::artifact::same_interface;
pub use module::{GuestModule, interfaces};
pub use store::GuestState;
