//! The managed boot image controller: moves every enrolled MachineSet to
//! the boot image of the current release, and says why it left any alone.
//!
//! Like upstream, any relevant event starts one full pass over the enrolled
//! MachineSets from a single worker; passes are cheap (one guest instance
//! parses the stream once) and a pass that finds nothing to do writes
//! nothing. Deciding is the host rules (`crate::bootimage`) plus the
//! platform guest; this module holds the I/O around it: watches, the
//! in-cluster state (`state`), writes, conditions (`status`) and events.

mod state;
mod status;
mod triggers;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::Store;
use kube::{Client, Resource, ResourceExt};
use mco_bootimage::{Decision, MachineSetView, UserDataUpgrade};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use crate::bootimage::{self, EvalInputs, Step};
use crate::controller::{FIELD_MANAGER, resource_version};
use crate::guests::Guests;
use crate::metrics::{EvaluationLabels, KindLabels, Metrics};
use crate::runtime::BatchItem;
use state::{ControllerState, Guard, patch_fingerprint};
use status::{Tally, Wanted};
use triggers::Kind;

pub const MACHINE_API_NAMESPACE: &str = "openshift-machine-api";
pub const STREAM_NAMESPACE: &str = "openshift-machine-config-operator";
pub const STREAM_CONFIGMAP: &str = "coreos-bootimages";
/// How often a pass re-checks a MachineConfiguration that is not ready.
const NOT_READY_POLL: Duration = Duration::from_secs(5);
/// Triggers arriving this close together make one pass.
const DEBOUNCE: Duration = Duration::from_millis(200);
/// After a write conflict: the newer object is on its way.
const CONFLICT_RETRY: Duration = Duration::from_secs(1);

/// What `run` needs besides the client and the guests.
pub struct Options {
    /// The host's namespace: the state and known-images ConfigMaps.
    pub namespace: String,
    pub state_configmap: String,
    pub known_images_configmap: Option<String>,
    /// How long MachineConfiguration `cluster` may be missing or behind
    /// before the controller reports Degraded (upstream: 2 minutes).
    pub machineconfiguration_wait: Duration,
    pub resync: Duration,
    /// Stream arch of the control plane (the host's own).
    pub control_plane_arch: String,
    pub identity: String,
    pub leader: watch::Receiver<bool>,
    pub metrics: Metrics,
    pub ready: Arc<AtomicBool>,
}

struct Stores {
    machinesets: Store<DynamicObject>,
    stream: Store<DynamicObject>,
    machineconfiguration: Store<DynamicObject>,
    clusterversion: Store<DynamicObject>,
    infrastructure: Store<DynamicObject>,
    known_images: Option<Store<DynamicObject>>,
}

/// The single worker.
struct Worker {
    client: Client,
    guests: Guests,
    stores: Stores,
    options: Options,
    recorder: Recorder,
    /// The last event per MachineSet, so a pass that changes nothing
    /// records nothing.
    last_events: HashMap<String, (String, String)>,
    /// Since when MachineConfiguration `cluster` is not ready.
    not_ready_since: Option<Instant>,
    /// Conditions this replica last wrote, with the resourceVersion of the
    /// result, until the watch shows them.
    written_conditions: Option<(u64, Vec<Value>)>,
    /// The boot images of the stream ConfigMap at a resourceVersion, so a
    /// pass does not parse a stream it has already learned from.
    published: Option<(String, Arc<BTreeSet<String>>)>,
}

/// A MachineSet that ends up in the loop, with what was decided for it.
struct Outcome {
    object: Arc<DynamicObject>,
    /// `object` as JSON, made once per pass for the host rules.
    value: Value,
    name: String,
    result: Result<Decision, String>,
    /// resourceVersion of the user-data Secret the decision read.
    secret_version: Option<String>,
}

/// A MachineSet waiting for its platform's guest: its place among the
/// outcomes, the platform and the guest's input.
type GuestItem = (usize, String, BatchItem);

