//! The managed boot image job, all of it: the objects it reads, decoded
//! once (`objects`, through `decode`), its host rules (`rules`), the pure
//! planner of a pass (`plan`), the guest binding (`guest`) and the checks
//! of every decision it returns (`authority`), the controller that gathers
//! what the planner asks for (`controller`, with its watches in
//! `triggers`), the one place its writes happen (`write`), the record it
//! keeps in the cluster (`state`), its conditions (`conditions`), its
//! errors (`error`) and what `eval bootimage` reads (`eval`).

pub mod authority;
pub mod conditions;
pub mod controller;
mod decode;
pub mod error;
pub mod eval;
pub mod guest;
pub mod job;
pub mod objects;
pub mod plan;
pub mod rules;
pub mod skew;
pub mod state;
mod triggers;
mod write;

pub use guest::{BOOT_IMAGE_INTERFACE, BatchItem, BootImageGuest, Session};
