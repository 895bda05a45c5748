//! The watches of the boot image controller, and which of their events
//! start a pass (upstream's `pkg/controller/machine-set-boot-image`
//! event handlers): every event name is also the `reason` of the
//! conditions the pass writes. Each watch decodes its objects once per
//! event into a reflector store, and keeps a fingerprint of the fields
//! that matter per object, so our own status writes and unrelated edits
//! do not wake the controller. What matters follows the feature gates in
//! force, as upstream's handlers do: no ControlPlaneMachineSet event
//! starts a pass with `ManagedBootImagesCPMS` off (its store is still
//! kept, for when the gate turns on), and the skew record of
//! MachineConfiguration `cluster` matters only with
//! `BootImageSkewEnforcement` on.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::runtime::reflector::Store;
use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use mco_bootimage::{InputError, MachineKind, MachineSetView};
use serde::Serialize;
use serde_json::Value;

use super::BOOT_IMAGE_SKEW_ENFORCEMENT;
use super::objects::{
    ClusterVersion, ConfigMapData, Decoded, Infrastructure, MachineConfiguration,
};
use super::rules;
use mco_cluster::decode::{Failures, Isolated};
use mco_cluster::resources::{
    CLUSTER_VERSION, CONFIG_MAP, CONTROL_PLANE_MACHINE_SET, INFRASTRUCTURE, MACHINE_CONFIGURATION,
    MACHINE_CONFIGURATION_WATCH, MACHINE_SET,
};
use mco_cluster::watch::{self, Latest, Readiness};
use mco_job::feature_gates::{FeatureGates, Gates};

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

    /// The machine kind whose objects the watch holds, if any.
    fn machine(self) -> Option<MachineKind> {
        match self {
            Kind::MachineSet => Some(MachineKind::MachineSet),
            Kind::ControlPlaneMachineSet => Some(MachineKind::ControlPlaneMachineSet),
            _ => None,
        }
    }

    /// How messages name an object of the kind.
    fn noun(self) -> &'static str {
        match self {
            Kind::MachineSet => "MachineSet",
            Kind::ControlPlaneMachineSet => "ControlPlaneMachineSet",
            Kind::StreamConfigMap | Kind::KnownImages => "ConfigMap",
            Kind::MachineConfiguration => "MachineConfiguration",
            Kind::ClusterVersion => "ClusterVersion",
            Kind::Infrastructure => "Infrastructure",
        }
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

    /// `settled`: the object says its cluster is stable (see
    /// [`Watched::settled`]).
    fn reason(self, change: Change, settled: bool) -> &'static str {
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
            (Kind::ClusterVersion, _) if settled => "ClusterVersionStable",
            (Kind::ClusterVersion, _) => "ClusterVersionUpdated",
            (Kind::Infrastructure, _) => "InfrastructureUpdated",
            (Kind::KnownImages, _) => "KnownImagesUpdated",
        }
    }
}

/// A decoded kind the controller watches.
pub trait Watched: Clone + Send + Sync + 'static {
    /// What of it can change a decision under `gates`, hashed into its
    /// fingerprint.
    fn matters(&self, gates: &FeatureGates) -> impl Serialize;

    /// Whether it says the cluster is stable (a ClusterVersion whose newest
    /// history entry is `Completed`), which names the event.
    fn settled(&self) -> bool {
        false
    }
}

impl Watched for MachineSetView {
    /// Upstream's update filter (providerSpec, labels, annotations, owner
    /// references), plus the labels holding the Windows marker.
    fn matters(&self, _: &FeatureGates) -> impl Serialize {
        (
            &self.provider_spec,
            &self.template_labels,
            &self.labels,
            &self.annotations,
            &self.owner_references,
        )
    }
}

impl Watched for ConfigMapData {
    fn matters(&self, _: &FeatureGates) -> impl Serialize {
        &self.data
    }
}

