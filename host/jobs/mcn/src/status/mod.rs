//! The MachineConfigNode job's section of `mco-host status`: every pool's
//! update, the nodes in flight and the degraded nodes, from the
//! MachineConfigNodes and MachineConfigPools. This file reads them;
//! `summary` computes the section from them (pure, so the golden tests
//! need no cluster), and `render` draws it.

mod render;
pub mod summary;

use futures::FutureExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Client;
use kube::api::Api;
use kube::core::ClusterResourceScope;
use kube::runtime::watcher;
use serde::Deserialize;

use super::crd::MachineConfigNode;
use mco_cluster::decode::Isolated;
use mco_cluster::resources::MACHINE_CONFIG_POOL;
use mco_job::status_section::{
    self, Changes, Head, ReadError, SectionInputs, SectionSummary, StatusSection, Style, typed,
};
use summary::Thresholds;

/// The section, for [`Contract::status`](mco_job::jobs::Contract::status).
pub struct Section;

/// What the section is computed from.
#[derive(Debug, Clone)]
pub struct Objects {
    pub mcns: Vec<MachineConfigNode>,
    pub pools: Vec<Pool>,
    /// The job's flags of `status`.
    pub thresholds: Thresholds,
}

impl Objects {
    /// None yet, with the `thresholds` given.
    fn new(thresholds: Thresholds) -> Objects {
        Objects {
            mcns: Vec::new(),
            pools: Vec::new(),
            thresholds,
        }
    }
}

impl StatusSection for Section {
    type Flags = Thresholds;

    fn read<'a>(
        &'a self,
        client: &'a Client,
        _: &'a str,
        thresholds: Thresholds,
    ) -> futures::future::BoxFuture<'a, Result<Box<dyn SectionInputs>, ReadError>> {
        async move {
            let mut found = Objects::new(thresholds);
            found.mcns = status_section::list(
                Api::<MachineConfigNode>::all(client.clone()),
                "MachineConfigNodes",
            )
            .await?;
            let pools = status_section::list(
                Api::<Isolated<Pool>>::all(client.clone()),
                "MachineConfigPools",
            )
            .await?;
            found.pools = pools.into_iter().filter_map(|pool| pool.0.ok()).collect();
            Ok(Box::new(found) as Box<dyn SectionInputs>)
        }
        .boxed()
    }

    fn decode(
        &self,
        objects: &[serde_json::Value],
        thresholds: Thresholds,
    ) -> Result<Box<dyn SectionInputs>, ReadError> {
        let mut found = Objects::new(thresholds);
        for object in objects {
            match Head::of(object).kind.as_str() {
                "MachineConfigNode" => found.mcns.extend(typed(object)),
                "MachineConfigPool" => found.pools.extend(typed(object)),
                _ => {}
            }
        }
        Ok(Box::new(found))
    }

    fn changes(&self, client: &Client) -> Vec<Changes> {
        let config = watcher::Config::default;
        vec![
            status_section::watch(Api::<MachineConfigNode>::all(client.clone()), config()),
            status_section::watch(
                status_section::dynamic(client, None, MACHINE_CONFIG_POOL),
                config(),
            ),
        ]
    }
}

impl SectionInputs for Objects {
    fn summarize(&self, now: k8s_openapi::jiff::Timestamp) -> Box<dyn SectionSummary> {
        Box::new(summary::summarize(self, now))
    }
}

/// The section's keys of the JSON document are its fields'.
impl SectionSummary for summary::Nodes {
    fn entries(&self) -> Vec<(&'static str, &dyn erased_serde::Serialize)> {
        vec![
            ("pools", &self.pools),
            ("nodesInFlight", &self.nodes_in_flight),
            ("degradedNodes", &self.degraded_nodes),
        ]
    }

    fn render(&self, style: Style, out: &mut String) {
        render::render(self, style, out);
    }

    fn without_clock(&self) -> Box<dyn SectionSummary> {
        let mut key = self.clone();
        for pool in &mut key.pools {
            pool.eta_seconds = None;
        }
        for node in &mut key.nodes_in_flight {
            node.seconds_in_phase = 0;
        }
        Box::new(key)
    }
}

/// A MachineConfigPool as the view reads it: its target config and when
/// its rollout began (the MCN job's pool has no use for its status).
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct Pool {
    pub metadata: ObjectMeta,
    pub spec: PoolConfiguration,
    pub status: PoolStatus,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct PoolConfiguration {
    pub configuration: Option<ConfigName>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct PoolStatus {
    pub configuration: Option<ConfigName>,
    pub conditions: Vec<PoolCondition>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct ConfigName {
    pub name: Option<String>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct PoolCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub last_transition_time: Option<String>,
}

mco_cluster::typed_resource!(Pool, MACHINE_CONFIG_POOL, ClusterResourceScope);

impl Pool {
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// `spec.configuration.name` (the rendered config nodes move to), or
    /// the status's.
    pub fn target(&self) -> Option<&str> {
        fn name(configuration: &Option<ConfigName>) -> Option<&str> {
            configuration.as_ref()?.name.as_deref()
        }
        name(&self.spec.configuration).or_else(|| name(&self.status.configuration))
    }
}
