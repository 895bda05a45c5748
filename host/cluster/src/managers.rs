//! Who else writes an object: the Machine Config Operator's field managers
//! as `metadata.managedFields` records them; `own` mode refuses to write while
//! the operator's equivalent writer is seen here. Upstream's managers:
//! `machine-config-operator`, the name every MCN status write passes
//! (`pkg/upgrademonitor/upgrade_monitor.go`;
//! `UpdateMachineConfigNodeSpecDesiredAnnotations`; the irreconcilable-changes
//! reporter) and the operator's user agent; `machine-config-daemon` and
//! `machine-config-controller`, what the apiserver records for a write that
//! names no manager (the first word of the user agent, client-go's
//! `rest.AddUserAgent`): the daemon creates MCNs so, and the boot image
//! controller (`pkg/controller/bootimage`) patches MachineSets and
//! MachineConfiguration `cluster`'s conditions so.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
use k8s_openapi::jiff::Timestamp;
use serde_json::{Map, Value};

/// The Machine Config Operator's field managers.
pub const OPERATOR_MANAGERS: &[&str] = &[
    "machine-config-operator",
    "machine-config-daemon",
    "machine-config-controller",
];

/// How deep the kept field sets go: `f:status`, `f:conditions`, and one
/// list item (`k:{"type":"Updated"}`), which is as deep as any check here
/// looks. Everything below is dropped from the cache.
const KEPT_DEPTH: usize = 3;

/// One manager's write of a field, as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Writer {
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    pub time: Option<Timestamp>,
}

impl std::fmt::Display for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}", self.manager, self.operation)?;
        if let Some(time) = self.time {
            write!(f, " at {time}")?;
        }
        write!(f, ")")
    }
}

/// Keeps only the operator's entries, their field sets cut to
/// [`KEPT_DEPTH`]: what [`operator_writers`] reads, at a fraction of the
/// memory (the watches cache every object).
pub fn keep_operator_entries(entries: &mut Vec<ManagedFieldsEntry>) {
    entries.retain(|e| e.manager.as_deref().is_some_and(is_operator));
    for entry in entries {
        if let Some(FieldsV1(fields)) = &mut entry.fields_v1 {
            cut(fields, KEPT_DEPTH);
        }
    }
}

fn is_operator(manager: &str) -> bool {
    OPERATOR_MANAGERS.contains(&manager)
}

fn cut(value: &mut Value, depth: usize) {
    let Value::Object(map) = value else {
        *value = Value::Object(Map::new());
        return;
    };
    if depth == 0 {
        map.clear();
        return;
    }
    for child in map.values_mut() {
        cut(child, depth - 1);
    }
}

/// The operator's managers that own a field at or under `path` (field-set
/// keys: `["f:status", "f:conditions"]`), in the order recorded. An entry
/// whose field set is missing or malformed owns nothing.
pub fn operator_writers(entries: &[ManagedFieldsEntry], path: &[&str]) -> Vec<Writer> {
    entries
        .iter()
        .filter(|e| e.manager.as_deref().is_some_and(is_operator))
        .filter(|e| {
            let mut node = e.fields_v1.as_ref().map(|FieldsV1(v)| v);
            for key in path {
                node = node.and_then(|n| n.get(*key));
            }
            node.is_some_and(Value::is_object)
        })
        .map(|e| Writer {
            manager: e.manager.clone().unwrap_or_default(),
            operation: e.operation.clone().unwrap_or_else(|| "Update".into()),
            time: e.time.as_ref().map(|t| t.0),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn entry(manager: &str, operation: &str, fields: Value) -> ManagedFieldsEntry {
        serde_json::from_value(json!({
            "manager": manager, "operation": operation, "apiVersion": "v1",
            "fieldsType": "FieldsV1", "fieldsV1": fields, "subresource": "status",
            "time": "2026-12-02T10:00:00Z",
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    fn conditions() -> Value {
        json!({"f:status": {"f:conditions": {
            "k:{\"type\":\"Updated\"}": {".": {}, "f:status": {}, "f:message": {}},
        }}})
    }

    #[test]
    fn the_daemons_condition_apply_is_seen_and_others_are_not() {
        let entries = vec![
            entry("mco-host", "Apply", conditions()),
            entry("kubectl-edit", "Update", conditions()),
            entry("machine-config-operator", "Apply", conditions()),
        ];
        let writers = operator_writers(&entries, &["f:status", "f:conditions"]);
        assert_eq!(writers.len(), 1);
        assert_eq!(writers[0].manager, "machine-config-operator");
        assert_eq!(
            writers[0].to_string(),
            "machine-config-operator (Apply at 2026-12-02T10:00:00Z)"
        );
    }

    #[test]
    fn a_manager_that_owns_other_fields_only_is_no_writer_of_these() {
        let spec = json!({"f:spec": {"f:configVersion": {"f:desired": {}}}});
        let entries = vec![entry("machine-config-daemon", "Update", spec)];
        assert!(operator_writers(&entries, &["f:status", "f:conditions"]).is_empty());
        assert_eq!(operator_writers(&entries, &["f:spec"]).len(), 1);
    }

    #[test]
    fn one_condition_type_can_be_asked_for() {
        let fields = json!({"f:status": {"f:conditions": {
            "k:{\"type\":\"BootImageUpdateProgressing\"}": {"f:status": {}},
        }}});
        let entries = vec![entry("machine-config-controller", "Update", fields)];
        let progressing = [
            "f:status",
            "f:conditions",
            "k:{\"type\":\"BootImageUpdateProgressing\"}",
        ];
        let degraded = [
            "f:status",
            "f:conditions",
            "k:{\"type\":\"BootImageUpdateDegraded\"}",
        ];
        assert_eq!(operator_writers(&entries, &progressing).len(), 1);
        assert!(operator_writers(&entries, &degraded).is_empty());
    }

    #[test]
    fn malformed_field_sets_own_nothing() {
        let mut entries = vec![
            entry("machine-config-operator", "Apply", json!("f:status")),
            entry(
                "machine-config-operator",
                "Apply",
                json!({"f:status": ["f:conditions"]}),
            ),
            entry(
                "machine-config-operator",
                "Apply",
                json!({"f:status": {"f:conditions": 7}}),
            ),
        ];
        entries.push(ManagedFieldsEntry {
            manager: Some("machine-config-operator".into()),
            ..ManagedFieldsEntry::default()
        });
        assert!(operator_writers(&entries, &["f:status", "f:conditions"]).is_empty());
    }

    #[test]
    fn the_cache_keeps_the_operators_entries_cut_to_what_is_read() {
        let deep = json!({"f:status": {"f:conditions": {
            "k:{\"type\":\"Updated\"}": {"f:message": {}, "f:status": {}},
        }, "f:configVersion": {"f:desired": {}}}});
        let mut entries = vec![
            entry("mco-host", "Apply", deep.clone()),
            entry("machine-config-operator", "Apply", deep),
            ManagedFieldsEntry::default(),
        ];
        keep_operator_entries(&mut entries);
        assert_eq!(entries.len(), 1);
        assert_eq!(
            entries[0].fields_v1.as_ref().map(|f| f.0.clone()),
            Some(json!({"f:status": {"f:conditions": {
                "k:{\"type\":\"Updated\"}": {},
            }, "f:configVersion": {"f:desired": {}}}}))
        );
        assert_eq!(
            operator_writers(&entries, &["f:status", "f:conditions"]).len(),
            1,
            "what is cut is still enough to see the writer"
        );
    }
}
