//! The managed boot image controller: moves every enrolled MachineSet and
//! ControlPlaneMachineSet to the boot image of the current release, and
//! says why it left any alone.
//!
//! Like upstream, any relevant event starts one full pass from a single
//! worker: snapshot the watched objects → plan (`plan`, pure) → read the
//! user-data Secrets and call the guests the plan asks for → write what
//! the plan says (`write`). A pass that finds nothing to do writes nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::jiff::Timestamp;
use kube::api::Api;
use kube::core::{Selector, SelectorExt};
use kube::runtime::reflector::Store;
use kube::{Client, ResourceExt};
use mco_bootimage::{Decision, MachineKind, MachineSetView};
use tokio::sync::{mpsc, watch};

use super::conditions;
use super::ec2::live::{self as ec2_live, Ec2};
use super::error::PassError;
use super::guest::BootImageGuestExt as _;
use super::guest::{BatchItem, BootImageGuest, StreamInput};
use super::metrics::Metrics;
use super::objects::{
    CONTROL_PLANE_MACHINE_SET_NAME, ClusterVersion, ConfigMapData, Decoded, Infrastructure, Input,
    MACHINE_API_NAMESPACE, MachineConfiguration, STREAM_CONFIGMAP, STREAM_NAMESPACE,
    UserDataSecret, known_images_configmap, machine_decoder,
};
use super::plan::{self, Gate, Pass, Request, Snapshot, UserData};
use super::rules;
use super::skew;
use super::stream_cache::StreamCache;
use super::triggers::{self, Kind, one};
use super::vcenter::live::{self as vcenters, Vcenters};
use super::write::Writer;
use mco_cluster::decode::Failures;
use mco_cluster::events::Events;
use mco_cluster::managers;
use mco_cluster::own_writes::OwnWrites;
use mco_cluster::watch::{Latest, Readiness};
use mco_job::feature_gates::Gates;
use mco_job::leadership::{Leadership, NotLeader};
use mco_job::ownership::{JobOwnership, Mode, State};
use mco_registry::Guests;
use mco_registry::decide::Routing;

/// How often a pass re-checks a MachineConfiguration that is not ready.
const NOT_READY_POLL: Duration = Duration::from_secs(5);
/// The reason of a pass a change of the feature gates in force starts.
const GATES_CHANGED: &str = "FeatureGatesChanged";
/// A candidate's rollout moved: some MachineSets change hands.
const ROLLOUT_MOVED: &str = "GuestRolloutMoved";
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
    /// Whether this replica holds the lease: a pass runs only while it
    /// does, and stops where it is when it is lost.
    pub leadership: Leadership,
    pub metrics: Metrics,
    pub readiness: Readiness,
    /// MachineConfiguration `cluster`, from the watch the MCN job shares.
    pub machineconfiguration: Latest,
    /// This job's ownership mode and state.
    pub ownership: JobOwnership,
    /// The feature gates in force: `ManagedBootImagesCPMS` (the
    /// ControlPlaneMachineSet pass) and `BootImageSkewEnforcement` (the
    /// skew record); a change starts a pass.
    pub gates: Gates,
    /// Reports the objects a watch cannot decode (one for the whole host,
    /// so an object two watches share is reported once).
    pub failures: Failures,
    /// vSphere: how vCenters are reached and where OVAs are cached.
    pub vsphere: vcenters::Options,
    /// AWS: how EC2 is reached.
    pub ec2: ec2_live::Options,
}

/// The watched objects, each decoded once per event.
struct Stores {
    machinesets: Store<Decoded<MachineSetView>>,
    controlplanemachinesets: Store<Decoded<MachineSetView>>,
    stream: Store<Decoded<ConfigMapData>>,
    machineconfiguration: Store<Decoded<MachineConfiguration>>,
    clusterversion: Store<Decoded<ClusterVersion>>,
    infrastructure: Store<Decoded<Infrastructure>>,
    known_images: Option<Store<Decoded<ConfigMapData>>>,
}

