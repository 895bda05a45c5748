//! The MachineConfigNode API (`machineconfiguration.openshift.io/v1`) as
//! Rust types; the CRDs in `deploy/` are generated from them (`mco-host crds`),
//! one per feature set as upstream generates them.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps, JSONSchemaPropsOrArray,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, CustomResourceExt, KubeSchema};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use mco_job::crds::{FEATURE_SET_ANNOTATION, FeatureSet};

/// The CEL rule upstream's MCN types put on every config and object name.
const DNS1123_SUBDOMAIN: &str = "!format.dns1123Subdomain().validate(self).hasValue()";
/// The message upstream's CRD gives with [`DNS1123_SUBDOMAIN`] (tools match
/// on it).
const DNS1123_SUBDOMAIN_MESSAGE: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character.";
/// The CEL rule upstream puts on every image pull spec (`configImage` and
/// the internal release images): one `@`, then a sha256 digest.
/// `mco_k8s_rules::is_image_digest` accepts what this and
/// [`CONFIG_IMAGE_NAME`] accept.
const IMAGE_DIGEST: &str =
    r"(self.split('@').size() == 2 && self.split('@')[1].matches('^sha256:[a-f0-9]{64}$'))";
const IMAGE_DIGEST_MESSAGE: &str = "the OCI Image reference must end with a valid '@sha256:<digest>' suffix, where '<digest>' is 64 characters long";
/// The CEL rule upstream puts on the name part of every `configImage` pull
/// spec: a dot-qualified host, an optional port, at most one namespace.
const CONFIG_IMAGE_NAME: &str = r"(self.split('@')[0].matches('^([a-zA-Z0-9-]+\\.)+[a-zA-Z0-9-]+(:[0-9]{2,5})?/([a-zA-Z0-9-_]{0,61}/)?[a-zA-Z0-9-_.]*?$'))";
const CONFIG_IMAGE_NAME_MESSAGE: &str = "the OCI Image name should follow the host[:port][/namespace]/name format, resembling a valid URL without the scheme";

/// Upstream marks both `configImage` fields
/// `+openshift:enable:FeatureGate=ImageModeStatusReporting`, a gate of
/// TechPreviewNoUpgrade only (openshift/api `features/features.go`):
/// openshift/api generates one MCN CRD per feature set
/// (`machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfignodes-SelfManagedHA-<set>.crd.yaml`),
/// each without the fields of the gates its set leaves off.
fn image_mode_status_reporting(set: FeatureSet) -> bool {
    set == FeatureSet::TechPreviewNoUpgrade
}

/// Reports one node's MachineConfig update progress. Named after its node.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "machineconfiguration.openshift.io",
    version = "v1",
    kind = "MachineConfigNode",
    plural = "machineconfignodes",
    singular = "machineconfignode",
    status = "MachineConfigNodeStatus",
    derive = "Default",
    label("openshift.io/operator-managed", ""),
    doc = "MachineConfigNode describes the health and update progress of the Machine Config Daemon on one node.",
    validation = Rule::new("self.metadata.name == self.spec.node.name").message("spec.node.name should match metadata.name"),
    printcolumn(name = "PoolName", type_ = "string", json_path = ".spec.pool.name"),
    printcolumn(name = "DesiredConfig", type_ = "string", json_path = ".spec.configVersion.desired"),
    printcolumn(name = "CurrentConfig", type_ = "string", json_path = ".status.configVersion.current"),
    printcolumn(name = "Updated", type_ = "string", json_path = ".status.conditions[?(@.type==\"Updated\")].status"),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp"),
    printcolumn(name = "UpdatePrepared", type_ = "string", json_path = ".status.conditions[?(@.type==\"UpdatePrepared\")].status", priority = "1"),
    printcolumn(name = "UpdateExecuted", type_ = "string", json_path = ".status.conditions[?(@.type==\"UpdateExecuted\")].status", priority = "1"),
    printcolumn(name = "UpdatePostActionComplete", type_ = "string", json_path = ".status.conditions[?(@.type==\"UpdatePostActionComplete\")].status", priority = "1"),
    printcolumn(name = "UpdateComplete", type_ = "string", json_path = ".status.conditions[?(@.type==\"UpdateComplete\")].status", priority = "1"),
    printcolumn(name = "Resumed", type_ = "string", json_path = ".status.conditions[?(@.type==\"Resumed\")].status", priority = "1"),
    printcolumn(name = "UpdatedFilesAndOS", type_ = "string", json_path = ".status.conditions[?(@.type==\"AppliedFilesAndOS\")].status", priority = "1"),
    printcolumn(name = "CordonedNode", type_ = "string", json_path = ".status.conditions[?(@.type==\"Cordoned\")].status", priority = "1"),
    printcolumn(name = "DrainedNode", type_ = "string", json_path = ".status.conditions[?(@.type==\"Drained\")].status", priority = "1"),
    printcolumn(name = "RebootedNode", type_ = "string", json_path = ".status.conditions[?(@.type==\"RebootedNode\")].status", priority = "1"),
    printcolumn(name = "UncordonedNode", type_ = "string", json_path = ".status.conditions[?(@.type==\"Uncordoned\")].status", priority = "1")
)]
#[serde(rename_all = "camelCase")]
pub struct MachineConfigNodeSpec {
    pub node: ObjectName,
    pub pool: ObjectName,
    pub config_version: SpecConfigVersion,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_image: Option<SpecConfigImage>,
}

