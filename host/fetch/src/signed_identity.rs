//! A ClusterImagePolicy's `signedIdentity`: which image a signature must
//! claim to be of (the `critical.identity.docker-reference` of cosign's
//! payload), as containers/image's `PolicyReferenceMatch` reads it. Apart
//! from the policy reader (image_policy.rs) so that the requirements
//! (signature_policy.rs), which carry one, do not depend on the reader.

use mco_registry_formats::cosign::{self, Signature};
use oci_client::Reference;
use serde::Deserialize;

/// `policy.signedIdentity`, as upstream's `PolicyIdentity`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SignedIdentitySpec {
    match_policy: String,
    #[serde(default)]
    exact_repository: Option<ExactRepository>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExactRepository {
    repository: String,
}

/// The `matchPolicy` values, as upstream spells them.
const MATCH_REPO_DIGEST_OR_EXACT: &str = "MatchRepoDigestOrExact";
const MATCH_REPOSITORY: &str = "MatchRepository";
const EXACT_REPOSITORY: &str = "ExactRepository";

/// Which image a signature must claim to be of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIdentity {
    /// The `matchPolicy` it comes from, for refusals.
    match_policy: &'static str,
    /// The claim's repository (`registry/path`) must be this, or (a module
    /// pulled by tag under `MatchRepoDigestOrExact`) the claim must be this
    /// `registry/path:tag` exactly.
    expected: Expected,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Expected {
    Repository(String),
    Exact(String),
}

impl SignedIdentity {
    /// Whether `signature` claims the image this identity expects; a
    /// bundle claims none and names the digest only, which is checked.
    pub fn check(&self, signature: &Signature) -> Result<(), String> {
        let Signature::SimpleSigning { payload, .. } = signature else {
            return Ok(());
        };
        let refused = |claim: &str| {
            let expected = match &self.expected {
                Expected::Repository(r) => format!("repository {r}"),
                Expected::Exact(r) => r.clone(),
            };
            Err(format!(
                "signed identity: the signature claims {claim}, not {expected} (signedIdentity {})",
                self.match_policy
            ))
        };
        let Some(claim) = cosign::docker_reference(payload) else {
            return refused("no image (no critical.identity.docker-reference)");
        };
        let Ok(claimed) = Reference::try_from(claim.as_str()) else {
            return refused(&format!("{claim:?}, no image reference"));
        };
        let met = match &self.expected {
            Expected::Repository(expected) => &repository(&claimed) == expected,
            Expected::Exact(expected) => {
                claimed.digest().is_none()
                    && claimed
                        .tag()
                        .is_some_and(|tag| &format!("{}:{tag}", repository(&claimed)) == expected)
            }
        };
        if met { Ok(()) } else { refused(&claim) }
    }
}

/// `registry/repository`, as scopes and errors name it.
pub(crate) fn repository(reference: &Reference) -> String {
    format!("{}/{}", reference.registry(), reference.repository())
}

/// What `signedIdentity` (omitted: `MatchRepoDigestOrExact`) asks of the
/// signatures of `reference`, or why it cannot be verified.
pub(crate) fn signed_identity(
    spec: Option<&SignedIdentitySpec>,
    reference: &Reference,
) -> Result<SignedIdentity, String> {
    let match_policy = spec.map_or(MATCH_REPO_DIGEST_OR_EXACT, |s| s.match_policy.as_str());
    let (match_policy, expected) = match match_policy {
        MATCH_REPO_DIGEST_OR_EXACT => {
            let expected = match (reference.digest(), reference.tag()) {
                (None, Some(tag)) => Expected::Exact(format!("{}:{tag}", repository(reference))),
                _ => Expected::Repository(repository(reference)),
            };
            (MATCH_REPO_DIGEST_OR_EXACT, expected)
        }
        MATCH_REPOSITORY => (
            MATCH_REPOSITORY,
            Expected::Repository(repository(reference)),
        ),
        EXACT_REPOSITORY => {
            let given = spec
                .and_then(|s| s.exact_repository.as_ref())
                .map(|e| e.repository.as_str())
                .ok_or("signedIdentity ExactRepository without exactRepository.repository")?;
            let parsed = Reference::try_from(given)
                .map_err(|e| format!("signedIdentity.exactRepository.repository {given:?}: {e}"))?;
            (EXACT_REPOSITORY, Expected::Repository(repository(&parsed)))
        }
        other => {
            return Err(format!(
                "signedIdentity.matchPolicy {other} is not verified; mco-host verifies \
                 {MATCH_REPO_DIGEST_OR_EXACT}, {MATCH_REPOSITORY} and {EXACT_REPOSITORY}"
            ));
        }
    };
    Ok(SignedIdentity {
        match_policy,
        expected,
    })
}
