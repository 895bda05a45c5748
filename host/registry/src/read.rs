//! What the host reads of the cluster for its registry, each poll: the
//! MachineConfigGuests or the registry ConfigMap, the ConfigMaps modules
//! come from, and for `oci:` modules their pull credentials (the pull
//! Secret, or the ServiceAccount's `imagePullSecrets`) and verify keys
//! (ConfigMaps, Secrets, and the ClusterImagePolicies, listed when an
//! entry asks for them).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use kube::api::{DynamicObject, ListParams};
use kube::{Api, Client, ResourceExt};
use oci_client::secrets::RegistryAuth;

use super::crd::{self, MachineConfigGuest};
use super::entries::{KeySource, OciSource};
use super::fetch::{self, Access, ConfigMapError, ConfigMaps, InFlight, Remote};
use super::job::Jobs;
use super::set::read_local;
use super::table::{CONFIGMAP_KEY, Location, Registry, RegistryError};
use crate::metrics::Metrics;
use mco_cluster::resources::CLUSTER_IMAGE_POLICY;
use mco_fetch::image_policy::{ImagePolicy, Listed};
use mco_fetch::oci::{
    CredentialsError, DockerConfig, Oci, PullError, auth_for, parse_reference, registry_auth,
    target,
};
use mco_registry_formats::cosign;

/// The host's view of the cluster objects its registry is made of.
pub(super) struct Reader {
    configmaps: Api<ConfigMap>,
    /// Credentials of `oci:` modules.
    identity: PullIdentity,
    /// The registry of `Location::Crd`, and where its status goes.
    pub(super) guest_objects: Api<MachineConfigGuest>,
    /// Keys for `verify.clusterImagePolicies`.
    image_policies: Api<DynamicObject>,
    jobs: &'static Jobs,
}

impl Reader {
    /// Reads the host's `namespace` as its ServiceAccount `service_account`.
    pub(super) fn new(
        client: Client,
        namespace: &str,
        service_account: Option<String>,
        jobs: &'static Jobs,
    ) -> Reader {
        Reader {
            configmaps: Api::namespaced(client.clone(), namespace),
            identity: PullIdentity {
                secrets: Api::namespaced(client.clone(), namespace),
                service_accounts: Api::namespaced(client.clone(), namespace),
                service_account,
            },
            guest_objects: Api::all(client.clone()),
            image_policies: Api::all_with(client, &CLUSTER_IMAGE_POLICY.api_resource()),
            jobs,
        }
    }

    /// The MachineConfigGuests of a `Location::Crd` registry (none for the
    /// others): listed once per poll, read as the registry and given their
    /// status from the same list.
    pub(super) async fn objects(
        &self,
        location: &Location,
    ) -> Result<Vec<MachineConfigGuest>, RegistryError> {
        match location {
            Location::Crd { .. } => crd::list(&self.guest_objects).await,
            _ => Ok(Vec::new()),
        }
    }

    /// Reads the registry (from `objects` for `Location::Crd`); for a
    /// ConfigMap also returns the object, which Events are about.
    pub(super) async fn registry(
        &self,
        location: &Location,
        objects: &[MachineConfigGuest],
    ) -> Result<(Registry, Option<ConfigMap>), RegistryError> {
        if let Location::Crd { guest_dir } = location {
            return Ok((crd::registry(objects, guest_dir, self.jobs)?, None));
        }
        let Location::ConfigMap { name, guest_dir } = location else {
            let (local, jobs) = (location.clone(), self.jobs);
            return tokio::task::spawn_blocking(move || read_local(&local, jobs))
                .await
                .map_err(|e| RegistryError::Parse {
                    path: location.to_string(),
                    detail: e.to_string(),
                })?
                .map(|r| (r, None));
        };
        let shown = location.to_string();
        let cm = self
            .configmaps
            .get(name)
            .await
            .map_err(|e| RegistryError::Parse {
                path: shown.clone(),
                detail: format!("cannot read the ConfigMap: {e}"),
            })?;
        let text = cm
            .data
            .as_ref()
            .and_then(|d| d.get(CONFIGMAP_KEY))
            .ok_or_else(|| RegistryError::Parse {
                path: shown.clone(),
                detail: format!("the ConfigMap has no data key {CONFIGMAP_KEY}"),
            })?;
        let registry = Registry::parse(text, &shown, guest_dir, self.jobs)?;
        Ok((registry, Some(cm)))
    }

