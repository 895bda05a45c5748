//! `mco-host run`, the in-cluster MachineConfigNode controller, against a real
//! kube-apiserver + etcd. The controller is the release binary as a child
//! process, authenticated as the ServiceAccount `mco-system/mco-host` that
//! `deploy/rbac.yaml` binds, never as an admin; the test plays the other
//! actors (installer, node controller, MCD, drain controller) as admin.
//!
//! Expected MCNs come from the golden cases in `tests/golden/mcn/`: each step
//! of an update walk must end with the conditions (status, reason, message;
//! not the timestamps) the golden case for that step holds.
//!
//! Needs `cargo build --release -p mco-host` and `guests/build.sh` first
//! (`make host guests`), with the same `CARGO_TARGET_DIR`; or set `MCO_HOST_BIN`.

use crate::support;

use std::time::{Duration, Instant};

use std::collections::BTreeMap;

use anyhow::{Context, Result, anyhow, bail, ensure};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Secret, ServiceAccount};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams};
use serde_json::{Value, json};
use tokio::time::sleep;

use support::fixture::{self, Fixture, api_code};
use support::golden::{
    self, B, Expected, IMAGE_1, IMAGE_ONLY_WALK, REBOOT_WALK, REBOOTLESS_WALK, RESTART_WALK, Step,
    steps,
};
use support::guests::{
    SWAP_TIMEOUT, apply_as_test, apply_configmap, apply_guest_object, condition, guest_events,
    kubectl, patch_guest_object, put_configmap, refused_while_serving, serves, serving, sha256,
    wait_guest_object,
};
use support::wasm::with_custom_section;

/// Bound on one update step reaching its MCN.
const STEP_TIMEOUT: Duration = Duration::from_secs(15);
/// Bound on the first step after an apiserver restart: twice a step's budget,
/// for watches that back off while the apiserver is away and must re-list
/// once it is back (their resourceVersion is gone: 410 Expired). A controller
/// blind for longer after the API returns is not surviving the restart.
const AFTER_RESTART_TIMEOUT: Duration = Duration::from_secs(30);

// ---- tests ---------------------------------------------------------------------------------------

/// An admin's node disruption policy reaches the MCN (a restart: no drain,
/// no reboot); an MCN another writer created with a higher
/// observedGeneration is taken over, not refused; a status field only the
/// daemon writes survives our status writes.
#[tokio::test]
async fn follows_disruption_policies_and_keeps_other_writers_fields() -> Result<()> {
    Fixture::run(policies_and_other_writers).await
}

/// Pools and node kinds (tests 1 and 5), a reboot and a rebootless update
/// step by step (2), a node deleted and a resync of a stable cluster (3).
#[tokio::test]
async fn reports_nodes_through_updates_as_the_service_account() -> Result<()> {
    Fixture::run(lifecycle).await
}

/// Two replicas on one lease: one writer; the standby takes over when the
/// leader is SIGKILLed (test 4).
#[tokio::test]
async fn standby_takes_over_when_the_leader_dies() -> Result<()> {
    Fixture::run(failover).await
}

/// A leader stopped gracefully (SIGTERM) releases the lease: a replica that
/// starts after it (a restarted pod) takes over at once, not when the lease
/// would have expired. (A standby already waiting still sleeps until the
/// expiry it read: kube-lease-manager does not watch the Lease.)
#[tokio::test]
async fn a_leader_stopped_gracefully_hands_over_the_lease() -> Result<()> {
    Fixture::run(graceful_handover).await
}

/// The apiserver restarts while the controller runs (test 6).
#[tokio::test]
async fn converges_after_an_apiserver_restart() -> Result<()> {
    Fixture::run(apiserver_restart).await
}

/// The MCN guest is swapped through a registry ConfigMap while four workers
/// walk a reboot update together: good modules take over, refused ones
/// leave the old module serving, a candidate is shadowed, and no step of
/// any node is missed (test 7).
#[tokio::test]
async fn swaps_the_guest_while_nodes_update() -> Result<()> {
    Fixture::run(hot_swap).await
}

/// The registry as MachineConfigGuest objects (`--registry-crd`), swapped
/// while four workers walk a reboot update: the shipped objects report the
/// installed guests, kubectl shows what runs where, broken specs are
/// refused at the door, a ConfigMap module and then a cosign-signed module
/// from a real OCI registry take over with no step missed, a module signed
/// by another key and one of the wrong world leave the old module serving
/// and the object Degraded, and deleting the object returns the job to the
/// installed guest.
#[tokio::test]
async fn swaps_through_machineconfigguests_while_nodes_update() -> Result<()> {
    Fixture::run(guest_objects).await
}

/// A host whose MachineConfigGuest names an OCI module the registry does
/// not serve yet starts anyway, on the installed guest, with the object
/// Degraded (`FellBack`) and the failed pull counted; once the registry
/// serves the module, the host picks it up on its own.
#[tokio::test]
async fn starts_on_the_installed_guest_until_the_registry_serves() -> Result<()> {
    Fixture::run(late_registry).await
}

/// A registry that wants credentials (htpasswd, users team-a and team-b):
/// MachineConfigGuest `mcn` pulls team-a's module with a pull Secret that
/// holds both teams' robots, then team-b's with the same Secret, then a
/// module through the ServiceAccount's `imagePullSecrets` (a missing
/// Secret listed first is passed over), and the registry's own log shows
/// each team's repository read by that team only. A Secret with no entry
/// for the repository (`secret_failure`) and a wrong password
/// (`manifest_failure`) leave the object Degraded, saying why, and the
/// module before serving.
#[tokio::test]
async fn pulls_with_the_credentials_of_each_repository() -> Result<()> {
    Fixture::run(private_registry).await
}

/// `verify.clusterImagePolicies` against upstream's ClusterImagePolicy
/// CRD, a real registry and the real cosign: a module signed with the key
/// of the PublicKey policy covering its repository serves; a covering
/// FulcioCAWithRekor policy whose CA is no certificate (`key_failure`)
/// and a module signed by another key (`signature_failure`) are refused,
/// the object Degraded, the module before serving; editing the policy's
/// key lets the second module in on a later poll. (Certificate-based
/// policies that verify: signing_pki.rs.)
#[tokio::test]
async fn trusts_the_keys_of_cluster_image_policies() -> Result<()> {
    Fixture::run(cluster_image_policies).await
}

/// A node updates between two rendered configs as large as the apiserver
/// stores (`mco_e2e::large::OBJECT_BYTES` each, thousands of files), at
/// rest before and after: every step reaches its golden MCN, with the
/// default guest memory, and no reconcile fails. A config 1 KiB larger is
/// refused by the apiserver ("etcdserver: request is too large"), so the
/// figure is the limit, not a guess.
#[tokio::test]
async fn reports_an_update_between_configs_at_the_apiservers_size() -> Result<()> {
    Fixture::run(configs_at_the_apiservers_size).await
}

/// Gate `ImageModeStatusReporting` on, a node in image mode whose OS image
/// alone changes (the config stays): every step of upstream's drain and
/// reboot reaches its golden MCN, `configImage` included, and the columns
/// of `kubectl get machineconfignodes -o wide` show the update in progress until the node
/// is Done (no post-config action, the uncordon only once it happened).
#[tokio::test]
async fn reports_an_image_only_update_in_progress_until_done() -> Result<()> {
    Fixture::run(image_only_update).await
}

// ---- scenarios -----------------------------------------------------------------------------------

