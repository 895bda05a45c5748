//! AWS: the new `ami.id` is the AMI the stream publishes for the
//! MachineSet's architecture in its region.

use super::{Proposal, Rule};

/// The AMI the patch sets, if it is the one the stream publishes for the
/// MachineSet's architecture and region.
pub(super) fn image(proposal: &Proposal<'_>) -> Result<String, Rule> {
    let (arch, after) = (proposal.arch, proposal.after);
    let region = after.str_at("/placement/region").unwrap_or("");
    let id = after.str_at("/ami/id").ok_or(Rule::AmiWithoutId)?;
    let published = proposal
        .stream
        .aws_region_image(arch, region)
        .map_err(|e| Rule::AwsNothingPublished {
            id: id.to_owned(),
            arch: arch.to_owned(),
            region: region.to_owned(),
            reason: e.to_string(),
        })?
        .image
        .as_str();
    if id != published {
        return Err(Rule::AwsNotPublished {
            id: id.to_owned(),
            arch: arch.to_owned(),
            region: region.to_owned(),
            published: published.to_owned(),
        });
    }
    Ok(id.to_owned())
}