/// Runs until `shutdown` resolves.
pub async fn run(
    client: Client,
    guests: Guests,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let (machinesets, ms_events) =
        triggers::watch(&client, Kind::MachineSet, Some(MACHINE_API_NAMESPACE), None);
    let (stream, cm_events) = triggers::watch(
        &client,
        Kind::StreamConfigMap,
        Some(STREAM_NAMESPACE),
        Some(STREAM_CONFIGMAP),
    );
    let (machineconfiguration, mc_events) =
        triggers::watch(&client, Kind::MachineConfiguration, None, Some("cluster"));
    let (clusterversion, cv_events) =
        triggers::watch(&client, Kind::ClusterVersion, None, Some("version"));
    let (infrastructure, infra_events) =
        triggers::watch(&client, Kind::Infrastructure, None, Some("cluster"));
    let mut events = vec![
        ms_events.boxed(),
        cm_events.boxed(),
        mc_events.boxed(),
        cv_events.boxed(),
        infra_events.boxed(),
    ];
    let known_images = options.known_images_configmap.as_deref().map(|name| {
        let (store, known_events) = triggers::watch(
            &client,
            Kind::KnownImages,
            Some(&options.namespace),
            Some(name),
        );
        events.push(known_events.boxed());
        store
    });
    // The watches run on their own task so the stores stay current while a
    // pass waits on the API.
    let (tx, mut reasons) = mpsc::unbounded_channel();
    let pump = tokio::spawn(async move {
        let mut events = futures::stream::select_all(events);
        while let Some(reason) = events.next().await {
            if tx.send(reason).is_err() {
                break;
            }
        }
    });
    let stores = Stores {
        machinesets,
        stream,
        machineconfiguration,
        clusterversion,
        infrastructure,
        known_images,
    };
    let reporter = Reporter {
        controller: FIELD_MANAGER.into(),
        instance: Some(options.identity.clone()),
    };
    let mut worker = Worker {
        recorder: Recorder::new(client.clone(), reporter),
        client,
        guests,
        stores,
        options,
        last_events: HashMap::new(),
        not_ready_since: None,
        written_conditions: None,
        published: None,
    };
    let mut shutdown = std::pin::pin!(shutdown);
    tokio::select! {
        _ = &mut shutdown => { pump.abort(); return; }
        synced = worker.stores.wait_until_ready() => match synced {
            Ok(()) => {
                tracing::info!("boot image caches synced");
                worker.options.ready.store(true, Ordering::Relaxed);
            }
            Err(err) => {
                tracing::error!(error = %err, "a boot image cache stopped before it synced");
                pump.abort();
                return;
            }
        }
    }
    let mut leader = worker.options.leader.clone();
    let mut retry: Option<Duration> = None;
    let mut reason = "ControllerStarted";
    loop {
        if *leader.borrow_and_update() {
            retry = worker.pass(reason).await;
        }
        let wait = retry.unwrap_or(worker.options.resync);
        reason = tokio::select! {
            _ = &mut shutdown => break,
            next = reasons.recv() => match next {
                Some(next) => next,
                None => break,
            },
            changed = leader.changed() => match changed {
                Ok(()) => "LeaderElected",
                Err(_) => break,
            },
            _ = tokio::time::sleep(wait) => if retry.is_some() { "Retry" } else { "Resync" },
        };
        let until = tokio::time::Instant::now() + DEBOUNCE;
        while let Ok(Some(next)) = tokio::time::timeout_at(until, reasons.recv()).await {
            reason = next;
        }
    }
    pump.abort();
}

impl Stores {
    async fn wait_until_ready(&self) -> Result<(), kube::runtime::reflector::store::WriterDropped> {
        let known = async {
            match &self.known_images {
                Some(store) => store.wait_until_ready().await,
                None => Ok(()),
            }
        };
        futures::try_join!(
            self.machinesets.wait_until_ready(),
            self.stream.wait_until_ready(),
            self.machineconfiguration.wait_until_ready(),
            self.clusterversion.wait_until_ready(),
            self.infrastructure.wait_until_ready(),
            known,
        )?;
        Ok(())
    }
}

/// The one object a name-filtered store holds.
fn single(store: &Store<DynamicObject>) -> Option<Arc<DynamicObject>> {
    store.state().into_iter().next()
}

fn to_value(object: &DynamicObject) -> Value {
    serde_json::to_value(object).unwrap_or(Value::Null)
}

/// `None` when MachineConfiguration `cluster` exists and its status caught
/// up with its spec; otherwise why not.
fn not_ready(mc: Option<&DynamicObject>) -> Option<String> {
    let Some(mc) = mc else {
        return Some("machineconfigurations.operator.openshift.io \"cluster\" not found".into());
    };
    let generation = mc.metadata.generation.unwrap_or(0);
    let observed = mc
        .data
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64);
    (observed != Some(generation)).then(|| {
        format!(
            "status.observedGeneration {} has not caught up with generation {generation}",
            observed.map_or("unset".to_owned(), |o| o.to_string())
        )
    })
}

