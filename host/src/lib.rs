//! `mco-host`: runs OpenShift Machine Config logic as sandboxed WebAssembly
//! guests. Each job is a crate over `mco-job` (the job contract,
//! [`mco_job::jobs::Job`], and what a job is given), listed once in
//! [`JOBS`]; the layers below come from the workspace crates (`mco-runtime`:
//! the wasmtime façade; `mco-cluster`: the kube plumbing; `mco-fetch`:
//! module bytes and trust; `mco-registry`: which module serves which job).
//! Here: the composition root of `run` (`run`), the admin server (`admin`),
//! the case folders of every job (`cases`), the WIT package (`wit`), and
//! the command line (`cli`).
pub mod admin;
pub mod cases;
pub mod cli;
pub mod run;
mod telemetry;
pub mod wit;

/// This crate's directory, for its tests and benches to find the
/// repository's files ([`mco_job::crate_dir`]).
#[doc(hidden)]
pub fn crate_dir() -> std::path::PathBuf {
    mco_job::crate_dir(env!("CARGO_MANIFEST_DIR"))
}

/// The process's rustls crypto provider, installed where the OCI client
/// that needs it lives.
pub use mco_fetch::install_crypto_provider;

/// The jobs of the host: each describes itself to the guest registry,
/// which knows no other, and to the command line ([`mco_job::jobs::Job`]). A job is
/// added by writing its crate (`host/jobs/`) and listing it here.
pub static JOBS: mco_job::jobs::Jobs =
    mco_job::jobs![mco_job_mcn::job::Mcn, mco_job_bootimage::job::BootImage];

/// Every job's feature gates, in [`JOBS`] order: the gates `run` follows
/// and `eval`, `preflight` and `guests audit` read and show (each hands
/// them to the job it asks), so each command models the cluster's gates
/// the same way, whichever job asks.
pub static FEATURE_GATES: std::sync::LazyLock<Vec<(&'static str, bool)>> =
    std::sync::LazyLock::new(|| {
        JOBS.iter()
            .flat_map(|job| job.contract().feature_gates.iter().copied())
            .collect()
    });

/// The CustomResourceDefinitions the host writes to, each with the path
/// under `deploy/` that keeps it: every job's ([`mco_job::jobs::Contract::crds`]), then
/// MachineConfigGuest in the base's `crds/`. An error is a job's canary
/// type without a schema.
pub fn crds() -> Result<
    Vec<(
        &'static str,
        k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    )>,
    mco_registry::canary::CanarySchemaError,
>{
    let mut crds: Vec<_> = JOBS
        .iter()
        .filter_map(|job| job.contract().crds)
        .flat_map(|crds| crds())
        .collect();
    crds.push((
        "crds/machineconfigguests.yaml",
        mco_registry::crd::machine_config_guest_crd(&JOBS)?,
    ));
    Ok(crds)
}

#[cfg(test)]
mod tests {
    use std::ops::Deref;

    /// One line lists a job for the registry and the command line alike.
    #[test]
    fn every_job_listed_is_a_job_of_the_registry() {
        let listed: Vec<&str> = super::JOBS.iter().map(|job| job.name()).collect();
        let registered: Vec<&str> = super::JOBS.deref().iter().map(|kind| kind.name()).collect();
        assert_eq!(listed, registered);
        assert_eq!(listed, ["mcn", "bootImage"]);
    }

    /// The gates every command models are each job's, in the order jobs
    /// are listed: `preflight` of one job shows the others' too.
    #[test]
    fn the_modelled_gates_are_every_jobs_in_job_order() {
        let expected: Vec<_> =
            [mco_job_mcn::FEATURE_GATES, mco_job_bootimage::FEATURE_GATES].concat();
        assert_eq!(*super::FEATURE_GATES, expected);
        assert!(expected.contains(&(mco_mcn::IMAGE_MODE_STATUS_REPORTING, false)));
    }

    /// The registry `run` starts from when none is given serves every
    /// job's modules shipped beside the host, each by its entry.
    #[test]
    fn the_installed_registry_names_every_jobs_installed_modules() {
        use mco_registry::entries::Source;
        use mco_registry::{EntryName, table::Registry};

        let dir = std::path::Path::new("/g");
        let registry = Registry::installed(dir, &super::JOBS);
        let mut served = 0;
        for kind in super::JOBS.deref().iter() {
            for (key, file) in kind.installed() {
                let job = key.map_or_else(
                    || EntryName::single(kind),
                    |key| EntryName::keyed(kind, key),
                );
                let source = registry.get(&job).map(|e| e.module.source.clone());
                assert_eq!(source, Some(Source::Path(dir.join(file))), "{job}");
                served += 1;
            }
        }
        // The MCN module and one per boot image platform.
        assert_eq!(served, 5);
    }
}
