//! `mco-host run` starting while one of its lists is held back: the test
//! takes `list` and `watch` on one kind away from `deploy/rbac.yaml`'s
//! ClusterRole before the start, then gives them back. With the Node list
//! held back no MCN is deleted (an empty node store made every MCN look
//! orphaned), then exactly the one whose Node is gone; with the
//! MachineConfigPool list held back no MCN is written, then each once, in
//! its pool. Needs `make host guests` first, as `mcn_controller.rs` does.

use crate::support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::core::v1::Node;
use kube::ResourceExt;
use kube::api::{ApiResource, ListParams};
use mco_e2e::openshift;
use serde_json::{Value, json};
use tokio::time::sleep;

use support::fixture::Fixture;
use support::golden::Expected;

/// Bound on an MCN reaching what it should be once nothing holds it back.
const STEP_TIMEOUT: Duration = Duration::from_secs(15);
/// `--resync`, which also sets the sweep period (the shorter of the two
/// and 5 s).
const RESYNC: &str = "2s";
/// How long a held-back controller is watched doing nothing: three sweep
/// periods, and more than a resync period.
const HELD_BACK: Duration = Duration::from_secs(6);
const NODES: [&str; 3] = ["worker-0", "worker-1", "gone-0"];

/// The Node list held back: no MCN deleted; then only the orphan's.
#[tokio::test]
async fn deletes_no_mcn_before_the_nodes_are_listed() -> Result<()> {
    Fixture::run(node_list_held_back).await
}

/// The pool list held back: no MCN written; then each written once.
#[tokio::test]
async fn writes_no_mcn_before_the_pools_are_listed() -> Result<()> {
    Fixture::run(pool_list_held_back).await
}

async fn node_list_held_back(fx: &mut Fixture) -> Result<()> {
    let nodes = ApiResource::erase::<Node>(&());
    let uids = cluster(fx).await?;
    let c = fx
        .start_controller("mco-host-0", &["--resync", RESYNC])
        .await?;
    wait_mcns(fx, &uids, &NODES).await?;
    // SIGTERM: the lease is released for the next start.
    drop(fx.controllers.remove(c));
    // This control plane runs no garbage collector: gone-0's MCN stays, an
    // orphan, as on a cluster where the collector has not come to it yet.
    fx.delete_node("gone-0").await?;
    let stored = mcns(fx).await?;

    fx.withhold(&nodes, &["list", "watch"]).await?;
    let c = fx.spawn_controller("mco-host-1", &["--resync", RESYNC])?;
    held_back(fx, c, "nodes").await?;
    sleep(HELD_BACK).await;
    fx.check_controllers()?;
    let now = mcns(fx).await?;
    ensure!(
        now == stored,
        "with the Node list held back, the MCNs must stay as they were:\nbefore {stored:#?}\nafter {now:#?}"
    );
    let metrics = fx.controllers[c].metrics().await?;
    ensure!(
        metrics.writes() == 0.0,
        "nothing may be written with the Node list held back: {}",
        metrics.writes_summary()
    );

    fx.restore_rbac(&nodes).await?;
    let took = fx.wait_mcn_gone("gone-0", STEP_TIMEOUT).await?;
    eprintln!("the orphan went {took:.2?} after the Nodes could be listed");
    fx.controllers[c].wait_ready(STEP_TIMEOUT).await?;
    // A resync of every node, and more sweeps.
    sleep(HELD_BACK).await;
    let now = mcns(fx).await?;
    let kept: BTreeMap<String, Value> = stored
        .into_iter()
        .filter(|(name, _)| name != "gone-0")
        .collect();
    ensure!(
        now == kept,
        "the MCNs of existing Nodes must be kept as they were:\nbefore {kept:#?}\nafter {now:#?}"
    );
    let metrics = fx.controllers[c].metrics().await?;
    ensure!(
        metrics.writes_of("delete") == 1.0 && metrics.writes() == 1.0,
        "one delete and nothing else: {}",
        metrics.writes_summary()
    );
    Ok(())
}