    /// The ClusterImagePolicies, listed once per poll while an `oci:`
    /// module's `verify` selects them (none is listed otherwise, so
    /// clusters without the kind never need it). Each object is decoded on
    /// its own: one of another shape is its own error.
    async fn image_policies(&self, registry: &Registry) -> Listed {
        let wanted = fetch::oci_sources(registry).iter().any(|(_, source)| {
            source
                .verify
                .as_ref()
                .is_some_and(|v| v.cluster_image_policies.is_some())
        });
        if !wanted {
            return Ok(Vec::new());
        }
        let listed = self
            .image_policies
            .list(&ListParams::default())
            .await
            .map_err(|e| format!("cannot list ClusterImagePolicies: {e}"))?;
        Ok(listed
            .items
            .iter()
            .map(|object| {
                let spec = object.data.get("spec").unwrap_or(&serde_json::Value::Null);
                ImagePolicy::decode(&object.name_any(), spec)
            })
            .collect())
    }

    async fn configmaps(&self, registry: &Registry) -> ConfigMaps {
        let mut read = BTreeMap::new();
        for name in fetch::configmap_names(registry) {
            let cm = self
                .configmaps
                .get(&name)
                .await
                .map_err(|source| ConfigMapError {
                    name: name.clone(),
                    source,
                });
            read.insert(name, cm);
        }
        read
    }

    /// Reads the ConfigMaps and pulls the OCI modules `registry` names,
    /// counting each pull that reached a registry in
    /// `mco_guest_fetches_total`. A pull served whole from the digest cache
    /// is not counted: polls repeat it every `--registry-poll`. With
    /// `wait`, pulls still going then are left in `in_flight` (see
    /// [`fetch::pull_all`]).
    pub(super) async fn remote(
        &self,
        oci: &Oci,
        registry: &Registry,
        metrics: &Metrics,
        in_flight: &mut InFlight,
        wait: Option<Duration>,
    ) -> Remote {
        let policies = self.image_policies(registry).await;
        let find_access = |source| {
            access(
                self.configmaps.clone(),
                self.identity.clone(),
                source,
                &policies,
            )
        };
        let round = fetch::pull_all(oci, registry, find_access, in_flight, wait).await;
        let mut pulling = BTreeSet::new();
        let pulls = round
            .into_iter()
            .filter_map(|(key, pulled)| match pulled {
                Some(pulled) => Some((key, pulled)),
                None => {
                    pulling.insert(key);
                    None
                }
            })
            .map(|((job, source), pulled)| {
                let result = match &pulled {
                    Ok(p) if p.cached => None,
                    Ok(p) => {
                        tracing::info!(
                            entry = %job,
                            reference = %source.reference,
                            digest = %p.manifest_digest,
                            "pulled a guest module"
                        );
                        Some("success")
                    }
                    Err(err) => Some(err.kind()),
                };
                if let Some(result) = result {
                    crate::metrics::count(&metrics.guest_fetches, &job.to_string(), result);
                }
                ((job, source), pulled.map_err(Arc::new))
            })
            .collect();
        Remote {
            configmaps: self.configmaps(registry).await,
            pulls,
            pulling,
        }
    }
}

/// The credentials and signature policy of an `oci:` module.
async fn access(
    configmaps: Api<ConfigMap>,
    identity: PullIdentity,
    source: OciSource,
    policies: &Listed,
) -> Result<Access, PullError> {
    let secrets = identity.secrets.clone();
    let policy = fetch::read_policy(
        &source,
        |key| read_key(configmaps.clone(), secrets.clone(), key),
        policies,
    )
    .await?;
    Ok(Access {
        auth: pull_auth(identity, source).await?,
        policy,
    })
}

