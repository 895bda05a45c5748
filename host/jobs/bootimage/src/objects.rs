//! The cluster objects the boot image job reads, reduced to the fields it
//! uses. Each is decoded once, when its watch event arrives (or when `eval`
//! reads its file), into a [`Decoded`]: its metadata, and its typed fields
//! or why they cannot be read, for the rules to report where they would
//! have read them. A MachineSet's providerSpec stays JSON: its guest owns
//! its meaning.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta};
use kube::api::ApiResource;
use kube::core::DynamicResourceScope;
use mco_bootimage::{InputError, MachineKind, MachineSetView, fields};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::decode::decode;

/// MachineSets, the ControlPlaneMachineSet and their user-data Secrets.
pub const MACHINE_API_NAMESPACE: &str = "openshift-machine-api";
/// The one ControlPlaneMachineSet there is (its API refuses other names).
pub const CONTROL_PLANE_MACHINE_SET_NAME: &str = "cluster";
/// The `coreos-bootimages` ConfigMap with the release's CoreOS stream.
pub const STREAM_NAMESPACE: &str = "openshift-machine-config-operator";
pub const STREAM_CONFIGMAP: &str = "coreos-bootimages";

/// An object as the job holds it: decoded once, whether or not its fields
/// could be read. Stored in a reflector store, keyed by its metadata.
#[derive(Debug, Clone)]
pub struct Decoded<T> {
    pub metadata: ObjectMeta,
    pub object: Result<T, InputError>,
}

impl<T> Decoded<T> {
    /// Decodes `object` with `decode`; the metadata is kept even when the
    /// rest cannot be read, so the object can still be named and keyed.
    pub fn read(object: &Value, decode: fn(&Value) -> Result<T, InputError>) -> Decoded<T> {
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct Object<M> {
            metadata: M,
        }
        /// What names an object whose metadata is malformed elsewhere.
        #[derive(Deserialize, Default)]
        #[serde(default, rename_all = "camelCase")]
        struct Identity {
            name: Option<String>,
            namespace: Option<String>,
            resource_version: Option<String>,
            uid: Option<String>,
        }
        let metadata = Object::<ObjectMeta>::deserialize(object).map(|o| o.metadata);
        let metadata = metadata.unwrap_or_else(|_| {
            let Identity {
                name,
                namespace,
                resource_version,
                uid,
            } = Object::deserialize(object).unwrap_or_default().metadata;
            ObjectMeta {
                name,
                namespace,
                resource_version,
                uid,
                ..ObjectMeta::default()
            }
        });
        Decoded {
            metadata,
            object: decode(object),
        }
    }

    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// The typed fields, or why they cannot be read.
    pub fn typed(&self) -> Result<&T, InputError> {
        self.object.as_ref().map_err(Clone::clone)
    }
}

impl<T: Input> Decoded<T> {
    /// Decodes `object` as a `T`.
    pub fn of(object: &Value) -> Decoded<T> {
        Decoded::read(object, T::decode)
    }
}

/// Like `DynamicObject`: the resource is known at run time, so one type
/// serves MachineSets and the ControlPlaneMachineSet, or both ConfigMaps.
impl<T> kube::Resource for Decoded<T> {
    type DynamicType = ApiResource;
    type Scope = DynamicResourceScope;

    fn kind(resource: &ApiResource) -> std::borrow::Cow<'_, str> {
        resource.kind.as_str().into()
    }
    fn group(resource: &ApiResource) -> std::borrow::Cow<'_, str> {
        resource.group.as_str().into()
    }
    fn version(resource: &ApiResource) -> std::borrow::Cow<'_, str> {
        resource.version.as_str().into()
    }
    fn api_version(resource: &ApiResource) -> std::borrow::Cow<'_, str> {
        resource.api_version.as_str().into()
    }
    fn plural(resource: &ApiResource) -> std::borrow::Cow<'_, str> {
        resource.plural.as_str().into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// A kind the job decodes with [`decode`], checking its `kind` first.
pub trait Input: DeserializeOwned {
    /// `kind` of the Kubernetes object, and how messages name it.
    const KIND: &'static str;

    fn decode(object: &Value) -> Result<Self, InputError> {
        decode_as(object, Self::KIND)
    }
}

