//! Every MachineConfigNode golden case runs through the native library and
//! the wasm guest; the two must agree exactly, and the eval output must
//! match the case's expected.json. Every failing case is reported.

mod common;

use mco_host::mcn::eval::McnInputs;
use mco_host::runtime::RuntimeConfig;

#[test]
fn native_and_wasm_agree_on_every_golden_case() {
    let runtime = common::runtime(RuntimeConfig::default());
    let guest = common::mcn_guest(&runtime, &common::installed_guest("mcn.wasm"));
    let cases = common::golden_cases("mcn");
    assert!(cases.len() >= 40, "only {} MCN golden cases", cases.len());
    common::check_each_case(&cases, |case| {
        let name = common::case_name(case);
        let inputs = McnInputs::read_case(case).unwrap_or_else(|e| panic!("{name}: {e}"));
        let facts = inputs.facts();

        let native = mco_mcn::derive(&facts);
        let wasm = guest
            .derive(&facts)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(native, wasm, "{name}: native and wasm disagree");
        mco_mcn::validate(&native).unwrap_or_else(|e| panic!("{name}: invalid output: {e}"));

        let now =
            std::fs::read_to_string(case.join("now.txt")).unwrap_or_else(|e| panic!("{name}: {e}"));
        let now = now
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{name}: now.txt: {e}"));
        let expected = std::fs::read_to_string(case.join("expected.json"))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected: serde_json::Value =
            serde_json::from_str(&expected).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            inputs.output(native, now),
            expected,
            "{name}: output differs from expected.json"
        );
    });
}
