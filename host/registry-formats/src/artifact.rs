//! A guest module's OCI artifact as a registry serves it: the image
//! manifest, the choice of its one module layer, and the CNCF TAG Runtime
//! config (`application/vnd.wasm.config.v0+json`) whose export list lets a
//! puller refuse a module of the wrong world before downloading it.
//!
//! Two layouts are read: the CNCF one (that config, one `application/wasm`
//! layer) and Kubewarden's (one `application/vnd.wasm.content.layer.v1+wasm`
//! layer, no such config). The manifest is read into oci-client's types,
//! the ones the host downloads blobs with. Everything here is pure, so
//! hostile manifests and configs are unit tested and fuzzed (fuzz/:
//! `artifact`); mco-fetch's oci/pull.rs fetches the bytes.

use oci_client::manifest::{OciDescriptor, OciImageManifest};
use serde::{Deserialize, Serialize};

/// The CNCF TAG Runtime config of a wasm artifact.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The CNCF TAG Runtime layer: the component itself.
pub const LAYER_MEDIA_TYPE: &str = "application/wasm";
/// The layer Kubewarden (and older wasm tooling) pushes.
pub const KUBEWARDEN_LAYER_MEDIA_TYPE: &str = "application/vnd.wasm.content.layer.v1+wasm";

/// Larger manifests or configs than this are not a guest artifact.
pub const MAX_METADATA_BYTES: usize = 1 << 20;

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

/// Why an artifact is not a guest module.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    #[error("the manifest is not an OCI image manifest: {0}")]
    NotManifest(serde_json::Error),
    #[error("a manifest of {0} bytes")]
    ManifestSize(usize),
    #[error(
        "no {} or {} layer (layers: {})",
        LAYER_MEDIA_TYPE,
        KUBEWARDEN_LAYER_MEDIA_TYPE,
        .0.join(", ")
    )]
    NoWasmLayer(Vec<String>),
    #[error("{0} layers; a guest artifact has exactly one")]
    LayerCount(usize),
    #[error("the {} config does not parse: {}", CONFIG_MEDIA_TYPE, .0)]
    Config(serde_json::Error),
    #[error("{what} claims {size} bytes")]
    Size { what: &'static str, size: i64 },
}

/// Refuses manifest bytes beyond [`MAX_METADATA_BYTES`] as they arrive,
/// before their digest is computed.
pub fn check_manifest_size(bytes: &[u8]) -> Result<(), LayoutError> {
    if bytes.len() > MAX_METADATA_BYTES {
        return Err(LayoutError::ManifestSize(bytes.len()));
    }
    Ok(())
}

/// Manifest bytes as a registry served them (or the cache kept them).
pub fn parse_manifest(bytes: &[u8]) -> Result<OciImageManifest, LayoutError> {
    serde_json::from_slice(bytes).map_err(LayoutError::NotManifest)
}

/// The one layer holding the module.
pub fn wasm_layer(manifest: &OciImageManifest) -> Result<&OciDescriptor, LayoutError> {
    let wasm: Vec<&OciDescriptor> = manifest
        .layers
        .iter()
        .filter(|l| l.media_type == LAYER_MEDIA_TYPE || l.media_type == KUBEWARDEN_LAYER_MEDIA_TYPE)
        .collect();
    match wasm.as_slice() {
        [layer] if manifest.layers.len() == 1 => Ok(layer),
        [] => Err(LayoutError::NoWasmLayer(
            manifest
                .layers
                .iter()
                .map(|l| l.media_type.clone())
                .collect(),
        )),
        _ => Err(LayoutError::LayerCount(manifest.layers.len())),
    }
}

/// Whether the manifest's config is the CNCF wasm config, the only one
/// worth downloading.
pub fn has_wasm_config(manifest: &OciImageManifest) -> bool {
    manifest.config.media_type == CONFIG_MEDIA_TYPE
}

/// Refuses a blob `descriptor` sizes beyond `limit` (or below zero)
/// before it is downloaded; `what` names it in the error.
pub fn check_size(
    descriptor: &OciDescriptor,
    what: &'static str,
    limit: usize,
) -> Result<(), LayoutError> {
    if usize::try_from(descriptor.size).map_or(true, |size| size > limit) {
        return Err(LayoutError::Size {
            what,
            size: descriptor.size,
        });
    }
    Ok(())
}

/// The most a module layer may claim: what its descriptor says, which the
/// download is then held to.
pub fn layer_limit(layer: &OciDescriptor) -> usize {
    usize::try_from(layer.size).unwrap_or(usize::MAX)
}

/// The CNCF config's bytes.
pub fn parse_config(bytes: &[u8]) -> Result<WasmConfig, LayoutError> {
    serde_json::from_slice(bytes).map_err(LayoutError::Config)
}

impl WasmConfig {
    /// What the config says the component exports instead, when it lists
    /// its exports and `export` (the interface a job needs) is not among
    /// them: `nothing` or the list. `None` when it may serve.
    pub fn lacks(&self, export: &str) -> Option<String> {
        let component = self.component.as_ref()?;
        if component.exports.iter().any(|e| same_interface(e, export)) {
            return None;
        }
        Some(if component.exports.is_empty() {
            "nothing".into()
        } else {
            component.exports.join(", ")
        })
    }
}

/// `ns:pkg/iface@1.2.3` provides `ns:pkg/iface@1.2.0`: same interface and
/// the same major version (or minor, below 1.0), as semver promises.
pub fn same_interface(found: &str, expected: &str) -> bool {
    let (found_name, found_version) = found.split_once('@').unwrap_or((found, ""));
    let (expected_name, expected_version) = expected.split_once('@').unwrap_or((expected, ""));
    found_name == expected_name
        && compatible_version(found_version) == compatible_version(expected_version)
}

