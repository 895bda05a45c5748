//! `mco-host guests audit` as a platform team runs it, through the built
//! binary: the installed MCN guest against a candidate that words one
//! condition differently (so it differs exactly on the nodes mid-update,
//! those of pool worker-canary here), a candidate that traps, a registry
//! entry's own candidate, a boot image candidate that oversteps, and the
//! hostile and broken inputs the exit statuses promise to refuse.

use crate::common;

use std::path::{Path, PathBuf};

use common::cli::{run, stderr};
use serde_json::{Value, json};

/// The text the candidate says instead (same length, see
/// `with_text_replaced`): the installed guest's `Updated` message for a
/// node that needs an update.
const FROM: &str = " needs an update";
const TO: &str = " needs a refresh";

struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new() -> Files {
        let files = Files {
            dir: tempfile::tempdir().unwrap_or_else(|e| panic!("{e}")),
        };
        files.write("pools.yaml", POOLS);
        let configs =
            common::repo_root().join("tests/golden/mcn/reboot-05-drained/machineconfigs.yaml");
        let configs = std::fs::read_to_string(configs).unwrap_or_else(|e| panic!("{e}"));
        files.write("machineconfigs.yaml", &configs);
        files.write("nodes.yaml", &nodes());
        let mcn =
            std::fs::read(common::installed_guest("mcn.wasm")).unwrap_or_else(|e| panic!("{e}"));
        let candidate = common::wasm::with_text_replaced(&mcn, FROM, TO);
        std::fs::write(files.path("candidate.wasm"), candidate).unwrap_or_else(|e| panic!("{e}"));
        files
    }

    fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join(file)
    }

    fn arg(&self, file: &str) -> String {
        self.path(file).display().to_string()
    }

    fn write(&self, file: &str, text: &str) {
        std::fs::write(self.path(file), text).unwrap_or_else(|e| panic!("{e}"));
    }

    /// `guests audit --job mcn` on the files, with `extra` arguments.
    fn mcn(&self, extra: &[&str]) -> std::process::Output {
        self.mcn_on("mcn", "nodes.yaml", extra)
    }

    /// `guests audit --job JOB` on the Nodes of `nodes` and the other files.
    fn mcn_on(&self, job: &str, nodes: &str, extra: &[&str]) -> std::process::Output {
        let (nodes, pools, configs) = (
            self.arg(nodes),
            self.arg("pools.yaml"),
            self.arg("machineconfigs.yaml"),
        );
        let mut args = vec![
            "guests",
            "audit",
            "--job",
            job,
            "--nodes",
            &nodes,
            "--pools",
            &pools,
            "--machineconfigs",
            &configs,
        ];
        args.extend_from_slice(extra);
        run(&args, None)
    }
}

const POOLS: &str = "\
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfigPool
metadata: {name: master}
spec:
  nodeSelector: {matchLabels: {node-role.kubernetes.io/master: ''}}
  configuration: {name: rendered-master-a}
---
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfigPool
metadata: {name: worker}
spec:
  nodeSelector: {matchLabels: {node-role.kubernetes.io/worker: ''}}
  configuration: {name: rendered-worker-b}
---
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfigPool
metadata: {name: worker-canary}
spec:
  nodeSelector: {matchLabels: {node-role.kubernetes.io/worker-canary: ''}}
  configuration: {name: rendered-worker-b}
";

fn node(name: &str, roles: &[&str], current: &str, state: &str) -> String {
    let labels: Vec<String> = roles
        .iter()
        .map(|role| format!("node-role.kubernetes.io/{role}: ''"))
        .collect();
    let a = "machineconfiguration.openshift.io";
    format!(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  labels: {{{}}}\n  annotations:\n    \
         {a}/currentConfig: {current}\n    {a}/desiredConfig: rendered-worker-b\n    {a}/state: {state}\n\
         status: {{phase: Running}}\n",
        labels.join(", ")
    )
}

/// Three workers done on their config, and the two nodes of pool
/// worker-canary mid-update, which the candidate words differently.
fn nodes() -> String {
    let mut nodes = Vec::new();
    for i in 0..3 {
        nodes.push(node(
            &format!("worker-{i}"),
            &["worker"],
            "rendered-worker-b",
            "Done",
        ));
    }
    for i in 0..2 {
        nodes.push(node(
            &format!("worker-canary-{i}"),
            &["worker", "worker-canary"],
            "rendered-worker-a",
            "Working",
        ));
    }
    nodes.join("---\n")
}

