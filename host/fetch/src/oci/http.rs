//! The registry requests of a pull, made here with reqwest rather than by
//! oci-client, whose manifest and referrers calls read a whole answer
//! before anything can look at its size (`Client::_pull_manifest_raw`
//! reads `res.bytes()`). Every answer is counted as it arrives and
//! dropped at its bound, and an answer that announces more is refused
//! before its first byte; oci-client still does the token exchange
//! (`Client::auth`), asked only when the registry answers 401, as the
//! distribution spec's clients do, and the token is kept per credential
//! and repository until the registry refuses it.
//!
//! Each request has the connect and read (idle) timeouts of
//! [`PullLimits`]; the pull as a whole its deadline (`pull.rs`).

use std::time::Duration;

use mco_http::{Body, Chain, Over, ReadError};
use oci_client::Reference;
use oci_client::errors::{OciDistributionError, OciEnvelope, OciErrorCode};
use oci_client::secrets::RegistryAuth;
use oci_client::token_cache::RegistryOperation;
use reqwest::header::ACCEPT;
use reqwest::{StatusCode, Url};

use super::{Oci, PullLimits, credential_key};

/// The most of an error answer kept for the message.
const MAX_ERROR_BODY: usize = 512;

/// Past this many, the remembered tokens start again.
const MAX_TOKENS: usize = 256;

/// Why a registry request failed.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
    #[error("{url}: no connection within {after:?} (--oci-connect-timeout)")]
    ConnectTimeout { url: String, after: Duration },
    #[error("{url}: no answer for {after:?} (--oci-read-timeout)")]
    Idle { url: String, after: Duration },
    #[error("{url}: {detail}")]
    Transport { url: String, detail: String },
    #[error("{url}: the registry answered {status}: {body}")]
    Status {
        url: String,
        status: StatusCode,
        body: String,
    },
    #[error("{url}: the answer is larger than {limit} bytes; the download stopped there")]
    TooLarge { url: String, limit: usize },
    #[error("cannot authenticate: {0}")]
    Auth(OciDistributionError),
}

impl RequestError {
    /// A connect or read timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            RequestError::ConnectTimeout { .. } | RequestError::Idle { .. }
        )
    }

    /// The registry has no such manifest: 404, or an error answer whose
    /// codes all say so.
    pub fn is_unknown(&self) -> bool {
        let RequestError::Status { status, body, .. } = self else {
            return false;
        };
        *status == StatusCode::NOT_FOUND
            || (status.is_client_error()
                && serde_json::from_str::<OciEnvelope>(body).is_ok_and(|envelope| {
                    !envelope.errors.is_empty()
                        && envelope.errors.iter().all(|e| {
                            matches!(
                                e.code,
                                OciErrorCode::ManifestUnknown | OciErrorCode::NotFound
                            )
                        })
                }))
    }
}

/// What a request authenticates with.
#[derive(Clone)]
pub(super) enum Credential {
    Anonymous,
    Bearer(String),
    Basic(String, String),
}

