//! Azure boot image rule (`AzureMachineProviderSpec`, MCO 4.21+).
//!
//! Azure boot images come from the marketplace. Which offer a MachineSet
//! must stay on depends on how the cluster is licensed (free "no purchase
//! plan" images, or paid OCP/OPP/OKE offers, with EMEA variants), and which
//! image within it depends on the VM's Hyper-V generation; both are read
//! from the current image so an update never changes the licensing or the
//! VM generation. Images uploaded by old installers (`resourceID`) are
//! always migrated to the matching free marketplace image.

// The component bindings wit-bindgen generates for wasm32 use `unsafe`.
#![cfg_attr(target_arch = "wasm32", allow(unsafe_code))]

use mco_bootimage::fields;
use mco_bootimage::serde_json::{Map, Value};
use mco_bootimage::{
    AzureVariant, ClusterFacts, Platform, PlatformOutcome, RuleError, StreamQuery,
};

#[derive(Debug, Clone, Copy, Default)]
pub struct Azure;

impl Platform for Azure {
    fn platform_type(&self) -> &'static str {
        "Azure"
    }

    fn provider_spec_fields(&self) -> &'static [&'static str] {
        &["image", "securityProfile"]
    }

    fn reconcile(
        &self,
        stream: &dyn StreamQuery,
        arch: &str,
        provider_spec: &Value,
        _facts: &ClusterFacts,
    ) -> PlatformOutcome {
        reconcile(stream, arch, provider_spec).into()
    }
}

/// The purchase variants, keyed as the stream keys them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    NoPurchasePlan,
    Ocp,
    Opp,
    Oke,
    OcpEmea,
    OppEmea,
    OkeEmea,
}

impl Variant {
    /// `(publisher, offer)` of a paid image → variant.
    fn from_paid(publisher: &str, offer: &str) -> Option<Variant> {
        Some(match (publisher, offer) {
            ("redhat", "rh-ocp-worker") => Variant::Ocp,
            ("redhat", "rh-opp-worker") => Variant::Opp,
            ("redhat", "rh-oke-worker") => Variant::Oke,
            ("redhat-limited", "rh-ocp-worker") => Variant::OcpEmea,
            ("redhat-limited", "rh-opp-worker") => Variant::OppEmea,
            ("redhat-limited", "rh-oke-worker") => Variant::OkeEmea,
            _ => return None,
        })
    }

    pub fn stream_key(self) -> &'static str {
        match self {
            Variant::NoPurchasePlan => "no-purchase-plan",
            Variant::Ocp => "ocp",
            Variant::Opp => "opp",
            Variant::Oke => "oke",
            Variant::OcpEmea => "ocp-emea",
            Variant::OppEmea => "opp-emea",
            Variant::OkeEmea => "oke-emea",
        }
    }

    fn image_type(self) -> &'static str {
        match self {
            Variant::NoPurchasePlan => "MarketplaceNoPlan",
            _ => "MarketplaceWithPlan",
        }
    }
}

const SPEC: &str = "providerSpec.value";
const IMAGE: &str = "providerSpec.value.image";
/// The six fields of the Go `Image` struct, compared as a whole.
const IMAGE_FIELDS: [&str; 6] = ["publisher", "offer", "sku", "version", "resourceID", "type"];

