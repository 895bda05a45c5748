//! Rolling a candidate module out the way administrators roll out
//! MachineConfigs: beside the module without writing (`Shadow`), for a
//! subset of the objects a job names (`Canary`), then for every object
//! (`Active`), promoted by evidence and rolled back by failures. The registry
//! knows no job, so this file knows stages and counts only: a job asks
//! [`Rollouts::route`] whose decision it writes and reports each comparison
//! with [`Rollouts::record`]. The state lives in the MachineConfigGuest's
//! `status.rollout`, written by the lease holder, so a failover neither
//! repeats a stage nor skips one. The pure part, [`reconcile`] and
//! [`judge`], decides every move. See docs/guests/rollout.md.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use super::canary::{CanarySpec, Selection};
use super::job::EntryName;
use super::shadow::Comparison;

/// `spec.rollout` of a MachineConfigGuest.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[x_kube(validation = Rule::new("self.stage != 'RolledBack'").message("spec.rollout.stage is Shadow, Canary or Active; RolledBack is what the host reports"))]
#[x_kube(validation = Rule::new("self.stage != 'Canary' || has(self.canary)").message("spec.rollout.canary names the objects of the Canary stage"))]
pub struct RolloutSpec {
    /// The stage asked for; a change moves the rollout there at once (a
    /// promotion, or a step back, by hand). With `promotion`, the host
    /// moves it further by itself. Default `Shadow`.
    #[serde(default)]
    pub stage: Stage,
    /// The objects whose decisions the candidate makes in `Canary`, by the
    /// field of their job (the CRD says which: `canary.rs`). Without it,
    /// promotion goes from `Shadow` straight to `Active`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<CanarySpec>,
    /// Promotion by evidence; without it, only a change of `stage` promotes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promotion: Option<Promotion>,
    /// Differences from the module that one stage tolerates; one more rolls
    /// the rollout back. Default 0: the candidate must decide as the module
    /// does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max_differ: Option<u64>,
}

/// Where a rollout is: `Shadow` (the candidate decides beside the module,
/// nothing it decides is written), `Canary` (its decisions are written for
/// the canary objects), `Active` (for every object) or `RolledBack` (ended
/// by a failure or too many differences: the module decides every object
/// again and the candidate no longer runs).
// The variants carry no doc comments: schemars would turn them into a
// `oneOf` of constants, which a CRD's structural schema does not take.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum Stage {
    #[default]
    Shadow,
    Canary,
    Active,
    RolledBack,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Shadow => "Shadow",
            Stage::Canary => "Canary",
            Stage::Active => "Active",
            Stage::RolledBack => "RolledBack",
        }
    }

    /// The stage promotion leads to; `None` from the last one.
    fn next(self, canary: bool) -> Option<Stage> {
        match self {
            Stage::Shadow if canary => Some(Stage::Canary),
            Stage::Shadow | Stage::Canary => Some(Stage::Active),
            Stage::Active | Stage::RolledBack => None,
        }
    }
}

/// When a stage is promoted without a hand: all of these hold.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Promotion {
    /// Evaluations the candidate decided as the module did, in this stage.
    #[schemars(range(min = 1))]
    pub evaluations: u64,
    /// The least time in the stage, such as `30m` or `1h30m`.
    #[serde(default = "default_minimum_time")]
    #[x_kube(validation = Rule::new("duration(self) >= duration('0s')").message("minimumTime is a duration such as 30m or 1h30m"))]
    pub minimum_time: String,
}

fn default_minimum_time() -> String {
    "0s".into()
}

/// `status.rollout`: where the rollout of the served candidate is.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStatus {
    /// The candidate this rollout is about; another one starts afresh.
    pub candidate_sha256: String,
    /// The `spec.rollout.stage` last acted on: another one is a move by hand.
    pub requested: Stage,
    pub stage: Stage,
    /// When `stage` began (RFC 3339).
    pub since: String,
    /// The candidate's evaluations in this stage, against the module's.
    pub agree: u64,
    pub differ: u64,
    pub failed: u64,
    /// The module the candidate took over from, once `Active` (sha256):
    /// `spec.rollout.stage: Shadow` hands every object back to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_sha256: Option<String>,
    /// Why the stage last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A change of stage, for the Event and the log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    pub from: Option<Stage>,
    pub to: Stage,
    /// `RolloutStarted`, `MovedByHand`, `Promoted`, `CandidateFailed` or
    /// `TooManyDifferences`.
    pub reason: &'static str,
    pub message: String,
}

