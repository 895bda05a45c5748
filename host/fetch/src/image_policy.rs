//! Signers an OpenShift cluster already trusts: `verify.clusterImagePolicies`
//! takes the signers of the `config.openshift.io/v1` ClusterImagePolicy
//! objects whose scopes cover an `oci:` module's repository, so a cluster
//! that declares who signs a registry's images does not repeat it in every
//! MachineConfigGuest. Scopes, policy types and `signedIdentity` are read as
//! the cluster's own image verification reads them (containers-policy.json,
//! upstream's `ClusterImagePolicySpec`); a policy this host cannot read
//! refuses the module, so a requirement is never dropped. The rules:
//! docs/guests/signing.md; how each type becomes a signer:
//! docs/dev/verification.md.

use base64::Engine as _;
use mco_registry_formats::sigstore::{Identity, IssuerMatch, SubjectMatch, TrustRoot};
use oci_client::Reference;
use serde::Deserialize;

use crate::signature_policy::Requirement;
use crate::signed_identity::{SignedIdentitySpec, repository, signed_identity};
use mco_registry_formats::cosign::Key;

/// `verify.clusterImagePolicies`: `true` takes every policy that covers
/// the module; a list takes the named ones, each of which must cover it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PolicySelector {
    All,
    Named(Vec<String>),
}

/// The ClusterImagePolicies as a poll listed them, or why they could not
/// be listed (outside the cluster, or without the kind or the right).
pub type Listed = Result<Vec<ImagePolicy>, String>;

/// The policy types the host verifies, as `policyType` spells them.
const PUBLIC_KEY: &str = "PublicKey";
const PKI: &str = "PKI";
const FULCIO: &str = "FulcioCAWithRekor";

/// A ClusterImagePolicy as listed: its name and what of its spec the host
/// reads, or why the spec could not be read.
#[derive(Debug, Clone)]
pub struct ImagePolicy {
    pub name: String,
    spec: Result<Spec, String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    #[serde(default)]
    scopes: Vec<String>,
    policy: Policy,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Policy {
    root_of_trust: RootOfTrust,
    #[serde(default)]
    signed_identity: Option<SignedIdentitySpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RootOfTrust {
    policy_type: String,
    #[serde(default)]
    public_key: Option<PublicKey>,
    #[serde(default)]
    pki: Option<Pki>,
    #[serde(default, rename = "fulcioCAWithRekor")]
    fulcio_ca_with_rekor: Option<Fulcio>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PublicKey {
    /// Base64 of the PEM key (a Go `[]byte`).
    key_data: String,
}

/// `rootOfTrust.pki`; the data fields are base64 of PEM, as Go's `[]byte`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Pki {
    ca_roots_data: String,
    #[serde(default)]
    ca_intermediates_data: Option<String>,
    pki_certificate_subject: PkiSubject,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PkiSubject {
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    hostname: Option<String>,
}

/// `rootOfTrust.fulcioCAWithRekor`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Fulcio {
    #[serde(rename = "fulcioCAData")]
    fulcio_ca_data: String,
    rekor_key_data: String,
    fulcio_subject: FulcioSubject,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FulcioSubject {
    oidc_issuer: String,
    signed_email: String,
}

/// Why the policies an entry selects give no signers to verify it with.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("no ClusterImagePolicy covers {0}")]
    NoneCovers(String),
    #[error("clusterimagepolicy/{0} does not exist")]
    Missing(String),
    #[error("clusterimagepolicy/{name} does not cover {repository} (scopes: {scopes})")]
    NotCovering {
        name: String,
        repository: String,
        scopes: String,
    },
    #[error(
        "clusterimagepolicy/{name} covers {repository} with policyType {policy_type}; mco-host verifies PublicKey, PKI and FulcioCAWithRekor policies"
    )]
    Unsupported {
        name: String,
        repository: String,
        policy_type: String,
    },
    #[error("clusterimagepolicy/{name}: {detail}")]
    Unreadable { name: String, detail: String },
}

