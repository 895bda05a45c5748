//! A boot image case folder (`machineset.yaml` or
//! `controlplanemachineset.yaml` and the other files `eval bootimage`
//! reads) checked as the golden tests and `guests test` check it.

use std::path::Path;

use k8s_openapi::jiff::Timestamp;
use mco_bootimage::Decision;

use super::BootImageGuest;
use super::eval::{BootImageInputs, EvalError};
use mco_job::case_check::{CaseFailure, Pass, compare, json, now};
use mco_job::feature_gates::Modelled;
use mco_job::jobs::{Modules, Role};
use mco_registry::EntryName;

/// The object files of a boot image case, one of them.
pub const FILES: &[&str] = &["machineset.yaml", "controlplanemachineset.yaml"];

/// Checks a boot image case: `decide` gives the decision for its inputs
/// and the `now.txt` time, which must be `expected.json`; a patch is then
/// applied and decided again, which must give `noop`, since a patch that
/// does not converge would make the controller patch forever. `gates`:
/// every job's.
pub fn check<E: std::fmt::Display>(
    dir: &Path,
    gates: &Modelled,
    mut decide: impl FnMut(&BootImageInputs, Timestamp) -> Result<Decision, E>,
) -> Result<Pass, CaseFailure> {
    let mut inputs = BootImageInputs::read_case(dir, gates)?;
    let now = now(dir)?;
    let mut decide = |inputs: &BootImageInputs| {
        decide(inputs, now).map_err(|e| CaseFailure::Decide(e.to_string()))
    };
    let decision = decide(&inputs)?;
    compare(dir, json(&decision)?)?;
    let Decision::Patch { patch, import, .. } = &decision else {
        return Ok(Pass::Decided);
    };
    inputs.apply(patch, import.as_deref());
    match decide(&inputs)? {
        Decision::Noop { .. } => Ok(Pass::PatchConverged),
        after => Err(CaseFailure::NotConverged {
            after: json(&after)?,
        }),
    }
}

/// The case against `role`'s module of its platform's entry in
/// `modules` (none when the host rules decide alone, or the platform has
/// no module: `noop`).
pub(super) fn check_with(
    dir: &Path,
    modules: &mut dyn Modules,
    role: Role,
    gates: &Modelled,
) -> (Option<EntryName>, Result<Pass, CaseFailure>) {
    let mut decided_by = None;
    let result = check(dir, gates, |inputs, now| {
        let arch = super::host_stream_arch().map_err(CaseError::Other)?;
        inputs.decision::<_, CaseError>(arch, now, |platform| {
            let job = super::job::job(platform);
            let served = modules.served(&job);
            decided_by = match &served {
                Ok(None) => None,
                _ => Some(job.clone()),
            };
            let Some(served) = served.map_err(|e| CaseError::Other(e.to_string()))? else {
                return Ok(None);
            };
            let slot = served
                .get::<BootImageGuest>()
                .ok_or_else(|| CaseError::Other(format!("{job}: not a boot image module")))?;
            Ok(Some(role.pick(slot)))
        })
    });
    (decided_by, result)
}

/// Why a case's decision could not be had.
#[derive(Debug, thiserror::Error)]
enum CaseError {
    #[error(transparent)]
    Eval(#[from] EvalError),
    #[error("{0}")]
    Other(String),
}
