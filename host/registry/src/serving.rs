//! What `/guests` and `mco-host guests` show: per registry entry the
//! module serving, its digest, limits and candidate, and the last attempt
//! to change it.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use super::rollout::RolloutStatus;
use mco_runtime::{GuestLimits, GuestModule};

/// What the status endpoint shows for one job.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct JobStatus {
    /// Where the serving module came from.
    pub module: String,
    pub sha256: String,
    pub memory_mib: usize,
    #[serde(with = "humantime_serde_str")]
    pub deadline: Duration,
    /// What happens to an object when this job's guest fails on it.
    pub on_failure: &'static str,
    pub candidate: Option<CandidateStatus>,
    /// Where the candidate's rollout is, while one is declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout: Option<RolloutStatus>,
    pub last_change: Option<Change>,
}

/// The candidate shadowing a job's module.
#[derive(Debug, Clone, Serialize)]
pub struct CandidateStatus {
    pub module: String,
    pub sha256: String,
}

/// The last attempt to change a job's guest.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// RFC 3339.
    pub at: String,
    /// `loaded`, `swapped` or `failed`.
    pub result: &'static str,
    /// What the attempt tried to load, as far as it got.
    pub module: Option<String>,
    pub sha256: Option<String>,
    pub error: Option<String>,
}

/// Everything `/guests` shows.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub registry: String,
    /// Why the registry itself could not be read, while it cannot.
    pub registry_error: Option<String>,
    /// Entries that could not load at start, with why and what serves
    /// them instead; cleared when the entry itself loads.
    pub degraded: BTreeMap<String, String>,
    pub jobs: BTreeMap<String, JobStatus>,
}

mod humantime_serde_str {
    pub fn serialize<S: serde::Serializer>(
        d: &std::time::Duration,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_str(&humantime::format_duration(*d).to_string())
    }
}

impl JobStatus {
    /// What serves a job, without the history of changes.
    pub fn serving(
        active: &GuestModule,
        limits: &GuestLimits,
        on_failure: &'static str,
        candidate: Option<&GuestModule>,
    ) -> JobStatus {
        JobStatus {
            module: active.name.clone(),
            sha256: active.digest.clone(),
            memory_mib: limits.memory_limit >> 20,
            deadline: limits.deadline,
            on_failure,
            candidate: candidate.map(|m| CandidateStatus {
                module: m.name.clone(),
                sha256: m.digest.clone(),
            }),
            rollout: None,
            last_change: None,
        }
    }
}
