//! Hot swap: the host re-reads its registry and the modules it names every
//! `--registry-poll`, and when an entry changed (other bytes, other pin or
//! limits) loads the new module off the async workers — component of the
//! right world, imports within the allowlist, digest as pinned, smoke
//! evaluations on built-in fixtures — and only then swaps it in. The old
//! module keeps serving until then, and for good when the new one is
//! refused; evaluations already running finish on the module they started
//! with. No restart, and no reconcile is dropped: controllers read the
//! current set per evaluation.
//!
//! Polling rather than watching: a file on a ConfigMap volume changes by a
//! symlink swap that inotify reports unreliably, and one code path for file
//! and ConfigMap registries is easier to trust. Unchanged polls cost a read
//! and a sha256 of each module.
//!
//! A change is reported where an administrator looks: a log line naming the
//! registry entry, `mco_guest_swaps_total{job,result}`, `mco_guest_info`,
//! the `/guests` status endpoint and, when the registry is a ConfigMap, an
//! Event on that ConfigMap.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, ObjectReference, Secret, ServiceAccount};
use k8s_openapi::jiff::Timestamp;
use kube::runtime::events::EventType;
use kube::{Api, Client, Resource};

use oci_client::secrets::RegistryAuth;

use tokio::sync::watch;

use super::crd::{self, MachineConfigGuest};
use super::entries::{CONFIGMAP_KEY, KeySource, Location, OciSource, Registry, RegistryError};
use super::oci::{Oci, PullError, docker_auth, parse_reference};
use super::status::Change;
use super::{
    self as registry, Built, ConfigMaps, EntryKey, GuestSet, Guests, Job, Outcome, Remote,
    StartError,
};
use crate::cluster::events::{Events, Note};
use crate::metrics::{GuestInfoLabels, JobResultLabels, Metrics};
use crate::runtime::{Guest, Runtime};

/// What the host needs to load and re-load its guests.
pub struct Config {
    pub runtime: Runtime,
    pub location: Location,
    /// How often the registry and its modules are re-read.
    pub poll: Duration,
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
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), cluster.namespace);
    let identity = PullIdentity {
        secrets: Api::namespaced(client.clone(), cluster.namespace),
        service_accounts: Api::namespaced(client.clone(), cluster.namespace),
        service_account: config.service_account.clone(),
    };
    let guest_objects: Api<MachineConfigGuest> = Api::all(client.clone());
    let objects = list_objects(&config.location, &guest_objects).await?;
    let (registry, registry_cm) = read_registry(&config.location, &configmaps, &objects).await?;
    let modules = read_remote(&configmaps, &identity, &config.oci, &registry, metrics).await;
    let runtime = config.runtime.clone();
    let started = Instant::now();
    let (oci, installed, strict) = (
        config.oci.clone(),
        config.installed.clone(),
        config.strict_start,
    );
    let started_set = tokio::task::spawn_blocking(move || {
        let fallback = registry::Fallback {
            strict,
            last_good: Some(&oci),
            installed: &installed,
        };
        registry::start_set(&runtime, &registry, &modules, &fallback)
    })
    .await
    .map_err(|e| {
        StartError::Registry(RegistryError::Parse {
            path: config.location.to_string(),
            detail: format!("loading the guests was cancelled: {e}"),
        })
    })??;
    let registry::Started {
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
    let mut watch = Watch {
        config,
        guests: guests.clone(),
        configmaps,
        identity,
        guest_objects,
        objects,
        leader: cluster.leader,
        metrics: metrics.clone(),
        events: Events::new(client, cluster.identity),
        registry_cm,
        known_bad: BTreeMap::new(),
        reported: BTreeMap::new(),
        published: BTreeSet::new(),
    };
    let set = guests.current();
    watch.report(&set, outcomes, started).await;
    tokio::spawn(async move { watch.run().await });
    Ok(guests)
}

/// Where the host runs: its namespace, its name in Events, and whether it
/// holds the lease (only the lease holder writes MachineConfigGuest status).
pub struct Cluster<'a> {
    pub namespace: &'a str,
    pub identity: &'a str,
    pub leader: watch::Receiver<bool>,
}

