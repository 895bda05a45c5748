//! A module's signature policy with its signers read (keys, trust roots):
//! which of the signatures found for a manifest meet it and, when they do
//! not, which requirement failed and why. The groups (any one, `allOf`,
//! `anyOf`) are as docs/guests/signature-policy.md says; one signature never
//! counts twice, since signatures are counted as signings
//! (`cosign::Signing`), not by position or bytes. How a signer is met:
//! docs/dev/verification.md.

use std::fmt;
use std::sync::Arc;

use mco_registry_formats::sigstore::{self, Identity, LogRequirement, TrustRoot};
use sha2::{Digest as _, Sha256};

use mco_registry_formats::cosign::{Key, Signature, Signing};

use crate::signed_identity::SignedIdentity;

/// One signer a policy names, ready to check signatures.
#[derive(Clone)]
pub struct Requirement {
    /// How refusals and `guests verify` name it: `key team.pub`,
    /// `identity ci@example.com from https://issuer`,
    /// `clusterimagepolicy/NAME`.
    pub name: String,
    check: Check,
    /// Which image its signatures must claim (a ClusterImagePolicy's
    /// `signedIdentity`).
    signed_identity: Option<SignedIdentity>,
}

#[derive(Clone)]
enum Check {
    Key(Key),
    Certificate(Arc<Certified>),
}

/// What a certificate signer asks of a signature.
struct Certified {
    trust: TrustRoot,
    /// Every one of which the certificate must match (a PKI policy may
    /// name an email and a hostname).
    identities: Vec<Identity>,
    /// Whether a transparency log entry must vouch for the signature.
    log_required: bool,
    /// The trust material's bytes and the identities, hashed: what tells
    /// two certificate signers apart in the memo of verified digests.
    fingerprint: String,
}

impl fmt::Debug for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Requirement({})", self.name)
    }
}

impl Requirement {
    /// A signer by key; its name is the key's.
    pub fn key(key: Key) -> Requirement {
        Requirement {
            name: key.name.clone(),
            check: Check::Key(key),
            signed_identity: None,
        }
    }

    /// A signer by certificate: one chaining to `trust`, matching every
    /// one of `identities`, in a log `trust` lists when `log_required`.
    /// `material` is the trust root's bytes as read, which with the
    /// identities tells this signer from another.
    pub fn certificate(
        name: String,
        trust: TrustRoot,
        identities: Vec<Identity>,
        log_required: bool,
        material: &[&[u8]],
    ) -> Requirement {
        let mut hash = Sha256::new();
        for bytes in material {
            hash.update(Sha256::digest(bytes));
        }
        hash.update(format!("{identities:?}|{log_required}"));
        Requirement {
            name,
            check: Check::Certificate(Arc::new(Certified {
                trust,
                identities,
                log_required,
                fingerprint: format!("{:x}", hash.finalize()),
            })),
            signed_identity: None,
        }
    }

    /// This signer, its signatures also required to claim `identity`.
    pub fn with_signed_identity(self, identity: SignedIdentity) -> Requirement {
        Requirement {
            signed_identity: Some(identity),
            ..self
        }
    }

    fn fingerprint(&self) -> String {
        let signer = match &self.check {
            Check::Key(key) => format!("key:{}", key.fingerprint()),
            Check::Certificate(c) => format!("certificate:{}", c.fingerprint),
        };
        match &self.signed_identity {
            Some(identity) => format!("{signer}|{identity:?}"),
            None => signer,
        }
    }

    /// What `signature` of `manifest_digest` proves for this signer, and
    /// the signing it is, or why it proves nothing. `now` (Unix seconds)
    /// is the signing time of a certificate no log vouches for, where
    /// none is required.
    fn check(&self, signature: &Signature, manifest_digest: &str, now: u64) -> Checked {
        let checked = self.check_signer(signature, manifest_digest, now)?;
        if let Some(identity) = &self.signed_identity {
            identity.check(signature)?;
        }
        Ok(checked)
    }

