//! Key-based cosign signatures of OCI guest modules, in both forms cosign
//! writes: simple signing (the `sha256-<hex>.sig` tag) and the Sigstore
//! bundle referrer. A module passes when one signature names its manifest
//! digest and verifies under one of the keys (a list is for rotation, not a
//! quorum); certificates a signature carries are parsed here for `sigstore`
//! and ignored by key verification. Pure, so hostile inputs are unit tested
//! and fuzzed; mco-fetch's oci/signatures.rs fetches the inputs, capped.
//! The forms and algorithms: docs/dev/verification.md.

use std::fmt;

use base64::Engine as _;
use der::DecodePem as _;
use serde::Deserialize;
use x509_cert::spki::SubjectPublicKeyInfoOwned;

use crate::public_key::PublicKey;
use crate::refusal::CertRefusal;
use sha2::{Digest as _, Sha256};

/// The media type of a simple-signing payload layer.
pub const SIMPLE_SIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The annotation holding a simple-signing layer's base64 signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The annotation holding a simple-signing layer's PEM signing certificate.
pub const CERTIFICATE_ANNOTATION: &str = "dev.sigstore.cosign/certificate";
/// The annotation holding the PEM chain (intermediates, root) above it.
pub const CHAIN_ANNOTATION: &str = "dev.sigstore.cosign/chain";
/// The annotation holding the Rekor entry's signed entry timestamp bundle.
pub const REKOR_BUNDLE_ANNOTATION: &str = "dev.sigstore.cosign/bundle";
/// The artifact and layer media type of a Sigstore bundle.
pub const BUNDLE_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
/// The in-toto predicate type of a cosign image signature (`cosign sign`
/// with the new bundle format); an attestation about the same image
/// (`cosign attest`: SLSA provenance, an SBOM, a vulnerability scan) has
/// its own, and says something else than "I vouch for this image".
pub const SIGNATURE_PREDICATE_TYPE: &str = "https://sigstore.dev/cosign/sign/v1";
/// The DSSE payload type of an in-toto statement.
pub(crate) const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";

/// The largest payload, bundle or key read; cosign's are about 1-4 KiB.
pub const MAX_SIGNATURE_BYTES: usize = 64 << 10;
/// The most signatures (layers, referrers) looked at per module; more is
/// not a signed guest but someone filling a registry.
pub const MAX_SIGNATURES: usize = 16;

/// Why bytes are no cosign public key, or a key file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("{0} bytes is no public key")]
    Size(usize),
    #[error("not PEM text")]
    NotText,
    #[error("not a PEM public key (cosign generate-key-pair writes one): {0}")]
    NotPublicKey(der::Error),
    #[error(transparent)]
    Unsupported(CertRefusal),
    #[error(transparent)]
    Read(std::io::Error),
    #[error("more than {MAX_SIGNATURE_BYTES} bytes")]
    FileSize,
}

/// Why one signature verifies under none of the keys.
#[derive(Debug, thiserror::Error)]
pub enum SignatureError {
    #[error("the layer has no {SIGNATURE_ANNOTATION} annotation")]
    NoAnnotation,
    #[error("the payload is not a simple-signing payload: {0}")]
    NotSimpleSigning(serde_json::Error),
    #[error("the payload's critical.type is {0:?}")]
    PayloadType(String),
    #[error("the payload signs {signed}, not {expected}")]
    OtherImage { signed: String, expected: String },
    #[error("the bundle does not parse: {0}")]
    NotBundle(serde_json::Error),
    #[error("a bundle of media type {0:?}")]
    BundleType(String),
    #[error("the bundle has no dsseEnvelope (cosign signs images with one)")]
    NoEnvelope,
    #[error("a DSSE payload of type {0:?}")]
    EnvelopeType(String),
    #[error("{0} DSSE signatures; cosign writes one")]
    EnvelopeSignatures(usize),
    #[error("the DSSE payload is not base64: {0}")]
    EnvelopeBase64(base64::DecodeError),
    #[error("the DSSE payload is not an in-toto statement: {0}")]
    NotStatement(serde_json::Error),
    #[error(
        "an attestation (predicateType {0:?}), not a signature: a cosign signature's predicateType is {SIGNATURE_PREDICATE_TYPE}"
    )]
    Attestation(String),
    #[error("the statement's subject is not {0}")]
    Subject(String),
    /// Each key's reason, in the order given.
    #[error("{}", joined(.0))]
    Keys(Vec<Mismatch>),
}

