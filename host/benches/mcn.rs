//! MachineConfigNode derivation, wasm against native, measured in one run:
//! a fresh instance + call for one node, the native call for the same
//! input, the floor (a guest that derives nothing), the three and a fresh
//! instance alone on cold caches, 5,000 synthetic nodes each way, and an
//! updating node between two rendered configs at the apiserver's size.
//! Needs the installed guest (`guests/build.sh`) and the floor guest;
//! `make bench` builds both.
//!
//! `MCO_BENCH_LOOP=guest|floor|native` runs nothing but 20,000 fresh
//! evaluations of one node by that one, so that `perf stat`, `perf record`
//! and `strace -c` see a fresh evaluation's parts and not the bench's
//! other runs (docs/dev/benchmarks.md).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mco_job_mcn::{McnGuest, McnGuestExt as _, NODE_STATE_INTERFACE};
use mco_mcn::{
    Condition, ConditionStatus, Decision, Facts, LabelSelector, Node, Pool, RenderedConfig,
};
use mco_runtime::{GuestModule, GuestState, Runtime, RuntimeConfig};

const P: &str = "machineconfiguration.openshift.io/";
const SAMPLES: usize = 5_000;
const NODES: usize = 5_000;
/// Nodes that share one instance in the batched run.
const BATCH: usize = 100;
/// Cold evaluations timed (each after a sweep of [`EVICT_BYTES`]).
const COLD_SAMPLES: usize = 500;
/// Four times this machine's last-level cache (8 MiB), and 8,192 pages:
/// more than the TLBs hold.
const EVICT_BYTES: usize = 32 << 20;
/// Evaluations timed with rendered configs at the apiserver's size.
const LARGE_SAMPLES: usize = 50;

fn main() -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let target = exe
        .ancestors()
        .nth(3)
        .map(PathBuf::from)
        .unwrap_or_default();
    let guest_path = target.join("release/guests/mcn.wasm");
    let runtime = Runtime::new(RuntimeConfig {
        perf_map: std::env::var_os("MCO_PERF_MAP").is_some(),
        ..RuntimeConfig::default()
    })?;
    let guest = McnGuest::new(
        &runtime,
        GuestModule::from_file(&runtime, &guest_path, NODE_STATE_INTERFACE)?,
    )?;
    println!(
        "guest {} (pooling: {})",
        guest_path.display(),
        runtime.uses_pooling()
    );

    let one = synthetic(7);
    if let Some(which) = std::env::var_os("MCO_BENCH_LOOP") {
        return evaluation_loop(&runtime, &target, &guest, &one, &which);
    }
    anyhow::ensure!(
        guest.derive(&one)? == mco_mcn::derive(&one),
        "wasm and native disagree"
    );
    let (wasm, per_call) = fresh_and_shared(&guest, &one)?;
    let native = native_median(SAMPLES, &one)?;
    println!(
        "one evaluation, median of {SAMPLES}: wasm (fresh instance + call) {wasm:?}, native {native:?}, ratio {:.2}x",
        ratio(wasm, native)
    );
    breakdown(&guest, &one, wasm, native)?;

    anyhow::ensure!(
        guest
            .derive_batch(&vec![one.clone(); BATCH])
            .iter()
            .all(|d| d.as_ref().ok() == Some(&mco_mcn::derive(&one))),
        "batch disagrees"
    );
    println!(
        "one evaluation in a shared instance (batches of {BATCH}, median of {}): {per_call:?} per node",
        SAMPLES / BATCH
    );
    let floor = floor(&runtime, &target, &one, native)?;
    cold(&guest, &floor, &one)?;
    large_configs(&guest)?;

    let nodes: Vec<Facts> = (0..NODES).map(synthetic).collect();
    let started = Instant::now();
    let mut applied = 0;
    for facts in &nodes {
        applied += usize::from(matches!(
            std::hint::black_box(mco_mcn::derive(facts)),
            Decision::Apply(_)
        ));
    }
    let native_total = started.elapsed();
    let started = Instant::now();
    for facts in &nodes {
        std::hint::black_box(guest.derive(facts)?);
    }
    let wasm_total = started.elapsed();
    let started = Instant::now();
    for chunk in nodes.chunks(BATCH) {
        for decision in guest.derive_batch(chunk) {
            std::hint::black_box(decision?);
        }
    }
    let batched_total = started.elapsed();
    println!(
        "{NODES} nodes ({applied} MCNs): native {native_total:?}; wasm, fresh instance per node {wasm_total:?} ({:.2}x native); wasm, one instance per {BATCH} nodes {batched_total:?} ({:.2}x native)",
        ratio(wasm_total, native_total),
        ratio(batched_total, native_total)
    );
    Ok(())
}

