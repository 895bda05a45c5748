//! `make bench-scale`: the MachineConfigNode controller at cluster size on
//! the real control plane, against a plain client measured in the same run:
//! idle memory, the floor, the initial sync, a wave of updates, where the
//! time goes, and an audit of every Node. `MCO_SCALE_NODES`,
//! `MCO_SCALE_WAVE` and `MCO_SCALE_SHADOW` change what is measured.
//! Everything it started is stopped when it ends. Not part of `make test`.
//! The phases and their figures: docs/dev/benchmarks.md and
//! docs/dev/records/benchmarks.md.

#[path = "../tests/support/mod.rs"]
#[allow(dead_code, reason = "the benchmark uses part of the test support")]
mod support;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Node;
use kube::ResourceExt;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams,
    ValidationDirective,
};
use kube::runtime::watcher;
use mco_e2e::openshift;
use serde_json::{Value, json};
use tokio::sync::{Mutex, Semaphore};
use tokio::task::JoinSet;

use support::fixture::{ANNOTATION_PREFIX, Fixture, IN_FLIGHT};

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
    let seen = Seen::watch(fx).await;
    // The controllers run as deploy/ runs them: with the compiled-guest
    // cache, filled before (a restart's start, not an install's).
    let cache = tempfile::tempdir()?;
    let cache_dir = cache.path().display().to_string();
    warm_guest_cache(&cache_dir).await?;
    let args = ["--resync", "10m", "--cache-dir", &cache_dir];
    let idle = idle_rss_kib(fx, &args).await?;
    let shadow = std::env::var_os("MCO_SCALE_SHADOW").map(std::path::PathBuf::from);
    let registry_dir = tempfile::tempdir()?;
    let registry = shadow
        .as_deref()
        .map(|module| shadow_registry(registry_dir.path(), module))
        .transpose()?;
    let registry = registry.as_ref().map(|path| path.display().to_string());
    let mut bench_args = args.to_vec();
    if let Some(registry) = &registry {
        bench_args.extend(["--registry", registry]);
    }
    fx.create_workers(nodes, A).await?;
    let (floor, cp_floor) = floor(fx, &seen, nodes).await?;

    let cp_before = control_plane_cpu_seconds(fx)?;
    let started = Instant::now();
    let c = fx
        .start_controller_within("bench", &bench_args, SYNC_LIMIT)
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
    let cp_sync = control_plane_cpu_seconds(fx)? - cp_before;
    let pid = fx.controllers[c].pid().context("the controller is gone")?;
    let rss_synced = rss_kib(pid)?;
    let synced = fx.controllers[c].metrics().await?;
    let cpu_before = cpu_seconds(pid)?;
    let cp_before = control_plane_cpu_seconds(fx)?;

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
    let shows_desired = |mcn: &Value| desired(mcn) == Some(B);
    // The status each node shows once it has the new desired config.
    let shows_update =
        |mcn: &Value| desired(mcn) == Some(B) && condition(mcn, "Updated") == Some("False");
    seen.wait(wave, shows_update, wave_started)
        .await
        .context("the wave")?;
    let patched = patched.lock().await.clone();
    let spec_latencies = seen.latencies(&patched, shows_desired).await;
    let status_latencies = seen.latencies(&patched, shows_update).await;
    // Quiet for a moment, so the wave's last status writes are counted.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = fx.controllers[c].metrics().await?;
    let cpu = cpu_seconds(pid)? - cpu_before;
    let cp_wave = control_plane_cpu_seconds(fx)? - cp_before;
    let rss_wave = rss_kib(pid)?;
    let writes = after.writes() - synced.writes();
    let sync_writes = synced.writes();
    let wave_evaluations = evaluations(&after) - evaluations(&synced);
    let guest_cpu = guest_cpu_seconds(&after, "active") - guest_cpu_seconds(&synced, "active");
    let shadow_cpu =
        guest_cpu_seconds(&after, "candidate") - guest_cpu_seconds(&synced, "candidate");

    let mib = |kib: u64| kib as f64 / 1024.0;
    let per_write = |cpu: f64, writes: f64| 1000.0 * cpu / writes.max(1.0);
    println!("mco-host at {nodes} nodes, a wave of {wave} (one run, this machine)");
    println!(
        "  floor: a plain client writes the controller's {} objects ({IN_FLIGHT} in flight) in {floor:.2?}; \
         apiserver+etcd {:.2} ms CPU per write",
        2 * nodes,
        per_write(cp_floor, (2 * nodes) as f64)
    );
    println!("  /readyz {ready:.2?} after start");
    println!(
        "  initial sync: all {nodes} MCNs Updated=True {sync:.2?} after start = {:.2}x the floor; \
         {sync_writes} writes, {:.2} evaluations per node; apiserver+etcd {:.2} ms CPU per write",
        sync.as_secs_f64() / floor.as_secs_f64(),
        evaluations(&synced) / nodes as f64,
        per_write(cp_sync, sync_writes)
    );
    println!("  wave: {wave} patches accepted in {patches_took:.2?}");
    println!(
        "  patch → MCN spec shows it:   {}",
        percentiles(&spec_latencies)
    );
    println!(
        "  patch → MCN status shows it: {}",
        percentiles(&status_latencies)
    );
    println!(
        "  per node update: {:.2} writes ({writes} writes: {}), {:.2} evaluations; \
         apiserver+etcd {:.2} ms CPU per write (the wave's node patches included)",
        writes / wave as f64,
        after.writes_summary(),
        wave_evaluations / wave as f64,
        per_write(cp_wave, writes + wave as f64)
    );
    println!(
        "  RSS: {:.1} MiB idle, {:.1} MiB after the sync ({:.1} MiB per 1,000 nodes above idle), {:.1} MiB after the wave",
        mib(idle),
        mib(rss_synced),
        mib(rss_synced.saturating_sub(idle)) / (nodes as f64 / 1000.0),
        mib(rss_wave)
    );
    println!(
        "  controller CPU during the wave: {cpu:.2} s, of which guest evaluations {guest_cpu:.3} s ({:.1} %)",
        100.0 * guest_cpu / cpu.max(f64::EPSILON)
    );
    if let Some(shadow) = &shadow {
        ensure!(
            shadow_cpu > 0.0,
            "the shadow candidate {} never ran during the wave: is it loaded? (`mco-host --registry <file> guests` shows why not)",
            shadow.display()
        );
        println!(
            "  shadow candidate {}: {shadow_cpu:.3} s during the wave, {:.2}x the guest's CPU on the same nodes",
            shadow.display(),
            shadow_cpu / guest_cpu.max(f64::EPSILON)
        );
    }
    let audit = audit_cluster(fx).await?;
    println!(
        "  guests audit --kubeconfig on {nodes} nodes (spec.audit's code): {:.2} s wall, {:.1} MiB peak RSS, \
         compiling both modules included; {}",
        audit.seconds,
        mib(audit.peak_kib),
        audit.counts
    );
    ensure!(
        audit.objects == nodes as u64,
        "the audit decided {} objects of {nodes} nodes",
        audit.objects
    );
    fx.check_controllers()
}