async fn lifecycle(fx: &mut Fixture) -> Result<()> {
    // ---- the cluster: three pools, six nodes of every kind -------------------------------------
    for pool in ["master", "worker", "infra"] {
        fx.apply_pool(pool, &format!("rendered-{pool}-a")).await?;
    }
    fx.apply_machineconfig("rendered-master-a").await?;
    fx.apply_machineconfig("rendered-infra-a").await?;
    // rendered-worker-a and rendered-worker-b (another OS image: the update reboots).
    fx.apply_golden_machineconfigs("reboot-01-desired-config-set")
        .await?;
    let master0 = fx
        .create_node("master-0", &["master"], &[], "rendered-master-a")
        .await?;
    let worker0 = fx
        .create_node("worker-0", &["worker"], &[], "rendered-worker-a")
        .await?;
    let worker1 = fx
        .create_node("worker-1", &["worker"], &[], "rendered-worker-a")
        .await?;
    let infra0 = fx
        .create_node("infra-0", &["worker", "infra"], &[], "rendered-infra-a")
        .await?;
    let win0 = fx
        .create_node(
            "win-0",
            &["worker"],
            &[("kubernetes.io/os", "windows")],
            "rendered-worker-a",
        )
        .await?;
    let lonely0 = fx
        .create_node("lonely-0", &[], &[], "rendered-worker-a")
        .await?;

    let c = fx
        .start_controller("mco-host-0", &["--resync", "2s"])
        .await?;

    // ---- 1. an MCN per node with a primary pool, Updated=True -----------------------------------
    let t = Instant::now();
    for (node, uid, pool) in [
        ("master-0", &master0, "master"),
        ("worker-0", &worker0, "worker"),
        ("worker-1", &worker1, "worker"),
        ("infra-0", &infra0, "infra"),
    ] {
        let expected = Expected::updated_on(node, pool)?;
        ensure!(
            expected.conditions.len() == 14,
            "golden has 14 condition types"
        );
        let (_, mcn) = fx
            .wait_mcn(&expected, uid, STEP_TIMEOUT)
            .await
            .with_context(|| format!("initial MCN of {node}"))?;
        ensure!(
            mcn["status"]["observedGeneration"].as_i64() >= Some(1),
            "{node}: status.observedGeneration must be ≥ 1: {}",
            mcn["status"]
        );
    }
    eprintln!("initial MCNs converged in {:.2?}", t.elapsed());
    // A node in no pool reports under `not-yet-set` (Done is all Updated
    // needs then); a Windows node's MCN is spec only (upstream's daemon runs
    // on Linux nodes only, and only it writes MCN status).
    let mut pool_less = Expected::updated_on("lonely-0", "worker")?;
    pool_less.pool = "not-yet-set".into();
    fx.wait_mcn(&pool_less, &lonely0, STEP_TIMEOUT)
        .await
        .context("the pool-less node's MCN")?;
    let windows = wait_windows_mcn(fx, &win0).await?;
    ensure!(
        windows.get("status").is_none_or(Value::is_null),
        "a Windows node's MCN must have no status: {windows}"
    );
    let names = fx.mcn_names().await?;
    ensure!(
        names
            == [
                "infra-0", "lonely-0", "master-0", "win-0", "worker-0", "worker-1"
            ],
        "every node past Pending/Provisioning gets an MCN, found {names:?}"
    );

    // ---- 5. the controller's identity is not an admin --------------------------------------------
    rbac_is_narrow(fx).await?;

    // A node that joins a pool: its MCN moves there (a spec change), and
    // back to `not-yet-set` when it leaves; it is never deleted.
    let before = fx.controllers[c].metrics().await?;
    fx.set_labels("lonely-0", json!({ "node-role.kubernetes.io/worker": "" }))
        .await?;
    let (_, joined) = fx
        .wait_mcn(
            &Expected::updated_on("lonely-0", "worker")?,
            &lonely0,
            STEP_TIMEOUT,
        )
        .await
        .context("lonely-0 joined the worker pool")?;
    fx.set_labels(
        "lonely-0",
        json!({ "node-role.kubernetes.io/worker": null }),
    )
    .await?;
    let (_, left) = fx
        .wait_mcn(&pool_less, &lonely0, STEP_TIMEOUT)
        .await
        .context("lonely-0 left every pool: its MCN is back under not-yet-set")?;
    let generation = |mcn: &Value| mcn["status"]["observedGeneration"].as_i64().unwrap_or(0);
    ensure!(
        generation(&left) > generation(&joined),
        "a pool change is a spec change: observedGeneration {} then {}",
        generation(&joined),
        generation(&left)
    );
    let after = fx.controllers[c].metrics().await?;
    ensure!(
        after.writes_of("delete") == before.writes_of("delete"),
        "a node leaving its pool keeps its MCN (deletes {} → {})",
        before.writes_of("delete"),
        after.writes_of("delete")
    );

    // ---- 2. a reboot update on worker-0 ----------------------------------------------------------
    fx.apply_pool("worker", B).await?;
    walk(
        fx,
        c,
        "worker-0",
        &worker0,
        "reboot-00-updated-on-a",
        REBOOT_WALK,
    )
    .await?;

    // ---- 2. a rebootless update on worker-1 ------------------------------------------------------
    // Same rendered config name, new content: only the SSH keys differ from A.
    fx.apply_golden_machineconfigs("rebootless-01-desired-config-set")
        .await?;
    walk(
        fx,
        c,
        "worker-1",
        &worker1,
        "rebootless-00-updated-on-a",
        REBOOTLESS_WALK,
    )
    .await?;
    // worker-0 is done on the pool's target; new content under the name changes nothing.
    fx.wait_mcn(
        &Expected::load("reboot-11-resync", "worker-0")?,
        &worker0,
        STEP_TIMEOUT,
    )
    .await?;

    // ---- 3. a deleted node loses its MCN ---------------------------------------------------------
    fx.delete_node("worker-1").await?;
    let took = fx.wait_mcn_gone("worker-1", STEP_TIMEOUT).await?;
    eprintln!("worker-1 deleted: its MCN was gone after {took:.2?}");
    let names = fx.mcn_names().await?;
    ensure!(
        names == ["infra-0", "lonely-0", "master-0", "win-0", "worker-0"],
        "MCNs after deleting worker-1: {names:?}"
    );

    // ---- 3. a resync of an unchanged cluster writes nothing ---------------------------------------
    sleep(Duration::from_secs(1)).await;
    let before = fx.controllers[c].metrics().await?;
    sleep(Duration::from_secs(5)).await; // more than two resync periods (--resync 2s)
    fx.check_controllers()?;
    let after = fx.controllers[c].metrics().await?;
    ensure!(
        after.writes() == before.writes(),
        "an unchanged cluster must cause no writes on resync: mco_api_writes_total went from {} {} to {} {}",
        before.writes(),
        before.writes_summary(),
        after.writes(),
        after.writes_summary()
    );
    let evaluated = |m: &support::controller::Metrics| {
        ["apply", "skip", "error", "failed"]
            .iter()
            .map(|r| m.evaluations(r))
            .sum::<f64>()
    };
    ensure!(
        evaluated(&after) > evaluated(&before),
        "no evaluation during 5 s with --resync 2s ({} before, {} after): the zero-writes check proved nothing",
        evaluated(&before),
        evaluated(&after)
    );
    eprintln!(
        "resync: {} evaluations in 5 s, no writes (totals {})",
        evaluated(&after) - evaluated(&before),
        after.writes_summary()
    );
    let m = fx.controllers[c].metrics().await?;
    ensure!(m.leader()?, "the only replica must lead");
    ensure!(
        m.has("mco_reconcile_errors_total"),
        "/metrics has no mco_reconcile_errors_total"
    );
    let errors = m.sum("mco_reconcile_errors_total", &[]);
    ensure!(
        errors == 0.0,
        "{errors} reconcile errors in a run without faults (see the controller log)"
    );
    Ok(())
}

async fn policies_and_other_writers(fx: &mut Fixture) -> Result<()> {
    let case = "policy-admin-file-restart-01-working";
    fx.apply_pool("worker", "rendered-worker-a").await?;
    fx.apply_golden_machineconfigs(case).await?;
    let machineconfiguration = golden::yaml_docs(case, "machineconfiguration.yaml")?
        .into_iter()
        .next()
        .context("the golden case has a MachineConfiguration")?;
    let resource = kube::api::ApiResource {
        group: "operator.openshift.io".into(),
        version: "v1".into(),
        api_version: "operator.openshift.io/v1".into(),
        kind: "MachineConfiguration".into(),
        plural: "machineconfigurations".into(),
    };
    let admin_apply = PatchParams::apply("test-admin").force();
    Api::<kube::api::DynamicObject>::all_with(fx.admin.clone(), &resource)
        .patch(
            "cluster",
            &admin_apply,
            &Patch::Apply(&machineconfiguration),
        )
        .await
        .context("applying MachineConfiguration cluster")?;
    let worker0 = fx
        .create_node("worker-0", &["worker"], &[], "rendered-worker-a")
        .await?;

    // Another writer's MCN, there before us, at observedGeneration 12.
    let taken0 = fx
        .create_node("taken-0", &["worker"], &[], "rendered-worker-a")
        .await?;
    let theirs = json!({
        "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigNode",
        "metadata": {"name": "taken-0"},
        "spec": {"node": {"name": "taken-0"}, "pool": {"name": "worker"},
                 "configVersion": {"desired": "rendered-worker-a"}},
    });
    let operator = PatchParams::apply("machine-config-operator").force();
    fx.mcns()
        .patch("taken-0", &operator, &Patch::Apply(&theirs))
        .await
        .context("the other writer's MCN")?;
    let status = json!({
        "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigNode",
        "metadata": {"name": "taken-0"}, "status": {"observedGeneration": 12},
    });
    fx.mcns()
        .patch_status("taken-0", &operator, &Patch::Apply(&status))
        .await
        .context("the other writer's status")?;

    let c = fx
        .start_controller("mco-host-0", &["--resync", "2s"])
        .await?;
    let (_, taken) = fx
        .wait_mcn(
            &Expected::updated_on("taken-0", "worker")?,
            &taken0,
            STEP_TIMEOUT,
        )
        .await
        .context("the MCN another writer created is updated")?;
    ensure!(
        taken["status"]["observedGeneration"] == 12,
        "observedGeneration must stay at the stored 12: {}",
        taken["status"]
    );

    // What only the daemon writes, written by another field manager.
    fx.wait_mcn(
        &Expected::load("policy-admin-file-restart-00-updated-on-a", "worker-0")?,
        &worker0,
        STEP_TIMEOUT,
    )
    .await?;
    let irreconcilable = json!([{"fieldPath": "spec.config.storage.disks[0]", "diff": "- device: /dev/sda\n+ device: /dev/sdb"}]);
    let daemon = json!({
        "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigNode",
        "metadata": {"name": "worker-0"}, "status": {"irreconcilableChanges": irreconcilable},
    });
    fx.mcns()
        .patch_status(
            "worker-0",
            &PatchParams::apply("machine-config-daemon").force(),
            &Patch::Apply(&daemon),
        )
        .await
        .context("the daemon's irreconcilableChanges")?;

    fx.apply_pool("worker", B).await?;
    walk(
        fx,
        c,
        "worker-0",
        &worker0,
        "policy-admin-file-restart-00-updated-on-a",
        RESTART_WALK,
    )
    .await?;
    let mcn = serde_json::to_value(fx.mcns().get("worker-0").await?)?;
    let conditions = golden::conditions(&mcn["status"])?;
    for never in ["Drained", "Cordoned", "RebootedNode"] {
        ensure!(
            conditions.get(never).is_some_and(|c| c.status == "False"),
            "a restart-only update claims {never}: {:?}",
            conditions.get(never)
        );
    }
    ensure!(
        conditions
            .get("UpdatePrepared")
            .is_some_and(|c| c.message.ends_with("Drain Required: false")),
        "UpdatePrepared: {:?}",
        conditions.get("UpdatePrepared")
    );
    ensure!(
        mcn["status"]["irreconcilableChanges"] == irreconcilable,
        "another writer's irreconcilableChanges must survive our status writes: {}",
        mcn["status"]
    );
    no_reconcile_errors(fx, c).await
}

