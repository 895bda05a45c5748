//! One bad object is one bad object: a MachineSet and a MachineConfig
//! nested deeper than the host decodes (and deeper than serde_json's 128
//! levels, which used to fail their whole list) are stored by the real
//! apiserver; the host still becomes ready, both jobs still decide and
//! write for the good objects, and each deep one is reported by name (a
//! Warning Event on it, `mco_watch_decode_failures_total`, and for the
//! MachineSet the boot image job's Degraded condition); the boot image
//! audit of the cluster compares the good MachineSet alone.

use crate::support;

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use kube::api::{ApiResource, PostParams};
use kube::core::Request;
use mco_e2e::openshift;
use serde_json::{Value, json};
use tokio::time::sleep;

use support::bootimages::{CONVERGE, Cluster, MAPI, MachineSetSpec, NEW, Platform};
use support::controller::{audit_cluster, installed_guest};

const POLL: Duration = Duration::from_millis(200);
/// Past serde_json's 128 levels from the list's root, and the host's 100
/// from the object's.
const LEVELS: usize = 200;
/// What stands for the deep value in an object's JSON text.
const DEEP: &str = "\"deep-value\"";

/// `object` as JSON text, `DEEP` replaced by `LEVELS` nested objects (a
/// `Value` that deep is built as text: the tests' own client decodes no
/// deeper than 128 levels either).
fn deep_text(object: &Value) -> String {
    let nested = format!("{}1{}", r#"{"a":"#.repeat(LEVELS), "}".repeat(LEVELS));
    object.to_string().replace(DEEP, &nested)
}

/// Creates `object` (as text, see [`deep_text`]) and checks that the
/// apiserver stored it whole.
async fn create_deep(
    cluster: &Cluster,
    ar: &ApiResource,
    namespace: Option<&str>,
    object: &Value,
) -> Result<()> {
    let path = match namespace {
        Some(ns) => format!("/apis/{}/namespaces/{ns}/{}", ar.api_version, ar.plural),
        None => format!("/apis/{}/{}", ar.api_version, ar.plural),
    };
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let request = Request::new(&path);
    let create = request.create(&PostParams::default(), deep_text(object).into_bytes())?;
    cluster
        .admin()
        .request_text(create)
        .await
        .with_context(|| format!("creating the deep {} {name}", ar.kind))?;
    let stored = cluster
        .admin()
        .request_text(request.get(name, &Default::default())?)
        .await?;
    let levels = stored.matches(r#"{"a":"#).count();
    ensure!(
        levels == LEVELS,
        "the apiserver kept {levels} of the {LEVELS} levels of {} {name}",
        ar.kind
    );
    Ok(())
}

/// Waits until `check` holds, saying `what` it waited for if it never does.
async fn until<F>(what: &str, mut check: F) -> Result<()>
where
    F: AsyncFnMut() -> Result<bool>,
{
    let started = Instant::now();
    while !check().await? {
        if started.elapsed() > CONVERGE {
            bail!("{what} after {CONVERGE:?}");
        }
        sleep(POLL).await;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deep_machineset_and_machineconfig_are_reported_and_the_rest_goes_on() -> Result<()> {
    let good = MachineSetSpec::new("good");
    let mut cluster = Cluster::start(Platform::Aws, &[MachineSetSpec::new("good")]).await?;
    let result = async {
        // The boot image job's objects: a deep MachineSet beside a good one.
        let mut deep_ms = good.object(Platform::Aws);
        deep_ms["metadata"]["name"] = json!("deep");
        deep_ms["spec"]["template"]["spec"]["providerSpec"]["value"]["deep"] = json!("deep-value");
        create_deep(&cluster, &openshift::machine_set(), Some(MAPI), &deep_ms).await?;
        // The MCN job's: a pool, its rendered config and a node on it, and a
        // deep MachineConfig beside them.
        let fx = &cluster.fx;
        fx.apply_machineconfig("rendered-worker-a").await?;
        fx.apply_pool("worker", "rendered-worker-a").await?;
        fx.create_node("worker-0", &["worker"], &[], "rendered-worker-a")
            .await?;
        let mc = openshift::machine_config();
        let deep_mc = json!({
            "apiVersion": mc.api_version, "kind": mc.kind,
            "metadata": {"name": "99-deep"},
            "spec": {"config": {"ignition": {"version": "3.4.0"}, "deep": "deep-value"}},
        });
        create_deep(&cluster, &mc, None, &deep_mc).await?;

        // Ready (`start_controller` waits for /readyz and the lease): every
        // watch listed, the deep objects' included.
        let host = cluster.start_controller("a", &[]).await?;

        // The MCN job writes the good node's MachineConfigNode.
        let mcns = cluster.fx.mcns();
        until(
            "no MachineConfigNode worker-0 on rendered-worker-a",
            async || {
                let mcn = mcns.get_opt("worker-0").await?;
                Ok(mcn.is_some_and(|mcn| {
                    mcn.data["spec"]["configVersion"]["desired"] == "rendered-worker-a"
                }))
            },
        )
        .await?;
        // The boot image job moves the good MachineSet to the new stream.
        cluster.set_stream(NEW).await?;
        let want = cluster.expected_image(NEW, "x86_64");
        cluster.wait_image("good", &want).await?;

        // Each deep one is reported by name.
        let note = |kind: &str, name: &str| {
            format!("DecodeFailed: {kind} {name} is nested more than 100 levels deep")
        };
        let ms_note = note("MachineSet", "openshift-machine-api/deep");
        until(
            &format!("no Event {ms_note:?} on MachineSet deep"),
            async || {
                let events = cluster.events_in(MAPI, "deep").await?;
                Ok(events.iter().any(|e| e.starts_with(&ms_note)))
            },
        )
        .await?;
        let mc_note = note("MachineConfig", "99-deep");
        until(
            &format!("no Event {mc_note:?} on MachineConfig 99-deep"),
            async || {
                let events = cluster.events_in("default", "99-deep").await?;
                Ok(events.iter().any(|e| e.starts_with(&mc_note)))
            },
        )
        .await?;
        let metrics = cluster.metrics(host).await?;
        for kind in ["MachineSet", "MachineConfig"] {
            let failures = metrics.sum("mco_watch_decode_failures_total", &[("kind", kind)]);
            ensure!(failures >= 1.0, "no decode failure counted for {kind}");
        }
        // The boot image job names it where it reports the pass.
        let conditions = cluster.conditions().await?;
        let degraded = &conditions["BootImageUpdateDegraded"];
        ensure!(
            degraded["status"] == "True"
                && degraded["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("deep is nested more than 100 levels deep")),
            "the Degraded condition does not name the deep MachineSet: {degraded}"
        );
        // The boot image audit lists the MachineSets as the watch does:
        // the deep one is left out, the good one audited.
        let kubeconfig = cluster.fx.admin_kubeconfig()?;
        let module = installed_guest("bootimage-aws.wasm")?;
        let report = audit_cluster(&kubeconfig, "bootImage.AWS", &module).await?;
        ensure!(
            report["objects"] == 1 && report["agree"] == 1,
            "the audit must compare the good MachineSet alone: {report:#}"
        );
        Ok(())
    }
    .await;
    cluster.fx.finish(result)
}
