//! X.509 certificates as signature verification needs them: their keys
//! (ECDSA P-256 or P-384), validity, the code-signing usage, whether they
//! have a CA's powers, the SAN subjects and Fulcio's OIDC issuer. Whether
//! one issued another is for the path validator (trust.rs).

use der::asn1::Utf8StringRef;
use der::{Decode as _, Encode as _};
use p256::ecdsa::signature::hazmat::PrehashVerifier as _;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{BasicConstraints, ExtendedKeyUsage, KeyUsage, SubjectAltName};
use x509_cert::spki::{ObjectIdentifier, SubjectPublicKeyInfoOwned};

use super::{CertRefusal, San, time};
use crate::cosign::MAX_SIGNATURE_BYTES;

const ID_EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const SECP256R1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const SECP384R1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");
const SUBJECT_ALT_NAME: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.17");
const BASIC_CONSTRAINTS: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.19");
const KEY_USAGE: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.15");
const EXTENDED_KEY_USAGE: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.37");
const CODE_SIGNING: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.3");
/// Fulcio's OIDC issuer, a DER UTF8String.
const FULCIO_ISSUER_V2: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.57264.1.8");
/// Fulcio's deprecated OIDC issuer, the raw string.
const FULCIO_ISSUER_V1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.57264.1.1");

/// An ECDSA public key: a certificate's, or a transparency log's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PublicKey {
    P256(p256::ecdsa::VerifyingKey),
    P384(p384::ecdsa::VerifyingKey),
}

impl PublicKey {
    pub(crate) fn from_spki(spki: &SubjectPublicKeyInfoOwned) -> Result<PublicKey, CertRefusal> {
        let unsupported =
            || CertRefusal::Unsupported(format!("public key algorithm {}", spki.algorithm.oid));
        if spki.algorithm.oid != ID_EC_PUBLIC_KEY {
            return Err(unsupported());
        }
        let curve = spki
            .algorithm
            .parameters
            .as_ref()
            .and_then(|p| p.decode_as::<ObjectIdentifier>().ok())
            .ok_or_else(unsupported)?;
        let point = spki.subject_public_key.as_bytes().ok_or_else(unsupported)?;
        let malformed = |_| CertRefusal::Malformed {
            what: "public key",
            why: "not a point on its curve".into(),
        };
        match curve {
            SECP256R1 => p256::ecdsa::VerifyingKey::from_sec1_bytes(point)
                .map(PublicKey::P256)
                .map_err(malformed),
            SECP384R1 => p384::ecdsa::VerifyingKey::from_sec1_bytes(point)
                .map(PublicKey::P384)
                .map_err(malformed),
            other => Err(CertRefusal::Unsupported(format!("curve {other}"))),
        }
    }

    /// The key's fingerprint, as [`crate::cosign::Key::fingerprint`]
    /// writes a key's: a signature under a certificate and under a
    /// configured key are one signer's when their points are one.
    pub(crate) fn fingerprint(&self) -> String {
        match self {
            PublicKey::P256(key) => {
                crate::cosign::key_fingerprint(key.to_encoded_point(true).as_bytes())
            }
            PublicKey::P384(key) => {
                crate::cosign::key_fingerprint(key.to_encoded_point(true).as_bytes())
            }
        }
    }

    /// A DER SubjectPublicKeyInfo.
    pub(crate) fn from_spki_der(der: &[u8]) -> Result<PublicKey, CertRefusal> {
        let spki =
            SubjectPublicKeyInfoOwned::from_der(der).map_err(|e| CertRefusal::Malformed {
                what: "public key",
                why: e.to_string(),
            })?;
        PublicKey::from_spki(&spki)
    }

    /// Whether `signature` (ASN.1 DER, or the fixed-size form; either S)
    /// is this key's over `digest`.
    pub(crate) fn verifies_prehash(&self, digest: &[u8], signature: &[u8]) -> bool {
        match self {
            PublicKey::P256(key) => p256::ecdsa::DerSignature::from_bytes(signature)
                .ok()
                .and_then(|der| p256::ecdsa::Signature::try_from(der).ok())
                .or_else(|| p256::ecdsa::Signature::from_slice(signature).ok())
                .map(|s| s.normalize_s().unwrap_or(s))
                .is_some_and(|s| key.verify_prehash(digest, &s).is_ok()),
            PublicKey::P384(key) => p384::ecdsa::DerSignature::from_bytes(signature)
                .ok()
                .and_then(|der| p384::ecdsa::Signature::try_from(der).ok())
                .or_else(|| p384::ecdsa::Signature::from_slice(signature).ok())
                .map(|s| s.normalize_s().unwrap_or(s))
                .is_some_and(|s| key.verify_prehash(digest, &s).is_ok()),
        }
    }
}

