//! Which guest module serves which job. Platform teams swap a module by
//! pointing the registry at it; the host is not rebuilt or restarted.
//!
//! Each job takes either a path (the short form) or a full entry:
//!
//! ```yaml
//! mcn:                           # the full form
//!   module: mcn.wasm             # paths are relative to this file
//!   sha256: 4f1c…                # refused unless the module has this digest
//!   memoryMiB: 64                # at most --guest-memory-mib
//!   deadline: 1s
//!   candidate:                   # shadow-evaluated, never applied
//!     configMap: {name: mcn-next, key: mcn.wasm}
//!     sha256: 9ab2…
//! bootImage:
//!   GCP: bootimage-gcp.wasm      # the short form
//!   AWS: /opt/guests/my-aws.wasm
//!   Azure:
//!     oci: quay.io/team/azure@sha256:5d0e…   # an OCI artifact (see oci/)
//!     pullSecret: quay-creds                # kubernetes.io/dockerconfigjson
//!     verify:                               # cosign signatures (see cosign.rs)
//!       keys:
//!         - configMap: {name: cosign-keys, key: team.pub}
//!         - secret: {name: release-key, key: cosign.pub}
//! verify:                        # the default of every oci: module without its own
//!   keys: [{file: keys/cosign.pub}]          # relative to this file
//! ```
//!
//! `verify` refuses an OCI module unless a key-based cosign signature of
//! its manifest verifies under one of `keys` (any one: a list is for key
//! rotation). A candidate without its own `verify` is held to its entry's,
//! and an entry without one to the registry's top-level `verify`. Files and
//! ConfigMap modules are not signed artifacts: pin them with `sha256`.
//!
//! A module comes from a file (in the image or on a mounted volume), from
//! a `binaryData` key of a ConfigMap in the host's namespace (kept for
//! compatibility: a ConfigMap holds at most 1 MiB), or from an OCI
//! registry. An OCI reference may name a tag, which the host resolves to a
//! digest on every pull; an entry that also pins `sha256` must name its
//! artifact by digest, so that the pin and the reference cannot drift
//! apart. The last third is unit tests of the format.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Job;
use serde::de::{self, MapAccess, Visitor, value::MapAccessDeserializer};

/// Platforms the project ships a boot image guest for, by Infrastructure
/// `status.platformStatus.type`.
const SHIPPED_PLATFORMS: [(&str, &str); 3] = [
    ("GCP", "bootimage-gcp.wasm"),
    ("AWS", "bootimage-aws.wasm"),
    ("Azure", "bootimage-azure.wasm"),
];

/// The key of a registry held in a ConfigMap.
pub const CONFIGMAP_KEY: &str = "registry.yaml";
/// Where a module's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// A file: in the image, or on a mounted volume.
    Path(PathBuf),
    /// A `binaryData` key of a ConfigMap in the host's namespace.
    ConfigMap { name: String, key: String },
    /// An artifact in an OCI registry.
    Oci(OciSource),
}

/// An OCI reference, the pull Secret (in the host's namespace) that
/// grants access to it, if the registry wants one, and the keys one of
/// which must have signed it, if any.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OciSource {
    /// As written: `registry/repository[:tag][@sha256:…]`.
    pub reference: String,
    pub pull_secret: Option<String>,
    pub verify: Option<Verify>,
}

impl OciSource {
    /// An unsigned reference without a pull Secret, as the CLI pulls.
    pub fn anonymous(reference: &str) -> OciSource {
        OciSource {
            reference: reference.to_string(),
            pull_secret: None,
            verify: None,
        }
    }
}

/// `verify:`: the module is refused unless a cosign signature of its
/// manifest verifies under one of `keys` (see cosign.rs).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Verify {
    pub keys: Vec<KeySource>,
}

