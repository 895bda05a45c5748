//! How the boot image job describes itself to the guest registry: one
//! entry per platform (`bootImage.<platform>`), none required (a platform
//! without a guest gets the common rules and then `noop`), the modules
//! installed beside the host, and the smoke evaluation a new module must
//! pass before it serves.

use std::collections::{BTreeMap, BTreeSet};

use mco_bootimage::{ClusterFacts, MachineSetView, ProviderSpec};
use serde_json::json;

use super::guest::BootImageGuestExt as _;
use super::guest::{BOOT_IMAGE_INTERFACE, BootImageGuest, StreamInput};
use super::platform::{self, PLATFORMS};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use mco_registry::audit::{self, cluster::ReadError};
use mco_registry::canary::CanaryField;
use mco_registry::job::Modelled;
use mco_registry::{Audited, EntryName, Fetched, GuestSet, JobKind, Served, Slot};
use mco_runtime::{GuestError, LoadError, Runtime};

/// `spec.rollout.canary` of a bootImage job.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Canary {
    /// A bootImage job: the MachineSets (and ControlPlaneMachineSets) whose
    /// labels this selects.
    pub machine_sets: LabelSelector,
}

/// The boot image job, as the composition root registers it.
pub struct BootImage;

impl JobKind for BootImage {
    fn name(&self) -> &'static str {
        "bootImage"
    }

    fn serves(&self) -> &'static str {
        "boot images for one platform"
    }

    fn key(&self) -> Option<&'static str> {
        Some(
            "Infrastructure `status.platformStatus.type` (`AWS`, `GCP`, `Azure`,\n…) for job `bootImage`.",
        )
    }

    fn interface(&self) -> &'static str {
        BOOT_IMAGE_INTERFACE
    }

    fn installed(&self) -> Vec<(Option<&'static str>, &'static str)> {
        PLATFORMS
            .iter()
            .map(|platform| (Some(platform.about().name), platform.about().module))
            .collect()
    }

    fn required(&self) -> Option<&'static str> {
        None
    }

    fn on_failure(&self) -> &'static str {
        "nothing is written for the MachineSet, which counts as Degraded; the next pass retries"
    }

    fn canary(&self) -> CanaryField {
        CanaryField::of::<Canary>("machineSets", "a bootImage job")
    }

    fn load(
        &self,
        runtime: &Runtime,
        job: &EntryName,
        fetched: &Fetched,
    ) -> Result<Served, LoadError> {
        let platform = job.key().unwrap_or_default();
        Served::load(runtime, fetched, |guest| smoke(platform, guest))
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
            let guests = (served.get::<BootImageGuest>().and_then(audit::pair))
                .ok_or_else(|| ReadError::NoCandidate(job.to_string()))?;
            let arch = super::host_stream_arch().map_err(ReadError::Cluster)?;
            let platform = job.key().unwrap_or_default();
            super::audit::on_cluster(client, platform, guests, arch, limit, gates).await
        })
    }
}

/// The registry entry of `platform`'s guest.
pub fn job(platform: &str) -> EntryName {
    EntryName::keyed(&BootImage, platform)
}

/// The guests serving `platform` in `set`.
pub fn slot<'s>(set: &'s GuestSet, platform: &str) -> Option<&'s Slot<BootImageGuest>> {
    set.slot(&job(platform))
}

/// The platforms that have a guest in `set`.
pub fn platforms(set: &GuestSet) -> BTreeSet<String> {
    set.keys(&BootImage).map(str::to_string).collect()
}

/// A one-architecture stream with images for every shipped platform.
const STREAM: &str = r#"{"stream":"rhcos-smoke","metadata":{"last-modified":"2026-01-01T00:00:00Z"},
 "architectures":{"x86_64":{"artifacts":{"vmware":{"release":"9.8.1","formats":{"ova":{"disk":{
  "location":"https://rhcos.mirror.openshift.com/rhcos-9.8.1-vmware.x86_64.ova",
  "sha256":"0000000000000000000000000000000000000000000000000000000000000000"}}}}},"images":{
  "aws":{"regions":{"us-east-1":{"release":"9.8.1","image":"ami-0123456789abcdef0"}}},
  "gcp":{"release":"9.8.1","project":"rhcos-cloud","name":"rhcos-9-8-1-gcp-x86-64"}},
  "rhel-coreos-extensions":{"marketplace":{"azure":{"no-purchase-plan":{
   "hyperVGen1":{"publisher":"azureopenshift","offer":"aro4","sku":"aro_420","version":"9.8.1"},
   "hyperVGen2":{"publisher":"azureopenshift","offer":"aro4","sku":"420-v2","version":"9.8.1"}}}}}}}}"#;

/// An x86_64 worker MachineSet of `platform`, with an old RHCOS image
/// (the platform table's fixture; only a user-data Secret on a platform
/// the host does not know).
pub fn fixture(platform: &str) -> MachineSetView {
    let provider_spec = match platform::by_name(platform) {
        Some(platform) => platform.fixture(),
        None => json!({"userDataSecret": {"name": "worker-user-data"}}),
    };
    MachineSetView {
        kind: Default::default(),
        name: "smoke-worker-a".into(),
        namespace: Some("openshift-machine-api".into()),
        labels: BTreeMap::new(),
        annotations: BTreeMap::from([(
            "capacity.cluster-autoscaler.kubernetes.io/labels".into(),
            "kubernetes.io/arch=amd64".into(),
        )]),
        template_labels: BTreeMap::new(),
        owner_references: Vec::new(),
        provider_spec: Some(ProviderSpec::new(provider_spec)),
    }
}

/// Any decision is acceptable (a platform team's module may well skip an
/// object the shipped one patches), but it must come back in time and pass
/// the host's validation (which every guest call applies).
pub fn smoke(platform: &str, guest: &BootImageGuest) -> Result<(), GuestError> {
    decision(platform, guest).map(drop)
}

/// The guest's decision for `platform`'s fixture MachineSet.
pub fn decision(
    platform: &str,
    guest: &BootImageGuest,
) -> Result<mco_bootimage::Decision, GuestError> {
    let mut cluster = ClusterFacts {
        control_plane_arch: "x86_64".into(),
        multi_arch: false,
        known_images: BTreeSet::new(),
        vcenter: None,
        // The smoke decision is made from the lists: no EC2 is asked.
        ec2: None,
    };
    if let Some(platform) = platform::by_name(platform) {
        platform.smoke_facts(&mut cluster);
    }
    let stream = StreamInput::new(Some(STREAM));
    guest.decide_one(platform, &stream, &fixture(platform), &cluster, None)
}
