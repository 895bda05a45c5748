//! What EC2 says about AMIs, as the AWS rule reads it (upstream main
//! `pkg/controller/bootimage/aws_helpers.go` and `marketplace/marketplace.go`).
//! A pure rule cannot call EC2, so the host asks `DescribeImages` first and
//! hands the answers over as [`Ec2Facts`]; this module holds the parts of
//! upstream's logic that read those answers: the owner accounts, the
//! marketplace product ID in an AMI name, the release in an AMI
//! description, and the choice among a product's AMIs. The host's planner
//! uses [`product_id`] too, to know which marketplace read to make.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

/// The Red Hat account that owns the standard RHCOS AMIs.
pub const RED_HAT_OWNER: &str = "531415883065";
/// The AWS account that owns every AWS Marketplace AMI (ROSA's included).
pub const MARKETPLACE_OWNER: &str = "679593333241";
/// ROSA Classic's marketplace product.
pub const ROSA_PRODUCT: &str = "34850061-abaf-402d-92df-94325c9e947f";

/// Upstream's marketplace products (`marketplace.Products`): names for
/// messages only; any product ID is handled alike.
const PRODUCTS: [(&str, &str); 10] = [
    ("59ead7de-2540-4653-a8b0-fa7926d5c845", "OCP x86_64"),
    ("963b36c3-de6f-48ed-b802-2b38b2a2cdeb", "OKE x86_64"),
    ("f5da01a6-d046-487c-9072-42fe53b1cad4", "OPP x86_64"),
    ("abc249f8-7440-45f7-a4b1-c026baff64c1", "OCP arm64"),
    ("d2d3ebcd-c1ca-43d8-bf0a-530433200f35", "OKE arm64"),
    ("be6d3e94-c8dc-4a3e-9218-4b449b11f06f", "OPP arm64"),
    ("962791c7-3ae5-46d1-ba62-c7a5ebac54fd", "OCP EMEA x86_64"),
    ("7026c8d7-392c-4010-b93c-f93f7bc5495f", "OKE EMEA x86_64"),
    ("628c9df3-0254-4f91-bc1f-8619d1b8eaa8", "OPP EMEA x86_64"),
    (ROSA_PRODUCT, "ROSA"),
];

/// A product as messages name it: `ROSA (34850061-…)`, or the bare ID of
/// a product upstream does not list.
pub fn product_label(product: &str) -> String {
    match PRODUCTS.iter().find(|(id, _)| *id == product) {
        Some((_, name)) => format!("{name} ({product})"),
        None => product.to_owned(),
    }
}

/// One image as EC2 `DescribeImages` describes it; `eval bootimage --ec2`
/// reads lists of these (EC2's own field names, camelCased; other fields
/// EC2 gives are ignored).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ec2Image {
    pub image_id: String,
    pub owner_id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// ISO 8601 as EC2 gives it (`2026-02-10T12:00:00.000Z`); upstream
    /// compares these as text, and so does [`choose`].
    #[serde(default)]
    pub creation_date: String,
}

/// What the host read from EC2 for one AWS MachineSet whose `ami.id` is
/// set, in its `placement.region`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ec2Facts {
    /// The MachineSet's AMI as EC2 described it; `None`: EC2 has no such
    /// image in the region.
    pub image: Option<Ec2Image>,
    /// When `image` is a marketplace AMI with a product ID in its name: the
    /// marketplace AMIs of that product in the region (EC2's
    /// `name=*<product>*` filter). Empty otherwise.
    pub marketplace: Vec<Ec2Image>,
}

impl Ec2Facts {
    /// What EC2 would say once the MachineSet names `ami`, a target the
    /// AWS rule chose: the marketplace image of that ID when it is one,
    /// else the stream's AMI, which Red Hat owns. The convergence check
    /// decides again with this after a patch.
    pub fn apply(&mut self, ami: &str) {
        let listed = self.marketplace.iter().find(|image| image.image_id == ami);
        self.image = Some(listed.cloned().unwrap_or_else(|| Ec2Image {
            image_id: ami.to_owned(),
            owner_id: RED_HAT_OWNER.to_owned(),
            ..Ec2Image::default()
        }));
    }
}

