//! The guests serving each job right now, and how a registry becomes a new
//! set of them. Controllers read the current set for every evaluation, so a
//! new set takes effect on the next one while evaluations already running
//! finish on the modules they started with.
//!
//! Building a set is all-or-nothing per job: a registry entry whose module
//! cannot be fetched, is refused (digest, world, imports, limits) or fails
//! its smoke evaluation keeps its previous guest, and the failure is
//! reported; the other entries still take effect.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

use super::entries::{Entry, Module};
use super::fetch::{FetchError, Remote, fetch, fetch_all};
use super::job::{EntryName, JobKind, Jobs};
use super::rollout::Rollouts;
use super::serving::{Change, JobStatus, Status};
use super::slot::{EntryKey, Fetched, Served, Slot};
use super::table::{Location, Registry, RegistryError};
use mco_fetch::oci::Oci;
use mco_registry_formats::blob::digest;
use mco_runtime::{LoadError, Runtime};

/// One slot per job, each of a world only its job knows: a job's folder
/// reads its own typed with [`GuestSet::slot`].
#[derive(Clone, Default)]
pub struct GuestSet {
    slots: BTreeMap<EntryName, Served>,
    keys: BTreeMap<EntryName, EntryKey>,
}

impl GuestSet {
    /// The guests serving `job`, if it has any and they are of type `G`.
    pub fn slot<G: 'static>(&self, job: &EntryName) -> Option<&Slot<G>> {
        self.slots.get(job)?.get()
    }

    /// The guests serving `job`, of whatever world.
    pub fn served(&self, job: &EntryName) -> Option<&Served> {
        self.slots.get(job)
    }

    /// The keys of the entries of `kind` that have guests.
    pub fn keys(&self, kind: &dyn JobKind) -> impl Iterator<Item = &str> {
        self.slots
            .keys()
            .filter(move |job| job.is(kind))
            .filter_map(EntryName::key)
    }

    /// The key each job was loaded from.
    pub fn key(&self, job: &EntryName) -> Option<&EntryKey> {
        self.keys.get(job)
    }

    /// What serves each job, without the history of changes.
    pub fn serving(&self) -> impl Iterator<Item = (&EntryName, &Served)> {
        self.slots.iter()
    }
}

/// A cheap handle on the current [`GuestSet`] and its status.
#[derive(Clone)]
pub struct Guests {
    current: Arc<RwLock<Arc<GuestSet>>>,
    status: Arc<Mutex<Status>>,
    rollouts: Rollouts,
}

impl Guests {
    pub fn new(set: GuestSet) -> Guests {
        let guests = Guests {
            current: Arc::new(RwLock::new(Arc::new(set))),
            status: Arc::new(Mutex::new(Status::default())),
            rollouts: Rollouts::default(),
        };
        guests.refresh_status();
        guests
    }

