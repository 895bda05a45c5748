//! `mco-host guests verify REF|FILE`: checks a module's signatures against
//! a signature policy before an entry points at it, and prints what each
//! signature proved, the way `cosign verify` does: the signer (key, or
//! certificate subjects and OIDC issuer), the signing time and the log
//! entry that vouched for it, and which requirement of the policy it met.
//! A refused module exits non-zero with the refusal `run` would give.
//!
//! The policy is an entry's `verify` (`--entry FILE`, a registry entry or
//! a MachineConfigGuest; `--guest JOB`, an entry of `--registry`), or
//! built from flags: keys, a trusted root with identities, and
//! ClusterImagePolicy files verified as the cluster's would be.

use std::path::{Path, PathBuf};

use clap::Args;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::guests::AuthArgs;
use super::offline::{in_cluster_only, runtime};
use super::{Failure, SandboxArgs};
use mco_fetch::image_policy::{ImagePolicy, Listed, PolicySelector};
use mco_fetch::signature_policy::{Evidence, Policy, Verdict};
use mco_registry::crd::MachineConfigGuestSpec;
use mco_registry::entries::{
    Identity, IssuerMatch, KeySource, OciSource, RawFull, Source, SubjectMatch, Verify,
};
use mco_registry::read_policy;

#[derive(Args)]
pub(super) struct VerifyArgs {
    /// An OCI reference (`registry/repository[:tag][@sha256:…]`), or a
    /// file holding an entry (as `--entry`).
    target: Option<String>,
    /// A registry entry in its full form, or a MachineConfigGuest, whose
    /// `verify` (and, without REF, `oci`) is used; relative paths follow
    /// the file.
    #[arg(long, value_name = "FILE", conflicts_with = "guest")]
    entry: Option<PathBuf>,
    /// The job whose entry in `--registry` gives the `verify` (and,
    /// without REF, the module): `mcn`, `bootImage.AWS`.
    #[arg(long, value_name = "JOB")]
    guest: Option<String>,
    /// A cosign public key; repeat for several, any one of which may have
    /// signed the module.
    #[arg(long = "key", value_name = "FILE")]
    keys: Vec<PathBuf>,
    /// A Sigstore trusted_root.json the certificates of `--identity`
    /// chain to.
    #[arg(long, value_name = "FILE")]
    trusted_root: Option<PathBuf>,
    /// A certificate subject (SAN email, URI or DNS name) that may have
    /// signed, exactly; repeat for several.
    #[arg(long = "identity", value_name = "SUBJECT")]
    identities: Vec<String>,
    /// A URI prefix (at a path boundary) a signer's subject may start with.
    #[arg(long = "identity-prefix", value_name = "URL")]
    identity_prefixes: Vec<String>,
    /// The OIDC issuer every `--identity` must have been issued by.
    #[arg(long, value_name = "URL")]
    issuer: Option<String>,
    /// A ClusterImagePolicy (YAML or JSON, as `kubectl get -o yaml` prints
    /// it) whose signer may have signed, if its scopes cover the module.
    #[arg(long = "cluster-image-policy", value_name = "FILE")]
    cluster_image_policies: Vec<PathBuf>,
    #[command(flatten)]
    auth: AuthArgs,
}

/// Why `guests verify` has no module or policy to check.
#[derive(Debug, thiserror::Error)]
pub(super) enum VerifyError {
    #[error("name the module: REF, an entry file, or --guest with --registry")]
    NoModule,
    #[error("give the policy: --entry, --guest, or --key, --identity, --cluster-image-policy")]
    NoPolicy,
    #[error("the policy comes from one place: --entry or --guest, or flags")]
    TwoPolicies,
    #[error("{}: {detail}", path.display())]
    File { path: PathBuf, detail: String },
    #[error("{0} is not an oci: module")]
    NotOci(String),
    #[error("job {0} has no entry in --registry")]
    NoEntry(String),
    #[error("oci:{reference}: {refusal}")]
    Refused {
        reference: String,
        refusal: mco_fetch::signature_policy::Refusal,
    },
}

