//! The RHCOS mirror of the vSphere boot image tests: CPython's own static
//! file server (`python3 -m http.server`, from the interpreter every build
//! machine of this project has) serving a directory on 127.0.0.1, where the
//! tests put the OVAs a `coreos-bootimages` stream names. A real HTTP
//! server, not a mock: the controller downloads from it exactly as it
//! downloads from `rhcos.mirror.openshift.com`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::process::{Proc, Spawner, tail};

/// How long the interpreter may take to listen (well under a second).
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A running mirror; dropping it stops the server and removes its files.
pub struct Mirror {
    /// `http://127.0.0.1:<port>`.
    pub base_url: String,
    proc: Proc,
    _spawner: Spawner,
    dir: tempfile::TempDir,
}

impl Mirror {
    pub fn start() -> Result<Mirror> {
        let dir = tempfile::tempdir().context("cannot create the mirror's directory")?;
        let root = dir.path().join("files");
        std::fs::create_dir(&root).context("cannot create the mirror's files directory")?;
        let log = dir.path().join("http.server.log");
        let args: Vec<String> = [
            "-u",
            "-m",
            "http.server",
            "--bind",
            "127.0.0.1",
            "--directory",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([root.display().to_string(), "0".to_owned()])
        .collect();
        let spawner = Spawner::new()?;
        let mut proc = Proc::spawn(&spawner, "mirror", Path::new("python3"), &args, &log)?;
        let base_url = wait_listening(&mut proc)?;
        Ok(Mirror {
            base_url,
            proc,
            _spawner: spawner,
            dir,
        })
    }

    /// Where files are served from: `<base_url>/<name>` is `root()/<name>`.
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("files")
    }

    pub fn url(&self, name: &str) -> String {
        format!("{}/{name}", self.base_url)
    }

    /// The server's request log: one line per GET.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.proc.log()).unwrap_or_default()
    }
}

/// `Serving HTTP on 127.0.0.1 port 43127 (http://127.0.0.1:43127/) ...` is
/// the readiness line, and the address.
fn wait_listening(proc: &mut Proc) -> Result<String> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let log = std::fs::read_to_string(proc.log()).unwrap_or_default();
        if let Some(url) = log.lines().find_map(|line| {
            let start = line.find("(http://")? + 1;
            let end = start + line[start..].find(')')?;
            Some(line[start..end].trim_end_matches('/').to_owned())
        }) {
            return Ok(url);
        }
        if let Some(status) = proc.exited()? {
            bail!(
                "the mirror (python3 -m http.server) exited ({status}) before listening:\n{}",
                tail(proc.log(), 20)
            );
        }
        if Instant::now() >= deadline {
            bail!(
                "the mirror did not listen within {START_TIMEOUT:?}:\n{}",
                tail(proc.log(), 20)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
