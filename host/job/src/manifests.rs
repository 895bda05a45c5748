//! Reading Kubernetes objects from files for `eval`: YAML or JSON, one
//! object, a `List`, or several YAML documents; `-` is standard input.
//! Many objects of one kind can also be read one at a time
//! ([`Reader::each`]), a JSON file streamed as it is parsed.

use std::collections::HashSet;
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use mco_cluster::decode::{Field, Isolated, Problem, Undecodable};

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
    /// Nested past what the host decodes (`cluster::decode`).
    #[error("{path}: {source}")]
    Undecodable {
        path: String,
        #[source]
        source: Box<Undecodable>,
    },
    #[error("only one input may be read from standard input ('-')")]
    StdinTwice,
}

/// The names of a file's objects so far: each object must have one, and no
/// name may come twice (two objects of one name would be counted twice;
/// one without a name could not be shown).
pub struct Names<'a> {
    path: &'a str,
    kind: &'a str,
    seen: HashSet<String>,
}

impl<'a> Names<'a> {
    pub fn new(path: &'a str, kind: &'a str) -> Names<'a> {
        Names {
            path,
            kind,
            seen: HashSet::new(),
        }
    }

    pub fn check(&mut self, name: Option<&str>) -> Result<(), InputError> {
        let malformed = |name: &str, detail: &str| InputError::Malformed {
            path: self.path.to_owned(),
            kind: self.kind.to_owned(),
            name: name.to_owned(),
            detail: detail.to_owned(),
        };
        let name = name.ok_or_else(|| malformed("(unnamed)", "no metadata.name"))?;
        if self.seen.contains(name) {
            return Err(malformed(name, "given twice"));
        }
        self.seen.insert(name.to_owned());
        Ok(())
    }
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
        documents
            .into_iter()
            .flat_map(flatten)
            .map(|value| typed(path, kind, value))
            .collect()
    }

    /// Every object of `kind` in `path`, as [`Reader::objects`] reads
    /// them, handed to `each` one at a time; the first error `each` returns
    /// stops the reading. A JSON file (a `List`, as `kubectl get -o json`
    /// prints it, an array or one object) is parsed as it is read, so only
    /// the object in hand is in memory, never the file or its parse tree;
    /// YAML is read whole.
    pub fn each<T: DeserializeOwned>(
        &mut self,
        path: &str,
        kind: &str,
        mut each: impl FnMut(T) -> Result<(), InputError>,
    ) -> Result<(), InputError> {
        let mut input = self.open(path)?;
        let read_error = |source| InputError::Read {
            path: path.into(),
            source,
        };
        let json = loop {
            let buffer = input.fill_buf().map_err(read_error)?;
            match buffer.iter().position(|b| !b.is_ascii_whitespace()) {
                Some(at) => break matches!(buffer[at], b'{' | b'['),
                None if buffer.is_empty() => break false,
                None => {
                    let len = buffer.len();
                    input.consume(len);
                }
            }
        };
        if !json {
            let mut text = String::new();
            input.read_to_string(&mut text).map_err(read_error)?;
            for value in parse(path, &text)?.into_iter().flat_map(flatten) {
                each(typed(path, kind, value)?)?;
            }
            return Ok(());
        }
        let mut refused = None;
        let mut hand = |object: Result<Value, Undecodable>| {
            let handed = object
                .map_err(|source| undecodable(path, source))
                .and_then(|value| typed(path, kind, value))
                .and_then(&mut each);
            handed.map_err(|error| refused = Some(error)).is_ok()
        };
        let mut stream = serde_json::Deserializer::from_reader(input);
        let parsed = Stream { each: &mut hand }
            .deserialize(&mut stream)
            .and_then(|()| stream.end());
        if let Some(error) = refused {
            return Err(error);
        }
        parsed.map_err(|e| InputError::Parse {
            path: path.into(),
            detail: e.to_string(),
        })
    }

    /// `path` to read from, buffered; standard input at most once.
    fn open(&mut self, path: &str) -> Result<Box<dyn BufRead>, InputError> {
        if path == "-" {
            if std::mem::replace(&mut self.stdin_used, true) {
                return Err(InputError::StdinTwice);
            }
            return Ok(Box::new(BufReader::new(std::io::stdin())));
        }
        let file = std::fs::File::open(path).map_err(|source| InputError::Read {
            path: path.into(),
            source,
        })?;
        Ok(Box::new(BufReader::new(file)))
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

fn undecodable(path: &str, source: Undecodable) -> InputError {
    InputError::Undecodable {
        path: path.into(),
        source: Box::new(source),
    }
}

/// The objects of a file, each checked as the host's watches read them:
/// an object nested deeper than they decode is refused by name. JSON is
/// read one object at a time; YAML is parsed whole first, within
/// [`yaml_options`], then each document is read as JSON would be.
fn parse(path: &str, text: &str) -> Result<Vec<Value>, InputError> {
    let mut objects = Vec::new();
    let mut refused = None;
    let mut collect = |object| match object {
        Ok(value) => {
            objects.push(value);
            true
        }
        Err(failure) => {
            refused = Some(failure);
            false
        }
    };
    let trimmed = text.trim_start();
    let parsed = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        let mut json = serde_json::Deserializer::from_str(trimmed);
        Stream { each: &mut collect }
            .deserialize(&mut json)
            .and_then(|()| json.end())
            .map_err(|e| e.to_string())
    } else {
        serde_saphyr::from_multiple_with_options::<Value>(text, yaml_options())
            .map_err(|e| e.to_string())
            .and_then(|documents| {
                documents
                    .into_iter()
                    .try_for_each(|document| match document {
                        Value::Object(_) | Value::Array(_) => Stream { each: &mut collect }
                            .deserialize(document)
                            .map_err(|e| e.to_string()),
                        // Not an object: `typed` says what it is instead.
                        other => {
                            collect(Ok(other));
                            Ok(())
                        }
                    })
            })
    };
    if let Some(failure) = refused {
        return Err(undecodable(path, failure));
    }
    parsed.map_err(|detail| InputError::Parse {
        path: path.into(),
        detail,
    })?;
    Ok(objects)
}

