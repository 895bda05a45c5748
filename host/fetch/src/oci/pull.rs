//! Pulling a guest module: the reference resolved to a manifest, its
//! signature checked, its config and layer downloaded within their size
//! bounds and checked against their digests, all within the pull's
//! deadline, and why a pull fails.

use std::sync::Arc;
use std::time::Duration;

use mco_registry_formats::artifact::{
    self, LayoutError, MAX_METADATA_BYTES, WasmConfig, check_size,
};
use oci_client::Reference;
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor};
use oci_client::secrets::RegistryAuth;

use super::{Oci, RequestError, oci_digest};
use crate::signature_policy::Policy;

/// Parses an OCI reference as the registry file and the CLI take it.
pub fn parse_reference(text: &str) -> Result<Reference, oci_client::ParseError> {
    Reference::try_from(text)
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
    /// The signers whose signatures met the entry's signature policy,
    /// when it has one.
    pub verified_by: Option<String>,
}

/// Why a module could not be pulled; `kind()` is its
/// `mco_guest_fetches_total` label.
#[derive(Debug, thiserror::Error)]
pub enum PullError {
    #[error("oci:{reference}: {detail}")]
    Reference {
        reference: String,
        detail: oci_client::ParseError,
    },
    #[error("oci:{reference}: cannot read {what}: {source}")]
    Request {
        reference: String,
        what: &'static str,
        source: RequestError,
    },
    #[error("oci:{reference}: the pull did not finish within {after:?} (--oci-pull-timeout)")]
    Deadline { reference: String, after: Duration },
    #[error("oci:{reference}: not a guest module: {detail}")]
    Layout {
        reference: String,
        detail: LayoutError,
    },
    #[error(
        "oci:{reference}: the artifact's config says it exports {found}, not {expected}; the layer was not downloaded"
    )]
    World {
        reference: String,
        expected: String,
        found: String,
    },
    #[error("oci:{reference}: {what} has digest {actual}, expected {expected}")]
    DigestMismatch {
        reference: String,
        what: String,
        expected: String,
        actual: String,
    },
    /// The task of a pull ended without its result (cancelled, or a bug).
    #[error("oci:{reference}: the pull stopped: {detail}")]
    Stopped { reference: String, detail: String },
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
    /// `allOf` or `anyOf` of the signature policy not met.
    #[error(
        "oci:{reference}: the signatures of {digest} do not meet the signature policy: {detail}"
    )]
    Policy {
        reference: String,
        digest: String,
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
    pub fn kind(&self) -> &'static str {
        match self {
            PullError::Reference { .. } => "manifest_failure",
            PullError::Request { what, source, .. } => match source {
                RequestError::TooLarge { .. } => "too_large",
                e if e.is_timeout() => "timeout",
                _ if *what == MANIFEST => "manifest_failure",
                _ => "download_failure",
            },
            PullError::Deadline { .. } => "timeout",
            PullError::Layout { .. } | PullError::World { .. } => "refused",
            PullError::Push { .. } | PullError::Stopped { .. } => "download_failure",
            PullError::DigestMismatch { .. } => "digest_mismatch",
            PullError::Secret { .. } => "secret_failure",
            PullError::Signature { .. } | PullError::Policy { .. } => "signature_failure",
            PullError::Key { .. } => "key_failure",
        }
    }
}

impl Oci {
    /// Pulls the module `reference_text` names, within the deadline of its
    /// [`super::PullLimits`]. `export`, when given, is the interface the
    /// job needs: a CNCF config that lists other exports is refused before
    /// the layer is downloaded. `policy`, when given, is the signature
    /// policy the module must meet, checked before any blob is fetched.
    pub async fn pull(
        &self,
        reference_text: &str,
        auth: &RegistryAuth,
        policy: Option<&Policy>,
        export: Option<&str>,
    ) -> Result<Pulled, PullError> {
        let deadline = self.limits.deadline;
        let pull = self.pull_unbounded(reference_text, auth, policy, export);
        tokio::time::timeout(deadline, pull)
            .await
            .unwrap_or_else(|_| {
                Err(PullError::Deadline {
                    reference: reference_text.to_string(),
                    after: deadline,
                })
            })
    }