/// A reference by name (upstream `MCOObjectReference`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
pub struct ObjectName {
    #[x_kube(validation = Rule::new(DNS1123_SUBDOMAIN).message(DNS1123_SUBDOMAIN_MESSAGE))]
    #[schemars(length(max = 253))]
    pub name: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
pub struct SpecConfigVersion {
    /// The node's desiredConfig annotation, or `not-yet-set`.
    #[x_kube(validation = Rule::new(DNS1123_SUBDOMAIN).message(DNS1123_SUBDOMAIN_MESSAGE))]
    #[schemars(length(max = 253))]
    pub desired: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpecConfigImage {
    #[x_kube(validation = Rule::new(IMAGE_DIGEST).message(IMAGE_DIGEST_MESSAGE))]
    #[x_kube(validation = Rule::new(CONFIG_IMAGE_NAME).message(CONFIG_IMAGE_NAME_MESSAGE))]
    #[schemars(length(min = 1, max = 447))]
    pub desired_image: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineConfigNodeStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]), transform = metav1_condition_validation)]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self >= oldSelf").message("observedGeneration must not decrease"))]
    #[schemars(range(min = 1))]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_version: Option<StatusConfigVersion>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_image: Option<StatusConfigImage>,
    // The fields below are upstream's, written by the daemon from what only
    // the node knows (its `pkg/daemon/pinned_image_set.go`,
    // `irreconcilable_diff_reporter.go` and `internalreleaseimage/`). They
    // are in the schema so another writer's values are kept, not pruned; our
    // status apply never sends them (empty is never serialized), so it never
    // owns them.
    /// Written by the daemon's pinned image set manager.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub pinned_image_sets: Vec<PinnedImageSetStatus>,
    /// Differences between the node's install-time and desired storage
    /// config, from the daemon's irreconcilable change reporter.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 32), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["fieldPath"]))]
    pub irreconcilable_changes: Vec<IrreconcilableChange>,
    /// Written by the daemon's internal release image manager.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal_release_image: Option<InternalReleaseImageStatus>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.desiredGeneration) && has(self.currentGeneration) ? self.desiredGeneration >= self.currentGeneration : true").message("desired generation must be greater than or equal to the current generation"))]
