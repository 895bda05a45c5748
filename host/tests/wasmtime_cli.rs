//! The installed MCN guest runs under the stock `wasmtime` CLI through its
//! offline entry (`derive-records`), as docs/reference/wit.md shows. The
//! CLI is installed by the test setup (`target/tools/bin`) or named by
//! `MCO_WASMTIME`; a missing CLI fails the test.

use crate::common;

use std::path::PathBuf;
use std::process::Command;

fn wasmtime() -> PathBuf {
    let path = std::env::var_os("MCO_WASMTIME")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::target_dir().join("tools/bin/wasmtime"));
    assert!(
        path.exists(),
        "{} is missing: the test setup installs wasmtime-cli there",
        path.display()
    );
    path
}

/// The example of the WIT reference (docs/reference/wit.md), kept in one place.
const INVOKE: &str = r#"derive-records([("node-role.kubernetes.io/worker", "")], [], {node: {name: "worker-0", phase: "Running", unschedulable: false, annotations: [("machineconfiguration.openshift.io/currentConfig", "rendered-worker-a"), ("machineconfiguration.openshift.io/desiredConfig", "rendered-worker-b"), ("machineconfiguration.openshift.io/state", "Done")]}, pools: [{name: "worker", node-selector: some({match-labels: [("node-role.kubernetes.io/worker", "")], match-expressions: []}), target-config: "rendered-worker-b"}], policies: {files: [], units: [], ssh-key: [%none]}, stored: none, previous: [], feature-gates: []})"#;

/// `-W unknown-imports-trap=y` stubs the `node-inputs` handles, which only
/// mco-host serves and `derive-records` never uses.
#[test]
fn the_stock_wasmtime_cli_runs_the_guests_offline_entry() {
    let page = std::fs::read_to_string(common::repo_root().join("docs/reference/wit.md"))
        .unwrap_or_default();
    assert!(
        page.contains(&format!(
            "wasmtime run -W unknown-imports-trap=y --invoke '{INVOKE}' $TARGET/release/guests/mcn.wasm"
        )),
        "docs/reference/wit.md must show the invocation this test runs"
    );
    let output = Command::new(wasmtime())
        .args(["run", "-W", "unknown-imports-trap=y", "--invoke", INVOKE])
        .arg(common::installed_guest("mcn.wasm"))
        .output()
        .unwrap_or_else(|e| panic!("running wasmtime: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.starts_with("apply("), "{stdout}");
    for expected in [
        r#"pool: "worker""#,
        r#"desired-config: "rendered-worker-b""#,
        r#"message: "Node worker-0 needs an update""#,
        r#"current: some("rendered-worker-a")"#,
    ] {
        assert!(stdout.contains(expected), "missing {expected} in {stdout}");
    }
}