/// Enrollment, the readiness gate and, with `BootImageSkewEnforcement` on,
/// the skew record (a record this controller wrote itself brings one more
/// pass, which then writes nothing); not the conditions this controller
/// writes itself.
impl Watched for MachineConfiguration {
    fn matters(&self, gates: &FeatureGates) -> impl Serialize {
        let mut read = Cow::Borrowed(self);
        if !gates.enabled(BOOT_IMAGE_SKEW_ENFORCEMENT) {
            read.to_mut().status.boot_image_skew_enforcement_status = None;
        }
        read
    }
}

impl Watched for ClusterVersion {
    fn matters(&self, _: &FeatureGates) -> impl Serialize {
        let newest = self.status.history.first().map(|h| &h.state);
        (newest, &self.status.desired)
    }

    fn settled(&self) -> bool {
        let newest = self.status.history.first();
        newest.and_then(|h| h.state.as_deref()) == Some("Completed")
    }
}

impl Watched for Infrastructure {
    fn matters(&self, _: &FeatureGates) -> impl Serialize {
        &self.status
    }
}

/// How a watch reads its objects.
type Decode<T> = fn(&Value) -> Result<T, InputError>;

/// What one watch needs to turn events into a store and reasons.
struct Seen<T: Watched> {
    kind: Kind,
    decode: Decode<T>,
    /// Fingerprints per object name, and the names seen during a relist.
    fingerprints: HashMap<String, u64>,
    relisting: Option<HashSet<String>>,
    store: Writer<Decoded<T>>,
    gates: Gates,
    failures: Failures,
}

impl<T: Watched> Seen<T> {
    fn new(kind: Kind, decode: Decode<T>, gates: &Gates, failures: &Failures) -> Seen<T> {
        Seen {
            kind,
            decode,
            fingerprints: HashMap::new(),
            relisting: None,
            store: Writer::new(kind.resource()),
            gates: gates.clone(),
            failures: failures.clone(),
        }
    }

    /// An object that could not be decoded is reported, and kept as one
    /// whose fields cannot be read: the pass says so where it would have
    /// read them (a MachineSet's condition and Event).
    fn decoded(&self, object: &Isolated<DynamicObject>) -> Decoded<T> {
        match &object.0 {
            Ok(object) => {
                let value = serde_json::to_value(object).unwrap_or(Value::Null);
                Decoded::read(&value, self.decode)
            }
            Err(failure) => {
                let resource = self.kind.resource();
                self.failures
                    .report(failure, &resource.api_version, &resource.kind);
                let name = failure.metadata.name.as_deref().unwrap_or("(unnamed)");
                Decoded {
                    metadata: failure.metadata.clone(),
                    object: Err(InputError::Invalid {
                        what: self.kind.noun(),
                        message: format!("{name} {}", failure.problem),
                    }),
                }
            }
        }
    }

    /// Applies `event` to the store, then says whether it may change a
    /// decision under the gates in force, and why.
    fn on_event(&mut self, event: watcher::Event<Isolated<DynamicObject>>) -> Option<&'static str> {
        let gates = self.gates.borrow().clone();
        let reason = self.apply(event, &gates);
        reason.filter(|_| {
            self.kind
                .machine()
                .is_none_or(|kind| rules::in_pass(&gates, kind))
        })
    }

    /// Applies `event` to the store and the fingerprints; the reason when
    /// what matters under `gates` changed.
    fn apply(
        &mut self,
        event: watcher::Event<Isolated<DynamicObject>>,
        gates: &FeatureGates,
    ) -> Option<&'static str> {
        let event = match event {
            watcher::Event::Init => watcher::Event::Init,
            watcher::Event::InitApply(object) => watcher::Event::InitApply(self.decoded(&object)),
            watcher::Event::Apply(object) => watcher::Event::Apply(self.decoded(&object)),
            watcher::Event::Delete(object) => watcher::Event::Delete(self.decoded(&object)),
            watcher::Event::InitDone => watcher::Event::InitDone,
        };
        self.store.apply_watcher_event(&event);
        let kind = self.kind;
        match event {
            watcher::Event::Init => {
                self.relisting = Some(HashSet::new());
                None
            }
            watcher::Event::InitApply(object) | watcher::Event::Apply(object) => {
                let name = object.name_any();
                let fingerprint = fingerprint(&object, gates);
                if let Some(names) = &mut self.relisting {
                    names.insert(name.clone());
                }
                let settled = object.object.as_ref().is_ok_and(T::settled);
                match self.fingerprints.insert(name, fingerprint) {
                    None => Some(Change::Added),
                    Some(old) if old != fingerprint => Some(Change::Updated),
                    Some(_) => None,
                }
                .map(|change| kind.reason(change, settled))
            }
            watcher::Event::Delete(object) => {
                self.fingerprints.remove(&object.name_any());
                Some(kind.reason(Change::Deleted, false))
            }
            // Objects deleted while the watch was down are missing from the
            // relist.
            watcher::Event::InitDone => {
                let names = self.relisting.take().unwrap_or_default();
                let before = self.fingerprints.len();
                self.fingerprints.retain(|name, _| names.contains(name));
                (self.fingerprints.len() < before).then(|| kind.reason(Change::Deleted, false))
            }
        }
    }
}

