//! A registry entry's module bytes, from a file, a ConfigMap's
//! `binaryData` or an OCI registry. Loading is synchronous (it runs off
//! the async workers), so what comes over the network, ConfigMaps and OCI
//! pulls, is read first into a [`Remote`] and looked up here.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use oci_client::secrets::RegistryAuth;
use tokio::task::JoinHandle;

use mco_registry_formats::sigstore::TrustRoot;

use super::entries::{Entry, KeySource, Module, OciSource, Signer, Source, identity_name};
use super::job::EntryName;
use super::slot::Fetched;
use super::table::Registry;
use mco_fetch::image_policy::{self, Listed};
use mco_fetch::oci::{Oci, PullError, Pulled, credential_key, parse_reference};
use mco_fetch::signature_policy::{Policy, Requirement};
use mco_registry_formats::cosign::{self, Key};

/// Why a module's bytes could not be had.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("could not read guest module {path}: {source}")]
    File {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("guest module {module}: {detail}")]
    ConfigMap {
        // Boxed: errors travel in `Result`s, and an OCI source is large.
        module: Box<Source>,
        detail: String,
    },
    /// The pull's own error, which names the reference; its
    /// [`PullError::kind`] tells a timeout from a refused signature.
    #[error("{0}")]
    Oci(Arc<PullError>),
    /// An `oci:` module outside `mco-host run`, which no command pulled.
    #[error("{0}: OCI modules are pulled by mco-host run; try mco-host guests pull")]
    NotPulled(Box<Source>),
    /// The pull goes on past this pass; the entry keeps its module.
    #[error("{0}: still being pulled")]
    Pulling(Box<Source>),
}

/// The ConfigMaps a registry's modules come from, read once per pass.
pub type ConfigMaps = BTreeMap<String, Result<ConfigMap, ConfigMapError>>;

/// Why a ConfigMap a module comes from could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read ConfigMap {name}: {source}")]
pub struct ConfigMapError {
    pub name: String,
    pub source: kube::Error,
}

/// OCI modules pulled for a pass, by the job they were pulled for (its
/// world is checked before the download) and source. The errors are
/// shared: every entry naming the module reads the same one.
pub type Pulls = BTreeMap<(EntryName, OciSource), Result<Pulled, Arc<PullError>>>;

/// Everything a pass read over the network before loading.
#[derive(Debug, Default)]
pub struct Remote {
    pub configmaps: ConfigMaps,
    pub pulls: Pulls,
    /// Pulls that go on past this pass ([`InFlight`]).
    pub pulling: BTreeSet<(EntryName, OciSource)>,
}

/// The OCI modules (active and candidate) a registry names, by job.
pub fn oci_sources(registry: &Registry) -> Vec<(EntryName, OciSource)> {
    let mut sources: Vec<(EntryName, OciSource)> = registry
        .entries()
        .flat_map(|(job, e)| {
            std::iter::once(&e.module)
                .chain(e.candidate.as_ref())
                .filter_map(move |m| match &m.source {
                    Source::Oci(oci) => Some((job.clone(), oci.clone())),
                    _ => None,
                })
        })
        .collect();
    sources.sort();
    sources.dedup();
    sources
}

/// What pulling one `oci:` module takes: its credentials, and the
/// signature policy its `verify` names, read.
pub struct Access {
    pub auth: RegistryAuth,
    pub policy: Option<Policy>,
}

impl Access {
    /// Which credential and which signers, without a secret in the clear:
    /// a module pulled with other ones is pulled again.
    fn fingerprint(&self) -> String {
        let policy = self.policy.as_ref().map(Policy::fingerprint);
        format!(
            "{} {}",
            credential_key(&self.auth),
            policy.unwrap_or_default()
        )
    }
}

/// Pulls that outlast the pass that started them, and the last good pull
/// of each module.
///
/// Each pull has its own deadline (`--oci-pull-timeout`), and a pass waits
/// for them only so long: a slow registry holds up its own entries, which
/// keep their module until the pull ends, and no other.
///
/// A module pulled well is served again, without asking the registry,
/// until `refresh` (`--oci-refresh`) has passed since, as long as its entry
/// names the same source (reference, pull secret, `verify`) and the
/// credentials and signers read for it are the same: polls of an unchanged
/// registry cost the registry nothing, and a tag moved to another module
/// is noticed within `refresh` and one poll. A pull that failed is tried
/// again at the next poll, so a module pushed late, or a registry back,
/// serves as soon as it can.
#[derive(Default)]
pub struct InFlight {
    /// Each with the fingerprint of its access.
    pulls: BTreeMap<(EntryName, OciSource), (Pull, String)>,
    fresh: BTreeMap<(EntryName, OciSource), Fresh>,
    /// Zero (the default): every pass pulls.
    refresh: Duration,
}

