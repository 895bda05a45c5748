//! The cluster's node disruption policies, read from MachineConfiguration
//! `cluster` the way the daemon reads them (upstream's
//! `calculatePostConfigChangeNodeDisruptionAction` in `pkg/daemon/update.go`):
//! the operator's merged status when it is current, otherwise the spec
//! merged onto the built-in defaults, as the operator will publish it
//! (`defaultClusterPolicies` and `MergeClusterPolicies` in
//! `pkg/apihelpers/apihelpers.go`), otherwise the defaults alone.
//! Sans-IO: the controller and `eval mcn` both come here.

use kube::api::DynamicObject;
use mco_mcn::{DisruptionAction, DisruptionPolicies, FilePolicy, UnitPolicy};
use serde_json::Value;

use mco_job::manifests::{InputError, Reader};

/// The policies of the MachineConfiguration file an `eval mcn` or an
/// audit is given (`--machineconfiguration`); the defaults without one.
pub fn from_file(
    reader: &mut Reader,
    path: Option<&str>,
) -> Result<DisruptionPolicies, InputError> {
    let object: Option<Value> = path
        .map(|path| reader.object(path, "MachineConfiguration"))
        .transpose()?;
    Ok(policies(object.as_ref()))
}

/// The policies of MachineConfiguration `cluster` as the cluster serves it
/// (to the controller's watch, or an audit's get).
pub fn of_object(object: Option<&DynamicObject>) -> DisruptionPolicies {
    let object = object.and_then(|object| serde_json::to_value(object).ok());
    policies(object.as_ref())
}

/// The policies the guest gets. `None` (no MachineConfiguration `cluster`)
/// gives the defaults: upstream's daemon would wait and then fail the
/// update, which a derivation cannot watch happen.
pub fn policies(machineconfiguration: Option<&Value>) -> DisruptionPolicies {
    // Only the object named `cluster` counts.
    let Some(object) = machineconfiguration
        .filter(|o| o.pointer("/metadata/name").and_then(Value::as_str) == Some("cluster"))
    else {
        return DisruptionPolicies::defaults();
    };
    let current =
        object.pointer("/metadata/generation") == object.pointer("/status/observedGeneration");
    let status = object.pointer("/status/nodeDisruptionPolicyStatus/clusterPolicies");
    match status.map(read) {
        Some(published) if current && !is_empty(&published) => published,
        _ => match object.pointer("/spec/nodeDisruptionPolicy") {
            Some(spec) => merge(DisruptionPolicies::defaults(), read(spec)),
            None => DisruptionPolicies::defaults(),
        },
    }
}

fn is_empty(p: &DisruptionPolicies) -> bool {
    p.files.is_empty() && p.units.is_empty() && p.ssh_key.is_empty()
}

/// An admin entry for a default path (or unit) replaces it in place; the
/// others are appended in spec order; admin SSH key actions replace the
/// default ones when there are any.
fn merge(mut base: DisruptionPolicies, admin: DisruptionPolicies) -> DisruptionPolicies {
    for file in admin.files {
        match base.files.iter_mut().find(|f| f.path == file.path) {
            Some(existing) => *existing = file,
            None => base.files.push(file),
        }
    }
    for unit in admin.units {
        match base.units.iter_mut().find(|u| u.name == unit.name) {
            Some(existing) => *existing = unit,
            None => base.units.push(unit),
        }
    }
    if !admin.ssh_key.is_empty() {
        base.ssh_key = admin.ssh_key;
    }
    base
}

/// Reads the spec or status shape (they agree on everything we read).
/// Entries without a path or name are dropped: the API server's schema
/// requires them, so only a hand-made object lacks one.
fn read(value: &Value) -> DisruptionPolicies {
    let list = |key: &str| {
        value
            .get(key)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    };
    let entries = |key: &str, id: &str| -> Vec<(String, Vec<DisruptionAction>)> {
        list(key)
            .iter()
            .filter_map(|entry| {
                let id = entry.get(id).and_then(Value::as_str)?;
                Some((id.to_string(), actions(entry.get("actions"))))
            })
            .collect()
    };
    DisruptionPolicies {
        files: entries("files", "path")
            .into_iter()
            .map(|(path, actions)| FilePolicy { path, actions })
            .collect(),
        units: entries("units", "name")
            .into_iter()
            .map(|(name, actions)| UnitPolicy { name, actions })
            .collect(),
        ssh_key: actions(value.pointer("/sshkey/actions")),
    }
}

