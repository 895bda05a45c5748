//! The cosign signatures of a module, looked up in its repository (the
//! `.sig` tag with its signature and certificate annotations, and the
//! Sigstore bundle referrers) with every manifest, index and blob read
//! within its bound (`http.rs`), and checked against the entry's
//! signature policy (signature_policy.rs); a digest that met a policy once
//! is remembered for the life of the process.

use mco_registry_formats::artifact::MAX_METADATA_BYTES;
use oci_client::Reference;
use oci_client::manifest::{
    ImageIndexEntry, OCI_IMAGE_INDEX_MEDIA_TYPE, OCI_IMAGE_MEDIA_TYPE, OciDescriptor,
    OciImageIndex, OciImageManifest,
};
use oci_client::secrets::RegistryAuth;

use super::pull::Wanted;
use super::{Oci, PullError, RequestError, oci_digest};
use crate::signature_policy::{Policy, Refusal};
use mco_registry_formats::cosign::{self, CertificateAnnotations, Signature};

/// A manifest digest and the fingerprint of the policy it met.
pub(super) type Verified = (String, String);

/// Past this many, the memo of verified digests starts again.
const MAX_VERIFIED: usize = 1024;

/// Why the signatures of a module could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    #[error("{0} is no sha256 digest")]
    NotSha256(String),
    #[error("cannot list the referrers: {0}")]
    Referrers(RequestError),
    #[error("a referrers list that is no image index: {0}")]
    NotIndex(serde_json::Error),
    #[error("the referrer {listed} has digest {actual}")]
    ReferrerDigest { listed: String, actual: String },
    #[error("{reference}: {source}")]
    Registry {
        reference: String,
        source: RequestError,
    },
    #[error("a signature manifest that is no image manifest: {0}")]
    NotManifest(serde_json::Error),
    #[error("a signature manifest of {0} layers (at most {max} are read)", max = cosign::MAX_SIGNATURES)]
    Layers(usize),
    #[error("a signature layer of {0} bytes (at most {max})", max = cosign::MAX_SIGNATURE_BYTES)]
    LayerSize(i64),
    #[error(transparent)]
    Blob(Box<PullError>),
}

impl Oci {
    /// The signers whose signatures of `manifest_digest` meet `policy`,
    /// from the memo or the registry.
    pub(super) async fn verify(
        &self,
        reference: &Reference,
        name: &str,
        manifest_digest: &str,
        auth: &RegistryAuth,
        policy: &Policy,
    ) -> Result<String, PullError> {
        let memo = (manifest_digest.to_string(), policy.fingerprint());
        if let Some(signers) = self
            .verified
            .lock()
            .ok()
            .and_then(|m| m.get(&memo).cloned())
        {
            return Ok(signers);
        }
        let signatures = self
            .signatures(reference, manifest_digest, auth)
            .await
            .map_err(|e| PullError::Signature {
                reference: name.to_string(),
                digest: manifest_digest.to_string(),
                keys: policy.names(),
                detail: e.to_string(),
            })?;
        let signers = policy
            .verify(&signatures, manifest_digest, unix_now())
            .map_err(|refusal| match refusal {
                Refusal::AnyOne { names, why } => PullError::Signature {
                    reference: name.to_string(),
                    digest: manifest_digest.to_string(),
                    keys: names,
                    detail: why,
                },
                quorum @ Refusal::Quorum(_) => PullError::Policy {
                    reference: name.to_string(),
                    digest: manifest_digest.to_string(),
                    detail: quorum.to_string(),
                },
            })?
            .signers();
        tracing::info!(reference = %name, digest = %manifest_digest, signers = %signers, "guest module signature verified");
        if let Ok(mut verified) = self.verified.lock() {
            if verified.len() >= MAX_VERIFIED {
                verified.clear();
            }
            verified.insert(memo, signers.clone());
        }
        Ok(signers)
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
    ) -> Result<Vec<Signature>, LookupError> {
        let hex = manifest_digest
            .strip_prefix("sha256:")
            .ok_or_else(|| LookupError::NotSha256(manifest_digest.to_string()))?;
        // Signatures live in the module's own repository.
        let (registry, repository) = (reference.registry(), reference.repository());
        let by_digest = |digest: &str| {
            Reference::with_digest(registry.into(), repository.into(), digest.into())
        };
        let mut found = Vec::new();
        let sig_tag = Reference::with_tag(
            registry.into(),
            repository.into(),
            format!("sha256-{hex}.sig"),
        );
        if let Some(bytes) = self.signature_manifest(&sig_tag, auth).await? {
            for (layer, signature, certificate) in simple_signing_layers(&bytes)? {
                let payload = self.signature_blob(&sig_tag, auth, &layer).await?;
                found.push(Signature::SimpleSigning {
                    payload,
                    signature,
                    certificate,
                });
                dedup_last(&mut found);
            }
        }
        let referrers = self
            .bundle_referrers(&by_digest(manifest_digest), auth, hex)
            .await?;
        for entry in referrers.iter().take(cosign::MAX_SIGNATURES) {
            let referrer = by_digest(&entry.digest);
            let Some(bytes) = self.signature_manifest(&referrer, auth).await? else {
                continue;
            };
            let actual = oci_digest(&bytes);
            if actual != entry.digest {
                return Err(LookupError::ReferrerDigest {
                    listed: entry.digest.clone(),
                    actual,
                });
            }
            if let Some(layer) = bundle_layer(&bytes)? {
                found.push(Signature::Bundle(
                    self.signature_blob(&referrer, auth, &layer).await?,
                ));
                dedup_last(&mut found);
            }
        }
        Ok(found)
    }

