//! `mco-host guests test|wit|inspect` as a platform team runs them: the
//! project's golden cases through the built binary (beside the library
//! path of golden_mcn.rs and golden_bootimage.rs), a module that gets
//! cases wrong, the WIT package, and what `inspect` says of a path.

use crate::common;

use std::path::{Path, PathBuf};

use common::cli::{run, stderr};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn golden(job: &str) -> String {
    common::repo_root()
        .join("tests/golden")
        .join(job)
        .display()
        .to_string()
}

fn lines_starting<'a>(stdout: &'a str, prefix: &str) -> Vec<&'a str> {
    stdout.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// Every golden case of every shipped guest (the installed registry: MCN
/// and the three platforms) passes through the CLI, each patch converging.
#[test]
fn guests_test_passes_every_golden_case_of_the_shipped_guests() {
    let cases = common::golden_cases("mcn").len() + common::golden_cases("bootimage").len();
    let output = run(
        &["guests", "test", &golden("mcn"), &golden("bootimage")],
        None,
    );
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}{}", stderr(&output));
    assert_eq!(lines_starting(&stdout, "ok    ").len(), cases, "{stdout}");
    assert!(
        stdout.ends_with(&format!("\n{cases} passed, 0 failed\n")),
        "{stdout}"
    );
    for job in [
        "[mcn]",
        "[bootImage.GCP]",
        "[bootImage.AWS]",
        "[bootImage.Azure]",
    ] {
        assert!(stdout.contains(job), "no case ran on {job}: {stdout}");
    }
    let converged = stdout.matches("(patch converges to noop)").count();
    assert!(converged >= 15, "only {converged} patches converged");
}

/// A registry entry's candidate runs every case beside its active module,
/// and `--guest` runs any module in the registry's place.
#[test]
fn guests_test_runs_a_candidate_beside_the_active_module_and_any_guest() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mcn = common::installed_guest("mcn.wasm");
    let registry = dir.path().join("registry.yaml");
    std::fs::write(
        &registry,
        format!(
            "mcn: {{module: {0}, candidate: {{module: {0}}}}}\n",
            mcn.display()
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let cases = common::golden_cases("mcn").len();
    let registry = registry.display().to_string();
    let output = run(
        &["guests", "test", "--registry", &registry, &golden("mcn")],
        None,
    );
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}{}", stderr(&output));
    assert_eq!(stdout.matches(" [mcn]\n").count(), cases, "{stdout}");
    assert_eq!(
        stdout.matches(" [mcn candidate]\n").count(),
        cases,
        "{stdout}"
    );

    let case = format!("{}/reboot-05-drained", golden("mcn"));
    let mcn = mcn.display().to_string();
    let output = run(&["guests", "test", "--guest", &mcn, &case], None);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}{}", stderr(&output));
    assert!(stdout.ends_with("\n1 passed, 0 failed\n"), "{stdout}");
}

fn copy_case(job: &str, name: &str, into: &Path) -> PathBuf {
    let from = common::repo_root()
        .join("tests/golden")
        .join(job)
        .join(name);
    let to = into.join(name);
    std::fs::create_dir_all(&to).unwrap_or_else(|e| panic!("{e}"));
    for entry in std::fs::read_dir(&from).unwrap_or_else(|e| panic!("{e}")) {
        let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
        let file = path.file_name().unwrap_or_default();
        std::fs::copy(&path, to.join(file)).unwrap_or_else(|e| panic!("{e}"));
    }
    to
}

/// Rewrites one field of a case's expected.json: the module now gets the
/// case "wrong".
fn expect(case: &Path, pointer: &str, value: serde_json::Value) {
    let path = case.join("expected.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut expected: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    *expected
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("{pointer} not in {}", path.display())) = value;
    std::fs::write(&path, expected.to_string()).unwrap_or_else(|e| panic!("{e}"));
}