/// Evaluations in the loop of `MCO_BENCH_LOOP`.
const LOOP_EVALUATIONS: usize = 20_000;

/// `MCO_BENCH_LOOP`: [`LOOP_EVALUATIONS`] fresh evaluations of `facts` by
/// the guest, the floor or the native library, and nothing else.
fn evaluation_loop(
    runtime: &Runtime,
    target: &std::path::Path,
    guest: &McnGuest,
    facts: &Facts,
    which: &std::ffi::OsStr,
) -> anyhow::Result<()> {
    let floor_guest;
    let guest = match which.to_str() {
        Some("guest") => guest,
        Some("floor") => {
            floor_guest = floor_guest_of(runtime, target)?;
            &floor_guest
        }
        Some("native") => {
            for _ in 0..LOOP_EVALUATIONS {
                std::hint::black_box(mco_mcn::derive(std::hint::black_box(facts)));
            }
            return Ok(());
        }
        _ => anyhow::bail!("MCO_BENCH_LOOP is guest, floor or native, not {which:?}"),
    };
    for _ in 0..LOOP_EVALUATIONS {
        std::hint::black_box(guest.derive(facts)?);
    }
    Ok(())
}

/// Where one fresh evaluation's time goes: the parts the host can time
/// from outside the call, each a median of its own, and the call itself
/// (converting the facts, lowering them into the guest, the guest's code,
/// lifting its answer) as what remains. A profile (docs/dev/records/benchmarks.md)
/// splits the call further.
fn breakdown(
    guest: &McnGuest,
    facts: &Facts,
    total: Duration,
    native: Duration,
) -> anyhow::Result<()> {
    let store = median(SAMPLES, || {
        std::hint::black_box(guest.store());
        Ok(())
    })?;
    let instantiate = median_of(SAMPLES, || {
        let mut store = guest.store();
        let started = Instant::now();
        instantiate_in(guest, &mut store)?;
        Ok(started.elapsed())
    })?;
    let drop_store = median_of(SAMPLES, || {
        let mut store = guest.store();
        instantiate_in(guest, &mut store)?;
        let started = Instant::now();
        drop(store);
        Ok(started.elapsed())
    })?;
    let decision = mco_mcn::derive(facts);
    let checks = median(SAMPLES, || {
        mco_mcn::validate(&decision, facts.image_mode_status_reporting())
            .map_err(anyhow::Error::msg)?;
        mco_job_mcn::authority::check(facts, &decision)?;
        Ok(())
    })?;
    let call = total.saturating_sub(store + instantiate + drop_store + checks);
    println!("where one fresh evaluation's time goes (medians of {SAMPLES}):");
    for (part, time) in [
        ("store and WASI context", store),
        ("instantiation", instantiate),
        (
            "call: facts converted and lowered, guest code, answer lifted (the rest)",
            call,
        ),
        ("validation and authority check", checks),
        ("store dropped (pooled slot reset)", drop_store),
        ("total", total),
        ("native derive, for comparison", native),
    ] {
        println!("  {part:<75} {:>8.1} µs", time.as_secs_f64() * 1e6);
    }
    Ok(())
}

