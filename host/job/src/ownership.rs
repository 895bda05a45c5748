//! Who writes what: each job's ownership mode and what it is doing about
//! it, shared by the jobs, the admin server (`/ownership`, which `mco-host
//! status` shows) and the metrics.
//!
//! - `own` (the default): the job writes, but not while the Machine Config
//!   Operator's equivalent writer is seen on what it would write
//!   (`cluster::managers`); it then refuses, says why, and writes nothing.
//! - `observe`: the job writes nothing to the objects it decides; it
//!   compares its decisions with what the cluster holds (`compare`) and
//!   reports agreement, with a bounded sample of differences.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use mco_cluster::metrics::registered;
use mco_registry::compare::Summary;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// Differences kept in each job's sample (Events, metrics, `/ownership`).
pub const SAMPLE_LIMIT: usize = 20;

/// How a job treats the objects it decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Derive and compare with the cluster; write nothing.
    Observe,
    /// Write, unless the operator's equivalent writer is active.
    Own,
}

impl Mode {
    pub fn label(self) -> &'static str {
        match self {
            Mode::Observe => "observe",
            Mode::Own => "own",
        }
    }
}

/// What a job is doing about its writes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "state")]
pub enum State {
    /// Not yet judged (the caches are listing): nothing is written.
    Starting,
    Writing,
    /// `own` mode, and the operator's writer is active.
    Refused {
        reason: String,
    },
    Observing,
}

impl State {
    pub fn label(&self) -> &'static str {
        match self {
            State::Starting => "starting",
            State::Writing => "writing",
            State::Refused { .. } => "refused",
            State::Observing => "observing",
        }
    }
}

/// One job as `/ownership` reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobReport {
    pub job: String,
    pub mode: Mode,
    #[serde(flatten)]
    pub state: State,
    /// `observe` mode: the last comparison with the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<Summary>,
}

/// Every job's report.
#[derive(Clone)]
pub struct Ownership {
    jobs: Arc<Mutex<BTreeMap<String, JobReport>>>,
    metrics: OwnershipMetrics,
}

impl Ownership {
    pub fn new(metrics: OwnershipMetrics) -> Ownership {
        Ownership {
            jobs: Arc::default(),
            metrics,
        }
    }

    /// Registers `job` in `mode`, starting.
    pub fn job(&self, job: &str, mode: Mode) -> JobOwnership {
        let handle = JobOwnership {
            job: job.to_owned(),
            mode,
            shared: self.clone(),
        };
        handle.set(State::Starting);
        handle
    }

    /// Every job's report, by job.
    pub fn reports(&self) -> Vec<JobReport> {
        self.with(|jobs| jobs.values().cloned().collect())
    }

    fn with<T>(&self, f: impl FnOnce(&mut BTreeMap<String, JobReport>) -> T) -> T {
        match self.jobs.lock() {
            Ok(mut jobs) => f(&mut jobs),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }
}

/// One job's part of [`Ownership`].
#[derive(Clone)]
pub struct JobOwnership {
    job: String,
    mode: Mode,
    shared: Ownership,
}

impl JobOwnership {
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether the job may write its objects now.
    pub fn may_write(&self) -> bool {
        self.state() == State::Writing
    }

    pub fn state(&self) -> State {
        self.shared
            .with(|jobs| jobs.get(&self.job).map(|r| r.state.clone()))
            .unwrap_or(State::Starting)
    }

    /// `own` mode: whether the operator's writer is active, and why; the
    /// job then refuses (`Some`) or writes (`None`). Logged when it changes.
    pub fn judge(&self, refusal: Option<String>) {
        self.set(match refusal {
            Some(reason) => State::Refused { reason },
            None => State::Writing,
        });
    }

