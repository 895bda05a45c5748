//! The canary subset of a rollout, for jobs the registry does not know:
//! each job names its field of `spec.rollout.canary` and the type it reads
//! there ([`CanaryField`]); the registry checks that a canary gives that
//! field alone, has the job read it when the object is read
//! ([`CanarySpec::read`]) and hands the job its reading back, typed, for
//! each object it decides (`Route::candidate_writes`). The CRD's `canary`
//! schema and rules are composed from the jobs' fields (`crd.rs`).

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, ValidationRule,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// A canary as its job read it: a value of the job's [`CanaryField`] type.
#[derive(Clone)]
pub struct Selection {
    value: Arc<dyn Any + Send + Sync>,
    type_name: &'static str,
}

impl Selection {
    pub fn new<T: Any + Send + Sync>(value: T) -> Selection {
        Selection {
            value: Arc::new(value),
            type_name: std::any::type_name::<T>(),
        }
    }

    /// The canary as `C`. A job that asks for another type than its
    /// [`CanaryField`] reads has a defect, which is logged as an error;
    /// its candidate then decides none of the canary's objects (the
    /// module keeps deciding them).
    pub fn get<C: 'static>(&self) -> Option<&C> {
        let value = self.value.downcast_ref::<C>();
        if value.is_none() {
            tracing::error!(
                read = self.type_name,
                asked = std::any::type_name::<C>(),
                "a job asks for its canary as another type than it reads; the candidate decides none of its objects"
            );
        }
        value
    }
}

impl fmt::Debug for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Selection({})", self.type_name)
    }
}

/// What one job's canary selects: its field of `spec.rollout.canary`.
#[derive(Clone, Copy)]
pub struct CanaryField {
    /// The field, `pools`.
    pub name: &'static str,
    /// Whose field it is, as messages name it: `the mcn job`.
    pub owner: &'static str,
    /// The schema of the job's type, as the CRD's structural schema has it.
    schema: fn() -> Result<JSONSchemaProps, serde_json::Error>,
    /// Reads `{name: value}` as the job's type.
    read: fn(serde_json::Value) -> Result<Selection, serde_json::Error>,
}

impl CanaryField {
    /// The field `name` of `T`, a struct of that one field whose doc
    /// comment and schema attributes are the CRD's for it.
    pub const fn of<T>(name: &'static str, owner: &'static str) -> CanaryField
    where
        T: DeserializeOwned + JsonSchema + Send + Sync + 'static,
    {
        CanaryField {
            name,
            owner,
            schema: structural::<T>,
            read: read_as::<T>,
        }
    }

    /// The schema of the field in the CRD; optional, as every field of a
    /// canary is.
    pub(crate) fn schema(&self) -> Result<JSONSchemaProps, CanarySchemaError> {
        let error = |detail: String| CanarySchemaError {
            field: self.name,
            owner: self.owner,
            detail,
        };
        let schema = (self.schema)().map_err(|e| error(e.to_string()))?;
        let field = schema.properties.and_then(|mut p| p.remove(self.name));
        let mut field = field.ok_or_else(|| error("its type has no such field".into()))?;
        field.nullable = Some(true);
        Ok(field)
    }
}

/// A job's canary type whose schema cannot be made: a defect of the job,
/// which the CRD must not hide by leaving the field out.
#[derive(Debug, thiserror::Error)]
#[error("the canary field {field} of {owner} has no schema: {detail}")]
pub struct CanarySchemaError {
    field: &'static str,
    owner: &'static str,
    detail: String,
}

fn read_as<T: DeserializeOwned + Send + Sync + 'static>(
    value: serde_json::Value,
) -> Result<Selection, serde_json::Error> {
    Ok(Selection::new(serde_json::from_value::<T>(value)?))
}

/// `T`'s schema made as kube-derive makes a CRD's.
fn structural<T: JsonSchema>() -> Result<JSONSchemaProps, serde_json::Error> {
    let generator = schemars::generate::SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(schemars::transform::AddNullable::default())
        .with_transform(kube::core::schema::StructuralSchemaRewriter)
        .into_generator();
    serde_json::to_value(generator.into_root_schema_for::<T>()).and_then(serde_json::from_value)
}

