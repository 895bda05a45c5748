//! The MachineConfigNode controller: keeps every Node's MCN true.
//!
//! Watches feed in-memory stores; `reconcile` reads them, asks the guest,
//! and writes only what changed, and only while this replica holds the
//! lease. A guest failure for one node is logged, counted and retried with
//! backoff for that node; nothing is written for it meanwhile.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use std::fmt::Debug;
use std::hash::Hash;

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::jiff::Timestamp;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams,
};
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource, ResourceExt};
use mco_mcn as logic;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::sync::watch;

use crate::crd::MachineConfigNode;
use crate::guests::Guests;
use crate::mcn::{self, MachineConfig, MachineConfigPool};
use crate::metrics::{EvaluationLabels, KindLabels, Metrics};
use crate::registry::MCN_JOB;
use crate::runtime::{GuestError, McnGuest};

/// The one field manager for everything this host writes.
pub const FIELD_MANAGER: &str = "mco-host";
/// Nodes reconciled at once; each holds a guest instance while it runs.
const CONCURRENCY: u16 = 8;
const MAX_BACKOFF: Duration = Duration::from_secs(300);
/// How long our own write may be missing from the watch before we believe
/// the watch (the object was deleted behind our back).
const WRITE_VISIBILITY: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("guest failed: {0}")]
    Guest(#[from] GuestError),
    #[error("the guest cannot report this node: {0}")]
    Undecidable(String),
    #[error("guest evaluation was cancelled: {0}")]
    Cancelled(String),
    #[error("writing the MachineConfigNode: {0}")]
    Write(#[from] kube::Error),
}

impl Error {
    /// Metric and log label.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Guest(err) => err.kind(),
            Error::Undecidable(_) => "undecidable",
            Error::Cancelled(_) => "cancelled",
            Error::Write(_) => "write",
        }
    }
}

/// Shared by every reconcile.
pub struct Context {
    client: Client,
    guests: Guests,
    nodes: Store<Node>,
    pools: Store<DynamicObject>,
    configs: Store<DynamicObject>,
    mcns: Store<MachineConfigNode>,
    leader: watch::Receiver<bool>,
    metrics: Metrics,
    resync: Duration,
    failures: Mutex<HashMap<String, u32>>,
    /// What this replica last wrote per MCN, and when, until the watch
    /// catches up.
    written: Mutex<HashMap<String, (Instant, Arc<MachineConfigNode>)>>,
}

/// One evaluation, and the host's validation of what it returned.
fn checked(guest: &McnGuest, facts: &logic::Facts) -> Result<logic::Decision, GuestError> {
    let decision = guest.derive(facts)?;
    mcn::validate(&decision).map_err(|detail| GuestError::InvalidOutput {
        guest: guest.module().name.clone(),
        detail,
    })?;
    Ok(decision)
}

/// etcd's resource versions increase; anything unparseable counts as old.
pub(crate) fn resource_version<K: Resource>(object: &K) -> u64 {
    object
        .meta()
        .resource_version
        .as_deref()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(0)
}

pub fn pool_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(
            "machineconfiguration.openshift.io",
            "v1",
            "MachineConfigPool",
        ),
        "machineconfigpools",
    )
}

pub fn config_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("machineconfiguration.openshift.io", "v1", "MachineConfig"),
        "machineconfigs",
    )
}

/// Converts a watched object to the reduced type the job reads; an object
/// that does not fit is left out (and logged) rather than stalling others.
fn typed<T: serde::de::DeserializeOwned>(object: &DynamicObject) -> Option<T> {
    let value = serde_json::to_value(object).ok()?;
    match serde_json::from_value(value) {
        Ok(typed) => Some(typed),
        Err(err) => {
            tracing::warn!(object = %object.name_any(), error = %err, "ignoring malformed object");
            None
        }
    }
}

impl Context {
    fn is_leader(&self) -> bool {
        *self.leader.borrow()
    }

