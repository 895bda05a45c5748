//! The public keys signatures are verified under: a configured key's, a
//! certificate's or a transparency log's (ECDSA P-256 or P-384, RSA of
//! 2048 to 8192 bits). Apart from the certificate code so that key-based
//! verification (cosign.rs) and certificate-based (sigstore/) share it
//! without depending on each other.

use der::asn1::UintRef;
use der::{Decode as _, Reader as _};
use p256::ecdsa::signature::hazmat::PrehashVerifier as _;
use ring::signature::{RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey};
use sha2::{Digest as _, Sha256};
use x509_cert::spki::{ObjectIdentifier, SubjectPublicKeyInfoOwned};

use crate::refusal::CertRefusal;

const ID_EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const SECP256R1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const SECP384R1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");
const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");
/// The smallest RSA modulus believed, in bits: Go's crypto/rsa refuses
/// smaller keys since Go 1.24, NIST since 2013, and ring's verifier too
/// (`CertRefusal::Unsupported` names the bounds).
const MIN_RSA_BITS: usize = 2048;
/// The largest RSA modulus verified, in bits (ring's bound).
const MAX_RSA_BITS: usize = 8192;

/// A public key cosign verifies: a configured key's, a certificate's, or a
/// transparency log's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PublicKey {
    P256(p256::ecdsa::VerifyingKey),
    P384(p384::ecdsa::VerifyingKey),
    /// The DER `RSAPublicKey` (modulus and exponent) of a key of
    /// [`MIN_RSA_BITS`] to [`MAX_RSA_BITS`] bits. cosign signs with RSA
    /// keys in PKCS#1 v1.5 over SHA-256 (sigstore's default RSA signer,
    /// in both signature forms), and its verifier takes only that.
    Rsa(Vec<u8>),
}

