//! `mco-host guests bench` as a platform team runs it before a swap: the
//! table's shape on a module that fits, the verdict on one whose registry
//! entry it does not fit, and bad input with the exit statuses of
//! `guests test`.

use crate::common;

use std::path::{Path, PathBuf};

use common::cli::{run, stderr};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn case(job: &str, name: &str) -> String {
    common::repo_root()
        .join("tests/golden")
        .join(job)
        .join(name)
        .display()
        .to_string()
}

/// Cases that reach the GCP guest, and one the host rules decide alone.
fn gcp_cases() -> Vec<String> {
    [
        "gcp-patch-boot-disk-only",
        "gcp-noop-on-target",
        "gcp-skip-marketplace-image",
        "gcp-patch-stub-v2-converted",
        "cpms-gcp-skip-not-enrolled",
    ]
    .map(|name| case("bootimage", name))
    .to_vec()
}

fn bench(module: &Path, cases: &[String], extra: &[&str]) -> std::process::Output {
    let module = module.display().to_string();
    let mut args = vec!["guests", "bench", &module, "--runs", "3"];
    args.extend_from_slice(extra);
    args.push("--cases");
    args.extend(cases.iter().map(String::as_str));
    run(&args, None)
}

/// A registry file in `dir` whose GCP entry is `entry` (YAML flow form).
fn registry(dir: &Path, name: &str, entry: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("bootImage:\n  GCP: {entry}\n"))
        .unwrap_or_else(|e| panic!("{e}"));
    path.display().to_string()
}

/// The row of `job` in the table, split on runs of two or more spaces.
fn row<'a>(stdout: &'a str, job: &str) -> Vec<&'a str> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("{job} ")))
        .unwrap_or_else(|| panic!("no {job} row in:\n{stdout}"));
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

fn mib(cell: &str) -> f64 {
    cell.strip_suffix(" MiB")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a MiB figure: {cell:?}"))
}

#[test]
fn a_module_that_fits_gets_its_figures_beside_the_default_limits() {
    let module = common::installed_guest("bootimage-gcp.wasm");
    let size = std::fs::metadata(&module)
        .unwrap_or_else(|e| panic!("{e}"))
        .len();
    let output = bench(&module, &gcp_cases(), &[]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}{}", stderr(&output));
    let first = stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("module  {}: {size} bytes", module.display()))
            && first.contains(", compiled in "),
        "{stdout}"
    );
    // The Rust guest fits a ConfigMap: no word of OCI.
    assert!(!stdout.contains("must travel by OCI"), "{stdout}");
    let header = stdout.lines().nth(1).unwrap_or_default();
    for column in [
        "job",
        "cases",
        "decisions",
        "p50",
        "p99",
        "deadline",
        "peak memory",
        "memoryMiB",
        "verdict",
    ] {
        assert!(header.contains(column), "{column} not in {header:?}");
    }
    let cells = row(&stdout, "bootImage.GCP");
    assert_eq!(cells.len(), 9, "{cells:?}");
    // Four cases reach the guest, three decisions each.
    assert_eq!(&cells[1..3], ["4", "12"], "{cells:?}");
    assert_eq!(cells[5], "1s (default)", "{cells:?}");
    assert_eq!(cells[7], "12 (default)", "{cells:?}");
    assert_eq!(cells[8], "fits", "{cells:?}");
    // Measured by the store's limiter: above nothing, within the cap.
    let peak = mib(cells[6]);
    assert!(peak > 0.0 && peak <= 12.0, "{cells:?}");
    assert!(
        stdout.ends_with("\n1 cases decided by the host rules alone, not timed\n"),
        "{stdout}"
    );
}

#[test]
fn a_module_over_its_entrys_limits_is_told_so_and_exits_1() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let module = common::installed_guest("bootimage-gcp.wasm");
    let tight = format!(
        "{{module: {}, memoryMiB: 1, deadline: 1us}}",
        module.display()
    );
    let tight = registry(dir.path(), "tight.yaml", &tight);
    let output = bench(&module, &gcp_cases(), &["--registry", &tight]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}{}", stderr(&output));
    let cells = row(&stdout, "bootImage.GCP");
    // The entry's own limits, not marked as defaults.
    assert_eq!(cells[5], "1us", "{cells:?}");
    assert_eq!(cells[7], "1", "{cells:?}");
    let verdict = cells[8];
    assert!(verdict.starts_with("does not fit: p99 "), "{verdict}");
    assert!(verdict.contains(" > deadline "), "{verdict}");
    assert!(
        verdict.contains(&format!("; peak memory {} > memoryMiB 1", cells[6])),
        "{verdict}"
    );
    assert!(
        stderr(&output).contains("1 of 1 jobs do not fit their limits"),
        "{}",
        stderr(&output)
    );

    // An entry asking for more than the host's ceiling is refused by run;
    // a ceiling that admits it makes it fit.
    let big = format!("{{module: {}, memoryMiB: 64}}", module.display());
    let big = registry(dir.path(), "big.yaml", &big);
    let output = bench(&module, &gcp_cases(), &["--registry", &big]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}{}", stderr(&output));
    assert!(
        row(&stdout, "bootImage.GCP")[8].contains(
            "memoryMiB 64 is above the host's --guest-memory-max-mib 12, so run refuses the entry"
        ),
        "{stdout}"
    );
    let admitted = ["--registry", big.as_str(), "--guest-memory-max-mib", "64"];
    let output = bench(&module, &gcp_cases(), &admitted);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}{}", stderr(&output));
    let cells = row(&stdout, "bootImage.GCP");
    assert_eq!((cells[7], cells[8]), ("64", "fits"), "{cells:?}");
}

#[test]
fn an_mcn_module_is_measured_on_mcn_cases() {
    let module = common::installed_guest("mcn.wasm");
    let cases = [
        case("mcn", "reboot-05-drained"),
        case("mcn", "reboot-06-rebooting"),
    ];
    let output = bench(&module, &cases, &[]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}{}", stderr(&output));
    let cells = row(&stdout, "mcn");
    assert_eq!(&cells[1..3], ["2", "6"], "{cells:?}");
    assert_eq!(cells[8], "fits", "{cells:?}");
}

#[test]
fn bad_input_exits_2_and_a_module_of_another_world_3() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let module = common::installed_guest("bootimage-gcp.wasm");

    let empty = [dir.path().display().to_string()];
    let output = bench(&module, &empty, &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("not a case folder"),
        "{}",
        stderr(&output)
    );

    let missing = PathBuf::from("/nonexistent/guest.wasm");
    let output = bench(&missing, &gcp_cases(), &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("/nonexistent/guest.wasm")
            && stderr(&output).contains("No such file"),
        "{}",
        stderr(&output)
    );

    let host_alone = [case("bootimage", "cpms-gcp-skip-not-enrolled")];
    let output = bench(&module, &host_alone, &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("no case reached the module"),
        "{}",
        stderr(&output)
    );

    let module_arg = module.display().to_string();
    let one_case = case("bootimage", "gcp-noop-on-target");
    let no_runs = run(
        &[
            "guests",
            "bench",
            &module_arg,
            "--runs",
            "0",
            "--cases",
            &one_case,
        ],
        None,
    );
    assert_eq!(no_runs.status.code(), Some(2), "{}", stderr(&no_runs));

    let mcn = common::installed_guest("mcn.wasm");
    let output = bench(&mcn, &gcp_cases(), &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("boot-image"),
        "{}",
        stderr(&output)
    );
}
