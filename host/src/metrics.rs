//! Prometheus metrics: one registry, every series prefixed `mco_`. Series
//! about a job carry its registry entry name as `job` (`mcn`,
//! `bootImage.<platform>`), the same everywhere.

use prometheus_client::encoding::EncodeLabelSet;
use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// The cluster plumbing's label set, shared by the host's per-kind series.
pub use mco_cluster::metrics::KindLabels;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    pub result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabels {
    pub reason: String,
}

/// The OCP version the boot image skew record claims, and why.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SkewLabels {
    pub ocp_version: String,
    /// `recorded` (a clean pass) or `reset` (skips: the install version).
    pub outcome: String,
}

/// A registry entry (`mcn`, `bootImage.<platform>`) and what happened.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct JobResultLabels {
    pub job: String,
    pub result: String,
}

impl JobResultLabels {
    pub fn new(job: impl Into<String>, result: impl Into<String>) -> JobResultLabels {
        JobResultLabels {
            job: job.into(),
            result: result.into(),
        }
    }
}

/// Counts one `result` of `job` in a counter family keyed by both.
pub fn count(family: &Family<JobResultLabels, Counter>, job: &str, result: &str) {
    family
        .get_or_create(&JobResultLabels::new(job, result))
        .inc();
}

/// The module serving a registry entry (`role` `active`) or shadowing it
/// (`candidate`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub struct GuestInfoLabels {
    pub job: String,
    pub role: String,
    pub module: String,
    pub sha256: String,
}

/// A registry entry and the stage its candidate's rollout is in.
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub struct RolloutStageLabels {
    pub job: String,
    pub stage: String,
}

/// A registry entry and why its rollout rolled back.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct JobReasonLabels {
    pub job: String,
    pub reason: String,
}

/// A registry entry and the module a decision came from (`active`,
/// `candidate`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct JobRoleLabels {
    pub job: String,
    pub role: String,
}

impl JobRoleLabels {
    pub fn new(job: &str, candidate: bool) -> JobRoleLabels {
        JobRoleLabels {
            job: job.into(),
            role: if candidate { "candidate" } else { "active" }.into(),
        }
    }
}

/// A pool and an update phase (`mcn::phase::Phase`): bounded by
/// pools × 10 phases, never per node.
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub struct PoolPhaseLabels {
    pub pool: String,
    pub phase: String,
}

/// A feature gate some job follows (`feature_gates`): three series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct GateLabels {
    pub gate: String,
}

/// A job, its ownership mode and what it is doing (`ownership::State`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OwnershipLabels {
    pub job: String,
    pub mode: String,
    pub state: String,
}

/// A job, a compared key (condition type, field) and `agree`/`differ`:
/// bounded by the keys a job compares, never per object.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ObservedLabels {
    pub job: String,
    pub key: String,
    pub result: String,
}

/// One difference of a job's bounded sample (`ownership::SAMPLE_LIMIT`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ObservedSampleLabels {
    pub job: String,
    pub object: String,
    pub key: String,
}

