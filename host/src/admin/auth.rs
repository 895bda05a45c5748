//! Who may read the admin endpoints that show more than liveness
//! (`/metrics`, `/guests`, `/ownership`): a bearer token the cluster
//! accepts (a TokenReview), of a user the cluster lets `get` that path (a
//! SubjectAccessReview on the non-resource URL), as OpenShift's
//! kube-rbac-proxy guards its components' metrics. `/healthz` and
//! `/readyz` stay open for the kubelet's probes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};
use tokio::sync::Semaphore;

use mco_job::preflight::{BOTH, Check, can};

/// How the admin endpoints beyond `/healthz` and `/readyz` are guarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AdminAuth {
    /// A bearer token the cluster accepts, of a user RBAC lets `get` the
    /// path (`nonResourceURLs`).
    Cluster,
    /// Not at all: for a host whose admin address only trusted callers
    /// reach (loopback on a workstation).
    None,
}

/// How long a verdict is reused: as long as Kubernetes' own servers cache
/// delegated ones (k8s.io/apiserver `DelegatingAuthenticationOptions`
/// `CacheTTL`, `DelegatingAuthorizationOptions` `AllowCacheTTL` and
/// `DenyCacheTTL`: 10 s each), so a revoked binding stops working as soon.
const VERDICT_TTL: Duration = Duration::from_secs(10);
/// Verdicts kept at most. Past it the expired go, and if none has, all: a
/// flood of made-up tokens costs reviews, never memory.
const MAX_VERDICTS: usize = 1024;
/// Reviews in flight at most, so that flood reaches the apiserver slowly.
const MAX_REVIEWS: usize = 8;
/// Each review's deadline: an apiserver that does not answer fails the
/// request with 503, it does not hold it.
const REVIEW_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest token looked at: ServiceAccount tokens take about 1 KiB,
/// OIDC ones a few.
const MAX_TOKEN: usize = 16 * 1024;

/// Checks tokens and access with the cluster, through the host's own
/// client (its ServiceAccount may create both reviews, deploy/rbac.yaml).
pub struct Authorizer {
    client: kube::Client,
    /// By (SHA-256 of the token, path): never the token itself.
    verdicts: Mutex<HashMap<(String, String), (Instant, Verdict)>>,
    reviews: Semaphore,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Verdict {
    Allowed,
    /// The cluster does not know the token (or it has expired).
    Unauthenticated,
    /// This user may not `get` the path.
    Forbidden(String),
}

#[derive(Debug, thiserror::Error)]
enum ReviewError {
    #[error("the {0} got no answer within {REVIEW_TIMEOUT:?}")]
    Timeout(&'static str),
    #[error("the {what} failed: {source}")]
    Api {
        what: &'static str,
        #[source]
        source: kube::Error,
    },
}

impl AdminAuth {
    pub fn authorizer(self, client: &kube::Client) -> Option<Arc<Authorizer>> {
        match self {
            AdminAuth::Cluster => Some(Arc::new(Authorizer {
                client: client.clone(),
                verdicts: Mutex::new(HashMap::new()),
                reviews: Semaphore::new(MAX_REVIEWS),
            })),
            AdminAuth::None => None,
        }
    }
}

/// What `mco-host preflight` checks for `--admin-auth cluster`: that the
/// host's account (`user`) may create both reviews. Without either, every
/// request to the guarded endpoints is answered 503, in either mode.
pub async fn preflight(client: &kube::Client, user: &str) -> Vec<Check> {
    let mut checks = Vec::new();
    for (group, resource) in [
        ("authentication.k8s.io", "tokenreviews"),
        ("authorization.k8s.io", "subjectaccessreviews"),
    ] {
        checks.push(can(client, user, BOTH, (group, resource, "", "create", None)).await);
    }
    checks
}

/// The guard: 401 without a token the cluster accepts, 403 for a user who
/// may not `get` the path, 503 when the cluster cannot say.
pub async fn require(
    State(auth): State<Arc<Authorizer>>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path().to_owned();
    let Some(token) = bearer(request.headers()) else {
        return challenge("a bearer token is required");
    };
    let verdict = auth.verdict(token, &path).await;
    match verdict {
        Ok(Verdict::Allowed) => next.run(request).await,
        Ok(Verdict::Unauthenticated) => challenge("the cluster does not accept this token"),
        Ok(Verdict::Forbidden(user)) => (
            StatusCode::FORBIDDEN,
            format!("{user} may not get {path} (nonResourceURLs)\n"),
        )
            .into_response(),
        Err(error) => {
            tracing::warn!(%path, %error, "cannot check an admin request");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("cannot check the token: {error}\n"),
            )
                .into_response()
        }
    }
}

fn challenge(why: &str) -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        format!("{why}\n"),
    )
        .into_response()
}

