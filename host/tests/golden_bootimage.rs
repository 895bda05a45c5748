//! Every boot image golden case runs through the native platform rules and
//! the wasm guests; both must agree with each other and with
//! expected.json. Every patch is applied (RFC 7386) and decided again,
//! which must give `noop` (`mco_host::cases`, which `guests test` shares).

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::jiff::Timestamp;
use mco_bootimage::{Decision, Platform, decide_text};
use mco_host::cases::{CaseFailure, Pass};
use mco_job_bootimage::eval::BootImageInputs;
use mco_job_bootimage::plan::stamp_upgrade;
use mco_job_bootimage::rules::Step;
use mco_job_bootimage::{
    BOOT_IMAGE_INTERFACE, BootImageGuest, BootImageGuestExt as _, StreamInput,
};
use mco_runtime::{GuestModule, Runtime, RuntimeConfig};

/// The golden cases are written for an amd64 control plane.
const CONTROL_PLANE_ARCH: &str = "x86_64";

fn native_rule(platform: &str) -> Option<&'static dyn Platform> {
    match platform {
        "GCP" => Some(&mco_bootimage_gcp::Gcp),
        "AWS" => Some(&mco_bootimage_aws::Aws),
        "Azure" => Some(&mco_bootimage_azure::Azure),
        "VSphere" => Some(&mco_bootimage_vsphere::Vsphere),
        _ => None,
    }
}

fn guests(runtime: &Runtime) -> BTreeMap<&'static str, BootImageGuest> {
    [
        ("GCP", "bootimage-gcp.wasm"),
        ("AWS", "bootimage-aws.wasm"),
        ("Azure", "bootimage-azure.wasm"),
        ("VSphere", "bootimage-vsphere.wasm"),
    ]
    .into_iter()
    .map(|(platform, file)| {
        let module = GuestModule::from_file(
            runtime,
            &common::installed_guest(file),
            BOOT_IMAGE_INTERFACE,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        (
            platform,
            BootImageGuest::new(runtime, module).unwrap_or_else(|e| panic!("{e}")),
        )
    })
    .collect()
}

fn read(case: &Path) -> BootImageInputs {
    BootImageInputs::read_case(case, &mco_host::FEATURE_GATES)
        .unwrap_or_else(|e| panic!("{}: {e}", case.display()))
}

/// Both decisions for one input: (native, wasm). The wasm side is what
/// `eval bootimage` prints: the planner, with the two guest rounds.
fn decide(
    inputs: &BootImageInputs,
    guests: &BTreeMap<&str, BootImageGuest>,
    now: Timestamp,
) -> Result<(Decision, Decision), String> {
    let stream = inputs.stream().map_err(|e| e.to_string())?;
    let rules = inputs
        .host_rules(CONTROL_PLANE_ARCH)
        .map_err(|e| e.to_string())?;
    let mut prepared = match &rules.step {
        Step::Decided(decision) => return Ok((decision.clone(), decision.clone())),
        Step::Guest(prepared) => (**prepared).clone(),
    };
    // What the planner's vCenter round gives the guest, read offline.
    prepared.cluster.vcenter = inputs.vcenter_facts(&prepared).map_err(|e| e.to_string())?;
    // And what its EC2 rounds give, from the case's ec2.yaml.
    prepared.cluster.ec2 = inputs.ec2_facts(&prepared);
    let user_data = rules.user_data.clone();
    let user_data = user_data.as_deref();
    let native = match native_rule(&prepared.platform_type) {
        None => prepared.without_guest(),
        Some(rule) => decide_text(
            rule,
            stream,
            &prepared.machineset,
            &prepared.cluster,
            user_data,
        ),
    };
    // The planner stamps the stub upgrade's time; the library has no clock.
    let native = stamp_upgrade(native, now);
    let guest = guests.get(prepared.platform_type.as_str());
    let wasm = inputs
        .decide(rules, guest, now)
        .map_err(|e| e.to_string())?;
    Ok((native, wasm))
}

/// One golden case, checked by `mco_host::cases` as `guests test` checks
/// it (expected.json, then the patch applied and decided again), with the
/// native rules and the wasm guests deciding side by side.
fn check_case(case: &Path, guests: &BTreeMap<&str, BootImageGuest>) -> Result<Pass, CaseFailure> {
    mco_job_bootimage::case::check(case, &mco_host::FEATURE_GATES, |inputs, now| {
        let (native, wasm) = decide(inputs, guests, now)?;
        if native != wasm {
            return Err(format!(
                "native and wasm disagree:\n  native: {native:?}\n  wasm:   {wasm:?}"
            ));
        }
        mco_bootimage::validate_decision_for(&native, inputs.kind)
            .map_err(|e| format!("invalid decision: {e}"))?;
        Ok(native)
    })
}

/// Every case is checked, and every failing one is listed, so one broken
/// rule shows all the cases it breaks.
#[test]
fn native_and_wasm_agree_on_every_golden_case_and_patches_converge() {
    let runtime = common::runtime(RuntimeConfig::default());
    let guests = guests(&runtime);
    let golden = common::golden_cases("bootimage");
    assert!(
        golden.len() >= 40,
        "only {} boot image golden cases",
        golden.len()
    );
    let mut patches = 0;
    let mut failures = Vec::new();
    for case in &golden {
        let name = common::case_name(case);
        match check_case(case, &guests) {
            Ok(pass) => patches += usize::from(pass == Pass::PatchConverged),
            Err(failure) => failures.push(format!("{name}: {failure}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} boot image golden cases failed:\n{}",
        failures.len(),
        golden.len(),
        failures.join("\n")
    );
    assert!(patches >= 15, "only {patches} patch cases");
}

#[test]
fn one_instance_serves_many_machinesets() {
    let runtime = common::runtime(RuntimeConfig::default());
    let guests = guests(&runtime);
    let inputs = read(&common::repo_root().join("tests/golden/bootimage/gcp-patch-boot-disk-only"));
    let Ok(Step::Guest(prepared)) = inputs.host_rules(CONTROL_PLANE_ARCH).map(|r| r.step) else {
        panic!("the case should reach the guest");
    };
    let guest = &guests["GCP"];
    let stream = StreamInput::new(inputs.stream().unwrap_or_else(|e| panic!("{e}")));
    let mut session = guest
        .session("GCP", &stream)
        .unwrap_or_else(|e| panic!("{e}"));
    let first = session
        .decide(&prepared.machineset, &prepared.cluster, None)
        .unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..100 {
        let again = session
            .decide(&prepared.machineset, &prepared.cluster, None)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            again, first,
            "a guest instance must not carry state between MachineSets"
        );
    }
}
