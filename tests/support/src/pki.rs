//! Certificate authorities, signing certificates and a transparency log,
//! made fresh by each test (no key is ever committed), for certificate-based
//! cosign signatures: roots and intermediates ([`Ca`]), code-signing leaves
//! with email/URI SANs and Fulcio's OIDC-issuer extension ([`LeafSpec`],
//! [`Leaf`]), a Rekor-style log ([`Log`]) with signed entry timestamps,
//! RFC 6962 inclusion proofs and signed checkpoints, and the
//! `trusted_root.json` naming them ([`trusted_root_json`]). The log writes
//! Rekor v1's formats; it is made here, not by a Rekor server.
//!
//! ```no_run
//! use mco_test_support::pki::{Ca, LeafSpec, Log, now};
//! let root = Ca::root("mco-e2e root");
//! let ca = root.intermediate("mco-e2e signing");
//! let leaf = ca.leaf(&LeafSpec::email("ci@example.com").issuer("https://issuer.example"));
//! let mut log = Log::new("rekor.e2e");
//! let payload = b"...";
//! let signature = leaf.sign(payload);
//! let entry = log.append(log.hashedrekord(payload, &signature, &leaf.pem()), now());
//! let annotation = entry.cosign_bundle_annotation();
//! ```

use std::str::FromStr as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::signature::hazmat::PrehashSigner as _;
use p256::ecdsa::{DerSignature, SigningKey};
use p256::elliptic_curve::rand_core::{OsRng, RngCore as _};
use p256::pkcs8::{EncodePrivateKey as _, EncodePublicKey as _, LineEnding};
use sha2::{Digest as _, Sha256};
use x509_cert::builder::{Builder as _, CertificateBuilder, Profile};
use x509_cert::der::asn1::{Ia5String, UtcTime, Utf8StringRef};
use x509_cert::der::{Decode as _, Encode, EncodePem as _, Length, Writer};
use x509_cert::ext::AsExtension;
use x509_cert::ext::pkix::constraints::name::GeneralSubtree;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{
    BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages, NameConstraints, SubjectAltName,
};
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::spki::{ObjectIdentifier, SubjectPublicKeyInfoOwned};
use x509_cert::time::{Time, Validity};

/// The current Unix time, seconds.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn fresh_key() -> SigningKey {
    SigningKey::random(&mut OsRng)
}

fn serial() -> SerialNumber {
    let mut bytes = [0u8; 8];
    OsRng.fill_bytes(&mut bytes);
    bytes[0] &= 0x7f;
    bytes[0] |= 0x01;
    SerialNumber::new(&bytes).unwrap_or_else(|e| panic!("serial: {e}"))
}

fn utc(unix: u64) -> Time {
    Time::UtcTime(
        UtcTime::from_unix_duration(Duration::from_secs(unix))
            .unwrap_or_else(|e| panic!("time {unix}: {e}")),
    )
}

fn spki(key: &SigningKey) -> SubjectPublicKeyInfoOwned {
    SubjectPublicKeyInfoOwned::from_key(*key.verifying_key())
        .unwrap_or_else(|e| panic!("public key: {e}"))
}

fn pem(der: &[u8]) -> String {
    x509_cert::Certificate::from_der(der)
        .and_then(|cert| cert.to_pem(LineEnding::LF))
        .unwrap_or_else(|e| panic!("PEM: {e}"))
}

/// A certificate authority: a self-signed root or an intermediate.
pub struct Ca {
    name: Name,
    key: SigningKey,
    /// The CA's certificate, DER.
    pub der: Vec<u8>,
}

impl Ca {
    /// A self-signed root, valid from a day ago for ten years.
    pub fn root(common_name: &str) -> Ca {
        let key = fresh_key();
        let name = Name::from_str(&format!("CN={common_name},O=mco-e2e"))
            .unwrap_or_else(|e| panic!("name: {e}"));
        let validity = Validity {
            not_before: utc(now() - 86_400),
            not_after: utc(now() + 10 * 365 * 86_400),
        };
        let builder = CertificateBuilder::new(
            Profile::Root,
            serial(),
            validity,
            name.clone(),
            spki(&key),
            &key,
        )
        .unwrap_or_else(|e| panic!("root: {e}"));
        let der = built(builder);
        Ca { name, key, der }
    }

