//! The `mco-host` command line as outside suites call it: the eval
//! contract's output and exit statuses, and the generated CRD.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn host() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mco-host"));
    command.env(
        "MCO_GUEST_DIR",
        common::installed_guest("mcn.wasm")
            .parent()
            .unwrap_or(Path::new(".")),
    );
    command.env_remove("RUST_LOG");
    command
}

fn run(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = host()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn mco-host: {e}"));
    if let Some(mut pipe) = child.stdin.take() {
        pipe.write_all(stdin.unwrap_or_default().as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
    }
    child.wait_with_output().unwrap_or_else(|e| panic!("{e}"))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

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
    let name = "reboot-05-drained";
    let now = std::fs::read_to_string(case(name, "now.txt")).unwrap_or_default();
    let output = run(
        &[
            "eval",
            "mcn",
            "--node",
            &case(name, "node.yaml"),
            "--pools",
            &case(name, "pools.yaml"),
            "--machineconfigs",
            &case(name, "machineconfigs.yaml"),
            "--previous",
            &case(name, "previous.yaml"),
            "--now",
            now.trim(),
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.ends_with('\n') && stdout.trim_end().lines().count() == 1,
        "{stdout}"
    );
    let actual: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let expected = std::fs::read_to_string(case(name, "expected.json")).unwrap_or_default();
    let expected: serde_json::Value =
        serde_json::from_str(&expected).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(actual, expected);
}

#[test]
fn eval_reads_the_node_from_stdin_and_reports_skips() {
    let node = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"lonely"}}"#;
    let output = run(&["eval", "mcn", "--node", "-"], Some(node));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let actual: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(actual["action"], "skip");
    assert_eq!(actual["reason"], "node lonely matches no MachineConfigPool");
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
            "does not export mco:machine-config/node-state@0.1.0",
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
fn the_crd_in_deploy_is_what_the_types_generate() {
    let output = run(&["crds"], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let path = common::repo_root().join("deploy/crds/machineconfignodes.yaml");
    let committed =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        String::from_utf8_lossy(&output.stdout) == committed,
        "deploy/crds/machineconfignodes.yaml is stale: run `mco-host crds > deploy/crds/machineconfignodes.yaml`"
    );
}
