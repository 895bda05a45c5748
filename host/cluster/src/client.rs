//! The kube client both `run` and `status` connect with: the in-cluster
//! config or `$KUBECONFIG` by default, or the kubeconfig file given.

use std::path::Path;

use anyhow::Context as _;
use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};

pub async fn connect(kubeconfig: Option<&Path>) -> anyhow::Result<Client> {
    match kubeconfig {
        None => Client::try_default()
            .await
            .context("no in-cluster config or $KUBECONFIG"),
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let config =
                kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                    .await?;
            Ok(Client::try_from(config)?)
        }
    }
}