    /// A signature manifest, or none where the registry has none; read up
    /// to [`cosign::MAX_SIGNATURE_BYTES`].
    async fn signature_manifest(
        &self,
        reference: &Reference,
        auth: &RegistryAuth,
    ) -> Result<Option<Vec<u8>>, LookupError> {
        self.optional(
            reference,
            auth,
            OCI_IMAGE_MEDIA_TYPE,
            cosign::MAX_SIGNATURE_BYTES,
        )
        .await
    }

    /// The manifest `reference` names, or none where the registry has
    /// none, read up to `limit` bytes.
    async fn optional(
        &self,
        reference: &Reference,
        auth: &RegistryAuth,
        accept: &str,
        limit: usize,
    ) -> Result<Option<Vec<u8>>, LookupError> {
        let fail = |source| LookupError::Registry {
            reference: reference.to_string(),
            source,
        };
        let url = self.manifest_url(reference).map_err(fail)?;
        match self.get(reference, auth, url, accept, limit).await {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.is_unknown() => Ok(None),
            Err(e) => Err(fail(e)),
        }
    }

    /// The Sigstore bundles that refer to `subject` (a reference by
    /// digest, whose hex is `hex`): from the referrers API, or where the
    /// registry has none (404) from the referrers tag schema's index
    /// (`sha256-<hex>`), as the distribution spec falls back; read up to
    /// [`MAX_METADATA_BYTES`] either way.
    async fn bundle_referrers(
        &self,
        subject: &Reference,
        auth: &RegistryAuth,
        hex: &str,
    ) -> Result<Vec<ImageIndexEntry>, LookupError> {
        let digest = format!("sha256:{hex}");
        let mut url = self
            .url(subject, &format!("referrers/{digest}"))
            .map_err(LookupError::Referrers)?;
        url.query_pairs_mut()
            .append_pair("artifactType", cosign::BUNDLE_MEDIA_TYPE);
        let accept = OCI_IMAGE_INDEX_MEDIA_TYPE;
        let bytes = match self
            .get(subject, auth, url, accept, MAX_METADATA_BYTES)
            .await
        {
            Ok(bytes) => bytes,
            Err(RequestError::Status { status, .. })
                if status == reqwest::StatusCode::NOT_FOUND =>
            {
                let tag = Reference::with_tag(
                    subject.registry().into(),
                    subject.repository().into(),
                    format!("sha256-{hex}"),
                );
                match self
                    .optional(&tag, auth, accept, MAX_METADATA_BYTES)
                    .await?
                {
                    Some(bytes) => bytes,
                    None => return Ok(Vec::new()),
                }
            }
            Err(e) => return Err(LookupError::Referrers(e)),
        };
        let index: OciImageIndex = serde_json::from_slice(&bytes).map_err(LookupError::NotIndex)?;
        // A registry may ignore the filter, and the tag schema's index has
        // every referrer.
        Ok(index
            .manifests
            .into_iter()
            .filter(|e| e.artifact_type.as_deref() == Some(cosign::BUNDLE_MEDIA_TYPE))
            .collect())
    }