/// Two wrong cases among four: both are printed with the field that
/// differs, the right ones pass, the JUnit report counts the same, and the
/// exit status is 1.
#[test]
fn guests_test_prints_every_failing_case_with_its_diff_and_exits_1() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let wrong_mcn = copy_case("mcn", "reboot-05-drained", dir.path());
    copy_case("mcn", "reboot-06-rebooting", dir.path());
    let wrong_image = copy_case("bootimage", "gcp-patch-boot-disk-only", dir.path());
    copy_case("bootimage", "gcp-noop-windows", dir.path());
    expect(
        &wrong_mcn,
        "/machineConfigNode/spec/configVersion/desired",
        "rendered-worker-z".into(),
    );
    let disk = "/patch/spec/template/spec/providerSpec/value/disks/0/image";
    expect(
        &wrong_image,
        disk,
        "projects/team/global/images/other".into(),
    );

    let junit = dir.path().join("report.xml");
    let output = run(
        &[
            "guests",
            "test",
            "--junit",
            &junit.display().to_string(),
            &dir.path().display().to_string(),
        ],
        None,
    );
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}{}", stderr(&output));
    assert!(
        stderr(&output).contains("2 of 4 cases failed"),
        "{}",
        stderr(&output)
    );
    let failed = lines_starting(&stdout, "FAIL  ");
    assert_eq!(failed.len(), 2, "{stdout}");
    assert!(
        stdout.contains(
            "reboot-05-drained [mcn]: decision differs from expected.json (- expected, + actual):\n  \
             /machineConfigNode/spec/configVersion/desired\n    - \"rendered-worker-z\"\n    + \"rendered-worker-b\""
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "gcp-patch-boot-disk-only [bootImage.GCP]: decision differs from expected.json (- expected, + actual):\n  {disk}\n    - \"projects/team/global/images/other\"\n"
        )),
        "{stdout}"
    );
    assert_eq!(lines_starting(&stdout, "ok    ").len(), 2, "{stdout}");
    assert!(stdout.ends_with("\n2 passed, 2 failed\n"), "{stdout}");
    let report = std::fs::read_to_string(&junit).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        report.contains(r#"tests="4""#) && report.contains(r#"failures="2""#),
        "{report}"
    );
}

#[test]
fn guests_test_without_cases_is_bad_input_not_a_pass() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let output = run(&["guests", "test", &dir.path().display().to_string()], None);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("not a case folder"),
        "{}",
        stderr(&output)
    );
}

/// The WIT package written is the repository's wit/, file for file.
#[test]
fn guests_wit_writes_the_package_the_host_was_built_with() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = dir.path().join("deps/mco");
    let output = run(&["guests", "wit", &out.display().to_string()], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let shown: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}"));
    let wit = common::repo_root().join("wit");
    let version = std::fs::read_to_string(wit.join("types.wit")).unwrap_or_default();
    assert!(
        version.starts_with(&format!(
            "package {};",
            shown["package"].as_str().unwrap_or("?")
        )),
        "{shown}"
    );
    for entry in std::fs::read_dir(&wit).unwrap_or_else(|e| panic!("{e}")) {
        let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
        let written = out.join(path.file_name().unwrap_or_default());
        assert_eq!(
            std::fs::read(&written).unwrap_or_else(|e| panic!("{}: {e}", written.display())),
            std::fs::read(&path).unwrap_or_else(|e| panic!("{e}")),
            "{}",
            written.display()
        );
    }
}

/// A path that does not exist is a missing file, never a registry lookup;
/// a module `run` would refuse is shown, with why, and exits 3.
#[test]
fn guests_inspect_tells_a_missing_file_and_a_module_run_would_refuse() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for missing in ["mcn.wasm", "/nonexistent/nope.wasm"] {
        let output = common::cli::host()
            .current_dir(dir.path())
            .args(["guests", "inspect", missing])
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{message}");
        assert!(
            message.contains(&format!("{missing}: No such file")),
            "{missing}: {message}"
        );
    }

    let forbidden = common::test_guest("faulty-forbidden-import.wasm");
    let output = run(
        &["guests", "inspect", &forbidden.display().to_string()],
        None,
    );
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let shown: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}"));
    let refused = shown["runRefuses"].as_str().unwrap_or_default();
    assert!(refused.contains("which guests may not use"), "{shown}");
    assert!(stderr(&output).contains(refused), "{}", stderr(&output));

    let mcn = common::installed_guest("mcn.wasm");
    let output = run(&["guests", "inspect", &mcn.display().to_string()], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let shown: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(shown["runRefuses"], serde_json::Value::Null, "{shown}");
}

/// `eval` lists only the options it takes: none of `run`'s registry
/// sources or poll.
#[test]
fn eval_help_lists_only_what_eval_takes() {
    let output = run(&["eval", "mcn", "--help"], None);
    let help = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(help.contains("--node"), "{help}");
    for run_only in [
        "--registry-poll",
        "--registry-crd",
        "--registry-configmap",
        "--resync",
    ] {
        assert!(!help.contains(run_only), "{run_only} in:\n{help}");
    }
}

/// The GCP golden cases, as `guests test` takes them.
fn gcp_golden_cases() -> Vec<String> {
    common::golden_cases("bootimage")
        .into_iter()
        .filter(|case| {
            let name = common::case_name(case);
            name.starts_with("gcp-") || name.starts_with("cpms-gcp-")
        })
        .map(|case| case.display().to_string())
        .collect()
}

