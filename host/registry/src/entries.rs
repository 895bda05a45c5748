//! One registry entry: where its module and candidate come from (a file,
//! a ConfigMap key, an OCI artifact and the keys that must have signed
//! it), its limits, and the full form an entry is written in, shared by
//! registry files (`table.rs`) and MachineConfigGuest specs (`crd.rs`), so
//! both read and fail alike.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use serde::de::{self, MapAccess, Visitor, value::MapAccessDeserializer};

pub use mco_registry_formats::sigstore::{
    Identity, IssuerMatch, Pattern, PatternError, SubjectMatch,
};

use mco_fetch::image_policy::PolicySelector;

pub use crate::entry_error::EntryError;
use crate::entry_error::Problem;

/// Where a module's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// A file: in the image, or on a mounted volume.
    Path(PathBuf),
    /// A `binaryData` key of a ConfigMap in the host's namespace.
    ConfigMap { name: String, key: String },
    /// An artifact in an OCI registry.
    Oci(OciSource),
}

/// An OCI reference, the pull Secret (in the host's namespace) that
/// grants access to it, if the registry wants one, and the keys one of
/// which must have signed it, if any.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OciSource {
    /// As written: `registry/repository[:tag][@sha256:…]`.
    pub reference: String,
    pub pull_secret: Option<String>,
    pub verify: Option<Verify>,
}

impl OciSource {
    /// An unsigned reference without a pull Secret, as the CLI pulls.
    pub fn anonymous(reference: &str) -> OciSource {
        OciSource {
            reference: reference.to_string(),
            pull_secret: None,
            verify: None,
        }
    }
}

/// `verify:`, the signature policy of an `oci:` module
/// (mco-fetch's signature_policy.rs says how it is met). Three groups, each one given
/// must be met:
///
/// - one signature by any of `keys` (see cosign.rs), `identities` (a
///   certificate from `trusted_root` naming that identity) or the
///   ClusterImagePolicies `cluster_image_policies` selects
///   (mco-fetch's image_policy.rs): a list is for rotation, not a quorum;
/// - a signature by every signer of `all_of`;
/// - signatures by at least `any_of.minimum` of `any_of.signers`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Verify {
    pub keys: Vec<KeySource>,
    pub cluster_image_policies: Option<PolicySelector>,
    /// Where the Sigstore trusted root (`trusted_root.json`) the
    /// certificates of identity signers chain to is read from.
    pub trusted_root: Option<KeySource>,
    pub identities: Vec<Identity>,
    pub all_of: Vec<Signer>,
    pub any_of: Option<Quorum>,
}

impl Verify {
    /// Keys only, any one of which may have signed: the form `--key`
    /// flags and the first registry files give.
    pub fn keys(keys: Vec<KeySource>) -> Verify {
        Verify {
            keys,
            cluster_image_policies: None,
            trusted_root: None,
            identities: Vec::new(),
            all_of: Vec::new(),
            any_of: None,
        }
    }
}

/// One signer of `allOf` or `anyOf`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Signer {
    Key(KeySource),
    Identity(Identity),
}

/// `anyOf`: signatures by at least `minimum` of `signers`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Quorum {
    pub minimum: usize,
    pub signers: Vec<Signer>,
}

/// How errors, logs and `guests verify` name an identity: `identity
/// SUBJECT[ from ISSUER]`, a URL prefix ending in `*`, a regular
/// expression between slashes.
pub fn identity_name(identity: &Identity) -> String {
    let subject = match &identity.subject {
        SubjectMatch::UrlPrefix(prefix) => format!("{prefix}*"),
        SubjectMatch::RegExp(pattern) => format!("/{}/", pattern.as_str()),
        exact => exact.value().to_string(),
    };
    match &identity.issuer {
        Some(IssuerMatch::Equal(issuer)) => format!("identity {subject} from {issuer}"),
        Some(IssuerMatch::RegExp(pattern)) => {
            format!("identity {subject} from /{}/", pattern.as_str())
        }
        None => format!("identity {subject}"),
    }
}

impl fmt::Display for Signer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Signer::Key(key) => write!(f, "key {key}"),
            Signer::Identity(identity) => f.write_str(&identity_name(identity)),
        }
    }
}