    /// An intermediate CA this one issues, valid as long as a root.
    pub fn intermediate(&self, common_name: &str) -> Ca {
        self.intermediate_with(common_name, &CaSpec::default())
    }

    /// An intermediate CA this one issues with the constraints of `spec`.
    pub fn intermediate_with(&self, common_name: &str, spec: &CaSpec) -> Ca {
        let key = fresh_key();
        let name = Name::from_str(&format!("CN={common_name},O=mco-e2e"))
            .unwrap_or_else(|e| panic!("name: {e}"));
        let validity = Validity {
            not_before: utc(now() - 86_400),
            not_after: utc(now() + 10 * 365 * 86_400),
        };
        let mut builder = CertificateBuilder::new(
            Profile::SubCA {
                issuer: self.name.clone(),
                path_len_constraint: spec.path_len,
            },
            serial(),
            validity,
            name.clone(),
            spki(&key),
            &self.key,
        )
        .unwrap_or_else(|e| panic!("intermediate: {e}"));
        let extension = |added: Result<(), x509_cert::builder::Error>| {
            added.unwrap_or_else(|e| panic!("extension: {e}"));
        };
        let ia5 = |s: &String| Ia5String::new(s).unwrap_or_else(|e| panic!("name {s}: {e}"));
        let permitted: Vec<GeneralSubtree> = spec
            .permitted_dns
            .iter()
            .map(|d| GeneralName::DnsName(ia5(d)))
            .chain(
                spec.permitted_emails
                    .iter()
                    .map(|e| GeneralName::Rfc822Name(ia5(e))),
            )
            .map(|base| GeneralSubtree {
                base,
                minimum: 0,
                maximum: None,
            })
            .collect();
        if !permitted.is_empty() {
            extension(builder.add_extension(&NameConstraints {
                permitted_subtrees: Some(permitted),
                excluded_subtrees: None,
            }));
        }
        if !spec.extended_key_usage.is_empty() {
            extension(builder.add_extension(&ExtendedKeyUsage(spec.extended_key_usage.clone())));
        }
        if spec.unknown_critical {
            extension(builder.add_extension(&RawExtension::unknown_critical()));
        }
        let der = built(builder);
        Ca { name, key, der }
    }