/// Why a spec cannot drive a rollout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("spec.rollout.promotion.minimumTime {0:?}: {1}")]
    MinimumTime(String, String),
}

impl RolloutSpec {
    fn minimum_time(&self) -> Result<Duration, SpecError> {
        match &self.promotion {
            None => Ok(Duration::ZERO),
            Some(p) => humantime::parse_duration(&p.minimum_time)
                .map_err(|e| SpecError::MinimumTime(p.minimum_time.clone(), e.to_string())),
        }
    }

    fn max_differ(&self) -> u64 {
        self.max_differ.unwrap_or(0)
    }

    /// Checks what the schema cannot.
    pub fn validate(&self) -> Result<(), SpecError> {
        self.minimum_time().map(|_| ())
    }
}

/// The status of the rollout of `candidate`, given the one stored and the
/// spec: a new candidate starts at the stage the spec asks for, and a
/// changed `stage` moves there by hand; counts start again with every
/// stage.
pub fn reconcile(
    stored: Option<&RolloutStatus>,
    spec: &RolloutSpec,
    candidate: &str,
    active: &str,
    now: Timestamp,
) -> (RolloutStatus, Option<Move>) {
    let Some(stored) = stored.filter(|s| s.candidate_sha256 == candidate) else {
        let mut status = RolloutStatus {
            candidate_sha256: candidate.to_owned(),
            requested: spec.stage,
            ..RolloutStatus::default()
        };
        let message = format!(
            "candidate sha256:{} starts in {}",
            short(candidate),
            spec.stage.as_str()
        );
        let moved = enter(
            &mut status,
            None,
            spec.stage,
            "RolloutStarted",
            message,
            active,
            now,
        );
        return (status, Some(moved));
    };
    let mut status = stored.clone();
    if spec.stage == stored.requested {
        return (status, None);
    }
    status.requested = spec.stage;
    if spec.stage == stored.stage {
        return (status, None);
    }
    let message = format!(
        "spec.rollout.stage asks for {} (was {})",
        spec.stage.as_str(),
        stored.stage.as_str()
    );
    let from = Some(stored.stage);
    let moved = enter(
        &mut status,
        from,
        spec.stage,
        "MovedByHand",
        message,
        active,
        now,
    );
    (status, Some(moved))
}

/// Counts one comparison of the candidate with the module.
pub fn count(status: &mut RolloutStatus, comparison: Comparison) {
    let counter = match comparison {
        Comparison::Agree => &mut status.agree,
        Comparison::Differ => &mut status.differ,
        Comparison::Failed => &mut status.failed,
    };
    *counter = counter.saturating_add(1);
}

/// The move the evidence calls for, applied to `status`: a failure or one
/// difference beyond `maxDiffer` rolls back at once; promotion waits for
/// every criterion of `spec.promotion`.
pub fn judge(
    status: &mut RolloutStatus,
    spec: &RolloutSpec,
    active: &str,
    now: Timestamp,
) -> Option<Move> {
    if status.stage == Stage::RolledBack {
        return None;
    }
    let from = Some(status.stage);
    if status.failed > 0 {
        let message = format!(
            "the candidate failed in {} ({} failed, {} differ, {} agree); the module decides every object again",
            status.stage.as_str(),
            status.failed,
            status.differ,
            status.agree
        );
        return Some(enter(
            status,
            from,
            Stage::RolledBack,
            "CandidateFailed",
            message,
            active,
            now,
        ));
    }
    if status.differ > spec.max_differ() {
        let message = format!(
            "the candidate decided differently {} times in {}, more than maxDiffer {}; the module decides every object again",
            status.differ,
            status.stage.as_str(),
            spec.max_differ()
        );
        return Some(enter(
            status,
            from,
            Stage::RolledBack,
            "TooManyDifferences",
            message,
            active,
            now,
        ));
    }
    let next = status.stage.next(spec.canary.is_some())?;
    let waiting = promotion_pending(status, spec, now)?;
    if waiting.is_some() {
        return None;
    }
    let message = format!(
        "{} agreeing evaluations in {} ({} differ, none failed)",
        status.agree,
        status.stage.as_str(),
        status.differ
    );
    Some(enter(status, from, next, "Promoted", message, active, now))
}