/// Where a cosign public key (PEM, `cosign.pub`) is read from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeySource {
    /// A file; relative paths follow the registry file.
    File(PathBuf),
    /// A `data` (or `binaryData`) key of a ConfigMap in the host's namespace.
    ConfigMap { name: String, key: String },
    /// A `data` key of a Secret in the host's namespace.
    Secret { name: String, key: String },
}

/// How errors and logs name a key: by where it comes from.
impl fmt::Display for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySource::File(path) => write!(f, "{}", path.display()),
            KeySource::ConfigMap { name, key } => write!(f, "configmap/{name}[{key}]"),
            KeySource::Secret { name, key } => write!(f, "secret/{name}[{key}]"),
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Path(path) => write!(f, "{}", path.display()),
            Source::ConfigMap { name, key } => write!(f, "configmap/{name}[{key}]"),
            Source::Oci(oci) => write!(f, "oci:{}", oci.reference),
        }
    }
}

/// One module and, when pinned, the sha256 it must have (lowercase hex).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Module {
    pub source: Source,
    pub sha256: Option<String>,
}

/// What serves one job.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Entry {
    pub module: Module,
    /// Linear-memory cap; `None` is the host's `--guest-memory-mib`.
    pub memory_mib: Option<usize>,
    /// Budget of one evaluation; `None` is the host's `--guest-deadline`.
    pub deadline: Option<Duration>,
    /// Evaluated beside `module` on the same inputs; its decisions are
    /// compared and counted, never applied.
    pub candidate: Option<Module>,
}

