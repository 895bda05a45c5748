//! What `mco-host status` summarizes: each job's section's objects (read
//! by the job, see `status_section`), and what the view reads itself from
//! the host's admin address (`/guests`, `/ownership`, shadow counts of
//! `/metrics`); and where plain JSON objects (`kubectl get -o json`, the
//! golden cases) become them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize, Serializer};

use mco_job::jobs::StatusCommand;
use mco_job::status_section::{Flags, ReadError, SectionInputs};

/// Everything the summary is computed from.
#[derive(Debug)]
pub struct Inputs {
    /// What each job's section read, in `JOBS` order.
    pub sections: Vec<Box<dyn SectionInputs>>,
    pub guests: GuestSource,
    /// The host's `/ownership` (empty without an admin URL, or from a host
    /// that does not serve it).
    pub ownership: Vec<mco_job::ownership::JobReport>,
}

/// The sections of the jobs that have one, in `JOBS` order.
pub(super) fn sections() -> impl Iterator<Item = &'static dyn StatusCommand> {
    crate::JOBS.iter().filter_map(|job| job.contract().status)
}

/// What the guests section shows: the host's `/guests` (and shadow counts
/// from `/metrics`) when an admin URL was given and answered.
#[derive(Debug, Clone, Default)]
pub enum GuestSource {
    /// No `--admin-url`.
    #[default]
    NotAsked,
    /// The admin URL did not answer; the error.
    Unreachable(String),
    Read {
        url: String,
        /// The `/guests` document.
        guests: GuestsDocument,
        /// `mco_shadow_evaluations_total` by (job, result), if `/metrics`
        /// answered.
        shadow: BTreeMap<(String, String), f64>,
    },
}

/// The host's `/guests`, reduced to what the view shows.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct GuestsDocument {
    pub jobs: BTreeMap<String, ServedJob>,
}

/// One job of `/guests`: the module serving it, and its candidate.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct ServedJob {
    pub module: String,
    pub sha256: String,
    pub candidate: Option<Candidate>,
    pub rollout: Option<Rollout>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct Candidate {
    pub sha256: Option<String>,
}

/// A candidate's rollout, as `/guests` gives it: its stage and its
/// counts in that stage for the table, and the whole object, which
/// `-o json` passes on as the host wrote it (fields this view does not
/// know included).
#[derive(Debug, Clone, PartialEq)]
pub struct Rollout {
    pub stage: Option<String>,
    pub agree: u64,
    pub differ: u64,
    pub failed: u64,
    /// Passed through whole: the host, not this view, says what a
    /// rollout holds.
    document: serde_json::Map<String, serde_json::Value>,
}

impl<'de> Deserialize<'de> for Rollout {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// What the table shows; the counts are 0 and the stage unknown
        /// in a rollout not of this shape.
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct Stage {
            stage: Option<String>,
            agree: u64,
            differ: u64,
            failed: u64,
        }
        let document = serde_json::Map::deserialize(deserializer)?;
        let Stage {
            stage,
            agree,
            differ,
            failed,
        } = Stage::deserialize(&document).unwrap_or_default();
        Ok(Rollout {
            stage,
            agree,
            differ,
            failed,
            document,
        })
    }
}

impl Serialize for Rollout {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.document.serialize(serializer)
    }
}

impl Inputs {
    /// Sorts objects by kind, as a `kubectl get -o json` list of
    /// everything would hold them (the golden cases are such lists), each
    /// section taking its own, decoded as the live reader decodes them.
    /// Unknown kinds and objects that do not decode are left out; each
    /// section reads its flags from `flags`.
    pub fn from_objects(
        objects: impl IntoIterator<Item = serde_json::Value>,
        flags: &Flags,
    ) -> Result<Inputs, ReadError> {
        let objects: Vec<serde_json::Value> = objects.into_iter().collect();
        Ok(Inputs {
            sections: sections()
                .map(|section| section.decode(&objects, flags))
                .collect::<Result<_, _>>()?,
            guests: GuestSource::NotAsked,
            ownership: Vec::new(),
        })
    }
}
