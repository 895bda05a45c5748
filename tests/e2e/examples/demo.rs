//! The main-job demo (`make demo`): a local kube-apiserver + etcd, a small
//! simulated cluster, `mco-host run` as its own ServiceAccount, and a
//! rolling update across the workers the way the Machine Config Daemon and
//! drain controller annotate nodes, printing the MachineConfigNodes before,
//! during and after. Then a new CoreOS stream lands and the boot image
//! controller moves the enrolled AWS MachineSets, leaving a custom-image and
//! a Windows MachineSet alone (and saying why); `mco-host status` is printed
//! mid-rollout and at the end. Progress lines go to stderr, which `make
//! demo` prints only when the demo fails. Everything started is stopped.

#[path = "../tests/support/mod.rs"]
#[allow(dead_code, reason = "the demo uses part of the test support")]
mod support;

use std::time::Duration;

use anyhow::Context;
use kube::ResourceExt;
use serde_json::Value;
use support::bootimages::{Cluster, Image, MachineSetSpec, NEW, OLD, Platform};
use support::fixture::{ANNOTATION_PREFIX, Fixture};
use support::golden::{self, Expected};

const WORKERS: [&str; 3] = ["worker-0", "worker-1", "worker-2"];
const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// The columns after NAME: pool, configs, `Updated`, and one STEPS
/// column in place of the eleven update conditions `-o wide` shows one per
/// column (238 characters), listing those that are True: all a reader
/// needs to follow a node through its update.
const COLUMNS: [(&str, &str); 5] = [
    ("POOL", ".pool"),
    ("DESIRED", ".desired"),
    ("CURRENT", ".current"),
    ("UPDATED", "Updated"),
    ("STEPS", ".steps"),
];

/// The update conditions in the order a reboot update sets them, with the
/// short names STEPS shows.
const STEPS: [(&str, &str); 10] = [
    ("UpdatePrepared", "Prepared"),
    ("UpdateExecuted", "Executed"),
    ("Cordoned", "Cordoned"),
    ("Drained", "Drained"),
    ("AppliedFilesAndOS", "FilesAndOS"),
    ("RebootedNode", "Rebooted"),
    ("UpdatePostActionComplete", "PostAction"),
    ("Resumed", "Resumed"),
    ("Uncordoned", "Uncordoned"),
    ("UpdateComplete", "Complete"),
];

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let machinesets = [
        MachineSetSpec {
            secret: "legacy-user-data",
            ..MachineSetSpec::new("worker-us-east-1a")
        },
        MachineSetSpec {
            image: Image::Rhcos(OLD, "aarch64"),
            arch_annotation: "kubernetes.io/arch=arm64",
            ..MachineSetSpec::new("worker-arm64")
        },
        MachineSetSpec {
            image: Image::Custom,
            ..MachineSetSpec::new("worker-golden-image")
        },
        MachineSetSpec {
            windows: true,
            ..MachineSetSpec::new("worker-windows")
        },
    ];
    let mut cluster = Cluster::start(Platform::Aws, &machinesets).await?;
    let result = demo(&mut cluster).await;
    cluster.fx.finish(result)
}

async fn demo(cluster: &mut Cluster) -> anyhow::Result<()> {
    cluster.fx.apply_pool("master", "rendered-master-a").await?;
    cluster.fx.apply_pool("worker", "rendered-worker-a").await?;
    cluster.fx.apply_machineconfig("rendered-master-a").await?;
    cluster
        .fx
        .apply_golden_machineconfigs("reboot-01-desired-config-set")
        .await?;
    cluster
        .start_controller("mco-host-demo", &["--resync", "1m"])
        .await?;
    rolling_update(&mut cluster.fx).await?;
    boot_images(cluster).await?;
    let admin = format!("http://{}", cluster.fx.controllers[0].admin_addr);
    println!("# mco-host status --admin-url {admin}\n");
    println!("{}", cluster.fx.status(&["--admin-url", &admin]).await?);
    Ok(())
}