    /// [`Requirement::check`] without the signed identity.
    fn check_signer(&self, signature: &Signature, manifest_digest: &str, now: u64) -> Checked {
        match &self.check {
            Check::Key(key) => signature
                .verify(manifest_digest, std::slice::from_ref(key))
                .map(|(_, signing)| (Evidence::Key, signing))
                .map_err(|e| e.to_string()),
            Check::Certificate(certified) => {
                let log = if certified.log_required {
                    LogRequirement::Required
                } else {
                    LogRequirement::Optional { now }
                };
                let signer =
                    sigstore::verify_certificate(signature, &certified.trust, manifest_digest, log)
                        .map_err(|e| e.to_string())?;
                for identity in &certified.identities {
                    identity.matches(&signer).map_err(|e| e.to_string())?;
                }
                let signing = signer.signing.clone();
                Ok((Evidence::Certificate(signer), signing))
            }
        }
    }
}

/// One signature checked for one signer: what it proved and the signing
/// it is, or why it proved nothing.
type Checked = Result<(Evidence, Signing), String>;

/// What a signature proved for the signer it met.
#[derive(Debug, Clone)]
pub enum Evidence {
    /// It verifies under the signer's key.
    Key,
    /// Its certificate: who, issued by whom, when, in which log entry.
    Certificate(sigstore::Signer),
}

/// The group of a policy a requirement belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    AnyOne,
    AllOf,
    AnyOf,
}

impl fmt::Display for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Group::AnyOne => "any of keys, identities, clusterImagePolicies",
            Group::AllOf => "allOf",
            Group::AnyOf => "anyOf",
        })
    }
}

/// One requirement met: by which signature (its index among those found)
/// and with what evidence.
#[derive(Debug, Clone)]
pub struct Met {
    pub group: Group,
    pub requirement: String,
    pub signature: usize,
    pub evidence: Evidence,
}

/// A policy met: every requirement that counted.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub met: Vec<Met>,
}

impl Verdict {
    /// The signers that counted, as `guests pull` and the log name them.
    pub fn signers(&self) -> String {
        let mut names: Vec<&str> = Vec::new();
        for met in &self.met {
            if !names.contains(&met.requirement.as_str()) {
                names.push(&met.requirement);
            }
        }
        names.join(", ")
    }
}

/// Why a module's signatures do not meet its policy.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// The any-one group failed: each signer's reasons.
    #[error("{why}")]
    AnyOne { names: String, why: String },
    /// `allOf` or `anyOf` (and maybe the any-one group) failed: each
    /// group's count and its unmet signers' reasons.
    #[error("{}", .0.join("; "))]
    Quorum(Vec<String>),
}

/// The reason of every signer when no signature was found.
const NO_SIGNATURE: &str = "no cosign signature found (neither a .sig tag nor a bundle referrer)";

/// A module's signature policy, its signers read.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub any_one: Vec<Requirement>,
    pub all_of: Vec<Requirement>,
    /// `minimumMatches` and the signers.
    pub any_of: Option<(usize, Vec<Requirement>)>,
}

impl Policy {
    /// What tells two policies apart in the memo of verified digests: the
    /// keys' points and trust material, not their names.
    pub fn fingerprint(&self) -> String {
        let list = |rs: &[Requirement]| {
            rs.iter()
                .map(Requirement::fingerprint)
                .collect::<Vec<_>>()
                .join(",")
        };
        let (minimum, any_of) = self
            .any_of
            .as_ref()
            .map_or((0, String::new()), |(m, rs)| (*m, list(rs)));
        let text = format!(
            "any[{}] all[{}] {minimum}of[{any_of}]",
            list(&self.any_one),
            list(&self.all_of)
        );
        format!("{:x}", Sha256::digest(text))
    }