/// Where a cosign public key (PEM, `cosign.pub`) is read from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeySource {
    /// A file; relative paths follow the registry file.
    File(PathBuf),
    /// A `data` (or `binaryData`) key of a ConfigMap in the host's namespace.
    ConfigMap { name: String, key: String },
    /// A `data` key of a Secret in the host's namespace.
    Secret { name: String, key: String },
}

/// How errors and logs name a key: by where it comes from.
impl fmt::Display for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySource::File(path) => write!(f, "{}", path.display()),
            KeySource::ConfigMap { name, key } => write!(f, "configmap/{name}[{key}]"),
            KeySource::Secret { name, key } => write!(f, "secret/{name}[{key}]"),
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Path(path) => write!(f, "{}", path.display()),
            Source::ConfigMap { name, key } => write!(f, "configmap/{name}[{key}]"),
            Source::Oci(oci) => write!(f, "oci:{}", oci.reference),
        }
    }
}

/// One module and, when pinned, the sha256 it must have (lowercase hex).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Module {
    pub source: Source,
    pub sha256: Option<String>,
}

/// What serves one job.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Entry {
    pub module: Module,
    /// Linear-memory cap; `None` is the host's `--guest-memory-mib`, and
    /// none may exceed `--guest-memory-max-mib`.
    pub memory_mib: Option<usize>,
    /// Budget of one evaluation; `None` is the host's `--guest-deadline`.
    pub deadline: Option<Duration>,
    /// Evaluated beside `module` on the same inputs; its decisions are
    /// compared and counted, never applied.
    pub candidate: Option<Module>,
}

impl Entry {
    /// The short form: a module file under the host's limits.
    pub fn path(path: PathBuf) -> Entry {
        Entry {
            module: Module {
                source: Source::Path(path),
                sha256: None,
            },
            memory_mib: None,
            deadline: None,
            candidate: None,
        }
    }
}

/// A path, or a full entry. Hand-written rather than `untagged` so that a
/// typo inside a full entry is reported as such, not as "no variant matched".
pub(super) enum RawEntry {
    Path(PathBuf),
    Full(Box<RawFull>),
}

impl<'de> Deserialize<'de> for RawEntry {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntryVisitor;
        impl<'de> Visitor<'de> for EntryVisitor {
            type Value = RawEntry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a module path or an entry {module | configMap | oci, pullSecret, verify, sha256, memoryMiB, deadline, candidate}")
            }
            fn visit_str<E: de::Error>(self, path: &str) -> Result<RawEntry, E> {
                Ok(RawEntry::Path(PathBuf::from(path)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawEntry, A::Error> {
                RawFull::deserialize(MapAccessDeserializer::new(map))
                    .map(|full| RawEntry::Full(Box::new(full)))
            }
        }
        deserializer.deserialize_any(EntryVisitor)
    }
}

/// The full form of an entry: in a registry file, and the spec of a
/// MachineConfigGuest (`crd.rs`), so both read and fail alike.
#[derive(Deserialize, Serialize, JsonSchema, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RawFull {
    // The module's own fields, repeated rather than flattened: serde cannot
    // combine `flatten` with `deny_unknown_fields`.
    /// A module file, in the image or on a mounted volume; relative paths
    /// follow the registry file, or the guest directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<PathBuf>,
    /// A `binaryData` key of a ConfigMap in the host's namespace (at most
    /// 1 MiB; kept for compatibility).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<RawConfigMapKey>,
    /// An OCI artifact, `registry/repository[:tag][@sha256:…]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci: Option<String>,
    /// A `kubernetes.io/dockerconfigjson` Secret in the host's namespace
    /// for the `oci` registry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_secret: Option<String>,
    /// Signatures required: one by any of `keys`, `identities` and the
    /// ClusterImagePolicies covering the module, and those `allOf` and
    /// `anyOf` ask for (see docs/guests/signature-policy.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<RawVerify>,
    /// Refused unless the module has this sha256 (64 hex digits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Linear-memory cap in MiB (default: the host's `--guest-memory-mib`),
    /// at most the host's `--guest-memory-max-mib`.
    #[serde(rename = "memoryMiB", default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<usize>,
    /// Budget of one evaluation, such as `500ms` (default: the host's
    /// `--guest-deadline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<String>,
    /// Evaluated beside the module on the same inputs; its decisions are
    /// compared and counted, never applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<RawModule>,
}