#[x_kube(validation = Rule::new("has(self.lastFailedGeneration) && has(self.desiredGeneration) ? self.desiredGeneration >= self.lastFailedGeneration : true").message("desired generation must be greater than or equal to the last failed generation"))]
#[x_kube(validation = Rule::new("has(self.lastFailedGeneration) ? has(self.lastFailedGenerationError) : true").message("last failed generation error must be defined on image pull and pin failure"))]
pub struct PinnedImageSetStatus {
    #[x_kube(validation = Rule::new(DNS1123_SUBDOMAIN).message(DNS1123_SUBDOMAIN_MESSAGE))]
    #[schemars(length(max = 253))]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self >= oldSelf").message("currentGeneration must not decrease"))]
    #[schemars(range(min = 1))]
    pub current_generation: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self >= oldSelf").message("desiredGeneration must not decrease"))]
    #[schemars(range(min = 1))]
    pub desired_generation: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self >= oldSelf").message("lastFailedGeneration must not decrease"))]
    #[schemars(range(min = 1))]
    pub last_failed_generation: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32768))]
    pub last_failed_generation_error: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct IrreconcilableChange {
    /// Where in the MachineConfig the difference is, e.g.
    /// `spec.config.storage.disks[0]`.
    #[x_kube(validation = Rule::new("self.startsWith('spec.')").message("The fieldPath must start with `spec.`"))]
    #[x_kube(validation = Rule::new(r"self.matches('^[\\da-zA-Z\\.\\[\\]]+$')").message("The fieldPath must consist only of alphanumeric characters, brackets [] and dots ('.')."))]
    #[schemars(length(min = 1, max = 70))]
    pub field_path: String,
    #[schemars(length(min = 1, max = 4096))]
    pub diff: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
pub struct InternalReleaseImageStatus {
    #[schemars(length(min = 1, max = 32), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub releases: Vec<InternalRelease>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
pub struct InternalRelease {
    #[x_kube(validation = Rule::new(r"self.matches('^ocp-release-bundle-[0-9]+\\.[0-9]+\\.[0-9]+-[A-Za-z0-9._-]+$')").message("must be ocp-release-bundle-<version>-<arch|stream> and <= 64 chars"))]
    #[schemars(length(min = 1, max = 64))]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new(IMAGE_DIGEST).message(IMAGE_DIGEST_MESSAGE))]
    #[x_kube(validation = Rule::new(r"(self.split('@')[0].matches('^(localhost|([a-zA-Z0-9-]+\\.)+[a-zA-Z0-9-]+)(:[0-9]{2,5})?/([a-zA-Z0-9-_]{0,61}/)?[a-zA-Z0-9-_.]*?$'))").message("the OCI Image name should follow the host[:port][/namespace]/name format, resembling a valid URL without the scheme; host must be either 'localhost' or a dot-qualified domain name"))]
    #[schemars(length(min = 1, max = 447))]
    pub image: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 5), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]), transform = metav1_condition_validation)]
    pub conditions: Vec<Condition>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
pub struct StatusConfigVersion {
    /// The node's currentConfig annotation; omitted while it is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new(DNS1123_SUBDOMAIN).message(DNS1123_SUBDOMAIN_MESSAGE))]
    #[schemars(length(max = 253))]
    pub current: Option<String>,
    #[x_kube(validation = Rule::new(DNS1123_SUBDOMAIN).message(DNS1123_SUBDOMAIN_MESSAGE))]
    #[schemars(length(max = 253))]
    pub desired: String,
}

/// Upstream refuses an empty one (`minProperties: 1`): with neither image
/// the field is left out.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1))]
pub struct StatusConfigImage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new(IMAGE_DIGEST).message(IMAGE_DIGEST_MESSAGE))]
    #[x_kube(validation = Rule::new(CONFIG_IMAGE_NAME).message(CONFIG_IMAGE_NAME_MESSAGE))]
    #[schemars(length(min = 1, max = 447))]
    pub current_image: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new(IMAGE_DIGEST).message(IMAGE_DIGEST_MESSAGE))]
    #[x_kube(validation = Rule::new(CONFIG_IMAGE_NAME).message(CONFIG_IMAGE_NAME_MESSAGE))]
    #[schemars(length(min = 1, max = 447))]
    pub desired_image: Option<String>,
}

