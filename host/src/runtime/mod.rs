//! The wasmtime façade, for any guest of any job: one engine, one store
//! constructor, module checks, the compiled-guest cache and one generic
//! guest handle. Nothing here knows about Kubernetes or about a job.

mod cache;
mod engine;
mod error;
mod handle;
mod module;
mod store;

pub use engine::{DEFAULT_MEMORY_MIB, DEFAULT_SLOTS, GuestLimits, Runtime, RuntimeConfig};
pub use error::{GuestError, LoadError};
pub use handle::{Guest, World};
pub use module::{GuestModule, interfaces, same_interface};
pub use store::GuestState;