async fn failover(fx: &mut Fixture) -> Result<()> {
    fx.apply_pool("worker", "rendered-worker-a").await?;
    fx.apply_golden_machineconfigs("reboot-00-updated-on-a")
        .await?;
    let mut uids = Vec::new();
    for node in ["worker-0", "worker-1"] {
        uids.push(
            fx.create_node(node, &["worker"], &[], "rendered-worker-a")
                .await?,
        );
    }
    let args = ["--lease-duration", "4s", "--resync", "2s"];
    let a = fx.start_controller("replica-a", &args).await?;
    let b = fx.start_controller("replica-b", &args).await?;

    for (node, uid) in ["worker-0", "worker-1"].into_iter().zip(&uids) {
        fx.wait_mcn(&Expected::updated_on(node, "worker")?, uid, STEP_TIMEOUT)
            .await?;
    }

    // Exactly one leader, and only it writes.
    let t = Instant::now();
    let (leader, standby) = loop {
        let (ma, mb) = (
            fx.controllers[a].metrics().await?,
            fx.controllers[b].metrics().await?,
        );
        match (ma.leader()?, mb.leader()?) {
            (true, false) => break (a, b),
            (false, true) => break (b, a),
            (x, y) if t.elapsed() > Duration::from_secs(20) => {
                bail!("expected exactly one leader, replica-a says {x}, replica-b says {y}")
            }
            _ => sleep(Duration::from_millis(200)).await,
        }
    };
    let (leader_id, standby_id) = (
        fx.controllers[leader].identity.clone(),
        fx.controllers[standby].identity.clone(),
    );
    eprintln!("{leader_id} leads, {standby_id} stands by");
    // Give a misbehaving standby the time of a resync to write, then look.
    sleep(Duration::from_secs(3)).await;
    let (ml, ms) = (
        fx.controllers[leader].metrics().await?,
        fx.controllers[standby].metrics().await?,
    );
    ensure!(
        ml.leader()? && !ms.leader()?,
        "leadership changed without a failure"
    );
    ensure!(
        ml.writes() > 0.0,
        "the leader {leader_id} created the MCNs but counts no writes {}",
        ml.writes_summary()
    );
    ensure!(
        ms.writes() == 0.0,
        "the standby {standby_id} must not write: {}",
        ms.writes_summary()
    );
    let holder = fx.lease_holder().await?;
    ensure!(
        holder.as_deref() == Some(leader_id.as_str()),
        "Lease {}/{} holder is {holder:?}, the leader is {leader_id}",
        fixture::NAMESPACE,
        fixture::LEASE
    );
    let (code, _) = fx.controllers[standby].get("/readyz").await?;
    ensure!(
        code == 200,
        "a standby is ready too; /readyz answered {code}"
    );

    // SIGKILL the leader: it cannot release the lease; the standby waits it out.
    fx.controllers[leader].kill_hard()?;
    let killed = Instant::now();
    // A change made while nobody leads must still be picked up.
    let uid2 = fx
        .create_node("worker-2", &["worker"], &[], "rendered-worker-a")
        .await?;
    loop {
        fx.controllers[standby].check_running()?;
        if fx.controllers[standby].metrics().await?.leader()? {
            break;
        }
        if killed.elapsed() > Duration::from_secs(20) {
            bail!(
                "{standby_id} did not take over within 20 s of {leader_id}'s SIGKILL (--lease-duration 4s)"
            );
        }
        sleep(Duration::from_millis(200)).await;
    }
    let takeover = killed.elapsed();
    fx.wait_mcn(
        &Expected::updated_on("worker-2", "worker")?,
        &uid2,
        STEP_TIMEOUT,
    )
    .await
    .context("the new leader must converge a node created after the failover")?;
    eprintln!(
        "{standby_id} took over {takeover:.2?} after the SIGKILL; worker-2's MCN after {:.2?}",
        killed.elapsed()
    );
    let ms = fx.controllers[standby].metrics().await?;
    ensure!(
        ms.writes() > 0.0,
        "the new leader wrote worker-2's MCN but counts no writes"
    );
    let holder = fx.lease_holder().await?;
    ensure!(
        holder.as_deref() == Some(standby_id.as_str()),
        "Lease holder is {holder:?} after the failover, expected {standby_id}"
    );
    Ok(())
}

async fn graceful_handover(fx: &mut Fixture) -> Result<()> {
    fx.apply_pool("worker", "rendered-worker-a").await?;
    let args = ["--lease-duration", "120s"];
    fx.start_controller("replica-a", &args).await?;
    let t = Instant::now();
    while fx.lease_holder().await?.as_deref() != Some("replica-a") {
        ensure!(
            t.elapsed() < Duration::from_secs(20),
            "replica-a never took the free lease"
        );
        sleep(Duration::from_millis(200)).await;
    }
    // SIGTERM replica-a and wait until it has exited, then start replica-b.
    drop(fx.controllers.remove(0));
    let stopped = Instant::now();
    let b = fx.start_controller("replica-b", &args).await?;
    loop {
        fx.controllers[b].check_running()?;
        if fx.controllers[b].metrics().await?.leader()? {
            break;
        }
        // Half the lease: a lease left to expire would take all of it.
        ensure!(
            stopped.elapsed() < Duration::from_secs(60),
            "replica-b did not take over within 60 s of replica-a's SIGTERM (--lease-duration 120s): the lease was not released"
        );
        sleep(Duration::from_millis(200)).await;
    }
    eprintln!(
        "replica-b took over {:.2?} after replica-a stopped",
        stopped.elapsed()
    );
    let holder = fx.lease_holder().await?;
    ensure!(
        holder.as_deref() == Some("replica-b"),
        "Lease holder is {holder:?} after the handover, expected replica-b"
    );
    Ok(())
}

async fn apiserver_restart(fx: &mut Fixture) -> Result<()> {
    fx.apply_pool("worker", "rendered-worker-a").await?;
    fx.apply_golden_machineconfigs("reboot-01-desired-config-set")
        .await?;
    let uid = fx
        .create_node("worker-0", &["worker"], &[], "rendered-worker-a")
        .await?;
    let c = fx
        .start_controller("mco-host-0", &["--resync", "2s"])
        .await?;
    fx.wait_mcn(
        &Expected::load("reboot-00-updated-on-a", "worker-0")?,
        &uid,
        STEP_TIMEOUT,
    )
    .await?;
    fx.apply_pool("worker", B).await?;
    let (before, after) = REBOOT_WALK.split_at(2);
    steps(fx, "worker-0", &uid, before, STEP_TIMEOUT).await?;

    // The controller's open watches keep the old apiserver from shutting down
    // gracefully, so the harness SIGKILLs it after its 20 s grace period: the
    // API is away for about 20 s plus the start.
    let t = Instant::now();
    let start = fx.cp.restart_apiserver().await?;
    let outage = t.elapsed();
    eprintln!("kube-apiserver restarted: away {outage:.2?}, ready {start:.2?} after its start");
    fx.controllers[c]
        .check_running()
        .context("the controller must survive an apiserver restart")?;

    // The next step right away: the controller has to reconnect to see it.
    let t = Instant::now();
    steps(fx, "worker-0", &uid, &after[..1], AFTER_RESTART_TIMEOUT)
        .await
        .with_context(|| {
            format!(
                "the controller did not converge within {AFTER_RESTART_TIMEOUT:?} of the apiserver's return (it was away {outage:.2?})"
            )
        })?;
    eprintln!(
        "first step after the restart converged {:.2?} after the apiserver was ready",
        t.elapsed()
    );
    steps(fx, "worker-0", &uid, &after[1..3], STEP_TIMEOUT).await?;
    let (code, _) = fx.controllers[c].get("/healthz").await?;
    ensure!(code == 200, "/healthz answered {code} after the restart");
    wait_metric(fx, c, "mco_leader 1 after the restart", |m| {
        m.leader().unwrap_or(false)
    })
    .await?;
    Ok(())
}

const REGISTRY_CM: &str = "mco-guest-registry";
const SWAP_WORKERS: [&str; 4] = ["worker-0", "worker-1", "worker-2", "worker-3"];

/// What the test does to the registry before a step of the walk.
enum Swap {
    /// To this module ConfigMap (and candidate); it must take over.
    Good {
        module: &'static str,
        candidate: Option<&'static str>,
    },
    /// To this module ConfigMap pinned to that module's digest; it must be
    /// refused with the old module serving on.
    Refused {
        module: &'static str,
        pin: &'static str,
        why: &'static str,
    },
}