    /// A payload or bundle blob, capped and checked against its digest.
    async fn signature_blob(
        &self,
        reference: &Reference,
        auth: &RegistryAuth,
        layer: &OciDescriptor,
    ) -> Result<Vec<u8>, LookupError> {
        let name = reference.to_string();
        self.blob(&Wanted {
            reference,
            auth,
            name: &name,
            descriptor: layer,
            what: "a signature",
            limit: cosign::MAX_SIGNATURE_BYTES,
        })
        .await
        .map_err(|e| LookupError::Blob(Box::new(e)))
    }
}

/// A signature manifest parsed, with the count and sizes of what it
/// names checked before anything is downloaded.
fn signature_layers(bytes: &[u8]) -> Result<Vec<OciDescriptor>, LookupError> {
    let manifest: OciImageManifest =
        serde_json::from_slice(bytes).map_err(LookupError::NotManifest)?;
    if manifest.layers.len() > cosign::MAX_SIGNATURES {
        return Err(LookupError::Layers(manifest.layers.len()));
    }
    if let Some(layer) = manifest
        .layers
        .iter()
        .find(|l| usize::try_from(l.size).map_or(true, |s| s > cosign::MAX_SIGNATURE_BYTES))
    {
        return Err(LookupError::LayerSize(layer.size));
    }
    Ok(manifest.layers)
}

/// The simple-signing layers of a `.sig` manifest, with their signature
/// and certificate annotations.
fn simple_signing_layers(bytes: &[u8]) -> Result<Vec<SimpleSigningLayer>, LookupError> {
    Ok(signature_layers(bytes)?
        .into_iter()
        .filter(|l| l.media_type == cosign::SIMPLE_SIGNING_MEDIA_TYPE)
        .map(|l| {
            let annotations = l.annotations.clone().unwrap_or_default();
            let signature = annotations.get(cosign::SIGNATURE_ANNOTATION).cloned();
            let certificate = CertificateAnnotations::from_annotations(&annotations);
            (l, signature, certificate)
        })
        .collect())
}

/// A simple-signing layer, its signature and its certificate annotations.
type SimpleSigningLayer = (OciDescriptor, Option<String>, CertificateAnnotations);

/// Drops the signature just found where it repeats one found before: a
/// layer or referrer pushed twice is checked once. (The policy counts
/// signings, not signatures, so this saves work; it is not what keeps a
/// repeated signature from counting twice.)
fn dedup_last(found: &mut Vec<Signature>) {
    if let Some((last, before)) = found.split_last()
        && before.contains(last)
    {
        found.pop();
    }
}

/// The current Unix time: the signing time of a certificate no log
/// vouches for, where the policy needs none (a PKI policy).
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The bundle layer of a referrer, if it is a bundle.
fn bundle_layer(bytes: &[u8]) -> Result<Option<OciDescriptor>, LookupError> {
    Ok(signature_layers(bytes)?
        .into_iter()
        .find(|l| l.media_type == cosign::BUNDLE_MEDIA_TYPE))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_signature_found_twice_is_kept_once() {
        let layer = |payload: &[u8]| Signature::SimpleSigning {
            payload: payload.to_vec(),
            signature: Some("MEUC".into()),
            certificate: CertificateAnnotations::default(),
        };
        let mut found = Vec::new();
        for signature in [
            layer(b"a"),
            Signature::Bundle(b"{}".to_vec()),
            layer(b"a"),
            layer(b"b"),
            Signature::Bundle(b"{}".to_vec()),
        ] {
            found.push(signature);
            dedup_last(&mut found);
        }
        assert_eq!(
            found,
            [layer(b"a"), Signature::Bundle(b"{}".to_vec()), layer(b"b")]
        );
    }

    #[test]
    fn signature_manifests_are_read_within_their_limits() {
        let says = |e: LookupError, what: &str| e.to_string().contains(what);
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
        assert!(too_many.is_err_and(|e| says(e, "17 layers")));
        let limit = i64::try_from(cosign::MAX_SIGNATURE_BYTES).unwrap_or(i64::MAX);
        let huge = signature_manifest(&[(simple, limit + 1, None)]);
        assert!(simple_signing_layers(&huge).is_err_and(|e| says(e, "a signature layer of")));
        let negative = signature_manifest(&[(cosign::BUNDLE_MEDIA_TYPE, -1, None)]);
        assert!(bundle_layer(&negative).is_err_and(|e| says(e, "a signature layer of -1")));
        assert!(bundle_layer(b"{not json").is_err_and(|e| says(e, "no image manifest")));
    }
}
