//! Audits on request: a MachineConfigGuest's `spec.audit.request` asks the
//! lease holder to decide every current object of its job with both the
//! module and the candidate, now, as `mco-host guests audit --kubeconfig`
//! does from outside (the same code, `JobKind::audit`), and to answer in
//! `status.audit` with the counts and bounded, stably sorted samples.
//!
//! A request is a value, not a flag: any value the status has not answered
//! asks again. The status names the request it answers, so a replica that
//! takes the lease neither repeats a finished audit nor forgets one that was
//! under way (it starts that one again). One audit runs at a time, on a
//! blocking thread (it evaluates guests), within [`DEADLINE`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::{Client, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use super::cluster::ReadError;
use super::{Failed, Module, Report, SAMPLE_LIMIT, Sampled};
use crate::registry::crd::{self, MachineConfigGuest};
use crate::registry::job::{Job, Jobs};
use crate::registry::set::GuestSet;

/// Bound on one audit: reading every object and deciding it twice. 5,000
/// nodes take seconds (docs/dev/records/benchmarks.md, "Auditing 5,000 nodes").
pub const DEADLINE: Duration = Duration::from_secs(600);

/// `spec.audit`: asks the lease holder for an audit of the candidate.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditSpec {
    /// Any value `status.audit.request` does not hold yet asks for an
    /// audit now: a timestamp or a counter.
    #[schemars(length(min = 1, max = 63))]
    pub request: String,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum AuditState {
    Running,
    Complete,
    Failed,
}

/// `status.audit`: the answer to the last request, or the audit under way.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditStatus {
    /// The `spec.audit.request` this answers.
    pub request: String,
    pub state: AuditState,
    /// RFC 3339.
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// The counts in one line, or why the audit failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The two modules compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_sha256: Option<String>,
    /// Objects decided; those that agree on every key, differ on one or
    /// more, or that a module failed on.
    #[serde(default)]
    pub objects: u64,
    #[serde(default)]
    pub agree: u64,
    #[serde(default)]
    pub differ: u64,
    #[serde(default)]
    pub failed: u64,
    /// The first differences by object, then key; each side at most 512
    /// bytes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub sample: Vec<Sampled>,
    /// Differences not in the sample.
    #[serde(default)]
    pub omitted: u64,
    /// The first failures by object, then module.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub failure_sample: Vec<Failed>,
    #[serde(default)]
    pub omitted_failures: u64,
}

impl AuditStatus {
    fn running(request: &str, started_at: &str) -> AuditStatus {
        AuditStatus {
            request: request.to_owned(),
            state: AuditState::Running,
            started_at: started_at.to_owned(),
            finished_at: None,
            message: String::new(),
            active_sha256: None,
            candidate_sha256: None,
            objects: 0,
            agree: 0,
            differ: 0,
            failed: 0,
            sample: Vec::new(),
            omitted: 0,
            failure_sample: Vec::new(),
            omitted_failures: 0,
        }
    }

    /// The answer of an audit that began at `started_at`.
    pub fn finished(
        request: &str,
        started_at: &str,
        result: Result<Report, String>,
        now: Timestamp,
    ) -> AuditStatus {
        let mut status = AuditStatus::running(request, started_at);
        status.finished_at = Some(now.to_string());
        match result {
            Ok(report) => {
                status.state = AuditState::Complete;
                status.message = report.summary();
                status.active_sha256 = Some(report.active.sha256);
                status.candidate_sha256 = Some(report.candidate.sha256);
                (status.objects, status.agree) = (report.objects, report.agree);
                (status.differ, status.failed) = (report.differ, report.failed);
                (status.sample, status.omitted) = (report.sample, report.omitted);
                status.failure_sample = report.failure_sample;
                status.omitted_failures = report.omitted_failures;
            }
            Err(why) => {
                status.state = AuditState::Failed;
                status.message = why;
            }
        }
        status
    }
}

/// The request `object` asks to be answered, while its status has not
/// answered it (an audit recorded as running was cut short by a lost
/// lease or a restart, so it is asked again).
pub fn pending(object: &MachineConfigGuest) -> Option<&str> {
    let asked = object.spec.audit.as_ref()?.request.as_str();
    let answered = object.status.as_ref().and_then(|s| s.audit.as_ref());
    match answered {
        Some(a) if a.request == asked && a.state != AuditState::Running => None,
        _ => Some(asked),
    }
}

