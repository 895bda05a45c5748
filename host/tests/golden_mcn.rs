//! Every MachineConfigNode golden case runs through the native library and
//! the wasm guest, through both its entries (`derive`, lent handles, and
//! `derive-records`, the offline one); all must agree exactly, and the eval output must
//! match the case's expected.json (checked by `mco_host::cases`, as
//! `guests test` checks it). Every failing case is reported. Some cases run
//! again with rendered configs at the apiserver's object size, within the
//! default guest memory.

use crate::common;

use std::path::Path;

use mco_host::cases;
use mco_job_mcn::{McnGuest, McnGuestExt as _};
use mco_runtime::RuntimeConfig;

#[test]
fn native_and_wasm_agree_on_every_golden_case() {
    let golden = common::golden_cases("mcn");
    assert!(golden.len() >= 40, "only {} MCN golden cases", golden.len());
    check_all(&golden);
}

#[test]
fn native_and_wasm_agree_with_configs_at_the_apiservers_size() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    check_all(&common::grown_mcn_cases(dir.path()));
}

fn check_all(cases: &[impl AsRef<Path>]) {
    let runtime = common::runtime(RuntimeConfig::default());
    let guest = common::mcn_guest(&runtime, &common::installed_guest("mcn.wasm"));
    common::check_each_case(cases, |case| {
        if let Err(failure) = check(&guest, case.as_ref()) {
            panic!("{failure}");
        }
    });
}

fn check(guest: &McnGuest, case: &Path) -> Result<cases::Pass, cases::CaseFailure> {
    mco_job_mcn::case::check(case, &mco_host::FEATURE_GATES, |inputs| {
        let facts = inputs.facts();
        let native = mco_mcn::derive(&facts);
        let wasm = guest.derive(&facts).map_err(|e| e.to_string())?;
        if native != wasm {
            return Err(format!(
                "native and wasm disagree:\n  native: {native:?}\n  wasm:   {wasm:?}"
            ));
        }
        let offline = mco_job_mcn::derive_records(guest, &facts).map_err(|e| e.to_string())?;
        if offline != wasm {
            return Err(format!(
                "the guest's two entries disagree:\n  derive:         {wasm:?}\n  derive-records: {offline:?}"
            ));
        }
        mco_mcn::validate(&native, facts.image_mode_status_reporting())
            .map_err(|e| format!("invalid output: {e}"))?;
        Ok(native)
    })
}