/// A pull going on.
type Pull = JoinHandle<Result<Pulled, PullError>>;

/// A module pulled well: what was pulled, with which access
/// ([`Access::fingerprint`]), and when.
struct Fresh {
    pulled: Pulled,
    access: String,
    at: Instant,
}

impl InFlight {
    /// Pulls whose good results are served again for `refresh`.
    pub fn refreshed_every(refresh: Duration) -> InFlight {
        InFlight {
            refresh,
            ..InFlight::default()
        }
    }

    /// The module pulled for `key` with `access`, when still fresh, as
    /// taken from the cache (it was not downloaded again).
    fn fresh(&self, key: &(EntryName, OciSource), access: &str) -> Option<Pulled> {
        let fresh = self.fresh.get(key)?;
        (fresh.access == access && fresh.at.elapsed() < self.refresh).then(|| Pulled {
            cached: true,
            ..fresh.pulled.clone()
        })
    }
}

/// One pass's pulls, by job and source: `None` while still pulling.
pub type Round = BTreeMap<(EntryName, OciSource), Option<Result<Pulled, PullError>>>;

/// Pulls every OCI module of `registry` side by side, with the
/// credentials and keys `access` finds for each. With `wait`, a pull not
/// done by then goes on in `in_flight` (a later pass takes its result);
/// without, every pull is waited for.
pub async fn pull_all<F, Fut>(
    oci: &Oci,
    registry: &Registry,
    access: F,
    in_flight: &mut InFlight,
    wait: Option<Duration>,
) -> Round
where
    F: Fn(OciSource) -> Fut,
    Fut: Future<Output = Result<Access, PullError>>,
{
    let sources = oci_sources(registry);
    // The pulls of modules the registry no longer names are dropped.
    in_flight.pulls.retain(|key, (pull, _)| {
        let named = sources.contains(key);
        if !named {
            pull.abort();
        }
        named
    });
    in_flight.fresh.retain(|key, _| sources.contains(key));
    let mut round = Round::new();
    for key in sources {
        if in_flight.pulls.contains_key(&key) {
            continue;
        }
        match access(key.1.clone()).await {
            Ok(access) => {
                let fingerprint = access.fingerprint();
                if let Some(pulled) = in_flight.fresh(&key, &fingerprint) {
                    round.insert(key, Some(Ok(pulled)));
                    continue;
                }
                let (oci, reference) = (oci.clone(), key.1.reference.clone());
                let export = key.0.interface();
                let pull = async move {
                    let policy = access.policy.as_ref();
                    oci.pull(&reference, &access.auth, policy, Some(export))
                        .await
                };
                in_flight
                    .pulls
                    .insert(key, (tokio::spawn(pull), fingerprint));
            }
            Err(err) => {
                in_flight.fresh.remove(&key);
                round.insert(key, Some(Err(err)));
            }
        }
    }
    let until = wait.map(|wait| tokio::time::Instant::now() + wait);
    for (key, (pull, access)) in &mut in_flight.pulls {
        let joined = match until {
            Some(until) => match tokio::time::timeout_at(until, pull).await {
                Ok(joined) => joined,
                Err(_) => {
                    round.insert(key.clone(), None);
                    continue;
                }
            },
            None => pull.await,
        };
        let pulled = joined.unwrap_or_else(|e| {
            Err(PullError::Stopped {
                reference: key.1.reference.clone(),
                detail: e.to_string(),
            })
        });
        match &pulled {
            Ok(pulled) => {
                let fresh = Fresh {
                    pulled: pulled.clone(),
                    access: std::mem::take(access),
                    at: Instant::now(),
                };
                in_flight.fresh.insert(key.clone(), fresh);
            }
            Err(_) => {
                in_flight.fresh.remove(key);
            }
        }
        round.insert(key.clone(), Some(pulled));
    }
    in_flight
        .pulls
        .retain(|key, _| matches!(round.get(key), Some(None)));
    round
}

