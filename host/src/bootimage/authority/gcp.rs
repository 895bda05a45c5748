//! GCP: only the `image` of boot disks changes, to the image the stream
//! publishes for the architecture; the disks keep their order.

use serde_json::Value;

use super::{Patched, Proposal, Rule};

/// A GCP patch must keep the disks in their order: reordering moves the
/// boot disk, so it is named as such rather than as some changed field.
pub(super) fn disk_order(before: &Value, after: &Patched<'_>) -> Result<(), Rule> {
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

/// The image the patch sets, if the stream publishes it for this
/// MachineSet.
pub(super) fn image(proposal: &Proposal<'_>) -> Result<String, Rule> {
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
