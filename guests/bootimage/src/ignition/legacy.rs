//! Spec 2.0 and 2.1 stubs, read the way upstream's spec 2.2 parser reads
//! them: Ignition's `v2_2.Parse` hands an older config to `v2_1.Parse` (and
//! that to `v2_0.Parse`), with that version's own Go types, and
//! `TranslateFromV2_0`/`TranslateFromV2_1` bring it up to 2.2. So, on the
//! JSON before the typed read (`v2.rs`): a key the older spec lacks is
//! dropped, as Go's decoder ignores it (a 2.1 stub's `ignition.security`
//! does not survive upstream either); a field the older types hold as a
//! plain value comes out set when left out (every `mode` 0, in 2.0 a file's
//! owner ids 0); and 2.0 refuses a hash without a `-` (`ErrHashMalformed`)
//! and negative modes, uids and gids.

use serde_json::{Map, Value};

/// The spec 2 versions older than 2.2 that the stub upgrade accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Legacy {
    V2_0,
    V2_1,
}

impl Legacy {
    pub(super) fn of(version: &str) -> Option<Legacy> {
        match version {
            "2.0.0" => Some(Legacy::V2_0),
            "2.1.0" => Some(Legacy::V2_1),
            _ => None,
        }
    }
}

/// Spec 2.2 keys that spec 2.1 lacks, by the object that holds them.
const NOT_IN_2_1: &[(&str, &[&str])] = &[
    ("ignition", &["security"]),
    ("file", &["overwrite", "append"]),
    ("directory", &["overwrite"]),
    ("link", &["overwrite"]),
];

/// Spec 2.1 keys that spec 2.0 lacks as well, by the object that holds them.
const NOT_IN_2_0: &[(&str, &[&str])] = &[
    ("ignition", &["timeouts"]),
    ("storage", &["directories", "links"]),
    ("owner", &["name"]),
    ("unit", &["enabled"]),
    (
        "user",
        &[
            "uid",
            "gecos",
            "homeDir",
            "noCreateHome",
            "primaryGroup",
            "groups",
            "noUserGroup",
            "system",
            "noLogInit",
            "shell",
        ],
    ),
];

/// The stub as spec 2.2 reads it after the translation from `spec`.
pub(super) fn as_v2_2(mut raw: Value, spec: Legacy) -> Result<Value, String> {
    let mut drop: Vec<(&str, &[&str])> = NOT_IN_2_1.to_vec();
    if spec == Legacy::V2_0 {
        drop.extend_from_slice(NOT_IN_2_0);
        check_v2_0(&raw)?;
    }
    let dropped = |kind: &str| -> Vec<&str> {
        drop.iter()
            .filter(|(k, _)| *k == kind)
            .flat_map(|(_, keys)| keys.iter().copied())
            .collect()
    };
    let Some(config) = raw.as_object_mut() else {
        return Ok(raw);
    };
    remove(object(config, "ignition"), &dropped("ignition"));
    remove(object(config, "storage"), &dropped("storage"));
    for (list, kind) in [
        ("files", "file"),
        ("directories", "directory"),
        ("links", "link"),
    ] {
        for node in objects(object(config, "storage"), list) {
            remove(Some(&mut *node), &dropped(kind));
            for owner in ["user", "group"] {
                remove(object(node, owner), &dropped("owner"));
            }
            if kind != "link" {
                implied(node, "mode");
            }
            if spec == Legacy::V2_0 {
                for owner in ["user", "group"] {
                    // A plain struct in 2.0: absent or `null` is `{}`.
                    let slot = node.entry(owner).or_insert(Value::Null);
                    if slot.is_null() {
                        *slot = Value::Object(Map::new());
                    }
                    if let Some(owner) = slot.as_object_mut() {
                        implied(owner, "id");
                    }
                }
            }
        }
    }
    for unit in objects(object(config, "systemd"), "units") {
        remove(Some(unit), &dropped("unit"));
    }
    for user in objects(object(config, "passwd"), "users") {
        remove(Some(&mut *user), &dropped("user"));
        // 2.0 holds the hash as a plain string, `StrToPtr` makes "" absent.
        if spec == Legacy::V2_0 && user.get("passwordHash") == Some(&Value::from("")) {
            user.remove("passwordHash");
        }
    }
    Ok(raw)
}

/// The object under `key`, if it is one; other types are left for the
/// typed read to refuse.
fn object<'a>(map: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    map.get_mut(key).and_then(Value::as_object_mut)
}

/// The objects of the array under `key`.
fn objects<'a>(
    map: Option<&'a mut Map<String, Value>>,
    key: &str,
) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    map.and_then(|m| m.get_mut(key))
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

fn remove(map: Option<&mut Map<String, Value>>, keys: &[&str]) {
    if let Some(map) = map {
        for key in keys {
            map.remove(*key);
        }
    }
}

/// A plain Go `int` field: absent or `null` reads as 0.
fn implied(map: &mut Map<String, Value>, key: &str) {
    let slot = map.entry(key).or_insert(Value::Null);
    if slot.is_null() {
        *slot = Value::from(0);
    }
}

/// What the spec 2.0 types refuse to decode and 2.2's accept.
fn check_v2_0(raw: &Value) -> Result<(), String> {
    let refs = ["/ignition/config/append", "/ignition/config/replace"]
        .iter()
        .filter_map(|p| raw.pointer(p))
        .flat_map(|v| match v {
            Value::Array(items) => items.iter().collect(),
            other => vec![other],
        });
    let contents = raw
        .pointer("/storage/files")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|f| f.get("contents"));
    for hash in refs
        .chain(contents)
        .filter_map(|r| r.pointer("/verification/hash"))
    {
        if let Some(h) = hash.as_str()
            && !h.contains('-')
        {
            return Err(format!("hash is malformed: {h:?}"));
        }
    }
    let unsigned = [
        ("/storage/files", "/mode"),
        ("/passwd/users", "/create/uid"),
        ("/passwd/groups", "/gid"),
    ];
    for (list, field) in unsigned {
        for item in raw
            .pointer(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(n) = item.pointer(field).and_then(Value::as_i64)
                && n < 0
            {
                return Err(format!(
                    "{list}[]{field}: {n} is negative; spec 2.0 holds it unsigned"
                ));
            }
        }
    }
    Ok(())
}
