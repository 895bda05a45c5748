//! `eval bootimage`: a MachineSet's boot image decision from files,
//! without a cluster (the eval contract).

use std::path::PathBuf;

use clap::Args;
use k8s_openapi::jiff::Timestamp;
use mco_bootimage::MachineKind;
use serde_json::Value;

use super::BootImageGuest;
use super::eval::{BootImageInputs, BootImagePaths};
use mco_job::feature_gates::Modelled;
use mco_job::jobs::{EvalError, Modules};

/// Decide a MachineSet's boot image update.
#[derive(Args)]
#[command(group(clap::ArgGroup::new("object").required(true).args(["machineset", "controlplanemachineset"])))]
pub struct BootImageArgs {
    /// The MachineSet (machine.openshift.io/v1beta1).
    #[arg(long, value_name = "FILE")]
    machineset: Option<String>,
    /// The ControlPlaneMachineSet (machine.openshift.io/v1), instead of a
    /// MachineSet.
    #[arg(long, value_name = "FILE")]
    controlplanemachineset: Option<String>,
    /// The coreos-bootimages ConfigMap.
    #[arg(long, value_name = "FILE")]
    configmap: String,
    /// Infrastructure `cluster` (picks the platform and its guest).
    #[arg(long, value_name = "FILE")]
    infrastructure: String,
    /// ClusterVersion `version` (stability gate, multi-arch).
    #[arg(long, value_name = "FILE")]
    clusterversion: Option<String>,
    /// MachineConfiguration `cluster` (enrollment).
    #[arg(long, value_name = "FILE")]
    machineconfiguration: Option<String>,
    /// The MachineSet's user-data Secret (stub Ignition upgrade).
    #[arg(long, value_name = "FILE")]
    user_data_secret: Option<String>,
    /// Extra boot images that count as RHCOS (lines, or a ConfigMap).
    #[arg(long, value_name = "FILE")]
    known_images: Option<String>,
    /// FeatureGate `cluster`: the gates of the --clusterversion version (else
    /// its first entry); default: the Default feature set.
    #[arg(long, value_name = "FILE")]
    featuregate: Option<String>,
    /// vSphere: what the workspace's vCenter holds, `{vms: [{name, folder,
    /// template, release, diskType}]}` (what the controller would read).
    #[arg(long, value_name = "FILE")]
    vcenter: Option<String>,
    /// vSphere: ConfigMap kube-system/cluster-config-v1 (the disk type of a
    /// template made anew; default: the datastore's).
    #[arg(long, value_name = "FILE")]
    install_config: Option<String>,
    /// AWS: what EC2 holds, region to images, `{us-east-1: [{imageId, ownerId,
    /// name, description, creationDate}]}` (what the controller would read
    /// with DescribeImages); without it EC2 is not consulted and the static
    /// AMI lists decide.
    #[arg(long, value_name = "FILE")]
    ec2: Option<String>,
    /// Guest component to run instead of the one registered for the platform.
    #[arg(long, value_name = "FILE")]
    guest: Option<PathBuf>,
    /// Time stamped on a stub upgrade (RFC 3339; default: now).
    #[arg(long, value_name = "TIME")]
    now: Option<Timestamp>,
}

/// `eval bootimage` on its arguments: the host rules, then the guest
/// registered for the platform, if they leave it to one.
pub(super) fn eval(
    args: BootImageArgs,
    modules: &mut dyn Modules,
    gates: &Modelled,
) -> Result<Value, EvalError> {
    // clap lets exactly one of the two through.
    let object = match (&args.machineset, &args.controlplanemachineset) {
        (Some(ms), _) => (MachineKind::MachineSet, ms.as_str()),
        (None, cpms) => (
            MachineKind::ControlPlaneMachineSet,
            cpms.as_deref().unwrap_or_default(),
        ),
    };
    let paths = BootImagePaths {
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
    };
    let inputs = BootImageInputs::read(&paths, gates).map_err(|e| EvalError::Input(Box::new(e)))?;
    let now = args.now.unwrap_or_else(Timestamp::now);
    let arch = super::host_stream_arch().map_err(EvalError::Other)?;
    let decision = inputs.decision::<_, EvalError>(arch, now, |platform| {
        let job = super::job::job(platform);
        let Some(served) = modules.served(&job).map_err(EvalError::Modules)? else {
            return Ok(None);
        };
        let slot = served
            .get::<BootImageGuest>()
            .ok_or_else(|| EvalError::Other(format!("{job}: not a boot image module")))?;
        Ok(Some(&slot.active))
    })?;
    serde_json::to_value(&decision).map_err(|e| EvalError::Other(e.to_string()))
}

/// The boot image inputs' errors, with the exit statuses of the eval
/// contract.
impl From<super::eval::EvalError> for EvalError {
    fn from(err: super::eval::EvalError) -> EvalError {
        match err {
            super::eval::EvalError::Input(e) => EvalError::Input(Box::new(e)),
            super::eval::EvalError::Guest(e) => EvalError::Guest(e),
        }
    }
}