/// The ConfigMap's release, when stamped, must be the release the cluster
/// is on: a stream from another release must not be rolled out. A literal
/// `0.0.1-snapshot` is a development payload and is not compared.
fn release_mismatch(cm: &Value, cv: &Value) -> Option<String> {
    let stream_release = cm.pointer("/data/releaseVersion").and_then(Value::as_str)?;
    let cluster_release = cv
        .pointer("/status/desired/version")
        .and_then(Value::as_str)?;
    (stream_release != cluster_release && stream_release != "0.0.1-snapshot").then(|| {
        format!("the coreos-bootimages ConfigMap is for release {stream_release}, the cluster is on {cluster_release}")
    })
}

impl Worker {
    fn is_leader(&self) -> bool {
        *self.options.leader.borrow()
    }

    /// One pass over every enrolled MachineSet. Returns when to retry
    /// early, if at all.
    #[tracing::instrument(skip(self), fields(reason))]
    async fn pass(&mut self, reason: &'static str) -> Option<Duration> {
        let mc = single(&self.stores.machineconfiguration);
        if let Some(why) = not_ready(mc.as_deref()) {
            let since = *self.not_ready_since.get_or_insert_with(Instant::now);
            let remaining = self
                .options
                .machineconfiguration_wait
                .saturating_sub(since.elapsed());
            if remaining.is_zero() {
                let message = format!("MachineConfiguration was not ready: {why}");
                tracing::error!(%message, "boot image updates are blocked");
                if mc.is_some() {
                    self.write_conditions(&[status::degraded_before_start(&message)], reason)
                        .await;
                }
            } else {
                tracing::info!(%why, "waiting for MachineConfiguration cluster");
                return Some(NOT_READY_POLL.min(remaining));
            }
            return Some(NOT_READY_POLL);
        }
        self.not_ready_since = None;
        let mc = mc.map(|mc| to_value(&mc)).unwrap_or(Value::Null);

        let Some(cv) = single(&self.stores.clusterversion).map(|cv| to_value(&cv)) else {
            tracing::info!("deferring boot image updates: ClusterVersion version not found");
            return None;
        };
        match bootimage::stability_gate(&cv) {
            Ok(None) => {}
            Ok(Some(deferred)) => {
                tracing::info!(decision = %deferred.to_json(), "deferring boot image updates");
                return None;
            }
            Err(err) => {
                tracing::warn!(error = %err, "deferring boot image updates: unreadable ClusterVersion");
                return None;
            }
        }

        // Enrollment first: with nothing enrolled the stream is not needed.
        let mut machinesets = self.stores.machinesets.state();
        machinesets.sort_by_key(|ms| ms.name_any());
        let mut enrolled = Vec::new();
        for ms in machinesets {
            let value = to_value(&ms);
            let result = match MachineSetView::from_object(&value) {
                Err(err) => Err(format!("unreadable MachineSet: {err}")),
                Ok(view) => match bootimage::enrollment_gate(&mc, &view) {
                    Ok(None) => Ok(Decision::noop("enrolled")),
                    Ok(Some(Decision::Error { message })) => {
                        self.write_degraded(&message, reason).await;
                        return None;
                    }
                    // Not enrolled.
                    Ok(Some(_)) => continue,
                    Err(err) => {
                        self.write_degraded(&err.to_string(), reason).await;
                        return None;
                    }
                },
            };
            enrolled.push(Outcome {
                name: ms.name_any(),
                object: ms,
                value,
                result,
                secret_version: None,
            });
        }

        let mut state = match self.load_state().await {
            Ok(state) => state,
            Err(message) => {
                self.write_degraded(&message, reason).await;
                return Some(NOT_READY_POLL);
            }
        };
        // Opting out (or deleting a MachineSet) forgets its hot loop.
        let names: BTreeSet<&str> = enrolled.iter().map(|o| o.name.as_str()).collect();
        if state.retain_hot_loops(|name| names.contains(name))
            && let Err(message) = self.save_state(&state).await
        {
            self.write_degraded(&message, reason).await;
            return Some(NOT_READY_POLL);
        }

        let mut retry = None;
        let tally = if enrolled.is_empty() {
            Tally::default()
        } else {
            let Some(cm) = single(&self.stores.stream) else {
                self.write_degraded(
                    "failed to fetch coreos-bootimages config map: configmaps \"coreos-bootimages\" not found",
                    reason,
                )
                .await;
                return None;
            };
            let cm_value = to_value(&cm);
            if let Some(why) = release_mismatch(&cm_value, &cv) {
                tracing::info!(%why, "deferring boot image updates");
                return None;
            }
            let stream = bootimage::stream_from_configmap(&cm_value).ok().flatten();
            // Remember this stream's images before any MachineSet moves off
            // them, so nothing installed from it is ever unknown.
            let added = state.learn(self.published_images(&cm, stream).iter().cloned());
            if added > 0 {
                tracing::info!(added, "recorded the stream's boot images as known");
                if let Err(message) = self.save_state(&state).await {
                    self.write_degraded(&message, reason).await;
                    return Some(NOT_READY_POLL);
                }
            }
            let outcomes = self
                .decide(enrolled, &cm_value, &cv, &mc, &state, stream)
                .await;
            let (tally, conflicted) = self.act(outcomes, &mut state, reason).await;
            if conflicted {
                retry = Some(CONFLICT_RETRY);
            }
            tally
        };
        self.write_conditions(&[tally.progressing(), tally.degraded()], reason)
            .await;
        retry
    }