/// The token of `Authorization: Bearer <token>`, if one of sane length.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && token.len() <= MAX_TOKEN)
        .then_some(token)
}

impl Authorizer {
    async fn verdict(&self, token: &str, path: &str) -> Result<Verdict, ReviewError> {
        let key = (
            mco_registry_formats::blob::digest(token.as_bytes()),
            path.to_owned(),
        );
        if let Some(verdict) = self.cached(&key) {
            return Ok(verdict);
        }
        let verdict = {
            // Never closed, so acquiring only waits.
            let _turn = self.reviews.acquire().await;
            self.review(token, path).await?
        };
        self.remember(key, verdict.clone());
        Ok(verdict)
    }

    fn cached(&self, key: &(String, String)) -> Option<Verdict> {
        let verdicts = self.verdicts.lock().ok()?;
        let (at, verdict) = verdicts.get(key)?;
        (at.elapsed() < VERDICT_TTL).then(|| verdict.clone())
    }

    fn remember(&self, key: (String, String), verdict: Verdict) {
        let Ok(mut verdicts) = self.verdicts.lock() else {
            return;
        };
        if verdicts.len() >= MAX_VERDICTS {
            verdicts.retain(|_, (at, _)| at.elapsed() < VERDICT_TTL);
            if verdicts.len() >= MAX_VERDICTS {
                verdicts.clear();
            }
        }
        verdicts.insert(key, (Instant::now(), verdict));
    }

    /// A TokenReview of the token, then a SubjectAccessReview of `get` on
    /// `path` for the user it names.
    async fn review(&self, token: &str, path: &str) -> Result<Verdict, ReviewError> {
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_owned(),
                audiences: None,
            },
            ..TokenReview::default()
        };
        let tokens: Api<TokenReview> = Api::all(self.client.clone());
        let reviewed = deadline(
            "TokenReview",
            tokens.create(&PostParams::default(), &review),
        )
        .await?;
        let Some(status) = reviewed
            .status
            .filter(|status| status.authenticated == Some(true))
        else {
            return Ok(Verdict::Unauthenticated);
        };
        let user = status.user.unwrap_or_default();
        let question = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: user.username.clone(),
                uid: user.uid,
                groups: user.groups,
                extra: user.extra,
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(path.to_owned()),
                    verb: Some("get".to_owned()),
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        let access: Api<SubjectAccessReview> = Api::all(self.client.clone());
        let answer = deadline(
            "SubjectAccessReview",
            access.create(&PostParams::default(), &question),
        )
        .await?;
        Ok(if answer.status.is_some_and(|status| status.allowed) {
            Verdict::Allowed
        } else {
            Verdict::Forbidden(user.username.unwrap_or_default())
        })
    }
}

