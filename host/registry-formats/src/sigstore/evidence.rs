//! What a certificate-based signature offers as evidence, read from either
//! form cosign writes (with cosign.rs's parsers): the leaf certificate, the
//! chain it presents, what was signed, the signature, and the first Rekor
//! entry.

use base64::Engine as _;
use serde::Deserialize;
use sha2::{Digest as _, Sha256};

use super::certificate::Certificate;
use super::{CertRefusal, MAX_CERTIFICATES};
use crate::cosign::{self, Signature, SignatureError};

/// What a signature signs.
#[derive(Debug, Clone)]
pub(crate) enum Signed {
    /// A simple-signing payload; Rekor's hashedrekord records its hash.
    Payload(Vec<u8>),
    /// A DSSE envelope's pre-authentication encoding; Rekor's dsse entry
    /// records the payload's hash.
    Dsse { pae: Vec<u8>, payload: Vec<u8> },
    /// A bundle's message signature over the manifest itself, by digest.
    Digest(Vec<u8>),
}

impl Signed {
    /// The SHA-256 the signature is made over.
    pub(crate) fn sha256(&self) -> Vec<u8> {
        match self {
            Signed::Payload(message) | Signed::Dsse { pae: message, .. } => {
                Sha256::digest(message).to_vec()
            }
            Signed::Digest(digest) => digest.clone(),
        }
    }
}

/// A Rekor entry as the signature carries it.
#[derive(Debug, Clone)]
pub(crate) struct Tlog {
    pub(crate) body: Vec<u8>,
    pub(crate) log_index: u64,
    pub(crate) log_id: Vec<u8>,
    pub(crate) integrated_time: u64,
    /// The signed entry timestamp (inclusion promise).
    pub(crate) promise: Option<Vec<u8>>,
    pub(crate) proof: Option<Proof>,
}

/// An inclusion proof and the checkpoint it reaches.
#[derive(Debug, Clone)]
pub(crate) struct Proof {
    pub(crate) log_index: u64,
    pub(crate) tree_size: u64,
    pub(crate) root_hash: Vec<u8>,
    pub(crate) hashes: Vec<Vec<u8>>,
    pub(crate) checkpoint: String,
}

/// The most hashes an inclusion proof may hold (a tree of 2^64 leaves).
const MAX_PROOF_HASHES: usize = 64;

#[derive(Debug, Clone)]
pub(crate) struct Evidence {
    /// The leaf certificate's DER.
    pub(crate) certificate: Vec<u8>,
    /// The chain it presents (DER), untrusted.
    pub(crate) chain: Vec<Vec<u8>>,
    pub(crate) signed: Signed,
    pub(crate) signature: Vec<u8>,
    pub(crate) tlog: Option<Tlog>,
}

fn malformed(what: &'static str, why: impl ToString) -> CertRefusal {
    CertRefusal::Malformed {
        what,
        why: why.to_string(),
    }
}

fn base64(what: &'static str, text: &str) -> Result<Vec<u8>, CertRefusal> {
    base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| malformed(what, format!("not base64: {e}")))
}

/// A cosign payload or bundle error as a refusal: naming another manifest
/// is a digest mismatch, an attestation is no signature, anything else a
/// malformed signature.
fn refusal(e: SignatureError) -> CertRefusal {
    match e {
        SignatureError::OtherImage { signed, expected } => {
            CertRefusal::DigestMismatch { signed, expected }
        }
        SignatureError::Subject(expected) => CertRefusal::DigestMismatch {
            signed: "another subject".into(),
            expected,
        },
        attestation @ SignatureError::Attestation(_) => {
            CertRefusal::NotSignature(attestation.to_string())
        }
        other => malformed("signature", other),
    }
}

impl Evidence {
    /// The evidence in `signature`, refused unless it names
    /// `manifest_digest` and carries a certificate.
    pub(crate) fn read(
        signature: &Signature,
        manifest_digest: &str,
    ) -> Result<Evidence, CertRefusal> {
        match signature {
            Signature::SimpleSigning {
                payload,
                signature,
                certificate,
            } => {
                cosign::check_simple_signing(payload, manifest_digest).map_err(refusal)?;
                let pem = certificate
                    .certificate
                    .as_deref()
                    .ok_or(CertRefusal::NoCertificate)?;
                let signature = signature
                    .as_deref()
                    .ok_or_else(|| malformed("signature", SignatureError::NoAnnotation))?;
                let chain = match &certificate.chain {
                    Some(pem) => Certificate::from_pem_chain(pem.as_bytes())?
                        .into_iter()
                        .map(|c| c.der)
                        .collect(),
                    None => Vec::new(),
                };
                let tlog = certificate
                    .rekor_bundle
                    .as_deref()
                    .map(rekor_bundle)
                    .transpose()?;
                Ok(Evidence {
                    certificate: pem_leaf(pem)?,
                    chain,
                    signed: Signed::Payload(payload.clone()),
                    signature: base64("signature", signature)?,
                    tlog,
                })
            }
            Signature::Bundle(json) => bundle(json, manifest_digest),
        }
    }
}

/// The one certificate of a certificate annotation.
fn pem_leaf(pem: &str) -> Result<Vec<u8>, CertRefusal> {
    let mut certs = Certificate::from_pem_chain(pem.as_bytes())?;
    match certs.len() {
        1 => Ok(certs.remove(0).der),
        n => Err(malformed(
            "certificate annotation",
            format!("{n} certificates; cosign writes one"),
        )),
    }
}