    /// A leaf certificate this CA issues.
    pub fn leaf(&self, spec: &LeafSpec) -> Leaf {
        let key = fresh_key();
        let subject = match &spec.common_name {
            Some(cn) => Name::from_str(&format!("CN={cn}")).unwrap_or_else(|e| panic!("name: {e}")),
            None => Name::default(),
        };
        // A leaf with a CA's powers is made by hand: the leaf profile
        // writes CA:false and no keyCertSign.
        let profile = if spec.basic_ca || spec.key_cert_sign {
            Profile::Manual {
                issuer: Some(self.name.clone()),
            }
        } else {
            Profile::Leaf {
                issuer: self.name.clone(),
                enable_key_agreement: false,
                enable_key_encipherment: false,
                // What the profile writes without `hazmat`.
                include_subject_key_identifier: true,
            }
        };
        let mut builder = CertificateBuilder::new(
            profile,
            serial(),
            Validity {
                not_before: utc(spec.not_before),
                not_after: utc(spec.not_after),
            },
            subject,
            spki(&key),
            &self.key,
        )
        .unwrap_or_else(|e| panic!("leaf: {e}"));
        let ia5 = |s: &String| Ia5String::new(s).unwrap_or_else(|e| panic!("SAN {s}: {e}"));
        let names: Vec<GeneralName> = spec
            .emails
            .iter()
            .map(|e| GeneralName::Rfc822Name(ia5(e)))
            .chain(
                spec.uris
                    .iter()
                    .map(|u| GeneralName::UniformResourceIdentifier(ia5(u))),
            )
            .chain(spec.dns_names.iter().map(|d| GeneralName::DnsName(ia5(d))))
            .collect();
        let extension = |added: Result<(), x509_cert::builder::Error>| {
            added.unwrap_or_else(|e| panic!("extension: {e}"));
        };
        if spec.basic_ca || spec.key_cert_sign {
            extension(builder.add_extension(&BasicConstraints {
                ca: spec.basic_ca,
                path_len_constraint: None,
            }));
            let mut usage = KeyUsages::DigitalSignature.into();
            if spec.key_cert_sign {
                usage |= KeyUsages::KeyCertSign;
            }
            extension(builder.add_extension(&KeyUsage(usage)));
        }
        if !names.is_empty() {
            extension(builder.add_extension(&SubjectAltName(names)));
        }
        if spec.code_signing {
            extension(builder.add_extension(&ExtendedKeyUsage(vec![CODE_SIGNING])));
        }
        if let Some(issuer) = &spec.issuer {
            let value = Utf8StringRef::new(issuer)
                .and_then(|s| s.to_der())
                .unwrap_or_else(|e| panic!("issuer: {e}"));
            extension(builder.add_extension(&RawExtension {
                oid: FULCIO_ISSUER_V2,
                value,
                critical: false,
            }));
        }
        if let Some(issuer) = &spec.legacy_issuer {
            extension(builder.add_extension(&RawExtension {
                oid: FULCIO_ISSUER_V1,
                value: issuer.as_bytes().to_vec(),
                critical: false,
            }));
        }
        if spec.unknown_critical {
            extension(builder.add_extension(&RawExtension::unknown_critical()));
        }
        Leaf {
            der: built(builder),
            key,
        }
    }

    /// The CA's certificate, PEM.
    pub fn pem(&self) -> String {
        pem(&self.der)
    }
}

fn built(builder: CertificateBuilder<'_, SigningKey>) -> Vec<u8> {
    builder
        .build::<DerSignature>()
        .and_then(|cert| cert.to_der().map_err(Into::into))
        .unwrap_or_else(|e| panic!("certificate: {e}"))
}

/// The code-signing extended key usage.
pub const CODE_SIGNING: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.3");
/// The TLS server extended key usage.
pub const SERVER_AUTH: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.1");
/// An extension no verifier knows (a private enterprise arc).
const UNKNOWN_EXTENSION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.55555.1");

/// What an intermediate CA's certificate says beyond a plain CA's: the
/// constraints a verifier must enforce on every path through it.
#[derive(Debug, Clone, Default)]
pub struct CaSpec {
    /// Basic constraints' pathLenConstraint: how many CAs may follow.
    pub path_len: Option<u8>,
    /// Name constraints: the DNS names permitted below.
    pub permitted_dns: Vec<String>,
    /// Name constraints: the email names (or domains) permitted below.
    pub permitted_emails: Vec<String>,
    /// The extended key usages; none leaves the extension out.
    pub extended_key_usage: Vec<ObjectIdentifier>,
    /// An extension no verifier knows, marked critical.
    pub unknown_critical: bool,
}
const FULCIO_ISSUER_V2: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.57264.1.8");
const FULCIO_ISSUER_V1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.57264.1.1");

/// An extension whose value is given as bytes (Fulcio's issuer: a DER
/// UTF8String in the current OID, the bare string in the deprecated one;
/// an extension no verifier knows).
struct RawExtension {
    oid: ObjectIdentifier,
    value: Vec<u8>,
    critical: bool,
}

impl RawExtension {
    /// An unknown extension (a DER NULL) marked critical: a verifier that
    /// does not understand it must refuse the certificate.
    fn unknown_critical() -> RawExtension {
        RawExtension {
            oid: UNKNOWN_EXTENSION,
            value: vec![0x05, 0x00],
            critical: true,
        }
    }
}

