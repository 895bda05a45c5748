//! AWS: the new `ami.id` is the AMI the stream publishes for the
//! MachineSet's architecture in its region.

use mco_k8s_rules::quote;

use super::{Proposal, QUOTE, str_at};

/// The AMI the patch sets, if it is the one the stream publishes for the
/// MachineSet's architecture and region.
pub(super) fn image(proposal: &Proposal<'_>) -> Result<String, String> {
    let (guest, arch) = (proposal.guest, proposal.arch);
    let after = proposal.after;
    let region = str_at(after, "/placement/region").unwrap_or("");
    let id = str_at(after, "/ami/id").ok_or_else(|| {
        format!("{guest} patch leaves providerSpec.value.ami without a string id")
    })?;
    let published = proposal
        .stream
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
