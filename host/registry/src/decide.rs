//! The rollout protocol, once for every job: a [`Slot`] decides a batch of
//! objects through its job's route ([`Rollouts::route`]) and hands back each
//! decision with the module that made it. The job's controller only says
//! what its objects are and writes what comes back; who runs, whose decision
//! is taken and what is recorded stays here, where no job can drift from it.
//! The module decides off the async workers, the candidate beside it on the
//! same thread; each candidate decision is compared ([`shadow::compare`])
//! and recorded, then the route is asked again, so that a rollback this very
//! comparison caused keeps the candidate's decision from being taken.

use std::fmt::Debug;
use std::time::{Duration, Instant};

use super::job::EntryName;
use super::rollout::Rollouts;
use super::shadow;
use super::slot::Slot;
use crate::metrics::{JobRoleLabels, Metrics};
use mco_runtime::{Guest, GuestError};

/// What the protocol reads of a guest: the module it runs.
pub trait Module {
    /// Where the module came from: the name every failure and log names.
    fn name(&self) -> &str;
    /// The module's sha256, which a rollout is about.
    fn sha256(&self) -> &str;
}

impl<W> Module for Guest<W> {
    fn name(&self) -> &str {
        &self.module().name
    }

    fn sha256(&self) -> &str {
        &self.module().digest
    }
}

/// What the protocol reads of a decision besides comparing it for equality
/// with the other module's and logging it when they differ: the `result`
/// label of `mco_evaluations_total` it counts as (`apply`, `patch`, ...); a
/// failed evaluation counts as `failed`. A function, not a trait, because
/// the decisions are the guests' types, which the job folders cannot
/// implement this crate's traits for.
pub type Outcome<D> = fn(&D) -> &'static str;

/// Where a slot's decisions go: the job whose rollout routes them, and the
/// metrics that count them.
#[derive(Clone, Copy)]
pub struct Routing<'a> {
    pub job: &'a EntryName,
    pub rollouts: &'a Rollouts,
    pub metrics: &'a Metrics,
}

/// One object's decision (or the module's failure), and the module that
/// made it.
#[derive(Debug)]
pub struct Decided<D> {
    pub result: Result<D, GuestError>,
    /// The name of the module whose result this is.
    pub guest: String,
    /// Whether that module is the candidate: its rollout gave it the object.
    pub from_candidate: bool,
}

/// The task that ran the guests did not finish (it panicked or the runtime
/// is shutting down): nothing of the batch was decided nor counted.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct Unfinished(#[from] tokio::task::JoinError);

impl<G: Module + Clone + Send + 'static> Slot<G> {
    /// Decides `batch` for `routing.job`, handing each object back with its
    /// decision. `in_canary` says whether an object is in the rollout's
    /// canary subset, as the job reads it (`C`, see `canary.rs`); `key` names an object in a comparison's log line;
    /// `run` has a guest decide a batch, one result per object in order;
    /// `outcome` labels a decision in the counts.
    pub async fn decide<C, T, D>(
        self,
        routing: Routing<'_>,
        batch: Vec<T>,
        in_canary: impl Fn(&C, &T) -> bool,
        key: impl Fn(&T) -> String,
        run: impl Fn(&G, &[T]) -> Vec<Result<D, GuestError>> + Send + 'static,
        outcome: Outcome<D>,
    ) -> Result<Vec<(T, Decided<D>)>, Unfinished>
    where
        C: 'static,
        T: Send + 'static,
        D: PartialEq + Debug + Send + 'static,
    {
        let Routing {
            job,
            rollouts,
            metrics,
        } = routing;
        let candidate_sha256 = self.candidate.as_ref().map(|c| c.sha256().to_owned());
        let route = rollouts.route(job, candidate_sha256.as_deref());
        let writes = route.candidate_writes(&batch, in_canary);
        let any_writes = writes.contains(&true);
        let runs_candidate = route.runs_candidate();
        let (slot, batch, (active, active_cpu), took, candidate) =
            tokio::task::spawn_blocking(move || {
                let slot = self;
                let started = Instant::now();
                let active = on_cpu(|| run(&slot.active, &batch));
                let took = started.elapsed();
                // Where the module failed on every object and the candidate
                // is given none, nothing it decides would be compared or
                // taken.
                let needed = any_writes || active.0.iter().any(Result::is_ok);
                let candidate = match &slot.candidate {
                    Some(candidate) if runs_candidate && needed => {
                        Some(on_cpu(|| run(candidate, &batch)))
                    }
                    _ => None,
                };
                (slot, batch, active, took, candidate)
            })
            .await?;
        let job_name = job.to_string();
        metrics
            .evaluation_seconds
            .observe(took.as_secs_f64() / batch.len().max(1) as f64);
        count_cpu(metrics, &job_name, false, active_cpu);
        let mut candidate = candidate.map(|(results, cpu)| {
            count_cpu(metrics, &job_name, true, cpu);
            results.into_iter()
        });
        let mut decided = Vec::with_capacity(batch.len());
        for ((item, result), writes) in batch.into_iter().zip(active).zip(writes) {
            let shadow = candidate.as_mut().and_then(Iterator::next);
            if let (Ok(active), Some(shadow)) = (&result, &shadow) {
                let comparison = shadow::compare(metrics, &job_name, &key(&item), active, shadow);
                if let (Some(_), Some(sha256)) = (route.stage, &candidate_sha256) {
                    rollouts.record(job, sha256, comparison);
                }
            }
            let from_candidate = writes
                && rollouts
                    .route(job, candidate_sha256.as_deref())
                    .runs_candidate()
                && matches!(shadow, Some(Ok(_)));
            let (result, guest) = match (shadow, &slot.candidate) {
                (Some(Ok(decision)), Some(candidate)) if from_candidate => {
                    (Ok(decision), candidate)
                }
                _ => (result, &slot.active),
            };
            count_decision(metrics, &job_name, &result, outcome, from_candidate);
            let guest = guest.name().to_owned();
            decided.push((
                item,
                Decided {
                    result,
                    guest,
                    from_candidate,
                },
            ));
        }
        Ok(decided)
    }
}

