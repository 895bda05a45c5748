//! The managed boot image job: each enrolled MachineSet's RHCOS boot image,
//! decided by its platform's guest and written by the host.
//!
//! - What the registry and the command line see: `job` (its `JobKind`),
//!   `job_cli` (its contract), `eval_command` and `eval` (`eval
//!   bootimage`), `case` and `bench` (its case folders, `guests bench`),
//!   `scaffold` (`guests new`), `run_command` (`run`), `preflight`, `audit`
//!   and `status/` (its section of `mco-host status`).
//! - The cluster: `objects` (what it reads, through `decode`), `triggers`
//!   (the watches), `controller`, `write` (where its writes happen), `state`
//!   (the record it keeps), `stream_cache` (the stream parsed once per
//!   version), `conditions`, `skew`, `metrics` and `error`.
//! - The decision: `rules` (the sans-IO host rules) and `prepared` (the
//!   MachineSet they leave for a guest), `plan` (the pure planner of a
//!   pass), `inputs` (what a guest is lent), `guest` (the binding),
//!   `authority/` (what a decision may change, reading the patch as
//!   `proposal/` spells it) and `platform/` (the platforms it knows, one
//!   file each).
//! - The clouds, sans-IO with their live connections beside: `vcenter/`
//!   (vSphere) and `ec2/` (AWS).
//!
//! The modules depend one way, down (`host/tests/structure.rs` holds it):
//! the objects, the cloud requests and answers, `prepared` and `proposal`;
//! the platform table; the rules and the authority; the guest binding, the
//! planner and `eval`; the controller, `write` and `job`.

pub mod audit;
pub mod authority;
mod bench;
pub mod case;
pub mod conditions;
pub mod controller;
mod decode;
pub mod ec2;
pub mod error;
pub mod eval;
pub mod eval_command;
pub mod guest;
mod inputs;
pub mod job;
pub mod job_cli;
pub mod metrics;
pub mod objects;
pub mod plan;
pub(crate) mod platform;
mod preflight;
pub mod prepared;
pub mod proposal;
pub mod rules;
mod run_command;
mod scaffold;
pub mod skew;
pub mod state;
pub mod status;
mod stream_cache;
mod triggers;
pub mod vcenter;
mod write;

pub use guest::{
    BOOT_IMAGE_INTERFACE, BatchItem, BootImageGuest, BootImageGuestExt, Session, StreamInput,
};

/// Feature gate: boot images of the ControlPlaneMachineSet (on in Default).
pub const MANAGED_BOOT_IMAGES_CPMS: &str = "ManagedBootImagesCPMS";
/// Feature gate: boot image skew enforcement (on in Default).
pub const BOOT_IMAGE_SKEW_ENFORCEMENT: &str = "BootImageSkewEnforcement";
/// The gates this job follows, with their Default values.
pub const FEATURE_GATES: &mco_job::feature_gates::Modelled = &[
    (MANAGED_BOOT_IMAGES_CPMS, true),
    (BOOT_IMAGE_SKEW_ENFORCEMENT, true),
];

/// The stream architecture of the control plane, taken to be the host's
/// own: the host runs on a control-plane node. The controller, `eval`,
/// `guests audit` and `spec.audit` all decide with it.
pub fn host_stream_arch() -> Result<&'static str, String> {
    mco_bootimage::arch::stream_arch_from_rust(std::env::consts::ARCH)
        .ok_or_else(|| format!("unsupported host architecture {}", std::env::consts::ARCH))
}

/// The Default feature set with `off` disabled, as a FeatureGate object
/// publishes it: what the gate tests of this job run under.
#[cfg(test)]
pub(crate) fn gates_without(off: &[&str]) -> mco_job::feature_gates::FeatureGates {
    let disabled: Vec<serde_json::Value> = off
        .iter()
        .map(|name| serde_json::json!({"name": name}))
        .collect();
    let object = serde_json::json!({"status": {"featureGates": [
        {"version": "4.22.0", "enabled": [], "disabled": disabled}]}});
    mco_job::feature_gates::FeatureGates::resolve(&object, None, FEATURE_GATES)
        .unwrap_or_else(|e| panic!("{e}"))
}
