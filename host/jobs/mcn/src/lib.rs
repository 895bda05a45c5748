//! The MachineConfigNode job, all of it: the MCN CRD (`crd`), the objects
//! it reads (`objects`), its sans-IO rules (`rules`: facts for the guest,
//! the object to apply, the condition times), the node disruption
//! policies (`policies`), the guest binding that checks
//! every answer (`guest`) and the handles it lends a guest (`inputs`), the controller (`controller`), the one place
//! MCNs are written (`write`), the gauge of each pool's update phases
//! (`phase_gauge`), when an MCN whose Node is gone is deleted
//! (`sweep`), how a derived MCN compares with the stored
//! one and who else writes MCNs (`observe`, for the ownership modes),
//! what `eval mcn` reads (`eval`), what `guests bench` times of a case
//! (`bench`), the crate `guests new` makes (`scaffold`) and its section of
//! `mco-host status` (`status`).

pub mod audit;
pub mod authority;
mod bench;
pub mod case;
pub mod controller;
pub mod crd;
pub mod eval;
pub mod eval_command;
pub mod guest;
pub(crate) mod inputs;
pub mod job;
pub mod job_cli;
pub mod metrics;
pub mod objects;
pub mod observe;
pub mod phase;
mod phase_gauge;
pub mod policies;
mod preflight;
pub mod rules;
mod run_command;
mod scaffold;
pub mod status;
pub mod sweep;
pub mod write;

/// The gates this job follows, with their Default values.
pub const FEATURE_GATES: &mco_job::feature_gates::Modelled =
    &[(mco_mcn::IMAGE_MODE_STATUS_REPORTING, false)];

pub use guest::{
    McnGuest, McnGuestExt, NODE_STATE_INTERFACE, NODE_STATE_RECORDS_INTERFACE, derive_records,
};