fn json_of(output: &std::process::Output) -> Value {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        stderr(output)
    );
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)))
}

fn counts(report: &Value) -> [u64; 4] {
    ["objects", "agree", "differ", "failed"].map(|k| report[k].as_u64().unwrap_or(u64::MAX))
}

/// The candidate differs on exactly the canary nodes, on exactly one key,
/// and the sample shows both sides of each, in node order.
#[test]
fn a_candidate_that_words_one_condition_differently_differs_on_the_nodes_it_says_it_on() {
    let files = Files::new();
    let candidate = files.arg("candidate.wasm");
    let active = common::installed_guest("mcn.wasm").display().to_string();
    let report = json_of(&files.mcn(&["--guest", &candidate, "--active", &active, "--json"]));
    assert_eq!(counts(&report), [5, 3, 2, 0], "{report:#}");
    let differing: Vec<&str> = report["keys"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, c)| c["differ"].as_u64() != Some(0))
        .map(|(key, _)| key.as_str())
        .collect();
    assert_eq!(differing, ["Updated"], "{report:#}");
    assert_eq!(report["keys"]["Updated"], json!({"agree": 3, "differ": 2}));
    assert_eq!(report["keys"]["decision"], json!({"agree": 5, "differ": 0}));
    let side = |node: &str, text: &str| format!("False Updated: Node {node}{text}");
    assert_eq!(
        report["sample"],
        json!([
            {"object": "worker-canary-0", "key": "Updated",
             "candidate": side("worker-canary-0", TO), "active": side("worker-canary-0", FROM)},
            {"object": "worker-canary-1", "key": "Updated",
             "candidate": side("worker-canary-1", TO), "active": side("worker-canary-1", FROM)},
        ])
    );
    assert_eq!(report["omitted"], 0);
    assert_eq!(report["failures"], json!({"active": {}, "candidate": {}}));
    assert_eq!(report["candidate"]["module"], candidate);
    assert_eq!(report["active"]["module"], active);

    // A sample of one keeps the first by node name and counts the other.
    let report = json_of(&files.mcn(&[
        "--guest", &candidate, "--active", &active, "--json", "--sample", "1",
    ]));
    assert_eq!(report["sample"][0]["object"], "worker-canary-0");
    assert_eq!(report["sample"].as_array().map(Vec::len), Some(1));
    assert_eq!(report["omitted"], 1);
}

/// Without `--json`: the counts, the differing key first with its counts,
/// and both sides of each difference.
#[test]
fn the_table_shows_the_counts_the_differing_key_first_and_both_sides() {
    let files = Files::new();
    let candidate = files.arg("candidate.wasm");
    let active = common::installed_guest("mcn.wasm").display().to_string();
    let output = files.mcn(&["--guest", &candidate, "--active", &active]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}{}", stderr(&output));
    assert!(
        stdout.contains("\n5 objects: 3 agree, 2 differ, 0 failed\n"),
        "{stdout}"
    );
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .skip_while(|line| !line.starts_with("KEY "))
        .skip(1)
        .take(2)
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["Updated", "3", "2"], "{stdout}");
    assert_eq!(rows[1][1..], ["5", "0"], "{stdout}");
    assert!(
        stdout.contains(
            "\ndifferences (2 shown, 0 more):\n  worker-canary-0 Updated\n    \
             candidate: False Updated: Node worker-canary-0 needs a refresh\n    \
             active:    False Updated: Node worker-canary-0 needs an update\n"
        ),
        "{stdout}"
    );
}

