//! Spec 2.2 as the Go types read it; unknown fields are ignored like Go does.
//! The stub is parsed into these types before anything is checked, so the
//! later stages see the same shape the upstream converter sees.

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
