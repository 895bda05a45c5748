//! Certificate-based cosign signatures (`mco_registry_formats::sigstore`)
//! against CAs, leaves and a transparency log made fresh by
//! `mco_test_support::pki`: each refusal reason with its own message, in
//! both forms cosign writes (the `.sig` layer's annotations, the Sigstore bundle).

use std::collections::BTreeMap;

use base64::Engine as _;
use mco_registry_formats::cosign::{
    CERTIFICATE_ANNOTATION, CHAIN_ANNOTATION, CertificateAnnotations, REKOR_BUNDLE_ANNOTATION,
    SIGNATURE_ANNOTATION, Signature,
};
use mco_registry_formats::sigstore::{
    CertRefusal, Identity, IssuerMatch, LogRequirement, San, Signer, SubjectMatch, TrustRoot,
    verify_certificate,
};
use mco_test_support::pki::{self, Ca, CaSpec, Entry, Leaf, LeafSpec, Log};

const DIGEST: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
const OTHER: &str = "sha256:2222222222222222222222222222222222222222222222222222222222222222";
const REFERENCE: &str = "registry.example/guests/mcn";
const EMAIL: &str = "ci@example.com";
const ISSUER: &str = "https://issuer.example";

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A root, the intermediate that issues leaves, and a log.
struct World {
    root: Ca,
    ca: Ca,
    log: Log,
}

impl World {
    fn new() -> World {
        let root = Ca::root("mco-e2e root");
        let ca = root.intermediate("mco-e2e signing");
        World {
            root,
            ca,
            log: Log::new("rekor.e2e"),
        }
    }

    fn leaf(&self) -> Leaf {
        self.ca.leaf(&LeafSpec::email(EMAIL).issuer(ISSUER))
    }

