//! Spec 3.5 output. Fields are declared in JSON-name order (like Ignition's
//! generated Go types) and empty values are omitted, so the text is stable:
//! the converted stub is compared byte for byte between native and wasm runs.

use serde::Serialize;

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
