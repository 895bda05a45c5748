//! Guests propose, the host disposes: decisions that overstep what a job
//! may change, each from its own component (`guests/hostile` for boot
//! images, `guests/faulty` for MCNs) built against the real WIT, through
//! the real runtime and through `mco-host eval`. Every one is an
//! `invalid_output` failure (exit 3) whose message names the rule.

use crate::common;

use std::path::Path;
use std::process::Command;

use mco_job_bootimage::eval::BootImageInputs;
use mco_job_mcn::McnGuestExt as _;
use mco_mcn::{Decision, Facts, Node, Pool};
use mco_runtime::RuntimeConfig;

/// (hostile build, golden case it runs on, keep the case's user data, what
/// the refusal must say).
const BOOT_IMAGE_CASES: [(&str, &str, bool, &str); 18] = [
    (
        "instance-type",
        "aws-patch-stub-v2-converted",
        true,
        "the AWS guest's patch changes providerSpec.value.credentialsSecret.name, which a boot image decision may not touch",
    ),
    (
        "repoint-user-data",
        "aws-patch-stub-v2-converted",
        true,
        "the AWS guest's patch changes providerSpec.value.userDataSecret.name, which a boot image decision may not touch",
    ),
    (
        "foreign-secret",
        "aws-patch-stub-v2-converted",
        true,
        "the AWS guest's decision upgrades Secret \"aws-cloud-credentials\", but the MachineSet's userDataSecret.name is \"worker-user-data\"",
    ),
    (
        "foreign-merge",
        "aws-patch-stub-v2-converted",
        true,
        "the AWS guest's stub upgrade changes the stub's ignition section",
    ),
    (
        "stub-without-user-data",
        "aws-patch-known-ami",
        false,
        "the AWS guest's decision upgrades the stub of Secret \"worker-user-data\" although the host passed no user data",
    ),
    (
        "unknown-ami",
        "aws-patch-known-ami",
        false,
        "the AWS guest's patch sets providerSpec.value.ami.id to \"ami-0badc0ffee0000000\", which is not the AMI the stream publishes",
    ),
    (
        "ec2-unlisted",
        "aws-patch-ec2-marketplace",
        false,
        "the AWS guest's patch sets providerSpec.value.ami.id to \"ami-0badc0ffee0000001\", which is neither the AMI the stream publishes for x86_64 in region \"us-east-1\" nor an AMI of marketplace product 59ead7de-2540-4653-a8b0-fa7926d5c845 at or below the stream's release that EC2 listed to the host in that region",
    ),
    (
        // EC2 listed it, for this product and region, but above the
        // stream's release (the old-scheme 418.94).
        "ec2-above-release",
        "aws-patch-ec2-marketplace",
        false,
        "the AWS guest's patch sets providerSpec.value.ami.id to \"ami-0b32435465768798c\", which is neither the AMI the stream publishes",
    ),
    (
        "not-an-object",
        "aws-patch-known-ami",
        false,
        "the AWS guest's merge patch is an array, not a JSON object",
    ),
    (
        "gcp-data-disk",
        "gcp-patch-boot-disk-only",
        false,
        "the GCP guest's patch changes providerSpec.value.disks[1].image of a disk that is not a boot disk",
    ),
    (
        "gcp-reorder",
        "gcp-patch-boot-disk-only",
        false,
        "the GCP guest's patch reorders providerSpec.value.disks",
    ),
    (
        "azure-outside-image",
        "azure-patch-ocp-paid-gen2",
        false,
        "the Azure guest's patch changes providerSpec.value.vmSize, which a boot image decision may not touch",
    ),
    (
        "vsphere-import-url",
        "vsphere-patch-swap-outdated-template",
        false,
        "the VSphere guest's decision imports with url \"https://ova.attacker.example/rhcos-backdoored.ova\", which is not the stream's vmware OVA url for x86_64",
    ),
    (
        "vsphere-import-folder",
        "vsphere-patch-swap-outdated-template",
        false,
        "the VSphere guest's decision imports into folder \"/dc1/vm/elsewhere\", not the MachineSet's workspace folder \"/dc1/vm/c1-x7k2p\"",
    ),
    (
        "vsphere-import-vcenter",
        "vsphere-patch-new-template",
        false,
        "the VSphere guest's decision imports into vCenter \"vcenter.attacker.example\", not the MachineSet's workspace vCenter \"vcenter.example.com\"",
    ),
    (
        "vsphere-import-template",
        "vsphere-patch-customer-template-elsewhere",
        false,
        "the VSphere guest's decision imports template \"rhcos-golden\", which is neither the cluster's template \"c1-x7k2p-rhcos-generated-failure-domain\" nor the MachineSet's own in the workspace folder",
    ),
    (
        "vsphere-import-current",
        "vsphere-noop-current-template",
        false,
        "the VSphere guest's decision imports template \"c1-x7k2p-rhcos-generated-region-generated-zone\", which already holds the stream's release 9.8.20260428-0 in the workspace folder",
    ),
    (
        "vsphere-other-field",
        "vsphere-patch-swap-outdated-template",
        false,
        "the VSphere guest's patch changes providerSpec.value.numCPUs, which a boot image decision may not touch",
    ),
];