/// With `--registry` and no `--guest`, the entry's own candidate is
/// audited against its module; `--guest` takes the candidate's place.
#[test]
fn a_registry_entrys_candidate_is_audited_against_its_module() {
    let files = Files::new();
    let mcn = common::installed_guest("mcn.wasm");
    files.write(
        "registry.yaml",
        &format!(
            "mcn: {{module: {}, candidate: {{module: {}}}}}\n",
            mcn.display(),
            files.arg("candidate.wasm")
        ),
    );
    let registry = files.arg("registry.yaml");
    let report = json_of(&files.mcn(&["--registry", &registry, "--json"]));
    assert_eq!(counts(&report), [5, 3, 2, 0], "{report:#}");
    let installed = mcn.display().to_string();
    let report = json_of(&files.mcn(&["--registry", &registry, "--guest", &installed, "--json"]));
    assert_eq!(counts(&report), [5, 5, 0, 0], "{report:#}");
    assert_eq!(report["candidate"]["sha256"], report["active"]["sha256"]);

    files.write("plain.yaml", &format!("mcn: {}\n", mcn.display()));
    let output = files.mcn(&["--registry", &files.arg("plain.yaml")]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("registry entry mcn has no candidate"),
        "{}",
        stderr(&output)
    );
}

/// A candidate that traps on a node is counted failed there, by kind,
/// with the error in the failure sample; the audit still compares every
/// other node and exits 0.
#[test]
fn a_candidate_that_traps_is_counted_failed_not_a_crash() {
    let files = Files::new();
    files.write(
        "nodes.yaml",
        &[
            node("panic", &["worker"], "rendered-worker-b", "Done"),
            node("worker-0", &["worker"], "rendered-worker-b", "Done"),
        ]
        .join("---\n"),
    );
    let faulty = common::test_guest("faulty.wasm").display().to_string();
    let active = common::installed_guest("mcn.wasm").display().to_string();
    let report = json_of(&files.mcn(&["--guest", &faulty, "--active", &active, "--json"]));
    assert_eq!(counts(&report), [2, 0, 1, 1], "{report:#}");
    assert_eq!(
        report["failures"],
        json!({"active": {}, "candidate": {"trap": 1}})
    );
    let failed = &report["failureSample"][0];
    assert_eq!(
        (&failed["object"], &failed["module"], &failed["kind"]),
        (&json!("panic"), &json!("candidate"), &json!("trap"))
    );
    assert!(
        failed["error"]
            .as_str()
            .unwrap_or_default()
            .contains("faulty guest gave up on node panic"),
        "{failed}"
    );
    assert_eq!(
        report["keys"]["decision"],
        json!({"agree": 0, "differ": 1}),
        "{report:#}"
    );
    let decision = report["sample"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["key"] == "decision");
    assert_eq!(
        decision,
        Some(&json!({"object": "worker-0", "key": "decision",
            "candidate": "skip: faulty guest: no fault requested", "active": "apply"}))
    );
}

fn status_and_stderr(output: &std::process::Output) -> (Option<i32>, String) {
    (output.status.code(), stderr(output))
}

/// Bad input is exit status 2 and says what is wrong; a module that cannot
/// load is 3. Nothing is printed on stdout either way.
#[test]
fn broken_and_hostile_inputs_are_refused_with_their_exit_status() {
    let files = Files::new();
    let candidate = files.arg("candidate.wasm");
    let cases = [
        ("mcn", "missing.yaml", candidate.as_str(), 2, "missing.yaml"),
        (
            "mcn",
            "pools.yaml",
            &candidate,
            2,
            "expected Node, found MachineConfigPool",
        ),
        ("mcn", "nodes.yaml", &files.arg("nope.wasm"), 2, "nope.wasm"),
        (
            "mcn",
            "nodes.yaml",
            &files.arg("pools.yaml"),
            3,
            "pools.yaml",
        ),
        (
            "nonsense",
            "nodes.yaml",
            &candidate,
            2,
            "--job nonsense: not a job",
        ),
        (
            "bootImage.",
            "nodes.yaml",
            &candidate,
            2,
            "--job bootImage.: not a job",
        ),
        (
            "bootImage.GCP",
            "nodes.yaml",
            &candidate,
            2,
            "inputs of the mcn job",
        ),
    ];
    for (job, nodes, guest, code, says) in cases {
        let output = files.mcn_on(job, nodes, &["--guest", guest]);
        let (status, text) = status_and_stderr(&output);
        assert_eq!(status, Some(code), "{job} {nodes} {guest}: {text}");
        assert!(text.contains(says), "{job} {nodes} {guest}: {text}");
        assert!(output.stdout.is_empty(), "{job} {nodes} {guest}");
    }

    let twice = format!(
        "{}---\n{}",
        node("worker-0", &["worker"], "rendered-worker-b", "Done"),
        nodes()
    );
    files.write("nodes.yaml", &twice);
    let output = files.mcn(&["--guest", &candidate]);
    let (status, text) = status_and_stderr(&output);
    assert_eq!(status, Some(2), "{text}");
    assert!(
        text.contains("Node worker-0 is malformed: given twice"),
        "{text}"
    );

    files.write(
        "nodes.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {labels: {a: b}}\n",
    );
    let output = files.mcn(&["--guest", &candidate]);
    let (status, text) = status_and_stderr(&output);
    assert_eq!(status, Some(2), "{text}");
    assert!(text.contains("no metadata.name"), "{text}");

    files.write("nodes.yaml", "kind: Node\nmetadata: [not, a, map]\n");
    let output = files.mcn(&["--guest", &candidate]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));

    // Inputs of the other job are refused rather than ignored.
    let output = files.mcn(&[
        "--guest",
        &candidate,
        "--machinesets",
        &files.arg("nodes.yaml"),
        "--configmap",
        &files.arg("nodes.yaml"),
        "--infrastructure",
        &files.arg("nodes.yaml"),
    ]);
    let (status, text) = status_and_stderr(&output);
    assert_eq!(status, Some(2), "{text}");
    assert!(text.contains("inputs of a bootImage job"), "{text}");
}

