//! Docker configs (`.dockerconfigjson`, `config.json`): which entry's
//! credentials a repository is pulled with, chosen as the kubelet chooses one
//! (kubernetes `pkg/credentialprovider/keyring.go`, `BasicDockerKeyring` and
//! `URLsMatch`), so one pull Secret can hold a robot account per team: the
//! host matches label by label (a glob never spans a dot), the port exactly,
//! and the path as a prefix on whole segments (where the kubelet compares
//! strings, which would hand `quay.io/team`'s credentials to `quay.io/team-b`);
//! the most specific entry wins (longest path, then a literal host over a
//! glob, then the first written). A leading `/v1/` or `/v2/` of a key's path
//! is the registry API's and is dropped. See docs/guests/signing.md.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::Value;

/// Why a Docker config gives no credentials for a repository.
///
/// A pull Secret is a secret: no message quotes a value from it, only
/// where it is (a field, an entry's key, a line and column), so the
/// message may go to a status, an Event or a log. (serde's own messages
/// quote the offending value: `invalid type: string "dXNlcjpwYXNz"`.)
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    #[error(".dockerconfigjson is not JSON (line {line}, column {column})")]
    NotJson { line: usize, column: usize },
    #[error(".dockerconfigjson: {field} is not {expected}")]
    Shape {
        /// Where the value is, e.g. `auths["quay.io"].auth`.
        field: String,
        expected: &'static str,
    },
    #[error("the key {key:?} names no registry host")]
    Key { key: String },
    #[error("the key {key:?} has a glob that does not parse: {source}")]
    Glob {
        key: String,
        #[source]
        source: glob::PatternError,
    },
    #[error("no credentials for {0}")]
    NoEntry(String),
    #[error("the entry {key:?} has neither auth nor username/password")]
    NoAuth { key: String },
    #[error("the auth of {key:?} is not base64: {why}")]
    NotBase64 { key: String, why: &'static str },
    #[error("the auth of {key:?} is not UTF-8")]
    NotUtf8 { key: String },
    #[error("the auth of {key:?} is not user:password")]
    NotUserPassword { key: String },
}

/// The repository a reference is pulled from, as entries are matched to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    labels: Vec<String>,
    port: Option<String>,
    path: Vec<String>,
}

impl Target {
    /// `registry` as `host[:port]`, `repository` its path there.
    pub fn new(registry: &str, repository: &str) -> Target {
        let (host, port) = split_port(registry);
        Target {
            labels: labels(host),
            port: port.map(str::to_string),
            path: segments(repository),
        }
    }
}

/// A user and password for a registry.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub user: String,
    pub password: String,
}

/// The user only: a `{:?}` in a log or a failed assertion must not print
/// the password.
impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &REDACTED)
            .finish()
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.labels.join("."))?;
        if let Some(port) = &self.port {
            write!(f, ":{port}")?;
        }
        self.path.iter().try_for_each(|s| write!(f, "/{s}"))
    }
}

/// A Docker config's entries, each with the repositories its key covers.
#[derive(Debug)]
pub struct DockerConfig {
    entries: Vec<Entry>,
}

#[derive(Debug)]
struct Entry {
    key: String,
    labels: Vec<glob::Pattern>,
    /// No label is a glob.
    literal: bool,
    port: Option<String>,
    path: Vec<String>,
    auth: RawAuth,
}

/// An entry's credential fields, as written (`auth` still encoded).
struct RawAuth {
    auth: Option<String>,
    username: Option<String>,
    password: Option<String>,
}

/// Never the values: a `{:?}` in a log must not print them.
impl std::fmt::Debug for RawAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawAuth")
            .field("auth", &self.auth.as_ref().map(|_| REDACTED))
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| REDACTED))
            .finish()
    }
}

const REDACTED: &str = "<redacted>";

