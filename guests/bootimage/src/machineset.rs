//! The parts of a MAPI MachineSet, or of a ControlPlaneMachineSet, that the
//! boot image rules look at.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::fields::{self, FieldError};

/// The input is not a MachineSet we can read at all.
///
/// This is different from a readable MachineSet with a broken providerSpec:
/// that one gets an `error` decision (the controller would report it in its
/// Degraded condition), while an `InputError` means the caller handed over
/// the wrong object (exit status 2 in `mco-host eval`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error("{what} must be a JSON object, got {found}")]
    NotAnObject {
        what: &'static str,
        found: &'static str,
    },
    #[error("expected kind {expected}, got {found:?}")]
    WrongKind {
        expected: &'static str,
        found: String,
    },
    #[error("{what} has no metadata.name")]
    MissingName { what: &'static str },
    #[error("invalid {what}: {source}")]
    Field {
        what: &'static str,
        #[source]
        source: FieldError,
    },
    #[error("invalid {what}: {message}")]
    Invalid { what: &'static str, message: String },
}

impl InputError {
    pub fn field(what: &'static str) -> impl FnOnce(FieldError) -> InputError {
        move |source| InputError::Field { what, source }
    }
}

/// Which object the rules decide for. The two carry the same providerSpec
/// kinds at different paths, and upstream treats a ControlPlaneMachineSet
/// differently where a MachineSet would be skipped (upstream `syncControlPlaneMachineSets` against `syncMAPIMachineSet`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MachineKind {
    #[default]
    MachineSet,
    ControlPlaneMachineSet,
}

/// `spec.template` of a ControlPlaneMachineSet holds the machine template
/// under this key, its only machine type.
pub const CPMS_MACHINE_TYPE: &str = "machines_v1beta1_machine_openshift_io";

impl MachineKind {
    /// `kind` of the Kubernetes object.
    pub fn kind(self) -> &'static str {
        match self {
            MachineKind::MachineSet => "MachineSet",
            MachineKind::ControlPlaneMachineSet => "ControlPlaneMachineSet",
        }
    }

    /// How messages name the object, as upstream's logs and errors do
    /// (`failed to reconcile machineset …` / `… ControlPlaneMachineSet …`).
    pub fn noun(self) -> &'static str {
        match self {
            MachineKind::MachineSet => "machineset",
            MachineKind::ControlPlaneMachineSet => "ControlPlaneMachineSet",
        }
    }

    /// Where `providerSpec.value` sits in the object, key by key: a merge
    /// patch for the object nests its providerSpec fragment in these keys.
    pub fn provider_spec_path(self) -> &'static [&'static str] {
        match self {
            MachineKind::MachineSet => &["spec", "template", "spec", "providerSpec", "value"],
            MachineKind::ControlPlaneMachineSet => &[
                "spec",
                "template",
                CPMS_MACHINE_TYPE,
                "spec",
                "providerSpec",
                "value",
            ],
        }
    }

    /// Where the `machine.openshift.io/os-id` marker is read: the objects
    /// to walk below `spec.template`, then the key of the label map.
    fn template_labels_at(self) -> (&'static [&'static str], &'static str) {
        match self {
            MachineKind::MachineSet => (&["metadata"], "labels"),
            MachineKind::ControlPlaneMachineSet => {
                (&[CPMS_MACHINE_TYPE, "spec", "metadata"], "labels")
            }
        }
    }
}

/// What the rules need from one MachineSet (or ControlPlaneMachineSet),
/// extracted once.
#[derive(Debug, Clone, PartialEq)]
pub struct MachineSetView {
    pub kind: MachineKind,
    pub name: String,
    pub namespace: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    /// `Kind/name` of each owner, kept for the skip message.
    pub owner_references: Vec<String>,
    /// The labels holding the Windows marker: `spec.template.metadata.labels`
    /// of a MachineSet (not its own labels), `spec.template
    /// .machines_v1beta1_machine_openshift_io.spec.metadata.labels` (the
    /// Node labels) of a ControlPlaneMachineSet.
    pub template_labels: BTreeMap<String, String>,
    /// `providerSpec.value` (at [`MachineKind::provider_spec_path`]),
    /// untyped on purpose so that the platform rules can read exactly the
    /// fields they need and leave every other field to the API server.
    pub provider_spec: Option<ProviderSpec>,
}

/// A `providerSpec.value`. The host lends a guest a handle to it (WIT
/// `boot-image-inputs.provider-spec`) instead of a copy: a providerSpec
/// may be as large as its object (1.5 MiB), and a rule reads a few fields.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSpec(Arc<Value>);

/// The keys of `providerSpec.value` read beside a platform's own: the
/// user-data Secret's name ([`MachineSetView::user_data_secret_name`]).
pub const COMMON_PROVIDER_SPEC_FIELDS: [&str; 1] = ["userDataSecret"];