impl PublicKey {
    pub(crate) fn from_spki(spki: &SubjectPublicKeyInfoOwned) -> Result<PublicKey, CertRefusal> {
        let unsupported =
            || CertRefusal::Unsupported(format!("public key algorithm {}", spki.algorithm.oid));
        match spki.algorithm.oid {
            ID_EC_PUBLIC_KEY => {}
            RSA_ENCRYPTION => {
                let der = spki.subject_public_key.as_bytes().ok_or_else(unsupported)?;
                return rsa_key(der);
            }
            // cosign signs with an Ed25519 key in Ed25519ph (over the
            // message's SHA-512), which no verifier in the tree checks.
            ED25519 => {
                return Err(CertRefusal::Unsupported(
                    "Ed25519 key (cosign signs with Ed25519ph, which is not verified)".into(),
                ));
            }
            _ => return Err(unsupported()),
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

    /// The key's fingerprint: the SHA-256 of its compressed point, or of
    /// an RSA key's `RSAPublicKey`, hex. A signature under a certificate
    /// and under a configured key are one signer's when their keys are one.
    pub(crate) fn fingerprint(&self) -> String {
        let digest = match self {
            PublicKey::P256(key) => Sha256::digest(key.to_encoded_point(true).as_bytes()),
            PublicKey::P384(key) => Sha256::digest(key.to_encoded_point(true).as_bytes()),
            PublicKey::Rsa(der) => Sha256::digest(der),
        };
        format!("{digest:x}")
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

    /// Whether `signature` is this key's over `message` (SHA-256).
    pub(crate) fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        match self {
            PublicKey::Rsa(der) => UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, der)
                .verify(message, signature)
                .is_ok(),
            PublicKey::P256(_) | PublicKey::P384(_) => {
                self.verifies_prehash(&Sha256::digest(message), signature) == Some(true)
            }
        }
    }

    /// Whether `signature` (ECDSA: ASN.1 DER, or the fixed-size form;
    /// either S) is this key's over the SHA-256 `digest` of a message not
    /// at hand (a bundle's message signature); `None` for an RSA key, which
    /// ring verifies over the message only.
    pub(crate) fn verifies_prehash(&self, digest: &[u8], signature: &[u8]) -> Option<bool> {
        Some(match self {
            PublicKey::Rsa(_) => return None,
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
        })
    }
}

/// An RSA key from its DER `RSAPublicKey`, refused outside
/// [`MIN_RSA_BITS`]..=[`MAX_RSA_BITS`] bits: a short modulus is factored
/// by whoever wants to sign as its owner.
fn rsa_key(der: &[u8]) -> Result<PublicKey, CertRefusal> {
    let modulus = der::SliceReader::new(der)
        .and_then(|mut reader| {
            let modulus = reader.sequence(|fields| {
                let modulus = UintRef::decode(fields)?;
                UintRef::decode(fields)?;
                Ok(modulus)
            })?;
            reader.finish(modulus)
        })
        .map_err(|e| CertRefusal::Malformed {
            what: "RSA public key",
            why: e.to_string(),
        })?;
    let bytes = modulus.as_bytes();
    let bits = bytes.first().map_or(0, |top| {
        (bytes.len() * 8).saturating_sub(top.leading_zeros() as usize)
    });
    if !(MIN_RSA_BITS..=MAX_RSA_BITS).contains(&bits) {
        return Err(CertRefusal::Unsupported(format!("RSA key of {bits} bits")));
    }
    Ok(PublicKey::Rsa(der.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use der::DecodePem as _;
    use der::Encode as _;
    use p256::pkcs8::EncodePublicKey as _;

    const RSA_PEM: &str = include_str!("../tests/data/rsa/rsa2048.pub.pem");

    fn refusal(spki: &SubjectPublicKeyInfoOwned) -> String {
        match PublicKey::from_spki(spki) {
            Ok(key) => panic!("a key: {key:?}"),
            Err(e) => e.to_string(),
        }
    }

    /// The attack: a key whose algorithm says one type and whose bits are
    /// another's (an EC point labelled RSA, an RSA key labelled P-256).
    #[test]
    fn a_key_of_another_type_than_its_algorithm_is_refused() {
        let rsa = SubjectPublicKeyInfoOwned::from_pem(RSA_PEM).unwrap_or_else(|e| panic!("{e}"));
        let ec_der = p256::ecdsa::SigningKey::from_slice(&[7; 32])
            .unwrap_or_else(|e| panic!("{e}"))
            .verifying_key()
            .to_public_key_der()
            .unwrap_or_else(|e| panic!("{e}"));
        let ec = SubjectPublicKeyInfoOwned::from_der(ec_der.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(PublicKey::from_spki(&rsa), Ok(PublicKey::Rsa(_))));
        assert!(matches!(PublicKey::from_spki(&ec), Ok(PublicKey::P256(_))));

        let mut ec_labelled_rsa = ec.clone();
        ec_labelled_rsa.algorithm = rsa.algorithm.clone();
        let err = refusal(&ec_labelled_rsa);
        assert!(err.starts_with("malformed RSA public key"), "{err}");

        let mut rsa_labelled_ec = rsa;
        rsa_labelled_ec.algorithm = ec.algorithm;
        let err = refusal(&rsa_labelled_ec);
        assert!(err.contains("not a point on its curve"), "{err}");
    }

    /// An RSA key's size is its modulus's, leading zero bytes not counted.
    #[test]
    fn rsa_keys_are_sized_by_their_modulus() {
        let key = |modulus: &[u8]| {
            let mut fields = der::asn1::UintRef::new(modulus)
                .and_then(|n| n.to_der())
                .unwrap_or_else(|e| panic!("{e}"));
            fields.extend([0x02, 0x03, 0x01, 0x00, 0x01]);
            let mut der = vec![0x30, 0x82];
            der.extend(u16::try_from(fields.len()).unwrap_or(0).to_be_bytes());
            der.extend(fields);
            rsa_key(&der).map(|_| ()).map_err(|e| e.to_string())
        };
        let mut modulus = vec![0x80; 256];
        assert_eq!(key(&modulus), Ok(()));
        modulus[0] = 0x7f;
        assert_eq!(
            key(&modulus),
            Err(
                "unsupported RSA key of 2047 bits; ECDSA P-256 or P-384 and RSA of 2048 to \
                 8192 bits (PKCS#1 v1.5) are verified"
                    .into()
            )
        );
        assert!(key(&[0xff; 1025]).is_err_and(|e| e.contains("of 8200 bits")));
        assert!(key(&[]).is_err());
    }
}
