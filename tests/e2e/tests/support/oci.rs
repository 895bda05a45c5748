//! The OCI parts the e2e tests run against: a real registry (CNCF
//! distribution, from Debian's docker-registry) on loopback, and the real
//! `oras` and `cosign`, all from `tests/tools/oci/build.sh`, which fetches and
//! builds them once into a cache outside the clone (the tests fail, never
//! skip, when it cannot).

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::Value;

use super::controller::free_addr;

/// The registry, oras and cosign, from `tests/tools/oci/build.sh`.
pub struct Tools {
    pub registry: PathBuf,
    pub oras: PathBuf,
    pub cosign: PathBuf,
}

pub fn tools() -> Result<Tools> {
    let script = mco_e2e::crate_dir().join("../tools/oci/build.sh");
    let out = Command::new("bash")
        .arg(&script)
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running {}", script.display()))?;
    ensure!(out.status.success(), "{} failed", script.display());
    let root = String::from_utf8(out.stdout)?;
    let root = PathBuf::from(root.lines().last().context("build.sh printed nothing")?);
    let find = |prefix: &str, name: &str| -> Result<PathBuf> {
        for dir in std::fs::read_dir(&root)? {
            let dir = dir?.path();
            let matches = dir
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix));
            if matches && dir.join(name).is_file() {
                return Ok(dir.join(name));
            }
        }
        bail!("no {prefix}*/{name} under {}", root.display())
    };
    Ok(Tools {
        registry: find("registry-", "registry")?,
        oras: find("oras-", "oras")?,
        cosign: find("cosign-", "cosign")?,
    })
}

