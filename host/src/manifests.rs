//! Reading Kubernetes objects from files for `eval`: YAML or JSON, one
//! object, a `List`, or several YAML documents; `-` is standard input.

use std::io::Read;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Bad invocation or input: `eval` exits with status 2.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not valid YAML or JSON: {detail}")]
    Parse { path: String, detail: String },
    #[error("{path}: expected {expected}, found {found}")]
    WrongKind {
        path: String,
        expected: String,
        found: String,
    },
    #[error("{path}: expected exactly one {kind}, found {count}")]
    Count {
        path: String,
        kind: String,
        count: usize,
    },
    #[error("{path}: {kind} {name} is malformed: {detail}")]
    Malformed {
        path: String,
        kind: String,
        name: String,
        detail: String,
    },
    #[error("only one input may be read from standard input ('-')")]
    StdinTwice,
}

/// Reads every file once and remembers whether stdin was used.
#[derive(Default)]
pub struct Reader {
    stdin_used: bool,
}

impl Reader {
    /// Every object of `kind` in an optional file; none when it was not given.
    pub fn all<T: DeserializeOwned>(
        &mut self,
        path: Option<&str>,
        kind: &str,
    ) -> Result<Vec<T>, InputError> {
        match path {
            Some(path) => self.objects(path, kind),
            None => Ok(Vec::new()),
        }
    }

    /// All objects of `kind` in `path` (a file holding other kinds is an error).
    pub fn objects<T: DeserializeOwned>(
        &mut self,
        path: &str,
        kind: &str,
    ) -> Result<Vec<T>, InputError> {
        let text = self.text(path)?;
        let documents = parse(path, &text)?;
        let mut objects = Vec::new();
        for value in documents.into_iter().flat_map(flatten) {
            let found = value
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("an object without kind");
            if found != kind {
                return Err(InputError::WrongKind {
                    path: path.into(),
                    expected: kind.into(),
                    found: found.into(),
                });
            }
            let name = value
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("(unnamed)")
                .to_string();
            let object = serde_json::from_value(value).map_err(|e| InputError::Malformed {
                path: path.into(),
                kind: kind.into(),
                name,
                detail: e.to_string(),
            })?;
            objects.push(object);
        }
        Ok(objects)
    }

    /// The single object of `kind` in `path`.
    pub fn object<T: DeserializeOwned>(&mut self, path: &str, kind: &str) -> Result<T, InputError> {
        let mut objects = self.objects(path, kind)?;
        match objects.len() {
            1 => Ok(objects.remove(0)),
            count => Err(InputError::Count {
                path: path.into(),
                kind: kind.into(),
                count,
            }),
        }
    }

    /// The raw text of `path`.
    pub fn text(&mut self, path: &str) -> Result<String, InputError> {
        let read_error = |source| InputError::Read {
            path: path.into(),
            source,
        };
        if path == "-" {
            if std::mem::replace(&mut self.stdin_used, true) {
                return Err(InputError::StdinTwice);
            }
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(read_error)?;
            Ok(text)
        } else {
            std::fs::read_to_string(path).map_err(read_error)
        }
    }
}

fn parse(path: &str, text: &str) -> Result<Vec<Value>, InputError> {
    let parse_error = |detail: String| InputError::Parse {
        path: path.into(),
        detail,
    };
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        serde_json::from_str::<Value>(trimmed)
            .map(|v| vec![v])
            .map_err(|e| parse_error(e.to_string()))
    } else {
        serde_saphyr::from_multiple::<Value>(text).map_err(|e| parse_error(e.to_string()))
    }
}

/// Expands `List`/`*List` objects and JSON arrays; drops empty documents.
fn flatten(value: Value) -> Vec<Value> {
    match value {
        Value::Null => Vec::new(),
        Value::Array(items) => items.into_iter().flat_map(flatten).collect(),
        Value::Object(ref map)
            if map
                .get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| k.ends_with("List"))
                && map.get("items").is_some_and(Value::is_array) =>
        {
            match value {
                Value::Object(mut map) => match map.remove("items") {
                    Some(items) => flatten(items),
                    None => Vec::new(),
                },
                _ => Vec::new(),
            }
        }
        other => vec![other],
    }
}

/// `dir/file` when it exists. A missing required file is reported by the
/// reader under its plain name.
pub fn case_file(dir: &Path, file: &str) -> Option<String> {
    let path = dir.join(file);
    path.exists().then(|| path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap_or_else(|e| panic!("{e}"));
        f.write_all(text.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        f
    }

    fn names(text: &str, kind: &str) -> Result<Vec<String>, InputError> {
        let f = file(text);
        let objects: Vec<Value> =
            Reader::default().objects(&f.path().display().to_string(), kind)?;
        Ok(objects
            .iter()
            .map(|o| {
                o.pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            })
            .collect())
    }

    #[test]
    fn lists_multi_documents_and_json_all_work() {
        let multi = "kind: Node\nmetadata: {name: a}\n---\n---\nkind: Node\nmetadata: {name: b}\n";
        assert_eq!(
            names(multi, "Node").ok(),
            Some(vec!["a".into(), "b".into()])
        );
        let list = r#"{"kind":"NodeList","items":[{"kind":"Node","metadata":{"name":"c"}}]}"#;
        assert_eq!(names(list, "Node").ok(), Some(vec!["c".into()]));
        let yaml_list = "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata: {name: d}\n";
        assert_eq!(names(yaml_list, "Node").ok(), Some(vec!["d".into()]));
    }

    #[test]
    fn wrong_kinds_and_garbage_are_input_errors() {
        assert!(matches!(
            names("kind: Pod\nmetadata: {name: a}\n", "Node"),
            Err(InputError::WrongKind { .. })
        ));
        assert!(matches!(
            names("{not json", "Node"),
            Err(InputError::Parse { .. })
        ));
        assert!(matches!(
            names("a: [unclosed\n", "Node"),
            Err(InputError::Parse { .. })
        ));
        assert!(matches!(
            names("- 1\n- 2\n", "Node"),
            Err(InputError::WrongKind { .. })
        ));
    }

    #[test]
    fn exactly_one_object_when_one_is_asked_for() {
        let f = file("kind: Node\nmetadata: {name: a}\n---\nkind: Node\nmetadata: {name: b}\n");
        let result: Result<Value, _> =
            Reader::default().object(&f.path().display().to_string(), "Node");
        assert!(matches!(result, Err(InputError::Count { count: 2, .. })));
    }

    #[test]
    fn missing_files_are_read_errors() {
        let result: Result<Vec<Value>, _> =
            Reader::default().objects("/nonexistent/file.yaml", "Node");
        assert!(matches!(result, Err(InputError::Read { .. })));
    }
}
