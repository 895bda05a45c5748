//! The trust root: certificate authorities (roots, the intermediates they
//! vouch for, when each was trusted) and transparency logs (key, log ID,
//! when trusted), from a Sigstore `trusted_root.json` or a
//! ClusterImagePolicy's PEM data.

use std::time::Duration;

use base64::Engine as _;
use rustls_pki_types::{CertificateDer, SignatureVerificationAlgorithm, UnixTime};
use serde::Deserialize;
use sha2::{Digest as _, Sha256};
use webpki::{EndEntityCert, KeyUsage, anchor_from_trusted_cert};

use super::certificate::Certificate;
use super::{CertRefusal, MAX_CERTIFICATES, time};
use crate::public_key::PublicKey;

/// The largest `trusted_root.json` read; Sigstore's public one is about
/// 8 KiB.
pub const MAX_TRUST_ROOT_BYTES: usize = 256 << 10;
/// The most certificate authorities or logs a trust root may list.
const MAX_ENTRIES: usize = 32;

/// Why trust material cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TrustRootError {
    #[error("{0} bytes is more than a trust root's {MAX_TRUST_ROOT_BYTES}")]
    Size(usize),
    #[error("not a Sigstore trusted_root.json: {0}")]
    Json(serde_json::Error),
    #[error("a trusted root of media type {0:?}")]
    MediaType(String),
    #[error("more than {MAX_ENTRIES} {0}")]
    TooMany(&'static str),
    #[error("{0} is not base64")]
    Base64(String),
    #[error("{0} is not an RFC 3339 UTC time")]
    Time(String),
    #[error("{what}: {source}")]
    Material { what: String, source: CertRefusal },
    #[error("no certificate authority: nothing could be trusted")]
    NoAuthority,
}

/// When a CA or log was trusted, Unix seconds; no end is still trusted.
#[derive(Debug, Clone, Copy)]
struct Window {
    start: u64,
    end: Option<u64>,
}

impl Window {
    const ALWAYS: Window = Window {
        start: 0,
        end: None,
    };

    fn contains(self, at: u64) -> bool {
        self.start <= at && self.end.is_none_or(|end| at <= end)
    }
}

/// One certificate authority: anchors and the intermediates it vouches for.
#[derive(Debug, Clone)]
struct Authority {
    roots: Vec<Certificate>,
    intermediates: Vec<Certificate>,
    valid: Window,
}

/// A transparency log the trust root believes.
#[derive(Debug, Clone)]
pub(crate) struct Log {
    pub(crate) id: Vec<u8>,
    /// The key, or why it cannot be used (a log with an Ed25519 key in a
    /// trusted root refuses only the entries it vouches for).
    key: Result<PublicKey, CertRefusal>,
    valid: Window,
    /// The origin its checkpoints name: its `baseUrl` without the scheme
    /// (`rekor.sigstore.dev`); unknown for a `FulcioCAWithRekor` policy,
    /// which gives only the key.
    pub(crate) origin: Option<String>,
}

impl Log {
    pub(crate) fn hex_id(&self) -> String {
        hex(&self.id)
    }

    /// The key, refused unless the log was trusted `at`.
    pub(crate) fn key_at(&self, at: u64) -> Result<&PublicKey, CertRefusal> {
        if !self.valid.contains(at) {
            return Err(CertRefusal::LogNotValidAt {
                log_id: self.hex_id(),
                at: time::display(at),
            });
        }
        self.key.as_ref().map_err(Clone::clone)
    }
}

/// What a signing certificate must chain to, and the logs believed.
#[derive(Debug, Clone)]
pub struct TrustRoot {
    authorities: Vec<Authority>,
    logs: Vec<Log>,
}

