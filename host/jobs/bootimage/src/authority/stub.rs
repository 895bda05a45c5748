//! A stub upgrade is the MachineSet's own and a faithful conversion of
//! the stub the host passed.

use base64::Engine as _;
use mco_bootimage::UserDataUpgrade;
use mco_bootimage::ignition::{ANNOTATION_UPGRADED_TO, StubUpgrade, upgrade_stub};
use mco_k8s_rules::bounded;
use serde_json::{Map, Value};

use super::JobInputs;
use crate::proposal::{QUOTE, Rule, str_at};

/// A stub upgrade is the MachineSet's own and faithful: only when the host
/// passed user data, only for the Secret the MachineSet references, only
/// the `stub-ignition-upgraded-to` annotation, and a spec 3 config with
/// exactly the original stub's meaning.
pub(super) fn upgrade(job: &JobInputs<'_>, upgrade: Option<&UserDataUpgrade>) -> Result<(), Rule> {
    let referenced = job.machineset.user_data_secret_name().ok().flatten();
    let Some(upgrade) = upgrade else {
        // Beyond the issue: a spec 2 stub the new image cannot read must
        // be converted before the MachineSet moves.
        if let Some(text) = job.user_data
            && let Ok(StubUpgrade::Converted(_)) = upgrade_stub(text)
        {
            return Err(Rule::StubLeftUnconverted {
                secret: referenced.unwrap_or("(none)").to_owned(),
            });
        }
        return Ok(());
    };
    if referenced != Some(upgrade.name.as_str()) {
        return Err(Rule::ForeignSecret {
            upgrades: upgrade.name.clone(),
            referenced: referenced.map(str::to_owned),
        });
    }
    let Some(original) = job.user_data else {
        return Err(Rule::StubWithoutUserData {
            secret: upgrade.name.clone(),
        });
    };
    let converted = base64::engine::general_purpose::STANDARD
        .decode(&upgrade.data.user_data)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .filter(Value::is_object)
        .ok_or(Rule::StubNotIgnition)?;
    let version = str_at(&converted, "/ignition/version").unwrap_or("");
    if !is_spec3(version) {
        return Err(Rule::StubNotSpec3 {
            version: version.to_owned(),
        });
    }
    for (key, value) in &upgrade.annotations {
        if key != ANNOTATION_UPGRADED_TO {
            return Err(Rule::StubAnnotation { key: key.clone() });
        }
        if value != version {
            return Err(Rule::StubAnnotatedVersion {
                annotated: value.clone(),
                version: version.to_owned(),
            });
        }
    }
    faithful(original, &converted)
}

