//! The watches of the boot image controller, and which of their events
//! start a pass (upstream §2): every event name is also the `reason` of the
//! conditions the pass writes. Each watch indexes its objects, decoded once
//! per event, and keeps a fingerprint of the fields that matter per object,
//! so our own status writes and unrelated edits do not wake the controller.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, RwLock};

use futures::{Stream, StreamExt};
use kube::api::{Api, ApiResource, DynamicObject};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

use crate::cluster::resources::{
    CLUSTER_VERSION, CONFIG_MAP, CONTROL_PLANE_MACHINE_SET, INFRASTRUCTURE, MACHINE_CONFIGURATION,
    MACHINE_CONFIGURATION_WATCH, MACHINE_SET,
};
use crate::cluster::watch::{self, Latest, Readiness};

/// The kinds the controller reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    MachineSet,
    ControlPlaneMachineSet,
    StreamConfigMap,
    MachineConfiguration,
    ClusterVersion,
    Infrastructure,
    KnownImages,
}

#[derive(Debug, Clone, Copy)]
enum Change {
    Added,
    Updated,
    Deleted,
}

impl Kind {
    pub fn resource(self) -> ApiResource {
        match self {
            Kind::MachineSet => MACHINE_SET,
            Kind::ControlPlaneMachineSet => CONTROL_PLANE_MACHINE_SET,
            Kind::StreamConfigMap | Kind::KnownImages => CONFIG_MAP,
            Kind::MachineConfiguration => MACHINE_CONFIGURATION,
            Kind::ClusterVersion => CLUSTER_VERSION,
            Kind::Infrastructure => INFRASTRUCTURE,
        }
        .api_resource()
    }

    /// The watch's name in readiness reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::MachineSet => "machinesets",
            Kind::ControlPlaneMachineSet => "controlplanemachinesets",
            Kind::StreamConfigMap => "coreos-bootimages",
            Kind::MachineConfiguration => MACHINE_CONFIGURATION_WATCH,
            Kind::ClusterVersion => "clusterversions",
            Kind::Infrastructure => "infrastructures",
            Kind::KnownImages => "known-images",
        }
    }

    /// What of an object can change a decision.
    fn fingerprint(self, object: &Value) -> Value {
        let at = |path: &str| object.pointer(path).cloned().unwrap_or(Value::Null);
        match self {
            // Upstream's update filter, plus the template labels (the
            // Windows marker lives there).
            Kind::MachineSet => json!([
                at("/spec/template/spec/providerSpec"),
                at("/spec/template/metadata/labels"),
                at("/metadata/labels"),
                at("/metadata/annotations"),
                at("/metadata/ownerReferences"),
            ]),
            // The same for a ControlPlaneMachineSet, one level deeper (§18.7),
            // plus the Node labels holding its Windows marker.
            Kind::ControlPlaneMachineSet => json!([
                at("/spec/template/machines_v1beta1_machine_openshift_io/spec/providerSpec"),
                at("/spec/template/machines_v1beta1_machine_openshift_io/spec/metadata/labels"),
                at("/metadata/labels"),
                at("/metadata/annotations"),
                at("/metadata/ownerReferences"),
            ]),
            Kind::StreamConfigMap | Kind::KnownImages => at("/data"),
            // Enrollment and the readiness gate; not the conditions this
            // controller writes itself.
            Kind::MachineConfiguration => json!([
                at("/status/managedBootImagesStatus"),
                // The skew record (§19.5); a record this controller wrote
                // itself brings one more pass, which then writes nothing.
                at("/status/bootImageSkewEnforcementStatus"),
                at("/spec/managedBootImages"),
                at("/metadata/generation"),
                at("/status/observedGeneration"),
            ]),
            Kind::ClusterVersion => json!([at("/status/history/0/state"), at("/status/desired"),]),
            Kind::Infrastructure => at("/status/platformStatus"),
        }
    }

    fn reason(self, change: Change, object: Option<&Value>) -> &'static str {
        use Change::*;
        match (self, change) {
            (Kind::MachineSet, Added) => "MAPIMachineSetAdded",
            (Kind::MachineSet, Updated) => "MAPIMachineSetUpdated",
            (Kind::MachineSet, Deleted) => "MAPIMachineSetDeleted",
            (Kind::ControlPlaneMachineSet, Added) => "ControlPlaneMachineSetAdded",
            (Kind::ControlPlaneMachineSet, Updated) => "ControlPlaneMachineSetUpdated",
            (Kind::ControlPlaneMachineSet, Deleted) => "ControlPlaneMachineSetDeleted",
            (Kind::StreamConfigMap, Added) => "BootImageConfigMapAdded",
            (Kind::StreamConfigMap, Updated) => "BootImageConfigMapUpdated",
            (Kind::StreamConfigMap, Deleted) => "BootImageConfigMapDeleted",
            (Kind::MachineConfiguration, Added) => "BootImageUpdateConfigurationAdded",
            (Kind::MachineConfiguration, Updated) => "BootImageUpdateConfigurationUpdated",
            (Kind::MachineConfiguration, Deleted) => "BootImageUpdateConfigurationDeleted",
            (Kind::ClusterVersion, _) => {
                let completed = object
                    .and_then(|o| o.pointer("/status/history/0/state"))
                    .and_then(Value::as_str)
                    == Some("Completed");
                if completed {
                    "ClusterVersionStable"
                } else {
                    "ClusterVersionUpdated"
                }
            }
            (Kind::Infrastructure, _) => "InfrastructureUpdated",
            (Kind::KnownImages, _) => "KnownImagesUpdated",
        }
    }
}

