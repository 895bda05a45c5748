//! An API server without a cluster, for the writers' unit tests, as kube-rs's
//! `controller-rs` tests its reconciler (`Context::test` and its
//! `ApiServerVerifier`): the [`Client`] talks to a tower-test mock service,
//! and a task plays a scenario, the exact calls a writer must make, in
//! order, answering each with a status code and a JSON body.
//!
//! A call other than the next one expected fails the scenario, which
//! [`Scenario::done`] reports; a call after the scenario's end reaches no
//! one, and the writer gets a client error instead of an answer.

use std::collections::BTreeSet;
use std::time::Duration;

use http::{Method, Request, Response, StatusCode};
use kube::Client;
use kube::client::Body;
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tower_test::mock::{self, Handle};

/// How long a writer may take to make every call of a scenario.
const PATIENCE: Duration = Duration::from_secs(1);

/// One request the writer must make, and what the API server answers.
pub struct Call {
    method: Method,
    path: String,
    /// The query's `key=value` pairs, in any order; `None` checks none.
    query: Option<BTreeSet<String>>,
    /// The exact JSON body; `None` checks none.
    body: Option<Value>,
    status: StatusCode,
    answer: Value,
}

impl Call {
    fn new(method: Method, path: &str) -> Call {
        Call {
            method,
            path: path.to_string(),
            query: None,
            body: None,
            status: StatusCode::OK,
            answer: json!({}),
        }
    }

    pub fn get(path: &str) -> Call {
        Call::new(Method::GET, path)
    }

    pub fn post(path: &str) -> Call {
        Call::new(Method::POST, path)
    }

    pub fn patch(path: &str) -> Call {
        Call::new(Method::PATCH, path)
    }

    pub fn delete(path: &str) -> Call {
        Call::new(Method::DELETE, path)
    }

    /// The query string must hold exactly these `key=value` pairs, joined
    /// by `&` and in any order.
    pub fn query(mut self, query: &str) -> Call {
        self.query = Some(pairs(query));
        self
    }

    /// The request body must be this JSON.
    pub fn body(mut self, body: Value) -> Call {
        self.body = Some(body);
        self
    }

    /// Answers `200 OK` with this object.
    pub fn answer(mut self, object: impl serde::Serialize) -> Call {
        self.answer = serde_json::to_value(object).unwrap_or_else(|err| {
            panic!(
                "the answer to {} {} is no JSON: {err}",
                self.method, self.path
            )
        });
        self
    }

    /// Answers with an API error, a `Status` of this code and reason, as
    /// the apiserver does (409 `Conflict`, 404 `NotFound`, ...).
    pub fn refuse(mut self, code: u16, reason: &str) -> Call {
        self.status = StatusCode::from_u16(code)
            .unwrap_or_else(|err| panic!("{code} is no HTTP status: {err}"));
        self.answer = json!({
            "apiVersion": "v1", "kind": "Status", "status": "Failure",
            "message": format!("{reason} (mock API server)"),
            "reason": reason, "code": code,
        });
        self
    }

    /// Checks `request` against this call (panicking in the scenario's
    /// task on the first difference) and builds the answer.
    async fn play(self, number: usize, request: Request<Body>) -> Response<Body> {
        let (parts, body) = request.into_parts();
        let call = format!("call {number} ({} {})", self.method, self.path);
        assert_eq!(
            (&parts.method, parts.uri.path()),
            (&self.method, self.path.as_str()),
            "{call}: another request came"
        );
        if let Some(query) = &self.query {
            assert_eq!(
                &pairs(parts.uri.query().unwrap_or_default()),
                query,
                "{call}: the query differs"
            );
        }
        if let Some(expected) = &self.body {
            let bytes = body
                .collect_bytes()
                .await
                .unwrap_or_else(|err| panic!("{call}: the body did not arrive: {err}"));
            let sent: Value = serde_json::from_slice(&bytes)
                .unwrap_or_else(|err| panic!("{call}: the body is no JSON: {err}"));
            assert_eq!(&sent, expected, "{call}: the body differs");
        }
        let mut response = Response::new(Body::from(self.answer.to_string().into_bytes()));
        *response.status_mut() = self.status;
        response
    }
}

