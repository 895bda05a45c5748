//! The vCenter side of managed vSphere boot images: a small typed client of
//! the vim25 SOAP API and the vAPI tagging REST API, and on it the import of
//! an RHCOS OVA as a VM template swapped in for the old one (the flow of
//! upstream MCO's `vsphere_helpers.go`, written anew). Nothing vCenter or an
//! OVA returns is trusted: answers are bounded, errors name the call. Why a
//! client of our own, and where vcsim differs: docs/dev/platform-clients.md.
//!
//! - `session`: the SOAP session; `xml`: bounded parsing; `tags`: vAPI tagging;
//! - `inventory`: reads and tasks, `find_vms` and `recover_swap`;
//! - `ova`, `cache`: an OVA opened for import, and the digest-keyed cache;
//! - `import`: the template import and swap; `nfc`: its upload lease;
//! - `error`: what can fail, naming the vCenter call.

mod cache;
mod error;
mod import;
mod inventory;
mod nfc;
mod ova;
mod session;
mod tags;
mod xml;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use sha2::{Digest, Sha256};

pub use cache::OvaCache;
pub use error::{Error, FetchError, ImportError, OvaError, Step};
pub use ova::Ova;
pub use session::Session;

/// The largest SOAP or REST answer read (16 MiB). Paged property
/// retrievals stay far below it; an answer above it is [`Error::TooLarge`].
pub const MAX_BODY: u64 = 16 << 20;

/// The longest template name vCenter accepts for a VM.
pub const MAX_TEMPLATE_NAME: usize = 80;

/// Where and as whom.
#[derive(Clone)]
pub struct Endpoint {
    /// `host[:port]`, as a MachineSet's `providerSpec.value.workspace.server`
    /// names it; the SOAP endpoint is `https://<server>/sdk`.
    pub server: String,
    pub username: String,
    pub password: String,
}

impl fmt::Debug for Endpoint {
    /// Never prints the password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("server", &self.server)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

/// Which certificates a vCenter's TLS is checked against.
#[derive(Clone, Debug)]
pub enum Trust {
    /// The system's roots (through rustls-platform-verifier; on Linux the
    /// CA bundle of the image), as a browser would check vCenter.
    Public,
    /// Only the CAs in this PEM bundle (one or more certificates), nothing
    /// else: a vCenter with its own VMCA-issued certificate.
    Pem(Vec<u8>),
    /// No verification at all: upstream's behaviour (govmomi with
    /// `insecure=true`). Opt-in only; anyone on the path can read the
    /// password.
    InsecureSkipVerify,
}

/// How long each kind of operation may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// One SOAP or REST round trip, connection and TLS included.
    pub call: Duration,
    /// One vCenter task (rename, destroy, reconfigure), or an NFC lease
    /// getting ready, from start to end.
    pub task: Duration,
    /// One file upload to an NFC lease.
    pub transfer: Duration,
}

impl Default for Timeouts {
    /// 60 s per call: a loaded vCenter answers a property retrieval in
    /// seconds, and a minute without an answer is a hung connection, not a
    /// slow one. 10 min per task: destroying a template or preparing an
    /// import lease on a busy datastore takes minutes, not tens of them.
    /// 60 min per upload: an RHCOS disk is about 1.2 GiB, which even a
    /// 1 MB/s path to an ESXi host moves in 20 minutes.
    fn default() -> Timeouts {
        Timeouts {
            call: Duration::from_secs(60),
            task: Duration::from_secs(10 * 60),
            transfer: Duration::from_secs(60 * 60),
        }
    }
}

/// A VM (template or not) found by [`Session::find_vms`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundVm {
    pub name: String,
    /// The managed object ID, e.g. `vm-42`.
    pub moref: String,
    /// The inventory path of the VM's parent folder, e.g.
    /// `/DC0/vm/ci-x7k2p` (no trailing slash); empty for a VM inside a
    /// vApp, which has no parent folder.
    pub folder: String,
    /// `config.template`.
    pub template: bool,
    /// The RHCOS release the VM was imported from: `summary.config.product.version`,
    /// or, when vCenter gives no summary product, the first
    /// `config.vAppConfig.product[].version` (see [`Session::find_vms`]).
    pub release: Option<String>,
    /// The provisioning of the first virtual disk with a flat backing.
    pub disk_type: Option<DiskType>,
}

/// A disk provisioning type, spelled as install-config's
/// `platform.vsphere.diskType` spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DiskType {
    Thin,
    Thick,
    EagerZeroedThick,
}

impl DiskType {
    /// The install-config (and `OvfCreateImportSpecParams.diskProvisioning`)
    /// spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DiskType::Thin => "thin",
            DiskType::Thick => "thick",
            DiskType::EagerZeroedThick => "eagerZeroedThick",
        }
    }
}

impl fmt::Display for DiskType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An install-config disk type this client does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("disk provisioning type {0:?} is not supported")]
pub struct UnknownDiskType(pub String);

impl FromStr for DiskType {
    type Err = UnknownDiskType;

    /// Exactly the install-config spellings (case-sensitive, as upstream).
    fn from_str(s: &str) -> Result<DiskType, UnknownDiskType> {
        match s {
            "thin" => Ok(DiskType::Thin),
            "thick" => Ok(DiskType::Thick),
            "eagerZeroedThick" => Ok(DiskType::EagerZeroedThick),
            other => Err(UnknownDiskType(other.to_owned())),
        }
    }
}

