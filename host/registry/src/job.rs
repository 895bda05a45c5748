//! How a job describes itself to the registry ([`JobKind`]), which is all
//! the registry knows of it: each job implements it in its own folder and
//! the composition root registers the implementations ([`Jobs`]). An
//! [`EntryName`] names one registry entry of a kind, `mcn` or
//! `bootImage.<platform>`: what the job serves, not the job.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use super::audit::Audit;
use super::audit::cluster::ReadError;
use super::canary::CanaryField;
use super::slot::{Fetched, Served};
use mco_runtime::{LoadError, Runtime};

/// A job's audit of its candidate on the cluster ([`JobKind::audit`]).
pub type Audited<'a> = Pin<Box<dyn Future<Output = Result<Audit, ReadError>> + 'a>>;

/// The feature gates a reader follows, each with its value in the Default
/// feature set. The jobs declare them (`mco_job::jobs::Contract`); the
/// registry hands them to a job's audit, which reads the cluster's as
/// `run` does.
pub type Modelled = [(&'static str, bool)];

/// What the registry needs to know of a job.
pub trait JobKind: Send + Sync + 'static {
    /// Its key in a registry file and `spec.job` of its MachineConfigGuest;
    /// with the entry key, the `job` label of every metric, log line and
    /// status the host writes.
    fn name(&self) -> &'static str;

    /// What the job's modules do, as the MachineConfigGuest CRD's
    /// description lists it: `MachineConfigNode derivation`.
    fn serves(&self) -> &'static str;

    /// For a job with one entry per key, what the key is: the description
    /// of the key field ([`crate::crd::KEY_FIELD`]), where a
    /// MachineConfigGuest names it. `None` for a job with one entry.
    fn key(&self) -> Option<&'static str>;

    /// The interface a module must export to serve this job.
    fn interface(&self) -> &'static str;

    /// The modules installed beside the host, by entry key: file names in
    /// the guest directory.
    fn installed(&self) -> Vec<(Option<&'static str>, &'static str)>;

    /// Why the host cannot serve without an entry of this job; `None` when
    /// it serves without one.
    fn required(&self) -> Option<&'static str>;

    /// What happens to an object when this job's guest fails on it, as
    /// `/guests` shows.
    fn on_failure(&self) -> &'static str;

    /// The field of `spec.rollout.canary` that names this job's canary
    /// objects, and the type the job reads there (see `canary.rs`).
    fn canary(&self) -> CanaryField;

    /// Loads `fetched`'s module and candidate, each passing this job's
    /// smoke evaluation (see [`Served::load`]).
    fn load(
        &self,
        runtime: &Runtime,
        job: &EntryName,
        fetched: &Fetched,
    ) -> Result<Served, LoadError>;

    /// Decides every current object of `job` in the cluster with the
    /// module and the candidate `served` holds, and compares them
    /// (MachineConfigGuest `spec.audit`), keeping `limit` of each sample.
    /// `gates` are the feature gates the host models (every job's, each
    /// with its Default value), read from the cluster as `run` reads them.
    /// The modules run inside the future, so drive it from a blocking
    /// thread.
    fn audit<'a>(
        &'a self,
        client: &'a kube::Client,
        served: &'a Served,
        job: &'a EntryName,
        limit: usize,
        gates: &'a Modelled,
    ) -> Audited<'a>;
}

/// The name of one registry entry: a job kind and, for a keyed kind, the
/// key. Not `Entry`, which is what serves it (`entries.rs`).
#[derive(Clone)]
pub struct EntryName {
    kind: &'static dyn JobKind,
    key: Option<Arc<str>>,
}

impl EntryName {
    /// The entry of a job with one entry.
    pub fn single(kind: &'static dyn JobKind) -> EntryName {
        EntryName { kind, key: None }
    }

    /// The entry of a keyed job for `key`.
    pub fn keyed(kind: &'static dyn JobKind, key: impl Into<Arc<str>>) -> EntryName {
        EntryName {
            kind,
            key: Some(key.into()),
        }
    }

    pub fn kind(&self) -> &'static dyn JobKind {
        self.kind
    }

    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The interface a module must export to serve this job.
    pub fn interface(&self) -> &'static str {
        self.kind.interface()
    }

    /// Whether this is an entry of `kind`.
    pub fn is(&self, kind: &dyn JobKind) -> bool {
        self.kind.name() == kind.name()
    }

    fn rank(&self) -> (bool, &'static str, Option<&str>) {
        // The jobs the host cannot serve without come first, so that a
        // start that fails names them before the others.
        (self.kind.required().is_none(), self.kind.name(), self.key())
    }
}

impl PartialEq for EntryName {
    fn eq(&self, other: &EntryName) -> bool {
        self.rank() == other.rank()
    }
}

impl Eq for EntryName {}

impl PartialOrd for EntryName {
    fn partial_cmp(&self, other: &EntryName) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for EntryName {
    fn cmp(&self, other: &EntryName) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl Hash for EntryName {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.rank().hash(state);
    }
}

/// `mcn`, `bootImage.<platform>`.
impl fmt::Display for EntryName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            None => f.write_str(self.kind.name()),
            Some(key) => write!(f, "{}.{key}", self.kind.name()),
        }
    }
}

impl fmt::Debug for EntryName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Job({self})")
    }
}