/// `ExtractProductID`: the UUID (8-4-4-4-12 hex digits, either case) made
/// by the last five `-`-separated parts of a marketplace AMI's name, e.g.
/// `RHEL-9.4-RHCOS-9.6_HVM_GA-20260210-x86_64-0-59ead7de-2540-4653-a8b0-fa7926d5c845`.
pub fn product_id(name: &str) -> Option<&str> {
    const GROUPS: [usize; 5] = [8, 4, 4, 4, 12];
    let mut start = name.len();
    for (i, want) in GROUPS.iter().rev().enumerate() {
        let head = &name[..start];
        let part_start = head.rfind('-').map_or(0, |dash| dash + 1);
        let part = &head[part_start..];
        if part.len() != *want || !part.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        // The first group must be a whole part too: a dash (or nothing)
        // before it is where the split put it.
        start = match (i, part_start) {
            (4, _) => part_start,
            (_, 0) => return None,
            (_, s) => s - 1,
        };
    }
    Some(&name[start..])
}

/// A `major.minor` RHCOS version token (`9.6`), compared numerically as
/// upstream's `CmpVersionToken` does: each part read as Go's `strconv.Atoi`
/// reads it (a sign allowed, out of range clamped, anything else 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Token {
    pub major: i64,
    pub minor: i64,
}

impl Token {
    /// `CmpVersionToken`'s parse of `major.minor`; no dot is `0.0`.
    pub fn parse(token: &str) -> Token {
        match token.split_once('.') {
            Some((major, minor)) => Token {
                major: atoi(major),
                minor: atoi(minor),
            },
            None => Token { major: 0, minor: 0 },
        }
    }

    /// A pre-4.19 token (`418.94`: the OCP version times 100 as major).
    pub fn is_old_scheme(&self) -> bool {
        self.major > 100
    }
}

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Go's `strconv.Atoi` as upstream uses it (the error ignored).
fn atoi(text: &str) -> i64 {
    use std::num::IntErrorKind;
    match text.parse::<i64>() {
        Ok(n) => n,
        Err(e) => match e.kind() {
            IntErrorKind::PosOverflow => i64::MAX,
            IntErrorKind::NegOverflow => i64::MIN,
            _ => 0,
        },
    }
}

/// `marketplaceVersionToken`: the stream's `artifacts.aws.release`
/// (`9.6.20260210-0`) cut to its first two dot-separated parts, or
/// upstream's error.
pub fn release_token(release: &str) -> Result<Token, String> {
    if release.is_empty() {
        return Err("RHCOS release string is empty".into());
    }
    let mut parts = release.splitn(3, '.');
    match (parts.next(), parts.next()) {
        (Some(major), Some(minor)) => Ok(Token::parse(&format!("{major}.{minor}"))),
        _ => Err(format!(
            "unexpected RHCOS release string format: {release:?}"
        )),
    }
}

/// `ExtractVersionFromDescription`: the first match of
/// `(\d+\.\d+)\.(?:\d{8}|\d{12})-\d+` (ASCII digits, leftmost) in a
/// marketplace AMI's description: the release string and its token.
/// `RHEL CoreOS 9.6 9.6.20260210-0 x86_64` gives `9.6.20260210-0` and
/// `9.6`. A hand parser rather than a regex engine in every guest: every
/// part of the pattern is a whole run of digits, so the leftmost match
/// starts at the first digit run whose continuation fits.
pub fn description_release(description: &str) -> Option<(&str, Token)> {
    let bytes = description.as_bytes();
    let digits = |from: usize| {
        bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let mut start = 0;
    while start < bytes.len() {
        let run = digits(start);
        if run == 0 {
            start += 1;
            continue;
        }
        if let Some(end) = release_at(bytes, start, run, digits) {
            let release = &description[start..end];
            let minor_end = start + run + 1 + digits(start + run + 1);
            return Some((release, Token::parse(&description[start..minor_end])));
        }
        start += run;
    }
    None
}

/// The end of the release string whose major part is the `run` digits at
/// `start`, if the rest of the pattern follows.
fn release_at(
    bytes: &[u8],
    start: usize,
    run: usize,
    digits: impl Fn(usize) -> usize,
) -> Option<usize> {
    let dot = |at: usize, c: u8| (bytes.get(at) == Some(&c)).then_some(at + 1);
    let minor = dot(start + run, b'.')?;
    let minor_run = digits(minor);
    if minor_run == 0 {
        return None;
    }
    let date = dot(minor + minor_run, b'.')?;
    let date_run = digits(date);
    if date_run != 8 && date_run != 12 {
        return None;
    }
    let build = dot(date + date_run, b'-')?;
    let build_run = digits(build);
    (build_run > 0).then_some(build + build_run)
}

/// What [`choose`] found among a product's AMIs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice<'a> {
    /// The AMI to move to, and the release its description names.
    Image {
        image: &'a Ec2Image,
        release: &'a str,
    },
    /// No AMI at or below the target; `old_scheme_only`: some were above
    /// it with a pre-4.19 token, which upstream warns about.
    None { old_scheme_only: bool },
}

