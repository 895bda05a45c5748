//! Installing CRDs, and the OpenShift resources our fixtures define.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail, ensure};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{ApiResource, GroupVersionKind, Patch, PatchParams};
use kube::runtime::wait::{await_condition, conditions};
use serde_json::Value;

use crate::control_plane::{ControlPlane, FIELD_MANAGER};

/// Minimal hand-written CRDs for the OpenShift kinds the controllers use
/// (`tests/fixtures/crds/`), and upstream's generated ClusterImagePolicy CRD as it
/// ships (the host only lists those objects; their validation rules are
/// what an administrator's policy passes). The MachineConfigNode CRD is not here: it is generated from
/// the host's Rust types (`mco-host crds`) into a component of `deploy/`
/// per feature set ([`FeatureSet`]).
pub fn crds_dir() -> PathBuf {
    crate::crate_dir().join("../fixtures/crds")
}

/// The feature set whose MachineConfigNode CRD a test installs, as
/// OpenShift installs the one of the cluster's set: Default has no
/// `configImage` (feature gate ImageModeStatusReporting off),
/// TechPreviewNoUpgrade has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeatureSet {
    Default,
    TechPreviewNoUpgrade,
}

impl FeatureSet {
    /// The generated CRD in its `deploy/components/` component.
    pub fn mcn_crd_file(self) -> PathBuf {
        let component = match self {
            Self::Default => "machineconfignode-crd",
            Self::TechPreviewNoUpgrade => "machineconfignode-crd-techpreview",
        };
        crate::crate_dir()
            .join("../../deploy/components")
            .join(component)
            .join("machineconfignodes.yaml")
    }
}

/// Every document of every `*.yaml`, `*.yml` and `*.json` file in `dir`, in file
/// name order (see [`load_crd_files`]).
pub fn load_crd_dir(dir: &Path) -> Result<Vec<Value>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry
            .with_context(|| format!("cannot list {}", dir.display()))?
            .path();
        let is_manifest = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"));
        if is_manifest && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    ensure!(
        !files.is_empty(),
        "no *.yaml/*.yml/*.json files in {}",
        dir.display()
    );
    load_crd_files(&files)
}

/// Every document of `files`, each of which must be a CRD. Kept as JSON
/// values, not typed CRDs, so a field the `k8s-openapi` types do not know is
/// not silently dropped: the apiserver checks the raw documents strictly
/// instead.
pub fn load_crd_files(files: &[PathBuf]) -> Result<Vec<Value>> {
    let mut docs = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let values: Vec<Value> = serde_saphyr::from_multiple(&text)
            .with_context(|| format!("cannot parse {}", file.display()))?;
        for doc in values.into_iter().filter(|v| !v.is_null()) {
            let kind = doc.get("kind").and_then(Value::as_str);
            ensure!(
                kind == Some("CustomResourceDefinition"),
                "{}: expected only CustomResourceDefinitions, found kind {kind:?}",
                file.display()
            );
            docs.push(doc);
        }
    }
    Ok(docs)
}

impl ControlPlane {
    /// Server-side applies the CRDs (idempotent) and waits until each is
    /// Established, i.e. its resource is served. Returns the CRD names.
    pub async fn install_crds(&self, crds: &[CustomResourceDefinition]) -> Result<Vec<String>> {
        let docs = crds
            .iter()
            .map(|crd| serde_json::to_value(crd).context("cannot serialize a CRD"))
            .collect::<Result<Vec<_>>>()?;
        self.install_crd_values(docs).await
    }

    /// [`Self::install_crds`] for every CRD document in a directory (see [`load_crd_dir`]).
    pub async fn install_crd_dir(&self, dir: impl AsRef<Path>) -> Result<Vec<String>> {
        let dir = dir.as_ref();
        let docs = load_crd_dir(dir)?;
        self.install_crd_values(docs)
            .await
            .with_context(|| format!("installing the CRDs in {}", dir.display()))
    }

    /// [`Self::install_crds`] for the CRD documents of `files`.
    pub async fn install_crd_files(&self, files: &[PathBuf]) -> Result<Vec<String>> {
        let docs = load_crd_files(files)?;
        self.install_crd_values(docs)
            .await
            .with_context(|| format!("installing the CRDs in {files:?}"))
    }

    /// Installs the MachineConfigNode CRD of `set`, or replaces the one
    /// installed (as a cluster's feature set change does: fields the new
    /// one lacks are no longer served).
    pub async fn install_mcn_crd(&self, set: FeatureSet) -> Result<Vec<String>> {
        self.install_crd_files(&[set.mcn_crd_file()]).await
    }

    /// [`Self::install_crd_dir`] on this package's `tests/fixtures/crds/`.
    pub async fn install_openshift_crds(&self) -> Result<Vec<String>> {
        self.install_crd_dir(crds_dir()).await
    }

