//! What the MachineConfigNode job counts: its own series ([`McnMetrics`],
//! registered under the prefix the caller picks) and, beside them, the
//! cluster plumbing's and the registry's, which the host registers once
//! ([`Metrics`]).

use mco_cluster::metrics::registered;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// A pool and an update phase (`mcn::phase::Phase`): bounded by
/// pools × 10 phases, never per node.
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub struct PoolPhaseLabels {
    pub pool: String,
    pub phase: String,
}

/// The series the job's controller writes to: the shared components' and
/// its own.
#[derive(Clone, Debug)]
pub struct Metrics {
    pub cluster: mco_cluster::Metrics,
    pub registry: mco_registry::Metrics,
    pub mcn: McnMetrics,
}

/// Failed reconciles and how long nodes stay in a phase.
#[derive(Clone, Debug, Default)]
pub struct McnMetrics {
    pub reconcile_errors: Counter,
    /// The longest time a node of the pool has been in its current phase.
    pub node_phase_seconds: Family<PoolPhaseLabels, Gauge>,
}

impl McnMetrics {
    /// Registers the families in `registry` (already prefixed by the caller).
    pub fn register(registry: &mut Registry) -> McnMetrics {
        McnMetrics {
            reconcile_errors: registered(
                registry,
                "reconcile_errors",
                "Reconciles that failed and were requeued",
            ),
            node_phase_seconds: registered(
                registry,
                "node_phase_seconds",
                "Longest time a node of the pool has spent in its current update phase (Pending, Preparing, Cordoning, Draining, Applying, Rebooting, PostAction, Resuming, Uncordoning, Degraded)",
            ),
        }
    }
}
