//! A guest artifact's registry bytes: any input as its image manifest
//! (size, parse, the one module layer, the blob size checks) and as its
//! CNCF wasm config (parse, the export check against each job's
//! interface). Everything must be total; a layer chosen must be the only
//! one and a module's, a size passed must be within its limit, and a
//! config let through must list no exports or the interface.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mco_registry_formats::artifact::{
    self, KUBEWARDEN_LAYER_MEDIA_TYPE, LAYER_MEDIA_TYPE, MAX_METADATA_BYTES, same_interface,
};

/// The interfaces the host's jobs need (wit/).
const EXPORTS: [&str; 2] = [
    "mco:machine-config/node-state@0.6.0",
    "mco:machine-config/boot-image@0.6.0",
];

fuzz_target!(|data: &[u8]| {
    let sized = artifact::check_manifest_size(data).is_ok();
    assert_eq!(sized, data.len() <= MAX_METADATA_BYTES);
    match artifact::parse_manifest(data) {
        Err(e) => drop(e.to_string()),
        Ok(manifest) => {
            match artifact::wasm_layer(&manifest) {
                Ok(layer) => {
                    assert_eq!(manifest.layers.len(), 1);
                    assert!(
                        [LAYER_MEDIA_TYPE, KUBEWARDEN_LAYER_MEDIA_TYPE]
                            .contains(&layer.media_type.as_str())
                    );
                    let limit = artifact::layer_limit(layer);
                    if artifact::check_size(layer, "the module layer", limit).is_ok() {
                        assert!(layer.size >= 0);
                    }
                }
                Err(e) => drop(e.to_string()),
            }
            let config = &manifest.config;
            match artifact::check_size(config, "the config", MAX_METADATA_BYTES) {
                Ok(()) => assert!((0..=MAX_METADATA_BYTES as i64).contains(&config.size)),
                Err(e) => drop(e.to_string()),
            }
            let _ = artifact::has_wasm_config(&manifest);
        }
    }
    match artifact::parse_config(data) {
        Err(e) => drop(e.to_string()),
        Ok(config) => {
            for export in EXPORTS {
                let exports = config.component.as_ref().map(|c| &c.exports);
                match (config.lacks(export), exports) {
                    (None, None) => {}
                    (None, Some(exports)) => {
                        assert!(exports.iter().any(|e| same_interface(e, export)))
                    }
                    (Some(found), Some(exports)) => {
                        assert!(!exports.iter().any(|e| same_interface(e, export)));
                        assert!(!found.is_empty());
                    }
                    (Some(found), None) => panic!("no export list, yet {export} lacks: {found}"),
                }
            }
        }
    }
});
