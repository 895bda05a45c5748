//! The MachineConfigNode controller: keeps every Node's MCN true.
//!
//! Watches feed in-memory stores; `reconcile` reads them, once every input
//! has listed (`INPUTS`), asks the guest (`rules::facts` → guest →
//! `rules::to_object`), and hands the result to the writer, which writes
//! only what changed and only while this replica holds the lease. MCNs
//! whose Node is gone are swept (`sweep`). A guest failure for one node is logged, counted and
//! retried with backoff for that node; nothing is written for it meanwhile.
//!
//! The ownership mode decides what happens to a decision: `own` writes it
//! unless the operator's daemon writes MCN conditions (then nothing is
//! written, and a change of that verdict re-derives every node); `observe`
//! compares it with the stored MCN (`observe`) and writes nothing but an
//! Event about a difference.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use std::fmt::Debug;

use futures::{Stream, StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{Node, ObjectReference};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DynamicObject};
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::events::EventType;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource, ResourceExt};
use mco_mcn as logic;
use serde::de::DeserializeOwned;
use tokio::sync::{Semaphore, watch};

use super::crd::MachineConfigNode;
use super::guest::{McnGuest, McnGuestExt as _};
use super::metrics::Metrics;
use super::objects::{MachineConfig, MachineConfigPool, trim_node};
use super::observe;
use super::phase_gauge;
use super::rules;
use super::sweep::{NodeList, Orphans};
use super::write::Writer;
use mco_cluster::decode::{Failures, Isolated};
use mco_cluster::events::{Events, Note};
use mco_cluster::resources::{MACHINE_CONFIGURATION, MACHINE_CONFIGURATION_WATCH};
use mco_cluster::watch::{Latest, Readiness, reflect};
use mco_job::feature_gates::{self, Gates};
use mco_job::ownership::{JobOwnership, Mode, SAMPLE_LIMIT, State};
use mco_registry::Guests;
use mco_registry::compare::{Outcome, Summary};
use mco_registry::decide::Routing;
use mco_runtime::GuestError;

/// Nodes reconciled at once. A reconcile mostly waits on the apiserver, so
/// this is sized for its I/O: at 5,000 nodes on a 2-core control plane, 8
/// in flight left the apiserver a fifth idle during the initial sync, 16
/// kept it busy, and 32 gained nothing more. Each costs a pooled
/// connection (kube's client speaks HTTP/1.1); see `make bench-scale`.
const CONCURRENCY: u16 = 16;
/// Guest evaluations at once: they are CPU work (the Deployment gives the
/// host half a core), each holds a slot of the pooling allocator while it
/// runs, and the boot image job needs slots too. Each may hold twice the
/// guest memory cap at its peak (its linear memory and the lifted answer):
/// see `runtime::DEFAULT_MEMORY_MIB` for how 2 of them fit the
/// Deployment's memory limit beside the caches of 5,000 nodes.
const EVALUATIONS: usize = 2;
const MAX_BACKOFF: Duration = Duration::from_secs(300);
/// How often the ownership verdict (own mode) or the comparison summary
/// (observe mode) is recomputed from the caches: a scan of every MCN,
/// cheap at thousands.
const OWNERSHIP_PERIOD: Duration = Duration::from_secs(2);
/// A node reconciled before the first verdict waits this long.
const NOT_JUDGED_RETRY: Duration = Duration::from_secs(1);

/// The readiness names of the watches this job starts.
const POOLS: &str = "machineconfigpools";
const CONFIGS: &str = "machineconfigs";
const MCNS: &str = "machineconfignodes";
const NODES: &str = "nodes";
/// What shapes an MCN besides its Node: no MCN is written (nor compared,
/// in observe mode) before each of these has listed. Before the pools, a
/// node would be put under `not-yet-set`, then moved to its pool: two spec
/// writes and a wrong one between; before the MachineConfigs, the
/// MachineConfiguration (node disruption policies) and the feature gates
/// (resolved from FeatureGate and the ClusterVersion that picks its entry,
/// and published; the Default set where the cluster serves no such kind),
/// it would be derived from defaults; before the MCNs, from no stored
/// status, its condition history lost.
const INPUTS: [&str; 5] = [
    POOLS,
    CONFIGS,
    MCNS,
    MACHINE_CONFIGURATION_WATCH,
    feature_gates::WATCH,
];

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

