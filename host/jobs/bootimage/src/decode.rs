//! Decoding an object's JSON into the job's partial types, with the errors
//! admins have always read: a wrong type names the field path the way they
//! write it (`status.history[0].state must be a string, got a number`).
//! serde's own messages name Rust types (`expected struct Status`), so the
//! JSON is handed to the derived types through a small deserializer that
//! knows where it is and words a wrong type as [`FieldError`] does.
//!
//! A `null` field reads as an absent one, as Go's decoder leaves such
//! fields at their zero value.

use std::fmt;

use mco_bootimage::InputError;
use mco_bootimage::fields::FieldError;
use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{self, DeserializeOwned, Deserializer, IntoDeserializer, Unexpected, Visitor};
use serde_json::Value;

/// A decoding failure, and where in the object it happened.
#[derive(Debug)]
pub struct Error {
    path: Option<String>,
    problem: Problem,
}

#[derive(Debug)]
enum Problem {
    Type {
        expected: &'static str,
        found: &'static str,
    },
    Other(String),
}

impl Error {
    /// As the job reports it for an object `what` names.
    fn into_input_error(self, what: &'static str) -> InputError {
        let path = self.path.unwrap_or_default();
        match self.problem {
            Problem::Type { expected, found } => InputError::Field {
                what,
                source: FieldError {
                    path: if path.is_empty() {
                        "(root)".into()
                    } else {
                        path
                    },
                    expected,
                    found,
                },
            },
            Problem::Other(message) if path.is_empty() => InputError::Invalid { what, message },
            Problem::Other(message) => InputError::Invalid {
                what,
                message: format!("{path} {message}"),
            },
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.problem {
            Problem::Type { expected, found } => write!(f, "must be {expected}, got {found}"),
            Problem::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Error {
            path: None,
            problem: Problem::Other(message.to_string()),
        }
    }

    fn invalid_type(found: Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        Error {
            path: None,
            problem: Problem::Type {
                expected: json_type(&expected.to_string()),
                found: found_type(found),
            },
        }
    }
}

/// The JSON type a serde expectation stands for.
fn json_type(expected: &str) -> &'static str {
    match expected {
        "a string" | "a borrowed string" | "a character" => "a string",
        "a boolean" => "a boolean",
        "a sequence" | "a tuple" => "an array",
        "a map" => "an object",
        _ if expected.starts_with("struct ") => "an object",
        _ if expected.starts_with('i') || expected.starts_with('u') => "an integer",
        _ if expected.starts_with('f') => "a number",
        _ => "a valid value",
    }
}

fn found_type(found: Unexpected<'_>) -> &'static str {
    match found {
        Unexpected::Unit | Unexpected::Option => "null",
        Unexpected::Bool(_) => "a boolean",
        Unexpected::Unsigned(_) | Unexpected::Signed(_) | Unexpected::Float(_) => "a number",
        Unexpected::Str(_) | Unexpected::Char(_) => "a string",
        Unexpected::Seq => "an array",
        Unexpected::Map | Unexpected::StructVariant => "an object",
        _ => "something else",
    }
}

/// `T` from `object`, its errors worded for an object `what` names.
pub fn decode<T: DeserializeOwned>(object: &Value, what: &'static str) -> Result<T, InputError> {
    T::deserialize(At {
        value: object,
        path: String::new(),
    })
    .map_err(|e| e.into_input_error(what))
}

/// One JSON value and its path from the object's root.
struct At<'a> {
    value: &'a Value,
    path: String,
}

impl At<'_> {
    /// The first error to leave a value is about that value: it gets the
    /// value's path, and keeps it on the way out.
    fn locate<T>(path: &str, result: Result<T, Error>) -> Result<T, Error> {
        result.map_err(|mut error| {
            error.path.get_or_insert_with(|| path.to_owned());
            error
        })
    }
}

impl<'de, 'a> IntoDeserializer<'de, Error> for At<'a> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'de, 'a> Deserializer<'de> for At<'a> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let path = self.path;
        let result = match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => visitor.visit_u64(u),
                (None, Some(i)) => visitor.visit_i64(i),
                (None, None) => visitor.visit_f64(n.as_f64().unwrap_or_default()),
            },
            Value::String(s) => visitor.visit_str(s),
            Value::Array(items) => {
                let items = items.iter().enumerate().map(|(i, value)| At {
                    value,
                    path: format!("{path}[{i}]"),
                });
                let mut seq = SeqDeserializer::new(items);
                visitor
                    .visit_seq(&mut seq)
                    .and_then(|v| seq.end().map(|()| v))
            }
            Value::Object(map) => {
                let entries =
                    map.iter()
                        .filter(|(_, value)| !value.is_null())
                        .map(|(key, value)| {
                            let path = mco_bootimage::fields::join(&path, key);
                            (key.as_str(), At { value, path })
                        });
                let mut entries = MapDeserializer::new(entries);
                visitor
                    .visit_map(&mut entries)
                    .and_then(|v| entries.end().map(|()| v))
            }
        };
        At::locate(&path, result)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.value.is_null() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    /// serde's derived structs also accept arrays; an object's field never
    /// holds one.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        if self.value.is_array() {
            let wrong = de::Error::invalid_type(Unexpected::Seq, &visitor);
            return At::locate(&self.path, Err(wrong));
        }
        self.deserialize_any(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Deserialize, Debug, Default)]
    #[serde(default)]
    struct Outer {
        status: Option<Inner>,
        data: BTreeMap<String, String>,
    }

    #[derive(Deserialize, Debug, Default)]
    #[serde(default)]
    struct Inner {
        history: Vec<Entry>,
        generation: Option<i64>,
    }

    #[derive(Deserialize, Debug, Default)]
    #[serde(default)]
    struct Entry {
        state: Option<String>,
    }

    fn message(object: Value) -> String {
        decode::<Outer>(&object, "Thing")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn a_wrong_type_names_its_path_as_admins_write_it() {
        assert_eq!(
            message(json!({"status": 3})),
            "invalid Thing: status must be an object, got a number"
        );
        assert_eq!(
            message(json!({"status": {"history": "x"}})),
            "invalid Thing: status.history must be an array, got a string"
        );
        assert_eq!(
            message(json!({"status": {"history": [5]}})),
            "invalid Thing: status.history[0] must be an object, got a number"
        );
        assert_eq!(
            message(json!({"status": {"history": [{}, {"state": true}]}})),
            "invalid Thing: status.history[1].state must be a string, got a boolean"
        );
        assert_eq!(
            message(json!({"data": {"a": 1}})),
            "invalid Thing: data.a must be a string, got a number"
        );
        assert_eq!(
            message(json!({"status": {"generation": 1.5}})),
            "invalid Thing: status.generation must be an integer, got a number"
        );
        assert_eq!(
            message(json!([])),
            "invalid Thing: (root) must be an object, got an array"
        );
        assert_eq!(
            message(json!({"status": {"history": [[]]}})),
            "invalid Thing: status.history[0] must be an object, got an array"
        );
        // `null` is absent, at any depth.
        let read = decode::<Outer>(
            &json!({"status": {"history": null, "generation": 2}, "data": null}),
            "Thing",
        );
        assert!(matches!(
            read,
            Ok(Outer {
                status: Some(Inner {
                    generation: Some(2),
                    ..
                }),
                ..
            })
        ));
    }
}
