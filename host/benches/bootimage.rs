//! Boot image decisions for 1,000 AWS MachineSets against a 1 MB stream,
//! through the wasm guest (one instance, each call lent the host's parse
//! of the stream and the MachineSet's providerSpec) and natively, in one
//! run. Needs
//! the installed guests (`guests/build.sh`); run with
//! `cargo bench -p mco-host --bench bootimage`.
//!
//! `MCO_BENCH_BASELINE=<a bootimage-aws.wasm>` (the guest built at
//! another commit, for the same WIT) also runs that guest, each of its
//! passes right after the installed guest's, so a change to the guest is
//! measured against its baseline on the same load.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use mco_bootimage::{
    ClusterFacts, Decision, MachineSetView, StreamQuery, decide_loaded, load_stream,
    validate_decision_for,
};
use mco_job_bootimage::authority::{self, JobInputs};
use mco_job_bootimage::{
    BOOT_IMAGE_INTERFACE, BootImageGuest, BootImageGuestExt as _, StreamInput,
};
use mco_runtime::{GuestModule, Runtime, RuntimeConfig};
use serde_json::{Value, json};

const MACHINESETS: usize = 1_000;
const STREAM_BYTES: usize = 1 << 20;
const RUNS: usize = 7;

fn main() -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let target = exe
        .ancestors()
        .nth(3)
        .map(PathBuf::from)
        .unwrap_or_default();
    let root = mco_host::crate_dir().join("../tests/golden/bootimage/aws-patch-known-ami");
    let runtime = Runtime::new(RuntimeConfig {
        perf_map: std::env::var_os("MCO_PERF_MAP").is_some(),
        ..RuntimeConfig::default()
    })?;
    let module = GuestModule::from_file(
        &runtime,
        &target.join("release/guests/bootimage-aws.wasm"),
        BOOT_IMAGE_INTERFACE,
    )?;
    let guest = BootImageGuest::new(&runtime, module)?;
    let baseline = match std::env::var_os("MCO_BENCH_BASELINE") {
        Some(path) => {
            let module = GuestModule::from_file(&runtime, Path::new(&path), BOOT_IMAGE_INTERFACE)
                .with_context(|| format!("MCO_BENCH_BASELINE={}", path.display()))?;
            Some(BootImageGuest::new(&runtime, module)?)
        }
        None => None,
    };

    let (stream, regions) = big_stream(&yaml(&root.join("configmap.yaml"))?)?;
    let template = yaml(&root.join("machineset.yaml"))?;
    let machinesets: Vec<MachineSetView> = (0..MACHINESETS)
        .map(|i| machineset(&template, i, &regions))
        .collect::<Result<_, _>>()?;
    let known = std::fs::read_to_string(root.join("known-images.txt"))?;
    let cluster = ClusterFacts {
        control_plane_arch: "x86_64".into(),
        multi_arch: false,
        known_images: known
            .lines()
            .filter(|l| l.starts_with("ami-"))
            .map(str::to_string)
            .collect(),
        vcenter: None,
        ec2: None,
    };

    // A pass on a new stream: the host parses it, for native code and the
    // guests alike. A pass on the stream of the pass before (the usual
    // case: a MachineSet changed) finds the host's parse kept.
    let native_decide = |loaded: Result<&dyn StreamQuery, &str>| -> Vec<Decision> {
        machinesets
            .iter()
            .map(|ms| decide_loaded(&mco_bootimage_aws::Aws, loaded, ms, &cluster, None))
            .collect()
    };
    let wasm_decide =
        |guest: &BootImageGuest, input: &StreamInput| -> anyhow::Result<Vec<Decision>> {
            let mut session = guest.session("AWS", input)?;
            machinesets
                .iter()
                .map(|ms| Ok(session.decide(ms, &cluster, None)?))
                .collect()
        };
    let kept = StreamInput::new(Some(&stream));
    let (native, native_new) = best_of(|| {
        let loaded = load_stream(Some(&stream));
        Ok(native_decide(match &loaded {
            Ok(stream) => Ok(stream),
            Err(why) => Err(why),
        }))
    })?;
    let ((wasm, wasm_new), base_new) = best_beside(&guest, baseline.as_ref(), |guest| {
        wasm_decide(guest, &StreamInput::new(Some(&stream)))
    })?;
    let (_, native_same) = best_of(|| {
        Ok(native_decide(
            kept.index().map(|stream| stream as &dyn StreamQuery),
        ))
    })?;
    let ((wasm_same_decisions, wasm_same), base_same) =
        best_beside(&guest, baseline.as_ref(), |guest| wasm_decide(guest, &kept))?;
    anyhow::ensure!(
        native == wasm && wasm == wasm_same_decisions,
        "wasm and native disagree"
    );
    if let (Some((new, _)), Some((same, _))) = (&base_new, &base_same) {
        anyhow::ensure!(
            *new == native && *same == native,
            "the baseline guest and native disagree"
        );
    }
    let patches = native
        .iter()
        .filter(|d| matches!(d, Decision::Patch { .. }))
        .count();
    println!(
        "{MACHINESETS} MachineSets ({patches} patches) against a {} KiB stream ({} regions), best of {RUNS}:",
        stream.len() >> 10,
        regions.len(),
    );
    for (pass, wasm, base, native) in [
        ("a new stream", wasm_new, &base_new, native_new),
        (
            "the stream of the pass before",
            wasm_same,
            &base_same,
            native_same,
        ),
    ] {
        println!(
            "  a pass on {pass:<30} wasm {wasm:?}, native {native:?}, wasm/native {:.2}x",
            ratio(wasm, native)
        );
        if let Some((_, base)) = base {
            println!(
                "  {:<40} baseline wasm {base:?}, wasm/native {:.2}x",
                "",
                ratio(*base, native)
            );
        }
    }

    // Where a pass on a new stream goes: the parts the host can time from
    // outside the guest, each a best of its own; the calls are the rest.
    let (_, host_parse) = best_of(|| Ok(StreamInput::new(Some(&stream))))?;
    let (_, session) = best_of(|| Ok(guest.session("AWS", &kept)?))?;
    let (_, checks) = best_of(|| {
        for (machineset, decision) in machinesets.iter().zip(&native) {
            let job = JobInputs {
                platform: "AWS",
                machineset,
                cluster: &cluster,
                user_data: None,
                stream: kept.index(),
            };
            authority::check(&job, decision)?;
            validate_decision_for(decision, machineset.kind).map_err(anyhow::Error::msg)?;
        }
        Ok(())
    })?;
    let calls = wasm_new.saturating_sub(host_parse + session + checks);
    println!("where a pass on a new stream goes (best of {RUNS} each):");
    for (part, time) in [
        (
            "the host's parse of the stream (kept while it is unchanged)",
            host_parse,
        ),
        ("session: the instance", session),
        (
            "calls: handles lent, lookups, guest code, answers lifted (the rest)",
            calls,
        ),
        ("authority check and validation of every decision", checks),
        ("total", wasm_new),
        ("native load + decisions, for comparison", native_new),
    ] {
        println!("  {part:<70} {:>8.1} ms", time.as_secs_f64() * 1e3);
    }
    if let Some((_, total)) = base_new {
        let calls = total.saturating_sub(host_parse + session + checks);
        for (part, time) in [("baseline: calls", calls), ("baseline: total", total)] {
            println!("  {part:<70} {:>8.1} ms", time.as_secs_f64() * 1e3);
        }
    }
    Ok(())
}

