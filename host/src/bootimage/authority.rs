//! What a boot image decision may change, checked by the host with the
//! job's own inputs. Guests propose, the host disposes: a patch is applied
//! to the MachineSet's providerSpec here, the result is diffed against the
//! original, and every changed path must be one the platform owns
//! ([`FIELD_OWNERSHIP`], kept here in the host, not in any guest). The new
//! image must be the one the
//! current stream publishes for the MachineSet's architecture (and, on AWS,
//! its region), and a stub upgrade must be the MachineSet's own Secret and a
//! faithful conversion of the stub the host passed. A decision that fails
//! any of this is an `invalid_output` guest failure, never a write.
//!
//! Over 500 lines: one rule set per platform plus the faithful-stub
//! comparison, which are one concern; the tests are in
//! `host/tests/authority.rs`.

use std::collections::BTreeSet;

use base64::Engine as _;
use mco_bootimage::ignition::{ANNOTATION_UPGRADED_TO, StubUpgrade, upgrade_stub};
use mco_bootimage::stream::AzureMarketplaceImage;
use mco_bootimage::{ClusterFacts, Decision, MachineKind, MachineSetView, Stream, UserDataUpgrade};
use mco_k8s_rules::{bounded, quote};
use serde_json::{Map, Value};

/// How much of an offending value a message quotes, in bytes.
const QUOTE: usize = 120;

/// What a decision may do to one owned field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum May {
    /// Set it to the image the stream publishes (checked per platform).
    SetImage,
    /// Remove it (merge patch `null`); any other value is refused.
    Clear,
}

/// One providerSpec.value path a platform's boot image decision may change.
/// `[]` stands for any index of an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owned {
    pub path: &'static str,
    pub may: May,
}

const fn owned(path: &'static str, may: May) -> Owned {
    Owned { path, may }
}

/// The fields each platform's boot image decision owns, from
/// `spec/bootimage.md` §7: AWS sets `ami.id` and clears `ami.arn` /
/// `ami.filters` (only one of the three may be set); GCP sets the `image` of
/// boot disks only (every other disk and disk field byte-identical, the
/// order kept); Azure replaces the six fields of the `image` block. A
/// platform without an entry may change nothing.
pub const FIELD_OWNERSHIP: &[(&str, &[Owned])] = &[
    (
        "AWS",
        &[
            owned("ami.id", May::SetImage),
            owned("ami.arn", May::Clear),
            owned("ami.filters", May::Clear),
        ],
    ),
    ("GCP", &[owned("disks[].image", May::SetImage)]),
    (
        "Azure",
        &[
            owned("image.publisher", May::SetImage),
            owned("image.offer", May::SetImage),
            owned("image.sku", May::SetImage),
            owned("image.version", May::SetImage),
            owned("image.resourceID", May::SetImage),
            owned("image.type", May::SetImage),
        ],
    ),
];

/// Everything the host knows about one boot image job: the same inputs the
/// guest was given, plus the platform it serves and the parsed stream.
pub struct JobInputs<'a> {
    /// Infrastructure `status.platformStatus.type` the guest serves.
    pub platform: &'a str,
    pub machineset: &'a MachineSetView,
    pub cluster: &'a ClusterFacts,
    /// The decoded stub the host passed, if any.
    pub user_data: Option<&'a str>,
    /// The stream the guest was given, as the host parsed it.
    pub stream: Result<&'a Stream, &'a str>,
}