impl x509_cert::der::oid::AssociatedOid for RawExtension {
    // The builder reads the OID from the trait; each value says its own
    // through `to_extension` below.
    const OID: ObjectIdentifier = FULCIO_ISSUER_V2;
}

impl Encode for RawExtension {
    fn encoded_len(&self) -> x509_cert::der::Result<Length> {
        Length::try_from(self.value.len())
    }

    fn encode(&self, writer: &mut impl Writer) -> x509_cert::der::Result<()> {
        writer.write(&self.value)
    }
}

impl AsExtension for RawExtension {
    fn critical(&self, _: &Name, _: &[x509_cert::ext::Extension]) -> bool {
        self.critical
    }

    fn to_extension(
        &self,
        _: &Name,
        _: &[x509_cert::ext::Extension],
    ) -> Result<x509_cert::ext::Extension, x509_cert::der::Error> {
        Ok(x509_cert::ext::Extension {
            extn_id: self.oid,
            critical: self.critical,
            extn_value: x509_cert::der::asn1::OctetString::new(self.value.clone())?,
        })
    }
}

/// What a leaf certificate says.
#[derive(Debug, Clone)]
pub struct LeafSpec {
    pub common_name: Option<String>,
    pub emails: Vec<String>,
    pub uris: Vec<String>,
    pub dns_names: Vec<String>,
    /// Fulcio's OIDC issuer extension (1.3.6.1.4.1.57264.1.8).
    pub issuer: Option<String>,
    /// The deprecated issuer extension (1.3.6.1.4.1.57264.1.1).
    pub legacy_issuer: Option<String>,
    /// The code-signing extended key usage.
    pub code_signing: bool,
    /// Basic constraints CA:true: a CA's certificate offered as a signer's.
    pub basic_ca: bool,
    /// The keyCertSign key usage: a key that may issue certificates.
    pub key_cert_sign: bool,
    /// An extension no verifier knows, marked critical.
    pub unknown_critical: bool,
    /// Validity, Unix seconds.
    pub not_before: u64,
    pub not_after: u64,
}

impl LeafSpec {
    /// A code-signing certificate for `email`, valid ten minutes either
    /// side of now (Fulcio's are valid ten minutes).
    pub fn email(email: &str) -> LeafSpec {
        LeafSpec {
            common_name: None,
            emails: vec![email.into()],
            uris: Vec::new(),
            dns_names: Vec::new(),
            issuer: None,
            legacy_issuer: None,
            code_signing: true,
            basic_ca: false,
            key_cert_sign: false,
            unknown_critical: false,
            not_before: now() - 600,
            not_after: now() + 600,
        }
    }

    /// A code-signing certificate for a URI (a CI workflow's identity).
    pub fn uri(uri: &str) -> LeafSpec {
        LeafSpec {
            emails: Vec::new(),
            uris: vec![uri.into()],
            ..LeafSpec::email("")
        }
    }

    /// A code-signing certificate for a DNS name.
    pub fn dns(name: &str) -> LeafSpec {
        LeafSpec {
            emails: Vec::new(),
            dns_names: vec![name.into()],
            ..LeafSpec::email("")
        }
    }

    /// A leaf with a CA's powers: basic constraints CA:true, and or the
    /// keyCertSign key usage.
    pub fn with_ca_powers(mut self, basic_ca: bool, key_cert_sign: bool) -> LeafSpec {
        self.basic_ca = basic_ca;
        self.key_cert_sign = key_cert_sign;
        self
    }

    /// A leaf with an extension no verifier knows, marked critical.
    pub fn with_unknown_critical_extension(mut self) -> LeafSpec {
        self.unknown_critical = true;
        self
    }

    pub fn issuer(mut self, issuer: &str) -> LeafSpec {
        self.issuer = Some(issuer.into());
        self
    }

    pub fn legacy_issuer(mut self, issuer: &str) -> LeafSpec {
        self.legacy_issuer = Some(issuer.into());
        self
    }

