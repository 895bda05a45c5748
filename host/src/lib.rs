//! `mco-host`: runs OpenShift Machine Config logic as sandboxed WebAssembly
//! guests. One folder per job (`mcn`, `bootimage`: objects, rules, guest
//! binding, controller, writes, eval inputs), the cluster plumbing both use
//! (`cluster`), which module serves which job (the `mco-registry` crate),
//! the wasmtime façade that knows no job (`runtime`), the manifest reader
//! of the `eval` inputs (`manifests`), who writes what beside the Machine
//! Config Operator (`ownership`, with `mco-registry`'s decision
//! comparison), the cluster's feature gates (`feature_gates`) and the
//! feature sets of CRDs (`crds`), whether this replica still holds the
//! lease (`leadership`), the series each of them counts (`metrics`), the
//! composition root of `run` and what it hands each job (`run`,
//! `run_context`), and the command line (`cli`).
pub mod admin;
pub mod audit_files;
pub mod bootimage;
pub mod case_check;
pub mod cases;
pub mod cli;
pub mod crds;
pub use mco_cluster as cluster;
pub use mco_cluster::typed_resource;
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
pub use mco_runtime as runtime;
pub use mco_runtime::blob;
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