/// `Err` names the field or rule a decision breaks. Only `patch`
/// decisions change anything; the others pass.
pub fn check(job: &JobInputs<'_>, decision: &Decision) -> Result<(), String> {
    let Decision::Patch {
        target,
        patch,
        user_data_secret,
    } = decision
    else {
        return Ok(());
    };
    let guest = format!("the {} guest's", job.platform);
    let fragment = provider_spec_fragment(&guest, job.machineset.kind, patch)?;
    let Some(before) = &job.machineset.provider_spec else {
        return Err(format!(
            "{guest} patch changes providerSpec.value of {} {}, which has none",
            job.machineset.kind.noun(),
            job.machineset.name
        ));
    };
    let mut after = before.clone();
    json_patch::merge(&mut after, fragment);
    if after == *before {
        return Err(format!(
            "{guest} patch changes nothing in providerSpec.value (a patch that changes nothing would be applied on every pass)"
        ));
    }
    let owned = FIELD_OWNERSHIP
        .iter()
        .find(|(platform, _)| *platform == job.platform)
        .map(|(_, owned)| *owned)
        .unwrap_or(&[]);
    if job.platform == "GCP" {
        gcp_disk_order(&guest, before, &after)?;
    }
    let mut changes = Vec::new();
    diff(&mut Vec::new(), Some(before), Some(&after), &mut changes);
    for change in &changes {
        let pattern = change.pattern();
        let Some(field) = owned.iter().find(|o| o.path == pattern) else {
            return Err(format!(
                "{guest} patch changes providerSpec.value.{}, which a boot image decision may not touch",
                change.display()
            ));
        };
        if field.may == May::Clear && change.after.is_some() {
            return Err(format!(
                "{guest} patch sets providerSpec.value.{}, which a boot image decision may only clear",
                change.display()
            ));
        }
    }
    let arch = mco_bootimage::arch::machineset_arch(
        job.machineset,
        &job.cluster.control_plane_arch,
        job.cluster.multi_arch,
    )
    .map_err(|e| {
        format!("{guest} patch moves a MachineSet whose architecture the host cannot tell: {e}")
    })?;
    let stream = job.stream.map_err(|e| {
        format!("{guest} patch sets a boot image, but the host has no usable stream: {e}")
    })?;
    let image = match job.platform {
        "AWS" => aws_image(&guest, stream, &arch, &after)?,
        "GCP" => gcp_image(&guest, stream, &arch, &changes, before)?,
        "Azure" => azure_image(&guest, stream, &arch, &after)?,
        // Unreachable with an empty list (any change is refused above), but
        // a platform added to the list must also say how its image is
        // checked.
        other => {
            return Err(format!(
                "the host has no image check for platform {other:?}, so its guests may change nothing"
            ));
        }
    };
    if *target != image {
        return Err(format!(
            "{guest} patch target {} is not the image the patch sets ({})",
            quote(target, QUOTE),
            quote(&image, QUOTE)
        ));
    }
    stub_upgrade(&guest, job, user_data_secret.as_ref())
}

/// The `providerSpec.value` part of the patch, at the path the object's
/// kind keeps it (one level deeper in a ControlPlaneMachineSet), or why the
/// patch has no such part of the right shape.
fn provider_spec_fragment<'p>(
    guest: &str,
    kind: MachineKind,
    patch: &'p Value,
) -> Result<&'p Value, String> {
    let envelope = kind.provider_spec_path();
    if !patch.is_object() {
        return Err(format!(
            "{guest} merge patch is {}, not a JSON object",
            mco_bootimage::fields::kind_of(patch)
        ));
    }
    let mut level = patch;
    let mut path = String::new();
    for key in envelope {
        let map = level.as_object().ok_or_else(|| {
            format!(
                "{guest} patch replaces {path} with {}, which a boot image decision may not touch",
                mco_bootimage::fields::kind_of(level)
            )
        })?;
        if let Some(other) = map.keys().find(|k| k.as_str() != *key) {
            let at = if path.is_empty() {
                other.clone()
            } else {
                format!("{path}.{other}")
            };
            return Err(format!(
                "{guest} patch changes {}, which a boot image decision may not touch",
                bounded(at, QUOTE)
            ));
        }
        level = map
            .get(*key)
            .ok_or_else(|| format!("{guest} patch has no {}", envelope.join(".")))?;
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
    }
    if !level.is_object() {
        return Err(format!(
            "{guest} patch replaces providerSpec.value with {}; it must be an object of field changes",
            mco_bootimage::fields::kind_of(level)
        ));
    }
    Ok(level)
}

#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

/// One changed leaf (or a subtree that changed shape).
struct Change<'a> {
    path: Vec<Seg>,
    after: Option<&'a Value>,
}

impl Change<'_> {
    fn render(&self, index: impl Fn(usize) -> String) -> String {
        let mut out = String::new();
        for seg in &self.path {
            match seg {
                Seg::Key(key) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(key);
                }
                Seg::Index(i) => out.push_str(&index(*i)),
            }
        }
        bounded(out, QUOTE)
    }

    fn display(&self) -> String {
        self.render(|i| format!("[{i}]"))
    }

    /// The path as [`FIELD_OWNERSHIP`] spells it.
    fn pattern(&self) -> String {
        self.render(|_| "[]".into())
    }

    fn index(&self) -> Option<usize> {
        self.path.iter().find_map(|seg| match seg {
            Seg::Index(i) => Some(*i),
            Seg::Key(_) => None,
        })
    }
}