/// `spec.rollout.canary` as written: one job's field, which its job reads
/// ([`CanarySpec::read`]). Any JSON here, so that a canary of the wrong
/// shape is this object's error rather than a failure to list them all.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(transparent)]
pub struct CanarySpec(pub BTreeMap<String, serde_json::Value>);

impl JsonSchema for CanarySpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CanarySpec".into()
    }

    fn inline_schema() -> bool {
        true
    }

    /// An object; its fields, description and rule are the jobs'
    /// (`canary_schema`).
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "object" })
    }
}

/// Why a canary selects nothing its job can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CanaryError {
    /// None or several fields: `give one of pools (the mcn job) and …`.
    #[error("give one of {0}")]
    Fields(String),
    #[error("spec.rollout.canary of job {job} names its objects by {field}")]
    Field {
        job: &'static str,
        field: &'static str,
    },
    #[error("spec.rollout.canary.{field}: {detail}")]
    Value { field: &'static str, detail: String },
}

impl CanarySpec {
    /// The canary as `job` reads it: its `field` alone, of its type;
    /// `fields` are every job's, which a canary gives one of.
    pub fn read(
        &self,
        job: &'static str,
        field: CanaryField,
        fields: &[CanaryField],
    ) -> Result<Selection, CanaryError> {
        let mut given = self.0.iter();
        let (Some((name, value)), None) = (given.next(), given.next()) else {
            return Err(CanaryError::Fields(one_of(fields)));
        };
        if name != field.name {
            return Err(wrong_field(job, field));
        }
        let value = serde_json::json!({ name: value });
        (field.read)(value).map_err(|e| CanaryError::Value {
            field: field.name,
            detail: e.to_string(),
        })
    }
}

fn wrong_field(job: &'static str, field: CanaryField) -> CanaryError {
    CanaryError::Field {
        job,
        field: field.name,
    }
}

/// `pools (the mcn job) and machineSets (a bootImage job)`.
fn one_of(fields: &[CanaryField]) -> String {
    let named: Vec<String> = (fields.iter())
        .map(|field| format!("{} ({})", field.name, field.owner))
        .collect();
    match named.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => named.concat(),
    }
}

/// The CRD's `spec.rollout.canary`: every job's field, one of which is
/// given, and the description that says whose each is.
pub(crate) fn canary_schema(
    fields: &[CanaryField],
    canary: &mut JSONSchemaProps,
) -> Result<(), CanarySchemaError> {
    let whose: Vec<String> = (fields.iter())
        .map(|f| format!("`{}` for {}", f.name, f.owner))
        .collect();
    canary.description = Some(format!(
        "The objects whose decisions the candidate makes in `Canary`:\n{}.\nWithout it, promotion goes from `Shadow` straight to `Active`.",
        whose.join(", ")
    ));
    let properties = canary.properties.get_or_insert_with(BTreeMap::new);
    for field in fields {
        properties.insert(field.name.to_owned(), field.schema()?);
    }
    let has: Vec<String> = (fields.iter())
        .map(|f| format!("has(self.{})", f.name))
        .collect();
    let rule = match has.as_slice() {
        [one] => one.clone(),
        [a, b] => format!("{a} != {b}"),
        many => format!("[{}].filter(x, x).size() == 1", many.join(", ")),
    };
    canary.x_kubernetes_validations = Some(vec![ValidationRule {
        rule,
        message: Some(CanaryError::Fields(one_of(fields)).to_string()),
        ..ValidationRule::default()
    }]);
    Ok(())
}

