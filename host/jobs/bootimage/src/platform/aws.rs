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
use mco_bootimage::{ClusterFacts, Decision, Stream};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{About, Platform, provider_spec};
use crate::objects::Infrastructure;
use crate::prepared::Prepared;
use crate::proposal::{May, Owned, Proposal, Rule, owned};

/// Infrastructure `status.platformStatus.type` of AWS.
pub(crate) const NAME: &str = "AWS";

/// The smoke fixture's AMI: an old RHCOS one.
const OLD_AMI: &str = "ami-0c5a8e7f3b2d1e4f6";

pub(crate) struct Aws;

/// Its row of the platform table.
const ABOUT: About = About::new(
    NAME,
    "bootimage-aws.wasm",
    "AWSMachineProviderConfig",
    OWNED,
);

impl Platform for Aws {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    /// The AMI the patch sets, if the stream or EC2's marketplace answer
    /// vouches for it.
    fn image(&self, proposal: &Proposal<'_>) -> Result<String, Rule> {
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

    /// EC2 is asked only for what the guest will look at: the common rules
    /// passed and the providerSpec names an AMI by ID in a region.
    fn prepare(&self, _infra: &Infrastructure, prepared: &mut Prepared) -> Option<Decision> {
        if mco_bootimage::common_rules(&prepared.machineset, &prepared.cluster).is_ok() {
            prepared.ec2 = crate::ec2::image_read(&prepared.machineset);
        }
        None
    }

    fn fixture(&self) -> Value {
        json!({
            "kind": "AWSMachineProviderConfig",
            "ami": {"id": OLD_AMI},
            "placement": {"region": "us-east-1", "availabilityZone": "us-east-1a"},
            "userDataSecret": {"name": "worker-user-data"},
        })
    }

    /// The fixture's AMI counts as an RHCOS image. The smoke decision is
    /// made from the lists: no EC2 is asked.
    fn smoke_facts(&self, facts: &mut ClusterFacts) {
        facts.known_images.insert(OLD_AMI.to_owned());
    }

    /// `ami.id`.
    fn current_image(&self, spec: &Value) -> Option<String> {
        provider_spec::<AwsSpec>(spec)?.ami?.id
    }

    /// The stream's AMI for the providerSpec's region.
    fn stream_image(&self, stream: &Stream, spec: &Value, arch: &str) -> Option<String> {
        let spec = provider_spec::<AwsSpec>(spec)?;
        spec.ami?;
        let region = spec.placement?.region?;
        let published = stream.aws_region_image(arch, &region).ok()?;
        Some(published.image.clone())
    }
}

/// Sets `ami.id` and clears `ami.arn` / `ami.filters` (only one of the
/// three may be set).
const OWNED: &[Owned] = &[
    owned("ami.id", May::SetImage),
    owned("ami.arn", May::Clear),
    owned("ami.filters", May::Clear),
];

/// What the status view reads of an AWS providerSpec.
#[derive(Deserialize)]
struct AwsSpec {
    ami: Option<AmiReference>,
    placement: Option<Placement>,
}

#[derive(Deserialize)]
struct AmiReference {
    id: Option<String>,
}

#[derive(Deserialize)]
struct Placement {
    region: Option<String>,
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

#[cfg(test)]
mod tests {
    use mco_bootimage::Stream;
    use mco_bootimage::ec2::{Ec2Image, RED_HAT_OWNER};
    use serde_json::{Value, json};

    use super::*;

    const OCP: &str = "59ead7de-2540-4653-a8b0-fa7926d5c845";
    const OKE: &str = "963b36c3-de6f-48ed-b802-2b38b2a2cdeb";
    const STREAM_AMI: &str = "ami-stream";

    fn offer(id: &str, release: &str, product: &str) -> Ec2Image {
        Ec2Image {
            image_id: id.into(),
            owner_id: MARKETPLACE_OWNER.into(),
            name: format!("RHCOS-{release}-{product}"),
            description: format!("RHEL CoreOS {release} x86_64"),
            creation_date: "2026-01-01T00:00:00.000Z".into(),
        }
    }

    /// The AMI a patch from `ami-current` to `to` sets, given `ec2`.
    fn check(to: &str, ec2: Option<&Ec2Facts>) -> Result<String, Rule> {
        let stream = Stream::parse(
            &json!({"stream": "s", "architectures": {"x86_64": {
                "artifacts": {"aws": {"release": "9.6.20260210-0"}},
                "images": {"aws": {"regions": {"us-east-1": {"release": "9.6.20260210-0", "image": STREAM_AMI}}}}}}})
            .to_string(),
        )
        .unwrap();
        let before: Value =
            json!({"ami": {"id": "ami-current"}, "placement": {"region": "us-east-1"}});
        let patch = json!({"ami": {"id": to}});
        let after = crate::proposal::Patched::new(&before, Some(&patch));
        Aws.image(&Proposal {
            stream: &stream,
            arch: "x86_64",
            before: &before,
            after: &after,
            changes: &[],
            import: None,
            vcenter: None,
            ec2,
        })
    }

    fn marketplace(listed: Vec<Ec2Image>) -> Ec2Facts {
        Ec2Facts {
            image: Some(offer("ami-current", "9.4.20250101-0", OCP)),
            marketplace: listed,
        }
    }

    #[test]
    fn the_stream_vouches_whatever_ec2_said() {
        let facts = marketplace(vec![]);
        for ec2 in [None, Some(&facts)] {
            assert_eq!(check(STREAM_AMI, ec2).ok().as_deref(), Some(STREAM_AMI));
        }
    }

    #[test]
    fn a_marketplace_ami_is_vouched_for_by_ec2s_listing_of_its_product_only() {
        let facts = marketplace(vec![
            offer("ami-96", "9.6.20260210-0", OCP),
            offer("ami-98", "9.8.20260428-0", OCP),
            offer("ami-oke", "9.6.20260210-0", OKE),
            Ec2Image {
                name: format!("{OCP}-renamed"),
                ..offer("ami-inside", "9.6.20260210-0", OCP)
            },
        ]);
        assert_eq!(
            check("ami-96", Some(&facts)).ok().as_deref(),
            Some("ami-96")
        );
        // Above the stream's release, another product, the product ID not
        // at the end of the name, or not listed at all.
        for refused in ["ami-98", "ami-oke", "ami-inside", "ami-elsewhere"] {
            let err = check(refused, Some(&facts)).err().map(|e| e.to_string());
            assert!(
                err.as_deref().is_some_and(
                    |e| e.contains("neither the AMI the stream publishes") && e.contains(OCP)
                ),
                "{refused}: {err:?}"
            );
        }
    }

    #[test]
    fn without_a_marketplace_image_only_the_stream_vouches() {
        // A Red Hat AMI, or a listing the host made for no marketplace
        // image: the listing vouches for nothing.
        let red_hat = Ec2Facts {
            image: Some(Ec2Image {
                owner_id: RED_HAT_OWNER.into(),
                ..offer("ami-current", "9.4.20250101-0", OCP)
            }),
            marketplace: vec![offer("ami-96", "9.6.20260210-0", OCP)],
        };
        for ec2 in [None, Some(&red_hat)] {
            assert!(
                matches!(check("ami-96", ec2), Err(Rule::AwsNotPublished { .. })),
                "{ec2:?}"
            );
        }
    }
}