    pub fn current(&self) -> Arc<GuestSet> {
        // A poisoned lock only means a writer panicked between two complete
        // sets; the set inside is still whole.
        match self.current.read() {
            Ok(set) => set.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Replaces the whole set at once.
    pub fn replace(&self, set: GuestSet) {
        let set = Arc::new(set);
        match self.current.write() {
            Ok(mut current) => *current = set,
            Err(poisoned) => *poisoned.into_inner() = set,
        }
        self.refresh_status();
    }

    /// Where each job's candidate rollout is (MachineConfigGuest
    /// `spec.rollout`): whose decisions a job writes.
    pub fn rollouts(&self) -> &Rollouts {
        &self.rollouts
    }

    pub fn status(&self) -> Status {
        let mut status = self.with_status(|status| status.clone());
        for (job, (_, rollout)) in self.rollouts.statuses() {
            if let Some(job) = status.jobs.get_mut(&job.to_string()) {
                job.rollout = Some(rollout);
            }
        }
        status
    }

    pub fn with_status<T>(&self, f: impl FnOnce(&mut Status) -> T) -> T {
        match self.status.lock() {
            Ok(mut status) => f(&mut status),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }

    /// Rewrites the serving part of the status from the current set,
    /// keeping each job's last change.
    fn refresh_status(&self) {
        let set = self.current();
        self.with_status(|status| refresh(status, &set));
    }

    /// Records the outcome of an attempt to change `job`.
    pub(crate) fn record(&self, job: &EntryName, change: Change) {
        self.with_status(|status| {
            status.jobs.entry(job.to_string()).or_default().last_change = Some(change);
        });
    }
}

/// The serving part of `status` rewritten from `set`, keeping each job's
/// last change.
fn refresh(status: &mut Status, set: &GuestSet) {
    let mut next = BTreeMap::new();
    for (job, served) in set.serving() {
        let name = job.to_string();
        let (active, limits) = served.active();
        let mut job_status =
            JobStatus::serving(active, limits, job.kind().on_failure(), served.candidate());
        job_status.last_change = status
            .jobs
            .get(&name)
            .and_then(|old| old.last_change.clone());
        next.insert(name, job_status);
    }
    status.jobs = next;
}

/// Why one job kept its previous guest (or, at start, had none).
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A job the host cannot serve without has no entry; why it cannot.
    #[error("{0}")]
    Missing(&'static str),
}

/// What happened to one job in a [`build`].
#[derive(Debug)]
pub enum Outcome {
    /// Loaded for the first time, or swapped for a new module.
    Loaded { key: EntryKey, first: bool },
    /// Kept: the entry names the module that serves.
    Unchanged,
    /// Kept: the entry names what already failed (reported then).
    KnownBad,
    /// Kept: the entry's module is still being pulled (`InFlight`).
    Pulling,
    /// The platform left the registry.
    Removed,
    Failed {
        /// What was attempted, when the module could be fetched.
        key: Option<EntryKey>,
        error: JobError,
    },
}

/// A new set built from a fetched registry, and what happened per job.
pub struct Built {
    pub set: Option<GuestSet>,
    pub outcomes: BTreeMap<EntryName, Outcome>,
}

impl Built {
    /// Whether anything serving differs from before.
    pub fn changed(&self) -> bool {
        self.outcomes
            .values()
            .any(|o| matches!(o, Outcome::Loaded { .. } | Outcome::Removed))
    }
}

/// Builds the set `fetched` describes. Unchanged entries reuse `previous`'s
/// guests; an entry whose key is in `known_bad` is not retried (it failed
/// before and nothing changed since); a failing entry keeps `previous`'s
/// guest, and so does a job of `jobs` the host cannot serve without when
/// the registry names none. Blocking: compiles and evaluates guests.
pub fn build(
    runtime: &Runtime,
    jobs: &Jobs,
    previous: Option<&GuestSet>,
    fetched: BTreeMap<EntryName, Result<Fetched, FetchError>>,
    known_bad: &BTreeMap<EntryName, EntryKey>,
) -> Built {
    let mut outcomes = BTreeMap::new();
    let mut keys = BTreeMap::new();
    let mut slots = BTreeMap::new();
    // A job that does not change serves what it served, under its key.
    let mut keep = |job: &EntryName, slots: &mut BTreeMap<EntryName, Served>| {
        if let Some(previous) = previous {
            if let Some(slot) = previous.slots.get(job) {
                slots.insert(job.clone(), slot.clone());
            }
            if let Some(key) = previous.key(job) {
                keys.insert(job.clone(), key.clone());
            }
        }
    };
    for kind in jobs.iter() {
        let Some(why) = kind.required() else {
            continue;
        };
        if !fetched.keys().any(|job| job.is(kind)) {
            let job = EntryName::single(kind);
            keep(&job, &mut slots);
            let error = JobError::Missing(why);
            outcomes.insert(job, Outcome::Failed { key: None, error });
        }
    }
    let mut loaded = BTreeMap::new();
    for (job, fetched) in fetched {
        let old_key = previous.and_then(|p| p.key(&job)).cloned();
        let fetched = match fetched {
            Ok(fetched) => fetched,
            Err(FetchError::Pulling(_)) => {
                keep(&job, &mut slots);
                outcomes.insert(job, Outcome::Pulling);
                continue;
            }
            Err(error) => {
                keep(&job, &mut slots);
                let error = error.into();
                outcomes.insert(job, Outcome::Failed { key: None, error });
                continue;
            }
        };
        let key = fetched.key();
        // Unchanged, or failed before with exactly these bytes and settings
        // (already reported; retrying would only report it again).
        let kept = if old_key.as_ref() == Some(&key) {
            Some(Outcome::Unchanged)
        } else if known_bad.get(&job) == Some(&key) {
            Some(Outcome::KnownBad)
        } else {
            None
        };
        if let Some(kept) = kept {
            keep(&job, &mut slots);
            outcomes.insert(job, kept);
            continue;
        }
        match job.kind().load(runtime, &job, &fetched) {
            Ok(served) => {
                slots.insert(job.clone(), served);
                loaded.insert(job.clone(), key.clone());
                let first = old_key.is_none();
                outcomes.insert(job, Outcome::Loaded { key, first });
            }
            Err(error) => {
                keep(&job, &mut slots);
                let key = Some(key);
                let error = error.into();
                outcomes.insert(job, Outcome::Failed { key, error });
            }
        }
    }
    keys.extend(loaded);
    if let Some(previous) = previous {
        for job in previous.slots.keys() {
            outcomes.entry(job.clone()).or_insert(Outcome::Removed);
        }
    }
    let set = complete(jobs, &slots).then_some(GuestSet { slots, keys });
    Built { set, outcomes }
}

/// Whether every job of `jobs` the host cannot serve without has a guest.
fn complete(jobs: &Jobs, slots: &BTreeMap<EntryName, Served>) -> bool {
    jobs.iter()
        .filter(|kind| kind.required().is_some())
        .all(|kind| slots.keys().any(|job| job.is(kind)))
}

/// Why the guests could not be loaded at start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("registry entry {job}: {error}")]
    Job { job: EntryName, error: JobError },
}

/// Reads a registry file (or the installed guests) without a cluster.
pub fn read_local(location: &Location, jobs: &Jobs) -> Result<Registry, RegistryError> {
    match location {
        Location::Installed(dir) => Ok(Registry::installed(dir, jobs)),
        Location::File(path) => Registry::from_file(path, jobs),
        Location::ConfigMap { .. } | Location::Crd { .. } => Err(RegistryError::Parse {
            path: location.to_string(),
            detail: "a registry in the cluster is read by mco-host run only".into(),
        }),
    }
}

/// The first set: every entry must load; the first failure names its entry.
pub fn initial(
    runtime: &Runtime,
    jobs: &Jobs,
    registry: &Registry,
    remote: &Remote,
) -> Result<(Guests, BTreeMap<EntryName, Outcome>), StartError> {
    let fetched = fetch_all(registry, remote);
    all_loaded(build(runtime, jobs, None, fetched, &BTreeMap::new()))
}

/// What a job falls back to at start when its entry cannot load, so that
/// a pod restarted while a registry is down or a module is bad does not
/// crash-loop.
pub struct Fallback<'a> {
    /// `--strict-start`: no fallback, the host does not start.
    pub strict: bool,
    /// Keeps the module that last served each job.
    pub last_good: Option<&'a Oci>,
    /// The guests installed in the image.
    pub installed: &'a Registry,
}

/// The set `run` starts with, and the jobs serving a fallback with why.
pub struct Started {
    pub guests: Guests,
    pub outcomes: BTreeMap<EntryName, Outcome>,
    pub degraded: BTreeMap<EntryName, String>,
}

/// The first set of `run`. An entry that cannot load falls back to the
/// module that last served its job, then to the one installed in the
/// image, under the entry's limits and without its candidate; such jobs
/// come back with why, to be reported degraded. Only a job with neither
/// (or `strict`) stops the start. The jobs that loaded their own entry are
/// remembered as last good.
pub fn start(
    runtime: &Runtime,
    jobs: &Jobs,
    registry: &Registry,
    remote: &Remote,
    fallback: &Fallback,
) -> Result<Started, StartError> {
    let fetched = fetch_all(registry, remote);
    let bytes = fetched_bytes(&fetched);
    let built = build(runtime, jobs, None, fetched, &BTreeMap::new());
    let failed: BTreeMap<EntryName, String> = built
        .outcomes
        .iter()
        .filter_map(|(job, outcome)| match outcome {
            Outcome::Failed { error, .. } => Some((job.clone(), error.to_string())),
            _ => None,
        })
        .collect();
    if failed.is_empty() || fallback.strict {
        let (guests, outcomes) = all_loaded(built)?;
        remember(fallback.last_good, &bytes, &outcomes);
        return Ok(Started {
            guests,
            outcomes,
            degraded: BTreeMap::new(),
        });
    }
    let mut fetched = fetch_all(registry, remote);
    let mut degraded = BTreeMap::new();
    for (job, error) in failed {
        if let Some((substitute, from)) = substitute(&job, registry.get(&job), fallback) {
            fetched.insert(job.clone(), Ok(substitute));
            degraded.insert(job, format!("{error}; serving {from} instead"));
        }
    }
    let built = build(runtime, jobs, None, fetched, &BTreeMap::new());
    let (guests, outcomes) = all_loaded(built)?;
    let own: BTreeMap<EntryName, Arc<Vec<u8>>> = bytes
        .into_iter()
        .filter(|(job, _)| !degraded.contains_key(job))
        .collect();
    remember(fallback.last_good, &own, &outcomes);
    Ok(Started {
        guests,
        outcomes,
        degraded,
    })
}

/// The module bytes of every job that could be fetched, to remember those
/// that load.
pub fn fetched_bytes(
    fetched: &BTreeMap<EntryName, Result<Fetched, FetchError>>,
) -> BTreeMap<EntryName, Arc<Vec<u8>>> {
    fetched
        .iter()
        .filter_map(|(job, f)| f.as_ref().ok().map(|f| (job.clone(), f.bytes.clone())))
        .collect()
}

/// Records the modules of jobs that loaded as their last good ones.
pub fn remember(
    cache: Option<&Oci>,
    bytes: &BTreeMap<EntryName, Arc<Vec<u8>>>,
    outcomes: &BTreeMap<EntryName, Outcome>,
) {
    let Some(cache) = cache else { return };
    for (job, outcome) in outcomes {
        if let (Outcome::Loaded { .. }, Some(bytes)) = (outcome, bytes.get(job)) {
            cache.remember(job, bytes);
        }
    }
}

/// A job's fallback module, and what it is for the log.
fn substitute(
    job: &EntryName,
    entry: Option<&Entry>,
    fallback: &Fallback,
) -> Option<(Fetched, String)> {
    let installed = fallback.installed.get(job);
    // The entry's source names the module in status; its limits still hold.
    let like_entry = |module: Module| Entry {
        module,
        memory_mib: entry.and_then(|e| e.memory_mib),
        deadline: entry.and_then(|e| e.deadline),
        candidate: None,
    };
    if let Some(bytes) = fallback.last_good.and_then(|c| c.last_good(job)) {
        let source = entry
            .map(|e| e.module.source.clone())
            .or_else(|| installed.map(|i| i.module.source.clone()))?;
        let from = format!("the module that last served it (sha256 {})", digest(&bytes));
        let fetched = Fetched {
            entry: like_entry(Module {
                source,
                sha256: None,
            }),
            bytes: Arc::new(bytes),
            candidate: None,
        };
        return Some((fetched, from));
    }
    let installed = installed?;
    let mut fetched = fetch(
        job,
        &like_entry(installed.module.clone()),
        &Remote::default(),
    )
    .ok()?;
    fetched.entry.module.sha256 = None;
    Some((
        fetched,
        format!("the installed module {}", installed.module.source),
    ))
}

/// The set, if every job loaded; else the first failure.
fn all_loaded(built: Built) -> Result<(Guests, BTreeMap<EntryName, Outcome>), StartError> {
    let mut outcomes = BTreeMap::new();
    for (job, outcome) in built.outcomes {
        if let Outcome::Failed { error, .. } = outcome {
            return Err(StartError::Job { job, error });
        }
        outcomes.insert(job, outcome);
    }
    // A set is missing only a job the host cannot serve without, and such a
    // job has failed above.
    Ok((Guests::new(built.set.unwrap_or_default()), outcomes))
}
