//! `make bench-scale`: the MachineConfigNode controller at cluster size on
//! the real control plane, against a plain client measured in the same run.
//!
//! 1. Floor: a plain client (32 requests in flight) writes what the
//!    controller will write for N nodes, an MCN and its status each.
//! 2. N Nodes exist; `mco-host run` starts: time to `/readyz`, and until
//!    every MCN reports `Updated=True` (the initial sync), against the floor.
//! 3. A wave: `desiredConfig` of W nodes changes at once; per node, the
//!    time from its patch to its MCN showing the new desired config
//!    (p50/p90/p99), and the controller's writes per node update.
//! 4. RSS of the controller, per 1,000 nodes, and the share of its CPU
//!    spent in guest evaluations.
//!
//! `MCO_SCALE_NODES` and `MCO_SCALE_WAVE` change N (5,000) and W (500).
//! Everything it started is stopped when it ends. Not part of `make test`.

#[path = "../tests/support/mod.rs"]
#[allow(dead_code, reason = "the benchmark uses part of the test support")]
mod support;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Node;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::runtime::watcher;
use serde_json::{Value, json};
use tokio::sync::{Mutex, Semaphore};
use tokio::task::JoinSet;

use support::fixture::{ANNOTATION_PREFIX, Fixture, IN_FLIGHT, machine_config_node};

const A: &str = "rendered-worker-a";
const B: &str = "rendered-worker-b";
/// Bounds, not measurements: a run that takes this long is reported broken.
const SYNC_LIMIT: Duration = Duration::from_secs(600);

fn count(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::main]
async fn main() -> Result<()> {
    let nodes = count("MCO_SCALE_NODES", 5_000);
    let wave = count("MCO_SCALE_WAVE", 500).min(nodes);
    let mut fx = Fixture::start().await?;
    let result = bench(&mut fx, nodes, wave).await;
    fx.finish(result)
}

async fn bench(fx: &mut Fixture, nodes: usize, wave: usize) -> Result<()> {
    fx.apply_machineconfig(A).await?;
    fx.apply_machineconfig(B).await?;
    fx.apply_pool("worker", A).await?;
    let floor = floor(fx, nodes).await?;
    fx.create_workers(nodes, A).await?;

    let seen = Seen::watch(fx).await;
    let started = Instant::now();
    let c = fx
        .start_controller_within("bench", &["--resync", "10m"], SYNC_LIMIT)
        .await?;
    let ready = started.elapsed();
    seen.wait(
        nodes,
        |mcn| condition(mcn, "Updated") == Some("True"),
        started,
    )
    .await
    .context("initial sync")?;
    let sync = started.elapsed();
    let pid = fx.controllers[c].pid().context("the controller is gone")?;
    let rss_synced = rss_kib(pid)?;
    let before = fx.controllers[c].metrics().await?;
    let guest_before = guest_seconds(&fx.controllers[c]).await?;
    let cpu_before = cpu_seconds(pid)?;

    // The wave: every patch is stamped when the apiserver accepted it.
    let patched: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let api: Api<Node> = Api::all(fx.admin.clone());
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    let mut patches = JoinSet::new();
    let wave_started = Instant::now();
    for i in 0..wave {
        let (api, slots, patched) = (api.clone(), slots.clone(), patched.clone());
        patches.spawn(async move {
            let _slot = slots.acquire_owned().await?;
            let name = format!("worker-{i:05}");
            let body = json!({"metadata": {"annotations": {
                format!("{ANNOTATION_PREFIX}desiredConfig"): B}}});
            api.patch(&name, &PatchParams::default(), &Patch::Merge(&body))
                .await?;
            patched.lock().await.insert(name, Instant::now());
            anyhow::Ok(())
        });
    }
    while let Some(done) = patches.join_next().await {
        done.context("a patch task panicked")??;
    }
    let patches_took = wave_started.elapsed();
    seen.wait(wave, |mcn| desired(mcn) == Some(B), wave_started)
        .await
        .context("the wave")?;
    // The status each node shows once it has the new desired config.
    seen.wait(
        wave,
        |mcn| desired(mcn) == Some(B) && condition(mcn, "Updated") == Some("False"),
        wave_started,
    )
    .await
    .context("the wave's status")?;
    let patched = patched.lock().await.clone();
    let mut latencies: Vec<Duration> = seen
        .first_seen(|mcn| desired(mcn) == Some(B))
        .await
        .into_iter()
        .filter_map(|(name, at)| Some(at.saturating_duration_since(*patched.get(&name)?)))
        .collect();
    latencies.sort();
    // Quiet for a moment, so the wave's last status writes are counted.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = fx.controllers[c].metrics().await?;
    let cpu = cpu_seconds(pid)? - cpu_before;
    let rss_wave = rss_kib(pid)?;
    let writes = after.writes() - before.writes();
    let guest_seconds = guest_seconds(&fx.controllers[c]).await? - guest_before;

    let pct = |p: usize| latencies[(latencies.len() * p / 100).min(latencies.len() - 1)];
    println!("mco-host at {nodes} nodes, a wave of {wave} (one run, this machine)");
    println!(
        "  floor: a plain client writes {} objects ({IN_FLIGHT} in flight) in {floor:.2?}",
        2 * nodes
    );
    println!("  /readyz {ready:.2?} after start");
    println!(
        "  initial sync: all {nodes} MCNs Updated=True {sync:.2?} after start = {:.2}x the floor",
        sync.as_secs_f64() / floor.as_secs_f64()
    );
    println!("  wave: {wave} patches accepted in {patches_took:.2?}");
    println!(
        "  patch → MCN shows it: p50 {:.0?}  p90 {:.0?}  p99 {:.0?}  max {:.0?}",
        pct(50),
        pct(90),
        pct(99),
        latencies.last().copied().unwrap_or_default()
    );
    println!(
        "  writes per node update: {:.2} ({writes} writes: {})",
        writes / wave as f64,
        after.writes_summary()
    );
    println!(
        "  RSS: {:.1} MiB after the sync ({:.1} MiB per 1,000 nodes), {:.1} MiB after the wave",
        rss_synced as f64 / 1024.0,
        rss_synced as f64 / 1024.0 / (nodes as f64 / 1000.0),
        rss_wave as f64 / 1024.0
    );
    println!(
        "  CPU during the wave: {cpu:.2} s, of which guest evaluations {guest_seconds:.3} s ({:.1} %)",
        100.0 * guest_seconds / cpu.max(f64::EPSILON)
    );
    fx.check_controllers()
}