/// The fingerprint of what matters of an object under `gates`, or of why
/// it cannot be read.
fn fingerprint<T: Watched>(object: &Decoded<T>, gates: &FeatureGates) -> u64 {
    let text = match &object.object {
        Ok(read) => serde_json::to_string(&read.matters(gates)).unwrap_or_default(),
        Err(err) => err.to_string(),
    };
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// The store and the reasons of one watch.
pub type Watch<T> = (
    Store<Decoded<T>>,
    futures::stream::BoxStream<'static, &'static str>,
);

/// What every watch of the job shares.
pub struct Shared<'a> {
    pub client: &'a Client,
    pub readiness: &'a Readiness,
    pub gates: &'a Gates,
    /// Where an object that cannot be decoded is reported.
    pub failures: &'a Failures,
}

/// A watch of `kind` (one object when `name` is given), read with `decode`
/// into a store, yielding the reason of every event that may change a
/// decision once the store holds it. The ControlPlaneMachineSet watch is
/// optional ([`watch::watch_optional`]): a cluster without its CRD (or a
/// deployment without its RBAC) still gets its MachineSets updated, with
/// `0 of 0` ControlPlaneMachineSets.
pub fn watch<T: Watched>(
    shared: &Shared,
    kind: Kind,
    decode: Decode<T>,
    namespace: Option<&str>,
    name: Option<&str>,
) -> Watch<T> {
    let Shared {
        client,
        readiness,
        gates,
        failures,
    } = *shared;
    let resource = kind.resource();
    let api = match namespace {
        Some(ns) => Api::<Isolated<DynamicObject>>::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    let mut config = watcher::Config::default();
    if let Some(name) = name {
        // Also what the RBAC expects: the Roles name these objects.
        config = config.fields(&format!("metadata.name={name}"));
    }
    let mut seen = Seen::new(kind, decode, gates, failures);
    let store = seen.store.as_reader();
    let listed = readiness.watch(kind.name());
    let optional = kind == Kind::ControlPlaneMachineSet;
    let events = if optional {
        watch::watch_optional(api, config, listed).boxed()
    } else {
        watch::watch(api, config, listed).boxed()
    };
    let reasons = events.filter_map(move |event| {
        let reason = match event {
            Ok(event) => seen.on_event(event),
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
    (store, reasons.boxed())
}

/// The store and reasons of a watch another job shares (`latest`, which
/// reports an object it cannot decode): the same as a watch of our own
/// would give, from the newest object seen.
pub fn follow<T: Watched>(
    kind: Kind,
    decode: Decode<T>,
    latest: Latest,
    shared: &Shared,
) -> Watch<T> {
    let mut seen = Seen::new(kind, decode, shared.gates, shared.failures);
    let store = seen.store.as_reader();
    let mut previous: Option<Arc<DynamicObject>> = None;
    let reasons = tokio_stream::wrappers::WatchStream::new(latest).filter_map(move |object| {
        let event = match (object, previous.take()) {
            (Some(object), _) => {
                previous = Some(object.clone());
                Some(watcher::Event::Apply(Isolated(Ok((*object).clone()))))
            }
            (None, Some(gone)) => Some(watcher::Event::Delete(Isolated(Ok((*gone).clone())))),
            (None, None) => None,
        };
        std::future::ready(event.and_then(|event| seen.on_event(event)))
    });
    (store, reasons.boxed())
}

/// The one object of a watch of one name.
pub fn one<T: Clone>(store: &Store<Decoded<T>>) -> Option<Arc<Decoded<T>>> {
    store.state().into_iter().next()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tokio::sync::watch as channel;

    use super::*;
    use crate::MANAGED_BOOT_IMAGES_CPMS;
    use crate::objects::{Input, machine_decoder};
    use kube::Resource;
    use mco_job::metrics::Metrics;
    use prometheus_client::registry::Registry;

    /// The Default feature set, fixed.
    fn default_gates() -> Gates {
        channel::channel(Arc::new(FeatureGates::default_of(crate::FEATURE_GATES))).1
    }

    fn failures() -> Failures {
        Failures::unpublished(Metrics::register(&mut Registry::default()).cluster)
    }

    fn object(name: &str, body: Value) -> Isolated<DynamicObject> {
        let mut value = body;
        value["metadata"] = json!({"name": name});
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn only_relevant_changes_trigger() {
        let kind = Kind::MachineSet;
        let mut seen = Seen::new(
            kind,
            machine_decoder(MachineKind::MachineSet),
            &default_gates(),
            &failures(),
        );
        let ms = |image: &str, replicas: u32| {
            object(
                "a",
                json!({"spec": {"replicas": replicas, "template": {"spec": {"providerSpec": {"value": {"image": image}}}}}}),
            )
        };
        assert_eq!(
            seen.on_event(watcher::Event::Apply(ms("x", 1))),
            Some("MAPIMachineSetAdded")
        );
        // Scaling does not matter; the providerSpec does.
        assert_eq!(seen.on_event(watcher::Event::Apply(ms("x", 3))), None);
        assert_eq!(
            seen.on_event(watcher::Event::Apply(ms("y", 3))),
            Some("MAPIMachineSetUpdated")
        );
        // A relist that no longer has the object reports its deletion.
        assert_eq!(seen.on_event(watcher::Event::Init), None);
        assert_eq!(
            seen.on_event(watcher::Event::InitDone),
            Some("MAPIMachineSetDeleted")
        );
        assert_eq!(seen.on_event(watcher::Event::InitDone), None);
    }

    #[test]
    fn a_control_plane_machine_set_triggers_on_its_own_provider_spec() {
        let kind = Kind::ControlPlaneMachineSet;
        let decode = machine_decoder(MachineKind::ControlPlaneMachineSet);
        let mut seen = Seen::new(kind, decode, &default_gates(), &failures());
        let cpms = |ami: &str, replicas: u32| {
            object(
                "cluster",
                json!({"spec": {"replicas": replicas, "template": {"machines_v1beta1_machine_openshift_io": {
                    "spec": {"providerSpec": {"value": {"ami": {"id": ami}}}}}}}}),
            )
        };
        assert_eq!(
            seen.on_event(watcher::Event::Apply(cpms("ami-a", 3))),
            Some("ControlPlaneMachineSetAdded")
        );
        assert_eq!(seen.on_event(watcher::Event::Apply(cpms("ami-a", 5))), None);
        assert_eq!(
            seen.on_event(watcher::Event::Apply(cpms("ami-b", 5))),
            Some("ControlPlaneMachineSetUpdated")
        );
        assert_eq!(
            seen.on_event(watcher::Event::Delete(cpms("ami-b", 5))),
            Some("ControlPlaneMachineSetDeleted")
        );
    }

    #[test]
    fn cluster_version_is_stable_once_completed() {
        let kind = Kind::ClusterVersion;
        let mut seen = Seen::new(kind, ClusterVersion::decode, &default_gates(), &failures());
        let cv = |state: &str| {
            object(
                "version",
                json!({"status": {"history": [{"state": state}]}}),
            )
        };
        assert_eq!(
            seen.on_event(watcher::Event::Apply(cv("Partial"))),
            Some("ClusterVersionUpdated")
        );
        assert_eq!(
            seen.on_event(watcher::Event::Apply(cv("Completed"))),
            Some("ClusterVersionStable")
        );
        // Conditions written by this controller do not wake it.
        let kind = Kind::MachineConfiguration;
        let mut seen = Seen::new(
            kind,
            MachineConfiguration::decode,
            &default_gates(),
            &failures(),
        );
        let mc =
            |conditions: Value| object("cluster", json!({"status": {"conditions": conditions}}));
        assert!(
            seen.on_event(watcher::Event::Apply(mc(json!([]))))
                .is_some()
        );
        assert_eq!(
            seen.on_event(watcher::Event::Apply(mc(json!([{"type": "X"}])))),
            None
        );
    }

    #[test]
    fn control_plane_machine_set_events_follow_the_cpms_gate() {
        let (tx, gates) =
            channel::channel(Arc::new(crate::gates_without(&[MANAGED_BOOT_IMAGES_CPMS])));
        let kind = Kind::ControlPlaneMachineSet;
        let mut seen = Seen::new(
            kind,
            machine_decoder(MachineKind::ControlPlaneMachineSet),
            &gates,
            &failures(),
        );
        let cpms = |ami: &str| {
            object(
                "cluster",
                json!({"spec": {"template": {"machines_v1beta1_machine_openshift_io": {
                    "spec": {"providerSpec": {"value": {"ami": {"id": ami}}}}}}}}),
            )
        };
        let store = seen.store.as_reader();
        assert_eq!(seen.on_event(watcher::Event::Apply(cpms("ami-a"))), None);
        assert_eq!(seen.on_event(watcher::Event::Apply(cpms("ami-b"))), None);
        assert_eq!(seen.on_event(watcher::Event::Delete(cpms("ami-b"))), None);
        // The store follows anyway, for when the gate turns on.
        assert!(store.state().is_empty());
        assert_eq!(seen.on_event(watcher::Event::Apply(cpms("ami-c"))), None);
        assert_eq!(store.state().len(), 1);
        tx.send_replace(Arc::new(FeatureGates::default_of(crate::FEATURE_GATES)));
        assert_eq!(
            seen.on_event(watcher::Event::Apply(cpms("ami-d"))),
            Some("ControlPlaneMachineSetUpdated")
        );
    }

    #[test]
    fn the_skew_record_matters_only_with_the_skew_gate_on() {
        let mc = |ocp: &str| {
            object(
                "cluster",
                json!({"status": {"bootImageSkewEnforcementStatus": {
                    "mode": "Automatic", "automatic": {"ocpVersion": ocp}}}}),
            )
        };
        let generation = |g: i64| {
            let mut object = mc("4.19.0");
            object.meta_mut().generation = Some(g);
            object
        };
        let kind = Kind::MachineConfiguration;
        let off = crate::gates_without(&[BOOT_IMAGE_SKEW_ENFORCEMENT]);
        let (tx, gates) = channel::channel(Arc::new(off));
        let mut seen = Seen::new(kind, MachineConfiguration::decode, &gates, &failures());
        assert!(seen.on_event(watcher::Event::Apply(mc("4.19.0"))).is_some());
        assert_eq!(seen.on_event(watcher::Event::Apply(mc("4.22.0"))), None);
        // What else matters still does.
        assert_eq!(
            seen.on_event(watcher::Event::Apply(generation(2))),
            Some("BootImageUpdateConfigurationUpdated")
        );
        tx.send_replace(Arc::new(FeatureGates::default_of(crate::FEATURE_GATES)));
        let mut seen = Seen::new(kind, MachineConfiguration::decode, &gates, &failures());
        assert!(seen.on_event(watcher::Event::Apply(mc("4.19.0"))).is_some());
        assert_eq!(
            seen.on_event(watcher::Event::Apply(mc("4.22.0"))),
            Some("BootImageUpdateConfigurationUpdated")
        );
    }
}