fn is_spec3(version: &str) -> bool {
    let parts: Vec<&str> = version.split('.').collect();
    parts.len() == 3
        && parts[0] == "3"
        && parts[1..]
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The converted config says what the original said and nothing else:
/// its `ignition` section (merge/replace sources, certificate authorities,
/// TLS, timeouts) and every other section are what the host's own, trusted
/// converter makes of the original, and it has no section the original
/// does not have. Comparing with the converter's output, not with the
/// original's JSON, matters because spec 2 fields the converter does not
/// know are dropped in spec 3, as upstream's Go types drop them.
fn faithful(original: &str, converted: &Value) -> Result<(), Rule> {
    let source: Value = serde_json::from_str(original).map_err(|e| Rule::StubSourceNotJson {
        reason: e.to_string(),
    })?;
    let meaning = match upgrade_stub(original) {
        Ok(StubUpgrade::Converted(text)) => {
            serde_json::from_str(&text).map_err(|e| Rule::StubNotConvertible {
                reason: e.to_string(),
            })?
        }
        // A spec 3 stub means what it says.
        Ok(StubUpgrade::AlreadyCurrent) => source.clone(),
        Err(e) => {
            return Err(Rule::StubNotConvertible {
                reason: e.to_string(),
            });
        }
    };
    let expected = ignition_without_version(&meaning);
    let got = ignition_without_version(converted);
    if got != expected {
        return Err(Rule::StubIgnitionChanged {
            expected: bounded(expected.to_string(), QUOTE),
            got: bounded(got.to_string(), QUOTE),
        });
    }
    let empty = Map::new();
    let sections = converted.as_object().unwrap_or(&empty);
    for (key, value) in sections {
        if key == "ignition" || pruned(value.clone()).is_null() {
            continue;
        }
        let has = source
            .get(key)
            .is_some_and(|v| !pruned(v.clone()).is_null());
        if !has {
            return Err(Rule::StubAddsSection {
                section: key.clone(),
            });
        }
        let want = meaning.get(key).cloned().map(pruned).unwrap_or(Value::Null);
        if pruned(value.clone()) != want {
            return Err(Rule::StubChangesSection {
                section: key.clone(),
            });
        }
    }
    Ok(())
}

/// The `ignition` section without its version, pruned.
fn ignition_without_version(config: &Value) -> Value {
    let mut ignition = config.get("ignition").cloned().unwrap_or(Value::Null);
    if let Some(map) = ignition.as_object_mut() {
        map.remove("version");
    }
    pruned(ignition)
}

/// `value` without nulls, empty arrays and empty objects, recursively, so
/// that "absent" and "empty" compare equal.
fn pruned(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let map: Map<String, Value> = map
                .into_iter()
                .map(|(k, v)| (k, pruned(v)))
                .filter(|(_, v)| !v.is_null())
                .collect();
            if map.is_empty() {
                Value::Null
            } else {
                Value::Object(map)
            }
        }
        Value::Array(items) if items.is_empty() => Value::Null,
        Value::Array(items) => Value::Array(items.into_iter().map(pruned).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SOURCE: &str = "https://api-int.c1.example.com:22623/config/worker";
    const CA: &str = "data:text/plain;charset=utf-8;base64,LS0t";

    fn stub(version: &str, extra: Value) -> String {
        let mut stub = json!({"ignition": {"config": {"append": [{"source": SOURCE, "verification": {}}]},
            "version": version}, "networkd": {}, "passwd": {}, "storage": {}, "systemd": {}});
        if let (Some(stub), Value::Object(extra)) = (stub.as_object_mut(), extra) {
            stub.extend(extra);
        }
        stub.to_string()
    }

    fn host_conversion(stub: &str) -> Value {
        match upgrade_stub(stub) {
            Ok(StubUpgrade::Converted(text)) => serde_json::from_str(&text).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn faithful_conversions_of_spec_2_0_and_2_1_stubs_are_accepted() {
        let file = json!({"storage": {"files": [{"filesystem": "root", "path": "/etc/a", "contents": {"source": "data:,x"}}]}});
        for version in ["2.0.0", "2.1.0", "2.2.0"] {
            let original = stub(version, file.clone());
            let converted = host_conversion(&original);
            assert_eq!(
                converted["ignition"]["config"]["merge"],
                json!([{"source": SOURCE}]),
                "{version}"
            );
            if let Err(rule) = faithful(&original, &converted) {
                panic!("{version}: {rule}");
            }
        }
    }

    #[test]
    fn a_spec_2_1_conversion_that_keeps_certificate_authorities_spec_2_1_lacks_is_refused() {
        // Spec 2.1 has no `security`: upstream's conversion drops it.
        let original = stub(
            "2.1.0",
            json!({"ignition": {"config": {"append": [{"source": SOURCE}]},
                "security": {"tls": {"certificateAuthorities": [{"source": CA}]}}, "version": "2.1.0"}}),
        );
        let mut converted = host_conversion(&original);
        assert!(faithful(&original, &converted).is_ok());
        converted["ignition"]["security"] =
            json!({"tls": {"certificateAuthorities": [{"source": CA}]}});
        assert!(matches!(
            faithful(&original, &converted),
            Err(Rule::StubIgnitionChanged { .. })
        ));
    }

    #[test]
    fn a_spec_2_0_conversion_without_the_implied_owner_and_mode_is_refused() {
        // Spec 2.0 holds a file's mode and owner ids as plain integers: the
        // faithful conversion spells out 0 for each.
        let original = stub(
            "2.0.0",
            json!({"storage": {"files": [{"filesystem": "root", "path": "/etc/a"}]}}),
        );
        let mut converted = host_conversion(&original);
        let file = &mut converted["storage"]["files"][0];
        assert_eq!(
            (&file["mode"], &file["user"], &file["group"]),
            (&json!(0), &json!({"id": 0}), &json!({"id": 0}))
        );
        if let Some(file) = file.as_object_mut() {
            file.remove("user");
        }
        assert!(matches!(
            faithful(&original, &converted),
            Err(Rule::StubChangesSection { section }) if section == "storage"
        ));
    }
}
