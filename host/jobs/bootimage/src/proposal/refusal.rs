//! Why the host refuses a boot image decision. The texts are what a
//! MachineSet's `BootImageUpdateDegraded` message and `eval` show, so they
//! stay as the hostile-guest tests (`host/tests/authority.rs`) pin them.

use mco_bootimage::ignition::ANNOTATION_UPGRADED_TO;
use mco_k8s_rules::quote;

use super::QUOTE;

/// A refused decision: the guest that proposed it and the rule it breaks.
#[derive(Debug, thiserror::Error)]
#[error("the {platform} guest's {rule}")]
pub struct Refusal {
    /// Infrastructure `status.platformStatus.type` the guest serves.
    pub platform: String,
    pub rule: Box<Rule>,
}

/// One rule of what a boot image decision may change. Paths are already
/// bounded for display; values are quoted here.
#[derive(Debug, thiserror::Error)]
pub enum Rule {
    #[error("merge patch is {kind}, not a JSON object")]
    NotAnObject { kind: &'static str },
    #[error("patch has no {path}")]
    NoProviderSpecPatch { path: String },
    #[error("patch replaces {path} with {kind}, which a boot image decision may not touch")]
    ReplacesParent { path: String, kind: &'static str },
    #[error("patch replaces providerSpec.value with {kind}; it must be an object of field changes")]
    NotFieldChanges { kind: &'static str },
    #[error("patch changes providerSpec.value of {noun} {name}, which has none")]
    NoProviderSpec { noun: &'static str, name: String },
    #[error(
        "patch changes nothing in providerSpec.value (a patch that changes nothing would be applied on every pass)"
    )]
    ChangesNothing,
    #[error("patch changes {path}, which a boot image decision may not touch")]
    NotOwned { path: String },
    #[error("patch sets providerSpec.value.{path}, which a boot image decision may only clear")]
    ClearOnly { path: String },
    #[error(
        "patch changes the number of providerSpec.value.disks ({before} to {after}), which a boot image decision may not touch"
    )]
    DiskCount { before: usize, after: usize },
    #[error("patch reorders providerSpec.value.disks, which a boot image decision may not touch")]
    DisksReordered,
    #[error(
        "patch changes providerSpec.value.disks[{index}].image of a disk that is not a boot disk, which a boot image decision may not touch"
    )]
    NotBootDisk { index: usize },
    #[error("patch moves a MachineSet whose architecture the host cannot tell: {reason}")]
    UnknownArch { reason: String },
    #[error("patch sets a boot image, but the host has no usable stream: {reason}")]
    NoStream { reason: String },
    /// Unreachable while the platform owns no field (any change is refused
    /// first), but a platform given fields must also say how its image is
    /// checked.
    #[error("patch sets a boot image, but the host has no image check for this platform")]
    NoImageCheck,
    #[error(
        "patch target {} is not the image the patch sets ({})",
        quote(.target, QUOTE),
        quote(.image, QUOTE)
    )]
    TargetMismatch { target: String, image: String },
    #[error("patch sets a boot disk image, but the stream publishes none for {arch}: {reason}")]
    GcpNothingPublished { arch: String, reason: String },
    #[error(
        "patch sets providerSpec.value.disks[{index}].image to {}, which is not the image the stream publishes for {arch} ({published})",
        quote(.image, QUOTE)
    )]
    GcpNotPublished {
        index: usize,
        image: String,
        arch: String,
        published: String,
    },
    #[error("patch leaves providerSpec.value.ami without a string id")]
    AmiWithoutId,
    #[error(
        "patch sets providerSpec.value.ami.id to {}, but the stream publishes no AMI for {arch} in region {region:?}: {reason}",
        quote(.id, QUOTE)
    )]
    AwsNothingPublished {
        id: String,
        arch: String,
        region: String,
        reason: String,
    },
    #[error(
        "patch sets providerSpec.value.ami.id to {}, which is not the AMI the stream publishes for {arch} in region {region:?} ({published})",
        quote(.id, QUOTE)
    )]
    AwsNotPublished {
        id: String,
        arch: String,
        region: String,
        published: String,
    },
    #[error(
        "patch sets providerSpec.value.ami.id to {}, which is neither the AMI the stream publishes for {arch} in region {region:?} nor an AMI of marketplace product {product} at or below the stream's release that EC2 listed to the host in that region",
        quote(.id, QUOTE)
    )]
    AwsNotVouched {
        id: String,
        arch: String,
        region: String,
        product: String,
    },
    #[error(
        "patch sets image {urn}, but the stream publishes no Azure marketplace images for {arch}"
    )]
    AzureNothingPublished { urn: String, arch: String },
    #[error(
        "patch sets providerSpec.value.image to {}, which is not an image the stream publishes for {arch}",
        quote(.urn, QUOTE)
    )]
    AzureNotPublished { urn: String, arch: String },
    #[error(
        "patch sets providerSpec.value.image.resourceID to {}; a marketplace image has none",
        quote(.resource_id, QUOTE)
    )]
    AzureResourceId { resource_id: String },
    #[error(
        "patch sets providerSpec.value.image.type to {}, but the stream's image {urn} is {wanted}",
        quote(.kind, QUOTE)
    )]
    AzureImageType {
        kind: String,
        urn: String,
        wanted: &'static str,
    },
    #[error("decision asks for a template import, which only a vSphere decision may")]
    ImportOffVsphere,
    #[error(
        "decision concerns a vSphere template, but the host read nothing from vCenter for this MachineSet"
    )]
    NoVcenterFacts,
    #[error(
        "decision sets a vSphere template, but the stream publishes no vmware OVA for {arch}: {reason}"
    )]
    VsphereNothingPublished { arch: String, reason: String },
    #[error(
        "patch sets providerSpec.value.template to {}; a decision may point a MachineSet only at the cluster's template {}",
        quote(.template, QUOTE),
        quote(.managed, QUOTE)
    )]
    TemplateNotManaged { template: String, managed: String },
    #[error(
        "patch points the MachineSet at {}, which is not a template in the workspace folder holding the stream's release {release}, and the decision does not import it",
        quote(.template, QUOTE)
    )]
    TemplateOutdated { template: String, release: String },
    #[error(
        "decision imports into {field} {}, not the MachineSet's workspace {field} {}",
        quote(.value, QUOTE),
        quote(.own, QUOTE)
    )]
    ImportElsewhere {
        field: &'static str,
        value: String,
        own: String,
    },
    #[error(
        "decision imports template {}, which already holds the stream's release {release} in the workspace folder",
        quote(.template, QUOTE)
    )]
    ImportCurrent { template: String, release: String },
    #[error(
        "decision imports template {}, which is neither the cluster's template {} nor the MachineSet's own in the workspace folder",
        quote(.template, QUOTE),
        quote(.managed, QUOTE)
    )]
    ImportTemplate { template: String, managed: String },
    #[error(
        "decision imports template {} but leaves the MachineSet on template {}",
        quote(.template, QUOTE),
        quote(.named, QUOTE)
    )]
    ImportNotNamed { template: String, named: String },
    #[error(
        "decision imports with {field} {}, which is not the stream's vmware OVA {field} for {arch} ({})",
        quote(.value, QUOTE),
        quote(.published, QUOTE)
    )]
    ImportNotPublished {
        field: &'static str,
        value: String,
        arch: String,
        published: String,
    },
    #[error(
        "decision imports with disk type {}, not {} ({})",
        .asked.as_deref().map_or_else(|| "default".to_owned(), |d| quote(d, QUOTE)),
        .wanted.as_deref().map_or_else(|| "the datastore's default".to_owned(), |d| quote(d, QUOTE)),
        if *.replaced { "the replaced template's" } else { "install-config's, for a new template" }
    )]
    ImportDiskType {
        asked: Option<String>,
        wanted: Option<String>,
        replaced: bool,
    },
    #[error("patch moves the boot image but leaves the spec 2 stub of Secret {secret} unconverted")]
    StubLeftUnconverted { secret: String },
    #[error(
        "decision upgrades Secret {}, but the MachineSet's userDataSecret.name is {}",
        quote(.upgrades, QUOTE),
        .referenced.as_deref().map_or_else(|| "not set".to_owned(), |n| quote(n, QUOTE))
    )]
    ForeignSecret {
        upgrades: String,
        referenced: Option<String>,
    },
    #[error(
        "decision upgrades the stub of Secret {} although the host passed no user data",
        quote(.secret, QUOTE)
    )]
    StubWithoutUserData { secret: String },
    #[error("stub upgrade is not a base64 JSON Ignition config")]
    StubNotIgnition,
    #[error("stub upgrade has Ignition version {}, not spec 3.x", quote(.version, QUOTE))]
    StubNotSpec3 { version: String },
    #[error(
        "stub upgrade sets annotation {} on the Secret; only {ANNOTATION_UPGRADED_TO} may be set",
        quote(.key, QUOTE)
    )]
    StubAnnotation { key: String },
    #[error(
        "stub upgrade annotates version {} but converts to {version}",
        quote(.annotated, QUOTE)
    )]
    StubAnnotatedVersion { annotated: String, version: String },
    #[error("stub upgrade converts a stub that is not JSON: {reason}")]
    StubSourceNotJson { reason: String },
    #[error("stub upgrade converts a stub the host's own converter refuses: {reason}")]
    StubNotConvertible { reason: String },
    #[error(
        "stub upgrade changes the stub's ignition section (sources, certificate authorities, TLS or timeouts): expected {expected}, got {got}"
    )]
    StubIgnitionChanged { expected: String, got: String },
    #[error("stub upgrade adds {}, which the original stub does not have", quote(.section, QUOTE))]
    StubAddsSection { section: String },
    #[error("stub upgrade changes the stub's {} section", quote(.section, QUOTE))]
    StubChangesSection { section: String },
}
