//! Rolling an MCN guest out through `spec.rollout` of its MachineConfigGuest,
//! with two replicas on one lease: a candidate that differs on one pool's
//! nodes is stopped in `Shadow`; one within `maxDiffer` walks to `Active` by
//! itself while the workers walk a reboot update, across a lease move; one
//! that traps in `Canary` is rolled back. The candidate is `mcn-faults.wasm`
//! (`guests/build.sh --test`), which misbehaves only on nodes labelled
//! `mco-e2e.io/candidate-fault` (`differ`: ` (candidate)` in the `Updated`
//! message; `trap`: a panic), so where an MCN came from shows in the MCN.
//! Needs `make host test-guests` first, with the same `CARGO_TARGET_DIR`.

use crate::support;

use std::time::Duration;

use anyhow::{Context, Result, anyhow, ensure};
use serde_json::{Value, json};
use tokio::time::sleep;

use support::fixture::Fixture;
use support::golden::{B, Expected, REBOOT_WALK};
use support::guests::{
    apply_guest_object, condition, ensure_promoted_twice, fail_over, guest_events, kubectl,
    leader_of, patch_guest_object, put_configmap, sha256, wait_guest_object,
};
use support::wasm::with_custom_section;

const WORKERS: [&str; 2] = ["worker-0", "worker-1"];
const CANARIES: [&str; 2] = ["canary-0", "canary-1"];
const FAULT: &str = "mco-e2e.io/candidate-fault";
/// Bound on a node's MCN following a change of hands.
const STEP_TIMEOUT: Duration = Duration::from_secs(20);
/// Bound on a rollout reaching a stage: promotion waits 25 s per stage.
const STAGE_TIMEOUT: Duration = Duration::from_secs(60);
/// The golden case of a worker done with the walk.
const WALKED: &str = "reboot-11-resync";

/// Shadow rollback, promotion by evidence through a canary pool with a
/// failover mid-rollout, and a rollback in `Canary` (see the file's doc).
#[tokio::test]
async fn rolls_a_candidate_out_through_a_canary_pool() -> Result<()> {
    Fixture::run(rollout).await
}

/// Waits until the rollout of `candidate` is in `stage`.
async fn wait_stage(fx: &mut Fixture, candidate: &str, stage: &str) -> Result<Value> {
    support::guests::wait_stage(fx, "mcn", candidate, stage, STAGE_TIMEOUT).await
}

