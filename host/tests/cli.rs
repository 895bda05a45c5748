//! The `mco-host` command line as outside suites call it: the eval
//! contract's output and exit statuses, and the generated CRD.

use crate::common;

use common::cli::{run, stderr};
use mco_test_support::large::{BootImageBulk, grown_aws_bootimage_case};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn case(name: &str, file: &str) -> String {
    common::repo_root()
        .join("tests/golden/mcn")
        .join(name)
        .join(file)
        .display()
        .to_string()
}

#[test]
fn eval_prints_one_json_line_matching_the_golden_case() {
    let dir = common::repo_root().join("tests/golden/mcn/reboot-05-drained");
    let output = eval_mcn_case(&dir);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.ends_with('\n') && stdout.trim_end().lines().count() == 1,
        "{stdout}"
    );
    assert_eq!(json_of(&output.stdout), expected_of(&dir));
}

#[test]
fn eval_decides_between_configs_at_the_apiservers_size_in_default_memory() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // Grown copies of golden cases: updating nodes (the two configs differ
    // in a few files, 1.5 MiB each) and a node at rest.
    let cases = common::grown_mcn_cases(dir.path());
    assert!(cases.len() >= 4, "{cases:?}");
    for case in cases {
        let output = eval_mcn_case(&case);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}: {}",
            case.display(),
            stderr(&output)
        );
        assert_eq!(
            json_of(&output.stdout),
            expected_of(&case),
            "{}",
            case.display()
        );
    }
}

/// `eval mcn` on a golden case folder.
fn eval_mcn_case(dir: &Path) -> std::process::Output {
    let flags = [
        "node",
        "pools",
        "machineconfigs",
        "previous",
        "machineconfiguration",
        "featuregate",
    ];
    let args = eval_args(dir, "mcn", &flags);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&args, None)
}

fn json_of(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(bytes)))
}

fn expected_of(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("expected.json"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    json_of(text.as_bytes())
}

#[test]
fn eval_reads_the_node_from_stdin_and_reports_skips() {
    let eval = |node: &str| {
        let output = run(&["eval", "mcn", "--node", "-"], Some(node));
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        serde_json::from_slice::<serde_json::Value>(&output.stdout)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let pending = eval(
        r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"new"},"status":{"phase":"Pending"}}"#,
    );
    assert_eq!(pending["action"], "skip");
    assert_eq!(
        pending["reason"],
        "node new is in phase Pending; its MachineConfigNode is created once it has joined the cluster"
    );
    // A node in no pool still gets an MCN, under the placeholder pool.
    let lonely = eval(r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"lonely"}}"#);
    assert_eq!(lonely["action"], "apply");
    assert_eq!(
        lonely["machineConfigNode"]["spec"]["pool"]["name"],
        "not-yet-set"
    );
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let garbage = dir.path().join("garbage.yaml");
    std::fs::write(&garbage, "kind: [unclosed\n").unwrap_or_else(|e| panic!("{e}"));
    let garbage = garbage.display().to_string();
    let pools = case("reboot-05-drained", "pools.yaml");
    let node = case("reboot-05-drained", "node.yaml");
    let cases: [(&[&str], &str); 5] = [
        (
            &["eval", "mcn", "--node", "/nonexistent/node.yaml"],
            "/nonexistent/node.yaml",
        ),
        (
            &["eval", "mcn", "--node", &pools],
            "expected Node, found MachineConfigPool",
        ),
        (
            &["eval", "mcn", "--node", &garbage],
            "not valid YAML or JSON",
        ),
        (
            &["eval", "mcn", "--node", "-", "--pools", "-"],
            "standard input",
        ),
        (
            &[
                "eval",
                "mcn",
                "--node",
                &node,
                "--guest",
                "/nonexistent/guest.wasm",
            ],
            "could not read guest module",
        ),
    ];
    for (args, message) in cases {
        let output = run(args, Some(""));
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(message),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(output.stdout.is_empty(), "{args:?} printed output");
    }
    let output = run(&["eval", "mcn"], None);
    assert_eq!(
        output.status.code(),
        Some(2),
        "missing --node is a usage error"
    );
}

