//! Which guest module serves which job. Platform teams swap a module by
//! pointing the registry at it; the host is not rebuilt.
//!
//! ```yaml
//! mcn: mcn.wasm                  # paths are relative to this file
//! bootImage:
//!   GCP: bootimage-gcp.wasm
//!   AWS: /opt/guests/my-aws.wasm
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Platforms the project ships a boot image guest for, by Infrastructure
/// `status.platformStatus.type`.
const SHIPPED_PLATFORMS: [(&str, &str); 3] = [
    ("GCP", "bootimage-gcp.wasm"),
    ("AWS", "bootimage-aws.wasm"),
    ("Azure", "bootimage-azure.wasm"),
];

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Registry {
    /// The node-state (MachineConfigNode) guest.
    #[serde(default)]
    pub mcn: Option<PathBuf>,
    /// Boot image guest by platform type. A platform without an entry gets
    /// `noop` decisions.
    #[serde(default)]
    pub boot_image: BTreeMap<String, PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("registry {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("registry {path}: {detail}")]
    Parse { path: String, detail: String },
}

impl Registry {
    /// The guests installed beside the host.
    pub fn installed(dir: &Path) -> Registry {
        Registry {
            mcn: Some(dir.join("mcn.wasm")),
            boot_image: SHIPPED_PLATFORMS
                .iter()
                .map(|(platform, file)| (platform.to_string(), dir.join(file)))
                .collect(),
        }
    }

    pub fn from_file(path: &Path) -> Result<Registry, RegistryError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| RegistryError::Read {
            path: shown.clone(),
            source,
        })?;
        let mut registry: Registry =
            serde_saphyr::from_str(&text).map_err(|e| RegistryError::Parse {
                path: shown,
                detail: e.to_string(),
            })?;
        let base = path.parent().unwrap_or(Path::new("."));
        registry.mcn = registry.mcn.map(|p| base.join(p));
        for module in registry.boot_image.values_mut() {
            *module = base.join(&*module);
        }
        Ok(registry)
    }

    pub fn boot_image(&self, platform: &str) -> Option<&Path> {
        self.boot_image.get(platform).map(PathBuf::as_path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_follow_the_registry_file() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("registry.yaml");
        std::fs::write(
            &file,
            "bootImage:\n  GCP: custom/gcp.wasm\n  AWS: /abs/aws.wasm\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let registry = Registry::from_file(&file).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            registry.boot_image("GCP"),
            Some(dir.path().join("custom/gcp.wasm").as_path())
        );
        assert_eq!(registry.boot_image("AWS"), Some(Path::new("/abs/aws.wasm")));
        assert_eq!(registry.boot_image("Azure"), None);
        assert_eq!(registry.mcn, None);
    }

    #[test]
    fn unknown_fields_and_garbage_are_refused() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("registry.yaml");
        std::fs::write(&file, "bootimage:\n  GCP: x.wasm\n").unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            Registry::from_file(&file),
            Err(RegistryError::Parse { .. })
        ));
        assert!(matches!(
            Registry::from_file(&dir.path().join("missing.yaml")),
            Err(RegistryError::Read { .. })
        ));
    }

    #[test]
    fn the_installed_registry_names_every_shipped_platform() {
        let registry = Registry::installed(Path::new("/g"));
        assert_eq!(
            registry.boot_image("Azure"),
            Some(Path::new("/g/bootimage-azure.wasm"))
        );
        assert_eq!(registry.mcn.as_deref(), Some(Path::new("/g/mcn.wasm")));
    }
}