impl RawAuth {
    /// The entry under `key`: an object whose credential fields are
    /// strings (or absent, or null); other fields (`email`,
    /// `identitytoken`) are not read.
    fn parse(key: &str, value: &Value) -> Result<RawAuth, CredentialsError> {
        let entry = format!("auths[{key:?}]");
        let Value::Object(fields) = value else {
            return Err(shape(entry, "an object"));
        };
        let text = |name: &str| match fields.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(shape(format!("{entry}.{name}"), "a string")),
        };
        Ok(RawAuth {
            auth: text("auth")?,
            username: text("username")?,
            password: text("password")?,
        })
    }
}

fn shape(field: String, expected: &'static str) -> CredentialsError {
    CredentialsError::Shape { field, expected }
}

/// How specific a matching entry is; greater wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Specificity {
    path_segments: usize,
    literal_host: bool,
}

impl DockerConfig {
    /// Every key is parsed here, so a broken one is refused whether or not
    /// it would have matched; an entry's credentials are decoded only when
    /// it is the one chosen.
    ///
    /// The JSON is read as a tree and its shape checked by hand, rather
    /// than by serde into typed fields, so that no error can quote a value
    /// (see [`CredentialsError`]); entries are taken in key order.
    pub fn parse(json: &[u8]) -> Result<DockerConfig, CredentialsError> {
        let value: Value = serde_json::from_slice(json).map_err(|e| CredentialsError::NotJson {
            line: e.line(),
            column: e.column(),
        })?;
        let Value::Object(config) = value else {
            return Err(shape("the config".into(), "an object"));
        };
        let auths = match config.get("auths") {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::Object(auths)) => auths.iter().collect(),
            Some(_) => return Err(shape("auths".into(), "an object")),
        };
        let entries = auths
            .into_iter()
            .map(|(key, value)| Entry::parse(key.clone(), RawAuth::parse(key, value)?))
            .collect::<Result<_, _>>()?;
        Ok(DockerConfig { entries })
    }

    /// The most specific entry covering `target`, the first written on a
    /// tie.
    pub fn lookup(&self, target: &Target) -> Option<Chosen<'_>> {
        first_most_specific(self.candidates(target).map(|chosen| ((), chosen))).map(|(_, c)| c)
    }

    /// [`Self::lookup`] across several configs, as the kubelet merges a
    /// ServiceAccount's `imagePullSecrets` into one keyring: the most
    /// specific entry of any of them, the first listed on a tie, with the
    /// key (a Secret's name) of the config it is in.
    pub fn lookup_across<'c, K>(
        configs: impl IntoIterator<Item = (K, &'c DockerConfig)>,
        target: &Target,
    ) -> Option<(K, Chosen<'c>)> {
        first_most_specific(configs.into_iter().filter_map(|(key, config)| {
            let chosen = config.lookup(target)?;
            Some((key, chosen))
        }))
    }

    fn candidates<'c>(&'c self, target: &Target) -> impl Iterator<Item = Chosen<'c>> {
        self.entries.iter().filter_map(move |entry| {
            let specificity = entry.covers(target)?;
            Some(Chosen { entry, specificity })
        })
    }
}

/// The candidate of greatest specificity, the earliest on a tie.
fn first_most_specific<'c, K>(
    candidates: impl Iterator<Item = (K, Chosen<'c>)>,
) -> Option<(K, Chosen<'c>)> {
    candidates.reduce(|best, next| {
        if next.1.specificity > best.1.specificity {
            next
        } else {
            best
        }
    })
}

/// The entry chosen for a repository.
#[derive(Debug)]
pub struct Chosen<'a> {
    entry: &'a Entry,
    pub specificity: Specificity,
}