fn hostile_node(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(
        &path,
        format!("apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    path
}

#[test]
fn hostile_guests_exit_3_within_the_deadline() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let faulty = common::test_guest("faulty.wasm").display().to_string();
    let cases = [
        ("loop", faulty.as_str(), "exceeded its deadline of 500ms"),
        (
            "allocate",
            &faulty,
            "hit its memory limit of 33554432 bytes",
        ),
        ("recurse", &faulty, "overflowed its stack"),
        ("panic", &faulty, "panicked: "),
        (
            "garbage",
            &faulty,
            "returned invalid output: spec.pool.name",
        ),
        (
            "huge",
            &faulty,
            "returned invalid output: skip reason or error message of 8388608 bytes",
        ),
    ];
    let forbidden = common::test_guest("faulty-forbidden-import.wasm")
        .display()
        .to_string();
    let wrong_world = common::test_guest("faulty-wrong-world.wasm")
        .display()
        .to_string();
    let not_component = dir.path().join("random.wasm");
    std::fs::write(&not_component, [0x13u8, 0x37, 0, 1, 2, 3, 4, 5, 6, 7])
        .unwrap_or_else(|e| panic!("{e}"));
    let not_component = not_component.display().to_string();
    let load_cases = [
        ("worker", forbidden.as_str(), "which guests may not use"),
        (
            "worker",
            &wrong_world,
            "does not export mco:machine-config/node-state@0.6.0",
        ),
        ("worker", &not_component, "is not WebAssembly"),
    ];
    for (node, guest, message) in cases.into_iter().chain(load_cases) {
        let node = hostile_node(dir.path(), node).display().to_string();
        let started = Instant::now();
        let output = run(
            &[
                "eval",
                "mcn",
                "--node",
                &node,
                "--guest",
                guest,
                "--guest-deadline",
                "500ms",
                "--guest-memory-mib",
                "32",
            ],
            None,
        );
        let elapsed = started.elapsed();
        assert_eq!(
            output.status.code(),
            Some(3),
            "{node} with {guest}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(message),
            "{node}: {}",
            stderr(&output)
        );
        assert!(output.stdout.is_empty(), "{node}: printed a decision");
        // Generous: compiling the guest is included; without the deadline
        // the loop would never end.
        assert!(
            elapsed < Duration::from_secs(30),
            "{node}: took {elapsed:?}"
        );
    }
}

#[test]
fn the_crds_in_deploy_are_what_the_types_generate() {
    let out = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = out.path().display().to_string();
    let output = run(&["crds", "--out-dir", &dir], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    for (file, _) in mco_host::crds().unwrap_or_else(|e| panic!("{e}")) {
        let read = |path: std::path::PathBuf| {
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        };
        let generated = read(out.path().join(file));
        let committed = read(common::repo_root().join("deploy").join(file));
        assert!(
            generated == committed,
            "deploy/{file} is stale: run `make crds`"
        );
    }
    // A stream holds one MachineConfigNode CRD: the Default set's unless
    // another is asked for.
    for (args, set) in [
        (&["crds"][..], "Default"),
        (&["crds", "--feature-set", "Default"], "Default"),
        (
            &["crds", "--feature-set", "TechPreviewNoUpgrade"],
            "TechPreviewNoUpgrade",
        ),
    ] {
        let stream = run(args, None);
        assert_eq!(stream.status.code(), Some(0), "{}", stderr(&stream));
        let text = String::from_utf8_lossy(&stream.stdout);
        assert_eq!(
            text.matches("kind: CustomResourceDefinition").count(),
            2,
            "{text}"
        );
        assert_eq!(
            text.matches("release.openshift.io/feature-set").count(),
            1,
            "{text}"
        );
        assert!(
            text.contains(&format!("release.openshift.io/feature-set: {set}")),
            "{text}"
        );
        assert_eq!(text.contains("configImage"), set != "Default", "{args:?}");
    }
    let refused = run(&["crds", "--feature-set", "OKD"], None);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
}

/// The flags for a boot image golden case's files.
fn bootimage_args(case: &str) -> Vec<String> {
    bootimage_args_in(
        &common::repo_root()
            .join("tests/golden/bootimage")
            .join(case),
    )
}

fn bootimage_args_in(dir: &Path) -> Vec<String> {
    let flags = [
        "machineset",
        "controlplanemachineset",
        "configmap",
        "infrastructure",
        "clusterversion",
        "machineconfiguration",
        "user-data-secret",
        "featuregate",
        "ec2",
    ];
    eval_args(dir, "bootimage", &flags)
}

/// `eval <job>` on a case folder: every input file it has among `flags`,
/// named after its flag, `--known-images` and `--now` from `now.txt`.
fn eval_args(dir: &Path, job: &str, flags: &[&str]) -> Vec<String> {
    let mut args = vec!["eval".to_string(), job.to_string()];
    for flag in flags {
        let file = dir.join(format!("{flag}.yaml"));
        if file.exists() {
            args.push(format!("--{flag}"));
            args.push(file.display().to_string());
        }
    }
    for (flag, file) in [("--known-images", "known-images.txt"), ("--now", "now.txt")] {
        if let Ok(text) = std::fs::read_to_string(dir.join(file)) {
            args.push(flag.to_string());
            args.push(if flag == "--now" {
                text.trim().to_string()
            } else {
                dir.join(file).display().to_string()
            });
        }
    }
    args
}

#[test]
fn eval_bootimage_prints_what_the_controller_writes_for_a_control_plane_machine_set() {
    // A ControlPlaneMachineSet patch with a stub upgrade stamped at `--now`.
    let case = "cpms-aws-patch-stub-v2-converted";
    let (code, decision, err) = eval_bootimage(case, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(decision, golden_decision(case));
    assert_eq!(
        decision["userDataSecret"]["annotations"]["machineconfiguration.openshift.io/stub-ignition-upgraded-at"],
        "2026-12-01T09:30:00Z"
    );
}

#[test]
fn eval_bootimage_answers_the_ec2_reads_from_the_ec2_file() {
    // Both rounds (the AMI, then its marketplace product) from the file.
    let case = "aws-patch-ec2-marketplace";
    let (code, decision, err) = eval_bootimage(case, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(decision, golden_decision(case));
    assert_eq!(decision["target"], "ami-0f10213243546576a");

    // Without the file EC2 is not consulted: the static lists decide.
    let args = without_ec2(case);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = run(&args, None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        json_of(&output.stdout),
        golden_decision("aws-skip-ec2-not-consulted-marketplace")
    );
}

/// A golden case's `eval bootimage` arguments without its `--ec2 FILE`.
fn without_ec2(case: &str) -> Vec<String> {
    let mut args = bootimage_args(case);
    if let Some(at) = args.iter().position(|a| a == "--ec2") {
        args.drain(at..at + 2);
    }
    args
}

#[test]
fn eval_bootimage_refuses_broken_ec2_files_and_decides_with_huge_ones() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = dir.path().join("ec2.yaml");
    let eval_with = |text: &str| {
        std::fs::write(&file, text).unwrap_or_else(|e| panic!("{e}"));
        let mut args = without_ec2("aws-patch-ec2-marketplace");
        args.extend(["--ec2".to_owned(), file.display().to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = run(&args, None);
        let decision = serde_json::from_slice(&output.stdout).unwrap_or(serde_json::Value::Null);
        (output.status.code(), decision, stderr(&output))
    };
    for (text, detail) in [
        ("{\"images\": [", "EC2 images (--ec2) is malformed"),
        ("[1, 2]", "EC2 images (--ec2) is malformed"),
        ("{\"us-east-1\": []}", "images"),
        ("{\"images\": {\"imageId\": \"ami-1\"}}", "malformed"),
        // (A number where text goes is read as its text, as YAML reads it.)
        (
            "{\"images\": [{\"imageId\": [\"ami-1\"], \"ownerId\": \"1\"}]}",
            "malformed",
        ),
        ("{\"images\": [{\"imageId\": \"ami-1\"}]}", "ownerId"),
        ("", "malformed"),
    ] {
        let (code, decision, err) = eval_with(text);
        assert_eq!(code, Some(2), "{text}: {decision} {err}");
        assert!(err.contains(detail), "{text}: {err}");
        assert!(err.contains("ec2.yaml"), "{text}: {err}");
    }
    // The golden images among 15,000 others (one with a 1 MiB name): the
    // same decision. 100,000 are past the YAML reader's node budget: a
    // clear refusal, not a stall.
    let golden = std::fs::read_to_string(
        common::repo_root().join("tests/golden/bootimage/aws-patch-ec2-marketplace/ec2.yaml"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let padded = |count: usize| {
        let mut inventory: serde_json::Value =
            serde_saphyr::from_str(&golden).unwrap_or_else(|e| panic!("{e}"));
        let images = inventory["images"]
            .as_array_mut()
            .unwrap_or_else(|| panic!("no images in {golden}"));
        for i in 0..count {
            images.push(serde_json::json!({"imageId": format!("ami-{i:017x}"),
                "ownerId": "679593333241",
                "name": format!("RHCOS-9.{i}-59ead7de-2540-4653-a8b0-fa7926d5c845"),
                "description": format!("RHEL CoreOS 9.{i} 9.{}.20260101-0 x86_64", 10 + i)}));
        }
        images.push(
            serde_json::json!({"imageId": "ami-big", "ownerId": "679593333241",
            "name": "x".repeat(1 << 20), "description": "9.8.20260428-0"}),
        );
        inventory.to_string()
    };
    let (code, decision, err) = eval_with(&padded(15_000));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(decision, golden_decision("aws-patch-ec2-marketplace"));
    let (code, _, err) = eval_with(&padded(100_000));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("ec2.yaml") && err.contains("malformed"),
        "{err}"
    );
}

#[test]
fn eval_bootimage_takes_exactly_one_of_machineset_and_controlplanemachineset() {
    let dir = common::repo_root().join("tests/golden/bootimage");
    let ms = dir.join("gcp-patch-boot-disk-only/machineset.yaml");
    let cpms = dir.join("cpms-gcp-patch/controlplanemachineset.yaml");
    let mut base = bootimage_args("cpms-gcp-patch");
    // Drop `--controlplanemachineset FILE` to get the common part.
    let at = base
        .iter()
        .position(|a| a == "--controlplanemachineset")
        .unwrap_or_else(|| panic!("no --controlplanemachineset in {base:?}"));
    base.drain(at..at + 2);
    let with = |extra: &[&str]| {
        let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
        args.extend(extra);
        run(&args, None)
    };
    let (ms, cpms) = (ms.display().to_string(), cpms.display().to_string());
    for (extra, what) in [
        (vec![], "neither"),
        (
            vec!["--machineset", &ms, "--controlplanemachineset", &cpms],
            "both",
        ),
        // A MachineSet file handed over as the ControlPlaneMachineSet.
        (vec!["--controlplanemachineset", &ms], "another kind"),
    ] {
        let output = with(&extra);
        assert_eq!(output.status.code(), Some(2), "{what}: {}", stderr(&output));
        assert!(output.stdout.is_empty(), "{what}: printed a decision");
    }
    let output = with(&["--controlplanemachineset", &cpms]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

fn eval_bootimage(case: &str, extra: &[&str]) -> (Option<i32>, serde_json::Value, String) {
    let mut args = bootimage_args(case);
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = run(&args, None);
    let decision = serde_json::from_slice(&output.stdout).unwrap_or(serde_json::Value::Null);
    (output.status.code(), decision, stderr(&output))
}

/// The decision a boot image golden case expects.
fn golden_decision(case: &str) -> serde_json::Value {
    expected_of(
        &common::repo_root()
            .join("tests/golden/bootimage")
            .join(case),
    )
}

#[test]
fn eval_bootimage_decides_on_a_1_mib_stream_in_default_memory() {
    let (code, decision, err, expected) =
        eval_grown_bootimage(BootImageBulk::Stream, "configmap.yaml");
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(decision, expected);
}

/// The guest reads the providerSpec fields its platform needs through the
/// host's handle, so 10,000 tags cost it nothing.
#[test]
fn eval_bootimage_decides_on_a_machineset_at_the_apiservers_size_in_default_memory() {
    let (code, decision, err, expected) =
        eval_grown_bootimage(BootImageBulk::MachineSet, "machineset.yaml");
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(decision, expected);
}

/// `eval bootimage` on golden case `aws-patch-known-ami` with `bulk` grown
/// (to over 1 MiB in `file`); the decision must stay the golden one.
fn eval_grown_bootimage(
    bulk: BootImageBulk,
    file: &str,
) -> (Option<i32>, serde_json::Value, String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let case = "aws-patch-known-ami";
    let golden = common::repo_root()
        .join("tests/golden/bootimage")
        .join(case);
    grown_aws_bootimage_case(&golden, dir.path(), bulk).unwrap_or_else(|e| panic!("{e:#}"));
    let size = std::fs::metadata(dir.path().join(file)).map_or(0, |m| m.len());
    assert!(size > 1 << 20, "{file}: {size} bytes");
    let args = bootimage_args_in(dir.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = run(&args, None);
    let decision = serde_json::from_slice(&output.stdout).unwrap_or(serde_json::Value::Null);
    (
        output.status.code(),
        decision,
        stderr(&output),
        golden_decision(case),
    )
}

#[test]
fn eval_bootimage_follows_the_feature_gates_of_the_clusters_version() {
    // ManagedBootImagesCPMS is off in the entry of ClusterVersion's version.
    let case = "cpms-aws-skip-featuregate-cpms-off";
    let (code, decision, err) = eval_bootimage(case, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(decision, golden_decision(case));
    assert_eq!(decision["action"], "skip");
    assert!(
        decision["reason"]
            .as_str()
            .is_some_and(|r| r.contains("ManagedBootImagesCPMS")),
        "{decision}"
    );
    // Without --featuregate: the Default feature set, where the gate is on
    // and the enrolled ControlPlaneMachineSet moves.
    let mut args = bootimage_args(case);
    let at = args
        .iter()
        .position(|a| a == "--featuregate")
        .unwrap_or_else(|| panic!("no --featuregate in {args:?}"));
    args.drain(at..at + 2);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = run(&args, None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let default: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or(serde_json::Value::Null);
    assert_eq!(default["action"], "patch", "{default}");
}

#[test]
fn eval_bootimage_refuses_a_broken_featuregate_with_exit_2() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        path.display().to_string()
    };
    let head = "apiVersion: config.openshift.io/v1\nkind: FeatureGate\nmetadata: {name: cluster}\n";
    let broken = [
        (
            write("garbage.yaml", "kind: [unclosed\n"),
            "not valid YAML or JSON",
        ),
        (
            write(
                "other-kind.yaml",
                "kind: ConfigMap\nmetadata: {name: cluster}\n",
            ),
            "expected FeatureGate, found ConfigMap",
        ),
        (
            write(
                "empty.yaml",
                &format!("{head}status: {{featureGates: []}}\n"),
            ),
            "status.featureGates is empty",
        ),
        (
            write(
                "no-version.yaml",
                &format!("{head}status: {{featureGates: [{{enabled: [{{name: X}}]}}]}}\n"),
            ),
            "FeatureGate cluster is malformed: missing field `version`",
        ),
        (
            write(
                "not-a-list.yaml",
                &format!("{head}status: {{featureGates: all of them}}\n"),
            ),
            "FeatureGate cluster is malformed: invalid type",
        ),
        (
            "/nonexistent/featuregate.yaml".to_string(),
            "/nonexistent/featuregate.yaml",
        ),
    ];
    for (file, message) in &broken {
        let (code, decision, err) = eval_bootimage("cpms-gcp-patch", &["--featuregate", file]);
        assert_eq!(code, Some(2), "{file}: {err}");
        assert_eq!(
            decision,
            serde_json::Value::Null,
            "{file}: printed a decision"
        );
        assert!(err.contains(message), "{file}: {err}");
    }
    // A FeatureGate whose status is not written yet is the Default set.
    let unwritten = write("unwritten.yaml", &format!("{head}spec: {{}}\n"));
    let (code, decision, err) = eval_bootimage("cpms-gcp-patch", &["--featuregate", &unwritten]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(decision, golden_decision("cpms-gcp-patch"));
}

#[test]
fn eval_bootimage_prints_the_golden_decision() {
    let case = "gcp-patch-boot-disk-only";
    let (code, decision, err) = eval_bootimage(case, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(decision, golden_decision(case));
}

#[test]
fn swapping_a_platform_guest_changes_the_decision_without_a_rebuild() {
    let case = "gcp-patch-boot-disk-only";
    let (_, shipped, _) = eval_bootimage(case, &[]);
    assert_eq!(shipped["action"], "patch");

    // The AWS build serving a GCP cluster reads a GCP providerSpec as AWS.
    let aws = common::installed_guest("bootimage-aws.wasm")
        .display()
        .to_string();
    let (code, swapped, err) = eval_bootimage(case, &["--guest", &aws]);
    assert_eq!(code, Some(0), "{err}");
    assert_ne!(
        swapped, shipped,
        "a different guest must give a different decision"
    );

    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let registry = dir.path().join("registry.yaml");
    std::fs::write(&registry, format!("bootImage:\n  GCP: {aws}\n"))
        .unwrap_or_else(|e| panic!("{e}"));
    let registry = registry.display().to_string();
    let (code, from_registry, err) = eval_bootimage(case, &["--registry", &registry]);
    assert_eq!((code, &from_registry), (Some(0), &swapped), "{err}");

    let empty = dir.path().join("empty.yaml");
    std::fs::write(&empty, "bootImage: {}\n").unwrap_or_else(|e| panic!("{e}"));
    let (code, unregistered, err) =
        eval_bootimage(case, &["--registry", &empty.display().to_string()]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(unregistered["action"], "noop");
    assert!(
        unregistered["reason"]
            .as_str()
            .is_some_and(|r| r.contains("does not support boot image updates"))
    );
}

#[test]
fn eval_bootimage_reports_bad_input_and_bad_guests() {
    let case = "gcp-patch-boot-disk-only";
    let mut args = bootimage_args(case);
    args[5] = args[3].clone(); // the MachineSet file given as --configmap
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = run(&args, None);
    let (code, err) = (output.status.code(), stderr(&output));
    assert_eq!(code, Some(2), "wrong kind: {err}");
    assert!(
        err.contains("expected ConfigMap, found MachineSet"),
        "{err}"
    );
    let (code, _, err) = eval_bootimage(case, &["--clusterversion", "/nonexistent/cv.yaml"]);
    assert_eq!(code, Some(2), "missing file: {err}");
    let mcn_guest = common::installed_guest("mcn.wasm").display().to_string();
    let (code, _, err) = eval_bootimage(case, &["--guest", &mcn_guest]);
    assert_eq!(code, Some(3), "wrong world: {err}");
    assert!(
        err.contains("does not export mco:machine-config/boot-image@0.6.0"),
        "{err}"
    );
}

/// A MachineSet nests as deep as the controller's watches decode
/// (`cluster::decode::MAX_DEPTH`, 100 levels): one level deeper, or
/// thousands, is bad input that names the object, not a parse error.
#[test]
fn eval_bootimage_refuses_a_machineset_nested_deeper_than_the_host_decodes() {
    let case = "gcp-patch-boot-disk-only";
    let args = bootimage_args(case);
    let at = args
        .iter()
        .position(|a| a == "--machineset")
        .unwrap_or_else(|| panic!("no --machineset in {args:?}"))
        + 1;
    let text = std::fs::read_to_string(&args[at]).unwrap_or_else(|e| panic!("{e}"));
    let mut machineset: serde_json::Value =
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    machineset["spec"]["template"]["spec"]["providerSpec"]["value"]["deep"] = "deep-value".into();
    let name = machineset["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let namespace = machineset["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // `value` is the 6th level.
    for (levels, refused) in [(94, false), (95, true), (10_000, true)] {
        let nested = format!("{}1{}", r#"{"a":"#.repeat(levels), "}".repeat(levels));
        let text = machineset.to_string().replace("\"deep-value\"", &nested);
        let file = dir.path().join(format!("deep-{levels}.json"));
        std::fs::write(&file, text).unwrap_or_else(|e| panic!("{e}"));
        let mut args = args.clone();
        args[at] = file.display().to_string();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = run(&args, None);
        let (code, err) = (output.status.code(), stderr(&output));
        if !refused {
            assert_eq!(code, Some(0), "{levels} levels: {err}");
            continue;
        }
        assert_eq!(code, Some(2), "{levels} levels: {err}");
        assert!(
            output.stdout.is_empty(),
            "{levels} levels: printed a decision"
        );
        let message = format!("MachineSet {namespace}/{name} is nested more than 100 levels deep");
        assert!(err.contains(&message), "{levels} levels: {err}");
    }
}

#[test]
fn guests_checks_a_registry_before_it_is_deployed() {
    // The installed guests: all load and pass their smoke evaluations.
    let output = run(&["guests"], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let status: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}"));
    let jobs = status["jobs"].as_object().cloned().unwrap_or_default();
    let names: Vec<&str> = jobs.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "bootImage.AWS",
            "bootImage.Azure",
            "bootImage.GCP",
            "bootImage.VSphere",
            "mcn"
        ]
    );
    let mcn_sha = status["jobs"]["mcn"]["sha256"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(mcn_sha.len(), 64);

    // A pin that does not match names the entry and both digests; exit 3.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let registry = dir.path().join("registry.yaml");
    let mcn = common::installed_guest("mcn.wasm");
    let pin = "ab".repeat(32);
    std::fs::write(
        &registry,
        format!("mcn: {{module: {}, sha256: {pin}}}\n", mcn.display()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let output = run(
        &["guests", "--registry", &registry.display().to_string()],
        None,
    );
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(3), "{message}");
    assert!(
        message.contains("registry entry mcn: ")
            && message.contains(&format!("has sha256 {mcn_sha}"))
            && message.contains(&format!("pins sha256 {pin}")),
        "{message}"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn guests_verify_refuses_a_policy_it_cannot_read_before_any_registry_call() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        path.display().to_string()
    };
    // Nothing listens here: a refusal that needed the registry would say so.
    let reference = "127.0.0.1:9/guests/mcn:v1";
    let file_module = file("file-module.yaml", "module: mcn.wasm\n");
    let no_root = file(
        "no-root.yaml",
        &format!(
            "oci: {reference}\nverify: {{identities: [{{subject: {{equal: ci@example.com}}}}]}}\n"
        ),
    );
    let missing_key = file(
        "guest.yaml",
        &format!(
            "apiVersion: mco-wasm.io/v1alpha1\nkind: MachineConfigGuest\nmetadata: {{name: mcn}}\n\
             spec: {{job: mcn, oci: {reference}, verify: {{allOf: [{{key: {{file: gone.pub}}}}]}}}}\n"
        ),
    );
    let unreadable_policy = file(
        "pki.yaml",
        "apiVersion: config.openshift.io/v1\nkind: ClusterImagePolicy\nmetadata: {name: pki}\n\
         spec:\n  scopes: ['127.0.0.1:9/guests']\n  policy:\n    rootOfTrust:\n      policyType: PKI\n      \
         pki: {caRootsData: bm90IGEgY2VydGlmaWNhdGU=, pkiCertificateSubject: {email: ci@example.com}}\n",
    );
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec![reference], "give the policy".into()),
        (vec!["--key", "k.pub"], "name the module".into()),
        (vec![&file_module], "is not an oci: module".into()),
        (
            vec![&no_root],
            "verify: identities are named without trustedRoot".into(),
        ),
        (
            vec!["--entry", &missing_key],
            format!(
                "oci:{reference}: verify key {}: ",
                dir.path().join("gone.pub").display()
            ),
        ),
        (
            vec![reference, "--identity", "ci@example.com"],
            "no trustedRoot is given".into(),
        ),
        (
            vec![reference, "--cluster-image-policy", &unreadable_policy],
            "clusterImagePolicies: clusterimagepolicy/pki: pki: caRootsData".into(),
        ),
        (
            vec![&missing_key, "--key", "k.pub"],
            "the policy comes from one place".into(),
        ),
    ];
    for (args, why) in cases {
        let mut all = vec!["guests", "verify"];
        all.extend(&args);
        let output = run(&all, None);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
        assert!(message.contains(&why), "{args:?}: {message}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}

/// A reader that stops early (`mco-host completions zsh | head`) ends the
/// command quietly: exit status 0, nothing on stderr. The pipe's reading
/// end is closed before the command starts, so its first write fails.
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let (reader, writer) = std::io::pipe().unwrap_or_else(|e| panic!("{e}"));
    drop(reader);
    let output = common::cli::host()
        .args(["completions", "zsh"])
        .stdout(writer)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(output.stderr.is_empty(), "{}", stderr(&output));
}

/// Without a cluster the kubeconfig error says each thing once, although
/// kube's errors quote the ones they wrap.
#[test]
fn a_missing_kubeconfig_is_reported_without_repeats() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let missing = dir.path().join("kubeconfig");
    for command in ["status", "preflight"] {
        let output = common::cli::host()
            .arg(command)
            .env("KUBECONFIG", &missing)
            .env_remove("KUBERNETES_SERVICE_HOST")
            .env_remove("KUBERNETES_SERVICE_PORT")
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{command}: {message}");
        assert!(
            message.starts_with("mco-host: connecting to the cluster: "),
            "{command}: {message}"
        );
        assert_eq!(
            message.matches("No such file or directory").count(),
            1,
            "{command}: {message}"
        );
    }
}
