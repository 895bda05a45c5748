//! Which guest module serves which job. Platform teams swap a module by
//! pointing the registry at it; the host is not rebuilt or restarted. Each
//! job takes a path (the short form) or a full entry (`entries`): a module
//! from a file, a ConfigMap key or an OCI registry, with its pin, limits,
//! candidate and `verify`. A candidate without its own `verify` is held to
//! its entry's, and an entry without one to the registry's top-level
//! `verify`; an entry that pins `sha256` must name its OCI artifact by
//! digest, so the pin and the reference cannot drift apart. The format, with
//! an example: docs/reference/registry-file.md; `verify`:
//! docs/guests/signature-policy.md. The second half is unit tests of the
//! format.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{self, MapAccess, Visitor};

use super::entries::{Entry, RawEntry, RawVerify};
use super::job::{EntryName, Jobs};

/// The key of a registry held in a ConfigMap.
pub const CONFIGMAP_KEY: &str = "registry.yaml";

/// Which entry serves each job. A job without an entry serves no guest:
/// a platform without one gets `noop` decisions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Registry {
    entries: BTreeMap<EntryName, Entry>,
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
    pub fn installed(dir: &Path, jobs: &Jobs) -> Registry {
        let entries = jobs
            .iter()
            .flat_map(|kind| {
                kind.installed().into_iter().map(move |(key, file)| {
                    let job = match key {
                        Some(key) => EntryName::keyed(kind, key),
                        None => EntryName::single(kind),
                    };
                    (job, Entry::path(dir.join(file)))
                })
            })
            .collect();
        Registry { entries }
    }

    pub fn from_file(path: &Path, jobs: &Jobs) -> Result<Registry, RegistryError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| RegistryError::Read {
            path: shown.clone(),
            source,
        })?;
        Registry::parse(&text, &shown, path.parent().unwrap_or(Path::new(".")), jobs)
    }

    /// Parses registry YAML; `shown` names it in errors and relative module
    /// paths are joined to `base`.
    pub fn parse(
        text: &str,
        shown: &str,
        base: &Path,
        jobs: &Jobs,
    ) -> Result<Registry, RegistryError> {
        let unparsed = |detail: &dyn fmt::Display| RegistryError::Parse {
            path: shown.to_string(),
            detail: detail.to_string(),
        };
        let raw = serde_saphyr::with_deserializer_from_str(text, |de| {
            RawRegistry::deserialize_with(jobs, de)
        })
        .map_err(|e| unparsed(&e))?;
        let default = raw
            .verify
            .map(|v| v.resolve(base, "verify: "))
            .transpose()
            .map_err(|e| unparsed(&e))?;
        let entries = raw
            .entries
            .into_iter()
            .map(|(job, raw)| match raw.resolve(base, default.as_ref()) {
                Ok(entry) => Ok((job, entry)),
                Err(detail) => Err(RegistryError::Entry {
                    path: shown.to_string(),
                    entry: job.to_string(),
                    detail: detail.to_string(),
                }),
            })
            .collect::<Result<_, _>>()?;
        Ok(Registry { entries })
    }

    pub fn get(&self, job: &EntryName) -> Option<&Entry> {
        self.entries.get(job)
    }

    /// Sets `job`'s entry, replacing the one it had.
    pub fn insert(&mut self, job: EntryName, entry: Entry) {
        self.entries.insert(job, entry);
    }

    /// Every entry with its job, jobs the host cannot serve without first.
    pub fn entries(&self) -> impl Iterator<Item = (&EntryName, &Entry)> {
        self.entries.iter()
    }
}

// ---- the YAML form -------------------------------------------------------------------------

/// A registry file as written: the default `verify`, and every job's
/// entries under the job's name (one entry, or a map by key).
struct RawRegistry {
    /// The default `verify` of every OCI module without its own.
    verify: Option<RawVerify>,
    entries: BTreeMap<EntryName, RawEntry>,
}