async fn rolling_update(fx: &mut Fixture) -> anyhow::Result<()> {
    fx.create_node("master-0", &["master"], &[], "rendered-master-a")
        .await?;
    let mut uids = Vec::new();
    for worker in WORKERS {
        uids.push(
            fx.create_node(worker, &["worker"], &[], "rendered-worker-a")
                .await?,
        );
    }
    for (worker, uid) in WORKERS.iter().zip(&uids) {
        fx.wait_mcn(
            &Expected::load("reboot-00-updated-on-a", worker)?,
            uid,
            STEP_TIMEOUT,
        )
        .await?;
    }
    print_table(fx, "the cluster is up to date on rendered-worker-a").await?;

    fx.apply_pool("worker", "rendered-worker-b").await?;
    println!(
        "pool worker now targets rendered-worker-b: the workers update one at a time, \
         annotated as the Machine Config Daemon annotates a node\n"
    );
    let steps = reboot_steps()?;
    for (worker, uid) in WORKERS.iter().zip(&uids) {
        let mut rows = Vec::new();
        for step in &steps {
            let (annotations, unschedulable) = golden::node_state(step)?;
            let annotations: Vec<(&str, &str)> = annotations
                .iter()
                .map(|(k, v)| (k.trim_start_matches(ANNOTATION_PREFIX), v.as_str()))
                .collect();
            fx.patch_node(worker, &annotations, Some(unschedulable))
                .await?;
            fx.wait_mcn(&Expected::load(step, worker)?, uid, STEP_TIMEOUT)
                .await
                .with_context(|| format!("{worker}, step {step}"))?;
            let label = step.trim_start_matches("reboot-").get(3..).unwrap_or(step);
            let mcn = fx.mcns().get(worker).await?;
            rows.push(step_row(label, &serde_json::to_value(&mcn)?));
            if *worker == "worker-1" && step == "reboot-05-drained" {
                println!("# mco-host status, worker-1 drained mid-update\n");
                println!("{}", fx.status(&[]).await?);
            }
        }
        // Every worker takes the same steps: the first one's are shown.
        if *worker == WORKERS[0] {
            let header = std::iter::once("STEP").chain(COLUMNS.iter().skip(1).map(|(h, _)| *h));
            print_rows(
                &format!("{worker}'s MachineConfigNode after each step"),
                header,
                &rows,
            );
        } else {
            println!("{worker} took the same {} steps\n", rows.len());
        }
    }
    print_table(
        fx,
        "rolling update complete: every worker on rendered-worker-b",
    )
    .await?;
    Ok(())
}

async fn boot_images(cluster: &Cluster) -> anyhow::Result<()> {
    print_machinesets(
        cluster,
        &format!("MachineSets on release {OLD}'s boot images"),
    )
    .await?;
    println!("the coreos-bootimages ConfigMap now carries release {NEW}'s stream\n");
    cluster.set_stream(NEW).await?;
    for (name, arch) in [("worker-us-east-1a", "x86_64"), ("worker-arm64", "aarch64")] {
        cluster
            .wait_image(name, &cluster.expected_image(NEW, arch))
            .await?;
    }
    let conditions = cluster
        .wait_conditions(
            "Reconciled 3 of 4 MAPI MachineSets (1 skipped)",
            ("False", "0 Degraded"),
        )
        .await?;
    print_machinesets(cluster, "after the boot image controller's pass").await?;
    println!(
        "worker-golden-image keeps its custom AMI: it is no RHCOS image the controller knows, so \
         upgrading it could replace a team's own image (skipped).\n\
         worker-windows keeps its image: its machines run Windows (template label \
         machine.openshift.io/os-id=Windows), and an RHCOS boot image is no image for them. \
         Upstream leaves such a MachineSet alone whatever the stream holds and counts it \
         reconciled (a noop), so the status view shows it no stream image.\n"
    );
    println!("# MachineConfiguration cluster");
    for condition in conditions.values() {
        println!(
            "{}={}: {}",
            condition["type"].as_str().unwrap_or_default(),
            condition["status"].as_str().unwrap_or_default(),
            condition["message"].as_str().unwrap_or_default()
        );
    }
    println!("\n# events in openshift-machine-api");
    for (name, _, _) in machineset_rows(cluster).await? {
        for event in cluster.events(&name).await? {
            println!("{name}: {event}");
        }
    }
    println!();
    Ok(())
}

