//! The MCN job's audit (`guests audit --job mcn`, `JobKind::audit`):
//! each node's facts made as the controller makes them, derived by both
//! modules a batch at a time (one instance per batch and module, as
//! `McnGuest::derive_batch` runs them), and each decision keyed as observe
//! mode keys an MCN (`mcn::observe`). Nodes come one by one and leave with
//! their batch, so they stream from a file or a paginated list: the nodes
//! in memory are one batch's (and one page's); every MCN is kept (a node's
//! decision reads its MCN). Read from the cluster, both are trimmed as the
//! controller's watches trim them (managed fields but the operator's, a
//! Node's status but its phase).

use std::collections::HashMap;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::jiff::Timestamp;
use kube::api::Api;
use kube::{Client, ResourceExt};
use mco_mcn as logic;
use tracing::info_span;

use super::McnGuest;
use super::crd::MachineConfigNode;
use super::eval::McnPaths;
use super::guest::McnGuestExt as _;
use super::objects::{MachineConfig, MachineConfigPool, trim_node};
use super::policies;
use super::{observe, rules};
use mco_cluster::decode::Isolated;
use mco_cluster::managers::keep_operator_entries;
use mco_cluster::resources::MACHINE_CONFIGURATION;
use mco_job::audit_files::{FEATUREGATE, FileAudit, FileFlag, Files, FilesError, Use, pair};
use mco_job::feature_gates::{self, FeatureGates, Modelled};
use mco_job::manifests::Names;
use mco_job::manifests::{InputError, Reader};
use mco_registry::audit::cluster::{ReadError, dynamic, get, list, pages, readable};
use mco_registry::audit::{Audit, Keyed};
use mco_registry::{EntryName, Served};
use mco_runtime::GuestError;

/// Nodes that share one instance of each module.
pub const BATCH: usize = 100;

/// What each node's facts are made from besides the node: every pool, the
/// rendered configs, the node disruption policies and the stored MCNs by
/// node name.
pub struct Cluster {
    pub pools: Vec<MachineConfigPool>,
    pub configs: Vec<MachineConfig>,
    pub policies: logic::DisruptionPolicies,
    pub previous: HashMap<String, MachineConfigNode>,
    pub gates: FeatureGates,
}

/// `guests audit --job mcn` from files: `eval mcn`'s, with any number of
/// Nodes and stored MCNs.
pub const FROM_FILES: FileAudit = FileAudit {
    flags: FLAGS,
    audit: from_files,
};

const FLAGS: &[FileFlag] = &[
    FileFlag::new(
        "nodes",
        Use::Objects,
        "The Nodes to audit the mcn job on, any number (instead of the cluster's)",
    ),
    FileFlag::new("pools", Use::Optional, "All MachineConfigPools"),
    FileFlag::new("machineconfigs", Use::Optional, "Rendered MachineConfigs"),
    FileFlag::new(
        "previous",
        Use::Optional,
        "The stored MachineConfigNodes, any number, matched to the Nodes by name",
    ),
    FileFlag::new(
        "machineconfiguration",
        Use::Shared(Some("node disruption policies")),
        "MachineConfiguration `cluster`",
    ),
    FEATUREGATE,
];

/// The audit of the objects of `files` ([`FileAudit::audit`]).
fn from_files(
    files: &Files,
    served: &Served,
    job: &EntryName,
    limit: usize,
    gates: &Modelled,
) -> Result<Audit, FilesError> {
    let guests = pair::<McnGuest>(served, job)?;
    let paths = McnPaths {
        node: files.objects(),
        pools: files.get("pools"),
        machineconfigs: files.get("machineconfigs"),
        machineconfiguration: files.get("machineconfiguration"),
        previous: files.get("previous"),
        featuregate: files.get("featuregate"),
    };
    Ok(audit_files(&paths, guests, limit, gates)?)
}

/// The audit of the Nodes of `files.node`, any number read one at a time
/// (a JSON file is streamed, see [`Reader::each`]), each named once and
/// trimmed as the controller trims it, against the other files' objects
/// (`files.previous`: any number of stored MCNs), under `gates` (every
/// job's).
pub fn audit_files(
    files: &McnPaths,
    (active, candidate): (&McnGuest, &McnGuest),
    limit: usize,
    gates: &Modelled,
) -> Result<Audit, InputError> {
    let mut reader = Reader::default();
    let cluster = Cluster::read(&mut reader, files, gates)?;
    let mut audit = McnAudit::new(active, candidate, &cluster, limit);
    let mut names = Names::new(files.node, "Node");
    reader.each(files.node, "Node", |mut node: Node| {
        names.check(node.metadata.name.as_deref())?;
        trim_node(&mut node);
        audit.add(node);
        Ok(())
    })?;
    Ok(audit.finish())
}

