//! Golden renders of `mco-host status` (plain text, no colour, 120
//! columns) and its JSON, from the objects in `tests/golden/status/<case>/`
//! (`objects.yaml`, optional `guests.json` + `metrics.txt` for the admin
//! endpoint). `UPDATE_GOLDEN=1` rewrites `expected.txt` / `expected.json`.
//!
//! Beside the goldens, the JSON is checked against the same objects: the
//! pool counts add up to the pool's MCNs, and every node and MachineSet it
//! names says what its object says.

use crate::common;

use std::path::PathBuf;

use k8s_openapi::jiff::Timestamp;
use mco_host::cli::status::Status;
use mco_host::cli::status::model::{self, GuestSource, Inputs};
use mco_host::cli::status::render::{self, Style};
use mco_host::cli::status::shadow_counts;
use serde_json::Value;

const NOW: &str = "2026-01-01T01:00:00Z";
const CASES: &[&str] = &[
    "rollout-stuck-drain",
    "degraded-node",
    "finished-rollout",
    "bootimages-skip-hotloop",
];

fn dir(case: &str) -> PathBuf {
    mco_host::crate_dir()
        .join("../tests/golden/status")
        .join(case)
}

fn objects(case: &str) -> Vec<Value> {
    let path = dir(case).join("objects.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn inputs(case: &str) -> Inputs {
    let flags = Status::default_flags().unwrap_or_else(|e| panic!("{e}"));
    let mut inputs =
        Inputs::from_objects(objects(case), &flags).unwrap_or_else(|e| panic!("{case}: {e}"));
    if let Ok(guests) = std::fs::read_to_string(dir(case).join("guests.json")) {
        let metrics = std::fs::read_to_string(dir(case).join("metrics.txt")).unwrap_or_default();
        inputs.guests = GuestSource::Read {
            url: "http://mco-host.mco-system.svc:8080".into(),
            guests: serde_json::from_str(&guests)
                .unwrap_or_else(|e| panic!("{case}: guests.json: {e}")),
            shadow: shadow_counts(&metrics),
        };
    }
    inputs
}

fn summary(case: &str) -> model::Summary {
    let now: Timestamp = NOW.parse().unwrap_or_else(|e| panic!("{e}"));
    model::summarize(&inputs(case), now)
}

fn golden(case: &str, file: &str, actual: &str) {
    let path = dir(case).join(file);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let expected =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        actual, expected,
        "{case}/{file} differs (UPDATE_GOLDEN=1 rewrites it)"
    );
}

#[test]
fn renders_match_the_goldens() {
    common::check_each_case(CASES, |case| {
        let s = summary(case);
        let text = render::render(
            &s,
            Style {
                width: 120,
                colour: false,
            },
        );
        assert!(!text.contains('\x1b'), "{case}: colour in a plain render");
        assert!(
            text.lines().all(|l| l.chars().count() <= 120),
            "{case}: a line wider than 120:\n{text}"
        );
        golden(case, "expected.txt", &text);
        let json = serde_json::to_string_pretty(&s).unwrap_or_default() + "\n";
        golden(case, "expected.json", &json);
    });
}

#[test]
fn json_agrees_with_the_objects() {
    common::check_each_case(CASES, |case| {
        let objects = objects(case);
        let json = serde_json::to_value(summary(case)).unwrap_or_default();
        let mcn = |name: &str| {
            objects
                .iter()
                .find(|o| o["kind"] == "MachineConfigNode" && o["metadata"]["name"] == name)
                .unwrap_or_else(|| panic!("{case}: {name} is not an MCN of the case"))
        };
        let condition = |o: &Value, t: &str| {
            o["status"]["conditions"]
                .as_array()
                .and_then(|cs| cs.iter().find(|c| c["type"] == t).cloned())
                .unwrap_or(Value::Null)
        };
        for pool in json["pools"].as_array().into_iter().flatten() {
            let name = pool["name"].as_str().unwrap_or_default();
            let members = objects
                .iter()
                .filter(|o| o["kind"] == "MachineConfigNode" && o["spec"]["pool"]["name"] == name)
                .count() as u64;
            let sum: u64 = ["updated", "updating", "waiting", "degraded"]
                .iter()
                .map(|k| pool[*k].as_u64().unwrap_or(0))
                .sum();
            assert_eq!(
                (pool["total"].as_u64(), sum),
                (Some(members), members),
                "{case}: pool {name}"
            );
        }
        for node in json["nodesInFlight"].as_array().into_iter().flatten() {
            let o = mcn(node["name"].as_str().unwrap_or_default());
            assert_eq!(condition(o, "Updated")["status"], "False", "{case}: {node}");
            let c = condition(o, node["condition"].as_str().unwrap_or_default());
            assert_eq!(
                (&c["lastTransitionTime"], &c["message"]),
                (&node["since"], &node["message"]),
                "{case}"
            );
        }
        for node in json["degradedNodes"].as_array().into_iter().flatten() {
            let c = condition(
                mcn(node["name"].as_str().unwrap_or_default()),
                "NodeDegraded",
            );
            assert_eq!(
                (&c["status"], &c["message"]),
                (&Value::from("True"), &node["message"]),
                "{case}"
            );
        }
        let machinesets: Vec<&Value> = objects
            .iter()
            .filter(|o| o["kind"] == "MachineSet")
            .collect();
        let rows = json["bootImages"]["machinesets"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            rows.len(),
            machinesets.len(),
            "{case}: one row per MachineSet"
        );
        for row in &rows {
            let ms = machinesets
                .iter()
                .find(|m| m["metadata"]["name"] == row["name"])
                .unwrap_or_else(|| panic!("{case}: {} is not a MachineSet", row["name"]));
            let ami = &ms["spec"]["template"]["spec"]["providerSpec"]["value"]["ami"]["id"];
            assert_eq!(&row["currentImage"], ami, "{case}");
        }
    });
}

/// The cases show what they are named for.
#[test]
fn cases_show_their_story() {
    let s = serde_json::to_value(summary("rollout-stuck-drain")).unwrap_or_default();
    let stuck: Vec<(&str, &str)> = s["nodesInFlight"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| n["stuck"] == true)
        .map(|n| {
            (
                n["name"].as_str().unwrap_or_default(),
                n["phase"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(stuck, [("worker-2", "Draining")]);

    let s = serde_json::to_value(summary("degraded-node")).unwrap_or_default();
    assert_eq!(s["degradedNodes"][0]["name"], "worker-1");

    let s = serde_json::to_value(summary("finished-rollout")).unwrap_or_default();
    for pool in s["pools"].as_array().into_iter().flatten() {
        assert_eq!(pool["updated"], pool["total"], "{pool}");
    }
    assert_eq!(s["nodesInFlight"], serde_json::json!([]));

    let s = serde_json::to_value(summary("bootimages-skip-hotloop")).unwrap_or_default();
    let outcomes: Vec<(&str, &str, bool)> = s["bootImages"]["machinesets"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            (
                m["name"].as_str().unwrap_or_default(),
                m["outcome"].as_str().unwrap_or_default(),
                m["enrolled"] == true,
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            ("c1-infra-us-east-1b", "none", false),
            ("c1-worker-arm-us-east-1a", "none", true),
            ("c1-worker-custom-us-east-2", "skipped", true),
            ("c1-worker-gitops-eu-west-1", "hotLoop", true),
            ("c1-worker-us-east-1a", "updated", true),
        ]
    );
}