impl ProviderSpec {
    /// Shared, not copied, by its clones: the host lends it to a guest
    /// call without copying it.
    pub fn new(value: Value) -> ProviderSpec {
        ProviderSpec(Arc::new(value))
    }

    /// The part of it the rules read: the `keys` of an object (and
    /// [`COMMON_PROVIDER_SPEC_FIELDS`]), or of any other JSON type an empty
    /// value of that type, since its type is all a rule reads of it. A
    /// guest builds the same part from the host's answers.
    pub fn part(&self, keys: &[&str]) -> ProviderSpec {
        ProviderSpec::new(match &*self.0 {
            Value::Object(object) => Value::Object(
                keys.iter()
                    .chain(&COMMON_PROVIDER_SPEC_FIELDS)
                    .filter_map(|key| Some(((*key).to_owned(), object.get(*key)?.clone())))
                    .collect(),
            ),
            Value::Array(_) => Value::Array(Vec::new()),
            Value::String(_) => Value::String(String::new()),
            Value::Number(_) => Value::from(0),
            Value::Bool(_) => Value::Bool(false),
            Value::Null => Value::Null,
        })
    }
}

/// The rules read a providerSpec as the JSON value it is.
impl std::ops::Deref for ProviderSpec {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.0
    }
}

impl serde::Serialize for ProviderSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl MachineSetView {
    /// Reads a MachineSet as `kubectl get -o json` prints it.
    ///
    /// Only metadata must be well formed here: bad providerSpec content is
    /// reported later as an `error` decision, once the common rules (owner
    /// references, OS stream, Windows) have had the chance to leave the
    /// MachineSet alone anyway.
    pub fn from_object(obj: &Value) -> Result<MachineSetView, InputError> {
        MachineSetView::read(obj, MachineKind::MachineSet)
    }

    /// Reads a ControlPlaneMachineSet (`machine.openshift.io/v1`) the same
    /// way, from the paths its `machines_v1beta1_machine_openshift_io` template
    /// holds.
    pub fn from_control_plane_machine_set(obj: &Value) -> Result<MachineSetView, InputError> {
        MachineSetView::read(obj, MachineKind::ControlPlaneMachineSet)
    }

    fn read(obj: &Value, kind: MachineKind) -> Result<MachineSetView, InputError> {
        let what = kind.kind();
        let field = || InputError::field(what);
        let root = obj.as_object().ok_or(InputError::NotAnObject {
            what,
            found: fields::kind_of(obj),
        })?;
        if let Some(found) = fields::opt_str(root, "kind", "").map_err(field())?
            && found != what
        {
            return Err(InputError::WrongKind {
                expected: what,
                found: found.to_owned(),
            });
        }
        let meta = fields::opt_object(root, "metadata", "")
            .map_err(field())?
            .ok_or(InputError::MissingName { what })?;
        let name = fields::opt_str(meta, "name", "metadata")
            .map_err(field())?
            .filter(|n| !n.is_empty())
            .ok_or(InputError::MissingName { what })?
            .to_owned();
        let namespace = fields::opt_str(meta, "namespace", "metadata")
            .map_err(field())?
            .map(str::to_owned);
        let labels = fields::opt_string_map(meta, "labels", "metadata").map_err(field())?;
        let annotations =
            fields::opt_string_map(meta, "annotations", "metadata").map_err(field())?;

        let mut owner_references = Vec::new();
        if let Some(refs) =
            fields::opt_array(meta, "ownerReferences", "metadata").map_err(field())?
        {
            for (i, r) in refs.iter().enumerate() {
                let path = format!("metadata.ownerReferences[{i}]");
                let r = fields::as_object(r, &path).map_err(field())?;
                let owner_kind = fields::opt_str(r, "kind", &path)
                    .map_err(field())?
                    .unwrap_or("?");
                let owner = fields::opt_str(r, "name", &path)
                    .map_err(field())?
                    .unwrap_or("?");
                owner_references.push(format!("{owner_kind}/{owner}"));
            }
        }

        let template = match fields::opt_object(root, "spec", "").map_err(field())? {
            Some(s) => fields::opt_object(s, "template", "spec").map_err(field())?,
            None => None,
        };
        // Walk to the object holding the Windows marker; a level of the
        // wrong type is an input error naming its path.
        let mut holder = template;
        let mut path = "spec.template".to_owned();
        let (parents, labels_key) = kind.template_labels_at();
        for key in parents {
            let Some(at) = holder else { break };
            holder = fields::opt_object(at, key, &path).map_err(field())?;
            path = fields::join(&path, key);
        }
        let template_labels = match holder {
            Some(at) => fields::opt_string_map(at, labels_key, &path).map_err(field())?,
            None => BTreeMap::new(),
        };
        // A providerSpec of the wrong type is kept as is and reported by the
        // platform step, in the order the controller checks things.
        let provider_spec = kind
            .provider_spec_path()
            .iter()
            .try_fold(obj, |at, key| at.as_object()?.get(*key))
            .filter(|v| !v.is_null())
            .cloned()
            .map(ProviderSpec::new);

        Ok(MachineSetView {
            kind,
            name,
            namespace,
            labels,
            annotations,
            owner_references,
            template_labels,
            provider_spec,
        })
    }