    /// The boot images `stream` publishes, parsed once per ConfigMap
    /// version. A stream that does not parse publishes none (every guest
    /// call reports why).
    fn published_images(
        &mut self,
        cm: &DynamicObject,
        stream: Option<&str>,
    ) -> Arc<BTreeSet<String>> {
        let version = cm.resource_version().unwrap_or_default();
        if let Some((seen, images)) = &self.published
            && *seen == version
        {
            return images.clone();
        }
        let images = Arc::new(
            stream
                .and_then(|s| mco_bootimage::Stream::parse(s).ok())
                .map(|parsed| parsed.published_images())
                .unwrap_or_default(),
        );
        self.published = Some((version, images.clone()));
        images
    }

    /// Runs the host rules and the platform guest for every enrolled
    /// MachineSet. A MachineSet the guest wants to patch is decided again
    /// with its user-data Secret, which only then is read (and not at all
    /// when the hot-loop guard will refuse the patch anyway).
    async fn decide(
        &self,
        enrolled: Vec<Outcome>,
        cm: &Value,
        cv: &Value,
        mc: &Value,
        state: &ControllerState,
        stream: Option<&str>,
    ) -> Vec<Outcome> {
        let infrastructure = single(&self.stores.infrastructure)
            .map(|i| to_value(&i))
            .unwrap_or(json!({"kind": "Infrastructure"}));
        let mut known = state.known_images.clone();
        if let Some(cm) = self.stores.known_images.as_ref().and_then(single) {
            match bootimage::known_images_from_configmap(&to_value(&cm)) {
                Ok(user) => known.extend(user),
                Err(err) => tracing::warn!(error = %err, "ignoring the known-images ConfigMap"),
            }
        }
        let guests = self.guests.current();
        let mut outcomes = enrolled;
        let mut for_guest: Vec<GuestItem> = Vec::new();
        for (index, outcome) in outcomes.iter_mut().enumerate() {
            if outcome.result.is_err() {
                continue;
            }
            let inputs = EvalInputs {
                machineset: &outcome.value,
                configmap: cm,
                infrastructure: &infrastructure,
                clusterversion: Some(cv),
                machineconfiguration: Some(mc),
                user_data_secret: None,
                known_images: &known,
                control_plane_arch: &self.options.control_plane_arch,
            };
            outcome.result = match bootimage::prepare(&inputs) {
                Err(err) => Err(format!(
                    "failed to reconcile machineset {}, err: {err}",
                    outcome.name
                )),
                Ok(Step::Decided(decision)) => Ok(decision),
                Ok(Step::Guest(prepared))
                    if guests.boot_image(&prepared.platform_type).is_none() =>
                {
                    Ok(prepared.without_guest())
                }
                Ok(Step::Guest(prepared)) => {
                    let item = BatchItem {
                        machineset: prepared.machineset,
                        cluster: prepared.cluster,
                        user_data: None,
                    };
                    for_guest.push((index, prepared.platform_type, item));
                    continue;
                }
            };
        }

        let mut again = Vec::new();
        for ((index, platform, mut item), result) in self.call_guest(for_guest, stream).await {
            let outcome = &mut outcomes[index];
            let refused = matches!(&result, Ok(Decision::Patch { patch, .. })
                if state.guard(&outcome.name, &patch_fingerprint(patch)) == Guard::HotLoop);
            if !matches!(result, Ok(Decision::Patch { .. })) || refused {
                outcome.result = result;
                continue;
            }
            match self.user_data(&item.machineset).await {
                Ok(secret) => {
                    if let Some((user_data, version)) = secret {
                        item.user_data = Some(user_data);
                        outcome.secret_version = version;
                    }
                    again.push((index, platform, item));
                }
                Err(message) => {
                    outcome.result = Err(format!(
                        "failed to reconcile machineset {}, err: error grabbing user data secret referenced in machineset: {message}",
                        outcome.name
                    ));
                }
            }
        }
        for ((index, _, _), result) in self.call_guest(again, stream).await {
            outcomes[index].result = result;
        }
        outcomes
    }