    /// The signers of the any-one group, as refusals list them.
    pub fn names(&self) -> String {
        self.any_one
            .iter()
            .map(|r| r.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether `signatures` of `manifest_digest` meet the policy; `now`
    /// is the current Unix time (see [`Requirement::check`]).
    pub fn verify(
        &self,
        signatures: &[Signature],
        manifest_digest: &str,
        now: u64,
    ) -> Result<Verdict, Refusal> {
        let table = |requirements: &[Requirement]| -> Vec<Vec<Checked>> {
            requirements
                .iter()
                .map(|r| {
                    signatures
                        .iter()
                        .map(|s| r.check(s, manifest_digest, now))
                        .collect()
                })
                .collect()
        };
        let mut met = Vec::new();
        let mut failed = Vec::new();
        let mut any_one_failed = None;
        if !self.any_one.is_empty() {
            let checks = table(&self.any_one);
            let found = checks.iter().enumerate().find_map(|(r, row)| {
                row.iter()
                    .position(Result::is_ok)
                    .map(|s| (r, s, row[s].clone()))
            });
            match found {
                Some((r, s, Ok((evidence, _)))) => met.push(Met {
                    group: Group::AnyOne,
                    requirement: self.any_one[r].name.clone(),
                    signature: s,
                    evidence,
                }),
                _ => {
                    let why = reasons(&self.any_one, &checks, signatures, self.any_one.len() > 1);
                    failed.push(format!(
                        "no valid cosign signature by any of the signers tried ({}): {why}",
                        self.names()
                    ));
                    any_one_failed = Some(why);
                }
            }
        }
        let quorums = [
            (Group::AllOf, self.all_of.len(), &self.all_of[..]),
            match &self.any_of {
                Some((minimum, rs)) => (Group::AnyOf, *minimum, &rs[..]),
                None => (Group::AnyOf, 0, &[][..]),
            },
        ];
        for (group, required, requirements) in quorums {
            if requirements.is_empty() {
                continue;
            }
            let checks = table(requirements);
            let pairs = matching(&checks);
            if pairs.len() >= required {
                met.extend(pairs.into_iter().filter_map(|(r, s)| {
                    let (evidence, _) = checks[r][s].as_ref().ok()?.clone();
                    Some(Met {
                        group,
                        requirement: requirements[r].name.clone(),
                        signature: s,
                        evidence,
                    })
                }));
                continue;
            }
            let unmet: Vec<usize> = (0..requirements.len())
                .filter(|r| !pairs.iter().any(|(m, _)| m == r))
                .collect();
            let why = unmet
                .iter()
                .map(|&r| {
                    let row = std::slice::from_ref(&checks[r]);
                    let reqs = std::slice::from_ref(&requirements[r]);
                    reasons(reqs, row, signatures, true)
                })
                .collect::<Vec<_>>()
                .join("; ");
            failed.push(format!(
                "{group}: {} of {required} required signatures; {why}",
                pairs.len()
            ));
        }
        match (failed.len(), any_one_failed) {
            (0, _) => Ok(Verdict { met }),
            (1, Some(why)) => Err(Refusal::AnyOne {
                names: self.names(),
                why,
            }),
            _ => Err(Refusal::Quorum(failed)),
        }
    }
}

/// Each requirement's reasons, per signature: `form: reason`, prefixed by
/// the requirement's name when `named`.
fn reasons(
    requirements: &[Requirement],
    checks: &[Vec<Checked>],
    signatures: &[Signature],
    named: bool,
) -> String {
    requirements
        .iter()
        .zip(checks)
        .map(|(requirement, row)| {
            let why = if signatures.is_empty() {
                NO_SIGNATURE.to_string()
            } else if row.iter().any(Result::is_ok) {
                "the signatures it matches count for other signers already (one signing counts once, however often it is stored or encoded)".to_string()
            } else {
                row.iter()
                    .zip(signatures)
                    .filter_map(|(check, s)| {
                        check.as_ref().err().map(|e| format!("{}: {e}", s.form()))
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            if named {
                format!("{}: {why}", requirement.name)
            } else {
                why
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The most requirements matched to distinct signings (augmenting paths;
/// a policy lists a few signers, a module at most 16 signatures):
/// `(requirement, signature)` pairs, the signature being the first found
/// of its signing. Signatures that are one signing (the same signer over
/// the same bytes, repeated or re-encoded) are one node of the graph, so
/// they meet one requirement between them.
fn matching(checks: &[Vec<Checked>]) -> Vec<(usize, usize)> {
    // Each signing, with the first signature that is it; and per
    // requirement, the signings that meet it.
    let mut signings: Vec<(&Signing, usize)> = Vec::new();
    let mut edges: Vec<Vec<usize>> = Vec::with_capacity(checks.len());
    for row in checks {
        let mut meeting = Vec::new();
        for (s, check) in row.iter().enumerate() {
            let Ok((_, signing)) = check else { continue };
            let node = match signings.iter().position(|(known, _)| *known == signing) {
                Some(node) => node,
                None => {
                    signings.push((signing, s));
                    signings.len() - 1
                }
            };
            meeting.push(node);
        }
        edges.push(meeting);
    }
    fn augment(
        r: usize,
        edges: &[Vec<usize>],
        owner: &mut [Option<usize>],
        seen: &mut [bool],
    ) -> bool {
        for &node in &edges[r] {
            if seen[node] {
                continue;
            }
            seen[node] = true;
            let free = match owner[node] {
                None => true,
                Some(other) => augment(other, edges, owner, seen),
            };
            if free {
                owner[node] = Some(r);
                return true;
            }
        }
        false
    }
    let mut owner: Vec<Option<usize>> = vec![None; signings.len()];
    for r in 0..edges.len() {
        let mut seen = vec![false; signings.len()];
        augment(r, &edges, &mut owner, &mut seen);
    }
    let mut pairs: Vec<(usize, usize)> = owner
        .iter()
        .zip(&signings)
        .filter_map(|(r, (_, s))| r.map(|r| (r, *s)))
        .collect();
    pairs.sort_unstable();
    pairs
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use mco_registry_formats::cosign::CertificateAnnotations;
    use mco_registry_formats::sigstore::SubjectMatch;
    use mco_test_support::pki::{
        Ca, Leaf, LeafSpec, Log, now, signature_encodings, simple_signing_payload,
        trusted_root_json,
    };

    use super::*;

    const DIGEST: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
    const ISSUER: &str = "https://issuer.example.com";

    /// A CA under a root, and the trusted root naming it and a log.
    struct Pki {
        root: Ca,
        ca: Ca,
        json: String,
    }

    /// The PKI and the log its trusted root lists.
    fn pki() -> (Pki, Log) {
        let root = Ca::root("policy root");
        let ca = root.intermediate("policy signing");
        let log = Log::new("rekor.policy");
        let json = trusted_root_json(&[&[&ca, &root]], &[&log]);
        (Pki { root, ca, json }, log)
    }

    /// A `.sig` signature of [`DIGEST`] by a certificate for `email` from
    /// `ISSUER`, recorded in `log` when given.
    fn signed(pki: &Pki, email: &str, log: Option<&mut Log>) -> Signature {
        let leaf = pki.ca.leaf(&LeafSpec::email(email).issuer(ISSUER));
        let payload = simple_signing_payload("r/g/mcn", DIGEST);
        let signature = leaf.sign(&payload);
        signed_by(pki, &leaf, payload, &signature, log)
    }

    /// A `.sig` signature: `signature` over `payload` by `leaf`, recorded
    /// in `log` when given.
    fn signed_by(
        pki: &Pki,
        leaf: &Leaf,
        payload: Vec<u8>,
        signature: &[u8],
        log: Option<&mut Log>,
    ) -> Signature {
        let rekor_bundle = log.map(|log| {
            let body = log.hashedrekord(&payload, signature, &leaf.pem());
            log.append(body, now()).cosign_bundle_annotation()
        });
        Signature::SimpleSigning {
            payload,
            signature: Some(base64::engine::general_purpose::STANDARD.encode(signature)),
            certificate: CertificateAnnotations {
                certificate: Some(leaf.pem()),
                chain: Some(format!("{}{}", pki.ca.pem(), pki.root.pem())),
                rekor_bundle,
            },
        }
    }

    /// A signer `email` from `ISSUER`, chaining to `pki`'s trusted root,
    /// in its log.
    fn identity(pki: &Pki, email: &str, issuer: Option<&str>) -> Requirement {
        let trust = TrustRoot::from_trusted_root_json(pki.json.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        let identity = Identity {
            subject: SubjectMatch::Equal(email.into()),
            issuer: issuer.map(|i| sigstore::IssuerMatch::Equal(i.into())),
        };
        let name = format!("identity {email}");
        Requirement::certificate(name, trust, vec![identity], true, &[pki.json.as_bytes()])
    }

    fn refusal(policy: &Policy, signatures: &[Signature]) -> String {
        match policy.verify(signatures, DIGEST, now()) {
            Ok(verdict) => panic!("met: {verdict:?}"),
            Err(refusal) => refusal.to_string(),
        }
    }

    fn met(policy: &Policy, signatures: &[Signature]) -> Vec<(String, usize)> {
        match policy.verify(signatures, DIGEST, now()) {
            Ok(verdict) => verdict
                .met
                .into_iter()
                .map(|m| (m.requirement, m.signature))
                .collect(),
            Err(refusal) => panic!("{refusal}"),
        }
    }

    #[test]
    fn any_one_signer_meets_the_first_group_and_a_refusal_names_each() {
        let (pki, mut log) = pki();
        let policy = Policy {
            any_one: vec![
                identity(&pki, "ci@example.com", Some(ISSUER)),
                identity(&pki, "review@example.com", Some(ISSUER)),
            ],
            ..Policy::default()
        };
        let review = signed(&pki, "review@example.com", Some(&mut log));
        assert_eq!(
            met(&policy, &[review]),
            [("identity review@example.com".to_string(), 0)]
        );
        let dev = signed(&pki, "dev@example.com", Some(&mut log));
        let why = refusal(&policy, &[dev]);
        assert!(
            why.starts_with("identity ci@example.com: simple-signing: wrong identity")
                && why.contains("identity review@example.com: simple-signing: wrong identity"),
            "{why}"
        );
        assert!(refusal(&policy, &[]).contains("no cosign signature found"));
        // Not in the log, or in a log the trusted root does not list.
        let unlogged = signed(&pki, "ci@example.com", None);
        assert!(refusal(&policy, &[unlogged]).contains("no transparency log entry"));
        let mut foreign = Log::new("rekor.elsewhere");
        let elsewhere = signed(&pki, "ci@example.com", Some(&mut foreign));
        assert!(refusal(&policy, &[elsewhere]).contains("which the trust root does not list"));
    }

    #[test]
    fn all_of_needs_every_signer_each_with_its_own_signature() {
        let (pki, mut log) = pki();
        let policy = Policy {
            all_of: vec![
                identity(&pki, "ci@example.com", Some(ISSUER)),
                identity(&pki, "review@example.com", None),
            ],
            ..Policy::default()
        };
        let ci = signed(&pki, "ci@example.com", Some(&mut log));
        let review = signed(&pki, "review@example.com", Some(&mut log));
        let why = refusal(&policy, std::slice::from_ref(&ci));
        assert!(
            why.starts_with(
                "allOf: 1 of 2 required signatures; identity review@example.com: simple-signing: wrong identity"
            ),
            "{why}"
        );
        assert_eq!(
            met(&policy, &[review.clone(), ci.clone()]),
            [
                ("identity ci@example.com".to_string(), 1),
                ("identity review@example.com".to_string(), 0)
            ]
        );
        // Two signers one signature matches: it counts once.
        let twice = Policy {
            all_of: vec![
                identity(&pki, "ci@example.com", Some(ISSUER)),
                identity(&pki, "ci@example.com", None),
            ],
            ..Policy::default()
        };
        assert!(
            refusal(&twice, std::slice::from_ref(&ci))
                .starts_with("allOf: 1 of 2 required signatures")
        );
        let again = signed(&pki, "ci@example.com", Some(&mut log));
        assert_eq!(met(&twice, &[ci, again]).len(), 2);
        // A wrong issuer is its own refusal.
        let other_issuer = Policy {
            all_of: vec![identity(&pki, "review@example.com", Some("https://other"))],
            ..Policy::default()
        };
        assert!(refusal(&other_issuer, &[review]).contains(
            "wrong issuer: the certificate's OIDC issuer is https://issuer.example.com, not https://other"
        ));
    }

    /// The attack: anyone who can push repeats one signer's signature (as
    /// another `.sig` layer, in each encoding the verifier accepts, each
    /// logged) to meet a quorum of two, by key or by identity.
    #[test]
    fn one_signature_repeated_or_re_encoded_does_not_meet_a_quorum_of_two() {
        let (pki, mut log) = pki();
        let leaf = pki
            .ca
            .leaf(&LeafSpec::email("ci@example.com").issuer(ISSUER));
        let payload = simple_signing_payload("r/g/mcn", DIGEST);
        let der = leaf.sign(&payload);
        let copies: Vec<(&str, Signature)> = signature_encodings(&der)
            .into_iter()
            .map(|(encoding, bytes)| {
                let copy = signed_by(&pki, &leaf, payload.clone(), &bytes, Some(&mut log));
                (encoding, copy)
            })
            .collect();
        let key = || {
            let pem = leaf.public_key_pem();
            Key::from_pem("ci.pub", pem.as_bytes()).unwrap_or_else(|e| panic!("{e}"))
        };
        let quorums = [
            Policy {
                all_of: vec![
                    identity(&pki, "ci@example.com", Some(ISSUER)),
                    identity(&pki, "ci@example.com", None),
                ],
                ..Policy::default()
            },
            Policy {
                any_of: Some((2, vec![Requirement::key(key()), Requirement::key(key())])),
                ..Policy::default()
            },
            Policy {
                any_of: Some((
                    2,
                    vec![
                        Requirement::key(key()),
                        identity(&pki, "ci@example.com", Some(ISSUER)),
                    ],
                )),
                ..Policy::default()
            },
        ];
        let (first, _) = &copies[0];
        for (encoding, copy) in &copies {
            // Each encoding alone is a good signature...
            for policy in &quorums {
                let one = Policy {
                    any_one: policy
                        .all_of
                        .iter()
                        .chain(policy.any_of.iter().flat_map(|(_, rs)| rs))
                        .cloned()
                        .collect(),
                    ..Policy::default()
                };
                assert_eq!(met(&one, std::slice::from_ref(copy)).len(), 1, "{encoding}");
            }
            // ...but with the first, however stored, it is still one.
            let pair = [copies[0].1.clone(), copy.clone()];
            let twice = [copy.clone(), copy.clone()];
            for policy in &quorums {
                for signatures in [&pair[..], &twice[..]] {
                    let why = refusal(policy, signatures);
                    assert!(
                        why.contains("1 of 2 required signatures")
                            && why.contains("one signing counts once"),
                        "{first} and {encoding}: {why}"
                    );
                }
            }
        }
        let every: Vec<Signature> = copies.into_iter().map(|(_, copy)| copy).collect();
        for policy in &quorums {
            assert!(refusal(policy, &every).contains("1 of 2 required signatures"));
        }
        // A second signer's own signature does meet the quorum.
        let other = signed(&pki, "ci@example.com", Some(&mut log));
        assert_eq!(met(&quorums[0], &[every[0].clone(), other]).len(), 2);
    }

    #[test]
    fn any_of_needs_its_minimum_and_every_group_must_hold() {
        let (pki, mut log) = pki();
        let signers = ["a@example.com", "b@example.com", "c@example.com"]
            .map(|email| identity(&pki, email, Some(ISSUER)))
            .to_vec();
        let policy = Policy {
            any_one: vec![identity(&pki, "ci@example.com", Some(ISSUER))],
            any_of: Some((2, signers)),
            ..Policy::default()
        };
        let [ci, a, c] = ["ci@example.com", "a@example.com", "c@example.com"]
            .map(|email| signed(&pki, email, Some(&mut log)));
        assert_eq!(met(&policy, &[ci.clone(), a.clone(), c.clone()]).len(), 3);
        let why = refusal(&policy, &[ci.clone(), a.clone()]);
        assert!(
            why.starts_with("anyOf: 1 of 2 required signatures; identity b@example.com: ")
                && why.contains("identity c@example.com: "),
            "{why}"
        );
        // Both groups failing: both are named.
        let why = refusal(&policy, &[a]);
        assert!(
            why.starts_with(
                "no valid cosign signature by any of the signers tried (identity ci@example.com)"
            ) && why.contains("; anyOf: 1 of 2 required signatures"),
            "{why}"
        );
    }

    #[test]
    fn fingerprints_tell_policies_apart_by_what_they_check() {
        let (pki, _) = pki();
        let ci = || identity(&pki, "ci@example.com", Some(ISSUER));
        let one = Policy {
            any_one: vec![ci()],
            ..Policy::default()
        };
        assert_eq!(one.fingerprint(), one.clone().fingerprint());
        let other_issuer = Policy {
            any_one: vec![identity(&pki, "ci@example.com", None)],
            ..Policy::default()
        };
        let all_of = Policy {
            all_of: vec![ci()],
            ..Policy::default()
        };
        let quorum = Policy {
            any_of: Some((1, vec![ci()])),
            ..Policy::default()
        };
        let prints = [&one, &other_issuer, &all_of, &quorum].map(Policy::fingerprint);
        for (i, a) in prints.iter().enumerate() {
            for b in &prints[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