async fn machineset_rows(cluster: &Cluster) -> anyhow::Result<Vec<(String, String, String)>> {
    let mut rows = Vec::new();
    for ms in cluster.machinesets().list(&Default::default()).await?.items {
        let name = ms.metadata.name.clone().unwrap_or_default();
        let arch = ms
            .annotations()
            .get("capacity.cluster-autoscaler.kubernetes.io/labels")
            .map(|labels| labels.trim_start_matches("kubernetes.io/arch=").to_owned())
            .unwrap_or_default();
        let image = cluster.image(&name).await?["id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        rows.push((name, arch, image));
    }
    rows.sort();
    Ok(rows)
}

async fn print_machinesets(cluster: &Cluster, title: &str) -> anyhow::Result<()> {
    println!("# {title}");
    println!("{:<22} {:<7} AMI", "NAME", "ARCH");
    for (name, arch, image) in machineset_rows(cluster).await? {
        println!("{name:<22} {arch:<7} {image}");
    }
    println!();
    Ok(())
}

/// The recorded reboot update (tests/golden/mcn/reboot-*), after its start.
fn reboot_steps() -> anyhow::Result<Vec<String>> {
    let mut steps: Vec<String> = std::fs::read_dir(golden::golden_dir())?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|name| name.starts_with("reboot-") && !name.starts_with("reboot-00"))
        .collect();
    steps.sort();
    Ok(steps)
}

async fn print_table(fx: &Fixture, title: &str) -> anyhow::Result<()> {
    let mut mcns = fx.mcns().list(&Default::default()).await?.items;
    mcns.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let rows: Vec<Vec<String>> = mcns
        .iter()
        .map(|m| row(&serde_json::to_value(m).unwrap_or_default()))
        .collect();
    let header = std::iter::once("NAME").chain(COLUMNS.iter().map(|(h, _)| *h));
    print_rows(title, header, &rows);
    Ok(())
}

/// One node's MachineConfigNode at a step of its update: the step, then
/// the columns after NAME and POOL (the same node and pool throughout).
fn step_row(step: &str, mcn: &Value) -> Vec<String> {
    std::iter::once(step.to_owned())
        .chain(row(mcn).into_iter().skip(2))
        .collect()
}

/// `rows` under `title` and `header`, each column as wide as its widest cell.
fn print_rows<'a>(title: &str, header: impl Iterator<Item = &'a str>, rows: &[Vec<String>]) {
    let header: Vec<String> = header.map(String::from).collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            std::iter::once(&header)
                .chain(rows)
                .map(|r| r[i].len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    println!("# {title}");
    for cells in std::iter::once(&header).chain(rows) {
        let line: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        println!("{}", line.join("   ").trim_end());
    }
    println!();
}

fn row(mcn: &Value) -> Vec<String> {
    let text = |v: &Value| v.as_str().unwrap_or("").to_string();
    let condition = |type_: &str| {
        mcn["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
            .map_or(String::new(), |c| text(&c["status"]))
    };
    let steps = || {
        let done: Vec<&str> = STEPS
            .iter()
            .filter(|(type_, _)| condition(type_) == "True")
            .map(|(_, short)| *short)
            .collect();
        if done.is_empty() {
            "-".to_string()
        } else {
            done.join(",")
        }
    };
    std::iter::once(text(&mcn["metadata"]["name"]))
        .chain(COLUMNS.iter().map(|(_, source)| match *source {
            ".pool" => text(&mcn["spec"]["pool"]["name"]),
            ".desired" => text(&mcn["spec"]["configVersion"]["desired"]),
            ".current" => text(&mcn["status"]["configVersion"]["current"]),
            ".steps" => steps(),
            type_ => condition(type_),
        }))
        .collect()
}
