//! GCP: only the `image` of boot disks changes, to the image the stream
//! publishes for the architecture; the disks keep their order.

use mco_k8s_rules::quote;
use serde_json::Value;

use super::{Proposal, QUOTE};

/// A GCP patch must keep the disks in their order: reordering moves the
/// boot disk, so it is named as such rather than as some changed field.
pub(super) fn disk_order(guest: &str, before: &Value, after: &Value) -> Result<(), String> {
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

/// The image the patch sets, if the stream publishes it for this
/// MachineSet.
pub(super) fn image(proposal: &Proposal<'_>) -> Result<String, String> {
    let &Proposal {
        guest,
        stream,
        arch,
        changes,
        before,
        ..
    } = proposal;
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
