//! Stub Ignition upgrade (spec 2.2 → 3.5) for the MachineSet user-data Secret.
//!
//! Clusters installed before OpenShift 4.6 boot workers from a spec 2 stub
//! that newer RHCOS boot images cannot read, so the stub must be converted
//! before a MachineSet moves to such an image. This mirrors MCO's
//! `ParseAndConvertConfig` (`IgnParseWrapper` → `removeIgnDuplicateFilesUnitsUsers`
//! → ign-converter `v23tov30` with only the root filesystem mapped), limited
//! to what a stub can contain; anything the converter would refuse, and the
//! rarely-used disk/RAID sections, is an error so that no MachineSet is moved
//! to an image its machines could not boot from.

use serde::Serialize;
use serde_json::Value;

/// The version upstream converts to (`IgnitionDefaultVersion`).
pub const STUB_TARGET_VERSION: &str = "3.5.0";
/// Set on the Secret after a conversion, value [`STUB_TARGET_VERSION`].
pub const ANNOTATION_UPGRADED_TO: &str =
    "machineconfiguration.openshift.io/stub-ignition-upgraded-to";
/// Set on the Secret after a conversion, value RFC 3339 time. Guests have no
/// clock, so only the host can fill it in.
pub const ANNOTATION_UPGRADED_AT: &str =
    "machineconfiguration.openshift.io/stub-ignition-upgraded-at";

const SUPPORTED: &str = "Supported spec versions: 2.2, 3.0, 3.1, 3.2, 3.3, 3.4, 3.5";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StubUpgrade {
    /// Spec 3 already (`ignition.version` starts with "3"): leave it alone.
    AlreadyCurrent,
    /// The converted spec 3.5 config as JSON text.
    Converted(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StubError {
    #[error("converting ignition stub failed: failed to unmarshal decoded user-data to json: {0}")]
    NotJson(String),
    #[error("converting ignition stub failed: failed to find version field in ignition: {0}")]
    Version(String),
    #[error("converting ignition stub failed: failed to parse Ignition config: {0}")]
    Parse(String),
    #[error("converting ignition stub failed: {0}")]
    Dedupe(String),
    #[error(
        "converting ignition stub failed: failed to convert Ignition config spec v2 to v3: unable to convert Ignition spec v2 config to v3: {0}"
    )]
    Convert(String),
}

/// Converts a spec 2.2 stub to spec 3.5, or reports that it is spec 3 already.
pub fn upgrade_stub(user_data: &str) -> Result<StubUpgrade, StubError> {
    let raw: Value =
        serde_json::from_str(user_data).map_err(|e| StubError::NotJson(e.to_string()))?;
    let version = match raw.get("ignition") {
        None | Some(Value::Null) => String::new(),
        Some(Value::Object(ign)) => match ign.get("version") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(v)) => v.clone(),
            Some(other) => {
                return Err(StubError::Version(format!(
                    ".ignition.version accessor error: {} is of the type {}, expected string",
                    other,
                    crate::fields::kind_of(other)
                )));
            }
        },
        Some(other) => {
            return Err(StubError::Version(format!(
                ".ignition accessor error: {} is of the type {}, expected object",
                other,
                crate::fields::kind_of(other)
            )));
        }
    };
    if !raw.is_object() {
        return Err(StubError::NotJson(format!(
            "expected a JSON object, got {}",
            crate::fields::kind_of(&raw)
        )));
    }
    if version.starts_with('3') {
        return Ok(StubUpgrade::AlreadyCurrent);
    }
    if version != "2.2.0" {
        let what = if is_semver(&version) {
            "unknown"
        } else {
            "invalid"
        };
        return Err(StubError::Parse(format!(
            "parsing Ignition config failed: {what} version. {SUPPORTED}"
        )));
    }
    let cfg: v2::Config = serde_json::from_value(raw).map_err(|e| {
        StubError::Parse(format!("parsing Ignition spec v2 failed with error: {e}"))
    })?;
    v2::validate(&cfg).map_err(|e| {
        StubError::Parse(format!("parsing Ignition spec v2 failed with error: {e}"))
    })?;
    let cfg = dedupe(cfg).map_err(StubError::Dedupe)?;
    let out = translate(cfg).map_err(StubError::Convert)?;
    serde_json::to_string(&out)
        .map(StubUpgrade::Converted)
        .map_err(|e| StubError::Convert(e.to_string()))
}