/// Whether automatic promotion applies (`None`: it does not, by hand only
/// or the last stage) and, if so, what it still waits for (`Some(None)`:
/// nothing).
pub fn promotion_pending(
    status: &RolloutStatus,
    spec: &RolloutSpec,
    now: Timestamp,
) -> Option<Option<String>> {
    let promotion = spec.promotion.as_ref()?;
    status.stage.next(spec.canary.is_some())?;
    let minimum = spec.minimum_time().ok()?;
    let since: Timestamp = status.since.parse().ok()?;
    let elapsed = Duration::try_from(now.duration_since(since)).unwrap_or_default();
    let mut waits = Vec::new();
    if status.agree < promotion.evaluations {
        waits.push(format!(
            "{} more agreeing evaluations",
            promotion.evaluations - status.agree
        ));
    }
    if elapsed < minimum {
        let left = Duration::from_secs((minimum - elapsed).as_secs().max(1));
        waits.push(format!(
            "{} more in the stage",
            humantime::format_duration(left)
        ));
    }
    Some((!waits.is_empty()).then(|| waits.join(" and ")))
}

fn enter(
    status: &mut RolloutStatus,
    from: Option<Stage>,
    to: Stage,
    reason: &'static str,
    message: String,
    active: &str,
    now: Timestamp,
) -> Move {
    if to == Stage::Active && from != Some(Stage::Active) {
        status.previous_sha256 = Some(active.to_owned());
    }
    status.stage = to;
    status.since = now.to_string();
    (status.agree, status.differ, status.failed) = (0, 0, 0);
    status.reason = Some(reason.to_owned());
    status.message = Some(message.clone());
    Move {
        from,
        to,
        reason,
        message,
    }
}

fn short(sha256: &str) -> &str {
    &sha256[..sha256.len().min(12)]
}

/// Whose decision a job writes for one object, and whether the candidate
/// runs at all.
#[derive(Debug, Clone, Default)]
pub struct Route {
    /// `None`: the job has no rollout; a candidate only shadows.
    pub stage: Option<Stage>,
    /// The canary as the job read it ([`CanarySpec::read`]).
    pub canary: Option<Selection>,
}

impl Route {
    /// Whether a candidate, if the job has one, is evaluated.
    pub fn runs_candidate(&self) -> bool {
        self.stage != Some(Stage::RolledBack)
    }

    /// Whether the candidate's decision is written, for each of `items`;
    /// `in_canary` says whether an item is in the canary subset, given the
    /// canary as the job reads it (`C`, its [`CanaryField`] type, taken
    /// once for the batch; a canary of another type selects nothing, see
    /// [`Selection::get`]).
    ///
    /// [`CanaryField`]: super::canary::CanaryField
    pub fn candidate_writes<C: 'static, T>(
        &self,
        items: &[T],
        in_canary: impl Fn(&C, &T) -> bool,
    ) -> Vec<bool> {
        let canary = match self.stage {
            Some(Stage::Canary) => self.canary.as_ref().and_then(Selection::get::<C>),
            _ => None,
        };
        let active = self.stage == Some(Stage::Active);
        (items.iter())
            .map(|item| active || canary.is_some_and(|canary| in_canary(canary, item)))
            .collect()
    }
}

/// A job's rollout as the host holds it.
#[derive(Debug, Clone)]
struct Live {
    /// The MachineConfigGuest it belongs to.
    object: String,
    spec: RolloutSpec,
    canary: Option<Selection>,
    status: RolloutStatus,
    active: String,
}

#[derive(Default)]
struct Inner {
    jobs: BTreeMap<EntryName, Live>,
    /// Moves not yet published as Events, with the object they are about.
    moves: Vec<(String, Move)>,
}

