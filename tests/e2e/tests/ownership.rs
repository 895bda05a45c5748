//! `mco-host run` beside the Machine Config Operator, on a real apiserver, as
//! the ServiceAccount of `deploy/`. The test plays the operator: its daemon
//! writes MCNs as upstream's does (Create as `machine-config-daemon`, then
//! ApplyStatus as `machine-config-operator`,
//! `pkg/upgrademonitor/upgrade_monitor.go`), and its boot image controller
//! updates MachineConfiguration `cluster`'s conditions. Observe mode writes
//! nothing and reports the agreement and the one planted difference; own
//! mode refuses to write while it sees those writers, and says why.

use crate::support;

use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail, ensure};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use mco_e2e::openshift;
use serde_json::{Value, json};
use tokio::time::sleep;

use support::bootimages::{Cluster, Image, MAPI, MachineSetSpec, NEW, OLD, Platform};
use support::fixture::{ANNOTATION_PREFIX, Fixture, machine_config_node};
use support::golden;

/// One control plane at a time (see `support::fixture`).
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
const POLL: Duration = Duration::from_millis(200);
const CONVERGE: Duration = Duration::from_secs(30);
/// How long "nothing is written" is watched for: several resyncs.
const QUIET: Duration = Duration::from_secs(4);
const FAST: [&str; 4] = ["--resync", "1s", "--lease-duration", "3s"];
/// `Cluster::start_controller` sets the lease duration itself.
const RESYNC: [&str; 2] = ["--resync", "1s"];

/// The MCN of golden case `case` (upstream's, step by step), renamed for
/// `node`.
fn daemon_mcn(case: &str, node: &str, uid: &str) -> Result<Value> {
    let path = golden::golden_dir().join(case).join("expected.json");
    let text = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
    let text = text.replace("worker-0", node);
    let out: Value = serde_json::from_str(&text)?;
    let mut mcn = out["machineConfigNode"].clone();
    mcn["metadata"]["ownerReferences"][0]["uid"] = json!(uid);
    Ok(mcn)
}