/// The signature policy `source.verify` names, its signers read; none
/// when it has no `verify`. Files are read here; `read` reads the others
/// (ConfigMaps and Secrets, in the cluster), and the signers of the
/// ClusterImagePolicies it selects come from `policies`, as listed. A key
/// or trust root that cannot be read fails the pull: a signature
/// requirement is never dropped silently.
pub async fn read_policy<F, Fut, E>(
    source: &OciSource,
    read: F,
    policies: &Listed,
) -> Result<Option<Policy>, PullError>
where
    F: Fn(KeySource) -> Fut,
    Fut: Future<Output = Result<Vec<u8>, E>>,
    E: std::fmt::Display,
{
    let Some(verify) = &source.verify else {
        return Ok(None);
    };
    let fail = |what: String, detail: String| PullError::Key {
        reference: source.reference.clone(),
        key: what,
        detail,
    };
    let trust = match &verify.trusted_root {
        Some(root) => {
            let json = read_source(root, &read)
                .await
                .map_err(|e| fail(format!("trustedRoot {root}"), e))?;
            let trust = TrustRoot::from_trusted_root_json(&json)
                .map_err(|e| fail(format!("trustedRoot {root}"), e.to_string()))?;
            Some((trust, json))
        }
        None => None,
    };
    let signer = async |signer: &Signer| -> Result<Requirement, PullError> {
        match signer {
            Signer::Key(key) => {
                let pem = read_source(key, &read)
                    .await
                    .map_err(|e| fail(key.to_string(), e))?;
                Key::from_pem(&key.to_string(), &pem)
                    .map(Requirement::key)
                    .map_err(|e| fail(key.to_string(), e.to_string()))
            }
            Signer::Identity(identity) => {
                // entries.rs refuses identities without a trusted root.
                let name = identity_name(identity);
                let (trust, json) = trust
                    .as_ref()
                    .ok_or_else(|| fail(name.clone(), "no trustedRoot is given".into()))?;
                Ok(Requirement::certificate(
                    name,
                    trust.clone(),
                    vec![identity.clone()],
                    trust.knows_logs(),
                    &[json.as_slice()],
                ))
            }
        }
    };
    let mut policy = Policy::default();
    for key in &verify.keys {
        policy
            .any_one
            .push(signer(&Signer::Key(key.clone())).await?);
    }
    for identity in &verify.identities {
        policy
            .any_one
            .push(signer(&Signer::Identity(identity.clone())).await?);
    }
    if let Some(selector) = &verify.cluster_image_policies {
        let fail = |detail: String| fail("clusterImagePolicies".into(), detail);
        let reference =
            parse_reference(&source.reference).map_err(|detail| PullError::Reference {
                reference: source.reference.clone(),
                detail,
            })?;
        let listed = policies.as_ref().map_err(|e| fail(e.clone()))?;
        let chosen = image_policy::signers_for(selector, listed, &reference);
        policy
            .any_one
            .extend(chosen.map_err(|e| fail(e.to_string()))?);
    }
    for s in &verify.all_of {
        policy.all_of.push(signer(s).await?);
    }
    if let Some(quorum) = &verify.any_of {
        let mut signers = Vec::new();
        for s in &quorum.signers {
            signers.push(signer(s).await?);
        }
        policy.any_of = Some((quorum.minimum, signers));
    }
    Ok(Some(policy))
}

/// The bytes of a key or trust root: a file's, capped, or what `read`
/// reads of a ConfigMap or Secret.
async fn read_source<F, Fut, E>(source: &KeySource, read: &F) -> Result<Vec<u8>, String>
where
    F: Fn(KeySource) -> Fut,
    Fut: Future<Output = Result<Vec<u8>, E>>,
    E: std::fmt::Display,
{
    match source {
        KeySource::File(path) => cosign::read_key_file(path).map_err(|e| e.to_string()),
        other => read(other.clone()).await.map_err(|e| e.to_string()),
    }
}

