//! The MachineConfigNode API (`machineconfiguration.openshift.io/v1`) as
//! Rust types; the CRD in `deploy/` is generated from them (`mco-host crds`).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, CustomResourceExt, KubeSchema};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The CEL rule upstream's MCN types put on every config and object name.
const DNS1123_SUBDOMAIN: &str = "!format.dns1123Subdomain().validate(self).hasValue()";
/// The message upstream's CRD gives with [`DNS1123_SUBDOMAIN`] (tools match
/// on it).
const DNS1123_SUBDOMAIN_MESSAGE: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character.";

/// Reports one node's MachineConfig update progress. Named after its node.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "machineconfiguration.openshift.io",
    version = "v1",
    kind = "MachineConfigNode",
    plural = "machineconfignodes",
    singular = "machineconfignode",
    status = "MachineConfigNodeStatus",
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
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
pub struct ObjectName {
    #[x_kube(validation = Rule::new(DNS1123_SUBDOMAIN).message(DNS1123_SUBDOMAIN_MESSAGE))]
    #[schemars(length(max = 253))]
    pub name: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
pub struct SpecConfigVersion {
    /// The node's desiredConfig annotation, or `not-yet-set`.
    #[x_kube(validation = Rule::new(DNS1123_SUBDOMAIN).message(DNS1123_SUBDOMAIN_MESSAGE))]
    #[schemars(length(max = 253))]
    pub desired: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpecConfigImage {
    #[schemars(length(max = 447))]
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
#[x_kube(validation = Rule::new("!has(self.desiredGeneration) || !has(self.currentGeneration) || self.desiredGeneration >= self.currentGeneration").message("desired generation must be greater than or equal to the current generation"))]
#[x_kube(validation = Rule::new("!has(self.desiredGeneration) || !has(self.lastFailedGeneration) || self.desiredGeneration >= self.lastFailedGeneration").message("desired generation must be greater than or equal to the last failed generation"))]
#[x_kube(validation = Rule::new("!has(self.lastFailedGeneration) || has(self.lastFailedGenerationError)").message("last failed generation error must be defined on image pull and pin failure"))]
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
    #[x_kube(validation = Rule::new(r"(self.split('@').size() == 2 && self.split('@')[1].matches('^sha256:[a-f0-9]{64}$'))").message("the OCI Image reference must end with a valid '@sha256:<digest>' suffix, where '<digest>' is 64 characters long"))]
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

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusConfigImage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 447))]
    pub current_image: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 447))]
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

/// The MCN CRD as upstream ships it (the derive leaves `listKind` to the
/// apiserver's default; upstream spells it out).
pub fn machine_config_node_crd() -> CustomResourceDefinition {
    let mut crd = MachineConfigNode::crd();
    crd.spec.names.list_kind = Some("MachineConfigNodeList".into());
    crd
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn crd() -> Value {
        serde_json::to_value(machine_config_node_crd()).unwrap_or_default()
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
}
