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
use kube::Client;
use tokio::sync::mpsc;

use super::audit_status::{AuditState, AuditStatus};
use crate::audit::cluster::ReadError;
use crate::audit::{Module, Report, SAMPLE_LIMIT};
use crate::crd::{self, MachineConfigGuest};
use crate::job::{EntryName, Jobs, Modelled};
use crate::set::GuestSet;

/// Bound on one audit: reading every object and deciding it twice. 5,000
/// nodes take seconds (docs/dev/records/benchmarks.md, "Auditing 5,000 nodes").
pub const DEADLINE: Duration = Duration::from_secs(600);

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

/// The report of `job`'s audit (`JobKind::audit`, under `gates`) of the
/// module and the candidate serving it in `set`. The modules run inside
/// the future.
async fn audit(
    client: &Client,
    set: &GuestSet,
    job: &EntryName,
    gates: &Modelled,
) -> Result<Report, ReadError> {
    let no_candidate = || ReadError::NoCandidate(job.to_string());
    let served = set.served(job).ok_or_else(no_candidate)?;
    let candidate = served.candidate().ok_or_else(no_candidate)?;
    let audit = job
        .kind()
        .audit(client, served, job, SAMPLE_LIMIT, gates)
        .await?;
    let active = Module::of(served.active().0);
    Ok(audit.report(job.to_string(), active, Module::of(candidate)))
}

/// An audit that ended, for the object it answers.
pub struct Answer {
    pub object: String,
    pub job: EntryName,
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
    /// request, under `gates` ([`Config::gates`](crate::swap::Config)),
    /// unless one runs: the lease holder's alone.
    pub fn start(
        &mut self,
        objects: &[MachineConfigGuest],
        jobs: &'static Jobs,
        gates: &'static Modelled,
        client: &Client,
        set: Arc<GuestSet>,
    ) {
        self.forget_written(objects);
        if self.running.is_some() {
            return;
        }
        let mut waiting: Vec<(&str, &str, EntryName)> = objects
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
            let audit = audit(&client, &set, &job, gates);
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
    use crate::audit::{Audit, Sampled};
    use crate::job::tests::test_job;

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
        written.status = Some(crate::crd::MachineConfigGuestStatus {
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
