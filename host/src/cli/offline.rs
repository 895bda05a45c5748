//! Registry reads outside the cluster, which `eval`, `guests` and `guests
//! test` share: OCI entries pulled anonymously, signature keys and trust
//! roots from files only (pull Secrets, key ConfigMaps and
//! ClusterImagePolicies live in the cluster).

use std::sync::Arc;

use oci_client::secrets::RegistryAuth;

use super::{Failure, SandboxArgs};
use mco_fetch::image_policy::Listed;
use mco_fetch::oci::PullError;
use mco_registry::entries::{KeySource, OciSource};
use mco_registry::table::Registry;
use mco_registry::{Access, InFlight, Remote, oci_sources, pull_all, read_policy};

/// The registry's OCI modules pulled as `run` pulls them, but anonymously.
pub(super) fn pull_offline(sandbox: &SandboxArgs, registry: &Registry) -> Result<Remote, Failure> {
    if oci_sources(registry).is_empty() {
        return Ok(Remote::default());
    }
    let oci = sandbox.oci();
    let anonymous = |source: OciSource| async move {
        if let Some(secret) = &source.pull_secret {
            return Err(PullError::Secret {
                reference: source.reference.clone(),
                secret: secret.clone(),
                detail: "pull Secrets are read in the cluster (mco-host run)".into(),
            });
        }
        Ok(Access {
            auth: RegistryAuth::Anonymous,
            policy: read_policy(&source, in_cluster_only, &no_policies()).await?,
        })
    };
    let mut in_flight = InFlight::default();
    let pulls = runtime()?.block_on(pull_all(&oci, registry, anonymous, &mut in_flight, None));
    Ok(Remote {
        pulls: pulls
            .into_iter()
            .filter_map(|(key, pulled)| Some((key, pulled?.map_err(Arc::new))))
            .collect(),
        ..Remote::default()
    })
}

/// The reader of ConfigMap and Secret keys outside the cluster.
pub(super) async fn in_cluster_only(key: KeySource) -> Result<Vec<u8>, String> {
    Err(format!(
        "{key}: ConfigMap and Secret keys are read in the cluster (mco-host run); give a key file"
    ))
}

/// The ClusterImagePolicies outside the cluster: none can be read.
pub(super) fn no_policies() -> Listed {
    Err("ClusterImagePolicies are read in the cluster (mco-host run)".into())
}

/// A runtime for one command's registry calls.
pub(super) fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Failure::Runtime)
}