/// The `dev.sigstore.cosign/bundle` annotation: the entry's body,
/// integrated time, index and log ID, and its signed entry timestamp.
fn rekor_bundle(json: &str) -> Result<Tlog, CertRefusal> {
    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    struct Annotation {
        signed_entry_timestamp: String,
        payload: Payload,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Payload {
        body: String,
        integrated_time: u64,
        log_index: u64,
        #[serde(rename = "logID")]
        log_id: String,
    }
    let what = "Rekor bundle annotation";
    let parsed: Annotation = serde_json::from_str(json).map_err(|e| malformed(what, e))?;
    Ok(Tlog {
        body: base64(what, &parsed.payload.body)?,
        log_index: parsed.payload.log_index,
        log_id: unhex(&parsed.payload.log_id).ok_or_else(|| malformed(what, "logID is not hex"))?,
        integrated_time: parsed.payload.integrated_time,
        promise: Some(base64(what, &parsed.signed_entry_timestamp)?),
        proof: None,
    })
}

fn bundle(json: &[u8], manifest_digest: &str) -> Result<Evidence, CertRefusal> {
    let bundle = cosign::parse_bundle(json).map_err(refusal)?;
    let material = bundle
        .verification_material
        .ok_or(CertRefusal::NoCertificate)?;
    let (certificate, chain) = match (material.certificate, material.x509_certificate_chain) {
        (Some(leaf), _) => (base64("certificate", &leaf.raw_bytes)?, Vec::new()),
        (None, Some(chain)) => {
            if chain.certificates.len() > MAX_CERTIFICATES {
                return Err(malformed(
                    "certificate chain",
                    format!("more than {MAX_CERTIFICATES} certificates"),
                ));
            }
            let mut certs = chain
                .certificates
                .iter()
                .map(|c| base64("certificate", &c.raw_bytes))
                .collect::<Result<Vec<_>, _>>()?;
            if certs.is_empty() {
                return Err(CertRefusal::NoCertificate);
            }
            let leaf = certs.remove(0);
            (leaf, certs)
        }
        (None, None) => return Err(CertRefusal::NoCertificate),
    };
    let (signed, signature) = match (bundle.dsse_envelope, bundle.message_signature) {
        (Some(envelope), _) => {
            let message = cosign::dsse_message(&envelope, manifest_digest).map_err(refusal)?;
            (
                Signed::Dsse {
                    pae: message.pae,
                    payload: message.payload,
                },
                base64("signature", &message.signature)?,
            )
        }
        (None, Some(message)) => {
            let digest = message
                .message_digest
                .ok_or_else(|| malformed("message signature", "no messageDigest"))?;
            if digest.algorithm != "SHA2_256" {
                return Err(CertRefusal::Unsupported(format!(
                    "message digest {}",
                    digest.algorithm
                )));
            }
            let signed = base64("message digest", &digest.digest)?;
            let expected = manifest_digest.strip_prefix("sha256:").unwrap_or("");
            if super::trust::hex(&signed) != expected {
                return Err(CertRefusal::DigestMismatch {
                    signed: format!("sha256:{}", super::trust::hex(&signed)),
                    expected: manifest_digest.to_string(),
                });
            }
            let signature = message
                .signature
                .ok_or_else(|| malformed("message signature", "no signature"))?;
            (Signed::Digest(signed), base64("signature", &signature)?)
        }
        (None, None) => {
            return Err(malformed(
                "bundle",
                "neither a dsseEnvelope nor a messageSignature",
            ));
        }
    };
    let tlog = material.tlog_entries.first().map(tlog_entry).transpose()?;
    Ok(Evidence {
        certificate,
        chain,
        signed,
        signature,
        tlog,
    })
}

fn tlog_entry(entry: &cosign::TlogEntry) -> Result<Tlog, CertRefusal> {
    let what = "tlog entry";
    let int = |i: &cosign::Int| i.value().ok_or_else(|| malformed(what, "not an integer"));
    let proof = entry
        .inclusion_proof
        .as_ref()
        .map(|proof| {
            if proof.hashes.len() > MAX_PROOF_HASHES {
                return Err(malformed(
                    "inclusion proof",
                    format!("more than {MAX_PROOF_HASHES} hashes"),
                ));
            }
            Ok(Proof {
                log_index: int(&proof.log_index)?,
                tree_size: int(&proof.tree_size)?,
                root_hash: base64("inclusion proof", &proof.root_hash)?,
                hashes: proof
                    .hashes
                    .iter()
                    .map(|h| base64("inclusion proof", h))
                    .collect::<Result<_, _>>()?,
                checkpoint: proof.checkpoint.envelope.clone(),
            })
        })
        .transpose()?;
    Ok(Tlog {
        body: base64(what, &entry.canonicalized_body)?,
        log_index: int(&entry.log_index)?,
        log_id: base64(what, &entry.log_id.key_id)?,
        integrated_time: int(&entry.integrated_time)?,
        promise: entry
            .inclusion_promise
            .as_ref()
            .map(|p| base64(what, &p.signed_entry_timestamp))
            .transpose()?,
        proof,
    })
}

/// Lower- or upper-case hex.
pub(crate) fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}
