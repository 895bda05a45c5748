//! Guest modules as OCI artifacts: pulled by the host for `oci:` registry
//! entries, pushed and pulled by `mco-host guests push|pull`.
//!
//! Two layouts are read. The CNCF TAG Runtime one (config
//! `application/vnd.wasm.config.v0+json`, one `application/wasm` layer) is
//! the one written; its config lists the component's exports, so a module
//! of the wrong world is refused before its layer is downloaded. The older
//! one Kubewarden pushes (one `application/vnd.wasm.content.layer.v1+wasm`
//! layer) has no such list and is checked once loaded, like a file.
//!
//! Pulled modules are kept on disk by digest (`--oci-cache-dir`, an
//! `emptyDir` in deploy/): a reference by digest whose manifest and layer
//! are cached needs no registry at all, and every cached file is checked
//! against its digest when read, so a corrupted cache is a miss, not a
//! wrong module.
//!
//! An entry with `verify:` is refused, before its layer is downloaded,
//! unless a cosign signature of its manifest digest verifies under one of
//! its keys (cosign.rs says which forms). Signatures are looked up on every
//! pull that is not yet verified in this process: a verified digest and key
//! set is remembered in memory only, so a tampered cache cannot vouch for a
//! module.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use serde::{Deserialize, Serialize};

use super::Job;
use super::cosign::{self, Key, Signature};
use super::entries::OciSource;
use crate::runtime::digest;

/// The CNCF TAG Runtime config of a wasm artifact.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The CNCF TAG Runtime layer: the component itself.
pub const LAYER_MEDIA_TYPE: &str = "application/wasm";
/// The layer Kubewarden (and older wasm tooling) pushes.
pub const KUBEWARDEN_LAYER_MEDIA_TYPE: &str = "application/vnd.wasm.content.layer.v1+wasm";

/// The OCI annotation naming a layer's file.
const TITLE_ANNOTATION: &str = "org.opencontainers.image.title";

/// Larger manifests or configs than this are not a guest artifact.
const MAX_METADATA_BYTES: usize = 1 << 20;

/// Parses an OCI reference as the registry file and the CLI take it.
pub fn parse_reference(text: &str) -> Result<Reference, String> {
    Reference::try_from(text).map_err(|e| e.to_string())
}

/// The CNCF wasm config: what the component exports and imports, so a
/// puller can refuse it without downloading it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WasmConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    pub architecture: String,
    pub os: String,
    #[serde(default)]
    pub layer_digests: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<ComponentInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComponentInfo {
    #[serde(default)]
    pub exports: Vec<String>,
    #[serde(default)]
    pub imports: Vec<String>,
}

/// A module pulled from a registry.
#[derive(Debug, Clone)]
pub struct Pulled {
    pub bytes: Arc<Vec<u8>>,
    /// The manifest digest the reference resolved to (`sha256:…`).
    pub manifest_digest: String,
    pub layer_media_type: String,
    pub config: Option<WasmConfig>,
    /// Whether the layer came from the disk cache.
    pub cached: bool,
    /// The key the module's signature verified under, when the entry asks
    /// for one.
    pub verified_by: Option<String>,
}

/// Why a module could not be pulled; `result()` is its
/// `mco_guest_fetches_total` label.
#[derive(Debug, thiserror::Error)]
pub enum PullError {
    #[error("oci:{reference}: {detail}")]
    Reference { reference: String, detail: String },
    #[error("oci:{reference}: cannot read the manifest: {detail}")]
    Manifest { reference: String, detail: String },
    #[error("oci:{reference}: not a guest module: {detail}")]
    Layout { reference: String, detail: String },
    #[error(
        "oci:{reference}: the artifact's config says it exports {found}, not {expected}; the layer was not downloaded"
    )]
    World {
        reference: String,
        expected: String,
        found: String,
    },
    #[error("oci:{reference}: cannot download {what}: {detail}")]
    Download {
        reference: String,
        what: String,
        detail: String,
    },
    #[error("oci:{reference}: {what} has digest {actual}, expected {expected}")]
    DigestMismatch {
        reference: String,
        what: String,
        expected: String,
        actual: String,
    },
    #[error("oci:{reference}: pull secret {secret}: {detail}")]
    Secret {
        reference: String,
        secret: String,
        detail: String,
    },
    #[error("oci:{reference}: cannot push: {detail}")]
    Push { reference: String, detail: String },
    #[error(
        "oci:{reference}: no valid cosign signature of {digest} by any of the keys tried ({keys}): {detail}"
    )]
    Signature {
        reference: String,
        digest: String,
        keys: String,
        detail: String,
    },
    #[error("oci:{reference}: verify key {key}: {detail}")]
    Key {
        reference: String,
        key: String,
        detail: String,
    },
}

