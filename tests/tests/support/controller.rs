//! One `mco-host run` child process: spawning, its admin endpoints
//! (`/healthz`, `/readyz`, `/metrics`), logs and stopping.

use std::collections::BTreeMap;
use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail, ensure};
use rustix::process::{Pid, Signal, kill_process, set_parent_process_death_signal};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{sleep, timeout};

/// Lines of each log shown when a test fails.
const TAIL_LINES: usize = 40;
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// `<CARGO_TARGET_DIR>/release/mco-host`, found from this test executable
/// (`<target>/<profile>/deps/<test>`), or `MCO_HOST_BIN` if set.
pub fn host_binary() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("MCO_HOST_BIN") {
        let p = PathBuf::from(p);
        ensure!(p.is_file(), "MCO_HOST_BIN={} does not exist", p.display());
        return Ok(p);
    }
    let exe = std::env::current_exe().context("cannot find the test executable")?;
    let target = exe
        .ancestors()
        .nth(3)
        .ok_or_else(|| anyhow!("{} is not inside a cargo target dir", exe.display()))?;
    let bin = target.join("release").join("mco-host");
    ensure!(
        bin.is_file(),
        "{} does not exist: run `cargo build --release -p mco-host` (or `make host`) and \
         `guests/build.sh` first, with the same CARGO_TARGET_DIR",
        bin.display()
    );
    let guest = target.join("release").join("guests").join("mcn.wasm");
    ensure!(
        guest.is_file(),
        "{} does not exist: run `guests/build.sh` (or `make guests`) first",
        guest.display()
    );
    Ok(bin)
}

/// A port that was free a moment ago, for `--admin-addr`.
pub fn free_addr() -> Result<SocketAddr> {
    let l = TcpListener::bind("127.0.0.1:0").context("cannot bind a free port on 127.0.0.1")?;
    l.local_addr().context("local_addr")
}

/// A running `mco-host run`; dropping it stops the process (SIGTERM, bounded
/// wait, SIGKILL). Only this child is ever signalled.
pub struct Controller {
    pub identity: String,
    pub admin_addr: SocketAddr,
    child: Option<Child>,
    stdout: PathBuf,
    stderr: PathBuf,
    /// Why the process is gone, once it is; kept for error messages.
    exit: Option<ExitStatus>,
    /// Stopped on purpose by [`Self::kill_hard`].
    killed: bool,
}

