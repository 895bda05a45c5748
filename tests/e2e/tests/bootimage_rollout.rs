//! Rolling a boot image guest out through `spec.rollout` of its
//! MachineConfigGuest, with two replicas of `mco-host run --boot-images` on
//! one lease while new streams land: a candidate that differs on the canary
//! is stopped in `Shadow`; one within `maxDiffer` walks to `Active` by
//! itself, across a lease move; one that traps in `Canary` is rolled back.
//! The MCN job's walk of the same is `rollout.rs`. The candidate is
//! `bootimage-aws-faults.wasm` (`guests/build.sh --test`), which misbehaves
//! only on MachineSets labelled `mco-e2e.io/candidate-fault`, so where a
//! decision came from shows in the MachineSet. Needs `make host test-guests`
//! first, with the same `CARGO_TARGET_DIR`.

use crate::support;

use std::time::Duration;

use anyhow::{Context, Result, ensure};
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};
use tokio::time::sleep;

use support::bootimages::{Cluster, MachineSetSpec, NEW, OLD, Platform};
use support::controller::{Metrics, installed_guest, test_guest};
use support::guests::{
    apply_guest_object, condition, ensure_promoted_twice, fail_over, leader_of, patch_guest_object,
    put_configmap, sha256, wait_guest_object,
};
use support::wasm::with_custom_section;

/// The MachineConfigGuest, and the job its metrics name.
const GUEST: &str = "bootimage-aws";
const JOB: &str = "bootImage.AWS";
const FAULT: &str = "mco-e2e.io/candidate-fault";
const CANARY: &str = "mco-e2e.io/canary";
/// A release after [`NEW`], landed while the rollout is in `Canary`.
const NEWER: &str = "9.8.20261101-0";
/// Bound on a rollout reaching a stage: promotion waits 25 s per stage.
const STAGE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a MachineSet is watched for not moving.
const QUIET: Duration = Duration::from_secs(3);

/// Shadow rollback, promotion by evidence through a canary MachineSet
/// with a failover mid-rollout, and a rollback in `Canary` (see the
/// file's doc).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rolls_a_boot_image_candidate_out_through_a_canary_machineset() -> Result<()> {
    let machinesets = [
        MachineSetSpec {
            labels: json!({CANARY: "true", FAULT: "differ"}),
            ..MachineSetSpec::new("canary")
        },
        MachineSetSpec::new("rhcos"),
    ];
    let mut c = Cluster::start(Platform::Aws, &machinesets).await?;
    let result = rollout(&mut c).await;
    c.fx.finish(result)
}