/// Every path where `before` and `after` differ. Objects are compared key
/// by key and arrays of equal length index by index, so an owned leaf deep
/// inside (a boot disk's image) is told apart from its siblings.
fn diff<'a>(
    path: &mut Vec<Seg>,
    before: Option<&'a Value>,
    after: Option<&'a Value>,
    out: &mut Vec<Change<'a>>,
) {
    match (before, after) {
        (Some(Value::Object(b)), Some(Value::Object(a))) => {
            let keys: BTreeSet<&String> = b.keys().chain(a.keys()).collect();
            for key in keys {
                path.push(Seg::Key(key.clone()));
                diff(path, b.get(key), a.get(key), out);
                path.pop();
            }
        }
        (Some(Value::Array(b)), Some(Value::Array(a))) if a.len() == b.len() => {
            for (i, (b, a)) in b.iter().zip(a).enumerate() {
                path.push(Seg::Index(i));
                diff(path, Some(b), Some(a), out);
                path.pop();
            }
        }
        (b, a) if b != a => out.push(Change {
            path: path.clone(),
            after: a,
        }),
        _ => {}
    }
}

/// A GCP patch must keep the disks in their order: reordering moves the
/// boot disk, so it is named as such rather than as some changed field.
fn gcp_disk_order(guest: &str, before: &Value, after: &Value) -> Result<(), String> {
    let (Some(Value::Array(b)), Some(Value::Array(a))) = (before.get("disks"), after.get("disks"))
    else {
        return Ok(());
    };
    if a.len() != b.len() {
        return Err(format!(
            "{guest} patch changes the number of providerSpec.value.disks ({} to {}), which a boot image decision may not touch",
            b.len(),
            a.len()
        ));
    }
    let without_image = |disk: &Value| {
        let mut disk = disk.clone();
        if let Some(map) = disk.as_object_mut() {
            map.remove("image");
        }
        disk.to_string()
    };
    let b: Vec<String> = b.iter().map(without_image).collect();
    let a: Vec<String> = a.iter().map(without_image).collect();
    if a != b {
        let (mut bs, mut as_) = (b.clone(), a.clone());
        bs.sort();
        as_.sort();
        if bs == as_ {
            return Err(format!(
                "{guest} patch reorders providerSpec.value.disks, which a boot image decision may not touch"
            ));
        }
    }
    Ok(())
}

fn str_at<'v>(value: &'v Value, pointer: &str) -> Option<&'v str> {
    value.pointer(pointer).and_then(Value::as_str)
}

fn aws_image(guest: &str, stream: &Stream, arch: &str, after: &Value) -> Result<String, String> {
    let region = str_at(after, "/placement/region").unwrap_or("");
    let id = str_at(after, "/ami/id").ok_or_else(|| {
        format!("{guest} patch leaves providerSpec.value.ami without a string id")
    })?;
    let published = stream
        .aws_region_image(arch, region)
        .map_err(|e| {
            format!(
                "{guest} patch sets providerSpec.value.ami.id to {}, but the stream publishes no AMI for {arch} in region {region:?}: {e}",
                quote(id, QUOTE)
            )
        })?
        .image
        .as_str();
    if id != published {
        return Err(format!(
            "{guest} patch sets providerSpec.value.ami.id to {}, which is not the AMI the stream publishes for {arch} in region {region:?} ({published})",
            quote(id, QUOTE)
        ));
    }
    Ok(id.to_owned())
}