/// A candidate module: the module fields of [`RawFull`].
#[derive(Deserialize, Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RawModule {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<RawConfigMapKey>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<RawVerify>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// A `binaryData` key of a ConfigMap in the host's namespace.
#[derive(Deserialize, Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawConfigMapKey {
    pub name: String,
    pub key: String,
}

/// `verify: {keys, identities, clusterImagePolicies, trustedRoot, allOf,
/// anyOf}`; named as Kubewarden's `verification-config` names them.
#[derive(Deserialize, Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RawVerify {
    /// Public keys, any one of which may have signed the module.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<RawKey>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_image_policies: Option<RawPolicies>,
    /// A Sigstore trusted root (`trusted_root.json`: certificate
    /// authorities, transparency logs, timestamp authorities) that the
    /// certificates of `identities`, `allOf` and `anyOf` must chain to;
    /// read from a file, a ConfigMap or a Secret, never fetched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trusted_root: Option<RawKey>,
    /// Certificate identities, any one of which may have signed the
    /// module (beside `keys` and `clusterImagePolicies`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identities: Vec<RawIdentity>,
    /// Signers every one of which must have signed the module.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub all_of: Vec<RawSigner>,
    /// Signers at least `minimumMatches` of which must have signed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub any_of: Option<RawAnyOf>,
}

/// A certificate identity: `{issuer | issuerRegExp, subject: {equal |
/// urlPrefix} | subjectRegExp}`.
#[derive(Deserialize, Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RawIdentity {
    /// The OIDC issuer the certificate must name (Fulcio's issuer
    /// extension), exactly; omitted for certificates of a CA that writes
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// Instead of `issuer`: a regular expression (Rust `regex` syntax, at
    /// most 1024 bytes) the whole OIDC issuer must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer_reg_exp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<RawSubject>,
    /// Instead of `subject`: a regular expression (Rust `regex` syntax, at
    /// most 1024 bytes) one whole SAN (email, URI or DNS name) must match;
    /// anchored at both ends, unlike cosign's
    /// `--certificate-identity-regexp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject_reg_exp: Option<String>,
}

/// `{equal: …}` or `{urlPrefix: …}`.
#[derive(Deserialize, Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RawSubject {
    /// The certificate's SAN email, URI or DNS name, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equal: Option<String>,
    /// A SAN URI under this prefix, at a path boundary
    /// (`https://github.com/team` does not take `https://github.com/team-evil`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_prefix: Option<String>,
}

/// One signer of `allOf` or `anyOf`: `{key: {file | configMap | secret}}`
/// or `{identity: {issuer, subject}}`.
#[derive(Deserialize, Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RawSigner {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<RawKey>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<RawIdentity>,
}

/// `anyOf: {minimumMatches, signatures}`.
#[derive(Deserialize, Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RawAnyOf {
    /// How many of `signatures` must have signed (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_matches: Option<usize>,
    pub signatures: Vec<RawSigner>,
}

/// `clusterImagePolicies` as written. Any JSON, checked when the entry is
/// resolved: a wrong shape is then this entry's error, where a typed field
/// would fail the decoding of every MachineConfigGuest listed with it.
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq)]
#[serde(transparent)]
pub struct RawPolicies(pub serde_json::Value);

impl JsonSchema for RawPolicies {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RawPolicies".into()
    }

    fn inline_schema() -> bool {
        true
    }

    /// `true` or a list of names: one field of two types, which a
    /// structural schema can only leave open.
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "The ClusterImagePolicies (config.openshift.io/v1) whose signer may also have signed the module (PublicKey: its key; PKI: a certificate from its CA for its pkiCertificateSubject; FulcioCAWithRekor: a certificate from its Fulcio CA for its fulcioSubject, in its Rekor log): true for every policy whose scopes cover its repository, or a list of policy names, each of which must cover it. Other policy types refuse the module.",
            "x-kubernetes-preserve-unknown-fields": true
        })
    }
}