fn reconcile(
    stream: &dyn StreamQuery,
    arch: &str,
    provider_spec: &Value,
) -> Result<PlatformOutcome, RuleError> {
    let spec = fields::as_object(provider_spec, SPEC)?;
    let image = fields::opt_object(spec, "image", SPEC)?;
    let mut current: [&str; 6] = [""; 6];
    if let Some(img) = image {
        for (slot, key) in current.iter_mut().zip(IMAGE_FIELDS) {
            *slot = fields::opt_str(img, key, IMAGE)?.unwrap_or("");
        }
    }
    let [publisher, offer, sku, _version, resource_id, image_type] = current;
    let security_type = match fields::opt_object(spec, "securityProfile", SPEC)? {
        Some(sp) => match fields::opt_object(sp, "settings", "providerSpec.value.securityProfile")?
        {
            Some(s) => fields::opt_str(
                s,
                "securityType",
                "providerSpec.value.securityProfile.settings",
            )?
            .unwrap_or(""),
            None => "",
        },
        None => "",
    };

    if arch == "ppc64le" || arch == "s390x" {
        return Ok(PlatformOutcome::noop(format!(
            "Azure boot image updates are not supported for architecture {arch}"
        )));
    }
    // A skip, not a noop (upstream PR #6404): such a MachineSet is not on
    // the stream's image, so it counts among the skipped and the boot image
    // skew record cannot claim the release.
    if !security_type.is_empty() {
        return Ok(PlatformOutcome::skip(format!(
            "securityProfile.settings.securityType is {security_type:?}; Confidential VM and Trusted Launch MachineSets keep their boot image"
        )));
    }

    let legacy = !resource_id.is_empty();
    let variant = if legacy || publisher == "azureopenshift" {
        Variant::NoPurchasePlan
    } else {
        Variant::from_paid(publisher, offer).ok_or_else(|| {
            RuleError::Other(format!(
                "could not determine azure marketplace variant, cannot update boot images (image publisher {publisher:?}, offer {offer:?})"
            ))
        })?
    };

    // `GetArchitecture`: a stream without the arch at all is an error
    // upstream; only missing marketplace data (OKD) is a skip.
    stream.architecture(arch)?;
    let key = variant.stream_key();
    let set = match stream.azure_variant(arch, key) {
        AzureVariant::NoMarketplace => {
            return Ok(PlatformOutcome::skip(format!(
                "the stream has no Azure marketplace images for architecture {arch}"
            )));
        }
        AzureVariant::NoVariant => {
            return Err(RuleError::Other(format!(
                "the stream has no Azure marketplace images for variant {key} on architecture {arch}"
            )));
        }
        AzureVariant::Images(set) => set,
    };

    // Quirk kept from upstream: a free image with an empty `type` takes the
    // paid rule, so `sku: aro_420` counts as Gen2. The free rhel-10 SKUs say
    // `gen2` rather than `v2` (`aro_5-0_x64_gen2`; upstream PR #6404): read
    // as Gen1, such an image would be patched to the Gen1 one and back.
    let gen2 = if legacy {
        resource_id.contains("gen2")
    } else if image_type == "MarketplaceNoPlan" {
        sku.contains("v2") || sku.contains("gen2") || arch == "aarch64"
    } else {
        !sku.contains("gen1")
    };
    let gen_name = if gen2 { "hyperVGen2" } else { "hyperVGen1" };

    let missing = format!(
        "the stream has no {gen_name} image for Azure marketplace variant {key} on architecture {arch}"
    );
    let target = if gen2 {
        set.hyper_v_gen2.as_ref().ok_or(RuleError::Other(missing))?
    } else {
        // Gen1 images are leaving the stream (upstream PR #6404, CORS-4441):
        // a skip, which the skew record then reports as out of date.
        let Some(gen1) = set.hyper_v_gen1.as_ref() else {
            return Ok(PlatformOutcome::skip(missing));
        };
        gen1
    };

    let wanted: [&str; 6] = [
        &target.publisher,
        &target.offer,
        &target.sku,
        &target.version,
        "",
        variant.image_type(),
    ];
    if wanted[..4].iter().any(|f| f.is_empty()) {
        return Err(RuleError::Other(format!(
            "the stream's {gen_name} image for Azure marketplace variant {key} on architecture {arch} is incomplete"
        )));
    }
    let urn = format!(
        "{}:{}:{}:{}",
        target.publisher, target.offer, target.sku, target.version
    );
    if current == wanted {
        return Ok(PlatformOutcome::OnTarget { target: urn });
    }
    let mut new_image = Map::new();
    for (key, value) in IMAGE_FIELDS.iter().zip(wanted) {
        new_image.insert((*key).to_owned(), Value::String(value.to_owned()));
    }
    let mut fragment = Map::new();
    fragment.insert("image".to_owned(), Value::Object(new_image));
    Ok(PlatformOutcome::Update {
        target: urn,
        fragment,
        import: None,
    })
}

