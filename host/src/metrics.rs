//! Prometheus metrics: one registry, every series prefixed `mco_`. Each
//! component registers its own families, the way linkerd's policy-controller
//! does (`register(&mut Registry) -> Self`); this struct only composes
//! them. Series about a job carry its registry entry name as `job` (`mcn`,
//! `bootImage.<platform>`), the same everywhere.

use prometheus_client::registry::Registry;

/// Every component's series, for the composition root to hand out.
#[derive(Clone, Debug)]
pub struct Metrics {
    /// API writes, watch decode failures (`mco-cluster`).
    pub cluster: mco_cluster::Metrics,
    /// Guest evaluations, swaps, fetches, shadow, rollouts, audits
    /// (`mco-registry`).
    pub registry: mco_registry::Metrics,
    /// Whether this replica holds the lease (`leadership`).
    pub leadership: crate::leadership::LeaseMetrics,
    /// Each job's ownership and observe-mode comparison (`ownership`).
    pub ownership: crate::ownership::OwnershipMetrics,
    /// The feature gates the host follows (`feature_gates`).
    pub feature_gates: crate::feature_gates::GateMetrics,
    /// The MachineConfigNode job (`mcn`).
    pub mcn: crate::mcn::metrics::Metrics,
    /// The boot image job (`bootimage`).
    pub bootimage: crate::bootimage::metrics::Metrics,
}

impl Metrics {
    pub fn register(registry: &mut Registry) -> Metrics {
        let sub = registry.sub_registry_with_prefix("mco");
        Metrics {
            leadership: crate::leadership::LeaseMetrics::register(sub),
            bootimage: crate::bootimage::metrics::Metrics::register(sub),
            registry: mco_registry::Metrics::register(sub),
            cluster: mco_cluster::Metrics::register(sub),
            mcn: crate::mcn::metrics::Metrics::register(sub),
            ownership: crate::ownership::OwnershipMetrics::register(sub),
            feature_gates: crate::feature_gates::GateMetrics::register(sub),
        }
    }
}