/// Why a signature is not one key's.
#[derive(Debug, thiserror::Error)]
pub enum Mismatch {
    #[error("the signature is not base64: {0}")]
    NotBase64(base64::DecodeError),
    #[error("not signed by {0}")]
    OtherKey(String),
}

/// Why a module's signatures do not vouch for it.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("no cosign signature found (neither a .sig tag nor a bundle referrer)")]
    NoSignature,
    /// Each signature's form and reason, in the order found.
    #[error("{}", joined(&.0.iter().map(|(form, e)| format!("{form}: {e}")).collect::<Vec<_>>()))]
    Refused(Vec<(&'static str, SignatureError)>),
}

/// Reasons as errors list them.
fn joined(reasons: &[impl fmt::Display]) -> String {
    reasons
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// What one signature counts as toward a quorum: who signed which bytes.
/// One ECDSA signature has several encodings (ASN.1 DER or raw `r||s`,
/// high or low S, all accepted as cosign's verifier accepts them) and can
/// be repeated in the registry by anyone who can push; each of those is
/// the same signing, so `allOf` and `anyOf` count signings, not layers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Signing {
    /// The signer's public key, as [`Key::fingerprint`] writes it.
    pub signer: String,
    /// The SHA-256 of the bytes signed (the simple-signing payload, or
    /// the DSSE pre-authentication encoding, or the manifest itself for a
    /// bundle's message signature), hex.
    pub message: String,
}

/// A cosign public key, with the name errors report it by (where it was
/// read from).
#[derive(Clone)]
pub struct Key {
    pub name: String,
    key: PublicKey,
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({})", self.name)
    }
}

impl Key {
    /// A PEM `PUBLIC KEY` (SubjectPublicKeyInfo), as `cosign
    /// generate-key-pair` writes `cosign.pub`: ECDSA P-256 or P-384, or
    /// RSA of 2048 to 8192 bits. An Ed25519 key or a short RSA key is
    /// refused here, not at the first signature.
    pub fn from_pem(name: &str, pem: &[u8]) -> Result<Key, KeyError> {
        if pem.len() > MAX_SIGNATURE_BYTES {
            return Err(KeyError::Size(pem.len()));
        }
        let text = std::str::from_utf8(pem).map_err(|_| KeyError::NotText)?;
        let spki = SubjectPublicKeyInfoOwned::from_pem(text.trim().as_bytes())
            .map_err(KeyError::NotPublicKey)?;
        Ok(Key {
            name: name.to_string(),
            key: PublicKey::from_spki(&spki).map_err(KeyError::Unsupported)?,
        })
    }

    /// The key's point (an RSA key's modulus and exponent), which tells
    /// two keys apart whatever they are named.
    pub fn fingerprint(&self) -> String {
        self.key.fingerprint()
    }

    /// Whether base64 `signature` is this key's over `message`. ECDSA
    /// signatures in ASN.1 DER or the raw form and both S forms are
    /// accepted, as cosign's Go verifier does.
    fn verifies(&self, message: &[u8], signature: &str) -> Result<(), Mismatch> {
        let raw = base64::engine::general_purpose::STANDARD
            .decode(signature.trim())
            .map_err(Mismatch::NotBase64)?;
        if self.key.verifies(message, &raw) {
            Ok(())
        } else {
            Err(Mismatch::OtherKey(self.name.clone()))
        }
    }
}

