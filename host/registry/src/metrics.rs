//! The registry's own series, registered the way linkerd's policy-controller
//! registers each component's (`register(&mut Registry) -> Self`): the
//! caller picks the prefix (the host's `mco_`), this component names its
//! families. Series about a job carry its registry entry name as `job`
//! (`mcn`, `bootImage.<platform>`), the same everywhere.

use std::sync::atomic::AtomicU64;

use mco_cluster::metrics::{KindLabels, registered};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

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

/// Guest evaluations, the modules serving and their changes, shadow
/// comparisons, rollouts and audits.
#[derive(Clone, Debug)]
pub struct Metrics {
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
}

impl Metrics {
    /// Registers the families in `registry` (already prefixed by the caller).
    pub fn register(registry: &mut Registry) -> Metrics {
        let evaluations = registered(
            registry,
            "evaluations",
            "Guest evaluations by job and result",
        );
        // A histogram has no default buckets: registered by hand.
        let evaluation_seconds = Histogram::new(exponential_buckets(10e-6, 4.0, 10));
        registry.register(
            "evaluation_duration_seconds",
            "Time of one guest evaluation (fresh instance and call)",
            evaluation_seconds.clone(),
        );
        Metrics {
            evaluations,
            evaluation_seconds,
            evaluation_cpu_seconds: registered(
                registry,
                "evaluation_cpu_seconds",
                "CPU time spent in guest evaluations, by job and module (role active, or candidate)",
            ),
            guest_failures: registered(
                registry,
                "guest_failures",
                "Guest failures by kind (deadline, memory_limit, stack_overflow, trap, invalid_output)",
            ),
            guest_swaps: registered(
                registry,
                "guest_swaps",
                "Guest module changes by registry entry and result (loaded, swapped, removed, failed)",
            ),
            guest_fetches: registered(
                registry,
                "guest_fetches",
                "OCI pulls of guest modules by registry entry and result (success, manifest_failure, download_failure, digest_mismatch, refused, secret_failure, signature_failure, key_failure, too_large, timeout)",
            ),
            guest_info: registered(
                registry,
                "guest_info",
                "1 for the module serving (role active) or shadowing (role candidate) each registry entry",
            ),
            shadow_evaluations: registered(
                registry,
                "shadow_evaluations",
                "Candidate evaluations compared with the active module's, by registry entry and result (agree, differ, failed)",
            ),
            guest_rollout_stage: registered(
                registry,
                "guest_rollout_stage",
                "1 for the stage (Shadow, Canary, Active, RolledBack) of each registry entry's candidate rollout (MachineConfigGuest spec.rollout)",
            ),
            guest_rollbacks: registered(
                registry,
                "guest_rollbacks",
                "Candidate rollouts rolled back, by registry entry and reason (CandidateFailed, TooManyDifferences)",
            ),
            guest_audits: registered(
                registry,
                "guest_audits",
                "Audits of a candidate the lease holder answered for MachineConfigGuest spec.audit, by registry entry and result (complete, failed)",
            ),
            guest_decisions: registered(
                registry,
                "guest_decisions",
                "Decisions a job took, by registry entry and the module that made them (role active, or candidate during a rollout's Canary and Active stages)",
            ),
        }
    }

    pub fn count_guest_failure(&self, kind: &str) {
        self.guest_failures
            .get_or_create(&KindLabels { kind: kind.into() })
            .inc();
    }

    /// This component registered under the host's `mco` prefix, for tests
    /// that read the rendered names.
    #[cfg(test)]
    pub(crate) fn for_test() -> (Registry, Metrics) {
        let mut registry = Registry::default();
        let metrics = Metrics::register(registry.sub_registry_with_prefix("mco"));
        (registry, metrics)
    }
}