/// The objects of one watch by name, each decoded once, when its event
/// arrived.
#[derive(Clone, Default)]
pub struct Index(Arc<RwLock<BTreeMap<String, Arc<Value>>>>);

impl Index {
    pub fn all(&self) -> Vec<Arc<Value>> {
        self.with(|objects| objects.values().cloned().collect())
    }

    /// The object of a watch of one name.
    pub fn one(&self) -> Option<Arc<Value>> {
        self.with(|objects| objects.values().next().cloned())
    }

    fn with<T>(&self, f: impl FnOnce(&mut BTreeMap<String, Arc<Value>>) -> T) -> T {
        match self.0.write() {
            Ok(mut objects) => f(&mut objects),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }
}

/// Fingerprints per object name, and the names seen during a relist.
#[derive(Default)]
struct Seen {
    fingerprints: HashMap<String, u64>,
    relisting: Option<HashSet<String>>,
    index: Index,
}

impl Seen {
    fn on_event(
        &mut self,
        kind: Kind,
        event: watcher::Event<DynamicObject>,
    ) -> Option<&'static str> {
        match event {
            watcher::Event::Init => {
                self.relisting = Some(HashSet::new());
                None
            }
            watcher::Event::InitApply(object) | watcher::Event::Apply(object) => {
                let name = object.name_any();
                let value = serde_json::to_value(&object).unwrap_or(Value::Null);
                let mut hasher = DefaultHasher::new();
                kind.fingerprint(&value).to_string().hash(&mut hasher);
                if let Some(names) = &mut self.relisting {
                    names.insert(name.clone());
                }
                let reason = match self.fingerprints.insert(name.clone(), hasher.finish()) {
                    None => Some(Change::Added),
                    Some(old) if old != hasher.finish() => Some(Change::Updated),
                    Some(_) => None,
                }
                .map(|change| kind.reason(change, Some(&value)));
                self.index
                    .with(|objects| objects.insert(name, Arc::new(value)));
                reason
            }
            watcher::Event::Delete(object) => {
                let name = object.name_any();
                self.fingerprints.remove(&name);
                self.index.with(|objects| objects.remove(&name));
                Some(kind.reason(Change::Deleted, None))
            }
            // Objects deleted while the watch was down are missing from the
            // relist.
            watcher::Event::InitDone => {
                let names = self.relisting.take().unwrap_or_default();
                let before = self.fingerprints.len();
                self.fingerprints.retain(|name, _| names.contains(name));
                self.index
                    .with(|objects| objects.retain(|name, _| names.contains(name)));
                (self.fingerprints.len() < before).then(|| kind.reason(Change::Deleted, None))
            }
        }
    }
}

