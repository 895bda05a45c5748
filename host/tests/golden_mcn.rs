//! Every MachineConfigNode golden case runs through the native library and
//! the wasm guest; the two must agree exactly, and the eval output must
//! match the case's expected.json (checked by `mco_host::cases`, as
//! `guests test` checks it). Every failing case is reported.

mod common;

use mco_host::cases;
use mco_host::runtime::RuntimeConfig;

#[test]
fn native_and_wasm_agree_on_every_golden_case() {
    let runtime = common::runtime(RuntimeConfig::default());
    let guest = common::mcn_guest(&runtime, &common::installed_guest("mcn.wasm"));
    let golden = common::golden_cases("mcn");
    assert!(golden.len() >= 40, "only {} MCN golden cases", golden.len());
    common::check_each_case(&golden, |case| {
        let checked = cases::check_mcn(case, |inputs| {
            let facts = inputs.facts();
            let native = mco_mcn::derive(&facts);
            let wasm = guest.derive(&facts).map_err(|e| e.to_string())?;
            if native != wasm {
                return Err(format!(
                    "native and wasm disagree:\n  native: {native:?}\n  wasm:   {wasm:?}"
                ));
            }
            mco_mcn::validate(&native, facts.image_mode_status_reporting())
                .map_err(|e| format!("invalid output: {e}"))?;
            Ok(native)
        });
        if let Err(failure) = checked {
            panic!("{failure}");
        }
    });
}