/// A `T` read from `object`, its errors naming it `what`: not an object,
/// another `kind`, or a field of the wrong type.
pub fn decode_as<T: Input>(object: &Value, what: &'static str) -> Result<T, InputError> {
    #[derive(Deserialize)]
    struct Kind {
        kind: Option<String>,
    }
    if !object.is_object() {
        return Err(InputError::NotAnObject {
            what,
            found: fields::kind_of(object),
        });
    }
    match decode::<Kind>(object, what)?.kind {
        Some(found) if found != T::KIND => Err(InputError::WrongKind {
            expected: T::KIND,
            found,
        }),
        _ => decode(object, what),
    }
}

/// How objects of `kind` are read: a ControlPlaneMachineSet has its
/// providerSpec one level deeper than a MachineSet.
pub fn machine_decoder(kind: MachineKind) -> fn(&Value) -> Result<MachineSetView, InputError> {
    match kind {
        MachineKind::MachineSet => MachineSetView::from_object,
        MachineKind::ControlPlaneMachineSet => MachineSetView::from_control_plane_machine_set,
    }
}

/// A field decoded with serde_json's own rules and messages (a label
/// selector); one that does not decode is kept, for the rule that reads it
/// to report.
#[derive(Debug, Clone, PartialEq)]
pub struct Lenient<T>(pub Result<T, Undecodable>);

/// A field that did not decode: serde's reason, and the value as it was
/// (what the object's fingerprint covers).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{reason}")]
pub struct Undecodable {
    reason: String,
    value: Value,
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(Lenient(serde_json::from_value(value.clone()).map_err(
            |e| Undecodable {
                reason: e.to_string(),
                value,
            },
        )))
    }
}

impl<T: Serialize> Serialize for Lenient<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Ok(value) => value.serialize(serializer),
            Err(undecodable) => undecodable.value.serialize(serializer),
        }
    }
}