/// The ConfigMaps that `registry`'s modules name.
pub fn configmap_names(registry: &Registry) -> Vec<String> {
    let mut names: Vec<String> = registry
        .entries()
        .flat_map(|(_, e)| std::iter::once(&e.module).chain(e.candidate.as_ref()))
        .filter_map(|m| match &m.source {
            Source::ConfigMap { name, .. } => Some(name.clone()),
            Source::Path(_) | Source::Oci(_) => None,
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

fn read_module(
    job: &EntryName,
    module: &Module,
    remote: &Remote,
) -> Result<Arc<Vec<u8>>, FetchError> {
    match &module.source {
        Source::Oci(oci) => match remote.pulls.get(&(job.clone(), oci.clone())) {
            Some(Ok(pulled)) => Ok(pulled.bytes.clone()),
            Some(Err(err)) => Err(FetchError::Oci(err.clone())),
            None if remote.pulling.contains(&(job.clone(), oci.clone())) => {
                Err(FetchError::Pulling(Box::new(module.source.clone())))
            }
            None => Err(FetchError::NotPulled(Box::new(module.source.clone()))),
        },
        Source::Path(path) => {
            std::fs::read(path)
                .map(Arc::new)
                .map_err(|source| FetchError::File {
                    path: path.display().to_string(),
                    source,
                })
        }
        Source::ConfigMap { name, key } => {
            let fail = |detail: String| FetchError::ConfigMap {
                module: Box::new(module.source.clone()),
                detail,
            };
            let cm = match remote.configmaps.get(name) {
                Some(Ok(cm)) => cm,
                Some(Err(err)) => return Err(fail(err.to_string())),
                None => {
                    return Err(fail(
                        "ConfigMap sources are only read in the cluster (mco-host run)".into(),
                    ));
                }
            };
            if let Some(bytes) = cm.binary_data.as_ref().and_then(|d| d.get(key)) {
                return Ok(Arc::new(bytes.0.clone()));
            }
            let in_data = cm.data.as_ref().is_some_and(|d| d.contains_key(key));
            Err(fail(if in_data {
                format!(
                    "key {key} is in data, not binaryData; a module is binary (kubectl create configmap --from-file puts it in binaryData)"
                )
            } else {
                format!("the ConfigMap has no binaryData key {key}")
            }))
        }
    }
}

/// Reads the module and candidate of `job`'s entry.
pub fn fetch(job: &EntryName, entry: &Entry, remote: &Remote) -> Result<Fetched, FetchError> {
    Ok(Fetched {
        entry: entry.clone(),
        bytes: read_module(job, &entry.module, remote)?,
        candidate: entry
            .candidate
            .as_ref()
            .map(|c| read_module(job, c, remote))
            .transpose()?,
    })
}

/// Every entry of a registry, fetched.
pub fn fetch_all(
    registry: &Registry,
    remote: &Remote,
) -> BTreeMap<EntryName, Result<Fetched, FetchError>> {
    registry
        .entries()
        .map(|(job, entry)| (job.clone(), fetch(job, entry, remote)))
        .collect()
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;

    use super::*;
    use crate::entries::Verify;
    use mco_fetch::image_policy::{ImagePolicy, PolicySelector, TEST_KEY_PEM, test_policy};
    use mco_registry_formats::sigstore::{Identity, SubjectMatch};

    /// The names of the keys `verify` gives an `oci:` module, or the error.
    async fn key_names(verify: Verify, policies: &Listed) -> Result<Vec<String>, String> {
        let source = OciSource {
            verify: Some(verify),
            ..OciSource::anonymous("quay.io/team/mcn:v1")
        };
        let read = |_: KeySource| async { Ok::<_, String>(TEST_KEY_PEM.as_bytes().to_vec()) };
        match read_policy(&source, read, policies).await {
            Ok(policy) => Ok(policy
                .into_iter()
                .flat_map(|p| p.any_one)
                .map(|r| r.name)
                .collect()),
            Err(e) => Err(e.to_string()),
        }
    }

    #[tokio::test]
    async fn policy_keys_join_the_entrys_own_and_never_replace_them() {
        let key_data = base64::engine::general_purpose::STANDARD.encode(TEST_KEY_PEM);
        let own = vec![KeySource::ConfigMap {
            name: "cosign".into(),
            key: "team.pub".into(),
        }];
        let both = |policies| Verify {
            cluster_image_policies: policies,
            ..Verify::keys(own.clone())
        };
        let listed: Listed = Ok(vec![test_policy(
            "team",
            &["quay.io/team"],
            "PublicKey",
            &key_data,
        )]);
        assert_eq!(
            key_names(both(Some(PolicySelector::All)), &listed).await,
            Ok(vec![
                "configmap/cosign[team.pub]".to_string(),
                "clusterimagepolicy/team".to_string()
            ])
        );
        // Not asked for: the list is not looked at, even when unreadable.
        let unreadable: Listed = Err("cannot list ClusterImagePolicies: forbidden".into());
        assert_eq!(
            key_names(both(None), &unreadable).await,
            Ok(vec!["configmap/cosign[team.pub]".to_string()])
        );
        // Asked for: what keeps the keys from being read refuses the pull.
        let prefix = "oci:quay.io/team/mcn:v1: verify key clusterImagePolicies: ";
        for (policies, why) in [
            (&unreadable, "cannot list ClusterImagePolicies: forbidden"),
            (
                &Ok(Vec::new()),
                "no ClusterImagePolicy covers quay.io/team/mcn",
            ),
        ] {
            assert_eq!(
                key_names(both(Some(PolicySelector::All)), policies).await,
                Err(format!("{prefix}{why}"))
            );
        }
    }

    /// The largest object the apiserver stores (etcd's default request
    /// limit, 1.5 MiB; a ConfigMap's data stops at 1 MiB): the most a
    /// hostile policy or ConfigMap can hold.
    const APISERVER_OBJECT: usize = 3 << 19;

    /// `n` bytes of base64 text, what fills the objects.
    fn filler(n: usize) -> String {
        "QUJD".repeat(n / 4)
    }

    #[tokio::test]
    async fn an_apiserver_size_trusted_root_is_refused_by_name_unquoted() {
        let source = OciSource {
            verify: Some(Verify {
                trusted_root: Some(KeySource::ConfigMap {
                    name: "sigstore".into(),
                    key: "trusted_root.json".into(),
                }),
                identities: vec![Identity {
                    subject: SubjectMatch::Email("ci@example.com".into()),
                    issuer: None,
                }],
                ..Verify::keys(Vec::new())
            }),
            ..OciSource::anonymous("quay.io/team/mcn:v1")
        };
        // A trusted_root.json whose size is a padding field's, as the
        // ConfigMap's data read whole from the apiserver.
        let json = format!(
            r#"{{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1","padding":"{}"}}"#,
            filler(APISERVER_OBJECT)
        );
        let read = |_: KeySource| {
            let json = json.clone().into_bytes();
            async move { Ok::<_, String>(json) }
        };
        let refused = read_policy(&source, read, &Ok(Vec::new()))
            .await
            .map(|_| ())
            .map_err(|e| e.to_string());
        assert_eq!(
            refused,
            Err(format!(
                "oci:quay.io/team/mcn:v1: verify key trustedRoot configmap/sigstore[trusted_root.json]: \
                 {} bytes is more than a trust root's 262144",
                json.len()
            ))
        );
    }

    #[tokio::test]
    async fn an_apiserver_size_policy_ca_bundle_is_refused_by_name_unquoted() {
        // A PKI policy whose CA bundles fill the object: many copies of a
        // CERTIFICATE block, base64 as the CRD keeps them.
        let block = format!(
            "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
            filler(1024)
        );
        let pem = block.repeat(APISERVER_OBJECT / 2 / block.len() * 3 / 4);
        let bundle = base64::engine::general_purpose::STANDARD.encode(&pem);
        let spec = serde_json::json!({
            "scopes": ["quay.io/team"],
            "policy": {"rootOfTrust": {
                "policyType": "PKI",
                "pki": {
                    "caRootsData": bundle,
                    "caIntermediatesData": bundle,
                    "pkiCertificateSubject": {"email": "ci@example.com"},
                },
            }},
        });
        assert!(spec.to_string().len() > APISERVER_OBJECT * 9 / 10);
        let listed: Listed = Ok(vec![ImagePolicy::decode("team", &spec)]);
        let verify = Verify {
            cluster_image_policies: Some(PolicySelector::All),
            ..Verify::keys(Vec::new())
        };
        assert_eq!(
            key_names(verify, &listed).await,
            Err(format!(
                "oci:quay.io/team/mcn:v1: verify key clusterImagePolicies: clusterimagepolicy/team: \
                 pki: caIntermediatesData: malformed PEM certificates: {} bytes",
                pem.len()
            ))
        );
    }
}