impl PullError {
    /// The `result` label of `mco_guest_fetches_total`.
    pub fn result(&self) -> &'static str {
        match self {
            PullError::Reference { .. } | PullError::Manifest { .. } => "manifest_failure",
            PullError::Layout { .. } | PullError::World { .. } => "refused",
            PullError::Download { .. } | PullError::Push { .. } => "download_failure",
            PullError::DigestMismatch { .. } => "digest_mismatch",
            PullError::Secret { .. } => "secret_failure",
            PullError::Signature { .. } => "signature_failure",
            PullError::Key { .. } => "key_failure",
        }
    }
}

/// An OCI client with the host's TLS stack and the digest cache.
#[derive(Clone)]
pub struct Oci {
    client: Arc<Client>,
    cache: Option<PathBuf>,
    /// Manifest digests verified in this process, with the fingerprints of
    /// the keys they were checked against, to the key that verified them:
    /// polls of an unchanged entry do not fetch its signatures again.
    verified: Arc<Mutex<BTreeMap<Verified, String>>>,
}

/// A manifest digest and the sorted fingerprints of the keys it was
/// verified against.
type Verified = (String, Vec<String>);

/// Past this many, the memo of verified digests starts again.
const MAX_VERIFIED: usize = 1024;

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

    /// Pulls `source`'s module. `export`, when given, is the interface the
    /// job needs: a CNCF config that lists other exports is refused before
    /// the layer is downloaded. `keys`, when given, are those one of which
    /// must have signed it (`source.verify`, read by the caller).
    pub async fn pull(
        &self,
        source: &OciSource,
        auth: &RegistryAuth,
        keys: Option<&[Key]>,
        export: Option<&str>,
    ) -> Result<Pulled, PullError> {
        let name = source.reference.clone();
        let reference = parse_reference(&name).map_err(|detail| PullError::Reference {
            reference: name.clone(),
            detail,
        })?;
        let cached_manifest = self.cached_manifest(&reference);
        let manifest_was_cached = cached_manifest.is_some();
        let (manifest_bytes, manifest_digest) = match cached_manifest {
            Some(cached) => cached,
            None => self.fetch_manifest(&reference, &name, auth).await?,
        };
        let manifest: OciImageManifest =
            serde_json::from_slice(&manifest_bytes).map_err(|e| PullError::Layout {
                reference: name.clone(),
                detail: format!("the manifest is not an OCI image manifest: {e}"),
            })?;
        let layer = wasm_layer(&manifest).map_err(|detail| PullError::Layout {
            reference: name.clone(),
            detail,
        })?;
        let config = if manifest.config.media_type == CONFIG_MEDIA_TYPE {
            let (bytes, _) = self
                .cached_or_pulled(
                    &reference,
                    &name,
                    &manifest.config,
                    "the config",
                    MAX_METADATA_BYTES,
                )
                .await?;
            let config: WasmConfig =
                serde_json::from_slice(&bytes).map_err(|e| PullError::Layout {
                    reference: name.clone(),
                    detail: format!("the {CONFIG_MEDIA_TYPE} config does not parse: {e}"),
                })?;
            if let (Some(export), Some(component)) = (export, &config.component)
                && !component
                    .exports
                    .iter()
                    .any(|e| crate::runtime::same_interface(e, export))
            {
                return Err(PullError::World {
                    reference: name,
                    expected: export.to_string(),
                    found: if component.exports.is_empty() {
                        "nothing".into()
                    } else {
                        component.exports.join(", ")
                    },
                });
            }
            Some(config)
        } else {
            None
        };
        let verified_by = match keys {
            Some(keys) => Some(
                self.verify(&reference, &name, &manifest_digest, auth, keys)
                    .await?,
            ),
            None => None,
        };
        let limit = usize::try_from(layer.size).unwrap_or(usize::MAX);
        let (bytes, cached) = self
            .cached_or_pulled(&reference, &name, layer, "the module layer", limit)
            .await?;
        // Stored once its layer is in hand, so a cached manifest always has
        // its module; a manifest read from the cache is not written again
        // (the registry is polled every few seconds).
        if !manifest_was_cached {
            self.store(&manifest_digest, &manifest_bytes);
        }
        Ok(Pulled {
            bytes: Arc::new(bytes),
            manifest_digest,
            layer_media_type: layer.media_type.clone(),
            config,
            cached,
            verified_by,
        })
    }

    /// The name of the key a signature of `manifest_digest` verifies
    /// under, from the memo or the registry.
    async fn verify(
        &self,
        reference: &Reference,
        name: &str,
        manifest_digest: &str,
        auth: &RegistryAuth,
        keys: &[Key],
    ) -> Result<String, PullError> {
        let mut fingerprints: Vec<String> = keys.iter().map(Key::fingerprint).collect();
        fingerprints.sort();
        let memo = (manifest_digest.to_string(), fingerprints);
        if let Some(key) = self
            .verified
            .lock()
            .ok()
            .and_then(|m| m.get(&memo).cloned())
        {
            return Ok(key);
        }
        let fail = |detail: String| PullError::Signature {
            reference: name.to_string(),
            digest: manifest_digest.to_string(),
            keys: cosign::names(keys),
            detail,
        };
        let signatures = self
            .signatures(reference, manifest_digest, auth)
            .await
            .map_err(fail)?;
        let key = cosign::verify(&signatures, manifest_digest, keys)
            .map_err(fail)?
            .name
            .clone();
        tracing::info!(reference = %name, digest = %manifest_digest, key = %key, "guest module signature verified");
        if let Ok(mut verified) = self.verified.lock() {
            if verified.len() >= MAX_VERIFIED {
                verified.clear();
            }
            verified.insert(memo, key.clone());
        }
        Ok(key)
    }

    /// The cosign signatures the registry holds for `manifest_digest` in
    /// `reference`'s repository: the legacy `.sig` tag's layers, then the
    /// bundle referrers (the referrers API, or its tag fallback). Sizes are
    /// capped before each download.
    pub async fn signatures(
        &self,
        reference: &Reference,
        manifest_digest: &str,
        auth: &RegistryAuth,
    ) -> Result<Vec<Signature>, String> {
        let hex = manifest_digest
            .strip_prefix("sha256:")
            .ok_or_else(|| format!("{manifest_digest} is no sha256 digest"))?;
        // Signatures live in the module's own repository.
        let (registry, repository) = (reference.registry(), reference.repository());
        let by_digest = |digest: &str| {
            Reference::with_digest(registry.into(), repository.into(), digest.into())
        };
        self.client
            .store_auth_if_needed(reference.resolve_registry(), auth)
            .await;
        let mut found = Vec::new();
        let sig_tag = Reference::with_tag(
            registry.into(),
            repository.into(),
            format!("sha256-{hex}.sig"),
        );
        if let Some(bytes) = self.signature_manifest(&sig_tag, auth).await? {
            for (layer, signature) in simple_signing_layers(&bytes)? {
                let payload = self.signature_blob(&sig_tag, &layer).await?;
                found.push(Signature::SimpleSigning { payload, signature });
            }
        }
        let referrers = self
            .client
            .pull_referrers(&by_digest(manifest_digest), Some(cosign::BUNDLE_MEDIA_TYPE))
            .await
            .map_err(|e| format!("cannot list the referrers: {e}"))?;
        for entry in referrers.manifests.iter().take(cosign::MAX_SIGNATURES) {
            let referrer = by_digest(&entry.digest);
            let Some(bytes) = self.signature_manifest(&referrer, auth).await? else {
                continue;
            };
            let actual = format!("sha256:{}", digest(&bytes));
            if actual != entry.digest {
                return Err(format!("the referrer {} has digest {actual}", entry.digest));
            }
            if let Some(layer) = bundle_layer(&bytes)? {
                found.push(Signature::Bundle(
                    self.signature_blob(&referrer, &layer).await?,
                ));
            }
        }
        Ok(found)
    }

    /// A signature manifest, or none where the registry has none; capped
    /// at [`cosign::MAX_SIGNATURE_BYTES`].
    async fn signature_manifest(
        &self,
        reference: &Reference,
        auth: &RegistryAuth,
    ) -> Result<Option<Vec<u8>>, String> {
        use oci_client::errors::{OciDistributionError as E, OciErrorCode};
        match self
            .client
            .pull_manifest_raw(reference, auth, &[OCI_IMAGE_MEDIA_TYPE])
            .await
        {
            Ok((bytes, _)) if bytes.len() > cosign::MAX_SIGNATURE_BYTES => Err(format!(
                "{reference}: a signature manifest of {} bytes",
                bytes.len()
            )),
            Ok((bytes, _)) => Ok(Some(bytes.to_vec())),
            Err(E::ImageManifestNotFoundError(_) | E::ServerError { code: 404, .. }) => Ok(None),
            Err(E::RegistryError { envelope, .. })
                if envelope.errors.iter().all(|e| {
                    matches!(
                        e.code,
                        OciErrorCode::ManifestUnknown | OciErrorCode::NotFound
                    )
                }) =>
            {
                Ok(None)
            }
            Err(e) => Err(format!("{reference}: {e}")),
        }
    }

    /// A payload or bundle blob, capped and checked against its digest.
    async fn signature_blob(
        &self,
        reference: &Reference,
        layer: &OciDescriptor,
    ) -> Result<Vec<u8>, String> {
        let name = reference.to_string();
        self.blob(
            reference,
            &name,
            layer,
            "a signature",
            cosign::MAX_SIGNATURE_BYTES,
        )
        .await
        .map_err(|e| e.to_string())
    }

    async fn fetch_manifest(
        &self,
        reference: &Reference,
        name: &str,
        auth: &RegistryAuth,
    ) -> Result<(Vec<u8>, String), PullError> {
        let (bytes, _) = self
            .client
            .pull_manifest_raw(reference, auth, &[OCI_IMAGE_MEDIA_TYPE])
            .await
            .map_err(|e| PullError::Manifest {
                reference: name.to_string(),
                detail: e.to_string(),
            })?;
        if bytes.len() > MAX_METADATA_BYTES {
            return Err(PullError::Layout {
                reference: name.to_string(),
                detail: format!("a manifest of {} bytes", bytes.len()),
            });
        }
        // Computed here rather than taken from the registry's header: the
        // digest is what the host reports and caches by.
        let actual = format!("sha256:{}", digest(&bytes));
        if let Some(expected) = reference.digest()
            && expected != actual
        {
            return Err(PullError::DigestMismatch {
                reference: name.to_string(),
                what: "the manifest".into(),
                expected: expected.to_string(),
                actual,
            });
        }
        Ok((bytes.to_vec(), actual))
    }

    /// A blob from the cache, or downloaded and cached; `true` when cached.
    async fn cached_or_pulled(
        &self,
        reference: &Reference,
        name: &str,
        descriptor: &OciDescriptor,
        what: &str,
        limit: usize,
    ) -> Result<(Vec<u8>, bool), PullError> {
        if let Some(bytes) = self.cached_blob(&descriptor.digest) {
            return Ok((bytes, true));
        }
        let bytes = self.blob(reference, name, descriptor, what, limit).await?;
        self.store(&descriptor.digest, &bytes);
        Ok((bytes, false))
    }

    /// Downloads a blob and checks its digest and size.
    async fn blob(
        &self,
        reference: &Reference,
        name: &str,
        descriptor: &OciDescriptor,
        what: &str,
        limit: usize,
    ) -> Result<Vec<u8>, PullError> {
        if usize::try_from(descriptor.size).map_or(true, |size| size > limit) {
            return Err(PullError::Layout {
                reference: name.to_string(),
                detail: format!("{what} claims {} bytes", descriptor.size),
            });
        }
        let mut bytes = Vec::new();
        self.client
            .pull_blob(reference, descriptor, &mut bytes)
            .await
            .map_err(|e| match e {
                oci_client::errors::OciDistributionError::DigestError(detail) => {
                    PullError::DigestMismatch {
                        reference: name.to_string(),
                        what: what.to_string(),
                        expected: descriptor.digest.clone(),
                        actual: detail.to_string(),
                    }
                }
                other => PullError::Download {
                    reference: name.to_string(),
                    what: what.to_string(),
                    detail: other.to_string(),
                },
            })?;
        let actual = format!("sha256:{}", digest(&bytes));
        if actual != descriptor.digest {
            return Err(PullError::DigestMismatch {
                reference: name.to_string(),
                what: what.to_string(),
                expected: descriptor.digest.clone(),
                actual,
            });
        }
        Ok(bytes)
    }

    /// The cached manifest of a reference by digest.
    fn cached_manifest(&self, reference: &Reference) -> Option<(Vec<u8>, String)> {
        let digest = reference.digest()?;
        self.cached_blob(digest).map(|b| (b, digest.to_string()))
    }

    fn cache_path(&self, digest_text: &str) -> Option<PathBuf> {
        let hex = digest_text.strip_prefix("sha256:")?;
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        Some(self.cache.as_ref()?.join("sha256").join(hex))
    }

    /// A cached blob, if present and still of its digest.
    fn cached_blob(&self, digest_text: &str) -> Option<Vec<u8>> {
        let path = self.cache_path(digest_text)?;
        let bytes = std::fs::read(&path).ok()?;
        (format!("sha256:{}", digest(&bytes)) == digest_text).then_some(bytes)
    }

    /// Records `bytes` as the module that serves `job` now, for the
    /// fallback at the next start (see `set::start`). Best effort.
    pub fn remember(&self, job: &Job, bytes: &[u8]) {
        let hex = digest(bytes);
        let Some(path) = self.last_good_path(job) else {
            return;
        };
        self.store(&format!("sha256:{hex}"), bytes);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| crate::runtime::cache::write_atomically(&path, hex.as_bytes()));
        if let Err(err) = written {
            tracing::warn!(path = %path.display(), error = %err, "cannot record the last good guest module");
        }
    }

    /// The module that last served `job`, if the cache still has it intact.
    pub fn last_good(&self, job: &Job) -> Option<Vec<u8>> {
        let hex = std::fs::read_to_string(self.last_good_path(job)?).ok()?;
        self.cached_blob(&format!("sha256:{}", hex.trim()))
    }

    /// `<cache>/last-good/<job>`; none for a platform name that is no
    /// plain file name.
    fn last_good_path(&self, job: &Job) -> Option<PathBuf> {
        let name = job.to_string();
        let plain = name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_');
        (plain && !name.starts_with('.'))
            .then(|| self.cache.as_ref().map(|c| c.join("last-good").join(name)))?
    }

    /// Best effort: a cache that cannot be written costs a download later.
    fn store(&self, digest_text: &str, bytes: &[u8]) {
        let Some(path) = self.cache_path(digest_text) else {
            return;
        };
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| crate::runtime::cache::write_atomically(&path, bytes));
        if let Err(err) = written {
            tracing::warn!(path = %path.display(), error = %err, "cannot cache a pulled guest module");
        }
    }

    /// Pushes `bytes` in the CNCF layout with `config`; returns the
    /// manifest digest. `title` names the layer's file, which generic
    /// clients (`oras pull`) need to write it out.
    pub async fn push(
        &self,
        reference_text: &str,
        bytes: Vec<u8>,
        mut config: WasmConfig,
        title: &str,
        auth: &RegistryAuth,
    ) -> Result<String, PullError> {
        let fail = |detail: String| PullError::Push {
            reference: reference_text.to_string(),
            detail,
        };
        let reference = parse_reference(reference_text).map_err(|detail| PullError::Reference {
            reference: reference_text.to_string(),
            detail,
        })?;
        let layer_digest = format!("sha256:{}", digest(&bytes));
        config.layer_digests = vec![layer_digest.clone()];
        let config_bytes = serde_json::to_vec(&config).map_err(|e| fail(e.to_string()))?;
        let descriptor = |media_type: &str, digest: String, size: usize| OciDescriptor {
            media_type: media_type.to_string(),
            digest,
            size: i64::try_from(size).unwrap_or(i64::MAX),
            urls: None,
            annotations: None,
            artifact_type: None,
        };
        let manifest = OciImageManifest {
            schema_version: 2,
            media_type: Some(OCI_IMAGE_MEDIA_TYPE.to_string()),
            config: descriptor(
                CONFIG_MEDIA_TYPE,
                format!("sha256:{}", digest(&config_bytes)),
                config_bytes.len(),
            ),
            layers: vec![OciDescriptor {
                annotations: Some(BTreeMap::from([(
                    TITLE_ANNOTATION.to_string(),
                    title.to_string(),
                )])),
                ..descriptor(LAYER_MEDIA_TYPE, layer_digest.clone(), bytes.len())
            }],
            subject: None,
            artifact_type: None,
            annotations: None,
        };
        let manifest_bytes = serde_json::to_vec(&manifest).map_err(|e| fail(e.to_string()))?;
        self.client
            .store_auth_if_needed(reference.resolve_registry(), auth)
            .await;
        self.client
            .push_blob(&reference, bytes, &layer_digest)
            .await
            .map_err(|e| fail(format!("the module layer: {e}")))?;
        self.client
            .push_blob(&reference, config_bytes, &manifest.config.digest)
            .await
            .map_err(|e| fail(format!("the config: {e}")))?;
        let manifest_digest = format!("sha256:{}", digest(&manifest_bytes));
        self.client
            .push_manifest_raw(
                &reference,
                manifest_bytes,
                http::HeaderValue::from_static(OCI_IMAGE_MEDIA_TYPE),
            )
            .await
            .map_err(|e| fail(format!("the manifest: {e}")))?;
        Ok(manifest_digest)
    }
}