/// What `metav1.Condition` declares for its fields (apimachinery's
/// `Condition` markers), which the k8s-openapi schema leaves out: an
/// apiserver with upstream's CRD refuses a condition outside them, so ours
/// must too, or a test here would pass a write the cluster refuses.
fn metav1_condition_validation(schema: &mut schemars::Schema) {
    let Some(properties) = schema
        .get_mut("items")
        .and_then(|items| items.get_mut("properties"))
        .and_then(|p| p.as_object_mut())
    else {
        return;
    };
    let constraints = json!({
        "message": {"maxLength": 32768},
        "observedGeneration": {"minimum": 0},
        "reason": {"minLength": 1, "maxLength": 1024, "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"},
        "status": {"enum": ["True", "False", "Unknown"]},
        "type": {"maxLength": 316, "pattern": r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"},
    });
    for (field, rules) in constraints.as_object().into_iter().flatten() {
        if let (Some(target), Some(rules)) = (
            properties.get_mut(field).and_then(Value::as_object_mut),
            rules.as_object(),
        ) {
            target.extend(rules.clone());
        }
    }
}

/// The MCN CRD as upstream ships it for `set`: the one schema of the types
/// above, less the fields of the gates `set` leaves off, so both sets come
/// from one source.
pub fn machine_config_node_crd(set: FeatureSet) -> CustomResourceDefinition {
    let mut crd = MachineConfigNode::crd();
    // The derive leaves `listKind` to the apiserver's default; upstream
    // spells it out.
    crd.spec.names.list_kind = Some("MachineConfigNodeList".into());
    crd.metadata.annotations = Some(BTreeMap::from([(
        FEATURE_SET_ANNOTATION.to_owned(),
        set.name().to_owned(),
    )]));
    let schemas = crd
        .spec
        .versions
        .iter_mut()
        .filter_map(|v| v.schema.as_mut()?.open_api_v3_schema.as_mut());
    for schema in schemas {
        as_upstream(schema);
        if !image_mode_status_reporting(set) {
            for parent in ["spec", "status"] {
                if let Some(fields) = properties(schema, parent) {
                    fields.remove("configImage");
                }
            }
        }
    }
    crd
}

/// The MCN CRD of each feature set, with the path under `deploy/` that
/// keeps it: an OpenShift cluster owns it, so each is a Kustomize
/// component for plain Kubernetes.
pub fn crds() -> Vec<(&'static str, CustomResourceDefinition)> {
    vec![
        (
            "components/machineconfignode-crd/machineconfignodes.yaml",
            machine_config_node_crd(FeatureSet::Default),
        ),
        (
            "components/machineconfignode-crd-techpreview/machineconfignodes.yaml",
            machine_config_node_crd(FeatureSet::TechPreviewNoUpgrade),
        ),
    ]
}

fn properties<'a>(
    schema: &'a mut JSONSchemaProps,
    field: &str,
) -> Option<&'a mut BTreeMap<String, JSONSchemaProps>> {
    schema
        .properties
        .as_mut()?
        .get_mut(field)?
        .properties
        .as_mut()
}

