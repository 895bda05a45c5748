//! The OCI parts the e2e tests run against: a real registry (CNCF
//! distribution, from Debian's docker-registry) on loopback, and the real
//! `oras` and `cosign`, all from `tests/oci/build.sh`, which fetches and
//! builds them once into a cache outside the clone (the tests fail, never
//! skip, when it cannot).

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::Value;

use super::controller::free_addr;

/// The registry, oras and cosign, from `tests/oci/build.sh`.
pub struct Tools {
    pub registry: PathBuf,
    pub oras: PathBuf,
    pub cosign: PathBuf,
}

pub fn tools() -> Result<Tools> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("oci/build.sh");
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
    child: Child,
    _dir: tempfile::TempDir,
}

impl Registry {
    pub fn start(binary: &Path) -> Result<Registry> {
        let dir = tempfile::tempdir()?;
        let addr = free_addr()?;
        let storage = dir.path().join("storage");
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog: {{level: warn}}\nstorage:\n  filesystem: {{rootdirectory: {}}}\n  \
                 delete: {{enabled: true}}\nhttp: {{addr: '{addr}'}}\n",
                storage.display()
            ),
        )?;
        let log = std::fs::File::create(dir.path().join("registry.log"))?;
        let child = Command::new(binary)
            .arg("serve")
            .arg(&config)
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let mut registry = Registry {
            addr,
            storage,
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
