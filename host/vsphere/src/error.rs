//! What can go wrong, said so that an operator reading a MachineSet's
//! condition knows which vCenter call failed and what vCenter itself said.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// A failed vCenter call (SOAP method or vAPI REST path).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No usable HTTP answer: refused connection, TLS failure (an untrusted
    /// certificate shows here), a connection cut mid-body.
    #[error("{method}: {detail}")]
    Http { method: String, detail: String },
    /// One of [`crate::Timeouts`] ran out. `timeout` names which (`call`,
    /// `task` or `transfer`), so the operator knows which one to raise.
    #[error("{method}: no answer within the {timeout} timeout ({after:?})")]
    Timeout {
        method: String,
        timeout: &'static str,
        after: Duration,
    },
    /// vCenter answered with a SOAP fault: `fault` is its type
    /// (`InvalidLogin`, `ManagedObjectNotFound`, `DuplicateName`, …).
    #[error("{method}: {fault}: {message}")]
    Fault {
        method: String,
        fault: String,
        message: String,
    },
    /// A vCenter task (or an NFC lease) ended in error.
    #[error("{method} task failed: {fault}: {message}")]
    Task {
        method: String,
        fault: String,
        message: String,
    },
    /// The vAPI REST API answered with an error status.
    #[error("{path}: HTTP {status}: {body}")]
    Rest {
        path: String,
        status: u16,
        /// The start of the body (bounded), vAPI's error type is in there.
        body: String,
    },
    /// An answer that is not what the API defines (bad XML, a missing
    /// field, an HTML error page).
    #[error("{method}: malformed answer: {detail}")]
    Malformed { method: String, detail: String },
    /// An answer bigger than this client accepts.
    #[error("{method}: the answer exceeds {limit} bytes")]
    TooLarge { method: String, limit: u64 },
    /// An inventory object that does not exist (or is not of the kind
    /// asked for: a path naming a folder where a cluster was expected).
    #[error("{what} {path:?} not found")]
    NotFound { what: &'static str, path: String },
    /// The VM holding the template name is not a template: importing would
    /// destroy a VM someone uses, so nothing is touched.
    #[error("{name} ({moref}) is a virtual machine, not a template; it is left alone")]
    NotATemplate { name: String, moref: String },
    /// A refusal of this client's own, not vCenter's: a template name
    /// over 80 characters, an unusable CA bundle, an OVA with other than one
    /// network, no usable ESXi host (`all hosts unavailable`), an ambiguous
    /// recovery.
    #[error("{0}")]
    Invalid(String),
}

/// Which stage of [`crate::Session::import_template`] failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    CheckingTemplateName,
    LookingUpDatacenter,
    LookingUpFolder,
    LookingUpComputeCluster,
    LookingUpResourcePool,
    LookingUpDatastore,
    LookingUpNetwork,
    LookingUpVms,
    DestroyingStale { name: String },
    ReadingOva,
    CreatingImportSpec,
    ChoosingHost,
    ImportingVApp,
    Uploading { file: String },
    CompletingUpload,
    SecureBootOff,
    MarkingAsTemplate,
    AttachingTag { tag: String },
    Renaming { from: String, to: String },
    DestroyingOld { name: String },
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::CheckingTemplateName => f.write_str("checking the template name"),
            Step::LookingUpDatacenter => f.write_str("looking up the datacenter"),
            Step::LookingUpFolder => f.write_str("looking up the folder"),
            Step::LookingUpComputeCluster => f.write_str("looking up the compute cluster"),
            Step::LookingUpResourcePool => f.write_str("looking up the resource pool"),
            Step::LookingUpDatastore => f.write_str("looking up the datastore"),
            Step::LookingUpNetwork => f.write_str("looking up the network"),
            Step::LookingUpVms => f.write_str("looking up the existing VMs"),
            Step::DestroyingStale { name } => write!(f, "destroying the stale VM {name}"),
            Step::ReadingOva => f.write_str("reading the OVA"),
            Step::CreatingImportSpec => f.write_str("creating the import spec"),
            Step::ChoosingHost => f.write_str("choosing an ESXi host"),
            Step::ImportingVApp => f.write_str("importing the vApp"),
            Step::Uploading { file } => write!(f, "uploading {file}"),
            Step::CompletingUpload => f.write_str("completing the upload"),
            Step::SecureBootOff => f.write_str("turning EFI secure boot off"),
            Step::MarkingAsTemplate => f.write_str("marking the VM as a template"),
            Step::AttachingTag { tag } => write!(f, "attaching tag {tag}"),
            Step::Renaming { from, to } => write!(f, "renaming {from} to {to}"),
            Step::DestroyingOld { name } => write!(f, "destroying the old template {name}"),
        }
    }
}

/// A failed import: the stage and the call that failed in it.
#[derive(Debug, thiserror::Error)]
#[error("{step}: {source}")]
pub struct ImportError {
    pub step: Step,
    #[source]
    pub source: Error,
}

/// An OVA that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OvaError {
    #[error("cannot read the OVA {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Not a tar, an entry name that is not a plain relative path, too many
    /// entries, not exactly one `.ovf`, a file the OVF references missing.
    #[error("the OVA {path} is not usable: {detail}")]
    Layout { path: PathBuf, detail: String },
    /// The OVF descriptor is not XML, not an OVF envelope, or too big.
    #[error("the OVF descriptor {name} in {path} is not usable: {detail}")]
    Descriptor {
        path: PathBuf,
        name: String,
        detail: String,
    },
}

/// A failed [`crate::OvaCache::fetch`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    #[error("{digest:?} is not a sha256 (64 hex digits)")]
    BadDigest { digest: String },
    #[error("GET {url}: {detail}")]
    Http { url: String, detail: String },
    #[error("GET {url}: HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("GET {url}: not complete within {after:?}")]
    Timeout { url: String, after: Duration },
    #[error("GET {url}: the OVA is larger than the cache ({limit} bytes)")]
    TooLarge { url: String, limit: u64 },
    /// What was downloaded is not what the stream names; nothing is kept.
    #[error("GET {url}: sha256 {actual} does not match the expected {expected}; nothing was kept")]
    DigestMismatch {
        url: String,
        expected: String,
        actual: String,
    },
    #[error("OVA cache {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_errors_say_the_step_then_the_call() {
        let e = ImportError {
            step: Step::Uploading {
                file: "disk-0.vmdk".into(),
            },
            source: Error::Http {
                method: "PUT https://127.0.0.1/nfc/x/disk-0.vmdk".into(),
                detail: "connection reset".into(),
            },
        };
        assert_eq!(
            e.to_string(),
            "uploading disk-0.vmdk: PUT https://127.0.0.1/nfc/x/disk-0.vmdk: connection reset"
        );
        let f = Error::Fault {
            method: "Login".into(),
            fault: "InvalidLogin".into(),
            message: "Login failure".into(),
        };
        assert_eq!(f.to_string(), "Login: InvalidLogin: Login failure");
        let t = Error::Timeout {
            method: "RetrieveServiceContent".into(),
            timeout: "call",
            after: Duration::from_secs(2),
        };
        assert_eq!(
            t.to_string(),
            "RetrieveServiceContent: no answer within the call timeout (2s)"
        );
        assert_eq!(
            Step::Renaming {
                from: "a".into(),
                to: "b".into()
            }
            .to_string(),
            "renaming a to b"
        );
    }
}