    /// The guest calls, one batch per platform off the async workers, with
    /// the candidate (if the registry names one) deciding the same inputs
    /// for comparison only. Every result is counted; the items come back
    /// with their results.
    async fn call_guest(
        &self,
        items: Vec<GuestItem>,
        stream: Option<&str>,
    ) -> Vec<(GuestItem, Result<Decision, String>)> {
        let guests = self.guests.current();
        let mut by_platform: BTreeMap<String, Vec<(usize, BatchItem)>> = BTreeMap::new();
        for (index, platform, item) in items {
            by_platform.entry(platform).or_default().push((index, item));
        }
        let mut results = Vec::new();
        for (platform, entries) in by_platform {
            let (indices, batch): (Vec<usize>, Vec<BatchItem>) = entries.into_iter().unzip();
            let Some(guest) = guests.boot_image(&platform).cloned() else {
                // A swap removed the platform's guest since the host rules ran.
                for (index, item) in indices.into_iter().zip(batch) {
                    let message = format!(
                        "failed to reconcile machineset {}, err: the boot image guest for {platform} was removed from the registry; deciding again on the next pass",
                        item.machineset.name
                    );
                    results.push(((index, platform.clone(), item), Err(message)));
                }
                continue;
            };
            let candidate = guests.boot_image_candidate(&platform).cloned();
            let name = guest.module().name.clone();
            let stream = stream.map(str::to_owned);
            let started = Instant::now();
            let count = batch.len();
            let decided = tokio::task::spawn_blocking(move || {
                let active = guest.decide_batch(stream.as_deref(), &batch);
                let shadow = candidate.map(|c| c.decide_batch(stream.as_deref(), &batch));
                (batch, active, shadow)
            })
            .await;
            self.options
                .metrics
                .evaluation_seconds
                .observe(started.elapsed().as_secs_f64() / count.max(1) as f64);
            let (batch, decided, shadow) = match decided {
                Ok(decided) => decided,
                Err(err) => {
                    tracing::error!(error = %err, %platform, "the guest task did not finish");
                    continue;
                }
            };
            let job = crate::registry::boot_image_job(&platform);
            let shadow = shadow.map(|s| s.into_iter().map(Some).collect::<Vec<_>>());
            for (position, ((index, item), result)) in
                indices.into_iter().zip(batch).zip(decided).enumerate()
            {
                let candidate = shadow.as_ref().and_then(|s| s[position].as_ref());
                if let (Ok(active), Some(candidate)) = (&result, candidate) {
                    let object = &item.machineset.name;
                    crate::shadow::compare(&self.options.metrics, &job, object, active, candidate);
                }
                let label = match &result {
                    Ok(decision) => decision.action(),
                    Err(err) => {
                        let kind = KindLabels {
                            kind: err.kind().into(),
                        };
                        self.options
                            .metrics
                            .guest_failures
                            .get_or_create(&kind)
                            .inc();
                        "failed"
                    }
                };
                let labels = EvaluationLabels {
                    guest: format!("bootimage-{}", platform.to_lowercase()),
                    result: label.into(),
                };
                self.options
                    .metrics
                    .evaluations
                    .get_or_create(&labels)
                    .inc();
                let result = result.map_err(|err| {
                    format!(
                        "failed to reconcile machineset {}, err: boot image guest {name} failed: {err}",
                        item.machineset.name
                    )
                });
                results.push(((index, platform.clone(), item), result));
            }
        }
        results
    }

