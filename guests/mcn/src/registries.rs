//! Whether a `registries.conf` change is safe without a drain: the rule
//! behind the `Special` disruption action (upstream `pkg/daemon/drain.go`
//! `isSafeContainerRegistryConfChanges`). Safe
//! means no running workload could get a different image: search registries
//! only appended, no scope removed, no registry repointed, blocked or made
//! insecure, and new mirrors used for digest pulls only.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde::Deserialize;

/// The `pull-from-mirror` value that keeps tag pulls off a mirror.
const DIGEST_ONLY: &str = "digest-only";

/// `true` when moving from the config in data URL `old` to the one in `new`
/// needs no drain. Content that cannot be decoded or parsed is unsafe.
pub fn safe_change(old: &str, new: &str) -> bool {
    match (Config::read(old), Config::read(new)) {
        (Some(old), Some(new)) => old.safe_to(&new),
        _ => false,
    }
}

/// The containers-registries.conf v2 keys the rule looks at; everything
/// else in the file is ignored.
#[derive(Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
struct File {
    #[serde(default)]
    unqualified_search_registries: Vec<String>,
    #[serde(default)]
    registry: Vec<Registry>,
}

#[derive(Deserialize, Default, Clone, PartialEq)]
#[serde(rename_all = "kebab-case")]
struct Registry {
    #[serde(default)]
    prefix: String,
    #[serde(default)]
    location: String,
    #[serde(default)]
    insecure: bool,
    #[serde(default)]
    blocked: bool,
    #[serde(default)]
    mirror_by_digest_only: bool,
    #[serde(default)]
    mirror: Vec<Mirror>,
}

#[derive(Deserialize, Default, Clone, PartialEq)]
#[serde(rename_all = "kebab-case")]
struct Mirror {
    #[serde(default)]
    location: String,
    #[serde(default)]
    pull_from_mirror: String,
}

impl Mirror {
    fn digest_only(&self) -> bool {
        self.pull_from_mirror == DIGEST_ONLY
    }
}

impl Registry {
    fn scope(&self) -> &str {
        if self.prefix.is_empty() {
            &self.location
        } else {
            &self.prefix
        }
    }

    fn mirror(&self, location: &str) -> Option<&Mirror> {
        self.mirror.iter().find(|m| m.location == location)
    }

    /// Rule 3: an existing scope whose entry changed.
    fn safe_to(&self, new: &Registry) -> bool {
        if (&self.prefix, &self.location, self.blocked, self.insecure)
            != (&new.prefix, &new.location, new.blocked, new.insecure)
        {
            return false;
        }
        let kept = self
            .mirror
            .iter()
            .all(|old| match new.mirror(&old.location) {
                None => false,
                Some(m) => m.pull_from_mirror == old.pull_from_mirror || m.digest_only(),
            });
        let added_safe = new
            .mirror
            .iter()
            .filter(|m| self.mirror(&m.location).is_none())
            .all(|m| m.digest_only() || new.mirror_by_digest_only);
        kept && added_safe
    }

    /// Rule 4: a scope that did not exist before.
    fn safe_when_new(&self) -> bool {
        if self.mirror.is_empty() {
            self.mirror_by_digest_only
        } else {
            self.mirror.iter().all(Mirror::digest_only)
        }
    }
}

struct Config {
    search: Vec<String>,
    /// By scope; a later entry for the same scope wins.
    registries: BTreeMap<String, Registry>,
}

impl Config {
    /// `None` when the data URL or the TOML cannot be read. An empty source
    /// (no file) is an empty config.
    fn read(source: &str) -> Option<Config> {
        let text = decode_data_url(source)?;
        let file: File = toml::from_str(&text).ok()?;
        let registries = file
            .registry
            .into_iter()
            .map(|r| (r.scope().to_string(), r))
            .collect();
        Some(Config {
            search: file.unqualified_search_registries,
            registries,
        })
    }

