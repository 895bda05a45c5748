//! The controller at the size where `/readyz` used to never come: 5,000
//! Nodes already in the cluster when `mco-host run` starts.
//!
//! The bug: readiness waited on each store's `wait_until_ready`, whose
//! oneshot wakes only its latest poller, while kube's `Controller` waits on
//! the Node store too. When the Node list finished last (large clusters),
//! one of the two waiters slept forever: 503 for 10+ minutes at 5,000
//! nodes in 2 of 2 runs. Readiness now comes from each watch's own
//! `InitDone`; this test fails with the old binary (`MCO_HOST_BIN`).

#[allow(
    dead_code,
    reason = "the e2e files share one support module; each uses part of it"
)]
mod support;

use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams};

use support::fixture::Fixture;

const NODES: usize = 5_000;
/// A bound, not a measurement: listing 5,000 Nodes takes seconds, and the
/// broken controller stayed unready for ten minutes and more.
const READY_WITHIN: Duration = Duration::from_secs(120);

#[tokio::test]
async fn becomes_ready_with_5000_nodes_already_there() -> Result<()> {
    let mut fx = Fixture::start().await?;
    let r = ready_at_scale(&mut fx).await;
    fx.finish(r)
}

async fn ready_at_scale(fx: &mut Fixture) -> Result<()> {
    fx.apply_machineconfig("rendered-worker-a").await?;
    fx.apply_pool("worker", "rendered-worker-a").await?;
    let started = Instant::now();
    fx.create_workers(NODES, "rendered-worker-a").await?;
    eprintln!("scale: created {NODES} nodes in {:.2?}", started.elapsed());
    let nodes: Api<Node> = Api::all(fx.admin.clone());
    let listed = nodes
        .list_metadata(&ListParams::default())
        .await?
        .items
        .len();
    ensure!(
        listed == NODES,
        "{listed} nodes in the cluster, not {NODES}"
    );

    let started = Instant::now();
    fx.start_controller_within("scale", &["--resync", "10m"], READY_WITHIN)
        .await
        .context("the controller never became ready with 5,000 nodes")?;
    eprintln!("scale: ready {:.2?} after start", started.elapsed());
    fx.check_controllers()
}