fn gcp_image(
    guest: &str,
    stream: &Stream,
    arch: &str,
    changes: &[Change<'_>],
    before: &Value,
) -> Result<String, String> {
    let published = stream.gcp_image_path(arch).map_err(|e| {
        format!(
            "{guest} patch sets a boot disk image, but the stream publishes none for {arch}: {e}"
        )
    })?;
    for change in changes {
        let Some(i) = change.index() else { continue };
        let boot = before
            .pointer(&format!("/disks/{i}/boot"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if !boot {
            return Err(format!(
                "{guest} patch changes providerSpec.value.disks[{i}].image of a disk that is not a boot disk, which a boot image decision may not touch"
            ));
        }
        let image = change.after.and_then(Value::as_str).unwrap_or("");
        if image != published {
            return Err(format!(
                "{guest} patch sets providerSpec.value.disks[{i}].image to {}, which is not the image the stream publishes for {arch} ({published})",
                quote(image, QUOTE)
            ));
        }
    }
    Ok(published)
}

fn azure_image(guest: &str, stream: &Stream, arch: &str, after: &Value) -> Result<String, String> {
    let field = |key: &str| str_at(after, &format!("/image/{key}")).unwrap_or("");
    let [publisher, offer, sku, version, resource_id, kind] =
        ["publisher", "offer", "sku", "version", "resourceID", "type"].map(field);
    let urn = format!("{publisher}:{offer}:{sku}:{version}");
    let marketplace = stream.azure_marketplace(arch).ok_or_else(|| {
        format!("{guest} patch sets image {urn}, but the stream publishes no Azure marketplace images for {arch}")
    })?;
    let sets = [
        (&marketplace.no_purchase_plan, "MarketplaceNoPlan"),
        (&marketplace.ocp, "MarketplaceWithPlan"),
        (&marketplace.opp, "MarketplaceWithPlan"),
        (&marketplace.oke, "MarketplaceWithPlan"),
        (&marketplace.ocp_emea, "MarketplaceWithPlan"),
        (&marketplace.opp_emea, "MarketplaceWithPlan"),
        (&marketplace.oke_emea, "MarketplaceWithPlan"),
    ];
    let same = |image: &Option<AzureMarketplaceImage>| {
        image.as_ref().is_some_and(|i| {
            !i.publisher.is_empty()
                && (
                    i.publisher.as_str(),
                    i.offer.as_str(),
                    i.sku.as_str(),
                    i.version.as_str(),
                ) == (publisher, offer, sku, version)
        })
    };
    let published = sets.iter().find_map(|(set, wanted_type)| {
        let set = set.as_ref()?;
        (same(&set.hyper_v_gen1) || same(&set.hyper_v_gen2)).then_some(*wanted_type)
    });
    match published {
        None => Err(format!(
            "{guest} patch sets providerSpec.value.image to {}, which is not an image the stream publishes for {arch}",
            quote(&urn, QUOTE)
        )),
        Some(_) if !resource_id.is_empty() => Err(format!(
            "{guest} patch sets providerSpec.value.image.resourceID to {}; a marketplace image has none",
            quote(resource_id, QUOTE)
        )),
        Some(wanted) if kind != wanted => Err(format!(
            "{guest} patch sets providerSpec.value.image.type to {}, but the stream's image {urn} is {wanted}",
            quote(kind, QUOTE)
        )),
        Some(_) => Ok(urn),
    }
}

/// A stub upgrade is the MachineSet's own and faithful: only when the host
/// passed user data, only for the Secret the MachineSet references, only
/// the `stub-ignition-upgraded-to` annotation, and a spec 3 config with
/// exactly the original stub's meaning.
fn stub_upgrade(
    guest: &str,
    job: &JobInputs<'_>,
    upgrade: Option<&UserDataUpgrade>,
) -> Result<(), String> {
    let referenced = job.machineset.user_data_secret_name().ok().flatten();
    let Some(upgrade) = upgrade else {
        // Beyond the issue: a spec 2 stub the new image cannot read must
        // be converted before the MachineSet moves.
        if let Some(text) = job.user_data
            && let Ok(StubUpgrade::Converted(_)) = upgrade_stub(text)
        {
            return Err(format!(
                "{guest} patch moves the boot image but leaves the spec 2 stub of Secret {} unconverted",
                referenced.unwrap_or("(none)")
            ));
        }
        return Ok(());
    };
    if referenced != Some(upgrade.name.as_str()) {
        return Err(format!(
            "{guest} decision upgrades Secret {}, but the MachineSet's userDataSecret.name is {}",
            quote(&upgrade.name, QUOTE),
            referenced.map_or_else(|| "not set".to_owned(), |n| quote(n, QUOTE))
        ));
    }
    let Some(original) = job.user_data else {
        return Err(format!(
            "{guest} decision upgrades the stub of Secret {} although the host passed no user data",
            quote(&upgrade.name, QUOTE)
        ));
    };
    let converted = base64::engine::general_purpose::STANDARD
        .decode(&upgrade.data.user_data)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .filter(Value::is_object)
        .ok_or_else(|| format!("{guest} stub upgrade is not a base64 JSON Ignition config"))?;
    let version = str_at(&converted, "/ignition/version").unwrap_or("");
    if !is_spec3(version) {
        return Err(format!(
            "{guest} stub upgrade has Ignition version {}, not spec 3.x",
            quote(version, QUOTE)
        ));
    }
    for (key, value) in &upgrade.annotations {
        if key != ANNOTATION_UPGRADED_TO {
            return Err(format!(
                "{guest} stub upgrade sets annotation {} on the Secret; only {ANNOTATION_UPGRADED_TO} may be set",
                quote(key, QUOTE)
            ));
        }
        if value != version {
            return Err(format!(
                "{guest} stub upgrade annotates version {} but converts to {version}",
                quote(value, QUOTE)
            ));
        }
    }
    faithful(guest, original, &converted)
}

fn is_spec3(version: &str) -> bool {
    let parts: Vec<&str> = version.split('.').collect();
    parts.len() == 3
        && parts[0] == "3"
        && parts[1..]
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The converted config says what the original said and nothing else:
/// the same merge/replace sources (URL, verification hash, HTTP headers),
/// certificate authorities, TLS and timeouts, and no section (`passwd`,
/// `storage`, `systemd`, ...) the original does not have. A section the
/// original does have must be what the host's own converter makes of it.
fn faithful(guest: &str, original: &str, converted: &Value) -> Result<(), String> {
    let source: Value = serde_json::from_str(original)
        .map_err(|e| format!("{guest} stub upgrade converts a stub that is not JSON: {e}"))?;
    let source_version = str_at(&source, "/ignition/version").unwrap_or("");
    let mut expected = pruned(source.pointer("/ignition").cloned().unwrap_or(Value::Null));
    if let Some(ign) = expected.as_object_mut() {
        ign.remove("version");
        if !source_version.starts_with('3')
            && let Some(Value::Object(config)) = ign.get_mut("config")
            && let Some(append) = config.remove("append")
        {
            config.insert("merge".into(), append);
        }
    }
    let mut got = pruned(
        converted
            .pointer("/ignition")
            .cloned()
            .unwrap_or(Value::Null),
    );
    if let Some(ign) = got.as_object_mut() {
        ign.remove("version");
    }
    let expected = pruned(expected);
    let got = pruned(got);
    if got != expected {
        return Err(format!(
            "{guest} stub upgrade changes the stub's ignition section (sources, certificate authorities, TLS or timeouts): expected {}, got {}",
            bounded(expected.to_string(), QUOTE),
            bounded(got.to_string(), QUOTE)
        ));
    }
    // Every other section: absent unless the original has it, and then what
    // the host's own (trusted) converter makes of it.
    let native: Option<Value> = match upgrade_stub(original) {
        Ok(StubUpgrade::Converted(text)) => serde_json::from_str(&text).ok(),
        _ => None,
    };
    let empty = Map::new();
    let sections = converted.as_object().unwrap_or(&empty);
    for (key, value) in sections {
        if key == "ignition" || pruned(value.clone()).is_null() {
            continue;
        }
        let has = source
            .get(key)
            .is_some_and(|v| !pruned(v.clone()).is_null());
        if !has {
            return Err(format!(
                "{guest} stub upgrade adds {}, which the original stub does not have",
                quote(key, QUOTE)
            ));
        }
        let want = native
            .as_ref()
            .and_then(|n| n.get(key))
            .cloned()
            .map(pruned)
            .unwrap_or(Value::Null);
        if pruned(value.clone()) != want {
            return Err(format!(
                "{guest} stub upgrade changes the stub's {} section",
                quote(key, QUOTE)
            ));
        }
    }
    Ok(())
}

/// `value` without nulls, empty arrays and empty objects, recursively, so
/// that "absent" and "empty" compare equal.
fn pruned(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let map: Map<String, Value> = map
                .into_iter()
                .map(|(k, v)| (k, pruned(v)))
                .filter(|(_, v)| !v.is_null())
                .collect();
            if map.is_empty() {
                Value::Null
            } else {
                Value::Object(map)
            }
        }
        Value::Array(items) if items.is_empty() => Value::Null,
        Value::Array(items) => Value::Array(items.into_iter().map(pruned).collect()),
        other => other,
    }
}
