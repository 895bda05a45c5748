//! The offline `eval` step: objects read from files, one decision, the
//! JSON the eval contract promises.

use std::collections::BTreeSet;
use std::path::Path;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::jiff::Timestamp;
use mco_mcn as logic;
use serde_json::{Value, json};

use crate::bootimage::{self, EvalInputs};
use crate::crd;
use crate::inputs::{InputError, Reader};
use crate::mcn::{self, MachineConfig, MachineConfigPool};

/// Everything `eval mcn` reads, parsed.
pub struct McnInputs {
    pub node: Node,
    pub pools: Vec<MachineConfigPool>,
    pub configs: Vec<MachineConfig>,
    pub previous: Option<crd::MachineConfigNode>,
}

/// Paths of the `eval mcn` inputs (`-` is standard input).
#[derive(Default)]
pub struct McnPaths<'a> {
    pub node: &'a str,
    pub pools: Option<&'a str>,
    pub machineconfigs: Option<&'a str>,
    pub previous: Option<&'a str>,
}

/// Every object in an optional file; none when it was not given.
fn all<T: serde::de::DeserializeOwned>(
    reader: &mut Reader,
    path: Option<&str>,
    kind: &str,
) -> Result<Vec<T>, InputError> {
    match path {
        Some(path) => reader.objects(path, kind),
        None => Ok(Vec::new()),
    }
}

impl McnInputs {
    /// Reads a case directory holding files named after the flags
    /// (`node.yaml`, optional `pools.yaml`, `machineconfigs.yaml`,
    /// `previous.yaml`), as the golden cases are laid out.
    pub fn read_case(dir: &Path) -> Result<Self, InputError> {
        let [node, pools, machineconfigs, previous] =
            ["node", "pools", "machineconfigs", "previous"]
                .map(|flag| case_file(dir, &format!("{flag}.yaml")));
        McnInputs::read(&McnPaths {
            node: node.as_deref().unwrap_or("node.yaml"),
            pools: pools.as_deref(),
            machineconfigs: machineconfigs.as_deref(),
            previous: previous.as_deref(),
        })
    }

    pub fn read(paths: &McnPaths) -> Result<Self, InputError> {
        let mut reader = Reader::default();
        let pools = all(&mut reader, paths.pools, "MachineConfigPool")?;
        let configs = all(&mut reader, paths.machineconfigs, "MachineConfig")?;
        let node = reader.object(paths.node, "Node")?;
        let previous = match paths.previous {
            Some(path) => Some(reader.object(path, "MachineConfigNode")?),
            None => None,
        };
        Ok(McnInputs {
            node,
            pools,
            configs,
            previous,
        })
    }

    pub fn facts(&self) -> logic::Facts {
        mcn::facts(
            &self.node,
            &self.pools,
            &self.configs,
            self.previous.as_ref(),
        )
    }

    /// The eval output for a validated decision; changed conditions are
    /// stamped with `now`.
    pub fn output(&self, decision: logic::Decision, now: Timestamp) -> Value {
        match decision {
            logic::Decision::Apply(result) => {
                let object = mcn::to_object(&self.node, result, self.previous.as_ref(), now);
                json!({"action": "apply", "machineConfigNode": object})
            }
            logic::Decision::Skip(reason) => json!({"action": "skip", "reason": reason}),
            logic::Decision::Error(message) => json!({"action": "error", "message": message}),
        }
    }
}

/// Everything `eval bootimage` reads, parsed.
pub struct BootImageInputs {
    pub machineset: Value,
    pub configmap: Value,
    pub infrastructure: Value,
    pub clusterversion: Option<Value>,
    pub machineconfiguration: Option<Value>,
    pub user_data_secret: Option<Value>,
    pub known_images: BTreeSet<String>,
}

/// Paths of the `eval bootimage` inputs (`-` is standard input).
#[derive(Default)]
pub struct BootImagePaths<'a> {
    pub machineset: &'a str,
    pub configmap: &'a str,
    pub infrastructure: &'a str,
    pub clusterversion: Option<&'a str>,
    pub machineconfiguration: Option<&'a str>,
    pub user_data_secret: Option<&'a str>,
    pub known_images: Option<&'a str>,
}