    /// The newest MCN known for `name`: the watched copy, or our own last
    /// write while the watch has not delivered it yet. Deriving from a stale
    /// copy would write the same change twice. A write the watch never shows
    /// (someone deleted the object) is trusted only briefly, so it is
    /// recreated.
    fn previous(&self, name: &str) -> Option<Arc<MachineConfigNode>> {
        let stored = self.mcns.get(&ObjectRef::new(name));
        let mut written = self.written.lock().ok()?;
        let newer = |(at, ours): &(Instant, Arc<MachineConfigNode>)| match &stored {
            Some(stored) => resource_version(stored.as_ref()) < resource_version(ours.as_ref()),
            None => at.elapsed() < WRITE_VISIBILITY,
        };
        match written.get(name) {
            Some(entry) if newer(entry) => Some(entry.1.clone()),
            _ => {
                written.remove(name);
                stored
            }
        }
    }

    fn remember(&self, object: MachineConfigNode) {
        if let Ok(mut written) = self.written.lock() {
            written.insert(object.name_any(), (Instant::now(), Arc::new(object)));
        }
    }

    fn facts(&self, node: &Node, previous: Option<&MachineConfigNode>) -> logic::Facts {
        let pools: Vec<MachineConfigPool> =
            self.pools.state().iter().filter_map(|p| typed(p)).collect();
        let annotations = node.metadata.annotations.clone().unwrap_or_default();
        let configs: Vec<MachineConfig> = ["currentConfig", "desiredConfig"]
            .iter()
            .filter_map(|key| annotations.get(&format!("machineconfiguration.openshift.io/{key}")))
            .filter_map(|name| {
                self.configs
                    .get(&ObjectRef::new_with(name, config_resource()))
            })
            .filter_map(|mc| typed(&mc))
            .collect();
        mcn::facts(node, &pools, &configs, previous)
    }

    /// Runs the guest off the async workers and checks what it returned.
    /// A candidate registered beside it runs on the same facts in the same
    /// task; its decision is only compared (see [`crate::shadow`]).
    async fn evaluate(&self, node: &str, facts: logic::Facts) -> Result<logic::Decision, Error> {
        let set = self.guests.current();
        let (result, took, shadow) = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let result = checked(&set.mcn, &facts);
            let took = started.elapsed();
            let shadow = match (&result, &set.mcn_candidate) {
                (Ok(_), Some(candidate)) => Some(checked(candidate, &facts)),
                _ => None,
            };
            (result, took, shadow)
        })
        .await
        .map_err(|e| Error::Cancelled(e.to_string()))?;
        self.metrics.evaluation_seconds.observe(took.as_secs_f64());
        if let (Ok(active), Some(candidate)) = (&result, &shadow) {
            crate::shadow::compare(&self.metrics, MCN_JOB, node, active, candidate);
        }
        let result_label = match &result {
            Ok(logic::Decision::Apply(_)) => "apply",
            Ok(logic::Decision::Skip(_)) => "skip",
            Ok(logic::Decision::Error(_)) => "error",
            Err(_) => "failed",
        };
        let labels = EvaluationLabels {
            guest: "mcn".into(),
            result: result_label.into(),
        };
        self.metrics.evaluations.get_or_create(&labels).inc();
        if let Err(err) = &result {
            self.metrics
                .guest_failures
                .get_or_create(&KindLabels {
                    kind: err.kind().into(),
                })
                .inc();
        }
        Ok(result?)
    }

    /// Applies spec, then status, each only when it differs from what is
    /// stored (status compared with transition times, which are kept for
    /// unchanged conditions, so a resync of an unchanged node writes nothing).
    async fn write(
        &self,
        previous: Option<&MachineConfigNode>,
        desired: &MachineConfigNode,
    ) -> Result<(), Error> {
        let api: Api<MachineConfigNode> = Api::all(self.client.clone());
        let params = PatchParams::apply(FIELD_MANAGER).force();
        let name = desired.name_any();
        let (api_version, kind) = (
            MachineConfigNode::api_version(&()),
            MachineConfigNode::kind(&()),
        );
        let spec_changed = previous.is_none_or(|p| {
            p.spec != desired.spec
                || p.metadata.owner_references != desired.metadata.owner_references
        });
        if spec_changed {
            let body = json!({
                "apiVersion": api_version, "kind": kind,
                "metadata": {"name": name, "ownerReferences": desired.metadata.owner_references},
                "spec": desired.spec,
            });
            let written = api.patch(&name, &params, &Patch::Apply(&body)).await?;
            self.metrics.count_write(if previous.is_none() {
                "create"
            } else {
                "apply_spec"
            });
            self.remember(written);
        }
        if previous.and_then(|p| p.status.as_ref()) != desired.status.as_ref() {
            let body = json!({
                "apiVersion": api_version, "kind": kind,
                "metadata": {"name": name},
                "status": desired.status,
            });
            let written = api
                .patch_status(&name, &params, &Patch::Apply(&body))
                .await?;
            self.metrics.count_write("apply_status");
            self.remember(written);
        }
        Ok(())
    }

    async fn delete(&self, name: &str) -> Result<(), Error> {
        let api: Api<MachineConfigNode> = Api::all(self.client.clone());
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => {
                self.metrics.count_write("delete");
                if let Ok(mut written) = self.written.lock() {
                    written.remove(name);
                }
                tracing::info!(mcn = name, "deleted MachineConfigNode");
                Ok(())
            }
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(err) => Err(err.into()),
        }
    }

    /// Deletes MCNs whose Node is gone (the garbage collector would too, via
    /// the owner reference, but not every cluster runs it for our CRD in time).
    async fn sweep_orphans(&self) {
        if !self.is_leader() {
            return;
        }
        for mcn in self.mcns.state() {
            let name = mcn.name_any();
            if self.nodes.get(&ObjectRef::new(&name)).is_none()
                && let Err(err) = self.delete(&name).await
            {
                tracing::warn!(mcn = %name, error = %err, "could not delete orphaned MachineConfigNode");
            }
        }
    }
}