/// What one job's MachineConfigGuest says of its rollout, for [`Rollouts::sync`].
pub struct Declared<'a> {
    pub object: &'a str,
    pub spec: &'a RolloutSpec,
    /// `spec.canary` as the job read it.
    pub canary: Option<Selection>,
    pub stored: Option<&'a RolloutStatus>,
    /// The served module and candidate (sha256).
    pub active: &'a str,
    pub candidate: &'a str,
}

/// Every job's rollout, shared by the controllers and the registry poller.
#[derive(Clone)]
pub struct Rollouts {
    inner: Arc<Mutex<Inner>>,
    /// Bumped whenever a route changes, so jobs decide their objects again.
    changed: watch::Sender<u64>,
}

impl Default for Rollouts {
    fn default() -> Self {
        Rollouts {
            inner: Arc::default(),
            changed: watch::Sender::new(0),
        }
    }
}

impl Rollouts {
    /// Whose decisions `job` writes now, when its candidate is `candidate`
    /// (sha256). A candidate the rollout is not about only shadows: one
    /// just swapped in waits for the next sync to start its own rollout,
    /// and never inherits a stage its predecessor earned.
    pub fn route(&self, job: &EntryName, candidate: Option<&str>) -> Route {
        self.with(|inner| {
            inner
                .jobs
                .get(job)
                .filter(|live| Some(live.status.candidate_sha256.as_str()) == candidate)
                .map_or_else(Route::default, |live| Route {
                    stage: Some(live.status.stage),
                    canary: live.canary.clone(),
                })
        })
    }