async fn rollout(c: &mut Cluster) -> Result<()> {
    let module = installed_guest("bootimage-aws.wasm")?;
    let faults = std::fs::read(test_guest("bootimage-aws-faults.wasm")?)?;
    // Each rollout needs other bytes: a rollout follows its candidate's digest.
    let second = with_custom_section(&faults, "mco-e2e-rollout", b"second");
    let third = with_custom_section(&faults, "mco-e2e-rollout", b"third");
    for (name, bytes) in [
        ("aws-faults", &faults),
        ("aws-second", &second),
        ("aws-third", &third),
    ] {
        put_configmap(&c.fx, name, "aws.wasm", bytes).await?;
    }

    // ---- 1. a candidate that differs on the canary MachineSet stops in Shadow ----------------
    apply_guest_object(
        &c.fx,
        &json!({
            "apiVersion": "mco-wasm.io/v1alpha1", "kind": "MachineConfigGuest",
            "metadata": {"name": GUEST},
            "spec": {
                "job": "bootImage", "platform": "AWS", "module": "bootimage-aws.wasm",
                "candidate": {"configMap": {"name": "aws-faults", "key": "aws.wasm"}},
                "rollout": {
                    "stage": "Shadow",
                    "canary": {"machineSets": {"matchLabels": {CANARY: "true"}}},
                    "promotion": {"evaluations": 6, "minimumTime": "25s"},
                },
            },
        }),
    )
    .await?;
    let args = [
        "--resync",
        "1s",
        "--registry-crd",
        "--registry-poll",
        "500ms",
    ];
    let a = c.start_controller("boot-a", &args).await?;
    let b = c.start_replica("boot-b", &args).await?;
    let status = wait_stage(c, &faults, "RolledBack").await?;
    ensure!(
        status["rollout"]["reason"] == "TooManyDifferences"
            && condition(&status, "RolledBack") == ("True", "TooManyDifferences")
            && condition(&status, "Progressing") == ("False", "RolledBack"),
        "a differing candidate must be rolled back for its differences: {status}"
    );
    // The candidate would leave the canary on the old image; the module moves it.
    c.set_stream(NEW).await?;
    for name in ["canary", "rhcos"] {
        c.wait_image(name, &c.expected_image(NEW, "x86_64"))
            .await
            .context("nothing the rolled-back candidate decided may be written")?;
    }
    let leader = leader_of(&mut c.fx, &[a, b]).await?;
    let m = c.metrics(leader).await?;
    ensure!(
        decisions(&m, "candidate") == 0.0
            && m.sum(
                "mco_guest_rollbacks_total",
                &[("job", JOB), ("reason", "TooManyDifferences")]
            ) == 1.0
            && m.sum(
                "mco_evaluation_cpu_seconds_total",
                &[("job", JOB), ("role", "candidate")]
            ) > 0.0,
        "the leader's metrics must show one rollback, no decision from the candidate, and the CPU time of its shadow runs"
    );

    // ---- 2. within maxDiffer: Shadow → Canary → Active by itself, across a failover ----------
    patch_guest_object(
        &c.fx,
        GUEST,
        &json!({"spec": {
            "candidate": {"configMap": {"name": "aws-second"}},
            "rollout": {"maxDiffer": 1_000_000},
        }}),
    )
    .await?;
    let canary = wait_stage(c, &second, "Canary").await?;
    ensure!(
        canary["rollout"]["reason"] == "Promoted"
            && condition(&canary, "Progressing") == ("True", "InCanary"),
        "the second candidate must be promoted to Canary by itself: {canary}"
    );
    // A new stream in Canary: the module moves rhcos, the candidate keeps
    // the canary where it is.
    c.set_stream(NEWER).await?;
    c.wait_image("rhcos", &c.expected_image(NEWER, "x86_64"))
        .await?;
    sleep(QUIET).await;
    ensure!(
        c.image("canary").await? == c.expected_image(NEW, "x86_64"),
        "in Canary the candidate decides the canary MachineSet, and it leaves it on {NEW}"
    );
    let since = canary["rollout"]["since"].clone();
    let leader = leader_of(&mut c.fx, &[a, b]).await?;
    let standby = if leader == a { b } else { a };
    let at_failover =
        wait_guest_object(&mut c.fx, GUEST, "counting in Canary", STAGE_TIMEOUT, |s| {
            s["rollout"]["stage"] == "Canary" && s["rollout"]["agree"].as_u64().unwrap_or(0) >= 2
        })
        .await?;
    fail_over(&mut c.fx, leader, standby).await?;
    let carried = wait_guest_object(
        &mut c.fx,
        GUEST,
        "counted on by the new leader",
        STAGE_TIMEOUT,
        |s| s["rollout"]["agree"].as_u64() > at_failover["rollout"]["agree"].as_u64(),
    )
    .await?;
    ensure!(
        carried["rollout"]["stage"] == "Canary" && carried["rollout"]["since"] == since
            || carried["rollout"]["stage"] == "Active",
        "the new leader must carry on in Canary from {since} (or have promoted): {carried}"
    );
    let active = wait_stage(c, &second, "Active").await?;
    ensure!(
        active["rollout"]["previousSha256"] == sha256(&module).as_str()
            && condition(&active, "Progressing") == ("False", "Active"),
        "Active must keep the module it took over from: {active}"
    );
    let before = c.metrics(standby).await?;
    sleep(QUIET).await;
    let after = c.metrics(standby).await?;
    ensure!(
        decisions(&after, "active") == decisions(&before, "active")
            && decisions(&after, "candidate") > decisions(&before, "candidate"),
        "in Active the new leader must take every decision from the candidate"
    );
    ensure_promoted_twice(&c.fx, GUEST).await?;

    // ---- 3. a candidate that traps in Canary: the module decides the canary again -------------
    patch_guest_object(
        &c.fx,
        GUEST,
        &json!({"spec": {
            "candidate": {"configMap": {"name": "aws-third"}},
            "rollout": {"stage": "Canary", "promotion": null},
        }}),
    )
    .await?;
    wait_stage(c, &third, "Canary").await?;
    ensure!(
        c.image("canary").await? == c.expected_image(NEW, "x86_64"),
        "the third candidate, in Canary by hand, leaves the canary MachineSet on {NEW}"
    );
    let trap = json!({"metadata": {"labels": {FAULT: "trap"}}});
    c.machinesets()
        .patch("canary", &PatchParams::default(), &Patch::Merge(&trap))
        .await
        .context("label the canary MachineSet trap")?;
    let rolled_back = wait_stage(c, &third, "RolledBack").await?;
    ensure!(
        condition(&rolled_back, "RolledBack") == ("True", "CandidateFailed"),
        "a trapping candidate must be rolled back as failed: {rolled_back}"
    );
    c.wait_image("canary", &c.expected_image(NEWER, "x86_64"))
        .await
        .context("the module decides the canary MachineSet again")?;
    let m = c.metrics(standby).await?;
    ensure!(
        m.sum(
            "mco_guest_rollbacks_total",
            &[("job", JOB), ("reason", "CandidateFailed")]
        ) == 1.0,
        "the rollback in Canary is not counted"
    );
    eprintln!(
        "bootimage_rollout: a differing candidate rolled back in Shadow ({OLD} → {NEW} landed by the \
         module), one promoted Shadow → Canary → Active across a failover ({} agreeing evaluations \
         when the leader died; {NEWER} left off the canary in Canary), a trapping one rolled back in \
         Canary",
        at_failover["rollout"]["agree"]
    );
    Ok(())
}

/// Waits until the rollout of the candidate `bytes` is in `stage`.
async fn wait_stage(c: &mut Cluster, bytes: &[u8], stage: &str) -> Result<Value> {
    support::guests::wait_stage(&mut c.fx, GUEST, &sha256(bytes), stage, STAGE_TIMEOUT).await
}

/// Decisions of the AWS guest taken from `role` (`active` or `candidate`).
fn decisions(m: &Metrics, role: &str) -> f64 {
    m.sum("mco_guest_decisions_total", &[("job", JOB), ("role", role)])
}