fn ratio(wasm: Duration, native: Duration) -> f64 {
    wasm.as_secs_f64() / native.as_secs_f64().max(f64::MIN_POSITIVE)
}

/// A result and the time it took.
type Timed<T> = (T, Duration);

/// The best of [`RUNS`] of `run` with `guest`, and with `baseline` (when
/// given) each time right after it, so both meet the same load.
fn best_beside<T>(
    guest: &BootImageGuest,
    baseline: Option<&BootImageGuest>,
    mut run: impl FnMut(&BootImageGuest) -> anyhow::Result<T>,
) -> anyhow::Result<(Timed<T>, Option<Timed<T>>)> {
    let (mut best, mut best_baseline) = (None, None);
    for _ in 0..RUNS {
        keep_best(&mut best, timed(|| run(guest))?);
        if let Some(baseline) = baseline {
            keep_best(&mut best_baseline, timed(|| run(baseline))?);
        }
    }
    Ok((best.context("no runs")?, best_baseline))
}

fn best_of<T>(mut run: impl FnMut() -> anyhow::Result<T>) -> anyhow::Result<Timed<T>> {
    let mut best = None;
    for _ in 0..RUNS {
        keep_best(&mut best, timed(&mut run)?);
    }
    best.context("no runs")
}

fn timed<T>(run: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<Timed<T>> {
    let started = Instant::now();
    let result = run()?;
    Ok((result, started.elapsed()))
}

fn keep_best<T>(best: &mut Option<Timed<T>>, (result, elapsed): Timed<T>) {
    if best.as_ref().is_none_or(|(_, b)| elapsed < *b) {
        *best = Some((result, elapsed));
    }
}

fn yaml(path: &Path) -> anyhow::Result<Value> {
    Ok(serde_saphyr::from_str(&std::fs::read_to_string(path)?)?)
}

/// The golden stream, grown to 1 MB with synthetic AWS regions.
fn big_stream(configmap: &Value) -> anyhow::Result<(String, Vec<String>)> {
    let mut stream: Value =
        serde_json::from_str(configmap["data"]["stream"].as_str().context("no stream")?)?;
    let regions = stream
        .pointer_mut("/architectures/x86_64/images/aws/regions")
        .and_then(Value::as_object_mut)
        .context("no AWS regions")?;
    let mut i = 0;
    while serde_json::to_string(regions)?.len() < STREAM_BYTES {
        for _ in 0..500 {
            regions.insert(
                format!("synthetic-{i}"),
                json!({"release": "9.8.20260428-0", "image": format!("ami-{:017x}", 0x5eed_0000_u64 + i)}),
            );
            i += 1;
        }
    }
    let names = regions.keys().cloned().collect();
    Ok((stream.to_string(), names))
}

/// A mix: most on a known older AMI (patch), some on the target (noop),
/// some on an unknown AMI (skip).
fn machineset(template: &Value, i: usize, regions: &[String]) -> anyhow::Result<MachineSetView> {
    let mut ms = template.clone();
    ms["metadata"]["name"] = json!(format!("worker-{i}"));
    let spec = ms
        .pointer_mut("/spec/template/spec/providerSpec/value")
        .context("no providerSpec")?;
    spec["placement"]["region"] = json!(regions[i * 7919 % regions.len()]);
    spec["ami"]["id"] = json!(match i % 10 {
        0 => "ami-ffffffffffffffff0",
        1 => "ami-0fbc8be8796dc1df5",
        _ => "ami-0c5a8e7f3b2d1e4f6",
    });
    Ok(MachineSetView::from_object(&ms)?)
}
