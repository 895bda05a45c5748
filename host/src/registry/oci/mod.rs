//! Guest modules as OCI artifacts: pulled by the host for `oci:` registry
//! entries (`pull`), pushed and pulled by `mco-host guests push|pull`
//! (`push`), with the credentials of a Docker config (`credentials`).
//!
//! Two layouts are read. The CNCF TAG Runtime one (config
//! `application/vnd.wasm.config.v0+json`, one `application/wasm` layer) is
//! the one written; its config lists the component's exports, so a module
//! of the wrong world is refused before its layer is downloaded. The older
//! one Kubewarden pushes (one `application/vnd.wasm.content.layer.v1+wasm`
//! layer) has no such list and is checked once loaded, like a file.
//!
//! Pulled modules are kept on disk by digest (`cache`; `--oci-cache-dir`,
//! an `emptyDir` in deploy/): a reference by digest whose manifest and
//! layer are cached needs no registry at all, and every cached file is
//! checked against its digest when read, so a corrupted cache is a miss,
//! not a wrong module.
//!
//! An entry with `verify:` is refused, before its layer is downloaded,
//! unless a cosign signature of its manifest digest verifies under one of
//! its keys (`signatures` finds them, cosign.rs says which forms verify).
//! Signatures are looked up on every pull that is not yet verified in this
//! process: a verified digest and key set is remembered in memory only, so
//! a tampered cache cannot vouch for a module.

mod cache;
mod credentials;
mod pull;
mod push;
mod signatures;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use oci_client::Client;
use oci_client::client::{ClientConfig, ClientProtocol};

pub use credentials::{Chosen, CredentialsError, DockerConfig, Target, docker_auth};
pub use pull::{ComponentInfo, LayoutError, PullError, Pulled, WasmConfig, parse_reference};
pub use signatures::LookupError;

/// An OCI client with the host's TLS stack and the digest cache.
#[derive(Clone)]
pub struct Oci {
    client: Arc<Client>,
    cache: Option<PathBuf>,
    /// Manifest digests verified in this process, with the fingerprints of
    /// the keys they were checked against, to the key that verified them:
    /// polls of an unchanged entry do not fetch its signatures again.
    verified: Arc<Mutex<BTreeMap<signatures::Verified, String>>>,
}

impl Oci {
    /// `plain_http` lists registries (`host:port`) reached without TLS, such
    /// as one on loopback.
    pub fn new(plain_http: &[String], cache: Option<PathBuf>) -> Oci {
        crate::install_crypto_provider();
        let protocol = if plain_http.is_empty() {
            ClientProtocol::Https
        } else {
            ClientProtocol::HttpsExcept(plain_http.to_vec())
        };
        let client = Client::new(ClientConfig {
            protocol,
            ..ClientConfig::default()
        });
        Oci {
            client: Arc::new(client),
            cache,
            verified: Arc::default(),
        }
    }
}

/// `bytes`' digest as OCI descriptors write it.
fn oci_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", crate::blob::digest(bytes))
}
