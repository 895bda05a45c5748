//! `mco-job`: what the host gives every job, and asks of it. The jobs
//! (crates `mco-job-mcn` and `mco-job-bootimage`) build on this crate, which names
//! none of them; `mco-host` lists them once and runs them. Here: the job contract ([`jobs::Job`]) with its bench and scaffold
//! sides (`jobs`), what `run` hands a job it starts (`run_context`),
//! whether this replica still holds the lease (`leadership`), who writes
//! what beside the Machine Config Operator (`ownership`), the cluster's
//! feature gates (`feature_gates`) and the feature sets of CRDs (`crds`),
//! the job-free series (`metrics`), what `status`, `preflight` and
//! `guests audit` ask of a job (`status_section`, `preflight`,
//! `audit_files`), the manifest reader of the offline commands
//! (`manifests`) and the check of one case folder (`case_check`). It names
//! no job.
pub mod audit_files;
pub mod case_check;
pub mod crds;
pub mod feature_gates;
pub mod jobs;
pub mod leadership;
pub mod manifests;
pub mod metrics;
pub mod ownership;
pub mod preflight;
pub mod run_context;
pub mod status_section;

/// The directory of the crate whose tests or benches run, for them to find
/// the repository's files: `cargo test` and `cargo bench` set
/// `CARGO_MANIFEST_DIR` when they run a binary. `compiled`, the calling
/// crate's `env!("CARGO_MANIFEST_DIR")`, is only the fallback, because it
/// can name another clone: cargo does not rebuild a crate whose checkout
/// moved, and clones share one target directory (`.ci/run`:
/// `~/.cache/mco-wasm/target`).
#[doc(hidden)]
pub fn crate_dir(compiled: &'static str) -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| compiled.into(), Into::into)
}
