//! Property tests: for any MachineSet shape, providerSpec, stream, cluster
//! facts and user data, every platform rule returns (never panics, which in
//! the guest would be a trap) a decision the host accepts, whose patch
//! touches only `spec.template.spec.providerSpec.value`, and the same bytes
//! every time.

mod strategies;

use std::cell::RefCell;
use std::collections::BTreeMap;

use mco_bootimage::{Decision, MachineSetView, Platform, decide_text, validate_decision};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::Value;
use strategies::Seeds;

const PLATFORMS: [&dyn Platform; 4] = [
    &mco_bootimage_gcp::Gcp,
    &mco_bootimage_aws::Aws,
    &mco_bootimage_azure::Azure,
    &mco_bootimage_vsphere::Vsphere,
];

/// Each case runs all four platforms; release builds take a few seconds.
const CASES: u32 = 1500;

/// Only `spec.template.spec.providerSpec.value` fields, checked apart from
/// `validate_decision` so a loosened validator cannot hide a wider patch.
fn touches_only_provider_spec(patch: &Value) -> bool {
    let mut level = patch;
    for key in ["spec", "template", "spec", "providerSpec", "value"] {
        match level.as_object() {
            Some(map) if map.len() == 1 => match map.get(key) {
                Some(next) => level = next,
                None => return false,
            },
            _ => return false,
        }
    }
    level.is_object()
}

#[test]
fn every_platform_decides_totally_well_formed_and_deterministically() {
    let seeds = Seeds::load();
    let inputs = (
        strategies::machineset(&seeds),
        strategies::stream(&seeds),
        strategies::cluster(),
        strategies::user_data(&seeds),
    );
    let mut runner = TestRunner::new(Config::with_cases(CASES));
    // How often each action came out: the strategies must reach them all.
    let actions = RefCell::new(BTreeMap::<&str, usize>::new());
    let result = runner.run(&inputs, |(ms, stream, cluster, user_data)| {
        // An object that is not a readable MachineSet is the caller's input
        // error, never a decision.
        let Ok(view) = MachineSetView::from_object(&ms) else {
            return Ok(());
        };
        for platform in PLATFORMS {
            let run = || {
                decide_text(
                    platform,
                    stream.as_deref(),
                    &view,
                    &cluster,
                    user_data.as_deref(),
                )
            };
            let decision = run();
            let json = decision.to_json();
            if let Err(why) = validate_decision(&decision) {
                return Err(TestCaseError::fail(format!(
                    "{}: {why}: {json:.2000}",
                    platform.platform_type()
                )));
            }
            if let Decision::Patch { patch, import, .. } = &decision {
                // Only an import may come with the empty patch.
                let import_only = import.is_some() && *patch == serde_json::json!({});
                prop_assert!(import_only || touches_only_provider_spec(patch), "{}", json);
            }
            prop_assert_eq!(run().to_json(), json);
            *actions.borrow_mut().entry(decision.action()).or_default() += 1;
        }
        Ok(())
    });
    if let Err(err) = result {
        panic!("{err}");
    }
    let actions = actions.into_inner();
    for action in ["patch", "noop", "skip", "error"] {
        assert!(
            actions.contains_key(action),
            "no {action} decision: {actions:?}"
        );
    }
}
