//! Hot swap: every `--registry-poll` the host re-reads its registry and the
//! modules it names, and loads a changed entry's module off the async
//! workers (world, imports, digest, smoke evaluations) before swapping it in.
//! The old module serves until then, and for good when the new one is
//! refused; running evaluations finish on the module they started with. A
//! pull that outlasts a poll goes on in the background (`fetch::InFlight`).
//! Polling, not watching: a ConfigMap volume changes by a symlink swap that
//! inotify reports unreliably, and one path for file and ConfigMap
//! registries is easier to trust. A change is reported in a log line, the
//! swap series, `/guests` and an Event; the same loop carries the
//! candidates' rollouts (`rollout.rs`). See docs/guests/rollout.md.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, ObjectReference};
use k8s_openapi::jiff::Timestamp;
use kube::runtime::events::EventType;
use kube::{Client, Resource};
use tokio::sync::{mpsc, watch};

use super::crd::{self, MachineConfigGuest};
use super::fetch::{InFlight, fetch_all};
use super::job::{EntryName, Jobs, Modelled};
use super::read::Reader;
use super::rollout::{Move, RolloutSpec, RolloutStatus, Stage};
use super::serving::Change;
use super::set::{
    Built, Fallback, GuestSet, Guests, Outcome, StartError, Started, build, fetched_bytes,
    remember, start as start_set,
};
use super::slot::EntryKey;
use super::table::{Location, Registry, RegistryError};
use crate::crd::AuditState;
use crate::crd::audit::{Answer, Audits};
use crate::metrics::{GuestInfoLabels, JobReasonLabels, Metrics, RolloutStageLabels};
use mco_cluster::events::{Events, Note};
use mco_fetch::oci::Oci;
use mco_runtime::{GuestModule, Runtime};

/// What the host needs to load and re-load its guests.
pub struct Config {
    pub runtime: Runtime,
    /// The jobs of the host.
    pub jobs: &'static Jobs,
    /// The feature gates the host models (every job's, each with its
    /// Default value), which a job's audit on request reads.
    pub gates: &'static Modelled,
    pub location: Location,
    /// How often the registry and its modules are re-read.
    pub poll: Duration,
    /// How long a module pulled well is served again without asking its
    /// registry (`fetch::InFlight`).
    pub oci_refresh: Duration,
    /// Pulls `oci:` modules, and keeps the last good module of each job.
    pub oci: Oci,
    /// `--strict-start`: an entry that cannot load at start stops the host
    /// instead of falling back.
    pub strict_start: bool,
    /// The guests installed in the image, the last fallback at start.
    pub installed: Registry,
    /// The host's ServiceAccount, whose `imagePullSecrets` serve `oci:`
    /// entries without a `pullSecret`.
    pub service_account: Option<String>,
}

/// The job label of failures of the registry as a whole.
const REGISTRY_JOB: &str = "registry";

/// Loads every registered guest (all must load, or the host does not
/// start), then keeps them current in a background task.
pub async fn start(
    config: Config,
    client: Client,
    cluster: Cluster<'_>,
    metrics: &Metrics,
) -> Result<Guests, StartError> {
    let reader = Reader::new(
        client.clone(),
        cluster.namespace,
        config.service_account.clone(),
        config.jobs,
    );
    let objects = reader.objects(&config.location).await?;
    let (registry, registry_cm) = reader.registry(&config.location, &objects).await?;
    // Every pull is waited for (each within its deadline): the guests load
    // before this replica competes for the lease.
    let mut pulls = InFlight::refreshed_every(config.oci_refresh);
    let modules = reader
        .remote(&config.oci, &registry, metrics, &mut pulls, None)
        .await;
    let (runtime, jobs) = (config.runtime.clone(), config.jobs);
    let started = Instant::now();
    let (oci, installed, strict) = (
        config.oci.clone(),
        config.installed.clone(),
        config.strict_start,
    );
    let started_set = tokio::task::spawn_blocking(move || {
        let fallback = Fallback {
            strict,
            last_good: Some(&oci),
            installed: &installed,
        };
        start_set(&runtime, jobs, &registry, &modules, &fallback)
    })
    .await
    .map_err(|e| {
        StartError::Registry(RegistryError::Parse {
            path: config.location.to_string(),
            detail: format!("loading the guests was cancelled: {e}"),
        })
    })??;
    let Started {
        guests,
        outcomes,
        degraded,
    } = started_set;
    for (job, why) in &degraded {
        tracing::warn!(entry = %job, error = %why, "registry entry degraded at start");
    }
    guests.with_status(|s| {
        s.registry = config.location.to_string();
        s.degraded = degraded
            .into_iter()
            .map(|(job, why)| (job.to_string(), why))
            .collect();
    });
    let (audits, answered) = Audits::new();
    let mut watch = Watch {
        config,
        guests: guests.clone(),
        reader,
        objects,
        leader: cluster.leader,
        metrics: metrics.clone(),
        events: Events::new(client.clone(), cluster.identity),
        client,
        audits,
        registry_cm,
        known_bad: BTreeMap::new(),
        reported: BTreeMap::new(),
        published: BTreeSet::new(),
        stages: BTreeSet::new(),
        pulls,
    };
    let set = guests.current();
    watch.report(&set, outcomes, started).await;
    tokio::spawn(async move { watch.run(answered).await });
    Ok(guests)
}

