//! The orphan sweep: deletes the MachineConfigNodes whose Node is gone.
//!
//! The garbage collector would too, through the owner reference, but not
//! every cluster runs it for our CRD in time. A deletion cannot be undone
//! (the stored status is the only record of a node's condition history), so
//! the sweep deletes only on a complete picture:
//!
//! - it runs only while the node store holds a complete list: never before
//!   the Node watch's first list is in, nor while it lists again (after a
//!   410, a failed list or a restarted watch: each relist counts anew). At a
//!   cold start the MCN list often ends long before the Node list (at 5,000
//!   nodes the Node list finishes last), and an empty node store would
//!   otherwise make every MCN look orphaned. The watches run in every term
//!   of the lease, a standby's too, so the list that counts is the one the
//!   node store holds now, however the lease moved since;
//! - the two stores are fed by two watches, so an MCN can name a Node the
//!   node store has not seen yet (one created after the Node list, whose
//!   event is still on its way). An MCN without a Node in the store is
//!   therefore deleted only once a read of that Node, made after the MCN
//!   was in the store and so newer than it, finds it gone; and only that
//!   very MCN (its UID a precondition of the delete), not one recreated
//!   under its name since.
//!
//! A Node deleted later leaves the store through its watch's Deleted event,
//! and its MCN goes at the next sweep.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use k8s_openapi::api::core::v1::Node;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};

use super::crd::MachineConfigNode;
use super::write::Writer;

/// Whether the node store holds a complete list now: set when a list ends
/// (`InitDone`, after the reflector has put it in the store), cleared when
/// one starts (`Init`, also emitted again before each retry of a failed list).
#[derive(Clone, Default)]
pub(super) struct NodeList(Arc<AtomicBool>);

impl NodeList {
    /// Follows the Node watch's events.
    pub(super) fn on<K>(&self, event: &Result<watcher::Event<K>, watcher::Error>) {
        match event {
            Ok(watcher::Event::Init) => self.0.store(false, Ordering::Release),
            Ok(watcher::Event::InitDone) => self.0.store(true, Ordering::Release),
            _ => {}
        }
    }