fn golden_bootimage(case: &str, file: &str) -> PathBuf {
    common::repo_root()
        .join("tests/golden/bootimage")
        .join(case)
        .join(file)
}

fn arg(path: &Path) -> String {
    path.display().to_string()
}

/// Two GCP MachineSets with a data disk: a candidate that also moves the
/// data disk's image is refused by the host's authority checks on both,
/// each counted as its failure; the shipped guest audited against itself
/// agrees on both. A job for another platform than the cluster's is bad
/// input.
#[test]
fn a_boot_image_candidate_that_oversteps_fails_on_every_machineset_it_oversteps_on() {
    let files = Files::new();
    let case = "gcp-patch-boot-disk-only";
    let machineset = std::fs::read_to_string(golden_bootimage(case, "machineset.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    let other = machineset.replace("c1-x7k2p-worker-a", "c1-x7k2p-worker-b");
    files.write("machinesets.yaml", &format!("{machineset}---\n{other}"));
    let gcp = arg(&common::installed_guest("bootimage-gcp.wasm"));
    let hostile = arg(&common::test_guest("hostile-gcp-data-disk.wasm"));
    let audit = |job: &str, guest: &str| {
        run(
            &[
                "guests",
                "audit",
                "--job",
                job,
                "--guest",
                guest,
                "--active",
                &gcp,
                "--machinesets",
                &files.arg("machinesets.yaml"),
                "--configmap",
                &arg(&golden_bootimage(case, "configmap.yaml")),
                "--infrastructure",
                &arg(&golden_bootimage(case, "infrastructure.yaml")),
                "--json",
            ],
            None,
        )
    };
    let report = json_of(&audit("bootImage.GCP", &hostile));
    assert_eq!(counts(&report), [2, 0, 0, 2], "{report:#}");
    assert_eq!(
        report["failures"],
        json!({"active": {}, "candidate": {"invalid_output": 2}}),
        "{report:#}"
    );
    let failed: Vec<&str> = report["failureSample"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["object"].as_str())
        .collect();
    assert_eq!(failed, ["c1-x7k2p-worker-a", "c1-x7k2p-worker-b"]);

    let report = json_of(&audit("bootImage.GCP", &gcp));
    assert_eq!(counts(&report), [2, 2, 0, 0], "{report:#}");
    assert_eq!(report["keys"]["decision"], json!({"agree": 2, "differ": 0}));
    assert_eq!(report["keys"]["patch"], json!({"agree": 2, "differ": 0}));

    let output = audit("bootImage.AWS", &gcp);
    let (status, text) = status_and_stderr(&output);
    assert_eq!(status, Some(2), "{text}");
    assert!(
        text.contains("Infrastructure cluster is on platform GCP"),
        "{text}"
    );
}