/// The floor: `nodes` MCNs and their status written by a plain client, then
/// removed again before the controller starts.
async fn floor(fx: &Fixture, nodes: usize) -> Result<Duration> {
    let api = fx.mcns();
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    let mut writes = JoinSet::new();
    let started = Instant::now();
    for i in 0..nodes {
        let (api, slots) = (api.clone(), slots.clone());
        writes.spawn(async move {
            let _slot = slots.acquire_owned().await?;
            let name = format!("floor-{i:05}");
            let ar = machine_config_node();
            let params = PatchParams::apply("mco-bench").force();
            let spec = json!({
                "apiVersion": ar.api_version, "kind": ar.kind,
                "metadata": {"name": name, "labels": {"mco-bench": "floor"}},
                "spec": {"node": {"name": name}, "pool": {"name": "worker"},
                         "configVersion": {"desired": A}},
            });
            api.patch(&name, &params, &Patch::Apply(&spec)).await?;
            let status = json!({
                "apiVersion": ar.api_version, "kind": ar.kind,
                "metadata": {"name": name},
                "status": {"observedGeneration": 1, "configVersion": {"current": A, "desired": A},
                  "conditions": [{"type": "Updated", "status": "True", "reason": "Updated",
                    "message": "Node is updated", "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
            });
            api.patch_status(&name, &params, &Patch::Apply(&status))
                .await?;
            anyhow::Ok(())
        });
    }
    while let Some(done) = writes.join_next().await {
        done.context("a write task panicked")??;
    }
    let took = started.elapsed();
    api.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("mco-bench=floor"),
    )
    .await?;
    Ok(took)
}

/// Every MCN as the benchmark's own watch last saw it, and when each first
/// matched what a phase waits for.
#[derive(Clone)]
struct Seen {
    mcns: Arc<Mutex<HashMap<String, Versions>>>,
}

/// An MCN as it is now, and every version seen with when it arrived.
type Versions = (Value, Vec<(Instant, Value)>);

impl Seen {
    async fn watch(fx: &Fixture) -> Seen {
        let seen = Seen {
            mcns: Arc::default(),
        };
        let api: Api<DynamicObject> = fx.mcns();
        let mcns = seen.mcns.clone();
        tokio::spawn(async move {
            let mut events = watcher(api, watcher::Config::default()).boxed();
            while let Some(event) = events.next().await {
                let mcn = match event {
                    Ok(watcher::Event::Apply(mcn) | watcher::Event::InitApply(mcn)) => mcn,
                    _ => continue,
                };
                let value = serde_json::to_value(&mcn).unwrap_or(Value::Null);
                let mut mcns = mcns.lock().await;
                let entry = mcns.entry(mcn.name_any()).or_default();
                entry.1.push((Instant::now(), value.clone()));
                entry.0 = value;
            }
        });
        seen
    }

    /// Waits until `count` MCNs match.
    async fn wait(
        &self,
        count: usize,
        matches: impl Fn(&Value) -> bool,
        since: Instant,
    ) -> Result<()> {
        loop {
            let matching = self
                .mcns
                .lock()
                .await
                .values()
                .filter(|(now, _)| matches(now))
                .count();
            if matching >= count {
                return Ok(());
            }
            if since.elapsed() > SYNC_LIMIT {
                bail!("{matching} of {count} MCNs after {SYNC_LIMIT:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// When each MCN was first seen matching.
    async fn first_seen(&self, matches: impl Fn(&Value) -> bool) -> Vec<(String, Instant)> {
        self.mcns
            .lock()
            .await
            .iter()
            .filter_map(|(name, (_, history))| {
                let at = history.iter().find(|(_, v)| matches(v))?.0;
                Some((name.clone(), at))
            })
            .collect()
    }
}

fn desired(mcn: &Value) -> Option<&str> {
    mcn.pointer("/spec/configVersion/desired")?.as_str()
}

fn condition<'a>(mcn: &'a Value, type_: &str) -> Option<&'a str> {
    mcn.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)?["status"]
        .as_str()
}

/// Seconds spent in guest evaluations so far: the histogram's `_sum`.
async fn guest_seconds(c: &support::controller::Controller) -> Result<f64> {
    let (_, text) = c.get("/metrics").await?;
    text.lines()
        .find_map(|l| l.strip_prefix("mco_evaluation_duration_seconds_sum "))
        .and_then(|v| v.trim().parse().ok())
        .context("no mco_evaluation_duration_seconds_sum")
}

/// Resident set size of `pid`, in KiB.
fn rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .context("no VmRSS")
}

/// User + system CPU time of `pid`, in seconds.
fn cpu_seconds(pid: u32) -> Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<f64>().ok())
        .sum();
    // Linux reports clock ticks; USER_HZ is 100 on every mainstream kernel.
    Ok(ticks / 100.0)
}