    /// Sets the state, logging and exporting a change.
    pub fn set(&self, state: State) {
        let before = self.shared.with(|jobs| {
            let report = jobs.entry(self.job.clone()).or_insert_with(|| JobReport {
                job: self.job.clone(),
                mode: self.mode,
                state: State::Starting,
                observed: None,
            });
            let before = std::mem::replace(&mut report.state, state.clone());
            (before != state).then_some(before)
        });
        let Some(before) = before else {
            // Unchanged (a fresh job is registered as Starting).
            if state == State::Starting {
                self.export(None, &state);
            }
            return;
        };
        match &state {
            State::Refused { reason } => tracing::warn!(
                job = %self.job,
                mode = self.mode.label(),
                %reason,
                "refusing to write: the Machine Config Operator writes these objects"
            ),
            State::Writing => tracing::info!(job = %self.job, "writing: no other writer seen"),
            State::Observing => {
                tracing::info!(job = %self.job, "observing: comparing with the cluster, writing nothing");
            }
            State::Starting => {}
        }
        self.export(Some(&before), &state);
    }

    fn export(&self, before: Option<&State>, state: &State) {
        let labels = |state: &State| OwnershipLabels {
            job: self.job.clone(),
            mode: self.mode.label().into(),
            state: state.label().into(),
        };
        if let Some(before) = before {
            self.shared.metrics.state.remove(&labels(before));
        }
        self.shared
            .metrics
            .state
            .get_or_create(&labels(state))
            .set(1);
    }

    /// `observe` mode: the comparison of every object now, exported as
    /// counts per key and the sample.
    pub fn observed(&self, summary: Summary) {
        let metrics = &self.shared.metrics;
        let previous = self.shared.with(|jobs| {
            jobs.get_mut(&self.job)
                .and_then(|report| report.observed.replace(summary.clone()))
        });
        if let Some(previous) = &previous {
            for key in previous.keys.keys() {
                for result in ["agree", "differ"] {
                    metrics.observed.remove(&self.observed_labels(key, result));
                }
            }
            for difference in &previous.sample {
                metrics.observed_sample.remove(&ObservedSampleLabels {
                    job: self.job.clone(),
                    object: difference.object.clone(),
                    key: difference.outcome.key.clone(),
                });
            }
        }
        for (key, counts) in &summary.keys {
            for (result, count) in [("agree", counts.agree), ("differ", counts.differ)] {
                metrics
                    .observed
                    .get_or_create(&self.observed_labels(key, result))
                    .set(i64::try_from(count).unwrap_or(i64::MAX));
            }
        }
        for difference in &summary.sample {
            metrics
                .observed_sample
                .get_or_create(&ObservedSampleLabels {
                    job: self.job.clone(),
                    object: difference.object.clone(),
                    key: difference.outcome.key.clone(),
                })
                .set(1);
        }
        if previous.as_ref().map(Summary::differences) != Some(summary.differences()) {
            tracing::info!(
                job = %self.job,
                objects = summary.objects,
                differing_objects = summary.differing_objects,
                differences = summary.differences(),
                "observed the cluster"
            );
        }
    }

    fn observed_labels(&self, key: &str, result: &str) -> ObservedLabels {
        ObservedLabels {
            job: self.job.clone(),
            key: key.to_owned(),
            result: result.to_owned(),
        }
    }
}

/// A job, its ownership mode and what it is doing (`State`).
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

/// One difference of a job's bounded sample (`SAMPLE_LIMIT`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ObservedSampleLabels {
    pub job: String,
    pub object: String,
    pub key: String,
}

/// Each job's ownership, and in observe mode how it compares with the
/// cluster.
#[derive(Clone, Debug, Default)]
pub struct OwnershipMetrics {
    /// 1 for each job's ownership mode and state.
    pub state: Family<OwnershipLabels, Gauge>,
    /// Observe mode: objects agreeing or differing with the cluster per key.
    pub observed: Family<ObservedLabels, Gauge>,
    /// Observe mode: 1 per difference in the bounded sample.
    pub observed_sample: Family<ObservedSampleLabels, Gauge>,
}