impl TrustRoot {
    /// A Sigstore `trusted_root.json` (protobuf-specs JSON): its
    /// `certificateAuthorities` (a chain each: self-signed certificates are
    /// anchors, the others intermediates) and `tlogs`, each with its
    /// `validFor` window. CT logs and timestamp authorities are not used.
    pub fn from_trusted_root_json(json: &[u8]) -> Result<TrustRoot, TrustRootError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Root {
            media_type: String,
            #[serde(default)]
            tlogs: Vec<Tlog>,
            #[serde(default)]
            certificate_authorities: Vec<Ca>,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Tlog {
            #[serde(default)]
            base_url: Option<String>,
            public_key: Key,
            log_id: LogId,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Key {
            raw_bytes: String,
            valid_for: Option<ValidFor>,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct LogId {
            key_id: String,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Ca {
            cert_chain: Chain,
            valid_for: Option<ValidFor>,
        }
        #[derive(Deserialize)]
        struct Chain {
            certificates: Vec<Raw>,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Raw {
            raw_bytes: String,
        }
        #[derive(Deserialize)]
        struct ValidFor {
            start: Option<String>,
            end: Option<String>,
        }
        let window = |valid: Option<ValidFor>| -> Result<Window, TrustRootError> {
            let at = |t: Option<String>| {
                t.map(|t| time::parse_rfc3339(&t).ok_or(TrustRootError::Time(t)))
                    .transpose()
            };
            let valid = valid.unwrap_or(ValidFor {
                start: None,
                end: None,
            });
            Ok(Window {
                start: at(valid.start)?.unwrap_or(0),
                end: at(valid.end)?,
            })
        };
        let decode = |what: String, text: &str| {
            base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|_| TrustRootError::Base64(what))
        };
        if json.len() > MAX_TRUST_ROOT_BYTES {
            return Err(TrustRootError::Size(json.len()));
        }
        let root: Root = serde_json::from_slice(json).map_err(TrustRootError::Json)?;
        if !root
            .media_type
            .starts_with("application/vnd.dev.sigstore.trustedroot")
        {
            return Err(TrustRootError::MediaType(root.media_type));
        }
        if root.certificate_authorities.len() > MAX_ENTRIES {
            return Err(TrustRootError::TooMany("certificate authorities"));
        }
        if root.tlogs.len() > MAX_ENTRIES {
            return Err(TrustRootError::TooMany("transparency logs"));
        }
        let mut authorities = Vec::new();
        for (i, ca) in root.certificate_authorities.into_iter().enumerate() {
            if ca.cert_chain.certificates.len() > MAX_CERTIFICATES {
                return Err(TrustRootError::TooMany("certificates in a chain"));
            }
            let mut certs = Vec::new();
            for (j, raw) in ca.cert_chain.certificates.iter().enumerate() {
                let what = format!("certificateAuthorities[{i}].certChain.certificates[{j}]");
                let der = decode(what.clone(), &raw.raw_bytes)?;
                certs.push(
                    Certificate::from_der(&der)
                        .map_err(|source| TrustRootError::Material { what, source })?,
                );
            }
            let (roots, intermediates) = certs.into_iter().partition(Certificate::is_self_issued);
            authorities.push(Authority {
                roots,
                intermediates,
                valid: window(ca.valid_for)?,
            });
        }
        let mut logs = Vec::new();
        for (i, tlog) in root.tlogs.into_iter().enumerate() {
            let der = decode(format!("tlogs[{i}].publicKey"), &tlog.public_key.raw_bytes)?;
            logs.push(Log {
                id: decode(format!("tlogs[{i}].logId"), &tlog.log_id.key_id)?,
                key: PublicKey::from_spki_der(&der),
                valid: window(tlog.public_key.valid_for)?,
                origin: tlog.base_url.as_deref().map(origin_of),
            });
        }
        TrustRoot { authorities, logs }.checked()
    }

    /// A ClusterImagePolicy `PKI`: `caRootsData` (PEM anchors) and
    /// `caIntermediatesData` (PEM, may be empty); no log.
    pub fn from_pki(
        roots_pem: &[u8],
        intermediates_pem: &[u8],
    ) -> Result<TrustRoot, TrustRootError> {
        let intermediates = if intermediates_pem.iter().all(u8::is_ascii_whitespace) {
            Vec::new()
        } else {
            pem_certificates("caIntermediatesData", intermediates_pem)?
        };
        TrustRoot {
            authorities: vec![Authority {
                roots: pem_certificates("caRootsData", roots_pem)?,
                intermediates,
                valid: Window::ALWAYS,
            }],
            logs: Vec::new(),
        }
        .checked()
    }

    /// A ClusterImagePolicy `FulcioCAWithRekor`: `fulcioCAData` (PEM, every
    /// certificate an anchor, as the cluster's verifier pools them) and
    /// `rekorKeyData` (the log's PEM public key; its log ID is the SHA-256
    /// of the key's DER).
    pub fn from_fulcio(ca_pem: &[u8], rekor_key_pem: &[u8]) -> Result<TrustRoot, TrustRootError> {
        let material = |source| TrustRootError::Material {
            what: "rekorKeyData".into(),
            source,
        };
        let text = std::str::from_utf8(rekor_key_pem).map_err(|_| {
            material(CertRefusal::Malformed {
                what: "PEM public key",
                why: "not text".into(),
            })
        })?;
        if rekor_key_pem.len() > crate::cosign::MAX_SIGNATURE_BYTES {
            return Err(TrustRootError::Size(rekor_key_pem.len()));
        }
        let (label, der) = der::pem::decode_vec(text.trim().as_bytes()).map_err(|e| {
            material(CertRefusal::Malformed {
                what: "PEM public key",
                why: e.to_string(),
            })
        })?;
        if label != "PUBLIC KEY" {
            return Err(material(CertRefusal::Malformed {
                what: "PEM public key",
                why: format!("a {label} block, not PUBLIC KEY"),
            }));
        }
        let key = PublicKey::from_spki_der(&der).map_err(material)?;
        TrustRoot {
            authorities: vec![Authority {
                roots: pem_certificates("fulcioCAData", ca_pem)?,
                intermediates: Vec::new(),
                valid: Window::ALWAYS,
            }],
            logs: vec![Log {
                id: Sha256::digest(&der).to_vec(),
                key: Ok(key),
                valid: Window::ALWAYS,
                origin: None,
            }],
        }
        .checked()
    }

    fn checked(self) -> Result<TrustRoot, TrustRootError> {
        if self.authorities.iter().all(|a| a.roots.is_empty()) {
            return Err(TrustRootError::NoAuthority);
        }
        Ok(self)
    }

    /// Whether any transparency log is believed.
    pub fn knows_logs(&self) -> bool {
        !self.logs.is_empty()
    }

    /// The log with this ID.
    pub(crate) fn log(&self, id: &[u8]) -> Option<&Log> {
        self.logs.iter().find(|log| log.id == id)
    }

    /// Refused unless `leaf` chains, through the authority's or the
    /// signature's `presented` intermediates, to a root of an authority
    /// trusted `at`, every certificate on the path valid `at`.
    ///
    /// The path is built and checked by rustls-webpki, as Go's x509 (which
    /// cosign and the cluster's verifier use) checks one: each issuer a CA
    /// (basic constraints), within its path length, its name constraints
    /// and its extended key usage (an intermediate that lists usages must
    /// list code signing), no unknown critical extension, every signature
    /// ECDSA P-256 or P-384 with SHA-256 or SHA-384; path building is
    /// bounded by webpki's budget. Where webpki is stricter than Go it
    /// refuses: a CA constraining email or URI names refuses every leaf
    /// with an email or URI SAN (webpki does not process those
    /// constraints), and `anyExtendedKeyUsage` does not stand for code
    /// signing.
    pub(crate) fn verify_chain(
        &self,
        leaf: &Certificate,
        presented: &[Certificate],
        at: u64,
    ) -> Result<(), CertRefusal> {
        let foreign = |why: String| CertRefusal::ForeignCa {
            subject: leaf.describe(),
            why,
        };
        if presented.len() > MAX_CERTIFICATES {
            return Err(foreign(format!(
                "more than {MAX_CERTIFICATES} chain certificates"
            )));
        }
        leaf.require_valid_at(at)?;
        let leaf_der = CertificateDer::from(leaf.der.as_slice());
        let end_entity = EndEntityCert::try_from(&leaf_der).map_err(|e| foreign(path_error(&e)))?;
        let time = UnixTime::since_unix_epoch(Duration::from_secs(at));
        let mut reasons = Vec::new();
        for (i, authority) in self.authorities.iter().enumerate() {
            let n = i + 1;
            if !authority.valid.contains(at) {
                reasons.push(format!(
                    "authority {n} was not trusted at {}",
                    time::display(at)
                ));
                continue;
            }
            // A root is an anchor only while it is valid itself.
            let (roots, expired): (Vec<&Certificate>, Vec<&Certificate>) = authority
                .roots
                .iter()
                .partition(|root| root.require_valid_at(at).is_ok());
            reasons.extend(expired.iter().map(|root| {
                format!(
                    "authority {n}'s root {} is not valid at {}",
                    root.describe(),
                    time::display(at)
                )
            }));
            let roots: Vec<CertificateDer<'_>> = roots
                .iter()
                .map(|root| CertificateDer::from(root.der.as_slice()))
                .collect();
            let anchors = roots
                .iter()
                .map(anchor_from_trusted_cert)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| foreign(format!("authority {n}'s root: {}", path_error(&e))))?;
            let intermediates: Vec<CertificateDer<'_>> = authority
                .intermediates
                .iter()
                .chain(presented)
                .map(|c| CertificateDer::from(c.der.as_slice()))
                .collect();
            match end_entity.verify_for_usage(
                ALGORITHMS,
                &anchors,
                &intermediates,
                time,
                KeyUsage::required_if_present(CODE_SIGNING_EKU),
                None,
                None,
            ) {
                Ok(_) => return Ok(()),
                Err(e) => reasons.push(format!("authority {n}: {}", path_error(&e))),
            }
        }
        Err(foreign(reasons.join("; ")))
    }
}

/// The signature algorithms a chain may use: ECDSA on P-256 or P-384 with
/// SHA-256 or SHA-384, what Fulcio and cosign's PKIs issue, and RSA PKCS#1
/// v1.5 with a key of 2048 to 8192 bits, what private PKIs often issue.
const ALGORITHMS: &[&dyn SignatureVerificationAlgorithm] = &[
    webpki::ring::ECDSA_P256_SHA256,
    webpki::ring::ECDSA_P256_SHA384,
    webpki::ring::ECDSA_P384_SHA256,
    webpki::ring::ECDSA_P384_SHA384,
    webpki::ring::RSA_PKCS1_2048_8192_SHA256,
    webpki::ring::RSA_PKCS1_2048_8192_SHA384,
    webpki::ring::RSA_PKCS1_2048_8192_SHA512,
];

/// The code-signing key purpose (1.3.6.1.5.5.7.3.3), its DER value.
const CODE_SIGNING_EKU: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x03];

/// Why webpki found no path, as a refusal says it.
fn path_error(e: &webpki::Error) -> String {
    use webpki::Error;
    match e {
        Error::UnknownIssuer => "no path to its roots (no issuer found)".into(),
        Error::PathLenConstraintViolated => {
            "a CA on the path allows fewer CAs below it (path length constraint)".into()
        }
        Error::NameConstraintViolation => {
            "a name is outside a CA's name constraints (email and URI constraints refuse every such name)"
                .into()
        }
        Error::RequiredEkuNotFoundContext(_) => {
            "a CA on the path is not for code signing (its extended key usage does not list it)"
                .into()
        }
        Error::UnsupportedCriticalExtension => {
            "a certificate on the path has a critical extension that is not understood".into()
        }
        Error::CertExpired { .. } | Error::CertNotValidYet { .. } => {
            "a CA on the path is not valid at the signing time".into()
        }
        Error::CaUsedAsEndEntity => "the leaf is a CA's certificate".into(),
        Error::EndEntityUsedAsCa => "a certificate on the path is no CA's".into(),
        other => other.to_string(),
    }
}

/// The checkpoint origin of a log at `base_url`: the URL without its
/// scheme and trailing slash, as Rekor names its checkpoints.
fn origin_of(base_url: &str) -> String {
    let rest = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest);
    rest.trim_end_matches('/').to_string()
}

fn pem_certificates(what: &str, pem: &[u8]) -> Result<Vec<Certificate>, TrustRootError> {
    Certificate::from_pem_chain(pem).map_err(|source| TrustRootError::Material {
        what: what.into(),
        source,
    })
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
