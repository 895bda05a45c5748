//! A real EC2 for the AWS boot image tests: moto's server (`moto_server`,
//! installed from PyPI by `tests/tools/moto/build.sh` into a cache outside the
//! clone) as a child process on loopback, holding the AMIs a test seeds
//! through the file `MOTO_AMIS_PATH` names (moto `ec2/models/amis.py`,
//! `_load_amis`). A part that cannot start fails the test that needs it,
//! never skips it. Where moto differs from EC2 (owner alias, credentials,
//! paging): docs/dev/testing.md.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

use crate::process::{Proc, Spawner, tail};

/// How long moto may take to import itself and listen (about 2 s; its
/// first start after an install compiles bytecode).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// An AMI as the test seeds it.
#[derive(Clone, Debug)]
pub struct Ami {
    pub id: String,
    pub owner_id: String,
    pub name: String,
    pub description: String,
    /// ISO 8601 (`2026-02-10T12:00:00.000Z`), as EC2 writes it.
    pub creation_date: String,
}

/// A running moto server; dropping it stops the process and removes its
/// files.
pub struct Moto {
    /// `http://127.0.0.1:<port>/`, the EC2 endpoint of every region.
    pub endpoint: String,
    addr: SocketAddr,
    // Field order is drop order: the process before its directory and the
    // spawner thread that owns it.
    proc: Proc,
    _spawner: Spawner,
    _dir: tempfile::TempDir,
}

impl Moto {
    /// Installs (or finds) moto and starts it holding `amis`.
    pub fn start(amis: &[Ami]) -> Result<Moto> {
        let binary = binary()?;
        let dir = tempfile::tempdir().context("cannot create moto's temp dir")?;
        let seed = dir.path().join("amis.json");
        let json: Vec<serde_json::Value> = amis
            .iter()
            .map(|ami| {
                serde_json::json!({
                    "ami_id": ami.id,
                    "owner_id": ami.owner_id,
                    "name": ami.name,
                    "description": ami.description,
                    "creation_date": ami.creation_date,
                    "public": true,
                    "architecture": "x86_64",
                    "virtualization_type": "hvm",
                })
            })
            .collect();
        std::fs::write(&seed, serde_json::to_vec(&json)?)
            .with_context(|| format!("cannot write {}", seed.display()))?;
        let log = dir.path().join("moto.log");
        let spawner = Spawner::new()?;
        // moto takes a port, not 0: a free one is found and handed over.
        // Another process may take it in between, so a start that fails is
        // tried again on another port.
        let mut last = None;
        for _ in 0..3 {
            let port = free_port()?;
            let args = vec![
                "-H".to_owned(),
                "127.0.0.1".to_owned(),
                "-p".to_owned(),
                port.to_string(),
            ];
            let mut proc = Proc::spawn_with_env(
                &spawner,
                "moto",
                &binary,
                &args,
                &[("MOTO_AMIS_PATH", seed.as_os_str())],
                &log,
            )?;
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            match wait_ready(&mut proc, addr) {
                Ok(()) => {
                    return Ok(Moto {
                        endpoint: format!("http://{addr}/"),
                        addr,
                        proc,
                        _spawner: spawner,
                        _dir: dir,
                    });
                }
                Err(e) => last = Some(e),
            }
        }
        let err = last.unwrap_or_else(|| anyhow::anyhow!("moto did not start"));
        Err(err.context(format!("moto's log:\n{}", tail(&log, 40))))
    }

    /// Stops moto: its endpoint then refuses connections, as an EC2 that
    /// cannot be reached does.
    pub fn stop(&mut self) -> Result<()> {
        self.proc.stop_blocking().map(drop)
    }

    /// From now on moto checks every request's credentials, as EC2 does:
    /// keys it was never given (every key, as the tests create no IAM
    /// user) are refused with `AuthFailure` (moto `iam/access_control.py`,
    /// through its `/moto-api/reset-auth` endpoint).
    pub fn refuse_credentials(&self) -> Result<()> {
        self.reset_auth("0")
    }

    /// From now on moto checks no credentials again (its default).
    pub fn accept_any_credentials(&self) -> Result<()> {
        self.reset_auth("inf")
    }

    /// POSTs `count` (requests let through unchecked) to moto's
    /// `/moto-api/reset-auth`.
    fn reset_auth(&self, count: &str) -> Result<()> {
        let addr = self.addr;
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        stream.write_all(
            format!(
                "POST /moto-api/reset-auth HTTP/1.0\r\nHost: {addr}\r\nContent-Length: {}\r\n\r\n{count}",
                count.len()
            )
            .as_bytes(),
        )?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer)?;
        ensure!(
            answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200"),
            "moto's reset-auth answered: {answer}"
        );
        Ok(())
    }

    /// `127.0.0.1:<port>`.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The end of moto's log, for error messages.
    pub fn log_tail(&self) -> String {
        tail(self.proc.log(), 40)
    }
}

fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("cannot find a free port")?;
    Ok(listener.local_addr()?.port())
}

/// Waits until moto answers its own API (`/moto-api/data.json`) over
/// HTTP, or exits, or [`START_TIMEOUT`] passes.
fn wait_ready(proc: &mut Proc, addr: SocketAddr) -> Result<()> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Some(status) = proc.exited()? {
            bail!("moto exited while starting ({status})");
        }
        if answers(addr) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!("moto did not answer on {addr} within {START_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether `addr` answers an HTTP GET of moto's API with 200.
fn answers(addr: SocketAddr) -> bool {
    let ask = || -> std::io::Result<String> {
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        stream.write_all(
            format!("GET /moto-api/data.json HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes(),
        )?;
        let mut head = [0u8; 64];
        let n = stream.read(&mut head)?;
        Ok(String::from_utf8_lossy(&head[..n]).into_owned())
    };
    ask().is_ok_and(|head| head.starts_with("HTTP/1.1 200") || head.starts_with("HTTP/1.0 200"))
}

/// Runs `tests/tools/moto/build.sh` (a no-op when cached) and returns
/// `moto_server`.
fn binary() -> Result<PathBuf> {
    let script = crate::crate_dir().join("../tools/moto/build.sh");
    let out = Command::new("bash")
        .arg(&script)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run {}", script.display()))?;
    ensure!(out.status.success(), "{} failed", script.display());
    let stdout = String::from_utf8(out.stdout).context("moto/build.sh printed non-UTF-8")?;
    let path = PathBuf::from(
        stdout
            .lines()
            .last()
            .context("moto/build.sh printed nothing")?,
    );
    ensure!(
        path.is_file(),
        "moto/build.sh named {}, which is no file",
        path.display()
    );
    Ok(path)
}
