//! `mco_node_phase_seconds{pool,phase}`: how long the slowest node of each
//! pool has been in its update phase, recomputed from the stored MCNs on a
//! timer, so that the stuck-update alerts need no per-node series.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::runtime::reflector::Store;

use super::crd::MachineConfigNode;
use super::metrics::Metrics;
use super::metrics::PoolPhaseLabels;
use super::phase;

/// How often `mco_node_phase_seconds` is recomputed: well below the
/// minutes the stuck alerts wait, cheap for thousands of MCNs.
const PHASE_GAUGE_PERIOD: Duration = Duration::from_secs(10);

/// Sets `mco_node_phase_seconds{pool,phase}` to the longest time any node
/// of the pool has been in that phase, from the MCNs as stored (every
/// replica exports it; the alerts take the max). Series of phases no node
/// is in any more are removed, so a finished drain stops counting. Returns
/// the label sets now exported.
fn export_phases(
    metrics: &Metrics,
    mcns: &[Arc<MachineConfigNode>],
    now: Timestamp,
    before: BTreeSet<PoolPhaseLabels>,
) -> BTreeSet<PoolPhaseLabels> {
    let mut longest: BTreeMap<PoolPhaseLabels, i64> = BTreeMap::new();
    for mcn in mcns {
        let Some(placement) = phase::degraded(mcn).or_else(|| phase::in_flight(mcn)) else {
            continue;
        };
        let labels = PoolPhaseLabels {
            pool: mcn.spec.pool.name.clone(),
            phase: placement.phase.to_string(),
        };
        let seconds = now
            .as_second()
            .saturating_sub(placement.since.as_second())
            .max(0);
        let entry = longest.entry(labels).or_insert(0);
        *entry = (*entry).max(seconds);
    }
    for gone in before.iter().filter(|l| !longest.contains_key(*l)) {
        metrics.mcn.node_phase_seconds.remove(gone);
    }
    for (labels, seconds) in &longest {
        metrics
            .mcn
            .node_phase_seconds
            .get_or_create(labels)
            .set(*seconds);
    }
    longest.into_keys().collect()
}

/// Exports the gauge every [`PHASE_GAUGE_PERIOD`] from the MCNs in `mcns`,
/// until dropped.
pub async fn export(metrics: Metrics, mcns: Store<MachineConfigNode>) {
    let mut ticks = tokio::time::interval(PHASE_GAUGE_PERIOD);
    let mut exported = BTreeSet::new();
    loop {
        ticks.tick().await;
        exported = export_phases(&metrics, &mcns.state(), Timestamp::now(), exported);
    }
}

#[cfg(test)]
mod tests {
    use prometheus_client::registry::Registry;

    use super::*;

    fn mcn(name: &str, pool: &str, json: serde_json::Value) -> Arc<MachineConfigNode> {
        let mut m: MachineConfigNode = serde_json::from_value(serde_json::json!({
            "apiVersion": "machineconfiguration.openshift.io/v1",
            "kind": "MachineConfigNode",
            "metadata": {"name": name},
            "spec": {"node": {"name": name}, "pool": {"name": pool}, "configVersion": {"desired": "rendered-b"}},
            "status": {"conditions": json},
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        m.metadata.name = Some(name.into());
        Arc::new(m)
    }

    fn cond(type_: &str, status: &str, at: &str) -> serde_json::Value {
        serde_json::json!({"type": type_, "status": status, "reason": "R", "message": "m", "lastTransitionTime": at})
    }

    #[test]
    fn phase_gauge_takes_the_longest_and_drops_finished_phases() {
        let mut registry = Registry::default();
        let metrics = crate::run_command::registered_metrics(&mut registry);
        let draining = |name, at| {
            mcn(
                name,
                "worker",
                serde_json::json!([
                    cond("Updated", "False", "2026-01-01T00:00:00Z"),
                    cond("Cordoned", "True", "2026-01-01T00:00:00Z"),
                    cond("Drained", "Unknown", at),
                ]),
            )
        };
        let now: Timestamp = "2026-01-01T01:00:00Z".parse().unwrap_or_default();
        let exported = export_phases(
            &metrics,
            &[
                draining("a", "2026-01-01T00:30:00Z"),
                draining("b", "2026-01-01T00:10:00Z"),
            ],
            now,
            BTreeSet::new(),
        );
        let labels = PoolPhaseLabels {
            pool: "worker".into(),
            phase: "Draining".into(),
        };
        assert_eq!(
            metrics.mcn.node_phase_seconds.get_or_create(&labels).get(),
            3000
        );
        let done = mcn(
            "a",
            "worker",
            serde_json::json!([cond("Updated", "True", "2026-01-01T00:50:00Z")]),
        );
        let exported = export_phases(&metrics, &[done], now, exported);
        assert!(exported.is_empty());
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap_or_default();
        assert!(!text.contains("phase=\"Draining\""), "{text}");
    }
}