/// What `run` needs besides the client and the guests.
pub struct Options {
    /// Period of the full re-check of every node.
    pub resync: Duration,
    pub leader: watch::Receiver<bool>,
    pub metrics: Metrics,
    pub readiness: Readiness,
    /// MachineConfiguration `cluster` (node disruption policies), from the
    /// watch the boot image job shares.
    pub machineconfiguration: Latest,
    /// The feature gates in force.
    pub gates: Gates,
    /// This job's ownership mode and state.
    pub ownership: JobOwnership,
    /// This replica's identity, as the reporter of its Events.
    pub identity: String,
    /// Reports the objects a watch cannot decode (one for the whole host).
    pub failures: Failures,
}

/// The read model every reconcile shares.
struct Context {
    guests: Guests,
    nodes: Store<Node>,
    pools: Store<MachineConfigPool>,
    configs: Store<MachineConfig>,
    mcns: Store<MachineConfigNode>,
    /// The node disruption policies now in force (see [`follow_policies`]).
    policies: Policies,
    /// The feature gates in force; a change re-derives every node (with
    /// `ImageModeStatusReporting` turned on, that is upstream's one-time
    /// migration of the stored conditions).
    gates: Gates,
    leader: watch::Receiver<bool>,
    metrics: Metrics,
    resync: Duration,
    failures: Mutex<HashMap<String, u32>>,
    evaluations: Semaphore,
    writer: Writer,
    orphans: Orphans,
    /// Set once every watch of [`INPUTS`] has listed.
    inputs: watch::Receiver<bool>,
    ownership: JobOwnership,
    /// Observe mode: each node's last comparison with its stored MCN.
    observed: Mutex<BTreeMap<String, Vec<Outcome>>>,
    /// Set when `observed` changed since the last summary.
    observed_changed: AtomicBool,
    events: Events,
}

impl Context {
    fn is_leader(&self) -> bool {
        *self.leader.borrow()
    }

    /// The newest MCN known for `name` (see [`mco_cluster::own_writes`]).
    fn previous(&self, name: &str) -> Option<Arc<MachineConfigNode>> {
        self.writer
            .written
            .newest(name, self.mcns.get(&ObjectRef::new(name)))
    }

    /// The guest's input for `node`, from the stores as they are now.
    fn facts(&self, node: &Node, previous: Option<&MachineConfigNode>) -> logic::Facts {
        let pools = self.pools.state();
        let pools: Vec<&MachineConfigPool> = pools.iter().map(AsRef::as_ref).collect();
        let configs: Vec<Arc<MachineConfig>> = rules::wanted_configs(node, previous)
            .into_iter()
            .filter_map(|name| self.configs.get(&ObjectRef::new(name)))
            .collect();
        let configs: Vec<&MachineConfig> = configs.iter().map(AsRef::as_ref).collect();
        let policies = self.policies.get();
        let gates = self.gates.borrow().clone();
        rules::facts(
            node,
            &pools,
            &configs,
            (*policies).clone(),
            previous,
            &gates,
        )
    }

    /// Has the guest decide `node` off the async workers (its output is
    /// checked inside the guest binding), through the rollout protocol
    /// ([`mco_registry::decide`]): a candidate registered beside it runs
    /// on the same facts and is compared; its decision is the one taken
    /// where its rollout gives it the node (the canary pools' nodes in
    /// `Canary`, every node once `Active`), unless it failed or this very
    /// comparison rolled the rollout back.
    async fn evaluate(&self, node: &str, facts: logic::Facts) -> Result<logic::Decision, Error> {
        let _slot = self
            .evaluations
            .acquire()
            .await
            .map_err(|e| Error::Cancelled(e.to_string()))?;
        let set = self.guests.current();
        let slot = super::job::slot(&set)
            .cloned()
            .ok_or_else(|| Error::Cancelled("no guest serves the mcn job".into()))?;
        let job = super::job::job();
        let routing = Routing {
            job: &job,
            rollouts: self.guests.rollouts(),
            metrics: &self.metrics.registry,
        };
        let derive = |guest: &McnGuest, batch: &[logic::Facts]| {
            batch.iter().map(|facts| guest.derive(facts)).collect()
        };
        let decided = slot
            .decide(
                routing,
                vec![facts],
                in_canary,
                |_| node.to_owned(),
                derive,
                outcome,
            )
            .await
            .map_err(|e| Error::Cancelled(e.to_string()))?;
        let (_, decided) = (decided.into_iter().next())
            .ok_or_else(|| Error::Cancelled("the guest decided nothing".into()))?;
        Ok(decided.result?)
    }