/// `findMarketplaceAMI`: among `images` (a product's AMIs), those whose
/// description names a release at or below `target`; the highest token
/// wins, then the newest `CreationDate`, then (deterministic where
/// upstream's sort is not) the lowest image ID. Only AMIs whose name
/// carries `product` at its end count, so the AMI chosen is recognised as
/// the same product on the next pass.
pub fn choose<'a>(images: &'a [Ec2Image], product: &str, target: Token) -> Choice<'a> {
    let mut best: Option<(Token, &'a Ec2Image, &'a str)> = None;
    let mut old_scheme = false;
    for image in images {
        if image.image_id.is_empty() || product_id(&image.name) != Some(product) {
            continue;
        }
        let Some((release, token)) = description_release(&image.description) else {
            continue;
        };
        if token > target {
            old_scheme |= token.is_old_scheme();
            continue;
        }
        let better = match &best {
            None => true,
            Some((best_token, best_image, _)) => {
                token
                    .cmp(best_token)
                    .then_with(|| image.creation_date.cmp(&best_image.creation_date))
                    .then_with(|| best_image.image_id.cmp(&image.image_id))
                    == Ordering::Greater
            }
        };
        if better {
            best = Some((token, image, release));
        }
    }
    match best {
        Some((_, image, release)) => Choice::Image { image, release },
        None => Choice::None {
            old_scheme_only: old_scheme,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OCP: &str = "59ead7de-2540-4653-a8b0-fa7926d5c845";

    #[test]
    fn product_ids_are_the_trailing_uuid() {
        let name = format!("RHEL-9.4-RHCOS-9.6_HVM_GA-20260210-x86_64-0-{OCP}");
        assert_eq!(product_id(&name), Some(OCP));
        assert_eq!(product_id(OCP), Some(OCP));
        let upper = "RHCOS-59EAD7DE-2540-4653-A8B0-FA7926D5C845";
        assert_eq!(product_id(upper), Some(&upper[6..]));
        for no in [
            "",
            "rhcos-9.6-x86_64",
            &format!("{OCP}-x86_64"),
            &format!("x{OCP}"),
            "59ead7de-2540-4653-a8b0-fa7926d5c84",
            "59ead7de-2540-4653-a8b0-fa7926d5c8455",
            "59ead7de-2540-4653-a8b0fa7926d5c845",
            "59ead7dg-2540-4653-a8b0-fa7926d5c845",
            "-2540-4653-a8b0-fa7926d5c845",
            "----",
            "é9ead7de-2540-4653-a8b0-fa7926d5c845",
        ] {
            assert_eq!(product_id(no), None, "{no:?}");
        }
    }

    #[test]
    fn releases_are_found_in_every_description_format() {
        for (description, release, token) in [
            (
                "RHEL CoreOS 9.6 9.6.20260210-0 x86_64",
                "9.6.20260210-0",
                "9.6",
            ),
            ("rhcos-9.6.20250701-0-x86_64", "9.6.20250701-0", "9.6"),
            (
                "OpenShift 4.18 418.94.202511191518-0 x86_64",
                "418.94.202511191518-0",
                "418.94",
            ),
            ("1.2.3.20260210-0", "2.3.20260210-0", "2.3"),
            (
                "x10.1.123456789.20260210-7",
                "1.123456789.20260210-7",
                "1.123456789",
            ),
            ("9.6.20260210-12345", "9.6.20260210-12345", "9.6"),
        ] {
            let (found, parsed) = description_release(description).unwrap();
            assert_eq!(
                (found, parsed),
                (release, Token::parse(token)),
                "{description}"
            );
        }
        for none in [
            "",
            "RHEL CoreOS 9.6",
            "9.6.2026021-0",
            "9.6.202602100-0",
            "9.6.20260210-",
            "9.6.20260210_0",
            ".6.20260210-0",
            "9..20260210-0",
            "٩.٦.٢٠٢٦٠٢١٠-٠",
        ] {
            assert_eq!(description_release(none), None, "{none:?}");
        }
    }

    #[test]
    fn tokens_compare_as_numbers_like_atoi() {
        assert!(Token::parse("9.10") > Token::parse("9.6"));
        assert!(Token::parse("418.94") > Token::parse("10.0"));
        assert!(Token::parse("418.94").is_old_scheme());
        assert!(!Token::parse("100.1").is_old_scheme());
        assert_eq!(Token::parse("x.y"), Token { major: 0, minor: 0 });
        assert_eq!(Token::parse("9"), Token { major: 0, minor: 0 });
        assert_eq!(
            Token::parse("+9.-1"),
            Token {
                major: 9,
                minor: -1
            }
        );
        assert_eq!(Token::parse("99999999999999999999.1").major, i64::MAX);
        assert_eq!(release_token("9.6.20260210-0"), Ok(Token::parse("9.6")));
        assert_eq!(release_token("9.6"), Ok(Token::parse("9.6")));
        assert_eq!(
            release_token("96"),
            Err("unexpected RHCOS release string format: \"96\"".into())
        );
        assert_eq!(
            release_token(""),
            Err("RHCOS release string is empty".into())
        );
    }

    fn image(id: &str, version: &str, created: &str) -> Ec2Image {
        Ec2Image {
            image_id: id.into(),
            owner_id: MARKETPLACE_OWNER.into(),
            name: format!("RHCOS-{version}-{OCP}"),
            description: format!("RHEL CoreOS {version} x86_64"),
            creation_date: created.into(),
        }
    }

    #[test]
    fn the_highest_release_at_or_below_the_target_then_the_newest_wins() {
        let images = [
            image("ami-a", "9.4.20250101-0", "2025-01-01T00:00:00.000Z"),
            image("ami-b", "9.6.20260101-0", "2026-01-01T00:00:00.000Z"),
            image("ami-c", "9.6.20260210-0", "2026-02-10T00:00:00.000Z"),
            image("ami-d", "9.8.20260501-0", "2026-05-01T00:00:00.000Z"),
            image("ami-e", "418.94.202511191518-0", "2025-11-19T00:00:00.000Z"),
        ];
        let target = Token::parse("9.6");
        assert_eq!(
            choose(&images, OCP, target),
            Choice::Image {
                image: &images[2],
                release: "9.6.20260210-0"
            }
        );
        assert_eq!(
            choose(&images, OCP, Token::parse("9.5")),
            Choice::Image {
                image: &images[0],
                release: "9.4.20250101-0"
            }
        );
        assert_eq!(
            choose(&images[3..], OCP, target),
            Choice::None {
                old_scheme_only: true
            }
        );
        assert_eq!(
            choose(&images[3..4], OCP, target),
            Choice::None {
                old_scheme_only: false
            }
        );
        assert_eq!(
            choose(&images, "963b36c3-de6f-48ed-b802-2b38b2a2cdeb", target),
            Choice::None {
                old_scheme_only: false
            }
        );
        // Ties on release and date: the lowest ID, whatever the order.
        let tied = [
            image("ami-2", "9.6.20260210-0", "2026-02-10T00:00:00.000Z"),
            image("ami-1", "9.6.20260210-0", "2026-02-10T00:00:00.000Z"),
        ];
        let mut reversed = tied.clone();
        reversed.reverse();
        for images in [&tied, &reversed] {
            assert!(matches!(
                choose(images, OCP, target),
                Choice::Image { image, .. } if image.image_id == "ami-1"
            ));
        }
    }

    #[test]
    fn an_applied_ami_is_described_by_the_marketplace_answer() {
        let mut facts = Ec2Facts {
            image: Some(image("ami-a", "9.4.20250101-0", "2025")),
            marketplace: vec![image("ami-c", "9.6.20260210-0", "2026")],
        };
        facts.apply("ami-c");
        assert_eq!(
            facts.image.as_ref().map(|i| i.image_id.as_str()),
            Some("ami-c")
        );
        facts.apply("ami-stream");
        let image = facts.image.unwrap();
        assert_eq!(
            (image.image_id.as_str(), image.owner_id.as_str()),
            ("ami-stream", RED_HAT_OWNER)
        );
    }

    #[test]
    fn images_read_from_files_need_an_id_and_an_owner() {
        let image: Ec2Image = serde_json::from_str(
            r#"{"imageId":"ami-1","ownerId":"531415883065","state":"available"}"#,
        )
        .unwrap();
        assert_eq!((image.name.as_str(), image.description.as_str()), ("", ""));
        assert!(serde_json::from_str::<Ec2Image>(r#"{"imageId":"ami-1"}"#).is_err());
        assert!(serde_json::from_str::<Ec2Image>(r#"{"imageId":"ami-1","ownerId":5}"#).is_err());
    }
}