/// The object-level rules that each job's canary gives its own field, for
/// `(job, field)` pairs.
pub(crate) fn canary_rules(
    jobs: impl Iterator<Item = (&'static str, CanaryField)>,
) -> Vec<ValidationRule> {
    jobs.map(|(job, field)| ValidationRule {
            rule: format!(
                "self.spec.job != '{job}' || !has(self.spec.rollout) || !has(self.spec.rollout.canary) || has(self.spec.rollout.canary.{name})",
                name = field.name
            ),
            message: Some(wrong_field(job, field).to_string()),
            ..ValidationRule::default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::EntryName;
    use crate::job::tests::{JOBS, keyed, single};

    fn canary(json: serde_json::Value) -> CanarySpec {
        serde_json::from_value(json).unwrap_or_default()
    }

    fn read(entry: &EntryName, json: serde_json::Value) -> Result<Selection, String> {
        let kind = entry.kind();
        (canary(json).read(kind.name(), kind.canary(), &JOBS.canaries())).map_err(|e| e.to_string())
    }

    #[test]
    fn each_job_reads_its_own_field_as_its_own_type() {
        let pools = read(&single(), serde_json::json!({"pools": ["worker-canary"]}));
        let pools = pools.ok();
        let pools = pools
            .as_ref()
            .and_then(Selection::get::<crate::job::tests::Pools>);
        assert_eq!(
            pools.map(|p| p.pools.clone()),
            Some(vec!["worker-canary".to_owned()])
        );
        let sets = read(
            &keyed(),
            serde_json::json!({"machineSets": {"matchLabels": {"a": "b"}}}),
        );
        let sets = sets.ok();
        let sets = (sets.as_ref()).and_then(Selection::get::<crate::job::tests::MachineSets>);
        assert_eq!(
            sets.and_then(|s| s.machine_sets.match_labels.clone()),
            Some(BTreeMap::from([("a".to_owned(), "b".to_owned())]))
        );
    }

    #[test]
    fn a_canary_of_another_job_none_both_or_a_malformed_one_is_refused_by_name() {
        let both = serde_json::json!({"pools": ["a"], "machineSets": {}});
        let one_of = "give one of pools (the mcn job) and machineSets (a bootImage job)";
        for (entry, json, error) in [
            (
                single(),
                serde_json::json!({"machineSets": {}}),
                "spec.rollout.canary of job mcn names its objects by pools",
            ),
            (
                keyed(),
                serde_json::json!({"pools": ["a"]}),
                "spec.rollout.canary of job bootImage names its objects by machineSets",
            ),
            (single(), both.clone(), one_of),
            (keyed(), both, one_of),
            (single(), serde_json::json!({}), one_of),
            (
                single(),
                serde_json::json!({"pools": "worker"}),
                "spec.rollout.canary.pools: invalid type: string \"worker\", expected a sequence",
            ),
            (
                keyed(),
                serde_json::json!({"machineSets": {"matchLabels": ["a"]}}),
                "spec.rollout.canary.machineSets: invalid type: sequence, expected a map",
            ),
        ] {
            assert_eq!(
                read(&entry, json.clone()).err().as_deref(),
                Some(error),
                "{json}"
            );
        }
    }

    #[test]
    fn the_schema_has_every_jobs_field_and_one_rule() {
        let mut schema = JSONSchemaProps::default();
        canary_schema(&JOBS.canaries(), &mut schema).unwrap_or_else(|e| panic!("{e}"));
        let fields: Vec<&String> = schema.properties.iter().flatten().map(|(k, _)| k).collect();
        assert_eq!(fields, ["machineSets", "pools"]);
        let pools = schema.properties.as_ref().and_then(|p| p.get("pools"));
        assert_eq!(
            pools.map(|p| (
                p.nullable,
                p.min_items,
                p.max_items,
                p.description.as_deref()
            )),
            Some((
                Some(true),
                Some(1),
                Some(64),
                Some("The mcn job: the nodes.")
            ))
        );
        let rules = schema.x_kubernetes_validations.unwrap_or_default();
        assert_eq!(
            rules.iter().map(|r| r.rule.as_str()).collect::<Vec<_>>(),
            ["has(self.pools) != has(self.machineSets)"]
        );
        // A field its type does not have is an error, not a field left out.
        let misnamed = CanaryField::of::<crate::job::tests::Pools>("nodes", "a test job");
        let error = canary_schema(&[misnamed], &mut JSONSchemaProps::default()).err();
        assert_eq!(
            error.map(|e| e.to_string()).as_deref(),
            Some("the canary field nodes of a test job has no schema: its type has no such field")
        );
    }
}