    /// Observe mode: compares `ours` with the stored MCN, keeps the result
    /// for the summary, and publishes an Event (once per distinct
    /// difference) when they differ.
    async fn observe(
        &self,
        node: &Node,
        stored: Option<&MachineConfigNode>,
        ours: &MachineConfigNode,
    ) {
        let name = node.name_any();
        let outcomes = observe::outcomes(ours, stored);
        let differing: Vec<String> = outcomes
            .iter()
            .filter(|o| !o.agrees())
            .map(|o| format!("{} (derived {:?}; stored {:?})", o.key, o.ours, o.theirs))
            .collect();
        if let Ok(mut observed) = self.observed.lock() {
            observed.insert(name.clone(), outcomes);
        }
        self.observed_changed.store(true, Ordering::Relaxed);
        if differing.is_empty() {
            self.events.forget(&name);
            return;
        }
        tracing::debug!(
            differences = differing.len(),
            "the derived MachineConfigNode differs from the stored one"
        );
        let reference = match stored {
            Some(mcn) => ObjectReference {
                api_version: Some(MachineConfigNode::api_version(&()).into()),
                kind: Some(MachineConfigNode::kind(&()).into()),
                name: Some(name.clone()),
                uid: mcn.metadata.uid.clone(),
                ..ObjectReference::default()
            },
            None => ObjectReference {
                api_version: Some("v1".into()),
                kind: Some("Node".into()),
                name: Some(name.clone()),
                uid: node.metadata.uid.clone(),
                ..ObjectReference::default()
            },
        };
        let note = format!(
            "observe mode: the derived MachineConfigNode differs on {}",
            differing.join("; ")
        );
        let note = Note {
            type_: EventType::Normal,
            reason: "ObservedDifference",
            action: "Observe",
            note: &note,
        };
        if self.events.publish_once(&name, &reference, note).await {
            self.metrics.cluster.count_write("event");
        }
    }

    /// Observe mode: the comparison of every node still there, if any
    /// changed since the last summary.
    fn summary(&self) -> Option<Summary> {
        if !self.observed_changed.swap(false, Ordering::Relaxed) {
            return None;
        }
        let mut observed = self.observed.lock().ok()?;
        observed.retain(|name, _| self.nodes.get(&ObjectRef::new(name)).is_some());
        let mut summary = Summary::new(SAMPLE_LIMIT);
        for (name, outcomes) in observed.iter() {
            summary.add(name, outcomes);
        }
        Some(summary)
    }

    /// Recomputes the job's ownership every [`OWNERSHIP_PERIOD`] once the
    /// MCNs are listed; in own mode, `allowed` says whether it may write.
    async fn follow_ownership(&self, readiness: Readiness, allowed: watch::Sender<bool>) {
        readiness.listed(&[MCNS]).await;
        let mut ticks = tokio::time::interval(OWNERSHIP_PERIOD);
        loop {
            ticks.tick().await;
            match self.ownership.mode() {
                Mode::Own => {
                    self.ownership
                        .judge(observe::operator_writes(&self.mcns.state()));
                    let may = self.ownership.may_write();
                    allowed.send_if_modified(|before| std::mem::replace(before, may) != may);
                }
                Mode::Observe => {
                    self.ownership.set(State::Observing);
                    if let Some(summary) = self.summary() {
                        self.ownership.observed(summary);
                    }
                }
            }
        }
    }

    /// Deletes MCNs whose Node is gone (see [`super::sweep`]).
    async fn sweep_orphans(&self) {
        self.writer
            .written
            .prune(|name| self.mcns.get(&ObjectRef::new(name)));
        let may_delete = || self.is_leader() && self.ownership.may_write();
        if !may_delete() {
            return;
        }
        self.orphans
            .sweep(&self.nodes, &self.mcns.state(), &self.writer, &may_delete)
            .await;
    }
}