fn case_dir(case: &str) -> std::path::PathBuf {
    common::repo_root()
        .join("tests/golden/bootimage")
        .join(case)
}

#[test]
fn hostile_boot_image_decisions_are_refused_by_the_runtime() {
    let runtime = common::runtime(RuntimeConfig::default());
    for (variant, case, user_data, message) in BOOT_IMAGE_CASES {
        let guest = common::bootimage_guest(
            &runtime,
            &common::test_guest(&format!("hostile-{variant}.wasm")),
        );
        let mut inputs = BootImageInputs::read_case(&case_dir(case), &mco_host::FEATURE_GATES)
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        if !user_data {
            inputs.user_data_secret = None;
        }
        let rules = inputs
            .host_rules("x86_64")
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        let err = match inputs.decide(rules, Some(&guest), Default::default()) {
            Err(mco_job_bootimage::eval::EvalError::Guest(err)) => err,
            other => panic!("{variant}: expected a guest failure, got {other:?}"),
        };
        assert_eq!(err.kind(), "invalid_output", "{variant}: {err}");
        assert!(err.to_string().contains(message), "{variant}: {err}");
    }
}

fn eval(args: &[String]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_mco-host"))
        .args(args)
        .env(
            "MCO_GUEST_DIR",
            common::installed_guest("mcn.wasm")
                .parent()
                .unwrap_or(Path::new(".")),
        )
        .env_remove("RUST_LOG")
        .output()
        .unwrap_or_else(|e| panic!("spawn mco-host: {e}"));
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn hostile_boot_image_decisions_exit_3_from_eval_naming_the_rule() {
    for (variant, case, user_data, message) in BOOT_IMAGE_CASES {
        let dir = case_dir(case);
        let mut args = vec!["eval".to_owned(), "bootimage".to_owned()];
        for flag in ["machineset", "configmap", "infrastructure"] {
            args.push(format!("--{flag}"));
            args.push(dir.join(format!("{flag}.yaml")).display().to_string());
        }
        if user_data && dir.join("user-data-secret.yaml").exists() {
            args.push("--user-data-secret".into());
            args.push(dir.join("user-data-secret.yaml").display().to_string());
        }
        for (flag, file) in [
            ("--known-images", "known-images.txt"),
            ("--vcenter", "vcenter.yaml"),
            ("--install-config", "install-config.yaml"),
            ("--ec2", "ec2.yaml"),
        ] {
            if dir.join(file).exists() {
                args.push(flag.into());
                args.push(dir.join(file).display().to_string());
            }
        }
        let guest = common::test_guest(&format!("hostile-{variant}.wasm"));
        args.push("--guest".into());
        args.push(guest.display().to_string());
        let (code, stdout, stderr) = eval(&args);
        assert_eq!(code, Some(3), "{variant}: {stderr}");
        assert!(stdout.is_empty(), "{variant}: printed {stdout}");
        assert!(
            stderr.contains("returned invalid output"),
            "{variant}: {stderr}"
        );
        assert!(stderr.contains(message), "{variant}: {stderr}");
    }
}

/// (node name that picks the fault, what the refusal must say).
const MCN_CASES: [(&str, &str); 4] = [
    (
        "foreign-pool",
        "the MCN guest puts node foreign-pool in pool \"gpu-not-passed\", which is not one of the pools the host passed (worker) nor not-yet-set",
    ),
    ("duplicate-condition", "condition Updated appears twice"),
    (
        "inflated-generation",
        "to 9223372036854775807, beyond 2, the most the next write can reach",
    ),
    (
        "no-status",
        "reports node no-status without a status, which only a Windows node's MCN may lack",
    ),
];

fn worker_facts(name: &str) -> Facts {
    Facts {
        node: Node {
            name: name.into(),
            ..Node::default()
        },
        pools: vec![Pool {
            name: "worker".into(),
            node_selector: None,
            target_config: "rendered-worker-a".into(),
        }],
        ..Facts::default()
    }
}

#[test]
fn hostile_mcn_decisions_are_refused_by_the_runtime_and_eval() {
    let runtime = common::runtime(RuntimeConfig::default());
    let faulty = common::test_guest("faulty.wasm");
    let guest = common::mcn_guest(&runtime, &faulty);
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let pools = common::repo_root().join("tests/golden/mcn/reboot-05-drained/pools.yaml");
    for (node, message) in MCN_CASES {
        let facts = worker_facts(node);
        for result in [
            guest.derive(&facts),
            guest.derive_batch(std::slice::from_ref(&facts)).remove(0),
        ] {
            let err = result.err().unwrap_or_else(|| panic!("{node}: accepted"));
            assert_eq!(err.kind(), "invalid_output", "{node}: {err}");
            assert!(err.to_string().contains(message), "{node}: {err}");
        }

        let file = dir.path().join(format!("{node}.yaml"));
        std::fs::write(
            &file,
            format!(
                "apiVersion: v1\nkind: Node\nmetadata:\n  name: {node}\n  labels:\n    node-role.kubernetes.io/worker: \"\"\n"
            ),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let args = [
            "eval".to_owned(),
            "mcn".to_owned(),
            "--node".to_owned(),
            file.display().to_string(),
            "--pools".to_owned(),
            pools.display().to_string(),
            "--guest".to_owned(),
            faulty.display().to_string(),
        ];
        let (code, stdout, stderr) = eval(&args);
        assert_eq!(code, Some(3), "{node}: {stderr}");
        assert!(stdout.is_empty(), "{node}: printed {stdout}");
        let expected = message.replace("(worker)", "(");
        let expected = expected.split('(').next().unwrap_or(message);
        assert!(stderr.contains(expected), "{node}: {stderr}");
    }
}

/// The MCN rules the hostile guests do not reach, on the host's check
/// itself: config names, condition types, observedGeneration.
#[test]
fn mcn_rules_name_the_field() {
    let good = mco_mcn::derive(&Facts {
        node: Node {
            name: "worker-0".into(),
            labels: [("node-role.kubernetes.io/worker".into(), String::new())].into(),
            annotations: [
                (
                    "machineconfiguration.openshift.io/currentConfig".into(),
                    "rendered-worker-a".into(),
                ),
                (
                    "machineconfiguration.openshift.io/desiredConfig".into(),
                    "rendered-worker-a".into(),
                ),
                (
                    "machineconfiguration.openshift.io/state".into(),
                    "Done".into(),
                ),
            ]
            .into(),
            ..Node::default()
        },
        pools: vec![Pool {
            name: "worker".into(),
            node_selector: Some(mco_mcn::LabelSelector {
                match_labels: [("node-role.kubernetes.io/worker".into(), String::new())].into(),
                match_expressions: vec![],
            }),
            target_config: "rendered-worker-a".into(),
        }],
        ..Facts::default()
    });
    let facts = Facts {
        node: Node {
            name: "worker-0".into(),
            annotations: [(
                "machineconfiguration.openshift.io/desiredConfig".into(),
                "rendered-worker-a".into(),
            )]
            .into(),
            ..Node::default()
        },
        pools: vec![Pool {
            name: "worker".into(),
            node_selector: None,
            target_config: "rendered-worker-a".into(),
        }],
        ..Facts::default()
    };
    let Decision::Apply(mcn) = good else {
        panic!("{good:?}");
    };
    assert_eq!(
        mco_job_mcn::authority::check(&facts, &Decision::Apply(mcn.clone())),
        Ok(())
    );
    let mut other_config = mcn.clone();
    other_config.desired_config = "rendered-master-x".into();
    let mut unknown_type = mcn.clone();
    if let Some(status) = unknown_type.status.as_mut() {
        status.conditions[0].type_ = "RootGranted".into();
    }
    let mut lowered = mcn.clone();
    if let Some(status) = lowered.status.as_mut() {
        status.observed_generation = 1;
    }
    let mut raised = mcn.clone();
    if let Some(status) = raised.status.as_mut() {
        status.observed_generation = 10;
    }
    // Gate ImageModeStatusReporting off (the Default set): no configImage.
    let image = format!("quay.io/team/os@sha256:{}", "a".repeat(64));
    let with_image = Facts {
        node: Node {
            annotations: [
                (
                    "machineconfiguration.openshift.io/desiredConfig".to_string(),
                    "rendered-worker-a".to_string(),
                ),
                (
                    "machineconfiguration.openshift.io/desiredImage".to_string(),
                    image.clone(),
                ),
            ]
            .into(),
            ..facts.node.clone()
        },
        ..facts.clone()
    };
    let mut spec_image = mcn.clone();
    spec_image.desired_image = Some(image.clone());
    let mut status_image = mcn.clone();
    if let Some(status) = status_image.status.as_mut() {
        status.config_image = Some(mco_mcn::ConfigImage {
            current_image: None,
            desired_image: Some(image.clone()),
        });
    }
    // Gate on: AppliedFilesAndOS is gone (the MCN above is the gate-off set).
    let gate_on = Facts {
        feature_gates: [mco_mcn::IMAGE_MODE_STATUS_REPORTING.to_string()].into(),
        ..facts.clone()
    };
    let stored = Facts {
        stored: Some(mco_mcn::StoredNode {
            generation: Some(6),
            observed_generation: Some(7),
            ..mco_mcn::StoredNode::default()
        }),
        ..facts.clone()
    };
    for (facts, mcn, message) in [
        (
            &facts,
            other_config,
            "sets spec.configVersion.desired of node worker-0 to \"rendered-master-x\"",
        ),
        (
            &facts,
            unknown_type,
            "condition type \"RootGranted\", which the MachineConfigNode CRD's condition set does not allow",
        ),
        (
            &with_image,
            spec_image,
            "sets spec.configImage of node worker-0, which is written only with feature gate ImageModeStatusReporting on",
        ),
        (
            &with_image,
            status_image,
            "sets status.configImage of node worker-0, which is written only with feature gate ImageModeStatusReporting on",
        ),
        (
            &gate_on,
            mcn.clone(),
            "reports condition type AppliedFilesAndOS for node worker-0, which feature gate ImageModeStatusReporting (on) replaces",
        ),
        (
            &stored,
            lowered,
            "lowers status.observedGeneration of node worker-0 from 7 to 1",
        ),
        (
            &stored,
            raised,
            "sets status.observedGeneration of node worker-0 to 10, beyond 8",
        ),
    ] {
        let err = mco_job_mcn::authority::check(facts, &Decision::Apply(mcn))
            .err()
            .unwrap_or_else(|| panic!("{message}: accepted"));
        assert!(err.to_string().contains(message), "{err}");
    }
}