async fn hot_swap(fx: &mut Fixture) -> Result<()> {
    // Module B is module A plus a custom section: another digest, the same
    // behaviour, so every golden step holds whichever of the two serves.
    let a = support::controller::installed_guest("mcn.wasm")?;
    let b = with_custom_section(&a, "mco-e2e-swap", b"module b");
    let garbage = b"\0asm\x0d\0\x01\0 not really a component".to_vec();
    let modules: BTreeMap<&str, Vec<u8>> =
        [("mcn-a", a), ("mcn-b", b), ("mcn-garbage", garbage)].into();
    let sha = |name: &str| sha256(&modules[name]);
    for (name, bytes) in &modules {
        put_configmap(fx, name, "mcn.wasm", bytes).await?;
    }
    put_registry(fx, &registry_yaml("mcn-a", &sha("mcn-a"), None)).await?;

    fx.apply_pool("worker", "rendered-worker-a").await?;
    fx.apply_golden_machineconfigs("reboot-01-desired-config-set")
        .await?;
    let mut uids = Vec::new();
    for node in SWAP_WORKERS {
        uids.push(
            fx.create_node(node, &["worker"], &[], "rendered-worker-a")
                .await?,
        );
    }
    // A long resync: a reconcile lost in a swap would not be papered over.
    let args = [
        "--registry-configmap",
        REGISTRY_CM,
        "--registry-poll",
        "500ms",
        "--resync",
        "10m",
    ];
    let c = fx.start_controller("mco-host-0", &args).await?;
    for (node, uid) in SWAP_WORKERS.iter().zip(&uids) {
        fx.wait_mcn(
            &Expected::load("reboot-00-updated-on-a", node)?,
            uid,
            STEP_TIMEOUT,
        )
        .await?;
    }
    ensure!(
        serving(&fx.controllers[c].metrics().await?, &sha("mcn-a")),
        "mcn-a must serve at start"
    );

    // Good swaps load while the walk goes on (a step takes milliseconds, a
    // swap hundreds); each is awaited only before the next registry change.
    let plan: BTreeMap<usize, Swap> = [
        (
            0,
            Swap::Good {
                module: "mcn-b",
                candidate: None,
            },
        ),
        (
            4,
            Swap::Refused {
                module: "mcn-a",
                pin: "mcn-b",
                why: "pins sha256",
            },
        ),
        (
            5,
            Swap::Refused {
                module: "mcn-garbage",
                pin: "mcn-garbage",
                why: "could not be compiled",
            },
        ),
        (
            6,
            Swap::Good {
                module: "mcn-a",
                candidate: None,
            },
        ),
        (
            8,
            Swap::Good {
                module: "mcn-b",
                candidate: Some("mcn-a"),
            },
        ),
    ]
    .into();
    fx.apply_pool("worker", B).await?;
    let admin = (
        fx.controllers[c].admin_addr,
        fx.controllers[c].admin_token.clone(),
    );
    let mut latencies = Vec::new();
    let mut serving_now = sha("mcn-a");
    // The good swap in progress: its module, a task that reports when it
    // serves, and how many steps of all nodes converged meanwhile.
    let mut pending: Option<(&str, tokio::task::JoinHandle<Result<Duration>>, usize)> = None;
    let mut overlapped = 0;
    for (i, step) in REBOOT_WALK.iter().enumerate() {
        let swap = plan.get(&i);
        if swap.is_some()
            && let Some((module, task, steps)) = pending.take()
        {
            let took = task.await??;
            eprintln!(
                "  {module} serves {took:.2?} after the registry change ({steps} steps converged meanwhile)"
            );
            latencies.push(took);
            overlapped += steps;
            serving_now = sha(module);
        }
        let before = fx.controllers[c].metrics().await?;
        let t = Instant::now();
        match swap {
            Some(Swap::Good { module, candidate }) => {
                let candidate = candidate.map(|m| (m, sha(m)));
                let candidate = candidate.as_ref().map(|(m, s)| (*m, s.as_str()));
                put_registry(fx, &registry_yaml(module, &sha(module), candidate)).await?;
                let want = sha(module);
                pending = Some((
                    module,
                    tokio::spawn(until_serving(admin.clone(), want, t)),
                    0,
                ));
            }
            Some(Swap::Refused { module, pin, .. }) => {
                put_registry(fx, &registry_yaml(module, &sha(pin), None)).await?
            }
            None => {}
        }
        // The nodes move on at once, while the host picks the change up.
        for node in SWAP_WORKERS {
            fx.patch_node(node, step.set, Some(step.unschedulable))
                .await?;
        }
        if let Some(Swap::Refused { module, why, .. }) = swap {
            let failed = swaps(&before, "failed");
            wait_metric_for(fx, c, &format!("{module} refused"), SWAP_TIMEOUT, |m| {
                swaps(m, "failed") > failed
            })
            .await?;
            eprintln!(
                "  step {}: {module} refused {:.2?} after the registry change",
                step.case,
                t.elapsed()
            );
            let m = fx.controllers[c].metrics().await?;
            ensure!(
                serving(&m, &serving_now),
                "a refused swap must leave the old module serving"
            );
            // The status endpoint says why, under the entry's name.
            let status = guests_status(fx, c).await?;
            let last = &status["jobs"]["mcn"]["lastChange"];
            ensure!(
                last["result"] == "failed"
                    && last["error"].as_str().is_some_and(|e| e.contains(why))
                    && status["jobs"]["mcn"]["sha256"] == serving_now.as_str(),
                "/guests must show the refusal ({why}) and the old module serving: {status}"
            );
        }
        for (node, uid) in SWAP_WORKERS.iter().zip(&uids) {
            fx.wait_mcn(&Expected::load(step.case, node)?, uid, STEP_TIMEOUT)
                .await
                .with_context(|| format!("{node}, step {}", step.case))?;
        }
        // A step that converged before the new module was seen serving
        // was walked while the swap was loading.
        if let Some((_, task, steps)) = pending.as_mut()
            && !task.is_finished()
        {
            *steps += 1;
        }
        eprintln!(
            "  {}: all {} workers converged",
            step.case,
            SWAP_WORKERS.len()
        );
    }
    if let Some((module, task, steps)) = pending.take() {
        let took = task.await??;
        eprintln!(
            "  {module} serves {took:.2?} after the registry change ({steps} steps converged meanwhile)"
        );
        latencies.push(took);
        overlapped += steps;
    }

    // The candidate shadows every node that changes from now on.
    for node in SWAP_WORKERS {
        fx.set_labels(node, json!({ "mco-e2e/shadowed": "yes" }))
            .await?;
    }
    let workers = SWAP_WORKERS.len() as f64;
    wait_metric_for(fx, c, "a shadow evaluation per worker", SWAP_TIMEOUT, |m| {
        m.sum("mco_shadow_evaluations_total", &[("job", "mcn")]) >= workers
    })
    .await?;

    // Every swap counted, the refusals explained where an administrator looks.
    let m = fx.controllers[c].metrics().await?;
    let (swapped, failed) = (swaps(&m, "swapped"), swaps(&m, "failed"));
    ensure!(
        (swapped, failed) == (3.0, 2.0),
        "mco_guest_swaps_total{{job=\"mcn\"}}: swapped {swapped}, failed {failed}; expected 3 and 2"
    );
    let errors = m.sum("mco_reconcile_errors_total", &[]);
    ensure!(errors == 0.0, "{errors} reconcile errors across the swaps");
    ensure!(
        m.evaluations("failed") == 0.0,
        "an evaluation failed across the swaps"
    );
    let shadow = |r: &str| {
        m.sum(
            "mco_shadow_evaluations_total",
            &[("job", "mcn"), ("result", r)],
        )
    };
    ensure!(
        shadow("agree") > 0.0 && shadow("differ") == 0.0 && shadow("failed") == 0.0,
        "the candidate (module A beside B) must agree on every node: agree {}, differ {}, failed {}",
        shadow("agree"),
        shadow("differ"),
        shadow("failed")
    );
    let status = guests_status(fx, c).await?;
    let body = status.to_string();
    let mcn = &status["jobs"]["mcn"];
    ensure!(
        mcn["sha256"] == sha("mcn-b")
            && mcn["candidate"]["sha256"] == sha("mcn-a")
            && mcn["lastChange"]["result"] == "swapped"
            && status["registry"] == format!("configmap/{REGISTRY_CM}[registry.yaml]"),
        "/guests does not show mcn-b serving with candidate mcn-a: {body}"
    );
    let events = swap_events(fx).await?;
    let refused: Vec<&String> = events
        .iter()
        .filter(|(reason, _)| reason == "GuestSwapFailed")
        .map(|(_, note)| note)
        .collect();
    ensure!(
        refused.len() == 2
            && refused
                .iter()
                .any(|n| n.contains(&sha("mcn-a")) && n.contains(&sha("mcn-b")))
            && refused
                .iter()
                .all(|n| n.starts_with("registry entry mcn: ")),
        "expected two GuestSwapFailed Events naming the entry (one with both digests): {events:?}"
    );
    ensure!(
        events
            .iter()
            .filter(|(reason, _)| reason == "GuestSwapped")
            .count()
            == 3,
        "expected three GuestSwapped Events: {events:?}"
    );
    latencies.sort();
    eprintln!(
        "hot swap: {} swaps served after {:?} (registry change to new digest serving), 2 refused, \
         {} shadow evaluations agreed, {overlapped} steps walked while a swap was loading, \
         0 reconciles missed over {} nodes x {} steps",
        latencies.len(),
        latencies,
        shadow("agree"),
        SWAP_WORKERS.len(),
        REBOOT_WALK.len()
    );
    Ok(())
}