/// A registry child process on loopback; dropping it kills it.
pub struct Registry {
    pub addr: SocketAddr,
    storage: PathBuf,
    /// Its own log: one JSON object per line, each request with its user.
    log: PathBuf,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Registry {
    /// An anonymous registry: anyone may push and pull.
    pub fn start(binary: &Path) -> Result<Registry> {
        Registry::launch(binary, &[])
    }

    /// A registry that serves only `users` (`(name, password)`), through
    /// distribution's `htpasswd` auth with bcrypt hashes, as a registry
    /// that wants credentials does.
    pub fn with_users(binary: &Path, users: &[(&str, &str)]) -> Result<Registry> {
        ensure!(!users.is_empty(), "a registry with users needs one");
        Registry::launch(binary, users)
    }

    fn launch(binary: &Path, users: &[(&str, &str)]) -> Result<Registry> {
        let dir = tempfile::tempdir()?;
        let addr = free_addr()?;
        let storage = dir.path().join("storage");
        let config = dir.path().join("config.yml");
        let mut auth = String::new();
        if !users.is_empty() {
            let htpasswd = dir.path().join("htpasswd");
            let mut lines = String::new();
            for (user, password) in users {
                // Cost 4, bcrypt's least: the registry checks every request.
                let hash = bcrypt::hash(password, 4).context("bcrypt")?;
                lines.push_str(&format!("{user}:{hash}\n"));
            }
            std::fs::write(&htpasswd, lines)?;
            auth = format!(
                "auth:\n  htpasswd: {{realm: mco-e2e, path: {}}}\n",
                htpasswd.display()
            );
        }
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog: {{level: debug, formatter: json, accesslog: {{disabled: true}}}}\n\
                 storage:\n  filesystem: {{rootdirectory: {}}}\n  delete: {{enabled: true}}\n\
                 http: {{addr: '{addr}'}}\n{auth}",
                storage.display()
            ),
        )?;
        let log = dir.path().join("registry.log");
        let file = std::fs::File::create(&log)?;
        let child = Command::new(binary)
            .arg("serve")
            .arg(&config)
            .stdout(file.try_clone()?)
            .stderr(file)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let mut registry = Registry {
            addr,
            storage,
            log,
            child,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(addr).is_err() {
            if let Some(status) = registry.child.try_wait()? {
                bail!("the registry exited: {status}");
            }
            ensure!(
                Instant::now() < deadline,
                "the registry did not listen on {addr} in 20 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(registry)
    }

    /// The users the registry served `repository`'s manifests to, in
    /// order, deduplicated, from its own log: at level debug, the manifest
    /// handler logs each read (`GetImageManifest`) with the repository and
    /// the user htpasswd authenticated (`auth.user.name`, empty when
    /// anonymous).
    pub fn manifest_readers(&self, repository: &str) -> Result<Vec<String>> {
        let text = std::fs::read_to_string(&self.log)
            .with_context(|| format!("reading {}", self.log.display()))?;
        let mut users: Vec<String> = Vec::new();
        for line in text.lines() {
            let Ok(entry) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let user = entry["auth.user.name"].as_str().unwrap_or_default();
            let read = entry["msg"] == "GetImageManifest" && entry["vars.name"] == repository;
            if read && !users.iter().any(|u| u == user) {
                users.push(user.to_string());
            }
        }
        Ok(users)
    }

    pub fn reference(&self, path: &str) -> String {
        format!("{}/{path}", self.addr)
    }

    /// The file holding a blob in the registry's storage.
    pub fn blob(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.storage
            .join("docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn run(cmd: &mut Command) -> Result<Output> {
    let out = cmd.output().with_context(|| format!("{cmd:?}"))?;
    Ok(out)
}

pub fn ok_json(cmd: &mut Command) -> Result<Value> {
    let out = run(cmd)?;
    ensure!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).with_context(|| format!("{cmd:?} printed no JSON"))
}

/// `cosign` for a loopback registry without TLS, offline (no Rekor, Fulcio
/// or TUF), with empty key passwords.
pub fn cosign(tools: &Tools, dir: &Path) -> Command {
    let mut cmd = Command::new(&tools.cosign);
    cmd.current_dir(dir)
        .env("COSIGN_PASSWORD", "")
        .env("HOME", dir)
        .env("TUF_ROOT", dir.join("tuf"));
    cmd
}

pub fn ok(cmd: &mut Command) -> Result<Output> {
    let out = run(cmd)?;
    ensure!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(out)
}

/// `cosign generate-key-pair` for each prefix: `PREFIX.key` and
/// `PREFIX.pub` in `dir`.
pub fn key_pairs(tools: &Tools, dir: &Path, prefixes: &[&str]) -> Result<()> {
    for prefix in prefixes {
        ok(cosign(tools, dir).args(["generate-key-pair", "--output-key-prefix", prefix]))?;
    }
    Ok(())
}

/// Pushes `bytes` as `guests/mcn:NAME` with `mco-host guests push` (the
/// file written to `dir` first); the reference pinned by digest.
pub fn push_guest(registry: &Registry, dir: &Path, name: &str, bytes: &[u8]) -> Result<String> {
    let file = dir.join(format!("{name}.wasm"));
    std::fs::write(&file, bytes)?;
    let pushed = ok_json(
        Command::new(super::controller::host_binary()?)
            .args(["--plain-http-registry", &registry.addr.to_string()])
            .args(["guests", "push"])
            .arg(&file)
            .arg(registry.reference(&format!("guests/mcn:{name}"))),
    )?;
    pushed["pinned"]
        .as_str()
        .map(str::to_string)
        .context("guests push printed no pinned reference")
}

/// Signs `reference` (by digest) with `key`: as a Sigstore bundle when
/// `bundle`, else in the legacy `.sig` form.
pub fn sign(tools: &Tools, dir: &Path, key: &str, reference: &str, bundle: bool) -> Result<()> {
    let mut cmd = cosign(tools, dir);
    cmd.args([
        "sign",
        "-y",
        "--key",
        key,
        "--allow-http-registry",
        "--allow-insecure-registry",
    ]);
    if bundle {
        let config = dir.join("signing-config.json");
        if !config.exists() {
            ok(cosign(tools, dir)
                .args([
                    "signing-config",
                    "create",
                    "--no-default-fulcio",
                    "--no-default-oidc",
                    "--no-default-rekor",
                    "--no-default-tsa",
                    "--out",
                ])
                .arg(&config))?;
        }
        // An empty trusted root: with it cosign does not look the Sigstore
        // TUF repository up, which cannot be reached here.
        let trusted_root = dir.join("trusted-root.json");
        std::fs::write(
            &trusted_root,
            r#"{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}"#,
        )?;
        cmd.args(["--new-bundle-format=true", "--signing-config"])
            .arg(&config)
            .arg("--trusted-root")
            .arg(&trusted_root);
    } else {
        cmd.args([
            "--new-bundle-format=false",
            "--use-signing-config=false",
            "--tlog-upload=false",
        ]);
    }
    ok(cmd.arg(reference))?;
    Ok(())
}

/// A Docker config (`.dockerconfigjson`) with one entry per `(key, user,
/// password)`.
pub fn docker_config(entries: &[(&str, &str, &str)]) -> String {
    let auths: serde_json::Map<String, Value> = entries
        .iter()
        .map(|(key, user, password)| {
            let entry = serde_json::json!({"username": user, "password": password});
            (key.to_string(), entry)
        })
        .collect();
    serde_json::json!({ "auths": auths }).to_string()
}

/// `bytes` in standard base64, as a Docker config's `auth` holds them.
pub fn base64(bytes: &[u8]) -> Result<String> {
    let value = serde_json::to_value(k8s_openapi::ByteString(bytes.to_vec()))?;
    value
        .as_str()
        .map(str::to_owned)
        .context("a ByteString serialises as a string")
}