/// A signature found for a module, as read from the registry.
#[derive(Debug, Clone, PartialEq)]
pub enum Signature {
    /// A simple-signing payload, its base64 signature annotation and the
    /// certificate annotations, if any.
    SimpleSigning {
        payload: Vec<u8>,
        signature: Option<String>,
        certificate: CertificateAnnotations,
    },
    /// A Sigstore bundle's JSON.
    Bundle(Vec<u8>),
}

impl Signature {
    /// The form's name, as `guests inspect` lists it.
    pub fn form(&self) -> &'static str {
        match self {
            Signature::SimpleSigning { .. } => "simple-signing",
            Signature::Bundle(_) => "sigstore-bundle",
        }
    }

    /// The key among `keys` this signature of `manifest_digest` verifies
    /// under, and the signing it is; otherwise why not.
    pub fn verify<'k>(
        &self,
        manifest_digest: &str,
        keys: &'k [Key],
    ) -> Result<(&'k Key, Signing), SignatureError> {
        let (message, signature) = match self {
            Signature::SimpleSigning {
                payload, signature, ..
            } => {
                check_simple_signing(payload, manifest_digest)?;
                let signature = signature.as_deref().ok_or(SignatureError::NoAnnotation)?;
                (payload.clone(), signature.to_string())
            }
            Signature::Bundle(json) => bundle_message(json, manifest_digest)?,
        };
        let mut why = Vec::new();
        for key in keys {
            match key.verifies(&message, &signature) {
                Ok(()) => {
                    let signing = Signing {
                        signer: key.fingerprint(),
                        message: format!("{:x}", Sha256::digest(&message)),
                    };
                    return Ok((key, signing));
                }
                Err(e) => why.push(e),
            }
        }
        Err(SignatureError::Keys(why))
    }
}

/// A simple-signing layer's certificate annotations, as cosign writes them
/// when signing with a certificate.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CertificateAnnotations {
    /// [`CERTIFICATE_ANNOTATION`]: the PEM leaf certificate.
    pub certificate: Option<String>,
    /// [`CHAIN_ANNOTATION`]: PEM intermediates and root.
    pub chain: Option<String>,
    /// [`REKOR_BUNDLE_ANNOTATION`]: the Rekor entry's JSON.
    pub rekor_bundle: Option<String>,
}

impl CertificateAnnotations {
    /// The certificate annotations among a layer's `annotations`.
    pub fn from_annotations(
        annotations: &std::collections::BTreeMap<String, String>,
    ) -> CertificateAnnotations {
        let get = |key: &str| annotations.get(key).cloned();
        CertificateAnnotations {
            certificate: get(CERTIFICATE_ANNOTATION),
            chain: get(CHAIN_ANNOTATION),
            rekor_bundle: get(REKOR_BUNDLE_ANNOTATION),
        }
    }
}

/// The first key any of `signatures` verifies under, or each signature's
/// reason.
pub fn verify<'k>(
    signatures: &[Signature],
    manifest_digest: &str,
    keys: &'k [Key],
) -> Result<&'k Key, VerifyError> {
    if signatures.is_empty() {
        return Err(VerifyError::NoSignature);
    }
    let mut why = Vec::new();
    for signature in signatures {
        match signature.verify(manifest_digest, keys) {
            Ok((key, _)) => return Ok(key),
            Err(e) => why.push((signature.form(), e)),
        }
    }
    Err(VerifyError::Refused(why))
}

/// A key file's bytes, refused past [`MAX_SIGNATURE_BYTES`] before they
/// are read.
pub fn read_key_file(path: &std::path::Path) -> Result<Vec<u8>, KeyError> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(KeyError::Read)?;
    let mut bytes = Vec::new();
    file.take(MAX_SIGNATURE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(KeyError::Read)?;
    if bytes.len() > MAX_SIGNATURE_BYTES {
        return Err(KeyError::FileSize);
    }
    Ok(bytes)
}