async fn guest_objects(fx: &mut Fixture) -> Result<()> {
    let read = support::controller::installed_guest;
    let a = read("mcn.wasm")?;
    let b = with_custom_section(&a, "mco-e2e-crd", b"module b");
    let c_bytes = with_custom_section(&a, "mco-e2e-crd", b"module c");
    let d_bytes = with_custom_section(&a, "mco-e2e-crd", b"module d");
    let (sha_a, sha_b, sha_c) = (sha256(&a), sha256(&b), sha256(&c_bytes));
    put_configmap(fx, "mcn-b", "mcn.wasm", &b).await?;

    // Modules C and D go to a real registry, pinned by digest; cosign signs
    // C with the team's key (a Sigstore bundle) and D with another key only
    // (the legacy form).
    let tools = support::oci::tools()?;
    let registry = support::oci::Registry::start(&tools.registry)?;
    let work = tempfile::tempdir()?;
    support::oci::key_pairs(&tools, work.path(), &["team", "other"])?;
    let push =
        |name: &str, bytes: &[u8]| support::oci::push_guest(&registry, work.path(), name, bytes);
    let (signed, wrongly_signed) = (push("c", &c_bytes)?, push("d", &d_bytes)?);
    support::oci::sign(&tools, work.path(), "team.key", &signed, true)?;
    support::oci::sign(&tools, work.path(), "other.key", &wrongly_signed, false)?;
    let team_pub = std::fs::read(work.path().join("team.pub"))?;
    put_configmap(fx, "cosign-keys", "team.pub", &team_pub).await?;

    fx.apply_pool("worker", "rendered-worker-a").await?;
    fx.apply_golden_machineconfigs("reboot-01-desired-config-set")
        .await?;
    let mut uids = Vec::new();
    for node in SWAP_WORKERS {
        uids.push(
            fx.create_node(node, &["worker"], &[], "rendered-worker-a")
                .await?,
        );
    }
    let plain_http = registry.addr.to_string();
    let args = [
        "--registry-crd",
        "--registry-poll",
        "500ms",
        "--resync",
        "10m",
        "--plain-http-registry",
        &plain_http,
    ];
    let c = fx.start_controller("mco-host-0", &args).await?;
    for (node, uid) in SWAP_WORKERS.iter().zip(&uids) {
        fx.wait_mcn(
            &Expected::load("reboot-00-updated-on-a", node)?,
            uid,
            STEP_TIMEOUT,
        )
        .await?;
    }

    // ---- the shipped objects: every job, on its installed guest --------------------------------
    let shipped = fixture::repo_root().join("deploy").join("guests");
    kubectl(fx, &["apply", "-k", &shipped.display().to_string()], None).await?;
    for (name, file) in [
        ("mcn", "mcn.wasm"),
        ("bootimage-aws", "bootimage-aws.wasm"),
        ("bootimage-gcp", "bootimage-gcp.wasm"),
        ("bootimage-azure", "bootimage-azure.wasm"),
    ] {
        let sha = sha256(&read(file)?);
        wait_guest_object(fx, name, "its installed guest serving", SWAP_TIMEOUT, |s| {
            s["serving"]["sha256"] == sha.as_str() && condition(s, "Ready") == ("True", "Serving")
        })
        .await?;
    }
    let table = kubectl(fx, &["get", "machineconfigguests"], None).await?;
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    ensure!(
        rows.first().map(|r| &r[..])
            == Some(
                &[
                    "NAME",
                    "JOB",
                    "PLATFORM",
                    "SERVING",
                    "CANDIDATE",
                    "STAGE",
                    "READY",
                    "DEGRADED",
                    "AGE"
                ][..]
            ),
        "kubectl get machineconfigguests: unexpected columns:\n{table}"
    );
    let short = |sha: &str| format!("sha256:{}", &sha[..12]);
    ensure!(
        // kubectl leaves the column of an absent field blank.
        rows.iter()
            .any(|r| r.len() == 6 && r[..5] == ["mcn", "mcn", &short(&sha_a), "True", "False"]),
        "kubectl get machineconfigguests does not show mcn on the installed guest:\n{table}"
    );

    // ---- broken specs never reach the host -----------------------------------------------------
    let typo = "apiVersion: mco-wasm.io/v1alpha1\nkind: MachineConfigGuest\nmetadata: {name: typo}\n\
                spec: {job: mcn, module: m.wasm, sha265: abc}\n";
    let both = "apiVersion: mco-wasm.io/v1alpha1\nkind: MachineConfigGuest\nmetadata: {name: both}\n\
                spec: {job: bootImage, platform: AWS, module: m.wasm, oci: r.io/m:1}\n";
    let no_platform = "apiVersion: mco-wasm.io/v1alpha1\nkind: MachineConfigGuest\nmetadata: {name: np}\n\
                spec: {job: bootImage, module: m.wasm}\n";
    for (yaml, why) in [
        (typo, "unknown field \"spec.sha265\""),
        (
            both,
            "give exactly one of spec.module, spec.configMap and spec.oci",
        ),
        (no_platform, "spec.platform is required for job bootImage"),
    ] {
        let refused = kubectl(fx, &["apply", "-f", "-"], Some(yaml)).await;
        let message = format!("{:#}", refused.err().unwrap_or_else(|| anyhow!("accepted")));
        ensure!(
            message.contains(why),
            "kubectl apply of a broken spec: {message}; expected {why}"
        );
    }

    // ---- swaps while the workers walk the update -----------------------------------------------
    fx.apply_pool("worker", B).await?;
    let to_b = json!({"spec": {"module": null, "configMap": {"name": "mcn-b", "key": "mcn.wasm"}, "sha256": sha_b}});
    let keys = json!({"keys": [{"configMap": {"name": "cosign-keys", "key": "team.pub"}}]});
    let to_c = json!({"spec": {"configMap": null, "sha256": null, "oci": signed, "verify": keys}});
    let to_d = json!({"spec": {"oci": wrongly_signed}});
    let to_wrong_world =
        json!({"spec": {"oci": null, "verify": null, "module": "bootimage-aws.wasm"}});
    let signed_module = format!("oci:{signed}");
    for (i, step) in REBOOT_WALK.iter().enumerate() {
        match i {
            1 => patch_guest_object(fx, "mcn", &to_b).await?,
            3 => patch_guest_object(fx, "mcn", &to_c).await?,
            5 => patch_guest_object(fx, "mcn", &to_d).await?,
            7 => patch_guest_object(fx, "mcn", &to_wrong_world).await?,
            _ => {}
        }
        for node in SWAP_WORKERS {
            fx.patch_node(node, step.set, Some(step.unschedulable))
                .await?;
        }
        for (node, uid) in SWAP_WORKERS.iter().zip(&uids) {
            fx.wait_mcn(&Expected::load(step.case, node)?, uid, STEP_TIMEOUT)
                .await
                .with_context(|| format!("{node}, step {}", step.case))?;
        }
        match i {
            2 => {
                let status = wait_guest_object(fx, "mcn", "module b serving", SWAP_TIMEOUT, |s| {
                    s["serving"]["sha256"] == sha_b.as_str()
                        && s["serving"]["module"] == "configmap/mcn-b[mcn.wasm]"
                        && condition(s, "Ready") == ("True", "Serving")
                })
                .await?;
                ensure!(
                    status["serving"]["loadedAt"].is_string(),
                    "no load time: {status}"
                );
            }
            4 => {
                wait_guest_object(
                    fx,
                    "mcn",
                    "the signed OCI module serving",
                    SWAP_TIMEOUT,
                    |s| {
                        s["serving"]["sha256"] == sha_c.as_str()
                            && s["serving"]["module"] == signed_module.as_str()
                            && condition(s, "Ready") == ("True", "Serving")
                    },
                )
                .await?;
            }
            6 => {
                let status = wait_guest_object(
                    fx,
                    "mcn",
                    "the wrong signature refused",
                    SWAP_TIMEOUT,
                    |s| condition(s, "Degraded") == ("True", "SwapFailed"),
                )
                .await?;
                let error = status["lastError"].as_str().unwrap_or_default();
                ensure!(
                    status["serving"]["sha256"] == sha_c.as_str()
                        && error.contains("no valid cosign signature")
                        && error.contains(&wrongly_signed)
                        && error.contains("cosign-keys"),
                    "a wrongly signed module must leave module c serving and name the reference and keys: {status}"
                );
            }
            8 => {
                let status =
                    wait_guest_object(fx, "mcn", "the wrong world refused", SWAP_TIMEOUT, |s| {
                        s["lastError"]
                            .as_str()
                            .is_some_and(|e| e.contains("does not export"))
                    })
                    .await?;
                ensure!(
                    status["serving"]["sha256"] == sha_c.as_str()
                        && condition(&status, "Ready") == ("False", "SwapFailed")
                        && condition(&status, "Degraded") == ("True", "SwapFailed")
                        && status["lastError"]
                            .as_str()
                            .is_some_and(|e| e.starts_with("registry entry mcn: guest module")),
                    "a refused module must leave module c serving and say why: {status}"
                );
                let m = fx.controllers[c].metrics().await?;
                ensure!(serving(&m, &sha_c), "module c must keep serving");
            }
            _ => {}
        }
    }
    let table = kubectl(
        fx,
        &["get", "machineconfigguests", "mcn", "-o", "wide"],
        None,
    )
    .await?;
    ensure!(
        table.contains("True") && table.contains("does not export"),
        "kubectl get -o wide shows neither Degraded nor the error:\n{table}"
    );
    let m = fx.controllers[c].metrics().await?;
    let errors = m.sum("mco_reconcile_errors_total", &[]);
    ensure!(errors == 0.0, "{errors} reconcile errors across the swaps");
    ensure!(
        m.evaluations("failed") == 0.0,
        "an evaluation failed across the swaps"
    );

    // ---- back to the image's guest -------------------------------------------------------------
    kubectl(fx, &["delete", "machineconfigguest", "mcn"], None).await?;
    wait_metric_for(
        fx,
        c,
        "the installed guest serving again",
        SWAP_TIMEOUT,
        |m| serving(m, &sha_a),
    )
    .await?;
    eprintln!(
        "machineconfigguests: 4 shipped objects Ready, 2 swaps served (ConfigMap, signed OCI), \
         2 refused (wrong signature, wrong world; Degraded), 3 broken specs refused by the \
         apiserver, 0 reconciles missed over {} nodes x {} steps",
        SWAP_WORKERS.len(),
        REBOOT_WALK.len()
    );
    Ok(())
}

async fn late_registry(fx: &mut Fixture) -> Result<()> {
    let a = support::controller::installed_guest("mcn.wasm")?;
    let late = with_custom_section(&a, "mco-e2e-late", b"published late");
    let tools = support::oci::tools()?;
    let registry = support::oci::Registry::start(&tools.registry)?;
    let reference = registry.reference("guests/mcn:late");
    let object = json!({
        "apiVersion": "mco-wasm.io/v1alpha1",
        "kind": "MachineConfigGuest",
        "metadata": {"name": "mcn"},
        "spec": {"job": "mcn", "oci": reference},
    });
    apply_guest_object(fx, &object).await?;

    let plain_http = registry.addr.to_string();
    let args = [
        "--registry-crd",
        "--registry-poll",
        "500ms",
        "--plain-http-registry",
        &plain_http,
    ];
    let c = fx.start_controller("mco-host-0", &args).await?;
    let status = wait_guest_object(
        fx,
        "mcn",
        "degraded on the installed guest",
        SWAP_TIMEOUT,
        |s| condition(s, "Degraded") == ("True", "FellBack"),
    )
    .await?;
    ensure!(
        status["serving"]["sha256"] == sha256(&a).as_str()
            && status["lastError"]
                .as_str()
                .is_some_and(|e| e.contains(&reference)),
        "the installed guest must serve, and the error name the reference: {status}"
    );
    let fetches = |m: &support::controller::Metrics, result: &str| {
        m.sum(
            "mco_guest_fetches_total",
            &[("job", "mcn"), ("result", result)],
        )
    };
    let m = fx.controllers[c].metrics().await?;
    ensure!(
        fetches(&m, "manifest_failure") >= 1.0 && fetches(&m, "success") == 0.0,
        "the failed pull must be counted as manifest_failure"
    );

    let file = tempfile::NamedTempFile::new()?;
    std::fs::write(file.path(), &late)?;
    support::oci::ok_json(
        std::process::Command::new(support::controller::host_binary()?)
            .args(["--plain-http-registry", &plain_http, "guests", "push"])
            .arg(file.path())
            .arg(&reference),
    )?;
    let t = Instant::now();
    wait_guest_object(
        fx,
        "mcn",
        "the published module serving",
        SWAP_TIMEOUT,
        |s| {
            s["serving"]["sha256"] == sha256(&late).as_str()
                && condition(s, "Ready") == ("True", "Serving")
                && condition(s, "Degraded") == ("False", "AsSpecified")
        },
    )
    .await?;
    let m = fx.controllers[c].metrics().await?;
    ensure!(
        fetches(&m, "success") >= 1.0 && serving(&m, &sha256(&late)),
        "the module the registry now serves must be pulled and serve"
    );
    eprintln!(
        "late registry: started on the installed guest (FellBack), picked the module up {:.2?} after it was pushed",
        t.elapsed()
    );
    Ok(())
}

