//! Each object of a list or watch event decoded on its own, so that one bad
//! object is one bad object. kube decodes a whole list or watch event in one
//! serde_json pass, whose recursion limit (128) counts from the list's root,
//! so one object nested deeper (the apiserver keeps unknown fields, such as a
//! MachineSet's `providerSpec.value`, thousands of levels deep) failed the
//! whole list and its watch never listed; kube's `DeserializeGuard` buffers
//! through the same deserializer first. [`Isolated`] skips whatever is
//! nested past [`MAX_DEPTH`] from the object's own root
//! (`Deserializer::ignore_value` does not recurse), then decodes it; a
//! failure belongs to that object alone, and [`Failures`] counts it, logs it
//! and puts a Warning Event on the object.

use std::cell::Cell;
use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::runtime::events::EventType;
use kube::runtime::watcher::Event;
use kube::{Client, Resource};
use serde::de::{self, DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Number, Value};

use super::events::{Events, Note};
use crate::metrics::Metrics;

/// How deep an object may nest (objects and arrays, its root included).
/// Real objects stay far below it (a MachineSet nests about a dozen
/// levels, a rendered MachineConfig fewer), and an object of a list at
/// this depth stays under the 128 levels serde_json allows the list.
pub const MAX_DEPTH: usize = 100;

/// An object decoded apart from the list or watch event that carried it.
#[derive(Clone, Debug)]
pub struct Isolated<K>(pub Result<K, Box<Undecodable>>);

/// An object that could not be decoded: its type and identity as far as
/// they could be read, and why.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{} {} {problem}", noun(.kind), qualified_name(.metadata))]
pub struct Undecodable {
    pub api_version: String,
    pub kind: String,
    /// Only its name, namespace, uid and resourceVersion.
    pub metadata: ObjectMeta,
    pub problem: Problem,
}

/// Why an object could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("is nested more than {MAX_DEPTH} levels deep")]
    TooDeep,
    #[error("cannot be decoded: {0}")]
    Invalid(String),
}

/// An object's kind, when it says it (an item of a list of a built-in
/// kind does not).
fn noun(kind: &str) -> &str {
    if kind.is_empty() { "object" } else { kind }
}

/// `namespace/name`, or `name` for a cluster-scoped object.
fn qualified_name(metadata: &ObjectMeta) -> String {
    let name = metadata.name.as_deref().unwrap_or("(unnamed)");
    match metadata.namespace.as_deref() {
        Some(namespace) => format!("{namespace}/{name}"),
        None => name.to_owned(),
    }
}

impl Undecodable {
    /// The failure of `object` (what of it could be read).
    pub fn of(object: &Value, problem: Problem) -> Undecodable {
        let text = |pointer: &str| {
            object
                .pointer(pointer)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        Undecodable {
            api_version: text("/apiVersion").unwrap_or_default(),
            kind: text("/kind").unwrap_or_default(),
            metadata: ObjectMeta {
                name: text("/metadata/name"),
                namespace: text("/metadata/namespace"),
                uid: text("/metadata/uid"),
                resource_version: text("/metadata/resourceVersion"),
                ..ObjectMeta::default()
            },
            problem,
        }
    }

    /// Its `namespace/name` (or `name`).
    pub fn name(&self) -> String {
        qualified_name(&self.metadata)
    }
}

impl<'de, K: DeserializeOwned> Deserialize<'de> for Isolated<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let too_deep = Cell::new(false);
        let value = Capture {
            left: MAX_DEPTH,
            too_deep: &too_deep,
        }
        .deserialize(deserializer)?;
        Ok(Isolated(decode(value, too_deep.get())))
    }
}

/// `K` from `value`; `too_deep` when [`Capture`] passed over part of it.
fn decode<K: DeserializeOwned>(value: Value, too_deep: bool) -> Result<K, Box<Undecodable>> {
    if too_deep {
        return Err(Box::new(Undecodable::of(&value, Problem::TooDeep)));
    }
    // What names it is read before the decoding takes `value` apart: a
    // few short strings.
    let named = Undecodable::of(&value, Problem::Invalid(String::new()));
    serde_json::from_value(value).map_err(|err| {
        Box::new(Undecodable {
            problem: Problem::Invalid(err.to_string()),
            ..named
        })
    })
}

