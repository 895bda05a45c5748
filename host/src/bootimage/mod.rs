//! The managed boot image job, all of it: its host rules (`rules`), the
//! pure planner of a pass (`plan`), the guest binding that checks every
//! decision (`guest`), the controller that gathers what the planner asks
//! for (`controller`, with its watches in `triggers`), the one place its
//! writes happen (`write`), the record it keeps in the cluster (`state`),
//! its conditions (`status`), its errors (`error`) and what
//! `eval bootimage` reads (`eval`).

pub mod authority;
pub mod controller;
pub mod error;
pub mod eval;
pub mod guest;
pub mod job;
pub mod objects;
pub mod plan;
pub mod rules;
pub mod skew;
pub mod state;
pub mod status;
mod triggers;
mod write;

pub use guest::{BOOT_IMAGE_INTERFACE, BatchItem, BootImageGuest, Session};
