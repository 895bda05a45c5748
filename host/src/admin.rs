//! The admin endpoints: `/healthz` (alive), `/readyz` (caches synced and
//! guests loaded), `/metrics` (Prometheus text) and `/guests` (JSON: per
//! registry entry the serving module, its digest, limits and candidate, and
//! the last attempt to change it, with its error) and `/ownership` (JSON:
//! per job its ownership mode, whether it writes, refuses and why, or what
//! observing the cluster found).
//!
//! The two probes answer anyone (the kubelet sends no token); the other
//! three answer whom the cluster lets `get` them ([`auth`]), unless the
//! host runs with `--admin-auth none`.

pub mod auth;

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use prometheus_client::registry::Registry;

use mco_cluster::watch::Readiness;
use mco_job::ownership::Ownership;
use mco_registry::Guests;

#[derive(Clone)]
pub struct AdminState {
    pub registry: Arc<Registry>,
    /// The controllers' watches, and the guests while they load.
    pub readiness: Readiness,
    /// Set once the guests have loaded: the server answers `/healthz`
    /// while they load (OCI pulls included), so a slow registry does not
    /// get the host killed by its liveness probe.
    pub guests: Arc<OnceLock<Guests>>,
    pub ownership: Ownership,
    /// Who may read `/metrics`, `/guests` and `/ownership`; `None`: anyone.
    pub auth: Option<Arc<auth::Authorizer>>,
}

pub async fn serve(addr: SocketAddr, state: AdminState) -> std::io::Result<()> {
    let guarded = Router::new()
        .route("/metrics", get(metrics))
        .route("/guests", get(guests))
        .route("/ownership", get(ownership));
    let guarded = match state.auth.clone() {
        Some(authorizer) => guarded.route_layer(axum::middleware::from_fn_with_state(
            authorizer,
            auth::require,
        )),
        None => guarded,
    };
    let app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(ready))
        .merge(guarded)
        .with_state(state);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!(%addr, "admin server listening");
    axum::serve(listener, app).await
}

async fn ready(State(state): State<AdminState>) -> impl IntoResponse {
    let pending = state.readiness.pending();
    let problems = state.readiness.problems();
    if !pending.is_empty() {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("caches not synced: {} not listed yet", pending.join(", ")),
        )
    } else if !problems.is_empty() {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {}", problems.join("; ")),
        )
    } else {
        (StatusCode::OK, "ok".to_owned())
    }
}

async fn metrics(State(state): State<AdminState>) -> impl IntoResponse {
    let mut text = String::new();
    match prometheus_client::encoding::text::encode(&mut text, &state.registry) {
        Ok(()) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(err) => (StatusCode::INTERNAL_SERVER_ERROR, err.to_string()).into_response(),
    }
}

async fn guests(State(state): State<AdminState>) -> impl IntoResponse {
    match state.guests.get() {
        Some(guests) => json(&guests.status()),
        None => (StatusCode::SERVICE_UNAVAILABLE, "the guests are loading\n").into_response(),
    }
}

async fn ownership(State(state): State<AdminState>) -> impl IntoResponse {
    json(&state.ownership.reports())
}

/// A JSON answer for `mco-host status` and people with curl alike.
fn json(value: &impl serde::Serialize) -> axum::response::Response {
    match serde_json::to_string_pretty(value) {
        Ok(json) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            json + "\n",
        )
            .into_response(),
        Err(err) => (StatusCode::INTERNAL_SERVER_ERROR, err.to_string()).into_response(),
    }
}
