//! What a MachineConfigGuest says of audits: `spec.audit` asks for one,
//! `status.audit` answers it (`audit.rs` runs them). Types only, so that
//! the object (`mod.rs`) and the audits that read it do not name each other.

use k8s_openapi::jiff::Timestamp;
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::audit::{Failed, Report, Sampled};

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
    pub(super) fn running(request: &str, started_at: &str) -> AuditStatus {
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