/// A field of an object, read as [`Isolated`] reads the object (for a
/// reader that takes the object apart itself): `None` when it nests past
/// the object's limit.
pub struct Field;

impl<'de> DeserializeSeed<'de> for Field {
    type Value = Option<Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<Value>, D::Error> {
        let too_deep = Cell::new(false);
        let value = Capture {
            left: MAX_DEPTH - 1,
            too_deep: &too_deep,
        }
        .deserialize(deserializer)?;
        Ok((!too_deep.get()).then_some(value))
    }
}

/// Reads one value into a [`Value`]; a container `left` levels down is
/// the last one kept, anything inside one deeper is passed over and noted
/// in `too_deep`.
struct Capture<'a> {
    left: usize,
    too_deep: &'a Cell<bool>,
}

impl Capture<'_> {
    fn inner(&self) -> Capture<'_> {
        Capture {
            left: self.left - 1,
            too_deep: self.too_deep,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Capture<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> de::Visitor<'de> for Capture<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(Number::from_f64(n).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if self.left == 0 {
            self.too_deep.set(true);
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(Value::Null);
        }
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self.inner())? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        if self.left == 0 {
            self.too_deep.set(true);
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(Value::Null);
        }
        let mut fields = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self.inner())?;
            fields.insert(key, value);
        }
        Ok(Value::Object(fields))
    }
}

/// Like kube's `DeserializeGuard`: the metadata of either.
impl<K: Resource> Resource for Isolated<K> {
    type DynamicType = K::DynamicType;
    type Scope = K::Scope;

    fn kind(dt: &K::DynamicType) -> std::borrow::Cow<'_, str> {
        K::kind(dt)
    }
    fn group(dt: &K::DynamicType) -> std::borrow::Cow<'_, str> {
        K::group(dt)
    }
    fn version(dt: &K::DynamicType) -> std::borrow::Cow<'_, str> {
        K::version(dt)
    }
    fn api_version(dt: &K::DynamicType) -> std::borrow::Cow<'_, str> {
        K::api_version(dt)
    }
    fn plural(dt: &K::DynamicType) -> std::borrow::Cow<'_, str> {
        K::plural(dt)
    }
    fn url_path(dt: &K::DynamicType, namespace: Option<&str>) -> String {
        K::url_path(dt, namespace)
    }
    fn meta(&self) -> &ObjectMeta {
        self.0.as_ref().map_or_else(|err| &err.metadata, K::meta)
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.0
            .as_mut()
            .map_or_else(|err| &mut err.metadata, K::meta_mut)
    }
}

/// Where the objects that cannot be decoded are reported: counted by kind
/// (`mco_watch_decode_failures_total`), logged with their name, and a
/// Warning Event published on each, once per object and problem (a relist
/// finds the same object again).
#[derive(Clone)]
pub struct Failures {
    metrics: Metrics,
    events: Option<Arc<Events>>,
}

impl Failures {
    /// Publishing Events as `identity`.
    pub fn new(client: Client, identity: &str, metrics: Metrics) -> Failures {
        Failures {
            metrics,
            events: Some(Arc::new(Events::new(client, identity))),
        }
    }

    /// Counting and logging only.
    #[cfg(any(test, feature = "test-support"))]
    pub fn unpublished(metrics: Metrics) -> Failures {
        Failures {
            metrics,
            events: None,
        }
    }

    /// Reports `failure`, of `kind` (`apiVersion`) when the object does
    /// not say (the items of a list of a built-in kind do not).
    pub fn report(&self, failure: &Undecodable, api_version: &str, kind: &str) {
        let or = |own: &str, watched: &str| if own.is_empty() { watched } else { own }.to_owned();
        let (api_version, kind) = (
            or(&failure.api_version, api_version),
            or(&failure.kind, kind),
        );
        self.metrics.count_decode_failure(&kind);
        let name = failure.name();
        tracing::warn!(%kind, object = %name, problem = %failure.problem, "skipping an object that cannot be decoded");
        let Some(events) = self.events.clone() else {
            return;
        };
        let reference = ObjectReference {
            api_version: Some(api_version),
            kind: Some(kind.clone()),
            name: failure.metadata.name.clone(),
            namespace: failure.metadata.namespace.clone(),
            uid: failure.metadata.uid.clone(),
            ..ObjectReference::default()
        };
        let note = format!(
            "{kind} {name} {}; the host cannot read it and leaves it alone",
            failure.problem
        );
        let key = format!("{kind}/{name}");
        let metrics = self.metrics.clone();
        tokio::spawn(async move {
            let note = Note {
                type_: EventType::Warning,
                reason: "DecodeFailed",
                action: "Decode",
                note: &note,
            };
            if events.publish_once(&key, &reference, note).await {
                metrics.count_write("event");
            }
        });
    }

