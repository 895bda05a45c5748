//! Pushing a guest, or the WIT package, in the CNCF TAG Runtime layout,
//! for `mco-host guests push` and `guests wit --push`.

use std::collections::BTreeMap;

use mco_registry_formats::artifact::{CONFIG_MEDIA_TYPE, LAYER_MEDIA_TYPE};
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest};
use oci_client::secrets::RegistryAuth;

use super::{Oci, PullError, WasmConfig, oci_digest, parse_reference};

/// The OCI annotation naming a layer's file.
const TITLE_ANNOTATION: &str = "org.opencontainers.image.title";
/// The config's `created`: a fixed time, as reproducible image builds use,
/// so the same bytes always get the same manifest digest. wasm-pkg-tools
/// (`oci-wasm`'s `WasmConfig`) refuses a config without it, so without it
/// `wkg get` could not fetch what `guests push` publishes.
pub const CREATED: &str = "1970-01-01T00:00:00Z";
/// The OCI annotation wkg puts on a package's manifest: its version.
pub const VERSION_ANNOTATION: &str = "org.opencontainers.image.version";

impl Oci {
    /// Pushes `bytes` in the CNCF layout with `config`; returns the
    /// manifest digest. `title` names the layer's file, which generic
    /// clients (`oras pull`) need to write it out; `annotations` go on the
    /// manifest (none: no `annotations` field).
    pub async fn push(
        &self,
        reference_text: &str,
        bytes: Vec<u8>,
        mut config: WasmConfig,
        title: &str,
        annotations: BTreeMap<String, String>,
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
        let layer_digest = oci_digest(&bytes);
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
                oci_digest(&config_bytes),
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
            annotations: (!annotations.is_empty()).then_some(annotations),
        };
        let manifest_bytes = serde_json::to_vec(&manifest).map_err(|e| fail(e.to_string()))?;
        let client = self.client(&reference, auth).await;
        client
            .push_blob(&reference, bytes, &layer_digest)
            .await
            .map_err(|e| fail(format!("the module layer: {e}")))?;
        client
            .push_blob(&reference, config_bytes, &manifest.config.digest)
            .await
            .map_err(|e| fail(format!("the config: {e}")))?;
        let manifest_digest = oci_digest(&manifest_bytes);
        client
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