async fn rollout(fx: &mut Fixture) -> Result<()> {
    fx.apply_pool("worker", "rendered-worker-a").await?;
    fx.apply_pool("worker-canary", "rendered-worker-canary-a")
        .await?;
    // rendered-worker-a, and rendered-worker-b the workers walk to.
    fx.apply_golden_machineconfigs("reboot-01-desired-config-set")
        .await?;
    fx.apply_machineconfig("rendered-worker-canary-a").await?;
    let mut nodes = Vec::new();
    for node in WORKERS {
        let uid = fx
            .create_node(node, &["worker"], &[], "rendered-worker-a")
            .await?;
        nodes.push((node, "worker", uid));
    }
    for node in CANARIES {
        let uid = fx
            .create_node(
                node,
                &["worker", "worker-canary"],
                &[(FAULT, "differ")],
                "rendered-worker-canary-a",
            )
            .await?;
        nodes.push((node, "worker-canary", uid));
    }
    let module = support::controller::installed_guest("mcn.wasm")?;
    let faults = std::fs::read(support::controller::test_guest("mcn-faults.wasm")?)?;
    // Each rollout needs other bytes: a rollout follows its candidate's digest.
    let second = with_custom_section(&faults, "mco-e2e-rollout", b"second");
    let third = with_custom_section(&faults, "mco-e2e-rollout", b"third");
    for (name, bytes) in [
        ("mcn-faults", &faults),
        ("mcn-second", &second),
        ("mcn-third", &third),
    ] {
        put_configmap(fx, name, "mcn.wasm", bytes).await?;
    }
    apply_guest_object(
        fx,
        &json!({
            "apiVersion": "mco-wasm.io/v1alpha1", "kind": "MachineConfigGuest",
            "metadata": {"name": "mcn"},
            "spec": {"job": "mcn", "module": "mcn.wasm"},
        }),
    )
    .await?;
    let args = [
        "--registry-crd",
        "--registry-poll",
        "500ms",
        "--resync",
        "1s",
        "--lease-duration",
        "4s",
    ];
    let a = fx.start_controller("replica-a", &args).await?;
    let b = fx.start_controller("replica-b", &args).await?;
    for (node, pool, uid) in &nodes {
        fx.wait_mcn(&Expected::updated_on(node, pool)?, uid, STEP_TIMEOUT)
            .await?;
    }

    // ---- what the apiserver refuses --------------------------------------------------------
    for (spec, why) in [
        (
            json!({"job": "mcn", "module": "mcn.wasm", "rollout": {"stage": "Canary", "canary": {"pools": ["x"]}}}),
            "spec.rollout rolls out spec.candidate, which is missing",
        ),
        (
            json!({"job": "mcn", "module": "mcn.wasm", "candidate": {"module": "mcn.wasm"}, "rollout": {"stage": "Canary"}}),
            "spec.rollout.canary names the objects of the Canary stage",
        ),
        (
            json!({"job": "mcn", "module": "mcn.wasm", "candidate": {"module": "mcn.wasm"}, "rollout": {"stage": "RolledBack"}}),
            "RolledBack is what the host reports",
        ),
        (
            json!({"job": "mcn", "module": "mcn.wasm", "candidate": {"module": "mcn.wasm"},
                   "rollout": {"canary": {"machineSets": {"matchLabels": {"a": "b"}}}}}),
            "spec.rollout.canary of job mcn names its objects by pools",
        ),
        (
            json!({"job": "mcn", "module": "mcn.wasm", "audit": {"request": "1"}}),
            "spec.audit compares spec.candidate with the module, and spec.candidate is missing",
        ),
    ] {
        let object = json!({"apiVersion": "mco-wasm.io/v1alpha1", "kind": "MachineConfigGuest",
                            "metadata": {"name": "refused"}, "spec": spec});
        let refused = kubectl(fx, &["apply", "-f", "-"], Some(&object.to_string())).await;
        let message = format!("{:#}", refused.err().unwrap_or_else(|| anyhow!("accepted")));
        ensure!(
            message.contains(why),
            "kubectl apply {spec}: {message}; expected {why}"
        );
    }

    // ---- 0. an audit on request: every node decided by both, the differences sampled ----------
    patch_guest_object(
        fx,
        "mcn",
        &json!({"spec": {
            "candidate": {"configMap": {"name": "mcn-faults", "key": "mcn.wasm"}},
            "audit": {"request": "before-rollout"},
        }}),
    )
    .await?;
    let audited = wait_guest_object(fx, "mcn", "audited", STAGE_TIMEOUT, |s| {
        s["audit"]["request"] == "before-rollout" && s["audit"]["state"] != "Running"
    })
    .await?;
    let audit = &audited["audit"];
    let sampled: Vec<(&str, &str)> = audit["sample"]
        .as_array()
        .map(|sample| {
            sample
                .iter()
                .filter_map(|d| Some((d["object"].as_str()?, d["key"].as_str()?)))
                .collect()
        })
        .unwrap_or_default();
    ensure!(
        audit["state"] == "Complete"
            && (audit["objects"].as_u64(), audit["agree"].as_u64()) == (Some(4), Some(2))
            && (audit["differ"].as_u64(), audit["failed"].as_u64()) == (Some(2), Some(0))
            && audit["candidateSha256"] == sha256(&faults)
            && audit["message"] == "4 objects: 2 agree, 2 differ, 0 failed",
        "the audit must find the two canaries differing: {audit}"
    );
    ensure!(
        sampled == [("canary-0", "Updated"), ("canary-1", "Updated")]
            && audit["sample"][0]["candidate"]
                .as_str()
                .is_some_and(|c| c.ends_with("(candidate)")),
        "the sample must show both canaries' Updated condition, by name: {audit}"
    );
    for (node, pool, uid) in &nodes {
        fx.wait_mcn(&Expected::updated_on(node, pool)?, uid, STEP_TIMEOUT)
            .await
            .context("an audit writes no MCN")?;
    }
    let events = guest_events(fx, "mcn").await?;
    ensure!(
        events.iter().any(|(reason, note)| reason == "GuestAudited"
            && note == "audit before-rollout: 4 objects: 2 agree, 2 differ, 0 failed"),
        "no GuestAudited Event: {events:?}"
    );

    // ---- 1. a candidate that differs on the canary pool's nodes stops in Shadow -----------------
    let promotion = json!({"evaluations": 6, "minimumTime": "25s"});
    patch_guest_object(
        fx,
        "mcn",
        &json!({"spec": {
            "candidate": {"configMap": {"name": "mcn-faults", "key": "mcn.wasm"}},
            "rollout": {"stage": "Shadow", "canary": {"pools": ["worker-canary"]}, "promotion": promotion},
        }}),
    )
    .await?;
    let status = wait_stage(fx, &sha256(&faults), "RolledBack").await?;
    ensure!(
        status["rollout"]["reason"] == "TooManyDifferences"
            && condition(&status, "RolledBack") == ("True", "TooManyDifferences")
            && condition(&status, "Progressing") == ("False", "RolledBack"),
        "a differing candidate must be rolled back for its differences: {status}"
    );
    sleep(Duration::from_secs(2)).await;
    for (node, pool, uid) in &nodes {
        fx.wait_mcn(&Expected::updated_on(node, pool)?, uid, STEP_TIMEOUT)
            .await
            .context("nothing the rolled-back candidate decided may be written")?;
    }
    let leader = leader_of(fx, &[a, b]).await?;
    let m = fx.controllers[leader].metrics().await?;
    ensure!(
        m.sum("mco_guest_decisions_total", &[("role", "candidate")]) == 0.0
            && m.sum(
                "mco_guest_rollbacks_total",
                &[("job", "mcn"), ("reason", "TooManyDifferences")]
            ) == 1.0
            && m.sum(
                "mco_guest_rollout_stage",
                &[("job", "mcn"), ("stage", "RolledBack")]
            ) == 1.0
            && m.sum(
                "mco_evaluation_cpu_seconds_total",
                &[("job", "mcn"), ("role", "candidate")]
            ) > 0.0,
        "the leader's metrics must show one rollback, no decision from the candidate, and the CPU time of its shadow runs"
    );
    let table = kubectl(fx, &["get", "machineconfigguests", "mcn"], None).await?;
    ensure!(
        table.contains("RolledBack"),
        "kubectl get shows no stage:\n{table}"
    );

    // ---- 2. within maxDiffer: Shadow → Canary → Active by itself, across a failover ----------
    patch_guest_object(
        fx,
        "mcn",
        &json!({"spec": {
            "candidate": {"configMap": {"name": "mcn-second"}},
            "rollout": {"maxDiffer": 1_000_000},
        }}),
    )
    .await?;
    let canary = wait_stage(fx, &sha256(&second), "Canary").await?;
    ensure!(
        canary["rollout"]["reason"] == "Promoted"
            && condition(&canary, "Progressing") == ("True", "InCanary"),
        "the second candidate must be promoted to Canary by itself: {canary}"
    );
    for (node, pool, uid) in &nodes {
        let expected = if *pool == "worker-canary" {
            from_candidate(node, pool)?
        } else {
            Expected::updated_on(node, pool)?
        };
        fx.wait_mcn(&expected, uid, STEP_TIMEOUT)
            .await
            .with_context(|| format!("in Canary, {node} of pool {pool}"))?;
    }
    // The workers walk a reboot update in Canary: the module decides them,
    // every step, while the candidate agrees beside it.
    fx.apply_pool("worker", B).await?;
    for step in REBOOT_WALK {
        for node in WORKERS {
            fx.patch_node(node, step.set, Some(step.unschedulable))
                .await?;
        }
        for (node, _, uid) in nodes.iter().filter(|(_, pool, _)| *pool == "worker") {
            fx.wait_mcn(&Expected::load(step.case, node)?, uid, STEP_TIMEOUT)
                .await
                .with_context(|| format!("{node}, step {}, in Canary", step.case))?;
        }
    }
    let since = canary["rollout"]["since"].clone();
    let leader = leader_of(fx, &[a, b]).await?;
    let standby = if leader == a { b } else { a };
    let before = wait_guest_object(fx, "mcn", "counting in Canary", STAGE_TIMEOUT, |s| {
        s["rollout"]["stage"] == "Canary" && s["rollout"]["agree"].as_u64().unwrap_or(0) >= 2
    })
    .await?;
    fail_over(fx, leader, standby).await?;
    let carried = wait_guest_object(
        fx,
        "mcn",
        "counted on by the new leader",
        STAGE_TIMEOUT,
        |s| s["rollout"]["agree"].as_u64() > before["rollout"]["agree"].as_u64(),
    )
    .await?;
    ensure!(
        carried["rollout"]["stage"] == "Canary" && carried["rollout"]["since"] == since
            || carried["rollout"]["stage"] == "Active",
        "the new leader must carry on in Canary from {since} (or have promoted): {carried}"
    );
    let active = wait_stage(fx, &sha256(&second), "Active").await?;
    ensure!(
        active["rollout"]["previousSha256"] == sha256(&module).as_str()
            && condition(&active, "Progressing") == ("False", "Active"),
        "Active must keep the module it took over from: {active}"
    );
    let m = fx.controllers[standby].metrics().await?;
    ensure!(
        m.sum(
            "mco_guest_decisions_total",
            &[("job", "mcn"), ("role", "candidate")]
        ) > 0.0,
        "the new leader takes no decision from the candidate in Active"
    );
    ensure_promoted_twice(fx, "mcn").await?;

    // ---- 3. a candidate that traps in Canary: back to the module for every node ---------------
    patch_guest_object(
        fx,
        "mcn",
        &json!({"spec": {
            "candidate": {"configMap": {"name": "mcn-third"}},
            "rollout": {"stage": "Canary", "promotion": null},
        }}),
    )
    .await?;
    wait_stage(fx, &sha256(&third), "Canary").await?;
    for (node, pool, uid) in nodes.iter().filter(|(_, pool, _)| *pool == "worker-canary") {
        fx.wait_mcn(&from_candidate(node, pool)?, uid, STEP_TIMEOUT)
            .await
            .with_context(|| format!("{node} in Canary, by hand"))?;
    }
    fx.set_labels("canary-0", json!({FAULT: "trap"})).await?;
    let rolled_back = wait_stage(fx, &sha256(&third), "RolledBack").await?;
    ensure!(
        condition(&rolled_back, "RolledBack") == ("True", "CandidateFailed"),
        "a trapping candidate must be rolled back as failed: {rolled_back}"
    );
    for (node, pool, uid) in &nodes {
        fx.wait_mcn(&at_rest(node, pool)?, uid, STEP_TIMEOUT)
            .await
            .with_context(|| format!("{node} derived by the module again"))?;
    }
    let m = fx.controllers[standby].metrics().await?;
    ensure!(
        m.sum(
            "mco_guest_rollbacks_total",
            &[("job", "mcn"), ("reason", "CandidateFailed")]
        ) == 1.0,
        "the rollback in Canary is not counted"
    );
    eprintln!(
        "rollout: a differing candidate rolled back in Shadow, one promoted Shadow → Canary → Active \
         across a failover ({} agreeing evaluations when the leader died), a trapping one rolled back \
         in Canary; {} nodes",
        before["rollout"]["agree"],
        nodes.len()
    );
    Ok(())
}

/// A node's MCN after the workers' walk, as the module derives it.
fn at_rest(node: &str, pool: &str) -> Result<Expected> {
    match pool {
        "worker" => Expected::load(WALKED, node),
        _ => Expected::updated_on(node, pool),
    }
}

/// The MCN the candidate derives for a node labelled `differ`.
fn from_candidate(node: &str, pool: &str) -> Result<Expected> {
    let mut expected = Expected::updated_on(node, pool)?;
    let updated = expected
        .conditions
        .get_mut("Updated")
        .context("no Updated condition")?;
    updated.message.push_str(" (candidate)");
    Ok(expected)
}
