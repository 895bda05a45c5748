//! GCP: only the `image` of boot disks changes, to the image the stream
//! publishes for the architecture; the disks keep their order.

use mco_bootimage::Stream;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{About, Platform, provider_spec};
use crate::proposal::{May, Owned, Patched, Proposal, Rule, owned};

pub(crate) struct Gcp;

/// Its row of the platform table.
const ABOUT: About = About::new("GCP", "bootimage-gcp.wasm", "GCPMachineProviderSpec", OWNED);

impl Platform for Gcp {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn check_shape(&self, before: &Value, after: &Patched<'_>) -> Result<(), Rule> {
        disk_order(before, after)
    }

    /// The image the patch sets, if the stream publishes it for this
    /// MachineSet.
    fn image(&self, proposal: &Proposal<'_>) -> Result<String, Rule> {
        let &Proposal {
            stream,
            arch,
            changes,
            before,
            ..
        } = proposal;
        let published = stream
            .gcp_image_path(arch)
            .map_err(|e| Rule::GcpNothingPublished {
                arch: arch.to_owned(),
                reason: e.to_string(),
            })?;
        for change in changes {
            let Some(index) = change.index() else {
                continue;
            };
            let boot = before
                .pointer(&format!("/disks/{index}/boot"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if !boot {
                return Err(Rule::NotBootDisk { index });
            }
            let image = change.after.and_then(Value::as_str).unwrap_or("");
            if image != published {
                return Err(Rule::GcpNotPublished {
                    index,
                    image: image.to_owned(),
                    arch: arch.to_owned(),
                    published,
                });
            }
        }
        Ok(published)
    }

    fn fixture(&self) -> Value {
        json!({
            "kind": "GCPMachineProviderSpec",
            "disks": [{"boot": true, "autoDelete": true, "sizeGb": 128,
                       "image": "projects/rhcos-cloud/global/images/rhcos-418-94-gcp-x86-64"}],
            "userDataSecret": {"name": "worker-user-data"},
        })
    }

    /// The boot disk's `image` (the first disk's when none says `boot`).
    fn current_image(&self, spec: &Value) -> Option<String> {
        let disks = provider_spec::<GcpSpec>(spec)?.disks?;
        let boot = disks
            .iter()
            .find(|d| d.boot == Some(true))
            .or_else(|| disks.first())?;
        boot.image.clone()
    }

    fn stream_image(&self, stream: &Stream, spec: &Value, arch: &str) -> Option<String> {
        provider_spec::<GcpSpec>(spec)?.disks?;
        stream.gcp_image_path(arch).ok()
    }
}

/// The `image` of boot disks only (every other disk and disk field
/// byte-identical, the order kept).
const OWNED: &[Owned] = &[owned("disks[].image", May::SetImage)];

/// What the status view reads of a GCP providerSpec.
#[derive(Deserialize)]
struct GcpSpec {
    disks: Option<Vec<GcpDisk>>,
}

#[derive(Deserialize)]
struct GcpDisk {
    boot: Option<bool>,
    image: Option<String>,
}

/// A GCP patch must keep the disks in their order: reordering moves the
/// boot disk, so it is named as such rather than as some changed field.
fn disk_order(before: &Value, after: &Patched<'_>) -> Result<(), Rule> {
    let (Some(Value::Array(b)), Some(Value::Array(a))) = (before.get("disks"), after.get("disks"))
    else {
        return Ok(());
    };
    if a.len() != b.len() {
        return Err(Rule::DiskCount {
            before: b.len(),
            after: a.len(),
        });
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
            return Err(Rule::DisksReordered);
        }
    }
    Ok(())
}