/// A parsed certificate with its key.
#[derive(Debug, Clone)]
pub(crate) struct Certificate {
    cert: x509_cert::Certificate,
    pub(crate) der: Vec<u8>,
    pub(crate) key: PublicKey,
}

impl PartialEq for Certificate {
    fn eq(&self, other: &Self) -> bool {
        self.der == other.der
    }
}

impl Certificate {
    pub(crate) fn from_der(der: &[u8]) -> Result<Certificate, CertRefusal> {
        let malformed = |why: String| CertRefusal::Malformed {
            what: "certificate",
            why,
        };
        if der.len() > MAX_SIGNATURE_BYTES {
            return Err(malformed(format!("{} bytes", der.len())));
        }
        let cert = x509_cert::Certificate::from_der(der).map_err(|e| malformed(e.to_string()))?;
        let key = PublicKey::from_spki(&cert.tbs_certificate.subject_public_key_info)?;
        Ok(Certificate {
            cert,
            der: der.to_vec(),
            key,
        })
    }

    /// Certificates from PEM text (`CERTIFICATE` blocks), at most
    /// [`super::MAX_CERTIFICATES`].
    pub(crate) fn from_pem_chain(pem: &[u8]) -> Result<Vec<Certificate>, CertRefusal> {
        let malformed = |why: String| CertRefusal::Malformed {
            what: "PEM certificates",
            why,
        };
        if pem.len() > MAX_SIGNATURE_BYTES {
            return Err(malformed(format!("{} bytes", pem.len())));
        }
        if pem
            .windows(b"-----BEGIN".len())
            .filter(|w| *w == b"-----BEGIN")
            .count()
            > super::MAX_CERTIFICATES
        {
            return Err(malformed(format!(
                "more than {} certificates",
                super::MAX_CERTIFICATES
            )));
        }
        // x509-cert 0.2.5's load_pem_chain underflows on input that is
        // empty once its line ends are cut (found by the fuzz target), so
        // it only ever sees text that ends in something else.
        let pem = pem.trim_ascii();
        if pem.is_empty() {
            return Err(malformed("no CERTIFICATE block".into()));
        }
        let certs =
            x509_cert::Certificate::load_pem_chain(pem).map_err(|e| malformed(e.to_string()))?;
        certs
            .iter()
            .map(|c| {
                c.to_der()
                    .map_err(|e| malformed(e.to_string()))
                    .and_then(|der| Certificate::from_der(&der))
            })
            .collect()
    }

    /// How refusals name the certificate: its subject, else its SANs.
    pub(crate) fn describe(&self) -> String {
        let subject = self.cert.tbs_certificate.subject.to_string();
        if !subject.is_empty() {
            return subject;
        }
        match self.subjects() {
            Ok(sans) if !sans.is_empty() => {
                sans.iter().map(San::value).collect::<Vec<_>>().join(", ")
            }
            _ => format!("serial {}", self.cert.tbs_certificate.serial_number),
        }
    }

    pub(crate) fn is_self_issued(&self) -> bool {
        self.cert.tbs_certificate.issuer == self.cert.tbs_certificate.subject
    }

    /// Whether the certificate is a CA's (basic constraints `cA`).
    pub(crate) fn is_ca(&self) -> Result<bool, CertRefusal> {
        Ok(self
            .extension(BASIC_CONSTRAINTS)?
            .map(BasicConstraints::from_der)
            .transpose()
            .map_err(|e| self.malformed_extension("basic constraints", e))?
            .is_some_and(|b| b.ca))
    }