#[tracing::instrument(skip_all, fields(node = %node.name_any()))]
async fn reconcile(node: Arc<Node>, ctx: Arc<Context>) -> Result<Action, Error> {
    if !ctx.is_leader() {
        // Becoming leader triggers a full reconcile.
        return Ok(Action::await_change());
    }
    if !*ctx.inputs.borrow() {
        // Their listing triggers a full reconcile.
        tracing::debug!("waiting for the inputs to list");
        return Ok(Action::await_change());
    }
    if ctx.ownership.mode() == Mode::Own {
        match ctx.ownership.state() {
            State::Writing => {}
            State::Starting => return Ok(Action::requeue(NOT_JUDGED_RETRY)),
            // Being allowed again triggers a full reconcile.
            _ => return Ok(Action::await_change()),
        }
    }
    let name = node.name_any();
    let previous = ctx.previous(&name);
    let facts = ctx.facts(&node, previous.as_deref());
    tracing::debug!(
        pools = facts.pools.len(),
        configs = facts.configs.len(),
        "deriving"
    );
    let mut action = Action::requeue(resync_after(ctx.resync, &name));
    match ctx.evaluate(&name, facts).await? {
        logic::Decision::Apply(result) => {
            let desired = rules::to_object(&node, result, previous.as_deref(), Timestamp::now());
            if ctx.ownership.mode() == Mode::Observe {
                ctx.observe(&node, previous.as_deref(), &desired).await;
            } else if !ctx.is_leader() {
                // The lease was lost while the guest decided: a deposed
                // leader writes nothing (becoming leader again re-derives).
                return Ok(Action::await_change());
            } else if ctx.writer.apply(previous.as_deref(), &desired).await? {
                tracing::debug!(
                    "the MachineConfigNode changed while it was written; deciding again"
                );
                action = Action::requeue(Duration::ZERO);
            }
        }
        // Pending and Provisioning nodes: upstream creates no MCN for them
        // yet (`syncMachineConfigNodes` in `pkg/operator/sync.go`), and
        // neither do we; one that exists is left alone.
        logic::Decision::Skip(reason) => {
            tracing::debug!(%reason, "no MachineConfigNode for this node yet");
        }
        logic::Decision::Error(message) => return Err(Error::Undecidable(message)),
    }
    ctx.failures.lock().map(|mut f| f.remove(&name)).ok();
    Ok(action)
}

/// What `mco_evaluations_total` counts a decision as.
fn outcome(decision: &logic::Decision) -> &'static str {
    match decision {
        logic::Decision::Apply(_) => "apply",
        logic::Decision::Skip(_) => "skip",
        logic::Decision::Error(_) => "error",
    }
}

/// Whether `facts`' node is in the canary subset: a node of one of the
/// named pools, by the host's own reading of the pools' selectors.
fn in_canary(canary: &super::job::Canary, facts: &logic::Facts) -> bool {
    logic::primary_pool(&facts.node, &facts.pools)
        .ok()
        .flatten()
        .is_some_and(|pool| canary.pools.contains(&pool.name))
}

/// When a node is re-checked: after the resync period, stretched by up to
/// a tenth by a hash of its name. Nodes synced together (all of them, at
/// start) would otherwise come due in the same instant every period, and
/// hold every reconcile slot while a real change waits behind them.
fn resync_after(resync: Duration, node: &str) -> Duration {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(node);
    resync + resync.mul_f64((hash % 1000) as f64 / 10_000.0)
}

