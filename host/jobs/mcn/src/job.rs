//! How the MachineConfigNode job describes itself to the guest registry:
//! one entry (`mcn`) the host cannot serve without, the module installed
//! beside the host, and the smoke evaluation a new module must pass before
//! it serves.

use std::collections::BTreeMap;

use mco_mcn as logic;

use super::guest::McnGuestExt as _;
use super::guest::{McnGuest, NODE_STATE_INTERFACE};
use mco_registry::audit::{self, cluster::ReadError};
use mco_registry::canary::CanaryField;
use mco_registry::job::Modelled;
use mco_registry::{Audited, EntryName, Fetched, GuestSet, JobKind, Served, Slot};
use mco_runtime::{GuestError, LoadError, Runtime};

/// Why the host cannot serve without this job's entry.
pub const MISSING: &str = "the registry names no MachineConfigNode (mcn) guest";

/// `spec.rollout.canary` of the mcn job.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Canary {
    /// The mcn job: the nodes of these MachineConfigPools.
    #[schemars(length(min = 1, max = 64))]
    pub pools: Vec<String>,
}

/// The MachineConfigNode job, as the composition root registers it.
pub struct Mcn;

impl JobKind for Mcn {
    fn name(&self) -> &'static str {
        "mcn"
    }

    fn serves(&self) -> &'static str {
        "MachineConfigNode derivation"
    }

    fn key(&self) -> Option<&'static str> {
        None
    }

    fn interface(&self) -> &'static str {
        NODE_STATE_INTERFACE
    }

    fn installed(&self) -> Vec<(Option<&'static str>, &'static str)> {
        vec![(None, "mcn.wasm")]
    }

    fn required(&self) -> Option<&'static str> {
        Some(MISSING)
    }

    fn on_failure(&self) -> &'static str {
        "keep the last written MachineConfigNode status; retry with backoff"
    }

    fn canary(&self) -> CanaryField {
        CanaryField::of::<Canary>("pools", "the mcn job")
    }

    fn load(
        &self,
        runtime: &Runtime,
        _: &EntryName,
        fetched: &Fetched,
    ) -> Result<Served, LoadError> {
        Served::load(runtime, fetched, smoke)
    }

    fn audit<'a>(
        &'a self,
        client: &'a kube::Client,
        served: &'a Served,
        job: &'a EntryName,
        limit: usize,
        gates: &'a Modelled,
    ) -> Audited<'a> {
        Box::pin(async move {
            let guests = (served.get::<McnGuest>().and_then(audit::pair))
                .ok_or_else(|| ReadError::NoCandidate(job.to_string()))?;
            super::audit::on_cluster(client, guests, limit, gates).await
        })
    }
}

/// The registry entry of this job.
pub fn job() -> EntryName {
    EntryName::single(&Mcn)
}

/// The guests serving this job in `set`.
pub fn slot(set: &GuestSet) -> Option<&Slot<McnGuest>> {
    set.slot(&job())
}

/// A worker node halfway through an update, in a pool that selects it: any
/// node-state guest must report it (`apply`, pool `worker`, desired config
/// the node's), and what it reports must pass the host's validation.
pub fn fixture() -> logic::Facts {
    let annotation = |key: &str| format!("machineconfiguration.openshift.io/{key}");
    logic::Facts {
        node: logic::Node {
            name: "smoke-worker-0".into(),
            phase: "Running".into(),
            unschedulable: false,
            labels: BTreeMap::from([("node-role.kubernetes.io/worker".into(), String::new())]),
            annotations: BTreeMap::from([
                (annotation("currentConfig"), "rendered-worker-a".into()),
                (annotation("desiredConfig"), "rendered-worker-b".into()),
                (annotation("state"), "Working".into()),
            ]),
        },
        pools: vec![logic::Pool {
            name: "worker".into(),
            node_selector: Some(logic::LabelSelector {
                match_labels: BTreeMap::from([(
                    "node-role.kubernetes.io/worker".into(),
                    String::new(),
                )]),
                match_expressions: Vec::new(),
            }),
            target_config: "rendered-worker-b".into(),
        }],
        configs: Vec::new(),
        policies: logic::DisruptionPolicies::defaults(),
        stored: None,
        previous: Vec::new(),
        feature_gates: Default::default(),
    }
}

/// Why a node-state guest failed its smoke evaluation.
#[derive(Debug, thiserror::Error)]
pub enum SmokeError {
    /// Output the host refuses is already a failure here (see `derive`).
    #[error(transparent)]
    Guest(#[from] GuestError),
    #[error(
        "fixture node smoke-worker-0 (pool worker, desired rendered-worker-b) was reported in pool {pool:?} with desired config {desired:?}"
    )]
    Misreported { pool: String, desired: String },
    #[error("fixture node smoke-worker-0 in pool worker must be reported (apply), got {0}")]
    NotReported(String),
}

/// Any node-state guest must report the fixture node as the native logic
/// does.
pub fn smoke(guest: &McnGuest) -> Result<(), SmokeError> {
    match guest.derive(&fixture())? {
        logic::Decision::Apply(node)
            if node.pool == "worker" && node.desired_config == "rendered-worker-b" =>
        {
            Ok(())
        }
        logic::Decision::Apply(node) => Err(SmokeError::Misreported {
            pool: node.pool,
            desired: node.desired_config,
        }),
        other => Err(SmokeError::NotReported(format!("{other:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The native logic passes the fixture the guests must pass.
    #[test]
    fn native_logic_passes_the_mcn_fixture() {
        let decision = logic::derive(&fixture());
        assert!(logic::validate(&decision, false).is_ok());
        assert!(
            matches!(&decision, logic::Decision::Apply(n) if n.pool == "worker"),
            "{decision:?}"
        );
    }
}
