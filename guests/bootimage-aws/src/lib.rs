//! AWS boot image rule (`AWSMachineProviderConfig`). AMIs are regional, so
//! the target is the stream's AMI for the MachineSet's region or, for a
//! marketplace (and ROSA) AMI, the newest AMI of the same product at or below
//! the stream's release. With EC2's answers ([`Ec2Facts`]) the owner decides,
//! as upstream main's `reconcileAWSProviderSpec` (`aws_helpers.go`) does;
//! without them, the classic rule (4.17–4.22) with the stream, upstream's
//! static list ([`amis`]) and the caller's known images. Anything else was
//! chosen by the admin or copied by the installer and must not be overwritten
//! (OCPBUGS-57348/57506). The rule case by case: docs/admin/boot-images-aws.md.

// The component bindings wit-bindgen generates for wasm32 use `unsafe`.
#![cfg_attr(target_arch = "wasm32", allow(unsafe_code))]

use std::collections::BTreeSet;

use mco_bootimage::ec2::{self, Choice, Ec2Facts, Ec2Image, MARKETPLACE_OWNER, RED_HAT_OWNER};
use mco_bootimage::fields;
use mco_bootimage::serde_json::{Map, Value, json};
use mco_bootimage::{ClusterFacts, Platform, PlatformOutcome, RuleError, StreamQuery};

pub mod amis;

#[derive(Debug, Clone, Copy, Default)]
pub struct Aws;

impl Platform for Aws {
    fn platform_type(&self) -> &'static str {
        "AWS"
    }

    fn provider_spec_fields(&self) -> &'static [&'static str] {
        &["placement", "ami"]
    }

    fn reconcile(
        &self,
        stream: &dyn StreamQuery,
        arch: &str,
        provider_spec: &Value,
        facts: &ClusterFacts,
    ) -> PlatformOutcome {
        reconcile(stream, arch, provider_spec, facts).into()
    }
}

const SPEC: &str = "providerSpec.value";

/// The MachineSet's AMI and where it runs, as the rule reads them.
struct Ami<'a> {
    id: &'a str,
    region: &'a str,
    arch: &'a str,
}

fn reconcile(
    stream: &dyn StreamQuery,
    arch: &str,
    provider_spec: &Value,
    facts: &ClusterFacts,
) -> Result<PlatformOutcome, RuleError> {
    // Type-check everything the rule reads before deciding anything, as the
    // Go controller's typed unmarshal does.
    let spec = fields::as_object(provider_spec, SPEC)?;
    let region = match fields::opt_object(spec, "placement", SPEC)? {
        Some(p) => fields::opt_str(p, "region", "providerSpec.value.placement")?.unwrap_or(""),
        None => "",
    };
    let ami_id = match fields::opt_object(spec, "ami", SPEC)? {
        Some(a) => {
            const AMI: &str = "providerSpec.value.ami";
            fields::opt_str(a, "arn", AMI)?;
            fields::opt_array(a, "filters", AMI)?;
            fields::opt_str(a, "id", AMI)?
        }
        None => None,
    };

    // Present but empty is not absent: upstream hands the ID to EC2's
    // `DescribeImages`, which refuses it, before it looks at the region.
    if ami_id == Some("") {
        return Err(RuleError::Other(
            "providerSpec.value.ami.id is empty; EC2 refuses an empty AMI ID".to_owned(),
        ));
    }
    match (ami_id, &facts.ec2) {
        (Some(id), Some(ec2)) => from_ec2(stream, &Ami { id, region, arch }, ec2),
        (id, _) => from_lists(stream, arch, region, id, &facts.known_images),
    }
}

