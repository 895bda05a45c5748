//! What the stock `wasmtime` CLI does with the installed guest, as
//! docs/reference/wit.md shows. The CLI is installed by the test setup (`target/tools/bin`) or
//! named by `MCO_WASMTIME`; a missing CLI fails the test.

mod common;

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

/// Since WIT 0.6.0 a node-state guest imports the handles of
/// `node-inputs`, which only mco-host serves: the stock CLI refuses to
/// instantiate it and names that import, as the WIT reference shows.
#[test]
fn the_stock_wasmtime_cli_names_the_handles_it_cannot_serve() {
    let page = std::fs::read_to_string(common::repo_root().join("docs/reference/wit.md"))
        .unwrap_or_default();
    assert!(
        page.contains("wasmtime run $TARGET/release/guests/mcn.wasm\n"),
        "docs/reference/wit.md must show the command this test runs"
    );
    let output = Command::new(wasmtime())
        .arg("run")
        .arg(common::installed_guest("mcn.wasm"))
        .output()
        .unwrap_or_else(|e| panic!("running wasmtime: {e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    let refusal = format!(
        "component imports instance `mco:machine-config/node-inputs@{}`, but a matching implementation was not found in the linker",
        mco_host::wit::version()
    );
    assert!(stderr.contains(&refusal), "missing {refusal} in {stderr}");
    assert!(
        page.contains(&refusal),
        "docs/reference/wit.md must show what the CLI says: {refusal}"
    );
}