    async fn pull_unbounded(
        &self,
        reference_text: &str,
        auth: &RegistryAuth,
        policy: Option<&Policy>,
        export: Option<&str>,
    ) -> Result<Pulled, PullError> {
        let name = reference_text.to_string();
        let layout = |detail| PullError::Layout {
            reference: name.clone(),
            detail,
        };
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
        let manifest = artifact::parse_manifest(&manifest_bytes).map_err(layout)?;
        let layer = artifact::wasm_layer(&manifest).map_err(layout)?;
        // Before any blob: what an unsigned manifest names is not fetched.
        let verified_by = match policy {
            Some(policy) => Some(
                self.verify(&reference, &name, &manifest_digest, auth, policy)
                    .await?,
            ),
            None => None,
        };
        let config = if artifact::has_wasm_config(&manifest) {
            let (bytes, _) = self
                .cached_or_pulled(Wanted {
                    reference: &reference,
                    auth,
                    name: &name,
                    descriptor: &manifest.config,
                    what: "the config",
                    limit: MAX_METADATA_BYTES,
                })
                .await?;
            let config = artifact::parse_config(&bytes).map_err(layout)?;
            if let Some(export) = export
                && let Some(found) = config.lacks(export)
            {
                return Err(PullError::World {
                    reference: name,
                    expected: export.to_string(),
                    found,
                });
            }
            Some(config)
        } else {
            None
        };
        let (bytes, cached) = self
            .cached_or_pulled(Wanted {
                reference: &reference,
                auth,
                name: &name,
                descriptor: layer,
                what: "the module layer",
                limit: self.limits.max_module_bytes,
            })
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

    /// The manifest `reference` names, read up to [`MAX_METADATA_BYTES`],
    /// and its digest.
    async fn fetch_manifest(
        &self,
        reference: &Reference,
        name: &str,
        auth: &RegistryAuth,
    ) -> Result<(Vec<u8>, String), PullError> {
        let fail = |source| PullError::Request {
            reference: name.to_string(),
            what: MANIFEST,
            source,
        };
        let url = self.manifest_url(reference).map_err(fail)?;
        let bytes = self
            .get(
                reference,
                auth,
                url,
                OCI_IMAGE_MEDIA_TYPE,
                MAX_METADATA_BYTES,
            )
            .await
            .map_err(fail)?;
        // Computed here rather than taken from the registry's header: the
        // digest is what the host reports and caches by.
        let actual = oci_digest(&bytes);
        if let Some(expected) = reference.digest()
            && expected != actual
        {
            return Err(PullError::DigestMismatch {
                reference: name.to_string(),
                what: MANIFEST.into(),
                expected: expected.to_string(),
                actual,
            });
        }
        Ok((bytes, actual))
    }

    /// A blob from the cache, or downloaded and cached; `true` when cached.
    async fn cached_or_pulled(&self, wanted: Wanted<'_>) -> Result<(Vec<u8>, bool), PullError> {
        let digest = &wanted.descriptor.digest;
        if let Some(bytes) = self.cached_blob(digest) {
            return Ok((bytes, true));
        }
        let bytes = self.blob(&wanted).await?;
        self.store(digest, &bytes);
        Ok((bytes, false))
    }

    /// Downloads a blob of at most the size its descriptor declares, which
    /// must be within `limit`, and checks its digest.
    pub(super) async fn blob(&self, wanted: &Wanted<'_>) -> Result<Vec<u8>, PullError> {
        let Wanted {
            reference,
            auth,
            name,
            descriptor,
            what,
            limit,
        } = *wanted;
        check_size(descriptor, what, limit).map_err(|detail| PullError::Layout {
            reference: name.to_string(),
            detail,
        })?;
        let mismatch = |actual: String| PullError::DigestMismatch {
            reference: name.to_string(),
            what: what.to_string(),
            expected: descriptor.digest.clone(),
            actual,
        };
        // Checked before it goes into a URL.
        if !is_sha256(&descriptor.digest) {
            return Err(mismatch("no sha256 digest".into()));
        }
        let declared = usize::try_from(descriptor.size).unwrap_or(limit);
        let fail = |source| PullError::Request {
            reference: name.to_string(),
            what,
            source,
        };
        let url = self
            .url(reference, &format!("blobs/{}", descriptor.digest))
            .map_err(fail)?;
        let bytes = self
            .get(reference, auth, url, "*/*", declared)
            .await
            .map_err(fail)?;
        let actual = oci_digest(&bytes);
        if actual != descriptor.digest {
            return Err(mismatch(actual));
        }
        Ok(bytes)
    }
}

/// How errors name the manifest.
const MANIFEST: &str = "the manifest";

/// Whether `digest` is `sha256:` and 64 hexadecimal digits.
fn is_sha256(digest: &str) -> bool {
    digest
        .strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A blob to download: from `reference`'s repository, named in errors by
/// `name` (the reference as written) and `what`, at most `limit` bytes.
pub(super) struct Wanted<'a> {
    pub reference: &'a Reference,
    pub auth: &'a RegistryAuth,
    pub name: &'a str,
    pub descriptor: &'a OciDescriptor,
    pub what: &'static str,
    pub limit: usize,
}