    /// Counts one comparison of `candidate` (sha256) for `job`'s rollout
    /// and makes the move the evidence calls for (a rollback at once, so
    /// the next object is decided by the module again).
    pub fn record(&self, job: &EntryName, candidate: &str, comparison: Comparison) {
        let moved = self.with(|inner| {
            let live = inner.jobs.get_mut(job)?;
            if live.status.stage == Stage::RolledBack || live.status.candidate_sha256 != candidate {
                return None;
            }
            count(&mut live.status, comparison);
            let moved = judge(&mut live.status, &live.spec, &live.active, Timestamp::now())?;
            let object = live.object.clone();
            inner.moves.push((object, moved.clone()));
            Some(moved)
        });
        if let Some(moved) = moved {
            log(job, &moved);
            self.changed.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    /// Brings the rollouts in line with the objects, once per registry poll:
    /// `declared` holds every job with a rollout and a served candidate;
    /// other jobs have none. The lease holder keeps counting from what it
    /// holds, unless the stored status is further on ([`latest`]), and
    /// promotes on time; another replica takes the stored status as it is,
    /// ready to carry on if it takes the lease.
    pub fn sync(&self, declared: BTreeMap<EntryName, Declared<'_>>, leader: bool) {
        let now = Timestamp::now();
        let mut moves = Vec::new();
        let mut routes_changed = false;
        self.with(|inner| {
            let before: BTreeMap<EntryName, Stage> = (inner.jobs.iter())
                .map(|(job, live)| (job.clone(), live.status.stage))
                .collect();
            let mut next = BTreeMap::new();
            for (job, declared) in declared {
                let held = inner
                    .jobs
                    .get(&job)
                    .filter(|_| leader)
                    .map(|live| &live.status);
                let (mut status, moved) = reconcile(
                    latest(held, declared.stored, declared.candidate),
                    declared.spec,
                    declared.candidate,
                    declared.active,
                    now,
                );
                let judged = if leader {
                    judge(&mut status, declared.spec, declared.active, now)
                } else {
                    None
                };
                for moved in moved.into_iter().chain(judged) {
                    moves.push((job.clone(), declared.object.to_owned(), moved));
                }
                next.insert(
                    job,
                    Live {
                        object: declared.object.to_owned(),
                        spec: declared.spec.clone(),
                        canary: declared.canary,
                        status,
                        active: declared.active.to_owned(),
                    },
                );
            }
            let after: BTreeMap<EntryName, Stage> = (next.iter())
                .map(|(job, live)| (job.clone(), live.status.stage))
                .collect();
            routes_changed = before != after;
            inner.jobs = next;
            if leader {
                for (_, object, moved) in &moves {
                    inner.moves.push((object.clone(), moved.clone()));
                }
            } else {
                inner.moves.clear();
            }
        });
        if leader {
            for (job, _, moved) in &moves {
                log(job, moved);
            }
        }
        if routes_changed {
            self.changed.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    /// Each job's rollout status, by job.
    pub fn statuses(&self) -> BTreeMap<EntryName, (RolloutSpec, RolloutStatus)> {
        self.with(|inner| {
            (inner.jobs.iter())
                .map(|(job, live)| (job.clone(), (live.spec.clone(), live.status.clone())))
                .collect()
        })
    }

    /// The moves since the last call, with their MachineConfigGuest.
    pub fn take_moves(&self) -> Vec<(String, Move)> {
        self.with(|inner| std::mem::take(&mut inner.moves))
    }

    /// Yields whenever a route changes (a stage moved, a rollout began or
    /// ended).
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        match self.inner.lock() {
            Ok(mut inner) => f(&mut inner),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }
}

/// The status further on, of the held one and the stored one, about
/// `candidate`: the one whose stage began later, or in one stage the one
/// that counted more evaluations; the held one on a tie. A leader holds
/// what it wrote and what it counted since, so the held one stays. A
/// replica that has just taken the lease holds what it read at its last
/// poll as a standby, and the previous leader may have moved on since (a
/// rollback included), which the stored one then says: that move is
/// kept, not overwritten. (`since` is the clock of the replica that moved:
/// replicas' clocks must agree to within a registry poll.)
fn latest<'a>(
    held: Option<&'a RolloutStatus>,
    stored: Option<&'a RolloutStatus>,
    candidate: &str,
) -> Option<&'a RolloutStatus> {
    let about = |status: &&RolloutStatus| status.candidate_sha256 == candidate;
    match (held.filter(about), stored.filter(about)) {
        (Some(held), Some(stored)) if progress(stored) > progress(held) => Some(stored),
        (Some(held), _) => Some(held),
        (None, stored) => stored,
    }
}

/// How far a rollout has got: when its stage began, then its evaluations
/// in that stage.
fn progress(status: &RolloutStatus) -> (Option<Timestamp>, u64) {
    let evaluations = (status.agree)
        .saturating_add(status.differ)
        .saturating_add(status.failed);
    (status.since.parse().ok(), evaluations)
}

fn log(job: &EntryName, moved: &Move) {
    let from = moved.from.map(Stage::as_str).unwrap_or("-");
    if moved.to == Stage::RolledBack {
        tracing::warn!(entry = %job, from, reason = moved.reason, "rollout rolled back: {}", moved.message);
    } else {
        tracing::info!(entry = %job, from, to = moved.to.as_str(), reason = moved.reason, "rollout: {}", moved.message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CANDIDATE: &str = "cccccccccccccccccccccccccccccccc";
    const ACTIVE: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).unwrap_or(Timestamp::UNIX_EPOCH)
    }

    fn automatic(evaluations: u64, minimum: &str) -> RolloutSpec {
        RolloutSpec {
            stage: Stage::Shadow,
            canary: Some(CanarySpec(BTreeMap::from([(
                "pools".into(),
                serde_json::json!(["worker-canary"]),
            )]))),
            promotion: Some(Promotion {
                evaluations,
                minimum_time: minimum.into(),
            }),
            max_differ: None,
        }
    }

    fn started(spec: &RolloutSpec) -> RolloutStatus {
        let (status, moved) = reconcile(None, spec, CANDIDATE, ACTIVE, at(0));
        assert_eq!(moved.map(|m| m.reason), Some("RolloutStarted"));
        status
    }

    fn agree(status: &mut RolloutStatus, n: u64) {
        for _ in 0..n {
            count(status, Comparison::Agree);
        }
    }

    #[test]
    fn promotion_waits_for_every_criterion_then_walks_each_stage() {
        let spec = automatic(3, "10m");
        let mut status = started(&spec);
        assert_eq!(
            (status.stage, status.requested),
            (Stage::Shadow, Stage::Shadow)
        );
        agree(&mut status, 3);
        assert_eq!(judge(&mut status, &spec, ACTIVE, at(60)), None, "too early");
        assert_eq!(
            promotion_pending(&status, &spec, at(60)),
            Some(Some("9m more in the stage".into()))
        );
        let moved = judge(&mut status, &spec, ACTIVE, at(600));
        assert_eq!(
            moved.map(|m| (m.from, m.to, m.reason)),
            Some((Some(Stage::Shadow), Stage::Canary, "Promoted"))
        );
        assert_eq!(
            (status.agree, status.since.as_str()),
            (0, at(600).to_string().as_str()),
            "counts start again"
        );
        agree(&mut status, 2);
        assert_eq!(
            judge(&mut status, &spec, ACTIVE, at(1300)),
            None,
            "too few agreeing"
        );
        assert_eq!(
            promotion_pending(&status, &spec, at(1300)),
            Some(Some("1 more agreeing evaluations".into()))
        );
        agree(&mut status, 1);
        let moved = judge(&mut status, &spec, ACTIVE, at(1300));
        assert_eq!(moved.map(|m| m.to), Some(Stage::Active));
        assert_eq!(status.previous_sha256.as_deref(), Some(ACTIVE));
        agree(&mut status, 10);
        assert_eq!(
            judge(&mut status, &spec, ACTIVE, at(9000)),
            None,
            "Active is the last stage"
        );
        assert_eq!(promotion_pending(&status, &spec, at(9000)), None);
    }

    #[test]
    fn without_a_canary_promotion_skips_to_active_and_without_promotion_nothing_moves() {
        let mut spec = automatic(1, "0s");
        spec.canary = None;
        let mut status = started(&spec);
        agree(&mut status, 1);
        assert_eq!(
            judge(&mut status, &spec, ACTIVE, at(1)).map(|m| m.to),
            Some(Stage::Active)
        );

        spec.promotion = None;
        let mut status = started(&spec);
        agree(&mut status, 1000);
        assert_eq!(judge(&mut status, &spec, ACTIVE, at(100_000)), None);
        assert_eq!(promotion_pending(&status, &spec, at(100_000)), None);
    }

    #[test]
    fn a_failure_or_one_difference_too_many_rolls_back_in_any_stage() {
        let spec = automatic(100, "1h");
        let mut status = started(&spec);
        count(&mut status, Comparison::Differ);
        let moved = judge(&mut status, &spec, ACTIVE, at(5));
        assert_eq!(
            moved.as_ref().map(|m| (m.to, m.reason)),
            Some((Stage::RolledBack, "TooManyDifferences"))
        );
        let message = moved.map(|m| m.message).unwrap_or_default();
        assert!(
            message.contains("decided differently 1 times in Shadow, more than maxDiffer 0"),
            "{message}"
        );
        count(&mut status, Comparison::Failed);
        assert_eq!(
            judge(&mut status, &spec, ACTIVE, at(6)),
            None,
            "rolled back stays rolled back"
        );

        let mut tolerant = spec.clone();
        tolerant.max_differ = Some(2);
        tolerant.stage = Stage::Active;
        let (mut status, _) = reconcile(None, &tolerant, CANDIDATE, ACTIVE, at(0));
        count(&mut status, Comparison::Differ);
        count(&mut status, Comparison::Differ);
        assert_eq!(
            judge(&mut status, &tolerant, ACTIVE, at(1)),
            None,
            "within maxDiffer"
        );
        count(&mut status, Comparison::Failed);
        let moved = judge(&mut status, &tolerant, ACTIVE, at(2));
        assert_eq!(
            moved.map(|m| (m.from, m.reason)),
            Some((Some(Stage::Active), "CandidateFailed"))
        );
        assert_eq!(
            status.previous_sha256.as_deref(),
            Some(ACTIVE),
            "kept for the record"
        );
    }

    #[test]
    fn a_hand_move_a_new_candidate_and_an_unchanged_spec() {
        let spec = automatic(5, "0s");
        let status = started(&spec);
        let (same, moved) = reconcile(Some(&status), &spec, CANDIDATE, ACTIVE, at(30));
        assert_eq!(
            (same, moved),
            (status.clone(), None),
            "nothing asked, nothing moves"
        );

        let mut by_hand = spec.clone();
        by_hand.stage = Stage::Active;
        let (moved_status, moved) = reconcile(Some(&status), &by_hand, CANDIDATE, ACTIVE, at(40));
        assert_eq!(
            moved.map(|m| (m.to, m.reason)),
            Some((Stage::Active, "MovedByHand"))
        );
        assert_eq!(moved_status.requested, Stage::Active);

        // Undoing the promotion is one field: back to Shadow.
        let (back, moved) = reconcile(Some(&moved_status), &spec, CANDIDATE, ACTIVE, at(50));
        assert_eq!(moved.map(|m| m.to), Some(Stage::Shadow));
        assert_eq!(back.previous_sha256.as_deref(), Some(ACTIVE));

        let (fresh, moved) = reconcile(Some(&back), &spec, "dddd", ACTIVE, at(60));
        assert_eq!(moved.map(|m| m.reason), Some("RolloutStarted"));
        assert_eq!(
            (fresh.candidate_sha256.as_str(), fresh.stage),
            ("dddd", Stage::Shadow)
        );
    }

    #[test]
    fn routes_follow_the_stage_and_the_canary_subset() {
        let canary = Some(Selection::new(vec!["worker-canary".to_owned()]));
        // Two objects, in the pools `worker-canary` and `worker`.
        let objects = ["worker-canary", "worker"];
        let in_canary = |pools: &Vec<String>, pool: &&str| pools.iter().any(|p| p == pool);
        let route = |stage| Route {
            stage,
            canary: canary.clone(),
        };
        let writes = |stage| route(stage).candidate_writes(&objects, in_canary);
        assert_eq!(writes(None), [false, false]);
        assert!(route(None).runs_candidate());
        assert_eq!(writes(Some(Stage::Shadow)), [false, false]);
        assert_eq!(writes(Some(Stage::Canary)), [true, false]);
        assert_eq!(
            route(Some(Stage::Canary)).candidate_writes(&objects, |_: &String, _| true),
            [false, false],
            "a canary of another type selects nothing"
        );
        assert_eq!(
            route(Some(Stage::Active)).candidate_writes(&objects, |_: &Vec<String>, _| false),
            [true, true]
        );
        assert!(!route(Some(Stage::RolledBack)).runs_candidate());
    }

    fn declared<'a>(
        spec: &'a RolloutSpec,
        stored: Option<&'a RolloutStatus>,
    ) -> BTreeMap<EntryName, Declared<'a>> {
        BTreeMap::from([(
            crate::job::tests::test_job(),
            Declared {
                object: "mcn",
                spec,
                canary: None,
                stored,
                active: ACTIVE,
                candidate: CANDIDATE,
            },
        )])
    }

