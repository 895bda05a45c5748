//! The controller at cluster size: 5,000 Nodes already in the cluster when
//! `mco-host run` starts. `/readyz` must come (readiness is each watch's own
//! `InitDone`; this test fails with a binary that waited on the stores, as
//! docs/dev/records/incidents.md tells, given as `MCO_HOST_BIN`), and
//! whatever a guest returns at that size, the host keeps running: a guest
//! answering every node with the longest text its memory cap allows has
//! every answer refused and counted, nothing written, and the host's peak
//! RSS under the Deployment's memory limit.

use crate::support;

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams};

use support::fixture::Fixture;

const NODES: usize = 5_000;
/// A bound, not a measurement: listing 5,000 Nodes takes seconds, and the
/// broken controller stayed unready for ten minutes and more.
const READY_WITHIN: Duration = Duration::from_secs(120);
/// `resources.limits.memory` in `deploy/deployment.yaml`.
const DEPLOYMENT_MEMORY_LIMIT: u64 = 256 << 20;
/// A bound for 5,000 refused evaluations at 2 in flight, not a measurement.
const REFUSED_WITHIN: Duration = Duration::from_secs(600);

#[tokio::test]
async fn becomes_ready_with_5000_nodes_already_there() -> Result<()> {
    Fixture::run(ready_at_scale).await
}

#[tokio::test]
async fn a_guest_flooding_every_node_leaves_the_host_running() -> Result<()> {
    Fixture::run(flooded_at_scale).await
}

async fn cluster_of_5000(fx: &Fixture) -> Result<()> {
    fx.apply_machineconfig("rendered-worker-a").await?;
    fx.apply_pool("worker", "rendered-worker-a").await?;
    let started = Instant::now();
    fx.create_workers(NODES, "rendered-worker-a").await?;
    eprintln!("scale: created {NODES} nodes in {:.2?}", started.elapsed());
    Ok(())
}

async fn ready_at_scale(fx: &mut Fixture) -> Result<()> {
    cluster_of_5000(fx).await?;
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

async fn flooded_at_scale(fx: &mut Fixture) -> Result<()> {
    cluster_of_5000(fx).await?;
    // `faulty-flood.wasm` passes the smoke evaluation, so it serves, and
    // then answers every node with a skip reason as long as the default
    // 12 MiB memory cap allows.
    let flood = support::controller::test_guest("faulty-flood.wasm")?;
    let registry = fx.cp.dir().join("registry.yaml");
    std::fs::write(&registry, format!("mcn: {}\n", flood.display()))?;
    let registry = registry.display().to_string();
    let c = fx
        .start_controller_within("flood", &["--registry", &registry], READY_WITHIN)
        .await?;

    let started = Instant::now();
    let refused = loop {
        fx.check_controllers()
            .context("mco-host run died under the flood")?;
        let metrics = fx.controllers[c].metrics().await?;
        let refused = metrics.sum("mco_guest_failures_total", &[("kind", "invalid_output")]);
        if refused >= NODES as f64 && metrics.evaluations("failed") >= NODES as f64 {
            break refused;
        }
        if started.elapsed() > REFUSED_WITHIN {
            bail!("{refused} of {NODES} floods refused after {REFUSED_WITHIN:?}");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    let peak = peak_rss(
        fx.controllers[c]
            .pid()
            .context("the controller has no pid")?,
    )?;
    eprintln!(
        "scale: {refused} longest answers refused in {:.2?}; peak RSS {:.1} MiB \
         (limit {} MiB)",
        started.elapsed(),
        peak as f64 / f64::from(1 << 20),
        DEPLOYMENT_MEMORY_LIMIT >> 20
    );
    ensure!(
        peak < DEPLOYMENT_MEMORY_LIMIT,
        "peak RSS {peak} bytes is over the Deployment's {DEPLOYMENT_MEMORY_LIMIT}-byte limit: \
         the pod would be OOM-killed"
    );
    let written = fx
        .mcns()
        .list_metadata(&ListParams::default())
        .await?
        .items
        .len();
    ensure!(
        written == 0,
        "{written} MachineConfigNodes written from refused answers"
    );
    fx.check_controllers()
}

/// `VmHWM` of a process: the most resident memory it ever had, in bytes.
fn peak_rss(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .with_context(|| format!("no VmHWM in /proc/{pid}/status"))?;
    Ok(kib << 10)
}