impl Controller {
    /// Starts `mco-host run` with its output in `dir/<identity>.{stdout,stderr}.log`.
    pub fn spawn(
        bin: &Path,
        dir: &Path,
        identity: &str,
        common_args: &[String],
        extra_args: &[&str],
    ) -> Result<Self> {
        let admin_addr = free_addr()?;
        let stdout = dir.join(format!("{identity}.stdout.log"));
        let stderr = dir.join(format!("{identity}.stderr.log"));
        let out =
            File::create(&stdout).with_context(|| format!("cannot create {}", stdout.display()))?;
        let err =
            File::create(&stderr).with_context(|| format!("cannot create {}", stderr.display()))?;
        let mut cmd = Command::new(bin);
        cmd.arg("run")
            .args(common_args)
            .arg("--identity")
            .arg(identity)
            .arg("--admin-addr")
            .arg(admin_addr.to_string())
            .args(extra_args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        // SAFETY: runs between fork and exec and only makes the prctl syscall,
        // which is async-signal-safe and allocates nothing. A test binary that
        // is killed outright then takes its controllers with it.
        #[allow(unsafe_code)]
        unsafe {
            cmd.pre_exec(|| {
                set_parent_process_death_signal(Some(Signal::KILL))?;
                Ok(())
            });
        }
        eprintln!(
            "mcn_controller: starting {} run … --identity {identity} --admin-addr {admin_addr} {}",
            bin.display(),
            extra_args.join(" ")
        );
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot start {}", bin.display()))?;
        Ok(Self {
            identity: identity.to_owned(),
            admin_addr,
            child: Some(child),
            stdout,
            stderr,
            exit: None,
            killed: false,
        })
    }

    /// Fails if the process has exited (it must run until the test stops it).
    pub fn check_running(&mut self) -> Result<()> {
        if let Some(status) = self.exit {
            bail!("controller {} exited earlier ({status})", self.identity);
        }
        let Some(child) = self.child.as_mut() else {
            bail!("controller {} was stopped", self.identity);
        };
        if let Some(status) = child
            .try_wait()
            .with_context(|| format!("cannot poll controller {}", self.identity))?
        {
            self.exit = Some(status);
            self.child = None;
            bail!("controller {} exited ({status})", self.identity);
        }
        Ok(())
    }

    /// Polls `/readyz` until it answers 200.
    pub async fn wait_ready(&mut self, limit: Duration) -> Result<Duration> {
        let t = Instant::now();
        loop {
            self.check_running()?;
            let last = match self.get("/readyz").await {
                Ok((200, _)) => return Ok(t.elapsed()),
                Ok((code, body)) => format!("HTTP {code}: {}", body.trim()),
                Err(e) => format!("{e:#}"),
            };
            if t.elapsed() > limit {
                bail!(
                    "controller {} not ready at http://{}/readyz after {limit:?} (last: {last})",
                    self.identity,
                    self.admin_addr
                );
            }
            sleep(Duration::from_millis(100)).await;
        }
    }

    /// `GET path` on the admin server: (status code, body).
    pub async fn get(&self, path: &str) -> Result<(u16, String)> {
        http_get(self.admin_addr, path)
            .await
            .with_context(|| format!("GET http://{}{path}", self.admin_addr))
    }

    /// `/metrics`, parsed; fails unless the answer is 200.
    pub async fn metrics(&self) -> Result<Metrics> {
        let (code, body) = self.get("/metrics").await?;
        ensure!(
            code == 200,
            "controller {}: /metrics answered HTTP {code}: {body}",
            self.identity
        );
        Metrics::parse(&body).with_context(|| {
            format!(
                "controller {}: cannot parse /metrics:\n{body}",
                self.identity
            )
        })
    }

    /// SIGKILL, as a node failure would; no chance to release the lease.
    pub fn kill_hard(&mut self) -> Result<()> {
        let Some(mut child) = self.child.take() else {
            bail!("controller {} is not running", self.identity);
        };
        child
            .kill()
            .with_context(|| format!("cannot SIGKILL controller {}", self.identity))?;
        self.exit = Some(
            child
                .wait()
                .with_context(|| format!("cannot reap controller {}", self.identity))?,
        );
        self.killed = true;
        Ok(())
    }

    /// True once the test killed it on purpose.
    pub fn killed(&self) -> bool {
        self.killed
    }

    /// The last lines of stdout and stderr, for failure messages.
    pub fn tails(&self) -> String {
        let state = match (&self.child, self.exit) {
            (Some(_), _) => "running".to_owned(),
            (None, Some(s)) => format!("exited: {s}"),
            (None, None) => "stopped".to_owned(),
        };
        let mut out = format!(
            "===== controller {} (admin {}, {state}) =====\n",
            self.identity, self.admin_addr
        );
        for (name, path) in [("stdout", &self.stdout), ("stderr", &self.stderr)] {
            out.push_str(&format!(
                "----- {name} {} (last {TAIL_LINES} lines) -----\n{}",
                path.display(),
                tail(path, TAIL_LINES)
            ));
        }
        out
    }

    fn stop(&mut self) -> Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let pid = child.id();
        if child.try_wait()?.is_none() {
            // Our own child, not yet reaped: its PID cannot have been reused.
            if let Some(p) = Pid::from_raw(i32::try_from(pid)?) {
                let _ = kill_process(p, Signal::TERM);
            }
            let deadline = Instant::now() + STOP_TIMEOUT;
            while child.try_wait()?.is_none() {
                if Instant::now() >= deadline {
                    eprintln!(
                        "mcn_controller: controller {} (pid {pid}) ignored SIGTERM for {STOP_TIMEOUT:?}; SIGKILL",
                        self.identity
                    );
                    child.kill()?;
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        self.exit = Some(child.wait()?);
        Ok(())
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.tails());
        }
        if let Err(e) = self.stop() {
            eprintln!(
                "mcn_controller: stopping controller {}: {e:#}",
                self.identity
            );
        }
    }
}

/// Prometheus text: samples as (name, labels, value).
#[derive(Debug, Default)]
pub struct Metrics {
    samples: Vec<(String, BTreeMap<String, String>, f64)>,
}

impl Metrics {
    pub fn parse(text: &str) -> Result<Self> {
        let mut samples = Vec::new();
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, labels, rest) = match line.find(['{', ' ']) {
                Some(i) if line.as_bytes()[i] == b'{' => {
                    let (labels, rest) = parse_labels(&line[i + 1..])
                        .with_context(|| format!("bad labels in {line:?}"))?;
                    (&line[..i], labels, rest)
                }
                Some(i) => (&line[..i], BTreeMap::new(), &line[i..]),
                None => bail!("no value in {line:?}"),
            };
            let value = rest
                .split_whitespace()
                .next()
                .ok_or_else(|| anyhow!("no value in {line:?}"))?;
            let value: f64 = value
                .parse()
                .with_context(|| format!("bad value in {line:?}"))?;
            samples.push((name.to_owned(), labels, value));
        }
        Ok(Self { samples })
    }

    /// Sum of every sample of `name` whose labels include `labels`; 0 when
    /// there is none (a counter family with no observation prints nothing).
    pub fn sum(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.samples
            .iter()
            .filter(|(n, l, _)| {
                n == name
                    && labels
                        .iter()
                        .all(|(k, v)| l.get(*k).is_some_and(|x| x == v))
            })
            .map(|(_, _, v)| v)
            .sum()
    }

    /// The one sample of `name` (no label filter); fails if absent.
    pub fn gauge(&self, name: &str) -> Result<f64> {
        let mut it = self.samples.iter().filter(|(n, _, _)| n == name);
        let first = it
            .next()
            .ok_or_else(|| anyhow!("metric {name} is missing"))?;
        ensure!(it.next().is_none(), "metric {name} has several samples");
        Ok(first.2)
    }

    pub fn has(&self, name: &str) -> bool {
        self.samples.iter().any(|(n, _, _)| n == name)
    }

    /// `mco_api_writes_total` over all kinds.
    pub fn writes(&self) -> f64 {
        self.sum("mco_api_writes_total", &[])
    }

    pub fn writes_of(&self, kind: &str) -> f64 {
        self.sum("mco_api_writes_total", &[("kind", kind)])
    }

    pub fn leader(&self) -> Result<bool> {
        let v = self.gauge("mco_leader")?;
        ensure!(v == 0.0 || v == 1.0, "mco_leader is {v}, not 0 or 1");
        Ok(v == 1.0)
    }

    pub fn evaluations(&self, result: &str) -> f64 {
        self.sum(
            "mco_evaluations_total",
            &[("guest", "mcn"), ("result", result)],
        )
    }

    /// Every write kind with a non-zero count, for messages.
    pub fn writes_summary(&self) -> String {
        let mut parts: Vec<String> = self
            .samples
            .iter()
            .filter(|(n, _, v)| n == "mco_api_writes_total" && *v != 0.0)
            .map(|(_, l, v)| format!("{}={v}", l.get("kind").map_or("?", String::as_str)))
            .collect();
        parts.sort();
        format!("[{}]", parts.join(", "))
    }
}