/// The same evaluation by a guest that derives nothing (`guests/floor`):
/// what the sandbox and the typed facts cost before any logic runs, fresh
/// and in a shared instance, against the whole native derive.
fn floor(
    runtime: &Runtime,
    target: &std::path::Path,
    facts: &Facts,
    native: Duration,
) -> anyhow::Result<McnGuest> {
    let floor = floor_guest_of(runtime, target)?;
    anyhow::ensure!(
        matches!(floor.derive(facts)?, Decision::Apply(_)),
        "the floor guest did not answer an MCN"
    );
    let (fresh, shared) = fresh_and_shared(&floor, facts)?;
    println!(
        "the floor (guests/floor: the same facts and the same shape of answer, no logic): fresh instance + call {fresh:?} ({:.2}x native), in a shared instance {shared:?} per node ({:.2}x native)",
        ratio(fresh, native),
        ratio(shared, native)
    );
    Ok(floor)
}

/// The floor guest, as `make bench` builds it.
fn floor_guest_of(runtime: &Runtime, target: &std::path::Path) -> anyhow::Result<McnGuest> {
    let path = target.join("wasm32-wasip2/guest/mco_floor_guest.wasm");
    anyhow::ensure!(
        path.is_file(),
        "{} is missing: `make bench` builds it (cargo build --target wasm32-wasip2 --profile guest -p mco-floor-guest)",
        path.display()
    );
    Ok(McnGuest::new(
        runtime,
        GuestModule::from_file(runtime, &path, NODE_STATE_INTERFACE)?,
    )?)
}

/// The guest, the floor, the native derive and a fresh instance alone on
/// cold caches, as the controller meets evaluations in `make bench-scale`'s
/// wave, where the apiserver and etcd share the two cores and an
/// evaluation runs at six times its idle cost: before each one, a sweep
/// over a buffer larger than the last-level cache evicts what came before
/// (code, the pooled slot's memory, the facts). Scaled by these times, the
/// wave's guest share says what a guest that derives nothing would take
/// (docs/dev/records/benchmarks.md, "On cold caches"). Minor page faults are counted too, to tell a
/// cache miss from a page the pooling allocator let go.
fn cold(guest: &McnGuest, floor_guest: &McnGuest, facts: &Facts) -> anyhow::Result<()> {
    let sweep = vec![1u64; EVICT_BYTES / 8];
    let cold_median = |run: &dyn Fn() -> anyhow::Result<()>| {
        // The sweep's pages are resident already: what faults is the run.
        let faults_before = minor_faults()?;
        let mut runs = 0;
        let time = median_of(COLD_SAMPLES, || {
            let line_sum: u64 = std::hint::black_box(&sweep).iter().step_by(8).sum();
            std::hint::black_box(line_sum);
            let started = Instant::now();
            run()?;
            runs += 1;
            Ok(started.elapsed())
        })?;
        let faults = (minor_faults()? - faults_before) as f64 / runs as f64;
        Ok::<_, anyhow::Error>((time, faults))
    };
    let (wasm, wasm_faults) = cold_median(&|| Ok(guest.derive(facts).map(drop)?))?;
    let (floor, floor_faults) = cold_median(&|| Ok(floor_guest.derive(facts).map(drop)?))?;
    let (native, native_faults) = cold_median(&|| {
        std::hint::black_box(mco_mcn::derive(std::hint::black_box(facts)));
        Ok(())
    })?;
    let instance_only = |guest: &McnGuest| instantiate_in(guest, &mut guest.store());
    let (wasm_instance, _) = cold_median(&|| instance_only(guest))?;
    let (floor_instance, _) = cold_median(&|| instance_only(floor_guest))?;
    println!(
        "one evaluation on cold caches (median of {COLD_SAMPLES}, each after a {} MiB sweep): wasm {wasm:?} ({wasm_faults:.1} minor faults), the floor {floor:?} ({floor_faults:.1}; {:.2}x the guest's), native {native:?} ({native_faults:.1}); wasm {:.2}x native",
        EVICT_BYTES >> 20,
        ratio(floor, wasm),
        ratio(wasm, native)
    );
    println!(
        "  of which a fresh instance alone (store, instantiation, slot reset), cold: the guest's {wasm_instance:?}, the floor's {floor_instance:?}"
    );
    Ok(())
}

