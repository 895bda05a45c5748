//! One `mco-host run` child process: spawning, its admin endpoints
//! (`/healthz`, `/readyz`, `/metrics`), logs and stopping.

use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail, ensure};
use rustix::process::{Pid, Signal, kill_process, set_parent_process_death_signal};
use tokio::time::sleep;

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

/// The bytes of a guest installed beside the host binary (`mcn.wasm`,
/// `bootimage-aws.wasm`, …), as `guests/build.sh` puts them.
pub fn installed_guest(name: &str) -> Result<Vec<u8>> {
    let host = host_binary()?;
    let path = host
        .parent()
        .ok_or_else(|| anyhow!("{} has no directory", host.display()))?
        .join("guests")
        .join(name);
    std::fs::read(&path).with_context(|| format!("reading {}", path.display()))
}

/// `mco-host guests audit --job JOB --json` of the cluster `kubeconfig`
/// reaches, with `candidate` (a module's bytes) against the job's active
/// module: the report, once the audit ran.
pub async fn audit_cluster(
    kubeconfig: &Path,
    job: &str,
    candidate: &[u8],
) -> Result<serde_json::Value> {
    let dir = tempfile::tempdir()?;
    let module = dir.path().join("candidate.wasm");
    std::fs::write(&module, candidate)?;
    let output = tokio::process::Command::new(host_binary()?)
        .args(["guests", "audit", "--job", job, "--json", "--kubeconfig"])
        .arg(kubeconfig)
        .arg("--guest")
        .arg(&module)
        .output()
        .await
        .context("running mco-host guests audit")?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    ensure!(output.status.success(), "guests audit failed: {stderr}");
    serde_json::from_slice(&output.stdout)
        .with_context(|| format!("not JSON: {}", String::from_utf8_lossy(&output.stdout)))
}