impl Chosen<'_> {
    /// The entry's credentials: a broken one is an error, never a reason
    /// to fall back to a less specific entry, whose credentials are not
    /// meant for this repository.
    pub fn credentials(&self) -> Result<Credentials, CredentialsError> {
        let (key, raw) = (&self.entry.key, &self.entry.auth);
        if let (Some(user), Some(password)) = (&raw.username, &raw.password) {
            return Ok(Credentials {
                user: user.clone(),
                password: password.clone(),
            });
        }
        let encoded = raw
            .auth
            .as_deref()
            .ok_or_else(|| CredentialsError::NoAuth { key: key.clone() })?;
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .map_err(|error| CredentialsError::NotBase64 {
                key: key.clone(),
                why: base64_why(&error),
            })?;
        let text = String::from_utf8(decoded)
            .map_err(|_| CredentialsError::NotUtf8 { key: key.clone() })?;
        let (user, password) = text
            .split_once(':')
            .ok_or_else(|| CredentialsError::NotUserPassword { key: key.clone() })?;
        Ok(Credentials {
            user: user.to_string(),
            password: password.to_string(),
        })
    }
}

impl Entry {
    fn parse(key: String, auth: RawAuth) -> Result<Entry, CredentialsError> {
        let bare = key
            .strip_prefix("https://")
            .or_else(|| key.strip_prefix("http://"))
            .unwrap_or(&key);
        let (host_port, path) = bare.split_once('/').unwrap_or((bare, ""));
        let path = ["v1/", "v2/"]
            .iter()
            .find_map(|api| path.strip_prefix(api))
            .unwrap_or(path);
        let (host, port) = split_port(host_port);
        if host.is_empty() {
            return Err(CredentialsError::Key { key });
        }
        let labels: Vec<glob::Pattern> = labels(host)
            .iter()
            .map(|label| glob::Pattern::new(label))
            .collect::<Result<_, _>>()
            .map_err(|source| CredentialsError::Glob {
                key: key.clone(),
                source,
            })?;
        Ok(Entry {
            literal: labels
                .iter()
                .all(|l| l.as_str() == glob::Pattern::escape(l.as_str())),
            labels,
            port: port.map(str::to_string),
            path: segments(path),
            key,
            auth,
        })
    }

    fn covers(&self, target: &Target) -> Option<Specificity> {
        let host = self.labels.len() == target.labels.len()
            && self
                .labels
                .iter()
                .zip(&target.labels)
                .all(|(glob, label)| glob.matches(label));
        let path = target.path.starts_with(&self.path);
        (host && path && self.port == target.port).then_some(Specificity {
            path_segments: self.path.len(),
            literal_host: self.literal,
        })
    }
}

/// What is wrong with an `auth` that is not base64, by kind only: the
/// decoder's own message names the offending byte, a byte of the secret.
fn base64_why(error: &base64::DecodeError) -> &'static str {
    match error {
        base64::DecodeError::InvalidByte(..) => "a character outside the base64 alphabet",
        base64::DecodeError::InvalidLength(_) => "a length no base64 text has",
        base64::DecodeError::InvalidLastSymbol(..) => "a last character with bits left over",
        base64::DecodeError::InvalidPadding => "wrong padding",
    }
}

/// `host[:port]` split at the port. (References name no IPv6 address.)
fn split_port(host_port: &str) -> (&str, Option<&str>) {
    match host_port.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (host_port, None),
    }
}

/// A host's labels, lowercase; Docker Hub's two names are one registry,
/// stored under its legacy index address.
fn labels(host: &str) -> Vec<String> {
    let host = host.to_ascii_lowercase();
    let host = if host == "docker.io" {
        "index.docker.io".to_string()
    } else {
        host
    };
    host.split('.').map(str::to_string).collect()
}

fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The credentials a Docker config holds for `target`.
pub fn credentials_for(
    config_json: &[u8],
    target: &Target,
) -> Result<Credentials, CredentialsError> {
    DockerConfig::parse(config_json)?
        .lookup(target)
        .ok_or_else(|| CredentialsError::NoEntry(target.to_string()))?
        .credentials()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `registry/repository`, as a reference names them.
    fn target(image: &str) -> Target {
        match image.split_once('/') {
            Some((registry, repository)) => Target::new(registry, repository),
            None => panic!("{image}: no registry"),
        }
    }

    /// The user the entry chosen for `image` holds, or the error.
    fn user(config: &str, image: &str) -> Result<String, String> {
        credentials_for(config.as_bytes(), &target(image))
            .map(|c| c.user)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_most_specific_entry_is_chosen_as_the_kubelet_chooses_it() {
        let entries = [
            ("quay.io", "quay"),
            ("quay.io/team-a", "team-a"),
            ("https://quay.io/v2/team-b/", "team-b"),
            ("quay.io/team-b/special", "team-b-special"),
            ("*.example.com", "glob"),
            ("r.example.com", "literal"),
            ("*.example.com/deep/path", "glob-deep"),
            ("r.example:5000", "port"),
            ("https://index.docker.io/v1/", "hub"),
        ];
        let auths: BTreeMap<_, _> = entries
            .iter()
            .map(|(key, user)| (*key, serde_json::json!({"username": user, "password": "p"})))
            .collect();
        let config = serde_json::json!({ "auths": auths }).to_string();
        let cases = [
            // The two teams of one registry each get their own robot.
            ("quay.io/team-a/mcn", Ok("team-a")),
            ("quay.io/team-b/mcn", Ok("team-b")),
            ("quay.io/team-b/special/mcn", Ok("team-b-special")),
            // A path prefix counts on whole segments only.
            ("quay.io/team-a-fork/mcn", Ok("quay")),
            ("quay.io/other/mcn", Ok("quay")),
            // Globs cover one label; a literal host beats a glob; a longer
            // path beats both.
            ("a.example.com/ns/m", Ok("glob")),
            ("r.example.com/ns/m", Ok("literal")),
            ("r.example.com/deep/path/m", Ok("glob-deep")),
            (
                "a.b.example.com/ns/m",
                Err("no credentials for a.b.example.com/ns/m"),
            ),
            // Ports are matched exactly.
            ("r.example:5000/m", Ok("port")),
            ("r.example/m", Err("no credentials for r.example/m")),
            (
                "quay.io:443/team-a/m",
                Err("no credentials for quay.io:443/team-a/m"),
            ),
            // Docker Hub under its legacy key, by either name.
            ("docker.io/library/m", Ok("hub")),
        ];
        for (image, want) in cases {
            assert_eq!(
                user(&config, image),
                want.map(str::to_string).map_err(str::to_string),
                "{image}"
            );
        }
    }

    #[test]
    fn auth_is_decoded_from_the_chosen_entry_only() {
        let auth = base64::engine::general_purpose::STANDARD.encode("robot:s3cr:et");
        let config = format!(
            r#"{{"auths":{{"q.io/good":{{"auth":"{auth}"}},"q.io/bad":{{"auth":"%%%"}}}}}}"#
        );
        assert_eq!(
            credentials_for(config.as_bytes(), &target("q.io/good/m")).ok(),
            Some(Credentials {
                user: "robot".into(),
                password: "s3cr:et".into()
            })
        );
        // The broken entry is the one meant for q.io/bad: no fallback.
        assert!(
            user(&config, "q.io/bad/m").is_err_and(|e| e.contains("\"q.io/bad\" is not base64"))
        );
    }

    #[test]
    fn hostile_pull_secrets_are_refused_with_a_reason() {
        let cases: [(&[u8], &str); 8] = [
            (b"not json", "is not JSON (line 1, column 2)"),
            (br#"{"auths":{"q.io":{"auth":"%%%"}}}"#, "not base64"),
            (br#"{"auths":{"q.io":{"auth":"/w=="}}}"#, "not UTF-8"),
            (
                br#"{"auths":{"q.io":{"auth":"bm9jb2xvbg=="}}}"#,
                "not user:password",
            ),
            (br#"{"auths":{"q.io":{}}}"#, "neither auth"),
            (br#"{"auths":[]}"#, "auths is not an object"),
            (br#"{"auths":{"https:///ns":{}}}"#, "names no registry host"),
            (br#"{"auths":{"q***.io":{}}}"#, "glob that does not parse"),
        ];
        for (json, reason) in cases {
            match credentials_for(json, &target("q.io/m")) {
                Err(e) => assert!(e.to_string().contains(reason), "{e}"),
                Ok(a) => panic!("{a:?}"),
            }
        }
    }

    /// Every way a pull Secret can be mistyped, each carrying the secret
    /// where the mistake is: the error says where, never what.
    #[test]
    fn no_error_quotes_the_secret() {
        let b64 = |s: &[u8]| base64::engine::general_purpose::STANDARD.encode(s);
        let secret = "robot:Pa55w0rd-XK7Q";
        let encoded = b64(secret.as_bytes());
        let no_colon = b64(b"robotPa55w0rd-XK7Q");
        let not_utf8 = b64(b"\xffPa55w0rd-XK7Q");
        let cases = [
            (format!(r#""{encoded}""#), "the config is not an object"),
            (format!(r#"["{encoded}"]"#), "the config is not an object"),
            (
                format!(r#"{{"auths":"{encoded}"}}"#),
                "auths is not an object",
            ),
            (
                format!(r#"{{"auths":{{"q.io":"{encoded}"}}}}"#),
                r#"auths["q.io"] is not an object"#,
            ),
            (
                r#"{"auths":{"q.io":{"auth":5500770099}}}"#.to_string(),
                r#"auths["q.io"].auth is not a string"#,
            ),
            (
                format!(r#"{{"auths":{{"q.io":{{"username":"u","password":["{secret}"]}}}}}}"#),
                r#"auths["q.io"].password is not a string"#,
            ),
            (
                format!(r#"{{"auths":{{"q.io":{{"username":{{"{secret}":1}}}}}}}}"#),
                r#"auths["q.io"].username is not a string"#,
            ),
            (
                format!(r#"{{"auths":{{"q.io":{{"auth":"{secret}"}}}}}}"#),
                "not base64: a character outside the base64 alphabet",
            ),
            (
                format!(r#"{{"auths":{{"q.io":{{"auth":"{}"}}}}}}"#, &encoded[1..]),
                "not base64",
            ),
            (
                format!(r#"{{"auths":{{"q.io":{{"auth":"{no_colon}"}}}}}}"#),
                "not user:password",
            ),
            (
                format!(r#"{{"auths":{{"q.io":{{"auth":"{not_utf8}"}}}}}}"#),
                "not UTF-8",
            ),
            (
                format!(r#"{{"auths":{{"q.io":{{"auth":{encoded}}}}}}}"#),
                "is not JSON (line 1, column 26)",
            ),
            (
                format!(r#"{{"auths":{{"q.io":{{"auth":"{encoded}"}}}}"#),
                "is not JSON",
            ),
            (
                format!("{{\"auths\":{{\"q.io\":{{\"auth\":\"{encoded}\u{1}\"}}}}}}"),
                "is not JSON",
            ),
        ];
        let needles = [
            secret,
            "Pa55w0rd",
            "5500770099",
            &encoded,
            &encoded[4..12],
            &no_colon[4..12],
        ];
        for (config, reason) in &cases {
            let error = match credentials_for(config.as_bytes(), &target("q.io/m")) {
                Err(e) => e,
                Ok(c) => panic!("{config}: {c:?}"),
            };
            let shown = format!("{error} / {error:?}");
            assert!(shown.contains(reason), "{config}: {shown}");
            for needle in needles {
                assert!(!shown.contains(needle), "{config}: {shown} quotes {needle}");
            }
        }
    }

    #[test]
    fn debug_output_never_shows_a_password() {
        let config = br#"{"auths":{"q.io":{"username":"u","password":"Pa55w0rd","auth":"dTpQYTU1dzByZA=="}}}"#;
        let parsed = DockerConfig::parse(config).map(|c| format!("{c:?}"));
        let credentials = credentials_for(config, &target("q.io/m")).map(|c| format!("{c:?}"));
        for shown in [parsed, credentials] {
            let shown = shown.unwrap_or_else(|e| panic!("{e}"));
            assert!(shown.contains("<redacted>"), "{shown}");
            assert!(
                !shown.contains("Pa55w0rd") && !shown.contains("dTpQ"),
                "{shown}"
            );
        }
    }
}