/// The jobs of the host, in the order the composition root registers them.
pub struct Jobs {
    kinds: &'static [&'static dyn JobKind],
    /// The keys of a registry file, for serde's unknown-field message.
    fields: OnceLock<&'static [&'static str]>,
}

/// The top-level key of a registry file that is no job.
pub(super) const VERIFY_FIELD: &str = "verify";

impl Jobs {
    pub const fn new(kinds: &'static [&'static dyn JobKind]) -> Jobs {
        Jobs {
            kinds,
            fields: OnceLock::new(),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &'static dyn JobKind> + '_ {
        self.kinds.iter().copied()
    }

    pub fn named(&self, name: &str) -> Option<&'static dyn JobKind> {
        self.iter().find(|kind| kind.name() == name)
    }

    /// Every job's field of a canary, in order.
    pub fn canaries(&self) -> Vec<CanaryField> {
        self.iter().map(|kind| kind.canary()).collect()
    }

    /// `verify` and every job's name.
    pub(super) fn fields(&self) -> &'static [&'static str] {
        self.fields.get_or_init(|| {
            let fields: Vec<&'static str> = std::iter::once(VERIFY_FIELD)
                .chain(self.iter().map(|kind| kind.name()))
                .collect();
            // Once per registered set of jobs, which lives as long as the
            // process: serde wants the list `'static`.
            Box::leak(fields.into_boxed_slice())
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A job for the registry's own tests, which know no real job: it
    /// loads no module and reads no cluster.
    pub(crate) struct TestJob {
        name: &'static str,
        serves: &'static str,
        key: Option<&'static str>,
        installed: &'static [(Option<&'static str>, &'static str)],
        required: Option<&'static str>,
        canary: CanaryField,
    }

    /// The canary of the tests' `mcn`.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct Pools {
        /// The mcn job: the nodes.
        #[schemars(length(min = 1, max = 64))]
        pub(crate) pools: Vec<String>,
    }

    /// The canary of the tests' `bootImage`.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub(crate) struct MachineSets {
        /// A bootImage job: the MachineSets.
        pub(crate) machine_sets: k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
    }

    const POOLS: CanaryField = CanaryField::of::<Pools>("pools", "the mcn job");

    /// The entry [`test_job`] names.
    static TEST: TestJob = TestJob {
        name: "test",
        serves: "tests",
        key: None,
        installed: &[],
        required: None,
        canary: POOLS,
    };

    /// Two kinds shaped as the host's jobs are (one entry, and one entry
    /// per platform, with the files the host installs), so that the tests
    /// of registry files and MachineConfigGuests read as the files and
    /// objects users write.
    static SINGLE: TestJob = TestJob {
        name: "mcn",
        serves: "MachineConfigNode derivation",
        key: None,
        installed: &[(None, "mcn.wasm")],
        required: Some("the registry names no MachineConfigNode (mcn) guest"),
        canary: POOLS,
    };
    static KEYED: TestJob = TestJob {
        name: "bootImage",
        serves: "boot images for one platform",
        key: Some("the platform, for job `bootImage`."),
        installed: &[
            (Some("GCP"), "bootimage-gcp.wasm"),
            (Some("AWS"), "bootimage-aws.wasm"),
            (Some("Azure"), "bootimage-azure.wasm"),
            (Some("VSphere"), "bootimage-vsphere.wasm"),
        ],
        required: None,
        canary: CanaryField::of::<MachineSets>("machineSets", "a bootImage job"),
    };

    /// The jobs of the registry's tests.
    pub(crate) static JOBS: Jobs = Jobs::new(&[&SINGLE, &KEYED]);

    impl JobKind for TestJob {
        fn name(&self) -> &'static str {
            self.name
        }

        fn serves(&self) -> &'static str {
            self.serves
        }

        fn key(&self) -> Option<&'static str> {
            self.key
        }

        fn interface(&self) -> &'static str {
            "mco:test/none"
        }

        fn installed(&self) -> Vec<(Option<&'static str>, &'static str)> {
            self.installed.to_vec()
        }

        fn required(&self) -> Option<&'static str> {
            self.required
        }

        fn on_failure(&self) -> &'static str {
            "nothing"
        }

        fn canary(&self) -> CanaryField {
            self.canary
        }

        fn load(&self, _: &Runtime, _: &EntryName, fetched: &Fetched) -> Result<Served, LoadError> {
            Err(LoadError::Smoke {
                module: fetched.entry.module.source.to_string(),
                detail: "the test job loads no module".into(),
            })
        }

        fn audit<'a>(
            &'a self,
            _: &'a kube::Client,
            _: &'a Served,
            _: &'a EntryName,
            _: usize,
            _: &'a Modelled,
        ) -> Audited<'a> {
            Box::pin(async { Err(ReadError::Cluster("the test job reads no cluster".into())) })
        }
    }

    /// The entry of the test job.
    pub(crate) fn test_job() -> EntryName {
        EntryName::single(&TEST)
    }

    /// The entry of the tests' `mcn`.
    pub(crate) fn single() -> EntryName {
        EntryName::single(&SINGLE)
    }

    /// An entry of the tests' `bootImage`.
    pub(crate) fn keyed() -> EntryName {
        EntryName::keyed(&KEYED, "GCP")
    }
}