/// The audit of every Node of the cluster, reading its `gates` (every
/// job's).
pub async fn on_cluster(
    client: &Client,
    (active, candidate): (&McnGuest, &McnGuest),
    limit: usize,
    gates: &Modelled,
) -> Result<Audit, ReadError> {
    let machineconfiguration = get(
        dynamic(client, None, MACHINE_CONFIGURATION),
        "cluster",
        "MachineConfiguration cluster",
    )
    .await?;
    let mut previous = HashMap::new();
    pages(
        &Api::<Isolated<MachineConfigNode>>::all(client.clone()),
        "MachineConfigNodes",
        |page| {
            previous.extend(readable(page).map(|mut mcn| {
                keep_operator_entries(mcn.managed_fields_mut());
                (mcn.name_any(), mcn)
            }))
        },
    )
    .await?;
    let cluster = Cluster {
        pools: list(client, "MachineConfigPools").await?,
        configs: list(client, "MachineConfigs").await?,
        policies: policies::of_object(machineconfiguration.as_ref()),
        previous,
        gates: feature_gates::read_cluster(client, gates)
            .await
            .map_err(ReadError::Cluster)?,
    };
    let mut audit = McnAudit::new(active, candidate, &cluster, limit);
    pages(&Api::<Node>::all(client.clone()), "Nodes", |page| {
        for mut node in page {
            keep_operator_entries(node.managed_fields_mut());
            trim_node(&mut node);
            audit.add(node);
        }
    })
    .await?;
    Ok(audit.finish())
}

impl Cluster {
    /// Reads what the Nodes of `files` share; `gates`: every job's.
    fn read(
        reader: &mut Reader,
        files: &McnPaths,
        gates: &Modelled,
    ) -> Result<Cluster, InputError> {
        let pools = reader.all(files.pools, "MachineConfigPool")?;
        let configs = reader.all(files.machineconfigs, "MachineConfig")?;
        let policies = policies::from_file(reader, files.machineconfiguration)?;
        let previous: Vec<MachineConfigNode> = reader.all(files.previous, "MachineConfigNode")?;
        let gates = feature_gates::read(reader, files.featuregate, None, gates)?;
        Ok(Cluster {
            pools,
            configs,
            policies,
            previous: previous
                .into_iter()
                .map(|mcn| (mcn.name_any(), mcn))
                .collect(),
            gates,
        })
    }

    fn facts(&self, node: &Node) -> logic::Facts {
        let pools: Vec<&MachineConfigPool> = self.pools.iter().collect();
        let configs: Vec<&MachineConfig> = self.configs.iter().collect();
        let previous = self.previous.get(&node.name_any());
        rules::facts(
            node,
            &pools,
            &configs,
            self.policies.clone(),
            previous,
            &self.gates,
        )
    }
}

/// An audit of the MCN job under way.
pub struct McnAudit<'a> {
    active: &'a McnGuest,
    candidate: &'a McnGuest,
    cluster: &'a Cluster,
    /// Stamped on changed conditions, which no key reads.
    now: Timestamp,
    batch: Vec<Node>,
    audit: Audit,
}

impl<'a> McnAudit<'a> {
    pub fn new(
        active: &'a McnGuest,
        candidate: &'a McnGuest,
        cluster: &'a Cluster,
        limit: usize,
    ) -> McnAudit<'a> {
        McnAudit {
            active,
            candidate,
            cluster,
            now: Timestamp::now(),
            batch: Vec::with_capacity(BATCH),
            audit: Audit::new(limit),
        }
    }

    /// Adds a node; a full batch is decided and compared now.
    pub fn add(&mut self, node: Node) {
        self.batch.push(node);
        if self.batch.len() >= BATCH {
            self.flush();
        }
    }

    /// The audit of every node added.
    pub fn finish(mut self) -> Audit {
        self.flush();
        self.audit
    }

    fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let nodes = std::mem::take(&mut self.batch);
        let facts: Vec<logic::Facts> = nodes.iter().map(|n| self.cluster.facts(n)).collect();
        let active = self.active.derive_batch(&facts);
        let candidate = self.candidate.derive_batch(&facts);
        for ((node, active), candidate) in nodes.iter().zip(active).zip(candidate) {
            let name = node.name_any();
            let _span = info_span!("audit", node = %name).entered();
            let previous = self.cluster.previous.get(&name);
            let keyed = |decision: Result<logic::Decision, GuestError>| -> Keyed {
                decision.map(|d| observe::decision_fields(node, d, previous, self.now))
            };
            self.audit.add(&name, keyed(active), keyed(candidate));
        }
    }
}
