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
use std::fmt;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use serde::Serialize;

use crate::registry::{self, Entry, Location, Module, Registry, RegistryError, Source};
use crate::runtime::{
    BOOT_IMAGE_INTERFACE, BootImageGuest, GuestLimits, GuestModule, LoadError, McnGuest,
    NODE_STATE_INTERFACE, Runtime, digest,
};
use crate::smoke;

/// One registry entry's place in the set.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Job {
    Mcn,
    BootImage(String),
}

impl fmt::Display for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Job::Mcn => f.write_str(registry::MCN_JOB),
            Job::BootImage(platform) => f.write_str(&registry::boot_image_job(platform)),
        }
    }
}

/// What a job was loaded from: an entry whose key did not change is
/// reused as it is, not reloaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryKey {
    entry: Entry,
    sha256: String,
    candidate_sha256: Option<String>,
}

impl EntryKey {
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

/// One loaded module per job, and the candidates shadowing them.
#[derive(Clone)]
pub struct GuestSet {
    pub mcn: McnGuest,
    pub mcn_candidate: Option<McnGuest>,
    /// By Infrastructure `status.platformStatus.type`; a platform without a
    /// guest gets the common rules and then `noop`.
    pub boot_images: BTreeMap<String, BootImageGuest>,
    /// Candidates beside `boot_images`, by the same platform key.
    pub boot_image_candidates: BTreeMap<String, BootImageGuest>,
    keys: BTreeMap<Job, EntryKey>,
}

impl GuestSet {
    /// A set of guests loaded outside any registry (tests, benches).
    pub fn new(mcn: McnGuest, boot_images: BTreeMap<String, BootImageGuest>) -> GuestSet {
        GuestSet {
            mcn,
            mcn_candidate: None,
            boot_images,
            boot_image_candidates: BTreeMap::new(),
            keys: BTreeMap::new(),
        }
    }

    pub fn boot_image(&self, platform: &str) -> Option<&BootImageGuest> {
        self.boot_images.get(platform)
    }

    pub fn boot_image_candidate(&self, platform: &str) -> Option<&BootImageGuest> {
        self.boot_image_candidates.get(platform)
    }

    /// The key each job was loaded from.
    pub fn key(&self, job: &Job) -> Option<&EntryKey> {
        self.keys.get(job)
    }
}

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
        let mut jobs: Vec<(Job, JobStatus)> = Vec::new();
        let mut describe = |job: Job, module: &GuestModule, limits: &GuestLimits, on_failure| {
            let key = set.key(&job);
            jobs.push((
                job,
                JobStatus {
                    module: module.name.clone(),
                    sha256: module.digest.clone(),
                    memory_mib: limits.memory_limit >> 20,
                    deadline: limits.deadline,
                    on_failure,
                    candidate: None,
                    last_change: None,
                },
            ));
            key.is_some()
        };
        describe(
            Job::Mcn,
            set.mcn.module(),
            set.mcn.limits(),
            "keep the last written MachineConfigNode status; retry with backoff",
        );
        for (platform, guest) in &set.boot_images {
            describe(
                Job::BootImage(platform.clone()),
                guest.module(),
                guest.limits(),
                "nothing is written for the MachineSet, which counts as Degraded; the next pass retries",
            );
        }
        let candidate = |job: &Job| {
            let module = match job {
                Job::Mcn => set.mcn_candidate.as_ref().map(McnGuest::module),
                Job::BootImage(p) => set.boot_image_candidates.get(p).map(BootImageGuest::module),
            };
            module.map(|m| ModuleStatus {
                module: m.name.clone(),
                sha256: m.digest.clone(),
            })
        };
        self.with_status(|status| {
            let mut next = BTreeMap::new();
            for (job, mut job_status) in jobs {
                job_status.candidate = candidate(&job);
                let name = job.to_string();
                job_status.last_change = status
                    .jobs
                    .get(&name)
                    .and_then(|old| old.last_change.clone());
                next.insert(name, job_status);
            }
            status.jobs = next;
        });
    }

    /// Records the outcome of an attempt to change `job`.
    pub(crate) fn record(&self, job: &Job, change: Change) {
        self.with_status(|status| {
            status.jobs.entry(job.to_string()).or_default().last_change = Some(change);
        });
    }
}

// ---- fetching --------------------------------------------------------------------------------

/// One entry with its modules' bytes in hand.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub entry: Entry,
    pub bytes: Arc<Vec<u8>>,
    pub candidate: Option<Arc<Vec<u8>>>,
}

impl Fetched {
    pub fn key(&self) -> EntryKey {
        EntryKey {
            entry: self.entry.clone(),
            sha256: digest(&self.bytes),
            candidate_sha256: self.candidate.as_deref().map(|b| digest(b)),
        }
    }
}

/// Why a module's bytes could not be had.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("could not read guest module {path}: {source}")]
    File {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("guest module {module}: {detail}")]
    ConfigMap { module: Source, detail: String },
}

/// The ConfigMaps a registry's modules come from, read once per pass;
/// `Err` holds why one could not be read.
pub type ConfigMaps = BTreeMap<String, Result<ConfigMap, String>>;

