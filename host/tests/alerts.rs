//! `deploy/monitoring/prometheusrule.yaml` through `promtool test rules`.
//!
//! promtool comes from `deploy/monitoring/promtool.sh` (Debian's package
//! unpacked, or the Go module proxy; cached in ~/.cache/mco-promtool). If it
//! cannot be had, this test fails: alerts nobody ran are not tested.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn repo() -> PathBuf {
    mco_host::crate_dir().join("..")
}

fn rule() -> Value {
    let path = repo().join("deploy/monitoring/prometheusrule.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn alerts(rule: &Value) -> Vec<&Value> {
    rule["spec"]["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["rules"].as_array().into_iter().flatten())
        .filter(|r| r.get("alert").is_some())
        .collect()
}

fn promtool() -> PathBuf {
    let script = repo().join("deploy/monitoring/promtool.sh");
    let out = Command::new(&script)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "{} could not provide promtool:\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

#[test]
fn every_alert_is_documented_and_tested() {
    let rule = rule();
    assert_eq!(rule["apiVersion"], "monitoring.coreos.com/v1");
    assert_eq!(rule["kind"], "PrometheusRule");
    let tests = std::fs::read_to_string(repo().join("deploy/monitoring/prometheusrule.test.yaml"))
        .unwrap_or_default();
    let names: Vec<&str> = alerts(&rule)
        .iter()
        .filter_map(|a| a["alert"].as_str())
        .collect();
    for wanted in [
        "MCOGuestFailures",
        "MCOGuestSwapFailed",
        "MCOShadowDifferences",
        "MCOBootImageUpdateDegraded",
        "MCOBootImageHotLoop",
        "MCONoLeader",
        "MCOJobRefusedToWrite",
        "MCONodeStuckDraining",
        "MCONodeStuckInPhase",
    ] {
        assert!(names.contains(&wanted), "no alert {wanted} in {names:?}");
    }
    for alert in alerts(&rule) {
        let name = alert["alert"].as_str().unwrap_or_default();
        for key in ["summary", "description"] {
            let text = alert["annotations"][key].as_str().unwrap_or_default();
            assert!(text.len() > 20, "{name}: annotation {key} missing or empty");
        }
        assert!(
            alert["annotations"]["description"]
                .as_str()
                .unwrap_or_default()
                .contains("Look first"),
            "{name}: the description must say what to look at first"
        );
        assert!(
            tests.contains(&format!(
                "alertname: {name}\n        exp_alerts:\n          - "
            )),
            "{name}: no promtool case where it fires"
        );
    }
}

#[test]
fn promtool_test_rules_passes() {
    let promtool = promtool();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    // promtool reads plain rule files: the PrometheusRule's spec is one.
    let spec = serde_json::to_string_pretty(&rule()["spec"]).unwrap_or_default();
    std::fs::write(dir.path().join("rules.json"), spec).unwrap_or_else(|e| panic!("{e}"));
    let tests = dir.path().join("prometheusrule.test.yaml");
    std::fs::copy(
        repo().join("deploy/monitoring/prometheusrule.test.yaml"),
        &tests,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let check = Command::new(&promtool)
        .arg("check")
        .arg("rules")
        .arg(dir.path().join("rules.json"))
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", promtool.display()));
    assert!(
        check.status.success(),
        "promtool check rules:\n{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
    let out = Command::new(&promtool)
        .arg("test")
        .arg("rules")
        .arg(&tests)
        .current_dir(dir.path())
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", promtool.display()));
    assert!(
        out.status.success(),
        "promtool test rules:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
