//! `guests bench` on a boot image case: the host rules pick the platform
//! whose guest the case reaches (none: they decide alone, untimed), then
//! the module as that platform's guest is timed deciding it as `eval
//! bootimage` does.

use std::path::Path;

use k8s_openapi::jiff::Timestamp;

use super::BootImageGuest;
use super::eval::{BootImageInputs, EvalError};
use mco_job::feature_gates::Modelled;
use mco_job::jobs::bench::{BenchCaseError, BenchModule, Timed};

/// `runs` decisions of the case in `dir`, if the host rules leave it to a
/// guest.
pub(super) fn case(
    dir: &Path,
    module: &mut BenchModule,
    runs: u32,
    gates: &Modelled,
) -> Result<Option<Timed>, BenchCaseError> {
    let inputs = BootImageInputs::read_case(dir, gates).map_err(BenchCaseError::input)?;
    let arch = super::host_stream_arch().map_err(BenchCaseError::Other)?;
    // The stub's upgrade stamp is all the time changes; the epoch keeps
    // every run identical.
    let now = Timestamp::UNIX_EPOCH;
    // Which platform's guest the host rules hand the case to, if any.
    let mut platform = None;
    inputs.decision::<&BootImageGuest, EvalError>(arch, now, |p| {
        platform = Some(p.to_owned());
        Ok(None)
    })?;
    let Some(platform) = platform else {
        return Ok(None);
    };
    let guest: BootImageGuest = module.guest()?;
    let entry = super::job::job(&platform);
    Ok(Some(Timed::run(entry, &guest, runs, |guest| {
        inputs.decision::<_, EvalError>(arch, now, |_| Ok(Some(guest)))
    })))
}

/// The boot image inputs' errors, with the exit statuses of `guests bench`.
impl From<EvalError> for BenchCaseError {
    fn from(err: EvalError) -> BenchCaseError {
        match err {
            EvalError::Input(e) => BenchCaseError::input(e),
            EvalError::Guest(e) => BenchCaseError::Guest(e),
        }
    }
}
