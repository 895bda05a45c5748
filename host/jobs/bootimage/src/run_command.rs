//! How `mco-host run` starts the managed boot image job: its flags
//! ([`BootImageRunArgs`], `--boot-images` to start it at all), its series,
//! and its controller.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use futures::FutureExt as _;
use futures::future::BoxFuture;
use prometheus_client::registry::Registry;

use super::controller;
use super::ec2::live as ec2_live;
use super::job::BootImage;
use super::metrics::{BootImageMetrics, Metrics};
use super::vcenter::live as vcenters;
use mco_job::ownership::Mode;
use mco_job::run_context::{RunContext, Runner, RunnerError};
use mco_registry::JobKind as _;

/// The boot image job's flags of `run`.
#[derive(Args)]
pub struct BootImageRunArgs {
    /// Also run the managed boot image controller (needs the RBAC in
    /// deploy/boot-images). MachineSets are touched only when enrolled in
    /// MachineConfiguration `cluster`.
    #[arg(long, env = "MCO_BOOT_IMAGES")]
    boot_images: bool,
    /// The boot image job's ownership mode: `own` patches MachineSets, but
    /// refuses while the operator's boot image controller writes its
    /// conditions on MachineConfiguration `cluster`; `observe` patches
    /// nothing and compares its plan with the MachineSets.
    #[arg(long, value_enum, default_value = "own", env = "MCO_BOOT_IMAGES_MODE")]
    boot_images_mode: Mode,
    /// ConfigMap (in --namespace) where the boot image controller keeps its
    /// hot-loop record and the boot images it has seen.
    #[arg(long, default_value = "mco-host-boot-images", value_name = "NAME")]
    boot_image_state: String,
    /// ConfigMap (in --namespace) listing more boot images that count as
    /// RHCOS, one per line in any key.
    #[arg(long, value_name = "NAME")]
    known_images_configmap: Option<String>,
    /// How long MachineConfiguration `cluster` may be missing or behind its
    /// spec before boot image updates report Degraded.
    #[arg(long, default_value = "2m", value_parser = humantime::parse_duration)]
    machineconfiguration_wait: Duration,
    /// vSphere: where RHCOS OVAs are kept, by digest, between imports (the
    /// Deployment mounts an emptyDir here).
    #[arg(
        long,
        default_value = "/var/cache/mco-host/ova",
        env = "MCO_OVA_CACHE_DIR"
    )]
    ova_cache_dir: PathBuf,
    /// vSphere: the OVA cache directory's size bound in MiB, the download
    /// under way included (an RHCOS OVA is about 1.2 GiB; a larger one is
    /// refused). At most the size of the volume it is on.
    #[arg(
        long,
        default_value_t = vcenters::DEFAULT_OVA_CACHE_MAX_MIB,
        env = "MCO_OVA_CACHE_MAX_MIB"
    )]
    ova_cache_max_mib: u64,
    /// vSphere: a PEM bundle of the CAs vCenter certificates are checked
    /// against (default: the system's roots).
    #[arg(long, value_name = "FILE", env = "MCO_VCENTER_CA_FILE")]
    vcenter_ca_file: Option<PathBuf>,
    /// vSphere: do not check vCenter certificates at all, as upstream's
    /// controller does not (anyone on the path can then read the password).
    #[arg(
        long,
        conflicts_with = "vcenter_ca_file",
        env = "MCO_VCENTER_INSECURE_SKIP_VERIFY"
    )]
    vcenter_insecure_skip_verify: bool,
    /// vSphere: how long one vCenter call may take.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    vcenter_call_timeout: Duration,
    /// vSphere: how long one vCenter task (rename, destroy, an import lease
    /// getting ready) may take.
    #[arg(long, default_value = "10m", value_parser = humantime::parse_duration)]
    vcenter_task_timeout: Duration,
    /// vSphere: how long one OVA download or disk upload may take.
    #[arg(long, default_value = "60m", value_parser = humantime::parse_duration)]
    vcenter_transfer_timeout: Duration,
    /// AWS: the EC2 endpoint of every region (a VPC or private endpoint,
    /// moto in the tests), instead of `https://ec2.<region>.amazonaws.com/`.
    #[arg(long, value_name = "URL", env = "MCO_EC2_ENDPOINT")]
    ec2_endpoint: Option<String>,
    /// AWS: how long connecting to EC2 may take.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    ec2_connect_timeout: Duration,
    /// AWS: how long an EC2 answer may stall between two reads.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    ec2_read_timeout: Duration,
    /// AWS: how long one EC2 call (one page of a listing) may take.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    ec2_call_timeout: Duration,
}

