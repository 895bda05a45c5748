//! What the fuzz targets share: the platform rules, a fixed MachineSet and
//! stream, and the checks every decision must pass; a cosign key and a
//! certificate authority no input may verify under.

use std::collections::{BTreeMap, BTreeSet};

use mco_bootimage::{
    ClusterFacts, Decision, MachineSetView, Platform, ProviderSpec, Stream, decide_loaded,
    validate_decision,
};
use mco_registry_formats::cosign::{Key, Signature};
use mco_registry_formats::sigstore::{LogRequirement, TrustRoot, verify_certificate};
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

/// A self-signed P-256 root whose private half was thrown away when
/// `mco_e2e::pki` made it.
const NOBODYS_ROOT: &str = "-----BEGIN CERTIFICATE-----
MIIBfjCCASSgAwIBAgIIfbbMTbbCZ8MwCgYIKoZIzj0EAwIwIzEQMA4GA1UECgwH
bWNvLWUyZTEPMA0GA1UEAwwGbm9ib2R5MB4XDTI2MTIwNDE5MTgwNVoXDTM2MTIw
MjE5MTgwNVowIzEQMA4GA1UECgwHbWNvLWUyZTEPMA0GA1UEAwwGbm9ib2R5MFkw
EwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEVRJXDGLOT0Vz+y+to/0lSBigwTditjT/
g7pDiu+tKyNSgcBrs+985//xXiiHr2C61IZCA2bf5pxb65usC8LXmKNCMEAwHQYD
VR0OBBYEFNH5UXbVHk0jH3y4SdGurHb+J2V/MA8GA1UdEwEB/wQFMAMBAf8wDgYD
VR0PAQH/BAQDAgEGMAoGCCqGSM49BAMCA0gAMEUCIQCjWjwAKyJ7ppNLunoghH8Z
1gS7F7Q9RBvBAip158/WHwIgQQeCs1QGdb/NsuwXKznzU+HQ2VBnzOyIpJUxR6sM
Xng=
-----END CERTIFICATE-----
";

/// Verifies certificate-based `signature` of [`DIGEST`] against trust
/// nobody can sign under: a Fulcio policy whose CA and log are nobody's
/// (the log checks run first), and a PKI policy without a log (the
/// certificate chain checks run). Parsing and checks must be total, and
/// acceptance is a bug.
pub fn never_verifies_certificate(signature: &Signature) {
    let trusts = [
        (
            TrustRoot::from_fulcio(NOBODYS_ROOT.as_bytes(), NOBODYS_KEY.as_bytes()),
            LogRequirement::Required,
        ),
        (
            TrustRoot::from_pki(NOBODYS_ROOT.as_bytes(), b""),
            LogRequirement::Optional { now: 1_800_000_000 },
        ),
    ];
    for (trust, log) in trusts {
        let trust = trust.unwrap_or_else(|e| panic!("the fixed trust root does not parse: {e}"));
        match verify_certificate(signature, &trust, DIGEST, log) {
            Ok(signer) => panic!("{signature:?} verified as {signer:?}"),
            Err(why) => {
                let _ = why.to_string();
            }
        }
    }
}