/// What [`Session::recover_swap`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recovery {
    Nothing,
    /// The VM named `from` (the `mco-old-` name) took the final name back.
    RenamedBack {
        from: String,
    },
    /// The template of the final name exists and so did the old one, as
    /// `name` (the `mco-old-` name): a swap whose last step, destroying the
    /// old template, did not happen. The leftover was destroyed.
    RemovedLeftover {
        name: String,
    },
}

/// `"<prefix>-<first 4 bytes of sha256(name) as lowercase hex>"`, e.g.
/// `mco-tmp-1a2b3c4d`: fixed length whatever the final name, so it always
/// fits vCenter's 80 characters, and the same for every pass, so a later
/// pass finds what an interrupted one left.
pub fn temp_name(prefix: &str, name: &str) -> String {
    let digest = Sha256::digest(name.as_bytes());
    format!("{prefix}-{}", hex::encode(&digest[..4]))
}

/// Everything [`Session::import_template`] needs to know, as a MachineSet
/// and its failure domain name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportPlan {
    /// The failure domain's `topology.datacenter`: a name (`DC0`) or an
    /// inventory path (`/DC0`, `/Folder/DC0`).
    pub datacenter: String,
    /// `workspace.folder`, an inventory path (`/DC0/vm/ci`).
    pub folder: String,
    /// `topology.computeCluster`, an inventory path (`/DC0/host/DC0_C0`).
    pub compute_cluster: String,
    /// `workspace.resourcePool`, an inventory path.
    pub resource_pool: String,
    /// `workspace.datastore`: an inventory path or a bare name (looked up
    /// in the datacenter's datastore folder).
    pub datastore: String,
    /// `topology.networks[0]`: a network name as the compute cluster sees
    /// it (`VM Network`, or a distributed portgroup's name).
    pub network: String,
    /// The final template name (at most 80 characters).
    pub template: String,
    /// `None`: the datastore's default policy.
    pub disk_type: Option<DiskType>,
    /// Tags to attach, each a tag ID (`urn:vmomi:InventoryServiceTag:…`)
    /// or a tag name (looked up among all tags; the first of that name).
    pub tags: Vec<String>,
}

/// What [`Session::import_template`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Imported {
    /// The template was imported; `swapped`: an old template of the same
    /// name was replaced.
    New { moref: String, swapped: bool },
    /// The folder's template already holds the OVA's release (another
    /// MachineSet of the failure domain had it imported earlier in the
    /// pass): nothing was changed.
    Current { moref: String },
}

impl Imported {
    /// The managed object ID of the template now under the final name.
    pub fn moref(&self) -> &str {
        match self {
            Imported::New { moref, .. } | Imported::Current { moref } => moref,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_fixed_length_and_stable() {
        // sha256("") starts e3b0c442.
        assert_eq!(temp_name("mco-tmp", ""), "mco-tmp-e3b0c442");
        // sha256("abc") starts ba7816bf.
        assert_eq!(temp_name("mco-old", "abc"), "mco-old-ba7816bf");
        let long = "x".repeat(80);
        assert_eq!(temp_name("mco-tmp", &long).len(), 16);
        assert_eq!(
            temp_name("mco-tmp", "ci-x7k2p-rhcos-generated-0").len(),
            "mco-tmp-".len() + 8
        );
    }

    #[test]
    fn disk_types_round_trip_in_install_config_spelling() {
        for t in [DiskType::Thin, DiskType::Thick, DiskType::EagerZeroedThick] {
            assert_eq!(t.to_string().parse::<DiskType>(), Ok(t));
        }
        assert_eq!(
            "eagerZeroedThick".parse::<DiskType>(),
            Ok(DiskType::EagerZeroedThick)
        );
        let err = "Thin".parse::<DiskType>().unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"disk provisioning type "Thin" is not supported"#
        );
        assert!("".parse::<DiskType>().is_err());
    }

    #[test]
    fn timeouts_default_as_documented() {
        let t = Timeouts::default();
        assert_eq!(t.call, Duration::from_secs(60));
        assert_eq!(t.task, Duration::from_secs(600));
        assert_eq!(t.transfer, Duration::from_secs(3600));
    }

    /// The integrator spawns these on a multi-threaded runtime.
    #[allow(dead_code)]
    fn futures_are_send(s: &Session, p: &ImportPlan, o: &Ova, c: &OvaCache) {
        fn send<T: Send>(_: T) {}
        send(s.find_vms("DC0", &[]));
        send(s.recover_swap("DC0", "/DC0/vm", "x"));
        send(s.import_template(p, o));
        send(c.fetch("u", "d", Duration::ZERO));
        fn sync<T: Send + Sync>() {}
        sync::<Session>();
        sync::<Ova>();
        sync::<OvaCache>();
    }

    #[test]
    fn an_endpoint_never_prints_its_password() {
        let e = Endpoint {
            server: "vc".into(),
            username: "u".into(),
            password: "hunter2".into(),
        };
        assert!(!format!("{e:?}").contains("hunter2"));
    }
}