/// How YAML is parsed: serde-saphyr's budget (which bounds aliases,
/// anchors, nodes and documents, so a billion-laughs file is refused),
/// with nesting up to twice what the host decodes, so that an object
/// nested past that, alone or in a `List`, is refused by name, and a file
/// nested far deeper before it is built. Errors give the line and column,
/// without the snippet of the file serde-saphyr would quote (the file may
/// hold a Secret).
fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = 2 * mco_cluster::decode::MAX_DEPTH;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.with_snippet = false;
    options
}

/// One object of a file as a `T`, if it is of `kind`.
fn typed<T: DeserializeOwned>(path: &str, kind: &str, value: Value) -> Result<T, InputError> {
    let found = kind_of(&value);
    let found = found.as_deref().unwrap_or("an object without kind");
    if found != kind {
        return Err(InputError::WrongKind {
            path: path.into(),
            expected: kind.into(),
            found: found.into(),
        });
    }
    let name = Named::deserialize(&value)
        .ok()
        .and_then(|named| named.metadata.name)
        .unwrap_or_else(|| "(unnamed)".to_owned());
    serde_json::from_value(value).map_err(|e| InputError::Malformed {
        path: path.into(),
        kind: kind.into(),
        name,
        detail: e.to_string(),
    })
}

/// The `kind` an object read from a file says it is, if it says one.
pub fn kind_of(object: &Value) -> Option<String> {
    #[derive(Deserialize)]
    struct Head {
        kind: Option<String>,
    }
    Head::deserialize(object).ok().and_then(|head| head.kind)
}

/// What names an object, read apart from its `kind`, so that one of the
/// wrong type does not hide the other.

#[derive(Deserialize)]
struct Named {
    metadata: Name,
}

#[derive(Deserialize)]
struct Name {
    name: Option<String>,
}

/// A JSON document parsed as it streams: each element of an array, each
/// of a `List`'s `items` (any object's, which nothing else has at the top)
/// or else the object itself goes to `each` (expanded as [`flatten`]
/// expands it) as soon as it is whole, or why it cannot be read
/// (`cluster::decode`). `each` returns false to stop.
struct Stream<'a> {
    each: &'a mut dyn FnMut(Result<Value, Undecodable>) -> bool,
}