/// An action type this host does not know counts as a reboot: that is the
/// daemon's answer for any change no policy it understands covers, and it
/// never makes the MCN claim less disruption than may have happened.
fn actions(value: Option<&Value>) -> Vec<DisruptionAction> {
    let items = value
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    items
        .iter()
        .map(|action| {
            let service = |key: &str| {
                action
                    .pointer(&format!("/{key}/serviceName"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            match action.get("type").and_then(Value::as_str) {
                Some("Drain") => DisruptionAction::Drain,
                Some("Reload") => DisruptionAction::Reload(service("reload")),
                Some("Restart") => DisruptionAction::Restart(service("restart")),
                Some("DaemonReload") => DisruptionAction::DaemonReload,
                Some("None") => DisruptionAction::None,
                Some("Special") => DisruptionAction::Special,
                _ => DisruptionAction::Reboot,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn restart(path: &str, service: &str) -> Value {
        json!({"path": path, "actions": [{"type": "Restart", "restart": {"serviceName": service}}]})
    }

    #[test]
    fn absent_or_empty_objects_give_the_defaults() {
        assert_eq!(policies(None), DisruptionPolicies::defaults());
        assert_eq!(policies(Some(&json!({}))), DisruptionPolicies::defaults());
        let named = |name: &str| json!({"metadata": {"name": name}, "spec": {"nodeDisruptionPolicy": {"sshkey": {"actions": [{"type": "Drain"}]}}}});
        assert_eq!(
            policies(Some(&named("other"))),
            DisruptionPolicies::defaults()
        );
        assert_eq!(
            policies(Some(&named("cluster"))).ssh_key,
            vec![DisruptionAction::Drain]
        );
        assert_eq!(
            policies(Some(
                &json!({"status": {"nodeDisruptionPolicyStatus": {"clusterPolicies": {}}}})
            )),
            DisruptionPolicies::defaults()
        );
    }

    #[test]
    fn a_current_status_is_used_as_is() {
        let object = json!({
            "metadata": {"name": "cluster", "generation": 3},
            "spec": {"nodeDisruptionPolicy": {"files": [restart("/etc/ignored", "x.service")]}},
            "status": {"observedGeneration": 3, "nodeDisruptionPolicyStatus": {"clusterPolicies": {
                "files": [restart("/etc/a", "a.service"), {"path": "/etc/b", "actions": [{"type": "Explode"}]}],
                "sshkey": {"actions": [{"type": "Drain"}]},
            }}},
        });
        let p = policies(Some(&object));
        assert_eq!(p.files.len(), 2);
        assert_eq!(
            p.files[0].actions,
            vec![DisruptionAction::Restart("a.service".into())]
        );
        assert_eq!(p.files[1].actions, vec![DisruptionAction::Reboot]);
        assert!(p.units.is_empty());
        assert_eq!(p.ssh_key, vec![DisruptionAction::Drain]);
    }

    #[test]
    fn a_stale_status_gives_way_to_the_spec_merged_onto_the_defaults() {
        let defaults = DisruptionPolicies::defaults();
        let object = json!({
            "metadata": {"name": "cluster", "generation": 4},
            "spec": {"nodeDisruptionPolicy": {
                "files": [restart("/etc/containers/policy.json", "p.service"), restart("/etc/mine", "m.service"), {"actions": []}],
                "units": [{"name": "iri-registry.service", "actions": [{"type": "None"}]}, {"name": "u.service", "actions": [{"type": "Reload", "reload": {"serviceName": "u.service"}}]}],
                "sshkey": {"actions": []},
            }},
            "status": {"observedGeneration": 3, "nodeDisruptionPolicyStatus": {"clusterPolicies": {
                "files": [restart("/etc/stale", "s.service")],
            }}},
        });
        let p = policies(Some(&object));
        assert_eq!(p.files.len(), defaults.files.len() + 1);
        let policy = p
            .files
            .iter()
            .position(|f| f.path == "/etc/containers/policy.json");
        assert_eq!(
            policy,
            defaults
                .files
                .iter()
                .position(|f| f.path == "/etc/containers/policy.json")
        );
        assert_eq!(p.files.last().map(|f| f.path.as_str()), Some("/etc/mine"));
        assert_eq!(p.units[0].actions, vec![DisruptionAction::None]);
        assert_eq!(
            p.units[1].actions,
            vec![DisruptionAction::Reload("u.service".into())]
        );
        assert_eq!(p.ssh_key, defaults.ssh_key);
    }

    #[test]
    fn hostile_shapes_are_read_leniently() {
        for object in [
            json!(7),
            json!({"metadata": {"name": "cluster"}, "spec": {"nodeDisruptionPolicy": "x"}}),
            json!({"metadata": {"name": "cluster"}, "spec": {"nodeDisruptionPolicy": {"files": {"path": "/x"}, "sshkey": 3}}}),
        ] {
            assert_eq!(
                policies(Some(&object)),
                DisruptionPolicies::defaults(),
                "{object}"
            );
        }
        let odd = json!({"metadata": {"name": "cluster"}, "status": {"nodeDisruptionPolicyStatus": {"clusterPolicies": {
            "files": [{"path": 1}, {"path": "/y", "actions": "x"}],
        }}}});
        let p = policies(Some(&odd));
        assert_eq!(
            p.files,
            vec![FilePolicy {
                path: "/y".into(),
                actions: vec![]
            }]
        );
    }
}