/// Why a verify key could not be read.
#[derive(Debug, thiserror::Error)]
enum KeyError {
    #[error("cannot read the ConfigMap: {0}")]
    ConfigMap(#[source] kube::Error),
    #[error("the ConfigMap has no key {0}")]
    NoConfigMapKey(String),
    #[error("cannot read the Secret: {0}")]
    Secret(#[source] kube::Error),
    #[error("the Secret has no key {0}")]
    NoSecretKey(String),
    /// The key file's own message, which names it.
    #[error("{0}")]
    File(String),
}

/// A verify key from a ConfigMap (`data` or `binaryData`) or a Secret in
/// the host's namespace.
async fn read_key(
    configmaps: Api<ConfigMap>,
    secrets: Api<Secret>,
    key: KeySource,
) -> Result<Vec<u8>, KeyError> {
    match key {
        KeySource::ConfigMap { name, key } => {
            let cm = configmaps.get(&name).await.map_err(KeyError::ConfigMap)?;
            cm.data
                .and_then(|d| d.get(&key).map(|text| text.clone().into_bytes()))
                .or_else(|| {
                    cm.binary_data
                        .and_then(|d| d.get(&key).map(|b| b.0.clone()))
                })
                .ok_or(KeyError::NoConfigMapKey(key))
        }
        KeySource::Secret { name, key } => {
            let secret = secrets.get(&name).await.map_err(KeyError::Secret)?;
            secret
                .data
                .and_then(|d| d.get(&key).map(|b| b.0.clone()))
                .ok_or(KeyError::NoSecretKey(key))
        }
        KeySource::File(path) => {
            cosign::read_key_file(&path).map_err(|e| KeyError::File(e.to_string()))
        }
    }
}

/// Who the host pulls as: the Secrets of its namespace, and its
/// ServiceAccount, whose `imagePullSecrets` serve entries without a
/// `pullSecret` as they serve a Pod's images.
#[derive(Clone)]
struct PullIdentity {
    secrets: Api<Secret>,
    service_accounts: Api<ServiceAccount>,
    service_account: Option<String>,
}

/// The credentials of an `oci:` module: the entry its pull Secret holds
/// for its repository; else the most specific entry for it across the
/// ServiceAccount's `imagePullSecrets` (the first listed on a tie), as the
/// kubelet merges them into one keyring; else anonymous.
async fn pull_auth(identity: PullIdentity, source: OciSource) -> Result<RegistryAuth, PullError> {
    let reference = parse_reference(&source.reference).map_err(|detail| PullError::Reference {
        reference: source.reference.clone(),
        detail,
    })?;
    let target = target(&reference);
    let refused = |secret: String, detail: String| PullError::Secret {
        reference: source.reference.clone(),
        secret,
        detail,
    };
    if let Some(name) = &source.pull_secret {
        let config = read_config(&identity.secrets, name)
            .await
            .map_err(|e| refused(name.clone(), e.to_string()))?;
        return auth_for(&config, &target).map_err(|e| refused(name.clone(), e.to_string()));
    }
    let Some(account) = &identity.service_account else {
        return Ok(RegistryAuth::Anonymous);
    };
    let sa = identity.service_accounts.get(account).await.map_err(|e| {
        refused(
            format!("the imagePullSecrets of serviceaccount/{account}"),
            format!("cannot read the ServiceAccount: {e}"),
        )
    })?;
    let mut configs = Vec::new();
    for name in sa
        .image_pull_secrets
        .iter()
        .flatten()
        .map(|r| r.name.as_str())
    {
        match read_config(&identity.secrets, name).await {
            Ok(config) => configs.push((name, config)),
            // As the kubelet does: a listed Secret that is missing or
            // broken is passed over.
            Err(why) => tracing::debug!(secret = name, %why, "imagePullSecret not used"),
        }
    }
    let best = DockerConfig::lookup_across(
        configs.iter().map(|(name, config)| (*name, config)),
        &target,
    );
    match best {
        Some((name, chosen)) => chosen
            .credentials()
            .map(registry_auth)
            .map_err(|e| refused(name.to_string(), e.to_string())),
        None => Ok(RegistryAuth::Anonymous),
    }
}

/// Why a pull Secret is no Docker config.
#[derive(Debug, thiserror::Error)]
enum SecretError {
    #[error("cannot read it: {0}")]
    Read(#[source] kube::Error),
    #[error("its type is not {DOCKER_CONFIG_SECRET}")]
    Type,
    #[error("it has no {DOCKER_CONFIG_KEY}")]
    NoConfig,
    #[error(transparent)]
    Config(#[from] CredentialsError),
}

/// The Docker config of a `kubernetes.io/dockerconfigjson` Secret.
async fn read_config(secrets: &Api<Secret>, name: &str) -> Result<DockerConfig, SecretError> {
    let secret = secrets.get(name).await.map_err(SecretError::Read)?;
    config_in(&secret)
}

fn config_in(secret: &Secret) -> Result<DockerConfig, SecretError> {
    if secret.type_.as_deref() != Some(DOCKER_CONFIG_SECRET) {
        return Err(SecretError::Type);
    }
    let config = secret
        .data
        .as_ref()
        .and_then(|d| d.get(DOCKER_CONFIG_KEY))
        .ok_or(SecretError::NoConfig)?;
    Ok(DockerConfig::parse(&config.0)?)
}

const DOCKER_CONFIG_SECRET: &str = "kubernetes.io/dockerconfigjson";
const DOCKER_CONFIG_KEY: &str = ".dockerconfigjson";

#[cfg(test)]
mod tests {
    use k8s_openapi::ByteString;

    use super::*;

    fn secret(type_: &str, key: &str, config: &str) -> Secret {
        Secret {
            type_: Some(type_.into()),
            data: Some([(key.to_string(), ByteString(config.as_bytes().to_vec()))].into()),
            ..Secret::default()
        }
    }

    /// What `secret` gives for `image`: the user, or why not.
    fn user(secret: &Secret, image: &str) -> Result<String, String> {
        let target = target(&parse_reference(image).map_err(|e| e.to_string())?);
        let config = config_in(secret).map_err(|e| e.to_string())?;
        match config.lookup(&target).map(|chosen| chosen.credentials()) {
            Some(Ok(credentials)) => Ok(credentials.user),
            Some(Err(e)) => Err(e.to_string()),
            None => Err(format!("nothing for {target}")),
        }
    }

    #[test]
    fn only_a_dockerconfigjson_secret_is_a_pull_secret() {
        let config = r#"{"auths": {"quay.io": {"username": "u", "password": "p"}}}"#;
        let good = secret(DOCKER_CONFIG_SECRET, DOCKER_CONFIG_KEY, config);
        assert_eq!(user(&good, "quay.io/team/m:1"), Ok("u".to_string()));
        assert_eq!(
            user(&good, "ghcr.io/team/m:1"),
            Err("nothing for ghcr.io/team/m".to_string())
        );
        let cases = [
            (
                secret("Opaque", DOCKER_CONFIG_KEY, config),
                "its type is not kubernetes.io/dockerconfigjson",
            ),
            (
                secret(DOCKER_CONFIG_SECRET, "config.json", config),
                "it has no .dockerconfigjson",
            ),
            (
                secret(DOCKER_CONFIG_SECRET, DOCKER_CONFIG_KEY, "{not json"),
                ".dockerconfigjson is not JSON (line 1, column 2)",
            ),
        ];
        for (bad, why) in cases {
            assert!(
                user(&bad, "quay.io/team/m:1").is_err_and(|e| e.starts_with(why)),
                "{why}"
            );
        }
    }
}
