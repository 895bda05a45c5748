//! `mco-host guests new` as a platform team runs it: a crate of each job
//! (and of a platform the project ships no guest for),
//! made into an empty folder, built with its one command (`make test`:
//! the wasm32-wasip2 component, then `guests test` on its own cases),
//! passes its cases; it depends on nothing of this repository and builds
//! against the WIT of `wit/`. A used folder, a bad job or platform and a
//! folder name cargo would refuse are refused, and nothing is written.
//!
//! The crates build in `<target>/scaffold`, which stays warm between runs
//! like the rest of the target directory.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::cli::{run, stderr};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn new(args: &[&str], dir: &Path) -> std::process::Output {
    let dir = dir.display().to_string();
    let mut all = vec!["guests", "new"];
    all.extend(args);
    all.push(&dir);
    run(&all, None)
}

#[test]
fn a_new_guest_of_each_job_builds_and_passes_its_own_cases() {
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let target = common::target_dir().join("scaffold");
    for (args, name) in [
        (&["--job", "mcn"][..], "my-mcn-guest"),
        (
            &["--job", "bootImage", "--platform", "GCP"][..],
            "my-gcp-guest",
        ),
        // No shipped guest, and nothing the host lets a guest patch.
        (
            &["--job", "bootImage", "--platform", "Nutanix"][..],
            "my-nutanix-guest",
        ),
    ] {
        let dir = work.path().join(name);
        let output = new(args, &dir);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let made: serde_json::Value =
            serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(made["crate"], name);

        let manifest =
            std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_else(|e| panic!("{e}"));
        assert!(!manifest.contains("path ="), "{manifest}");
        for (file, text) in wit_files() {
            let written = std::fs::read_to_string(dir.join("wit").join(&file))
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(written, text, "{file}");
        }

        let output = Command::new("make")
            .arg("test")
            .arg(format!("MCO_HOST={}", env!("CARGO_BIN_EXE_mco-host")))
            .current_dir(&dir)
            .env("CARGO_TARGET_DIR", &target)
            // Not a sub-make of whatever make runs this test.
            .env_remove("MAKEFLAGS")
            .env_remove("MFLAGS")
            .env_remove("MAKELEVEL")
            .output()
            .unwrap_or_else(|e| panic!("make: {e}"));
        let stdout = text(&output.stdout);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{name}: {stdout}{}",
            stderr(&output)
        );
        assert!(
            stdout.ends_with("\n2 passed, 0 failed\n"),
            "{name}: {stdout}"
        );
    }
}

/// Each `.wit` file of the repository's `wit/`, with its text.
fn wit_files() -> Vec<(String, String)> {
    let dir = common::repo_root().join("wit");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap_or_else(|e| panic!("{e}")).path())
        .filter(|path| path.extension().is_some_and(|e| e == "wit"))
        .map(|path| {
            let name = path.file_name().unwrap_or_default();
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
            (name.to_string_lossy().into_owned(), text)
        })
        .collect();
    files.sort();
    assert!(!files.is_empty());
    files
}

#[test]
fn guests_new_refuses_a_used_folder_a_bad_job_or_platform_and_writes_nothing() {
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let used = work.path().join("used");
    std::fs::create_dir(&used).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(used.join("notes.txt"), "mine").unwrap_or_else(|e| panic!("{e}"));
    let fresh = work.path().join("fresh");
    for (args, dir, says) in [
        (
            &["--job", "mcn"][..],
            &used,
            "exists and is not an empty folder",
        ),
        (
            &["--job", "bootImage", "--platform", "gcp"][..],
            &fresh,
            "--platform \"gcp\" is not an OpenShift platform type",
        ),
        (
            &["--job", "bootImage"][..],
            &fresh,
            "--job bootImage needs --platform",
        ),
        (
            &["--job", "mcn", "--platform", "GCP"][..],
            &fresh,
            "--platform is for --job bootImage",
        ),
        (
            &["--job", "bootimage"][..],
            &fresh,
            "invalid value 'bootimage'",
        ),
        (
            &["--job", "mcn"][..],
            &work.path().join("2nd guest"),
            "the crate takes the folder's name",
        ),
    ] {
        let output = new(args, dir);
        let stderr = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    let left: Vec<_> = std::fs::read_dir(work.path())
        .unwrap_or_else(|e| panic!("{e}"))
        .map(|e| e.unwrap_or_else(|e| panic!("{e}")).file_name())
        .collect();
    assert_eq!(left, ["used"]);
    let in_used: Vec<_> = std::fs::read_dir(&used)
        .unwrap_or_else(|e| panic!("{e}"))
        .map(|e| e.unwrap_or_else(|e| panic!("{e}")).file_name())
        .collect();
    assert_eq!(in_used, ["notes.txt"]);
}