async fn private_registry(fx: &mut Fixture) -> Result<()> {
    use support::oci::docker_config;
    let a = support::controller::installed_guest("mcn.wasm")?;
    let tools = support::oci::tools()?;
    let registry = support::oci::Registry::with_users(
        &tools.registry,
        &[("team-a", "pw-a"), ("team-b", "pw-b")],
    )?;
    let addr = registry.addr.to_string();
    let (key_a, key_b) = (format!("{addr}/team-a"), format!("{addr}/team-b"));
    let both = docker_config(&[(&key_a, "team-a", "pw-a"), (&key_b, "team-b", "pw-b")]);
    let auth_file = tempfile::NamedTempFile::new()?;
    std::fs::write(auth_file.path(), &both)?;
    // Three modules, told apart by a custom section.
    let mut modules = Vec::new();
    for (path, note) in [
        ("team-a/mcn:v1", "team a"),
        ("team-b/mcn:v1", "team b"),
        ("team-a/mcn:sa", "the ServiceAccount's"),
    ] {
        let bytes = with_custom_section(&a, "mco-e2e-team", note.as_bytes());
        let file = tempfile::NamedTempFile::new()?;
        std::fs::write(file.path(), &bytes)?;
        let reference = registry.reference(path);
        support::oci::ok_json(
            std::process::Command::new(support::controller::host_binary()?)
                .args([
                    "--plain-http-registry",
                    &addr,
                    "guests",
                    "push",
                    "--auth-file",
                ])
                .arg(auth_file.path())
                .arg(file.path())
                .arg(&reference),
        )?;
        modules.push((reference, sha256(&bytes)));
    }
    put_pull_secret(fx, "two-teams", &both).await?;
    put_pull_secret(
        fx,
        "only-team-a",
        &docker_config(&[(&key_a, "team-a", "pw-a")]),
    )
    .await?;
    put_pull_secret(
        fx,
        "wrong-password",
        &docker_config(&[(&addr, "team-b", "not-pw-b")]),
    )
    .await?;
    let account = json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": fixture::SERVICE_ACCOUNT},
        "imagePullSecrets": [{"name": "not-there"}, {"name": "two-teams"}],
    });
    let accounts: Api<ServiceAccount> = Api::namespaced(fx.admin.clone(), fixture::NAMESPACE);
    apply_as_test(&accounts, fixture::SERVICE_ACCOUNT, &account).await?;
    apply_guest_object(
        fx,
        &json!({
            "apiVersion": "mco-wasm.io/v1alpha1",
            "kind": "MachineConfigGuest",
            "metadata": {"name": "mcn"},
            "spec": {"job": "mcn", "oci": modules[0].0, "pullSecret": "two-teams"},
        }),
    )
    .await?;
    let args = [
        "--registry-crd",
        "--registry-poll",
        "500ms",
        "--plain-http-registry",
        &addr,
        "--service-account",
        fixture::SERVICE_ACCOUNT,
    ];
    let c = fx.start_controller("mco-host-0", &args).await?;
    wait_guest_object(
        fx,
        "mcn",
        "team a's module serving",
        SWAP_TIMEOUT,
        serves(&modules[0].1),
    )
    .await?;
    patch_guest_object(fx, "mcn", &json!({"spec": {"oci": modules[1].0}})).await?;
    wait_guest_object(
        fx,
        "mcn",
        "team b's module serving",
        SWAP_TIMEOUT,
        serves(&modules[1].1),
    )
    .await?;
    patch_guest_object(
        fx,
        "mcn",
        &json!({"spec": {"oci": modules[2].0, "pullSecret": null}}),
    )
    .await?;
    wait_guest_object(
        fx,
        "mcn",
        "the module pulled through the ServiceAccount serving",
        SWAP_TIMEOUT,
        serves(&modules[2].1),
    )
    .await?;
    for team in ["team-a", "team-b"] {
        let readers = registry.manifest_readers(&format!("{team}/mcn"))?;
        ensure!(
            readers == [team],
            "{team}/mcn was read by {readers:?}, not by {team} only"
        );
    }

    for (secret, result, why) in [
        (
            "only-team-a",
            "secret_failure",
            format!("pull secret only-team-a: no credentials for {addr}/team-b/mcn"),
        ),
        (
            "wrong-password",
            "manifest_failure",
            format!("oci:{}: cannot read the manifest", modules[1].0),
        ),
    ] {
        let patch = json!({"spec": {"oci": modules[1].0, "pullSecret": secret}});
        refused_while_serving(fx, c, &patch, (result, &why), &modules[2].1).await?;
    }
    mistyped_pull_secrets(fx, c, &key_b, &modules[1].0, &modules[2].1).await?;
    let readers = registry.manifest_readers("team-b/mcn")?;
    ensure!(
        readers == ["team-b"],
        "team-b/mcn was read by {readers:?} after the refusals"
    );
    eprintln!(
        "private registry: 3 modules pulled (per-entry Secret x2, ServiceAccount), each repository read \
         by its own team only, 2 refusals (secret_failure, manifest_failure) with the module before serving, \
         3 mistyped Secrets refused without quoting their credentials"
    );
    Ok(())
}

async fn cluster_image_policies(fx: &mut Fixture) -> Result<()> {
    let a = support::controller::installed_guest("mcn.wasm")?;
    let tools = support::oci::tools()?;
    let registry = support::oci::Registry::start(&tools.registry)?;
    let addr = registry.addr.to_string();
    let work = tempfile::tempdir()?;
    support::oci::key_pairs(&tools, work.path(), &["policy", "other"])?;
    // Module p signed with the policy's key (a bundle), q with the other
    // key only (the legacy form).
    let mut modules = Vec::new();
    for (name, key, bundle) in [("p", "policy.key", true), ("q", "other.key", false)] {
        let bytes = with_custom_section(&a, "mco-e2e-policy", name.as_bytes());
        let pinned = support::oci::push_guest(&registry, work.path(), name, &bytes)?;
        support::oci::sign(&tools, work.path(), key, &pinned, bundle)?;
        modules.push((pinned, sha256(&bytes)));
    }
    let key_data = |name: &str| -> Result<Value> {
        let pem = std::fs::read(work.path().join(name))?;
        Ok(serde_json::to_value(ByteString(pem))?)
    };
    let policies: Api<kube::api::DynamicObject> = Api::all_with(
        fx.admin.clone(),
        &mco_e2e::openshift::cluster_image_policy(),
    );
    let public_key = |key: Value| {
        json!({
            "apiVersion": "config.openshift.io/v1",
            "kind": "ClusterImagePolicy",
            "metadata": {"name": "guests"},
            "spec": {
                "scopes": [format!("{addr}/guests"), "quay.io/elsewhere"],
                "policy": {"rootOfTrust": {"policyType": "PublicKey", "publicKey": {"keyData": key}}},
            },
        })
    };
    apply_as_test(&policies, "guests", &public_key(key_data("policy.pub")?)).await?;
    let certificate =
        ByteString(b"-----BEGIN CERTIFICATE-----\nMIIBdummy\n-----END CERTIFICATE-----\n".to_vec());
    let keyless = json!({
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterImagePolicy",
        "metadata": {"name": "keyless"},
        "spec": {
            "scopes": [format!("{addr}/keyless")],
            "policy": {"rootOfTrust": {
                "policyType": "FulcioCAWithRekor",
                "fulcioCAWithRekor": {
                    "fulcioCAData": certificate,
                    "rekorKeyData": key_data("other.pub")?,
                    "fulcioSubject": {"oidcIssuer": "https://issuer.example.com", "signedEmail": "ci@example.com"},
                },
            }},
        },
    });
    apply_as_test(&policies, "keyless", &keyless).await?;

    apply_guest_object(
        fx,
        &json!({
            "apiVersion": "mco-wasm.io/v1alpha1",
            "kind": "MachineConfigGuest",
            "metadata": {"name": "mcn"},
            "spec": {"job": "mcn", "oci": modules[0].0, "verify": {"clusterImagePolicies": true}},
        }),
    )
    .await?;
    let args = [
        "--registry-crd",
        "--registry-poll",
        "500ms",
        "--plain-http-registry",
        &addr,
    ];
    let c = fx.start_controller("mco-host-0", &args).await?;
    wait_guest_object(
        fx,
        "mcn",
        "module p serving",
        SWAP_TIMEOUT,
        serves(&modules[0].1),
    )
    .await?;

    let unsigned = registry.reference("keyless/mcn:v1");
    for (spec, result, why) in [
        (
            json!({"oci": unsigned}),
            "key_failure",
            format!(
                "oci:{unsigned}: verify key clusterImagePolicies: clusterimagepolicy/keyless: \
                 fulcioCAWithRekor: fulcioCAData: "
            ),
        ),
        (
            json!({"oci": modules[1].0, "verify": {"clusterImagePolicies": ["guests"]}}),
            "signature_failure",
            format!(
                "oci:{}: no valid cosign signature of {} by any of the keys tried (clusterimagepolicy/guests)",
                modules[1].0,
                modules[1]
                    .0
                    .rsplit_once('@')
                    .map_or("", |(_, digest)| digest)
            ),
        ),
    ] {
        let patch = json!({ "spec": spec });
        refused_while_serving(fx, c, &patch, (result, &why), &modules[0].1).await?;
    }
    // The policy now trusts the other key: q is verified again on a later
    // poll, and serves.
    apply_as_test(&policies, "guests", &public_key(key_data("other.pub")?)).await?;
    wait_guest_object(
        fx,
        "mcn",
        "module q serving after the policy's edit",
        SWAP_TIMEOUT,
        serves(&modules[1].1),
    )
    .await?;
    eprintln!(
        "cluster image policies: p served on the policy's key, 2 refusals (an unreadable FulcioCAWithRekor: \
         key_failure, another key: signature_failure) with p serving, q served after the policy's key was edited"
    );
    Ok(())
}

