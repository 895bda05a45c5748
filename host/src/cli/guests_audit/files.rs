//! `guests audit` from files: the flags naming the objects `eval` reads,
//! with any number of Nodes (and their stored MCNs, matched by name) or
//! MachineSets, read as `eval` reads them (YAML or JSON, one object, a
//! `List`, several documents; `-` is standard input).

use clap::Args;

use super::AuditError;
use crate::bootimage::BootImageGuest;
use crate::bootimage::audit::{BootImageAudit, BootImageFiles, BootImageObjects, check_cluster};
use crate::cli::Failure;
use crate::mcn::McnGuest;
use crate::mcn::audit::{McnFiles, audit_files};
use mco_registry::audit::Audit;

#[derive(Args)]
pub(in crate::cli) struct FileArgs {
    /// The Nodes to audit the mcn job on, any number (instead of the
    /// cluster's).
    #[arg(long, value_name = "FILE", help_heading = "Input files (mcn)")]
    pub nodes: Option<String>,
    /// All MachineConfigPools.
    #[arg(
        long,
        value_name = "FILE",
        requires = "nodes",
        help_heading = "Input files (mcn)"
    )]
    pools: Option<String>,
    /// Rendered MachineConfigs.
    #[arg(
        long,
        value_name = "FILE",
        requires = "nodes",
        help_heading = "Input files (mcn)"
    )]
    machineconfigs: Option<String>,
    /// The stored MachineConfigNodes, any number, matched to the Nodes by
    /// name.
    #[arg(
        long,
        value_name = "FILE",
        requires = "nodes",
        help_heading = "Input files (mcn)"
    )]
    previous: Option<String>,
    /// MachineConfiguration `cluster`: node disruption policies (mcn),
    /// enrollment (bootImage).
    #[arg(long, value_name = "FILE")]
    machineconfiguration: Option<String>,
    /// FeatureGate `cluster` (default: the Default feature set), as for
    /// `eval`.
    #[arg(long, value_name = "FILE")]
    featuregate: Option<String>,
    /// The MachineSets to audit a bootImage job on, any number (instead of
    /// the cluster's).
    #[arg(
        long,
        value_name = "FILE",
        requires_all = ["configmap", "infrastructure"],
        help_heading = "Input files (bootImage)"
    )]
    pub machinesets: Option<String>,
    /// The ControlPlaneMachineSet, audited beside the MachineSets.
    #[arg(
        long,
        value_name = "FILE",
        requires = "machinesets",
        help_heading = "Input files (bootImage)"
    )]
    controlplanemachineset: Option<String>,
    /// The coreos-bootimages ConfigMap.
    #[arg(
        long,
        value_name = "FILE",
        requires = "machinesets",
        help_heading = "Input files (bootImage)"
    )]
    configmap: Option<String>,
    /// Infrastructure `cluster` (its platform must be the job's).
    #[arg(
        long,
        value_name = "FILE",
        requires = "machinesets",
        help_heading = "Input files (bootImage)"
    )]
    infrastructure: Option<String>,
    /// ClusterVersion `version` (stability gate, multi-arch).
    #[arg(
        long,
        value_name = "FILE",
        requires = "machinesets",
        help_heading = "Input files (bootImage)"
    )]
    clusterversion: Option<String>,
    /// The MachineSets' user-data Secrets, any number, found by the name
    /// each MachineSet gives.
    #[arg(
        long,
        value_name = "FILE",
        requires = "machinesets",
        help_heading = "Input files (bootImage)"
    )]
    user_data_secrets: Option<String>,
    /// Extra boot images that count as RHCOS (lines, or a ConfigMap).
    #[arg(
        long,
        value_name = "FILE",
        requires = "machinesets",
        help_heading = "Input files (bootImage)"
    )]
    known_images: Option<String>,
    /// vSphere: what the MachineSets' vCenter holds (as `eval bootimage
    /// --vcenter`).
    #[arg(
        long,
        value_name = "FILE",
        requires = "machinesets",
        help_heading = "Input files (bootImage)"
    )]
    vcenter: Option<String>,
    /// vSphere: ConfigMap kube-system/cluster-config-v1 (as `eval bootimage
    /// --install-config`).
    #[arg(
        long,
        value_name = "FILE",
        requires = "machinesets",
        help_heading = "Input files (bootImage)"
    )]
    install_config: Option<String>,
}

impl FileArgs {
    pub(super) fn only_for_mcn(&self) -> Result<(), AuditError> {
        match self.machinesets {
            Some(_) => Err(AuditError::Usage(
                "--machinesets and its files are inputs of a bootImage job, not of mcn".into(),
            )),
            None => Ok(()),
        }
    }

    pub(super) fn only_for_bootimage(&self) -> Result<(), AuditError> {
        match self.nodes {
            Some(_) => Err(AuditError::Usage(
                "--nodes and its files are inputs of the mcn job, not of a bootImage job".into(),
            )),
            None => Ok(()),
        }
    }

    /// Without the job's objects from a file the cluster is read, and a
    /// file given beside it would be silently ignored.
    pub(super) fn none_given(&self) -> Result<(), AuditError> {
        match self.machineconfiguration {
            Some(_) => Err(AuditError::Usage(
                "--machineconfiguration goes with --nodes or --machinesets; without them the \
                 cluster's objects are read"
                    .into(),
            )),
            None => Ok(()),
        }
    }
}

/// The mcn job's audit on the Nodes of `nodes`.
pub(super) fn mcn(
    nodes: &str,
    args: &FileArgs,
    guests: (&McnGuest, &McnGuest),
    limit: usize,
) -> Result<Audit, Failure> {
    let files = McnFiles {
        nodes,
        pools: args.pools.as_deref(),
        machineconfigs: args.machineconfigs.as_deref(),
        machineconfiguration: args.machineconfiguration.as_deref(),
        previous: args.previous.as_deref(),
        featuregate: args.featuregate.as_deref(),
    };
    Ok(audit_files(&files, guests, limit)?)
}

/// A bootImage job's audit on the MachineSets of `machinesets` (and the
/// ControlPlaneMachineSet, if given).
pub(super) fn bootimage(
    machinesets: &str,
    args: &FileArgs,
    platform: &str,
    guests: (&BootImageGuest, &BootImageGuest),
    control_plane_arch: &str,
    limit: usize,
) -> Result<Audit, Failure> {
    let required = |flag: &str, path: &Option<String>| {
        path.clone()
            .ok_or_else(|| AuditError::Usage(format!("--machinesets needs --{flag}")))
    };
    let (configmap, infrastructure) = (
        required("configmap", &args.configmap)?,
        required("infrastructure", &args.infrastructure)?,
    );
    let read = BootImageObjects::read(&BootImageFiles {
        machinesets,
        controlplanemachineset: args.controlplanemachineset.as_deref(),
        configmap: &configmap,
        infrastructure: &infrastructure,
        clusterversion: args.clusterversion.as_deref(),
        machineconfiguration: args.machineconfiguration.as_deref(),
        user_data_secrets: args.user_data_secrets.as_deref(),
        known_images: args.known_images.as_deref(),
        featuregate: args.featuregate.as_deref(),
        vcenter: args.vcenter.as_deref(),
        install_config: args.install_config.as_deref(),
    })?;
    check_cluster(&read.cluster, platform).map_err(AuditError::from)?;
    let mut audit = BootImageAudit::new(
        guests,
        &read.cluster,
        &read.secrets,
        control_plane_arch,
        limit,
    );
    for machine in read.objects {
        audit.add(machine);
    }
    Ok(audit.finish())
}