    /// `providerSpec.value.userDataSecret.name`: the Secret whose stub
    /// Ignition config may need upgrading before the new boot image is used.
    pub fn user_data_secret_name(&self) -> Result<Option<&str>, FieldError> {
        let Some(spec) = &self.provider_spec else {
            return Ok(None);
        };
        let spec = fields::as_object(spec, "providerSpec.value")?;
        match fields::opt_object(spec, "userDataSecret", "providerSpec.value")? {
            Some(s) => Ok(
                fields::opt_str(s, "name", "providerSpec.value.userDataSecret")?
                    .filter(|n| !n.is_empty()),
            ),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ms() -> Value {
        json!({
            "apiVersion": "machine.openshift.io/v1beta1",
            "kind": "MachineSet",
            "metadata": {
                "name": "c1-worker-a",
                "namespace": "openshift-machine-api",
                "labels": {"machine.openshift.io/cluster-api-cluster": "c1"},
                "annotations": {"capacity.cluster-autoscaler.kubernetes.io/labels": "kubernetes.io/arch=amd64"},
                "ownerReferences": [{"kind": "MachinePool", "name": "mp"}]
            },
            "spec": {"template": {
                "metadata": {"labels": {"machine.openshift.io/os-id": "Windows"}},
                "spec": {"providerSpec": {"value": {"userDataSecret": {"name": "worker-user-data"}}}}
            }}
        })
    }

    #[test]
    fn extracts_everything() {
        let v = MachineSetView::from_object(&ms()).unwrap();
        assert_eq!(v.name, "c1-worker-a");
        assert_eq!(v.namespace.as_deref(), Some("openshift-machine-api"));
        assert_eq!(v.owner_references, vec!["MachinePool/mp".to_owned()]);
        assert_eq!(v.template_labels["machine.openshift.io/os-id"], "Windows");
        assert_eq!(v.user_data_secret_name().unwrap(), Some("worker-user-data"));
        assert_eq!(v.labels.len(), 1);
        assert_eq!(v.annotations.len(), 1);
    }

    #[test]
    fn minimal_object() {
        let v = MachineSetView::from_object(&json!({"metadata": {"name": "x"}})).unwrap();
        assert!(v.provider_spec.is_none());
        assert!(v.owner_references.is_empty());
        assert_eq!(v.user_data_secret_name().unwrap(), None);
    }

    #[test]
    fn rejects_what_is_not_a_machineset() {
        assert!(matches!(
            MachineSetView::from_object(&json!([])),
            Err(InputError::NotAnObject { .. })
        ));
        assert!(matches!(
            MachineSetView::from_object(&json!({"kind": "Secret", "metadata": {"name": "x"}})),
            Err(InputError::WrongKind { .. })
        ));
        assert!(matches!(
            MachineSetView::from_object(&json!({"metadata": {}})),
            Err(InputError::MissingName { .. })
        ));
        assert!(matches!(
            MachineSetView::from_object(&json!({"metadata": {"name": ""}})),
            Err(InputError::MissingName { .. })
        ));
        let e =
            MachineSetView::from_object(&json!({"metadata": {"name": "x", "labels": {"a": 1}}}))
                .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid MachineSet: metadata.labels.a must be a string, got a number"
        );
        assert!(
            MachineSetView::from_object(
                &json!({"metadata": {"name": "x", "ownerReferences": {"a": 1}}})
            )
            .is_err()
        );
        assert!(
            MachineSetView::from_object(&json!({"metadata": {"name": "x"}, "spec": "s"})).is_err()
        );
    }

    #[test]
    fn wrong_user_data_secret_type_is_a_field_error() {
        let mut o = ms();
        o["spec"]["template"]["spec"]["providerSpec"]["value"]["userDataSecret"] = json!("s");
        let v = MachineSetView::from_object(&o).unwrap();
        assert_eq!(
            v.user_data_secret_name().unwrap_err().to_string(),
            "providerSpec.value.userDataSecret must be an object, got a string"
        );
        o["spec"]["template"]["spec"]["providerSpec"]["value"] = json!(7);
        let v = MachineSetView::from_object(&o).unwrap();
        assert!(v.user_data_secret_name().is_err());
    }
}