    /// A stored status whose Canary stage began an hour ago, with two
    /// agreements.
    fn in_canary(spec: &RolloutSpec) -> RolloutStatus {
        let mut stored = started(spec);
        stored.stage = Stage::Canary;
        stored.since =
            (Timestamp::now() - k8s_openapi::jiff::SignedDuration::from_hours(1)).to_string();
        stored.agree = 2;
        stored
    }

    #[test]
    fn the_leader_counts_on_from_the_status_a_standby_only_follows_it() {
        let job = crate::job::tests::test_job();
        let spec = automatic(3, "0s");
        let stored = in_canary(&spec);
        let standby = Rollouts::default();
        standby.sync(declared(&spec, Some(&stored)), false);
        standby.record(&job, CANDIDATE, Comparison::Agree);
        standby.sync(declared(&spec, Some(&stored)), false);
        assert_eq!(
            standby.statuses()[&job].1,
            stored,
            "a standby holds what the status says"
        );
        assert!(standby.take_moves().is_empty(), "and publishes no move");

        // The standby takes the lease: it counts on from the stored 2.
        let changes = standby.changes();
        standby.record(&job, CANDIDATE, Comparison::Agree);
        assert_eq!(
            standby.route(&job, Some(CANDIDATE)).stage,
            Some(Stage::Active),
            "the third agreement promotes"
        );
        assert!(
            changes.has_changed().unwrap_or(false),
            "a promotion is a route change"
        );
        let moves = standby.take_moves();
        assert_eq!(moves.len(), 1);
        assert_eq!((moves[0].0.as_str(), moves[0].1.to), ("mcn", Stage::Active));
        // The next poll as leader keeps what it holds, not the stale status.
        standby.sync(declared(&spec, Some(&stored)), true);
        assert_eq!(
            standby.route(&job, Some(CANDIDATE)).stage,
            Some(Stage::Active)
        );
    }

