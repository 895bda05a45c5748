//! Keys an OpenShift cluster already trusts: `verify.clusterImagePolicies`
//! takes the public keys of the `config.openshift.io/v1` ClusterImagePolicy
//! objects whose scopes cover an `oci:` module's repository, so a cluster
//! that declares who signs a registry's images does not repeat it in every
//! MachineConfigGuest.
//!
//! A scope covers a reference as in containers-policy.json (and upstream's
//! `ClusterImagePolicySpec.scopes`): the reference with its tag or digest,
//! its repository, each parent namespace, its host with the port, or a
//! `*.domain` wildcard of the host without the port (`*.example.com`
//! covers `a.example.com` and `a.b.example.com:5000`, not `example.com`).
//! Any covering policy counts, not only the most specific one. Only
//! `PublicKey` policies are verified; a covering `FulcioCAWithRekor` or
//! `PKI` policy refuses the module, so a requirement is never dropped.
//!
//! The objects are listed once per `--registry-poll` while an entry asks
//! for them, so an edited key applies on the next poll.

use base64::Engine as _;
use oci_client::Reference;
use serde::Deserialize;

use super::cosign::Key;

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

/// The policy type whose key the host verifies signatures with.
const PUBLIC_KEY: &str = "PublicKey";

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
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RootOfTrust {
    policy_type: String,
    #[serde(default)]
    public_key: Option<PublicKey>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PublicKey {
    /// Base64 of the PEM key (a Go `[]byte`).
    key_data: String,
}

/// Why the policies an entry selects give no keys to verify it with.
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
        "clusterimagepolicy/{name} covers {repository} with policyType {policy_type}; mco-host verifies PublicKey policies only"
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

    /// The policy's key, named `clusterimagepolicy/NAME` in errors.
    fn key(&self, reference: &Reference) -> Result<Key, PolicyError> {
        let name = format!("clusterimagepolicy/{}", self.name);
        let unreadable = |detail: String| PolicyError::Unreadable {
            name: self.name.clone(),
            detail,
        };
        let spec = self.spec.as_ref().map_err(|e| unreadable(e.clone()))?;
        let trust = &spec.policy.root_of_trust;
        if trust.policy_type != PUBLIC_KEY {
            return Err(PolicyError::Unsupported {
                name: self.name.clone(),
                repository: repository(reference),
                policy_type: trust.policy_type.clone(),
            });
        }
        let data = trust
            .public_key
            .as_ref()
            .ok_or_else(|| unreadable("a PublicKey policy without publicKey".into()))?;
        let pem = base64::engine::general_purpose::STANDARD
            .decode(data.key_data.trim())
            .map_err(|e| unreadable(format!("publicKey.keyData is not base64: {e}")))?;
        Key::from_pem(&name, &pem).map_err(|e| unreadable(format!("publicKey.keyData: {e}")))
    }
}

/// The keys of the policies `selector` takes for `reference`: every one
/// must be a PublicKey policy, and at least one must cover it.
pub fn keys_for(
    selector: &PolicySelector,
    policies: &[ImagePolicy],
    reference: &Reference,
) -> Result<Vec<Key>, PolicyError> {
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
    chosen.iter().map(|p| p.key(reference)).collect()
}

/// `registry/repository`, as scopes and errors name it.
fn repository(reference: &Reference) -> String {
    format!("{}/{}", reference.registry(), reference.repository())
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
#[cfg(test)]
pub(crate) const TEST_KEY_PEM: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEGsE5F5TvCk5V/MHevHM8bc8QoTWC
QTHqLxqeTayeT0UzG4MFscuTu4Y1WtW2Ojow7tmrCeHXHsq/SSDjqk1+9g==
-----END PUBLIC KEY-----
";

/// A policy as the apiserver would list it; `key_data` is used for
/// PublicKey ones.
#[cfg(test)]
pub(crate) fn test_policy(
    name: &str,
    scopes: &[&str],
    policy_type: &str,
    key_data: &str,
) -> ImagePolicy {
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
        let names = |keys: Result<Vec<Key>, PolicyError>| {
            keys.map(|k| k.into_iter().map(|k| k.name).collect::<Vec<_>>())
                .map_err(|e| e.to_string())
        };
        // Any covering policy counts, not only the most specific one.
        assert_eq!(
            names(keys_for(&PolicySelector::All, &policies, &image)),
            Ok(vec![
                "clusterimagepolicy/team".to_string(),
                "clusterimagepolicy/quay".to_string()
            ])
        );
        let named = PolicySelector::Named(vec!["quay".into()]);
        assert_eq!(
            names(keys_for(&named, &policies, &image)),
            Ok(vec!["clusterimagepolicy/quay".to_string()])
        );
    }

    #[test]
    fn hostile_or_unsupported_policies_refuse_the_module_and_say_why() {
        let image = reference("quay.io/team/mcn:v1");
        let refusal = |selector: PolicySelector, policies: &[ImagePolicy]| match keys_for(
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
        for policy_type in ["FulcioCAWithRekor", "PKI", "Anything"] {
            let keyless = policy("keyless", &["quay.io"], policy_type, "");
            let good = policy("good", &["quay.io"], PUBLIC_KEY, &key_data());
            assert_eq!(
                refusal(all(), &[good, keyless]),
                format!(
                    "clusterimagepolicy/keyless covers quay.io/team/mcn with policyType {policy_type}; mco-host verifies PublicKey policies only"
                )
            );
        }
        let not_base64 = policy("p", &["quay.io"], PUBLIC_KEY, "not base64!");
        assert!(
            refusal(all(), &[not_base64])
                .starts_with("clusterimagepolicy/p: publicKey.keyData is not base64")
        );
        let b64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
        let junk_der = b64("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n");
        for data in [junk_der, b64("hello")] {
            let not_a_key = policy("p", &["quay.io"], PUBLIC_KEY, &data);
            assert!(refusal(all(), &[not_a_key]).starts_with(
                "clusterimagepolicy/p: publicKey.keyData: not a PEM ECDSA P-256 public key"
            ));
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
}
