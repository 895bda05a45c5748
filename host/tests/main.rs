//! The host's integration tests, one binary: each file beside this one is a
//! module of it. One binary links wasmtime and kube once, where a binary per
//! file linked them nineteen times (docs/dev/records/ci-timings.md). Run one
//! file's tests by its module name:
//! `cargo test --locked --release --workspace --test host -- structure::`.

mod common;

mod alerts;
mod authority;
mod cli;
mod deploy;
mod docs_links;
mod golden_bootimage;
mod golden_mcn;
mod golden_status;
mod guests_audit;
mod guests_bench;
mod guests_cli;
mod guests_new;
mod hostile;
mod properties;
mod reference;
mod registry_faults;
mod structure;
mod swap;
mod wasmtime_cli;

/// A test file is compiled only where its binary's `main.rs` declares it
/// (`autotests = false`): one left out would be skipped without a word.
/// Held here for both merged binaries, this one and the end-to-end one
/// (`tests/e2e/tests/main.rs`).
#[test]
fn every_test_file_is_a_module_of_its_binary() {
    let repo = mco_host::crate_dir().join("..");
    for dir in [repo.join("host/tests"), repo.join("tests/e2e/tests")] {
        let main = std::fs::read_to_string(dir.join("main.rs"))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let mut missing = Vec::new();
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path();
            let Some(name) = path.file_stem().and_then(|stem| stem.to_str()) else {
                continue;
            };
            if name != "main" && !main.lines().any(|line| line == format!("mod {name};")) {
                missing.push(path.display().to_string());
            }
        }
        assert!(
            missing.is_empty(),
            "not declared in {}/main.rs: {missing:?}",
            dir.display()
        );
    }
}