/// The ConfigMaps that `registry`'s modules name.
pub fn configmap_names(registry: &Registry) -> Vec<String> {
    let mut names: Vec<String> = registry
        .entries()
        .into_iter()
        .flat_map(|(_, e)| std::iter::once(&e.module).chain(e.candidate.as_ref()))
        .filter_map(|m| match &m.source {
            Source::ConfigMap { name, .. } => Some(name.clone()),
            Source::Path(_) => None,
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

fn read_module(module: &Module, configmaps: &ConfigMaps) -> Result<Arc<Vec<u8>>, FetchError> {
    match &module.source {
        Source::Path(path) => {
            std::fs::read(path)
                .map(Arc::new)
                .map_err(|source| FetchError::File {
                    path: path.display().to_string(),
                    source,
                })
        }
        Source::ConfigMap { name, key } => {
            let fail = |detail: String| FetchError::ConfigMap {
                module: module.source.clone(),
                detail,
            };
            let cm = match configmaps.get(name) {
                Some(Ok(cm)) => cm,
                Some(Err(err)) => return Err(fail(err.clone())),
                None => {
                    return Err(fail(
                        "ConfigMap sources are only read in the cluster (mco-host run)".into(),
                    ));
                }
            };
            if let Some(bytes) = cm.binary_data.as_ref().and_then(|d| d.get(key)) {
                return Ok(Arc::new(bytes.0.clone()));
            }
            let in_data = cm.data.as_ref().is_some_and(|d| d.contains_key(key));
            Err(fail(if in_data {
                format!(
                    "key {key} is in data, not binaryData; a module is binary (kubectl create configmap --from-file puts it in binaryData)"
                )
            } else {
                format!("the ConfigMap has no binaryData key {key}")
            }))
        }
    }
}

/// Reads an entry's module and candidate.
pub fn fetch(entry: &Entry, configmaps: &ConfigMaps) -> Result<Fetched, FetchError> {
    Ok(Fetched {
        entry: entry.clone(),
        bytes: read_module(&entry.module, configmaps)?,
        candidate: entry
            .candidate
            .as_ref()
            .map(|c| read_module(c, configmaps))
            .transpose()?,
    })
}

/// Every entry of a registry, fetched.
pub fn fetch_all(
    registry: &Registry,
    configmaps: &ConfigMaps,
) -> BTreeMap<Job, Result<Fetched, FetchError>> {
    let mut jobs = BTreeMap::new();
    if let Some(entry) = &registry.mcn {
        jobs.insert(Job::Mcn, fetch(entry, configmaps));
    }
    for (platform, entry) in &registry.boot_image {
        jobs.insert(Job::BootImage(platform.clone()), fetch(entry, configmaps));
    }
    jobs
}

// ---- loading ---------------------------------------------------------------------------------

/// What the two kinds of guest have in common for loading.
trait Loadable: Sized + Clone {
    const INTERFACE: &'static str;
    fn link(runtime: &Runtime, module: GuestModule) -> Result<Self, LoadError>;
    fn with_limits(self, limits: GuestLimits) -> Result<Self, LoadError>;
    fn module(&self) -> &GuestModule;
    fn smoke(&self, job: &Job) -> Result<(), String>;
}

impl Loadable for McnGuest {
    const INTERFACE: &'static str = NODE_STATE_INTERFACE;
    fn link(runtime: &Runtime, module: GuestModule) -> Result<Self, LoadError> {
        McnGuest::new(runtime, module)
    }
    fn with_limits(self, limits: GuestLimits) -> Result<Self, LoadError> {
        McnGuest::with_limits(self, limits)
    }
    fn module(&self) -> &GuestModule {
        McnGuest::module(self)
    }
    fn smoke(&self, _: &Job) -> Result<(), String> {
        smoke::mcn_guest(self)
    }
}

impl Loadable for BootImageGuest {
    const INTERFACE: &'static str = BOOT_IMAGE_INTERFACE;
    fn link(runtime: &Runtime, module: GuestModule) -> Result<Self, LoadError> {
        BootImageGuest::new(runtime, module)
    }
    fn with_limits(self, limits: GuestLimits) -> Result<Self, LoadError> {
        BootImageGuest::with_limits(self, limits)
    }
    fn module(&self) -> &GuestModule {
        BootImageGuest::module(self)
    }
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

fn load_module<G: Loadable>(
    runtime: &Runtime,
    module: &Module,
    bytes: &[u8],
    limits: GuestLimits,
) -> Result<G, LoadError> {
    let name = module.source.to_string();
    let compiled = GuestModule::pinned(
        runtime,
        &name,
        bytes,
        G::INTERFACE,
        module.sha256.as_deref(),
    )?;
    G::link(runtime, compiled)?.with_limits(limits)
}

/// Loads an entry's module (and candidate) without smoke evaluations, as
/// `eval` runs whatever it is given.
fn load_unchecked<G: Loadable>(
    runtime: &Runtime,
    fetched: &Fetched,
) -> Result<(G, Option<G>), LoadError> {
    let limits = limits(runtime, &fetched.entry);
    let active = load_module(runtime, &fetched.entry.module, &fetched.bytes, limits)?;
    let candidate = match (&fetched.entry.candidate, &fetched.candidate) {
        (Some(module), Some(bytes)) => Some(load_module(runtime, module, bytes, limits)?),
        _ => None,
    };
    Ok((active, candidate))
}

/// Loads, links and smoke-evaluates an entry's module and candidate.
fn load_checked<G: Loadable>(
    runtime: &Runtime,
    job: &Job,
    fetched: &Fetched,
) -> Result<(G, Option<G>), LoadError> {
    let (active, candidate) = load_unchecked::<G>(runtime, fetched)?;
    for guest in std::iter::once(&active).chain(candidate.as_ref()) {
        guest.smoke(job).map_err(|detail| LoadError::Smoke {
            module: guest.module().name.clone(),
            detail,
        })?;
    }
    Ok((active, candidate))
}

/// The node-state guest of an entry, for `eval`.
pub fn load_mcn(runtime: &Runtime, fetched: &Fetched) -> Result<McnGuest, LoadError> {
    load_unchecked::<McnGuest>(runtime, fetched).map(|(active, _)| active)
}

/// A platform's boot image guest of an entry, for `eval`.
pub fn load_boot_image(runtime: &Runtime, fetched: &Fetched) -> Result<BootImageGuest, LoadError> {
    load_unchecked::<BootImageGuest>(runtime, fetched).map(|(active, _)| active)
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
    let mut mcn: Option<(McnGuest, Option<McnGuest>)> =
        previous.map(|p| (p.mcn.clone(), p.mcn_candidate.clone()));
    let mut boot_images = BTreeMap::new();
    let mut boot_image_candidates = BTreeMap::new();
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
                let failed = Outcome::Failed {
                    key: None,
                    error: error.into(),
                };
                keep_previous(&job, previous, &mut boot_images, &mut boot_image_candidates);
                if let Some(key) = old_key {
                    keys.insert(job.clone(), key);
                }
                outcomes.insert(job, failed);
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
            keep_previous(&job, previous, &mut boot_images, &mut boot_image_candidates);
            if let Some(old) = old_key {
                keys.insert(job.clone(), old);
            }
            outcomes.insert(job, kept);
            continue;
        }
        let loaded = match &job {
            Job::Mcn => load_checked::<McnGuest>(runtime, &job, &fetched).map(|guests| {
                mcn = Some(guests);
            }),
            Job::BootImage(platform) => load_checked::<BootImageGuest>(runtime, &job, &fetched)
                .map(|(active, candidate)| {
                    boot_images.insert(platform.clone(), active);
                    if let Some(candidate) = candidate {
                        boot_image_candidates.insert(platform.clone(), candidate);
                    }
                }),
        };
        match loaded {
            Ok(()) => {
                keys.insert(job.clone(), key.clone());
                let first = old_key.is_none();
                outcomes.insert(job, Outcome::Loaded { key, first });
            }
            Err(error) => {
                keep_previous(&job, previous, &mut boot_images, &mut boot_image_candidates);
                if let Some(old) = old_key {
                    keys.insert(job.clone(), old);
                }
                outcomes.insert(
                    job,
                    Outcome::Failed {
                        key: Some(key),
                        error: error.into(),
                    },
                );
            }
        }
    }
    if let Some(previous) = previous {
        for platform in previous.boot_images.keys() {
            let job = Job::BootImage(platform.clone());
            outcomes.entry(job).or_insert(Outcome::Removed);
        }
    }
    let set = mcn.map(|(mcn, mcn_candidate)| GuestSet {
        mcn,
        mcn_candidate,
        boot_images,
        boot_image_candidates,
        keys,
    });
    Built { set, outcomes }
}

/// Carries a boot image job's previous guests into the new set (the MCN
/// job's are carried by default).
fn keep_previous(
    job: &Job,
    previous: Option<&GuestSet>,
    boot_images: &mut BTreeMap<String, BootImageGuest>,
    candidates: &mut BTreeMap<String, BootImageGuest>,
) {
    let (Job::BootImage(platform), Some(previous)) = (job, previous) else {
        return;
    };
    if let Some(guest) = previous.boot_images.get(platform) {
        boot_images.insert(platform.clone(), guest.clone());
    }
    if let Some(guest) = previous.boot_image_candidates.get(platform) {
        candidates.insert(platform.clone(), guest.clone());
    }
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
        Location::ConfigMap { name, .. } => Err(RegistryError::Parse {
            path: location.to_string(),
            detail: format!("ConfigMap {name} can only be read in the cluster (mco-host run)"),
        }),
    }
}

/// The first set: every entry must load; the first failure names its entry.
pub fn initial(
    runtime: &Runtime,
    registry: &Registry,
    configmaps: &ConfigMaps,
) -> Result<(Guests, BTreeMap<Job, Outcome>), StartError> {
    let built = build(
        runtime,
        None,
        fetch_all(registry, configmaps),
        &BTreeMap::new(),
    );
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
