//! GCP boot image rule (`GCPMachineProviderSpec`).
//!
//! GCP images are global, so the target depends on the architecture only.
//! Only boot disks are touched (data disks may carry any image,
//! OCPBUGS-55830), and a boot disk on an image that is not a published RHCOS
//! image leaves the whole MachineSet alone: the admin chose that image
//! (marketplace, custom, another project), and replacing it would be a
//! silent downgrade of their choice (OCPBUGS-57348).

// The component bindings wit-bindgen generates for wasm32 use `unsafe`.
#![cfg_attr(target_arch = "wasm32", allow(unsafe_code))]

use std::collections::BTreeSet;

use mco_bootimage::fields;
use mco_bootimage::serde_json::{Map, Value};
use mco_bootimage::{ClusterFacts, Platform, PlatformOutcome, RuleError, StreamQuery};

/// Images under this prefix are published RHCOS images.
pub const RHCOS_IMAGE_PREFIX: &str = "projects/rhcos-cloud/global/images";

#[derive(Debug, Clone, Copy, Default)]
pub struct Gcp;

impl Platform for Gcp {
    fn platform_type(&self) -> &'static str {
        "GCP"
    }

    fn provider_spec_fields(&self) -> &'static [&'static str] {
        &["disks"]
    }

    fn reconcile(
        &self,
        stream: &dyn StreamQuery,
        arch: &str,
        provider_spec: &Value,
        facts: &ClusterFacts,
    ) -> PlatformOutcome {
        reconcile(stream, arch, provider_spec, &facts.known_images).into()
    }
}

const SPEC: &str = "providerSpec.value";

fn reconcile(
    stream: &dyn StreamQuery,
    arch: &str,
    provider_spec: &Value,
    known_images: &BTreeSet<String>,
) -> Result<PlatformOutcome, RuleError> {
    let spec = fields::as_object(provider_spec, SPEC)?;
    // Upstream computes the target first, so missing stream data is an error
    // even for a MachineSet without boot disks.
    let target = stream.gcp_image_path(arch)?;

    let Some(disks) = fields::opt_array(spec, "disks", SPEC)? else {
        return Ok(PlatformOutcome::noop(
            "providerSpec.value.disks is empty, there is no boot disk to update",
        ));
    };
    let mut new_disks = Vec::with_capacity(disks.len());
    let mut boot_disks = 0usize;
    let mut changed = false;
    for (i, disk) in disks.iter().enumerate() {
        let path = format!("{SPEC}.disks[{i}]");
        let d = fields::as_object(disk, &path)?;
        if !fields::opt_bool(d, "boot", &path)?.unwrap_or(false) {
            new_disks.push(disk.clone());
            continue;
        }
        boot_disks += 1;
        let image = fields::opt_str(d, "image", &path)?.unwrap_or("");
        if image == target {
            new_disks.push(disk.clone());
            continue;
        }
        if !image.starts_with(RHCOS_IMAGE_PREFIX) && !known_images.contains(image) {
            return Ok(PlatformOutcome::skip(format!(
                "current boot image {image:?} of disk {i} is unknown (not a published RHCOS image under {RHCOS_IMAGE_PREFIX})"
            )));
        }
        let mut nd: Map<String, Value> = d.clone();
        nd.insert("image".to_owned(), Value::String(target.clone()));
        new_disks.push(Value::Object(nd));
        changed = true;
    }
    if boot_disks == 0 {
        return Ok(PlatformOutcome::noop(
            "providerSpec.value.disks has no boot disk to update",
        ));
    }
    if !changed {
        return Ok(PlatformOutcome::OnTarget { target });
    }
    // Merge patch replaces arrays whole, so the patch carries every disk.
    let mut fragment = Map::new();
    fragment.insert("disks".to_owned(), Value::Array(new_disks));
    Ok(PlatformOutcome::Update {
        target,
        fragment,
        import: None,
    })
}

// The component: this crate's rule behind the shared boot-image glue.
#[cfg(target_arch = "wasm32")]
mco_bootimage::export_platform!(Gcp);

#[cfg(test)]
mod tests {
    use super::*;
    use mco_bootimage::Stream;
    use mco_bootimage::serde_json::json;

    const TARGET: &str = "projects/rhcos-cloud/global/images/rhcos-9-8-20260428-0-gcp-x86-64";
    const OLD: &str = "projects/rhcos-cloud/global/images/rhcos-418-94-202511191518-0-gcp-x86-64";