impl OwnershipMetrics {
    /// Registers the families in `registry` (already prefixed by the caller).
    pub fn register(registry: &mut Registry) -> OwnershipMetrics {
        OwnershipMetrics {
            state: registered(
                registry,
                "ownership",
                "1 for each job's ownership mode (observe, own) and state (starting, writing, refused: the Machine Config Operator writes the same objects, observing)",
            ),
            observed: registered(
                registry,
                "observed",
                "Observe mode: objects whose derived decision agrees or differs with what the cluster holds, by job and key (condition type or field), as of the last comparison",
            ),
            observed_sample: registered(
                registry,
                "observed_difference",
                "Observe mode: 1 for each difference in the bounded, sorted sample (by job, object and key)",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use prometheus_client::registry::Registry;

    use super::*;
    use mco_registry::compare::{Outcome, Summary};

    fn ownership() -> (Ownership, Registry) {
        let mut registry = Registry::default();
        let metrics = OwnershipMetrics::register(registry.sub_registry_with_prefix("mco"));
        (Ownership::new(metrics), registry)
    }

    fn text(registry: &Registry) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, registry)
            .unwrap_or_else(|e| panic!("{e}"));
        text
    }

    #[test]
    fn an_own_job_writes_only_once_judged_free_of_other_writers() {
        let (ownership, registry) = ownership();
        let mcn = ownership.job("mcn", Mode::Own);
        assert!(!mcn.may_write(), "starting: nothing is written");
        mcn.judge(Some(
            "worker-0: conditions written by machine-config-operator".into(),
        ));
        assert!(!mcn.may_write());
        assert_eq!(
            ownership.reports()[0].state,
            State::Refused {
                reason: "worker-0: conditions written by machine-config-operator".into()
            }
        );
        let metrics = text(&registry);
        assert!(
            metrics.contains(r#"mco_ownership{job="mcn",mode="own",state="refused"} 1"#),
            "{metrics}"
        );
        assert!(!metrics.contains(r#"state="starting""#), "{metrics}");
        mcn.judge(None);
        assert!(mcn.may_write());
        let metrics = text(&registry);
        assert!(metrics.contains(r#"state="writing""#), "{metrics}");
        assert!(!metrics.contains(r#"state="refused""#), "{metrics}");
    }

    #[test]
    fn an_observe_job_exports_its_counts_and_sample_and_replaces_them() {
        let (ownership, registry) = ownership();
        let job = ownership.job("bootImage", Mode::Observe);
        job.set(State::Observing);
        assert!(!job.may_write());
        let mut first = Summary::new(SAMPLE_LIMIT);
        first.add(
            "ms-a",
            &[Outcome::new(
                "image",
                Some("new".into()),
                Some("old".into()),
            )],
        );
        first.add(
            "ms-b",
            &[Outcome::new(
                "image",
                Some("new".into()),
                Some("new".into()),
            )],
        );
        job.observed(first);
        let metrics = text(&registry);
        for line in [
            r#"mco_observed{job="bootImage",key="image",result="agree"} 1"#,
            r#"mco_observed{job="bootImage",key="image",result="differ"} 1"#,
            r#"mco_observed_difference{job="bootImage",object="ms-a",key="image"} 1"#,
        ] {
            assert!(metrics.contains(line), "{line} in {metrics}");
        }
        let mut second = Summary::new(SAMPLE_LIMIT);
        second.add(
            "ms-a",
            &[Outcome::new(
                "image",
                Some("new".into()),
                Some("new".into()),
            )],
        );
        job.observed(second);
        let metrics = text(&registry);
        assert!(!metrics.contains("mco_observed_difference{"), "{metrics}");
        assert!(
            metrics.contains(r#"mco_observed{job="bootImage",key="image",result="differ"} 0"#),
            "{metrics}"
        );
        let report = &ownership.reports()[0];
        assert_eq!(report.observed.as_ref().map(|s| s.objects), Some(1));
        let json = serde_json::to_value(report).unwrap_or_default();
        assert_eq!(json["state"], "observing");
        assert_eq!(json["mode"], "observe");
        let back: JobReport = serde_json::from_value(json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.state, State::Observing);
    }
}
