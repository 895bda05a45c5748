//! `mco-host`: runs OpenShift Machine Config logic as sandboxed WebAssembly
//! guests. One folder per job (`mcn`, `bootimage`), each describing itself
//! once to the registry and to the rest of the host ([`jobs::Job`]) and
//! listed once in [`JOBS`]; what the jobs share comes from the workspace
//! crates below (`mco-runtime`: the wasmtime façade; `mco-cluster`: the
//! kube plumbing; `mco-fetch`: module bytes and trust; `mco-registry`:
//! which module serves which job). Here: the composition root of `run` and
//! what it hands each job (`run`, `run_context`), who writes what beside
//! the Machine Config Operator (`ownership`), the cluster's feature gates
//! (`feature_gates`) and the feature sets of CRDs (`crds`), whether this
//! replica still holds the lease (`leadership`), the job-free series
//! (`metrics`), the admin server (`admin`), what `status`, `preflight` and
//! `guests audit` ask of a job (`status_section`, `preflight`,
//! `audit_files`), the manifest reader of the offline commands
//! (`manifests`), the case folders (`cases`, `case_check`), and the
//! command line (`cli`).
pub mod admin;
pub mod audit_files;
pub mod bootimage;
pub mod case_check;
pub mod cases;
pub mod cli;
pub mod crds;
pub mod feature_gates;
pub mod jobs;
pub mod leadership;
pub mod manifests;
pub mod mcn;
pub mod metrics;
pub mod ownership;
pub mod preflight;
pub mod run;
pub mod run_context;
pub mod status_section;
mod telemetry;
pub mod wit;

/// This crate's directory, for its tests and benches to find the repository's files.
/// `cargo test` and `cargo bench` set it when they run a binary; the path
/// compiled in is only the fallback, because it can name another clone:
/// cargo does not rebuild a crate whose checkout moved, and clones share one
/// target directory (`.ci/run`: `~/.cache/mco-wasm/target`).
#[doc(hidden)]
pub fn crate_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| env!("CARGO_MANIFEST_DIR").into(), Into::into)
}

/// The process's rustls crypto provider, installed where the OCI client
/// that needs it lives.
pub use mco_fetch::install_crypto_provider;

/// The jobs of the host: each describes itself to the guest registry,
/// which knows no other, and to the command line ([`jobs::Job`]). A job is
/// added by writing its folder and listing it here.
pub static JOBS: jobs::Jobs = jobs::jobs![mcn::job::Mcn, bootimage::job::BootImage];

/// The CustomResourceDefinitions the host writes to, each with the path
/// under `deploy/` that keeps it: every job's ([`jobs::Job::crds`]), then
/// MachineConfigGuest in the base's `crds/`.
pub fn crds() -> Vec<(
    &'static str,
    k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
)> {
    let mut crds: Vec<_> = JOBS.iter().flat_map(|job| job.crds()).collect();
    crds.push((
        "crds/machineconfigguests.yaml",
        mco_registry::crd::machine_config_guest_crd(&JOBS),
    ));
    crds
}