/// MachineConfiguration `cluster`: enrollment, readiness, the skew record
/// and the conditions this job writes.
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct MachineConfiguration {
    pub metadata: Generation,
    pub spec: MachineConfigurationSpec,
    pub status: MachineConfigurationStatus,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct Generation {
    pub generation: Option<i64>,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct MachineConfigurationSpec {
    pub managed_boot_images: Option<ManagedBootImages>,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct MachineConfigurationStatus {
    pub observed_generation: Option<i64>,
    pub managed_boot_images_status: Option<ManagedBootImages>,
    pub boot_image_skew_enforcement_status: Option<SkewEnforcementStatus>,
    /// Each condition decoded on its own: one that does not parse is left
    /// out (and then rewritten by whoever owns it). Not part of what
    /// decides, so not serialized into the fingerprint either.
    #[serde(skip_serializing)]
    pub conditions: Vec<Lenient<Condition>>,
}

impl MachineConfiguration {
    /// The conditions that parse.
    pub fn conditions(&self) -> Vec<Condition> {
        let conditions = self.status.conditions.iter();
        conditions.filter_map(|c| c.0.clone().ok()).collect()
    }
}

/// `spec.managedBootImages`, or the `status.managedBootImagesStatus` the
/// operator publishes from it.
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct ManagedBootImages {
    /// `None` (no opinion) is not `[]` (opted out of everything).
    pub machine_managers: Option<Vec<MachineManager>>,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct MachineManager {
    pub resource: String,
    pub api_group: String,
    pub selection: Option<Selection>,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct Selection {
    pub mode: String,
    pub partial: Option<PartialSelection>,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct PartialSelection {
    pub machine_resource_selector: Option<Lenient<LabelSelector>>,
}

/// `status.bootImageSkewEnforcementStatus`: the operator owns `mode`, this
/// job writes `automatic`.
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct SkewEnforcementStatus {
    pub mode: Option<String>,
    pub automatic: Option<AutomaticSkew>,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct AutomaticSkew {
    pub ocp_version: Option<String>,
    pub rhcos_version: Option<String>,
}

/// ClusterVersion `version`: stability, the release and its architecture.
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct ClusterVersion {
    pub status: ClusterVersionStatus,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct ClusterVersionStatus {
    /// Newest first.
    pub history: Vec<UpdateHistory>,
    pub desired: Option<Release>,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct UpdateHistory {
    pub state: Option<String>,
    pub version: Option<String>,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct Release {
    pub version: Option<String>,
    pub architecture: Option<String>,
}

/// Infrastructure `cluster`: the platform, and on vSphere its vCenters
/// and failure domains.
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct Infrastructure {
    pub spec: InfrastructureSpec,
    pub status: InfrastructureStatus,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct InfrastructureSpec {
    pub platform_spec: PlatformSpec,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct PlatformSpec {
    /// Lenient: a malformed vSphere section fails vSphere MachineSets only,
    /// where the rules read it, not the whole Infrastructure.
    pub vsphere: Option<Lenient<VspherePlatformSpec>>,
}

/// `spec.platformSpec.vsphere`, reduced to what the failure-domain match
/// and the import read (openshift/api `config/v1` `VSpherePlatformSpec`).
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct VspherePlatformSpec {
    pub vcenters: Vec<VsphereVcenter>,
    pub failure_domains: Vec<VsphereFailureDomain>,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct VsphereVcenter {
    pub server: String,
    /// Its HTTPS port (upstream's controller always uses 443).
    pub port: Option<u16>,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq, Eq)]
#[serde(default, rename_all = "camelCase")]
pub struct VsphereFailureDomain {
    pub name: String,
    pub server: String,
    pub topology: VsphereTopology,
    pub zone_affinity: Option<VsphereZoneAffinity>,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq, Eq)]
#[serde(default, rename_all = "camelCase")]
pub struct VsphereTopology {
    pub datacenter: String,
    pub compute_cluster: String,
    pub networks: Vec<String>,
    pub datastore: String,
    pub resource_pool: String,
    pub folder: String,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq, Eq)]
#[serde(default, rename_all = "camelCase")]
pub struct VsphereZoneAffinity {
    pub host_group: Option<VsphereHostGroup>,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq, Eq)]
#[serde(default, rename_all = "camelCase")]
pub struct VsphereHostGroup {
    pub vm_group: String,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct InfrastructureStatus {
    pub platform_status: Option<PlatformStatus>,
    /// The deprecated field older clusters still fill.
    pub platform: Option<String>,
    /// Names the cluster's vSphere templates and its vCenter tag.
    pub infrastructure_name: Option<String>,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct PlatformStatus {
    #[serde(rename = "type")]
    pub type_: Option<String>,
    pub azure: Option<AzurePlatformStatus>,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct AzurePlatformStatus {
    pub cloud_name: Option<String>,
}

/// A ConfigMap's `data`: the stream ConfigMap, or the known images.
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct ConfigMapData {
    pub data: BTreeMap<String, String>,
}

/// A user-data Secret: `data` as the API serves it, or `stringData` as
/// manifests write it.
#[derive(Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct UserDataSecret {
    pub data: BTreeMap<String, Base64>,
    pub string_data: BTreeMap<String, String>,
}

/// Bytes written as base64 (surrounding whitespace allowed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Base64(pub Vec<u8>);

impl<'de> Deserialize<'de> for Base64 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use base64::Engine as _;
        let text = String::deserialize(deserializer)?;
        base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map(Base64)
            .map_err(|e| serde::de::Error::custom(format!("is not valid base64: {e}")))
    }
}

impl From<k8s_openapi::api::core::v1::Secret> for UserDataSecret {
    fn from(secret: k8s_openapi::api::core::v1::Secret) -> Self {
        let data = secret.data.unwrap_or_default().into_iter();
        UserDataSecret {
            data: data.map(|(key, bytes)| (key, Base64(bytes.0))).collect(),
            string_data: secret.string_data.unwrap_or_default(),
        }
    }
}

impl Input for MachineConfiguration {
    const KIND: &'static str = "MachineConfiguration";
}
impl Input for ClusterVersion {
    const KIND: &'static str = "ClusterVersion";
}
impl Input for Infrastructure {
    const KIND: &'static str = "Infrastructure";
}
impl Input for ConfigMapData {
    const KIND: &'static str = "ConfigMap";
}
impl Input for UserDataSecret {
    const KIND: &'static str = "Secret";

    fn decode(object: &Value) -> Result<Self, InputError> {
        decode_as(object, "user-data Secret")
    }
}

/// The known-images ConfigMap, named as such in its errors.
pub fn known_images_configmap(object: &Value) -> Result<ConfigMapData, InputError> {
    decode_as(object, "known-images ConfigMap")
}
