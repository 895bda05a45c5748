//! The one way this host watches a kind: a reflector that fills a store,
//! without `managedFields` (large) except the Machine Config Operator's
//! entries, cut short (the `own` mode looks for them: `managers`),
//! retrying a failed watch quickly, and reporting when its first list is done.
//!
//! Readiness is taken from the watch's own `InitDone`, never from
//! `Store::wait_until_ready`: a store's readiness is a oneshot receiver that
//! wakes only its latest poller, and kube's `Controller` already waits on
//! its main store, so a second waiter could sleep forever (it did, at
//! 5,000 nodes, whenever the Node list finished last).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{Stream, StreamExt};
use kube::api::DynamicObject;
use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher::{self, ExponentialBackoff};
use kube::runtime::{WatchStreamExt, reflector};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;

use super::decode::{Failures, Isolated};

/// Delay before a failed watch retries: doubling from half a second to five
/// seconds, back to the start after any success: kube's default (up to 30 s,
/// reset only after two quiet minutes) leaves the host blind for minutes
/// after the burst of errors around an apiserver restart
/// (docs/dev/records/incidents.md).
pub fn backoff() -> ExponentialBackoff {
    backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(500))
        .with_max_delay(Duration::from_secs(5))
        .with_factor(2.0)
        .without_max_times()
        .into()
}

/// The backoff of a kube `Controller`'s merged trigger stream: none. Each
/// watch already waits out its own errors ([`backoff`]), while the
/// `Controller` pauses all of its triggers on any one error, so a second
/// backoff there makes every watch wait for every other's after an
/// apiserver restart (docs/dev/records/incidents.md).
pub fn no_trigger_backoff() -> ExponentialBackoff {
    backon::ExponentialBuilder::default()
        .with_min_delay(Duration::ZERO)
        .with_max_delay(Duration::ZERO)
        .without_max_times()
        .into()
}

/// The events of a watch on `api`, each applied to `writer`'s store before
/// it is yielded, so whoever reacts to an event reads a store at least as
/// new as the event. `listed` is marked once the first list is in the store.
///
/// An object that cannot be decoded is reported to `failures` and left
/// out of the store ([`Failures::skip`]). `trim` drops what the job never
/// reads before the object is cached.
pub fn reflect<K>(
    api: Api<Isolated<K>>,
    config: watcher::Config,
    writer: Writer<K>,
    listed: Listed,
    trim: fn(&mut K),
    failures: Failures,
) -> impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static
where
    K: Resource + Clone + Default + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone + Default + Send + Sync,
{
    let events = events(api, config)
        .filter_map(move |event| {
            std::future::ready(match event {
                Ok(event) => failures.skip(event).map(Ok),
                Err(err) => Some(Err(err)),
            })
        })
        .modify(trim);
    reflector::reflector(writer, events).inspect(move |e| listed.on(e))
}

/// The events of a watch on `api`, for a caller that indexes them itself.
pub fn watch<K>(
    api: Api<K>,
    config: watcher::Config,
    listed: Listed,
) -> impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    events(api, config).inspect(move |e| listed.on(e))
}

/// [`watch`] of a kind the cluster may not serve (its CRD not installed,
/// or not readable with the RBAC in use). Such a watch counts as listed,
/// with nothing in it, so the host does not wait for a kind that may
/// never come; it keeps retrying, and the kind's objects arrive as events
/// once it is served.
pub fn watch_optional<K>(
    api: Api<K>,
    config: watcher::Config,
    listed: Listed,
) -> impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    events(api, config).inspect(move |event| {
        listed.on(event);
        if let Err(err) = event
            && unavailable(err)
        {
            listed.mark();
        }
    })
}

/// A watch error that says the kind is not served (404) or not readable
/// (403), rather than that the API failed.
pub fn unavailable(err: &watcher::Error) -> bool {
    match err {
        watcher::Error::InitialListFailed(e)
        | watcher::Error::WatchStartFailed(e)
        | watcher::Error::WatchFailed(e) => crate::is_status(e, 404) || crate::is_status(e, 403),
        watcher::Error::WatchError(status) => status.code == 404 || status.code == 403,
        watcher::Error::NoResourceVersion => false,
    }
}