    pub fn valid(mut self, not_before: u64, not_after: u64) -> LeafSpec {
        self.not_before = not_before;
        self.not_after = not_after;
        self
    }

    pub fn without_code_signing(mut self) -> LeafSpec {
        self.code_signing = false;
        self
    }
}

/// A leaf (signing) certificate and its key.
pub struct Leaf {
    /// The certificate, DER.
    pub der: Vec<u8>,
    key: SigningKey,
}

impl Leaf {
    /// The certificate, PEM (cosign's `--certificate` file).
    pub fn pem(&self) -> String {
        pem(&self.der)
    }

    /// The private key, PKCS#8 PEM (for `cosign import-key-pair`).
    pub fn key_pem(&self) -> String {
        self.key
            .to_pkcs8_pem(LineEnding::LF)
            .unwrap_or_else(|e| panic!("key: {e}"))
            .to_string()
    }

    /// An ECDSA P-256 SHA-256 signature over `message`, ASN.1 DER, as
    /// cosign makes.
    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        let signature: DerSignature = self.key.sign(message);
        signature.as_bytes().to_vec()
    }

    /// The public key, PEM (cosign's `cosign.pub` for this key).
    pub fn public_key_pem(&self) -> String {
        self.key
            .verifying_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap_or_else(|e| panic!("public key: {e}"))
    }

    /// An ECDSA signature over a SHA-256 `digest` (cosign sign-blob's
    /// message signature), ASN.1 DER.
    pub fn sign_prehash(&self, digest: &[u8]) -> Vec<u8> {
        let signature: p256::ecdsa::Signature = self
            .key
            .sign_prehash(digest)
            .unwrap_or_else(|e| panic!("sign: {e}"));
        signature.to_der().as_bytes().to_vec()
    }
}