impl Stream<'_> {
    fn hand<E: de::Error>(&mut self, value: Value) -> Result<(), E> {
        for object in flatten(value) {
            if !(self.each)(Ok(object)) {
                return Err(E::custom("stopped"));
            }
        }
        Ok(())
    }

    fn refuse<E: de::Error>(&mut self, failure: Undecodable) -> Result<(), E> {
        (self.each)(Err(failure));
        Err(E::custom("stopped"))
    }
}

impl<'de> DeserializeSeed<'de> for Stream<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Stream<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object, a List or an array of objects")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        while let Some(Isolated(object)) = seq.next_element::<Isolated<Value>>()? {
            match object {
                Ok(value) => self.hand(value)?,
                Err(failure) => self.refuse(*failure)?,
            }
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let mut fields = serde_json::Map::new();
        let mut listed = false;
        let mut too_deep = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "items" && !listed {
                map.next_value_seed(Stream {
                    each: &mut *self.each,
                })?;
                listed = true;
            } else {
                match map.next_value_seed(Field)? {
                    Some(value) => {
                        fields.insert(key, value);
                    }
                    None => too_deep = true,
                }
            }
        }
        if listed {
            return Ok(());
        }
        let object = Value::Object(fields);
        if too_deep {
            return self.refuse(Undecodable::of(&object, Problem::TooDeep));
        }
        self.hand(object)
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

    /// An object of the tests, as far as they read it.
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Object {
        metadata: Meta,
    }

    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Meta {
        name: String,
    }

    fn names(text: &str, kind: &str) -> Result<Vec<String>, InputError> {
        let f = file(text);
        let objects: Vec<Object> =
            Reader::default().objects(&f.path().display().to_string(), kind)?;
        Ok(objects.into_iter().map(|o| o.metadata.name).collect())
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

    fn each(text: &str) -> Result<Vec<String>, InputError> {
        let f = file(text);
        let mut seen = Vec::new();
        Reader::default().each(
            &f.path().display().to_string(),
            "Node",
            |node: Object| match node.metadata.name.as_str() {
                "refused" => Err(InputError::StdinTwice),
                name => {
                    seen.push(name.to_owned());
                    Ok(())
                }
            },
        )?;
        Ok(seen)
    }

    #[test]
    fn each_streams_json_lists_arrays_and_objects_and_reads_yaml_whole() {
        let node = |name: &str| format!(r#"{{"kind":"Node","metadata":{{"name":"{name}"}}}}"#);
        let list = format!(
            r#"  {{"apiVersion":"v1","items":[{},{}],"kind":"List","metadata":{{}}}}"#,
            node("a"),
            node("b")
        );
        assert_eq!(each(&list).ok(), Some(vec!["a".into(), "b".into()]));
        let nested = format!(
            r#"[{},{{"kind":"NodeList","items":[{}]}}]"#,
            node("a"),
            node("c")
        );
        assert_eq!(each(&nested).ok(), Some(vec!["a".into(), "c".into()]));
        assert_eq!(each(&node("d")).ok(), Some(vec!["d".into()]));
        let yaml = "kind: Node\nmetadata: {name: e}\n---\nkind: Node\nmetadata: {name: f}\n";
        assert_eq!(each(yaml).ok(), Some(vec!["e".into(), "f".into()]));
        assert_eq!(each("").ok(), Some(vec![]));
    }

    #[test]
    fn each_stops_at_the_first_wrong_object_or_refusal() {
        let list =
            r#"{"items":[{"kind":"Node","metadata":{"name":"a"}},{"kind":"Pod"}],"kind":"List"}"#;
        assert!(matches!(each(list), Err(InputError::WrongKind { .. })));
        let refused = r#"[{"kind":"Node","metadata":{"name":"refused"}}]"#;
        assert!(matches!(each(refused), Err(InputError::StdinTwice)));
        assert!(matches!(
            each(r#"{"items":[{"kind":"Node"}"#),
            Err(InputError::Parse { .. })
        ));
        assert!(matches!(
            each(r#"[{"kind":"Node"}] trailing"#),
            Err(InputError::Parse { .. })
        ));
        assert!(matches!(
            each("\"a string\""),
            Err(InputError::WrongKind { .. })
        ));
        assert!(matches!(
            Reader::default().each("/nonexistent/nodes.json", "Node", |_: Value| Ok(())),
            Err(InputError::Read { .. })
        ));
    }

    /// A Node whose `spec` nests `levels` objects: `levels + 1` in all.
    fn deep_node(name: &str, levels: usize) -> String {
        format!(
            r#"{{"kind":"Node","metadata":{{"name":"{name}"}},"spec":{}1{}}}"#,
            r#"{"a":"#.repeat(levels),
            "}".repeat(levels)
        )
    }

    /// As deep as the host's watches decode, and no deeper; refused by name,
    /// alone or in a list, read whole or streamed, however deep.
    #[test]
    fn objects_nest_as_deep_as_the_host_decodes_them() {
        use mco_cluster::decode::MAX_DEPTH;
        let fits = deep_node("fits", MAX_DEPTH - 1);
        assert_eq!(names(&fits, "Node").ok(), Some(vec!["fits".into()]));
        assert_eq!(each(&fits).ok(), Some(vec!["fits".into()]));
        let refused = |result: Result<Vec<String>, InputError>| match result {
            Err(error @ InputError::Undecodable { .. }) => error.to_string(),
            other => panic!("{other:?}"),
        };
        for levels in [MAX_DEPTH, 10_000] {
            let deep = deep_node("deep", levels);
            let list = format!(r#"{{"kind":"NodeList","items":[{fits},{deep}]}}"#);
            for text in [&deep, &list] {
                for message in [refused(names(text, "Node")), refused(each(text))] {
                    assert!(
                        message.ends_with(&format!(
                            ": Node deep is nested more than {MAX_DEPTH} levels deep"
                        )),
                        "{message}"
                    );
                }
            }
        }
    }

    /// YAML is held to the same depth, refused by name; a file nested far
    /// deeper, or whose aliases expand past the budget (billion laughs),
    /// is refused naming the file, before it is built.
    #[test]
    fn yaml_nests_as_deep_as_json_and_no_more() {
        use mco_cluster::decode::MAX_DEPTH;
        let yaml = |json: String| format!("---\n{json}\n");
        let fits = yaml(deep_node("fits", MAX_DEPTH - 1));
        assert_eq!(names(&fits, "Node").ok(), Some(vec!["fits".into()]));
        assert_eq!(each(&fits).ok(), Some(vec!["fits".into()]));
        let deep = yaml(deep_node("deep", MAX_DEPTH));
        let list = yaml(format!(
            r#"{{"kind":"NodeList","items":[{},{}]}}"#,
            deep_node("fits", MAX_DEPTH - 1),
            deep_node("deep", MAX_DEPTH)
        ));
        for text in [&deep, &list] {
            for result in [names(text, "Node"), each(text)] {
                let message = match result {
                    Err(error @ InputError::Undecodable { .. }) => error.to_string(),
                    other => panic!("{other:?}"),
                };
                assert!(
                    message.ends_with(&format!(
                        ": Node deep is nested more than {MAX_DEPTH} levels deep"
                    )),
                    "{message}"
                );
            }
        }
        let block = (0..MAX_DEPTH * 3).fold("kind: Node\nspec:\n".to_owned(), |text, level| {
            text + &" ".repeat(2 * level + 2) + "a:\n"
        });
        let laughs = (1..10).fold(
            "kind: Node\nmetadata: {name: lol}\nl0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
                .to_owned(),
            |text, level| {
                let up = format!("*l{}", level - 1);
                text + &format!("l{level}: &l{level} [{}]\n", vec![up; 10].join(", "))
            },
        );
        for text in [yaml(deep_node("far", 10_000)), block, laughs] {
            let f = file(&text);
            let path = f.path().display().to_string();
            match Reader::default().objects::<Value>(&path, "Node") {
                Err(error @ InputError::Parse { .. }) => {
                    let message = error.to_string();
                    assert!(message.starts_with(&format!("{path}: ")), "{message}");
                    assert!(message.len() < 300, "{message}");
                }
                Err(other) => panic!("{other}"),
                Ok(objects) => panic!("{} objects read", objects.len()),
            }
        }
    }

    #[test]
    fn missing_files_are_read_errors() {
        let result: Result<Vec<Value>, _> =
            Reader::default().objects("/nonexistent/file.yaml", "Node");
        assert!(matches!(result, Err(InputError::Read { .. })));
    }
}