impl RawPolicies {
    fn resolve(self) -> Result<Option<PolicySelector>, Problem> {
        match self.0 {
            serde_json::Value::Bool(true) => Ok(Some(PolicySelector::All)),
            serde_json::Value::Bool(false) => Ok(None),
            serde_json::Value::Array(items) if !items.is_empty() => {
                let mut names = Vec::new();
                for item in items {
                    match item {
                        serde_json::Value::String(name) if !name.is_empty() => {
                            if !names.contains(&name) {
                                names.push(name);
                            }
                        }
                        other => return Err(Problem::PolicyName(shown(&other))),
                    }
                }
                Ok(Some(PolicySelector::Named(names)))
            }
            serde_json::Value::Array(_) => Err(Problem::NoPolicies),
            other => Err(Problem::Policies(shown(&other))),
        }
    }
}

/// A value of the wrong shape as an error quotes it, bounded.
fn shown(value: &serde_json::Value) -> String {
    mco_k8s_rules::bounded(value.to_string(), 64)
}

/// One of `keys`: `{file: …}`, `{configMap: {name, key}}` or
/// `{secret: {name, key}}`.
#[derive(Deserialize, Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RawKey {
    /// A PEM file (offline registries; relative to the registry file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<RawConfigMapKey>,
    /// A key of a Secret in the host's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<RawConfigMapKey>,
}