/// The MachineConfigGuests of a `Location::Crd` registry (none for the
/// others): listed once per poll, read as the registry and given their
/// status from the same list.
async fn list_objects(
    location: &Location,
    api: &Api<MachineConfigGuest>,
) -> Result<Vec<MachineConfigGuest>, RegistryError> {
    match location {
        Location::Crd { .. } => crd::list(api).await,
        _ => Ok(Vec::new()),
    }
}

/// Reads the registry (from `objects` for `Location::Crd`); for a
/// ConfigMap also returns the object, which Events are about.
async fn read_registry(
    location: &Location,
    configmaps: &Api<ConfigMap>,
    objects: &[MachineConfigGuest],
) -> Result<(Registry, Option<ConfigMap>), RegistryError> {
    if let Location::Crd { guest_dir } = location {
        return Ok((crd::registry(objects, guest_dir)?, None));
    }
    let Location::ConfigMap { name, guest_dir } = location else {
        let registry = location.clone();
        return tokio::task::spawn_blocking(move || registry::read_local(&registry))
            .await
            .map_err(|e| RegistryError::Parse {
                path: location.to_string(),
                detail: e.to_string(),
            })?
            .map(|r| (r, None));
    };
    let shown = location.to_string();
    let cm = configmaps
        .get(name)
        .await
        .map_err(|e| RegistryError::Parse {
            path: shown.clone(),
            detail: format!("cannot read the ConfigMap: {e}"),
        })?;
    let text = cm
        .data
        .as_ref()
        .and_then(|d| d.get(CONFIGMAP_KEY))
        .ok_or_else(|| RegistryError::Parse {
            path: shown.clone(),
            detail: format!("the ConfigMap has no data key {CONFIGMAP_KEY}"),
        })?;
    let registry = Registry::parse(text, &shown, guest_dir)?;
    Ok((registry, Some(cm)))
}

async fn read_configmaps(configmaps: &Api<ConfigMap>, registry: &Registry) -> ConfigMaps {
    let mut read = BTreeMap::new();
    for name in registry::configmap_names(registry) {
        let cm = configmaps
            .get(&name)
            .await
            .map_err(|e| format!("cannot read ConfigMap {name}: {e}"));
        read.insert(name, cm);
    }
    read
}

/// Reads the ConfigMaps and pulls the OCI modules `registry` names,
/// counting each pull that reached a registry in
/// `mco_guest_fetches_total`. A pull served whole from the digest cache is
/// not counted: polls repeat it every `--registry-poll`.
async fn read_remote(
    configmaps: &Api<ConfigMap>,
    identity: &PullIdentity,
    oci: &Oci,
    registry: &Registry,
    metrics: &Metrics,
) -> Remote {
    let pulls = registry::pull_all(oci, registry, |source| {
        access(configmaps.clone(), identity.clone(), source)
    })
    .await;
    let pulls = pulls
        .into_iter()
        .map(|((job, source), pulled)| {
            let result = match &pulled {
                Ok(p) if p.cached => None,
                Ok(p) => {
                    tracing::info!(
                        entry = %job,
                        reference = %source.reference,
                        digest = %p.manifest_digest,
                        "pulled a guest module"
                    );
                    Some("success")
                }
                Err(err) => Some(err.kind()),
            };
            if let Some(result) = result {
                metrics
                    .guest_fetches
                    .get_or_create(&JobResultLabels {
                        job: job.to_string(),
                        result: result.into(),
                    })
                    .inc();
            }
            ((job, source), pulled.map_err(|e| e.to_string()))
        })
        .collect();
    Remote {
        configmaps: read_configmaps(configmaps, registry).await,
        pulls,
    }
}

/// The credentials and verify keys of an `oci:` module.
async fn access(
    configmaps: Api<ConfigMap>,
    identity: PullIdentity,
    source: OciSource,
) -> Result<registry::Access, PullError> {
    let secrets = identity.secrets.clone();
    let keys = registry::verify_keys(&source, |key| {
        read_key(configmaps.clone(), secrets.clone(), key)
    })
    .await?;
    Ok(registry::Access {
        auth: pull_auth(identity, source).await?,
        keys,
    })
}