/// Where the host runs: its namespace, its name in Events, and whether it
/// holds the lease (only the lease holder writes MachineConfigGuest status).
pub struct Cluster<'a> {
    pub namespace: &'a str,
    pub identity: &'a str,
    pub leader: watch::Receiver<bool>,
}

struct Watch {
    config: Config,
    guests: Guests,
    reader: Reader,
    /// The MachineConfigGuests as last listed.
    objects: Vec<MachineConfigGuest>,
    leader: watch::Receiver<bool>,
    metrics: Metrics,
    events: Events,
    /// Reads the objects of an audit (`spec.audit`).
    client: Client,
    audits: Audits,
    /// The registry ConfigMap as last read, for Events.
    registry_cm: Option<ConfigMap>,
    /// Entries that failed with exactly this content: not retried until
    /// something changes.
    known_bad: BTreeMap<EntryName, EntryKey>,
    /// The last failure reported per job (or `registry`), so a failure that
    /// persists is reported once, not every poll.
    reported: BTreeMap<String, String>,
    /// `mco_guest_info` series currently set.
    published: BTreeSet<GuestInfoLabels>,
    /// `mco_guest_rollout_stage` series currently set.
    stages: BTreeSet<RolloutStageLabels>,
    /// Pulls that outlast a poll: a slow registry delays its own entries
    /// only, never the others or the next poll.
    pulls: InFlight,
}

impl Watch {
    async fn run(mut self, mut answered: mpsc::UnboundedReceiver<Answer>) {
        let mut ticks = tokio::time::interval(self.config.poll);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        let mut moved = self.guests.rollouts().changes();
        loop {
            tokio::select! {
                _ = ticks.tick() => self.poll().await,
                // A rollout moved between polls (a rollback at the first
                // failure): say so now, not a poll later.
                Ok(()) = moved.changed() => self.publish_objects().await,
                Some(answer) = answered.recv() => self.audited(answer).await,
            }
        }
    }