/// Pull Secrets mistyped as people mistype them by hand, each holding a
/// credential where the mistake is: each is refused (`secret_failure`),
/// saying where it is wrong, and the credential appears in none of what
/// the host shows: the MachineConfigGuest, its Events, `/guests`, the
/// host's log.
async fn mistyped_pull_secrets(
    fx: &mut Fixture,
    c: usize,
    key: &str,
    reference: &str,
    before: &str,
) -> Result<()> {
    let password = "Sup3r-S3cret-pw";
    let encoded = support::oci::base64(format!("team-b:{password}").as_bytes())?;
    let cases = [
        (
            format!(r#"{{"auths":{{"{key}":"{encoded}"}}}}"#),
            format!(r#".dockerconfigjson: auths["{key}"] is not an object"#),
        ),
        (
            format!(r#"{{"auths":{{"{key}":{{"auth":"team-b:{password}"}}}}}}"#),
            format!("the auth of {key:?} is not base64"),
        ),
        (
            format!(
                r#"{{"auths":{{"{key}":{{"username":"team-b","password":{{"p":"{password}"}}}}}}}}"#
            ),
            format!(r#".dockerconfigjson: auths["{key}"].password is not a string"#),
        ),
    ];
    let mut reasons = Vec::new();
    for (i, (config, why)) in cases.iter().enumerate() {
        let name = format!("mistyped-{i}");
        put_pull_secret(fx, &name, config).await?;
        let patch = json!({"spec": {"oci": reference, "pullSecret": name}});
        let why = format!("pull secret {name}: {why}");
        refused_while_serving(fx, c, &patch, ("secret_failure", &why), before).await?;
        reasons.push(why);
    }
    let object = kubectl(
        fx,
        &["get", "machineconfigguest", "mcn", "-o", "json"],
        None,
    )
    .await?;
    let events: Vec<String> = guest_events(fx, "mcn")
        .await?
        .into_iter()
        .map(|(reason, note)| format!("{reason}: {note}"))
        .collect();
    let events = events.join("\n");
    let (_, guests) = fx.controllers[c].get("/guests").await?;
    let log = fx.controllers[c].output()?;
    // Each place says why (the last refusal at least), and no place quotes
    // the credential. Events say none of these reasons for sure: a refusal
    // with the reason and action of an earlier one on the same object joins
    // its series (events.k8s.io, as client-go and kube-rs aggregate them),
    // which keeps its first note.
    for (place, text, says) in [
        ("the MachineConfigGuest", &object, &reasons[2..]),
        ("its Events", &events, &[][..]),
        ("/guests", &guests, &reasons[2..]),
        ("the host's log", &log, &reasons[..]),
    ] {
        let text = text.replace("\\\"", "\"");
        for why in says {
            ensure!(
                text.contains(why.as_str()),
                "{place} does not say {why:?}: {text}"
            );
        }
        for secret in [password, &encoded] {
            ensure!(
                !text.contains(secret),
                "{place} quotes a credential: {text}"
            );
        }
    }
    Ok(())
}

async fn put_pull_secret(fx: &Fixture, name: &str, config: &str) -> Result<()> {
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        type_: Some("kubernetes.io/dockerconfigjson".into()),
        data: Some(
            [(
                ".dockerconfigjson".to_owned(),
                ByteString(config.as_bytes().to_vec()),
            )]
            .into(),
        ),
        ..Secret::default()
    };
    let api: Api<Secret> = Api::namespaced(fx.admin.clone(), fixture::NAMESPACE);
    apply_as_test(&api, name, &secret).await
}

/// Polls `/metrics` at `admin` (its address and token) every 20 ms until
/// `sha256` serves the mcn job; the time since `since`.
async fn until_serving(
    (addr, token): (std::net::SocketAddr, Option<String>),
    sha256: String,
    since: Instant,
) -> Result<Duration> {
    loop {
        if let Ok((200, body)) =
            support::controller::http_get_as(addr, "/metrics", token.as_deref()).await
            && support::controller::Metrics::parse(&body).is_ok_and(|m| serving(&m, &sha256))
        {
            return Ok(since.elapsed());
        }
        if since.elapsed() > SWAP_TIMEOUT {
            bail!("sha256 {sha256} does not serve {SWAP_TIMEOUT:?} after the registry change");
        }
        sleep(Duration::from_millis(20)).await;
    }
}

async fn guests_status(fx: &Fixture, c: usize) -> Result<Value> {
    let (code, body) = fx.controllers[c].get("/guests").await?;
    ensure!(code == 200, "/guests answered {code}: {body}");
    serde_json::from_str(&body).with_context(|| format!("/guests: {body}"))
}

fn registry_yaml(module: &str, sha256: &str, candidate: Option<(&str, &str)>) -> String {
    let mut yaml =
        format!("mcn:\n  configMap: {{name: {module}, key: mcn.wasm}}\n  sha256: {sha256}\n");
    if let Some((module, sha256)) = candidate {
        yaml.push_str(&format!(
            "  candidate:\n    configMap: {{name: {module}, key: mcn.wasm}}\n    sha256: {sha256}\n"
        ));
    }
    yaml
}

async fn put_registry(fx: &Fixture, yaml: &str) -> Result<()> {
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(REGISTRY_CM.into()),
            ..ObjectMeta::default()
        },
        data: Some([("registry.yaml".to_owned(), yaml.to_owned())].into()),
        ..ConfigMap::default()
    };
    apply_configmap(fx, REGISTRY_CM, &cm).await
}

/// (reason, note) of the Events on the registry ConfigMap, once per
/// occurrence (a repeated Event is one object with a series count).
async fn swap_events(fx: &Fixture) -> Result<Vec<(String, String)>> {
    let api: Api<Event> = Api::namespaced(fx.admin.clone(), fixture::NAMESPACE);
    let lp = Default::default();
    let list = fixture::retry("list Events", || api.list(&lp)).await?;
    Ok(list
        .items
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(REGISTRY_CM))
        .flat_map(|e| {
            let times = e.series.as_ref().map_or(1, |s| s.count.max(1));
            let event = (e.reason.unwrap_or_default(), e.note.unwrap_or_default());
            std::iter::repeat_n(event, usize::try_from(times).unwrap_or(1))
        })
        .collect())
}

fn swaps(m: &support::controller::Metrics, result: &str) -> f64 {
    m.sum(
        "mco_guest_swaps_total",
        &[("job", "mcn"), ("result", result)],
    )
}

// ---- helpers -------------------------------------------------------------------------------------

/// Waits for a Windows node's MCN: pool `not-yet-set`, its desired config,
/// owned by the Node.
async fn wait_windows_mcn(fx: &mut Fixture, uid: &str) -> Result<Value> {
    let t = Instant::now();
    loop {
        if let Some(mcn) = fx.mcns().get_opt("win-0").await? {
            let mcn = serde_json::to_value(&mcn)?;
            let spec_ok = mcn["spec"]["pool"]["name"] == "not-yet-set"
                && mcn["spec"]["configVersion"]["desired"] == "rendered-worker-a"
                && mcn["metadata"]["ownerReferences"][0]["uid"] == uid;
            if spec_ok {
                return Ok(mcn);
            }
            ensure!(t.elapsed() < STEP_TIMEOUT, "win-0's MCN: {mcn}");
        }
        ensure!(
            t.elapsed() < STEP_TIMEOUT,
            "win-0 has no MCN after {STEP_TIMEOUT:?}"
        );
        fx.check_controllers()?;
        sleep(Duration::from_millis(100)).await;
    }
}

async fn configs_at_the_apiservers_size(fx: &mut Fixture) -> Result<()> {
    use mco_e2e::large::{Files, OBJECT_BYTES, grow_machineconfigs};
    let case = "rebootless-01-desired-config-set";
    let over = |bytes: usize| -> Result<Vec<Value>> {
        let mut configs = golden::yaml_docs(case, "machineconfigs.yaml")?;
        grow_machineconfigs(&mut configs, Files::Many, bytes)?;
        Ok(configs)
    };
    let too_large = over(OBJECT_BYTES + 1024)?;
    let api = Api::<kube::api::DynamicObject>::all_with(
        fx.admin.clone(),
        &mco_e2e::openshift::machine_config(),
    );
    let refused = api
        .patch(
            "rendered-worker-a",
            &PatchParams::apply("test-admin").force(),
            &Patch::Apply(&too_large[0]),
        )
        .await;
    match refused {
        Err(kube::Error::Api(status)) if status.message.contains("request is too large") => {}
        other => bail!(
            "a MachineConfig of {} bytes: expected etcd's \"request is too large\", got {:?}",
            OBJECT_BYTES + 1024,
            other.map(|_| "stored: OBJECT_BYTES is not the limit")
        ),
    }
    fx.apply_pool("worker", "rendered-worker-a").await?;
    fx.apply_machineconfigs(&over(OBJECT_BYTES)?).await?;
    let worker0 = fx
        .create_node("worker-0", &["worker"], &[], "rendered-worker-a")
        .await?;
    let c = fx.start_controller("mco-host-0", &[]).await?;
    fx.wait_mcn(
        &Expected::load("rebootless-00-updated-on-a", "worker-0")?,
        &worker0,
        STEP_TIMEOUT,
    )
    .await
    .context("worker-0 at rest on a config at the apiserver's size")?;
    fx.apply_pool("worker", B).await?;
    walk(
        fx,
        c,
        "worker-0",
        &worker0,
        "rebootless-00-updated-on-a",
        REBOOTLESS_WALK,
    )
    .await?;
    no_reconcile_errors(fx, c).await
}