    /// Refused unless valid at `at` (Unix seconds).
    pub(crate) fn require_valid_at(&self, at: u64) -> Result<(), CertRefusal> {
        let validity = &self.cert.tbs_certificate.validity;
        let (not_before, not_after) = (
            validity.not_before.to_unix_duration().as_secs(),
            validity.not_after.to_unix_duration().as_secs(),
        );
        if (not_before..=not_after).contains(&at) {
            return Ok(());
        }
        Err(CertRefusal::NotValidAtSigningTime {
            subject: self.describe(),
            not_before: time::display(not_before),
            not_after: time::display(not_after),
            signed_at: time::display(at),
        })
    }

    pub(crate) fn require_code_signing(&self) -> Result<(), CertRefusal> {
        let usages = self
            .extension(EXTENDED_KEY_USAGE)?
            .map(ExtendedKeyUsage::from_der)
            .transpose()
            .map_err(|e| self.malformed_extension("extended key usage", e))?;
        if usages.is_some_and(|u| u.0.contains(&CODE_SIGNING)) {
            Ok(())
        } else {
            Err(CertRefusal::NotCodeSigning(self.describe()))
        }
    }

    /// Refused where the certificate could issue certificates (basic
    /// constraints `cA`, or the keyCertSign key usage): a CA's key signs
    /// certificates, and a leaf that is one could vouch for any signer.
    pub(crate) fn require_not_ca(&self) -> Result<(), CertRefusal> {
        let cert_sign = self
            .extension(KEY_USAGE)?
            .map(KeyUsage::from_der)
            .transpose()
            .map_err(|e| self.malformed_extension("key usage", e))?
            .is_some_and(|usage| usage.key_cert_sign());
        if cert_sign || self.is_ca()? {
            return Err(CertRefusal::CaAsSigner(self.describe()));
        }
        Ok(())
    }

    /// Whether `signature` is this certificate's key's over `digest`.
    pub(crate) fn verifies_prehash(&self, digest: &[u8], signature: &[u8]) -> bool {
        self.key.verifies_prehash(digest, signature)
    }

    /// The email, URI and DNS subject alternative names, each with its kind.
    pub(crate) fn subjects(&self) -> Result<Vec<San>, CertRefusal> {
        let Some(value) = self.extension(SUBJECT_ALT_NAME)? else {
            return Ok(Vec::new());
        };
        let names = SubjectAltName::from_der(value)
            .map_err(|e| self.malformed_extension("subject alternative name", e))?;
        Ok(names
            .0
            .iter()
            .filter_map(|name| match name {
                GeneralName::Rfc822Name(s) => Some(San::Email(s.to_string())),
                GeneralName::UniformResourceIdentifier(s) => Some(San::Uri(s.to_string())),
                GeneralName::DnsName(s) => Some(San::Dns(s.to_string())),
                _ => None,
            })
            .collect())
    }

    /// Fulcio's OIDC issuer extension: the current one (a DER UTF8String),
    /// else the deprecated one (the bare string).
    pub(crate) fn oidc_issuer(&self) -> Result<Option<String>, CertRefusal> {
        if let Some(value) = self.extension(FULCIO_ISSUER_V2)? {
            let issuer = Utf8StringRef::from_der(value)
                .map_err(|e| self.malformed_extension("OIDC issuer", e))?;
            return Ok(Some(issuer.as_str().to_string()));
        }
        self.extension(FULCIO_ISSUER_V1)?
            .map(|value| {
                String::from_utf8(value.to_vec()).map_err(|e| CertRefusal::Malformed {
                    what: "OIDC issuer extension",
                    why: e.to_string(),
                })
            })
            .transpose()
    }

    /// An extension's value; a certificate naming one twice is malformed.
    fn extension(&self, oid: ObjectIdentifier) -> Result<Option<&[u8]>, CertRefusal> {
        let mut found = self
            .cert
            .tbs_certificate
            .extensions
            .iter()
            .flatten()
            .filter(|e| e.extn_id == oid);
        let first = found.next();
        if found.next().is_some() {
            return Err(CertRefusal::Malformed {
                what: "certificate",
                why: format!("extension {oid} appears twice"),
            });
        }
        Ok(first.map(|e| e.extn_value.as_bytes()))
    }

    fn malformed_extension(&self, what: &str, e: der::Error) -> CertRefusal {
        CertRefusal::Malformed {
            what: "certificate extension",
            why: format!("{what}: {e}"),
        }
    }
}
