//! What the fuzz targets share: the platform rules, a fixed MachineSet and
//! stream, and the checks every decision must pass; a cosign key no input
//! may verify under.

use std::collections::{BTreeMap, BTreeSet};

use mco_bootimage::{
    ClusterFacts, Decision, MachineSetView, Platform, ProviderSpec, Stream, decide_loaded,
    validate_decision,
};
use mco_registry_formats::cosign::{Key, Signature};
use serde_json::Value;

pub const PLATFORMS: [&dyn Platform; 3] = [
    &mco_bootimage_gcp::Gcp,
    &mco_bootimage_aws::Aws,
    &mco_bootimage_azure::Azure,
];

/// The golden stream (the `stream` seed corpus holds the same text).
pub const GOLDEN_STREAM: &str = include_str!("../corpus/stream/golden.json");

/// A worker MachineSet with `provider_spec` as its providerSpec value.
pub fn machineset(provider_spec: Option<Value>) -> MachineSetView {
    let annotations = BTreeMap::from([(
        "capacity.cluster-autoscaler.kubernetes.io/labels".to_owned(),
        "kubernetes.io/arch=amd64".to_owned(),
    )]);
    MachineSetView {
        kind: Default::default(),
        name: "fuzz-worker-a".into(),
        namespace: Some("openshift-machine-api".into()),
        labels: Default::default(),
        annotations,
        owner_references: Vec::new(),
        template_labels: Default::default(),
        provider_spec: provider_spec.map(ProviderSpec::new),
    }
}

pub fn cluster() -> ClusterFacts {
    ClusterFacts {
        control_plane_arch: "x86_64".into(),
        multi_arch: false,
        known_images: BTreeSet::from(["ami-0c5a8e7f3b2d1e4f6".to_owned()]),
        vcenter: None,
    }
}

/// Decides with every platform and holds each decision to the host's
/// checks: a decision the host would refuse is a bug in the library.
pub fn decide_everywhere(stream: Result<&Stream, &str>, ms: &MachineSetView) {
    for platform in PLATFORMS {
        let decision: Decision = decide_loaded(platform, stream, ms, &cluster(), None);
        if let Err(why) = validate_decision(&decision) {
            panic!(
                "{}: the host would refuse {}: {why}",
                platform.platform_type(),
                decision.to_json()
            );
        }
    }
}

/// A P-256 public key whose private half was thrown away when it was made.
const NOBODYS_KEY: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEGsE5F5TvCk5V/MHevHM8bc8QoTWC
QTHqLxqeTayeT0UzG4MFscuTu4Y1WtW2Ojow7tmrCeHXHsq/SSDjqk1+9g==
-----END PUBLIC KEY-----
";

/// The manifest digest the signature corpora name.
pub const DIGEST: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";

/// Verifies `signature` of [`DIGEST`] under a key nobody can sign with:
/// the parsers and checks must be total, and acceptance is a bug.
pub fn never_verifies(signature: &Signature) {
    let keys = match Key::from_pem("nobody.pub", NOBODYS_KEY.as_bytes()) {
        Ok(key) => [key],
        Err(e) => panic!("the fixed key does not parse: {e}"),
    };
    match signature.verify(DIGEST, &keys) {
        Ok(key) => panic!("{signature:?} verified under {}", key.name),
        Err(why) => {
            let _ = why.to_string();
        }
    }
}
