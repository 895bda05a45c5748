//! Differential property tests: generated inputs (the same strategies as the
//! guest libraries' own property tests) go through the wasm guests and the
//! native libraries. The serialized decisions must be byte-identical, a
//! second run must give the same bytes (guests are pure), and the host's
//! `validate` must accept every decision. The wasm runs go through the
//! guest binding, so the host's authority checks (field ownership, the
//! image from the stream, the faithful stub; MCN pools, names, conditions)
//! run on every one: a false refusal fails the property.

use crate::common;

#[path = "../../guests/bootimage/tests/strategies/mod.rs"]
mod bootimage_strategies;
#[path = "../../guests/mcn/tests/strategies/mod.rs"]
mod mcn_strategies;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use mco_bootimage::{Platform, decide_text};
use mco_job_bootimage::{BootImageGuest, BootImageGuestExt as _, StreamInput};
use mco_job_mcn::McnGuestExt as _;
use mco_runtime::RuntimeConfig;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use proptest::{prop_assert, prop_assert_eq};
use serde_json::json;

/// Small enough that both tests together stay within a few seconds in a
/// release build; every case is a fresh wasm instance.
const MCN_CASES: u32 = 300;
const BOOT_IMAGE_CASES: u32 = 120;

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        // A manual runner has no source file to record failures beside.
        failure_persistence: None,
        ..Config::default()
    })
}

/// What `mco-host eval mcn` prints for `decision`, with a fixed clock.
fn mcn_bytes(name: &str, decision: mco_mcn::Decision) -> String {
    let node = Node {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            uid: Some("00000000-0000-0000-0000-000000000001".into()),
            ..ObjectMeta::default()
        },
        ..Node::default()
    };
    let value = match decision {
        mco_mcn::Decision::Apply(mcn) => {
            let now = Timestamp::from_second(1_800_000_000).unwrap_or_else(|e| panic!("{e}"));
            let object = mco_job_mcn::rules::to_object(&node, mcn, None, now);
            json!({"action": "apply", "machineConfigNode": object})
        }
        mco_mcn::Decision::Skip(reason) => json!({"action": "skip", "reason": reason}),
        mco_mcn::Decision::Error(message) => json!({"action": "error", "message": message}),
    };
    value.to_string()
}

#[test]
fn mcn_guest_and_library_give_identical_bytes_every_time() {
    let runtime = common::runtime(RuntimeConfig::default());
    let guest = common::mcn_guest(&runtime, &common::installed_guest("mcn.wasm"));
    let result = runner(MCN_CASES).run(&mcn_strategies::facts(), |facts| {
        let name = &facts.node.name;
        let native = mcn_bytes(name, mco_mcn::derive(&facts));
        let run = || {
            guest
                .derive(&facts)
                .map_err(|e| TestCaseError::fail(format!("the guest failed: {e}")))
        };
        let wasm = run()?;
        if let Err(why) = mco_mcn::validate(&wasm, facts.image_mode_status_reporting()) {
            return Err(TestCaseError::fail(format!("host refused {wasm:?}: {why}")));
        }
        let wasm = mcn_bytes(name, wasm);
        prop_assert_eq!(&native, &wasm, "native and wasm disagree");
        prop_assert_eq!(&mcn_bytes(name, run()?), &wasm, "a second run differs");
        Ok(())
    });
    if let Err(err) = result {
        panic!("{err}");
    }
}

#[test]
fn boot_image_guests_and_libraries_give_identical_bytes_every_time() {
    let runtime = common::runtime(RuntimeConfig::default());
    let files: [(&dyn Platform, &str); 4] = [
        (&mco_bootimage_gcp::Gcp, "bootimage-gcp.wasm"),
        (&mco_bootimage_aws::Aws, "bootimage-aws.wasm"),
        (&mco_bootimage_azure::Azure, "bootimage-azure.wasm"),
        (&mco_bootimage_vsphere::Vsphere, "bootimage-vsphere.wasm"),
    ];
    let platforms: [(&dyn Platform, BootImageGuest); 4] = files.map(|(rule, file)| {
        (
            rule,
            common::bootimage_guest(&runtime, &common::installed_guest(file)),
        )
    });
    let seeds = bootimage_strategies::Seeds::load();
    let inputs = (
        bootimage_strategies::machineset(&seeds),
        bootimage_strategies::stream(&seeds),
        bootimage_strategies::cluster(),
        bootimage_strategies::user_data(&seeds),
    );
    let result = runner(BOOT_IMAGE_CASES).run(&inputs, |(ms, stream, cluster, user_data)| {
        let Ok(view) = mco_bootimage::MachineSetView::from_object(&ms) else {
            return Ok(());
        };
        let (stream, user_data) = (stream.as_deref(), user_data.as_deref());
        for (rule, guest) in &platforms {
            let native = decide_text(*rule, stream, &view, &cluster, user_data).to_json();
            let run = || {
                guest
                    .decide_one(
                        rule.platform_type(),
                        &StreamInput::new(stream),
                        &view,
                        &cluster,
                        user_data,
                    )
                    .map_err(|e| TestCaseError::fail(format!("the guest failed: {e}")))
            };
            let wasm = run()?;
            prop_assert!(
                mco_bootimage::validate_decision(&wasm).is_ok(),
                "host refused {}",
                wasm.to_json()
            );
            let wasm = wasm.to_json();
            prop_assert_eq!(
                &native,
                &wasm,
                "{}: native and wasm disagree",
                rule.platform_type()
            );
            prop_assert_eq!(&run()?.to_json(), &wasm, "a second run differs");
        }
        Ok(())
    });
    if let Err(err) = result {
        panic!("{err}");
    }
}

/// Found by the property above: a float elsewhere in the providerSpec
/// crosses into the guest as JSON text, and serde_json's fast float parser
/// read it back one ULP off, so the GCP patch (which carries the whole
/// `disks` array) would have rewritten an unrelated number. The workspace
/// now parses floats exactly (`float_roundtrip`).
#[test]
fn floats_in_the_provider_spec_survive_the_guest_unchanged() {
    let runtime = common::runtime(RuntimeConfig::default());
    let guest = common::bootimage_guest(&runtime, &common::installed_guest("bootimage-gcp.wasm"));
    let ms = json!({"metadata": {"name": "ms", "annotations": {
            "capacity.cluster-autoscaler.kubernetes.io/labels": "kubernetes.io/arch=amd64"}},
        "spec": {"template": {"spec": {"providerSpec": {"value": {
            "disks": [{"boot": true, "image": "projects/rhcos-cloud/global/images/old"},
                      {"boot": false, "weight": -11.788264161927755}],
            "userDataSecret": {"name": "worker-user-data"}}}}}}});
    let view = mco_bootimage::MachineSetView::from_object(&ms).unwrap();
    let stream = r#"{"stream": "s", "architectures": {"x86_64": {"images": {"gcp": {"project": "rhcos-cloud", "name": "new"}}}}}"#;
    let cluster = mco_bootimage::ClusterFacts {
        control_plane_arch: "x86_64".into(),
        multi_arch: false,
        known_images: Default::default(),
        vcenter: None,
        ec2: None,
    };
    let native = decide_text(&mco_bootimage_gcp::Gcp, Some(stream), &view, &cluster, None);
    let wasm = guest
        .decide_one(
            "GCP",
            &StreamInput::new(Some(stream)),
            &view,
            &cluster,
            None,
        )
        .unwrap();
    assert_eq!(native.action(), "patch");
    assert_eq!(wasm.to_json(), native.to_json());
    assert!(
        wasm.to_json().contains("-11.788264161927755"),
        "{}",
        wasm.to_json()
    );
}