    async fn install_crd_values(&self, docs: Vec<Value>) -> Result<Vec<String>> {
        let api: Api<CustomResourceDefinition> = Api::all(self.admin_client()?);
        // Strict: an unknown or duplicate field in a fixture is a mistake to report,
        // not something to drop.
        let params = PatchParams::apply(FIELD_MANAGER)
            .force()
            .validation_strict();
        let mut names = Vec::with_capacity(docs.len());
        for doc in &docs {
            let name = doc
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .ok_or_else(|| anyhow!("a CRD has no metadata.name"))?;
            api.patch(name, &params, &Patch::Apply(doc))
                .await
                .with_context(|| format!("cannot apply CRD {name}"))?;
            names.push(name.to_owned());
        }
        for name in &names {
            wait_established(&api, name, Duration::from_secs(60)).await?;
        }
        Ok(names)
    }
}

async fn wait_established(
    api: &Api<CustomResourceDefinition>,
    name: &str,
    limit: Duration,
) -> Result<()> {
    let established = await_condition(api.clone(), name, conditions::is_crd_established());
    match tokio::time::timeout(limit, established).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(e).with_context(|| format!("waiting for CRD {name} to be Established")),
        Err(_) => {
            // NamesAccepted=False (a name clash) is the usual cause; show all conditions.
            let conds = api
                .get_opt(name)
                .await
                .ok()
                .flatten()
                .and_then(|c| c.status)
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .into_iter()
                .map(|c| {
                    format!(
                        "{}={} ({}: {})",
                        c.type_,
                        c.status,
                        c.reason.unwrap_or_default(),
                        c.message.unwrap_or_default()
                    )
                })
                .collect::<Vec<_>>();
            bail!("CRD {name} not Established after {limit:?}; conditions: {conds:?}")
        }
    }
}

/// `ApiResource`s for the kinds in `tests/fixtures/crds/`, to use with
/// `Api::<DynamicObject>::all_with` / `namespaced_with`; tests work with JSON
/// objects so they need no Rust types for OpenShift APIs.
pub mod openshift {
    use super::*;

    fn ar(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
    }

    /// Namespace of MachineSets in OpenShift.
    pub const MACHINE_API_NAMESPACE: &str = "openshift-machine-api";

    pub fn machine_config_pool() -> ApiResource {
        ar(
            "machineconfiguration.openshift.io",
            "v1",
            "MachineConfigPool",
            "machineconfigpools",
        )
    }

    pub fn machine_config() -> ApiResource {
        ar(
            "machineconfiguration.openshift.io",
            "v1",
            "MachineConfig",
            "machineconfigs",
        )
    }

    /// Namespaced (see [`MACHINE_API_NAMESPACE`]).
    pub fn machine_set() -> ApiResource {
        ar(
            "machine.openshift.io",
            "v1beta1",
            "MachineSet",
            "machinesets",
        )
    }

    /// Namespaced (see [`MACHINE_API_NAMESPACE`]); the one there is is
    /// named `cluster`.
    pub fn control_plane_machine_set() -> ApiResource {
        ar(
            "machine.openshift.io",
            "v1",
            "ControlPlaneMachineSet",
            "controlplanemachinesets",
        )
    }

    pub fn infrastructure() -> ApiResource {
        ar(
            "config.openshift.io",
            "v1",
            "Infrastructure",
            "infrastructures",
        )
    }

    pub fn cluster_version() -> ApiResource {
        ar(
            "config.openshift.io",
            "v1",
            "ClusterVersion",
            "clusterversions",
        )
    }

    /// FeatureGate `cluster`: the gates enabled and disabled per release
    /// version, which the host follows.
    pub fn feature_gate() -> ApiResource {
        ar("config.openshift.io", "v1", "FeatureGate", "featuregates")
    }

    pub fn machine_configuration() -> ApiResource {
        ar(
            "operator.openshift.io",
            "v1",
            "MachineConfiguration",
            "machineconfigurations",
        )
    }

    /// Which keys sign a registry scope's images (upstream's own CRD, with
    /// its validation rules).
    pub fn cluster_image_policy() -> ApiResource {
        ar(
            "config.openshift.io",
            "v1",
            "ClusterImagePolicy",
            "clusterimagepolicies",
        )
    }

    /// All of the above, for code that installs or checks them together.
    pub fn all() -> Vec<ApiResource> {
        vec![
            machine_config_pool(),
            machine_config(),
            machine_set(),
            control_plane_machine_set(),
            infrastructure(),
            cluster_version(),
            feature_gate(),
            machine_configuration(),
            cluster_image_policy(),
        ]
    }

    /// The CRD name (`<plural>.<group>`) of a resource.
    pub fn crd_name(ar: &ApiResource) -> String {
        format!("{}.{}", ar.plural, ar.group)
    }
}
