//! Prometheus metrics: one registry, every series prefixed `mco_`. Each
//! component registers its own families, the way linkerd's policy-controller
//! does (`register(&mut Registry) -> Self`); this struct composes the
//! job-free ones, which every job writes to beside its own (each job
//! registers those when `run` asks it what it starts,
//! [`Run`](crate::jobs::Run)). Series about a job carry
//! its registry entry name as `job` (`mcn`, `bootImage.<platform>`), the
//! same everywhere.

use prometheus_client::registry::Registry;

use crate::feature_gates::GateMetrics;
use crate::leadership::LeaseMetrics;
use crate::ownership::OwnershipMetrics;

/// The registry every family of the host is registered in: `registry`'s,
/// prefixed `mco`.
pub fn prefixed(registry: &mut Registry) -> &mut Registry {
    registry.sub_registry_with_prefix("mco")
}

/// The job-free components' series, for the composition root to hand out.
#[derive(Clone, Debug)]
pub struct Metrics {
    /// API writes, watch decode failures (`mco-cluster`).
    pub cluster: mco_cluster::Metrics,
    /// Guest evaluations, swaps, fetches, shadow, rollouts, audits
    /// (`mco-registry`).
    pub registry: mco_registry::Metrics,
    /// Whether this replica holds the lease (`leadership`).
    pub leadership: LeaseMetrics,
    /// Each job's ownership and observe-mode comparison (`ownership`).
    pub ownership: OwnershipMetrics,
    /// The feature gates the host follows (`feature_gates`).
    pub feature_gates: GateMetrics,
}

impl Metrics {
    /// Registers the families in `registry` ([`prefixed`] already).
    pub fn register(registry: &mut Registry) -> Metrics {
        Metrics {
            leadership: LeaseMetrics::register(registry),
            registry: mco_registry::Metrics::register(registry),
            cluster: mco_cluster::Metrics::register(registry),
            ownership: OwnershipMetrics::register(registry),
            feature_gates: GateMetrics::register(registry),
        }
    }
}

/// A family as registered: its name, without the `mco_` prefix, and its
/// HELP text.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Family {
    pub name: String,
    pub help: String,
}

/// Every family of `registry`, sorted by name: what the generated metrics
/// reference lists. Read from the registry's descriptors (its `Debug`
/// form), because prometheus-client encodes a family on `/metrics` only
/// once it holds a series and has no other way to list what was
/// registered; `mco-host`'s `every_family_keeps_its_name_and_help` notices if
/// that form changes.
pub fn families(registry: &Registry) -> Vec<Family> {
    let described = format!("{registry:?}");
    let mut families: Vec<Family> = (described.split("Descriptor { name: \"").skip(1))
        .filter_map(|rest| {
            let (name, rest) = rest.split_once("\", help: \"")?;
            let (help, _) = rest.split_once("\", unit: ")?;
            Some(Family {
                name: name.to_owned(),
                help: help.to_owned(),
            })
        })
        .collect();
    families.sort_unstable();
    families
}