/// What `guests audit` took and said.
struct Audited {
    seconds: f64,
    peak_kib: u64,
    objects: u64,
    /// The report's counts, as its JSON names them.
    counts: String,
}

/// `mco-host guests audit` on every Node through the admin kubeconfig, the
/// installed MCN guest as both modules.
async fn audit_cluster(fx: &Fixture) -> Result<Audited> {
    let host = support::controller::host_binary()?;
    let guest = host
        .parent()
        .context("the host binary has no directory")?
        .join("guests/mcn.wasm");
    let kubeconfig = fx.admin_kubeconfig()?;
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("/usr/bin/time")
            .args(["-f", "%e %M"])
            .arg(&host)
            .args(["guests", "audit", "--job", "mcn", "--json", "--guest"])
            .arg(&guest)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .output()
    })
    .await?
    .context("running /usr/bin/time (Debian package time) with mco-host guests audit")?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    ensure!(output.status.success(), "guests audit failed: {stderr}");
    let report: Value = serde_json::from_slice(&output.stdout).context("guests audit --json")?;
    let timing = stderr.lines().last().unwrap_or_default();
    let (seconds, peak_kib) = timing
        .split_once(' ')
        .and_then(|(s, kib)| Some((s.parse().ok()?, kib.trim().parse().ok()?)))
        .with_context(|| format!("/usr/bin/time printed {timing:?}"))?;
    let n = |key: &str| report[key].as_u64().unwrap_or(0);
    Ok(Audited {
        seconds,
        peak_kib,
        objects: n("objects"),
        counts: ["objects", "agree", "differ", "failed"]
            .map(|key| format!("{key} {}", n(key)))
            .join(", "),
    })
}