    /// The decoded stub of the MachineSet's user-data Secret and the
    /// Secret's resourceVersion.
    async fn user_data(
        &self,
        machineset: &MachineSetView,
    ) -> Result<Option<(String, Option<String>)>, String> {
        let name = match machineset.user_data_secret_name() {
            Ok(Some(name)) => name,
            // The guest reports a missing name itself.
            Ok(None) => return Ok(None),
            Err(err) => return Err(err.to_string()),
        };
        let secrets: Api<Secret> = Api::namespaced(self.client.clone(), MACHINE_API_NAMESPACE);
        let secret = secrets.get(name).await.map_err(|e| e.to_string())?;
        let value = serde_json::to_value(&secret).map_err(|e| e.to_string())?;
        let user_data = bootimage::user_data_from_secret(&value).map_err(|e| e.to_string())?;
        Ok(Some((user_data, secret.metadata.resource_version)))
    }

    /// Executes the decisions, in MachineSet name order. Returns the tally
    /// and whether a write lost a race (retry soon).
    async fn act(
        &mut self,
        outcomes: Vec<Outcome>,
        state: &mut ControllerState,
        reason: &'static str,
    ) -> (Tally, bool) {
        let mut tally = Tally {
            total: outcomes.len(),
            ..Tally::default()
        };
        let mut counts: BTreeMap<&'static str, i64> = BTreeMap::new();
        let mut conflicted = false;
        if outcomes
            .iter()
            .any(|o| matches!(o.result, Ok(Decision::Patch { .. })))
        {
            // Upstream shows Progressing while MachineSets are being patched.
            let start = Tally {
                total: tally.total,
                ..Tally::default()
            };
            self.write_conditions(&[start.progressing()], reason).await;
        }
        for outcome in outcomes {
            let span = tracing::info_span!("machineset", name = %outcome.name);
            let _entered = span.enter();
            let (result, event) = match outcome.result {
                Ok(Decision::Noop { reason: why }) => {
                    tracing::debug!(%why, "nothing to do");
                    tally.reconciled += 1;
                    ("current", None)
                }
                Ok(Decision::Skip { reason: why }) => {
                    tracing::info!(%why, "left alone");
                    tally.reconciled += 1;
                    tally.skipped += 1;
                    (
                        "skipped",
                        Some((EventType::Normal, "BootImageUpdateSkipped", why)),
                    )
                }
                Ok(Decision::Error { message }) => {
                    tracing::warn!(%message, "cannot update the boot image");
                    tally.errors.push(message.clone());
                    (
                        "degraded",
                        Some((EventType::Warning, "BootImageUpdateFailed", message)),
                    )
                }
                Err(message) => {
                    tracing::warn!(%message, "boot image decision failed");
                    tally.errors.push(message.clone());
                    (
                        "degraded",
                        Some((EventType::Warning, "BootImageUpdateFailed", message)),
                    )
                }
                Ok(Decision::Patch {
                    target,
                    patch,
                    user_data_secret,
                }) => match self
                    .apply(
                        &outcome.object,
                        state,
                        &patch,
                        user_data_secret
                            .as_ref()
                            .map(|u| (u, outcome.secret_version.clone())),
                    )
                    .await
                {
                    Ok(Applied::Patched) => {
                        tally.reconciled += 1;
                        let mut note = format!("boot image updated to {target}");
                        if let Some(secret) = &user_data_secret {
                            note.push_str(&format!(
                                "; user-data Secret {} upgraded to Ignition spec {}",
                                secret.name,
                                mco_bootimage::ignition::STUB_TARGET_VERSION
                            ));
                        }
                        tracing::info!(%note, "patched");
                        // A patch is news even when it repeats.
                        self.last_events.remove(&outcome.name);
                        (
                            "patched",
                            Some((EventType::Normal, "BootImageUpdated", note)),
                        )
                    }
                    Ok(Applied::Conflict) => {
                        tracing::info!("the MachineSet changed meanwhile; deciding again");
                        tally.reconciled += 1;
                        conflicted = true;
                        ("current", None)
                    }
                    Err((why, message)) => {
                        tracing::warn!(%message, "patch refused or failed");
                        tally.errors.push(message.clone());
                        ("degraded", Some((EventType::Warning, why, message)))
                    }
                },
            };
            *counts.entry(result).or_default() += 1;
            if let Some((kind, why, note)) = event {
                self.record(&outcome.object, &outcome.name, kind, why, note)
                    .await;
            }
        }
        for result in ["patched", "current", "skipped", "degraded"] {
            self.options
                .metrics
                .bootimage_machinesets
                .get_or_create(&crate::metrics::ResultLabels {
                    result: result.into(),
                })
                .set(counts.get(result).copied().unwrap_or(0));
        }
        (tally, conflicted)
    }