/// `x.y.z` with an optional pre-release/build suffix, the shape Ignition's
/// semver parser accepts; it decides between "unknown" and "invalid".
fn is_semver(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Spec 2.2 as the Go types read it; unknown fields are ignored like Go does.
mod v2 {
    use serde::Deserialize;

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Config {
        pub ignition: Option<Ignition>,
        pub networkd: Option<Networkd>,
        pub passwd: Option<Passwd>,
        pub storage: Option<Storage>,
        pub systemd: Option<Systemd>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Ignition {
        pub config: Option<IgnitionConfig>,
        pub security: Option<Security>,
        pub timeouts: Option<Timeouts>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct IgnitionConfig {
        pub append: Option<Vec<Reference>>,
        pub replace: Option<Reference>,
    }

    #[derive(Debug, Default, Clone, Deserialize)]
    #[serde(default)]
    pub struct Reference {
        pub source: Option<String>,
        pub verification: Option<Verification>,
    }

    #[derive(Debug, Default, Clone, Deserialize)]
    #[serde(default)]
    pub struct Verification {
        pub hash: Option<String>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Security {
        pub tls: Option<Tls>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Tls {
        #[serde(rename = "certificateAuthorities")]
        pub certificate_authorities: Option<Vec<Reference>>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Timeouts {
        #[serde(rename = "httpResponseHeaders")]
        pub http_response_headers: Option<i64>,
        #[serde(rename = "httpTotal")]
        pub http_total: Option<i64>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Networkd {
        pub units: Option<Vec<serde_json::Value>>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Passwd {
        pub users: Option<Vec<User>>,
        pub groups: Option<Vec<Group>>,
    }

    #[derive(Debug, Default, Clone, Deserialize)]
    #[serde(default)]
    pub struct User {
        pub name: Option<String>,
        #[serde(rename = "passwordHash")]
        pub password_hash: Option<String>,
        #[serde(rename = "sshAuthorizedKeys")]
        pub ssh_authorized_keys: Option<Vec<String>>,
        pub uid: Option<i64>,
        pub gecos: Option<String>,
        #[serde(rename = "homeDir")]
        pub home_dir: Option<String>,
        #[serde(rename = "noCreateHome")]
        pub no_create_home: Option<bool>,
        #[serde(rename = "primaryGroup")]
        pub primary_group: Option<String>,
        pub groups: Option<Vec<String>>,
        #[serde(rename = "noUserGroup")]
        pub no_user_group: Option<bool>,
        #[serde(rename = "noLogInit")]
        pub no_log_init: Option<bool>,
        pub shell: Option<String>,
        pub system: Option<bool>,
        /// Deprecated in spec 2; the converter refuses deprecated fields.
        pub create: Option<serde_json::Value>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Group {
        pub name: Option<String>,
        pub gid: Option<i64>,
        #[serde(rename = "passwordHash")]
        pub password_hash: Option<String>,
        pub system: Option<bool>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Storage {
        pub disks: Option<Vec<serde_json::Value>>,
        pub raid: Option<Vec<serde_json::Value>>,
        pub filesystems: Option<Vec<Filesystem>>,
        pub files: Option<Vec<File>>,
        pub directories: Option<Vec<Node>>,
        pub links: Option<Vec<Link>>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Filesystem {
        pub name: Option<String>,
    }

    #[derive(Debug, Default, Clone, Deserialize)]
    #[serde(default)]
    pub struct NodeOwner {
        pub id: Option<i64>,
        pub name: Option<String>,
    }

    /// Also used for directories, which have no fields beyond a node's.
    #[derive(Debug, Default, Clone, Deserialize)]
    #[serde(default)]
    pub struct Node {
        pub filesystem: Option<String>,
        pub path: Option<String>,
        pub user: Option<NodeOwner>,
        pub group: Option<NodeOwner>,
        pub overwrite: Option<bool>,
        pub mode: Option<i64>,
    }

    #[derive(Debug, Default, Clone, Deserialize)]
    #[serde(default)]
    pub struct File {
        #[serde(flatten)]
        pub node: Node,
        pub append: Option<bool>,
        pub contents: Option<Contents>,
    }

    #[derive(Debug, Default, Clone, Deserialize)]
    #[serde(default)]
    pub struct Contents {
        pub compression: Option<String>,
        pub source: Option<String>,
        pub verification: Option<Verification>,
    }

    #[derive(Debug, Default, Clone, Deserialize)]
    #[serde(default)]
    pub struct Link {
        #[serde(flatten)]
        pub node: Node,
        pub target: Option<String>,
        pub hard: Option<bool>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Systemd {
        pub units: Option<Vec<Unit>>,
    }

    #[derive(Debug, Default, Clone, Deserialize)]
    #[serde(default)]
    pub struct Unit {
        pub name: Option<String>,
        pub enabled: Option<bool>,
        /// Deprecated in spec 2; the converter refuses deprecated fields.
        pub enable: Option<bool>,
        pub mask: Option<bool>,
        pub contents: Option<String>,
        pub dropins: Option<Vec<Dropin>>,
    }

    #[derive(Debug, Default, Clone, Deserialize)]
    #[serde(default)]
    pub struct Dropin {
        pub name: Option<String>,
        pub contents: Option<String>,
    }

    /// The fatal parts of Ignition's spec 2 validation that a stub can hit.
    pub fn validate(cfg: &Config) -> Result<(), String> {
        if let Some(s) = &cfg.storage {
            let nodes = s
                .files
                .iter()
                .flatten()
                .map(|f| &f.node)
                .chain(s.directories.iter().flatten())
                .chain(s.links.iter().flatten().map(|l| &l.node));
            for n in nodes {
                let p = n.path.as_deref().unwrap_or("");
                if !p.starts_with('/') {
                    return Err(format!("path not absolute: {p:?}"));
                }
                if n.filesystem.as_deref().unwrap_or("").is_empty() {
                    return Err(format!("no filesystem specified for {p}"));
                }
            }
        }
        Ok(())
    }
}

/// Spec 3.5 output. Fields are declared in JSON-name order (like Ignition's
/// generated Go types) and empty values are omitted, so the text is stable.
mod v3 {
    use super::Serialize;

    fn is_false(b: &Option<bool>) -> bool {
        !matches!(b, Some(true))
    }

    #[derive(Debug, Default, Serialize)]
    pub struct Config {
        pub ignition: Ignition,
        #[serde(skip_serializing_if = "Passwd::is_empty")]
        pub passwd: Passwd,
        #[serde(skip_serializing_if = "Storage::is_empty")]
        pub storage: Storage,
        #[serde(skip_serializing_if = "Systemd::is_empty")]
        pub systemd: Systemd,
    }

    #[derive(Debug, Default, Serialize)]
    pub struct Ignition {
        #[serde(skip_serializing_if = "IgnitionConfig::is_empty")]
        pub config: IgnitionConfig,
        #[serde(skip_serializing_if = "Security::is_empty")]
        pub security: Security,
        #[serde(skip_serializing_if = "Timeouts::is_empty")]
        pub timeouts: Timeouts,
        pub version: String,
    }

    #[derive(Debug, Default, Serialize)]
    pub struct IgnitionConfig {
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pub merge: Vec<Resource>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub replace: Option<Resource>,
    }
    impl IgnitionConfig {
        fn is_empty(&self) -> bool {
            self.merge.is_empty() && self.replace.is_none()
        }
    }

    #[derive(Debug, Default, Serialize)]
    pub struct Resource {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub compression: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub source: Option<String>,
        #[serde(skip_serializing_if = "Verification::is_empty")]
        pub verification: Verification,
    }
    impl Resource {
        pub fn is_empty(&self) -> bool {
            self.compression.is_none() && self.source.is_none() && self.verification.is_empty()
        }
    }

    #[derive(Debug, Default, Serialize)]
    pub struct Verification {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub hash: Option<String>,
    }
    impl Verification {
        fn is_empty(&self) -> bool {
            self.hash.is_none()
        }
    }

    #[derive(Debug, Default, Serialize)]
    pub struct Security {
        #[serde(skip_serializing_if = "Tls::is_empty")]
        pub tls: Tls,
    }
    impl Security {
        fn is_empty(&self) -> bool {
            self.tls.is_empty()
        }
    }

    #[derive(Debug, Default, Serialize)]
    pub struct Tls {
        #[serde(
            rename = "certificateAuthorities",
            skip_serializing_if = "Vec::is_empty"
        )]
        pub certificate_authorities: Vec<Resource>,
    }
    impl Tls {
        fn is_empty(&self) -> bool {
            self.certificate_authorities.is_empty()
        }
    }

    #[derive(Debug, Default, Serialize)]
    pub struct Timeouts {
        #[serde(
            rename = "httpResponseHeaders",
            skip_serializing_if = "Option::is_none"
        )]
        pub http_response_headers: Option<i64>,
        #[serde(rename = "httpTotal", skip_serializing_if = "Option::is_none")]
        pub http_total: Option<i64>,
    }
    impl Timeouts {
        fn is_empty(&self) -> bool {
            self.http_response_headers.is_none() && self.http_total.is_none()
        }
    }

    #[derive(Debug, Default, Serialize)]
    pub struct Passwd {
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pub groups: Vec<Group>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pub users: Vec<User>,
    }
    impl Passwd {
        fn is_empty(&self) -> bool {
            self.groups.is_empty() && self.users.is_empty()
        }
    }

    #[derive(Debug, Default, Serialize)]
    pub struct Group {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub gid: Option<i64>,
        pub name: String,
        #[serde(rename = "passwordHash", skip_serializing_if = "Option::is_none")]
        pub password_hash: Option<String>,
        #[serde(skip_serializing_if = "is_false")]
        pub system: Option<bool>,
    }

    #[derive(Debug, Default, Serialize)]
    pub struct User {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub gecos: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pub groups: Vec<String>,
        #[serde(rename = "homeDir", skip_serializing_if = "Option::is_none")]
        pub home_dir: Option<String>,
        pub name: String,
        #[serde(rename = "noCreateHome", skip_serializing_if = "is_false")]
        pub no_create_home: Option<bool>,
        #[serde(rename = "noLogInit", skip_serializing_if = "is_false")]
        pub no_log_init: Option<bool>,
        #[serde(rename = "noUserGroup", skip_serializing_if = "is_false")]
        pub no_user_group: Option<bool>,
        #[serde(rename = "passwordHash", skip_serializing_if = "Option::is_none")]
        pub password_hash: Option<String>,
        #[serde(rename = "primaryGroup", skip_serializing_if = "Option::is_none")]
        pub primary_group: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub shell: Option<String>,
        #[serde(rename = "sshAuthorizedKeys", skip_serializing_if = "Vec::is_empty")]
        pub ssh_authorized_keys: Vec<String>,
        #[serde(skip_serializing_if = "is_false")]
        pub system: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub uid: Option<i64>,
    }

    #[derive(Debug, Default, Serialize)]
    pub struct Storage {
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pub directories: Vec<Directory>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pub files: Vec<File>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pub links: Vec<Link>,
    }
    impl Storage {
        fn is_empty(&self) -> bool {
            self.directories.is_empty() && self.files.is_empty() && self.links.is_empty()
        }
    }

    #[derive(Debug, Default, Serialize)]
    pub struct NodeOwner {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub id: Option<i64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub name: Option<String>,
    }
    impl NodeOwner {
        pub fn is_empty(&self) -> bool {
            self.id.is_none() && self.name.is_none()
        }
    }

    #[derive(Debug, Default, Serialize)]
    pub struct Directory {
        #[serde(skip_serializing_if = "NodeOwner::is_empty")]
        pub group: NodeOwner,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub mode: Option<i64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub overwrite: Option<bool>,
        pub path: String,
        #[serde(skip_serializing_if = "NodeOwner::is_empty")]
        pub user: NodeOwner,
    }

    #[derive(Debug, Default, Serialize)]
    pub struct File {
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pub append: Vec<Resource>,
        #[serde(skip_serializing_if = "Resource::is_empty")]
        pub contents: Resource,
        #[serde(skip_serializing_if = "NodeOwner::is_empty")]
        pub group: NodeOwner,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub mode: Option<i64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub overwrite: Option<bool>,
        pub path: String,
        #[serde(skip_serializing_if = "NodeOwner::is_empty")]
        pub user: NodeOwner,
    }

    #[derive(Debug, Default, Serialize)]
    pub struct Link {
        #[serde(skip_serializing_if = "NodeOwner::is_empty")]
        pub group: NodeOwner,
        #[serde(skip_serializing_if = "is_false")]
        pub hard: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub overwrite: Option<bool>,
        pub path: String,
        pub target: String,
        #[serde(skip_serializing_if = "NodeOwner::is_empty")]
        pub user: NodeOwner,
    }

    #[derive(Debug, Default, Serialize)]
    pub struct Systemd {
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pub units: Vec<Unit>,
    }
    impl Systemd {
        fn is_empty(&self) -> bool {
            self.units.is_empty()
        }
    }

    #[derive(Debug, Default, Serialize)]
    pub struct Unit {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub contents: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pub dropins: Vec<Dropin>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub enabled: Option<bool>,
        #[serde(skip_serializing_if = "is_false")]
        pub mask: Option<bool>,
        pub name: String,
    }

    #[derive(Debug, Default, Serialize)]
    pub struct Dropin {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub contents: Option<String>,
        pub name: String,
    }
}

/// `removeIgnDuplicateFilesUnitsUsers`: spec 3 forbids duplicates, so the
/// last entry for a path or unit wins (dropins are merged), and all users
/// collapse into `core`. Like upstream, the surviving files and units come
/// out in reverse order.
fn dedupe(mut cfg: v2::Config) -> Result<v2::Config, String> {
    if let Some(storage) = cfg.storage.as_mut()
        && let Some(files) = storage.files.take()
    {
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        for f in files.into_iter().rev() {
            let path = f.node.path.clone().unwrap_or_default();
            if seen.insert(path) {
                out.push(f);
            }
        }
        storage.files = Some(out);
    }
    if let Some(systemd) = cfg.systemd.as_mut()
        && let Some(units) = systemd.units.take()
    {
        let mut out: Vec<v2::Unit> = Vec::new();
        for u in units.into_iter().rev() {
            let name = u.name.clone().unwrap_or_default();
            if let Some(existing) = out
                .iter_mut()
                .find(|e| e.name.as_deref().unwrap_or("") == name)
            {
                for d in u.dropins.unwrap_or_default() {
                    let dropins = existing.dropins.get_or_insert_with(Vec::new);
                    if !dropins.iter().any(|e| e.name == d.name) {
                        dropins.push(d);
                    }
                }
            } else {
                out.push(u);
            }
        }
        systemd.units = Some(out);
    }
    if let Some(passwd) = cfg.passwd.as_mut()
        && let Some(users) = passwd.users.take()
    {
        let mut rev = users.into_iter().rev();
        if let Some(mut last) = rev.next() {
            let check = |u: &v2::User| {
                let n = u.name.as_deref().unwrap_or("");
                if n == "core" {
                    Ok(())
                } else {
                    Err(format!(
                        "unexpected user with name: {n}. Only core user is supported"
                    ))
                }
            };
            check(&last)?;
            let mut keys = last.ssh_authorized_keys.take().unwrap_or_default();
            for u in rev {
                check(&u)?;
                keys.extend(u.ssh_authorized_keys.unwrap_or_default());
            }
            let mut seen = std::collections::BTreeSet::new();
            keys.retain(|k| seen.insert(k.clone()));
            last.ssh_authorized_keys = Some(keys);
            passwd.users = Some(vec![last]);
        } else {
            passwd.users = Some(Vec::new());
        }
    }
    Ok(cfg)
}

/// Go's `path.Clean` for absolute paths, so duplicate detection sees
/// `/etc//a` and `/etc/a` as one inode, as the converter does.
fn clean_path(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.is_empty())
}

fn resource(r: v2::Reference) -> v3::Resource {
    v3::Resource {
        compression: None,
        source: Some(r.source.unwrap_or_default()),
        verification: v3::Verification {
            hash: r.verification.and_then(|v| v.hash),
        },
    }
}

fn owner(o: Option<v2::NodeOwner>) -> v3::NodeOwner {
    let o = o.unwrap_or_default();
    v3::NodeOwner {
        id: o.id,
        name: non_empty(o.name),
    }
}

/// ign-converter `Check2_3` + `Translate` (v2.3 → v3.0), then the version
/// bump to 3.5 (3.0 configs are valid 3.5 configs).
fn translate(cfg: v2::Config) -> Result<v3::Config, String> {
    let v2::Config {
        ignition,
        networkd,
        passwd,
        storage,
        systemd,
    } = cfg;

    if networkd
        .and_then(|n| n.units)
        .is_some_and(|u| !u.is_empty())
    {
        return Err(
            "config includes a networkd section, which Ignition spec 3 does not support".into(),
        );
    }
    for u in passwd.iter().flat_map(|p| p.users.iter().flatten()) {
        if u.create.is_some() {
            return Err(
                "Invalid input config: the create field has been deprecated in favor of user-level options"
                    .into(),
            );
        }
    }
    for u in systemd.iter().flat_map(|s| s.units.iter().flatten()) {
        if u.enable.is_some() {
            return Err(
                "Invalid input config: the enable field has been deprecated in favor of enabled"
                    .into(),
            );
        }
    }

    let storage = storage.unwrap_or_default();
    if storage.disks.as_ref().is_some_and(|d| !d.is_empty()) {
        return Err("storage.disks cannot be converted by the stub upgrade".into());
    }
    if storage.raid.as_ref().is_some_and(|r| !r.is_empty()) {
        return Err("storage.raid cannot be converted by the stub upgrade".into());
    }
    for fs in storage.filesystems.iter().flatten() {
        let name = fs.name.as_deref().unwrap_or("");
        if name != "root" {
            return Err(format!(
                "config defined filesystem {name:?} but no mapping to a path was defined"
            ));
        }
    }

    // Every node must be on the root filesystem, the only one mapped.
    let mut entries: std::collections::BTreeMap<String, String> = Default::default();
    let files = storage.files.unwrap_or_default();
    let dirs = storage.directories.unwrap_or_default();
    let links = storage.links.unwrap_or_default();
    let link_paths: Vec<String> = links
        .iter()
        .map(|l| clean_path(l.node.path.as_deref().unwrap_or("")))
        .collect();
    let nodes = files
        .iter()
        .map(|f| ("File", &f.node))
        .chain(dirs.iter().map(|d| ("Directory", d)))
        .chain(links.iter().map(|l| ("Link", &l.node)));
    for (kind, n) in nodes {
        let fs = n.filesystem.as_deref().unwrap_or("");
        let p = clean_path(n.path.as_deref().unwrap_or(""));
        if fs != "root" {
            return Err(format!(
                "{kind} {p} is on filesystem {fs:?}; only the root filesystem can be converted"
            ));
        }
        let name = format!("{kind}: {p}");
        if let Some(old) = entries.get(&p) {
            return Err(format!(
                "config has conflicting inodes: {old:?} and {name:?}; all files, directories and links must specify a unique path"
            ));
        }
        if kind != "Link"
            && let Some(l) = link_paths
                .iter()
                .find(|l| p.starts_with(&format!("{}/", l.trim_end_matches('/'))))
        {
            return Err(format!(
                "{name} uses link defined in config {l:?}; please use a link not defined in storage.links"
            ));
        }
        entries.insert(p, name);
    }
    for u in systemd.iter().flat_map(|s| s.units.iter().flatten()) {
        let mut seen = std::collections::BTreeSet::new();
        for d in u.dropins.iter().flatten() {
            if !seen.insert(d.name.clone()) {
                return Err(format!(
                    "config has duplicate dropin {:?} for unit {:?}",
                    d.name.as_deref().unwrap_or(""),
                    u.name.as_deref().unwrap_or("")
                ));
            }
        }
    }

    let ignition = ignition.unwrap_or_default();
    let icfg = ignition.config.unwrap_or_default();
    let out_ignition = v3::Ignition {
        config: v3::IgnitionConfig {
            merge: icfg
                .append
                .unwrap_or_default()
                .into_iter()
                .map(resource)
                .collect(),
            replace: icfg.replace.map(resource),
        },
        security: v3::Security {
            tls: v3::Tls {
                certificate_authorities: ignition
                    .security
                    .and_then(|s| s.tls)
                    .and_then(|t| t.certificate_authorities)
                    .unwrap_or_default()
                    .into_iter()
                    .map(resource)
                    .collect(),
            },
        },
        timeouts: ignition
            .timeouts
            .map(|t| v3::Timeouts {
                http_response_headers: t.http_response_headers,
                http_total: t.http_total,
            })
            .unwrap_or_default(),
        version: STUB_TARGET_VERSION.to_owned(),
    };

    let passwd = passwd.unwrap_or_default();
    let out_passwd = v3::Passwd {
        groups: passwd
            .groups
            .unwrap_or_default()
            .into_iter()
            .map(|g| v3::Group {
                gid: g.gid,
                name: g.name.unwrap_or_default(),
                password_hash: non_empty(g.password_hash),
                system: g.system,
            })
            .collect(),
        users: passwd
            .users
            .unwrap_or_default()
            .into_iter()
            .map(|u| v3::User {
                gecos: non_empty(u.gecos),
                groups: u.groups.unwrap_or_default(),
                home_dir: non_empty(u.home_dir),
                name: u.name.unwrap_or_default(),
                no_create_home: u.no_create_home,
                no_log_init: u.no_log_init,
                no_user_group: u.no_user_group,
                password_hash: u.password_hash,
                primary_group: non_empty(u.primary_group),
                shell: non_empty(u.shell),
                ssh_authorized_keys: u.ssh_authorized_keys.unwrap_or_default(),
                system: u.system,
                uid: u.uid,
            })
            .collect(),
    };

    let out_storage = v3::Storage {
        directories: dirs
            .into_iter()
            .map(|d| v3::Directory {
                group: owner(d.group),
                mode: d.mode,
                overwrite: d.overwrite,
                path: clean_path(d.path.as_deref().unwrap_or("")),
                user: owner(d.user),
            })
            .collect(),
        files: files
            .into_iter()
            .map(|f| {
                let append = f.append.unwrap_or(false);
                let c = f.contents.unwrap_or_default();
                let contents = v3::Resource {
                    compression: non_empty(c.compression),
                    source: Some(c.source.unwrap_or_default()),
                    verification: v3::Verification {
                        hash: c.verification.and_then(|v| v.hash),
                    },
                };
                // Spec 2 files overwrite by default; spec 3 needs it spelled
                // out, and forbids it together with append.
                let overwrite = if append {
                    Some(false)
                } else {
                    Some(f.node.overwrite.unwrap_or(true))
                };
                let (append, contents) = if append {
                    (vec![contents], v3::Resource::default())
                } else {
                    (Vec::new(), contents)
                };
                v3::File {
                    append,
                    contents,
                    group: owner(f.node.group),
                    mode: f.node.mode,
                    overwrite,
                    path: clean_path(f.node.path.as_deref().unwrap_or("")),
                    user: owner(f.node.user),
                }
            })
            .collect(),
        links: links
            .into_iter()
            .map(|l| v3::Link {
                group: owner(l.node.group),
                hard: l.hard,
                overwrite: l.node.overwrite,
                path: clean_path(l.node.path.as_deref().unwrap_or("")),
                target: l.target.unwrap_or_default(),
                user: owner(l.node.user),
            })
            .collect(),
    };

    let out_systemd = v3::Systemd {
        units: systemd
            .and_then(|s| s.units)
            .unwrap_or_default()
            .into_iter()
            .map(|u| v3::Unit {
                contents: non_empty(u.contents),
                dropins: u
                    .dropins
                    .unwrap_or_default()
                    .into_iter()
                    .map(|d| v3::Dropin {
                        contents: non_empty(d.contents),
                        name: d.name.unwrap_or_default(),
                    })
                    .collect(),
                enabled: u.enabled,
                mask: u.mask,
                name: u.name.unwrap_or_default(),
            })
            .collect(),
    };

    Ok(v3::Config {
        ignition: out_ignition,
        passwd: out_passwd,
        storage: out_storage,
        systemd: out_systemd,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const STUB22: &str = r#"{"ignition":{"config":{"append":[{"source":"https://api-int.c1.example.com:22623/config/worker","verification":{}}]},"security":{"tls":{"certificateAuthorities":[{"source":"data:text/plain;charset=utf-8;base64,LS0t","verification":{}}]}},"timeouts":{},"version":"2.2.0"},"networkd":{},"passwd":{},"storage":{},"systemd":{}}"#;

    fn converted(input: &str) -> Value {
        match upgrade_stub(input).unwrap() {
            StubUpgrade::Converted(s) => serde_json::from_str(&s).unwrap(),
            StubUpgrade::AlreadyCurrent => panic!("not converted"),
        }
    }

    #[test]
    fn installer_stub_converts_like_the_spec_says() {
        let out = upgrade_stub(STUB22).unwrap();
        assert_eq!(
            out,
            StubUpgrade::Converted(
                r#"{"ignition":{"config":{"merge":[{"source":"https://api-int.c1.example.com:22623/config/worker"}]},"security":{"tls":{"certificateAuthorities":[{"source":"data:text/plain;charset=utf-8;base64,LS0t"}]}},"version":"3.5.0"}}"#
                    .to_owned()
            )
        );
    }

    #[test]
    fn spec3_is_left_alone() {
        for v in ["3.0.0", "3.2.0", "3.5.0", "3.9.9", "3"] {
            let s = json!({"ignition": {"version": v}}).to_string();
            assert_eq!(
                upgrade_stub(&s).unwrap(),
                StubUpgrade::AlreadyCurrent,
                "{v}"
            );
        }
    }

    #[test]
    fn version_errors() {
        let e = upgrade_stub(r#"{"ignition":{"version":"2.1.0"}}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "converting ignition stub failed: failed to parse Ignition config: parsing Ignition config failed: unknown version. Supported spec versions: 2.2, 3.0, 3.1, 3.2, 3.3, 3.4, 3.5"
        );
        for bad in [
            r#"{"ignition":{"version":"2.2"}}"#,
            r#"{"ignition":{}}"#,
            r#"{}"#,
        ] {
            let e = upgrade_stub(bad).unwrap_err().to_string();
            assert!(e.contains("invalid version"), "{bad}: {e}");
        }
        let e = upgrade_stub(r#"{"ignition":{"version":2.2}}"#).unwrap_err();
        assert!(matches!(e, StubError::Version(_)), "{e}");
        let e = upgrade_stub(r#"{"ignition":"x"}"#).unwrap_err();
        assert!(matches!(e, StubError::Version(_)), "{e}");
    }

    #[test]
    fn not_json_or_not_an_object() {
        for bad in ["", "garbage", "[1,2]", "\"s\"", "{\"ignition\":"] {
            let e = upgrade_stub(bad).unwrap_err();
            assert!(matches!(e, StubError::NotJson(_)), "{bad}: {e}");
        }
    }

    #[test]
    fn wrong_types_inside_a_spec2_config() {
        let e = upgrade_stub(r#"{"ignition":{"version":"2.2.0","config":{"append":"x"}}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("converting ignition stub failed: failed to parse Ignition config: parsing Ignition spec v2 failed with error: invalid type"),
            "{e}"
        );
    }

    #[test]
    fn only_core_user_is_supported() {
        let s = json!({"ignition": {"version": "2.2.0"}, "passwd": {"users": [
            {"name": "core", "sshAuthorizedKeys": ["a"]},
            {"name": "admin", "sshAuthorizedKeys": ["b"]}
        ]}})
        .to_string();
        assert_eq!(
            upgrade_stub(&s).unwrap_err().to_string(),
            "converting ignition stub failed: unexpected user with name: admin. Only core user is supported"
        );
    }

    #[test]
    fn core_users_merge_and_dedupe_keys() {
        let s = json!({"ignition": {"version": "2.2.0"}, "passwd": {"users": [
            {"name": "core", "sshAuthorizedKeys": ["a", "b"]},
            {"name": "core", "sshAuthorizedKeys": ["c", "a"]}
        ]}})
        .to_string();
        assert_eq!(
            converted(&s)["passwd"],
            json!({"users": [{"name": "core", "sshAuthorizedKeys": ["c", "a", "b"]}]})
        );
    }

    #[test]
    fn networkd_is_unconvertible() {
        let s = json!({"ignition": {"version": "2.2.0"}, "networkd": {"units": [{"name": "a.network"}]}})
            .to_string();
        let e = upgrade_stub(&s).unwrap_err();
        assert!(matches!(e, StubError::Convert(_)), "{e}");
    }

    #[test]
    fn files_units_links_dirs() {
        let s = json!({"ignition": {"version": "2.2.0", "config": {"replace": {"source": "https://x/r", "verification": {"hash": "sha512-00"}}}, "timeouts": {"httpTotal": 30}},
            "storage": {
                "files": [
                    {"filesystem": "root", "path": "/etc/a", "contents": {"source": "data:,1"}, "mode": 420},
                    {"filesystem": "root", "path": "/etc/b", "append": true, "contents": {"source": "data:,2"}, "user": {"name": "core"}},
                    {"filesystem": "root", "path": "/etc/a", "contents": {"source": "data:,3"}, "overwrite": false}
                ],
                "directories": [{"filesystem": "root", "path": "/var//d/", "mode": 493}],
                "links": [{"filesystem": "root", "path": "/etc/l", "target": "/etc/a", "hard": false}]
            },
            "systemd": {"units": [
                {"name": "a.service", "enabled": true, "contents": "[Unit]", "dropins": [{"name": "1.conf", "contents": "x"}]},
                {"name": "b.service", "mask": true},
                {"name": "a.service", "dropins": [{"name": "2.conf", "contents": "y"}, {"name": "1.conf", "contents": "z"}]}
            ]}
        })
        .to_string();
        let out = converted(&s);
        assert_eq!(
            out["ignition"],
            json!({"config": {"replace": {"source": "https://x/r", "verification": {"hash": "sha512-00"}}}, "timeouts": {"httpTotal": 30}, "version": "3.5.0"})
        );
        assert_eq!(
            out["storage"]["files"],
            json!([
                {"contents": {"source": "data:,3"}, "overwrite": false, "path": "/etc/a"},
                {"append": [{"source": "data:,2"}], "overwrite": false, "path": "/etc/b", "user": {"name": "core"}}
            ])
        );
        assert_eq!(
            out["storage"]["directories"],
            json!([{"mode": 493, "path": "/var/d"}])
        );
        assert_eq!(
            out["storage"]["links"],
            json!([{"path": "/etc/l", "target": "/etc/a"}])
        );
        assert_eq!(
            out["systemd"]["units"],
            json!([
                {"dropins": [{"contents": "y", "name": "2.conf"}, {"contents": "z", "name": "1.conf"}], "name": "a.service"},
                {"mask": true, "name": "b.service"}
            ])
        );
    }

    #[test]
    fn unconvertible_storage() {
        for (cfg, needle) in [
            (
                json!({"storage": {"filesystems": [{"name": "data", "mount": {"device": "/dev/sdb"}}]}}),
                "filesystem \"data\"",
            ),
            (
                json!({"storage": {"disks": [{"device": "/dev/sdb"}]}}),
                "storage.disks",
            ),
            (
                json!({"storage": {"raid": [{"name": "md0"}]}}),
                "storage.raid",
            ),
            (
                json!({"storage": {"files": [{"filesystem": "data", "path": "/a"}]}}),
                "only the root filesystem",
            ),
            (
                json!({"storage": {"files": [{"filesystem": "root", "path": "/a"}], "directories": [{"filesystem": "root", "path": "/a"}]}}),
                "conflicting inodes",
            ),
            (
                json!({"storage": {"files": [{"filesystem": "root", "path": "/l/x"}], "links": [{"filesystem": "root", "path": "/l", "target": "/t"}]}}),
                "uses link",
            ),
            (
                json!({"systemd": {"units": [{"name": "a", "enable": true}]}}),
                "deprecated",
            ),
            (
                json!({"passwd": {"users": [{"name": "core", "create": {}}]}}),
                "deprecated",
            ),
            (
                json!({"systemd": {"units": [{"name": "a", "dropins": [{"name": "x"}, {"name": "x"}]}]}}),
                "duplicate dropin",
            ),
            (
                json!({"storage": {"files": [{"filesystem": "root", "path": "relative"}]}}),
                "path not absolute",
            ),
        ] {
            let mut cfg = cfg;
            cfg["ignition"] = json!({"version": "2.2.0"});
            let e = upgrade_stub(&cfg.to_string()).unwrap_err().to_string();
            assert!(e.contains(needle), "{cfg}: {e}");
        }
    }

    #[test]
    fn root_filesystem_entry_is_implied() {
        let s = json!({"ignition": {"version": "2.2.0"}, "storage": {"filesystems": [{"name": "root", "mount": {"device": "/dev/x"}}]}})
            .to_string();
        assert_eq!(converted(&s), json!({"ignition": {"version": "3.5.0"}}));
    }

    #[test]
    fn hostile_inputs_do_not_panic() {
        let deep = format!("{}{}", "[".repeat(50_000), "]".repeat(50_000));
        assert!(upgrade_stub(&deep).is_err());
        let deep_obj = format!(
            r#"{{"ignition":{{"version":"2.2.0"}},"x":{}{}}}"#,
            "[".repeat(50_000),
            "]".repeat(50_000)
        );
        assert!(upgrade_stub(&deep_obj).is_err());
        let huge = json!({"ignition": {"version": "2.2.0", "config": {"append": [{"source": "x".repeat(4 << 20)}]}}})
            .to_string();
        assert!(matches!(
            upgrade_stub(&huge).unwrap(),
            StubUpgrade::Converted(_)
        ));
    }

    #[test]
    fn semver_shape() {
        assert!(is_semver("2.2.0"));
        assert!(is_semver("1.0.0-experimental"));
        assert!(!is_semver("2.2"));
        assert!(!is_semver(""));
        assert!(!is_semver("a.b.c"));
    }

    #[test]
    fn path_cleaning() {
        assert_eq!(clean_path("/etc//a/./b/../c/"), "/etc/a/c");
        assert_eq!(clean_path("/"), "/");
        assert_eq!(clean_path("/../x"), "/x");
    }
}