/// A signature manifest parsed, with the count and sizes of what it
/// names checked before anything is downloaded.
fn signature_layers(bytes: &[u8]) -> Result<Vec<OciDescriptor>, String> {
    let manifest: OciImageManifest = serde_json::from_slice(bytes)
        .map_err(|e| format!("a signature manifest that is no image manifest: {e}"))?;
    if manifest.layers.len() > cosign::MAX_SIGNATURES {
        return Err(format!(
            "a signature manifest of {} layers (at most {} are read)",
            manifest.layers.len(),
            cosign::MAX_SIGNATURES
        ));
    }
    if let Some(layer) = manifest
        .layers
        .iter()
        .find(|l| usize::try_from(l.size).map_or(true, |s| s > cosign::MAX_SIGNATURE_BYTES))
    {
        return Err(format!(
            "a signature layer of {} bytes (at most {})",
            layer.size,
            cosign::MAX_SIGNATURE_BYTES
        ));
    }
    Ok(manifest.layers)
}

/// The simple-signing layers of a `.sig` manifest, with their signature
/// annotations.
fn simple_signing_layers(bytes: &[u8]) -> Result<Vec<(OciDescriptor, Option<String>)>, String> {
    Ok(signature_layers(bytes)?
        .into_iter()
        .filter(|l| l.media_type == cosign::SIMPLE_SIGNING_MEDIA_TYPE)
        .map(|l| {
            let signature = l
                .annotations
                .as_ref()
                .and_then(|a| a.get(cosign::SIGNATURE_ANNOTATION).cloned());
            (l, signature)
        })
        .collect())
}

