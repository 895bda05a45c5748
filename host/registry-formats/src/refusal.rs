//! Why a certificate-based signature, or a key it names, is refused: one
//! error shared by the key code (public_key.rs), cosign's key-based
//! verification and the certificate checks (sigstore/), so none of them
//! depends on another for it.

/// Why a certificate-based signature is refused. Each message names the
/// requirement that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CertRefusal {
    #[error("the signature carries no certificate (a key-based signature)")]
    NoCertificate,
    #[error("malformed {what}: {why}")]
    Malformed { what: &'static str, why: String },
    #[error(
        "unsupported {0}; ECDSA P-256 or P-384 and RSA of 2048 to 8192 bits (PKCS#1 v1.5) are verified"
    )]
    Unsupported(String),
    #[error("the certificate for {subject} does not chain to a trusted root: {why}")]
    ForeignCa { subject: String, why: String },
    #[error(
        "the certificate {subject} is valid from {not_before} to {not_after}, not at the signing time {signed_at}"
    )]
    NotValidAtSigningTime {
        subject: String,
        not_before: String,
        not_after: String,
        signed_at: String,
    },
    #[error(
        "the certificate for {0} is not a code-signing certificate (no code-signing extended key usage)"
    )]
    NotCodeSigning(String),
    #[error(
        "the certificate for {0} is a CA's (basic constraints CA:true or key usage keyCertSign), not a signer's"
    )]
    CaAsSigner(String),
    /// An attestation (`cosign attest`) offered as a signature; the
    /// message names its predicate type.
    #[error("{0}")]
    NotSignature(String),
    #[error("the signature names {signed}, not the manifest pulled, {expected}")]
    DigestMismatch { signed: String, expected: String },
    #[error("the signature does not verify under the certificate's key")]
    BadSignature,
    #[error("no transparency log entry; the policy requires one")]
    NoLogEntry,
    #[error("the log entry has no inclusion promise (signed entry timestamp), so no signed time")]
    NoInclusionPromise,
    #[error("the log entry is from log {0}, which the trust root does not list")]
    UnknownLog(String),
    #[error("log {log_id} was not trusted at {at}")]
    LogNotValidAt { log_id: String, at: String },
    #[error("the signed entry timestamp does not verify under log {0}'s key")]
    BadInclusionPromise(String),
    #[error("the inclusion proof does not hold: {0}")]
    BadInclusionProof(String),
    #[error("the log entry records another signature: {0}")]
    EntryMismatch(&'static str),
}