/// The rule without EC2 (upstream's classic rule, 4.17–4.22, with this
/// project's lists): the region first, then whether the AMI is known.
fn from_lists(
    stream: &dyn StreamQuery,
    arch: &str,
    region: &str,
    ami_id: Option<&str>,
    known_images: &BTreeSet<String>,
) -> Result<PlatformOutcome, RuleError> {
    let target = match stream_target(stream, arch, region) {
        Ok(target) => target,
        Err(skip) => return Ok(skip),
    };
    let Some(id) = ami_id else {
        return Ok(PlatformOutcome::skip(
            "providerSpec.value.ami has no id (the AMI is given by ARN or filters)",
        ));
    };
    if id != target
        && !stream.contains_aws_ami(id)
        && !amis::is_rhcos_ami(id)
        && !known_images.contains(id)
    {
        return Ok(PlatformOutcome::skip(format!(
            "current AMI {id:?} is unknown (not a published RHCOS AMI)"
        )));
    }
    Ok(move_to(id, target))
}

/// Upstream main's rule, from what EC2 said about the AMI.
fn from_ec2(
    stream: &dyn StreamQuery,
    ami: &Ami<'_>,
    ec2: &Ec2Facts,
) -> Result<PlatformOutcome, RuleError> {
    let Some(image) = &ec2.image else {
        return Err(RuleError::Other(format!("AMI {} not found", ami.id)));
    };
    if image.image_id != ami.id {
        return Err(RuleError::Other(format!(
            "internal error: EC2's answer describes {}, not {}",
            image.image_id, ami.id
        )));
    }
    Ok(match image.owner_id.as_str() {
        RED_HAT_OWNER => match stream_target(stream, ami.arch, ami.region) {
            Ok(target) => move_to(ami.id, target),
            Err(skip) => skip,
        },
        MARKETPLACE_OWNER => match ec2::product_id(&image.name) {
            Some(product) => return marketplace(stream, ami, product, &ec2.marketplace),
            None => PlatformOutcome::skip(format!(
                "AMI {} has unrecognised owner: the marketplace owns it, but its name names no product",
                ami.id
            )),
        },
        owner => PlatformOutcome::skip(format!("AMI {} has unrecognised owner {owner:?}", ami.id)),
    })
}

/// The stream's AMI for the arch and region, or the skip upstream logs.
fn stream_target(
    stream: &dyn StreamQuery,
    arch: &str,
    region: &str,
) -> Result<String, PlatformOutcome> {
    match stream.aws_region_image(arch, region) {
        Ok(img) if !img.image.is_empty() => Ok(img.image.clone()),
        Ok(_) => Err(PlatformOutcome::skip(format!(
            "failed to get AMI for region {region:?}: the stream entry has an empty image"
        ))),
        Err(e) => Err(PlatformOutcome::skip(format!(
            "failed to get AMI for region {region:?}: {e}"
        ))),
    }
}

/// A marketplace or ROSA AMI (upstream `resolveMarketplaceAMI`): the
/// newest AMI of the same product at or below the stream's release.
fn marketplace(
    stream: &dyn StreamQuery,
    ami: &Ami<'_>,
    product: &str,
    images: &[Ec2Image],
) -> Result<PlatformOutcome, RuleError> {
    let arch = ami.arch;
    let release = stream
        .artifact_release(arch, "aws")?
        .ok_or_else(|| RuleError::Other(format!("no aws artifact in stream for arch {arch}")))?;
    let token = ec2::release_token(&release).map_err(RuleError::Other)?;
    let label = ec2::product_label(product);
    Ok(match ec2::choose(images, product, token) {
        Choice::Image { image, .. } => move_to(ami.id, image.image_id.clone()),
        Choice::None {
            old_scheme_only: true,
        } => PlatformOutcome::skip(format!(
            "marketplace product {label} has only pre-4.19 RHCOS AMIs in region {}; \
             boot image is out of date and cannot be updated until newer AMIs are available",
            ami.region
        )),
        Choice::None { .. } => PlatformOutcome::skip(format!(
            "no marketplace AMI of product {label} at or below RHCOS {token} in region {}, \
             will retry on next reconcile",
            ami.region
        )),
    })
}

/// Already there, or the patch that moves the AMI to `target`.
fn move_to(id: &str, target: String) -> PlatformOutcome {
    if id == target {
        return PlatformOutcome::OnTarget { target };
    }
    // Only one of id/arn/filters may be set, so the others are cleared.
    let mut fragment = Map::new();
    fragment.insert(
        "ami".to_owned(),
        json!({"id": target, "arn": null, "filters": null}),
    );
    PlatformOutcome::Update {
        target,
        fragment,
        import: None,
    }
}