    /// The old leader moved after the new one's last poll as a standby:
    /// the new leader takes that move (a rollback, more counts) from the
    /// stored status, and publishes no move of its own for it.
    #[test]
    fn a_new_leader_takes_what_the_old_one_stored_after_its_last_poll() {
        let job = crate::job::tests::test_job();
        let spec = automatic(10, "0s");
        let polled = in_canary(&spec);

        let mut counted = polled.clone();
        counted.agree = 5;
        let mut rolled_back = polled.clone();
        let now = Timestamp::now();
        let moved = {
            rolled_back.differ = 1;
            judge(&mut rolled_back, &spec, ACTIVE, now)
        };
        assert_eq!(moved.map(|m| m.to), Some(Stage::RolledBack));

        for (stored, stage, agree) in [
            (&counted, Stage::Canary, 5),
            (&rolled_back, Stage::RolledBack, 0),
        ] {
            let replica = Rollouts::default();
            replica.sync(declared(&spec, Some(&polled)), false);
            replica.sync(declared(&spec, Some(stored)), true);
            let (_, held) = &replica.statuses()[&job];
            assert_eq!((held.stage, held.agree), (stage, agree), "{held:?}");
            assert_eq!(held, stored, "the stored status, as it is");
            assert!(replica.take_moves().is_empty(), "the old leader's move");
            assert_eq!(
                replica.route(&job, Some(CANDIDATE)).runs_candidate(),
                stage != Stage::RolledBack
            );
        }

        // A status about another candidate is no later point of this one.
        let mut other = rolled_back.clone();
        other.candidate_sha256 = "dddd".into();
        assert_eq!(
            latest(Some(&polled), Some(&other), CANDIDATE),
            Some(&polled)
        );
        assert_eq!(
            latest(Some(&other), Some(&polled), CANDIDATE),
            Some(&polled)
        );
        assert_eq!(
            latest(Some(&polled), Some(&polled), CANDIDATE),
            Some(&polled)
        );
    }

