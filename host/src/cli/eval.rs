//! `eval mcn`, `eval bootimage` and `guests`: the controllers' decisions
//! from files, and a registry checked without a cluster.

use std::borrow::Borrow;
use std::path::PathBuf;

use k8s_openapi::jiff::Timestamp;
use mco_bootimage::{Decision, MachineKind};
use serde_json::Value;

use super::{BootImageArgs, Failure, McnArgs, SandboxArgs, host_stream_arch};
use crate::bootimage::BootImageGuest;
use crate::bootimage::eval::{BootImageInputs, BootImagePaths};
use crate::mcn::McnGuest;
use crate::mcn::eval::{McnInputs, McnPaths};
use crate::mcn::guest::McnGuestExt as _;
use crate::runtime::{Guest, Runtime, World};
use crate::{JOBS, bootimage, mcn};
use mco_registry::entries::Entry;
use mco_registry::slot::Slot;
use mco_registry::{Job, Remote};

/// The entry `eval` runs and what it is read from: `--guest FILE` under
/// the host's limits, else the registry's (digest pin and limits
/// included, OCI modules pulled as `mco-host guests` pulls them;
/// candidates are not run). `None`: the registry names no module for `job`.
fn eval_entry(
    sandbox: &SandboxArgs,
    guest: Option<PathBuf>,
    job: &Job,
) -> Result<Option<(Entry, Remote)>, Failure> {
    if let Some(path) = guest {
        return Ok(Some((Entry::path(path), Remote::default())));
    }
    let registry = sandbox.registry()?;
    let Some(entry) = registry.get(job).cloned() else {
        return Ok(None);
    };
    let remote = super::offline::pull_offline(sandbox, &registry)?;
    Ok(Some((entry, remote)))
}

pub(super) fn mcn(sandbox: &SandboxArgs, args: McnArgs) -> Result<Value, Failure> {
    let inputs = McnInputs::read(&McnPaths {
        node: &args.node,
        pools: args.pools.as_deref(),
        machineconfigs: args.machineconfigs.as_deref(),
        machineconfiguration: args.machineconfiguration.as_deref(),
        previous: args.previous.as_deref(),
        featuregate: args.featuregate.as_deref(),
    })?;
    let job = mcn::job::job();
    let (entry, remote) = eval_entry(sandbox, args.guest, &job)?
        .ok_or_else(|| Failure::Other(mcn::job::MISSING.into()))?;
    let guest: McnGuest = load_slot(&sandbox.runtime()?, &job, &entry, &remote)?.active;
    let decision = guest.derive(&inputs.facts())?;
    Ok(inputs.output(decision, args.now.unwrap_or_else(Timestamp::now)))
}

/// An entry's modules fetched and loaded with every check `run` makes
/// before they serve.
pub(super) fn load_slot<W: World>(
    runtime: &Runtime,
    job: &Job,
    entry: &Entry,
    remote: &Remote,
) -> Result<Slot<Guest<W>>, Failure> {
    let fetched = mco_registry::fetch(job, entry, remote)?;
    Ok(mco_registry::load(runtime, &fetched)?)
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
        featuregate: args.featuregate.as_deref(),
        vcenter: args.vcenter.as_deref(),
        install_config: args.install_config.as_deref(),
        ec2: args.ec2.as_deref(),
    })?;
    let now = args.now.unwrap_or_else(Timestamp::now);
    let decision = bootimage_decision(&inputs, now, |platform| {
        let job = bootimage::job::job(platform);
        eval_entry(sandbox, args.guest, &job)?
            .map(
                |(entry, remote)| Ok(load_slot(&sandbox.runtime()?, &job, &entry, &remote)?.active),
            )
            .transpose()
    })?;
    serde_json::to_value(&decision).map_err(|e| Failure::Other(e.to_string()))
}

/// The decision `eval bootimage` prints ([`BootImageInputs::decision`]),
/// for this host's control plane architecture.
pub(super) fn bootimage_decision<G: Borrow<BootImageGuest>>(
    inputs: &BootImageInputs,
    now: Timestamp,
    guest_for: impl FnOnce(&str) -> Result<Option<G>, Failure>,
) -> Result<Decision, Failure> {
    inputs.decision(host_stream_arch()?, now, guest_for)
}

/// `mco-host guests`: the registry resolved and checked as `run` would at
/// start, so a registry can be tried before it is deployed.
pub(super) fn check_guests(sandbox: &SandboxArgs) -> Result<Value, Failure> {
    let runtime = sandbox.runtime()?;
    let location = sandbox.location();
    let registry = mco_registry::read_local(&location, &JOBS)?;
    let remote = super::offline::pull_offline(sandbox, &registry)?;
    let (guests, _) = mco_registry::initial(&runtime, &JOBS, &registry, &remote)?;
    guests.with_status(|status| status.registry = location.to_string());
    serde_json::to_value(guests.status()).map_err(|e| Failure::Other(e.to_string()))
}