fn pairs(query: &str) -> BTreeSet<String> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(str::to_string)
        .collect()
}

/// A scenario being played; [`Scenario::done`] says how it went.
pub struct Scenario {
    task: JoinHandle<()>,
}

/// A client whose API server plays `calls`, in order, then hangs up.
pub fn serve(calls: Vec<Call>) -> (Client, Scenario) {
    let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
    let task = tokio::spawn(play(handle, calls));
    (Client::new(service, "default"), Scenario { task })
}

async fn play(mut handle: Handle<Request<Body>, Response<Body>>, calls: Vec<Call>) {
    let expected = calls.len();
    for (number, call) in (1..).zip(calls) {
        let Some((request, respond)) = handle.next_request().await else {
            panic!(
                "the client went away after {} of {expected} calls",
                number - 1
            );
        };
        respond.send_response(call.play(number, request).await);
    }
}

impl Scenario {
    /// Panics unless the writer made every call of the scenario, as
    /// expected, within [`PATIENCE`].
    pub async fn done(self) {
        match tokio::time::timeout(PATIENCE, self.task).await {
            Ok(Ok(())) => {}
            Ok(Err(err)) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
            Ok(Err(err)) => panic!("the scenario did not end: {err}"),
            Err(_) => panic!("the writer made fewer calls than the scenario expects"),
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::ResourceExt;
    use kube::api::{Api, DeleteParams, Patch, PatchParams};

    use super::*;
    use crate::is_status;

    const PATH: &str = "/api/v1/namespaces/ns/configmaps/a";

    fn configmap() -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}})
    }

    #[tokio::test]
    async fn answers_the_calls_it_expects_in_order() {
        let (client, scenario) = serve(vec![
            Call::get(PATH).answer(configmap()),
            Call::patch(PATH)
                .query("fieldManager=m")
                .body(json!({"data": {"k": "v"}}))
                .answer(configmap()),
            Call::delete(PATH).refuse(404, "NotFound"),
        ]);
        let api: Api<ConfigMap> = Api::namespaced(client, "ns");
        let got = api.get("a").await;
        assert_eq!(got.map(|cm| cm.name_any()).ok().as_deref(), Some("a"));
        let patch = Patch::Merge(json!({"data": {"k": "v"}}));
        let params = PatchParams {
            field_manager: Some("m".into()),
            ..PatchParams::default()
        };
        assert!(api.patch("a", &params, &patch).await.is_ok());
        let deleted = api.delete("a", &DeleteParams::default()).await;
        assert!(deleted.is_err_and(|err| is_status(&err, 404)));
        scenario.done().await;
    }

    #[tokio::test]
    #[should_panic(expected = "another request came")]
    async fn a_call_it_does_not_expect_fails_the_scenario() {
        let (client, scenario) = serve(vec![Call::delete(PATH)]);
        let api: Api<ConfigMap> = Api::namespaced(client, "ns");
        assert!(api.get("a").await.is_err(), "the mock hung up");
        scenario.done().await;
    }

    #[tokio::test]
    #[should_panic(expected = "the body differs")]
    async fn a_body_other_than_expected_fails_the_scenario() {
        let (client, scenario) = serve(vec![Call::patch(PATH).body(json!({"data": {}}))]);
        let api: Api<ConfigMap> = Api::namespaced(client, "ns");
        let patch = Patch::Merge(json!({"data": {"k": "v"}}));
        assert!(
            api.patch("a", &PatchParams::default(), &patch)
                .await
                .is_err()
        );
        scenario.done().await;
    }

    #[tokio::test]
    #[should_panic(expected = "fewer calls")]
    async fn a_call_not_made_fails_the_scenario() {
        let (_client, scenario) = serve(vec![Call::get(PATH)]);
        scenario.done().await;
    }
}
