//! A registry entry's module bytes, from a file or a ConfigMap's
//! `binaryData`.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;

use super::Job;
use super::registry::{Entry, Module, Registry, Source};
use super::set::EntryKey;
use crate::runtime::digest;

/// One entry with its modules' bytes in hand.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub entry: Entry,
    pub bytes: Arc<Vec<u8>>,
    pub candidate: Option<Arc<Vec<u8>>>,
}

impl Fetched {
    pub fn key(&self) -> EntryKey {
        EntryKey::new(
            self.entry.clone(),
            digest(&self.bytes),
            self.candidate.as_deref().map(|b| digest(b)),
        )
    }
}

/// Why a module's bytes could not be had.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("could not read guest module {path}: {source}")]
    File {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("guest module {module}: {detail}")]
    ConfigMap { module: Source, detail: String },
}

/// The ConfigMaps a registry's modules come from, read once per pass;
/// `Err` holds why one could not be read.
pub type ConfigMaps = BTreeMap<String, Result<ConfigMap, String>>;

/// The ConfigMaps that `registry`'s modules name.
pub fn configmap_names(registry: &Registry) -> Vec<String> {
    let mut names: Vec<String> = registry
        .entries()
        .into_iter()
        .flat_map(|(_, e)| std::iter::once(&e.module).chain(e.candidate.as_ref()))
        .filter_map(|m| match &m.source {
            Source::ConfigMap { name, .. } => Some(name.clone()),
            Source::Path(_) => None,
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

fn read_module(module: &Module, configmaps: &ConfigMaps) -> Result<Arc<Vec<u8>>, FetchError> {
    match &module.source {
        Source::Path(path) => {
            std::fs::read(path)
                .map(Arc::new)
                .map_err(|source| FetchError::File {
                    path: path.display().to_string(),
                    source,
                })
        }
        Source::ConfigMap { name, key } => {
            let fail = |detail: String| FetchError::ConfigMap {
                module: module.source.clone(),
                detail,
            };
            let cm = match configmaps.get(name) {
                Some(Ok(cm)) => cm,
                Some(Err(err)) => return Err(fail(err.clone())),
                None => {
                    return Err(fail(
                        "ConfigMap sources are only read in the cluster (mco-host run)".into(),
                    ));
                }
            };
            if let Some(bytes) = cm.binary_data.as_ref().and_then(|d| d.get(key)) {
                return Ok(Arc::new(bytes.0.clone()));
            }
            let in_data = cm.data.as_ref().is_some_and(|d| d.contains_key(key));
            Err(fail(if in_data {
                format!(
                    "key {key} is in data, not binaryData; a module is binary (kubectl create configmap --from-file puts it in binaryData)"
                )
            } else {
                format!("the ConfigMap has no binaryData key {key}")
            }))
        }
    }
}

/// Reads an entry's module and candidate.
pub fn fetch(entry: &Entry, configmaps: &ConfigMaps) -> Result<Fetched, FetchError> {
    Ok(Fetched {
        entry: entry.clone(),
        bytes: read_module(&entry.module, configmaps)?,
        candidate: entry
            .candidate
            .as_ref()
            .map(|c| read_module(c, configmaps))
            .transpose()?,
    })
}

/// Every entry of a registry, fetched.
pub fn fetch_all(
    registry: &Registry,
    configmaps: &ConfigMaps,
) -> BTreeMap<Job, Result<Fetched, FetchError>> {
    let mut jobs = BTreeMap::new();
    if let Some(entry) = &registry.mcn {
        jobs.insert(Job::Mcn, fetch(entry, configmaps));
    }
    for (platform, entry) in &registry.boot_image {
        jobs.insert(Job::BootImage(platform.clone()), fetch(entry, configmaps));
    }
    jobs
}