/// Compiles the installed guests into `cache_dir` (`mco-host guests`
/// loads every guest as `run` does).
async fn warm_guest_cache(cache_dir: &str) -> Result<()> {
    let out = tokio::process::Command::new(support::controller::host_binary()?)
        .args(["--cache-dir", cache_dir, "guests"])
        .output()
        .await
        .context("mco-host guests")?;
    ensure!(
        out.status.success(),
        "mco-host guests (filling the compiled-guest cache) failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}

/// Resident memory of `mco-host run` with its guests loaded and no Nodes;
/// it is stopped again (and releases the lease) before the Nodes come.
async fn idle_rss_kib(fx: &mut Fixture, args: &[&str]) -> Result<u64> {
    let c = fx.start_controller("idle", args).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss = rss_kib(
        fx.controllers[c]
            .pid()
            .context("the idle controller is gone")?,
    )?;
    drop(fx.controllers.remove(c));
    Ok(rss)
}

/// The floor: for each Node, the MCN the controller will write, spec then
/// status, written by a plain client with the controller's request options
/// and then removed again before the controller starts. Returns its time
/// and the apiserver's and etcd's CPU seconds meanwhile.
async fn floor(fx: &Fixture, seen: &Seen, nodes: usize) -> Result<(Duration, f64)> {
    let template = controllers_mcn(fx).await?;
    let uids: HashMap<String, String> = Api::<Node>::all(fx.admin.clone())
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter_map(|n| Some((n.name_any(), n.metadata.uid?)))
        .collect();
    let api = fx.mcns();
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    let mut writes = JoinSet::new();
    let cp_before = control_plane_cpu_seconds(fx)?;
    let started = Instant::now();
    for i in 0..nodes {
        let name = format!("worker-{i:05}");
        let uid = uids.get(&name).with_context(|| format!("no node {name}"))?;
        let (mut spec, mut status) = (template.clone(), template.clone());
        spec["metadata"]["name"] = json!(name);
        spec["metadata"]["ownerReferences"][0]["name"] = json!(name);
        spec["metadata"]["ownerReferences"][0]["uid"] = json!(uid);
        spec["spec"]["node"]["name"] = json!(name);
        if let Some(object) = spec.as_object_mut() {
            object.remove("status");
        }
        status["metadata"] = json!({"name": name});
        if let Some(object) = status.as_object_mut() {
            object.remove("spec");
        }
        let (api, slots) = (api.clone(), slots.clone());
        writes.spawn(async move {
            let _slot = slots.acquire_owned().await?;
            let mut params = PatchParams::apply("mco-bench").force();
            params.field_validation = Some(ValidationDirective::Ignore);
            api.patch(&name, &params, &Patch::Apply(&spec)).await?;
            api.patch_status(&name, &params, &Patch::Apply(&status))
                .await?;
            anyhow::Ok(())
        });
    }
    while let Some(done) = writes.join_next().await {
        done.context("a write task panicked")??;
    }
    let took = started.elapsed();
    let cp = control_plane_cpu_seconds(fx)? - cp_before;
    api.delete_collection(&DeleteParams::default(), &ListParams::default())
        .await?;
    seen.wait_empty(started)
        .await
        .context("deleting the floor's MCNs")?;
    Ok((took, cp))
}

/// The MCN the controller writes for `worker-00000` as it is now, from
/// `mco-host eval mcn` on the same objects.
async fn controllers_mcn(fx: &Fixture) -> Result<Value> {
    let dir = tempfile::tempdir()?;
    let list = |items: Vec<DynamicObject>| json!({"kind": "List", "items": items});
    let all = |ar: ApiResource| async move {
        let api: Api<DynamicObject> = Api::all_with(fx.admin.clone(), &ar);
        anyhow::Ok(api.list(&ListParams::default()).await?.items)
    };
    let node = Api::<Node>::all(fx.admin.clone())
        .get("worker-00000")
        .await?;
    let files = [
        ("node.json", serde_json::to_value(&node)?),
        (
            "pools.json",
            list(all(openshift::machine_config_pool()).await?),
        ),
        (
            "configs.json",
            list(all(openshift::machine_config()).await?),
        ),
    ];
    for (file, value) in &files {
        std::fs::write(dir.path().join(file), serde_json::to_vec(value)?)?;
    }
    let out = tokio::process::Command::new(support::controller::host_binary()?)
        .current_dir(dir.path())
        .args([
            "eval",
            "mcn",
            "--node",
            "node.json",
            "--pools",
            "pools.json",
        ])
        .args(["--machineconfigs", "configs.json"])
        .output()
        .await?;
    ensure!(
        out.status.success(),
        "mco-host eval mcn: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decision: Value = serde_json::from_slice(&out.stdout)?;
    decision
        .get("machineConfigNode")
        .cloned()
        .with_context(|| format!("mco-host eval mcn gave no MCN: {decision}"))
}

fn percentiles(latencies: &[Duration]) -> String {
    let Some(max) = latencies.last() else {
        return "none".to_owned();
    };
    let pct = |p: usize| latencies[(latencies.len() * p / 100).min(latencies.len() - 1)];
    format!(
        "p50 {:.2?}  p90 {:.2?}  p99 {:.2?}  max {max:.2?}",
        pct(50),
        pct(90),
        pct(99)
    )
}

/// Every MCN as the benchmark's own watch last saw it, and when each first
/// matched what a phase waits for.
#[derive(Clone)]
struct Seen {
    mcns: Arc<Mutex<HashMap<String, Versions>>>,
    _watch: Arc<AbortOnDrop>,
}

/// Ends the watch with the benchmark: an open watch holds the apiserver's
/// graceful shutdown until the harness gives up on it (20 s, then SIGKILL).
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// An MCN as it is now, and every version seen with when it arrived.
type Versions = (Value, Vec<(Instant, Value)>);

impl Seen {
    async fn watch(fx: &Fixture) -> Seen {
        let seen: Arc<Mutex<HashMap<String, Versions>>> = Arc::default();
        let api: Api<DynamicObject> = fx.mcns();
        let mcns = seen.clone();
        let task = tokio::spawn(async move {
            let mut events = watcher(api, watcher::Config::default()).boxed();
            while let Some(event) = events.next().await {
                let mcn = match event {
                    Ok(watcher::Event::Apply(mcn) | watcher::Event::InitApply(mcn)) => mcn,
                    Ok(watcher::Event::Delete(mcn)) => {
                        mcns.lock().await.remove(&mcn.name_any());
                        continue;
                    }
                    _ => continue,
                };
                let value = serde_json::to_value(&mcn).unwrap_or(Value::Null);
                let mut mcns = mcns.lock().await;
                let entry = mcns.entry(mcn.name_any()).or_default();
                entry.1.push((Instant::now(), value.clone()));
                entry.0 = value;
            }
        });
        Seen {
            mcns: seen,
            _watch: Arc::new(AbortOnDrop(task.abort_handle())),
        }
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

    /// Waits until no MCN is left.
    async fn wait_empty(&self, since: Instant) -> Result<()> {
        while !self.mcns.lock().await.is_empty() {
            if since.elapsed() > SYNC_LIMIT {
                bail!("MCNs still there after {SYNC_LIMIT:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    /// Per patched node, from its patch until its MCN was first seen
    /// matching, sorted.
    async fn latencies(
        &self,
        patched: &HashMap<String, Instant>,
        matches: impl Fn(&Value) -> bool,
    ) -> Vec<Duration> {
        let mut latencies: Vec<Duration> = self
            .mcns
            .lock()
            .await
            .iter()
            .filter_map(|(name, (_, history))| {
                let at = history.iter().find(|(_, v)| matches(v))?.0;
                Some(at.saturating_duration_since(*patched.get(name)?))
            })
            .collect();
        latencies.sort();
        latencies
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

/// CPU seconds the MCN guest's evaluations took so far: the installed
/// guest's (`role` `active`) or the shadow candidate's.
fn guest_cpu_seconds(metrics: &support::controller::Metrics, role: &str) -> f64 {
    metrics.sum(
        "mco_evaluation_cpu_seconds_total",
        &[("job", "mcn"), ("role", role)],
    )
}

/// A registry in `dir` that serves the installed MCN guest with `module`
/// as its shadow candidate (the boot image jobs, idle here, serve none).
fn shadow_registry(dir: &std::path::Path, module: &std::path::Path) -> Result<std::path::PathBuf> {
    let installed = support::controller::host_binary()?
        .parent()
        .context("the host binary has no directory")?
        .join("guests/mcn.wasm");
    let module = std::fs::canonicalize(module)
        .with_context(|| format!("MCO_SCALE_SHADOW={}", module.display()))?;
    let registry = json!({"mcn": {
        "module": installed.display().to_string(),
        "candidate": {"module": module.display().to_string()},
    }});
    let path = dir.join("registry.yaml");
    // JSON is YAML: the registry file takes either.
    std::fs::write(&path, serde_json::to_vec_pretty(&registry)?)?;
    Ok(path)
}

/// MCN guest evaluations so far, whatever their result.
fn evaluations(metrics: &support::controller::Metrics) -> f64 {
    metrics.sum("mco_evaluations_total", &[("job", "mcn")])
}

/// User + system CPU seconds of this run's kube-apiserver and etcd.
fn control_plane_cpu_seconds(fx: &Fixture) -> Result<f64> {
    [fx.cp.apiserver_pid(), fx.cp.etcd_pid()]
        .into_iter()
        .map(|pid| cpu_seconds(pid.context("the control plane is not running")?))
        .sum()
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
