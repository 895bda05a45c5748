//! The watches of the boot image controller, and which of their events
//! start a pass (upstream §2): every event name is also the `reason` of the
//! conditions the pass writes. Each watch keeps a fingerprint of the fields
//! that matter per object, so our own status writes and unrelated edits do
//! not wake the controller.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

use futures::{Stream, StreamExt};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

use crate::controller::WatchBackoff;

/// The kinds the controller reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    MachineSet,
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
        let (group, version, kind, plural) = match self {
            Kind::MachineSet => (
                "machine.openshift.io",
                "v1beta1",
                "MachineSet",
                "machinesets",
            ),
            Kind::StreamConfigMap | Kind::KnownImages => ("", "v1", "ConfigMap", "configmaps"),
            Kind::MachineConfiguration => (
                "operator.openshift.io",
                "v1",
                "MachineConfiguration",
                "machineconfigurations",
            ),
            Kind::ClusterVersion => (
                "config.openshift.io",
                "v1",
                "ClusterVersion",
                "clusterversions",
            ),
            Kind::Infrastructure => (
                "config.openshift.io",
                "v1",
                "Infrastructure",
                "infrastructures",
            ),
        };
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
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
            Kind::StreamConfigMap | Kind::KnownImages => at("/data"),
            // Enrollment and the readiness gate; not the conditions this
            // controller writes itself.
            Kind::MachineConfiguration => json!([
                at("/status/managedBootImagesStatus"),
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

/// Fingerprints per object name, and the names seen during a relist.
#[derive(Default)]
struct Seen {
    fingerprints: HashMap<String, u64>,
    relisting: Option<HashSet<String>>,
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
                let change = match self.fingerprints.insert(name, hasher.finish()) {
                    None => Change::Added,
                    Some(old) if old != hasher.finish() => Change::Updated,
                    Some(_) => return None,
                };
                Some(kind.reason(change, Some(&value)))
            }
            watcher::Event::Delete(object) => {
                self.fingerprints.remove(&object.name_any());
                Some(kind.reason(Change::Deleted, None))
            }
            // Objects deleted while the watch was down are missing from the
            // relist.
            watcher::Event::InitDone => {
                let names = self.relisting.take().unwrap_or_default();
                let before = self.fingerprints.len();
                self.fingerprints.retain(|name, _| names.contains(name));
                (self.fingerprints.len() < before).then(|| kind.reason(Change::Deleted, None))
            }
        }
    }
}

/// A watch of `kind` (one object when `name` is given) into `store`,
/// yielding the reason of every event that may change a decision.
pub fn watch(
    client: &Client,
    kind: Kind,
    namespace: Option<&str>,
    name: Option<&str>,
) -> (
    Store<DynamicObject>,
    impl Stream<Item = &'static str> + Send + 'static,
) {
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
    let writer = reflector::store::Writer::new(resource);
    let store = writer.as_reader();
    let strip = |object: &mut DynamicObject| object.managed_fields_mut().clear();
    let mut seen = Seen::default();
    let reasons = reflector::reflector(writer, watcher(api, config).modify(strip))
        .backoff(WatchBackoff::default())
        .filter_map(move |event| {
            let reason = match event {
                Ok(event) => seen.on_event(kind, event),
                Err(err) => {
                    tracing::warn!(?kind, error = %err, "watch failed; retrying");
                    None
                }
            };
            std::future::ready(reason)
        });
    (store, reasons)
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
