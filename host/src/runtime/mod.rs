//! The wasmtime façade: one engine, one store constructor, guest loading and
//! failure classification. Nothing here knows about Kubernetes.

mod bindings;
mod bootimage;
mod engine;
mod error;
mod guest;
mod mcn;
mod store;

pub use bootimage::{BOOT_IMAGE_INTERFACE, BatchItem, BootImageGuest, Session};
pub use engine::{GuestLimits, Runtime, RuntimeConfig};
pub use error::{GuestError, LoadError};
pub use guest::{GuestModule, allowed_import, digest};
pub use mcn::{McnGuest, NODE_STATE_INTERFACE};