async fn image_only_update(fx: &mut Fixture) -> Result<()> {
    let (node, config) = ("worker-0", "rendered-worker-a");
    fx.set_image_mode(true).await?;
    fx.apply_pool("worker", config).await?;
    fx.apply_golden_machineconfigs("image-only-00-updated-on-a")
        .await?;
    let uid = fx.create_node(node, &["worker"], &[], config).await?;
    fx.patch_node(
        node,
        &[("currentImage", IMAGE_1), ("desiredImage", IMAGE_1)],
        None,
    )
    .await?;
    let c = fx
        .start_controller("mco-host-0", &["--resync", "2s"])
        .await?;
    fx.wait_mcn(
        &Expected::load("image-only-00-updated-on-a", node)?,
        &uid,
        STEP_TIMEOUT,
    )
    .await
    .context("worker-0 at rest in image mode")?;
    for step in IMAGE_ONLY_WALK {
        let expected = golden::step(fx, node, &uid, step, STEP_TIMEOUT).await?;
        let row = mcn_wide(fx, node).await?;
        let column = |name: &str| row.get(name).map_or("", String::as_str);
        for (name, type_) in WIDE_CONDITION_COLUMNS {
            let want = expected.conditions.get(type_).map(|c| c.status.as_str());
            ensure!(
                Some(column(name)) == want,
                "{}: kubectl's {name} column says {:?}, the MCN's {type_} {want:?}",
                step.case,
                column(name)
            );
        }
        let done = step.case.ends_with("-done");
        let uncordoned = step.case.ends_with("-uncordoned");
        for (name, want) in [
            ("DESIREDCONFIG", config),
            ("CURRENTCONFIG", config),
            ("UPDATED", if done { "True" } else { "False" }),
            ("UPDATEPOSTACTIONCOMPLETE", "False"),
            ("UPDATECOMPLETE", if uncordoned { "True" } else { "False" }),
            ("UNCORDONEDNODE", if uncordoned { "True" } else { "False" }),
        ] {
            ensure!(
                column(name) == want,
                "{}: kubectl get machineconfignodes -o wide shows {name} {:?}, expected {want:?} (an image update reboots, and is in progress until Done): {row:?}",
                step.case,
                column(name)
            );
        }
    }
    no_reconcile_errors(fx, c).await
}

/// Fails when controller `c` counted a failed reconcile.
async fn no_reconcile_errors(fx: &Fixture, c: usize) -> Result<()> {
    let errors = fx.controllers[c]
        .metrics()
        .await?
        .sum("mco_reconcile_errors_total", &[]);
    ensure!(
        errors == 0.0,
        "{errors} reconcile errors (see the controller log)"
    );
    Ok(())
}

/// The condition columns of `kubectl get machineconfignodes -o wide` (the CRD's printer
/// columns) and the condition each shows.
const WIDE_CONDITION_COLUMNS: [(&str, &str); 10] = [
    ("UPDATED", "Updated"),
    ("UPDATEPREPARED", "UpdatePrepared"),
    ("UPDATEEXECUTED", "UpdateExecuted"),
    ("UPDATEPOSTACTIONCOMPLETE", "UpdatePostActionComplete"),
    ("UPDATECOMPLETE", "UpdateComplete"),
    ("RESUMED", "Resumed"),
    ("CORDONEDNODE", "Cordoned"),
    ("DRAINEDNODE", "Drained"),
    ("REBOOTEDNODE", "RebootedNode"),
    ("UNCORDONEDNODE", "Uncordoned"),
];

/// One MCN as `kubectl get machineconfignodes -o wide` prints it (the CRD
/// declares no short name): column header → value, cut where the header's
/// columns start, since kubectl aligns each value under its header and
/// leaves an empty column blank (`UPDATEDFILESANDOS` with the gate on).
async fn mcn_wide(fx: &Fixture, name: &str) -> Result<BTreeMap<String, String>> {
    let out = kubectl(fx, &["get", "machineconfignodes", name, "-o", "wide"], None).await?;
    let lines: Vec<&str> = out.lines().collect();
    let [header, row] = lines.as_slice() else {
        bail!(
            "kubectl get machineconfignodes {name} -o wide: expected a header and one row, got {out:?}"
        );
    };
    let starts: Vec<usize> = header
        .char_indices()
        .filter(|&(i, c)| c != ' ' && (i == 0 || header.as_bytes()[i - 1] == b' '))
        .map(|(i, _)| i)
        .collect();
    let cut = |line: &str, from: usize, to: Option<usize>| {
        let to = to.unwrap_or(line.len()).min(line.len());
        line.get(from.min(to)..to)
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    Ok(starts
        .iter()
        .enumerate()
        .map(|(i, &from)| {
            let to = starts.get(i + 1).copied();
            (cut(header, from, to), cut(row, from, to))
        })
        .collect())
}

/// One update walk: wait for the starting state `start`, replay the steps,
/// then check the writes against "at most one status write per observed
/// state change" and "the spec changes once".
async fn walk(
    fx: &mut Fixture,
    c: usize,
    node: &str,
    uid: &str,
    start: &str,
    walk: &[Step],
) -> Result<()> {
    fx.wait_mcn(&Expected::load(start, node)?, uid, STEP_TIMEOUT)
        .await
        .with_context(|| format!("{node} before its update"))?;
    let m0 = fx.controllers[c].metrics().await?;
    let t = Instant::now();
    steps(fx, node, uid, walk, STEP_TIMEOUT).await?;
    let took = t.elapsed();

    let mut changes = 0;
    let mut prev = Expected::load(start, node)?;
    for step in walk {
        let e = Expected::load(step.case, node)?;
        if e.conditions != prev.conditions || e.status_config_version != prev.status_config_version
        {
            changes += 1;
        }
        prev = e;
    }
    // Late writes would land within a moment of the last convergence.
    sleep(Duration::from_secs(1)).await;
    let m1 = fx.controllers[c].metrics().await?;
    let delta = |kind: &str| m1.writes_of(kind) - m0.writes_of(kind);
    eprintln!(
        "{node}: {} steps in {took:.2?}; writes: apply_status {}, apply_spec {}, create {}, delete {} ({changes} state changes)",
        walk.len(),
        delta("apply_status"),
        delta("apply_spec"),
        delta("create"),
        delta("delete")
    );
    ensure!(
        delta("apply_status") <= f64::from(changes),
        "{node}: {} status writes for {changes} observed state changes (design: at most one per change)",
        delta("apply_status")
    );
    ensure!(
        delta("apply_spec") <= 1.0,
        "{node}: spec.configVersion.desired changed once, but the spec was applied {} times",
        delta("apply_spec")
    );
    ensure!(
        delta("create") == 0.0 && delta("delete") == 0.0,
        "{node}: an update must neither create nor delete MCNs (create {}, delete {})",
        delta("create"),
        delta("delete")
    );
    Ok(())
}

/// Polls a controller's /metrics until `ok` holds (bounded by STEP_TIMEOUT).
async fn wait_metric(
    fx: &mut Fixture,
    c: usize,
    what: &str,
    ok: impl Fn(&support::controller::Metrics) -> bool,
) -> Result<()> {
    wait_metric_for(fx, c, what, STEP_TIMEOUT, ok).await
}

/// Polls a controller's /metrics every 50 ms until `ok` holds.
async fn wait_metric_for(
    fx: &mut Fixture,
    c: usize,
    what: &str,
    limit: Duration,
    ok: impl Fn(&support::controller::Metrics) -> bool,
) -> Result<()> {
    let t = Instant::now();
    loop {
        fx.check_controllers()?;
        let last = match fx.controllers[c].metrics().await {
            Ok(m) if ok(&m) => return Ok(()),
            Ok(m) => format!("writes {}", m.writes_summary()),
            Err(e) => format!("{e:#}"),
        };
        if t.elapsed() > limit {
            bail!("waiting for {what}: not after {limit:?} (last: {last})");
        }
        sleep(Duration::from_millis(50)).await;
    }
}

/// The ServiceAccount may do what the MCN controller needs and no more.
async fn rbac_is_narrow(fx: &Fixture) -> Result<()> {
    let client = fx.cp.client_for(&fx.sa.name)?;
    let nodes: Api<Node> = Api::all(client.clone());
    match nodes.delete("lonely-0", &DeleteParams::default()).await {
        Err(e) if api_code(&e) == Some(403) => {}
        Err(e) => bail!("deleting a Node as {}: expected 403, got {e}", fx.sa.name),
        Ok(_) => bail!("{} could delete a Node", fx.sa.name),
    }
    let secrets: Api<Secret> = Api::all(client);
    match secrets.list(&Default::default()).await {
        Err(e) if api_code(&e) == Some(403) => {}
        Err(e) => bail!("listing Secrets as {}: expected 403, got {e}", fx.sa.name),
        Ok(_) => bail!("{} could list Secrets", fx.sa.name),
    }
    // Still there: the 403 was not a late success.
    Api::<Node>::all(fx.admin.clone())
        .get("lonely-0")
        .await
        .context("lonely-0 must survive the forbidden delete")?;
    Ok(())
}
