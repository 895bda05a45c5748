//! Guest modules as OCI artifacts: pulled for `oci:` registry entries
//! (`pull`), pushed and pulled by `mco-host guests push|pull` (`push`), with
//! a Docker config's credentials (`credentials`), kept on disk by digest
//! (`cache`), their signatures found (`signatures`) and every answer read
//! within its bound (`http`). A module with `verify:` is refused before any
//! blob is downloaded unless its signatures meet the policy; a registry is
//! not trusted to behave. The layouts read, the cache and the order of
//! checks: docs/dev/verification.md.

mod cache;
mod credentials;
mod http;
mod pull;
mod push;
mod signatures;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};

pub use credentials::{auth_for, docker_auth, registry_auth, target};
pub use http::RequestError;
pub use mco_registry_formats::artifact::{ComponentInfo, LayoutError, WasmConfig};
pub use mco_registry_formats::docker_config::{CredentialsError, DockerConfig};
pub use pull::{PullError, Pulled, parse_reference};
pub use push::{CREATED, VERSION_ANNOTATION};
pub use signatures::LookupError;

/// OCI clients with the host's TLS stack, and the digest cache.
#[derive(Clone)]
pub struct Oci {
    /// One client per credential. oci-client keeps the first credentials a
    /// client is given for a registry host (`Client::store_auth_if_needed`)
    /// and uses them for every repository there, blobs included: a shared
    /// client would send one team's credentials to another team's
    /// repository, and never use a rotated password.
    clients: Arc<Mutex<BTreeMap<String, Arc<Client>>>>,
    protocol: ClientProtocol,
    cache: Option<PathBuf>,
    /// Manifest digests verified in this process, with the fingerprint of
    /// the policy they met, to the signers that met it: polls of an
    /// unchanged entry do not fetch its signatures again.
    verified: Arc<Mutex<BTreeMap<signatures::Verified, String>>>,
    limits: PullLimits,
    /// Registries reached over plain HTTP (`host:port`).
    plain_http: Vec<String>,
    /// The client of every pull request, with the timeouts of `limits`.
    http: Result<reqwest::Client, String>,
    /// The credential each credential, registry and repository last
    /// authenticated with (`http`).
    tokens: Arc<Mutex<BTreeMap<String, http::Credential>>>,
}

/// How long a pull may wait and how much it may take. The defaults let a
/// registry that accepts and never answers fail a pull within half a
/// minute, and a module the size of the largest guest known (the Python
/// example, 19 MB) come over a slow link with room to spare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PullLimits {
    /// Connecting to a registry, TLS included.
    pub connect: Duration,
    /// The longest silence within an answer, its headers included: a
    /// registry that accepts and never answers fails after it.
    pub idle: Duration,
    /// The whole pull: manifest, signatures, config, layer and token
    /// exchanges. A registry that drips bytes just often enough to beat
    /// `idle` fails after it.
    pub deadline: Duration,
    /// The largest module layer taken. Guest modules are a few MiB (the
    /// Rust guests) to 19 MB (the componentize-py example); 32 MiB holds
    /// those with room, while a few pulls at the bound, and the module
    /// compiled from one, still fit the Deployment's 256 Mi limit.
    pub max_module_bytes: usize,
}

impl Default for PullLimits {
    fn default() -> PullLimits {
        PullLimits {
            connect: Duration::from_secs(10),
            idle: Duration::from_secs(30),
            deadline: Duration::from_secs(60),
            max_module_bytes: 32 << 20,
        }
    }
}

/// The most clients kept; past it (credentials rotated many times) they
/// are dropped and made again on use.
const MAX_CLIENTS: usize = 64;

impl Oci {
    /// `plain_http` lists registries (`host:port`) reached without TLS, such
    /// as one on loopback.
    pub fn new(plain_http: &[String], cache: Option<PathBuf>) -> Oci {
        Oci::with_limits(plain_http, cache, PullLimits::default())
    }

    /// [`Oci::new`] with other bounds and timeouts than the defaults.
    pub fn with_limits(plain_http: &[String], cache: Option<PathBuf>, limits: PullLimits) -> Oci {
        crate::install_crypto_provider();
        let protocol = if plain_http.is_empty() {
            ClientProtocol::Https
        } else {
            ClientProtocol::HttpsExcept(plain_http.to_vec())
        };
        Oci {
            clients: Arc::default(),
            protocol,
            cache,
            verified: Arc::default(),
            limits,
            plain_http: plain_http.to_vec(),
            http: http::http_client(&limits),
            tokens: Arc::default(),
        }
    }

    /// The client of `auth`, holding it for `reference`'s registry.
    async fn client(&self, reference: &Reference, auth: &RegistryAuth) -> Arc<Client> {
        let new = || {
            Arc::new(Client::new(ClientConfig {
                protocol: self.protocol.clone(),
                // No read timeout: reqwest's runs from the request's start
                // to the answer's headers, and a push uploads a module in
                // between. A pull's token exchange is within its deadline.
                connect_timeout: Some(self.limits.connect),
                ..ClientConfig::default()
            }))
        };
        let client = match self.clients.lock() {
            Ok(mut clients) => {
                if clients.len() >= MAX_CLIENTS {
                    clients.clear();
                }
                clients
                    .entry(credential_key(auth))
                    .or_insert_with(new)
                    .clone()
            }
            Err(_) => new(),
        };
        client
            .store_auth_if_needed(reference.resolve_registry(), auth)
            .await;
        client
    }
}

/// Which credential `auth` is, without keeping its secret in the clear:
/// the key of its client here, and of the pulls `mco-registry` serves
/// again until they are due (a pull with another credential is new).
pub fn credential_key(auth: &RegistryAuth) -> String {
    match auth {
        RegistryAuth::Anonymous => "anonymous".into(),
        RegistryAuth::Basic(user, password) => {
            format!(
                "basic:{}",
                mco_registry_formats::blob::digest(format!("{user}\0{password}").as_bytes())
            )
        }
        RegistryAuth::Bearer(token) => {
            format!(
                "bearer:{}",
                mco_registry_formats::blob::digest(token.as_bytes())
            )
        }
    }
}

/// `bytes`' digest as OCI descriptors write it.
fn oci_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", mco_registry_formats::blob::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn each_credential_has_its_own_client() {
        let oci = Oci::new(&[], None);
        let (a, b) = (
            parse_reference("quay.io/team-a/m:1"),
            parse_reference("quay.io/team-b/m:1"),
        );
        let (Ok(a), Ok(b)) = (a, b) else {
            panic!("references do not parse")
        };
        let basic = |user: &str, password: &str| RegistryAuth::Basic(user.into(), password.into());
        let team_a = oci.client(&a, &basic("team-a", "pw")).await;
        let team_b = oci.client(&b, &basic("team-b", "pw")).await;
        let rotated = oci.client(&a, &basic("team-a", "pw2")).await;
        assert!(!Arc::ptr_eq(&team_a, &team_b));
        assert!(!Arc::ptr_eq(&team_a, &rotated));
        assert!(Arc::ptr_eq(
            &team_a,
            &oci.client(&b, &basic("team-a", "pw")).await
        ));
        assert!(!Arc::ptr_eq(
            &oci.client(&a, &RegistryAuth::Anonymous).await,
            &team_a
        ));
    }
}