    async fn poll(&mut self) {
        let started = Instant::now();
        let read = match self.reader.objects(&self.config.location).await {
            Ok(objects) => {
                self.objects = objects;
                let location = &self.config.location;
                self.reader.registry(location, &self.objects).await
            }
            Err(err) => Err(err),
        };
        let registry = match read {
            Ok((registry, cm)) => {
                self.registry_cm = cm.or(self.registry_cm.take());
                if self.reported.remove(REGISTRY_JOB).is_some() {
                    tracing::info!(registry = %self.config.location, "registry readable again");
                    self.guests.with_status(|s| s.registry_error = None);
                }
                registry
            }
            Err(err) => {
                self.registry_failed(err.to_string()).await;
                self.publish_objects().await;
                return;
            }
        };
        // A pull still going after one poll period goes on in the
        // background, within its own deadline.
        let wait = Some(self.config.poll);
        let modules = (self.reader)
            .remote(
                &self.config.oci,
                &registry,
                &self.metrics,
                &mut self.pulls,
                wait,
            )
            .await;
        let current = self.guests.current();
        let (runtime, jobs) = (self.config.runtime.clone(), self.config.jobs);
        let known_bad = self.known_bad.clone();
        let previous = current.clone();
        let oci = self.config.oci.clone();
        let built = tokio::task::spawn_blocking(move || {
            let fetched = fetch_all(&registry, &modules);
            let bytes = fetched_bytes(&fetched);
            let built = build(&runtime, jobs, Some(&previous), fetched, &known_bad);
            remember(Some(&oci), &bytes, &built.outcomes);
            built
        })
        .await;
        let Built { set, outcomes } = match built {
            Ok(built) => {
                if built.changed()
                    && let Some(set) = &built.set
                {
                    self.guests.replace(set.clone());
                }
                built
            }
            Err(err) => {
                tracing::error!(error = %err, "building the new guest set was cancelled");
                return;
            }
        };
        let serving = set.unwrap_or_else(|| (*current).clone());
        self.report(&serving, outcomes, started).await;
    }

    async fn registry_failed(&mut self, message: String) {
        if self.reported.get(REGISTRY_JOB) == Some(&message) {
            return;
        }
        tracing::warn!(
            entry = REGISTRY_JOB,
            registry = %self.config.location,
            error = %message,
            "cannot read the guest registry; the loaded guests keep serving"
        );
        crate::metrics::count(&self.metrics.guest_swaps, REGISTRY_JOB, "failed");
        self.guests
            .with_status(|s| s.registry_error = Some(message.clone()));
        self.event(
            None,
            EventType::Warning,
            "GuestRegistryUnreadable",
            "ReadRegistry".into(),
            &message,
        )
        .await;
        self.reported.insert(REGISTRY_JOB.into(), message);
    }

    /// Logs, counts and records what a build did, and publishes which
    /// modules serve.
    async fn report(
        &mut self,
        serving: &GuestSet,
        outcomes: BTreeMap<EntryName, Outcome>,
        started: Instant,
    ) {
        for (job, outcome) in outcomes {
            let entry = job.to_string();
            match outcome {
                Outcome::KnownBad | Outcome::Pulling => {}
                Outcome::Unchanged => {
                    // Back on the serving module: a failure reported before
                    // is over, and the same module may be tried again.
                    self.known_bad.remove(&job);
                    self.reported.remove(&entry);
                }
                Outcome::Loaded { key, first } => {
                    self.known_bad.remove(&job);
                    self.reported.remove(&entry);
                    // At start a degraded job's fallback loads too: only a
                    // later load is the entry's own module.
                    if !first {
                        self.guests.with_status(|s| s.degraded.remove(&entry));
                    }
                    let result = if first { "loaded" } else { "swapped" };
                    let (module, sha256) = serving_module(serving, &job);
                    tracing::info!(
                        entry = %entry,
                        module = %module,
                        sha256 = %sha256,
                        candidate = ?key.candidate_sha256(),
                        took_ms = started.elapsed().as_millis() as u64,
                        "guest {result}"
                    );
                    crate::metrics::count(&self.metrics.guest_swaps, &entry, result);
                    self.guests
                        .record(&job, change(result, Some(&module), Some(&sha256), None));
                    if !first {
                        let note =
                            format!("registry entry {entry} now runs {module} (sha256 {sha256})");
                        let action = swap_action(&entry, Some(&sha256));
                        self.event(Some(&job), EventType::Normal, "GuestSwapped", action, &note)
                            .await;
                    }
                }
                Outcome::Removed => {
                    tracing::info!(entry = %entry, "guest removed from the registry");
                    crate::metrics::count(&self.metrics.guest_swaps, &entry, "removed");
                    self.known_bad.remove(&job);
                    self.reported.remove(&entry);
                }
                Outcome::Failed { key, error } => {
                    let message = format!("registry entry {entry}: {error}");
                    if let Some(key) = &key {
                        self.known_bad.insert(job.clone(), key.clone());
                    }
                    if self.reported.get(&entry) == Some(&message) {
                        continue;
                    }
                    tracing::warn!(
                        entry = %entry,
                        error = %error,
                        "guest swap refused; the previous module keeps serving"
                    );
                    crate::metrics::count(&self.metrics.guest_swaps, &entry, "failed");
                    let (module, sha256) = key
                        .as_ref()
                        .map(|k| (Some(k.module()), Some(k.sha256())))
                        .unwrap_or((None, None));
                    self.guests.record(
                        &job,
                        change("failed", module.as_deref(), sha256, Some(error.to_string())),
                    );
                    let action = swap_action(&entry, sha256);
                    self.event(
                        Some(&job),
                        EventType::Warning,
                        "GuestSwapFailed",
                        action,
                        &message,
                    )
                    .await;
                    self.reported.insert(entry, message);
                }
            }
        }
        self.publish(serving);
        self.publish_objects().await;
    }