impl RawRegistry {
    /// Reads the registry keys `jobs` names, refusing any other as serde
    /// refuses an unknown field of a struct.
    fn deserialize_with<'de, D: de::Deserializer<'de>>(
        jobs: &Jobs,
        deserializer: D,
    ) -> Result<RawRegistry, D::Error> {
        struct RegistryVisitor<'j>(&'j Jobs);
        impl<'de> Visitor<'de> for RegistryVisitor<'_> {
            type Value = RawRegistry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("struct RawRegistry")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawRegistry, A::Error> {
                let mut verify = None;
                let mut seen = BTreeSet::new();
                let mut entries = BTreeMap::new();
                while let Some(field) = map.next_key::<String>()? {
                    let Some(name) = self.0.fields().iter().find(|f| **f == field) else {
                        return Err(de::Error::unknown_field(&field, self.0.fields()));
                    };
                    if !seen.insert(*name) {
                        return Err(de::Error::duplicate_field(name));
                    }
                    let Some(kind) = self.0.named(name) else {
                        verify = map.next_value::<Option<RawVerify>>()?;
                        continue;
                    };
                    if kind.key().is_some() {
                        let keyed = map.next_value::<BTreeMap<String, RawEntry>>()?;
                        entries.extend(
                            keyed
                                .into_iter()
                                .map(|(k, e)| (EntryName::keyed(kind, k), e)),
                        );
                    } else if let Some(entry) = map.next_value::<Option<RawEntry>>()? {
                        entries.insert(EntryName::single(kind), entry);
                    }
                }
                Ok(RawRegistry { verify, entries })
            }
        }
        deserializer.deserialize_struct("RawRegistry", jobs.fields(), RegistryVisitor(jobs))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::entries::{Module, OciSource, Source};
    use crate::job::tests::JOBS;
    use mco_fetch::image_policy::PolicySelector;

    fn parse(text: &str) -> Result<Registry, RegistryError> {
        Registry::parse(text, "registry.yaml", Path::new("/base"), &JOBS)
    }

    fn kind(name: &str) -> &'static dyn crate::JobKind {
        JOBS.named(name)
            .unwrap_or_else(|| panic!("no job {name} registered"))
    }

    fn mcn(registry: &Registry) -> Option<Entry> {
        registry.get(&EntryName::single(kind("mcn"))).cloned()
    }

    fn parsed(text: &str) -> Registry {
        parse(text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn path_source(registry: &Registry, platform: &str) -> Option<Source> {
        registry
            .get(&EntryName::keyed(kind("bootImage"), platform))
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
        let registry = Registry::from_file(&file, &JOBS).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            path_source(&registry, "GCP"),
            Some(Source::Path(dir.path().join("custom/gcp.wasm")))
        );
        assert_eq!(
            path_source(&registry, "AWS"),
            Some(Source::Path("/abs/aws.wasm".into()))
        );
        assert_eq!(path_source(&registry, "Azure"), None);
        assert_eq!(mcn(&registry), None);
    }

    #[test]
    fn the_full_form_sets_digest_limits_and_candidate() {
        let pin = "AB".repeat(32);
        let registry = parsed(&format!(
            "mcn:\n  module: mcn.wasm\n  sha256: sha256:{pin}\n  memoryMiB: 32\n  deadline: 250ms\n  \
             candidate:\n    configMap: {{name: mcn-next, key: mcn.wasm}}\n    sha256: {pin}\n\
             bootImage:\n  GCP: {{configMap: {{name: guests, key: gcp.wasm}}}}\n  AWS: aws.wasm\n"
        ));
        let mcn = mcn(&registry).unwrap_or_else(|| panic!("no mcn"));
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
        let jobs: Vec<String> = registry.entries().map(|(j, _)| j.to_string()).collect();
        assert_eq!(jobs, ["mcn", "bootImage.AWS", "bootImage.GCP"]);
    }

    #[test]
    fn unknown_fields_and_garbage_are_refused() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("registry.yaml");
        std::fs::write(&file, "bootimage:\n  GCP: x.wasm\n").unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            Registry::from_file(&file, &JOBS),
            Err(RegistryError::Parse { .. })
        ));
        assert!(matches!(
            Registry::from_file(&dir.path().join("missing.yaml"), &JOBS),
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
        let mcn = mcn(&registry).unwrap_or_else(|| panic!("no mcn"));
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
        let mcn = mcn(&registry).unwrap_or_else(|| panic!("no mcn"));
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
    fn verify_takes_cluster_image_policies_beside_its_keys() {
        let policies_of = |text: &str| match mcn(&parsed(text)).map(|e| e.module.source) {
            Some(Source::Oci(OciSource {
                verify: Some(verify),
                ..
            })) => (verify.keys.len(), verify.cluster_image_policies),
            other => panic!("{text}: {other:?}"),
        };
        let all = "mcn: {oci: r.example/g/mcn:v1, verify: {clusterImagePolicies: true}}";
        assert_eq!(policies_of(all), (0, Some(PolicySelector::All)));
        let named = "mcn:\n  oci: r.example/g/mcn:v1\n  verify:\n    keys: [{file: k.pub}]\n    \
                     clusterImagePolicies: [team, release, team]\n";
        let names = PolicySelector::Named(vec!["team".into(), "release".into()]);
        assert_eq!(policies_of(named), (1, Some(names)));
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
        let oci = |verify: &str| format!("mcn: {{oci: r.example/g/mcn:v1, verify: {verify}}}");
        for (verify, reason) in [
            ("{}", "verify: keys lists no key"),
            ("{clusterImagePolicies: false}", "verify: keys lists no key"),
            (
                "{clusterImagePolicies: []}",
                "verify: clusterImagePolicies lists no policy",
            ),
            (
                "{clusterImagePolicies: team}",
                "verify: clusterImagePolicies is true or a list of ClusterImagePolicy names, not \"team\"",
            ),
            (
                "{clusterImagePolicies: {all: true}}",
                "clusterImagePolicies is true or a list of ClusterImagePolicy names, not {\"all\":true}",
            ),
            (
                "{clusterImagePolicies: [team, 3]}",
                "verify: clusterImagePolicies: 3 is not a ClusterImagePolicy name",
            ),
            (
                "{clusterImagePolicies: ['']}",
                "clusterImagePolicies: \"\" is not a ClusterImagePolicy name",
            ),
        ] {
            match parse(&oci(verify)) {
                Err(RegistryError::Entry { detail, .. }) => {
                    assert!(detail.contains(reason), "{verify}: {detail}")
                }
                other => panic!("{verify}: {other:?}"),
            }
        }
        match parse("mcn: {oci: r.example/g/mcn:v1, verify: {keys: [{file: a.pub}], key: x}}") {
            Err(RegistryError::Parse { detail, .. }) => assert!(detail.contains("key"), "{detail}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_installed_registry_names_every_shipped_platform() {
        let registry = Registry::installed(Path::new("/g"), &JOBS);
        assert_eq!(
            path_source(&registry, "Azure"),
            Some(Source::Path("/g/bootimage-azure.wasm".into()))
        );
        assert_eq!(
            mcn(&registry).map(|e| e.module.source),
            Some(Source::Path("/g/mcn.wasm".into()))
        );
    }
}