/// The report of `job`'s audit (`JobKind::audit`) of the module and the
/// candidate serving it in `set`. The modules run inside the future.
async fn audit(client: &Client, set: &GuestSet, job: &Job) -> Result<Report, ReadError> {
    let no_candidate = || ReadError::NoCandidate(job.to_string());
    let served = set.served(job).ok_or_else(no_candidate)?;
    let candidate = served.candidate().ok_or_else(no_candidate)?;
    let audit = job.kind().audit(client, served, job, SAMPLE_LIMIT).await?;
    let active = Module::of(served.active().0);
    Ok(audit.report(job.to_string(), active, Module::of(candidate)))
}

/// An audit that ended, for the object it answers.
pub struct Answer {
    pub object: String,
    pub job: Job,
    pub status: AuditStatus,
}

/// The audits of one host: the one under way and the answers not yet in
/// their objects' status.
pub struct Audits {
    running: Option<(String, String)>,
    answers: BTreeMap<String, AuditStatus>,
    done: mpsc::UnboundedSender<Answer>,
}

impl Audits {
    /// The audits, and where each one that ends is announced: hand it to
    /// [`Audits::answered`].
    pub fn new() -> (Audits, mpsc::UnboundedReceiver<Answer>) {
        let (done, answered) = mpsc::unbounded_channel();
        let audits = Audits {
            running: None,
            answers: BTreeMap::new(),
            done,
        };
        (audits, answered)
    }

    /// What each object's `status.audit` should say, by object name: the
    /// audit under way or the answer not yet written.
    pub fn statuses(&self) -> &BTreeMap<String, AuditStatus> {
        &self.answers
    }

