//! `mco-host run` follows the cluster's FeatureGate `cluster`, against a
//! real kube-apiserver and etcd, as the ServiceAccount with the RBAC in
//! `deploy/`:
//!
//! - gate `ImageModeStatusReporting` off: an image-mode node's MCN has no
//!   `configImage` and the gate-off condition set (`AppliedFilesAndOS`);
//! - the gate turned on: the stored MCN is migrated as upstream's
//!   controller does (`AppliedFilesAndOS` goes, `AppliedFiles`,
//!   `AppliedOSImage` and `ImagePulledFromRegistry` come as not yet
//!   occurred, the other conditions keep their transition times), it gains
//!   `configImage`, and a node created afterwards gets the gate-on set.

use crate::support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};
use tokio::time::sleep;

use support::fixture::Fixture;

const POLL: Duration = Duration::from_millis(200);
const CONVERGE: Duration = Duration::from_secs(30);
const CONFIG: &str = "rendered-worker-a";
const IMAGE_MODE: &str = support::fixture::IMAGE_MODE;
const GATE_OFF_TYPES: [&str; 14] = [
    "UpdatePrepared",
    "UpdateExecuted",
    "UpdatePostActionComplete",
    "UpdateComplete",
    "Resumed",
    "Drained",
    "AppliedFilesAndOS",
    "Cordoned",
    "RebootedNode",
    "Updated",
    "Uncordoned",
    "NodeDegraded",
    "PinnedImageSetsDegraded",
    "PinnedImageSetsProgressing",
];
const GATE_ON_ONLY: [&str; 3] = ["AppliedFiles", "AppliedOSImage", "ImagePulledFromRegistry"];

fn image() -> String {
    format!("quay.io/openshift/os-layered@sha256:{}", "ab".repeat(32))
}

/// A node done on [`CONFIG`], in image mode on [`image`].
async fn image_mode_node(fx: &Fixture, name: &str) -> Result<()> {
    fx.create_node(name, &["worker"], &[], CONFIG).await?;
    let image = image();
    fx.patch_node(
        name,
        &[("currentImage", &image), ("desiredImage", &image)],
        None,
    )
    .await?;
    Ok(())
}

/// The MCN's conditions by type: (status, reason, lastTransitionTime).
fn conditions(mcn: &Value) -> BTreeMap<String, (String, String, String)> {
    mcn["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let text = |key: &str| c[key].as_str().unwrap_or_default().to_owned();
            (
                text("type"),
                (text("status"), text("reason"), text("lastTransitionTime")),
            )
        })
        .collect()
}

/// Polls `name`'s MCN until `done` says nothing is missing (`Ok(())`);
/// the last complaint is the error after [`CONVERGE`].
async fn wait_mcn(
    fx: &mut Fixture,
    name: &str,
    done: impl Fn(&Value) -> Result<()>,
) -> Result<Value> {
    let started = Instant::now();
    loop {
        let last = match fx.mcns().get_opt(name).await {
            Ok(Some(object)) => {
                let mcn = serde_json::to_value(object)?;
                match done(&mcn) {
                    Ok(()) => return Ok(mcn),
                    Err(why) => format!("{why:#}: {}", mcn["status"]),
                }
            }
            Ok(None) => "no MCN yet".to_owned(),
            Err(err) => err.to_string(),
        };
        if started.elapsed() > CONVERGE {
            bail!("MCN {name} after {CONVERGE:?}: {last}");
        }
        fx.check_controllers()?;
        sleep(POLL).await;
    }
}

fn gate_off_shape(mcn: &Value) -> Result<()> {
    let found = conditions(mcn);
    let types: Vec<&str> = found.keys().map(String::as_str).collect();
    let mut expected = GATE_OFF_TYPES.to_vec();
    expected.sort_unstable();
    ensure!(types == expected, "condition types {types:?}");
    ensure!(
        found.get("Updated").is_some_and(|c| c.0 == "True"),
        "Updated is not True"
    );
    ensure!(
        mcn["spec"].get("configImage").is_none() && mcn["status"].get("configImage").is_none(),
        "configImage written with the gate off: spec {}",
        mcn["spec"]
    );
    Ok(())
}

