//! An MCN case folder (`node.yaml` and the other files `eval mcn` reads)
//! checked as the golden tests and `guests test` check it.

use std::path::Path;

use super::McnGuest;
use super::eval::McnInputs;
use super::guest::McnGuestExt as _;
use mco_job::case_check::{CaseFailure, Pass, compare, now};
use mco_job::feature_gates::Modelled;
use mco_job::jobs::{Modules, Role};
use mco_registry::EntryName;

/// The object file of an MCN case.
pub const FILES: &[&str] = &["node.yaml"];

/// Checks an MCN case under `gates` (every job's): `derive` gives the
/// decision for its inputs, which, stamped with `now.txt`, must be
/// `expected.json`.
pub fn check<E: std::fmt::Display>(
    dir: &Path,
    gates: &Modelled,
    derive: impl FnOnce(&McnInputs) -> Result<mco_mcn::Decision, E>,
) -> Result<Pass, CaseFailure> {
    let inputs = McnInputs::read_case(dir, gates)?;
    let now = now(dir)?;
    let decision = derive(&inputs).map_err(|e| CaseFailure::Decide(e.to_string()))?;
    compare(dir, inputs.output(decision, now))?;
    Ok(Pass::Decided)
}

/// The case against `role`'s module of the `mcn` entry in `modules`.
pub(super) fn check_with(
    dir: &Path,
    modules: &mut dyn Modules,
    role: Role,
    gates: &Modelled,
) -> (Option<EntryName>, Result<Pass, CaseFailure>) {
    let job = super::job::job();
    let result = check(dir, gates, |inputs| {
        let served = modules
            .served(&job)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| super::job::MISSING.to_string())?;
        let slot = served
            .get::<McnGuest>()
            .ok_or_else(|| format!("{job}: not a node-state module"))?;
        role.pick(slot)
            .derive(&inputs.facts())
            .map_err(|e| e.to_string())
    });
    (Some(job), result)
}