impl VerifyArgs {
    /// Whether any flag spells a policy.
    fn has_flags(&self) -> bool {
        !self.keys.is_empty()
            || !self.identities.is_empty()
            || !self.identity_prefixes.is_empty()
            || !self.cluster_image_policies.is_empty()
    }

    /// The `verify` the flags spell.
    fn flags_verify(&self) -> Verify {
        let subjects = self
            .identities
            .iter()
            .map(|s| SubjectMatch::Equal(s.clone()))
            .chain(
                self.identity_prefixes
                    .iter()
                    .map(|p| SubjectMatch::UrlPrefix(p.clone())),
            );
        Verify {
            trusted_root: self.trusted_root.clone().map(KeySource::File),
            identities: subjects
                .map(|subject| Identity {
                    issuer: self.issuer.clone().map(IssuerMatch::Equal),
                    subject,
                })
                .collect(),
            cluster_image_policies: (!self.cluster_image_policies.is_empty())
                .then_some(PolicySelector::All),
            ..Verify::keys(self.keys.iter().cloned().map(KeySource::File).collect())
        }
    }

    /// The module and its policy, from REF, an entry file, `--guest` or
    /// the flags.
    fn source(&self, sandbox: &SandboxArgs) -> Result<OciSource, Failure> {
        let (reference, entry_file) = match &self.target {
            Some(target) if Path::new(target).is_file() => (None, Some(PathBuf::from(target))),
            Some(target) => (
                Some(target.strip_prefix("oci:").unwrap_or(target).to_string()),
                None,
            ),
            None => (None, None),
        };
        let entry_file = entry_file.or_else(|| self.entry.clone());
        let from_entry = match (&entry_file, &self.guest) {
            (Some(path), _) => Some(entry_source(path)?),
            (None, Some(job)) => Some(guest_source(sandbox, job)?),
            (None, None) => None,
        };
        let source = match (from_entry, self.has_flags()) {
            (Some(_), true) => return Err(VerifyError::TwoPolicies.into()),
            (Some(mut source), false) => {
                if let Some(reference) = reference {
                    source.reference = reference;
                }
                source
            }
            (None, true) => OciSource {
                verify: Some(self.flags_verify()),
                ..OciSource::anonymous(&reference.ok_or(VerifyError::NoModule)?)
            },
            (None, false) => return Err(VerifyError::NoPolicy.into()),
        };
        if source.verify.is_none() {
            return Err(VerifyError::NoPolicy.into());
        }
        Ok(source)
    }

    /// The ClusterImagePolicies of `--cluster-image-policy`, decoded as
    /// the cluster lists them.
    fn policies(&self) -> Listed {
        self.cluster_image_policies
            .iter()
            .map(|path| {
                let object: Value = read_yaml(path).map_err(|e| e.to_string())?;
                let name = object["metadata"]["name"].as_str().unwrap_or_default();
                Ok(ImagePolicy::decode(name, &object["spec"]))
            })
            .collect()
    }
}