/// The bundle layer of a referrer, if it is a bundle.
fn bundle_layer(bytes: &[u8]) -> Result<Option<OciDescriptor>, String> {
    Ok(signature_layers(bytes)?
        .into_iter()
        .find(|l| l.media_type == cosign::BUNDLE_MEDIA_TYPE))
}

/// The one layer holding the module.
fn wasm_layer(manifest: &OciImageManifest) -> Result<&OciDescriptor, String> {
    let wasm: Vec<&OciDescriptor> = manifest
        .layers
        .iter()
        .filter(|l| l.media_type == LAYER_MEDIA_TYPE || l.media_type == KUBEWARDEN_LAYER_MEDIA_TYPE)
        .collect();
    match wasm.as_slice() {
        [layer] if manifest.layers.len() == 1 => Ok(layer),
        [] => Err(format!(
            "no {LAYER_MEDIA_TYPE} or {KUBEWARDEN_LAYER_MEDIA_TYPE} layer (layers: {})",
            manifest
                .layers
                .iter()
                .map(|l| l.media_type.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        _ => Err(format!(
            "{} layers; a guest artifact has exactly one",
            manifest.layers.len()
        )),
    }
}

/// The credentials a `kubernetes.io/dockerconfigjson` Secret's
/// `.dockerconfigjson` holds for `registry`. Keys are matched as the
/// kubelet does for the common forms: `host[:port]`, with or without a
/// scheme and a trailing path.
pub fn docker_auth(config_json: &[u8], registry: &str) -> Result<RegistryAuth, String> {
    #[derive(Deserialize)]
    struct DockerConfig {
        #[serde(default)]
        auths: BTreeMap<String, DockerAuth>,
    }
    #[derive(Deserialize)]
    struct DockerAuth {
        #[serde(default)]
        auth: Option<String>,
        #[serde(default)]
        username: Option<String>,
        #[serde(default)]
        password: Option<String>,
    }
    let config: DockerConfig = serde_json::from_slice(config_json)
        .map_err(|e| format!(".dockerconfigjson does not parse: {e}"))?;
    let host_of = |key: &str| {
        let key = key
            .strip_prefix("https://")
            .or_else(|| key.strip_prefix("http://"))
            .unwrap_or(key);
        key.split('/').next().unwrap_or(key).to_string()
    };
    // Docker Hub is stored under its legacy index address.
    let wanted = |host: &str| {
        host == registry
            || (registry == "index.docker.io" || registry == "docker.io")
                && (host == "index.docker.io" || host == "docker.io")
    };
    let Some(entry) = config.auths.iter().find(|(k, _)| wanted(&host_of(k))) else {
        return Err(format!("no credentials for {registry}"));
    };
    let entry = entry.1;
    if let (Some(user), Some(password)) = (&entry.username, &entry.password) {
        return Ok(RegistryAuth::Basic(user.clone(), password.clone()));
    }
    let encoded = entry.auth.as_deref().ok_or_else(|| {
        format!("the entry for {registry} has neither auth nor username/password")
    })?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|e| format!("the auth of {registry} is not base64: {e}"))?;
    let text =
        String::from_utf8(decoded).map_err(|_| format!("the auth of {registry} is not UTF-8"))?;
    let (user, password) = text
        .split_once(':')
        .ok_or_else(|| format!("the auth of {registry} is not user:password"))?;
    Ok(RegistryAuth::Basic(user.to_string(), password.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(layers: &[&str]) -> OciImageManifest {
        let d = |m: &str| OciDescriptor {
            media_type: m.into(),
            digest: format!("sha256:{}", "0".repeat(64)),
            size: 1,
            urls: None,
            annotations: None,
            artifact_type: None,
        };
        OciImageManifest {
            schema_version: 2,
            media_type: None,
            config: d(CONFIG_MEDIA_TYPE),
            layers: layers.iter().map(|m| d(m)).collect(),
            subject: None,
            artifact_type: None,
            annotations: None,
        }
    }

    #[test]
    fn both_layouts_have_one_module_layer_and_nothing_else_does() {
        for media in [LAYER_MEDIA_TYPE, KUBEWARDEN_LAYER_MEDIA_TYPE] {
            let m = manifest(&[media]);
            assert_eq!(wasm_layer(&m).map(|l| l.media_type.as_str()), Ok(media));
        }
        let tar = manifest(&["application/vnd.oci.image.layer.v1.tar"]);
        assert!(wasm_layer(&tar).is_err_and(|e| e.contains("no application/wasm")));
        assert!(wasm_layer(&manifest(&[])).is_err());
        let two = manifest(&[LAYER_MEDIA_TYPE, LAYER_MEDIA_TYPE]);
        assert!(wasm_layer(&two).is_err_and(|e| e.contains("2 layers")));
        let extra = manifest(&[LAYER_MEDIA_TYPE, "text/plain"]);
        assert!(wasm_layer(&extra).is_err_and(|e| e.contains("exactly one")));
    }

    /// A `.sig`-style manifest of `layers` (media type, size, signature).
    fn signature_manifest(layers: &[(&str, i64, Option<&str>)]) -> Vec<u8> {
        let layers: Vec<serde_json::Value> = layers
            .iter()
            .map(|(media, size, signature)| {
                let mut layer = serde_json::json!({
                    "mediaType": media,
                    "size": size,
                    "digest": format!("sha256:{}", "1".repeat(64)),
                });
                if let Some(signature) = signature {
                    layer["annotations"] =
                        serde_json::json!({ (cosign::SIGNATURE_ANNOTATION): signature });
                }
                layer
            })
            .collect();
        serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2,
            "mediaType": OCI_IMAGE_MEDIA_TYPE,
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "size": 2,
                       "digest": format!("sha256:{}", "2".repeat(64))},
            "layers": layers,
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn signature_manifests_are_read_within_their_limits() {
        let simple = cosign::SIMPLE_SIGNING_MEDIA_TYPE;
        let two = signature_manifest(&[(simple, 239, Some("MEUC")), ("text/plain", 3, None)]);
        let layers = simple_signing_layers(&two).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(layers.len(), 1);
        assert_eq!(layers[0].1.as_deref(), Some("MEUC"));
        let bundle = signature_manifest(&[(cosign::BUNDLE_MEDIA_TYPE, 667, None)]);
        assert!(matches!(bundle_layer(&bundle), Ok(Some(_))));
        assert!(matches!(bundle_layer(&two), Ok(None)));

        let many = vec![(simple, 239, Some("MEUC")); cosign::MAX_SIGNATURES + 1];
        let too_many = simple_signing_layers(&signature_manifest(&many));
        assert!(too_many.is_err_and(|e| e.contains("17 layers")));
        let limit = i64::try_from(cosign::MAX_SIGNATURE_BYTES).unwrap_or(i64::MAX);
        let huge = signature_manifest(&[(simple, limit + 1, None)]);
        assert!(simple_signing_layers(&huge).is_err_and(|e| e.contains("a signature layer of")));
        let negative = signature_manifest(&[(cosign::BUNDLE_MEDIA_TYPE, -1, None)]);
        assert!(bundle_layer(&negative).is_err_and(|e| e.contains("a signature layer of -1")));
        assert!(bundle_layer(b"{not json").is_err_and(|e| e.contains("no image manifest")));
    }

    #[test]
    fn pull_secrets_give_credentials_for_their_registry_only() {
        let auth = base64::engine::general_purpose::STANDARD.encode("robot:s3cr:et");
        let json = format!(
            r#"{{"auths":{{"https://quay.io/v1/":{{"auth":"{auth}"}},"r.example:5000":{{"username":"u","password":"p"}}}}}}"#
        );
        let basic = |u: &str, p: &str| format!("{:?}", RegistryAuth::Basic(u.into(), p.into()));
        let got = |registry: &str| docker_auth(json.as_bytes(), registry).map(|a| format!("{a:?}"));
        assert_eq!(got("quay.io"), Ok(basic("robot", "s3cr:et")));
        assert_eq!(got("r.example:5000"), Ok(basic("u", "p")));
        assert!(got("r.example").is_err_and(|e| e.contains("no credentials for r.example")));
    }

    #[test]
    fn hostile_pull_secrets_are_refused_with_a_reason() {
        let cases: [(&[u8], &str); 5] = [
            (b"not json", "does not parse"),
            (br#"{"auths":{"q.io":{"auth":"%%%"}}}"#, "not base64"),
            (
                br#"{"auths":{"q.io":{"auth":"bm9jb2xvbg=="}}}"#,
                "not user:password",
            ),
            (br#"{"auths":{"q.io":{}}}"#, "neither auth"),
            (br#"{"auths":[]}"#, "does not parse"),
        ];
        for (json, reason) in cases {
            match docker_auth(json, "q.io") {
                Err(e) => assert!(e.contains(reason), "{e}"),
                Ok(a) => panic!("{a:?}"),
            }
        }
    }

    #[test]
    fn the_cache_is_keyed_by_digest_and_ignores_corrupt_files() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let oci = Oci::new(&[], Some(dir.path().to_path_buf()));
        let bytes = b"\0asm module".to_vec();
        let key = format!("sha256:{}", digest(&bytes));
        assert_eq!(oci.cached_blob(&key), None);
        oci.store(&key, &bytes);
        assert_eq!(oci.cached_blob(&key), Some(bytes.clone()));
        // A digest that is no hex digest never names a path.
        assert_eq!(oci.cache_path("sha256:../../etc/passwd"), None);
        assert_eq!(oci.cache_path("md5:00"), None);
        let path = oci.cache_path(&key).unwrap_or_else(|| panic!("no path"));
        std::fs::write(&path, b"tampered").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(oci.cached_blob(&key), None);
    }

    #[test]
    fn the_last_good_module_is_remembered_per_job() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let oci = Oci::new(&[], Some(dir.path().to_path_buf()));
        let kind = |name| {
            crate::JOBS
                .named(name)
                .unwrap_or_else(|| panic!("no job {name}"))
        };
        let mcn = Job::single(kind("mcn"));
        let gcp = Job::keyed(kind("bootImage"), "GCP");
        assert_eq!(oci.last_good(&gcp), None);
        oci.remember(&gcp, b"one");
        oci.remember(&gcp, b"two");
        oci.remember(&mcn, b"mcn");
        assert_eq!(oci.last_good(&gcp), Some(b"two".to_vec()));
        assert_eq!(oci.last_good(&mcn), Some(b"mcn".to_vec()));
        // A platform name that would leave the directory is not recorded.
        let hostile = Job::keyed(kind("bootImage"), "../../x");
        oci.remember(&hostile, b"x");
        assert_eq!(oci.last_good(&hostile), None);
        assert!(!dir.path().join("x").exists());
        // Without a cache nothing is remembered.
        let none = Oci::new(&[], None);
        none.remember(&mcn, b"mcn");
        assert_eq!(none.last_good(&mcn), None);
    }
}