fn compatible_version(version: &str) -> &str {
    let mut parts = version.splitn(3, '.');
    let major = parts.next().unwrap_or("");
    let minor_len = parts.next().map_or(0, |m| m.len() + 1);
    if major == "0" {
        &version[..(major.len() + minor_len).min(version.len())]
    } else {
        major
    }
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

    fn layer(manifest: &OciImageManifest) -> Result<&str, String> {
        wasm_layer(manifest)
            .map(|l| l.media_type.as_str())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn both_layouts_have_one_module_layer_and_nothing_else_does() {
        for media in [LAYER_MEDIA_TYPE, KUBEWARDEN_LAYER_MEDIA_TYPE] {
            let m = manifest(&[media]);
            assert_eq!(layer(&m), Ok(media));
        }
        let tar = manifest(&["application/vnd.oci.image.layer.v1.tar"]);
        assert!(layer(&tar).is_err_and(|e| e.contains("no application/wasm")));
        assert!(wasm_layer(&manifest(&[])).is_err());
        let two = manifest(&[LAYER_MEDIA_TYPE, LAYER_MEDIA_TYPE]);
        assert!(layer(&two).is_err_and(|e| e.contains("2 layers")));
        let extra = manifest(&[LAYER_MEDIA_TYPE, "text/plain"]);
        assert!(layer(&extra).is_err_and(|e| e.contains("exactly one")));
    }

    #[test]
    fn hostile_manifests_and_configs_are_refused_with_their_reason() {
        let says = |r: Result<OciImageManifest, LayoutError>, what: &str| {
            r.is_err_and(|e| e.to_string().contains(what))
        };
        assert!(says(
            parse_manifest(b"{not json"),
            "not an OCI image manifest"
        ));
        assert!(says(parse_manifest(b"[]"), "not an OCI image manifest"));
        let no_layers = br#"{"schemaVersion":2,"config":{"mediaType":"a","digest":"d","size":1}}"#;
        assert!(says(parse_manifest(no_layers), "missing field `layers`"));
        let huge = vec![b' '; MAX_METADATA_BYTES + 1];
        let too_big = check_manifest_size(&huge).map_err(|e| e.to_string());
        assert_eq!(too_big, Err("a manifest of 1048577 bytes".into()));
        assert!(check_manifest_size(&huge[1..]).is_ok());

        let mut negative = manifest(&[LAYER_MEDIA_TYPE]);
        negative.layers[0].size = -1;
        let refused = check_size(&negative.layers[0], "the module layer", usize::MAX);
        assert!(refused.is_err_and(|e| e.to_string() == "the module layer claims -1 bytes"));
        let config = &negative.config;
        assert!(check_size(config, "the config", 1).is_ok());
        assert!(check_size(config, "the config", 0).is_err());

        for bad in [&b"{}"[..], b"null", br#"{"architecture":"wasm","os":1}"#] {
            let e = parse_config(bad).map(|_| ()).map_err(|e| e.to_string());
            assert!(e.is_err_and(|e| e.starts_with("the application/vnd.wasm.config.v0+json")));
        }
    }

    #[test]
    fn a_config_listing_other_exports_is_refused_and_one_without_a_list_is_not() {
        let config = |component: &str| {
            parse_config(
                format!(r#"{{"architecture":"wasm","os":"wasip2"{component}}}"#).as_bytes(),
            )
            .unwrap_or_else(|e| panic!("{e}"))
        };
        let needed = "mco:machine-config/node-state@0.2.0";
        assert_eq!(config("").lacks(needed), None);
        let serving = config(r#","component":{"exports":["mco:machine-config/node-state@0.2.3"]}"#);
        assert_eq!(serving.lacks(needed), None);
        let other = config(r#","component":{"exports":["a:b/c@1.0.0","d:e/f"]}"#);
        assert_eq!(other.lacks(needed).as_deref(), Some("a:b/c@1.0.0, d:e/f"));
        let empty = config(r#","component":{}"#);
        assert_eq!(empty.lacks(needed).as_deref(), Some("nothing"));
        let old = config(r#","component":{"exports":["mco:machine-config/node-state@0.1.0"]}"#);
        assert!(old.lacks(needed).is_some());
    }

    #[test]
    fn interface_versions_follow_semver() {
        assert!(same_interface(
            "mco:machine-config/node-state@0.1.3",
            "mco:machine-config/node-state@0.1.0"
        ));
        assert!(!same_interface(
            "mco:machine-config/node-state@0.2.0",
            "mco:machine-config/node-state@0.1.0"
        ));
        assert!(!same_interface(
            "mco:machine-config/node-state@1.0.0",
            "mco:machine-config/node-state@0.1.0"
        ));
        // Every job's guests: a module built against 0.1 does not serve a
        // 0.2 host, and a 0.2.x one does.
        for job in ["node-state", "boot-image"] {
            let needed = format!("mco:machine-config/{job}@0.2.0");
            assert!(!same_interface(
                &format!("mco:machine-config/{job}@0.1.0"),
                &needed
            ));
            assert!(same_interface(
                &format!("mco:machine-config/{job}@0.2.1"),
                &needed
            ));
        }
        assert!(same_interface("a:b/c@2.4.0", "a:b/c@2.0.0"));
        assert!(!same_interface("a:b/d@0.1.0", "a:b/c@0.1.0"));
    }
}
