//! Paths shared by the host's integration tests. Guests are built by
//! `guests/build.sh --test` before `cargo test`; a missing guest fails the
//! test with that hint instead of skipping it.

#![allow(dead_code, reason = "each test binary uses a different subset")]

pub mod cli;
pub mod wasm;

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};

use mco_job_bootimage::{BOOT_IMAGE_INTERFACE, BootImageGuest};
use mco_job_mcn::{McnGuest, NODE_STATE_INTERFACE};
use mco_runtime::{GuestModule, Runtime, RuntimeConfig};

/// The cargo target directory this test binary was built in.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("no current exe: {e}"));
    // <target>/<profile>/deps/<test binary>
    exe.ancestors()
        .nth(3)
        .unwrap_or_else(|| panic!("unexpected test binary path {}", exe.display()))
        .to_path_buf()
}

fn existing(path: PathBuf) -> PathBuf {
    assert!(
        path.exists(),
        "{} is missing: run guests/build.sh --test first",
        path.display()
    );
    path
}

/// An installed guest (`<target>/release/guests/<file>`).
pub fn installed_guest(file: &str) -> PathBuf {
    existing(target_dir().join("release/guests").join(file))
}

/// An adversarial guest (`<target>/test-guests/<file>`).
pub fn test_guest(file: &str) -> PathBuf {
    existing(target_dir().join("test-guests").join(file))
}

/// The Python boot image guest (`<target>/example-guests/python-gcp.wasm`,
/// built by `examples/python-gcp/build.sh`, which `make test` runs).
pub fn python_guest() -> PathBuf {
    let path = target_dir().join("example-guests/python-gcp.wasm");
    assert!(
        path.exists(),
        "{} is missing: run examples/python-gcp/build.sh (make python-guest) first",
        path.display()
    );
    path
}

pub fn repo_root() -> PathBuf {
    mco_host::crate_dir().join("..")
}

/// The golden case directories of a job, sorted, found as `guests test`
/// finds them.
pub fn golden_cases(job: &str) -> Vec<PathBuf> {
    let dir = repo_root().join("tests/golden").join(job);
    mco_host::cases::find(&[dir])
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|case| case.dir)
        .collect()
}

/// A golden case's name: its directory's (or its own, for a bare name).
pub fn case_name(case: &Path) -> String {
    case.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Runs `check` on every case, then fails once, naming each failing case
/// and its panic message: one broken case must not hide the others.
pub fn check_each_case<C: AsRef<Path>>(cases: &[C], check: impl Fn(&C)) {
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            let failed = std::panic::catch_unwind(AssertUnwindSafe(|| check(case))).err()?;
            Some(format!(
                "{}: {}",
                case_name(case.as_ref()),
                message(&*failed)
            ))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

fn message(panic: &(dyn Any + Send)) -> &str {
    match (panic.downcast_ref::<String>(), panic.downcast_ref::<&str>()) {
        (Some(message), _) => message,
        (None, Some(message)) => message,
        (None, None) => "a panic without a message",
    }
}

pub fn runtime(config: RuntimeConfig) -> Runtime {
    Runtime::new(config).unwrap_or_else(|e| panic!("runtime: {e}"))
}

pub fn mcn_guest(runtime: &Runtime, path: &Path) -> McnGuest {
    let module = GuestModule::from_file(runtime, path, NODE_STATE_INTERFACE)
        .unwrap_or_else(|e| panic!("{e}"));
    McnGuest::new(runtime, module).unwrap_or_else(|e| panic!("{e}"))
}

pub fn bootimage_guest(runtime: &Runtime, path: &Path) -> BootImageGuest {
    let module = GuestModule::from_file(runtime, path, BOOT_IMAGE_INTERFACE)
        .unwrap_or_else(|e| panic!("{e}"));
    BootImageGuest::new(runtime, module).unwrap_or_else(|e| panic!("{e}"))
}

/// Golden MCN cases grown to the apiserver's object size: nodes at rest,
/// mid-update under a `None` policy, a `registries.conf` change (whose
/// content the decision reads) either way, and a reboot.
const GROWN_CASES: [&str; 6] = [
    "policy-none-nmstate-00-updated-on-a",
    "policy-none-nmstate-01-working",
    "policy-none-nmstate-02-uncordon-requested",
    "policy-special-registries-safe-01-working",
    "policy-special-registries-unsafe-01-working",
    "reboot-02-working",
];

/// Copies of [`GROWN_CASES`] under `dir` whose rendered configs are
/// [`mco_test_support::large::OBJECT_BYTES`] each, grown once with many small
/// files and once with a few large ones; their expected decisions hold
/// unchanged, since the configs still differ only as before.
pub fn grown_mcn_cases(dir: &Path) -> Vec<PathBuf> {
    use mco_test_support::large::{Files, OBJECT_BYTES, grown_case};
    let mut cases = Vec::new();
    for name in GROWN_CASES {
        for (files, suffix) in [
            (Files::Many, "many-files"),
            (Files::FewLarge, "large-files"),
        ] {
            let out = dir.join(format!("{name}-{suffix}"));
            let case = repo_root().join("tests/golden/mcn").join(name);
            grown_case(&case, &out, files, OBJECT_BYTES).unwrap_or_else(|e| panic!("{e:#}"));
            cases.push(out);
        }
    }
    cases
}