    /// The three ways trust comes: a trusted root, a Fulcio policy and a
    /// PKI policy (no log).
    fn trusted_root(&self) -> TrustRoot {
        let json = pki::trusted_root_json(&[&[&self.ca, &self.root]], &[&self.log]);
        TrustRoot::from_trusted_root_json(json.as_bytes()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn fulcio(&self) -> TrustRoot {
        let cas = format!("{}{}", self.ca.pem(), self.root.pem());
        TrustRoot::from_fulcio(cas.as_bytes(), self.log.public_key_pem().as_bytes())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn pki(&self) -> TrustRoot {
        TrustRoot::from_pki(self.root.pem().as_bytes(), self.ca.pem().as_bytes())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// A `.sig` layer signed by `leaf` naming `digest`, with the chain
    /// annotation and a log entry made at `time`.
    fn simple(&mut self, leaf: &Leaf, digest: &str, time: u64) -> (Signature, Entry) {
        let payload = pki::simple_signing_payload(REFERENCE, digest);
        let signature = leaf.sign(&payload);
        let entry = self.log.append(
            self.log.hashedrekord(&payload, &signature, &leaf.pem()),
            time,
        );
        let simple = simple_signing(leaf, &self.ca, payload, &signature, Some(&entry));
        (simple, entry)
    }

    /// A Sigstore bundle signed by `leaf` over a statement naming
    /// `digest`, with a dsse log entry made at `time`.
    fn bundle(&mut self, leaf: &Leaf, digest: &str, time: u64) -> (Signature, Entry) {
        self.statement_bundle(leaf, pki::in_toto_statement(REFERENCE, digest), time)
    }

    /// A Sigstore bundle signed by `leaf` over `statement`, with a dsse
    /// log entry made at `time`.
    fn statement_bundle(
        &mut self,
        leaf: &Leaf,
        statement: Vec<u8>,
        time: u64,
    ) -> (Signature, Entry) {
        let signature = leaf.sign(&pki::dsse_pae(&statement));
        let body = self.log.dsse(
            &pki::dsse_envelope(&statement, &signature),
            &statement,
            &signature,
            &leaf.pem(),
        );
        let entry = self.log.append(body, time);
        let bundle = pki::dsse_bundle(leaf, &statement, &signature, Some(&entry));
        (Signature::Bundle(bundle), entry)
    }
}

fn simple_signing(
    leaf: &Leaf,
    ca: &Ca,
    payload: Vec<u8>,
    signature: &[u8],
    entry: Option<&Entry>,
) -> Signature {
    let mut annotations = BTreeMap::from([
        (SIGNATURE_ANNOTATION.to_string(), b64(signature)),
        (CERTIFICATE_ANNOTATION.to_string(), leaf.pem()),
        (CHAIN_ANNOTATION.to_string(), ca.pem()),
    ]);
    if let Some(entry) = entry {
        annotations.insert(
            REKOR_BUNDLE_ANNOTATION.to_string(),
            entry.cosign_bundle_annotation(),
        );
    }
    Signature::SimpleSigning {
        payload,
        signature: annotations.get(SIGNATURE_ANNOTATION).cloned(),
        certificate: CertificateAnnotations::from_annotations(&annotations),
    }
}

/// `signature` of [`DIGEST`] checked against `trust`, a log entry
/// required.
fn logged(signature: &Signature, trust: &TrustRoot) -> Result<Signer, CertRefusal> {
    verify_certificate(signature, trust, DIGEST, LogRequirement::Required)
}

fn refusal(result: Result<Signer, CertRefusal>) -> String {
    match result {
        Ok(signer) => panic!("verified: {signer:?}"),
        Err(e) => e.to_string(),
    }
}

/// A bundle's JSON changed by `edit`.
fn edited(signature: &Signature, edit: impl FnOnce(&mut serde_json::Value)) -> Signature {
    let Signature::Bundle(json) = signature else {
        panic!("not a bundle")
    };
    let mut value: serde_json::Value =
        serde_json::from_slice(json).unwrap_or_else(|e| panic!("{e}"));
    edit(&mut value);
    Signature::Bundle(value.to_string().into_bytes())
}

#[test]
fn both_forms_verify_under_each_kind_of_trust_and_name_the_signer() {
    let mut world = World::new();
    let leaf = world.leaf();
    let signed_at = pki::now() - 60;
    for form in ["simple", "bundle"] {
        let (signature, entry) = if form == "simple" {
            world.simple(&leaf, DIGEST, signed_at)
        } else {
            world.bundle(&leaf, DIGEST, signed_at)
        };
        for (trust, name) in [
            (world.trusted_root(), "trusted root"),
            (world.fulcio(), "fulcio"),
        ] {
            let signer =
                logged(&signature, &trust).unwrap_or_else(|e| panic!("{form} under {name}: {e}"));
            assert_eq!(signer.subjects, [San::Email(EMAIL.into())]);
            assert_eq!(signer.issuer.as_deref(), Some(ISSUER));
            assert_eq!(signer.signed_at, signed_at);
            let log = signer.log.unwrap_or_else(|| panic!("no log entry"));
            assert_eq!(log.index, entry.log_index);
            assert_eq!(log.log_id, hex(&world.log.id()));
        }
        // A PKI policy has no log: the entry cannot be checked, the clock
        // is the time.
        let now = pki::now();
        let signer = verify_certificate(
            &signature,
            &world.pki(),
            DIGEST,
            LogRequirement::Optional { now },
        )
        .unwrap_or_else(|e| panic!("{form} under pki: {e}"));
        assert_eq!((signer.signed_at, signer.log), (now, None));
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn identities_name_the_subject_or_issuer_that_differs() {
    let mut world = World::new();
    let leaf = world.leaf();
    let (signature, _) = world.simple(&leaf, DIGEST, pki::now());
    let signer = logged(&signature, &world.fulcio()).unwrap_or_else(|e| panic!("{e}"));
    let identity = |subject: &str, issuer: &str| Identity {
        subject: SubjectMatch::Equal(subject.into()),
        issuer: Some(IssuerMatch::Equal(issuer.into())),
    };
    assert_eq!(identity(EMAIL, ISSUER).matches(&signer), Ok(()));
    let wrong = identity("someone@example.com", ISSUER).matches(&signer);
    assert_eq!(
        wrong.map_err(|e| e.to_string()),
        Err(format!(
            "wrong identity: the certificate's subjects [{EMAIL}] do not match \"someone@example.com\""
        ))
    );
    let wrong = identity(EMAIL, "https://other.example").matches(&signer);
    assert_eq!(
        wrong.map_err(|e| e.to_string()),
        Err(format!(
            "wrong issuer: the certificate's OIDC issuer is {ISSUER}, not https://other.example"
        ))
    );
}

#[test]
fn a_uri_subject_and_the_deprecated_issuer_extension_are_read() {
    let mut world = World::new();
    let workflow = "https://github.com/org/repo/.github/workflows/ci.yml@refs/heads/main";
    let leaf = world
        .ca
        .leaf(&LeafSpec::uri(workflow).legacy_issuer("https://token.actions.example"));
    let (signature, _) = world.bundle(&leaf, DIGEST, pki::now());
    let signer = logged(&signature, &world.trusted_root()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(signer.subjects, [San::Uri(workflow.into())]);
    assert_eq!(
        signer.issuer.as_deref(),
        Some("https://token.actions.example")
    );
    let prefix = Identity {
        subject: SubjectMatch::UrlPrefix("https://github.com/org".into()),
        issuer: Some(IssuerMatch::Equal("https://token.actions.example".into())),
    };
    assert_eq!(prefix.matches(&signer), Ok(()));
}

/// The attack: an attestation about the module (SLSA provenance, an
/// SBOM, a vulnerability scan), by the very identity and logged, offered
/// as its signature.
#[test]
fn an_attestation_by_the_identity_is_refused_as_no_signature() {
    let mut world = World::new();
    let leaf = world.leaf();
    for predicate_type in [
        "https://slsa.dev/provenance/v1",
        "https://spdx.dev/Document",
        "https://cyclonedx.org/bom",
        "https://cosign.sigstore.dev/attestation/vuln/v1",
    ] {
        let statement = pki::in_toto_attestation(REFERENCE, DIGEST, predicate_type);
        let (attestation, _) = world.statement_bundle(&leaf, statement, pki::now());
        for trust in [world.trusted_root(), world.fulcio()] {
            let err = refusal(logged(&attestation, &trust));
            assert_eq!(
                err,
                format!(
                    "an attestation (predicateType {predicate_type:?}), not a signature: a cosign signature's predicateType is https://sigstore.dev/cosign/sign/v1"
                )
            );
        }
    }
}

/// One signature in every encoding the verifier accepts (each logged, as
/// anyone may log it) is one signing: the same signer and message as the
/// original, and the same as a key signer's view of it.
#[test]
fn every_encoding_of_a_signature_is_one_signing() {
    let mut world = World::new();
    let leaf = world.leaf();
    let payload = pki::simple_signing_payload(REFERENCE, DIGEST);
    let der = leaf.sign(&payload);
    let key =
        mco_registry_formats::cosign::Key::from_pem("ci.pub", leaf.public_key_pem().as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
    let mut signings = Vec::new();
    for (encoding, bytes) in pki::signature_encodings(&der) {
        let entry = world.log.append(
            world.log.hashedrekord(&payload, &bytes, &leaf.pem()),
            pki::now(),
        );
        let copy = simple_signing(&leaf, &world.ca, payload.clone(), &bytes, Some(&entry));
        let signer = logged(&copy, &world.fulcio()).unwrap_or_else(|e| panic!("{encoding}: {e}"));
        let (_, by_key) = copy
            .verify(DIGEST, std::slice::from_ref(&key))
            .unwrap_or_else(|e| panic!("{encoding}: {e}"));
        assert_eq!(signer.signing, by_key, "{encoding}");
        signings.push(signer.signing);
    }
    assert!(signings.windows(2).all(|w| w[0] == w[1]), "{signings:?}");
    // Another signature by another key of the same identity is another.
    let (other, _) = world.simple(&world.leaf(), DIGEST, pki::now());
    let signer = logged(&other, &world.fulcio()).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(signer.signing, signings[0]);
}

/// The attack: a certificate from the trusted CA with a CA's powers
/// (CA:true, or keyCertSign) signing as a signer, which could as well
/// issue a certificate for anyone.
#[test]
fn a_leaf_with_a_cas_powers_is_refused_as_a_signer() {
    let mut world = World::new();
    for (basic_ca, key_cert_sign) in [(true, false), (false, true), (true, true)] {
        let leaf = world.ca.leaf(
            &LeafSpec::email(EMAIL)
                .issuer(ISSUER)
                .with_ca_powers(basic_ca, key_cert_sign),
        );
        for (signature, _) in [
            world.simple(&leaf, DIGEST, pki::now()),
            world.bundle(&leaf, DIGEST, pki::now()),
        ] {
            let err = refusal(logged(&signature, &world.fulcio()));
            assert_eq!(
                err,
                format!(
                    "the certificate for {EMAIL} is a CA's (basic constraints CA:true or key usage keyCertSign), not a signer's"
                ),
                "CA:{basic_ca} keyCertSign:{key_cert_sign}"
            );
        }
    }
}

/// The attack: a certificate from the trusted CA whose URI or DNS SAN is
/// spelled as the email a policy requires.
#[test]
fn a_uri_or_dns_san_spelled_as_the_email_is_no_email() {
    let mut world = World::new();
    let email = Identity {
        subject: SubjectMatch::Email(EMAIL.into()),
        issuer: Some(IssuerMatch::Equal(ISSUER.into())),
    };
    let equal = Identity {
        subject: SubjectMatch::Equal(EMAIL.into()),
        issuer: Some(IssuerMatch::Equal(ISSUER.into())),
    };
    for spec in [LeafSpec::uri(EMAIL), LeafSpec::dns(EMAIL)] {
        let leaf = world.ca.leaf(&spec.issuer(ISSUER));
        let (signature, _) = world.simple(&leaf, DIGEST, pki::now());
        let signer = logged(&signature, &world.fulcio()).unwrap_or_else(|e| panic!("{e}"));
        assert!(!matches!(signer.subjects[..], [San::Email(_)]));
        for identity in [&email, &equal] {
            let wrong = identity.matches(&signer).map_err(|e| e.to_string());
            assert!(
                wrong
                    .as_ref()
                    .is_err_and(|e| e.starts_with("wrong identity")),
                "{:?}: {wrong:?}",
                signer.subjects
            );
        }
    }
    let (signature, _) = world.simple(&world.leaf(), DIGEST, pki::now());
    let signer = logged(&signature, &world.fulcio()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (email.matches(&signer), equal.matches(&signer)),
        (Ok(()), Ok(()))
    );
}

/// The attack: a checkpoint the log's key signed for another log (a
/// shard, a second log under one key) offered as this log's.
#[test]
fn a_checkpoint_of_another_log_is_no_inclusion_proof() {
    let mut world = World::new();
    let leaf = world.leaf();
    let mut twin = world.log.with_origin("rekor.elsewhere");
    let (bundle, entry) = world.bundle(&leaf, DIGEST, pki::now());
    let other = twin.append(entry.body.clone(), entry.integrated_time);
    assert_eq!(other.root_hash, entry.root_hash);
    let forged = edited(&bundle, |b| {
        b["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]["checkpoint"]["envelope"] =
            other.checkpoint.clone().into();
    });
    let err = refusal(logged(&forged, &world.trusted_root()));
    assert_eq!(
        err,
        "the inclusion proof does not hold: the checkpoint is of log \"rekor.elsewhere - 1\", not \"rekor.e2e\""
    );
    logged(&bundle, &world.trusted_root()).unwrap_or_else(|e| panic!("{e}"));
}

/// A `.sig` signature of [`DIGEST`] by `leaf` presenting `chain` (PEM,
/// leaf-most first), with no log entry.
fn chained(leaf: &Leaf, chain: &[&Ca]) -> Signature {
    let payload = pki::simple_signing_payload(REFERENCE, DIGEST);
    let signature = leaf.sign(&payload);
    Signature::SimpleSigning {
        payload,
        signature: Some(b64(&signature)),
        certificate: CertificateAnnotations {
            certificate: Some(leaf.pem()),
            chain: Some(chain.iter().map(|ca| ca.pem()).collect()),
            rekor_bundle: None,
        },
    }
}

/// `signature` checked against a PKI policy anchored at `root`, no log.
fn under_pki(signature: &Signature, root: &Ca) -> Result<Signer, CertRefusal> {
    let trust = TrustRoot::from_pki(root.pem().as_bytes(), b"").unwrap_or_else(|e| panic!("{e}"));
    verify_certificate(
        signature,
        &trust,
        DIGEST,
        LogRequirement::Optional { now: pki::now() },
    )
}

/// Refused, the reason containing `why`.
fn refused_for(result: Result<Signer, CertRefusal>, why: &str) {
    let err = refusal(result);
    assert!(
        err.contains("does not chain to a trusted root") && err.contains(why),
        "{why:?} not in {err:?}"
    );
}

/// The attack: a sub-CA allowed no CA below it (pathLenConstraint 0)
/// issues a CA anyway, which signs for anyone.
#[test]
fn a_path_longer_than_a_cas_path_length_is_refused() {
    let root = Ca::root("constrained root");
    let zero = CaSpec {
        path_len: Some(0),
        ..CaSpec::default()
    };
    let last = root.intermediate_with("last CA", &zero);
    let rogue = last.intermediate("rogue CA");
    let leaf = rogue.leaf(&LeafSpec::email(EMAIL));
    refused_for(
        under_pki(&chained(&leaf, &[&rogue, &last]), &root),
        "path length constraint",
    );
    let leaf = last.leaf(&LeafSpec::email(EMAIL));
    under_pki(&chained(&leaf, &[&last]), &root).unwrap_or_else(|e| panic!("{e}"));
    let one = root.intermediate_with(
        "one below",
        &CaSpec {
            path_len: Some(1),
            ..CaSpec::default()
        },
    );
    let below = one.intermediate("below");
    let leaf = below.leaf(&LeafSpec::email(EMAIL));
    under_pki(&chained(&leaf, &[&below, &one]), &root).unwrap_or_else(|e| panic!("{e}"));
}

/// The attack: a sub-CA constrained to some names issues a certificate
/// for a name outside them.
#[test]
fn a_name_outside_a_cas_name_constraints_is_refused() {
    let root = Ca::root("constrained root");
    let dns = root.intermediate_with(
        "ci.example.com CA",
        &CaSpec {
            permitted_dns: vec!["ci.example.com".into()],
            ..CaSpec::default()
        },
    );
    let outside = dns.leaf(&LeafSpec::dns("build.evil.example"));
    refused_for(
        under_pki(&chained(&outside, &[&dns]), &root),
        "outside a CA's name constraints",
    );
    let inside = dns.leaf(&LeafSpec::dns("build.ci.example.com"));
    under_pki(&chained(&inside, &[&dns]), &root).unwrap_or_else(|e| panic!("{e}"));
    // Email constraints are not processed by the validator: every email
    // below such a CA is refused, inside or not (docs/concepts/trust.md).
    let email = root.intermediate_with(
        "example.com mail CA",
        &CaSpec {
            permitted_emails: vec!["example.com".into()],
            ..CaSpec::default()
        },
    );
    for address in ["ci@evil.example", EMAIL] {
        let leaf = email.leaf(&LeafSpec::email(address));
        refused_for(
            under_pki(&chained(&leaf, &[&email]), &root),
            "outside a CA's name constraints",
        );
    }
}

/// The attack: a sub-CA for TLS servers only (its extended key usage)
/// issues a code-signing certificate.
#[test]
fn a_leaf_below_a_ca_not_for_code_signing_is_refused() {
    let root = Ca::root("constrained root");
    let tls = root.intermediate_with(
        "TLS CA",
        &CaSpec {
            extended_key_usage: vec![pki::SERVER_AUTH],
            ..CaSpec::default()
        },
    );
    let leaf = tls.leaf(&LeafSpec::email(EMAIL));
    refused_for(
        under_pki(&chained(&leaf, &[&tls]), &root),
        "not for code signing",
    );
    let signing = root.intermediate_with(
        "code-signing CA",
        &CaSpec {
            extended_key_usage: vec![pki::CODE_SIGNING],
            ..CaSpec::default()
        },
    );
    let leaf = signing.leaf(&LeafSpec::email(EMAIL));
    under_pki(&chained(&leaf, &[&signing]), &root).unwrap_or_else(|e| panic!("{e}"));
}

/// The attack: a certificate on the path carries a critical extension
/// that restricts it in a way this verifier does not understand.
#[test]
fn an_unknown_critical_extension_on_the_path_is_refused() {
    let root = Ca::root("constrained root");
    let odd = root.intermediate_with(
        "odd CA",
        &CaSpec {
            unknown_critical: true,
            ..CaSpec::default()
        },
    );
    let leaf = odd.leaf(&LeafSpec::email(EMAIL));
    refused_for(
        under_pki(&chained(&leaf, &[&odd]), &root),
        "critical extension that is not understood",
    );
    let ca = root.intermediate("plain CA");
    let leaf = ca.leaf(&LeafSpec::email(EMAIL).with_unknown_critical_extension());
    refused_for(
        under_pki(&chained(&leaf, &[&ca]), &root),
        "critical extension that is not understood",
    );
}

#[test]
fn a_certificate_from_another_ca_is_refused() {
    let mut world = World::new();
    let stranger = Ca::root("someone else's root").intermediate("someone else's CA");
    let leaf = stranger.leaf(&LeafSpec::email(EMAIL));
    let payload = pki::simple_signing_payload(REFERENCE, DIGEST);
    let signature = leaf.sign(&payload);
    let entry = world.log.append(
        world.log.hashedrekord(&payload, &signature, &leaf.pem()),
        pki::now(),
    );
    let foreign = simple_signing(&leaf, &stranger, payload, &signature, Some(&entry));
    for trust in [world.trusted_root(), world.fulcio()] {
        let err = refusal(logged(&foreign, &trust));
        assert!(
            err.starts_with(&format!(
                "the certificate for {EMAIL} does not chain to a trusted root"
            )),
            "{err}"
        );
    }
}

#[test]
fn validity_is_judged_at_the_logs_signed_time_not_the_clock() {
    let mut world = World::new();
    let now = pki::now();
    // Expired an hour before the log recorded the signature.
    let expired = world
        .ca
        .leaf(&LeafSpec::email(EMAIL).valid(now - 7200, now - 3600));
    for (signature, _) in [
        world.simple(&expired, DIGEST, now),
        world.bundle(&expired, DIGEST, now),
    ] {
        let err = refusal(logged(&signature, &world.fulcio()));
        assert!(err.contains("not at the signing time"), "{err}");
    }
    // Expired now, but valid when the log recorded it: the log's time counts.
    let (signature, _) = world.simple(&expired, DIGEST, now - 5000);
    let signer = logged(&signature, &world.fulcio()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(signer.signed_at, now - 5000);
    // Without a log (PKI), the clock is the only time: expired is refused.
    let err = refusal(verify_certificate(
        &signature,
        &world.pki(),
        DIGEST,
        LogRequirement::Optional { now },
    ));
    assert!(err.contains("not at the signing time"), "{err}");
}

#[test]
fn a_signature_of_another_manifest_is_refused() {
    let mut world = World::new();
    let leaf = world.leaf();
    let simple = world.simple(&leaf, OTHER, pki::now()).0;
    let err = refusal(logged(&simple, &world.fulcio()));
    assert_eq!(
        err,
        format!("the signature names {OTHER}, not the manifest pulled, {DIGEST}")
    );
    let bundle = world.bundle(&leaf, OTHER, pki::now()).0;
    let err = refusal(logged(&bundle, &world.fulcio()));
    assert!(
        err.contains(&format!("not the manifest pulled, {DIGEST}")),
        "{err}"
    );
}

#[test]
fn log_entries_must_come_from_a_known_log_and_carry_a_signed_time() {
    let mut world = World::new();
    let leaf = world.leaf();
    // Recorded by a log the trust root does not list.
    let mut elsewhere = World {
        root: Ca::root("unused"),
        ca: world.ca.intermediate("unused"),
        log: Log::new("rekor.elsewhere"),
    };
    let (signature, _) = elsewhere.simple(&leaf, DIGEST, pki::now());
    let err = refusal(logged(&signature, &world.fulcio()));
    assert_eq!(
        err,
        format!(
            "the log entry is from log {}, which the trust root does not list",
            hex(&elsewhere.log.id())
        )
    );
    // No entry at all where one is required.
    let payload = pki::simple_signing_payload(REFERENCE, DIGEST);
    let signature = leaf.sign(&payload);
    let unlogged = simple_signing(&leaf, &world.ca, payload, &signature, None);
    let err = refusal(logged(&unlogged, &world.fulcio()));
    assert_eq!(err, "no transparency log entry; the policy requires one");
    // A bundle entry without its inclusion promise has no signed time.
    let (bundle, _) = world.bundle(&leaf, DIGEST, pki::now());
    let unpromised = edited(&bundle, |b| {
        b["verificationMaterial"]["tlogEntries"][0]
            .as_object_mut()
            .map(|e| e.remove("inclusionPromise"));
    });
    let err = refusal(logged(&unpromised, &world.trusted_root()));
    assert_eq!(
        err,
        "the log entry has no inclusion promise (signed entry timestamp), so no signed time"
    );
}

#[test]
fn log_claims_that_do_not_hold_are_refused() {
    let mut world = World::new();
    let leaf = world.leaf();
    let (bundle, entry) = world.bundle(&leaf, DIGEST, pki::now());
    let trust = world.trusted_root();
    let verify = |signature: &Signature| refusal(logged(signature, &trust));
    // Another integrated time than the log signed.
    let later = edited(&bundle, |b| {
        b["verificationMaterial"]["tlogEntries"][0]["integratedTime"] =
            (entry.integrated_time + 1).to_string().into();
    });
    assert!(
        verify(&later).starts_with("the signed entry timestamp does not verify under log"),
        "{}",
        verify(&later)
    );
    // A proof hash changed.
    let bent = edited(&bundle, |b| {
        b["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]["hashes"][0] =
            b64(&[0u8; 32]).into();
    });
    assert_eq!(
        verify(&bent),
        "the inclusion proof does not hold: it does not reach the root hash"
    );
    // A checkpoint signed by another key.
    let other = Log::new("rekor.e2e").append(entry.body.clone(), entry.integrated_time);
    let forged = edited(&bundle, |b| {
        b["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]["checkpoint"]["envelope"] =
            other.checkpoint.clone().into();
    });
    assert_eq!(
        verify(&forged),
        "the inclusion proof does not hold: the checkpoint is not signed by the log"
    );
    // A genuine entry of another signature lends this one no time.
    let (_, unrelated) = world.bundle(&world.leaf(), DIGEST, pki::now());
    let borrowed = edited(&bundle, |b| {
        b["verificationMaterial"]["tlogEntries"][0] = unrelated.bundle_tlog_entry();
    });
    assert!(
        verify(&borrowed).starts_with("the log entry records another signature"),
        "{}",
        verify(&borrowed)
    );
}

#[test]
fn the_leaf_must_be_for_code_signing_and_its_key_must_verify() {
    let mut world = World::new();
    let tls = world
        .ca
        .leaf(&LeafSpec::email(EMAIL).without_code_signing());
    let (signature, _) = world.simple(&tls, DIGEST, pki::now());
    let err = refusal(logged(&signature, &world.fulcio()));
    assert_eq!(
        err,
        format!(
            "the certificate for {EMAIL} is not a code-signing certificate (no code-signing extended key usage)"
        )
    );
    // Signed by another key than the certificate's (no log: PKI).
    let leaf = world.leaf();
    let payload = pki::simple_signing_payload(REFERENCE, DIGEST);
    let signature = world.leaf().sign(&payload);
    let mismatched = simple_signing(&leaf, &world.ca, payload, &signature, None);
    let err = refusal(verify_certificate(
        &mismatched,
        &world.pki(),
        DIGEST,
        LogRequirement::Optional { now: pki::now() },
    ));
    assert_eq!(
        err,
        "the signature does not verify under the certificate's key"
    );
}

#[test]
fn a_message_signature_bundle_over_the_manifest_digest_verifies() {
    let mut world = World::new();
    let leaf = world.leaf();
    let digest = hex_decode(DIGEST.trim_start_matches("sha256:"));
    // cosign's sign-blob form: the signature is over the artifact, which
    // here is the manifest, whose digest the bundle states.
    let signature = leaf.sign_prehash(&digest);
    let entry = world.log.append(
        world
            .log
            .hashedrekord_of_digest(&digest, &signature, &leaf.pem()),
        pki::now(),
    );
    let bundle = serde_json::json!({
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "verificationMaterial": {
            "certificate": {"rawBytes": b64(&leaf.der)},
            "tlogEntries": [entry.bundle_tlog_entry()],
        },
        "messageSignature": {
            "messageDigest": {"algorithm": "SHA2_256", "digest": b64(&digest)},
            "signature": b64(&signature),
        },
    });
    let signature = Signature::Bundle(bundle.to_string().into_bytes());
    let trust = world.trusted_root();
    logged(&signature, &trust).unwrap_or_else(|e| panic!("{e}"));
    let err = refusal(verify_certificate(
        &signature,
        &trust,
        OTHER,
        LogRequirement::Required,
    ));
    assert!(
        err.contains(&format!("not the manifest pulled, {OTHER}")),
        "{err}"
    );
}

fn hex_decode(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

#[test]
fn hostile_evidence_is_refused_with_a_reason() {
    let mut world = World::new();
    let leaf = world.leaf();
    let (simple, _) = world.simple(&leaf, DIGEST, pki::now());
    let (bundle, _) = world.bundle(&leaf, DIGEST, pki::now());
    let trust = world.fulcio();
    let with_annotation = |key: &str, value: String| {
        let Signature::SimpleSigning {
            payload,
            signature,
            certificate,
        } = &simple
        else {
            panic!("not simple signing")
        };
        let mut certificate = certificate.clone();
        match key {
            CERTIFICATE_ANNOTATION => certificate.certificate = Some(value),
            CHAIN_ANNOTATION => certificate.chain = Some(value),
            _ => certificate.rekor_bundle = Some(value),
        }
        Signature::SimpleSigning {
            payload: payload.clone(),
            signature: signature.clone(),
            certificate,
        }
    };
    // DER nested ten thousand SEQUENCEs deep.
    let mut deep = Vec::new();
    for _ in 0..10_000 {
        deep.extend([0x30, 0x80]);
    }
    let huge_chain = world.ca.pem().repeat(9);
    let cases = [
        (
            with_annotation(CERTIFICATE_ANNOTATION, "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n".into()),
            "malformed PEM certificates",
        ),
        (
            with_annotation(CERTIFICATE_ANNOTATION, "garbage".into()),
            "malformed PEM certificates",
        ),
        (
            with_annotation(CERTIFICATE_ANNOTATION, format!("{}{}", leaf.pem(), leaf.pem())),
            "2 certificates; cosign writes one",
        ),
        (
            with_annotation(CHAIN_ANNOTATION, huge_chain),
            "more than 8 certificates",
        ),
        (
            with_annotation(REKOR_BUNDLE_ANNOTATION, "{\"SignedEntryTimestamp\":1}".into()),
            "malformed Rekor bundle annotation",
        ),
        (
            with_annotation(
                REKOR_BUNDLE_ANNOTATION,
                r#"{"SignedEntryTimestamp":"%%","Payload":{"body":"e30=","integratedTime":1,"logIndex":1,"logID":"00"}}"#.into(),
            ),
            "not base64",
        ),
        (
            with_annotation(
                REKOR_BUNDLE_ANNOTATION,
                r#"{"SignedEntryTimestamp":"AA==","Payload":{"body":"e30=","integratedTime":1,"logIndex":1,"logID":"+0"}}"#.into(),
            ),
            "logID is not hex",
        ),
        (
            edited(&bundle, |b| {
                b["verificationMaterial"]["certificate"]["rawBytes"] = "not base64!".into();
            }),
            "malformed certificate: not base64",
        ),
        (
            edited(&bundle, |b| {
                b["verificationMaterial"]["certificate"]["rawBytes"] = b64(&deep).into();
            }),
            "malformed certificate",
        ),
        (
            edited(&bundle, |b| {
                b["verificationMaterial"] = serde_json::json!({"publicKey": {"hint": "k"}});
            }),
            "the signature carries no certificate",
        ),
        (
            edited(&bundle, |b| {
                b["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]["hashes"] =
                    serde_json::json!(vec!["AA=="; 65]);
            }),
            "more than 64 hashes",
        ),
        (
            edited(&bundle, |b| {
                b["verificationMaterial"]["tlogEntries"][0]["logIndex"] = "-1".into();
            }),
            "malformed tlog entry: not an integer",
        ),
        (
            edited(&bundle, |b| {
                b["verificationMaterial"]["tlogEntries"][0]["canonicalizedBody"] =
                    b64(b"[]").into();
            }),
            "malformed log entry body",
        ),
    ];
    for (signature, reason) in cases {
        let err = refusal(logged(&signature, &trust));
        assert!(err.contains(reason), "{reason:?} not in {err:?}");
    }
}

#[test]
fn hostile_trust_material_is_refused_with_a_reason() {
    let world = World::new();
    let good = pki::trusted_root_json(&[&[&world.ca, &world.root]], &[&world.log]);
    let replaced = |from: &str, to: &str| good.replacen(from, to, 1);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"{".to_vec(), "not a Sigstore trusted_root.json"),
        (
            replaced("trustedroot+json", "other+json").into_bytes(),
            "a trusted root of media type",
        ),
        (
            replaced("2000-01-01T00:00:00Z", "yesterday").into_bytes(),
            "yesterday is not an RFC 3339 UTC time",
        ),
        (
            vec![b' '; 300 << 10],
            "is more than a trust root's",
        ),
        (
            br#"{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}"#.to_vec(),
            "no certificate authority",
        ),
        (
            br#"{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1","certificateAuthorities":[{"certChain":{"certificates":[{"rawBytes":"MAA="}]}}]}"#.to_vec(),
            "certificateAuthorities[0].certChain.certificates[0]: malformed certificate",
        ),
    ];
    for (json, reason) in cases {
        match TrustRoot::from_trusted_root_json(&json) {
            Ok(_) => panic!("{reason}: accepted"),
            Err(e) => assert!(e.to_string().contains(reason), "{reason:?} not in {e}"),
        }
    }
    let root = world.root.pem();
    let roots = root.repeat(9);
    let pem_cases: [(&[u8], &[u8], &str); 5] = [
        (b"garbage", b"", "caRootsData: malformed PEM certificates"),
        // Line ends only: x509-cert's PEM chain reader underflowed on these.
        (
            b"\r\n\n",
            b"",
            "caRootsData: malformed PEM certificates: no CERTIFICATE block",
        ),
        (b"", b"", "no CERTIFICATE block"),
        (root.as_bytes(), b"\xff\xfe", "caIntermediatesData"),
        (roots.as_bytes(), b"", "more than 8 certificates"),
    ];
    for (roots, intermediates, reason) in pem_cases {
        match TrustRoot::from_pki(roots, intermediates) {
            Ok(_) => panic!("{reason}: accepted"),
            Err(e) => assert!(e.to_string().contains(reason), "{reason:?} not in {e}"),
        }
    }
    let key_cases: [(&[u8], &str); 3] = [
        (b"garbage", "rekorKeyData: malformed PEM public key"),
        (root.as_bytes(), "not PUBLIC KEY"),
        (
            b"-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n",
            "rekorKeyData: unsupported Ed25519 key",
        ),
    ];
    for (key, reason) in key_cases {
        match TrustRoot::from_fulcio(root.as_bytes(), key) {
            Ok(_) => panic!("{reason}: accepted"),
            Err(e) => assert!(e.to_string().contains(reason), "{reason:?} not in {e}"),
        }
    }
}

/// An RSA PKI made once with openssl (no private key kept): a 3072-bit
/// root, leaves of 2048 and 1024 bits for [`EMAIL`] (code signing, valid
/// from 2026-12-06 for eight years), and signatures of a simple-signing
/// payload of [`DIGEST`] in PKCS#1 v1.5 (cosign's RSA scheme) and PSS.
macro_rules! rsa_data {
    ($file:literal) => {
        include_str!(concat!("data/rsa/", $file))
    };
}

/// 2027-06-01, within every RSA certificate's validity.
const RSA_NOW: u64 = 1_811_808_000;

/// The RSA payload signed with `signature` by the leaf `certificate`.
fn rsa_signed(certificate: &str, signature: &str) -> Signature {
    Signature::SimpleSigning {
        payload: rsa_data!("payload.json").as_bytes().to_vec(),
        signature: Some(signature.to_string()),
        certificate: CertificateAnnotations {
            certificate: Some(certificate.to_string()),
            chain: None,
            rekor_bundle: None,
        },
    }
}

fn under_rsa_pki(signature: &Signature) -> Result<Signer, CertRefusal> {
    let trust = TrustRoot::from_pki(rsa_data!("root.pem").as_bytes(), b"")
        .unwrap_or_else(|e| panic!("{e}"));
    verify_certificate(
        signature,
        &trust,
        DIGEST,
        LogRequirement::Optional { now: RSA_NOW },
    )
}

#[test]
fn an_rsa_leaf_under_an_rsa_root_verifies() {
    let signed = rsa_signed(rsa_data!("leaf2048.pem"), rsa_data!("payload.rsa2048.sig"));
    let signer = under_rsa_pki(&signed).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(signer.subjects, [San::Email(EMAIL.into())]);
    assert_eq!(signer.signed_at, RSA_NOW);
}

/// The attacks: a 1024-bit leaf (factorable: anyone signs as its owner),
/// a PSS signature where cosign verifies PKCS#1 v1.5 only, an RSA leaf
/// presented with an ECDSA leaf's signature, and the 2048-bit leaf's
/// signature offered with the 1024-bit leaf.
#[test]
fn a_short_rsa_leaf_or_another_scheme_is_refused() {
    let world = World::new();
    let ecdsa = chained(&world.leaf(), &[&world.ca]);
    let Signature::SimpleSigning {
        signature: Some(ecdsa_signature),
        ..
    } = &ecdsa
    else {
        panic!("not simple signing")
    };
    let cases = [
        (
            rsa_signed(rsa_data!("leaf1024.pem"), rsa_data!("payload.rsa1024.sig")),
            "unsupported RSA key of 1024 bits",
        ),
        (
            rsa_signed(rsa_data!("leaf1024.pem"), rsa_data!("payload.rsa2048.sig")),
            "unsupported RSA key of 1024 bits",
        ),
        (
            rsa_signed(
                rsa_data!("leaf2048.pem"),
                rsa_data!("payload.rsa2048-pss.sig"),
            ),
            "does not verify under the certificate's key",
        ),
        (
            rsa_signed(rsa_data!("leaf2048.pem"), ecdsa_signature),
            "does not verify under the certificate's key",
        ),
    ];
    for (signature, why) in cases {
        let err = refusal(under_rsa_pki(&signature));
        assert!(err.contains(why), "{why:?} not in {err:?}");
    }
}