/// A verify key from a ConfigMap (`data` or `binaryData`) or a Secret in
/// the host's namespace.
async fn read_key(
    configmaps: Api<ConfigMap>,
    secrets: Api<Secret>,
    key: KeySource,
) -> Result<Vec<u8>, String> {
    match key {
        KeySource::ConfigMap { name, key } => {
            let cm = configmaps
                .get(&name)
                .await
                .map_err(|e| format!("cannot read the ConfigMap: {e}"))?;
            cm.data
                .and_then(|d| d.get(&key).map(|text| text.clone().into_bytes()))
                .or_else(|| {
                    cm.binary_data
                        .and_then(|d| d.get(&key).map(|b| b.0.clone()))
                })
                .ok_or_else(|| format!("the ConfigMap has no key {key}"))
        }
        KeySource::Secret { name, key } => {
            let secret = secrets
                .get(&name)
                .await
                .map_err(|e| format!("cannot read the Secret: {e}"))?;
            secret
                .data
                .and_then(|d| d.get(&key).map(|b| b.0.clone()))
                .ok_or_else(|| format!("the Secret has no key {key}"))
        }
        KeySource::File(path) => super::cosign::read_key_file(&path).map_err(|e| e.to_string()),
    }
}

/// Who the host pulls as: the Secrets of its namespace, and its
/// ServiceAccount, whose `imagePullSecrets` serve entries without a
/// `pullSecret` as they serve a Pod's images.
#[derive(Clone)]
struct PullIdentity {
    secrets: Api<Secret>,
    service_accounts: Api<ServiceAccount>,
    service_account: Option<String>,
}

/// The credentials of an `oci:` module: those of its pull Secret; else of
/// the first of the ServiceAccount's `imagePullSecrets` that has any for
/// its registry; else anonymous.
async fn pull_auth(identity: PullIdentity, source: OciSource) -> Result<RegistryAuth, PullError> {
    let reference = parse_reference(&source.reference).map_err(|detail| PullError::Reference {
        reference: source.reference.clone(),
        detail,
    })?;
    let registry = reference.resolve_registry();
    if let Some(name) = &source.pull_secret {
        return secret_auth(&identity.secrets, name, registry)
            .await
            .map_err(|detail| PullError::Secret {
                reference: source.reference.clone(),
                secret: name.clone(),
                detail,
            });
    }
    let Some(account) = &identity.service_account else {
        return Ok(RegistryAuth::Anonymous);
    };
    let sa = identity
        .service_accounts
        .get(account)
        .await
        .map_err(|e| PullError::Secret {
            reference: source.reference.clone(),
            secret: format!("the imagePullSecrets of serviceaccount/{account}"),
            detail: format!("cannot read the ServiceAccount: {e}"),
        })?;
    for name in sa
        .image_pull_secrets
        .iter()
        .flatten()
        .map(|r| r.name.as_str())
    {
        match secret_auth(&identity.secrets, name, registry).await {
            Ok(auth) => return Ok(auth),
            // As the kubelet does: a listed Secret that is missing, broken
            // or for other registries is passed over.
            Err(why) => tracing::debug!(secret = name, %why, "imagePullSecret not used"),
        }
    }
    Ok(RegistryAuth::Anonymous)
}

/// The credentials a `kubernetes.io/dockerconfigjson` Secret holds for
/// `registry`.
async fn secret_auth(
    secrets: &Api<Secret>,
    name: &str,
    registry: &str,
) -> Result<RegistryAuth, String> {
    let secret = secrets
        .get(name)
        .await
        .map_err(|e| format!("cannot read it: {e}"))?;
    auth_in(&secret, registry)
}

fn auth_in(secret: &Secret, registry: &str) -> Result<RegistryAuth, String> {
    if secret.type_.as_deref() != Some(DOCKER_CONFIG_SECRET) {
        return Err(format!("its type is not {DOCKER_CONFIG_SECRET}"));
    }
    let config = secret
        .data
        .as_ref()
        .and_then(|d| d.get(DOCKER_CONFIG_KEY))
        .ok_or_else(|| format!("it has no {DOCKER_CONFIG_KEY}"))?;
    docker_auth(&config.0, registry)
}

