//! AWS: the new `ami.id` is the AMI the stream publishes for the
//! MachineSet's architecture in its region.

use mco_bootimage::Stream;
use mco_k8s_rules::quote;
use serde_json::Value;

use super::{QUOTE, str_at};
pub(super) fn image(
    guest: &str,
    stream: &Stream,
    arch: &str,
    after: &Value,
) -> Result<String, String> {
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