/// The newest version of one object (`None` while it does not exist),
/// for every job that reads it: one watch, any number of readers, each of
/// which sees the latest state and never a backlog.
pub type Latest = tokio::sync::watch::Receiver<Option<Arc<DynamicObject>>>;

/// Watches the object `name` of `api` into a [`Latest`]; the returned
/// future runs the watch and must be spawned (it ends when every reader
/// is gone). While the object cannot be decoded it is reported to
/// `failures` and reads as absent.
pub fn latest(
    api: Api<Isolated<DynamicObject>>,
    name: &str,
    listed: Listed,
    failures: Failures,
) -> (Latest, impl Future<Output = ()> + Send + 'static) {
    follow_latest(watch(api, by_name(name), listed), failures)
}

/// [`latest`] of an object whose kind the cluster may not serve (see
/// [`watch_optional`]): `None` until it is.
pub fn latest_optional(
    api: Api<Isolated<DynamicObject>>,
    name: &str,
    listed: Listed,
    failures: Failures,
) -> (Latest, impl Future<Output = ()> + Send + 'static) {
    follow_latest(watch_optional(api, by_name(name), listed), failures)
}

/// Also what the RBAC expects: the rules name these objects.
fn by_name(name: &str) -> watcher::Config {
    watcher::Config::default().fields(&format!("metadata.name={name}"))
}

fn follow_latest(
    events: impl Stream<Item = Result<watcher::Event<Isolated<DynamicObject>>, watcher::Error>>
    + Send
    + 'static,
    failures: Failures,
) -> (Latest, impl Future<Output = ()> + Send + 'static) {
    let (tx, rx) = tokio::sync::watch::channel(None);
    let run = async move {
        let mut events = std::pin::pin!(events);
        let mut relisted = false;
        while let Some(event) = events.next().await {
            use watcher::Event::{Apply, Delete, Init, InitApply, InitDone};
            match event {
                Ok(Init) => relisted = false,
                Ok(InitApply(Isolated(Ok(object))) | Apply(Isolated(Ok(object)))) => {
                    relisted = true;
                    tx.send_replace(Some(Arc::new(object)));
                }
                // One that cannot be decoded reads as absent: a relist
                // without it, or its deletion.
                Ok(InitApply(Isolated(Err(failure)))) => failures.report(&failure, "", ""),
                Ok(Apply(Isolated(Err(failure))) | Delete(Isolated(Err(failure)))) => {
                    failures.report(&failure, "", "");
                    tx.send_replace(None);
                }
                Ok(Delete(Isolated(Ok(_)))) => {
                    tx.send_replace(None);
                }
                // Deleted while the watch was down: missing from the relist.
                Ok(InitDone) if !relisted => {
                    tx.send_if_modified(|object| object.take().is_some());
                }
                Ok(InitDone) => {}
                Err(err) => tracing::warn!(error = %err, "watch failed; retrying"),
            }
            if tx.is_closed() {
                break;
            }
        }
    };
    (rx, run)
}

fn events<K>(
    api: Api<K>,
    config: watcher::Config,
) -> impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let strip =
        |object: &mut K| super::managers::keep_operator_entries(object.managed_fields_mut());
    watcher::watcher(api, config)
        .modify(strip)
        .backoff(backoff())
}

/// Whether every watch the host depends on has finished its first list,
/// and what else keeps it from working (a served CRD that cannot take its
/// writes): what `/readyz` reports.
#[derive(Clone)]
pub struct Readiness {
    watches: Arc<Mutex<BTreeMap<String, bool>>>,
    /// Why the host is not ready although its caches are, by subject.
    problems: Arc<Mutex<BTreeMap<String, String>>>,
    /// Bumped whenever a watch lists, for [`Readiness::listed`].
    changes: Arc<tokio::sync::watch::Sender<()>>,
}

impl Default for Readiness {
    fn default() -> Self {
        Readiness {
            watches: Arc::default(),
            problems: Arc::default(),
            changes: Arc::new(tokio::sync::watch::Sender::new(())),
        }
    }
}