/// A watch of `kind` (one object when `name` is given) into an index,
/// yielding the reason of every event that may change a decision. The
/// ControlPlaneMachineSet watch is optional ([`watch::watch_optional`]): a
/// cluster without its CRD (or a deployment without its RBAC) still gets
/// its MachineSets updated, with `0 of 0` ControlPlaneMachineSets.
pub fn watch(
    client: &Client,
    kind: Kind,
    namespace: Option<&str>,
    name: Option<&str>,
    readiness: &Readiness,
) -> (Index, impl Stream<Item = &'static str> + Send + 'static) {
    let resource = kind.resource();
    let api = match namespace {
        Some(ns) => Api::<DynamicObject>::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    let mut config = watcher::Config::default();
    if let Some(name) = name {
        // Also what the RBAC expects: the Roles name these objects.
        config = config.fields(&format!("metadata.name={name}"));
    }
    let mut seen = Seen::default();
    let index = seen.index.clone();
    let listed = readiness.watch(kind.name());
    let optional = kind == Kind::ControlPlaneMachineSet;
    let events = if optional {
        watch::watch_optional(api, config, listed).boxed()
    } else {
        watch::watch(api, config, listed).boxed()
    };
    let reasons = events.filter_map(move |event| {
        let reason = match event {
            Ok(event) => seen.on_event(kind, event),
            Err(err) if optional && watch::unavailable(&err) => {
                tracing::debug!(?kind, error = %err, "not served or not readable; watching for it");
                None
            }
            Err(err) => {
                tracing::warn!(?kind, error = %err, "watch failed; retrying");
                None
            }
        };
        std::future::ready(reason)
    });
    (index, reasons)
}

/// The index and reasons of a watch another job shares (`latest`): the
/// same as a watch of our own would give, from the newest object seen.
pub fn follow(
    kind: Kind,
    latest: Latest,
) -> (Index, impl Stream<Item = &'static str> + Send + 'static) {
    let mut seen = Seen::default();
    let index = seen.index.clone();
    let mut previous: Option<Arc<DynamicObject>> = None;
    let reasons = tokio_stream::wrappers::WatchStream::new(latest).filter_map(move |object| {
        let event = match (object, previous.take()) {
            (Some(object), _) => {
                previous = Some(object.clone());
                Some(watcher::Event::Apply((*object).clone()))
            }
            (None, Some(gone)) => Some(watcher::Event::Delete((*gone).clone())),
            (None, None) => None,
        };
        std::future::ready(event.and_then(|event| seen.on_event(kind, event)))
    });
    (index, reasons)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(name: &str, body: Value) -> DynamicObject {
        let mut value = body;
        value["metadata"] = json!({"name": name});
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn only_relevant_changes_trigger() {
        let mut seen = Seen::default();
        let ms = |image: &str, replicas: u32| {
            object(
                "a",
                json!({"spec": {"replicas": replicas, "template": {"spec": {"providerSpec": {"value": {"image": image}}}}}}),
            )
        };
        let kind = Kind::MachineSet;
        assert_eq!(
            seen.on_event(kind, watcher::Event::Apply(ms("x", 1))),
            Some("MAPIMachineSetAdded")
        );
        // Scaling does not matter; the providerSpec does.
        assert_eq!(seen.on_event(kind, watcher::Event::Apply(ms("x", 3))), None);
        assert_eq!(
            seen.on_event(kind, watcher::Event::Apply(ms("y", 3))),
            Some("MAPIMachineSetUpdated")
        );
        // A relist that no longer has the object reports its deletion.
        assert_eq!(seen.on_event(kind, watcher::Event::Init), None);
        assert_eq!(
            seen.on_event(kind, watcher::Event::InitDone),
            Some("MAPIMachineSetDeleted")
        );
        assert_eq!(seen.on_event(kind, watcher::Event::InitDone), None);
    }

    #[test]
    fn a_control_plane_machine_set_triggers_on_its_own_provider_spec() {
        let mut seen = Seen::default();
        let cpms = |ami: &str, replicas: u32| {
            object(
                "cluster",
                json!({"spec": {"replicas": replicas, "template": {"machines_v1beta1_machine_openshift_io": {
                    "spec": {"providerSpec": {"value": {"ami": {"id": ami}}}}}}}}),
            )
        };
        let kind = Kind::ControlPlaneMachineSet;
        assert_eq!(
            seen.on_event(kind, watcher::Event::Apply(cpms("ami-a", 3))),
            Some("ControlPlaneMachineSetAdded")
        );
        assert_eq!(
            seen.on_event(kind, watcher::Event::Apply(cpms("ami-a", 5))),
            None
        );
        assert_eq!(
            seen.on_event(kind, watcher::Event::Apply(cpms("ami-b", 5))),
            Some("ControlPlaneMachineSetUpdated")
        );
        assert_eq!(
            seen.on_event(kind, watcher::Event::Delete(cpms("ami-b", 5))),
            Some("ControlPlaneMachineSetDeleted")
        );
    }

    #[test]
    fn cluster_version_is_stable_once_completed() {
        let mut seen = Seen::default();
        let cv = |state: &str| {
            object(
                "version",
                json!({"status": {"history": [{"state": state}]}}),
            )
        };
        let kind = Kind::ClusterVersion;
        assert_eq!(
            seen.on_event(kind, watcher::Event::Apply(cv("Partial"))),
            Some("ClusterVersionUpdated")
        );
        assert_eq!(
            seen.on_event(kind, watcher::Event::Apply(cv("Completed"))),
            Some("ClusterVersionStable")
        );
        // Conditions written by this controller do not wake it.
        let mut seen = Seen::default();
        let mc =
            |conditions: Value| object("cluster", json!({"status": {"conditions": conditions}}));
        let kind = Kind::MachineConfiguration;
        assert!(
            seen.on_event(kind, watcher::Event::Apply(mc(json!([]))))
                .is_some()
        );
        assert_eq!(
            seen.on_event(kind, watcher::Event::Apply(mc(json!([{"type": "X"}])))),
            None
        );
    }
}