/// Retries with exponential backoff per node, capped at five minutes.
fn error_policy(node: Arc<Node>, error: &Error, ctx: Arc<Context>) -> Action {
    ctx.metrics.mcn.reconcile_errors.inc();
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

/// A store of every `K` in the cluster and the stream of objects that
/// changed, applied to the store before they are yielded. An object that
/// cannot be decoded is reported to `failures` and left out. `follow` sees
/// every event of the watch, after the store.
fn cached<K>(
    client: &Client,
    readiness: &Readiness,
    name: &str,
    trim: fn(&mut K),
    failures: &Failures,
    follow: impl Fn(&Result<watcher::Event<K>, watcher::Error>) + Send + 'static,
) -> (
    Store<K>,
    impl Stream<Item = Result<K, watcher::Error>> + Send + 'static,
)
where
    K: Resource<DynamicType = (), Scope = kube::core::ClusterResourceScope>,
    K: Clone + Default + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let (store, writer) = reflector::store::<K>();
    let api = Api::<Isolated<K>>::all(client.clone());
    let stream = reflect(
        api,
        watcher::Config::default(),
        writer,
        readiness.watch(name),
        trim,
        failures.clone(),
    )
    .inspect(follow)
    .touched_objects();
    (store, stream)
}

/// Caches an object as it comes.
fn keep<K>(_: &mut K) {}

/// Follows none of a watch's events.
fn ignore<K>(_: &Result<watcher::Event<K>, watcher::Error>) {}

/// The node disruption policies in force, shared by every reconcile.
#[derive(Clone, Default)]
struct Policies(Arc<RwLock<Arc<logic::DisruptionPolicies>>>);