impl BootImageInputs {
    /// Reads a case directory holding files named after the flags
    /// (`machineset.yaml`, `configmap.yaml`, `infrastructure.yaml`, optional
    /// `clusterversion.yaml`, `machineconfiguration.yaml`,
    /// `user-data-secret.yaml`, `known-images.txt`).
    pub fn read_case(dir: &Path) -> Result<Self, InputError> {
        let [
            machineset,
            configmap,
            infrastructure,
            clusterversion,
            machineconfiguration,
            secret,
            known,
        ] = [
            "machineset.yaml",
            "configmap.yaml",
            "infrastructure.yaml",
            "clusterversion.yaml",
            "machineconfiguration.yaml",
            "user-data-secret.yaml",
            "known-images.txt",
        ]
        .map(|file| case_file(dir, file));
        BootImageInputs::read(&BootImagePaths {
            machineset: machineset.as_deref().unwrap_or("machineset.yaml"),
            configmap: configmap.as_deref().unwrap_or("configmap.yaml"),
            infrastructure: infrastructure.as_deref().unwrap_or("infrastructure.yaml"),
            clusterversion: clusterversion.as_deref(),
            machineconfiguration: machineconfiguration.as_deref(),
            user_data_secret: secret.as_deref(),
            known_images: known.as_deref(),
        })
    }

    pub fn read(paths: &BootImagePaths) -> Result<Self, InputError> {
        let mut reader = Reader::default();
        let mut optional =
            |path: Option<&str>, kind: &str| path.map(|p| reader.object(p, kind)).transpose();
        let clusterversion = optional(paths.clusterversion, "ClusterVersion")?;
        let machineconfiguration = optional(paths.machineconfiguration, "MachineConfiguration")?;
        let user_data_secret = optional(paths.user_data_secret, "Secret")?;
        let known_images = match paths.known_images {
            Some(path) => known_images(path, &reader.text(path)?)?,
            None => BTreeSet::new(),
        };
        Ok(BootImageInputs {
            machineset: reader.object(paths.machineset, "MachineSet")?,
            configmap: reader.object(paths.configmap, "ConfigMap")?,
            infrastructure: reader.object(paths.infrastructure, "Infrastructure")?,
            clusterversion,
            machineconfiguration,
            user_data_secret,
            known_images,
        })
    }

    /// The host rules' view; `control_plane_arch` is a stream arch name.
    pub fn eval_inputs<'a>(&'a self, control_plane_arch: &'a str) -> EvalInputs<'a> {
        EvalInputs {
            machineset: &self.machineset,
            configmap: &self.configmap,
            infrastructure: &self.infrastructure,
            clusterversion: self.clusterversion.as_ref(),
            machineconfiguration: self.machineconfiguration.as_ref(),
            user_data_secret: self.user_data_secret.as_ref(),
            known_images: &self.known_images,
            control_plane_arch,
        }
    }

    /// The ConfigMap's `data.stream` text.
    pub fn stream(&self) -> Result<Option<&str>, mco_bootimage::InputError> {
        bootimage::stream_from_configmap(&self.configmap)
    }
}

/// `dir/file` when it exists. A missing required file is reported by the
/// reader under its plain name.
fn case_file(dir: &Path, file: &str) -> Option<String> {
    let path = dir.join(file);
    path.exists().then(|| path.display().to_string())
}

/// A known-images file: a ConfigMap whose data values list images, or
/// plain text with one image per line.
fn known_images(path: &str, text: &str) -> Result<BTreeSet<String>, InputError> {
    match serde_saphyr::from_str::<Value>(text) {
        Ok(object) if object.get("kind").and_then(Value::as_str) == Some("ConfigMap") => {
            bootimage::known_images_from_configmap(&object).map_err(|e| InputError::Malformed {
                path: path.into(),
                kind: "ConfigMap".into(),
                name: "known images".into(),
                detail: e.to_string(),
            })
        }
        _ => Ok(bootimage::known_images_from_text(text)),
    }
}
