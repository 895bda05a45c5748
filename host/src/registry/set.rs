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

use super::entries::{Entry, Location, Module, Registry, RegistryError};
use super::fetch::{FetchError, Fetched, Remote, fetch, fetch_all};
use super::oci::Oci;
use super::status::{Change, Status};
use super::{Job, smoke};
use crate::blob::digest;
use crate::bootimage::BootImageGuest;
use crate::mcn::McnGuest;
use crate::runtime::{Guest, GuestLimits, LoadError, Runtime, World};

/// What a job was loaded from: an entry whose key did not change is
/// reused as it is, not reloaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryKey {
    entry: Entry,
    sha256: String,
    candidate_sha256: Option<String>,
}

impl EntryKey {
    pub(super) fn new(entry: Entry, sha256: String, candidate_sha256: Option<String>) -> EntryKey {
        EntryKey {
            entry,
            sha256,
            candidate_sha256,
        }
    }

    /// Where the active module came from.
    pub fn module(&self) -> String {
        self.entry.module.source.to_string()
    }

    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    pub fn candidate_sha256(&self) -> Option<&str> {
        self.candidate_sha256.as_deref()
    }
}

/// A job's module, and the candidate shadowing it.
#[derive(Clone)]
pub struct Slot<G> {
    pub active: G,
    pub candidate: Option<G>,
}

impl<G> Slot<G> {
    pub fn new(active: G) -> Slot<G> {
        Slot {
            active,
            candidate: None,
        }
    }
}

/// One slot per job.
#[derive(Clone)]
pub struct GuestSet {
    pub mcn: Slot<McnGuest>,
    /// By Infrastructure `status.platformStatus.type`; a platform without a
    /// guest gets the common rules and then `noop`.
    pub boot_images: BTreeMap<String, Slot<BootImageGuest>>,
    keys: BTreeMap<Job, EntryKey>,
}

impl GuestSet {
    /// A set of guests loaded outside any registry (tests, benches).
    pub fn new(mcn: McnGuest, boot_images: BTreeMap<String, BootImageGuest>) -> GuestSet {
        GuestSet {
            mcn: Slot::new(mcn),
            boot_images: boot_images
                .into_iter()
                .map(|(p, g)| (p, Slot::new(g)))
                .collect(),
            keys: BTreeMap::new(),
        }
    }

    /// The key each job was loaded from.
    pub fn key(&self, job: &Job) -> Option<&EntryKey> {
        self.keys.get(job)
    }
}

/// A cheap handle on the current [`GuestSet`] and its status.
#[derive(Clone)]
pub struct Guests {
    current: Arc<RwLock<Arc<GuestSet>>>,
    status: Arc<Mutex<Status>>,
}