impl Policies {
    fn get(&self) -> Arc<logic::DisruptionPolicies> {
        match self.0.read() {
            Ok(policies) => policies.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn set(&self, policies: logic::DisruptionPolicies) {
        let policies = Arc::new(policies);
        match self.0.write() {
            Ok(mut current) => *current = policies,
            Err(poisoned) => *poisoned.into_inner() = policies,
        }
    }
}

/// The policies of the newest MachineConfiguration `cluster` (the defaults
/// until it is seen), and a stream that yields whenever they change, after
/// the new ones are in place: each change re-derives every node. Edits that
/// leave the policies as they were (the boot image job's conditions, say)
/// trigger nothing.
fn follow_policies(
    latest: Latest,
) -> (
    Policies,
    impl Stream<Item = Result<DynamicObject, watcher::Error>> + Send + 'static,
) {
    let shared = Policies::default();
    shared.set(logic::DisruptionPolicies::defaults());
    let writer = shared.clone();
    let changes = tokio_stream::wrappers::WatchStream::new(latest).filter_map(move |object| {
        let policies = super::policies::of_object(object.as_deref());
        let changed = *writer.get() != policies;
        if changed {
            tracing::info!(
                files = policies.files.len(),
                units = policies.units.len(),
                "node disruption policies changed; re-deriving every node"
            );
            writer.set(policies);
        }
        let trigger = object.map_or_else(
            || DynamicObject::new("cluster", &MACHINE_CONFIGURATION.api_resource()),
            |o| (*o).clone(),
        );
        std::future::ready(changed.then_some(Ok(trigger)))
    });
    (shared, changes)
}

/// Every node: a pool or a rendered config can change any node's MCN.
fn all_nodes<T>(nodes: Store<Node>) -> impl Fn(T) -> Vec<ObjectRef<Node>> {
    move |_| {
        nodes
            .state()
            .iter()
            .map(|n| ObjectRef::from_obj(n.as_ref()))
            .collect()
    }
}

/// Sets up the watches (registering them with `options.readiness` right
/// away), and returns the controller, which runs until `shutdown` resolves.
pub fn run(
    client: Client,
    guests: Guests,
    options: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) -> impl std::future::Future<Output = ()> + Send {
    let readiness = &options.readiness;
    let failures = &options.failures;
    let (pools, pool_watch) = cached(&client, readiness, POOLS, keep, failures, ignore);
    let (configs, config_watch) = cached(&client, readiness, CONFIGS, keep, failures, ignore);
    let (mcns, mcn_watch) =
        cached::<MachineConfigNode>(&client, readiness, MCNS, keep, failures, ignore);
    let node_list = NodeList::default();
    let (nodes, node_watch) = {
        let node_list = node_list.clone();
        cached::<Node>(&client, readiness, NODES, trim_node, failures, move |e| {
            node_list.on(e)
        })
    };
    let (policies, policy_changes) = follow_policies(options.machineconfiguration);
    // The inputs' listing sets `inputs` and then re-derives every node.
    let (inputs_listed, inputs) = watch::channel(false);
    let inputs_listed = {
        let readiness = readiness.clone();
        futures::stream::once(async move {
            readiness.listed(&INPUTS).await;
            tracing::info!("the MachineConfigNode inputs are listed");
            inputs_listed.send_replace(true);
        })
    };

    let events = Events::new(client.clone(), &options.identity);
    let orphans = Orphans::new(client.clone(), node_list);
    let writer = Writer::new(client, options.metrics.clone());
    // Each kind is watched once: the reflector fills the store the
    // reconciler reads, then the same event triggers reconciles, so a
    // reconcile never sees a store older than the event that woke it. The
    // echoes of our own MCN writes wake nobody: without that, every update
    // cost two more reconciles and guest evaluations that wrote nothing.
    let own_writes = writer.written.clone();
    let mcn_changes = mcn_watch.try_filter(move |mcn| std::future::ready(!own_writes.is_echo(mcn)));
    let controller = Controller::for_stream(node_watch, nodes.clone())
        .with_config(ControllerConfig::default().concurrency(CONCURRENCY))
        .owns_stream(mcn_changes);
    let became_leader = tokio_stream::wrappers::WatchStream::new(options.leader.clone())
        .filter(|leader| std::future::ready(*leader))
        .map(|_| ());
    // Own mode: a node passed over while the job refused is derived again
    // once it may write.
    let (allowed, may_write) = watch::channel(false);
    let became_allowed = tokio_stream::wrappers::WatchStream::new(may_write)
        .filter(|allowed| std::future::ready(*allowed))
        .map(|_| ());
    let gates_changed =
        tokio_stream::wrappers::WatchStream::from_changes(options.gates.clone()).map(|_| ());
    // A rollout that moves changes whose decision some nodes take.
    let rollout_moved =
        tokio_stream::wrappers::WatchStream::from_changes(guests.rollouts().changes()).map(|_| ());
    let readiness = options.readiness.clone();
    let ctx = Arc::new(Context {
        writer,
        orphans,
        inputs,
        guests,
        nodes: nodes.clone(),
        pools,
        configs,
        mcns,
        policies,
        gates: options.gates,
        leader: options.leader,
        metrics: options.metrics,
        resync: options.resync,
        failures: Mutex::new(HashMap::new()),
        evaluations: Semaphore::new(EVALUATIONS),
        ownership: options.ownership,
        observed: Mutex::new(BTreeMap::new()),
        observed_changed: AtomicBool::new(false),
        events,
    });
    let ownership = {
        let ctx = ctx.clone();
        async move { ctx.follow_ownership(readiness, allowed).await }
    };
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
    let phases = phase_gauge::export(ctx.metrics.clone(), ctx.mcns.clone());
    let controller = controller
        .watches_stream_with(pool_watch, all_nodes(nodes.clone()), ())
        .watches_stream_with(config_watch, all_nodes(nodes.clone()), ())
        .watches_stream_with(
            policy_changes,
            all_nodes(nodes),
            MACHINE_CONFIGURATION.api_resource(),
        )
        .trigger_backoff(mco_cluster::watch::no_trigger_backoff())
        .reconcile_all_on(futures::stream::select_all([
            became_leader.boxed(),
            became_allowed.boxed(),
            gates_changed.boxed(),
            rollout_moved.boxed(),
            inputs_listed.boxed(),
        ]))
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, ctx)
        .for_each(|result| {
            if let Err(err) = result {
                tracing::warn!(error = %err, "controller");
            }
            std::future::ready(())
        });
    async move {
        let sweeper = tokio::spawn(sweeper);
        let phases = tokio::spawn(phases);
        let ownership = tokio::spawn(ownership);
        controller.await;
        sweeper.abort();
        phases.abort();
        ownership.abort();
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn resyncs_are_spread_over_a_tenth_of_the_period() {
        let period = Duration::from_secs(600);
        let due: BTreeSet<Duration> = (0..1000)
            .map(|i| resync_after(period, &format!("worker-{i:05}")))
            .collect();
        assert!(
            due.iter()
                .all(|d| *d >= period && *d < period + period / 10)
        );
        assert!(due.len() > 500, "{} distinct times", due.len());
        assert_eq!(
            resync_after(period, "worker-00001"),
            resync_after(period, "worker-00001"),
            "the same node is due at the same offset every time"
        );
    }
}