/// The single worker.
struct Worker {
    guests: Guests,
    stores: Stores,
    writer: Writer,
    /// AWS: who owns a MachineSet's AMI, and a marketplace product's AMIs.
    ec2: Ec2,
    machineconfiguration_wait: Duration,
    control_plane_arch: String,
    gates: Gates,
    /// Since when MachineConfiguration `cluster` is not ready.
    not_ready_since: Option<Instant>,
    /// The stream ConfigMap as last parsed, so a pass does not parse a
    /// stream the host has already read.
    stream: StreamCache,
}

/// Sets up the watches (registering them with `options.readiness` right
/// away), and returns the controller, which runs until `shutdown` resolves.
pub fn run(
    client: Client,
    guests: Guests,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> impl std::future::Future<Output = ()> + Send {
    let gates = &options.gates;
    let shared = triggers::Shared {
        client: &client,
        readiness: &options.readiness,
        gates,
        failures: &options.failures,
    };
    let (machinesets, ms_events) = triggers::watch(
        &shared,
        Kind::MachineSet,
        machine_decoder(MachineKind::MachineSet),
        Some(MACHINE_API_NAMESPACE),
        None,
    );
    // The singleton upstream names `cluster`; optional, see
    // `triggers::watch`.
    let (controlplanemachinesets, cpms_events) = triggers::watch(
        &shared,
        Kind::ControlPlaneMachineSet,
        machine_decoder(MachineKind::ControlPlaneMachineSet),
        Some(MACHINE_API_NAMESPACE),
        Some(CONTROL_PLANE_MACHINE_SET_NAME),
    );
    let (stream, cm_events) = triggers::watch(
        &shared,
        Kind::StreamConfigMap,
        ConfigMapData::decode,
        Some(STREAM_NAMESPACE),
        Some(STREAM_CONFIGMAP),
    );
    let (machineconfiguration, mc_events) = triggers::follow(
        Kind::MachineConfiguration,
        MachineConfiguration::decode,
        options.machineconfiguration.clone(),
        &shared,
    );
    let (clusterversion, cv_events) = triggers::watch(
        &shared,
        Kind::ClusterVersion,
        ClusterVersion::decode,
        None,
        Some("version"),
    );
    let (infrastructure, infra_events) = triggers::watch(
        &shared,
        Kind::Infrastructure,
        Infrastructure::decode,
        None,
        Some("cluster"),
    );
    let mut watched = vec![
        Kind::MachineSet,
        Kind::ControlPlaneMachineSet,
        Kind::StreamConfigMap,
        Kind::MachineConfiguration,
        Kind::ClusterVersion,
        Kind::Infrastructure,
    ];
    // Upstream's controller takes up a change of the feature gates only by
    // restarting (library-go's `featuregates.NewFeatureGateAccess` exits
    // the process on one); here the change starts a pass.
    let gates_events = tokio_stream::wrappers::WatchStream::from_changes(gates.clone())
        .map(|gates| {
            tracing::info!(%gates, "the feature gates changed; the boot image pass runs again");
            GATES_CHANGED
        })
        .boxed();
    let rollout_events =
        tokio_stream::wrappers::WatchStream::from_changes(guests.rollouts().changes())
            .map(|_| ROLLOUT_MOVED)
            .boxed();
    let mut events = vec![
        ms_events,
        cpms_events,
        cm_events,
        mc_events,
        cv_events,
        infra_events,
        gates_events,
        rollout_events,
    ];
    let known_images = options.known_images_configmap.as_deref().map(|name| {
        let (store, known_events) = triggers::watch(
            &shared,
            Kind::KnownImages,
            known_images_configmap,
            Some(&options.namespace),
            Some(name),
        );
        watched.push(Kind::KnownImages);
        events.push(known_events);
        store
    });
    let mut watched: Vec<&'static str> = watched.into_iter().map(Kind::name).collect();
    // The first pass runs under the cluster's gates, not the Default set's.
    watched.push(mco_job::feature_gates::WATCH);
    let worker = Worker {
        writer: Writer {
            events: Events::new(client.clone(), &options.identity),
            vcenters: Vcenters::new(client.clone(), options.vsphere),
            client: client.clone(),
            namespace: options.namespace,
            state_configmap: options.state_configmap,
            metrics: options.metrics,
            leadership: options.leadership.clone(),
            written: OwnWrites::default(),
            ownership: options.ownership,
        },
        ec2: Ec2::new(client, options.ec2),
        guests,
        stores: Stores {
            machinesets,
            controlplanemachinesets,
            stream,
            machineconfiguration,
            clusterversion,
            infrastructure,
            known_images,
        },
        machineconfiguration_wait: options.machineconfiguration_wait,
        control_plane_arch: options.control_plane_arch,
        gates: options.gates.clone(),
        not_ready_since: None,
        stream: StreamCache::default(),
    };
    async move {
        // The watches run on their own task so the stores stay current
        // while a pass waits on the API.
        let (tx, reasons) = mpsc::unbounded_channel();
        let pump = tokio::spawn(async move {
            let mut events = futures::stream::select_all(events);
            while let Some(reason) = events.next().await {
                if tx.send(reason).is_err() {
                    break;
                }
            }
        });
        worker
            .run(
                options.leadership.held(),
                options.readiness,
                watched,
                options.resync,
                reasons,
                shutdown,
            )
            .await;
        pump.abort();
    }
}

impl Worker {
    async fn run(
        mut self,
        mut leader: watch::Receiver<bool>,
        readiness: Readiness,
        watched: Vec<&'static str>,
        resync: Duration,
        mut reasons: mpsc::UnboundedReceiver<&'static str>,
        shutdown: impl std::future::Future<Output = ()> + Send,
    ) {
        let mut shutdown = std::pin::pin!(shutdown);
        tokio::select! {
            _ = &mut shutdown => return,
            () = readiness.listed(&watched) => {
                tracing::info!("boot image caches synced");
            }
        }
        let mut retry: Option<Duration> = None;
        let mut reason = "ControllerStarted";
        loop {
            if *leader.borrow_and_update() {
                let leadership = self.writer.leadership.clone();
                retry = match leadership.guard(self.pass(reason)).await {
                    Ok(retry) => retry,
                    Err(NotLeader) => {
                        // Whatever the pass was doing (a vCenter transfer
                        // included) was dropped as a crash would drop it;
                        // the next leader's pass cleans up and starts over.
                        tracing::warn!(
                            reason,
                            "lost the lease: the boot image pass stopped where it was"
                        );
                        self.writer.metrics.bootimage.passes_stopped.inc();
                        None
                    }
                };
            }
            let wait = retry.unwrap_or(resync);
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
    }

    /// One pass over every enrolled ControlPlaneMachineSet and MachineSet.
    /// Returns when to retry early, if at all.
    #[tracing::instrument(skip(self), fields(reason))]
    async fn pass(&mut self, reason: &'static str) -> Option<Duration> {
        let snapshot = self.snapshot();
        let mc = snapshot.machineconfiguration.clone();
        let ownership = &self.writer.ownership;
        match ownership.mode() {
            Mode::Own => {
                ownership.judge(operator_writes(mc.as_deref()));
                if !ownership.may_write() {
                    return None;
                }
            }
            Mode::Observe => ownership.set(State::Observing),
        }
        let enrolled = match plan::gates(&snapshot) {
            Ok(enrolled) => enrolled,
            Err(Gate::NotReady(why)) => return self.not_ready(mc.as_ref(), &why, reason).await,
            Err(Gate::Deferred(why)) => {
                self.not_ready_since = None;
                tracing::info!(%why, "deferring boot image updates");
                return None;
            }
            Err(Gate::Degraded(message)) => {
                self.not_ready_since = None;
                self.writer
                    .write_degraded(mc.as_ref(), &message, reason)
                    .await;
                return None;
            }
        };
        self.not_ready_since = None;
        let state = match self.writer.load_state().await {
            Ok(state) => state,
            Err(err) => {
                self.writer
                    .write_degraded(mc.as_ref(), &err.to_string(), reason)
                    .await;
                return Some(NOT_READY_POLL);
            }
        };
        let mut pass = Pass::new(&snapshot, enrolled, state);
        // Only the own mode undoes an interrupted template swap: it
        // renames a VM.
        let recover = self.writer.ownership.mode() == Mode::Own;
        let mut ec2 = self.ec2.pass();
        loop {
            let reads = pass.vcenter_reads();
            if !reads.is_empty() {
                for (index, answer) in self.writer.vcenters.read(reads, recover).await {
                    let result = if answer.is_ok() { "read" } else { "failed" };
                    let job = super::job::job(super::platform::vsphere::NAME).to_string();
                    mco_registry::metrics::count(
                        &self.writer.metrics.bootimage.vcenter_reads,
                        &job,
                        result,
                    );
                    pass.give_vcenter(index, answer);
                }
            }
            // EC2 in rounds: a marketplace AMI's product is read once the
            // AMI is described.
            loop {
                let reads = pass.ec2_reads();
                if reads.is_empty() {
                    break;
                }
                for read in reads {
                    let answer = ec2.answer(&read.read).await;
                    let result = match answer {
                        super::ec2::Ec2Answer::Unreachable(_) => "unreachable",
                        super::ec2::Ec2Answer::Denied(_) => "denied",
                        _ => "read",
                    };
                    let job = super::job::job(super::platform::aws::NAME).to_string();
                    mco_registry::metrics::count(
                        &self.writer.metrics.bootimage.ec2_reads,
                        &job,
                        result,
                    );
                    pass.give_ec2(read.index, answer);
                }
            }
            let requests = pass.take_requests();
            if requests.is_empty() {
                break;
            }
            for (request, result) in self.decide(requests, pass.stream()).await {
                pass.answer(request, result);
            }
            for secret in pass.secrets() {
                let user_data = self.user_data(&secret.name).await;
                pass.give_secret(secret.index, Some(user_data.map_err(|e| e.to_string())));
            }
        }
        let plan = pass.finish();
        if self.writer.ownership.mode() == Mode::Observe {
            let summary = self.writer.observe(&plan).await;
            self.writer.ownership.observed(summary);
            return None;
        }
        if plan.save_state
            && let Err(err) = self.writer.save_state(&plan.state).await
        {
            self.writer
                .write_degraded(mc.as_ref(), &err.to_string(), reason)
                .await;
            return Some(NOT_READY_POLL);
        }
        match &plan.stopped {
            None => {}
            Some(Gate::Degraded(message)) => {
                self.writer
                    .write_degraded(mc.as_ref(), message, reason)
                    .await;
                return None;
            }
            Some(Gate::Deferred(why) | Gate::NotReady(why)) => {
                tracing::info!(%why, "deferring boot image updates");
                return None;
            }
        }
        let (mut tally, conflicted) = self.writer.execute(plan, mc.as_ref(), reason).await;
        // Only the MachineSet pass maintains the skew record (upstream's
        // `syncMAPIMachineSets`); a ControlPlaneMachineSet never feeds it.
        let read = mc.as_deref().and_then(|mc| mc.object.as_ref().ok());
        let summary = skew::PassSummary {
            skipped: tally.machinesets.skipped,
            errors: tally.machinesets.errors.len(),
        };
        let record = read.and_then(|mc| {
            let stream = snapshot.stream.as_deref();
            let cv = snapshot.clusterversion.as_deref();
            skew::after_pass(
                &snapshot.gates,
                mc,
                summary,
                stream.and_then(|cm| cm.object.as_ref().ok()),
                cv.and_then(|cv| cv.object.as_ref().ok()),
            )
        });
        if let Some(record) = record {
            self.writer.write_skew_record(&record).await;
        }
        tally.enrollment = read.and_then(|mc| {
            let platform = snapshot
                .infrastructure
                .as_deref()
                .and_then(|infra| infra.object.as_ref().ok())
                .and_then(|infra| rules::platform_type(infra).ok())
                .unwrap_or_default();
            rules::computed_enrollment(mc, MachineKind::MachineSet, &platform)
        });
        self.writer
            .write_conditions(
                mc.as_ref(),
                &[tally.progressing(), tally.degraded()],
                reason,
            )
            .await;
        conflicted.then_some(CONFLICT_RETRY)
    }

    /// MachineConfiguration `cluster` is missing or behind: wait, then say so.
    async fn not_ready(
        &mut self,
        mc: Option<&Arc<Decoded<MachineConfiguration>>>,
        why: &str,
        reason: &'static str,
    ) -> Option<Duration> {
        let since = *self.not_ready_since.get_or_insert_with(Instant::now);
        let remaining = self
            .machineconfiguration_wait
            .saturating_sub(since.elapsed());
        if !remaining.is_zero() {
            tracing::info!(%why, "waiting for MachineConfiguration cluster");
            return Some(NOT_READY_POLL.min(remaining));
        }
        let message = format!("MachineConfiguration was not ready: {why}");
        tracing::error!(%message, "boot image updates are blocked");
        self.writer
            .write_conditions(mc, &[conditions::degraded_before_start(&message)], reason)
            .await;
        Some(NOT_READY_POLL)
    }

    /// The watched objects as they are now, and what the guests serve.
    fn snapshot(&mut self) -> Snapshot {
        let stream = one(&self.stores.stream);
        let parsed = self.stream.read(stream.as_deref());
        let stores = &self.stores;
        let known_images = match stores.known_images.as_ref().and_then(one) {
            None => BTreeSet::new(),
            Some(cm) => match &cm.object {
                Ok(cm) => cm.known_images(),
                Err(err) => {
                    tracing::warn!(error = %err, "ignoring the known-images ConfigMap");
                    BTreeSet::new()
                }
            },
        };
        Snapshot {
            machineconfiguration: one(&stores.machineconfiguration),
            clusterversion: one(&stores.clusterversion),
            infrastructure: one(&stores.infrastructure),
            known_images,
            machinesets: stores.machinesets.state(),
            controlplanemachinesets: stores.controlplanemachinesets.state(),
            stream_input: parsed.input,
            published_images: parsed.published,
            stream,
            control_plane_arch: self.control_plane_arch.clone(),
            platforms: super::job::platforms(&self.guests.current()),
            now: Timestamp::now(),
            gates: self.gates.borrow().clone(),
        }
    }

    /// The guest decisions a pass asks for: one batch per platform, through
    /// the rollout protocol ([`mco_registry::decide`]), with the
    /// candidate (if the registry names one) deciding the same inputs. Its
    /// decision is compared, and taken where its rollout gives it the
    /// MachineSet (the canary selector's in `Canary`, every one once
    /// `Active`) unless it failed or this very comparison rolled the
    /// rollout back. Every result is counted.
    async fn decide(
        &self,
        requests: Vec<Request>,
        stream: Arc<StreamInput>,
    ) -> Vec<(Request, Result<Decision, PassError>)> {
        let guests = self.guests.current();
        let metrics = &self.writer.metrics;
        let mut by_platform: BTreeMap<String, Vec<Request>> = BTreeMap::new();
        for request in requests {
            by_platform
                .entry(request.platform.clone())
                .or_default()
                .push(request);
        }
        let mut results = Vec::new();
        for (platform, batch) in by_platform {
            let Some(slot) = super::job::slot(&guests, &platform).cloned() else {
                // A swap removed the platform's guest since the pass started.
                for request in batch {
                    let error = PassError::GuestRemoved {
                        subject: request.subject(),
                        platform: platform.clone(),
                    };
                    results.push((request, Err(error)));
                }
                continue;
            };
            let job = super::job::job(&platform);
            let routing = Routing {
                job: &job,
                rollouts: self.guests.rollouts(),
                metrics: &metrics.registry,
            };
            let (stream, platform_name) = (stream.clone(), platform.clone());
            let decide = move |guest: &BootImageGuest, batch: &[Request]| {
                guest.decide_batch(&platform_name, &stream, batch.iter().map(|r| &r.item))
            };
            let in_canary =
                |canary: &super::job::Canary, request: &Request| in_canary(canary, &request.item);
            let key = |request: &Request| request.subject().key();
            let decided = match slot
                .decide(routing, batch, in_canary, key, decide, Decision::action)
                .await
            {
                Ok(decided) => decided,
                Err(err) => {
                    tracing::error!(error = %err, %platform, "the guest task did not finish");
                    continue;
                }
            };
            for (request, decided) in decided {
                let result = decided.result.map_err(|error| PassError::Guest {
                    subject: request.subject(),
                    guest: decided.guest,
                    error,
                });
                results.push((request, result));
            }
        }
        results
    }

    /// The decoded stub of a user-data Secret and its resourceVersion.
    async fn user_data(&self, name: &str) -> Result<UserData, kube::Error> {
        let secrets: Api<Secret> =
            Api::namespaced(self.writer.client.clone(), MACHINE_API_NAMESPACE);
        let secret = secrets.get(name).await?;
        tracing::debug!(secret = %secret.name_any(), "read the user-data stub");
        let resource_version = secret.metadata.resource_version.clone();
        Ok(UserData {
            text: rules::user_data_from_secret(&UserDataSecret::from(secret)),
            resource_version,
        })
    }
}

/// Whether a MachineSet is in the canary subset: its labels match the
/// rollout's `machineSets` selector (one that does not parse selects none).
fn in_canary(canary: &super::job::Canary, item: &BatchItem) -> bool {
    Selector::try_from(canary.machine_sets.clone())
        .is_ok_and(|selector| selector.matches(&item.machineset.labels))
}

/// The boot image conditions upstream's controller writes on
/// MachineConfiguration `cluster` (`pkg/controller/bootimage`, UpdateStatus
/// as `machine-config-controller`): while it writes them, it reconciles
/// the same enrollment, and the own mode must not.
const UPSTREAM_CONDITIONS: &[&str] = &["BootImageUpdateProgressing", "BootImageUpdateDegraded"];

/// Why the own mode must not write: upstream's boot image controller owns
/// the boot image conditions of MachineConfiguration `cluster`.
pub fn operator_writes(mc: Option<&Decoded<MachineConfiguration>>) -> Option<String> {
    let entries = mc?.metadata.managed_fields.as_deref()?;
    UPSTREAM_CONDITIONS.iter().find_map(|type_| {
        let key = format!("k:{{\"type\":\"{type_}\"}}");
        let writer = managers::operator_writers(entries, &["f:status", "f:conditions", &key])
            .into_iter()
            .next()?;
        Some(format!(
            "MachineConfiguration cluster: condition {type_} written by {writer}, the Machine \
             Config Operator's boot image controller, which reconciles the same MachineSets; run \
             this job with --boot-images-mode observe beside it, or turn it off first"
        ))
    })
}

#[cfg(test)]
mod ownership_tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn upstreams_condition_writes_block_the_own_mode_and_ours_do_not() {
        let mc = |manager: &str| {
            Decoded::<MachineConfiguration>::of(&json!({
                "apiVersion": "operator.openshift.io/v1", "kind": "MachineConfiguration",
                "metadata": {"name": "cluster", "managedFields": [{
                    "manager": manager, "operation": "Update", "subresource": "status",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:status": {"f:conditions": {
                        "k:{\"type\":\"BootImageUpdateDegraded\"}": {}}}},
                }]},
            }))
        };
        let reason = operator_writes(Some(&mc("machine-config-controller"))).unwrap_or_default();
        assert!(
            reason.starts_with("MachineConfiguration cluster: condition BootImageUpdateDegraded written by machine-config-controller (Update)"),
            "{reason}"
        );
        assert_eq!(operator_writes(Some(&mc("mco-host"))), None);
        assert_eq!(operator_writes(None), None);
    }
}
