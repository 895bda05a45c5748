//! AWS: the new `ami.id` is the AMI the stream publishes for the
//! MachineSet's architecture in its region or, for a MachineSet on a
//! marketplace (or ROSA) AMI, an AMI of the same product that EC2 listed
//! to the host in this pass, in the MachineSet's region, at or below the
//! stream's release.
//!
//! The static list of RHCOS AMIs vouches for the AMI a MachineSet leaves
//! (that is the guest's rule), never for the one it moves to: the list
//! says nothing about region, architecture or release, so as a target it
//! would let a guest move a MachineSet back to any AMI ever published.

use mco_bootimage::ec2::{self, Ec2Facts, MARKETPLACE_OWNER};

use super::{Proposal, Rule};

/// The AMI the patch sets, if the stream or EC2's marketplace answer
/// vouches for it.
pub(super) fn image(proposal: &Proposal<'_>) -> Result<String, Rule> {
    let (arch, after) = (proposal.arch, proposal.after);
    let region = after.str_at("/placement/region").unwrap_or("");
    let id = after.str_at("/ami/id").ok_or(Rule::AmiWithoutId)?;
    let published = proposal.stream.aws_region_image(arch, region);
    if let Ok(published) = published
        && published.image == id
    {
        return Ok(id.to_owned());
    }
    if let Some(ec2) = proposal.ec2
        && let Some(product) = marketplace_product(ec2)
    {
        return match listed(proposal, ec2, product, id) {
            true => Ok(id.to_owned()),
            false => Err(Rule::AwsNotVouched {
                id: id.to_owned(),
                arch: arch.to_owned(),
                region: region.to_owned(),
                product: product.to_owned(),
            }),
        };
    }
    match published {
        Ok(published) => Err(Rule::AwsNotPublished {
            id: id.to_owned(),
            arch: arch.to_owned(),
            region: region.to_owned(),
            published: published.image.clone(),
        }),
        Err(e) => Err(Rule::AwsNothingPublished {
            id: id.to_owned(),
            arch: arch.to_owned(),
            region: region.to_owned(),
            reason: e.to_string(),
        }),
    }
}

/// The marketplace product of the MachineSet's AMI, as the host read it.
fn marketplace_product(ec2: &Ec2Facts) -> Option<&str> {
    let image = ec2.image.as_ref()?;
    if image.owner_id != MARKETPLACE_OWNER {
        return None;
    }
    ec2::product_id(&image.name)
}

/// Whether EC2 listed `id` as an image of `product` (its name ending in
/// it) whose description names a release at or below the stream's.
fn listed(proposal: &Proposal<'_>, ec2: &Ec2Facts, product: &str, id: &str) -> bool {
    let release = proposal
        .stream
        .architecture(proposal.arch)
        .ok()
        .and_then(|arch| arch.artifacts.get("aws"))
        .and_then(|aws| ec2::release_token(&aws.release).ok());
    let Some(target) = release else {
        return false;
    };
    ec2.marketplace.iter().any(|image| {
        image.image_id == id
            && ec2::product_id(&image.name) == Some(product)
            && ec2::description_release(&image.description)
                .is_some_and(|(_, token)| token <= target)
    })
}