async fn deadline<T>(
    what: &'static str,
    call: impl Future<Output = Result<T, kube::Error>>,
) -> Result<T, ReviewError> {
    tokio::time::timeout(REVIEW_TIMEOUT, call)
        .await
        .map_err(|_| ReviewError::Timeout(what))?
        .map_err(|source| ReviewError::Api { what, source })
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;
    use serde_json::json;

    use super::*;
    use mco_cluster::mock::{self, Call};

    const TOKENS: &str = "/apis/authentication.k8s.io/v1/tokenreviews";
    const ACCESS: &str = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

    fn authorizer(calls: Vec<Call>) -> (Arc<Authorizer>, mock::Scenario) {
        let (client, scenario) = mock::serve(calls);
        let auth = AdminAuth::Cluster.authorizer(&client);
        (auth.unwrap_or_else(|| panic!("no authorizer")), scenario)
    }

    fn token_review(token: &str, authenticated: bool) -> Call {
        Call::post(TOKENS)
            .body(json!({
                "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                "metadata": {}, "spec": {"token": token},
            }))
            .answer(json!({
                "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                "metadata": {}, "spec": {},
                "status": {
                    "authenticated": authenticated,
                    "user": {"username": "jane", "uid": "u1", "groups": ["ops"], "extra": {"scopes": ["a"]}},
                },
            }))
    }

    fn access_review(path: &str, allowed: bool) -> Call {
        Call::post(ACCESS)
            .body(json!({
                "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                "metadata": {},
                "spec": {
                    "user": "jane", "uid": "u1", "groups": ["ops"], "extra": {"scopes": ["a"]},
                    "nonResourceAttributes": {"path": path, "verb": "get"},
                },
            }))
            .answer(json!({
                "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                "metadata": {}, "spec": {}, "status": {"allowed": allowed},
            }))
    }

    #[tokio::test]
    async fn the_cluster_decides_once_per_token_and_path_while_the_verdict_is_fresh() {
        let (auth, scenario) = authorizer(vec![
            token_review("t1", true),
            access_review("/guests", true),
            token_review("t1", true),
            access_review("/metrics", false),
            token_review("t2", false),
        ]);
        let verdicts = [
            ("t1", "/guests", Verdict::Allowed),
            // Cached: no second review.
            ("t1", "/guests", Verdict::Allowed),
            ("t1", "/metrics", Verdict::Forbidden("jane".into())),
            ("t1", "/metrics", Verdict::Forbidden("jane".into())),
            ("t2", "/guests", Verdict::Unauthenticated),
            ("t2", "/guests", Verdict::Unauthenticated),
        ];
        for (token, path, want) in verdicts {
            let got = auth.verdict(token, path).await;
            assert!(
                matches!(&got, Ok(v) if *v == want),
                "{token} {path}: {got:?}"
            );
        }
        scenario.done().await;
        // No token is kept, only its digest.
        let keys = format!(
            "{:?}",
            auth.verdicts
                .lock()
                .map(|v| v.keys().cloned().collect::<Vec<_>>())
        );
        assert!(
            !keys.contains("\"t1\"") && keys.contains(&mco_registry_formats::blob::digest(b"t1")),
            "{keys}"
        );
    }

    #[tokio::test]
    async fn a_failed_review_is_an_error_and_not_remembered() {
        let (auth, scenario) = authorizer(vec![
            Call::post(TOKENS).refuse(500, "InternalError"),
            token_review("t", true),
            access_review("/guests", true),
        ]);
        let first = auth.verdict("t", "/guests").await;
        assert!(
            matches!(
                &first,
                Err(ReviewError::Api {
                    what: "TokenReview",
                    ..
                })
            ),
            "{first:?}"
        );
        let second = auth.verdict("t", "/guests").await;
        assert!(matches!(second, Ok(Verdict::Allowed)), "{second:?}");
        scenario.done().await;
    }

    #[test]
    fn only_a_bearer_token_of_sane_length_is_taken() {
        let long = format!("Bearer {}", "x".repeat(MAX_TOKEN + 1));
        let cases = [
            ("Bearer abc", Some("abc")),
            ("bearer  abc ", Some("abc")),
            ("Basic dTpw", None),
            ("Bearer ", None),
            ("Bearer", None),
            (long.as_str(), None),
        ];
        for (value, want) in cases {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::AUTHORIZATION,
                HeaderValue::from_str(value).unwrap_or_else(|e| panic!("{e}")),
            );
            assert_eq!(bearer(&headers), want, "{value}");
        }
        assert_eq!(bearer(&HeaderMap::new()), None);
    }
}
