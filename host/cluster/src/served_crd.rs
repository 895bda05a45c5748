//! Does the cluster's CRD take what this host will write? The host checks
//! the served CustomResourceDefinition of a kind it writes against the
//! fields its writer puts in (given by the writer, so a field it writes
//! only under a feature gate is asked for only then), and says what is
//! missing in `/readyz` and a log line, rather than failing writes one by
//! one. On OpenShift the CRD is the cluster's (installed from the release
//! payload with the schema of its feature set), so it may lack fields.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use kube::{Api, Client};

use super::watch::Readiness;

/// How often the CRD is read again: a cluster upgrade or a feature set
/// change replaces it.
const RECHECK: Duration = Duration::from_secs(30);

/// Why the served CRD cannot take the writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
    #[error("version {version} is not served")]
    NotServed { version: String },
    #[error("version {version} has no schema")]
    NoSchema { version: String },
    #[error("version {version} has no status subresource")]
    NoStatusSubresource { version: String },
    #[error("version {version} does not declare {}", .fields.join(", "))]
    Undeclared {
        version: String,
        fields: Vec<String>,
    },
}

/// Checks that `version` of `crd` is served, has a status subresource if
/// any field is under `status`, and declares every field of `fields`
/// (dotted paths, `[]` for the items of a list: `status.conditions[].type`).
/// A schema that keeps unknown fields at some level declares everything
/// below it.
pub fn check(
    crd: &CustomResourceDefinition,
    version: &str,
    fields: &[&str],
) -> Result<(), Mismatch> {
    let owned = || version.to_owned();
    let Some(served) = crd
        .spec
        .versions
        .iter()
        .find(|v| v.name == version && v.served)
    else {
        return Err(Mismatch::NotServed { version: owned() });
    };
    let schema = served
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .ok_or_else(|| Mismatch::NoSchema { version: owned() })?;
    let writes_status = fields.iter().any(|f| f.starts_with("status."));
    let has_status = served
        .subresources
        .as_ref()
        .is_some_and(|s| s.status.is_some());
    if writes_status && !has_status {
        return Err(Mismatch::NoStatusSubresource { version: owned() });
    }
    let undeclared: Vec<String> = fields
        .iter()
        .filter(|field| !declares(schema, field))
        .map(|field| (*field).to_owned())
        .collect();
    if undeclared.is_empty() {
        Ok(())
    } else {
        Err(Mismatch::Undeclared {
            version: owned(),
            fields: undeclared,
        })
    }
}

fn declares(schema: &JSONSchemaProps, field: &str) -> bool {
    let mut node = schema;
    for step in field.split('.') {
        if node.x_kubernetes_preserve_unknown_fields == Some(true) {
            return true;
        }
        let (name, items) = match step.strip_suffix("[]") {
            Some(name) => (name, true),
            None => (step, false),
        };
        let Some(child) = property(node, name) else {
            return false;
        };
        node = child;
        if items {
            if node.x_kubernetes_preserve_unknown_fields == Some(true) {
                return true;
            }
            match &node.items {
                Some(JSONSchemaPropsOrArray::Schema(item)) => node = item,
                _ => return false,
            }
        }
    }
    true
}

/// A named property, or the schema of a map's values.
fn property<'a>(node: &'a JSONSchemaProps, name: &str) -> Option<&'a JSONSchemaProps> {
    if let Some(child) = node.properties.as_ref().and_then(|p| p.get(name)) {
        return Some(child);
    }
    match &node.additional_properties {
        Some(JSONSchemaPropsOrBool::Schema(values)) => Some(values),
        _ => None,
    }
}