impl Entry {
    /// The short form: a module file under the host's limits.
    pub fn path(path: PathBuf) -> Entry {
        Entry {
            module: Module {
                source: Source::Path(path),
                sha256: None,
            },
            memory_mib: None,
            deadline: None,
            candidate: None,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Registry {
    /// The node-state (MachineConfigNode) guest.
    pub mcn: Option<Entry>,
    /// Boot image guest by platform type. A platform without an entry gets
    /// `noop` decisions.
    pub boot_image: BTreeMap<String, Entry>,
}

/// Where the host reads its registry from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// No registry: the guests installed in this directory.
    Installed(PathBuf),
    /// A YAML file; relative module paths follow the file.
    File(PathBuf),
    /// Key `registry.yaml` of a ConfigMap in the host's namespace; relative
    /// module paths follow `guest_dir`.
    ConfigMap { name: String, guest_dir: PathBuf },
    /// The MachineConfigGuest objects (`crd.rs`), one per job; a job without
    /// one runs its installed guest. Relative module paths follow
    /// `guest_dir`.
    Crd { guest_dir: PathBuf },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Installed(dir) => write!(f, "installed guests in {}", dir.display()),
            Location::File(path) => write!(f, "{}", path.display()),
            Location::ConfigMap { name, .. } => write!(f, "configmap/{name}[{CONFIGMAP_KEY}]"),
            Location::Crd { .. } => f.write_str("machineconfigguests"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("registry {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("registry {path}: {detail}")]
    Parse { path: String, detail: String },
    #[error("registry {path}, entry {entry}: {detail}")]
    Entry {
        path: String,
        entry: String,
        detail: String,
    },
}

impl Registry {
    /// The guests installed beside the host.
    pub fn installed(dir: &Path) -> Registry {
        Registry {
            mcn: Some(Entry::path(dir.join("mcn.wasm"))),
            boot_image: SHIPPED_PLATFORMS
                .iter()
                .map(|(platform, file)| (platform.to_string(), Entry::path(dir.join(file))))
                .collect(),
        }
    }

    pub fn from_file(path: &Path) -> Result<Registry, RegistryError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| RegistryError::Read {
            path: shown.clone(),
            source,
        })?;
        Registry::parse(&text, &shown, path.parent().unwrap_or(Path::new(".")))
    }

    /// Parses registry YAML; `shown` names it in errors and relative module
    /// paths are joined to `base`.
    pub fn parse(text: &str, shown: &str, base: &Path) -> Result<Registry, RegistryError> {
        let raw: RawRegistry = serde_saphyr::from_str(text).map_err(|e| RegistryError::Parse {
            path: shown.to_string(),
            detail: e.to_string(),
        })?;
        let default = raw
            .verify
            .map(|v| v.resolve(base, "verify: "))
            .transpose()
            .map_err(|detail| RegistryError::Parse {
                path: shown.to_string(),
                detail,
            })?;
        let entry = |job: String, raw: RawEntry| {
            raw.resolve(base, default.as_ref())
                .map_err(|detail| RegistryError::Entry {
                    path: shown.to_string(),
                    entry: job,
                    detail,
                })
        };
        Ok(Registry {
            mcn: raw
                .mcn
                .map(|e| entry(Job::Mcn.to_string(), e))
                .transpose()?,
            boot_image: raw
                .boot_image
                .into_iter()
                .map(|(platform, e)| {
                    Ok((
                        platform.clone(),
                        entry(Job::BootImage(platform.clone()).to_string(), e)?,
                    ))
                })
                .collect::<Result<_, RegistryError>>()?,
        })
    }

    pub fn boot_image(&self, platform: &str) -> Option<&Entry> {
        self.boot_image.get(platform)
    }

    /// Every entry with its job name (`mcn`, `bootImage.<platform>`).
    pub fn entries(&self) -> Vec<(String, &Entry)> {
        let mcn = self.mcn.iter().map(|e| (Job::Mcn.to_string(), e));
        let boot = self
            .boot_image
            .iter()
            .map(|(platform, e)| (Job::BootImage(platform.clone()).to_string(), e));
        mcn.chain(boot).collect()
    }
}

// ---- the YAML forms ------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawRegistry {
    /// The default `verify` of every OCI module without its own.
    #[serde(default)]
    verify: Option<RawVerify>,
    #[serde(default)]
    mcn: Option<RawEntry>,
    #[serde(default)]
    boot_image: BTreeMap<String, RawEntry>,
}

/// A path, or a full entry. Hand-written rather than `untagged` so that a
/// typo inside a full entry is reported as such, not as "no variant matched".
enum RawEntry {
    Path(PathBuf),
    Full(Box<RawFull>),
}

impl<'de> Deserialize<'de> for RawEntry {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntryVisitor;
        impl<'de> Visitor<'de> for EntryVisitor {
            type Value = RawEntry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a module path or an entry {module | configMap | oci, pullSecret, verify, sha256, memoryMiB, deadline, candidate}")
            }
            fn visit_str<E: de::Error>(self, path: &str) -> Result<RawEntry, E> {
                Ok(RawEntry::Path(PathBuf::from(path)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawEntry, A::Error> {
                RawFull::deserialize(MapAccessDeserializer::new(map))
                    .map(|full| RawEntry::Full(Box::new(full)))
            }
        }
        deserializer.deserialize_any(EntryVisitor)
    }
}

/// The full form of an entry: in a registry file, and the spec of a
/// MachineConfigGuest (`crd.rs`), so both read and fail alike.
#[derive(Deserialize, Serialize, JsonSchema, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RawFull {
    // The module's own fields, repeated rather than flattened: serde cannot
    // combine `flatten` with `deny_unknown_fields`.
    /// A module file, in the image or on a mounted volume; relative paths
    /// follow the registry file, or the guest directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<PathBuf>,
    /// A `binaryData` key of a ConfigMap in the host's namespace (at most
    /// 1 MiB; kept for compatibility).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<RawConfigMapKey>,
    /// An OCI artifact, `registry/repository[:tag][@sha256:…]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci: Option<String>,
    /// A `kubernetes.io/dockerconfigjson` Secret in the host's namespace
    /// for the `oci` registry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_secret: Option<String>,
    /// Signatures required: one valid cosign signature by any of these
    /// keys (see `cosign.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<RawVerify>,
    /// Refused unless the module has this sha256 (64 hex digits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Linear-memory cap in MiB, at most the host's `--guest-memory-mib`
    /// (the default).
    #[serde(rename = "memoryMiB", default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<usize>,
    /// Budget of one evaluation, such as `500ms` (default: the host's
    /// `--guest-deadline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<String>,
    /// Evaluated beside the module on the same inputs; its decisions are
    /// compared and counted, never applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<RawModule>,
}

/// A candidate module: the module fields of [`RawFull`].
#[derive(Deserialize, Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RawModule {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<RawConfigMapKey>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<RawVerify>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// A `binaryData` key of a ConfigMap in the host's namespace.
#[derive(Deserialize, Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawConfigMapKey {
    pub name: String,
    pub key: String,
}