    /// MachineConfigGuest status, from the lease holder of a host whose
    /// registry they are, after bringing the rollouts in line with them
    /// (every replica does that, so that one taking the lease carries on
    /// where the status says).
    async fn publish_objects(&mut self) {
        if !matches!(self.config.location, Location::Crd { .. }) {
            return;
        }
        let leader = *self.leader.borrow();
        let set = self.guests.current();
        let rollouts = self.guests.rollouts().clone();
        // A canary no job can read is the registry's error, which the
        // objects' status says; the rollouts stay as they were meanwhile.
        if let Ok(declared) = crd::declared(&self.objects, self.config.jobs, &set) {
            rollouts.sync(declared, leader);
        }
        if !leader {
            return;
        }
        for (object, moved) in rollouts.take_moves() {
            self.rollout_moved(&object, &moved).await;
        }
        (self.audits).start(
            &self.objects,
            self.config.jobs,
            self.config.gates,
            &self.client,
            set.clone(),
        );
        let statuses = rollouts.statuses();
        self.publish_stages(&statuses);
        let status = self.guests.status();
        let observed = crd::Observed {
            jobs: self.config.jobs,
            status: &status,
            failures: &self.reported,
            metrics: &self.metrics,
            rollouts: &statuses,
            audits: self.audits.statuses(),
        };
        crd::publish(&self.reader.guest_objects, &self.objects, &observed).await;
    }

    /// An audit that ended: its log line, count and Event, and its answer
    /// in the object's status now.
    async fn audited(&mut self, answer: Answer) {
        self.audits.answered(&answer);
        let Answer {
            object,
            job,
            status,
        } = &answer;
        let (type_, reason, result) = match status.state {
            AuditState::Failed => (EventType::Warning, "GuestAuditFailed", "failed"),
            _ => (EventType::Normal, "GuestAudited", "complete"),
        };
        match status.state {
            AuditState::Failed => {
                tracing::warn!(machineconfigguest = %object, entry = %job, request = %status.request, error = %status.message, "audit failed")
            }
            _ => {
                tracing::info!(machineconfigguest = %object, entry = %job, request = %status.request, counts = %status.message, "audit complete")
            }
        }
        crate::metrics::count(&self.metrics.guest_audits, &job.to_string(), result);
        let action = format!("Audit {}", status.request);
        let note = format!("audit {}: {}", status.request, status.message);
        self.event(Some(job), type_, reason, action, &note).await;
        self.publish_objects().await;
    }

    /// The Event, and the rollback count, of one move of a rollout.
    async fn rollout_moved(&self, object: &str, moved: &Move) {
        let job = self
            .objects
            .iter()
            .find(|o| o.metadata.name.as_deref() == Some(object));
        let job = job.and_then(|o| crd::job_of(o, self.config.jobs));
        let (type_, reason) = match moved.to {
            Stage::RolledBack => (EventType::Warning, "GuestRolledBack"),
            _ => (EventType::Normal, "GuestRolloutMoved"),
        };
        if let Some(job) = &job
            && moved.to == Stage::RolledBack
        {
            self.metrics
                .guest_rollbacks
                .get_or_create(&JobReasonLabels {
                    job: job.to_string(),
                    reason: moved.reason.into(),
                })
                .inc();
        }
        let from = moved.from.map_or("-", Stage::as_str);
        let note = format!(
            "{} → {} ({}): {}",
            from,
            moved.to.as_str(),
            moved.reason,
            moved.message
        );
        let action = format!("Rollout to {}", moved.to.as_str());
        self.event(job.as_ref(), type_, reason, action, &note).await;
    }