/// A node mid-update between two rendered configs of
/// `mco_test_support::large::OBJECT_BYTES` each (thousands of small files; the OS
/// image differs too), in the default guest memory: a fresh instance +
/// call against native, both from the configs' summaries, which the host
/// reads once per config version (that read is timed beside them).
fn large_configs(guest: &McnGuest) -> anyhow::Result<()> {
    use mco_test_support::large::{Files, OBJECT_BYTES, grow_machineconfigs};
    let mut facts = synthetic(2);
    let mut configs: Vec<serde_json::Value> = ["os-a", "os-b"]
        .iter()
        .map(|os| {
            let spec: serde_json::Value = serde_json::from_str(&spec(os))?;
            Ok(serde_json::json!({ "spec": spec }))
        })
        .collect::<anyhow::Result<_>>()?;
    grow_machineconfigs(&mut configs, Files::Many, OBJECT_BYTES)?;
    let texts: Vec<String> = configs.iter().map(|c| c["spec"].to_string()).collect();
    for (config, text) in facts.configs.iter_mut().zip(&texts) {
        *config = RenderedConfig::new(&config.name, text);
    }
    let read = median(LARGE_SAMPLES, || {
        std::hint::black_box(mco_mcn::Summary::read(&texts[0]));
        Ok(())
    })?;
    anyhow::ensure!(
        guest.derive(&facts)? == mco_mcn::derive(&facts),
        "wasm and native disagree on configs at the apiserver's size"
    );
    let wasm = median(LARGE_SAMPLES, || Ok(guest.derive(&facts).map(drop)?))?;
    let native = native_median(LARGE_SAMPLES, &facts)?;
    println!(
        "an updating node between two rendered configs of {OBJECT_BYTES} bytes (median of {LARGE_SAMPLES}): wasm (fresh instance + call) {wasm:?}, native {native:?}, ratio {:.2}x; the host's read of one config into its summary (once per version) {read:?}",
        ratio(wasm, native)
    );
    Ok(())
}

/// Instantiates `guest` in `store` and calls nothing.
fn instantiate_in(guest: &McnGuest, store: &mut wasmtime::Store<GuestState>) -> anyhow::Result<()> {
    std::hint::black_box(
        guest
            .bindings()
            .instantiate(store)
            .map_err(|e| anyhow::anyhow!("{e:#}"))?,
    );
    Ok(())
}

/// Minor page faults of the calling thread so far: `minflt`, the tenth
/// field of `/proc/thread-self/stat`, found by counting from the end of
/// the command name (which may hold spaces and parentheses).
fn minor_faults() -> anyhow::Result<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat")?;
    let fields = stat
        .rsplit_once(") ")
        .map(|(_, rest)| rest)
        .unwrap_or_default();
    fields
        .split_whitespace()
        .nth(7)
        .and_then(|minflt| minflt.parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no minflt in /proc/thread-self/stat: {stat}"))
}

/// One evaluation of `facts` by `guest`: the median of a fresh instance +
/// call, and the median per-node time in a shared instance (batches of
/// [`BATCH`]), measured the same way for every guest compared.
fn fresh_and_shared(guest: &McnGuest, facts: &Facts) -> anyhow::Result<(Duration, Duration)> {
    let fresh = median(SAMPLES, || Ok(guest.derive(facts).map(drop)?))?;
    let same = vec![facts.clone(); BATCH];
    let shared = median_of(SAMPLES / BATCH, || {
        let started = Instant::now();
        for decision in guest.derive_batch(&same) {
            std::hint::black_box(decision?);
        }
        Ok(started.elapsed() / BATCH as u32)
    })?;
    Ok((fresh, shared))
}

/// The median time of the native derive of `facts`.
fn native_median(samples: usize, facts: &Facts) -> anyhow::Result<Duration> {
    median(samples, || {
        std::hint::black_box(mco_mcn::derive(std::hint::black_box(facts)));
        Ok(())
    })
}