/// Writes `mcn` as upstream's daemon does: Create (its user agent's
/// manager), then ApplyStatus as `machine-config-operator`, forced.
async fn daemon_writes(fx: &Fixture, mcn: &Value) -> Result<()> {
    let api: Api<DynamicObject> = Api::all_with(fx.admin.clone(), &machine_config_node());
    let name = mcn["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let mut object = mcn.clone();
    object.as_object_mut().map(|o| o.remove("status"));
    let object: DynamicObject = serde_json::from_value(object)?;
    let create = PostParams {
        field_manager: Some("machine-config-daemon".into()),
        ..PostParams::default()
    };
    match api.create(&create, &object).await {
        Ok(_) => {}
        Err(e) if support::fixture::api_code(&e) == Some(409) => {}
        Err(e) => return Err(e).context("the daemon's create"),
    }
    let mut status = mcn["status"].clone();
    status["observedGeneration"] = json!(2);
    let body = json!({
        "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigNode",
        "metadata": {"name": name}, "status": status,
    });
    api.patch_status(
        &name,
        &PatchParams::apply("machine-config-operator").force(),
        &Patch::Apply(&body),
    )
    .await
    .context("the daemon's ApplyStatus")?;
    Ok(())
}

fn managers(object: &Value) -> Vec<String> {
    object["metadata"]["managedFields"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .filter_map(|e| e["manager"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

async fn ownership(fx: &Fixture, c: usize, job: &str) -> Result<Value> {
    let (code, body) = fx.controllers[c].get("/ownership").await?;
    ensure!(code == 200, "/ownership answered {code}: {body}");
    let reports: Vec<Value> = serde_json::from_str(&body)?;
    reports
        .into_iter()
        .find(|r| r["job"] == job)
        .ok_or_else(|| anyhow!("/ownership has no job {job}: {body}"))
}

/// Polls `/ownership` until `done` holds for `job`'s report.
async fn wait_ownership(
    fx: &mut Fixture,
    c: usize,
    job: &str,
    done: impl Fn(&Value) -> bool,
) -> Result<Value> {
    let started = Instant::now();
    loop {
        let report = ownership(fx, c, job).await?;
        if done(&report) {
            return Ok(report);
        }
        if started.elapsed() > CONVERGE {
            bail!("{job} never reached the expected ownership report; last: {report:#}");
        }
        fx.check_controllers()?;
        sleep(POLL).await;
    }
}

async fn events_about(fx: &Fixture, name: &str, reason: &str) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    for ns in ["default", MAPI] {
        let api: Api<Event> = Api::namespaced(fx.admin.clone(), ns);
        let Ok(list) = api.list(&ListParams::default()).await else {
            continue;
        };
        notes.extend(
            list.items
                .into_iter()
                .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
                .filter(|e| e.reason.as_deref() == Some(reason))
                .map(|e| e.note.unwrap_or_default()),
        );
    }
    Ok(notes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcn_observe_reports_the_daemons_output_and_own_refuses_beside_it() -> Result<()> {
    let _one_at_a_time = SERIAL.lock().await;
    let mut fx = Fixture::start().await?;
    let result = mcn_beside_the_daemon(&mut fx).await;
    fx.finish(result)
}

async fn mcn_beside_the_daemon(fx: &mut Fixture) -> Result<()> {
    const CURRENT: &str = "status.configVersion.current";
    fx.apply_pool("worker", "rendered-worker-a").await?;
    fx.apply_golden_machineconfigs("reboot-01-desired-config-set")
        .await?;
    let mut uids = Vec::new();
    for node in ["worker-0", "worker-1"] {
        uids.push(
            fx.create_node(node, &["worker"], &[], "rendered-worker-a")
                .await?,
        );
    }
    // worker-0 as the daemon reports it; worker-1 with one planted
    // difference: a current config the node's annotation does not say (the
    // host derives it from the node; nothing else it derives depends on it,
    // as `eval mcn --previous` shows).
    let done = "reboot-00-updated-on-a";
    daemon_writes(fx, &daemon_mcn(done, "worker-0", &uids[0])?).await?;
    let mut planted = daemon_mcn(done, "worker-1", &uids[1])?;
    planted["status"]["configVersion"]["current"] = json!("rendered-worker-old");
    daemon_writes(fx, &planted).await?;
    let before: Vec<Value> = fx
        .mcns()
        .list(&ListParams::default())
        .await?
        .items
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()?;

    // ---- observe: agreement, the planted difference, nothing written ----
    let mut args = vec!["--mcn-mode", "observe"];
    args.extend(FAST);
    let c = fx.start_controller("observer", &args).await?;
    let report = wait_ownership(fx, c, "mcn", |r| {
        r["observed"]["objects"] == 2 && r["observed"]["differingObjects"] == 1
    })
    .await?;
    ensure!(
        report["state"] == "observing" && report["mode"] == "observe",
        "{report:#}"
    );
    let sample = report["observed"]["sample"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    ensure!(sample.len() == 1, "one difference expected: {report:#}");
    ensure!(
        sample[0]["object"] == "worker-1" && sample[0]["key"] == CURRENT,
        "{report:#}"
    );
    ensure!(
        sample[0]["theirs"] == "rendered-worker-old" && sample[0]["ours"] == "rendered-worker-a",
        "{report:#}"
    );
    let keys = &report["observed"]["keys"];
    ensure!(
        keys[CURRENT]["agree"] == 1 && keys[CURRENT]["differ"] == 1,
        "{report:#}"
    );
    ensure!(
        keys["Updated"]["agree"] == 2 && keys["Updated"]["differ"] == 0,
        "{report:#}"
    );
    let m = fx.controllers[c].metrics().await?;
    let observed = |key: &str, result: &str| {
        m.sum(
            "mco_observed",
            &[("job", "mcn"), ("key", key), ("result", result)],
        )
    };
    ensure!(observed(CURRENT, "differ") == 1.0 && observed(CURRENT, "agree") == 1.0);
    ensure!(observed("Updated", "agree") == 2.0 && observed("Drained", "agree") == 2.0);
    ensure!(
        m.sum(
            "mco_observed_difference",
            &[("job", "mcn"), ("object", "worker-1"), ("key", CURRENT)]
        ) == 1.0
    );
    let started = Instant::now();
    while events_about(fx, "worker-1", "ObservedDifference")
        .await?
        .is_empty()
    {
        ensure!(
            started.elapsed() < CONVERGE,
            "no ObservedDifference Event about worker-1"
        );
        sleep(POLL).await;
    }
    ensure!(
        events_about(fx, "worker-0", "ObservedDifference")
            .await?
            .is_empty()
    );
    sleep(QUIET).await;
    let m = fx.controllers[c].metrics().await?;
    ensure!(
        m.writes() == m.writes_of("event"),
        "observe mode wrote {}",
        m.writes_summary()
    );
    for (mcn, was) in fx
        .mcns()
        .list(&ListParams::default())
        .await?
        .items
        .iter()
        .zip(&before)
    {
        let now = serde_json::to_value(mcn)?;
        ensure!(
            !managers(&now).iter().any(|m| m == "mco-host"),
            "observe mode wrote MCN {}: {:?}",
            mcn.metadata.name.as_deref().unwrap_or_default(),
            managers(&now)
        );
        ensure!(now["metadata"]["resourceVersion"] == was["metadata"]["resourceVersion"]);
    }
    fx.controllers[c].kill_hard()?;

    // ---- own: refuses, says why, writes nothing (not even a new node's MCN)
    let uid = fx
        .create_node("worker-2", &["worker"], &[], "rendered-worker-a")
        .await?;
    ensure!(!uid.is_empty());
    let owner = fx.start_controller("owner", &FAST).await?;
    let report = wait_ownership(fx, owner, "mcn", |r| r["state"] == "refused").await?;
    let reason = report["reason"].as_str().unwrap_or_default();
    for part in [
        "MachineConfigNode worker-0 (and 1 more)",
        "machine-config-operator (Apply",
        "--mcn-mode observe",
    ] {
        ensure!(
            reason.contains(part),
            "the refusal does not say {part:?}: {reason}"
        );
    }
    let m = fx.controllers[owner].metrics().await?;
    ensure!(
        m.sum(
            "mco_ownership",
            &[("job", "mcn"), ("mode", "own"), ("state", "refused")]
        ) == 1.0
    );
    sleep(QUIET).await;
    let m = fx.controllers[owner].metrics().await?;
    ensure!(
        m.writes() == 0.0,
        "own mode wrote while refusing: {}",
        m.writes_summary()
    );
    ensure!(
        fx.mcn_names().await? == ["worker-0", "worker-1"],
        "own mode created an MCN while refusing"
    );
    ensure!(
        fx.controllers[owner].tails().contains("refusing to write"),
        "no log line says it refuses"
    );

    // ---- preflight says the same, before any host runs ----
    let preflight = fx.preflight(&[]).await?;
    let mcn = preflight
        .iter()
        .find(|j| j["job"] == "mcn")
        .ok_or_else(|| anyhow!("preflight has no mcn job"))?;
    ensure!(mcn["observe"]["possible"] == true, "{mcn:#}");
    ensure!(mcn["own"]["possible"] == false, "{mcn:#}");
    ensure!(
        mcn["own"]["why"]
            .to_string()
            .contains("machine-config-operator"),
        "{mcn:#}"
    );
    Ok(())
}

/// The golden walks of the four behaviours measured against upstream's
/// daemon (`docs/mcn-derivation.md`), each step's case in order, from the
/// node done on `rendered-worker-a`.
const UPSTREAM_SEQUENCES: &[&[&str]] = &[
    &[
        "single-node-00-updated-on-a",
        "single-node-01-working",
        "single-node-02-rebooting",
        "single-node-03-rebooted",
        "single-node-04-uncordon-requested",
        "single-node-05-uncordoned",
        "single-node-06-done",
    ],
    &[
        "degraded-retry-00-updated-on-a",
        "degraded-retry-01-working",
        "degraded-retry-02-reload-failed",
        "degraded-retry-03-uncordon-requested",
        "degraded-retry-04-uncordoned",
        "degraded-retry-05-done",
    ],
    &[
        "unreconcilable-00-updated-on-a",
        "unreconcilable-01-desired-config-set",
        "unreconcilable-02-working",
        "unreconcilable-03-validation-failed",
    ],
    &[
        "unreconcilable-unseen-00-updated-on-a",
        "unreconcilable-unseen-01-validation-failed",
    ],
];

/// Observe mode beside a stand-in for upstream's daemon and node
/// controller that, step by step, sets the node's annotations and writes
/// the MCN as upstream's do: after every step the derived MCN agrees with
/// the stored one on every key (each condition's status, reason and
/// message, the config versions, the spec).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcn_observe_agrees_with_upstream_through_its_four_measured_sequences() -> Result<()> {
    let _one_at_a_time = SERIAL.lock().await;
    let mut fx = Fixture::start().await?;
    let result = observe_upstream_sequences(&mut fx).await;
    fx.finish(result)
}

async fn observe_upstream_sequences(fx: &mut Fixture) -> Result<()> {
    let mut args = vec!["--mcn-mode", "observe"];
    args.extend(FAST);
    let c = fx.start_controller("observer", &args).await?;
    for (index, cases) in UPSTREAM_SEQUENCES.iter().enumerate() {
        // Each walk has its own rendered configs under the same names, so
        // one node at a time, gone before the next walk's configs come.
        let node = format!("upstream-{index}");
        fx.apply_pool("worker", "rendered-worker-a").await?;
        fx.apply_golden_machineconfigs(cases[0]).await?;
        let uid = fx
            .create_node(&node, &["worker"], &[], "rendered-worker-a")
            .await?;
        for case in *cases {
            let (annotations, unschedulable) = golden::node_state(case)?;
            let set: Vec<(&str, &str)> = annotations
                .iter()
                .filter_map(|(k, v)| Some((k.strip_prefix(ANNOTATION_PREFIX)?, v.as_str())))
                .collect();
            fx.patch_node(&node, &set, Some(unschedulable)).await?;
            let pool = golden::yaml_docs(case, "pools.yaml")?;
            let target = pool
                .iter()
                .find(|p| p["metadata"]["name"] == "worker")
                .and_then(|p| p["spec"]["configuration"]["name"].as_str())
                .ok_or_else(|| anyhow!("{case}: no worker pool"))?;
            fx.apply_pool("worker", target).await?;
            let mcn = daemon_mcn(case, &node, &uid)?;
            upstream_writes(fx, &mcn).await?;
            agrees_after_writes(fx, c, case, &mcn)
                .await
                .with_context(|| format!("{node}, step {case}"))?;
        }
        fx.delete_node(&node).await?;
    }
    let m = fx.controllers[c].metrics().await?;
    ensure!(
        m.writes() == m.writes_of("event"),
        "observe mode wrote {}",
        m.writes_summary()
    );
    Ok(())
}

/// The MCN writes of one step as upstream makes them: the spec by
/// server-side apply as `machine-config-operator` (its node controller
/// and `GenerateAndApplyMachineConfigNodeSpec`), the status as its daemon
/// does ([`daemon_writes`]).
async fn upstream_writes(fx: &Fixture, mcn: &Value) -> Result<()> {
    let api: Api<DynamicObject> = Api::all_with(fx.admin.clone(), &machine_config_node());
    let name = mcn["metadata"]["name"].as_str().unwrap_or_default();
    if api.get_opt(name).await?.is_some() {
        let body = json!({
            "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigNode",
            "metadata": {"name": name}, "spec": mcn["spec"],
        });
        api.patch(
            name,
            &PatchParams::apply("machine-config-operator").force(),
            &Patch::Apply(&body),
        )
        .await
        .context("the node controller's spec apply")?;
    }
    daemon_writes(fx, mcn).await
}

/// Waits until the host has derived the node at least twice since the
/// writes (so from them, not from a cache that had not seen them) and a
/// summary after that, then until its report shows no difference on any
/// key and agreement on every condition type of `mcn`.
async fn agrees_after_writes(fx: &mut Fixture, c: usize, case: &str, mcn: &Value) -> Result<()> {
    let evaluations =
        |m: &support::controller::Metrics| m.sum("mco_evaluations_total", &[("job", "mcn")]);
    let before = evaluations(&fx.controllers[c].metrics().await?);
    let started = Instant::now();
    while evaluations(&fx.controllers[c].metrics().await?) < before + 2.0 {
        ensure!(
            started.elapsed() < CONVERGE,
            "the host did not derive the node again"
        );
        fx.check_controllers()?;
        sleep(POLL).await;
    }
    // One ownership period: the report summarises the latest derivation.
    sleep(Duration::from_millis(2500)).await;
    let types: Vec<String> = golden::conditions(&mcn["status"])?.into_keys().collect();
    let agrees = |r: &Value| {
        let keys = &r["observed"]["keys"];
        r["observed"]["differingObjects"] == 0
            && keys
                .as_object()
                .is_some_and(|k| k.values().all(|v| v["differ"] == 0))
            && types.iter().all(|t| keys[t]["agree"].as_u64() >= Some(1))
    };
    let report = wait_ownership(fx, c, "mcn", agrees)
        .await
        .with_context(|| format!("{case}: the derived MCN differs from upstream's"))?;
    eprintln!(
        "  {case}: agrees on {} keys",
        report["observed"]["keys"]
            .as_object()
            .map_or(0, |k| k.len())
    );
    Ok(())
}

/// MachineConfiguration `cluster`'s boot image conditions as upstream's
/// controller writes them: UpdateStatus as `machine-config-controller`.
async fn controller_writes_conditions(c: &Cluster) -> Result<()> {
    let api: Api<DynamicObject> = Api::all_with(c.admin(), &openshift::machine_configuration());
    let mut mc = api.get("cluster").await?;
    let conditions = json!([
        {"type": "BootImageUpdateProgressing", "status": "False", "reason": "NA",
         "message": "Reconciled 2 of 2 MAPI MachineSets", "lastTransitionTime": "2026-12-01T00:00:00Z"},
        {"type": "BootImageUpdateDegraded", "status": "False", "reason": "NA",
         "message": "0 Degraded MAPI MachineSets", "lastTransitionTime": "2026-12-01T00:00:00Z"},
    ]);
    mc.data["status"]["conditions"] = conditions;
    let params = PostParams {
        field_manager: Some("machine-config-controller".into()),
        ..PostParams::default()
    };
    api.replace_status("cluster", &params, &mc)
        .await
        .context("the boot image controller's UpdateStatus")?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boot_image_observe_reports_machinesets_and_own_refuses_beside_upstream() -> Result<()> {
    let _one_at_a_time = SERIAL.lock().await;
    let machinesets = [
        MachineSetSpec {
            image: Image::Rhcos(NEW, "x86_64"),
            ..MachineSetSpec::new("current")
        },
        MachineSetSpec::new("behind"),
    ];
    let mut cluster = Cluster::start(Platform::Gcp, &machinesets).await?;
    let result = boot_images_beside_upstream(&mut cluster).await;
    cluster.fx.finish(result)
}

async fn boot_images_beside_upstream(c: &mut Cluster) -> Result<()> {
    let old = c.expected_image(OLD, "x86_64");
    c.set_stream(NEW).await?;
    controller_writes_conditions(c).await?;
    let versions = c.resource_versions().await?;

    // ---- observe ----
    let mut args = vec!["--boot-images-mode", "observe"];
    args.extend(RESYNC);
    let i = c.start_controller("observer", &args).await?;
    let report =
        wait_ownership(&mut c.fx, i, "bootImage", |r| r["observed"]["objects"] == 2).await?;
    let counts = &report["observed"]["keys"]["MachineSet.bootImage"];
    ensure!(counts["agree"] == 1 && counts["differ"] == 1, "{report:#}");
    let sample = &report["observed"]["sample"];
    ensure!(sample.as_array().map(Vec::len) == Some(1), "{report:#}");
    ensure!(sample[0]["object"] == "behind", "{report:#}");
    ensure!(
        sample[0]["ours"]
            .as_str()
            .is_some_and(|o| o.starts_with("boot image "))
            && sample[0]["theirs"] == "left as it is",
        "{report:#}"
    );
    let m = c.metrics(i).await?;
    ensure!(
        m.sum(
            "mco_observed",
            &[
                ("job", "bootImage"),
                ("key", "MachineSet.bootImage"),
                ("result", "agree")
            ]
        ) == 1.0
    );
    ensure!(
        m.sum(
            "mco_observed_difference",
            &[("job", "bootImage"), ("object", "behind")]
        ) == 1.0
    );
    let started = Instant::now();
    while events_about(&c.fx, "behind", "ObservedDifference")
        .await?
        .is_empty()
    {
        ensure!(
            started.elapsed() < CONVERGE,
            "no ObservedDifference Event about behind"
        );
        sleep(POLL).await;
    }
    sleep(QUIET).await;
    ensure!(
        c.image("behind").await? == old,
        "observe mode patched behind"
    );
    ensure!(
        c.resource_versions().await? == versions,
        "observe mode wrote a MachineSet"
    );
    let m = c.metrics(i).await?;
    ensure!(
        m.writes() == m.writes_of("event"),
        "observe mode wrote {}",
        m.writes_summary()
    );
    let mc: Api<DynamicObject> = Api::all_with(c.admin(), &openshift::machine_configuration());
    let stored = serde_json::to_value(mc.get("cluster").await?)?;
    ensure!(
        !managers(&stored).iter().any(|m| m == "mco-host"),
        "observe mode wrote MachineConfiguration cluster"
    );
    c.fx.controllers[i].kill_hard()?;

    // ---- own ----
    let owner = c.start_controller("owner", &RESYNC).await?;
    let report = wait_ownership(&mut c.fx, owner, "bootImage", |r| r["state"] == "refused").await?;
    let reason = report["reason"].as_str().unwrap_or_default();
    for part in [
        "machine-config-controller (Update",
        "--boot-images-mode observe",
    ] {
        ensure!(
            reason.contains(part),
            "the refusal does not say {part:?}: {reason}"
        );
    }
    sleep(QUIET).await;
    ensure!(
        c.image("behind").await? == old,
        "own mode patched behind while refusing"
    );
    ensure!(
        c.resource_versions().await? == versions,
        "own mode wrote a MachineSet while refusing"
    );
    let m = c.metrics(owner).await?;
    ensure!(m.sum("mco_bootimage_patches_total", &[]) == 0.0);
    let preflight = c.fx.preflight(&[]).await?;
    let boot = preflight
        .iter()
        .find(|j| j["job"] == "bootImage")
        .ok_or_else(|| anyhow!("preflight has no bootImage job"))?;
    ensure!(boot["observe"]["possible"] == true, "{boot:#}");
    ensure!(
        boot["own"]["possible"] == false
            && boot["own"]["why"]
                .to_string()
                .contains("machine-config-controller"),
        "{boot:#}"
    );
    Ok(())
}