/// `a="x",b="y\"z"} rest` → ({a: x, b: y"z}, rest).
fn parse_labels(s: &str) -> Result<(BTreeMap<String, String>, &str)> {
    let mut labels = BTreeMap::new();
    let mut rest = s;
    loop {
        rest = rest.trim_start_matches([',', ' ']);
        if let Some(r) = rest.strip_prefix('}') {
            return Ok((labels, r));
        }
        let eq = rest.find('=').ok_or_else(|| anyhow!("no '='"))?;
        let key = rest[..eq].trim().to_owned();
        let after = rest[eq + 1..]
            .strip_prefix('"')
            .ok_or_else(|| anyhow!("label value not quoted"))?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next() {
                None => bail!("unterminated label value"),
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, c)) => value.push(c),
                    None => bail!("dangling escape"),
                },
                Some((_, c)) => value.push(c),
            }
        };
        labels.insert(key, value);
        rest = &after[end + 1..];
    }
}

/// A plain HTTP/1.1 GET with `Connection: close`; the admin server is ours and
/// local, so no client library is needed. Handles chunked bodies.
pub async fn http_get(addr: SocketAddr, path: &str) -> Result<(u16, String)> {
    let request = async {
        let mut stream = TcpStream::connect(addr).await.context("connect")?;
        stream
            .write_all(
                format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                    .as_bytes(),
            )
            .await
            .context("send")?;
        let mut buf = Vec::new();
        stream.read_to_end(&mut buf).await.context("receive")?;
        anyhow::Ok(buf)
    };
    let buf = timeout(Duration::from_secs(5), request)
        .await
        .map_err(|_| anyhow!("no answer within 5 s"))??;
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| anyhow!("no end of headers in {:?}", String::from_utf8_lossy(&buf)))?;
    let head = String::from_utf8_lossy(&buf[..split]).into_owned();
    let body = &buf[split + 4..];
    let code: u16 = head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| anyhow!("bad status line in {head:?}"))?;
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let body = if chunked {
        dechunk(body)?
    } else {
        body.to_vec()
    };
    Ok((code, String::from_utf8_lossy(&body).into_owned()))
}

fn dechunk(mut data: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or_else(|| anyhow!("bad chunk header"))?;
        let size_text = String::from_utf8_lossy(&data[..eol]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .with_context(|| format!("bad chunk size {size_text:?}"))?;
        data = &data[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        ensure!(data.len() >= size, "truncated chunk");
        out.extend_from_slice(&data[..size]);
        data = data[size..].strip_prefix(b"\r\n").unwrap_or(&data[size..]);
    }
}

pub use mco_e2e::tail;

#[test]
fn metrics_parser_reads_prometheus_and_openmetrics_text() {
    let m = Metrics::parse(
        "# HELP mco_leader Lease holder.\n# TYPE mco_leader gauge\nmco_leader 1\n\
         mco_api_writes_total{kind=\"create\"} 3\nmco_api_writes_total{kind=\"apply_status\"} 4.0\n\
         mco_evaluations_total{guest=\"mcn\",result=\"skip\"} 2 1700000000\n\
         odd{a=\"x,\\\"}y\"} 1\n# EOF\n",
    )
    .unwrap();
    assert!(m.leader().unwrap());
    assert_eq!(m.writes(), 7.0);
    assert_eq!(m.writes_of("apply_status"), 4.0);
    assert_eq!(m.writes_of("delete"), 0.0);
    assert_eq!(m.evaluations("skip"), 2.0);
    assert_eq!(m.sum("odd", &[("a", "x,\"}y")]), 1.0);
    assert_eq!(
        dechunk(b"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n").unwrap(),
        b"abcde"
    );
}