fn median(samples: usize, mut run: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<Duration> {
    median_of(samples, || {
        let started = Instant::now();
        run()?;
        Ok(started.elapsed())
    })
}

/// The median of what `measure` reports, for parts that need setup
/// outside the time they report.
fn median_of(
    samples: usize,
    mut measure: impl FnMut() -> anyhow::Result<Duration>,
) -> anyhow::Result<Duration> {
    for _ in 0..samples / 10 {
        measure()?;
    }
    let mut times = (0..samples)
        .map(|_| measure())
        .collect::<anyhow::Result<Vec<_>>>()?;
    times.sort();
    Ok(times[samples / 2])
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(f64::MIN_POSITIVE)
}

/// A rendered config's spec, as JSON text, on OS image `os`.
fn spec(os: &str) -> String {
    format!(r#"{{"osImageURL":"{os}","config":{{"ignition":{{"version":"3.4.0"}}}}}}"#)
}

/// A worker somewhere in an update, with the stored conditions of a
/// cluster that has seen updates before. `seed` picks the phase.
fn synthetic(seed: usize) -> Facts {
    let phases: [&[(&str, &str)]; 6] = [
        &[("state", "Done"), ("currentConfig", "rendered-worker-b")],
        &[("state", "Done")],
        &[("state", "Working")],
        &[
            ("state", "Working"),
            ("desiredDrain", "drain-rendered-worker-b"),
        ],
        &[
            ("state", "Working"),
            ("desiredDrain", "drain-rendered-worker-b"),
            ("lastAppliedDrain", "drain-rendered-worker-b"),
        ],
        &[
            ("state", "Working"),
            ("desiredDrain", "drain-rendered-worker-b"),
            ("lastAppliedDrain", "drain-rendered-worker-b"),
            ("post-config-action", "Rebooting"),
        ],
    ];
    let mut annotations: std::collections::BTreeMap<String, String> = [
        ("currentConfig", "rendered-worker-a"),
        ("desiredConfig", "rendered-worker-b"),
        ("desiredDrain", "uncordon-rendered-worker-a"),
        ("lastAppliedDrain", "uncordon-rendered-worker-a"),
        ("reason", ""),
    ]
    .iter()
    .map(|(k, v)| (format!("{P}{k}"), v.to_string()))
    .collect();
    for (k, v) in phases[seed % phases.len()] {
        annotations.insert(format!("{P}{k}"), v.to_string());
    }
    let role = |r: &str| LabelSelector {
        match_labels: [(format!("node-role.kubernetes.io/{r}"), String::new())].into(),
        match_expressions: vec![],
    };
    Facts {
        node: Node {
            name: format!("worker-{seed}"),
            phase: "Running".into(),
            unschedulable: seed.is_multiple_of(3),
            labels: [
                ("node-role.kubernetes.io/worker".to_string(), String::new()),
                (
                    "kubernetes.io/hostname".to_string(),
                    format!("worker-{seed}"),
                ),
                ("kubernetes.io/arch".to_string(), "amd64".to_string()),
            ]
            .into(),
            annotations,
        },
        pools: ["master", "worker", "infra"]
            .iter()
            .map(|name| Pool {
                name: name.to_string(),
                node_selector: Some(role(name)),
                target_config: format!("rendered-{name}-b"),
            })
            .collect(),
        configs: vec![
            RenderedConfig::new("rendered-worker-a", &spec("os-a")),
            RenderedConfig::new("rendered-worker-b", &spec("os-b")),
        ],
        previous: mco_mcn::DEFAULT_CONDITION_TYPES
            .iter()
            .map(|t| Condition {
                type_: t.to_string(),
                status: ConditionStatus::False,
                reason: "NotYetOccurred".into(),
                message: format!("This node has not yet entered the {t} phase"),
            })
            .collect(),
        policies: mco_mcn::DisruptionPolicies::defaults(),
        stored: None,
        feature_gates: Default::default(),
    }
}