impl ImagePolicy {
    /// A listed object's `spec`; a spec of another shape is kept as its
    /// error, so one broken policy fails only the entries it may concern.
    pub fn decode(name: &str, spec: &serde_json::Value) -> ImagePolicy {
        ImagePolicy {
            name: name.to_string(),
            spec: Spec::deserialize(spec).map_err(|e| format!("the spec does not parse: {e}")),
        }
    }

    /// Whether a scope of the policy covers `reference`; a policy whose
    /// spec does not parse may, so it does.
    fn covers(&self, reference: &Reference) -> bool {
        let Ok(spec) = &self.spec else {
            return true;
        };
        let identities = identities(reference);
        spec.scopes.iter().any(|scope| identities.contains(scope))
    }

    /// The policy's signer, named `clusterimagepolicy/NAME`.
    fn signer(&self, reference: &Reference) -> Result<Requirement, PolicyError> {
        let name = format!("clusterimagepolicy/{}", self.name);
        let unreadable = |detail: String| self.unreadable(detail);
        let spec = self.spec.as_ref().map_err(|e| unreadable(e.clone()))?;
        let identity =
            signed_identity(spec.policy.signed_identity.as_ref(), reference).map_err(unreadable)?;
        self.root_signer(name, spec, reference)
            .map(|requirement| requirement.with_signed_identity(identity))
    }

    fn unreadable(&self, detail: String) -> PolicyError {
        PolicyError::Unreadable {
            name: self.name.clone(),
            detail,
        }
    }

    /// The signer of the policy's `rootOfTrust`.
    fn root_signer(
        &self,
        name: String,
        spec: &Spec,
        reference: &Reference,
    ) -> Result<Requirement, PolicyError> {
        let unreadable = |detail: String| self.unreadable(detail);
        let trust = &spec.policy.root_of_trust;
        let missing =
            |field: &str| unreadable(format!("a {} policy without {field}", trust.policy_type));
        let decoded = |field: &str, data: &str| {
            base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .map_err(|e| unreadable(format!("{field} is not base64: {e}")))
        };
        match trust.policy_type.as_str() {
            PUBLIC_KEY => {
                let data = trust
                    .public_key
                    .as_ref()
                    .ok_or_else(|| missing("publicKey"))?;
                let pem = decoded("publicKey.keyData", &data.key_data)?;
                Key::from_pem(&name, &pem)
                    .map(Requirement::key)
                    .map_err(|e| unreadable(format!("publicKey.keyData: {e}")))
            }
            PKI => {
                let pki = trust.pki.as_ref().ok_or_else(|| missing("pki"))?;
                let subject = &pki.pki_certificate_subject;
                // The email meets email SANs only, the hostname DNS SANs
                // only, as the cluster's verifier checks them.
                let email = subject.email.clone().map(SubjectMatch::Email);
                let hostname = subject.hostname.clone().map(SubjectMatch::Hostname);
                let identities: Vec<Identity> = [email, hostname]
                    .into_iter()
                    .flatten()
                    .map(|subject| Identity {
                        subject,
                        issuer: None,
                    })
                    .collect();
                if identities.is_empty() {
                    return Err(missing("pkiCertificateSubject.email or hostname"));
                }
                let roots = decoded("pki.caRootsData", &pki.ca_roots_data)?;
                let intermediates = match &pki.ca_intermediates_data {
                    Some(data) => decoded("pki.caIntermediatesData", data)?,
                    None => Vec::new(),
                };
                let root = TrustRoot::from_pki(&roots, &intermediates)
                    .map_err(|e| unreadable(format!("pki: {e}")))?;
                Ok(Requirement::certificate(
                    name,
                    root,
                    identities,
                    false,
                    &[roots.as_slice(), intermediates.as_slice()],
                ))
            }
            FULCIO => {
                let fulcio = trust
                    .fulcio_ca_with_rekor
                    .as_ref()
                    .ok_or_else(|| missing("fulcioCAWithRekor"))?;
                let ca = decoded("fulcioCAWithRekor.fulcioCAData", &fulcio.fulcio_ca_data)?;
                let rekor = decoded("fulcioCAWithRekor.rekorKeyData", &fulcio.rekor_key_data)?;
                let root = TrustRoot::from_fulcio(&ca, &rekor)
                    .map_err(|e| unreadable(format!("fulcioCAWithRekor: {e}")))?;
                let subject = &fulcio.fulcio_subject;
                let identity = Identity {
                    subject: SubjectMatch::Email(subject.signed_email.clone()),
                    issuer: Some(IssuerMatch::Equal(subject.oidc_issuer.clone())),
                };
                Ok(Requirement::certificate(
                    name,
                    root,
                    vec![identity],
                    true,
                    &[ca.as_slice(), rekor.as_slice()],
                ))
            }
            other => Err(PolicyError::Unsupported {
                name: self.name.clone(),
                repository: repository(reference),
                policy_type: other.to_string(),
            }),
        }
    }
}