/// Every encoding of one ECDSA P-256 signature (ASN.1 `der`) that a
/// verifier accepting both forms and both S values takes: DER and raw
/// `r||s`, each with the low and the high S. They are one signature; an
/// attacker who can push makes the others from the one.
pub fn signature_encodings(der: &[u8]) -> [(&'static str, Vec<u8>); 4] {
    let low = p256::ecdsa::Signature::from_der(der)
        .map(|s| s.normalize_s().unwrap_or(s))
        .unwrap_or_else(|e| panic!("signature: {e}"));
    let (r, s) = low.split_scalars();
    let high = p256::ecdsa::Signature::from_scalars(r.to_bytes(), (-*s).to_bytes())
        .unwrap_or_else(|e| panic!("high S: {e}"));
    [
        ("DER, low S", low.to_der().as_bytes().to_vec()),
        ("raw, low S", low.to_bytes().to_vec()),
        ("DER, high S", high.to_der().as_bytes().to_vec()),
        ("raw, high S", high.to_bytes().to_vec()),
    ]
}

/// A Rekor-style transparency log: a key, an origin, and its leaves. Each
/// log starts with a few unrelated entries, so inclusion proofs are not
/// trivially empty.
pub struct Log {
    key: SigningKey,
    origin: String,
    leaves: Vec<Vec<u8>>,
}

/// An entry the log recorded, with what it signed.
#[derive(Debug, Clone)]
pub struct Entry {
    pub body: Vec<u8>,
    pub log_index: u64,
    pub integrated_time: u64,
    pub log_id: Vec<u8>,
    /// The signed entry timestamp (inclusion promise), DER.
    pub signed_entry_timestamp: Vec<u8>,
    pub tree_size: u64,
    pub root_hash: Vec<u8>,
    pub hashes: Vec<Vec<u8>>,
    /// The signed checkpoint (a signed note) for `tree_size`, `root_hash`.
    pub checkpoint: String,
}

impl Log {
    pub fn new(origin: &str) -> Log {
        Log {
            key: fresh_key(),
            origin: origin.into(),
            leaves: (0u8..5).map(|i| leaf_hash(&[i])).collect(),
        }
    }

    /// This log's key and entries under another origin: one key signing
    /// for two logs (or shards), whose checkpoints only the origin tells
    /// apart.
    pub fn with_origin(&self, origin: &str) -> Log {
        Log {
            key: self.key.clone(),
            origin: origin.into(),
            leaves: self.leaves.clone(),
        }
    }

    /// The log's public key, DER SubjectPublicKeyInfo.
    pub fn public_key_der(&self) -> Vec<u8> {
        self.key
            .verifying_key()
            .to_public_key_der()
            .unwrap_or_else(|e| panic!("log key: {e}"))
            .into_vec()
    }

    /// The log's public key, PEM (ClusterImagePolicy `rekorKeyData`).
    pub fn public_key_pem(&self) -> String {
        self.key
            .verifying_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap_or_else(|e| panic!("log key: {e}"))
    }

    /// The log ID: SHA-256 of the public key's DER.
    pub fn id(&self) -> Vec<u8> {
        Sha256::digest(self.public_key_der()).to_vec()
    }

    /// A `hashedrekord` v0.0.1 body for `signature` over `signed` (the
    /// SHA-256 of `signed` is recorded) by `certificate_pem`.
    pub fn hashedrekord(&self, signed: &[u8], signature: &[u8], certificate_pem: &str) -> Vec<u8> {
        self.hashedrekord_of_digest(&Sha256::digest(signed), signature, certificate_pem)
    }

    /// A `hashedrekord` v0.0.1 body recording `digest` as the signed hash.
    pub fn hashedrekord_of_digest(
        &self,
        digest: &[u8],
        signature: &[u8],
        certificate_pem: &str,
    ) -> Vec<u8> {
        serde_json::json!({
            "apiVersion": "0.0.1",
            "kind": "hashedrekord",
            "spec": {
                "data": {"hash": {"algorithm": "sha256", "value": hex(digest)}},
                "signature": {
                    "content": b64(signature),
                    "publicKey": {"content": b64(certificate_pem.as_bytes())},
                },
            },
        })
        .to_string()
        .into_bytes()
    }

    /// A `dsse` v0.0.1 body for a DSSE envelope's `payload` signed by
    /// `certificate_pem`.
    pub fn dsse(
        &self,
        envelope_json: &[u8],
        payload: &[u8],
        signature: &[u8],
        certificate_pem: &str,
    ) -> Vec<u8> {
        serde_json::json!({
            "apiVersion": "0.0.1",
            "kind": "dsse",
            "spec": {
                "envelopeHash": {"algorithm": "sha256", "value": hex(&Sha256::digest(envelope_json))},
                "payloadHash": {"algorithm": "sha256", "value": hex(&Sha256::digest(payload))},
                "signatures": [{
                    "signature": b64(signature),
                    "verifier": b64(certificate_pem.as_bytes()),
                }],
            },
        })
        .to_string()
        .into_bytes()
    }

    /// Records `body` at `integrated_time`: its signed entry timestamp,
    /// and its inclusion proof to a checkpoint of the tree just after it.
    pub fn append(&mut self, body: Vec<u8>, integrated_time: u64) -> Entry {
        let log_index = self.leaves.len();
        self.leaves.push(leaf_hash(&body));
        let log_id = self.id();
        // Rekor's SET: the log's signature over the canonical JSON (sorted
        // keys) of the body, integrated time, log ID and index.
        let set_payload = format!(
            r#"{{"body":"{}","integratedTime":{integrated_time},"logID":"{}","logIndex":{log_index}}}"#,
            b64(&body),
            hex(&log_id)
        );
        let signed_entry_timestamp = self.sign(set_payload.as_bytes());
        let root_hash = tree_root(&self.leaves);
        let tree_size = self.leaves.len() as u64;
        let note = format!("{} - 1\n{tree_size}\n{}\n", self.origin, b64(&root_hash));
        let mut hinted = log_id[..4].to_vec();
        hinted.extend(self.sign(note.as_bytes()));
        let checkpoint = format!("{note}\n\u{2014} {} {}\n", self.origin, b64(&hinted));
        Entry {
            hashes: audit_path(log_index, &self.leaves),
            body,
            log_index: log_index as u64,
            integrated_time,
            log_id,
            signed_entry_timestamp,
            tree_size,
            root_hash,
            checkpoint,
        }
    }

    fn sign(&self, message: &[u8]) -> Vec<u8> {
        let signature: DerSignature = self.key.sign(message);
        signature.as_bytes().to_vec()
    }
}

impl Entry {
    /// The `.sig` layer's `dev.sigstore.cosign/bundle` annotation.
    pub fn cosign_bundle_annotation(&self) -> String {
        serde_json::json!({
            "SignedEntryTimestamp": b64(&self.signed_entry_timestamp),
            "Payload": {
                "body": b64(&self.body),
                "integratedTime": self.integrated_time,
                "logIndex": self.log_index,
                "logID": hex(&self.log_id),
            },
        })
        .to_string()
    }

    /// A Sigstore bundle's `tlogEntries` item (protobuf JSON: int64 as
    /// strings), with its inclusion promise and proof.
    pub fn bundle_tlog_entry(&self) -> serde_json::Value {
        let kind = serde_json::from_slice::<serde_json::Value>(&self.body)
            .ok()
            .and_then(|b| b["kind"].as_str().map(String::from))
            .unwrap_or_default();
        serde_json::json!({
            "logIndex": self.log_index.to_string(),
            "logId": {"keyId": b64(&self.log_id)},
            "kindVersion": {"kind": kind, "version": "0.0.1"},
            "integratedTime": self.integrated_time.to_string(),
            "inclusionPromise": {"signedEntryTimestamp": b64(&self.signed_entry_timestamp)},
            "inclusionProof": {
                "logIndex": self.log_index.to_string(),
                "rootHash": b64(&self.root_hash),
                "treeSize": self.tree_size.to_string(),
                "hashes": self.hashes.iter().map(|h| b64(h)).collect::<Vec<_>>(),
                "checkpoint": {"envelope": self.checkpoint},
            },
            "canonicalizedBody": b64(&self.body),
        })
    }
}

fn leaf_hash(body: &[u8]) -> Vec<u8> {
    let mut hasher = Sha256::new();
    hasher.update([0u8]);
    hasher.update(body);
    hasher.finalize().to_vec()
}

fn node_hash(left: &[u8], right: &[u8]) -> Vec<u8> {
    let mut hasher = Sha256::new();
    hasher.update([1u8]);
    hasher.update(left);
    hasher.update(right);
    hasher.finalize().to_vec()
}

/// RFC 6962 section 2.1: the tree head of `leaves` (leaf hashes).
fn tree_root(leaves: &[Vec<u8>]) -> Vec<u8> {
    match leaves {
        [] => Sha256::digest([]).to_vec(),
        [one] => one.clone(),
        _ => {
            let split = leaves.len().next_power_of_two() / 2;
            node_hash(&tree_root(&leaves[..split]), &tree_root(&leaves[split..]))
        }
    }
}

/// RFC 6962 section 2.1.1: the audit path of leaf `index`.
fn audit_path(index: usize, leaves: &[Vec<u8>]) -> Vec<Vec<u8>> {
    if leaves.len() <= 1 {
        return Vec::new();
    }
    let split = leaves.len().next_power_of_two() / 2;
    let (mut path, sibling) = if index < split {
        (
            audit_path(index, &leaves[..split]),
            tree_root(&leaves[split..]),
        )
    } else {
        (
            audit_path(index - split, &leaves[split..]),
            tree_root(&leaves[..split]),
        )
    };
    path.push(sibling);
    path
}

/// A Sigstore `trusted_root.json` naming `authorities` (each a chain,
/// leaf-most first, root last) and `logs`, all trusted from 2000 on.
pub fn trusted_root_json(authorities: &[&[&Ca]], logs: &[&Log]) -> String {
    let since = serde_json::json!({"start": "2000-01-01T00:00:00Z"});
    serde_json::json!({
        "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
        "tlogs": logs.iter().map(|log| serde_json::json!({
            "baseUrl": format!("https://{}", log.origin),
            "hashAlgorithm": "SHA2_256",
            "publicKey": {
                "rawBytes": b64(&log.public_key_der()),
                "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                "validFor": since,
            },
            "logId": {"keyId": b64(&log.id())},
        })).collect::<Vec<_>>(),
        "certificateAuthorities": authorities.iter().map(|chain| serde_json::json!({
            "subject": {"organization": "mco-e2e"},
            "uri": "https://fulcio.e2e",
            "certChain": {"certificates": chain.iter().map(|ca| serde_json::json!({"rawBytes": b64(&ca.der)})).collect::<Vec<_>>()},
            "validFor": since,
        })).collect::<Vec<_>>(),
        "ctlogs": [],
        "timestampAuthorities": [],
    })
    .to_string()
}

/// A cosign simple-signing payload naming `manifest_digest`.
pub fn simple_signing_payload(reference: &str, manifest_digest: &str) -> Vec<u8> {
    serde_json::json!({
        "critical": {
            "identity": {"docker-reference": reference},
            "image": {"docker-manifest-digest": manifest_digest},
            "type": "cosign container image signature",
        },
        "optional": null,
    })
    .to_string()
    .into_bytes()
}

/// The in-toto statement cosign v3 signs into a bundle's DSSE envelope.
pub fn in_toto_statement(reference: &str, manifest_digest: &str) -> Vec<u8> {
    in_toto_attestation(
        reference,
        manifest_digest,
        "https://sigstore.dev/cosign/sign/v1",
    )
}

/// An in-toto statement of `predicate_type` about `manifest_digest`: an
/// attestation (`cosign attest`: SLSA provenance, an SBOM, ...), or with
/// cosign's signing predicate type, a signature.
pub fn in_toto_attestation(
    reference: &str,
    manifest_digest: &str,
    predicate_type: &str,
) -> Vec<u8> {
    serde_json::json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{
            "name": reference,
            "digest": {"sha256": manifest_digest.trim_start_matches("sha256:")},
        }],
        "predicateType": predicate_type,
        "predicate": {},
    })
    .to_string()
    .into_bytes()
}