/// Key names as errors list them.
pub fn names(keys: &[Key]) -> String {
    keys.iter()
        .map(|k| k.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The simple-signing payload must be a cosign container signature of this
/// very manifest; a valid signature of another image proves nothing.
pub(crate) fn check_simple_signing(
    payload: &[u8],
    manifest_digest: &str,
) -> Result<(), SignatureError> {
    #[derive(Deserialize)]
    struct Payload {
        critical: Critical,
    }
    #[derive(Deserialize)]
    struct Critical {
        image: Image,
        #[serde(rename = "type")]
        kind: String,
    }
    #[derive(Deserialize)]
    struct Image {
        #[serde(rename = "docker-manifest-digest")]
        digest: String,
    }
    let parsed: Payload =
        serde_json::from_slice(payload).map_err(SignatureError::NotSimpleSigning)?;
    if parsed.critical.kind != "cosign container image signature" {
        return Err(SignatureError::PayloadType(parsed.critical.kind));
    }
    if parsed.critical.image.digest != manifest_digest {
        return Err(SignatureError::OtherImage {
            signed: parsed.critical.image.digest,
            expected: manifest_digest.to_string(),
        });
    }
    Ok(())
}

/// The image a simple-signing payload claims to sign
/// (`critical.identity.docker-reference`), if it names one.
pub fn docker_reference(payload: &[u8]) -> Option<String> {
    let payload: serde_json::Value = serde_json::from_slice(payload).ok()?;
    payload["critical"]["identity"]["docker-reference"]
        .as_str()
        .map(str::to_string)
}

/// A Sigstore bundle, as far as cosign's signatures use it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Bundle {
    media_type: String,
    #[serde(default)]
    pub(crate) verification_material: Option<VerificationMaterial>,
    #[serde(default)]
    pub(crate) dsse_envelope: Option<Envelope>,
    #[serde(default)]
    pub(crate) message_signature: Option<MessageSignature>,
}

/// The signer's certificate (v0.3) or chain (v0.1, v0.2) and log entries.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VerificationMaterial {
    #[serde(default)]
    pub(crate) certificate: Option<RawBytes>,
    #[serde(default)]
    pub(crate) x509_certificate_chain: Option<CertificateChain>,
    #[serde(default)]
    pub(crate) tlog_entries: Vec<TlogEntry>,
}

#[derive(Deserialize)]
pub(crate) struct CertificateChain {
    pub(crate) certificates: Vec<RawBytes>,
}

/// Base64 bytes, as protobuf JSON writes `bytes`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RawBytes {
    pub(crate) raw_bytes: String,
}