// The component: this crate's rule behind the shared boot-image glue.
#[cfg(target_arch = "wasm32")]
mco_bootimage::export_platform!(Azure);

#[cfg(test)]
mod tests {
    use super::*;
    use mco_bootimage::Stream;
    use mco_bootimage::serde_json::json;

    const STREAM: &str = r#"{"stream": "rhcos-4.21", "architectures": {
        "x86_64": {"rhel-coreos-extensions": {"marketplace": {"azure": {
            "no-purchase-plan": {
                "hyperVGen1": {"publisher": "azureopenshift", "offer": "aro4", "sku": "aro_420", "version": "9.6.20251015"},
                "hyperVGen2": {"publisher": "azureopenshift", "offer": "aro4", "sku": "420-v2", "version": "9.6.20251015"}},
            "ocp": {
                "hyperVGen1": {"publisher": "redhat", "offer": "rh-ocp-worker", "sku": "rh-ocp-worker-gen1", "version": "4.18.2025031114"},
                "hyperVGen2": {"publisher": "redhat", "offer": "rh-ocp-worker", "sku": "rh-ocp-worker", "version": "4.18.2025031114"}},
            "opp-emea": {
                "hyperVGen2": {"publisher": "redhat-limited", "offer": "rh-opp-worker", "sku": "rh-opp-worker", "version": "4.18.2025031114"}}
        }}}},
        "aarch64": {"rhel-coreos-extensions": {"marketplace": {"azure": {"no-purchase-plan": {
            "hyperVGen2": {"publisher": "azureopenshift", "offer": "aro4", "sku": "420-arm", "version": "9.6.20251015"}}}}}},
        "ppc64le": {}
    }}"#;

    fn run(arch: &str, spec: Value) -> PlatformOutcome {
        Azure.reconcile(
            &Stream::parse(STREAM).unwrap(),
            arch,
            &spec,
            &ClusterFacts::default(),
        )
    }

    fn image(p: &str, o: &str, s: &str, v: &str, rid: &str, t: &str) -> Value {
        json!({"image": {"publisher": p, "offer": o, "sku": s, "version": v, "resourceID": rid, "type": t}})
    }

    fn target_of(out: &PlatformOutcome) -> Value {
        match out {
            PlatformOutcome::Update { fragment, .. } => fragment["image"].clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn legacy_gen2_migrates_to_free_gen2() {
        let out = run(
            "x86_64",
            image(
                "",
                "",
                "",
                "",
                "/resourceGroups/x-rg/providers/Microsoft.Compute/galleries/gallery_x/images/x-gen2/versions/latest",
                "",
            ),
        );
        assert_eq!(
            target_of(&out),
            json!({"publisher": "azureopenshift", "offer": "aro4", "sku": "420-v2", "version": "9.6.20251015", "resourceID": "", "type": "MarketplaceNoPlan"})
        );
        let PlatformOutcome::Update { target, .. } = out else {
            unreachable!()
        };
        assert_eq!(target, "azureopenshift:aro4:420-v2:9.6.20251015");
    }

    #[test]
    fn legacy_gen1_migrates_to_free_gen1() {
        let out = run(
            "x86_64",
            image(
                "",
                "",
                "",
                "",
                "/resourceGroups/x-rg/providers/Microsoft.Compute/images/x",
                "",
            ),
        );
        assert_eq!(target_of(&out)["sku"], "aro_420");
    }

    #[test]
    fn paid_variants_keep_their_offer_and_generation() {
        let out = run(
            "x86_64",
            image(
                "redhat",
                "rh-ocp-worker",
                "rh-ocp-worker-gen1",
                "4.16.1",
                "",
                "MarketplaceWithPlan",
            ),
        );
        assert_eq!(
            target_of(&out),
            json!({"publisher": "redhat", "offer": "rh-ocp-worker", "sku": "rh-ocp-worker-gen1", "version": "4.18.2025031114", "resourceID": "", "type": "MarketplaceWithPlan"})
        );
        let out = run(
            "x86_64",
            image(
                "redhat-limited",
                "rh-opp-worker",
                "rh-opp-worker",
                "4.16.1",
                "",
                "MarketplaceWithPlan",
            ),
        );
        assert_eq!(target_of(&out)["publisher"], "redhat-limited");
    }

    #[test]
    fn free_image_generation_rules() {
        // Explicit NoPlan type: gen2 only if the sku says v2.
        let out = run(
            "x86_64",
            image(
                "azureopenshift",
                "aro4",
                "aro_419",
                "1",
                "",
                "MarketplaceNoPlan",
            ),
        );
        assert_eq!(target_of(&out)["sku"], "aro_420");
        // Empty type takes the paid rule: no "gen1" in the sku → Gen2.
        let out = run(
            "x86_64",
            image("azureopenshift", "aro4", "aro_419", "1", "", ""),
        );
        assert_eq!(target_of(&out)["sku"], "420-v2");
        // aarch64 is always Gen2.
        let out = run(
            "aarch64",
            image(
                "azureopenshift",
                "aro4",
                "419-arm",
                "1",
                "",
                "MarketplaceNoPlan",
            ),
        );
        assert_eq!(target_of(&out)["sku"], "420-arm");
    }

    #[test]
    fn on_target_needs_all_six_fields() {
        let on = image(
            "azureopenshift",
            "aro4",
            "420-v2",
            "9.6.20251015",
            "",
            "MarketplaceNoPlan",
        );
        assert!(matches!(
            run("x86_64", on),
            PlatformOutcome::OnTarget { .. }
        ));
        let typeless = image("azureopenshift", "aro4", "420-v2", "9.6.20251015", "", "");
        assert!(matches!(
            run("x86_64", typeless),
            PlatformOutcome::Update { .. }
        ));
    }

    #[test]
    fn noops() {
        let img = image(
            "redhat",
            "rh-ocp-worker",
            "rh-ocp-worker",
            "1",
            "",
            "MarketplaceWithPlan",
        );
        for arch in ["ppc64le", "s390x"] {
            assert!(matches!(
                run(arch, img.clone()),
                PlatformOutcome::Noop { .. }
            ));
        }
        let mut cvm = img.clone();
        cvm["securityProfile"] = json!({"settings": {"securityType": "ConfidentialVM"}});
        assert!(
            matches!(run("x86_64", cvm), PlatformOutcome::Skip { ref reason } if reason.contains("\"ConfidentialVM\"")),
            "a securityType is a skip (upstream PR #6404), so the skew record counts it"
        );
        let mut empty_sec = img;
        empty_sec["securityProfile"] = json!({"settings": {"securityType": ""}});
        assert!(matches!(
            run("x86_64", empty_sec),
            PlatformOutcome::Update { .. }
        ));
    }

    #[test]
    fn errors_and_skips() {
        match run(
            "x86_64",
            image("someone", "custom", "s", "1", "", "MarketplaceWithPlan"),
        ) {
            PlatformOutcome::Error { message } => assert!(
                message.starts_with(
                    "could not determine azure marketplace variant, cannot update boot images"
                ),
                "{message}"
            ),
            other => panic!("{other:?}"),
        }
        // Variant known, but the stream lacks it, or its Gen2 image.
        let oke = image(
            "redhat",
            "rh-oke-worker",
            "rh-oke-worker",
            "1",
            "",
            "MarketplaceWithPlan",
        );
        assert!(matches!(run("x86_64", oke), PlatformOutcome::Error { .. }));
        let gen1_only = Stream::parse(r#"{"architectures": {"x86_64": {"rhel-coreos-extensions": {"marketplace": {"azure": {"no-purchase-plan": {
            "hyperVGen1": {"publisher": "azureopenshift", "offer": "aro4", "sku": "aro_420", "version": "1"}}}}}}}}"#).unwrap();
        let out = Azure.reconcile(
            &gen1_only,
            "x86_64",
            &image(
                "azureopenshift",
                "aro4",
                "420-v2",
                "0",
                "",
                "MarketplaceNoPlan",
            ),
            &ClusterFacts::default(),
        );
        assert!(matches!(out, PlatformOutcome::Error { .. }), "{out:?}");
        // A missing Gen1 image is a skip (upstream PR #6404).
        for (arch, img) in [
            (
                "x86_64",
                image(
                    "redhat-limited",
                    "rh-opp-worker",
                    "rh-opp-worker-gen1",
                    "1",
                    "",
                    "MarketplaceWithPlan",
                ),
            ),
            ("aarch64", image("", "", "", "", "/x/gen1-image", "")),
        ] {
            match run(arch, img) {
                PlatformOutcome::Skip { reason } => assert!(
                    reason.starts_with("the stream has no hyperVGen1 image"),
                    "{reason}"
                ),
                other => panic!("{arch}: {other:?}"),
            }
        }
        // No marketplace data for the arch (OKD, or an arch missing entirely).
        let okd = Stream::parse(r#"{"architectures": {"x86_64": {"rhel-coreos-extensions": {"azure-disk": {"release": "r", "url": "u"}}}}}"#).unwrap();
        let out = Azure.reconcile(
            &okd,
            "x86_64",
            &image(
                "azureopenshift",
                "aro4",
                "aro_420",
                "1",
                "",
                "MarketplaceNoPlan",
            ),
            &ClusterFacts::default(),
        );
        assert!(matches!(out, PlatformOutcome::Skip { .. }), "{out:?}");
        // No such architecture in the stream at all: `GetArchitecture`'s error.
        let out = Azure.reconcile(
            &Stream::parse(r#"{"stream": "rhcos-4.21"}"#).unwrap(),
            "x86_64",
            &image(
                "azureopenshift",
                "aro4",
                "aro_420",
                "1",
                "",
                "MarketplaceNoPlan",
            ),
            &ClusterFacts::default(),
        );
        match out {
            PlatformOutcome::Error { message } => assert_eq!(
                message,
                "stream:rhcos-4.21 does not have architecture 'x86_64'"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn free_rhel10_gen2_sku_converges() {
        let rhel10 = Stream::parse(r#"{"stream": "rhel-10.2", "architectures": {"x86_64": {"rhel-coreos-extensions": {"marketplace": {"azure": {"no-purchase-plan": {
            "hyperVGen2": {"publisher": "azureopenshift", "offer": "aro4", "sku": "aro_5-0_x64_gen2", "version": "10.2.20260501"}}}}}}}}"#).unwrap();
        let decide = |version: &str| {
            Azure.reconcile(
                &rhel10,
                "x86_64",
                &image(
                    "azureopenshift",
                    "aro4",
                    "aro_5-0_x64_gen2",
                    version,
                    "",
                    "MarketplaceNoPlan",
                ),
                &ClusterFacts::default(),
            )
        };
        assert_eq!(
            target_of(&decide("10.1.20260101"))["sku"],
            "aro_5-0_x64_gen2"
        );
        assert!(matches!(
            decide("10.2.20260501"),
            PlatformOutcome::OnTarget { .. }
        ));
    }

    #[test]
    fn missing_image_is_an_unknown_variant() {
        assert!(matches!(
            run("x86_64", json!({})),
            PlatformOutcome::Error { .. }
        ));
    }

    #[test]
    fn wrong_types_are_errors() {
        for (s, msg) in [
            (
                json!(null),
                "providerSpec.value must be an object, got null",
            ),
            (
                json!({"image": []}),
                "providerSpec.value.image must be an object, got an array",
            ),
            (
                json!({"image": {"publisher": 1}}),
                "providerSpec.value.image.publisher must be a string, got a number",
            ),
            (
                json!({"image": {"resourceID": true}}),
                "providerSpec.value.image.resourceID must be a string, got a boolean",
            ),
            (
                json!({"securityProfile": {"settings": {"securityType": 1}}}),
                "providerSpec.value.securityProfile.settings.securityType must be a string, got a number",
            ),
            (
                json!({"securityProfile": "TrustedLaunch"}),
                "providerSpec.value.securityProfile must be an object, got a string",
            ),
        ] {
            match run("x86_64", s.clone()) {
                PlatformOutcome::Error { message } => assert_eq!(message, msg),
                other => panic!("{s}: {other:?}"),
            }
        }
    }
}
