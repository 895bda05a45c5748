//! `guests audit` at 5,000 nodes: the time and the peak resident memory
//! of an audit from files (the Nodes file read and parsed, every node
//! decided by the installed MCN guest and by a candidate that words one
//! condition differently, the decisions compared), the path `mco-host
//! guests audit --nodes` runs. The peak is measured from just before the
//! audit (`/proc/self/clear_refs` resets it), so it is the audit's and the
//! loaded guests', not the generator's. Needs the installed guest
//! (`guests/build.sh`); run with `cargo bench -p mco-host --bench audit`.

#[path = "../tests/common/wasm.rs"]
#[allow(dead_code, reason = "the bench uses one of the helpers")]
mod wasm;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use mco_job_mcn::audit::audit_files;
use mco_job_mcn::eval::McnPaths;
use mco_job_mcn::{McnGuest, NODE_STATE_INTERFACE};
use mco_registry::audit::{Module, SAMPLE_LIMIT};
use mco_runtime::{GuestModule, Runtime, RuntimeConfig};
use serde_json::{Value, json};

const NODES: usize = 5_000;
/// Every this many nodes one is mid-update in pool worker-canary: the
/// nodes the candidate differs on.
const CANARY_EVERY: usize = 5;

fn main() -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let target = exe
        .ancestors()
        .nth(3)
        .map(PathBuf::from)
        .unwrap_or_default();
    let installed = std::fs::read(target.join("release/guests/mcn.wasm"))
        .context("the installed guest: run guests/build.sh first")?;
    let candidate = wasm::with_text_replaced(&installed, " needs an update", " needs a refresh");
    let runtime = Runtime::new(RuntimeConfig::default())?;
    let load = |name: &str, bytes: &[u8]| -> anyhow::Result<McnGuest> {
        let module = GuestModule::from_bytes(&runtime, name, bytes, NODE_STATE_INTERFACE)?;
        Ok(McnGuest::new(&runtime, module)?)
    };
    let (active, candidate) = (
        load("mcn.wasm", &installed)?,
        load("candidate.wasm", &candidate)?,
    );

    let dir = tempfile::tempdir()?;
    let size = write_inputs(dir.path())?;
    let before = memory("VmRSS")?;
    std::fs::write("/proc/self/clear_refs", "5").context("resetting the peak RSS")?;
    let started = Instant::now();
    let path = |file: &str| dir.path().join(file).display().to_string();
    let (nodes, pools, configs) = (
        path("nodes.json"),
        path("pools.yaml"),
        path("machineconfigs.yaml"),
    );
    let files = McnPaths {
        node: &nodes,
        pools: Some(&pools),
        machineconfigs: Some(&configs),
        ..McnPaths::default()
    };
    let report = audit_files(
        &files,
        (&active, &candidate),
        SAMPLE_LIMIT,
        &mco_host::FEATURE_GATES,
    )?
    .report(
        "mcn".into(),
        Module::of(active.module()),
        Module::of(candidate.module()),
    );
    let took = started.elapsed();
    let peak = memory("VmHWM")?;
    let canary = NODES.div_ceil(CANARY_EVERY) as u64;
    anyhow::ensure!(
        (report.objects, report.differ, report.failed) == (NODES as u64, canary, 0),
        "unexpected counts: {} objects, {} differ, {} failed",
        report.objects,
        report.differ,
        report.failed
    );
    println!(
        "{NODES} nodes ({:.1} MiB of JSON), {} differ: audit in {took:.2?} ({:.0} µs a node, both modules); \
         peak RSS {:.1} MiB, {:.1} MiB of it there before the audit (runtime, both guests compiled)",
        mib(size),
        report.differ,
        took.as_secs_f64() * 1e6 / NODES as f64,
        mib(peak),
        mib(before)
    );
    Ok(())
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1 << 20)
}

/// A `/proc/self/status` size, in bytes.
fn memory(field: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .with_context(|| format!("no {field} in /proc/self/status"))?;
    Ok(kib << 10)
}

/// The pools, the rendered configs of a golden case and 5,000 Nodes as
/// `kubectl get nodes -o json` prints them (with the status a real node
/// carries: addresses, node info, conditions, images); the size of the
/// Nodes file.
fn write_inputs(dir: &Path) -> anyhow::Result<u64> {
    let repo = mco_host::crate_dir().join("..");
    let golden = repo.join("tests/golden/mcn/reboot-05-drained");
    std::fs::copy(
        golden.join("machineconfigs.yaml"),
        dir.join("machineconfigs.yaml"),
    )?;
    let pool = |name: &str, label: &str| {
        json!({"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigPool",
            "metadata": {"name": name},
            "spec": {"nodeSelector": {"matchLabels": {label: ""}},
                "configuration": {"name": "rendered-worker-b"}}})
    };
    let pools = json!({"apiVersion": "v1", "kind": "List", "items": [
        pool("worker", "node-role.kubernetes.io/worker"),
        pool("worker-canary", "node-role.kubernetes.io/worker-canary"),
    ]});
    std::fs::write(dir.join("pools.yaml"), pools.to_string())?;
    // Written a node at a time, so the generator leaves no file-sized
    // buffer behind in the RSS measured.
    let path = dir.join("nodes.json");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
    out.write_all(br#"{"apiVersion":"v1","kind":"List","items":["#)?;
    for i in 0..NODES {
        if i > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut out, &node(i))?;
    }
    out.write_all(b"]}")?;
    out.flush()?;
    Ok(std::fs::metadata(&path)?.len())
}

fn node(i: usize) -> Value {
    let canary = i.is_multiple_of(CANARY_EVERY);
    let name = format!("worker-{i:04}");
    let mut labels = json!({"node-role.kubernetes.io/worker": "", "kubernetes.io/hostname": name,
        "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
        "topology.kubernetes.io/zone": format!("zone-{}", i % 3)});
    if canary {
        labels["node-role.kubernetes.io/worker-canary"] = json!("");
    }
    let (current, state) = if canary {
        ("rendered-worker-a", "Working")
    } else {
        ("rendered-worker-b", "Done")
    };
    let a = "machineconfiguration.openshift.io";
    let images: Vec<Value> = (0..25)
        .map(|n| json!({"names": [format!("quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:{n:064x}")],
            "sizeBytes": 400_000_000 + n}))
        .collect();
    let conditions: Vec<Value> = ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
        .iter()
        .map(|t| json!({"type": t, "status": if *t == "Ready" {"True"} else {"False"},
            "reason": format!("Kubelet{t}"), "message": format!("kubelet reports {t}"),
            "lastHeartbeatTime": "2026-12-02T10:00:00Z", "lastTransitionTime": "2026-12-01T10:00:00Z"}))
        .collect();
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": format!("uid-{i}"), "labels": labels, "annotations": {
            format!("{a}/currentConfig"): current, format!("{a}/desiredConfig"): "rendered-worker-b",
            format!("{a}/state"): state, format!("{a}/reason"): "",
            "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
        "spec": {"providerID": format!("gce://project/zone/{name}")},
        "status": {"phase": "Running", "conditions": conditions, "images": images,
            "addresses": [{"type": "InternalIP", "address": format!("10.0.{}.{}", i / 250, i % 250)},
                {"type": "Hostname", "address": name}],
            "nodeInfo": {"architecture": "amd64", "kernelVersion": "5.14.0-427.el9.x86_64",
                "osImage": "Red Hat Enterprise Linux CoreOS 418.94", "kubeletVersion": "v1.31.4",
                "containerRuntimeVersion": "cri-o://1.31.4", "machineID": format!("{i:032x}")}}})
}