    /// `event` without the objects that could not be decoded, each
    /// reported: to a cache the event feeds, such an object is absent (a
    /// list leaves it out; a change or deletion that cannot be decoded
    /// deletes it).
    pub fn skip<K>(&self, event: Event<Isolated<K>>) -> Option<Event<K>>
    where
        K: Resource + Default,
        K::DynamicType: Default,
    {
        let absent = |failure: Box<Undecodable>| {
            let dt = K::DynamicType::default();
            self.report(&failure, &K::api_version(&dt), &K::kind(&dt));
            let mut stand_in = K::default();
            *stand_in.meta_mut() = failure.metadata;
            stand_in
        };
        match event {
            Event::Init => Some(Event::Init),
            Event::InitDone => Some(Event::InitDone),
            Event::InitApply(Isolated(Ok(object))) => Some(Event::InitApply(object)),
            Event::Apply(Isolated(Ok(object))) => Some(Event::Apply(object)),
            Event::Delete(Isolated(Ok(object))) => Some(Event::Delete(object)),
            Event::InitApply(Isolated(Err(failure))) => {
                absent(failure);
                None
            }
            Event::Apply(Isolated(Err(failure))) | Event::Delete(Isolated(Err(failure))) => {
                Some(Event::Delete(absent(failure)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Node;
    use kube::api::DynamicObject;
    use kube::core::{ObjectList, WatchEvent};
    use prometheus_client::registry::Registry;

    use super::*;

    /// A MachineSet whose `providerSpec.value` holds `levels` nested
    /// objects, as text (a `Value` that deep could not even be dropped).
    fn machineset(name: &str, levels: usize) -> String {
        format!(
            r#"{{"apiVersion":"machine.openshift.io/v1beta1","kind":"MachineSet","metadata":{{"name":"{name}","namespace":"openshift-machine-api","uid":"u-{name}"}},"spec":{{"template":{{"spec":{{"providerSpec":{{"value":{}1{}}}}}}}}}}}"#,
            r#"{"a":"#.repeat(levels),
            "}".repeat(levels),
        )
    }

    /// The levels of a [`machineset`] above its `providerSpec.value`.
    const ABOVE_VALUE: usize = 5;

    fn list(items: &[String]) -> String {
        format!(
            r#"{{"apiVersion":"machine.openshift.io/v1beta1","kind":"MachineSetList","metadata":{{"resourceVersion":"7"}},"items":[{}]}}"#,
            items.join(",")
        )
    }

    fn names<K: Resource>(items: &[Isolated<K>]) -> Vec<(String, Option<Problem>)> {
        items
            .iter()
            .map(|item| {
                let name = item.meta().name.clone().unwrap_or_default();
                (name, item.0.as_ref().err().map(|e| e.problem.clone()))
            })
            .collect()
    }

    #[test]
    fn a_deep_object_fails_alone_and_keeps_its_name() {
        let text = list(&[
            machineset("a", 3),
            machineset("deep", 200),
            machineset("b", 3),
        ]);
        // What kube did before: the whole list failed.
        let whole = serde_json::from_str::<ObjectList<DynamicObject>>(&text);
        assert!(
            whole.is_err_and(|e| e.to_string().contains("recursion limit")),
            "the premise: serde_json refuses the list"
        );
        let read: ObjectList<Isolated<DynamicObject>> =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            names(&read.items),
            [
                ("a".into(), None),
                ("deep".into(), Some(Problem::TooDeep)),
                ("b".into(), None)
            ]
        );
        let Err(failure) = &read.items[1].0 else {
            panic!("decoded")
        };
        assert_eq!(failure.kind, "MachineSet");
        assert_eq!(failure.metadata.uid.as_deref(), Some("u-deep"));
        assert_eq!(
            failure.to_string(),
            format!(
                "MachineSet openshift-machine-api/deep is nested more than {MAX_DEPTH} levels deep"
            )
        );
        // A good one is whole.
        let Ok(a) = &read.items[0].0 else {
            panic!("not decoded")
        };
        assert_eq!(
            a.data
                .pointer("/spec/template/spec/providerSpec/value/a/a/a"),
            Some(&Value::from(1))
        );
    }

    #[test]
    fn an_object_may_nest_exactly_the_limit() {
        let fits = machineset("fits", MAX_DEPTH - ABOVE_VALUE);
        let over = machineset("over", MAX_DEPTH - ABOVE_VALUE + 1);
        let read: ObjectList<Isolated<DynamicObject>> =
            serde_json::from_str(&list(&[fits, over])).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            names(&read.items),
            [
                ("fits".into(), None),
                ("over".into(), Some(Problem::TooDeep))
            ]
        );
    }

    #[test]
    fn a_watch_event_of_a_deep_object_is_that_objects_failure() {
        let event = format!(
            r#"{{"type":"MODIFIED","object":{}}}"#,
            machineset("deep", 300)
        );
        let read: WatchEvent<Isolated<DynamicObject>> =
            serde_json::from_str(&event).unwrap_or_else(|e| panic!("{e}"));
        let WatchEvent::Modified(Isolated(Err(failure))) = read else {
            panic!("{read:?}")
        };
        assert_eq!(failure.name(), "openshift-machine-api/deep");
    }

    /// Skipped without recursion: neither the list nor the object
    /// overflows the test thread's stack (2 MiB).
    #[test]
    fn ten_thousand_levels_do_not_overflow_the_stack() {
        let text = list(&[machineset("deepest", 10_000), machineset("a", 1)]);
        let read: ObjectList<Isolated<DynamicObject>> =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            names(&read.items),
            [
                ("deepest".into(), Some(Problem::TooDeep)),
                ("a".into(), None)
            ]
        );
    }

    #[test]
    fn fields_of_the_wrong_type_fail_that_object_alone() {
        let text = r#"{"kind":"NodeList","metadata":{},"items":[
            {"metadata":{"name":"worker-0"},"spec":{"unschedulable":true}},
            {"metadata":{"name":"worker-1"},"spec":{"unschedulable":"yes"}},
            {"metadata":{"name":"worker-2","labels":{"a":1}}},
            {"metadata":{"name":"worker-3"}}]}"#;
        let read: ObjectList<Isolated<Node>> =
            serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}"));
        let read = names(&read.items);
        assert_eq!(read[0], ("worker-0".into(), None));
        assert_eq!(read[3], ("worker-3".into(), None));
        for (name, problem) in &read[1..3] {
            assert!(
                matches!(problem, Some(Problem::Invalid(message)) if message.contains("invalid type")),
                "{name}: {problem:?}"
            );
        }
    }

    #[test]
    fn a_cache_leaves_out_what_it_cannot_decode_and_counts_it() {
        let mut registry = Registry::default();
        let metrics = Metrics::register(&mut registry);
        let failures = Failures::unpublished(metrics.clone());
        let node = |text: &str| -> Isolated<Node> {
            serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}"))
        };
        let good = || node(r#"{"metadata":{"name":"worker-0"}}"#);
        let bad = || node(r#"{"metadata":{"name":"worker-0"},"spec":{"unschedulable":"yes"}}"#);
        assert!(matches!(
            failures.skip(Event::InitApply(good())),
            Some(Event::InitApply(n)) if n.metadata.name.as_deref() == Some("worker-0")
        ));
        // A list leaves it out; a change or deletion deletes it.
        assert!(failures.skip(Event::InitApply(bad())).is_none());
        for event in [Event::Apply(bad()), Event::Delete(bad())] {
            assert!(matches!(
                failures.skip(event),
                Some(Event::Delete(n)) if n.metadata.name.as_deref() == Some("worker-0")
            ));
        }
        let labels = crate::metrics::KindLabels {
            kind: "Node".into(),
        };
        assert_eq!(
            metrics.watch_decode_failures.get_or_create(&labels).get(),
            3
        );
    }
}
