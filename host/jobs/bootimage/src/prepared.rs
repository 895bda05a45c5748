//! A MachineSet that passed the host rules (`rules::prepare`): what its
//! platform's guest is given, and what the host reads for it first (vCenter,
//! EC2). The platform table (`platform`) fills in those reads, so this sits
//! below both.

use mco_bootimage::{ClusterFacts, Decision, MachineSetView};

use super::ec2::Ec2Read;
use super::vcenter::Lookup;

/// A MachineSet that passed the host rules, with everything the guest gets.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Infrastructure `status.platformStatus.type` (`GCP`, `AWS`, ...).
    pub platform_type: String,
    pub machineset: MachineSetView,
    pub cluster: ClusterFacts,
    /// vSphere: what to read from vCenter before the guest decides.
    pub vcenter: Option<Box<Lookup>>,
    /// AWS: the first EC2 read before the guest decides.
    pub ec2: Option<Ec2Read>,
}

impl Prepared {
    /// The decision when no guest is registered for the platform: the
    /// common rules still apply, then there is nothing to do.
    pub fn without_guest(&self) -> Decision {
        self.unsupported(&self.platform_type)
    }

    /// The common rules, then nothing to do on a platform `label` names.
    pub(crate) fn unsupported(&self, label: &str) -> Decision {
        self.after_common_rules(mco_bootimage::unsupported_platform(&self.machineset, label))
    }

    /// The common rules (owner references, OS stream, Windows,
    /// architecture) decide first, as in the guest; then `decision`.
    fn after_common_rules(&self, decision: Decision) -> Decision {
        match mco_bootimage::common_rules(&self.machineset, &self.cluster) {
            Err(decided) => decided,
            Ok(_) => decision,
        }
    }
}
