//! Prometheus metrics: one registry, every series prefixed `mco_`. Each
//! component registers its own families, the way linkerd's policy-controller
//! does (`register(&mut Registry) -> Self`); this struct composes the
//! job-free ones, which every job writes to beside its own (each job
//! registers those when `run` asks it what it starts,
//! [`Job::runner`](crate::jobs::Job::runner)). Series about a job carry
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
/// registered; `tests::every_family_keeps_its_name_and_help` notices if
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every family's name and HELP text (prometheus-client adds the final
    /// period) as `mco-host run` registered them before the metrics were
    /// split per component: a family renamed, re-described or lost from
    /// the composition shows here.
    const FAMILIES: &str = r#"api_writes Writes to the Kubernetes API by kind.
bootimage_ec2_reads EC2 reads for AWS MachineSets (who owns the AMI; a marketplace product's AMIs), by job and result (read; unreachable, or denied: EC2 refused the credentials; both: the static AMI lists decided).
bootimage_hot_loops Boot image patches refused because another writer keeps reverting them.
bootimage_machinesets Enrolled MachineSets by the result of the last boot image pass (patched, current, skipped, degraded).
bootimage_passes_stopped Boot image passes stopped where they were (vCenter imports included) because this replica lost the lease.
bootimage_patches Boot image patches applied to MachineSets.
bootimage_skew_enforcement_ocp_version 1 for the OCP version whose boot images the skew enforcement record (MachineConfiguration status.bootImageSkewEnforcementStatus.automatic) says the cluster uses, by outcome of the last pass (recorded, reset).
bootimage_template_imports vSphere template imports the writer ran, by job and result (imported; current: the folder's template already held the release, imported earlier in the pass for another MachineSet; failed).
bootimage_vcenter_reads vCenter reads for vSphere MachineSets (the templates they may use), by job and result (read, failed).
evaluation_cpu_seconds CPU time spent in guest evaluations, by job and module (role active, or candidate).
evaluation_duration_seconds Time of one guest evaluation (fresh instance and call).
evaluations Guest evaluations by job and result.
feature_gate 1 when a feature gate the host follows is on, 0 when off: FeatureGate cluster for the current version, else the Default feature set.
guest_audits Audits of a candidate the lease holder answered for MachineConfigGuest spec.audit, by registry entry and result (complete, failed).
guest_decisions Decisions a job took, by registry entry and the module that made them (role active, or candidate during a rollout's Canary and Active stages).
guest_failures Guest failures by kind (deadline, memory_limit, stack_overflow, trap, invalid_output).
guest_fetches OCI pulls of guest modules by registry entry and result (success, manifest_failure, download_failure, digest_mismatch, refused, secret_failure, signature_failure, key_failure, too_large, timeout).
guest_info 1 for the module serving (role active) or shadowing (role candidate) each registry entry.
guest_rollbacks Candidate rollouts rolled back, by registry entry and reason (CandidateFailed, TooManyDifferences).
guest_rollout_stage 1 for the stage (Shadow, Canary, Active, RolledBack) of each registry entry's candidate rollout (MachineConfigGuest spec.rollout).
guest_swaps Guest module changes by registry entry and result (loaded, swapped, removed, failed).
leader 1 while this replica holds the lease and writes.
lease_step_downs Times this replica stopped holding the lease, by reason (lease_manager: the lease manager saw another holder or released it; renewal_overdue: no renewal seen within the lease duration; held_by_other: the Lease names another holder).
node_phase_seconds Longest time a node of the pool has spent in its current update phase (Pending, Preparing, Cordoning, Draining, Applying, Rebooting, PostAction, Resuming, Uncordoning, Degraded).
observed Observe mode: objects whose derived decision agrees or differs with what the cluster holds, by job and key (condition type or field), as of the last comparison.
observed_difference Observe mode: 1 for each difference in the bounded, sorted sample (by job, object and key).
ownership 1 for each job's ownership mode (observe, own) and state (starting, writing, refused: the Machine Config Operator writes the same objects, observing).
reconcile_errors Reconciles that failed and were requeued.
shadow_evaluations Candidate evaluations compared with the active module's, by registry entry and result (agree, differ, failed).
watch_decode_failures Objects a watch skipped because they could not be decoded (nested too deep, fields of the wrong type), by kind."#;

    /// The families `run` registers: the job-free ones and every job's,
    /// through the hook `run` asks each job with (its flags at their
    /// defaults).
    #[test]
    fn every_family_keeps_its_name_and_help() {
        let registry = crate::run::registered_at_defaults().unwrap_or_else(|e| panic!("{e}"));
        assert!(format!("{registry:?}").contains("Prefix(\"mco\")"));
        let expected: Vec<&str> = FAMILIES.lines().collect();
        let listed: Vec<String> = (families(&registry).iter())
            .map(|family| format!("{} {}", family.name, family.help))
            .collect();
        assert_eq!(listed, expected);
    }
}