/// Counts one object's result: `mco_evaluations_total` by its outcome, a
/// decision in `mco_guest_decisions_total` by the module that made it, a
/// failure in `mco_guest_failures_total` by its kind.
fn count_decision<D>(
    metrics: &Metrics,
    job: &str,
    result: &Result<D, GuestError>,
    outcome: Outcome<D>,
    from_candidate: bool,
) {
    let outcome = match result {
        Ok(decision) => {
            metrics
                .guest_decisions
                .get_or_create(&JobRoleLabels::new(job, from_candidate))
                .inc();
            outcome(decision)
        }
        Err(err) => {
            metrics.count_guest_failure(err.kind());
            "failed"
        }
    };
    crate::metrics::count(&metrics.evaluations, job, outcome);
}

/// Counts the CPU time ([`on_cpu`]) of one module's run over a batch, by
/// job and role (`active`, `candidate`): what a candidate will cost is
/// known before it serves.
fn count_cpu(metrics: &Metrics, job: &str, candidate: bool, cpu: Duration) {
    metrics
        .evaluation_cpu_seconds
        .get_or_create(&JobRoleLabels::new(job, candidate))
        .inc_by(cpu.as_secs_f64());
}

/// Runs `work` and returns its result with the CPU time the calling thread
/// spent on it (a guest evaluation runs on one blocking thread). Unlike the
/// wall clock, it leaves out the time the thread waited for a core.
fn on_cpu<T>(work: impl FnOnce() -> T) -> (T, Duration) {
    let cpu = || {
        let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        Duration::new(
            u64::try_from(now.tv_sec).unwrap_or(0),
            u32::try_from(now.tv_nsec).unwrap_or(0),
        )
    };
    let before = cpu();
    let result = work();
    (result, cpu().saturating_sub(before))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use prometheus_client::registry::Registry;

    use super::*;
    use crate::canary::CanarySpec;
    use crate::metrics::JobResultLabels;
    use crate::rollout::{Declared, RolloutSpec, Stage};

    const ACTIVE: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const CANDIDATE: &str = "cccccccccccccccccccccccccccccccc";

    /// A guest that answers what each object says it answers, and counts
    /// the batches it ran.
    #[derive(Clone)]
    struct Fake {
        name: &'static str,
        sha256: &'static str,
        candidate: bool,
        runs: Arc<AtomicUsize>,
    }

    impl Module for Fake {
        fn name(&self) -> &str {
            self.name
        }

        fn sha256(&self) -> &str {
            self.sha256
        }
    }

    #[derive(Debug, PartialEq)]
    struct Answer(u32);

    fn outcome(_: &Answer) -> &'static str {
        "apply"
    }

    /// An object: its name, whether it is a canary, and what each module
    /// answers for it (`None`: the module traps).
    struct Item {
        name: &'static str,
        canary: bool,
        active: Option<u32>,
        candidate: Option<u32>,
    }

    fn item(name: &'static str, canary: bool, active: Option<u32>, candidate: Option<u32>) -> Item {
        Item {
            name,
            canary,
            active,
            candidate,
        }
    }

    fn slot(runs: &Arc<AtomicUsize>) -> Slot<Fake> {
        let fake = |name, sha256, candidate| Fake {
            name,
            sha256,
            candidate,
            runs: runs.clone(),
        };
        Slot {
            active: fake("active.wasm", ACTIVE, false),
            candidate: Some(fake("candidate.wasm", CANDIDATE, true)),
        }
    }

    /// Rollouts holding the job's rollout of [`CANDIDATE`] in `stage`
    /// (none for `None`), with a canary subset and no promotion.
    fn rollouts(stage: Option<Stage>) -> Rollouts {
        let rollouts = Rollouts::default();
        let Some(stage) = stage else {
            return rollouts;
        };
        let spec = RolloutSpec {
            stage,
            canary: Some(CanarySpec(BTreeMap::from([(
                "pools".into(),
                serde_json::json!(["canary"]),
            )]))),
            promotion: None,
            max_differ: None,
        };
        let (kind, fields) = (job().kind(), crate::job::tests::JOBS.canaries());
        let canary =
            (spec.canary.as_ref()).and_then(|c| c.read(kind.name(), kind.canary(), &fields).ok());
        assert!(canary.is_some(), "the test job reads its canary");
        let declared = Declared {
            object: "guest",
            spec: &spec,
            canary,
            stored: None,
            active: ACTIVE,
            candidate: CANDIDATE,
        };
        rollouts.sync(BTreeMap::from([(job(), declared)]), true);
        rollouts
    }

    fn job() -> EntryName {
        crate::job::tests::test_job()
    }

    /// Decides `batch` and returns, per object, the answer taken (`None`
    /// for a failure), the module that made it and whether it is the
    /// candidate.
    async fn decide(
        rollouts: &Rollouts,
        metrics: &Metrics,
        runs: &Arc<AtomicUsize>,
        batch: Vec<Item>,
    ) -> Vec<(&'static str, Option<u32>, String, bool)> {
        let job = job();
        let routing = Routing {
            job: &job,
            rollouts,
            metrics,
        };
        let run = |guest: &Fake, items: &[Item]| {
            guest.runs.fetch_add(1, Ordering::Relaxed);
            (items.iter())
                .map(|item| {
                    let answer = if guest.candidate {
                        item.candidate
                    } else {
                        item.active
                    };
                    answer.map(Answer).ok_or_else(|| GuestError::Trap {
                        guest: guest.name.into(),
                        detail: "unreachable".into(),
                    })
                })
                .collect()
        };
        let decided = slot(runs)
            .decide(
                routing,
                batch,
                |_: &crate::job::tests::Pools, item| item.canary,
                |item| item.name.to_owned(),
                run,
                outcome,
            )
            .await
            .unwrap_or_default();
        (decided.into_iter())
            .map(|(item, d)| {
                let answer = d.result.ok().map(|a| a.0);
                (item.name, answer, d.guest, d.from_candidate)
            })
            .collect()
    }

    fn counts(rollouts: &Rollouts) -> (Stage, u64, u64, u64) {
        let (_, status) = &rollouts.statuses()[&job()];
        (status.stage, status.agree, status.differ, status.failed)
    }

    fn metrics() -> (Registry, Metrics) {
        Metrics::for_test()
    }

    #[tokio::test]
    async fn in_shadow_the_candidate_is_compared_and_the_module_decides() {
        let (_registry, metrics) = metrics();
        let runs = Arc::default();
        let rollouts = rollouts(Some(Stage::Shadow));
        let batch = vec![
            item("a", true, Some(1), Some(1)),
            item("b", false, Some(1), Some(1)),
        ];
        let decided = decide(&rollouts, &metrics, &runs, batch).await;
        assert_eq!(
            decided,
            vec![
                ("a", Some(1), "active.wasm".into(), false),
                ("b", Some(1), "active.wasm".into(), false),
            ]
        );
        assert_eq!(runs.load(Ordering::Relaxed), 2, "one batch each");
        assert_eq!(counts(&rollouts), (Stage::Shadow, 2, 0, 0), "recorded");
    }

    #[tokio::test]
    async fn in_canary_the_canary_objects_take_the_candidates_decision() {
        let (_registry, metrics) = metrics();
        let runs = Arc::default();
        let rollouts = rollouts(Some(Stage::Canary));
        let batch = vec![
            item("canary", true, Some(1), Some(1)),
            item("other", false, Some(1), Some(1)),
        ];
        let decided = decide(&rollouts, &metrics, &runs, batch).await;
        assert_eq!(
            decided,
            vec![
                ("canary", Some(1), "candidate.wasm".into(), true),
                ("other", Some(1), "active.wasm".into(), false),
            ]
        );
    }

    #[tokio::test]
    async fn a_failed_candidate_leaves_the_object_to_the_module_and_a_failed_module_to_the_candidate()
     {
        let (_registry, metrics) = metrics();
        let runs = Arc::default();
        // Without a rollout the candidate only shadows: its failure is
        // compared and nothing else.
        let shadowing = rollouts(None);
        let decided = decide(
            &shadowing,
            &metrics,
            &runs,
            vec![item("a", true, Some(1), None)],
        )
        .await;
        assert_eq!(decided, vec![("a", Some(1), "active.wasm".into(), false)]);

        // In Active, the candidate decides an object the module failed on:
        // nothing is compared, so the rollout carries on.
        let active = rollouts(Some(Stage::Active));
        let decided = decide(
            &active,
            &metrics,
            &runs,
            vec![item("b", false, None, Some(2))],
        )
        .await;
        assert_eq!(decided, vec![("b", Some(2), "candidate.wasm".into(), true)]);
        assert_eq!(counts(&active), (Stage::Active, 0, 0, 0));

        // Its failure in Active is the module's object again, and rolls
        // the rollout back.
        let decided = decide(
            &active,
            &metrics,
            &runs,
            vec![item("c", false, Some(1), None)],
        )
        .await;
        assert_eq!(decided, vec![("c", Some(1), "active.wasm".into(), false)]);
        assert_eq!(counts(&active).0, Stage::RolledBack);
    }

    #[tokio::test]
    async fn a_rollback_by_this_very_comparison_keeps_the_candidates_decision_out() {
        let (_registry, metrics) = metrics();
        let runs = Arc::new(AtomicUsize::new(0));
        let rollouts = rollouts(Some(Stage::Active));
        // maxDiffer 0: the first difference rolls back, before its
        // decision is taken; the next object is the module's.
        let batch = vec![
            item("a", false, Some(1), Some(2)),
            item("b", false, Some(1), Some(3)),
        ];
        let decided = decide(&rollouts, &metrics, &runs, batch).await;
        assert_eq!(
            decided,
            vec![
                ("a", Some(1), "active.wasm".into(), false),
                ("b", Some(1), "active.wasm".into(), false),
            ]
        );
        assert_eq!(counts(&rollouts).0, Stage::RolledBack);
        // Rolled back, the candidate no longer runs.
        runs.store(0, Ordering::Relaxed);
        let decided = decide(
            &rollouts,
            &metrics,
            &runs,
            vec![item("c", true, Some(1), Some(1))],
        )
        .await;
        assert_eq!(decided, vec![("c", Some(1), "active.wasm".into(), false)]);
        assert_eq!(runs.load(Ordering::Relaxed), 1, "the module alone");
    }

    #[tokio::test]
    async fn the_candidate_does_not_run_where_nothing_of_it_could_be_used() {
        let (_registry, metrics) = metrics();
        let runs = Arc::new(AtomicUsize::new(0));
        let rollouts = rollouts(Some(Stage::Canary));
        let decided = decide(
            &rollouts,
            &metrics,
            &runs,
            vec![item("a", false, None, Some(1))],
        )
        .await;
        assert_eq!(decided, vec![("a", None, "active.wasm".into(), false)]);
        assert_eq!(runs.load(Ordering::Relaxed), 1, "the module alone");
    }

    #[tokio::test]
    async fn every_result_is_counted_once_by_job_outcome_and_module() {
        let (registry, metrics) = metrics();
        let runs = Arc::default();
        let rollouts = rollouts(Some(Stage::Canary));
        let batch = vec![
            item("canary", true, Some(1), Some(1)),
            item("agrees", false, Some(1), Some(1)),
            item("fails", false, None, Some(1)),
        ];
        decide(&rollouts, &metrics, &runs, batch).await;
        let job = job().to_string();
        let evaluations = |result: &str| {
            (metrics.evaluations)
                .get_or_create(&JobResultLabels::new(job.as_str(), result))
                .get()
        };
        let decisions = |candidate| {
            (metrics.guest_decisions)
                .get_or_create(&JobRoleLabels::new(&job, candidate))
                .get()
        };
        let shadow = |result: &str| {
            (metrics.shadow_evaluations)
                .get_or_create(&JobResultLabels::new(job.as_str(), result))
                .get()
        };
        assert_eq!((evaluations("apply"), evaluations("failed")), (2, 1));
        assert_eq!((decisions(false), decisions(true)), (1, 1));
        assert_eq!(
            (shadow("agree"), shadow("differ"), shadow("failed")),
            (2, 0, 0)
        );
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap_or_default();
        for role in ["active", "candidate"] {
            assert!(
                text.contains(&format!(
                    "mco_evaluation_cpu_seconds_total{{job=\"test\",role=\"{role}\"}}"
                )),
                "{text}"
            );
        }
        assert!(
            text.contains("mco_evaluation_duration_seconds_count 1\n"),
            "one observation a batch: {text}"
        );
        assert!(
            text.contains("mco_guest_failures_total{kind=\"trap\"} 1"),
            "{text}"
        );
    }
}