/// A registry file in `dir` serving the Python guest for GCP with the
/// memory cap its entry sets (examples/python-gcp/README.md).
fn python_registry(dir: &Path) -> String {
    let registry = dir.join("registry.yaml");
    let module = common::python_guest();
    let entry = format!("{{module: {}, memoryMiB: 24}}", module.display());
    std::fs::write(&registry, format!("bootImage:\n  GCP: {entry}\n"))
        .unwrap_or_else(|e| panic!("{e}"));
    registry.display().to_string()
}

/// The boot image guest written in Python (examples/python-gcp) passes
/// every GCP golden case under the host's normal checks, import allowlist
/// included, with the memory cap its registry entry sets: the host's
/// ceiling admits the entry, and a guest without such an entry still gets
/// the default cap, which the Python guest does not fit.
#[test]
fn the_python_guest_passes_every_gcp_golden_case_under_its_entrys_limits() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let registry = python_registry(dir.path());
    let cases = gcp_golden_cases();
    assert!(cases.len() >= 39, "only {} GCP cases", cases.len());
    // Compiled once for both runs: the module is large.
    let cache = dir.path().join("compiled").display().to_string();
    let mut args = vec![
        "guests",
        "test",
        "--cache-dir",
        &cache,
        "--guest-memory-max-mib",
        "24",
        "--registry",
        &registry,
    ];
    args.extend(cases.iter().map(String::as_str));
    let output = run(&args, None);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}{}", stderr(&output));
    assert!(
        stdout.ends_with(&format!("\n{} passed, 0 failed\n", cases.len())),
        "{stdout}"
    );
    // Every case but those the host's rules decide (a ControlPlaneMachineSet
    // not enrolled, or with its feature gate off) ran on it.
    let on_guest = stdout.matches(" [bootImage.GCP]").count();
    let by_host = cases
        .iter()
        .filter(|case| case.contains("cpms-gcp-skip-"))
        .count();
    assert_eq!(by_host, 2, "{cases:?}");
    assert_eq!(on_guest, cases.len() - by_host, "{stdout}");
    assert!(
        stdout.matches("(patch converges to noop)").count() >= 12,
        "{stdout}"
    );

    // Without the entry's memoryMiB the host's default cap applies.
    let module = common::python_guest().display().to_string();
    let one = format!("{}/gcp-patch-boot-disk-only", golden("bootimage"));
    let output = run(
        &[
            "guests",
            "test",
            "--cache-dir",
            &cache,
            "--guest-memory-max-mib",
            "24",
            "--guest",
            &module,
            &one,
        ],
        None,
    );
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}{}", stderr(&output));
    assert!(
        stdout.contains("python-gcp.wasm hit its memory limit of 12582912 bytes"),
        "{stdout}"
    );
}

/// Hostile stream text never reaches the Python guest: the host parses
/// the stream (skipping unknown keys however deep), and the guest reports
/// why one cannot be used as its `error` decision.
#[test]
fn the_python_guest_answers_hostile_streams_with_an_error_decision() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let registry = python_registry(dir.path());
    let cache = dir.path().join("compiled").display().to_string();
    let case = format!("{}/gcp-patch-boot-disk-only", golden("bootimage"));
    let golden_stream = serde_saphyr::from_str::<serde_json::Value>(
        &std::fs::read_to_string(format!("{case}/configmap.yaml"))
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .unwrap_or_else(|e| panic!("{e}"))["data"]["stream"]
        .as_str()
        .unwrap_or_else(|| panic!("the case has a stream"))
        .to_owned();
    let body = golden_stream
        .trim_end()
        .strip_suffix('}')
        .unwrap_or_else(|| panic!("the case's stream is a JSON object"));
    let deep = format!(
        r#"{body}, "extra": {}{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    for (stream, expected) in [(deep.as_str(), "patch"), (r#"{"stream": NaN}"#, "error")] {
        let configmap = dir.path().join("configmap.json");
        let object = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "coreos-bootimages", "namespace": "openshift-machine-config-operator"},
            "data": {"stream": stream}});
        std::fs::write(&configmap, object.to_string()).unwrap_or_else(|e| panic!("{e}"));
        let output = run(
            &[
                "--cache-dir",
                &cache,
                "--guest-memory-max-mib",
                "24",
                "--registry",
                &registry,
                "eval",
                "bootimage",
                "--machineset",
                &format!("{case}/machineset.yaml"),
                "--infrastructure",
                &format!("{case}/infrastructure.yaml"),
                "--configmap",
                &configmap.display().to_string(),
            ],
            None,
        );
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let decision: serde_json::Value =
            serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(decision["action"], expected, "{decision}");
        if expected == "error" {
            let message = decision["message"].as_str().unwrap_or_default();
            assert!(
                message.starts_with("failed to reconcile machineset c1-x7k2p-worker-a, err: failed to parse CoreOS stream metadata: expected value"),
                "{message}"
            );
        }
    }
}
