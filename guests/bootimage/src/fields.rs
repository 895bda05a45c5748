//! Checked access to fields of untyped Kubernetes JSON.
//!
//! providerSpec values are read as `serde_json::Value` rather than typed
//! structs so that unknown fields survive untouched and the merge patch can
//! stay minimal. The price is that every read must check the type; these
//! helpers make a wrong type an error that names the exact field, which is
//! what an admin needs to fix the MachineSet.

use serde_json::{Map, Value};

/// A field that is present but has the wrong JSON type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path} must be {expected}, got {found}")]
pub struct FieldError {
    pub path: String,
    pub expected: &'static str,
    pub found: &'static str,
}

/// The JSON type of `v`, phrased for error messages.
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn wrong(path: &str, expected: &'static str, v: &Value) -> FieldError {
    FieldError {
        path: path.to_owned(),
        expected,
        found: kind_of(v),
    }
}

/// Joins a parent path and a key the way admins write them (`a.b.c`).
pub fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// `v` itself as an object.
pub fn as_object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, FieldError> {
    v.as_object().ok_or_else(|| wrong(path, "an object", v))
}

/// A child that must be an object when set; missing and `null` are `None`
/// because Go's decoder leaves such fields at their zero value.
pub fn opt_object<'a>(
    parent: &'a Map<String, Value>,
    key: &str,
    parent_path: &str,
) -> Result<Option<&'a Map<String, Value>>, FieldError> {
    optional(parent, key, parent_path, "an object", Value::as_object)
}

/// A child that must be a string when set.
pub fn opt_str<'a>(
    parent: &'a Map<String, Value>,
    key: &str,
    parent_path: &str,
) -> Result<Option<&'a str>, FieldError> {
    optional(parent, key, parent_path, "a string", Value::as_str)
}

/// A child that must be a boolean when set.
pub fn opt_bool(
    parent: &Map<String, Value>,
    key: &str,
    parent_path: &str,
) -> Result<Option<bool>, FieldError> {
    optional(parent, key, parent_path, "a boolean", Value::as_bool)
}

/// A child that must be an array when set.
pub fn opt_array<'a>(
    parent: &'a Map<String, Value>,
    key: &str,
    parent_path: &str,
) -> Result<Option<&'a Vec<Value>>, FieldError> {
    optional(parent, key, parent_path, "an array", Value::as_array)
}

/// The shared shape of the `opt_*` readers: missing or `null` is `None`, a
/// value `read` accepts is `Some`, anything else names the field and both
/// types.
fn optional<'a, T>(
    parent: &'a Map<String, Value>,
    key: &str,
    parent_path: &str,
    expected: &'static str,
    read: impl FnOnce(&'a Value) -> Option<T>,
) -> Result<Option<T>, FieldError> {
    match parent.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => read(v)
            .map(Some)
            .ok_or_else(|| wrong(&join(parent_path, key), expected, v)),
    }
}

/// A string-to-string map such as `metadata.labels`.
pub fn opt_string_map(
    parent: &Map<String, Value>,
    key: &str,
    parent_path: &str,
) -> Result<std::collections::BTreeMap<String, String>, FieldError> {
    let path = join(parent_path, key);
    let mut out = std::collections::BTreeMap::new();
    if let Some(m) = opt_object(parent, key, parent_path)? {
        for (k, v) in m {
            match v {
                Value::String(s) => {
                    out.insert(k.clone(), s.clone());
                }
                other => return Err(wrong(&join(&path, k), "a string", other)),
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_path_and_types() {
        let v = json!({"a": {"b": 5, "c": null, "d": "x", "e": [1], "f": true, "m": {"k": 1}}});
        let a = opt_object(as_object(&v, "").unwrap(), "a", "spec")
            .unwrap()
            .unwrap();
        assert_eq!(
            opt_str(a, "b", "spec.a").unwrap_err().to_string(),
            "spec.a.b must be a string, got a number"
        );
        assert_eq!(opt_str(a, "c", "spec.a").unwrap(), None);
        assert_eq!(opt_str(a, "zz", "spec.a").unwrap(), None);
        assert_eq!(opt_str(a, "d", "spec.a").unwrap(), Some("x"));
        assert_eq!(opt_array(a, "e", "spec.a").unwrap().map(Vec::len), Some(1));
        assert!(opt_array(a, "d", "spec.a").is_err());
        assert_eq!(opt_bool(a, "f", "spec.a").unwrap(), Some(true));
        assert_eq!(
            opt_bool(a, "d", "spec.a").unwrap_err().to_string(),
            "spec.a.d must be a boolean, got a string"
        );
        assert_eq!(
            opt_string_map(a, "m", "spec.a").unwrap_err().to_string(),
            "spec.a.m.k must be a string, got a number"
        );
        assert!(as_object(&json!([]), "x").is_err());
        assert_eq!(join("", "k"), "k");
    }
}