    /// Applies one patch behind the hot-loop guard: first the stub upgrade
    /// (the new image must be able to read it), then the MachineSet, with
    /// its resourceVersion as precondition so a decision made on a stale
    /// copy is never written.
    async fn apply(
        &self,
        machineset: &DynamicObject,
        state: &mut ControllerState,
        patch: &Value,
        upgrade: Option<(&UserDataUpgrade, Option<String>)>,
    ) -> Result<Applied, (&'static str, String)> {
        let name = machineset.name_any();
        let fingerprint = patch_fingerprint(patch);
        if state.guard(&name, &fingerprint) == Guard::HotLoop {
            self.options.metrics.bootimage_hot_loops.inc();
            return Err((
                "HotLoopDetected",
                format!(
                    "refusing to reconcile machineset {name}, hot loop detected. Please opt-out of boot image updates, adjust your machine provisioning workflow to prevent hot loops and opt back in to resume boot image updates"
                ),
            ));
        }
        if let Some((upgrade, version)) = upgrade {
            self.upgrade_stub(upgrade, version)
                .await
                .map_err(|e| ("BootImageUpdateFailed", e))?;
        }
        let mut body = patch.clone();
        body["metadata"] = json!({"resourceVersion": machineset.metadata.resource_version});
        let api: Api<DynamicObject> = Api::namespaced_with(
            self.client.clone(),
            MACHINE_API_NAMESPACE,
            &Kind::MachineSet.resource(),
        );
        match api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&body))
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 409 => return Ok(Applied::Conflict),
            Err(err) => {
                return Err((
                    "BootImageUpdateFailed",
                    format!("failed to patch machineset {name}: {err}"),
                ));
            }
        }
        self.options.metrics.count_write("patch_machineset");
        self.options.metrics.bootimage_patches.inc();
        state.record_patch(&name, &fingerprint);
        self.save_state(state).await.map_err(|e| {
            (
                "BootImageUpdateFailed",
                format!("patched machineset {name}, but {e}"),
            )
        })?;
        Ok(Applied::Patched)
    }

    /// Writes the converted stub, with the Secret's resourceVersion as
    /// precondition: a Secret changed since it was read is not overwritten.
    async fn upgrade_stub(
        &self,
        upgrade: &UserDataUpgrade,
        version: Option<String>,
    ) -> Result<(), String> {
        let secrets: Api<Secret> = Api::namespaced(self.client.clone(), MACHINE_API_NAMESPACE);
        let mut annotations = upgrade.annotations.clone();
        annotations.insert(
            mco_bootimage::ignition::ANNOTATION_UPGRADED_AT.to_owned(),
            Timestamp::now().to_string(),
        );
        let body = json!({
            "metadata": {"resourceVersion": version, "annotations": annotations},
            "data": {"userData": upgrade.data.user_data},
        });
        secrets
            .patch(&upgrade.name, &PatchParams::default(), &Patch::Merge(&body))
            .await
            .map_err(|e| {
                format!(
                    "could not update secret {}/{}: {e}",
                    MACHINE_API_NAMESPACE, upgrade.name
                )
            })?;
        self.options.metrics.count_write("update_secret");
        tracing::info!(secret = %upgrade.name, "upgraded the user-data stub to Ignition spec 3");
        Ok(())
    }

    fn state_api(&self) -> Api<ConfigMap> {
        Api::namespaced(self.client.clone(), &self.options.namespace)
    }

    async fn load_state(&self) -> Result<ControllerState, String> {
        let what = format!(
            "boot image controller state {}/{}",
            self.options.namespace, self.options.state_configmap
        );
        match self
            .state_api()
            .get_opt(&self.options.state_configmap)
            .await
        {
            Ok(None) => Ok(ControllerState::default()),
            Ok(Some(cm)) => ControllerState::from_data(&cm.data.unwrap_or_default())
                .map_err(|e| format!("{what} is unreadable ({e}); fix or delete it")),
            Err(err) => Err(format!("reading {what}: {err}")),
        }
    }

    /// Writes the whole record; callers write only when it changed.
    async fn save_state(&self, state: &ControllerState) -> Result<(), String> {
        let name = &self.options.state_configmap;
        let body = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": FIELD_MANAGER}},
            "data": state.to_data(),
        });
        self.state_api()
            .patch(
                name,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&body),
            )
            .await
            .map_err(|e| {
                format!(
                    "could not record the boot image controller state in {}/{name}: {e}",
                    self.options.namespace
                )
            })?;
        self.options.metrics.count_write("boot_image_state");
        Ok(())
    }

    async fn write_degraded(&mut self, message: &str, reason: &'static str) {
        tracing::warn!(%message, "boot image updates degraded");
        self.write_conditions(&[status::degraded_before_start(message)], reason)
            .await;
    }

    /// Applies the wanted conditions to MachineConfiguration `cluster` when
    /// any of them differs from what is there (or what this replica wrote
    /// last and the watch has not shown yet).
    async fn write_conditions(&mut self, wanted: &[Wanted], reason: &'static str) {
        if !self.is_leader() {
            return;
        }
        let Some(mc) = single(&self.stores.machineconfiguration) else {
            return;
        };
        let existing = match &self.written_conditions {
            Some((rv, ours)) if *rv > resource_version(mc.as_ref()) => ours.clone(),
            _ => mc
                .data
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
        };
        let now = Timestamp::now().to_string();
        let Some(conditions) = status::next_conditions(&existing, wanted, reason, &now) else {
            return;
        };
        let body = json!({
            "apiVersion": "operator.openshift.io/v1", "kind": "MachineConfiguration",
            "metadata": {"name": "cluster"},
            "status": {"conditions": conditions},
        });
        let api: Api<DynamicObject> =
            Api::all_with(self.client.clone(), &Kind::MachineConfiguration.resource());
        match api
            .patch_status(
                "cluster",
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&body),
            )
            .await
        {
            Ok(written) => {
                self.options.metrics.count_write("boot_image_conditions");
                let all = written
                    .data
                    .pointer("/status/conditions")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                self.written_conditions = Some((resource_version(&written), all));
            }
            Err(err) => {
                tracing::warn!(error = %err, "could not write the boot image conditions");
            }
        }
    }

    /// Records a Kubernetes Event on the MachineSet, once per distinct
    /// outcome, so a resync does not repeat it.
    async fn record(
        &mut self,
        machineset: &DynamicObject,
        name: &str,
        kind: EventType,
        reason: &'static str,
        note: String,
    ) {
        let key = (reason.to_owned(), note.clone());
        if self.last_events.get(name) == Some(&key) {
            return;
        }
        // The Events API bounds the note to 1 kB.
        let mut note = note;
        if note.len() > 1000 {
            let mut cut = 997;
            while !note.is_char_boundary(cut) {
                cut -= 1;
            }
            note.truncate(cut);
            note.push_str("...");
        }
        let event = Event {
            type_: kind,
            reason: reason.into(),
            note: Some(note),
            action: "UpdateBootImage".into(),
            secondary: None,
        };
        let reference = machineset.object_ref(&Kind::MachineSet.resource());
        match self.recorder.publish(&event, &reference).await {
            Ok(()) => {
                self.options.metrics.count_write("event");
                self.last_events.insert(name.to_owned(), key);
            }
            Err(err) => tracing::warn!(error = %err, "could not record an event"),
        }
    }
}