    /// Starts the audit of the first object (by name) with a pending
    /// request, unless one runs: the lease holder's alone.
    pub fn start(
        &mut self,
        objects: &[MachineConfigGuest],
        jobs: &'static Jobs,
        client: &Client,
        set: Arc<GuestSet>,
    ) {
        self.forget_written(objects);
        if self.running.is_some() {
            return;
        }
        let mut waiting: Vec<(&str, &str, Job)> = objects
            .iter()
            .filter_map(|object| {
                let name = object.metadata.name.as_deref()?;
                let request = pending(object)?;
                let job = crd::job_of(object, jobs)?;
                let answered = self.answers.get(name).map(|a| a.request.as_str());
                (answered != Some(request)).then_some((name, request, job))
            })
            .collect();
        waiting.sort_by_key(|(name, _, _)| *name);
        let Some((name, request, job)) = waiting.into_iter().next() else {
            return;
        };
        let started_at = Timestamp::now().to_string();
        tracing::info!(machineconfigguest = name, entry = %job, request, "audit started");
        self.answers
            .insert(name.to_owned(), AuditStatus::running(request, &started_at));
        self.running = Some((name.to_owned(), request.to_owned()));
        let (object, request) = (name.to_owned(), request.to_owned());
        let (client, done) = (client.clone(), self.done.clone());
        let handle = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            let audit = audit(&client, &set, &job);
            let result = match handle.block_on(tokio::time::timeout(DEADLINE, audit)) {
                Ok(Ok(report)) => Ok(report),
                Ok(Err(err)) => Err(err.to_string()),
                Err(_) => Err(format!(
                    "the audit did not end within {}",
                    humantime::format_duration(DEADLINE)
                )),
            };
            let status = AuditStatus::finished(&request, &started_at, result, Timestamp::now());
            // The receiver lives as long as the registry watch.
            let _ = done.send(Answer {
                object,
                job,
                status,
            });
        });
    }

    /// Records an audit that ended, to be written with the next status.
    pub fn answered(&mut self, answer: &Answer) {
        if self.running.as_ref().map(|(object, _)| object) == Some(&answer.object) {
            self.running = None;
        }
        self.answers
            .insert(answer.object.clone(), answer.status.clone());
    }

    /// Drops the answers the objects' status holds, or that a newer
    /// request (or none) made moot; the one under way stays.
    fn forget_written(&mut self, objects: &[MachineConfigGuest]) {
        let running = self.running.clone();
        self.answers.retain(|name, answer| {
            if running.as_ref().is_some_and(|(object, _)| object == name) {
                return true;
            }
            let Some(object) = objects
                .iter()
                .find(|o| o.metadata.name.as_deref() == Some(name))
            else {
                return false;
            };
            let asked = object.spec.audit.as_ref().map(|a| a.request.as_str());
            let stored = object.status.as_ref().and_then(|s| s.audit.as_ref());
            asked == Some(answer.request.as_str()) && stored != Some(answer)
        });
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::registry::audit::Audit;
    use crate::registry::job::tests::test_job;

    fn object(request: Option<&str>, answered: Option<(&str, AuditState)>) -> MachineConfigGuest {
        let mut spec =
            json!({"job": "mcn", "module": "mcn.wasm", "candidate": {"module": "next.wasm"}});
        if let Some(request) = request {
            spec["audit"] = json!({"request": request});
        }
        let mut object = json!({
            "apiVersion": "mco-wasm.io/v1alpha1", "kind": "MachineConfigGuest",
            "metadata": {"name": "mcn"}, "spec": spec,
        });
        if let Some((request, state)) = answered {
            let mut status = AuditStatus::running(request, "2026-12-03T10:00:00Z");
            status.state = state;
            object["status"] = json!({"audit": status});
        }
        serde_json::from_value(object).unwrap_or_else(|e| panic!("{e}"))
    }

    fn report() -> Report {
        let mut audit = Audit::new(SAMPLE_LIMIT);
        let keys = |v: &str| Ok(vec![("Updated".to_owned(), v.to_owned())]);
        audit.add("canary-0", keys("True"), keys("False"));
        audit.add("worker-0", keys("True"), keys("True"));
        let module = |name: &str| Module {
            module: name.into(),
            sha256: format!("{name}-sha"),
        };
        audit.report("mcn".into(), module("mcn.wasm"), module("next.wasm"))
    }

    #[test]
    fn a_request_is_pending_until_the_status_answers_that_value() {
        assert_eq!(pending(&object(None, None)), None, "no spec.audit");
        assert_eq!(pending(&object(Some("1"), None)), Some("1"));
        assert_eq!(
            pending(&object(Some("2"), Some(("1", AuditState::Complete)))),
            Some("2"),
            "a new value asks again"
        );
        for state in [AuditState::Complete, AuditState::Failed] {
            assert_eq!(pending(&object(Some("1"), Some(("1", state)))), None);
        }
        assert_eq!(
            pending(&object(Some("1"), Some(("1", AuditState::Running)))),
            Some("1"),
            "an audit another replica left running is run again"
        );
    }

    #[test]
    fn the_answer_carries_the_counts_and_the_samples_or_why_it_failed() {
        let now = Timestamp::UNIX_EPOCH;
        let done = AuditStatus::finished("1", "t0", Ok(report()), now);
        assert_eq!(done.state, AuditState::Complete);
        assert_eq!(
            (done.objects, done.agree, done.differ, done.failed),
            (2, 1, 1, 0)
        );
        assert_eq!(done.message, "2 objects: 1 agree, 1 differ, 0 failed");
        assert_eq!(done.candidate_sha256.as_deref(), Some("next.wasm-sha"));
        assert_eq!(
            done.sample,
            [Sampled {
                object: "canary-0".into(),
                key: "Updated".into(),
                candidate: "False".into(),
                active: "True".into(),
            }]
        );
        assert_eq!(done.finished_at.as_deref(), Some("1970-01-01T00:00:00Z"));

        let failed = AuditStatus::finished("1", "t0", Err("reading Nodes: 403".into()), now);
        assert_eq!(
            (failed.state, failed.message.as_str(), failed.objects),
            (AuditState::Failed, "reading Nodes: 403", 0)
        );
        // What the apiserver stores comes back the same.
        let stored: AuditStatus =
            serde_json::from_value(serde_json::to_value(&done).unwrap_or_default())
                .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(stored, done);
    }

    #[tokio::test]
    async fn an_answer_is_kept_until_written_or_moot() {
        let (mut audits, _answered) = Audits::new();
        let answer = |request: &str| Answer {
            object: "mcn".into(),
            job: test_job(),
            status: AuditStatus::finished(request, "t0", Ok(report()), Timestamp::UNIX_EPOCH),
        };
        audits.answered(&answer("1"));
        audits.forget_written(&[object(Some("1"), Some(("1", AuditState::Running)))]);
        assert!(audits.statuses().contains_key("mcn"), "not written yet");
        let mut written = object(Some("1"), None);
        written.status = Some(crate::registry::crd::MachineConfigGuestStatus {
            audit: Some(answer("1").status),
            ..Default::default()
        });
        audits.forget_written(&[written]);
        assert!(audits.statuses().is_empty(), "written");
        audits.answered(&answer("1"));
        audits.forget_written(&[object(Some("2"), None)]);
        assert!(
            audits.statuses().is_empty(),
            "a newer request makes it moot"
        );
        audits.answered(&answer("1"));
        audits.forget_written(&[]);
        assert!(audits.statuses().is_empty(), "the object is gone");
    }
}
