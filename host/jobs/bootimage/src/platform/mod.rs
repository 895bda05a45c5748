//! The boot image platforms the host knows, one file each, listed once in
//! [`PLATFORMS`]: the host's side of what a guest's `Platform` is (the
//! guests' `mco_bootimage::Platform`, exported with `export_platform!`).
//! Each says, by Infrastructure `status.platformStatus.type`: the guest
//! shipped for it, the providerSpec fields a decision may change and how
//! the authority checks the image it sets, whether ControlPlaneMachineSets
//! are updated, what the host reads for it before its guest decides, its
//! smoke fixture, and how the status view reads a providerSpec's image.
//!
//! Nothing else in the host names a platform: it looks it up here
//! ([`by_name`], [`by_provider_spec`]). Adding a platform is a file here
//! and a line in [`PLATFORMS`].

use mco_bootimage::{ClusterFacts, Decision, Stream};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::objects::Infrastructure;
use super::prepared::Prepared;
use super::proposal::{Owned, Patched, Proposal, Rule};

pub(crate) mod aws;
pub(crate) mod azure;
pub(crate) mod gcp;
pub(crate) mod vsphere;

/// Every platform the host knows.
pub(crate) static PLATFORMS: [&dyn Platform; 4] =
    [&aws::Aws, &gcp::Gcp, &azure::Azure, &vsphere::Vsphere];

/// The platform whose Infrastructure `status.platformStatus.type` is
/// `name`; `None` for a platform the host knows nothing of (its guest may
/// change no field).
pub(crate) fn by_name(name: &str) -> Option<&'static dyn Platform> {
    PLATFORMS.iter().copied().find(|p| p.about().name == name)
}

/// The platform of a providerSpec, by its `kind` (the status view reads
/// no Infrastructure).
pub(crate) fn by_provider_spec(spec: &Value) -> Option<&'static dyn Platform> {
    let kind = spec.get("kind").and_then(Value::as_str)?;
    PLATFORMS
        .iter()
        .copied()
        .find(|p| p.about().provider_spec_kind == kind)
}

/// What the table says of a platform as plain data, its code being the
/// rest of [`Platform`]: each platform's file builds it with
/// [`About::new`] and states only where it differs from most platforms.
pub(crate) struct About {
    /// Infrastructure `status.platformStatus.type`.
    pub(crate) name: &'static str,
    /// The guest module the project ships for it, installed beside the host.
    pub(crate) module: &'static str,
    /// `providerSpec.value.kind` of its MachineSets.
    pub(crate) provider_spec_kind: &'static str,
    /// The `providerSpec.value` fields its decision may change, as
    /// upstream's platform functions change them
    /// (`pkg/controller/machine-set-boot-image`, `platform_helpers.go`).
    pub(crate) owned: &'static [Owned],
    /// Whether a decision may ask the host to import a template (vSphere).
    pub(crate) imports_templates: bool,
    /// Whether its ControlPlaneMachineSet gets boot image updates: upstream
    /// updates them on AWS, GCP and Azure only
    /// (`pkg/controller/machine-set-boot-image`, `syncControlPlaneMachineSets`).
    pub(crate) updates_control_plane_machine_sets: bool,
    /// Whether its MachineSets are enrolled when the admin says nothing
    /// (`CheckBootImagePlatform`, default-on on MCO main).
    pub(crate) enrolled_by_default: bool,
}

impl About {
    /// A platform as most are: it imports no templates, its
    /// ControlPlaneMachineSets are updated, it is enrolled by default.
    pub(crate) const fn new(
        name: &'static str,
        module: &'static str,
        provider_spec_kind: &'static str,
        owned: &'static [Owned],
    ) -> About {
        About {
            name,
            module,
            provider_spec_kind,
            owned,
            imports_templates: false,
            updates_control_plane_machine_sets: true,
            enrolled_by_default: true,
        }
    }
}

/// One boot image platform, as the host knows it.
pub(crate) trait Platform: Sync {
    /// Its row of the table: name, module, owned fields and switches.
    fn about(&self) -> &'static About;

    /// A check of the patch's shape before its fields are (GCP: the disks
    /// keep their order).
    fn check_shape(&self, _before: &Value, _after: &Patched<'_>) -> Result<(), Rule> {
        Ok(())
    }

    /// The image the proposal leaves the MachineSet on, if the stream (or
    /// what the host read for it) vouches for it.
    fn image(&self, proposal: &Proposal<'_>) -> Result<String, Rule>;

    /// What the host reads for `prepared` before the guest decides (vSphere:
    /// vCenter; AWS: EC2), set on it; `Some` when that already decides.
    fn prepare(&self, _infra: &Infrastructure, _prepared: &mut Prepared) -> Option<Decision> {
        None
    }

    /// The smoke fixture's `providerSpec.value`: an x86_64 worker on an old
    /// RHCOS image, which the shipped guest patches to the smoke stream's.
    fn fixture(&self) -> Value;

    /// What the host would have read for the fixture (AWS: its AMI counts
    /// as RHCOS; vSphere: vCenter holds its template at an older release).
    fn smoke_facts(&self, _facts: &mut ClusterFacts) {}

    /// The status view: the image a providerSpec boots from.
    fn current_image(&self, spec: &Value) -> Option<String>;

    /// The status view: the stream's image for the same providerSpec, or
    /// `None` where the stream has none to compare with.
    fn stream_image(&self, stream: &Stream, spec: &Value, arch: &str) -> Option<String>;
}

/// A providerSpec read as the platform's typed partial, `None` when it is
/// not of that shape (the status view then shows no image).
pub(crate) fn provider_spec<T: DeserializeOwned>(spec: &Value) -> Option<T> {
    T::deserialize(spec).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_platform_is_found_by_its_name_and_by_its_fixtures_kind() {
        for platform in PLATFORMS {
            let name = platform.about().name;
            assert_eq!(by_name(name).map(|p| p.about().name), Some(name));
            let fixture = platform.fixture();
            assert_eq!(
                by_provider_spec(&fixture).map(|p| p.about().name),
                Some(name)
            );
        }
        assert!(by_name("Nutanix").is_none());
    }

    /// The registry `run` starts from when none is given serves every
    /// platform of the table with the module shipped beside the host.
    #[test]
    fn the_installed_registry_names_every_platform() {
        use mco_registry::entries::Source;
        use mco_registry::table::Registry;
        use mco_registry::{EntryName, Jobs};

        static JOBS: Jobs = Jobs::new(&[&crate::job::BootImage]);
        let dir = std::path::Path::new("/g");
        let registry = Registry::installed(dir, &JOBS);
        for platform in PLATFORMS {
            let job = EntryName::keyed(&crate::job::BootImage, platform.about().name);
            let source = registry.get(&job).map(|e| e.module.source.clone());
            let want = Source::Path(dir.join(platform.about().module));
            assert_eq!(source, Some(want), "{}", platform.about().name);
        }
    }
}