enum Applied {
    Patched,
    /// The MachineSet changed after it was read; nothing was written.
    Conflict,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machineconfiguration_readiness() {
        assert!(not_ready(None).unwrap().contains("not found"));
        let mc = |generation: i64, observed: Value| -> DynamicObject {
            serde_json::from_value(json!({
                "metadata": {"name": "cluster", "generation": generation},
                "status": {"observedGeneration": observed},
            }))
            .unwrap()
        };
        assert_eq!(not_ready(Some(&mc(2, json!(2)))), None);
        assert!(
            not_ready(Some(&mc(3, json!(2))))
                .unwrap()
                .contains("generation 3")
        );
        assert!(
            not_ready(Some(&mc(1, Value::Null)))
                .unwrap()
                .contains("unset")
        );
    }

    #[test]
    fn a_stream_for_another_release_waits() {
        let cm = |v: &str| json!({"data": {"releaseVersion": v}});
        let cv = json!({"status": {"desired": {"version": "4.21.3"}}});
        assert_eq!(release_mismatch(&cm("4.21.3"), &cv), None);
        assert_eq!(release_mismatch(&cm("0.0.1-snapshot"), &cv), None);
        assert_eq!(release_mismatch(&json!({"data": {}}), &cv), None);
        assert!(
            release_mismatch(&cm("4.22.0"), &cv)
                .unwrap()
                .contains("4.22.0")
        );
    }
}