/// What the derive's schema says differently from upstream's generator
/// with the same meaning to the apiserver: the derive marks every `Option`
/// `nullable` (upstream never does, so the apiserver prunes a `null`
/// instead of storing it) and titles the root; upstream declares the
/// object's `apiVersion`, `kind` and `metadata`.
fn as_upstream(root: &mut JSONSchemaProps) {
    fn walk(schema: &mut JSONSchemaProps) {
        schema.nullable = None;
        schema.title = None;
        for child in schema.properties.iter_mut().flat_map(|p| p.values_mut()) {
            walk(child);
        }
        match schema.items.as_mut() {
            Some(JSONSchemaPropsOrArray::Schema(items)) => walk(items),
            Some(JSONSchemaPropsOrArray::Schemas(items)) => items.iter_mut().for_each(walk),
            None => {}
        }
    }
    walk(root);
    let typed = |type_: &str| JSONSchemaProps {
        type_: Some(type_.to_owned()),
        ..JSONSchemaProps::default()
    };
    let declared = root.properties.get_or_insert_default();
    declared.insert("apiVersion".to_owned(), typed("string"));
    declared.insert("kind".to_owned(), typed("string"));
    declared.insert("metadata".to_owned(), typed("object"));
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use mco_job::crds::is_for_feature_set;

    fn crd_of(set: FeatureSet) -> Value {
        serde_json::to_value(machine_config_node_crd(set)).unwrap_or_default()
    }

    /// What every feature set shares is tested on the fuller one.
    fn crd() -> Value {
        crd_of(FeatureSet::TechPreviewNoUpgrade)
    }

    fn schema(crd: &Value) -> &Value {
        &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    }

    #[test]
    fn names_scope_and_subresources_match_upstream() {
        let crd = crd();
        assert_eq!(
            crd["metadata"]["name"],
            "machineconfignodes.machineconfiguration.openshift.io"
        );
        assert_eq!(crd["spec"]["scope"], "Cluster");
        assert_eq!(crd["spec"]["names"]["listKind"], "MachineConfigNodeList");
        let version = &crd["spec"]["versions"][0];
        assert_eq!(
            (
                version["name"].as_str(),
                version["served"].as_bool(),
                version["storage"].as_bool()
            ),
            (Some("v1"), Some(true), Some(true))
        );
        assert_eq!(version["subresources"]["status"], json!({}));
    }

    #[test]
    fn printer_columns_are_upstreams() {
        let crd = crd();
        let columns = crd["spec"]["versions"][0]["additionalPrinterColumns"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let shown: Vec<(String, i64)> = columns
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap_or_default().to_string(),
                    c["priority"].as_i64().unwrap_or(0),
                )
            })
            .collect();
        let default: Vec<&str> = shown
            .iter()
            .filter(|(_, p)| *p == 0)
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(
            default,
            [
                "PoolName",
                "DesiredConfig",
                "CurrentConfig",
                "Updated",
                "Age"
            ]
        );
        assert_eq!(shown.iter().filter(|(_, p)| *p == 1).count(), 10);
        assert_eq!(columns[1]["jsonPath"], ".spec.configVersion.desired");
        assert_eq!(
            columns[10]["jsonPath"],
            ".status.conditions[?(@.type==\"AppliedFilesAndOS\")].status"
        );
    }

    /// Upstream's CRD (openshift/api `machineconfiguration/v1`,
    /// `types_machineconfignode.go`) validates conditions as
    /// `metav1.Condition` and names with its RFC 1123 message; a write this
    /// CRD accepts must be one the cluster's accepts.
    #[test]
    fn conditions_and_names_are_validated_as_upstream_does() {
        let crd = crd();
        let status = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
            ["properties"];
        let releases = &status["internalReleaseImage"]["properties"]["releases"]["items"];
        for conditions in [&status["conditions"], &releases["properties"]["conditions"]] {
            let fields = &conditions["items"]["properties"];
            assert_eq!(
                fields["status"]["enum"],
                json!(["True", "False", "Unknown"])
            );
            assert_eq!(fields["message"]["maxLength"], 32768);
            assert_eq!(fields["reason"]["minLength"], 1);
            assert_eq!(fields["reason"]["maxLength"], 1024);
            assert_eq!(fields["type"]["maxLength"], 316);
            assert!(fields["reason"]["pattern"].is_string());
            assert!(fields["type"]["pattern"].is_string());
            assert_eq!(fields["observedGeneration"]["minimum"].as_f64(), Some(0.0));
        }
        for name in [
            &status["configVersion"]["properties"]["current"],
            &status["configVersion"]["properties"]["desired"],
        ] {
            assert_eq!(
                name["x-kubernetes-validations"][0]["message"],
                DNS1123_SUBDOMAIN_MESSAGE
            );
        }
        // A release the daemon reports before it has an image is valid.
        assert_eq!(releases["required"], json!(["name"]));
    }

    #[test]
    fn validation_rules_are_in_the_schema() {
        let crd = crd();
        let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        assert_eq!(
            schema["x-kubernetes-validations"][0]["rule"],
            "self.metadata.name == self.spec.node.name"
        );
        let conditions = &schema["properties"]["status"]["properties"]["conditions"];
        assert_eq!(conditions["x-kubernetes-list-type"], "map");
        assert_eq!(conditions["x-kubernetes-list-map-keys"], json!(["type"]));
        assert_eq!(conditions["maxItems"], 20);
        let generation = &schema["properties"]["status"]["properties"]["observedGeneration"];
        assert_eq!(generation["minimum"].as_f64(), Some(1.0));
        assert_eq!(
            generation["x-kubernetes-validations"][0]["rule"],
            "self >= oldSelf"
        );
        let required = schema["properties"]["spec"]["required"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for field in ["node", "pool", "configVersion"] {
            assert!(
                required.contains(&json!(field)),
                "spec.{field} not required"
            );
        }
    }

    #[test]
    fn default_has_no_config_image_anywhere() {
        let default = crd_of(FeatureSet::Default);
        let text = default.to_string();
        assert!(!text.contains("configImage"), "{text}");
        // Nothing else differs: the Default schema is the full one less
        // the gated fields.
        let mut full = crd();
        for parent in ["spec", "status"] {
            let fields = full["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
                [parent]["properties"]
                .as_object_mut();
            assert!(
                fields.is_some_and(|f| f.remove("configImage").is_some()),
                "{parent}.configImage"
            );
        }
        assert_eq!(schema(&full), schema(&default));
        assert!(schema(&default)["properties"]["status"]["properties"]["conditions"].is_object());
    }

    #[test]
    fn tech_preview_validates_config_image_as_upstream_does() {
        let crd = crd();
        let properties = &schema(&crd)["properties"];
        let spec = &properties["spec"]["properties"]["configImage"];
        assert_eq!(spec["required"], json!(["desiredImage"]));
        let status = &properties["status"]["properties"]["configImage"];
        assert_eq!(status["minProperties"], 1);
        assert_eq!(status["required"], Value::Null);
        let rules = json!([
            {"rule": IMAGE_DIGEST, "message": IMAGE_DIGEST_MESSAGE},
            {"rule": CONFIG_IMAGE_NAME, "message": CONFIG_IMAGE_NAME_MESSAGE},
        ]);
        for image in [
            &spec["properties"]["desiredImage"],
            &status["properties"]["currentImage"],
            &status["properties"]["desiredImage"],
        ] {
            assert_eq!(image["type"], "string");
            assert_eq!(image["minLength"], 1);
            assert_eq!(image["maxLength"], 447);
            assert_eq!(image["x-kubernetes-validations"], rules, "{image}");
        }
    }

    #[test]
    fn each_set_is_annotated_with_its_name() {
        for (set, name) in [
            (FeatureSet::Default, "Default"),
            (FeatureSet::TechPreviewNoUpgrade, "TechPreviewNoUpgrade"),
        ] {
            let crd = machine_config_node_crd(set);
            let annotations = crd.metadata.annotations.clone().unwrap_or_default();
            assert_eq!(
                annotations.get(FEATURE_SET_ANNOTATION).map(String::as_str),
                Some(name)
            );
            assert!(is_for_feature_set(&crd, set));
            let other = FeatureSet::ALL.into_iter().find(|s| *s != set);
            assert!(other.is_some_and(|other| !is_for_feature_set(&crd, other)));
        }
        let mut unannotated = machine_config_node_crd(FeatureSet::Default);
        unannotated.metadata.annotations = None;
        assert!(
            FeatureSet::ALL
                .into_iter()
                .all(|set| is_for_feature_set(&unannotated, set))
        );
    }

    /// Upstream's generator marks nothing `nullable` and declares the
    /// object's own fields; the derive does otherwise until
    /// [`as_upstream`].
    #[test]
    fn the_schema_reads_as_upstreams_generator_writes_it() {
        for set in FeatureSet::ALL {
            let crd = crd_of(set);
            let text = crd.to_string();
            assert!(!text.contains("\"nullable\""), "{set:?}");
            let root = schema(&crd);
            assert_eq!(root["title"], Value::Null);
            for (field, type_) in [
                ("apiVersion", "string"),
                ("kind", "string"),
                ("metadata", "object"),
            ] {
                assert_eq!(root["properties"][field], json!({"type": type_}), "{field}");
            }
        }
    }

    /// The TechPreviewNoUpgrade CRD takes the writes with `configImage`,
    /// the Default one only those without.
    #[test]
    fn the_generated_mcn_crds_take_what_the_writer_writes_with_their_gates() {
        use crate::write::{VERSION, written_fields};
        use mco_cluster::served_crd::{Mismatch, check};
        let tech_preview = machine_config_node_crd(FeatureSet::TechPreviewNoUpgrade);
        assert_eq!(check(&tech_preview, VERSION, &written_fields(true)), Ok(()));
        let default = machine_config_node_crd(FeatureSet::Default);
        assert_eq!(check(&default, VERSION, &written_fields(false)), Ok(()));
        assert_eq!(
            check(&default, VERSION, &written_fields(true)),
            Err(Mismatch::Undeclared {
                version: VERSION.into(),
                fields: vec![
                    "spec.configImage.desiredImage".into(),
                    "status.configImage.currentImage".into(),
                    "status.configImage.desiredImage".into(),
                ],
            })
        );
    }
}
