//! A stub upgrade is the MachineSet's own and a faithful conversion of
//! the stub the host passed.

use base64::Engine as _;
use mco_bootimage::UserDataUpgrade;
use mco_bootimage::ignition::{ANNOTATION_UPGRADED_TO, StubUpgrade, upgrade_stub};
use mco_k8s_rules::{bounded, quote};
use serde_json::{Map, Value};

use super::{JobInputs, QUOTE, str_at};
/// A stub upgrade is the MachineSet's own and faithful: only when the host
/// passed user data, only for the Secret the MachineSet references, only
/// the `stub-ignition-upgraded-to` annotation, and a spec 3 config with
/// exactly the original stub's meaning.
pub(super) fn upgrade(
    guest: &str,
    job: &JobInputs<'_>,
    upgrade: Option<&UserDataUpgrade>,
) -> Result<(), String> {
    let referenced = job.machineset.user_data_secret_name().ok().flatten();
    let Some(upgrade) = upgrade else {
        // Beyond the issue: a spec 2 stub the new image cannot read must
        // be converted before the MachineSet moves.
        if let Some(text) = job.user_data
            && let Ok(StubUpgrade::Converted(_)) = upgrade_stub(text)
        {
            return Err(format!(
                "{guest} patch moves the boot image but leaves the spec 2 stub of Secret {} unconverted",
                referenced.unwrap_or("(none)")
            ));
        }
        return Ok(());
    };
    if referenced != Some(upgrade.name.as_str()) {
        return Err(format!(
            "{guest} decision upgrades Secret {}, but the MachineSet's userDataSecret.name is {}",
            quote(&upgrade.name, QUOTE),
            referenced.map_or_else(|| "not set".to_owned(), |n| quote(n, QUOTE))
        ));
    }
    let Some(original) = job.user_data else {
        return Err(format!(
            "{guest} decision upgrades the stub of Secret {} although the host passed no user data",
            quote(&upgrade.name, QUOTE)
        ));
    };
    let converted = base64::engine::general_purpose::STANDARD
        .decode(&upgrade.data.user_data)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .filter(Value::is_object)
        .ok_or_else(|| format!("{guest} stub upgrade is not a base64 JSON Ignition config"))?;
    let version = str_at(&converted, "/ignition/version").unwrap_or("");
    if !is_spec3(version) {
        return Err(format!(
            "{guest} stub upgrade has Ignition version {}, not spec 3.x",
            quote(version, QUOTE)
        ));
    }
    for (key, value) in &upgrade.annotations {
        if key != ANNOTATION_UPGRADED_TO {
            return Err(format!(
                "{guest} stub upgrade sets annotation {} on the Secret; only {ANNOTATION_UPGRADED_TO} may be set",
                quote(key, QUOTE)
            ));
        }
        if value != version {
            return Err(format!(
                "{guest} stub upgrade annotates version {} but converts to {version}",
                quote(value, QUOTE)
            ));
        }
    }
    faithful(guest, original, &converted)
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
/// the same merge/replace sources (URL, verification hash, HTTP headers),
/// certificate authorities, TLS and timeouts, and no section (`passwd`,
/// `storage`, `systemd`, ...) the original does not have. A section the
/// original does have must be what the host's own converter makes of it.
fn faithful(guest: &str, original: &str, converted: &Value) -> Result<(), String> {
    let source: Value = serde_json::from_str(original)
        .map_err(|e| format!("{guest} stub upgrade converts a stub that is not JSON: {e}"))?;
    let source_version = str_at(&source, "/ignition/version").unwrap_or("");
    let mut expected = pruned(source.pointer("/ignition").cloned().unwrap_or(Value::Null));
    if let Some(ign) = expected.as_object_mut() {
        ign.remove("version");
        if !source_version.starts_with('3')
            && let Some(Value::Object(config)) = ign.get_mut("config")
            && let Some(append) = config.remove("append")
        {
            config.insert("merge".into(), append);
        }
    }
    let mut got = pruned(
        converted
            .pointer("/ignition")
            .cloned()
            .unwrap_or(Value::Null),
    );
    if let Some(ign) = got.as_object_mut() {
        ign.remove("version");
    }
    let expected = pruned(expected);
    let got = pruned(got);
    if got != expected {
        return Err(format!(
            "{guest} stub upgrade changes the stub's ignition section (sources, certificate authorities, TLS or timeouts): expected {}, got {}",
            bounded(expected.to_string(), QUOTE),
            bounded(got.to_string(), QUOTE)
        ));
    }
    // Every other section: absent unless the original has it, and then what
    // the host's own (trusted) converter makes of it.
    let native: Option<Value> = match upgrade_stub(original) {
        Ok(StubUpgrade::Converted(text)) => serde_json::from_str(&text).ok(),
        _ => None,
    };
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
            return Err(format!(
                "{guest} stub upgrade adds {}, which the original stub does not have",
                quote(key, QUOTE)
            ));
        }
        let want = native
            .as_ref()
            .and_then(|n| n.get(key))
            .cloned()
            .map(pruned)
            .unwrap_or(Value::Null);
        if pruned(value.clone()) != want {
            return Err(format!(
                "{guest} stub upgrade changes the stub's {} section",
                quote(key, QUOTE)
            ));
        }
    }
    Ok(())
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
