//! `eval mcn`: a node's MachineConfigNode derived from files, without a
//! cluster (the eval contract).

use std::path::PathBuf;

use clap::Args;
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

use super::McnGuest;
use super::eval::{McnInputs, McnPaths};
use super::guest::McnGuestExt as _;
use mco_job::feature_gates::Modelled;
use mco_job::jobs::{EvalError, Modules};

/// Derive a node's MachineConfigNode.
#[derive(Args)]
pub struct McnArgs {
    /// The Node.
    #[arg(long, value_name = "FILE")]
    node: String,
    /// All MachineConfigPools.
    #[arg(long, value_name = "FILE")]
    pools: Option<String>,
    /// Rendered MachineConfigs (to work out drain and post-config action).
    #[arg(long, value_name = "FILE")]
    machineconfigs: Option<String>,
    /// MachineConfiguration `cluster` (node disruption policies; default:
    /// the built-in cluster policies).
    #[arg(long, value_name = "FILE")]
    machineconfiguration: Option<String>,
    /// The node's MachineConfigNode as stored in the cluster.
    #[arg(long, value_name = "FILE")]
    previous: Option<String>,
    /// FeatureGate `cluster` (its first entry's gates; default: the
    /// Default feature set).
    #[arg(long, value_name = "FILE")]
    featuregate: Option<String>,
    /// Guest component to run instead of the registered one.
    #[arg(long, value_name = "FILE")]
    guest: Option<PathBuf>,
    /// Time stamped on conditions that changed (RFC 3339; default: now).
    #[arg(long, value_name = "TIME")]
    now: Option<Timestamp>,
}

/// `eval mcn` on its arguments.
pub(super) fn eval(
    args: McnArgs,
    modules: &mut dyn Modules,
    gates: &Modelled,
) -> Result<Value, EvalError> {
    let paths = McnPaths {
        node: &args.node,
        pools: args.pools.as_deref(),
        machineconfigs: args.machineconfigs.as_deref(),
        machineconfiguration: args.machineconfiguration.as_deref(),
        previous: args.previous.as_deref(),
        featuregate: args.featuregate.as_deref(),
    };
    let inputs = McnInputs::read(&paths, gates).map_err(|e| EvalError::Input(Box::new(e)))?;
    let job = super::job::job();
    let served = modules
        .served(&job)
        .map_err(EvalError::Modules)?
        .ok_or_else(|| EvalError::Other(super::job::MISSING.into()))?;
    let slot = served
        .get::<McnGuest>()
        .ok_or_else(|| EvalError::Other(format!("{job}: not a node-state module")))?;
    let decision = slot.active.derive(&inputs.facts())?;
    Ok(inputs.output(decision, args.now.unwrap_or_else(Timestamp::now)))
}