/// The HTTP client of every pull request: one per [`Oci`], with the
/// timeouts of its limits. Built once; an error (no TLS backend) is
/// reported by each request.
pub(super) fn http_client(limits: &PullLimits) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .connect_timeout(limits.connect)
        .read_timeout(limits.idle)
        .user_agent(concat!("mco-host/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| Chain(&e).to_string())
}

impl Oci {
    /// `https://` or, for a registry given as plain HTTP, `http://`.
    fn scheme(&self, registry: &str) -> &'static str {
        if self.plain_http.iter().any(|r| r == registry) {
            "http"
        } else {
            "https"
        }
    }

    /// The URL of `path` (`manifests/…`, `blobs/…`, `referrers/…`) in
    /// `reference`'s repository.
    pub(super) fn url(&self, reference: &Reference, path: &str) -> Result<Url, RequestError> {
        let registry = reference.resolve_registry();
        let text = format!(
            "{}://{registry}/v2/{}/{path}",
            self.scheme(registry),
            reference.repository()
        );
        Url::parse(&text).map_err(|e| RequestError::Transport {
            url: text,
            detail: e.to_string(),
        })
    }

    /// The URL of `reference`'s manifest, by its digest, else its tag
    /// (`latest` when it names neither).
    pub(super) fn manifest_url(&self, reference: &Reference) -> Result<Url, RequestError> {
        let name = reference
            .digest()
            .or_else(|| reference.tag())
            .unwrap_or("latest");
        self.url(reference, &format!("manifests/{name}"))
    }

    /// GETs `url` with the credentials `auth` holds for `reference`'s
    /// registry, and returns at most `limit` bytes of the answer: a larger
    /// one is an error, read no further than its bound.
    pub(super) async fn get(
        &self,
        reference: &Reference,
        auth: &RegistryAuth,
        url: Url,
        accept: &str,
        limit: usize,
    ) -> Result<Vec<u8>, RequestError> {
        let key = format!(
            "{}\0{}\0{}",
            credential_key(auth),
            reference.resolve_registry(),
            reference.repository()
        );
        let remembered = self.tokens.lock().ok().and_then(|t| t.get(&key).cloned());
        let mut response = self
            .send(&url, accept, remembered.unwrap_or(Credential::Anonymous))
            .await?;
        if response.status() == StatusCode::UNAUTHORIZED {
            let credential = self.authenticate(reference, auth).await?;
            if let Ok(mut tokens) = self.tokens.lock() {
                if tokens.len() >= MAX_TOKENS {
                    tokens.clear();
                }
                tokens.insert(key, credential.clone());
            }
            response = self.send(&url, accept, credential).await?;
        }
        let status = response.status();
        if !status.is_success() {
            let body = read(&url, response, MAX_ERROR_BODY, Over::Truncate, &self.limits).await?;
            return Err(RequestError::Status {
                url: url.to_string(),
                status,
                body: String::from_utf8_lossy(&body).into_owned(),
            });
        }
        read(&url, response, limit, Over::Refuse, &self.limits).await
    }

    async fn send(
        &self,
        url: &Url,
        accept: &str,
        credential: Credential,
    ) -> Result<reqwest::Response, RequestError> {
        let client = self
            .http
            .as_ref()
            .map_err(|e| RequestError::Client(e.clone()))?;
        let request = client.get(url.clone()).header(ACCEPT, accept);
        let request = match credential {
            Credential::Anonymous => request,
            Credential::Bearer(token) => request.bearer_auth(token),
            Credential::Basic(user, password) => request.basic_auth(user, Some(password)),
        };
        request
            .send()
            .await
            .map_err(|e| transport(url, &e, &self.limits))
    }

    /// The credential the registry asks for, from oci-client's token
    /// exchange: a bearer token, or for a registry that asks for basic
    /// authentication the user and password themselves.
    async fn authenticate(
        &self,
        reference: &Reference,
        auth: &RegistryAuth,
    ) -> Result<Credential, RequestError> {
        let token = self
            .client(reference, auth)
            .await
            .auth(reference, auth, RegistryOperation::Pull)
            .await
            .map_err(RequestError::Auth)?;
        Ok(match (token, auth) {
            (Some(token), _) => Credential::Bearer(token),
            (None, RegistryAuth::Basic(user, password)) => {
                Credential::Basic(user.clone(), password.clone())
            }
            (None, _) => Credential::Anonymous,
        })
    }
}

/// `response`'s body, counted as it arrives: past `limit`, as `over` says
/// (an error answer's excerpt ends at the client's read timeout too).
async fn read(
    url: &Url,
    response: reqwest::Response,
    limit: usize,
    over: Over,
    limits: &PullLimits,
) -> Result<Vec<u8>, RequestError> {
    Body::new(response, limit as u64)
        .read(over)
        .await
        .map_err(|e| match e {
            ReadError::Transport(e) => transport(url, &e, limits),
            ReadError::TooLarge { .. } => RequestError::TooLarge {
                url: url.to_string(),
                limit,
            },
            // No deadline is set: the read timeout of the client stands.
            ReadError::Deadline => RequestError::Idle {
                url: url.to_string(),
                after: limits.idle,
            },
        })
}

/// A reqwest error, its timeouts told apart, with its causes.
fn transport(url: &Url, error: &reqwest::Error, limits: &PullLimits) -> RequestError {
    let url = url.to_string();
    if error.is_timeout() && error.is_connect() {
        RequestError::ConnectTimeout {
            url,
            after: limits.connect,
        }
    } else if error.is_timeout() {
        RequestError::Idle {
            url,
            after: limits.idle,
        }
    } else {
        RequestError::Transport {
            url,
            detail: Chain(error).to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_manifest_is_told_from_other_refusals() {
        let answered = |status: StatusCode, body: &str| RequestError::Status {
            url: "http://r.example/v2/team/mcn/manifests/v1".into(),
            status,
            body: body.into(),
        };
        let envelope = |code: &str| format!(r#"{{"errors":[{{"code":"{code}","message":"m"}}]}}"#);
        assert!(answered(StatusCode::NOT_FOUND, "").is_unknown());
        assert!(answered(StatusCode::BAD_REQUEST, &envelope("MANIFEST_UNKNOWN")).is_unknown());
        assert!(!answered(StatusCode::UNAUTHORIZED, &envelope("UNAUTHORIZED")).is_unknown());
        assert!(!answered(StatusCode::BAD_REQUEST, r#"{"errors":[]}"#).is_unknown());
        assert!(!answered(StatusCode::INTERNAL_SERVER_ERROR, &envelope("NOT_FOUND")).is_unknown());
        assert!(!answered(StatusCode::NOT_FOUND, "").is_timeout());
    }
}
