//! End-to-end test harness for mco-wasm: a real kube-apiserver and etcd as
//! child processes on loopback, with static-token identities so tests act as
//! the controller's ServiceAccount under RBAC, minimal OpenShift CRDs, vcsim
//! and moto. No mock servers: what passes here has passed admission,
//! validation, server-side apply and RBAC of a real apiserver. What each part
//! stands in for, and the environment variables: docs/dev/testing.md.
//!
//! ```no_run
//! # async fn f() -> anyhow::Result<()> {
//! use mco_e2e::{ControlPlane, User};
//! let sa = User::service_account("mco-system", "mco-host");
//! let cp = ControlPlane::builder().user(sa.clone()).start().await?;
//! cp.install_openshift_crds().await?;
//! let admin = cp.admin_client()?;
//! let as_controller = cp.client_for(&sa.name)?;
//! let kubeconfig = cp.kubeconfig_for(&sa.name)?; // for `mco-host run --kubeconfig`
//! # Ok(()) }
//! ```
//!
//! - `control_plane`, `process`, `users`: the apiserver and etcd, as whom;
//! - `crds`: the OpenShift CRDs; `http`: small HTTP helpers;
//! - `vcsim`, `ova`, `mirror`: vCenter, OVAs and their HTTP mirror;
//! - `moto`: a real EC2.

mod control_plane;
mod crds;
mod http;
mod mirror;
pub mod moto;
pub mod ova;
mod process;
mod users;
mod vcsim;

pub use control_plane::{
    ControlPlane, ControlPlaneBuilder, DEFAULT_START_TIMEOUT, FIELD_MANAGER, StartTimings,
    envtest_bin_dir, keep_dirs,
};
pub use crds::{FeatureSet, crds_dir, load_crd_dir, openshift};
pub use http::{http_get, http_get_as};
pub use mco_test_support::kustomize::{KUSTOMIZE_VERSION, kustomize, kustomize_build};
pub use mco_test_support::{large, pki};
pub use mirror::Mirror;
pub use process::tail;
pub use users::{ADMIN_USER, User};
pub use vcsim::Vcsim;

/// This crate's directory, for the harness and the tests to find the repository's files.
/// `cargo test` and `cargo bench` set it when they run a binary; the path
/// compiled in is only the fallback, because it can name another clone:
/// cargo does not rebuild a crate whose checkout moved, and clones share one
/// target directory (`.ci/run`: `~/.cache/mco-wasm/target`).
pub fn crate_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| env!("CARGO_MANIFEST_DIR").into(), Into::into)
}