#[tracing::instrument(skip_all, fields(node = %node.name_any()))]
async fn reconcile(node: Arc<Node>, ctx: Arc<Context>) -> Result<Action, Error> {
    if !ctx.is_leader() {
        // Becoming leader triggers a full reconcile.
        return Ok(Action::await_change());
    }
    let name = node.name_any();
    let previous = ctx.previous(&name);
    let facts = ctx.facts(&node, previous.as_deref());
    tracing::debug!(
        pools = facts.pools.len(),
        configs = facts.configs.len(),
        "deriving"
    );
    match ctx.evaluate(&name, facts).await? {
        logic::Decision::Apply(result) => {
            let desired = mcn::to_object(&node, result, previous.as_deref(), Timestamp::now());
            ctx.write(previous.as_deref(), &desired).await?;
        }
        logic::Decision::Skip(reason) => {
            tracing::debug!(%reason, "no MachineConfigNode for this node");
            if previous.is_some() {
                ctx.delete(&name).await?;
            }
        }
        logic::Decision::Error(message) => return Err(Error::Undecidable(message)),
    }
    ctx.failures.lock().map(|mut f| f.remove(&name)).ok();
    Ok(Action::requeue(ctx.resync))
}

/// Retries with exponential backoff per node, capped at five minutes.
fn error_policy(node: Arc<Node>, error: &Error, ctx: Arc<Context>) -> Action {
    ctx.metrics.reconcile_errors.inc();
    let name = node.name_any();
    let attempts = ctx
        .failures
        .lock()
        .map(|mut failures| {
            let attempts = failures.entry(name.clone()).or_insert(0);
            *attempts = attempts.saturating_add(1);
            *attempts
        })
        .unwrap_or(1);
    let delay = Duration::from_secs(1u64 << attempts.min(9)).min(MAX_BACKOFF);
    tracing::warn!(node = %name, kind = error.kind(), error = %error, retry_in = ?delay, "reconcile failed");
    Action::requeue(delay)
}

/// A watch that fills `writer`'s store, without managedFields (large and
/// never read), and then yields each changed object.
fn cached<K>(
    api: Api<K>,
    writer: reflector::store::Writer<K>,
) -> impl Stream<Item = Result<K, watcher::Error>> + Send
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone + Send + Sync,
{
    let strip = |object: &mut K| object.managed_fields_mut().clear();
    reflector::reflector(
        writer,
        watcher(api, watcher::Config::default()).modify(strip),
    )
    .backoff(WatchBackoff::default())
    .touched_objects()
}

/// Delay before a failed watch retries: doubling from half a second to five
/// seconds, back to the start after any success. kube's default (up to 30 s,
/// reset only after two quiet minutes, and shared by every watch of a
/// controller) turned the burst of errors around an apiserver restart —
/// refused connections, 403s while RBAC warms up, 410s on resume — into
/// minutes of blindness.
pub(crate) struct WatchBackoff {
    next: Duration,
}