    fn stream() -> Stream {
        Stream::parse(
            r#"{"stream": "rhcos-4.21", "architectures": {
                "x86_64": {"images": {"gcp": {"release": "9.8.20260428-0", "project": "rhcos-cloud", "name": "rhcos-9-8-20260428-0-gcp-x86-64"}}},
                "aarch64": {"images": {"gcp": {"release": "9.8.20260428-0", "project": "rhcos-cloud", "name": "rhcos-9-8-20260428-0-gcp-aarch64"}}},
                "s390x": {"images": {"kubevirt": {"release": "r", "image": "i"}}}
            }}"#,
        )
        .unwrap()
    }

    fn run(spec: Value) -> PlatformOutcome {
        Gcp.reconcile(&stream(), "x86_64", &spec, &ClusterFacts::default())
    }

    #[test]
    fn updates_only_boot_disks_and_keeps_the_rest() {
        let spec = json!({"disks": [
            {"boot": true, "image": OLD, "sizeGb": 128, "type": "pd-ssd", "autoDelete": true},
            {"boot": false, "image": "projects/my/global/images/data", "sizeGb": 10}
        ], "region": "us-central1"});
        let PlatformOutcome::Update {
            target, fragment, ..
        } = run(spec)
        else {
            panic!("expected update")
        };
        assert_eq!(target, TARGET);
        assert_eq!(
            Value::Object(fragment),
            json!({"disks": [
                {"boot": true, "image": TARGET, "sizeGb": 128, "type": "pd-ssd", "autoDelete": true},
                {"boot": false, "image": "projects/my/global/images/data", "sizeGb": 10}
            ]})
        );
    }

    #[test]
    fn on_target() {
        assert_eq!(
            run(json!({"disks": [{"boot": true, "image": TARGET}]})),
            PlatformOutcome::OnTarget {
                target: TARGET.into()
            }
        );
    }

    #[test]
    fn one_custom_boot_disk_skips_everything() {
        let out = run(json!({"disks": [
            {"boot": true, "image": OLD},
            {"boot": true, "image": "projects/redhat-marketplace-public/global/images/rh-ocp"}
        ]}));
        assert!(matches!(out, PlatformOutcome::Skip { .. }), "{out:?}");
        // A short name is not under the prefix either.
        let out = run(json!({"disks": [{"boot": true, "image": "rhcos-x"}]}));
        assert!(matches!(out, PlatformOutcome::Skip { .. }), "{out:?}");
    }

    #[test]
    fn known_images_count_as_rhcos() {
        let known = ClusterFacts {
            known_images: BTreeSet::from(["projects/mirror/global/images/rhcos-old".to_owned()]),
            ..ClusterFacts::default()
        };
        let out = Gcp.reconcile(
            &stream(),
            "x86_64",
            &json!({"disks": [{"boot": true, "image": "projects/mirror/global/images/rhcos-old"}]}),
            &known,
        );
        assert!(matches!(out, PlatformOutcome::Update { .. }), "{out:?}");
    }

    #[test]
    fn arch_and_missing_stream_data() {
        let out = Gcp.reconcile(
            &stream(),
            "aarch64",
            &json!({"disks": [{"boot": true, "image": OLD}]}),
            &ClusterFacts::default(),
        );
        let PlatformOutcome::Update { target, .. } = out else {
            panic!()
        };
        assert!(target.ends_with("gcp-aarch64"));
        for arch in ["s390x", "ppc64le"] {
            let out = Gcp.reconcile(
                &stream(),
                arch,
                &json!({"disks": [{"boot": true, "image": OLD}]}),
                &ClusterFacts::default(),
            );
            assert!(
                matches!(out, PlatformOutcome::Error { .. }),
                "{arch}: {out:?}"
            );
        }
        let empty = Stream::parse("{}").unwrap();
        let out = Gcp.reconcile(&empty, "x86_64", &json!({}), &ClusterFacts::default());
        assert!(matches!(out, PlatformOutcome::Error { .. }));
    }

    #[test]
    fn no_boot_disks() {
        assert!(matches!(run(json!({})), PlatformOutcome::Noop { .. }));
        assert!(matches!(
            run(json!({"disks": null})),
            PlatformOutcome::Noop { .. }
        ));
        assert!(matches!(
            run(json!({"disks": [{"image": OLD}]})),
            PlatformOutcome::Noop { .. }
        ));
    }

    #[test]
    fn wrong_types_are_errors() {
        for (spec, needle) in [
            (
                json!("x"),
                "providerSpec.value must be an object, got a string",
            ),
            (
                json!({"disks": {}}),
                "providerSpec.value.disks must be an array, got an object",
            ),
            (
                json!({"disks": [1]}),
                "providerSpec.value.disks[0] must be an object, got a number",
            ),
            (
                json!({"disks": [{"boot": "true", "image": OLD}]}),
                "providerSpec.value.disks[0].boot must be a boolean, got a string",
            ),
            (
                json!({"disks": [{"boot": true, "image": ["x"]}]}),
                "providerSpec.value.disks[0].image must be a string, got an array",
            ),
        ] {
            match run(spec.clone()) {
                PlatformOutcome::Error { message } => assert_eq!(message, needle, "{spec}"),
                other => panic!("{spec}: {other:?}"),
            }
        }
    }

    #[test]
    fn huge_inputs() {
        let disks: Vec<Value> = (0..10_000)
            .map(|i| json!({"boot": i == 9_999, "image": OLD, "n": "x".repeat(100)}))
            .collect();
        let out = run(json!({"disks": disks}));
        let PlatformOutcome::Update { fragment, .. } = out else {
            panic!()
        };
        assert_eq!(fragment["disks"].as_array().unwrap().len(), 10_000);
        let huge = "y".repeat(8 << 20);
        assert!(matches!(
            run(json!({"disks": [{"boot": true, "image": huge}]})),
            PlatformOutcome::Skip { .. }
        ));
    }
}
