//! The MachineConfigNode job: every Node's MachineConfigNode, derived by a
//! node-state guest and written by the host.
//!
//! - What the registry and the command line see: `job` (its `JobKind`),
//!   `job_cli` (its contract), `eval_command` and `eval` (`eval mcn`),
//!   `case` and `bench` (its case folders, `guests bench`), `scaffold`
//!   (`guests new`), `run_command` (`run`), `preflight`, `audit` and
//!   `status/` (its section of `mco-host status`).
//! - The cluster: `crd` (the MCN API), `objects` (what it reads besides
//!   Nodes), `policies` (node disruption policies), `controller`, `write`
//!   (where MCNs are written), `sweep` (MCNs whose Node is gone), `observe`
//!   (beside the Machine Config Operator: the ownership modes), `metrics`,
//!   `phase` and `phase_gauge` (each pool's update phases).
//! - The guest: `rules` (the sans-IO host rules), `inputs` (what a guest is
//!   lent), `guest` (the binding and the checks of every answer) and
//!   `authority` (what a decision may say).

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