    #[test]
    fn a_failure_rolls_back_at_once_and_the_candidate_stops_running() {
        let job = crate::job::tests::test_job();
        let spec = automatic(3, "0s");
        let rollouts = Rollouts::default();
        rollouts.sync(declared(&spec, None), true);
        assert_eq!(rollouts.take_moves().len(), 1, "the start is a move");
        rollouts.record(&job, CANDIDATE, Comparison::Failed);
        let route = rollouts.route(&job, Some(CANDIDATE));
        assert!(!route.runs_candidate());
        assert_eq!(
            route.candidate_writes(&[()], |_: &Vec<String>, _| true),
            [false]
        );
        let other = rollouts.route(&job, Some("another candidate"));
        assert!(
            other.stage.is_none() && other.runs_candidate(),
            "another candidate only shadows"
        );
        assert_eq!(rollouts.take_moves()[0].1.reason, "CandidateFailed");
        rollouts.record(&job, CANDIDATE, Comparison::Failed);
        assert!(
            rollouts.take_moves().is_empty(),
            "counted once, rolled back once"
        );

        // Without a declared rollout the job only shadows, as before rollouts.
        rollouts.sync(BTreeMap::new(), true);
        let route = rollouts.route(&job, Some(CANDIDATE));
        assert!(route.stage.is_none() && route.runs_candidate());
        assert_eq!(
            route.candidate_writes(&[()], |_: &Vec<String>, _| true),
            [false]
        );
    }

    #[test]
    fn a_bad_minimum_time_is_named() {
        let spec = automatic(1, "soon");
        assert_eq!(
            spec.validate()
                .map_err(|e| e.to_string())
                .err()
                .as_deref()
                .map(|e| e.starts_with("spec.rollout.promotion.minimumTime \"soon\"")),
            Some(true)
        );
    }
}