const DOCKER_CONFIG_SECRET: &str = "kubernetes.io/dockerconfigjson";
const DOCKER_CONFIG_KEY: &str = ".dockerconfigjson";

struct Watch {
    config: Config,
    guests: Guests,
    configmaps: Api<ConfigMap>,
    /// Credentials of `oci:` modules.
    identity: PullIdentity,
    /// The registry of `Location::Crd`, and where its status goes.
    guest_objects: Api<MachineConfigGuest>,
    /// Those objects as last listed.
    objects: Vec<MachineConfigGuest>,
    leader: watch::Receiver<bool>,
    metrics: Metrics,
    events: Events,
    /// The registry ConfigMap as last read, for Events.
    registry_cm: Option<ConfigMap>,
    /// Entries that failed with exactly this content: not retried until
    /// something changes.
    known_bad: BTreeMap<Job, EntryKey>,
    /// The last failure reported per job (or `registry`), so a failure that
    /// persists is reported once, not every poll.
    reported: BTreeMap<String, String>,
    /// `mco_guest_info` series currently set.
    published: BTreeSet<GuestInfoLabels>,
}

impl Watch {
    async fn run(mut self) {
        let mut ticks = tokio::time::interval(self.config.poll);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        loop {
            ticks.tick().await;
            self.poll().await;
        }
    }