    fn complete(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// What the sweep reads besides the stores: the Node watch's state, and
/// the Nodes themselves, one by one, to confirm one is gone.
pub(super) struct Orphans {
    nodes: Api<Node>,
    list: NodeList,
}

impl Orphans {
    pub(super) fn new(client: Client, list: NodeList) -> Orphans {
        Orphans {
            nodes: Api::all(client),
            list,
        }
    }

    /// Deletes each of `mcns` whose Node is gone (see the module's
    /// comment); returns how many it deleted. Failures are logged and left
    /// to the next sweep. `may_delete` is asked before each delete, so a
    /// replica that loses the lease mid-sweep deletes nothing more.
    pub(super) async fn sweep(
        &self,
        nodes: &Store<Node>,
        mcns: &[Arc<MachineConfigNode>],
        writer: &Writer,
        may_delete: &(dyn Fn() -> bool + Sync),
    ) -> usize {
        if !self.list.complete() {
            return 0;
        }
        let mut deleted = 0;
        for mcn in mcns {
            let name = mcn.name_any();
            if nodes.get(&ObjectRef::new(&name)).is_some() {
                continue;
            }
            match self.nodes.get_metadata_opt(&name).await {
                Ok(None) => {}
                Ok(Some(_)) => {
                    tracing::debug!(mcn = %name, "its Node exists but is not cached yet; keeping the MachineConfigNode");
                    continue;
                }
                Err(err) => {
                    tracing::warn!(mcn = %name, error = %err, "could not check whether the Node of a MachineConfigNode is gone");
                    continue;
                }
            }
            if !may_delete() {
                tracing::info!("no longer the leader; the sweep stops");
                break;
            }
            match writer.delete(mcn).await {
                Ok(true) => deleted += 1,
                Ok(false) => {}
                Err(err) => {
                    tracing::warn!(mcn = %name, error = %err, "could not delete orphaned MachineConfigNode");
                }
            }
        }
        deleted
    }
}

#[cfg(test)]
mod tests {
    use kube::runtime::reflector;
    use prometheus_client::registry::Registry;
    use serde_json::json;

    use super::*;
    use mco_cluster::mock::{self, Call};

    const MCNS: &str = "/apis/machineconfiguration.openshift.io/v1/machineconfignodes";

    fn node(name: &str) -> Node {
        serde_json::from_value(json!({"metadata": {"name": name, "uid": format!("node-{name}")}}))
            .unwrap_or_else(|err| panic!("{err}"))
    }

    fn mcn(name: &str) -> Arc<MachineConfigNode> {
        let object = json!({
            "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigNode",
            "metadata": {"name": name, "uid": format!("mcn-{name}"), "resourceVersion": "7"},
            "spec": {"node": {"name": name}, "pool": {"name": "worker"}, "configVersion": {"desired": "rendered-a"}},
        });
        Arc::new(serde_json::from_value(object).unwrap_or_else(|err| panic!("{err}")))
    }

    /// A node store and its [`NodeList`], fed the same watch events.
    struct NodeWatch {
        store: Store<Node>,
        writer: reflector::store::Writer<Node>,
        list: NodeList,
    }

    impl NodeWatch {
        fn new() -> NodeWatch {
            let (store, writer) = reflector::store();
            NodeWatch {
                store,
                writer,
                list: NodeList::default(),
            }
        }

        fn event(&mut self, event: watcher::Event<Node>) {
            self.writer.apply_watcher_event(&event);
            self.list.on(&Ok(event));
        }

        /// A list that starts and, with `done`, ends with `names`.
        fn list(&mut self, names: &[&str], done: bool) {
            self.event(watcher::Event::Init);
            for name in names {
                self.event(watcher::Event::InitApply(node(name)));
            }
            if done {
                self.event(watcher::Event::InitDone);
            }
        }
    }

    /// Sweeps `mcns` against the API server that plays `calls`; returns
    /// how many it deleted, the write counter's samples, and the scenario.
    async fn sweep_with(
        watch: &NodeWatch,
        mcns: &[Arc<MachineConfigNode>],
        calls: Vec<Call>,
        may_delete: &(dyn Fn() -> bool + Sync),
    ) -> (usize, Vec<String>, mock::Scenario) {
        let mut registry = Registry::default();
        let metrics = crate::run_command::registered_metrics(&mut registry);
        let (client, scenario) = mock::serve(calls);
        let writer = Writer::new(client.clone(), metrics);
        let orphans = Orphans::new(client, watch.list.clone());
        let deleted = orphans.sweep(&watch.store, mcns, &writer, may_delete).await;
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry)
            .unwrap_or_else(|err| panic!("{err}"));
        let deletes = text
            .lines()
            .filter(|line| line.starts_with("mco_api_writes_total{"))
            .map(str::to_string)
            .collect();
        (deleted, deletes, scenario)
    }

    /// [`sweep_with`] a scenario it must play to the end.
    async fn sweep(
        watch: &NodeWatch,
        mcns: &[Arc<MachineConfigNode>],
        calls: Vec<Call>,
    ) -> (usize, Vec<String>) {
        let (deleted, writes, scenario) = sweep_with(watch, mcns, calls, &|| true).await;
        scenario.done().await;
        (deleted, writes)
    }

    /// Sweeps with an API server ready to confirm that `orphan`'s Node is
    /// gone and to take the delete, and checks that the sweep asks nothing.
    async fn sweeps_nothing(watch: &NodeWatch, mcns: &[Arc<MachineConfigNode>], orphan: &str) {
        let ready = vec![node_gone(orphan), delete(orphan)];
        let (deleted, writes, _unasked) = sweep_with(watch, mcns, ready, &|| true).await;
        assert_eq!((deleted, writes), (0, vec![]), "{orphan} was deleted");
    }

    fn node_gone(name: &str) -> Call {
        Call::get(&format!("/api/v1/nodes/{name}")).refuse(404, "NotFound")
    }

    fn delete(name: &str) -> Call {
        Call::delete(&format!("{MCNS}/{name}"))
            .body(json!({"preconditions": {"uid": format!("mcn-{name}")}}))
            .answer(json!({"kind": "Status", "apiVersion": "v1", "status": "Success"}))
    }

    #[tokio::test]
    async fn nothing_is_deleted_before_the_node_list_is_complete() {
        let mcns = [mcn("worker-0"), mcn("worker-1")];
        // The MCNs are listed; the Node watch has not started yet.
        let mut watch = NodeWatch::new();
        sweeps_nothing(&watch, &mcns, "worker-0").await;
        // Its list is under way (or failing, and retried: each try
        // starts with `Init` again).
        watch.list(&["worker-0"], false);
        watch.list(&[], false);
        sweeps_nothing(&watch, &mcns, "worker-0").await;
    }

    #[tokio::test]
    async fn a_relist_counts_anew() {
        let mcns = [mcn("worker-0"), mcn("gone-0")];
        let mut watch = NodeWatch::new();
        watch.list(&["worker-0"], true);
        // A 410 before the next sweep: the watch lists again. The store
        // keeps the last list until the new one ends, and nothing is
        // deleted meanwhile, not even what the last list lacked.
        watch.list(&["worker-0"], false);
        sweeps_nothing(&watch, &mcns, "gone-0").await;
        watch.event(watcher::Event::InitDone);
        let (deleted, counted) =
            sweep(&watch, &mcns, vec![node_gone("gone-0"), delete("gone-0")]).await;
        assert_eq!(deleted, 1);
        assert_eq!(counted, [r#"mco_api_writes_total{kind="delete"} 1"#]);
    }

    #[tokio::test]
    async fn a_complete_list_that_lacks_a_node_deletes_only_its_mcn() {
        let mcns = [mcn("worker-0"), mcn("gone-0"), mcn("worker-1")];
        let mut watch = NodeWatch::new();
        watch.list(&["worker-0", "worker-1"], true);
        let (deleted, counted) =
            sweep(&watch, &mcns, vec![node_gone("gone-0"), delete("gone-0")]).await;
        assert_eq!(deleted, 1);
        assert_eq!(counted, [r#"mco_api_writes_total{kind="delete"} 1"#]);
    }

    #[tokio::test]
    async fn a_node_deleted_after_the_list_loses_its_mcn() {
        let mcns = [mcn("worker-0"), mcn("worker-1")];
        let mut watch = NodeWatch::new();
        watch.list(&["worker-0", "worker-1"], true);
        watch.event(watcher::Event::Delete(node("worker-1")));
        let (deleted, _) = sweep(
            &watch,
            &mcns,
            vec![node_gone("worker-1"), delete("worker-1")],
        )
        .await;
        assert_eq!(deleted, 1);
    }

    #[tokio::test]
    async fn an_mcn_newer_than_the_node_list_is_kept() {
        let mut watch = NodeWatch::new();
        watch.list(&["worker-0"], true);
        // worker-1 joined after the Node list, and its MCN (written by the
        // replica that led then) is cached before the Node's event arrives.
        let mcns = [mcn("worker-0"), mcn("worker-1")];
        let exists = Call::get("/api/v1/nodes/worker-1").answer(json!({
            "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
            "metadata": {"name": "worker-1", "uid": "node-worker-1"},
        }));
        assert_eq!(sweep(&watch, &mcns, vec![exists]).await, (0, vec![]));
    }

    #[tokio::test]
    async fn a_node_that_cannot_be_read_or_an_mcn_recreated_meanwhile_is_kept() {
        let mut watch = NodeWatch::new();
        watch.list(&[], true);
        let forbidden = Call::get("/api/v1/nodes/worker-0").refuse(403, "Forbidden");
        assert_eq!(
            sweep(&watch, &[mcn("worker-0")], vec![forbidden]).await,
            (0, vec![])
        );
        // The MCN was deleted and created again (another UID) since it was
        // cached: the delete's precondition fails, and the new one stays.
        let recreated = delete("worker-0").refuse(409, "Conflict");
        assert_eq!(
            sweep(
                &watch,
                &[mcn("worker-0")],
                vec![node_gone("worker-0"), recreated]
            )
            .await,
            (0, vec![])
        );
    }

    #[tokio::test]
    async fn a_sweep_stops_deleting_once_the_lease_is_lost() {
        let mcns = [mcn("gone-0"), mcn("gone-1")];
        let mut watch = NodeWatch::new();
        watch.list(&[], true);
        // The lease is held for the first delete and lost before the second.
        let asked = std::sync::atomic::AtomicUsize::new(0);
        let may_delete = || asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 0;
        let calls = vec![node_gone("gone-0"), delete("gone-0"), node_gone("gone-1")];
        let (deleted, counted, scenario) = sweep_with(&watch, &mcns, calls, &may_delete).await;
        scenario.done().await;
        assert_eq!(deleted, 1);
        assert_eq!(counted, [r#"mco_api_writes_total{kind="delete"} 1"#]);
        assert_eq!(asked.into_inner(), 2);
    }
}