/// The signers of the policies `selector` takes for `reference`: every
/// one must be readable and of a type the host verifies, and at least one
/// must cover it.
pub fn signers_for(
    selector: &PolicySelector,
    policies: &[ImagePolicy],
    reference: &Reference,
) -> Result<Vec<Requirement>, PolicyError> {
    let chosen: Vec<&ImagePolicy> = match selector {
        PolicySelector::All => policies.iter().filter(|p| p.covers(reference)).collect(),
        PolicySelector::Named(names) => names
            .iter()
            .map(|name| {
                let policy = policies
                    .iter()
                    .find(|p| &p.name == name)
                    .ok_or_else(|| PolicyError::Missing(name.clone()))?;
                if !policy.covers(reference) {
                    let scopes = policy.spec.as_ref().map_or(String::new(), |s| {
                        if s.scopes.is_empty() {
                            "none".into()
                        } else {
                            s.scopes.join(", ")
                        }
                    });
                    return Err(PolicyError::NotCovering {
                        name: name.clone(),
                        repository: repository(reference),
                        scopes,
                    });
                }
                Ok(policy)
            })
            .collect::<Result<_, _>>()?,
    };
    if chosen.is_empty() {
        return Err(PolicyError::NoneCovers(repository(reference)));
    }
    chosen.iter().map(|p| p.signer(reference)).collect()
}

/// Every scope that covers `reference`, most specific first: the
/// reference with its tag and with its digest, its repository and each
/// parent namespace, the host with its port, then the `*.` wildcards of
/// the host without its port.
fn identities(reference: &Reference) -> Vec<String> {
    let repository = repository(reference);
    let mut scopes = Vec::new();
    if let Some(tag) = reference.tag() {
        scopes.push(format!("{repository}:{tag}"));
    }
    if let Some(digest) = reference.digest() {
        scopes.push(format!("{repository}@{digest}"));
    }
    let mut name = repository.as_str();
    loop {
        scopes.push(name.to_string());
        match name.rsplit_once('/') {
            Some((parent, _)) => name = parent,
            None => break,
        }
    }
    let mut host = name.split_once(':').map_or(name, |(host, _port)| host);
    while let Some((_, rest)) = host.split_once('.') {
        scopes.push(format!("*.{rest}"));
        host = rest;
    }
    scopes
}

/// A P-256 key cosign could have written, for tests here and of callers.
#[cfg(any(test, feature = "test-support"))]
pub const TEST_KEY_PEM: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEGsE5F5TvCk5V/MHevHM8bc8QoTWC
QTHqLxqeTayeT0UzG4MFscuTu4Y1WtW2Ojow7tmrCeHXHsq/SSDjqk1+9g==
-----END PUBLIC KEY-----
";