const WATCH_RETRY_MIN: Duration = Duration::from_millis(500);
const WATCH_RETRY_MAX: Duration = Duration::from_secs(5);

impl Default for WatchBackoff {
    fn default() -> Self {
        WatchBackoff {
            next: WATCH_RETRY_MIN,
        }
    }
}

impl Iterator for WatchBackoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        let delay = self.next;
        self.next = (self.next * 2).min(WATCH_RETRY_MAX);
        Some(delay)
    }
}

impl kube::runtime::utils::Backoff for WatchBackoff {
    fn reset(&mut self) {
        self.next = WATCH_RETRY_MIN;
    }
}

/// What `run` needs besides the client and the guest.
pub struct Options {
    pub resync: Duration,
    pub leader: watch::Receiver<bool>,
    pub metrics: Metrics,
    pub ready: Arc<std::sync::atomic::AtomicBool>,
}

/// Runs until `shutdown` resolves.
pub async fn run(
    client: Client,
    guests: Guests,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let pool_writer = reflector::store::Writer::new(pool_resource());
    let pools = pool_writer.as_reader();
    let pool_watch = cached(Api::all_with(client.clone(), &pool_resource()), pool_writer);
    let config_writer = reflector::store::Writer::new(config_resource());
    let configs = config_writer.as_reader();
    let config_watch = cached(
        Api::all_with(client.clone(), &config_resource()),
        config_writer,
    );
    let (mcns, mcn_writer) = reflector::store::<MachineConfigNode>();
    let mcn_watch = cached(Api::all(client.clone()), mcn_writer);
    let (nodes, node_writer) = reflector::store::<Node>();
    let node_watch = cached(Api::all(client.clone()), node_writer);

    // Each kind is watched once: the reflector fills the store the
    // reconciler reads, then the same event triggers reconciles, so a
    // reconcile never sees a store older than the event that woke it.
    let controller = Controller::for_stream(node_watch, nodes.clone())
        .with_config(ControllerConfig::default().concurrency(CONCURRENCY))
        .owns_stream(mcn_watch);
    let all_nodes = {
        let nodes = nodes.clone();
        move |_: DynamicObject| {
            nodes
                .state()
                .iter()
                .map(|n| ObjectRef::from_obj(n.as_ref()))
                .collect::<Vec<_>>()
        }
    };
    let became_leader = tokio_stream::wrappers::WatchStream::new(options.leader.clone())
        .filter(|leader| std::future::ready(*leader))
        .map(|_| ());
    let ctx = Arc::new(Context {
        client: client.clone(),
        guests,
        nodes: nodes.clone(),
        pools: pools.clone(),
        configs: configs.clone(),
        mcns: mcns.clone(),
        leader: options.leader,
        metrics: options.metrics,
        resync: options.resync,
        failures: Mutex::new(HashMap::new()),
        written: Mutex::new(HashMap::new()),
    });

    let readiness = {
        let (nodes, pools, configs, mcns, ready) = (
            nodes.clone(),
            pools.clone(),
            configs.clone(),
            mcns,
            options.ready,
        );
        async move {
            let synced = futures::future::try_join4(
                nodes.wait_until_ready(),
                pools.wait_until_ready(),
                configs.wait_until_ready(),
                mcns.wait_until_ready(),
            )
            .await;
            match synced {
                Ok(_) => {
                    tracing::info!("caches synced");
                    ready.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                Err(err) => {
                    tracing::error!(error = %err, "a cache stopped before it synced; never ready")
                }
            }
        }
    };
    tokio::spawn(readiness);
    let sweeper = {
        let ctx = ctx.clone();
        let every = ctx.resync.min(Duration::from_secs(5));
        async move {
            let mut ticks = tokio::time::interval(every);
            loop {
                ticks.tick().await;
                ctx.sweep_orphans().await;
            }
        }
    };
    let sweeper = tokio::spawn(sweeper);

    controller
        .watches_stream_with(pool_watch, all_nodes.clone(), pool_resource())
        .watches_stream_with(config_watch, all_nodes, config_resource())
        .trigger_backoff(WatchBackoff::default())
        .reconcile_all_on(became_leader)
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, ctx)
        .for_each(|result| {
            if let Err(err) = result {
                tracing::warn!(error = %err, "controller");
            }
            std::future::ready(())
        })
        .await;
    sweeper.abort();
}
