//! EC2 in the boot image job, sans-IO: what the planner asks EC2 before an
//! AWS guest decides ([`Ec2Read`]), what comes back ([`Ec2Answer`]), and
//! how answers become the guest's [`Ec2Facts`]. Upstream main asks
//! `DescribeImages` who owns a MachineSet's AMI, and for a marketplace AMI
//! which AMIs its product has in the region
//! (`pkg/controller/bootimage/aws_helpers.go`); here the host makes those
//! calls (the controller live, `eval bootimage --ec2` from a file, both
//! through the planner) and the guest applies upstream's rules to the
//! answers.
//!
//! A read is made in rounds: first [`Ec2Read::Image`] for every AWS
//! MachineSet whose `ami.id` is set; then, for an image the marketplace
//! owns whose name ends in a product ID, [`Ec2Read::Marketplace`].
//! [`Ec2Answer::Unreachable`] or [`Ec2Answer::Denied`] in either round
//! means EC2 was not consulted for that MachineSet ([`Unconsulted`]): the
//! guest decides from the static lists, and the MachineSet's decision says
//! so, and why.

use mco_bootimage::MachineSetView;
pub use mco_bootimage::ec2::{Ec2Facts, Ec2Image, MARKETPLACE_OWNER, product_id};
use serde::Deserialize;

pub mod live;

/// The first read for an AWS MachineSet (or ControlPlaneMachineSet): its
/// `ami.id` in its `placement.region`. `None` when either is missing or
/// empty, or not a string: the guest decides without EC2 and says why
/// (upstream would ask EC2 in no region, or for no AMI, and fail).
pub fn image_read(ms: &MachineSetView) -> Option<Ec2Read> {
    let spec = ms.provider_spec.as_deref()?;
    let text = |pointer: &str| {
        spec.pointer(pointer)
            .and_then(serde_json::Value::as_str)
            .filter(|text| !text.is_empty())
    };
    Some(Ec2Read::Image {
        region: text("/placement/region")?.to_owned(),
        image_id: text("/ami/id")?.to_owned(),
    })
}

/// One `DescribeImages` call the planner needs answered.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ec2Read {
    /// `DescribeImages(ImageIds=[image_id])` in `region`.
    Image { region: String, image_id: String },
    /// `DescribeImages(Owners=[aws-marketplace], Filters=[name=*<product_id>*])`
    /// in `region`, every page.
    Marketplace { region: String, product_id: String },
}

impl Ec2Read {
    pub fn region(&self) -> &str {
        match self {
            Ec2Read::Image { region, .. } | Ec2Read::Marketplace { region, .. } => region,
        }
    }
}

impl std::fmt::Display for Ec2Read {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ec2Read::Image { region, image_id } => {
                write!(f, "DescribeImages of {image_id} in {region}")
            }
            Ec2Read::Marketplace { region, product_id } => write!(
                f,
                "DescribeImages of marketplace product {product_id} in {region}"
            ),
        }
    }
}

/// EC2's answer to one [`Ec2Read`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ec2Answer {
    /// To [`Ec2Read::Image`]: the image, or `None` when EC2 has no such
    /// image in the region.
    Image(Option<Ec2Image>),
    /// To [`Ec2Read::Marketplace`]: the product's images in the region.
    Marketplace(Vec<Ec2Image>),
    /// EC2 was not consulted: no credentials, a refused or failed call, a
    /// deadline or byte bound hit. The reason is shown in the MachineSet's
    /// decision and Event, so it never carries a secret.
    Unreachable(String),
    /// EC2 answered, and refused the credentials (`AuthFailure`,
    /// `UnauthorizedOperation`): not consulted either, for a reason an
    /// administrator fixes in the Secret or its IAM policy, not by waiting.
    Denied(String),
}

/// Why EC2 was not consulted for a MachineSet, so that the static AMI
/// lists decided: Progressing and the MachineSet's Event say which, in
/// words of their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unconsulted {
    /// [`Ec2Answer::Unreachable`].
    Unreachable(String),
    /// [`Ec2Answer::Denied`].
    Denied(String),
}

