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
        ec2: None,
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

/// A 2048-bit RSA public key whose private half was thrown away when it
/// was made.
const NOBODYS_RSA_KEY: &str = "-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAzIyhNgod6sqX6oy8MHez
+WKqOb97pmIopFp8IToVyw8tQ6eDrmaSc4V26+Si/QVXlE7RC0kJNZclhshcf9q6
ZYdfqEItIs0Fl77kaDkoWqPRTX0rZ+VQsz5icBow8Y47y3FHaAmHfq3tcd1Do7wx
RQSbeG01fbIFmWIycXkSOrJ7/cLhgBfJ0TdhM7nk/3YJvls1m87fnR/4jRWaxK1A
a3NOdc63C0A+Pa8Q5+cWvIeHX9/vb9kdQgmapzTPk592XMUv5hTzvXO7aKZ7aTMn
4y2TqkRehlBS5CnbcusdBolz9Nf9gE9TjPw2nGxwPzFkMCRAf/AFzK1AomB54nmY
zwIDAQAB
-----END PUBLIC KEY-----
";

/// Verifies `signature` of [`DIGEST`] under keys nobody can sign with (an
/// ECDSA and an RSA one): the parsers and checks must be total, and
/// acceptance is a bug.
pub fn never_verifies(signature: &Signature) {
    let key = |name: &str, pem: &str| {
        Key::from_pem(name, pem.as_bytes())
            .unwrap_or_else(|e| panic!("the fixed key {name} does not parse: {e}"))
    };
    let keys = [
        key("nobody.pub", NOBODYS_KEY),
        key("nobody-rsa.pub", NOBODYS_RSA_KEY),
    ];
    match signature.verify(DIGEST, &keys) {
        Ok((key, _)) => panic!("{signature:?} verified under {}", key.name),
        Err(why) => {
            let _ = why.to_string();
        }
    }
}

/// A self-signed P-256 root whose private half was thrown away when
/// `mco_test_support::pki` made it.
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

/// A self-signed RSA root of that key.
const NOBODYS_RSA_ROOT: &str = "-----BEGIN CERTIFICATE-----
MIIDPzCCAiegAwIBAgIUM2OUT3JS4VHVqVMK00XHhmDAlPgwDQYJKoZIhvcNAQEL
BQAwJzEQMA4GA1UECgwHbWNvLWUyZTETMBEGA1UEAwwKbm9ib2R5IFJTQTAeFw0y
NjEyMDYxMDM2MjBaFw0zNjEyMDMxMDM2MjBaMCcxEDAOBgNVBAoMB21jby1lMmUx
EzARBgNVBAMMCm5vYm9keSBSU0EwggEiMA0GCSqGSIb3DQEBAQUAA4IBDwAwggEK
AoIBAQDMjKE2Ch3qypfqjLwwd7P5Yqo5v3umYiikWnwhOhXLDy1Dp4OuZpJzhXbr
5KL9BVeUTtELSQk1lyWGyFx/2rplh1+oQi0izQWXvuRoOShao9FNfStn5VCzPmJw
GjDxjjvLcUdoCYd+re1x3UOjvDFFBJt4bTV9sgWZYjJxeRI6snv9wuGAF8nRN2Ez
ueT/dgm+WzWbzt+dH/iNFZrErUBrc051zrcLQD49rxDn5xa8h4df3+9v2R1CCZqn
NM+Tn3ZcxS/mFPO9c7topntpMyfjLZOqRF6GUFLkKdty6x0GiXP01/2AT1OM/Dac
bHA/MWQwJEB/8AXMrUCiYHnieZjPAgMBAAGjYzBhMB0GA1UdDgQWBBTm0/4hRVr2
c7g2z6UcwGknIrVJtDAfBgNVHSMEGDAWgBTm0/4hRVr2c7g2z6UcwGknIrVJtDAP
BgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB/wQEAwICBDANBgkqhkiG9w0BAQsFAAOC
AQEAFidnzZo0wWsfjWiZLLZOOJk12ZpqJf0qtN4/2X4K5jL+nQVEmuA6EHGakvZf
m2lMusQ3bopDjTGmc9xkFfuITYqTk6AoNhXBEQMlfJ9cn3tmyhTUwX53pDVhfcsV
IfXqc6lmbyc7vklshnKjD9w5PQgvN1omiRn7xTeXag74KvoKlwNPKcg4CEcEftJv
x9X34+4hU7u40qByoCpvZVIISmzD/iZ17IVL9QNAYLzFSbvYZgjUpthiWqVtz1Z+
wyZy19SeqA10kdPDPJpKQX6RX77AyNpYXHKkcdp2SLR7VG5TP52f6BqW+5q4Shln
eBM/higM3sZtmLHvqiAZwHW55Q==
-----END CERTIFICATE-----
";

/// Verifies certificate-based `signature` of [`DIGEST`] against trust
/// nobody can sign under: a Fulcio policy whose CA and log are nobody's
/// (the log checks run first), and PKI policies without a log, of an
/// ECDSA and an RSA root (the certificate chain checks run). Parsing and
/// checks must be total, and acceptance is a bug.
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
        (
            TrustRoot::from_pki(NOBODYS_RSA_ROOT.as_bytes(), b""),
            LogRequirement::Optional { now: 1_811_808_000 },
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
