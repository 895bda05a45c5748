//! The real kustomize, for the tests that render `deploy/` (the host's
//! `tests/deploy.rs`, the fleet e2e): [`KUSTOMIZE_VERSION`] built once from
//! the Go module proxy into `<target>/tools/kustomize-<version>/` and reused
//! from there. Where it cannot be built (no `go`, no module proxy) the
//! tests fail, they never skip.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use anyhow::{Context, Result, anyhow, ensure};
use serde_json::Value;

pub const KUSTOMIZE_VERSION: &str = "v5.8.2";

/// The kustomize binary; a cached binary of another version is an error.
pub fn kustomize() -> Result<&'static Path> {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BIN.get_or_init(|| find_or_build().map_err(|e| format!("{e:#}")))
        .as_deref()
        .map_err(|e| anyhow!("{e}"))
}

/// `kustomize build DIR`, every document it prints.
pub fn kustomize_build(dir: &Path) -> Result<Vec<Value>> {
    let output = Command::new(kustomize()?)
        .arg("build")
        .arg(dir)
        .output()
        .context("running kustomize")?;
    ensure!(
        output.status.success(),
        "kustomize build {} failed:\n{}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).context("kustomize printed no UTF-8")?;
    serde_saphyr::from_multiple::<Value>(&text)
        .with_context(|| format!("kustomize build {}: not valid YAML", dir.display()))
}

/// The cargo target directory the running test binary was built in
/// (`<target>/<profile>/deps/<test binary>`).
fn target_dir() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("no current exe")?;
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .with_context(|| format!("unexpected test binary path {}", exe.display()))
}

fn find_or_build() -> Result<PathBuf> {
    let target = target_dir()?;
    let dir = target
        .join("tools")
        .join(format!("kustomize-{KUSTOMIZE_VERSION}"));
    let bin = dir.join("kustomize");
    if !bin.is_file() {
        build(&target, &dir, &bin)?;
    }
    let version = Command::new(&bin)
        .arg("version")
        .output()
        .with_context(|| format!("{} version", bin.display()))?;
    ensure!(
        String::from_utf8_lossy(&version.stdout).trim() == KUSTOMIZE_VERSION,
        "{}: not kustomize {KUSTOMIZE_VERSION}; delete it to rebuild",
        bin.display()
    );
    Ok(bin)
}

/// `go install` into a temp dir, then a rename: a concurrent run sees either
/// no binary or a whole one.
fn build(target: &Path, dir: &Path, bin: &Path) -> Result<()> {
    let gobin = tempfile::Builder::new()
        .prefix("kustomize-build-")
        .tempdir_in(target)
        .context("temp dir")?;
    let module = format!("sigs.k8s.io/kustomize/kustomize/v5@{KUSTOMIZE_VERSION}");
    let output = Command::new("go")
        .args(["install", &module])
        .current_dir(gobin.path())
        .env("GOBIN", gobin.path())
        .env("GOFLAGS", "-mod=mod")
        .env("GOTOOLCHAIN", "local")
        .env("GOWORK", "off")
        .env("CGO_ENABLED", "0")
        .output()
        .with_context(|| {
            format!(
                "these tests build kustomize {KUSTOMIZE_VERSION} from the Go module proxy \
                 (about a minute, once) and need `go` on PATH"
            )
        })?;
    ensure!(
        output.status.success(),
        "`go install {module}` failed (it needs Go >= 1.24 and the Go module proxy):\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
    std::fs::rename(gobin.path().join("kustomize"), bin).with_context(|| bin.display().to_string())
}