/// `verify: {keys: [...]}`.
#[derive(Deserialize, Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawVerify {
    pub keys: Vec<RawKey>,
}

/// One of `keys`: `{file: …}`, `{configMap: {name, key}}` or
/// `{secret: {name, key}}`.
#[derive(Deserialize, Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RawKey {
    /// A PEM file (offline registries; relative to the registry file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<RawConfigMapKey>,
    /// A key of a Secret in the host's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<RawConfigMapKey>,
}

impl RawVerify {
    fn resolve(self, base: &Path, what: &str) -> Result<Verify, String> {
        if self.keys.is_empty() {
            return Err(format!("{what}keys lists no key"));
        }
        let keys = self
            .keys
            .into_iter()
            .enumerate()
            .map(|(i, key)| match (key.file, key.config_map, key.secret) {
                (Some(path), None, None) => Ok(KeySource::File(base.join(path))),
                (None, Some(RawConfigMapKey { name, key }), None) => {
                    Ok(KeySource::ConfigMap { name, key })
                }
                (None, None, Some(RawConfigMapKey { name, key })) => {
                    Ok(KeySource::Secret { name, key })
                }
                _ => Err(format!(
                    "{what}keys[{i}]: give one of file, configMap and secret"
                )),
            })
            .collect::<Result<_, String>>()?;
        Ok(Verify { keys })
    }
}

impl RawEntry {
    fn resolve(self, base: &Path, default: Option<&Verify>) -> Result<Entry, String> {
        match self {
            RawEntry::Path(path) => Ok(Entry::path(base.join(path))),
            RawEntry::Full(full) => full.resolve(base, default),
        }
    }
}

impl RawFull {
    /// The entry this spells; relative module paths are joined to `base`,
    /// and `default` is the `verify` of an `oci:` module without its own.
    pub fn resolve(self, base: &Path, default: Option<&Verify>) -> Result<Entry, String> {
        let full = self;
        let deadline = full
            .deadline
            .map(|text| match humantime::parse_duration(&text) {
                Ok(d) if !d.is_zero() => Ok(d),
                Ok(_) => Err("deadline must be above zero".to_string()),
                Err(e) => Err(format!("deadline {text:?}: {e}")),
            })
            .transpose()?;
        if full.memory_mib == Some(0) {
            return Err("memoryMiB must be above zero".into());
        }
        let module = RawModule {
            module: full.module,
            config_map: full.config_map,
            oci: full.oci,
            pull_secret: full.pull_secret,
            verify: full.verify,
            sha256: full.sha256,
        };
        let (module, verify) = module.resolve(base, "", default)?;
        Ok(Entry {
            module,
            memory_mib: full.memory_mib,
            deadline,
            candidate: full
                .candidate
                .map(|c| {
                    c.resolve(base, "candidate: ", verify.as_ref().or(default))
                        .map(|(m, _)| m)
                })
                .transpose()?,
        })
    }
}