/// A policy as the apiserver would list it; `key_data` is used for
/// PublicKey ones.
#[cfg(any(test, feature = "test-support"))]
pub fn test_policy(name: &str, scopes: &[&str], policy_type: &str, key_data: &str) -> ImagePolicy {
    let mut root = serde_json::json!({"policyType": policy_type});
    if policy_type == PUBLIC_KEY {
        root["publicKey"] = serde_json::json!({"keyData": key_data});
    }
    ImagePolicy::decode(
        name,
        &serde_json::json!({"scopes": scopes, "policy": {"rootOfTrust": root}}),
    )
}

#[cfg(test)]
mod tests {
    use mco_registry_formats::cosign::Signature;
    use serde_json::json;

    use super::*;

    /// [`TEST_KEY_PEM`] as keyData holds it.
    fn key_data() -> String {
        base64::engine::general_purpose::STANDARD.encode(TEST_KEY_PEM)
    }

    fn reference(text: &str) -> Reference {
        Reference::try_from(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    use super::test_policy as policy;

    #[test]
    fn scopes_cover_as_in_containers_policy_json() {
        let digest = format!("sha256:{}", "a".repeat(64));
        let cases: &[(&str, &str, bool)] = &[
            ("quay.io/team/mcn:v1", "quay.io", true),
            ("quay.io/team/mcn:v1", "quay.io/team", true),
            ("quay.io/team/mcn:v1", "quay.io/team/mcn", true),
            ("quay.io/team/mcn:v1", "quay.io/team/mcn:v1", true),
            ("quay.io/team/mcn:v1", "quay.io/team/mcn:v2", false),
            ("quay.io/team/mcn:v1", "quay.io/tea", false),
            ("quay.io/team/mcn:v1", "quay.io/team/mc", false),
            ("quay.io/team/mcn:v1", "quay.io/team/mcn/sub", false),
            ("quay.io/team/mcn:v1", "quay.io/other", false),
            ("quay.io/team/mcn:v1", "*.io", true),
            ("quay.io/team/mcn:v1", "*.quay.io", false),
            ("quay.io/team/mcn:v1", "quay.io:443", false),
            ("quay.io/team/mcn:v1", "", false),
            ("quay.io/team/mcn:v1", "*", false),
            ("quay.io/team/mcn:v1", "QUAY.IO", false),
            ("a.b.example.com/ns/m:1", "*.example.com", true),
            ("a.b.example.com/ns/m:1", "*.b.example.com", true),
            ("a.b.example.com/ns/m:1", "*.a.b.example.com", false),
            ("example.com/ns/m:1", "*.example.com", false),
            ("r.example.com:5000/ns/m:1", "r.example.com:5000", true),
            ("r.example.com:5000/ns/m:1", "r.example.com", false),
            ("r.example.com:5000/ns/m:1", "r.example.com:5001/ns", false),
            ("r.example.com:5000/ns/m:1", "*.example.com", true),
            ("r.example.com:5000/ns/m:1", "*.example.com:5000", false),
            ("busybox:1", "docker.io/library/busybox", true),
            ("busybox:1", "docker.io/library", true),
            ("busybox:1", "busybox", false),
            (
                "127.0.0.1:5000/guests/mcn:v1",
                "127.0.0.1:5000/guests",
                true,
            ),
        ];
        for (image, scope, covered) in cases {
            let p = policy("p", &[*scope], PUBLIC_KEY, &key_data());
            assert_eq!(p.covers(&reference(image)), *covered, "{scope} of {image}");
        }
        let pinned = reference(&format!("quay.io/team/mcn@{digest}"));
        let p = |scope: String| policy("p", &[scope.as_str()], PUBLIC_KEY, &key_data());
        assert!(p(format!("quay.io/team/mcn@{digest}")).covers(&pinned));
        assert!(!p(format!("quay.io/team/mcn@sha256:{}", "b".repeat(64))).covers(&pinned));
        assert!(p("quay.io/team".into()).covers(&pinned));
        let no_scopes = policy("p", &[], PUBLIC_KEY, &key_data());
        assert!(!no_scopes.covers(&pinned));
    }

    #[test]
    fn covering_public_key_policies_give_their_keys() {
        let image = reference("quay.io/team/mcn:v1");
        let policies = [
            policy("team", &["quay.io/team"], PUBLIC_KEY, &key_data()),
            policy("quay", &["quay.io"], PUBLIC_KEY, &key_data()),
            policy("elsewhere", &["ghcr.io"], "FulcioCAWithRekor", ""),
        ];
        let names = |keys: Result<Vec<Requirement>, PolicyError>| {
            keys.map(|k| k.into_iter().map(|k| k.name).collect::<Vec<_>>())
                .map_err(|e| e.to_string())
        };
        // Any covering policy counts, not only the most specific one.
        assert_eq!(
            names(signers_for(&PolicySelector::All, &policies, &image)),
            Ok(vec![
                "clusterimagepolicy/team".to_string(),
                "clusterimagepolicy/quay".to_string()
            ])
        );
        let named = PolicySelector::Named(vec!["quay".into()]);
        assert_eq!(
            names(signers_for(&named, &policies, &image)),
            Ok(vec!["clusterimagepolicy/quay".to_string()])
        );
    }

    #[test]
    fn hostile_or_unsupported_policies_refuse_the_module_and_say_why() {
        let image = reference("quay.io/team/mcn:v1");
        let refusal = |selector: PolicySelector, policies: &[ImagePolicy]| match signers_for(
            &selector, policies, &image,
        ) {
            Ok(keys) => panic!("{selector:?} gave {} keys", keys.len()),
            Err(e) => e.to_string(),
        };
        let all = || PolicySelector::All;
        let named = |name: &str| PolicySelector::Named(vec![name.to_string()]);
        assert_eq!(
            refusal(all(), &[]),
            "no ClusterImagePolicy covers quay.io/team/mcn"
        );
        let other = policy("other", &["ghcr.io"], PUBLIC_KEY, &key_data());
        assert_eq!(
            refusal(all(), std::slice::from_ref(&other)),
            "no ClusterImagePolicy covers quay.io/team/mcn"
        );
        assert_eq!(
            refusal(named("other"), std::slice::from_ref(&other)),
            "clusterimagepolicy/other does not cover quay.io/team/mcn (scopes: ghcr.io)"
        );
        let empty = policy("empty", &[], PUBLIC_KEY, &key_data());
        assert_eq!(
            refusal(named("empty"), &[empty]),
            "clusterimagepolicy/empty does not cover quay.io/team/mcn (scopes: none)"
        );
        assert_eq!(
            refusal(named("gone"), &[other]),
            "clusterimagepolicy/gone does not exist"
        );
        let good = || policy("good", &["quay.io"], PUBLIC_KEY, &key_data());
        let other_type = policy("other", &["quay.io"], "Anything", "");
        assert_eq!(
            refusal(all(), &[good(), other_type]),
            "clusterimagepolicy/other covers quay.io/team/mcn with policyType Anything; mco-host verifies PublicKey, PKI and FulcioCAWithRekor policies"
        );
        // A PKI or Fulcio policy without its data, or with data that is
        // no PEM certificate or key, refuses the module naming the field.
        for (policy_type, why) in [
            (PKI, "a PKI policy without pki"),
            (
                FULCIO,
                "a FulcioCAWithRekor policy without fulcioCAWithRekor",
            ),
        ] {
            let empty = policy("keyless", &["quay.io"], policy_type, "");
            assert_eq!(
                refusal(all(), &[good(), empty]),
                format!("clusterimagepolicy/keyless: {why}")
            );
        }
        let b64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
        let not_a_certificate =
            b64("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
        let pki = |roots: &str, subject: serde_json::Value| {
            ImagePolicy::decode(
                "pki",
                &json!({"scopes": ["quay.io"], "policy": {"rootOfTrust": {"policyType": PKI,
                    "pki": {"caRootsData": roots, "pkiCertificateSubject": subject}}}}),
            )
        };
        let email = json!({"email": "ci@example.com"});
        assert!(
            refusal(all(), &[pki("%%", email.clone())])
                .starts_with("clusterimagepolicy/pki: pki.caRootsData is not base64")
        );
        assert!(
            refusal(all(), &[pki(&not_a_certificate, email)])
                .starts_with("clusterimagepolicy/pki: pki: ")
        );
        assert_eq!(
            refusal(all(), &[pki(&not_a_certificate, json!({}))]),
            "clusterimagepolicy/pki: a PKI policy without pkiCertificateSubject.email or hostname"
        );
        let fulcio = ImagePolicy::decode(
            "fulcio",
            &json!({"scopes": ["quay.io"], "policy": {"rootOfTrust": {"policyType": FULCIO,
                "fulcioCAWithRekor": {"fulcioCAData": not_a_certificate, "rekorKeyData": key_data(),
                    "fulcioSubject": {"oidcIssuer": "https://issuer", "signedEmail": "ci@example.com"}}}}}),
        );
        assert!(
            refusal(all(), &[fulcio]).starts_with("clusterimagepolicy/fulcio: fulcioCAWithRekor: ")
        );
        let not_base64 = policy("p", &["quay.io"], PUBLIC_KEY, "not base64!");
        assert!(
            refusal(all(), &[not_base64])
                .starts_with("clusterimagepolicy/p: publicKey.keyData is not base64")
        );
        let junk_der = b64("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n");
        for data in [junk_der, b64("hello")] {
            let not_a_key = policy("p", &["quay.io"], PUBLIC_KEY, &data);
            assert!(
                refusal(all(), &[not_a_key])
                    .starts_with("clusterimagepolicy/p: publicKey.keyData: not a PEM public key")
            );
        }
        let no_key = ImagePolicy::decode(
            "p",
            &json!({"scopes": ["quay.io"], "policy": {"rootOfTrust": {"policyType": PUBLIC_KEY}}}),
        );
        assert_eq!(
            refusal(all(), &[no_key]),
            "clusterimagepolicy/p: a PublicKey policy without publicKey"
        );
        // A spec of another shape may cover anything: it refuses.
        for spec in [
            json!({"scopes": "quay.io"}),
            json!(null),
            json!({"scopes": []}),
        ] {
            let broken = ImagePolicy::decode("broken", &spec);
            assert!(
                refusal(all(), &[broken])
                    .starts_with("clusterimagepolicy/broken: the spec does not parse")
            );
        }
    }

    /// A simple-signing signature claiming `claim` (not verified: the
    /// signed identity is checked after the signer).
    fn claiming(claim: &str) -> Signature {
        let payload = json!({"critical": {"identity": {"docker-reference": claim},
            "image": {"docker-manifest-digest": "sha256:1"}, "type": "cosign container image signature"}});
        Signature::SimpleSigning {
            payload: payload.to_string().into_bytes(),
            signature: None,
            certificate: Default::default(),
        }
    }

    /// The attacks: a signature made for another repository's image (of
    /// the same bytes, so the digest matches), for another tag, or naming
    /// no image, offered for a module whose policy says which image its
    /// signatures must claim.
    #[test]
    fn signed_identity_is_read_as_the_cluster_reads_it() {
        let digest = format!("sha256:{}", "a".repeat(64));
        let pinned = reference(&format!("quay.io/team/mcn@{digest}"));
        let tagged = reference("quay.io/team/mcn:v1");
        let spec = |value: serde_json::Value| -> Option<SignedIdentitySpec> {
            Some(serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}")))
        };
        let repository = spec(json!({"matchPolicy": "MatchRepository"}));
        let exact = spec(json!({"matchPolicy": "ExactRepository",
            "exactRepository": {"repository": "quay.io/release/mcn"}}));
        let cases: &[(&Option<SignedIdentitySpec>, &Reference, &str, Option<&str>)] = &[
            // The default: by digest, the repository; by tag, exactly.
            (&None, &pinned, "quay.io/team/mcn", None),
            (&None, &pinned, "quay.io/team/mcn:v9", None),
            (
                &None,
                &pinned,
                "quay.io/evil/mcn",
                Some(
                    "claims quay.io/evil/mcn, not repository quay.io/team/mcn (signedIdentity MatchRepoDigestOrExact)",
                ),
            ),
            (&None, &tagged, "quay.io/team/mcn:v1", None),
            (
                &None,
                &tagged,
                "quay.io/team/mcn",
                Some("claims quay.io/team/mcn, not quay.io/team/mcn:v1"),
            ),
            (
                &None,
                &tagged,
                "quay.io/team/mcn:v2",
                Some("not quay.io/team/mcn:v1"),
            ),
            (&repository, &tagged, "quay.io/team/mcn", None),
            (&repository, &tagged, "quay.io/team/mcn:v2", None),
            (
                &repository,
                &pinned,
                "quay.io/team/mcn2",
                Some("not repository quay.io/team/mcn"),
            ),
            (
                &repository,
                &pinned,
                "quay.io/team",
                Some("not repository quay.io/team/mcn"),
            ),
            (&exact, &pinned, "quay.io/release/mcn", None),
            (
                &exact,
                &pinned,
                "quay.io/team/mcn",
                Some("not repository quay.io/release/mcn (signedIdentity ExactRepository)"),
            ),
            (
                &repository,
                &pinned,
                "",
                Some("claims \"\", no image reference"),
            ),
        ];
        for (spec, reference, claim, refused) in cases {
            let identity =
                signed_identity(spec.as_ref(), reference).unwrap_or_else(|e| panic!("{e}"));
            let result = identity.check(&claiming(claim));
            match refused {
                None => assert_eq!(result, Ok(()), "{spec:?} {reference} {claim}"),
                Some(why) => assert!(
                    result.as_ref().is_err_and(|e| e.contains(why)),
                    "{spec:?} {reference} {claim}: {result:?}"
                ),
            }
        }
        // A payload naming no image, and a bundle, which names none.
        let identity = signed_identity(None, &pinned).unwrap_or_else(|e| panic!("{e}"));
        let nameless = Signature::SimpleSigning {
            payload: b"{}".to_vec(),
            signature: None,
            certificate: Default::default(),
        };
        assert!(
            identity
                .check(&nameless)
                .is_err_and(|e| e.contains("claims no image"))
        );
        assert_eq!(identity.check(&Signature::Bundle(b"{}".to_vec())), Ok(()));
    }

    #[test]
    fn a_signed_identity_not_verified_refuses_the_module() {
        let image = reference("quay.io/team/mcn:v1");
        let with_identity = |identity: serde_json::Value| {
            ImagePolicy::decode(
                "p",
                &json!({"scopes": ["quay.io"], "policy": {"rootOfTrust": {"policyType": PUBLIC_KEY,
                    "publicKey": {"keyData": key_data()}}, "signedIdentity": identity}}),
            )
        };
        let cases = [
            (
                json!({"matchPolicy": "RemapIdentity", "remapIdentity": {"prefix": "quay.io", "signedPrefix": "evil.io"}}),
                "clusterimagepolicy/p: signedIdentity.matchPolicy RemapIdentity is not verified; mco-host \
                 verifies MatchRepoDigestOrExact, MatchRepository and ExactRepository",
            ),
            (
                json!({"matchPolicy": "ExactRepository"}),
                "clusterimagepolicy/p: signedIdentity ExactRepository without exactRepository.repository",
            ),
        ];
        for (identity, why) in cases {
            match signers_for(&PolicySelector::All, &[with_identity(identity)], &image) {
                Ok(signers) => panic!("{} signers", signers.len()),
                Err(e) => assert!(e.to_string().starts_with(why), "{e}"),
            }
        }
        let fine = with_identity(json!({"matchPolicy": "MatchRepository"}));
        assert!(signers_for(&PolicySelector::All, &[fine], &image).is_ok());
    }
}