/// The job as `run` starts it: its flags, read, and its own series.
struct BootImageRunner {
    mode: Mode,
    state_configmap: String,
    known_images_configmap: Option<String>,
    machineconfiguration_wait: Duration,
    control_plane_arch: String,
    vsphere: vcenters::Options,
    ec2: ec2_live::Options,
    metrics: BootImageMetrics,
}

/// [`Run::action`](mco_job::jobs::Run::action): the job starts with
/// `--boot-images` only; its series are registered either way.
pub fn runner(
    args: BootImageRunArgs,
    registry: &mut Registry,
) -> Result<Option<Box<dyn Runner>>, RunnerError> {
    let metrics = BootImageMetrics::register(registry);
    if !args.boot_images {
        return Ok(None);
    }
    Ok(Some(Box::new(BootImageRunner {
        mode: args.boot_images_mode,
        control_plane_arch: super::host_stream_arch()
            .map_err(RunnerError::Unsupported)?
            .to_owned(),
        vsphere: vcenters::Options {
            ova_cache: args.ova_cache_dir,
            ova_cache_max_bytes: args.ova_cache_max_mib.saturating_mul(1 << 20),
            trust: trust(args.vcenter_ca_file, args.vcenter_insecure_skip_verify)?,
            timeouts: mco_vsphere::Timeouts {
                call: args.vcenter_call_timeout,
                task: args.vcenter_task_timeout,
                transfer: args.vcenter_transfer_timeout,
            },
        },
        ec2: ec2_live::Options {
            endpoint: args.ec2_endpoint,
            timeouts: mco_ec2::Timeouts {
                connect: args.ec2_connect_timeout,
                read: args.ec2_read_timeout,
                call: args.ec2_call_timeout,
            },
        },
        state_configmap: args.boot_image_state,
        known_images_configmap: args.known_images_configmap,
        machineconfiguration_wait: args.machineconfiguration_wait,
        metrics,
    })))
}

/// What vCenter certificates are checked against: the CA file, read now,
/// nothing, or the system's roots.
fn trust(ca_file: Option<PathBuf>, insecure: bool) -> Result<mco_vsphere::Trust, RunnerError> {
    Ok(match (ca_file, insecure) {
        (Some(path), _) => match std::fs::read(&path) {
            Ok(pem) => mco_vsphere::Trust::Pem(pem),
            Err(source) => {
                return Err(RunnerError::Read {
                    flag: "--vcenter-ca-file",
                    path,
                    source,
                });
            }
        },
        (None, true) => mco_vsphere::Trust::InsecureSkipVerify,
        (None, false) => mco_vsphere::Trust::Public,
    })
}

impl Runner for BootImageRunner {
    fn start(self: Box<Self>, context: &RunContext) -> BoxFuture<'static, ()> {
        let options = controller::Options {
            namespace: context.namespace.clone(),
            state_configmap: self.state_configmap,
            known_images_configmap: self.known_images_configmap,
            machineconfiguration_wait: self.machineconfiguration_wait,
            resync: context.resync,
            control_plane_arch: self.control_plane_arch,
            identity: context.identity.clone(),
            leadership: context.leadership.clone(),
            metrics: job_metrics(&context.metrics, self.metrics),
            readiness: context.readiness.clone(),
            machineconfiguration: context.machineconfiguration.clone(),
            ownership: context.ownership.job(BootImage.name(), self.mode),
            gates: context.gates.clone(),
            vsphere: self.vsphere,
            ec2: self.ec2,
            failures: context.failures.clone(),
        };
        controller::run(
            context.client.clone(),
            context.guests.clone(),
            options,
            context.shutdown.clone(),
        )
        .boxed()
    }
}

/// The series the job's controller and writer write to: the host's
/// job-free ones and its own.
pub(super) fn job_metrics(
    shared: &mco_job::metrics::Metrics,
    bootimage: BootImageMetrics,
) -> Metrics {
    Metrics {
        cluster: shared.cluster.clone(),
        registry: shared.registry.clone(),
        bootimage,
    }
}