// The component: this crate's rule behind the shared boot-image glue.
#[cfg(target_arch = "wasm32")]
mco_bootimage::export_platform!(Aws);

#[cfg(test)]
mod tests {
    use super::*;
    use mco_bootimage::Stream;

    const NEW_E1: &str = "ami-0fbc8be8796dc1df5";
    const NEW_E2: &str = "ami-0f87100a0927b4e1e";
    const OLD: &str = "ami-0a1b2c3d4e5f60718";

    fn stream() -> Stream {
        Stream::parse(&format!(
            r#"{{"stream": "rhcos-4.21", "architectures": {{
                "x86_64": {{"images": {{"aws": {{"regions": {{
                    "us-east-1": {{"release": "9.8.20260428-0", "image": "{NEW_E1}"}},
                    "us-east-2": {{"release": "9.8.20260428-0", "image": "{NEW_E2}"}},
                    "eu-empty-1": {{"release": "9.8.20260428-0", "image": ""}}
                }}}}}}}},
                "aarch64": {{"images": {{"aws": {{"regions": {{"us-east-1": {{"release": "9.8.20260428-0", "image": "ami-01fdfbdd638f16b5f"}}}}}}}}}},
                "s390x": {{"images": {{}}}}
            }}}}"#
        ))
        .unwrap()
    }

    fn spec(region: &str, ami: Value) -> Value {
        json!({"kind": "AWSMachineProviderConfig", "ami": ami, "placement": {"region": region, "availabilityZone": format!("{region}a")}})
    }

    fn run(arch: &str, spec: Value, known: &[&str]) -> PlatformOutcome {
        let facts = ClusterFacts {
            known_images: known.iter().map(|s| (*s).to_owned()).collect(),
            ..ClusterFacts::default()
        };
        Aws.reconcile(&stream(), arch, &spec, &facts)
    }

    #[test]
    fn known_ami_is_replaced_and_arn_filters_cleared() {
        let out = run("x86_64", spec("us-east-1", json!({"id": OLD})), &[OLD]);
        assert_eq!(
            out,
            PlatformOutcome::Update {
                target: NEW_E1.into(),
                fragment: json!({"ami": {"id": NEW_E1, "arn": null, "filters": null}})
                    .as_object()
                    .unwrap()
                    .clone(),
                import: None,
            }
        );
    }

    #[test]
    fn an_install_ami_from_the_static_list_is_replaced_without_an_admin_list() {
        // Listed upstream, in no stream here and in no known-images list.
        let install = "ami-000065c53330c76d2";
        let out = run("x86_64", spec("us-east-1", json!({"id": install})), &[]);
        assert!(
            matches!(&out, PlatformOutcome::Update { target, .. } if target == NEW_E1),
            "{out:?}"
        );
        // Membership says nothing about region: a region the stream lacks
        // is still a skip.
        let out = run("x86_64", spec("mars-1", json!({"id": install})), &[]);
        assert!(matches!(out, PlatformOutcome::Skip { .. }), "{out:?}");
    }

    #[test]
    fn stream_amis_of_other_regions_are_known() {
        let out = run("x86_64", spec("us-east-2", json!({"id": NEW_E1})), &[]);
        assert!(
            matches!(&out, PlatformOutcome::Update { target, .. } if target == NEW_E2),
            "{out:?}"
        );
    }

    #[test]
    fn on_target_and_unknown() {
        assert_eq!(
            run("x86_64", spec("us-east-1", json!({"id": NEW_E1})), &[]),
            PlatformOutcome::OnTarget {
                target: NEW_E1.into()
            }
        );
        let out = run("x86_64", spec("us-east-1", json!({"id": OLD})), &[]);
        assert!(matches!(out, PlatformOutcome::Skip { .. }), "{out:?}");
    }

    #[test]
    fn an_empty_id_is_an_error_whatever_the_region() {
        for region in ["us-east-1", "mars-1"] {
            match run("x86_64", spec(region, json!({"id": ""})), &[""]) {
                PlatformOutcome::Error { message } => assert_eq!(
                    message,
                    "providerSpec.value.ami.id is empty; EC2 refuses an empty AMI ID"
                ),
                other => panic!("{region}: {other:?}"),
            }
        }
    }

    #[test]
    fn missing_id_region_or_arch_skips() {
        for (arch, s) in [
            (
                "x86_64",
                spec("us-east-1", json!({"arn": "arn:aws:ec2:::image/ami-1"})),
            ),
            (
                "x86_64",
                spec(
                    "us-east-1",
                    json!({"filters": [{"name": "tag:x", "values": ["y"]}]}),
                ),
            ),
            ("x86_64", spec("us-east-1", json!({"id": null}))),
            ("x86_64", json!({"placement": {"region": "us-east-1"}})),
            ("x86_64", spec("ap-south-9", json!({"id": OLD}))),
            ("x86_64", spec("eu-empty-1", json!({"id": OLD}))),
            ("x86_64", json!({"ami": {"id": OLD}})),
            ("aarch64", spec("us-east-2", json!({"id": OLD}))),
            ("s390x", spec("us-east-1", json!({"id": OLD}))),
            ("ppc64le", spec("us-east-1", json!({"id": OLD}))),
        ] {
            let out = run(arch, s.clone(), &[OLD]);
            assert!(matches!(out, PlatformOutcome::Skip { .. }), "{s}: {out:?}");
        }
        match run("x86_64", spec("mars-1", json!({"id": OLD})), &[OLD]) {
            PlatformOutcome::Skip { reason } => assert_eq!(
                reason,
                "failed to get AMI for region \"mars-1\": rhcos-4.21/x86_64: No AWS images in region mars-1"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn arm_uses_arm_ami() {
        let out = run("aarch64", spec("us-east-1", json!({"id": OLD})), &[OLD]);
        assert!(
            matches!(&out, PlatformOutcome::Update { target, .. } if target == "ami-01fdfbdd638f16b5f"),
            "{out:?}"
        );
    }

    #[test]
    fn wrong_types_are_errors() {
        for (s, msg) in [
            (
                json!([]),
                "providerSpec.value must be an object, got an array",
            ),
            (
                json!({"ami": "ami-1"}),
                "providerSpec.value.ami must be an object, got a string",
            ),
            (
                json!({"ami": {"id": 5}}),
                "providerSpec.value.ami.id must be a string, got a number",
            ),
            (
                json!({"ami": {"arn": {}}}),
                "providerSpec.value.ami.arn must be a string, got an object",
            ),
            (
                json!({"ami": {"filters": "x"}}),
                "providerSpec.value.ami.filters must be an array, got a string",
            ),
            (
                json!({"placement": "us-east-1"}),
                "providerSpec.value.placement must be an object, got a string",
            ),
            (
                json!({"placement": {"region": ["us-east-1"]}}),
                "providerSpec.value.placement.region must be a string, got an array",
            ),
        ] {
            match run("x86_64", s.clone(), &[]) {
                PlatformOutcome::Error { message } => assert_eq!(message, msg),
                other => panic!("{s}: {other:?}"),
            }
        }
    }

    const OCP: &str = "59ead7de-2540-4653-a8b0-fa7926d5c845";

    /// The test stream with its x86_64 aws release, which the marketplace
    /// rule reads.
    fn stream_with_release(release: Option<&str>) -> Stream {
        let artifacts = match release {
            Some(release) => format!(r#""artifacts": {{"aws": {{"release": "{release}"}}}},"#),
            None => String::new(),
        };
        Stream::parse(&format!(
            r#"{{"stream": "rhcos-4.21", "architectures": {{"x86_64": {{{artifacts}
                "images": {{"aws": {{"regions": {{
                    "us-east-1": {{"release": "9.8.20260428-0", "image": "{NEW_E1}"}}}}}}}}}}}}}}"#
        ))
        .unwrap()
    }

    fn ec2_image(id: &str, owner: &str, name: &str, description: &str) -> Ec2Image {
        Ec2Image {
            image_id: id.into(),
            owner_id: owner.into(),
            name: name.into(),
            description: description.into(),
            creation_date: "2026-01-01T00:00:00.000Z".into(),
        }
    }

    fn offer(id: &str, release: &str, created: &str) -> Ec2Image {
        Ec2Image {
            creation_date: created.into(),
            ..ec2_image(
                id,
                MARKETPLACE_OWNER,
                &format!("RHEL-9.4-RHCOS-{release}_HVM_GA-x86_64-0-{OCP}"),
                &format!("RHEL CoreOS 9 {release} x86_64"),
            )
        }
    }

    fn with_ec2(
        stream: &Stream,
        id: &str,
        image: Option<Ec2Image>,
        marketplace: Vec<Ec2Image>,
        known: &[&str],
    ) -> PlatformOutcome {
        let facts = ClusterFacts {
            known_images: known.iter().map(|s| (*s).to_owned()).collect(),
            ec2: Some(Ec2Facts { image, marketplace }),
            ..ClusterFacts::default()
        };
        Aws.reconcile(
            stream,
            "x86_64",
            &spec("us-east-1", json!({"id": id})),
            &facts,
        )
    }

    fn target(outcome: &PlatformOutcome) -> Option<&str> {
        match outcome {
            PlatformOutcome::Update { target, .. } | PlatformOutcome::OnTarget { target } => {
                Some(target)
            }
            _ => None,
        }
    }

    #[test]
    fn a_red_hat_ami_outside_every_list_moves_to_the_stream() {
        let s = stream_with_release(Some("9.6.20260210-0"));
        let rh = ec2_image(OLD, RED_HAT_OWNER, "rhcos-9.2", "");
        let out = with_ec2(&s, OLD, Some(rh.clone()), vec![], &[]);
        assert!(matches!(out, PlatformOutcome::Update { .. }), "{out:?}");
        assert_eq!(target(&out), Some(NEW_E1));
        // Region missing from the stream: skip, as upstream.
        let facts = ClusterFacts {
            ec2: Some(Ec2Facts {
                image: Some(rh),
                marketplace: vec![],
            }),
            ..ClusterFacts::default()
        };
        let out = Aws.reconcile(&s, "x86_64", &spec("mars-1", json!({"id": OLD})), &facts);
        assert!(matches!(out, PlatformOutcome::Skip { .. }), "{out:?}");
    }

    #[test]
    fn with_ec2_the_owner_decides_and_the_lists_play_no_part() {
        let s = stream_with_release(Some("9.6.20260210-0"));
        // Unknown to EC2: an error, listed or not (even the stream's own).
        let listed = "ami-000065c53330c76d2";
        for (id, known) in [
            (OLD, &[][..]),
            (OLD, &[OLD][..]),
            (listed, &[]),
            (NEW_E1, &[]),
        ] {
            assert_eq!(
                with_ec2(&s, id, None, vec![], known),
                PlatformOutcome::error(format!("AMI {id} not found"))
            );
        }
        let copy = ec2_image(OLD, "123456789012", "my-golden-rhcos", "");
        for known in [&[][..], &[OLD][..]] {
            assert_eq!(
                with_ec2(&s, OLD, Some(copy.clone()), vec![], known),
                PlatformOutcome::skip(format!("AMI {OLD} has unrecognised owner \"123456789012\""))
            );
        }
        // What EC2 says about a target the rule chose keeps the patch
        // converging: the stream's AMI is Red Hat's.
        let mut facts = Ec2Facts {
            image: Some(ec2_image(OLD, RED_HAT_OWNER, "", "")),
            marketplace: vec![],
        };
        facts.apply(NEW_E1);
        assert_eq!(
            with_ec2(&s, NEW_E1, facts.image, vec![], &[]),
            PlatformOutcome::OnTarget {
                target: NEW_E1.into()
            }
        );
        // A marketplace AMI whose name names no product is unknown too.
        let plain = ec2_image(OLD, MARKETPLACE_OWNER, "rhcos-9.4", "");
        assert!(matches!(
            with_ec2(&s, OLD, Some(plain), vec![], &[]),
            PlatformOutcome::Skip { reason } if reason.contains("names no product")
        ));
    }

    #[test]
    fn a_marketplace_ami_moves_to_its_products_newest_at_or_below_the_stream() {
        let s = stream_with_release(Some("9.6.20260210-0"));
        let current = offer("ami-m94", "9.4.20250101-0", "2025-01-01T00:00:00.000Z");
        let offers = vec![
            current.clone(),
            offer("ami-m96a", "9.6.20260101-0", "2026-01-01T00:00:00.000Z"),
            offer("ami-m96b", "9.6.20260210-0", "2026-02-10T00:00:00.000Z"),
            offer("ami-m98", "9.8.20260501-0", "2026-05-01T00:00:00.000Z"),
        ];
        // Known or not: EC2's owner decides.
        for known in [&[][..], &["ami-m94"][..]] {
            let out = with_ec2(&s, "ami-m94", Some(current.clone()), offers.clone(), known);
            assert_eq!(target(&out), Some("ami-m96b"), "{out:?}");
        }
        let on = offers[2].clone();
        assert_eq!(
            with_ec2(&s, "ami-m96b", Some(on), offers.clone(), &[]),
            PlatformOutcome::OnTarget {
                target: "ami-m96b".into()
            }
        );
        // Nothing at or below: skip, worded for old-scheme-only offers.
        let out = with_ec2(
            &s,
            "ami-m94",
            Some(current.clone()),
            offers[3..].to_vec(),
            &[],
        );
        assert!(
            matches!(&out, PlatformOutcome::Skip { reason } if reason.starts_with("no marketplace AMI of product OCP x86_64 (59ead7de-2540-4653-a8b0-fa7926d5c845) at or below RHCOS 9.6 in region us-east-1")),
            "{out:?}"
        );
        let old = Ec2Image {
            description: "OpenShift 4.18 418.94.202511191518-0 x86_64".into(),
            ..offers[3].clone()
        };
        let out = with_ec2(&s, "ami-m94", Some(current.clone()), vec![old], &[]);
        assert!(
            matches!(&out, PlatformOutcome::Skip { reason } if reason.contains("only pre-4.19 RHCOS AMIs")),
            "{out:?}"
        );
    }

    #[test]
    fn a_marketplace_ami_needs_the_streams_aws_release() {
        let current = offer("ami-m94", "9.4.20250101-0", "2025");
        for (release, message) in [
            (None, "no aws artifact in stream for arch x86_64"),
            (Some(""), "RHCOS release string is empty"),
            (Some("96"), "unexpected RHCOS release string format: \"96\""),
        ] {
            let s = stream_with_release(release);
            assert_eq!(
                with_ec2(&s, "ami-m94", Some(current.clone()), vec![], &[]),
                PlatformOutcome::error(message),
                "{release:?}"
            );
        }
        // An arch the stream lacks is an error on this path, as upstream.
        let facts = ClusterFacts {
            ec2: Some(Ec2Facts {
                image: Some(current),
                marketplace: vec![],
            }),
            ..ClusterFacts::default()
        };
        let out = Aws.reconcile(
            &stream_with_release(Some("9.6.1-0")),
            "aarch64",
            &spec("us-east-1", json!({"id": "ami-m94"})),
            &facts,
        );
        assert!(
            matches!(&out, PlatformOutcome::Error { message } if message.contains("does not have architecture 'aarch64'")),
            "{out:?}"
        );
    }

    #[test]
    fn an_answer_about_another_ami_is_refused() {
        let s = stream_with_release(Some("9.6.20260210-0"));
        let other = ec2_image("ami-else", RED_HAT_OWNER, "", "");
        assert_eq!(
            with_ec2(&s, OLD, Some(other), vec![], &[]),
            PlatformOutcome::error(format!(
                "internal error: EC2's answer describes ami-else, not {OLD}"
            ))
        );
    }

    #[test]
    fn huge_strings() {
        let id = format!("ami-{}", "f".repeat(4 << 20));
        let out = run("x86_64", spec("us-east-1", json!({"id": id})), &[]);
        assert!(matches!(out, PlatformOutcome::Skip { .. }));
    }
}
