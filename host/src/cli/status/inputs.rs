//! What `mco-host status` reads, decoded into the typed partial objects
//! the controllers read (the boot image job's `objects`, the MCN CRD,
//! k8s-openapi's Events, `mco_bootimage::MachineSetView`), plus the one
//! the controllers have no use for (a pool's status), and where plain JSON
//! objects (`kubectl get -o json`, the golden cases) become them.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::ClusterResourceScope;
use mco_bootimage::MachineSetView;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};

use crate::bootimage::objects::{
    ConfigMapData, Input as _, MachineConfiguration, STREAM_CONFIGMAP,
};
use crate::cluster::resources::MACHINE_CONFIG_POOL;
use crate::mcn::crd::MachineConfigNode;

/// Everything the summary is computed from.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub mcns: Vec<MachineConfigNode>,
    pub pools: Vec<Pool>,
    pub machinesets: Vec<MachineSetView>,
    /// MachineConfiguration `cluster`.
    pub machine_configuration: Option<MachineConfiguration>,
    /// ConfigMap `coreos-bootimages`.
    pub stream: Option<ConfigMapData>,
    /// The boot image controller's record ConfigMap (`mco-host-boot-images`).
    pub record: Option<ConfigMapData>,
    /// Events (events.k8s.io/v1) about MachineSets.
    pub events: Vec<Event>,
    /// The stream architecture of a control-plane node, for MachineSets
    /// without an architecture annotation (as the controller does).
    pub control_plane_arch: Option<String>,
    pub guests: GuestSource,
    /// The host's `/ownership` (empty without an admin URL, or from a host
    /// that does not serve it).
    pub ownership: Vec<crate::ownership::JobReport>,
}

/// What the guests section shows: the host's `/guests` (and shadow counts
/// from `/metrics`) when an admin URL was given and answered.
#[derive(Debug, Clone, Default)]
pub enum GuestSource {
    /// No `--admin-url`.
    #[default]
    NotAsked,
    /// The admin URL did not answer; the error.
    Unreachable(String),
    Read {
        url: String,
        /// The `/guests` document.
        guests: GuestsDocument,
        /// `mco_shadow_evaluations_total` by (job, result), if `/metrics`
        /// answered.
        shadow: BTreeMap<(String, String), f64>,
    },
}

/// The host's `/guests`, reduced to what the view shows.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct GuestsDocument {
    pub jobs: BTreeMap<String, ServedJob>,
}

/// One job of `/guests`: the module serving it, and its candidate.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct ServedJob {
    pub module: String,
    pub sha256: String,
    pub candidate: Option<Candidate>,
    pub rollout: Option<Rollout>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct Candidate {
    pub sha256: Option<String>,
}

/// A candidate's rollout, as `/guests` gives it: its stage and its
/// counts in that stage for the table, and the whole object, which
/// `-o json` passes on as the host wrote it (fields this view does not
/// know included).
#[derive(Debug, Clone, PartialEq)]
pub struct Rollout {
    pub stage: Option<String>,
    pub agree: u64,
    pub differ: u64,
    pub failed: u64,
    /// Passed through whole: the host, not this view, says what a
    /// rollout holds.
    document: serde_json::Map<String, serde_json::Value>,
}

impl<'de> Deserialize<'de> for Rollout {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// What the table shows; the counts are 0 and the stage unknown
        /// in a rollout not of this shape.
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct Stage {
            stage: Option<String>,
            agree: u64,
            differ: u64,
            failed: u64,
        }
        let document = serde_json::Map::deserialize(deserializer)?;
        let Stage {
            stage,
            agree,
            differ,
            failed,
        } = Stage::deserialize(&document).unwrap_or_default();
        Ok(Rollout {
            stage,
            agree,
            differ,
            failed,
            document,
        })
    }
}

impl Serialize for Rollout {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.document.serialize(serializer)
    }
}

/// A MachineConfigPool as the view reads it: its target config and when
/// its rollout began (the MCN job's pool has no use for its status).
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct Pool {
    pub metadata: ObjectMeta,
    pub spec: PoolConfiguration,
    pub status: PoolStatus,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct PoolConfiguration {
    pub configuration: Option<ConfigName>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct PoolStatus {
    pub configuration: Option<ConfigName>,
    pub conditions: Vec<PoolCondition>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct ConfigName {
    pub name: Option<String>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct PoolCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub last_transition_time: Option<String>,
}

crate::typed_resource!(Pool, MACHINE_CONFIG_POOL, ClusterResourceScope);

impl Pool {
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// `spec.configuration.name` (the rendered config nodes move to), or
    /// the status's.
    pub fn target(&self) -> Option<&str> {
        fn name(configuration: &Option<ConfigName>) -> Option<&str> {
            configuration.as_ref()?.name.as_deref()
        }
        name(&self.spec.configuration).or_else(|| name(&self.status.configuration))
    }
}

impl Inputs {
    /// Sorts objects by kind, as a `kubectl get -o json` list of
    /// everything would hold them (the golden cases are such lists), each
    /// decoded as the live reader decodes it. Unknown kinds and objects
    /// that do not decode are left out.
    pub fn from_objects(objects: impl IntoIterator<Item = serde_json::Value>) -> Inputs {
        /// What says which object it is.
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct Head {
            kind: String,
            metadata: Named,
        }
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct Named {
            name: String,
        }
        fn typed<T: DeserializeOwned>(object: serde_json::Value) -> Option<T> {
            serde_json::from_value(object).ok()
        }
        let mut inputs = Inputs::default();
        for object in objects {
            let head = Head::deserialize(&object).unwrap_or_default();
            match (head.kind.as_str(), head.metadata.name.as_str()) {
                ("MachineConfigNode", _) => inputs.mcns.extend(typed(object)),
                ("MachineConfigPool", _) => inputs.pools.extend(typed(object)),
                ("MachineSet", _) => inputs
                    .machinesets
                    .extend(MachineSetView::from_object(&object).ok()),
                ("MachineConfiguration", "cluster") => {
                    inputs.machine_configuration = MachineConfiguration::decode(&object).ok();
                }
                ("ConfigMap", STREAM_CONFIGMAP) => {
                    inputs.stream = ConfigMapData::decode(&object).ok();
                }
                ("ConfigMap", _) => inputs.record = ConfigMapData::decode(&object).ok(),
                ("Event", _) => inputs.events.extend(typed(object)),
                ("Node", _) if inputs.control_plane_arch.is_none() => {
                    inputs.control_plane_arch =
                        typed::<Node>(object).and_then(|node| control_plane_arch(&node.metadata));
                }
                _ => {}
            }
        }
        inputs
    }
}

/// The stream architecture of a control-plane node, from its labels;
/// `None` for another node.
pub(super) fn control_plane_arch(node: &ObjectMeta) -> Option<String> {
    let labels = node.labels.as_ref()?;
    let control_plane = labels.contains_key("node-role.kubernetes.io/master")
        || labels.contains_key("node-role.kubernetes.io/control-plane");
    let arch = labels.get("kubernetes.io/arch").filter(|_| control_plane)?;
    mco_bootimage::arch::stream_arch_from_kube(arch).map(str::to_owned)
}
