//! The summary `mco-host status` shows, computed from what it read
//! (`inputs`) and a clock, so that the golden tests need no cluster and
//! `-o json` is this struct: the time, each job's section (see
//! `status_section`), the guests and the ownership.

use std::collections::BTreeMap;

use k8s_openapi::jiff::Timestamp;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use super::inputs::Rollout;
pub use super::inputs::{GuestSource, Inputs};
use mco_job::status_section::SectionSummary;
use mco_job::status_section::text::rfc3339;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub now: String,
    /// Each job's section, its keys in the document beside these.
    #[serde(flatten)]
    pub sections: Sections,
    pub guests: Guests,
    /// Each job's ownership mode and state, from the host's `/ownership`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ownership: Vec<mco_job::ownership::JobReport>,
}

/// The jobs' sections of a [`Summary`], in `JOBS` order.
#[derive(Debug)]
pub struct Sections(pub Vec<Box<dyn SectionSummary>>);

impl Serialize for Sections {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for section in &self.0 {
            for (key, value) in section.entries() {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

impl Summary {
    /// The summary without what only the clock changes, as JSON: a redraw
    /// happens for a change in the cluster, not for every tick of the
    /// durations.
    pub fn change_key(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(&Summary {
            now: String::new(),
            sections: Sections(self.sections.0.iter().map(|s| s.without_clock()).collect()),
            guests: self.guests.clone(),
            ownership: self.ownership.clone(),
        })
    }
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Guests {
    /// Where the answer came from, or why it is unknown.
    pub source: String,
    pub known: bool,
    pub jobs: Vec<GuestRow>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct GuestRow {
    pub job: String,
    pub module: String,
    pub sha256: String,
    pub candidate_sha256: Option<String>,
    /// agree / differ / failed counts of the candidate, when shadowing.
    pub shadow: Option<BTreeMap<String, u64>>,
    /// The candidate's rollout (`/guests`), while one is declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout: Option<Rollout>,
}

/// The whole summary at `now`.
pub fn summarize(inputs: &Inputs, now: Timestamp) -> Summary {
    Summary {
        now: rfc3339(now),
        sections: Sections(
            inputs
                .sections
                .iter()
                .map(|section| section.summarize(now))
                .collect(),
        ),
        guests: guests(&inputs.guests),
        ownership: inputs.ownership.clone(),
    }
}

fn guests(source: &GuestSource) -> Guests {
    match source {
        GuestSource::NotAsked => Guests {
            source: "unknown (no --admin-url)".into(),
            known: false,
            jobs: Vec::new(),
        },
        GuestSource::Unreachable(err) => Guests {
            source: format!("unknown ({err})"),
            known: false,
            jobs: Vec::new(),
        },
        GuestSource::Read {
            url,
            guests,
            shadow,
        } => {
            let jobs = guests
                .jobs
                .iter()
                .map(|(job, served)| {
                    let candidate = served.candidate.as_ref();
                    let candidate = candidate.and_then(|c| c.sha256.clone());
                    let counts: BTreeMap<String, u64> = shadow
                        .iter()
                        .filter(|((j, _), _)| j == job)
                        .map(|((_, r), n)| (r.clone(), n.max(0.0) as u64))
                        .collect();
                    GuestRow {
                        job: job.clone(),
                        module: served.module.clone(),
                        sha256: served.sha256.clone(),
                        shadow: candidate.as_ref().map(|_| counts),
                        candidate_sha256: candidate,
                        rollout: served.rollout.clone(),
                    }
                })
                .collect();
            Guests {
                source: url.clone(),
                known: true,
                jobs,
            }
        }
    }
}
