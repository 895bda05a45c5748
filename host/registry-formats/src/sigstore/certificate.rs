//! X.509 certificates as signature verification needs them: their keys
//! (public_key.rs), validity, the code-signing usage, whether they
//! have a CA's powers, the SAN subjects and Fulcio's OIDC issuer. Whether
//! one issued another is for the path validator (trust.rs).

use der::asn1::Utf8StringRef;
use der::{Decode as _, Encode as _};
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{BasicConstraints, ExtendedKeyUsage, KeyUsage, SubjectAltName};
use x509_cert::spki::ObjectIdentifier;

use super::{CertRefusal, San, time};
use crate::cosign::MAX_SIGNATURE_BYTES;
use crate::public_key::PublicKey;

const SUBJECT_ALT_NAME: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.17");
const BASIC_CONSTRAINTS: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.19");
const KEY_USAGE: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.15");
const EXTENDED_KEY_USAGE: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.37");
const CODE_SIGNING: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.3");
/// Fulcio's OIDC issuer, a DER UTF8String.
const FULCIO_ISSUER_V2: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.57264.1.8");
/// Fulcio's deprecated OIDC issuer, the raw string.
const FULCIO_ISSUER_V1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.57264.1.1");

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
        // empty once its line ends are cut, so
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