/// A Rekor entry in a bundle; protobuf JSON writes int64 as strings.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TlogEntry {
    pub(crate) log_index: Int,
    pub(crate) log_id: LogId,
    pub(crate) integrated_time: Int,
    #[serde(default)]
    pub(crate) inclusion_promise: Option<InclusionPromise>,
    #[serde(default)]
    pub(crate) inclusion_proof: Option<InclusionProof>,
    pub(crate) canonicalized_body: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LogId {
    pub(crate) key_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InclusionPromise {
    pub(crate) signed_entry_timestamp: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InclusionProof {
    pub(crate) log_index: Int,
    pub(crate) root_hash: String,
    pub(crate) tree_size: Int,
    pub(crate) hashes: Vec<String>,
    pub(crate) checkpoint: Checkpoint,
}

#[derive(Deserialize)]
pub(crate) struct Checkpoint {
    pub(crate) envelope: String,
}

/// An int64 as protobuf JSON writes it (a string) or as a number.
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum Int {
    Text(String),
    Number(u64),
}

impl Int {
    pub(crate) fn value(&self) -> Option<u64> {
        match self {
            Int::Text(text) => text.parse().ok(),
            Int::Number(n) => Some(*n),
        }
    }
}

/// A signature over the artifact's digest (`cosign sign-blob` style).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MessageSignature {
    #[serde(default)]
    pub(crate) message_digest: Option<MessageDigest>,
    #[serde(default)]
    pub(crate) signature: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct MessageDigest {
    pub(crate) algorithm: String,
    pub(crate) digest: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Envelope {
    payload: String,
    payload_type: String,
    signatures: Vec<EnvelopeSignature>,
}

#[derive(Deserialize)]
struct EnvelopeSignature {
    sig: String,
}

/// A DSSE envelope's checked content: what its signature signs.
pub(crate) struct DsseMessage {
    /// The pre-authentication encoding: the signed bytes.
    pub(crate) pae: Vec<u8>,
    /// The decoded payload (Rekor's dsse entries record its hash).
    pub(crate) payload: Vec<u8>,
    /// The base64 signature.
    pub(crate) signature: String,
}

/// A bundle's JSON, refused unless it is a v0.3 bundle.
pub(crate) fn parse_bundle(json: &[u8]) -> Result<Bundle, SignatureError> {
    let bundle: Bundle = serde_json::from_slice(json).map_err(SignatureError::NotBundle)?;
    if bundle.media_type != BUNDLE_MEDIA_TYPE {
        return Err(SignatureError::BundleType(bundle.media_type));
    }
    Ok(bundle)
}

/// A bundle's signed message (the DSSE pre-authentication encoding of its
/// in-toto statement) and base64 signature, once its statement is found to
/// name `manifest_digest`.
fn bundle_message(json: &[u8], manifest_digest: &str) -> Result<(Vec<u8>, String), SignatureError> {
    let envelope = parse_bundle(json)?
        .dsse_envelope
        .ok_or(SignatureError::NoEnvelope)?;
    let message = dsse_message(&envelope, manifest_digest)?;
    Ok((message.pae, message.signature))
}

/// An in-toto DSSE envelope's message, refused unless its statement is a
/// cosign signature (not an attestation) whose subject is
/// `manifest_digest`.
pub(crate) fn dsse_message(
    envelope: &Envelope,
    manifest_digest: &str,
) -> Result<DsseMessage, SignatureError> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Statement {
        subject: Vec<Subject>,
        predicate_type: String,
    }
    #[derive(Deserialize)]
    struct Subject {
        digest: std::collections::BTreeMap<String, String>,
    }
    if envelope.payload_type != IN_TOTO_PAYLOAD_TYPE {
        return Err(SignatureError::EnvelopeType(envelope.payload_type.clone()));
    }
    let [signature] = envelope.signatures.as_slice() else {
        return Err(SignatureError::EnvelopeSignatures(
            envelope.signatures.len(),
        ));
    };
    let payload = base64::engine::general_purpose::STANDARD
        .decode(envelope.payload.trim())
        .map_err(SignatureError::EnvelopeBase64)?;
    let statement: Statement =
        serde_json::from_slice(&payload).map_err(SignatureError::NotStatement)?;
    if statement.predicate_type != SIGNATURE_PREDICATE_TYPE {
        return Err(SignatureError::Attestation(statement.predicate_type));
    }
    let hex = manifest_digest.strip_prefix("sha256:").unwrap_or("");
    if !statement
        .subject
        .iter()
        .any(|s| s.digest.get("sha256").is_some_and(|d| d == hex))
    {
        return Err(SignatureError::Subject(manifest_digest.to_string()));
    }
    Ok(DsseMessage {
        pae: pae(&envelope.payload_type, &payload),
        payload,
        signature: signature.sig.clone(),
    })
}

/// DSSE's pre-authentication encoding: what a DSSE signature signs.
pub(crate) fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut message = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    message.extend_from_slice(payload);
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Signer as _;
    use p256::ecdsa::{DerSignature, SigningKey};
    use p256::pkcs8::{EncodePublicKey as _, LineEnding};

    const DIGEST: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";

    fn signing_key(seed: u8) -> SigningKey {
        SigningKey::from_slice(&[seed; 32]).unwrap_or_else(|e| panic!("{e}"))
    }

    fn key(name: &str, seed: u8) -> Key {
        let pem = signing_key(seed)
            .verifying_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap_or_else(|e| panic!("{e}"));
        Key::from_pem(name, pem.as_bytes()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    fn sign(seed: u8, message: &[u8]) -> String {
        let signature: DerSignature = signing_key(seed).sign(message);
        b64(signature.as_bytes())
    }

    fn payload(digest: &str) -> Vec<u8> {
        format!(
            r#"{{"critical":{{"identity":{{"docker-reference":"r/g/mcn"}},"image":{{"docker-manifest-digest":"{digest}"}},"type":"cosign container image signature"}},"optional":null}}"#
        )
        .into_bytes()
    }

    fn simple(seed: u8, digest: &str) -> Signature {
        let payload = payload(digest);
        Signature::SimpleSigning {
            signature: Some(sign(seed, &payload)),
            payload,
            certificate: CertificateAnnotations::default(),
        }
    }

    fn bundle(seed: u8, digest: &str) -> Signature {
        statement_bundle(seed, digest, SIGNATURE_PREDICATE_TYPE)
    }

    /// A bundle of an in-toto statement of `predicate_type` about `digest`.
    fn statement_bundle(seed: u8, digest: &str, predicate_type: &str) -> Signature {
        let hex = digest.trim_start_matches("sha256:");
        let statement = format!(
            r#"{{"_type":"https://in-toto.io/Statement/v1","subject":[{{"name":"r/g/mcn","digest":{{"sha256":"{hex}"}}}}],"predicateType":"{predicate_type}","predicate":{{}}}}"#
        );
        let sig = sign(seed, &pae(IN_TOTO_PAYLOAD_TYPE, statement.as_bytes()));
        Signature::Bundle(
            format!(
                r#"{{"mediaType":"{BUNDLE_MEDIA_TYPE}","verificationMaterial":{{"publicKey":{{"hint":"x"}}}},"dsseEnvelope":{{"payload":"{}","payloadType":"{IN_TOTO_PAYLOAD_TYPE}","signatures":[{{"sig":"{sig}","keyid":""}}]}}}}"#,
                b64(statement.as_bytes())
            )
            .into_bytes(),
        )
    }

    #[test]
    fn both_forms_verify_under_the_signing_key_and_name_it() {
        let keys = [key("configmap/keys[old.pub]", 9), key("file team.pub", 7)];
        for signature in [simple(7, DIGEST), bundle(7, DIGEST)] {
            let found = verify(std::slice::from_ref(&signature), DIGEST, &keys)
                .map(|k| k.name.clone())
                .map_err(|e| e.to_string());
            assert_eq!(found, Ok("file team.pub".to_string()), "{signature:?}");
        }
    }

    #[test]
    fn another_key_or_another_digest_is_refused() {
        let keys = [key("team.pub", 7)];
        let other = "sha256:2222222222222222222222222222222222222222222222222222222222222222";
        for signature in [simple(8, DIGEST), bundle(8, DIGEST)] {
            let err = verify(&[signature], DIGEST, &keys)
                .map(|k| k.name.clone())
                .map_err(|e| e.to_string());
            assert!(
                err.as_ref()
                    .is_err_and(|e| e.contains("not signed by team.pub")),
                "{err:?}"
            );
        }
        let err = verify(&[simple(7, other)], DIGEST, &keys)
            .map(|k| k.name.clone())
            .map_err(|e| e.to_string());
        assert!(err.is_err_and(|e| e.contains(&format!("signs {other}, not {DIGEST}"))));
        let err = verify(&[bundle(7, other)], DIGEST, &keys)
            .map(|k| k.name.clone())
            .map_err(|e| e.to_string());
        assert!(err.is_err_and(|e| e.contains("subject is not")));
        let err = verify(&[], DIGEST, &keys)
            .map(|k| k.name.clone())
            .map_err(|e| e.to_string());
        assert!(err.is_err_and(|e| e.contains("no cosign signature found")));
    }

    /// The attack: an attestation about the module (`cosign attest` by
    /// the same key) offered as its signature.
    #[test]
    fn an_attestation_under_the_key_is_refused_as_no_signature() {
        let keys = [key("team.pub", 7)];
        for predicate_type in [
            "https://slsa.dev/provenance/v1",
            "https://spdx.dev/Document",
            "https://cyclonedx.org/bom",
            "https://cosign.sigstore.dev/attestation/vuln/v1",
            "",
        ] {
            let attestation = statement_bundle(7, DIGEST, predicate_type);
            match verify(&[attestation], DIGEST, &keys) {
                Err(e) => assert!(
                    e.to_string().contains(&format!(
                        "an attestation (predicateType {predicate_type:?}), not a signature"
                    )),
                    "{e}"
                ),
                Ok(k) => panic!("{predicate_type} verified under {k:?}"),
            }
        }
    }

    #[test]
    fn hostile_signatures_are_refused_with_a_reason() {
        let keys = [key("team.pub", 7)];
        let good = payload(DIGEST);
        let cases = [
            (
                Signature::SimpleSigning {
                    certificate: CertificateAnnotations::default(),
                    payload: good.clone(),
                    signature: Some("%%% not base64".into()),
                },
                "not base64",
            ),
            (
                Signature::SimpleSigning {
                    certificate: CertificateAnnotations::default(),
                    payload: good.clone(),
                    signature: Some(b64(b"short")),
                },
                "not signed by team.pub",
            ),
            (
                Signature::SimpleSigning {
                    certificate: CertificateAnnotations::default(),
                    payload: good.clone(),
                    signature: None,
                },
                "no dev.cosignproject.cosign/signature annotation",
            ),
            (
                Signature::SimpleSigning {
                    certificate: CertificateAnnotations::default(),
                    payload: b"{\"critical\":7}".to_vec(),
                    signature: Some(sign(7, b"x")),
                },
                "not a simple-signing payload",
            ),
            (
                Signature::SimpleSigning {
                    certificate: CertificateAnnotations::default(),
                    payload: String::from_utf8_lossy(&good)
                        .replace("cosign container image signature", "other")
                        .into_bytes(),
                    signature: Some(sign(7, &good)),
                },
                "critical.type",
            ),
            (Signature::Bundle(b"[]".to_vec()), "does not parse"),
            (
                Signature::Bundle(
                    format!(r#"{{"mediaType":"{BUNDLE_MEDIA_TYPE}","messageSignature":{{}}}}"#)
                        .into_bytes(),
                ),
                "no dsseEnvelope",
            ),
            (
                Signature::Bundle(
                    format!(r#"{{"mediaType":"{BUNDLE_MEDIA_TYPE}","dsseEnvelope":{{"payload":"e30=","payloadType":"{IN_TOTO_PAYLOAD_TYPE}","signatures":[]}}}}"#)
                        .into_bytes(),
                ),
                "0 DSSE signatures",
            ),
            (
                Signature::Bundle(
                    format!(r#"{{"mediaType":"{BUNDLE_MEDIA_TYPE}","dsseEnvelope":{{"payload":"!!","payloadType":"{IN_TOTO_PAYLOAD_TYPE}","signatures":[{{"sig":""}}]}}}}"#)
                        .into_bytes(),
                ),
                "DSSE payload is not base64",
            ),
        ];
        for (signature, reason) in cases {
            match verify(std::slice::from_ref(&signature), DIGEST, &keys) {
                Err(e) => assert!(e.to_string().contains(reason), "{signature:?}: {e}"),
                Ok(k) => panic!("{signature:?} verified under {k:?}"),
            }
        }
        // A signature over the payload with one byte changed does not verify.
        let mut tampered = good.clone();
        tampered.push(b' ');
        let signature = Signature::SimpleSigning {
            certificate: CertificateAnnotations::default(),
            signature: Some(sign(7, &good)),
            payload: tampered,
        };
        assert!(verify(&[signature], DIGEST, &keys).is_err());
    }

    /// Made once with openssl (no private key kept): an RSA root, leaves
    /// of 2048 and 1024 bits under it, their public keys, and signatures of
    /// [`RSA_PAYLOAD`] in PKCS#1 v1.5 (what cosign writes with an RSA
    /// key, in both forms) and in PSS.
    macro_rules! rsa_data {
        ($file:literal) => {
            include_str!(concat!("../tests/data/rsa/", $file))
        };
    }
    const RSA_PAYLOAD: &str = rsa_data!("payload.json");

    fn rsa_simple(signature: &str) -> Signature {
        Signature::SimpleSigning {
            payload: RSA_PAYLOAD.as_bytes().to_vec(),
            signature: Some(signature.to_string()),
            certificate: CertificateAnnotations::default(),
        }
    }

    #[test]
    fn an_rsa_key_verifies_pkcs1_v15_signatures_as_cosign_writes_them() {
        let rsa = Key::from_pem("rsa.pub", rsa_data!("rsa2048.pub.pem").as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        let signature = rsa_simple(rsa_data!("payload.rsa2048.sig"));
        let keys = [rsa.clone()];
        let found = verify(std::slice::from_ref(&signature), DIGEST, &keys);
        assert_eq!(found.map(|k| k.name.clone()).ok(), Some("rsa.pub".into()));
        // One signing whatever the key is named, and not an ECDSA key's.
        let (_, signing) = signature
            .verify(DIGEST, std::slice::from_ref(&rsa))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(signing.signer, rsa.fingerprint());
        assert_ne!(rsa.fingerprint(), key("a", 1).fingerprint());
    }

    /// The attacks: a signature by another key type offered to each key
    /// (an ECDSA signature to an RSA key, an RSA one to an ECDSA key), a
    /// PSS signature where cosign's verifier takes PKCS#1 v1.5 only, and
    /// the payload changed under a good RSA signature.
    #[test]
    fn rsa_signatures_by_the_wrong_key_type_or_scheme_are_refused() {
        let rsa = Key::from_pem("rsa.pub", rsa_data!("rsa2048.pub.pem").as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        let ecdsa = key("ec.pub", 7);
        let cases = [
            (simple(7, DIGEST), &rsa, "not signed by rsa.pub"),
            (
                rsa_simple(rsa_data!("payload.rsa2048.sig")),
                &ecdsa,
                "not signed by ec.pub",
            ),
            (
                rsa_simple(rsa_data!("payload.rsa2048-pss.sig")),
                &rsa,
                "not signed by rsa.pub",
            ),
            (
                Signature::SimpleSigning {
                    payload: RSA_PAYLOAD.replace("null", "{}").into_bytes(),
                    signature: Some(rsa_data!("payload.rsa2048.sig").into()),
                    certificate: CertificateAnnotations::default(),
                },
                &rsa,
                "not signed by rsa.pub",
            ),
        ];
        for (signature, key, reason) in cases {
            match verify(
                std::slice::from_ref(&signature),
                DIGEST,
                std::slice::from_ref(key),
            ) {
                Err(e) => assert!(e.to_string().contains(reason), "{signature:?}: {e}"),
                Ok(k) => panic!("{signature:?} verified under {k:?}"),
            }
        }
    }

    #[test]
    fn only_supported_pem_public_keys_are_keys() {
        let cases: [(&[u8], &str); 6] = [
            (b"garbage", "not a PEM public key"),
            // The attack: a 1024-bit RSA key, which can be factored.
            (
                rsa_data!("rsa1024.pub.pem").as_bytes(),
                "unsupported RSA key of 1024 bits",
            ),
            (
                rsa_data!("ed25519.pub.pem").as_bytes(),
                "unsupported Ed25519 key (cosign signs with Ed25519ph, which is not verified)",
            ),
            // A certificate is no public key.
            (rsa_data!("root.pem").as_bytes(), "not a PEM public key"),
            (&[0xff, 0xfe, 0x00], "not PEM text"),
            (&[b'a'; MAX_SIGNATURE_BYTES + 1], "is no public key"),
        ];
        for (pem, reason) in cases {
            match Key::from_pem("k.pub", pem) {
                Err(e) => assert!(e.to_string().contains(reason), "{e}"),
                Ok(k) => panic!("{k:?}"),
            }
        }
        assert_ne!(key("a", 1).fingerprint(), key("b", 2).fingerprint());
    }
}