impl RawVerify {
    pub(super) fn resolve(self, base: &Path, at: &str) -> Result<Verify, EntryError> {
        let cluster_image_policies = self
            .cluster_image_policies
            .map(RawPolicies::resolve)
            .transpose()
            .map_err(|problem| EntryError::at(at, problem))?
            .flatten();
        let fail = |problem| EntryError::at(at, problem);
        let nothing = self.keys.is_empty()
            && self.identities.is_empty()
            && self.all_of.is_empty()
            && self.any_of.is_none();
        if nothing && cluster_image_policies.is_none() {
            return Err(fail(Problem::NoKeys));
        }
        let keys = self
            .keys
            .into_iter()
            .enumerate()
            .map(|(i, key)| key.resolve(base).ok_or_else(|| fail(Problem::KeySource(i))))
            .collect::<Result<_, _>>()?;
        let identities = self
            .identities
            .into_iter()
            .enumerate()
            .map(|(i, identity)| identity.resolve(&format!("identities[{i}]")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)?;
        let all_of = resolve_signers(self.all_of, base, "allOf").map_err(fail)?;
        let any_of = self
            .any_of
            .map(|any| {
                let signers = resolve_signers(any.signatures, base, "anyOf.signatures")?;
                let minimum = any.minimum_matches.unwrap_or(1);
                if signers.is_empty() {
                    return Err(Problem::NoQuorum);
                }
                if minimum == 0 || minimum > signers.len() {
                    return Err(Problem::Minimum {
                        minimum,
                        listed: signers.len(),
                    });
                }
                Ok(Quorum { minimum, signers })
            })
            .transpose()
            .map_err(fail)?;
        let trusted_root = self
            .trusted_root
            .map(|root| {
                root.resolve(base)
                    .ok_or_else(|| fail(Problem::TrustedRootSource))
            })
            .transpose()?;
        let verify = Verify {
            keys,
            cluster_image_policies,
            trusted_root,
            identities,
            all_of,
            any_of,
        };
        let uses_identities = !verify.identities.is_empty()
            || verify
                .all_of
                .iter()
                .chain(verify.any_of.iter().flat_map(|q| &q.signers))
                .any(|s| matches!(s, Signer::Identity(_)));
        match (uses_identities, verify.trusted_root.is_some()) {
            (true, false) => Err(fail(Problem::NoTrustedRoot)),
            (false, true) => Err(fail(Problem::UnusedTrustedRoot)),
            _ => Ok(verify),
        }
    }
}

impl RawKey {
    /// Where the key is read from, unless it names none or several.
    fn resolve(self, base: &Path) -> Option<KeySource> {
        match (self.file, self.config_map, self.secret) {
            (Some(path), None, None) => Some(KeySource::File(base.join(path))),
            (None, Some(RawConfigMapKey { name, key }), None) => {
                Some(KeySource::ConfigMap { name, key })
            }
            (None, None, Some(RawConfigMapKey { name, key })) => {
                Some(KeySource::Secret { name, key })
            }
            _ => None,
        }
    }
}

impl RawIdentity {
    /// The identity, `at` naming it in errors.
    fn resolve(self, at: &str) -> Result<Identity, Problem> {
        let pattern = |field, source: &str| {
            Pattern::new(source).map_err(|error| Problem::Pattern {
                at: at.to_string(),
                field,
                error,
            })
        };
        let subject = match (self.subject, self.subject_reg_exp) {
            (Some(subject), None) => match (subject.equal, subject.url_prefix) {
                (Some(equal), None) if !equal.is_empty() => SubjectMatch::Equal(equal),
                (None, Some(prefix)) if !prefix.is_empty() => SubjectMatch::UrlPrefix(prefix),
                _ => return Err(Problem::SubjectMatch(at.to_string())),
            },
            (None, Some(source)) => SubjectMatch::RegExp(pattern("subjectRegExp", &source)?),
            _ => return Err(Problem::SubjectMatch(at.to_string())),
        };
        let issuer = match (self.issuer, self.issuer_reg_exp) {
            (Some(issuer), None) if issuer.is_empty() => {
                return Err(Problem::EmptyIssuer(at.to_string()));
            }
            (Some(issuer), None) => Some(IssuerMatch::Equal(issuer)),
            (None, Some(source)) => Some(IssuerMatch::RegExp(pattern("issuerRegExp", &source)?)),
            (None, None) => None,
            (Some(_), Some(_)) => return Err(Problem::IssuerMatch(at.to_string())),
        };
        Ok(Identity { issuer, subject })
    }
}

/// The signers of `allOf` or `anyOf.signatures` (`at`).
fn resolve_signers(raw: Vec<RawSigner>, base: &Path, at: &str) -> Result<Vec<Signer>, Problem> {
    raw.into_iter()
        .enumerate()
        .map(|(i, signer)| {
            let at = format!("{at}[{i}]");
            match (signer.key, signer.identity) {
                (Some(key), None) => key
                    .resolve(base)
                    .map(Signer::Key)
                    .ok_or_else(|| Problem::SignerKey(at.clone())),
                (None, Some(identity)) => identity.resolve(&at).map(Signer::Identity),
                _ => Err(Problem::SignerKind(at)),
            }
        })
        .collect()
}

impl RawEntry {
    pub(super) fn resolve(
        self,
        base: &Path,
        default: Option<&Verify>,
    ) -> Result<Entry, EntryError> {
        match self {
            RawEntry::Path(path) => Ok(Entry::path(base.join(path))),
            RawEntry::Full(full) => full.resolve(base, default),
        }
    }
}

impl RawFull {
    /// The entry this spells; relative module paths are joined to `base`,
    /// and `default` is the `verify` of an `oci:` module without its own.
    pub fn resolve(self, base: &Path, default: Option<&Verify>) -> Result<Entry, EntryError> {
        let full = self;
        let deadline = full
            .deadline
            .map(|text| match humantime::parse_duration(&text) {
                Ok(d) if !d.is_zero() => Ok(d),
                Ok(_) => Err(Problem::ZeroDeadline),
                Err(source) => Err(Problem::Deadline { text, source }),
            })
            .transpose()?;
        if full.memory_mib == Some(0) {
            return Err(Problem::ZeroMemory.into());
        }
        let module = RawModule {
            module: full.module,
            config_map: full.config_map,
            oci: full.oci,
            pull_secret: full.pull_secret,
            verify: full.verify,
            sha256: full.sha256,
        };
        let (module, verify) = module.resolve(base, "", default)?;
        Ok(Entry {
            module,
            memory_mib: full.memory_mib,
            deadline,
            candidate: full
                .candidate
                .map(|c| {
                    c.resolve(base, "candidate: ", verify.as_ref().or(default))
                        .map(|(m, _)| m)
                })
                .transpose()?,
        })
    }
}

impl RawModule {
    /// The module and the `verify` it was given (not the default), which
    /// its candidate inherits.
    fn resolve(
        mut self,
        base: &Path,
        at: &str,
        default: Option<&Verify>,
    ) -> Result<(Module, Option<Verify>), EntryError> {
        let fail = |problem| EntryError::at(at, problem);
        let verify = self
            .verify
            .take()
            .map(|v| v.resolve(base, &format!("{at}verify: ")))
            .transpose()?;
        let source = match (self.module, self.config_map, self.oci) {
            (Some(path), None, None) => Source::Path(base.join(path)),
            (None, Some(RawConfigMapKey { name, key }), None) => Source::ConfigMap { name, key },
            (None, None, Some(reference)) => {
                let parsed = mco_fetch::oci::parse_reference(&reference).map_err(|e| {
                    fail(Problem::Reference {
                        reference: reference.clone(),
                        detail: e.to_string(),
                    })
                })?;
                if self.sha256.is_some() && parsed.digest().is_none() {
                    return Err(fail(Problem::PinnedTag));
                }
                Source::Oci(OciSource {
                    reference,
                    pull_secret: self.pull_secret.take(),
                    verify: verify.clone().or_else(|| default.cloned()),
                })
            }
            (None, None, None) => return Err(fail(Problem::NoSource)),
            _ => return Err(fail(Problem::Sources)),
        };
        if self.pull_secret.is_some() {
            return Err(fail(Problem::PullSecret));
        }
        if verify.is_some() && !matches!(source, Source::Oci(_)) {
            return Err(fail(Problem::Verify));
        }
        let sha256 = self
            .sha256
            .map(|pin| {
                let hex = pin.strip_prefix("sha256:").unwrap_or(&pin);
                if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    Ok(hex.to_ascii_lowercase())
                } else {
                    Err(fail(Problem::Pin(pin.clone())))
                }
            })
            .transpose()?;
        Ok((Module { source, sha256 }, verify))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `verify` of an `oci:` entry written as YAML, resolved.
    fn verify(yaml: &str) -> Result<Verify, String> {
        let text = format!("oci: r.example/g/mcn:v1\nverify:\n{yaml}");
        let raw: RawFull = serde_saphyr::from_str(&text).map_err(|e| e.to_string())?;
        match raw.resolve(Path::new("/base"), None) {
            Ok(Entry {
                module:
                    Module {
                        source: Source::Oci(OciSource { verify, .. }),
                        ..
                    },
                ..
            }) => verify.ok_or_else(|| "no verify".into()),
            Ok(other) => Err(format!("{other:?}")),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn identities_and_a_quorum_read_as_kubewarden_names_them() {
        let read = verify(
            "  trustedRoot: {configMap: {name: sigstore, key: trusted_root.json}}\n\
             \x20 identities:\n\
             \x20   - {issuer: https://token.actions.githubusercontent.com, subject: {urlPrefix: https://github.com/team}}\n\
             \x20 allOf:\n\
             \x20   - key: {file: release.pub}\n\
             \x20   - identity: {subject: {equal: review@example.com}}\n\
             \x20 anyOf:\n\
             \x20   minimumMatches: 2\n\
             \x20   signatures:\n\
             \x20     - key: {secret: {name: a, key: cosign.pub}}\n\
             \x20     - key: {configMap: {name: b, key: cosign.pub}}\n\
             \x20     - identity: {issuer: https://issuer, subject: {equal: c@example.com}}\n\
             \x20     - identity: {issuerRegExp: 'https://(a|b)\\.example', subjectRegExp: '.+@example\\.com'}\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            read.trusted_root.map(|r| r.to_string()),
            Some("configmap/sigstore[trusted_root.json]".into())
        );
        let identities: Vec<String> = read.identities.iter().map(identity_name).collect();
        assert_eq!(
            identities,
            ["identity https://github.com/team* from https://token.actions.githubusercontent.com"]
        );
        let all_of: Vec<String> = read.all_of.iter().map(ToString::to_string).collect();
        assert_eq!(
            all_of,
            ["key /base/release.pub", "identity review@example.com"]
        );
        let any_of = read.any_of.unwrap_or_else(|| panic!("no anyOf"));
        assert_eq!(any_of.minimum, 2);
        let any_of: Vec<String> = any_of.signers.iter().map(ToString::to_string).collect();
        assert_eq!(
            any_of[2..],
            [
                "identity c@example.com from https://issuer",
                r"identity /.+@example\.com/ from /https://(a|b)\.example/"
            ]
        );
        // minimumMatches defaults to one.
        let one = verify("  anyOf: {signatures: [{key: {file: a.pub}}]}\n");
        assert_eq!(one.map(|v| v.any_of.map(|q| q.minimum)), Ok(Some(1)));
        // The old form still reads, with nothing else.
        let old = verify("  keys: [{file: k.pub}]\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            old,
            Verify::keys(vec![KeySource::File("/base/k.pub".into())])
        );
    }

    #[test]
    fn a_policy_that_cannot_be_met_or_read_is_refused_naming_the_field() {
        let root = "  trustedRoot: {file: root.json}\n";
        let cases = [
            (
                "  identities: [{subject: {equal: a@example.com}}]\n".to_string(),
                "verify: identities are named without trustedRoot",
            ),
            (
                "  allOf: [{identity: {subject: {equal: a@example.com}}}]\n".to_string(),
                "verify: identities are named without trustedRoot",
            ),
            (
                format!("{root}  keys: [{{file: k.pub}}]\n"),
                "verify: trustedRoot is given, and no identity uses it",
            ),
            (
                format!("{root}  identities: [{{subject: {{}}}}]\n"),
                "identities[0]: give one of subject (equal or urlPrefix, not empty) and subjectRegExp",
            ),
            (
                format!("{root}  identities: [{{subject: {{equal: a, urlPrefix: b}}}}]\n"),
                "identities[0]: give one of subject (equal or urlPrefix, not empty) and subjectRegExp",
            ),
            (
                format!("{root}  identities: [{{subject: {{equal: ''}}}}]\n"),
                "identities[0]: give one of subject (equal or urlPrefix, not empty) and subjectRegExp",
            ),
            (
                format!("{root}  identities: [{{issuer: '', subject: {{equal: a}}}}]\n"),
                "identities[0]: issuer is empty",
            ),
            (
                format!("{root}  identities: [{{subject: {{equal: a}}, subjectRegExp: a}}]\n"),
                "identities[0]: give one of subject (equal or urlPrefix, not empty) and subjectRegExp",
            ),
            (
                format!("{root}  identities: [{{issuer: i, issuerRegExp: i, subjectRegExp: a}}]\n"),
                "identities[0]: give one of issuer and issuerRegExp",
            ),
            (
                format!("{root}  identities: [{{subjectRegExp: 'a)|(.*'}}]\n"),
                "identities[0].subjectRegExp: not a regular expression the host takes",
            ),
            (
                format!("{root}  allOf: [{{identity: {{issuerRegExp: '', subjectRegExp: a}}}}]\n"),
                "allOf[0].issuerRegExp: an empty regular expression would admit anyone",
            ),
            (
                "  allOf: [{}]\n".to_string(),
                "verify: allOf[0]: give one of key and identity",
            ),
            (
                "  allOf: [{key: {}}]\n".to_string(),
                "verify: allOf[0]: key: give one of file, configMap and secret",
            ),
            (
                "  anyOf: {signatures: []}\n".to_string(),
                "verify: anyOf lists no signature",
            ),
            (
                "  anyOf: {minimumMatches: 3, signatures: [{key: {file: a.pub}}, {key: {file: b.pub}}]}\n"
                    .to_string(),
                "verify: anyOf: minimumMatches 3 must be from 1 to the 2 signatures listed",
            ),
            (
                "  anyOf: {minimumMatches: 0, signatures: [{key: {file: a.pub}}]}\n".to_string(),
                "minimumMatches 0 must be from 1",
            ),
            (
                "  trustedRoot: {}\n  identities: [{subject: {equal: a}}]\n".to_string(),
                "verify: trustedRoot: give one of file, configMap and secret",
            ),
            (
                "  identities: [{subject: {equal: a}, email: b}]\n".to_string(),
                "unknown field",
            ),
        ];
        for (yaml, reason) in cases {
            match verify(&yaml) {
                Err(e) => assert!(e.contains(reason), "{yaml}: {e}"),
                Ok(v) => panic!("{yaml}: {v:?}"),
            }
        }
    }
}