impl Unconsulted {
    /// What went wrong, as the step that failed said it.
    pub fn why(&self) -> &str {
        match self {
            Unconsulted::Unreachable(why) | Unconsulted::Denied(why) => why,
        }
    }
}

/// Where the EC2 rounds of one MachineSet stand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ec2Progress {
    /// The image read is wanted.
    Image(Ec2Read),
    /// The image is described; the marketplace read is wanted.
    Marketplace { image: Ec2Image, read: Ec2Read },
    /// Both rounds done: the guest decides with these facts, or without
    /// EC2, for this reason.
    Done(Result<Ec2Facts, Unconsulted>),
}

impl Ec2Progress {
    /// The read this MachineSet waits for, if any.
    pub fn read(&self) -> Option<&Ec2Read> {
        match self {
            Ec2Progress::Image(read) | Ec2Progress::Marketplace { read, .. } => Some(read),
            Ec2Progress::Done(_) => None,
        }
    }

    /// The next step once `answer` came for [`Ec2Progress::read`]. An
    /// answer of the wrong kind (a caller's bug) counts as unreachable, so
    /// the static lists decide rather than a half-read picture.
    pub fn next(self, answer: Ec2Answer) -> Ec2Progress {
        match (self, answer) {
            (_, Ec2Answer::Unreachable(why)) => {
                Ec2Progress::Done(Err(Unconsulted::Unreachable(why)))
            }
            (_, Ec2Answer::Denied(why)) => Ec2Progress::Done(Err(Unconsulted::Denied(why))),
            (Ec2Progress::Image(Ec2Read::Image { region, .. }), Ec2Answer::Image(image)) => {
                match image {
                    Some(image) if image.owner_id == MARKETPLACE_OWNER => {
                        match product_id(&image.name) {
                            Some(product) => Ec2Progress::Marketplace {
                                read: Ec2Read::Marketplace {
                                    region,
                                    product_id: product.to_owned(),
                                },
                                image,
                            },
                            None => Ec2Progress::Done(Ok(Ec2Facts {
                                image: Some(image),
                                marketplace: Vec::new(),
                            })),
                        }
                    }
                    image => Ec2Progress::Done(Ok(Ec2Facts {
                        image,
                        marketplace: Vec::new(),
                    })),
                }
            }
            (Ec2Progress::Marketplace { image, .. }, Ec2Answer::Marketplace(images)) => {
                Ec2Progress::Done(Ok(Ec2Facts {
                    image: Some(image),
                    marketplace: images,
                }))
            }
            (progress, answer) => Ec2Progress::Done(Err(Unconsulted::Unreachable(format!(
                "internal error: {answer:?} does not answer {:?}",
                progress.read()
            )))),
        }
    }
}

/// What EC2 holds in the MachineSet's region, as `eval bootimage --ec2
/// FILE` reads it (the eval contract): YAML or JSON, `{"images":
/// [{"imageId": "ami-…", "ownerId": "531415883065", "name": "…",
/// "description": "…", "creationDate": "…"}]}`. Fields EC2 gives beyond
/// these are ignored, as in every input file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Ec2Inventory {
    pub images: Vec<Ec2Image>,
}

