//! Why a registry entry cannot be served (entries.rs reads them): each
//! message names the field and what it must hold.

use mco_registry_formats::sigstore::PatternError;

/// Why an entry, a module of it or its `verify` says nothing the host can
/// serve; `at` names the part (`candidate: `, `verify: `), empty for the
/// entry's own module.
#[derive(Debug, thiserror::Error)]
#[error("{at}{problem}")]
pub struct EntryError {
    at: String,
    problem: Problem,
}

impl EntryError {
    pub(crate) fn at(at: &str, problem: Problem) -> EntryError {
        EntryError {
            at: at.to_string(),
            problem,
        }
    }
}

impl From<Problem> for EntryError {
    fn from(problem: Problem) -> EntryError {
        EntryError::at("", problem)
    }
}

/// What is wrong, without where (`EntryError` adds that).
#[derive(Debug, thiserror::Error)]
pub(crate) enum Problem {
    #[error(
        "keys lists no key, and no other signer is named (identities, clusterImagePolicies, allOf, anyOf)"
    )]
    NoKeys,
    #[error(
        "identities are named without trustedRoot, the Sigstore trusted root their certificates chain to"
    )]
    NoTrustedRoot,
    #[error("trustedRoot is given, and no identity uses it")]
    UnusedTrustedRoot,
    #[error("{0}: give one of key and identity")]
    SignerKind(String),
    #[error("{0}: give one of subject (equal or urlPrefix, not empty) and subjectRegExp")]
    SubjectMatch(String),
    #[error("{0}: give one of issuer and issuerRegExp")]
    IssuerMatch(String),
    #[error("{at}.{field}: {error}")]
    Pattern {
        at: String,
        field: &'static str,
        error: PatternError,
    },
    #[error("{0}: issuer is empty")]
    EmptyIssuer(String),
    #[error("anyOf lists no signature")]
    NoQuorum,
    #[error("anyOf: minimumMatches {minimum} must be from 1 to the {listed} signatures listed")]
    Minimum { minimum: usize, listed: usize },
    #[error("clusterImagePolicies is true or a list of ClusterImagePolicy names, not {0}")]
    Policies(String),
    #[error("clusterImagePolicies lists no policy")]
    NoPolicies,
    #[error("clusterImagePolicies: {0} is not a ClusterImagePolicy name")]
    PolicyName(String),
    #[error("keys[{0}]: give one of file, configMap and secret")]
    KeySource(usize),
    #[error("{0}: key: give one of file, configMap and secret")]
    SignerKey(String),
    #[error("trustedRoot: give one of file, configMap and secret")]
    TrustedRootSource,
    #[error("deadline must be above zero")]
    ZeroDeadline,
    #[error("deadline {text:?}: {source}")]
    Deadline {
        text: String,
        source: humantime::DurationError,
    },
    #[error("memoryMiB must be above zero")]
    ZeroMemory,
    #[error("oci {reference:?}: {detail}")]
    Reference { reference: String, detail: String },
    #[error("a pinned OCI module is named by digest (oci: …@sha256:…), not by tag")]
    PinnedTag,
    #[error("module, configMap or oci is required")]
    NoSource,
    #[error("give one of module, configMap and oci")]
    Sources,
    #[error("pullSecret goes with oci only")]
    PullSecret,
    #[error("verify goes with oci only (a file or ConfigMap module is pinned with sha256)")]
    Verify,
    #[error("sha256 {0:?} is not 64 hex digits")]
    Pin(String),
}
