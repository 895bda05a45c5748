//! The managed boot image job, all of it: the objects it reads, decoded
//! once (`objects`, through `decode`), its host rules (`rules`) and the
//! MachineSet they leave for a guest (`prepared`), the pure planner of a
//! pass (`plan`), the guest binding (`guest`) and the checks of every
//! decision it returns (`authority`, reading the patch as `proposal`
//! spells it), the controller that gathers
//! what the planner asks for (`controller`, with its watches in
//! `triggers`), the one place its writes happen (`write`), the record it
//! keeps in the cluster (`state`), the stream parsed once per version
//! (`stream_cache`), its conditions (`conditions`), its
//! errors (`error`), what `eval bootimage` reads (`eval`), what `guests
//! bench` times of a case (`bench`), the crate `guests new` makes
//! (`scaffold`) and its section of `mco-host status` (`status`). The
//! platforms it knows are listed once, one file each (`platform`). vSphere
//! adds what the planner asks vCenter and how the answers reach the guest
//! (`vcenter`, sans-IO) and the connections that answer (`vcenter::live`);
//! AWS likewise asks EC2 (`ec2`, and `ec2::live`).
//!
//! The modules depend one way, down: the objects, the vCenter and EC2
//! requests and answers, `prepared` and `proposal` at the bottom; the
//! platform table on them; the rules and the authority on the table; the
//! guest binding, the planner and `eval` on those; the controller, `write`
//! and `job` on top (`host/tests/structure.rs` holds it).

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
