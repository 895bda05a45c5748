//! `guests bench` on an MCN case: the module as the `mcn` guest, timed
//! deriving the case's node's MachineConfigNode.

use std::path::Path;

use super::McnGuest;
use super::eval::McnInputs;
use super::guest::McnGuestExt as _;
use mco_job::feature_gates::Modelled;
use mco_job::jobs::bench::{BenchCaseError, BenchModule, Timed};

/// `runs` derivations of the case in `dir`; every node reaches the guest.
pub(super) fn case(
    dir: &Path,
    module: &mut BenchModule,
    runs: u32,
    gates: &Modelled,
) -> Result<Option<Timed>, BenchCaseError> {
    let facts = McnInputs::read_case(dir, gates)
        .map_err(BenchCaseError::input)?
        .facts();
    let guest: McnGuest = module.guest()?;
    Ok(Some(Timed::run(super::job::job(), &guest, runs, |guest| {
        guest.derive(&facts)
    })))
}