/// Checks the CRD `name` now and every [`RECHECK`], and keeps
/// `readiness` not ready (under `name`) while it does not take `fields`
/// of `version`. Logs each change of verdict once.
pub async fn follow(
    client: Client,
    readiness: Readiness,
    name: &'static str,
    version: &'static str,
    fields: impl Fn() -> Vec<&'static str>,
) {
    let api: Api<CustomResourceDefinition> = Api::all(client);
    let mut last: Option<Option<String>> = None;
    loop {
        let problem = match api.get_opt(name).await {
            Ok(Some(crd)) => check(&crd, version, &fields()).err().map(|e| e.to_string()),
            Ok(None) => Some("is not installed".to_owned()),
            Err(err) => Some(format!("cannot be read: {err}")),
        }
        .map(|why| {
            format!(
                "the served CustomResourceDefinition {name} {why}: the host would fail to write it"
            )
        });
        if last.as_ref() != Some(&problem) {
            match &problem {
                Some(problem) => tracing::error!(crd = name, %problem, "not ready"),
                None => tracing::info!(
                    crd = name,
                    version,
                    "the served CRD takes every field the host writes"
                ),
            }
            readiness.set_problem(name, problem.clone());
            last = Some(problem);
        }
        tokio::time::sleep(RECHECK).await;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn crd(version: Value) -> CustomResourceDefinition {
        serde_json::from_value(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {"group": "example.com", "scope": "Cluster",
                "names": {"plural": "things", "kind": "Thing"},
                "versions": [version]},
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "configVersion": {"type": "object", "properties": {"desired": {"type": "string"}}},
            }},
            "status": {"type": "object", "properties": {
                "conditions": {"type": "array", "items": {"type": "object", "properties": {
                    "type": {"type": "string"}, "status": {"type": "string"},
                }}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            }},
        }})
    }

    fn v1(schema: Value) -> Value {
        json!({"name": "v1", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": schema}, "subresources": {"status": {}}})
    }

    #[test]
    fn every_written_field_declared_passes() {
        let fields = [
            "spec.configVersion.desired",
            "status.conditions[].type",
            "status.labels.any",
            "status.free.anything.below",
        ];
        assert_eq!(check(&crd(v1(schema())), "v1", &fields), Ok(()));
    }

    #[test]
    fn the_fields_a_schema_lacks_are_named() {
        // A Default-feature-set MCN CRD: no configImage.
        let fields = [
            "spec.configVersion.desired",
            "spec.configImage.desiredImage",
            "status.conditions[].reason",
        ];
        assert_eq!(
            check(&crd(v1(schema())), "v1", &fields),
            Err(Mismatch::Undeclared {
                version: "v1".into(),
                fields: vec![
                    "spec.configImage.desiredImage".into(),
                    "status.conditions[].reason".into()
                ],
            })
        );
    }

    #[test]
    fn an_unserved_version_or_a_missing_schema_or_subresource_is_said() {
        let mut unserved = v1(schema());
        unserved["served"] = json!(false);
        assert_eq!(
            check(&crd(unserved), "v1", &["spec.x"]),
            Err(Mismatch::NotServed {
                version: "v1".into()
            })
        );
        assert_eq!(
            check(&crd(v1(schema())), "v1alpha1", &["spec.x"]),
            Err(Mismatch::NotServed {
                version: "v1alpha1".into()
            })
        );
        let no_schema = json!({"name": "v1", "served": true, "storage": true});
        assert_eq!(
            check(&crd(no_schema), "v1", &["spec.x"]),
            Err(Mismatch::NoSchema {
                version: "v1".into()
            })
        );
        let mut no_status = v1(schema());
        no_status["subresources"] = json!({});
        assert_eq!(
            check(&crd(no_status), "v1", &["status.conditions[].type"]),
            Err(Mismatch::NoStatusSubresource {
                version: "v1".into()
            })
        );
    }

    #[test]
    fn a_list_without_an_item_schema_declares_nothing_inside() {
        let broken = json!({"type": "object", "properties": {
            "status": {"type": "object", "properties": {"conditions": {"type": "array"}}},
        }});
        assert!(matches!(
            check(&crd(v1(broken)), "v1", &["status.conditions[].type"]),
            Err(Mismatch::Undeclared { .. })
        ));
    }
}
