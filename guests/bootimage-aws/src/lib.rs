//! AWS boot image rule (`AWSMachineProviderConfig`), the "classic" variant
//! that needs no cloud access.
//!
//! AMIs are regional, so the target is the stream's AMI for the MachineSet's
//! region. Only AMIs known to be published RHCOS images are replaced: the
//! stream's own AMIs, upstream's static list of every AMI the installer
//! ever published (compiled in, [`amis`]), and the caller's known-images
//! list (the admin's, plus the AMIs the controller learned from earlier
//! streams). Anything else was chosen by the admin or copied by the
//! installer (encrypted, private regions) and must not be overwritten
//! (OCPBUGS-57348/57506).

// The component bindings wit-bindgen generates for wasm32 use `unsafe`.
#![cfg_attr(target_arch = "wasm32", allow(unsafe_code))]

use std::collections::BTreeSet;

use mco_bootimage::fields;
use mco_bootimage::serde_json::{Map, Value, json};
use mco_bootimage::{ClusterFacts, Platform, PlatformOutcome, RuleError, Stream};

pub mod amis;

#[derive(Debug, Clone, Copy, Default)]
pub struct Aws;

impl Platform for Aws {
    fn platform_type(&self) -> &'static str {
        "AWS"
    }

    fn reconcile(
        &self,
        stream: &Stream,
        arch: &str,
        provider_spec: &Value,
        facts: &ClusterFacts,
    ) -> PlatformOutcome {
        reconcile(stream, arch, provider_spec, &facts.known_images).into()
    }
}

const SPEC: &str = "providerSpec.value";

fn reconcile(
    stream: &Stream,
    arch: &str,
    provider_spec: &Value,
    known_images: &BTreeSet<String>,
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

    let target = match stream.aws_region_image(arch, region) {
        Ok(img) if !img.image.is_empty() => img.image.clone(),
        Ok(_) => {
            return Ok(PlatformOutcome::skip(format!(
                "failed to get AMI for region {region:?}: the stream entry has an empty image"
            )));
        }
        Err(e) => {
            return Ok(PlatformOutcome::skip(format!(
                "failed to get AMI for region {region:?}: {e}"
            )));
        }
    };

    let Some(id) = ami_id else {
        return Ok(PlatformOutcome::skip(
            "providerSpec.value.ami has no id (the AMI is given by ARN or filters)",
        ));
    };
    if id == target {
        return Ok(PlatformOutcome::OnTarget { target });
    }
    if !stream.contains_aws_ami(id) && !amis::is_rhcos_ami(id) && !known_images.contains(id) {
        return Ok(PlatformOutcome::skip(format!(
            "current AMI {id:?} is unknown (not a published RHCOS AMI)"
        )));
    }
    // Only one of id/arn/filters may be set, so the others are cleared.
    let mut fragment = Map::new();
    fragment.insert(
        "ami".to_owned(),
        json!({"id": target, "arn": null, "filters": null}),
    );
    Ok(PlatformOutcome::Update {
        target,
        fragment,
        import: None,
    })
}

// The component: this crate's rule behind the shared boot-image glue.
#[cfg(target_arch = "wasm32")]
mco_bootimage::export_platform!(Aws);

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn huge_strings() {
        let id = format!("ami-{}", "f".repeat(4 << 20));
        let out = run("x86_64", spec("us-east-1", json!({"id": id})), &[]);
        assert!(matches!(out, PlatformOutcome::Skip { .. }));
    }
}