/// A YAML or JSON file, parsed.
fn read_yaml(path: &Path) -> Result<Value, VerifyError> {
    let fail = |detail: String| VerifyError::File {
        path: path.to_path_buf(),
        detail,
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
    serde_saphyr::from_str(&text).map_err(|e| fail(e.to_string()))
}

/// The `oci:` module of an entry file: a MachineConfigGuest's spec, or a
/// registry entry in its full form.
fn entry_source(path: &Path) -> Result<OciSource, VerifyError> {
    let fail = |detail: String| VerifyError::File {
        path: path.to_path_buf(),
        detail,
    };
    let object = read_yaml(path)?;
    let full: RawFull = if object.get("spec").is_some() {
        serde_json::from_value::<MachineConfigGuestSpec>(object["spec"].clone())
            .map_err(|e| fail(format!("spec: {e}")))?
            .entry
    } else {
        serde_json::from_value(object).map_err(|e| fail(e.to_string()))?
    };
    let base = path.parent().unwrap_or(Path::new("."));
    let entry = full.resolve(base, None).map_err(|e| fail(e.to_string()))?;
    match entry.module.source {
        Source::Oci(source) => Ok(source),
        other => Err(VerifyError::NotOci(other.to_string())),
    }
}

/// The `oci:` module of job `name` in `--registry`.
fn guest_source(sandbox: &SandboxArgs, name: &str) -> Result<OciSource, Failure> {
    let registry = sandbox.registry()?;
    let entry = registry
        .entries()
        .find(|(job, _)| job.to_string() == name)
        .map(|(_, entry)| entry)
        .ok_or_else(|| VerifyError::NoEntry(name.to_string()))?;
    match &entry.module.source {
        Source::Oci(source) => Ok(source.clone()),
        other => Err(VerifyError::NotOci(other.to_string()).into()),
    }
}

pub(super) fn run(sandbox: &SandboxArgs, args: VerifyArgs) -> Result<Value, Failure> {
    let source = args.source(sandbox)?;
    let tokio = runtime()?;
    let policy = tokio
        .block_on(read_policy(&source, in_cluster_only, &args.policies()))?
        .ok_or(VerifyError::NoPolicy)?;
    let reference = source.reference.as_str();
    let auth = args.auth.auth(reference)?;
    let oci = sandbox.oci();
    // The pull refuses as `run` would, before any blob is downloaded.
    let pulled = tokio.block_on(oci.pull(reference, &auth, Some(&policy), None))?;
    let parsed = mco_fetch::oci::parse_reference(reference).map_err(|error| {
        super::guests::GuestsError::Reference {
            reference: reference.to_string(),
            error,
        }
    })?;
    let signatures = tokio
        .block_on(oci.signatures(&parsed, &pulled.manifest_digest, &auth))
        .map_err(|error| super::guests::GuestsError::Signatures {
            target: reference.to_string(),
            error,
        })?;
    let now = Timestamp::now().as_second().try_into().unwrap_or_default();
    let verdict = policy
        .verify(&signatures, &pulled.manifest_digest, now)
        .map_err(|refusal| VerifyError::Refused {
            reference: reference.to_string(),
            refusal,
        })?;
    Ok(json!({
        "reference": reference,
        "manifestDigest": pulled.manifest_digest,
        "policy": policy_json(&policy),
        "signatures": signatures
            .iter()
            .enumerate()
            .map(|(i, s)| json!({"form": s.form(), "met": met_json(&verdict, i)}))
            .collect::<Vec<_>>(),
        "verified": true,
    }))
}

/// The policy's groups and the signers each names.
fn policy_json(policy: &Policy) -> Value {
    let names = |rs: &[mco_fetch::signature_policy::Requirement]| {
        rs.iter().map(|r| r.name.clone()).collect::<Vec<_>>()
    };
    json!({
        "anyOne": names(&policy.any_one),
        "allOf": names(&policy.all_of),
        "anyOf": policy.any_of.as_ref().map(|(minimum, rs)| json!({
            "minimumMatches": minimum,
            "signers": names(rs),
        })),
    })
}

/// What signature `index` proved, per requirement it met.
fn met_json(verdict: &Verdict, index: usize) -> Vec<Value> {
    verdict
        .met
        .iter()
        .filter(|m| m.signature == index)
        .map(|m| {
            let mut shown = json!({"requirement": m.requirement, "group": m.group.to_string()});
            match &m.evidence {
                Evidence::Key => shown["key"] = json!(m.requirement),
                Evidence::Certificate(signer) => {
                    shown["subjects"] = json!(signer.subjects);
                    shown["issuer"] = json!(signer.issuer);
                    shown["signedAt"] = json!(
                        i64::try_from(signer.signed_at)
                            .ok()
                            .and_then(|s| Timestamp::from_second(s).ok())
                            .map(|t| t.to_string())
                    );
                    shown["log"] = json!(signer.log.as_ref().map(|l| json!({
                        "index": l.index,
                        "logId": l.log_id,
                    })));
                }
            }
            shown
        })
        .collect()
}