impl RawModule {
    /// The module and the `verify` it was given (not the default), which
    /// its candidate inherits.
    fn resolve(
        mut self,
        base: &Path,
        what: &str,
        default: Option<&Verify>,
    ) -> Result<(Module, Option<Verify>), String> {
        let verify = self
            .verify
            .take()
            .map(|v| v.resolve(base, &format!("{what}verify: ")))
            .transpose()?;
        let source = match (self.module, self.config_map, self.oci) {
            (Some(path), None, None) => Source::Path(base.join(path)),
            (None, Some(RawConfigMapKey { name, key }), None) => Source::ConfigMap { name, key },
            (None, None, Some(reference)) => {
                let parsed = super::oci::parse_reference(&reference)
                    .map_err(|e| format!("{what}oci {reference:?}: {e}"))?;
                if self.sha256.is_some() && parsed.digest().is_none() {
                    return Err(format!(
                        "{what}a pinned OCI module is named by digest (oci: …@sha256:…), not by tag"
                    ));
                }
                Source::Oci(OciSource {
                    reference,
                    pull_secret: self.pull_secret.take(),
                    verify: verify.clone().or_else(|| default.cloned()),
                })
            }
            (None, None, None) => {
                return Err(format!("{what}module, configMap or oci is required"));
            }
            _ => return Err(format!("{what}give one of module, configMap and oci")),
        };
        if self.pull_secret.is_some() {
            return Err(format!("{what}pullSecret goes with oci only"));
        }
        if verify.is_some() && !matches!(source, Source::Oci(_)) {
            return Err(format!(
                "{what}verify goes with oci only (a file or ConfigMap module is pinned with sha256)"
            ));
        }
        let sha256 = self
            .sha256
            .map(|pin| {
                let hex = pin.strip_prefix("sha256:").unwrap_or(&pin);
                if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    Ok(hex.to_ascii_lowercase())
                } else {
                    Err(format!("{what}sha256 {pin:?} is not 64 hex digits"))
                }
            })
            .transpose()?;
        Ok((Module { source, sha256 }, verify))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Registry, RegistryError> {
        Registry::parse(text, "registry.yaml", Path::new("/base"))
    }

