//! What `/guests` and `mco-host guests` show: per registry entry the
//! module serving, its digest, limits and candidate, and the last attempt
//! to change it.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use super::Job;
use super::set::GuestSet;
use crate::runtime::{Guest, GuestModule};

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
    pub candidate: Option<ModuleStatus>,
    pub last_change: Option<Change>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModuleStatus {
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

/// What serves each job of `set`, without the history of changes.
pub(super) fn serving(set: &GuestSet) -> Vec<(Job, JobStatus)> {
    let describe = |module: &GuestModule,
                    limits: &crate::runtime::GuestLimits,
                    on_failure,
                    candidate: Option<&GuestModule>| JobStatus {
        module: module.name.clone(),
        sha256: module.digest.clone(),
        memory_mib: limits.memory_limit >> 20,
        deadline: limits.deadline,
        on_failure,
        candidate: candidate.map(|m| ModuleStatus {
            module: m.name.clone(),
            sha256: m.digest.clone(),
        }),
        last_change: None,
    };
    let mut jobs = vec![(
        Job::Mcn,
        describe(
            set.mcn.active.module(),
            set.mcn.active.limits(),
            "keep the last written MachineConfigNode status; retry with backoff",
            set.mcn.candidate.as_ref().map(Guest::module),
        ),
    )];
    for (platform, slot) in &set.boot_images {
        jobs.push((
            Job::BootImage(platform.clone()),
            describe(
                slot.active.module(),
                slot.active.limits(),
                "nothing is written for the MachineSet, which counts as Degraded; the next pass retries",
                slot.candidate.as_ref().map(Guest::module),
            ),
        ));
    }
    jobs
}

/// The serving part of `status` rewritten from `set`, keeping each job's
/// last change.
pub(super) fn refresh(status: &mut Status, set: &GuestSet) {
    let mut next = BTreeMap::new();
    for (job, mut job_status) in serving(set) {
        let name = job.to_string();
        job_status.last_change = status
            .jobs
            .get(&name)
            .and_then(|old| old.last_change.clone());
        next.insert(name, job_status);
    }
    status.jobs = next;
}
