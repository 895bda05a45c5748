//! `mco-fetch`: getting a guest module's bytes and deciding whether to
//! trust them, apart from deciding which module serves which job (as
//! Kubewarden keeps its `policy-fetcher` apart from its evaluator): OCI
//! pulls and pushes with their credentials and blob cache (`oci`), the
//! signature policy a module's signatures must meet (`signature_policy`),
//! and the signers OpenShift ClusterImagePolicies name (`image_policy`).
//!
//! It must never depend on `mco-host`, on a job, or on the registry's
//! table, entries or rollout: the host's registry (`registry/fetch.rs`)
//! calls it, never the other way. Its only workspace dependencies are the
//! formats it reads and the sha256-named blobs (`mco-registry-formats`),
//! and the HTTP layer (`mco-http`).

pub mod image_policy;
pub mod oci;
pub mod signature_policy;
pub mod signed_identity;

/// Makes ring the process's rustls crypto provider. kube picks ring itself,
/// but reqwest (under oci-client and the status view's admin client) is
/// built without a provider of its own and panics on building a client
/// unless one is installed. Idempotent: a second call keeps the first.
pub fn install_crypto_provider() {
    let _already_installed = rustls::crypto::ring::default_provider().install_default();
}