    async fn poll(&mut self) {
        let started = Instant::now();
        let read = match list_objects(&self.config.location, &self.guest_objects).await {
            Ok(objects) => {
                self.objects = objects;
                read_registry(&self.config.location, &self.configmaps, &self.objects).await
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
        let modules = read_remote(
            &self.configmaps,
            &self.identity,
            &self.config.oci,
            &registry,
            &self.metrics,
        )
        .await;
        let current = self.guests.current();
        let runtime = self.config.runtime.clone();
        let known_bad = self.known_bad.clone();
        let previous = current.clone();
        let oci = self.config.oci.clone();
        let built = tokio::task::spawn_blocking(move || {
            let fetched = registry::fetch_all(&registry, &modules);
            let bytes = registry::fetched_bytes(&fetched);
            let built = registry::build(&runtime, Some(&previous), fetched, &known_bad);
            registry::remember(Some(&oci), &bytes, &built.outcomes);
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
        self.count(REGISTRY_JOB, "failed");
        self.guests
            .with_status(|s| s.registry_error = Some(message.clone()));
        self.event(
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
        outcomes: BTreeMap<Job, Outcome>,
        started: Instant,
    ) {
        for (job, outcome) in outcomes {
            let entry = job.to_string();
            match outcome {
                Outcome::KnownBad => {}
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
                    self.count(&entry, result);
                    self.guests
                        .record(&job, change(result, Some(&module), Some(&sha256), None));
                    if !first {
                        let note =
                            format!("registry entry {entry} now runs {module} (sha256 {sha256})");
                        let action = swap_action(&entry, Some(&sha256));
                        self.event(EventType::Normal, "GuestSwapped", action, &note)
                            .await;
                    }
                }
                Outcome::Removed => {
                    tracing::info!(entry = %entry, "guest removed from the registry");
                    self.count(&entry, "removed");
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
                    self.count(&entry, "failed");
                    let (module, sha256) = key
                        .as_ref()
                        .map(|k| (Some(k.module()), Some(k.sha256())))
                        .unwrap_or((None, None));
                    self.guests.record(
                        &job,
                        change("failed", module.as_deref(), sha256, Some(error.to_string())),
                    );
                    let action = swap_action(&entry, sha256);
                    self.event(EventType::Warning, "GuestSwapFailed", action, &message)
                        .await;
                    self.reported.insert(entry, message);
                }
            }
        }
        self.publish(serving);
        self.publish_objects().await;
    }

    /// MachineConfigGuest status, from the lease holder of a host whose
    /// registry they are.
    async fn publish_objects(&self) {
        if !matches!(self.config.location, Location::Crd { .. }) || !*self.leader.borrow() {
            return;
        }
        let status = self.guests.status();
        let observed = crd::Observed {
            status: &status,
            failures: &self.reported,
            metrics: &self.metrics,
        };
        crd::publish(&self.guest_objects, &self.objects, &observed).await;
    }

    fn count(&self, job: &str, result: &str) {
        self.metrics
            .guest_swaps
            .get_or_create(&JobResultLabels {
                job: job.into(),
                result: result.into(),
            })
            .inc();
    }

    /// Sets `mco_guest_info` to the serving modules, removing the series
    /// of modules that no longer serve.
    fn publish(&mut self, set: &GuestSet) {
        let mut now = BTreeSet::new();
        let mut add = |job: Job, role: &str, module: &crate::runtime::GuestModule| {
            now.insert(GuestInfoLabels {
                job: job.to_string(),
                role: role.into(),
                module: module.name.clone(),
                sha256: module.digest.clone(),
            });
        };
        let slots = std::iter::once((
            Job::Mcn,
            set.mcn.active.module(),
            set.mcn.candidate.as_ref().map(Guest::module),
        ))
        .chain(set.boot_images.iter().map(|(platform, slot)| {
            (
                Job::BootImage(platform.clone()),
                slot.active.module(),
                slot.candidate.as_ref().map(Guest::module),
            )
        }));
        for (job, active, candidate) in slots {
            if let Some(candidate) = candidate {
                add(job.clone(), "candidate", candidate);
            }
            add(job, "active", active);
        }
        for gone in self.published.difference(&now) {
            self.metrics.guest_info.remove(gone);
        }
        for labels in &now {
            self.metrics.guest_info.get_or_create(labels).set(1);
        }
        self.published = now;
    }

    /// An Event on the registry ConfigMap; file registries have no object
    /// to hang one on.
    async fn event(&self, type_: EventType, reason: &str, action: String, note: &str) {
        let Some(cm) = &self.registry_cm else {
            return;
        };
        let reference = ObjectReference {
            api_version: Some(ConfigMap::api_version(&()).into()),
            kind: Some(ConfigMap::kind(&()).into()),
            name: cm.metadata.name.clone(),
            namespace: cm.metadata.namespace.clone(),
            uid: cm.metadata.uid.clone(),
            ..ObjectReference::default()
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

fn serving_module(set: &GuestSet, job: &Job) -> (String, String) {
    let module = match job {
        Job::Mcn => Some(set.mcn.active.module()),
        Job::BootImage(platform) => set.boot_images.get(platform).map(|s| s.active.module()),
    };
    module.map_or_else(Default::default, |m| (m.name.clone(), m.digest.clone()))
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

#[cfg(test)]
mod tests {
    use k8s_openapi::ByteString;

    use super::*;

    fn secret(type_: &str, key: &str, config: &str) -> Secret {
        Secret {
            type_: Some(type_.into()),
            data: Some([(key.to_string(), ByteString(config.as_bytes().to_vec()))].into()),
            ..Secret::default()
        }
    }

    #[test]
    fn a_pull_secret_gives_the_credentials_of_its_registry_only() {
        let config = r#"{"auths": {"quay.io": {"username": "u", "password": "p"}}}"#;
        let good = secret(DOCKER_CONFIG_SECRET, DOCKER_CONFIG_KEY, config);
        assert!(
            matches!(auth_in(&good, "quay.io"), Ok(RegistryAuth::Basic(u, p)) if u == "u" && p == "p")
        );
        assert_eq!(
            auth_in(&good, "ghcr.io").err().as_deref(),
            Some("no credentials for ghcr.io")
        );
        let opaque = secret("Opaque", DOCKER_CONFIG_KEY, config);
        assert_eq!(
            auth_in(&opaque, "quay.io").err().as_deref(),
            Some("its type is not kubernetes.io/dockerconfigjson")
        );
        let no_key = secret(DOCKER_CONFIG_SECRET, "config.json", config);
        assert_eq!(
            auth_in(&no_key, "quay.io").err().as_deref(),
            Some("it has no .dockerconfigjson")
        );
        let garbage = secret(DOCKER_CONFIG_SECRET, DOCKER_CONFIG_KEY, "{not json");
        assert!(auth_in(&garbage, "quay.io").is_err_and(|e| e.contains("does not parse")));
    }
}