async fn pool_list_held_back(fx: &mut Fixture) -> Result<()> {
    let pools = openshift::machine_config_pool();
    fx.withhold(&pools, &["list", "watch"]).await?;
    let uids = cluster(fx).await?;
    let c = fx.spawn_controller("mco-host-0", &["--resync", RESYNC])?;
    held_back(fx, c, "machineconfigpools").await?;
    sleep(HELD_BACK).await;
    fx.check_controllers()?;
    let names = fx.mcn_names().await?;
    ensure!(
        names.is_empty(),
        "no MCN may be written before the pools are listed, found {names:?}"
    );
    let metrics = fx.controllers[c].metrics().await?;
    ensure!(
        metrics.writes() == 0.0,
        "nothing may be written before the pools are listed: {}",
        metrics.writes_summary()
    );

    fx.restore_rbac(&pools).await?;
    wait_mcns(fx, &uids, &NODES).await?;
    // Each spec written once, in its pool: never `not-yet-set` first.
    for (name, mcn) in mcns(fx).await? {
        ensure!(
            mcn["generation"] == 1,
            "{name}: the MCN's spec was written more than once: {mcn}"
        );
    }
    let metrics = fx.controllers[c].metrics().await?;
    ensure!(
        metrics.writes_of("apply_spec") == 0.0,
        "no spec rewritten: {}",
        metrics.writes_summary()
    );
    Ok(())
}

/// A worker pool on `rendered-worker-a` and its nodes; returns their uids.
async fn cluster(fx: &Fixture) -> Result<BTreeMap<String, String>> {
    fx.apply_pool("worker", "rendered-worker-a").await?;
    fx.apply_golden_machineconfigs("reboot-01-desired-config-set")
        .await?;
    let mut uids = BTreeMap::new();
    for node in NODES {
        let uid = fx
            .create_node(node, &["worker"], &[], "rendered-worker-a")
            .await?;
        uids.insert(node.to_owned(), uid);
    }
    Ok(uids)
}

/// Waits for each of `nodes`' MCNs: in the worker pool, Updated.
async fn wait_mcns(
    fx: &mut Fixture,
    uids: &BTreeMap<String, String>,
    nodes: &[&str],
) -> Result<()> {
    for node in nodes {
        let uid = uids.get(*node).context("a node the test created")?;
        fx.wait_mcn(&Expected::updated_on(node, "worker")?, uid, STEP_TIMEOUT)
            .await
            .with_context(|| format!("the MCN of {node}"))?;
    }
    Ok(())
}

/// What each stored MCN holds that a write or a re-creation would change:
/// its uid, resourceVersion, generation and status.
async fn mcns(fx: &Fixture) -> Result<BTreeMap<String, Value>> {
    let list = fx.mcns().list(&ListParams::default()).await?;
    Ok(list
        .items
        .iter()
        .map(|mcn| {
            let held = json!({
                "uid": mcn.uid(),
                "resourceVersion": mcn.resource_version(),
                "generation": mcn.metadata.generation,
                "status": mcn.data["status"],
            });
            (mcn.name_any(), held)
        })
        .collect())
}

/// Waits until controller `c` leads, may write (its ownership verdict is
/// `writing`), and `/readyz` names `pending` as the one watch not listed:
/// from then on, only what `pending` holds back keeps it from acting.
async fn held_back(fx: &mut Fixture, c: usize, pending: &str) -> Result<()> {
    let t = Instant::now();
    let expected = format!("caches not synced: {pending} not listed yet");
    loop {
        fx.check_controllers()?;
        let leads = fx.controllers[c]
            .metrics()
            .await
            .and_then(|m| m.leader())
            .unwrap_or(false);
        // Nothing answers until the admin server listens.
        let body = async |path| match fx.controllers[c].get(path).await {
            Ok((_, body)) => body,
            Err(e) => format!("{e:#}"),
        };
        let ready = body("/readyz").await;
        let ownership = body("/ownership").await;
        let writing = serde_json::from_str::<Vec<Value>>(&ownership)
            .unwrap_or_default()
            .iter()
            .any(|job| job["job"] == "mcn" && job["state"] == "writing");
        if leads && writing && ready.trim() == expected {
            eprintln!("held back by {pending} alone after {:.2?}", t.elapsed());
            return Ok(());
        }
        if t.elapsed() > STEP_TIMEOUT {
            bail!(
                "not held back by {pending} alone after {STEP_TIMEOUT:?}: leader {leads}, /readyz {ready:?}, /ownership {ownership}"
            );
        }
        sleep(Duration::from_millis(200)).await;
    }
}