/// DSSE's pre-authentication encoding of an in-toto `payload`.
pub fn dsse_pae(payload: &[u8]) -> Vec<u8> {
    let payload_type = "application/vnd.in-toto+json";
    let mut message = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    message.extend_from_slice(payload);
    message
}

/// A Sigstore bundle v0.3 of a DSSE `statement` signed by `leaf`
/// (`signature` over its PAE), with `entry` as its one tlog entry.
pub fn dsse_bundle(
    leaf: &Leaf,
    statement: &[u8],
    signature: &[u8],
    entry: Option<&Entry>,
) -> Vec<u8> {
    serde_json::json!({
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "verificationMaterial": {
            "certificate": {"rawBytes": b64(&leaf.der)},
            "tlogEntries": entry.map(|e| vec![e.bundle_tlog_entry()]).unwrap_or_default(),
        },
        "dsseEnvelope": {
            "payload": b64(statement),
            "payloadType": "application/vnd.in-toto+json",
            "signatures": [{"sig": b64(signature), "keyid": ""}],
        },
    })
    .to_string()
    .into_bytes()
}

/// The DSSE envelope of [`dsse_bundle`], as Rekor's dsse entry hashes it.
pub fn dsse_envelope(statement: &[u8], signature: &[u8]) -> Vec<u8> {
    serde_json::json!({
        "payload": b64(statement),
        "payloadType": "application/vnd.in-toto+json",
        "signatures": [{"sig": b64(signature), "keyid": ""}],
    })
    .to_string()
    .into_bytes()
}