impl Guests {
    pub fn new(set: GuestSet) -> Guests {
        let guests = Guests {
            current: Arc::new(RwLock::new(Arc::new(set))),
            status: Arc::new(Mutex::new(Status::default())),
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

    pub fn status(&self) -> Status {
        self.with_status(|status| status.clone())
    }

    pub(crate) fn with_status<T>(&self, f: impl FnOnce(&mut Status) -> T) -> T {
        match self.status.lock() {
            Ok(mut status) => f(&mut status),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }

    /// Rewrites the serving part of the status from the current set,
    /// keeping each job's last change.
    fn refresh_status(&self) {
        let set = self.current();
        self.with_status(|status| super::status::refresh(status, &set));
    }

    /// Records the outcome of an attempt to change `job`.
    pub(crate) fn record(&self, job: &Job, change: Change) {
        self.with_status(|status| {
            status.jobs.entry(job.to_string()).or_default().last_change = Some(change);
        });
    }
}

/// The smoke evaluation a job's new module must pass before it serves.
trait Smoke {
    fn smoke(&self, job: &Job) -> Result<(), String>;
}

impl Smoke for McnGuest {
    fn smoke(&self, _: &Job) -> Result<(), String> {
        smoke::mcn_guest(self)
    }
}

impl Smoke for BootImageGuest {
    fn smoke(&self, job: &Job) -> Result<(), String> {
        let platform = match job {
            Job::BootImage(platform) => platform.as_str(),
            Job::Mcn => "",
        };
        smoke::boot_image_guest(platform, self)
    }
}

/// The limits an entry asks for, the runtime's where it asks for none.
pub fn limits(runtime: &Runtime, entry: &Entry) -> GuestLimits {
    let default = runtime.default_limits();
    GuestLimits {
        deadline: entry.deadline.unwrap_or(default.deadline),
        memory_limit: entry
            .memory_mib
            .map_or(default.memory_limit, |mib| mib.saturating_mul(1 << 20)),
    }
}

fn load_module<W: World>(
    runtime: &Runtime,
    module: &Module,
    bytes: &[u8],
    limits: GuestLimits,
) -> Result<Guest<W>, LoadError> {
    let name = module.source.to_string();
    Guest::<W>::load(runtime, &name, bytes, module.sha256.as_deref())?.with_limits(limits)
}

/// Loads an entry's module (and candidate) without smoke evaluations, as
/// `eval` runs whatever it is given.
pub fn load<W: World>(runtime: &Runtime, fetched: &Fetched) -> Result<Slot<Guest<W>>, LoadError> {
    let limits = limits(runtime, &fetched.entry);
    let active = load_module(runtime, &fetched.entry.module, &fetched.bytes, limits)?;
    let candidate = match (&fetched.entry.candidate, &fetched.candidate) {
        (Some(module), Some(bytes)) => Some(load_module(runtime, module, bytes, limits)?),
        _ => None,
    };
    Ok(Slot { active, candidate })
}

/// Loads, links and smoke-evaluates an entry's module and candidate.
fn load_checked<W: World>(
    runtime: &Runtime,
    job: &Job,
    fetched: &Fetched,
) -> Result<Slot<Guest<W>>, LoadError>
where
    Guest<W>: Smoke,
{
    let slot = load::<W>(runtime, fetched)?;
    for guest in std::iter::once(&slot.active).chain(slot.candidate.as_ref()) {
        guest.smoke(job).map_err(|detail| LoadError::Smoke {
            module: guest.module().name.clone(),
            detail,
        })?;
    }
    Ok(slot)
}

/// Why one job kept its previous guest (or, at start, had none).
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("the registry names no MachineConfigNode (mcn) guest")]
    NoMcn,
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
    pub outcomes: BTreeMap<Job, Outcome>,
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
/// guest. Blocking: compiles and evaluates guests.
pub fn build(
    runtime: &Runtime,
    previous: Option<&GuestSet>,
    fetched: BTreeMap<Job, Result<Fetched, FetchError>>,
    known_bad: &BTreeMap<Job, EntryKey>,
) -> Built {
    let mut outcomes = BTreeMap::new();
    let mut keys = BTreeMap::new();
    let mut mcn = previous.map(|p| p.mcn.clone());
    let mut boot_images = BTreeMap::new();
    // A job that does not change serves what it served.
    let keep = |job: &Job, boot_images: &mut BTreeMap<String, Slot<BootImageGuest>>| {
        if let (Job::BootImage(platform), Some(previous)) = (job, previous)
            && let Some(slot) = previous.boot_images.get(platform)
        {
            boot_images.insert(platform.clone(), slot.clone());
        }
    };
    if !fetched.contains_key(&Job::Mcn) {
        outcomes.insert(
            Job::Mcn,
            Outcome::Failed {
                key: None,
                error: JobError::NoMcn,
            },
        );
        if let Some(key) = previous.and_then(|p| p.key(&Job::Mcn)) {
            keys.insert(Job::Mcn, key.clone());
        }
    }
    for (job, fetched) in fetched {
        let old_key = previous.and_then(|p| p.key(&job)).cloned();
        let fetched = match fetched {
            Ok(fetched) => fetched,
            Err(error) => {
                keep(&job, &mut boot_images);
                if let Some(key) = old_key {
                    keys.insert(job.clone(), key);
                }
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
            keep(&job, &mut boot_images);
            if let Some(old) = old_key {
                keys.insert(job.clone(), old);
            }
            outcomes.insert(job, kept);
            continue;
        }
        let loaded = match &job {
            Job::Mcn => load_checked(runtime, &job, &fetched).map(|slot| {
                mcn = Some(slot);
            }),
            Job::BootImage(platform) => load_checked(runtime, &job, &fetched).map(|slot| {
                boot_images.insert(platform.clone(), slot);
            }),
        };
        match loaded {
            Ok(()) => {
                keys.insert(job.clone(), key.clone());
                let first = old_key.is_none();
                outcomes.insert(job, Outcome::Loaded { key, first });
            }
            Err(error) => {
                keep(&job, &mut boot_images);
                if let Some(old) = old_key {
                    keys.insert(job.clone(), old);
                }
                let key = Some(key);
                let error = error.into();
                outcomes.insert(job, Outcome::Failed { key, error });
            }
        }
    }
    if let Some(previous) = previous {
        for platform in previous.boot_images.keys() {
            let job = Job::BootImage(platform.clone());
            outcomes.entry(job).or_insert(Outcome::Removed);
        }
    }
    let set = mcn.map(|mcn| GuestSet {
        mcn,
        boot_images,
        keys,
    });
    Built { set, outcomes }
}

/// Why the guests could not be loaded at start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("registry entry {job}: {error}")]
    Job { job: Job, error: JobError },
}

/// Reads a registry file (or the installed guests) without a cluster.
pub fn read_local(location: &Location) -> Result<Registry, RegistryError> {
    match location {
        Location::Installed(dir) => Ok(Registry::installed(dir)),
        Location::File(path) => Registry::from_file(path),
        Location::ConfigMap { .. } | Location::Crd { .. } => Err(RegistryError::Parse {
            path: location.to_string(),
            detail: "a registry in the cluster is read by mco-host run only".into(),
        }),
    }
}

/// The first set: every entry must load; the first failure names its entry.
pub fn initial(
    runtime: &Runtime,
    registry: &Registry,
    remote: &Remote,
) -> Result<(Guests, BTreeMap<Job, Outcome>), StartError> {
    let built = build(runtime, None, fetch_all(registry, remote), &BTreeMap::new());
    all_loaded(built)
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
    pub outcomes: BTreeMap<Job, Outcome>,
    pub degraded: BTreeMap<Job, String>,
}

/// The first set of `run`. An entry that cannot load falls back to the
/// module that last served its job, then to the one installed in the
/// image, under the entry's limits and without its candidate; such jobs
/// come back with why, to be reported degraded. Only a job with neither
/// (or `strict`) stops the start. The jobs that loaded their own entry are
/// remembered as last good.
pub fn start(
    runtime: &Runtime,
    registry: &Registry,
    remote: &Remote,
    fallback: &Fallback,
) -> Result<Started, StartError> {
    let fetched = fetch_all(registry, remote);
    let bytes = fetched_bytes(&fetched);
    let built = build(runtime, None, fetched, &BTreeMap::new());
    let failed: BTreeMap<Job, String> = built
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
        let entry = match &job {
            Job::Mcn => registry.mcn.as_ref(),
            Job::BootImage(platform) => registry.boot_image(platform),
        };
        if let Some((substitute, from)) = substitute(&job, entry, fallback) {
            fetched.insert(job.clone(), Ok(substitute));
            degraded.insert(job, format!("{error}; serving {from} instead"));
        }
    }
    let built = build(runtime, None, fetched, &BTreeMap::new());
    let (guests, outcomes) = all_loaded(built)?;
    let own: BTreeMap<Job, Arc<Vec<u8>>> = bytes
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
    fetched: &BTreeMap<Job, Result<Fetched, FetchError>>,
) -> BTreeMap<Job, Arc<Vec<u8>>> {
    fetched
        .iter()
        .filter_map(|(job, f)| f.as_ref().ok().map(|f| (job.clone(), f.bytes.clone())))
        .collect()
}

/// Records the modules of jobs that loaded as their last good ones.
pub fn remember(
    cache: Option<&Oci>,
    bytes: &BTreeMap<Job, Arc<Vec<u8>>>,
    outcomes: &BTreeMap<Job, Outcome>,
) {
    let Some(cache) = cache else { return };
    for (job, outcome) in outcomes {
        if let (Outcome::Loaded { .. }, Some(bytes)) = (outcome, bytes.get(job)) {
            cache.remember(job, bytes);
        }
    }
}

/// A job's fallback module, and what it is for the log.
fn substitute(job: &Job, entry: Option<&Entry>, fallback: &Fallback) -> Option<(Fetched, String)> {
    let installed = match job {
        Job::Mcn => fallback.installed.mcn.as_ref(),
        Job::BootImage(platform) => fallback.installed.boot_image(platform),
    };
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
fn all_loaded(built: Built) -> Result<(Guests, BTreeMap<Job, Outcome>), StartError> {
    let mut outcomes = BTreeMap::new();
    for (job, outcome) in built.outcomes {
        if let Outcome::Failed { error, .. } = outcome {
            return Err(StartError::Job { job, error });
        }
        outcomes.insert(job, outcome);
    }
    match built.set {
        Some(set) => Ok((Guests::new(set), outcomes)),
        None => Err(StartError::Job {
            job: Job::Mcn,
            error: JobError::NoMcn,
        }),
    }
}
