//! The trust root: certificate authorities (roots, the intermediates they
//! vouch for, when each was trusted) and transparency logs (key, log ID,
//! when trusted), from a Sigstore `trusted_root.json` or a
//! ClusterImagePolicy's PEM data.

use base64::Engine as _;
use serde::Deserialize;
use sha2::{Digest as _, Sha256};

use super::certificate::{Certificate, PublicKey};
use super::{CertRefusal, MAX_CERTIFICATES, time};

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
    /// signature's `presented` intermediates (CAs only), to an anchor of an
    /// authority trusted `at`, every certificate on the path valid `at`.
    /// The path is built greedily (the first issuer found at each step), so
    /// hostile chains cost at most [`MAX_CERTIFICATES`] steps.
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
        let mut reasons = Vec::new();
        'authorities: for (i, authority) in self.authorities.iter().enumerate() {
            if !authority.valid.contains(at) {
                reasons.push(format!(
                    "authority {} was not trusted at {}",
                    i + 1,
                    time::display(at)
                ));
                continue;
            }
            let mut current = leaf;
            for _ in 0..=MAX_CERTIFICATES {
                if let Some(root) = first_issuer(&authority.roots, current)? {
                    for cert in [leaf, root] {
                        cert.require_valid_at(at)?;
                    }
                    return Ok(());
                }
                let candidates = authority.intermediates.iter().chain(presented);
                let mut next = None;
                for candidate in candidates {
                    if candidate != current && candidate.is_ca()? && candidate.issued(current)? {
                        next = Some(candidate);
                        break;
                    }
                }
                let Some(next) = next else {
                    reasons.push(format!(
                        "no issuer of {} in authority {}",
                        current.describe(),
                        i + 1
                    ));
                    continue 'authorities;
                };
                next.require_valid_at(at)?;
                current = next;
            }
            reasons.push(format!(
                "a path longer than {MAX_CERTIFICATES} certificates"
            ));
        }
        Err(foreign(reasons.join("; ")))
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

/// The first of `anchors` that issued `cert`.
fn first_issuer<'a>(
    anchors: &'a [Certificate],
    cert: &Certificate,
) -> Result<Option<&'a Certificate>, CertRefusal> {
    for anchor in anchors {
        if anchor.issued(cert)? {
            return Ok(Some(anchor));
        }
    }
    Ok(None)
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
