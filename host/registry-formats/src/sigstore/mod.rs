//! Certificate-based cosign signatures (ClusterImagePolicy `PKI`,
//! `FulcioCAWithRekor`, a Sigstore `trusted_root.json`), verified offline:
//! [`TrustRoot`] is what a certificate must chain to and which logs are
//! believed, [`verify_certificate`] checks one signature against it and gives
//! the [`Signer`] or a [`CertRefusal`] naming what failed, and
//! [`Identity::matches`] checks a policy's subject and issuer. Pure and
//! bounded, so hostile inputs are unit tested and fuzzed. What is checked,
//! step by step: docs/dev/verification.md.

pub(crate) mod certificate;
mod evidence;
mod identity;
mod rekor;
mod time;
mod trust;

pub use identity::{
    Identity, IdentityMismatch, IssuerMatch, MAX_PATTERN_BYTES, Pattern, PatternError, SubjectMatch,
};
pub use trust::{MAX_TRUST_ROOT_BYTES, TrustRoot, TrustRootError};

use crate::cosign::{Signature, Signing};
pub use crate::refusal::CertRefusal;

/// The most certificates a signature's chain or a trust root's PEM may
/// hold; real chains are two or three.
pub const MAX_CERTIFICATES: usize = 8;

/// Whether a transparency log entry must vouch for a signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogRequirement {
    /// A Rekor entry from a log in the trust root must vouch for the
    /// signature and give its time (`FulcioCAWithRekor`, a trusted root).
    Required,
    /// No log entry is needed (a `PKI` policy: cosign signs with
    /// `--tlog-upload=false`). Where the trust root lists logs, an entry
    /// is still checked and gives the signing time; otherwise the
    /// certificates must be valid at `now` (Unix seconds), the only time
    /// there is.
    Optional { now: u64 },
}

/// A verified log entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// The entry's index in the log.
    pub index: u64,
    /// The log's ID (SHA-256 of its public key), hex.
    pub log_id: String,
}

/// A subject alternative name of a signing certificate, its kind kept: an
/// email identity is met by an email SAN only, never by a URI or DNS name
/// that reads the same (a URI SAN `ci@example.com` is no email).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum San {
    Email(String),
    Uri(String),
    Dns(String),
}

impl San {
    /// The name as the certificate writes it.
    pub fn value(&self) -> &str {
        match self {
            San::Email(name) | San::Uri(name) | San::Dns(name) => name,
        }
    }
}

impl std::fmt::Display for San {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.value())
    }
}

/// A SAN is written as its name (`guests verify` lists them).
impl serde::Serialize for San {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.value())
    }
}

/// Who signed a module and when, as verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signer {
    /// The leaf certificate's subject alternative names: emails, URIs and
    /// DNS names, in certificate order, each with its kind.
    pub subjects: Vec<San>,
    /// The Fulcio OIDC issuer extension (1.3.6.1.4.1.57264.1.8, else the
    /// deprecated 1.3.6.1.4.1.57264.1.1), if the certificate has one.
    pub issuer: Option<String>,
    /// The signing time, Unix seconds.
    pub signed_at: u64,
    /// The log entry that vouched for the time, if one did.
    pub log: Option<LogEntry>,
    /// The leaf's key and the bytes it signed: what the signature counts
    /// as toward a quorum.
    pub signing: Signing,
}

/// Verifies one certificate-based `signature` of `manifest_digest`
/// against `trust`: see the module doc for what is checked.
pub fn verify_certificate(
    signature: &Signature,
    trust: &TrustRoot,
    manifest_digest: &str,
    log: LogRequirement,
) -> Result<Signer, CertRefusal> {
    let evidence = evidence::Evidence::read(signature, manifest_digest)?;
    let leaf = certificate::Certificate::from_der(&evidence.certificate)?;
    let (signed_at, entry) = match (&evidence.tlog, log) {
        (Some(tlog), _) if trust.knows_logs() || log == LogRequirement::Required => {
            let entry = rekor::verify_entry(tlog, trust, &evidence)?;
            (entry.integrated_time, Some(entry.entry))
        }
        (_, LogRequirement::Optional { now }) => (now, None),
        (_, LogRequirement::Required) => return Err(CertRefusal::NoLogEntry),
    };
    let intermediates = evidence
        .chain
        .iter()
        .map(|der| certificate::Certificate::from_der(der))
        .collect::<Result<Vec<_>, _>>()?;
    leaf.require_code_signing()?;
    leaf.require_not_ca()?;
    trust.verify_chain(&leaf, &intermediates, signed_at)?;
    let verified = match &evidence.signed {
        evidence::Signed::Payload(message) | evidence::Signed::Dsse { pae: message, .. } => {
            leaf.key.verifies(message, &evidence.signature)
        }
        evidence::Signed::Digest(digest) => leaf
            .key
            .verifies_prehash(digest, &evidence.signature)
            .ok_or_else(|| {
                CertRefusal::Unsupported("RSA message signature (cosign signs with DSSE)".into())
            })?,
    };
    if !verified {
        return Err(CertRefusal::BadSignature);
    }
    Ok(Signer {
        subjects: leaf.subjects()?,
        issuer: leaf.oidc_issuer()?,
        signed_at,
        log: entry,
        signing: Signing {
            signer: leaf.key.fingerprint(),
            message: trust::hex(&evidence.signed.sha256()),
        },
    })
}