#[derive(Clone)]
pub struct Metrics {
    pub leader: Gauge,
    /// Times this replica stopped holding the lease, by reason
    /// (`leadership`): `lease_manager` (it saw another holder or released),
    /// `renewal_overdue`, `held_by_other`.
    pub lease_step_downs: Family<ReasonLabels, Counter>,
    /// Boot image passes dropped where they were because the lease was lost.
    pub bootimage_passes_stopped: Counter,
    /// By job and result: the guest's decision (`apply`, `skip`, `error`,
    /// `patch`, `noop`) or `failed` (trapped, timed out, invalid output).
    pub evaluations: Family<JobResultLabels, Counter>,
    pub evaluation_seconds: Histogram,
    /// CPU time of guest evaluations, by job and module (`role`: `active`,
    /// or `candidate` for a candidate's runs on the same objects). Unlike
    /// the wall-clock histogram it excludes time the thread waited for a
    /// core, so it says what the guests cost on a busy node, and what a
    /// candidate will cost before it serves.
    pub evaluation_cpu_seconds: Family<JobRoleLabels, Counter<f64, AtomicU64>>,
    pub guest_failures: Family<KindLabels, Counter>,
    /// The cluster plumbing's series: API writes, watch decode failures.
    pub cluster: mco_cluster::Metrics,
    pub reconcile_errors: Counter,
    /// Enrolled MachineSets by the result of the last boot image pass.
    pub bootimage_machinesets: Family<ResultLabels, Gauge>,
    pub bootimage_patches: Counter,
    pub bootimage_hot_loops: Counter,
    /// 1 for the version `status.bootImageSkewEnforcementStatus.automatic`
    /// claims after the last pass that maintained it.
    pub bootimage_skew: Family<SkewLabels, Gauge>,
    /// vSphere: vCenter reads for MachineSets (`read`, `failed`) and
    /// template imports (`imported`, `failed`), by job.
    pub bootimage_vcenter_reads: Family<JobResultLabels, Counter>,
    pub bootimage_template_imports: Family<JobResultLabels, Counter>,
    /// AWS: EC2 reads for MachineSets (`read`, `unreachable`: the static
    /// AMI lists decided), by job.
    pub bootimage_ec2_reads: Family<JobResultLabels, Counter>,
    pub guest_swaps: Family<JobResultLabels, Counter>,
    /// OCI pulls that reached a registry, by job and result.
    pub guest_fetches: Family<JobResultLabels, Counter>,
    pub guest_info: Family<GuestInfoLabels, Gauge>,
    pub shadow_evaluations: Family<JobResultLabels, Counter>,
    /// 1 for the stage of each declared rollout.
    pub guest_rollout_stage: Family<RolloutStageLabels, Gauge>,
    pub guest_rollbacks: Family<JobReasonLabels, Counter>,
    /// Audits answered for MachineConfigGuest `spec.audit`.
    pub guest_audits: Family<JobResultLabels, Counter>,
    /// Decisions taken (written, or compared in observe mode), by the
    /// module that made them.
    pub guest_decisions: Family<JobRoleLabels, Counter>,
    /// The longest time a node of the pool has been in its current phase.
    pub node_phase_seconds: Family<PoolPhaseLabels, Gauge>,
    /// 1 for each job's ownership mode and state.
    pub ownership: Family<OwnershipLabels, Gauge>,
    /// 1 when a gate the host follows is on, 0 when off.
    pub feature_gate: Family<GateLabels, Gauge>,
    /// Observe mode: objects agreeing or differing with the cluster per key.
    pub observed: Family<ObservedLabels, Gauge>,
    /// Observe mode: 1 per difference in the bounded sample.
    pub observed_sample: Family<ObservedSampleLabels, Gauge>,
}