/// A module `guests/build.sh --test` built for the host tests (`name`, e.g.
/// `hostile-sleeper.wasm`): beside the host binary's guests (where a
/// private copy puts it, see `MCO_HOST_BIN`), or in `<target>/test-guests`.
pub fn test_guest(name: &str) -> Result<PathBuf> {
    let host = host_binary()?;
    let beside = host.parent().map(|d| d.join("guests").join(name));
    let built = host
        .parent()
        .and_then(|d| d.parent())
        .map(|target| target.join("test-guests").join(name));
    [beside, built]
        .into_iter()
        .flatten()
        .find(|p| p.is_file())
        .ok_or_else(|| anyhow!("{name} not found: run `guests/build.sh --test`"))
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
    /// The bearer token [`Self::get`] sends: the host lets only whom the
    /// cluster allows read `/metrics`, `/guests` and `/ownership`.
    pub admin_token: Option<String>,
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
            admin_token: None,
            child: Some(child),
            stdout,
            stderr,
            exit: None,
            killed: false,
        })
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
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

    /// `GET path` on the admin server with [`Self::admin_token`]: (status
    /// code, body).
    pub async fn get(&self, path: &str) -> Result<(u16, String)> {
        self.get_as(path, self.admin_token.as_deref()).await
    }

    /// `GET path` on the admin server with this token, or none.
    pub async fn get_as(&self, path: &str, token: Option<&str>) -> Result<(u16, String)> {
        http_get_as(self.admin_addr, path, token).await
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

    /// SIGSTOP: the process stands still, renewing nothing and sending
    /// nothing, as a frozen VM or a node cut off would, until
    /// [`Self::resume`]; its lease expires meanwhile.
    pub fn pause(&self) -> Result<()> {
        self.signal(Signal::STOP)
    }

    /// SIGCONT after [`Self::pause`].
    pub fn resume(&self) -> Result<()> {
        self.signal(Signal::CONT)
    }

    fn signal(&self, signal: Signal) -> Result<()> {
        let pid = self
            .pid()
            .with_context(|| format!("controller {} is not running", self.identity))?;
        // Our own child, not yet reaped: its PID cannot have been reused.
        let pid = Pid::from_raw(i32::try_from(pid)?).context("pid 0")?;
        kill_process(pid, signal)
            .with_context(|| format!("cannot signal controller {}", self.identity))
    }

    /// Its whole log (JSON lines on stderr).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// True once the test killed it on purpose.
    pub fn killed(&self) -> bool {
        self.killed
    }

    /// Everything it wrote so far, stdout then stderr.
    pub fn output(&self) -> Result<String> {
        let mut all = String::new();
        for path in [&self.stdout, &self.stderr] {
            let bytes =
                std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
            all.push_str(&String::from_utf8_lossy(&bytes));
        }
        Ok(all)
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
                // A paused one acts on it once resumed.
                let _ = kill_process(p, Signal::CONT);
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

/// `/metrics` as read by `prometheus-parse`: counters, gauges and untyped
/// samples by name and labels (histograms and summaries are grouped by it,
/// and no lookup here needs them).
#[derive(Debug)]
pub struct Metrics {
    samples: Vec<prometheus_parse::Sample>,
}

impl Metrics {
    pub fn parse(text: &str) -> Result<Self> {
        let lines = text.lines().map(|l| Ok(l.to_owned()));
        let scrape = prometheus_parse::Scrape::parse(lines)?;
        Ok(Self {
            samples: scrape.samples,
        })
    }

    /// The samples of `name` with a single value, and their labels.
    fn values<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = (&'a prometheus_parse::Labels, f64)> + 'a {
        self.samples
            .iter()
            .filter(move |s| s.metric == name)
            .filter_map(|s| match s.value {
                prometheus_parse::Value::Counter(v)
                | prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Untyped(v) => Some((&s.labels, v)),
                prometheus_parse::Value::Histogram(_) | prometheus_parse::Value::Summary(_) => None,
            })
    }

    /// Sum of every sample of `name` whose labels include `labels`; 0 when
    /// there is none (a counter family with no observation prints nothing).
    pub fn sum(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.values(name)
            .filter(|(l, _)| labels.iter().all(|(k, v)| l.get(k) == Some(*v)))
            .map(|(_, v)| v)
            .sum()
    }

    /// The one sample of `name` (no label filter); fails if absent.
    pub fn gauge(&self, name: &str) -> Result<f64> {
        let mut it = self.values(name);
        let first = it
            .next()
            .ok_or_else(|| anyhow!("metric {name} is missing"))?;
        ensure!(it.next().is_none(), "metric {name} has several samples");
        Ok(first.1)
    }

    pub fn has(&self, name: &str) -> bool {
        self.samples.iter().any(|s| s.metric == name)
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
            &[("job", "mcn"), ("result", result)],
        )
    }

    /// Every write kind with a non-zero count, for messages.
    pub fn writes_summary(&self) -> String {
        let mut parts: Vec<String> = self
            .values("mco_api_writes_total")
            .filter(|(_, v)| *v != 0.0)
            .map(|(l, v)| format!("{}={v}", l.get("kind").unwrap_or("?")))
            .collect();
        parts.sort();
        format!("[{}]", parts.join(", "))
    }
}

pub use mco_e2e::http_get_as;

pub use mco_e2e::tail;

/// The lookups on what `mco-host`'s encoder (prometheus-client,
/// OpenMetrics text) prints: `_total` counters, label filters, a gauge.
#[test]
fn metrics_read_what_prometheus_client_writes() {
    use prometheus_client::metrics::{counter::Counter, family::Family, gauge::Gauge};
    let mut registry = prometheus_client::registry::Registry::default();
    let sub = registry.sub_registry_with_prefix("mco");
    let leader = Gauge::<i64>::default();
    let writes = Family::<Vec<(String, String)>, Counter>::default();
    let evaluations = Family::<Vec<(String, String)>, Counter>::default();
    sub.register("leader", "Lease holder", leader.clone());
    sub.register("api_writes", "Writes", writes.clone());
    sub.register("evaluations", "Evaluations", evaluations.clone());
    leader.set(1);
    let kind = |k: &str| vec![("kind".to_owned(), k.to_owned())];
    writes.get_or_create(&kind("create")).inc_by(3);
    writes.get_or_create(&kind("apply_status")).inc_by(4);
    let labels = [("job", "mcn"), ("result", "skip")].map(|(k, v)| (k.into(), v.into()));
    evaluations.get_or_create(&labels.to_vec()).inc_by(2);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();

    let m = Metrics::parse(&text).unwrap();
    assert!(m.leader().unwrap(), "{text}");
    assert_eq!(m.writes(), 7.0, "{text}");
    assert_eq!(m.writes_of("apply_status"), 4.0);
    assert_eq!(m.writes_of("delete"), 0.0);
    assert_eq!(m.evaluations("skip"), 2.0);
    assert_eq!(m.writes_summary(), "[apply_status=4, create=3]");
    assert!(m.has("mco_api_writes_total"));
}
