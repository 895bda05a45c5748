//! Plain-HTTP GETs on loopback (etcd's `/health`, the controller's admin
//! server), through one `reqwest` client built without TLS.

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, Result};

/// The longest a GET may take, connection included.
const TIMEOUT: Duration = Duration::from_secs(5);

/// No proxy (loopback traffic must not leave for one an environment names)
/// and no idle connections: every test has its own tokio runtime, and a
/// pooled connection must not outlive the runtime that opened it.
fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        // In a workspace build reqwest's features are unified with
        // mco-host's (oci-client asks for rustls without a provider), and
        // such a reqwest panics on `build` unless a provider is installed,
        // even for plain HTTP. Ring is the one kube and mco-host use.
        let _already_installed = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::builder()
            .no_proxy()
            .timeout(TIMEOUT)
            .pool_max_idle_per_host(0)
            .build()
            .unwrap_or_else(|e| panic!("cannot build the HTTP client: {e}"))
    })
}

/// `GET http://ADDR/PATH`: (status code, body). Any status is an answer; an
/// error is no answer (refused, timed out, cut off).
pub async fn http_get(addr: SocketAddr, path: &str) -> Result<(u16, String)> {
    http_get_as(addr, path, None).await
}

/// [`http_get`] with `Authorization: Bearer TOKEN` when a token is given.
pub async fn http_get_as(
    addr: SocketAddr,
    path: &str,
    token: Option<&str>,
) -> Result<(u16, String)> {
    let url = format!("http://{addr}{path}");
    let request = client().get(&url);
    let request = match token {
        Some(token) => request.bearer_auth(token),
        None => request,
    };
    let response = request.send().await.with_context(|| format!("GET {url}"))?;
    let status = response.status().as_u16();
    let body = response
        .text()
        .await
        .with_context(|| format!("GET {url}: reading the body"))?;
    Ok((status, body))
}