    /// Sets `mco_guest_rollout_stage` to each job's stage.
    fn publish_stages(&mut self, statuses: &BTreeMap<EntryName, (RolloutSpec, RolloutStatus)>) {
        let now: BTreeSet<RolloutStageLabels> = statuses
            .iter()
            .map(|(job, (_, status))| RolloutStageLabels {
                job: job.to_string(),
                stage: status.stage.as_str().into(),
            })
            .collect();
        for gone in self.stages.difference(&now) {
            self.metrics.guest_rollout_stage.remove(gone);
        }
        for labels in &now {
            self.metrics
                .guest_rollout_stage
                .get_or_create(labels)
                .set(1);
        }
        self.stages = now;
    }

    /// Sets `mco_guest_info` to the serving modules, removing the series
    /// of modules that no longer serve.
    fn publish(&mut self, set: &GuestSet) {
        let mut now = BTreeSet::new();
        let mut add = |job: &EntryName, role: &str, module: &GuestModule| {
            now.insert(GuestInfoLabels {
                job: job.to_string(),
                role: role.into(),
                module: module.name.clone(),
                sha256: module.digest.clone(),
            });
        };
        for (job, served) in set.serving() {
            if let Some(candidate) = served.candidate() {
                add(job, "candidate", candidate);
            }
            add(job, "active", served.active().0);
        }
        for gone in self.published.difference(&now) {
            self.metrics.guest_info.remove(gone);
        }
        for labels in &now {
            self.metrics.guest_info.get_or_create(labels).set(1);
        }
        self.published = now;
    }

    /// An Event on the registry ConfigMap or, for MachineConfigGuests, on
    /// `job`'s object; file registries have no object to hang one on.
    async fn event(
        &self,
        job: Option<&EntryName>,
        type_: EventType,
        reason: &str,
        action: String,
        note: &str,
    ) {
        let guest_object = job.and_then(|job| {
            (self.objects.iter()).find(|o| crd::job_of(o, self.config.jobs).as_ref() == Some(job))
        });
        let reference = match (&self.registry_cm, guest_object) {
            (Some(cm), _) => ObjectReference {
                api_version: Some(ConfigMap::api_version(&()).into()),
                kind: Some(ConfigMap::kind(&()).into()),
                name: cm.metadata.name.clone(),
                namespace: cm.metadata.namespace.clone(),
                uid: cm.metadata.uid.clone(),
                ..ObjectReference::default()
            },
            (None, Some(object)) => ObjectReference {
                api_version: Some(MachineConfigGuest::api_version(&()).into()),
                kind: Some(MachineConfigGuest::kind(&()).into()),
                name: object.metadata.name.clone(),
                uid: object.metadata.uid.clone(),
                ..ObjectReference::default()
            },
            (None, None) => return,
        };
        let note = Note {
            type_,
            reason,
            action: &action,
            note,
        };
        self.events.publish(&reference, note).await;
    }
}

/// The Event action: the entry and the module it was about. kube's Recorder
/// folds Events with the same reason and action on one object into a series
/// that keeps the first note, so each attempted module gets its own.
fn swap_action(entry: &str, sha256: Option<&str>) -> String {
    match sha256 {
        Some(sha256) => format!("Swap {entry} to sha256:{}", &sha256[..sha256.len().min(12)]),
        None => format!("Swap {entry}"),
    }
}

fn serving_module(set: &GuestSet, job: &EntryName) -> (String, String) {
    set.served(job).map_or_else(Default::default, |served| {
        let (module, _) = served.active();
        (module.name.clone(), module.digest.clone())
    })
}

fn change(
    result: &'static str,
    module: Option<&str>,
    sha256: Option<&str>,
    error: Option<String>,
) -> Change {
    Change {
        at: Timestamp::now().to_string(),
        result,
        module: module.map(str::to_string),
        sha256: sha256.map(str::to_string),
        error,
    }
}