    fn parsed(text: &str) -> Registry {
        parse(text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn path_source(registry: &Registry, platform: &str) -> Option<Source> {
        registry
            .boot_image(platform)
            .map(|e| e.module.source.clone())
    }

    #[test]
    fn relative_paths_follow_the_registry_file() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("registry.yaml");
        std::fs::write(
            &file,
            "bootImage:\n  GCP: custom/gcp.wasm\n  AWS: /abs/aws.wasm\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let registry = Registry::from_file(&file).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            path_source(&registry, "GCP"),
            Some(Source::Path(dir.path().join("custom/gcp.wasm")))
        );
        assert_eq!(
            path_source(&registry, "AWS"),
            Some(Source::Path("/abs/aws.wasm".into()))
        );
        assert_eq!(path_source(&registry, "Azure"), None);
        assert_eq!(registry.mcn, None);
    }

    #[test]
    fn the_full_form_sets_digest_limits_and_candidate() {
        let pin = "AB".repeat(32);
        let registry = parsed(&format!(
            "mcn:\n  module: mcn.wasm\n  sha256: sha256:{pin}\n  memoryMiB: 32\n  deadline: 250ms\n  \
             candidate:\n    configMap: {{name: mcn-next, key: mcn.wasm}}\n    sha256: {pin}\n\
             bootImage:\n  GCP: {{configMap: {{name: guests, key: gcp.wasm}}}}\n  AWS: aws.wasm\n"
        ));
        let mcn = registry.mcn.clone().unwrap_or_else(|| panic!("no mcn"));
        let lower = "ab".repeat(32);
        assert_eq!(
            mcn,
            Entry {
                module: Module {
                    source: Source::Path("/base/mcn.wasm".into()),
                    sha256: Some(lower.clone()),
                },
                memory_mib: Some(32),
                deadline: Some(Duration::from_millis(250)),
                candidate: Some(Module {
                    source: Source::ConfigMap {
                        name: "mcn-next".into(),
                        key: "mcn.wasm".into()
                    },
                    sha256: Some(lower),
                }),
            }
        );
        assert_eq!(
            path_source(&registry, "GCP"),
            Some(Source::ConfigMap {
                name: "guests".into(),
                key: "gcp.wasm".into()
            })
        );
        assert_eq!(
            path_source(&registry, "AWS"),
            Some(Source::Path("/base/aws.wasm".into()))
        );
        let jobs: Vec<String> = registry.entries().into_iter().map(|(j, _)| j).collect();
        assert_eq!(jobs, ["mcn", "bootImage.AWS", "bootImage.GCP"]);
    }

    #[test]
    fn unknown_fields_and_garbage_are_refused() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("registry.yaml");
        std::fs::write(&file, "bootimage:\n  GCP: x.wasm\n").unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            Registry::from_file(&file),
            Err(RegistryError::Parse { .. })
        ));
        assert!(matches!(
            Registry::from_file(&dir.path().join("missing.yaml")),
            Err(RegistryError::Read { .. })
        ));
        // A typo inside a full entry names the field.
        match parse("mcn:\n  module: mcn.wasm\n  memoryMB: 3\n") {
            Err(RegistryError::Parse { detail, .. }) => {
                assert!(detail.contains("memoryMB"), "{detail}")
            }
            other => panic!("{other:?}"),
        }
        match parse("mcn:\n  module: mcn.wasm\n  candidate: {module: x.wasm, deadline: 1s}\n") {
            Err(RegistryError::Parse { detail, .. }) => {
                assert!(detail.contains("deadline"), "{detail}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_entries_name_the_entry_and_the_reason() {
        let cases = [
            (
                "mcn: {sha256: x}",
                "mcn",
                "module, configMap or oci is required",
            ),
            (
                "mcn: {module: a.wasm, configMap: {name: n, key: k}}",
                "mcn",
                "give one of",
            ),
            (
                "mcn: {module: a.wasm, oci: r.example/g/mcn:v1}",
                "mcn",
                "give one of",
            ),
            (
                "mcn: {module: a.wasm, pullSecret: creds}",
                "mcn",
                "pullSecret goes with oci only",
            ),
            ("mcn: {oci: 'UPPER/Case:x'}", "mcn", "oci \"UPPER/Case:x\""),
            ("mcn: {oci: ''}", "mcn", "oci \"\""),
            (
                "bootImage: {GCP: {oci: r.example/g/gcp:v1, sha256: sha256:00000000000000000000000000000000000000000000000000000000000000aa}}",
                "bootImage.GCP",
                "named by digest",
            ),
            (
                "bootImage: {GCP: {module: a.wasm, sha256: abc}}",
                "bootImage.GCP",
                "sha256 \"abc\" is not 64 hex digits",
            ),
            (
                "mcn: {module: a.wasm, deadline: soon}",
                "mcn",
                "deadline \"soon\"",
            ),
            ("mcn: {module: a.wasm, memoryMiB: 0}", "mcn", "memoryMiB"),
            (
                "mcn: {module: a.wasm, candidate: {sha256: x}}",
                "mcn",
                "candidate: module, configMap or oci is required",
            ),
        ];
        for (text, job, reason) in cases {
            match parse(text) {
                Err(RegistryError::Entry { entry, detail, .. }) => {
                    assert_eq!(entry, job, "{text}");
                    assert!(detail.contains(reason), "{text}: {detail}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn oci_entries_keep_their_reference_and_pull_secret() {
        let digest = format!("sha256:{}", "c".repeat(64));
        let registry = parsed(&format!(
            "mcn:\n  oci: quay.io/team/mcn@{digest}\n  pullSecret: quay\n  sha256: {pin}\n  \
             candidate: {{oci: 'quay.io/team/mcn:next'}}\nbootImage:\n  GCP: {{oci: 'localhost:5000/gcp:v1'}}\n",
            pin = "d".repeat(64)
        ));
        let mcn = registry.mcn.clone().unwrap_or_else(|| panic!("no mcn"));
        assert_eq!(
            mcn.module.source,
            Source::Oci(OciSource {
                reference: format!("quay.io/team/mcn@{digest}"),
                pull_secret: Some("quay".into()),
                verify: None,
            })
        );
        assert_eq!(
            mcn.candidate.map(|c| c.source.to_string()),
            Some("oci:quay.io/team/mcn:next".into())
        );
        assert_eq!(
            path_source(&registry, "GCP"),
            Some(Source::Oci(OciSource {
                reference: "localhost:5000/gcp:v1".into(),
                pull_secret: None,
                verify: None,
            }))
        );
    }

    #[test]
    fn verify_keys_default_to_the_registry_and_candidates_inherit_their_entry() {
        let registry = parsed(
            "verify: {keys: [{file: keys/default.pub}]}\n\
             mcn:\n  oci: r.example/g/mcn:v1\n  verify:\n    keys:\n      - configMap: {name: cosign, key: team.pub}\n      \
             - secret: {name: release, key: cosign.pub}\n  candidate: {oci: r.example/g/mcn:next}\n\
             bootImage:\n  GCP: {oci: r.example/g/gcp:v1}\n  AWS: aws.wasm\n",
        );
        let verify_of = |source: &Source| match source {
            Source::Oci(oci) => oci.verify.as_ref().map(|v| {
                v.keys
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            }),
            _ => None,
        };
        let mcn = registry.mcn.clone().unwrap_or_else(|| panic!("no mcn"));
        let own = Some("configmap/cosign[team.pub] secret/release[cosign.pub]".to_string());
        assert_eq!(verify_of(&mcn.module.source), own);
        let candidate = mcn.candidate.unwrap_or_else(|| panic!("no candidate"));
        assert_eq!(verify_of(&candidate.source), own);
        let gcp = path_source(&registry, "GCP").unwrap_or_else(|| panic!("no GCP"));
        assert_eq!(verify_of(&gcp), Some("/base/keys/default.pub".into()));
        assert_eq!(
            path_source(&registry, "AWS"),
            Some(Source::Path("/base/aws.wasm".into()))
        );
    }

    #[test]
    fn bad_verify_fields_are_named() {
        let cases = [
            (
                "mcn: {module: a.wasm, verify: {keys: [{file: k.pub}]}}",
                "verify goes with oci only",
            ),
            (
                "mcn: {oci: r.example/g/mcn:v1, verify: {keys: []}}",
                "verify: keys lists no key",
            ),
            (
                "mcn: {oci: r.example/g/mcn:v1, verify: {keys: [{file: a.pub, secret: {name: s, key: k}}]}}",
                "verify: keys[0]: give one of file, configMap and secret",
            ),
            (
                "mcn: {oci: r.example/g/mcn:v1, candidate: {oci: r.example/g/mcn:v2, verify: {keys: [{}]}}}",
                "candidate: verify: keys[0]",
            ),
        ];
        for (text, reason) in cases {
            match parse(text) {
                Err(RegistryError::Entry { detail, .. }) => {
                    assert!(detail.contains(reason), "{text}: {detail}")
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        match parse("verify: {keys: []}\nmcn: a.wasm\n") {
            Err(RegistryError::Parse { detail, .. }) => {
                assert!(detail.contains("verify: keys lists no key"), "{detail}")
            }
            other => panic!("{other:?}"),
        }
        match parse("mcn: {oci: r.example/g/mcn:v1, verify: {keys: [{file: a.pub}], key: x}}") {
            Err(RegistryError::Parse { detail, .. }) => assert!(detail.contains("key"), "{detail}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_installed_registry_names_every_shipped_platform() {
        let registry = Registry::installed(Path::new("/g"));
        assert_eq!(
            path_source(&registry, "Azure"),
            Some(Source::Path("/g/bootimage-azure.wasm".into()))
        );
        assert_eq!(
            registry.mcn.map(|e| e.module.source),
            Some(Source::Path("/g/mcn.wasm".into()))
        );
    }
}