    fn safe_to(&self, new: &Config) -> bool {
        if !new.search.starts_with(&self.search) {
            return false;
        }
        let existing = self
            .registries
            .iter()
            .all(|(scope, old)| new.registries.get(scope).is_some_and(|r| old.safe_to(r)));
        let added = new
            .registries
            .iter()
            .filter(|(scope, _)| !self.registries.contains_key(*scope))
            .all(|(_, r)| r.safe_when_new());
        existing && added
    }
}

/// The text of a `data:` URL, percent-encoded or base64; empty input is
/// empty text.
fn decode_data_url(source: &str) -> Option<String> {
    if source.is_empty() {
        return Some(String::new());
    }
    let (header, data) = source.strip_prefix("data:")?.split_once(',')?;
    let bytes = if header.ends_with(";base64") {
        let data: String = percent_encoding::percent_decode_str(data)
            .decode_utf8()
            .ok()?
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .ok()?
    } else {
        percent_encoding::percent_decode_str(data).collect()
    };
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> String {
        format!(
            "data:text/plain;charset=utf-8;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(text)
        )
    }

    const BASE: &str = r#"
unqualified-search-registries = ["registry.access.redhat.com", "docker.io"]
short-name-mode = ""

[[registry]]
prefix = ""
location = "quay.io/openshift"
mirror-by-digest-only = true

[[registry.mirror]]
location = "mirror.example.com/openshift"
"#;

    fn safe(new: &str) -> bool {
        safe_change(&url(BASE), &url(new))
    }

    #[test]
    fn unchanged_and_appended_changes_are_safe() {
        assert!(safe(BASE));
        assert!(safe(
            &BASE.replace(r#""docker.io"]"#, r#""docker.io", "example.com"]"#)
        ));
        // A new mirror on a digest-only registry, and a new digest-only scope.
        assert!(safe(&format!(
            "{BASE}\n[[registry.mirror]]\nlocation = \"second.example.com/openshift\"\n\n[[registry]]\nlocation = \"new.example.com\"\n[[registry.mirror]]\nlocation = \"m.example.com\"\npull-from-mirror = \"digest-only\"\n"
        )));
        // Percent-encoded URLs read the same as base64 ones.
        let percent = format!(
            "data:,{}",
            percent_encoding::utf8_percent_encode(BASE, percent_encoding::NON_ALPHANUMERIC)
        );
        assert!(safe_change(&percent, &url(BASE)));
    }

    #[test]
    fn changes_that_could_repoint_a_pull_are_unsafe() {
        for unsafe_change in [
            BASE.replace(
                r#"["registry.access.redhat.com", "docker.io"]"#,
                r#"["docker.io"]"#,
            ),
            BASE.replace("mirror.example.com", "other.example.com"),
            BASE.replace("mirror-by-digest-only = true", "blocked = true"),
            BASE.replace(
                "location = \"quay.io/openshift\"",
                "location = \"quay.io/x\"",
            ),
            format!("{BASE}\n[[registry]]\nlocation = \"new.example.com\"\n"),
            format!(
                "{BASE}\n[[registry]]\nlocation = \"new.example.com\"\nmirror-by-digest-only = true\n[[registry.mirror]]\nlocation = \"m.example.com\"\n"
            ),
            "unqualified-search-registries = [".to_string(),
        ] {
            assert!(!safe(&unsafe_change), "{unsafe_change}");
        }
        assert!(!safe_change("data:;base64,!!!", &url(BASE)));
        assert!(!safe_change("http://example.com/x", &url(BASE)));
        // From nothing, adding a digest-only scope is safe; a plain one is not.
        assert!(safe_change(
            "",
            &url("[[registry]]\nlocation = \"a\"\nmirror-by-digest-only = true\n")
        ));
        assert!(!safe_change(
            "",
            &url(BASE.replace("mirror-by-digest-only = true", "").as_str())
        ));
    }
}