/// One watch's part of [`Readiness`].
pub struct Listed {
    name: String,
    readiness: Readiness,
}

impl Readiness {
    /// A watch that must list before the host is ready.
    pub fn watch(&self, name: &str) -> Listed {
        self.with(|watches| watches.insert(name.to_owned(), false));
        Listed {
            name: name.to_owned(),
            readiness: self.clone(),
        }
    }

    /// The watches that have not listed yet; empty once ready.
    pub fn pending(&self) -> Vec<String> {
        self.with(|watches| {
            watches
                .iter()
                .filter(|(_, listed)| !**listed)
                .map(|(name, _)| name.clone())
                .collect()
        })
    }

    /// Records (`Some`) or clears (`None`) what keeps the host from being
    /// ready about `subject`.
    pub fn set_problem(&self, subject: &str, problem: Option<String>) {
        let mut problems = match self.problems.lock() {
            Ok(problems) => problems,
            Err(poisoned) => poisoned.into_inner(),
        };
        match problem {
            Some(problem) => problems.insert(subject.to_owned(), problem),
            None => problems.remove(subject),
        };
    }

    /// What keeps the host from being ready besides its caches, by subject.
    pub fn problems(&self) -> Vec<String> {
        match self.problems.lock() {
            Ok(problems) => problems.values().cloned().collect(),
            Err(poisoned) => poisoned.into_inner().values().cloned().collect(),
        }
    }

    /// Resolves once every watch named has listed.
    pub async fn listed(&self, names: &[&str]) {
        let mut changes = self.changes.subscribe();
        loop {
            let pending = self.pending();
            if names.iter().all(|n| !pending.iter().any(|p| p == n)) {
                return;
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut BTreeMap<String, bool>) -> T) -> T {
        match self.watches.lock() {
            Ok(mut watches) => f(&mut watches),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }
}

impl Listed {
    fn on<K>(&self, event: &Result<watcher::Event<K>, watcher::Error>) {
        if matches!(event, Ok(watcher::Event::InitDone)) {
            self.mark();
        }
    }

    /// Counts the watch as listed: done by the watch itself on its first
    /// list, or by hand for what is derived from other watches once it is.
    pub fn mark(&self) {
        let first = self
            .readiness
            .with(|watches| watches.insert(self.name.clone(), true) == Some(false));
        if first {
            self.readiness.changes.send_replace(());
            tracing::info!(watch = %self.name, "watch listed");
            if self.readiness.pending().is_empty() {
                tracing::info!("caches synced");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_once_every_watch_listed() {
        let readiness = Readiness::default();
        let nodes = readiness.watch("nodes");
        let pools = readiness.watch("machineconfigpools");
        assert_eq!(readiness.pending(), ["machineconfigpools", "nodes"]);
        nodes.mark();
        nodes.mark();
        assert_eq!(readiness.pending(), ["machineconfigpools"]);
        pools.mark();
        assert!(readiness.pending().is_empty());
    }

    #[test]
    fn problems_are_kept_per_subject_until_cleared() {
        let readiness = Readiness::default();
        readiness.set_problem("crd", Some("lacks a field".into()));
        readiness.set_problem("crd", Some("lacks two fields".into()));
        assert_eq!(readiness.problems(), ["lacks two fields"]);
        readiness.set_problem("crd", None);
        assert!(readiness.problems().is_empty());
        assert!(readiness.pending().is_empty(), "problems are not watches");
    }

    #[test]
    fn retries_double_from_half_a_second_to_five() {
        let delays: Vec<Duration> = backoff().take(6).collect();
        assert_eq!(
            delays,
            [500, 1000, 2000, 4000, 5000, 5000].map(Duration::from_millis)
        );
    }

    /// A backoff that ends would end the controller's trigger stream.
    #[test]
    fn the_trigger_stream_never_waits_and_never_ends() {
        let delays: Vec<Duration> = no_trigger_backoff().take(1000).collect();
        assert_eq!(delays.len(), 1000);
        assert!(delays.iter().all(Duration::is_zero), "{delays:?}");
    }
}
