//! `eval mcn`, `eval bootimage` and `guests`: the controllers' decisions
//! from files, and a registry checked without a cluster.

use std::path::PathBuf;

use k8s_openapi::jiff::Timestamp;
use mco_bootimage::MachineKind;
use serde_json::Value;

use super::{BootImageArgs, Failure, McnArgs, SandboxArgs, host_stream_arch};
use crate::bootimage::BootImageGuest;
use crate::bootimage::eval::{BootImageInputs, BootImagePaths};
use crate::bootimage::rules::Step;
use crate::mcn::McnGuest;
use crate::mcn::eval::{McnInputs, McnPaths};
use crate::registry::entries::Entry;
use crate::registry::table::Registry;
use crate::registry::{self, Remote};
use crate::{JOBS, bootimage, mcn};

/// The entry `eval` runs: `--guest FILE` under the host's limits, else the
/// registry's (digest pin and limits included; candidates are not run).
fn eval_entry(guest: Option<PathBuf>, registered: Option<&Entry>) -> Option<Entry> {
    match guest {
        Some(path) => Some(Entry::path(path)),
        None => registered.cloned(),
    }
}

pub(super) fn mcn(sandbox: &SandboxArgs, args: McnArgs) -> Result<Value, Failure> {
    let inputs = McnInputs::read(&McnPaths {
        node: &args.node,
        pools: args.pools.as_deref(),
        machineconfigs: args.machineconfigs.as_deref(),
        machineconfiguration: args.machineconfiguration.as_deref(),
        previous: args.previous.as_deref(),
    })?;
    let job = mcn::job::job();
    let registered = match &args.guest {
        Some(_) => None,
        None => sandbox.registry()?.get(&job).cloned(),
    };
    let entry = eval_entry(args.guest, registered.as_ref())
        .ok_or_else(|| Failure::Other(mcn::job::MISSING.into()))?;
    let runtime = sandbox.runtime()?;
    let fetched = registry::fetch(&job, &entry, &Remote::default())?;
    let guest: McnGuest = registry::load(&runtime, &fetched)?.active;
    let decision = guest.derive(&inputs.facts())?;
    Ok(inputs.output(decision, args.now.unwrap_or_else(Timestamp::now)))
}

pub(super) fn bootimage(sandbox: &SandboxArgs, args: BootImageArgs) -> Result<Value, Failure> {
    // clap lets exactly one of the two through.
    let object = match (&args.machineset, &args.controlplanemachineset) {
        (Some(ms), _) => (MachineKind::MachineSet, ms.as_str()),
        (None, cpms) => (
            MachineKind::ControlPlaneMachineSet,
            cpms.as_deref().unwrap_or_default(),
        ),
    };
    let inputs = BootImageInputs::read(&BootImagePaths {
        object,
        configmap: &args.configmap,
        infrastructure: &args.infrastructure,
        clusterversion: args.clusterversion.as_deref(),
        machineconfiguration: args.machineconfiguration.as_deref(),
        user_data_secret: args.user_data_secret.as_deref(),
        known_images: args.known_images.as_deref(),
    })?;
    let arch = host_stream_arch()?;
    inputs.stream()?;
    let rules = inputs.host_rules(arch)?;
    let guest: Option<BootImageGuest> = match &rules.step {
        Step::Decided(_) => None,
        Step::Guest(prepared) => {
            let registry = match &args.guest {
                Some(_) => Registry::default(),
                None => sandbox.registry()?,
            };
            let job = bootimage::job::job(&prepared.platform_type);
            match eval_entry(args.guest, registry.get(&job)) {
                None => None,
                Some(entry) => {
                    let runtime = sandbox.runtime()?;
                    let fetched = registry::fetch(&job, &entry, &Remote::default())?;
                    Some(registry::load(&runtime, &fetched)?.active)
                }
            }
        }
    };
    let now = args.now.unwrap_or_else(Timestamp::now);
    let decision = inputs.decide(rules, guest.as_ref(), now)?;
    serde_json::to_value(&decision).map_err(|e| Failure::Other(e.to_string()))
}

/// `mco-host guests`: the registry resolved and checked as `run` would at
/// start, so a registry can be tried before it is deployed.
pub(super) fn check_guests(sandbox: &SandboxArgs) -> Result<Value, Failure> {
    let runtime = sandbox.runtime()?;
    let location = sandbox.location();
    let registry = registry::read_local(&location, &JOBS)?;
    let remote = super::guests::pull_offline(sandbox, &registry)?;
    let (guests, _) = registry::initial(&runtime, &JOBS, &registry, &remote)?;
    guests.with_status(|status| status.registry = location.to_string());
    serde_json::to_value(guests.status()).map_err(|e| Failure::Other(e.to_string()))
}