impl Metrics {
    pub fn register(registry: &mut Registry) -> Metrics {
        let sub = registry.sub_registry_with_prefix("mco");
        let metrics = Metrics {
            leader: Gauge::default(),
            lease_step_downs: Family::default(),
            bootimage_passes_stopped: Counter::default(),
            evaluations: Family::default(),
            evaluation_seconds: Histogram::new(exponential_buckets(10e-6, 4.0, 10)),
            evaluation_cpu_seconds: Family::default(),
            guest_failures: Family::default(),
            cluster: mco_cluster::Metrics::register(sub),
            reconcile_errors: Counter::default(),
            bootimage_machinesets: Family::default(),
            bootimage_patches: Counter::default(),
            bootimage_hot_loops: Counter::default(),
            bootimage_skew: Family::default(),
            bootimage_vcenter_reads: Family::default(),
            bootimage_ec2_reads: Family::default(),
            bootimage_template_imports: Family::default(),
            guest_swaps: Family::default(),
            guest_fetches: Family::default(),
            guest_info: Family::default(),
            shadow_evaluations: Family::default(),
            guest_rollout_stage: Family::default(),
            guest_rollbacks: Family::default(),
            guest_audits: Family::default(),
            guest_decisions: Family::default(),
            node_phase_seconds: Family::default(),
            ownership: Family::default(),
            feature_gate: Family::default(),
            observed: Family::default(),
            observed_sample: Family::default(),
        };
        sub.register(
            "leader",
            "1 while this replica holds the lease and writes",
            metrics.leader.clone(),
        );
        sub.register(
            "lease_step_downs",
            "Times this replica stopped holding the lease, by reason (lease_manager: the lease manager saw another holder or released it; renewal_overdue: no renewal seen within the lease duration; held_by_other: the Lease names another holder)",
            metrics.lease_step_downs.clone(),
        );
        sub.register(
            "bootimage_passes_stopped",
            "Boot image passes stopped where they were (vCenter imports included) because this replica lost the lease",
            metrics.bootimage_passes_stopped.clone(),
        );
        sub.register(
            "evaluations",
            "Guest evaluations by job and result",
            metrics.evaluations.clone(),
        );
        sub.register(
            "evaluation_duration_seconds",
            "Time of one guest evaluation (fresh instance and call)",
            metrics.evaluation_seconds.clone(),
        );
        sub.register(
            "evaluation_cpu_seconds",
            "CPU time spent in guest evaluations, by job and module (role active, or candidate)",
            metrics.evaluation_cpu_seconds.clone(),
        );
        sub.register(
            "guest_failures",
            "Guest failures by kind (deadline, memory_limit, stack_overflow, trap, invalid_output)",
            metrics.guest_failures.clone(),
        );
        sub.register(
            "reconcile_errors",
            "Reconciles that failed and were requeued",
            metrics.reconcile_errors.clone(),
        );
        sub.register(
            "bootimage_machinesets",
            "Enrolled MachineSets by the result of the last boot image pass (patched, current, skipped, degraded)",
            metrics.bootimage_machinesets.clone(),
        );
        sub.register(
            "bootimage_patches",
            "Boot image patches applied to MachineSets",
            metrics.bootimage_patches.clone(),
        );
        sub.register(
            "bootimage_hot_loops",
            "Boot image patches refused because another writer keeps reverting them",
            metrics.bootimage_hot_loops.clone(),
        );
        sub.register(
            "bootimage_vcenter_reads",
            "vCenter reads for vSphere MachineSets (the templates they may use), by job and result (read, failed)",
            metrics.bootimage_vcenter_reads.clone(),
        );
        sub.register(
            "bootimage_ec2_reads",
            "EC2 reads for AWS MachineSets (who owns the AMI; a marketplace product's AMIs), by job and result (read; unreachable: the static AMI lists decided)",
            metrics.bootimage_ec2_reads.clone(),
        );
        sub.register(
            "bootimage_template_imports",
            "vSphere template imports the writer ran, by job and result (imported; current: the folder's template already held the release, imported earlier in the pass for another MachineSet; failed)",
            metrics.bootimage_template_imports.clone(),
        );
        sub.register(
            "bootimage_skew_enforcement_ocp_version",
            "1 for the OCP version whose boot images the skew enforcement record (MachineConfiguration status.bootImageSkewEnforcementStatus.automatic) says the cluster uses, by outcome of the last pass (recorded, reset)",
            metrics.bootimage_skew.clone(),
        );
        sub.register(
            "guest_swaps",
            "Guest module changes by registry entry and result (loaded, swapped, removed, failed)",
            metrics.guest_swaps.clone(),
        );
        sub.register(
            "guest_fetches",
            "OCI pulls of guest modules by registry entry and result (success, manifest_failure, download_failure, digest_mismatch, refused, secret_failure, signature_failure, key_failure, too_large, timeout)",
            metrics.guest_fetches.clone(),
        );
        sub.register(
            "guest_info",
            "1 for the module serving (role active) or shadowing (role candidate) each registry entry",
            metrics.guest_info.clone(),
        );
        sub.register(
            "shadow_evaluations",
            "Candidate evaluations compared with the active module's, by registry entry and result (agree, differ, failed)",
            metrics.shadow_evaluations.clone(),
        );
        sub.register(
            "guest_rollout_stage",
            "1 for the stage (Shadow, Canary, Active, RolledBack) of each registry entry's candidate rollout (MachineConfigGuest spec.rollout)",
            metrics.guest_rollout_stage.clone(),
        );
        sub.register(
            "guest_rollbacks",
            "Candidate rollouts rolled back, by registry entry and reason (CandidateFailed, TooManyDifferences)",
            metrics.guest_rollbacks.clone(),
        );
        sub.register(
            "guest_audits",
            "Audits of a candidate the lease holder answered for MachineConfigGuest spec.audit, by registry entry and result (complete, failed)",
            metrics.guest_audits.clone(),
        );
        sub.register(
            "guest_decisions",
            "Decisions a job took, by registry entry and the module that made them (role active, or candidate during a rollout's Canary and Active stages)",
            metrics.guest_decisions.clone(),
        );
        sub.register(
            "node_phase_seconds",
            "Longest time a node of the pool has spent in its current update phase (Pending, Preparing, Cordoning, Draining, Applying, Rebooting, PostAction, Resuming, Uncordoning, Degraded)",
            metrics.node_phase_seconds.clone(),
        );
        sub.register(
            "ownership",
            "1 for each job's ownership mode (observe, own) and state (starting, writing, refused: the Machine Config Operator writes the same objects, observing)",
            metrics.ownership.clone(),
        );
        sub.register(
            "feature_gate",
            "1 when a feature gate the host follows is on, 0 when off: FeatureGate cluster for the current version, else the Default feature set",
            metrics.feature_gate.clone(),
        );
        sub.register(
            "observed",
            "Observe mode: objects whose derived decision agrees or differs with what the cluster holds, by job and key (condition type or field), as of the last comparison",
            metrics.observed.clone(),
        );
        sub.register(
            "observed_difference",
            "Observe mode: 1 for each difference in the bounded, sorted sample (by job, object and key)",
            metrics.observed_sample.clone(),
        );
        metrics
    }

    pub fn count_guest_failure(&self, kind: &str) {
        self.guest_failures
            .get_or_create(&KindLabels { kind: kind.into() })
            .inc();
    }

    /// Counts an object of `kind` a watch could not decode.
    pub fn count_decode_failure(&self, kind: &str) {
        self.cluster.count_decode_failure(kind);
    }

    pub fn count_write(&self, kind: &str) {
        self.cluster.count_write(kind);
    }
}
