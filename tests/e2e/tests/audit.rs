//! `mco-host guests audit --kubeconfig` against a real apiserver: the
//! cluster's current Nodes, pools and rendered MachineConfigs read (no
//! controller running, nothing written), every node decided by the
//! installed MCN guest and by a candidate that words the `Updated`
//! condition of a node mid-update differently, and the exact counts and
//! sample that gives.

use crate::support;

use anyhow::{Result, ensure};
use serde_json::json;

use support::controller::{audit_cluster, installed_guest};
use support::fixture::Fixture;
use support::wasm::with_text_replaced;

#[tokio::test]
async fn the_audit_reads_the_clusters_current_objects_and_compares_every_node() -> Result<()> {
    Fixture::run(audit_the_cluster).await
}

async fn audit_the_cluster(fx: &mut Fixture) -> Result<()> {
    fx.apply_golden_machineconfigs("reboot-05-drained").await?;
    fx.apply_pool("worker", "rendered-worker-b").await?;
    fx.apply_pool("worker-canary", "rendered-worker-b").await?;
    for i in 0..3 {
        fx.create_node(
            &format!("worker-{i}"),
            &["worker"],
            &[],
            "rendered-worker-b",
        )
        .await?;
    }
    for i in 0..2 {
        let name = format!("worker-canary-{i}");
        let roles = ["worker", "worker-canary"];
        fx.create_node(&name, &roles, &[], "rendered-worker-a")
            .await?;
        let update = [("desiredConfig", "rendered-worker-b"), ("state", "Working")];
        fx.patch_node(&name, &update, None).await?;
    }
    let installed = installed_guest("mcn.wasm")?;
    let candidate = with_text_replaced(&installed, " needs an update", " needs a refresh");
    let report = audit_cluster(&fx.admin_kubeconfig()?, "mcn", &candidate).await?;
    let counts = ["objects", "agree", "differ", "failed"].map(|k| report[k].clone());
    ensure!(
        counts == [json!(5), json!(3), json!(2), json!(0)],
        "counts {counts:?}: {report:#}"
    );
    let sampled: Vec<(&str, &str)> = report["sample"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| Some((d["object"].as_str()?, d["key"].as_str()?)))
        .collect();
    ensure!(
        sampled
            == [
                ("worker-canary-0", "Updated"),
                ("worker-canary-1", "Updated")
            ],
        "sample {sampled:?}: {report:#}"
    );
    ensure!(
        fx.mcn_names().await?.is_empty(),
        "the audit wrote MachineConfigNodes"
    );
    Ok(())
}