impl Ec2Inventory {
    /// EC2's answer to `read` from this inventory, filtered as EC2 filters:
    /// by image ID, or by the marketplace owner and the product ID anywhere
    /// in the name (`name=*<product>*`).
    pub fn answer(&self, read: &Ec2Read) -> Ec2Answer {
        let images = &self.images;
        match read {
            Ec2Read::Image { image_id, .. } => Ec2Answer::Image(
                images
                    .iter()
                    .find(|image| &image.image_id == image_id)
                    .cloned(),
            ),
            Ec2Read::Marketplace { product_id, .. } => Ec2Answer::Marketplace(
                images
                    .iter()
                    .filter(|image| {
                        image.owner_id == MARKETPLACE_OWNER
                            && image.name.contains(product_id.as_str())
                    })
                    .cloned()
                    .collect(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OCP: &str = "59ead7de-2540-4653-a8b0-fa7926d5c845";

    fn image(id: &str, owner: &str, name: &str) -> Ec2Image {
        Ec2Image {
            image_id: id.into(),
            owner_id: owner.into(),
            name: name.into(),
            description: "RHEL CoreOS 9.6 9.6.20260210-0 x86_64".into(),
            creation_date: "2026-02-10T00:00:00.000Z".into(),
        }
    }

    fn inventory() -> Ec2Inventory {
        Ec2Inventory {
            images: vec![
                image("ami-rh", "531415883065", "rhcos-9.6"),
                image("ami-m1", MARKETPLACE_OWNER, &format!("RHCOS-9.4-{OCP}")),
                image("ami-m2", MARKETPLACE_OWNER, &format!("RHCOS-9.6-{OCP}")),
                image("ami-copy", "123456789012", &format!("copy-{OCP}")),
                image("ami-plain", MARKETPLACE_OWNER, "rhcos-no-product"),
            ],
        }
    }

    fn read(id: &str) -> Ec2Read {
        Ec2Read::Image {
            region: "us-east-1".into(),
            image_id: id.into(),
        }
    }

    #[test]
    fn a_marketplace_image_with_a_product_asks_a_second_round() {
        let ec2 = inventory();
        let first = Ec2Progress::Image(read("ami-m1"));
        let answer = ec2.answer(first.read().unwrap());
        let second = first.next(answer);
        let Some(marketplace) = second.read().cloned() else {
            panic!("{second:?}");
        };
        assert_eq!(
            marketplace,
            Ec2Read::Marketplace {
                region: "us-east-1".into(),
                product_id: OCP.into()
            }
        );
        // Only the marketplace owner's images of that product.
        let Ec2Progress::Done(Ok(facts)) = second.next(ec2.answer(&marketplace)) else {
            panic!("the second round ends the reads");
        };
        let ids: Vec<&str> = facts
            .marketplace
            .iter()
            .map(|i| i.image_id.as_str())
            .collect();
        assert_eq!(ids, ["ami-m1", "ami-m2"]);
        assert_eq!(facts.image.map(|i| i.image_id), Some("ami-m1".into()));
    }

    #[test]
    fn other_images_are_done_after_one_round() {
        let ec2 = inventory();
        for (id, described) in [
            ("ami-rh", true),
            ("ami-plain", true),
            ("ami-copy", true),
            ("ami-gone", false),
        ] {
            let progress = Ec2Progress::Image(read(id)).next(ec2.answer(&read(id)));
            match progress {
                Ec2Progress::Done(Ok(facts)) => {
                    assert_eq!(facts.image.is_some(), described, "{id}");
                    assert!(facts.marketplace.is_empty());
                }
                other => panic!("{id}: {other:?}"),
            }
        }
    }

    #[test]
    fn unreachable_or_mismatched_answers_end_the_reads_unconsulted() {
        let progress = Ec2Progress::Image(read("ami-m1"));
        assert_eq!(
            progress
                .clone()
                .next(Ec2Answer::Unreachable("no credentials".into())),
            Ec2Progress::Done(Err(Unconsulted::Unreachable("no credentials".into())))
        );
        assert_eq!(
            progress
                .clone()
                .next(Ec2Answer::Denied("AuthFailure".into())),
            Ec2Progress::Done(Err(Unconsulted::Denied("AuthFailure".into())))
        );
        assert!(matches!(
            progress.next(Ec2Answer::Marketplace(Vec::new())),
            Ec2Progress::Done(Err(Unconsulted::Unreachable(why))) if why.starts_with("internal error")
        ));
    }

    #[test]
    fn inventory_files_list_images() {
        let parsed: Ec2Inventory = serde_json::from_str(
            r#"{"images": [{"imageId": "ami-1", "ownerId": "531415883065", "state": "available"}]}"#,
        )
        .unwrap();
        assert_eq!(parsed.images.len(), 1);
        for broken in [
            r#"[]"#,
            r#"{}"#,
            r#"{"images": {"imageId": "ami-1"}}"#,
            r#"{"images": [{"imageId": 5, "ownerId": "1"}]}"#,
            r#"{"images": [{"imageId": "ami-1"}]}"#,
            r#"{"images": null}"#,
        ] {
            assert!(
                serde_json::from_str::<Ec2Inventory>(broken).is_err(),
                "{broken}"
            );
        }
    }
}