fn gate_on_shape(mcn: &Value) -> Result<()> {
    let found = conditions(mcn);
    ensure!(
        !found.contains_key("AppliedFilesAndOS"),
        "AppliedFilesAndOS still there"
    );
    for kind in GATE_ON_ONLY {
        let condition = found.get(kind).context(kind)?;
        ensure!(
            (condition.0.as_str(), condition.1.as_str()) == ("False", "NotYetOccurred"),
            "{kind}: {condition:?}"
        );
    }
    ensure!(found.len() == 16, "{} conditions", found.len());
    let image = image();
    ensure!(
        mcn["spec"]["configImage"]["desiredImage"] == image.as_str(),
        "spec.configImage: {}",
        mcn["spec"]
    );
    ensure!(
        mcn["status"]["configImage"] == json!({"currentImage": image, "desiredImage": image}),
        "status.configImage: {}",
        mcn["status"]["configImage"]
    );
    Ok(())
}

async fn gate_metric(fx: &Fixture, c: usize) -> Result<f64> {
    Ok(fx.controllers[c]
        .metrics()
        .await?
        .sum("mco_feature_gate", &[("gate", IMAGE_MODE)]))
}

#[tokio::test]
async fn image_mode_status_reporting_follows_the_feature_gate() -> Result<()> {
    Fixture::run(async |fx: &mut Fixture| {
        fx.set_image_mode(false).await?;
        fx.apply_pool("worker", CONFIG).await?;
        fx.apply_machineconfig(CONFIG).await?;
        image_mode_node(fx, "worker-0").await?;
        let c = fx
            .start_controller("mco-host-0", &["--resync", "1s"])
            .await?;

        let before = wait_mcn(fx, "worker-0", gate_off_shape).await?;
        ensure!(
            gate_metric(fx, c).await? == 0.0,
            "mco_feature_gate is not 0"
        );

        fx.set_image_mode(true).await?;
        let after = wait_mcn(fx, "worker-0", gate_on_shape).await?;
        // The migration keeps what was there: the other conditions, with
        // their transition times.
        let (old, new) = (conditions(&before), conditions(&after));
        for (kind, condition) in &old {
            if kind != "AppliedFilesAndOS" {
                ensure!(
                    new.get(kind) == Some(condition),
                    "{kind} changed in the migration: {condition:?} -> {:?}",
                    new.get(kind)
                );
            }
        }
        ensure!(
            gate_metric(fx, c).await? == 1.0,
            "mco_feature_gate is not 1"
        );

        // Written with the gate on from the start.
        image_mode_node(fx, "worker-1").await?;
        wait_mcn(fx, "worker-1", gate_on_shape).await?;
        Ok(())
    })
    .await
}

/// What a Default cluster has: upstream's Default MachineConfigNode CRD
/// (no `configImage`) and no FeatureGate object. An image-mode node's MCN
/// is written, with the gate-off set and no `configImage`; before the
/// gates were followed, the apiserver refused it.
#[tokio::test]
async fn a_default_cluster_takes_an_image_mode_nodes_mcn() -> Result<()> {
    Fixture::run_on(mco_e2e::FeatureSet::Default, async |fx: &mut Fixture| {
        fx.apply_pool("worker", CONFIG).await?;
        fx.apply_machineconfig(CONFIG).await?;
        image_mode_node(fx, "worker-0").await?;
        let c = fx
            .start_controller("mco-host-0", &["--resync", "1s"])
            .await?;
        wait_mcn(fx, "worker-0", gate_off_shape).await?;
        ensure!(
            gate_metric(fx, c).await? == 0.0,
            "mco_feature_gate is not 0"
        );
        let errors = fx.controllers[c]
            .metrics()
            .await?
            .sum("mco_reconcile_errors_total", &[]);
        ensure!(errors == 0.0, "{errors} reconcile errors");
        Ok(())
    })
    .await
}
