//! What the boot image job counts: its own series ([`BootImageMetrics`],
//! registered under the prefix the caller picks) and, beside them, the
//! cluster plumbing's and the registry's, which the host registers once
//! ([`Metrics`]).

use mco_cluster::metrics::registered;
use mco_registry::metrics::JobResultLabels;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    pub result: String,
}

/// The OCP version the boot image skew record claims, and why.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SkewLabels {
    pub ocp_version: String,
    /// `recorded` (a clean pass) or `reset` (skips: the install version).
    pub outcome: String,
}

/// The series the job's controller and writer write to: the shared
/// components' and its own.
#[derive(Clone, Debug)]
pub struct Metrics {
    pub cluster: mco_cluster::Metrics,
    pub registry: mco_registry::Metrics,
    pub bootimage: BootImageMetrics,
}

/// Passes, patches and the platform reads and writes of the boot image job.
#[derive(Clone, Debug, Default)]
pub struct BootImageMetrics {
    /// Boot image passes dropped where they were because the lease was lost.
    pub passes_stopped: Counter,
    /// Enrolled MachineSets by the result of the last boot image pass.
    pub machinesets: Family<ResultLabels, Gauge>,
    pub patches: Counter,
    pub hot_loops: Counter,
    /// 1 for the version `status.bootImageSkewEnforcementStatus.automatic`
    /// claims after the last pass that maintained it.
    pub skew: Family<SkewLabels, Gauge>,
    /// vSphere: vCenter reads for MachineSets (`read`, `failed`) and
    /// template imports (`imported`, `failed`), by job.
    pub vcenter_reads: Family<JobResultLabels, Counter>,
    pub template_imports: Family<JobResultLabels, Counter>,
    /// AWS: EC2 reads for MachineSets (`read`, `unreachable`: the static
    /// AMI lists decided), by job.
    pub ec2_reads: Family<JobResultLabels, Counter>,
}

impl BootImageMetrics {
    /// Registers the families in `registry` (already prefixed by the caller).
    pub fn register(registry: &mut Registry) -> BootImageMetrics {
        BootImageMetrics {
            passes_stopped: registered(
                registry,
                "bootimage_passes_stopped",
                "Boot image passes stopped where they were (vCenter imports included) because this replica lost the lease",
            ),
            machinesets: registered(
                registry,
                "bootimage_machinesets",
                "Enrolled MachineSets by the result of the last boot image pass (patched, current, skipped, degraded)",
            ),
            patches: registered(
                registry,
                "bootimage_patches",
                "Boot image patches applied to MachineSets",
            ),
            hot_loops: registered(
                registry,
                "bootimage_hot_loops",
                "Boot image patches refused because another writer keeps reverting them",
            ),
            vcenter_reads: registered(
                registry,
                "bootimage_vcenter_reads",
                "vCenter reads for vSphere MachineSets (the templates they may use), by job and result (read, failed)",
            ),
            ec2_reads: registered(
                registry,
                "bootimage_ec2_reads",
                "EC2 reads for AWS MachineSets (who owns the AMI; a marketplace product's AMIs), by job and result (read; unreachable, or denied: EC2 refused the credentials; both: the static AMI lists decided)",
            ),
            template_imports: registered(
                registry,
                "bootimage_template_imports",
                "vSphere template imports the writer ran, by job and result (imported; current: the folder's template already held the release, imported earlier in the pass for another MachineSet; failed)",
            ),
            skew: registered(
                registry,
                "bootimage_skew_enforcement_ocp_version",
                "1 for the OCP version whose boot images the skew enforcement record (MachineConfiguration status.bootImageSkewEnforcementStatus.automatic) says the cluster uses, by outcome of the last pass (recorded, reset)",
            ),
        }
    }
}
