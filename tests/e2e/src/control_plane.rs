//! A real kube-apiserver + etcd on 127.0.0.1, started as child processes.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::Write as _;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail, ensure};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client, Config};
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use serde_json::json;
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::time::{sleep, timeout};

use crate::http::http_get;
use crate::process::{Proc, Spawner, tail};
use crate::users::{ADMIN_USER, User, random_token};

/// Field manager for everything the harness itself writes (CRDs, namespaces).
pub const FIELD_MANAGER: &str = "mco-e2e";

/// Start-up budget when neither the builder nor `MCO_ENVTEST_START_TIMEOUT`
/// says otherwise: generous, since a contended machine starts far slower
/// than an idle one (Kubernetes' `StartTestServer` waits 60 s) and a flaky
/// start costs more than a slow one (docs/dev/records/incidents.md).
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(120);

const POLL: Duration = Duration::from_millis(100);
const LOG_TAIL_LINES: usize = 60;
const CLUSTER_NAME: &str = "mco-envtest";

/// How long each phase of the last start took, for reports and for spotting a
/// machine that has become too slow before the timeout does.
#[derive(Clone, Copy, Debug, Default)]
pub struct StartTimings {
    /// Running `tests/tools/envtest/build.sh` (about 20 ms when cached).
    pub binaries: Duration,
    /// etcd spawn to healthy.
    pub etcd: Duration,
    /// kube-apiserver spawn to `/readyz` = ok.
    pub apiserver: Duration,
    /// Everything, including the wait for namespace `default`.
    pub total: Duration,
}

/// Options for [`ControlPlane`]; users must be known before the apiserver
/// starts because `--token-auth-file` is read once.
#[derive(Debug, Default)]
#[must_use]
pub struct ControlPlaneBuilder {
    users: Vec<User>,
    start_timeout: Option<Duration>,
    extra_apiserver_args: Vec<String>,
}

impl ControlPlaneBuilder {
    /// Adds an identity with its own bearer token (see [`ControlPlane::client_for`]).
    pub fn user(mut self, user: User) -> Self {
        self.users.push(user);
        self
    }

    /// Overrides `MCO_ENVTEST_START_TIMEOUT` and [`DEFAULT_START_TIMEOUT`]; applies
    /// to each phase (etcd, apiserver) separately, as in smoke.sh.
    pub fn start_timeout(mut self, timeout: Duration) -> Self {
        self.start_timeout = Some(timeout);
        self
    }

    /// Appends a flag to kube-apiserver's command line (e.g. `--feature-gates=...`).
    /// It comes after the harness defaults, so repeating a scalar flag overrides
    /// the default (the last value wins); list flags append instead.
    pub fn apiserver_arg(mut self, arg: impl Into<String>) -> Self {
        self.extra_apiserver_args.push(arg.into());
        self
    }

    /// Builds or finds the binaries, starts etcd and kube-apiserver, and waits
    /// until the apiserver is ready and namespace `default` exists.
    ///
    /// Fails (never skips) when anything is missing: an e2e suite that silently
    /// passes without a control plane proves nothing.
    pub async fn start(self) -> Result<ControlPlane> {
        let t0 = Instant::now();
        let start_timeout = match self.start_timeout {
            Some(t) => t,
            None => start_timeout_from_env()?,
        };
        for (i, u) in self.users.iter().enumerate() {
            ensure!(
                u.name != ADMIN_USER,
                "user name {ADMIN_USER:?} is reserved for the built-in admin"
            );
            ensure!(
                !self.users[..i].iter().any(|o| o.name == u.name),
                "user {:?} was added twice",
                u.name
            );
        }

        let bin_dir = envtest_bin_dir().await?;
        let binaries = t0.elapsed();

        let dir = tempfile::Builder::new()
            .prefix("mco-envtest.")
            .tempdir()
            .context("cannot create the control plane's temp dir")?;
        let root = dir.path().to_owned();
        std::fs::create_dir(root.join("certs")).context("cannot create certs/")?;
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(root.join("etcd"))
            .context("cannot create etcd/")?;

        let admin_token = random_token()?;
        let mut tokens = User::new(ADMIN_USER, ["system:masters"]).token_line(&admin_token)?;
        let mut users = Vec::with_capacity(self.users.len());
        for user in self.users {
            let token = random_token()?;
            tokens.push_str(&user.token_line(&token)?);
            users.push((user, token));
        }
        write_private(&root.join("tokens.csv"), tokens.as_bytes())?;
        generate_sa_key(&root.join("sa.key")).await?;

        let [etcd_client_port, etcd_peer_port, port] = free_ports()?;
        let mut cp = ControlPlane {
            apiserver: None,
            etcd: None,
            spawner: Spawner::new()?,
            dir: Some(dir),
            root,
            bin_dir,
            etcd_client_port,
            etcd_peer_port,
            port,
            admin_token,
            users,
            extra_apiserver_args: self.extra_apiserver_args,
            start_timeout,
            timings: StartTimings {
                binaries,
                ..StartTimings::default()
            },
        };
        // On error `cp` is dropped here, which stops whatever was started.
        if let Err(e) = cp.boot(t0).await {
            return Err(cp.with_logs(e, "control plane failed to start"));
        }
        Ok(cp)
    }
}

/// etcd + kube-apiserver for one test (or one test binary).
///
/// Dropping it stops both processes (SIGTERM, bounded wait, SIGKILL) and removes
/// its temp dir; set `MCO_ENVTEST_KEEP_DIR=1` to keep the dir (logs, kubeconfigs)
/// for debugging. A value kept in a `static` is never dropped; its children are
/// still killed when the test binary exits, through `PR_SET_PDEATHSIG`, but the
/// temp dir stays behind, so prefer one instance per test.
pub struct ControlPlane {
    apiserver: Option<Proc>,
    etcd: Option<Proc>,
    spawner: Spawner,
    dir: Option<TempDir>,
    root: PathBuf,
    bin_dir: PathBuf,
    etcd_client_port: u16,
    etcd_peer_port: u16,
    port: u16,
    admin_token: String,
    users: Vec<(User, String)>,
    extra_apiserver_args: Vec<String>,
    start_timeout: Duration,
    timings: StartTimings,
}

impl ControlPlane {
    pub fn builder() -> ControlPlaneBuilder {
        ControlPlaneBuilder::default()
    }

    /// A control plane with only the admin identity.
    pub async fn start() -> Result<Self> {
        Self::builder().start().await
    }

    async fn boot(&mut self, t0: Instant) -> Result<()> {
        let t = Instant::now();
        self.start_etcd().await?;
        self.timings.etcd = t.elapsed();

        let t = Instant::now();
        self.start_apiserver_inner().await?;
        self.timings.apiserver = t.elapsed();

        // Namespace `default` is created by a bootstrap controller shortly after
        // /readyz; creating namespaced objects before it exists races with it.
        let deadline = Instant::now() + self.start_timeout;
        let namespaces: Api<Namespace> = Api::all(self.admin_client()?);
        loop {
            match namespaces.get_opt("default").await {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => sleep(POLL).await,
                Err(_) if Instant::now() < deadline => sleep(POLL).await,
                Ok(None) => bail!(
                    "namespace default did not appear within {:?}",
                    self.start_timeout
                ),
                Err(e) => return Err(e).context("namespace default is not readable"),
            }
        }
        self.timings.total = t0.elapsed();
        eprintln!(
            "mco-e2e: control plane ready at {} in {:.2?} (build.sh {:.2?}, etcd {:.2?}, kube-apiserver {:.2?}); dir {}",
            self.url(),
            self.timings.total,
            self.timings.binaries,
            self.timings.etcd,
            self.timings.apiserver,
            self.root.display()
        );
        Ok(())
    }

    // ---- accessors --------------------------------------------------------------------------------

    /// `https://127.0.0.1:PORT`: the serving cert has no `localhost` SAN.
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The apiserver's self-generated serving cert bundle (leaf + its own CA);
    /// clients trust it as their root. It survives restarts (the apiserver
    /// reuses the files in `--cert-dir`), so existing clients keep working.
    pub fn ca_path(&self) -> PathBuf {
        self.root.join("certs").join("apiserver.crt")
    }

    /// The temp dir holding logs, etcd data, certs, tokens and kubeconfigs.
    pub fn dir(&self) -> &Path {
        &self.root
    }

    pub fn bin_dir(&self) -> &Path {
        &self.bin_dir
    }

    pub fn etcd_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.etcd_client_port)
    }

    pub fn apiserver_log(&self) -> PathBuf {
        self.root.join("kube-apiserver.log")
    }

    pub fn etcd_log(&self) -> PathBuf {
        self.root.join("etcd.log")
    }

    /// PIDs of our children (`None` while stopped), so a test can check that
    /// they are gone after Drop.
    pub fn apiserver_pid(&self) -> Option<u32> {
        self.apiserver.as_ref().and_then(Proc::pid)
    }

    pub fn etcd_pid(&self) -> Option<u32> {
        self.etcd.as_ref().and_then(Proc::pid)
    }

    pub fn timings(&self) -> StartTimings {
        self.timings
    }

    /// The users registered with the builder (the admin is not listed).
    pub fn users(&self) -> impl Iterator<Item = &User> {
        self.users.iter().map(|(u, _)| u)
    }

    /// Bearer token of `user` ([`ADMIN_USER`] or one registered with the builder).
    pub fn token(&self, user: &str) -> Result<&str> {
        if user == ADMIN_USER {
            return Ok(&self.admin_token);
        }
        self.users
            .iter()
            .find(|(u, _)| u.name == user)
            .map(|(_, t)| t.as_str())
            .ok_or_else(|| {
                anyhow!(
                    "unknown user {user:?}: users must be registered with ControlPlane::builder().user(..) before start (known: {:?})",
                    self.users().map(|u| &u.name).collect::<Vec<_>>()
                )
            })
    }

    // ---- clients -----------------------------------------------------------------------------------

    /// A kube `Config` for `user`, for callers that want to tune timeouts etc.
    pub fn config_for(&self, user: &str) -> Result<Config> {
        self.config_with_token(self.token(user)?)
    }

    fn config_with_token(&self, token: &str) -> Result<Config> {
        let ca = self.ca_path();
        let pem = std::fs::read(&ca).with_context(|| format!("cannot read {}", ca.display()))?;
        let roots = CertificateDer::pem_slice_iter(&pem)
            .map(|c| c.map(|c| c.to_vec()))
            .collect::<Result<Vec<_>, _>>()
            .with_context(|| format!("cannot parse {}", ca.display()))?;
        ensure!(
            !roots.is_empty(),
            "{} holds no certificate yet",
            ca.display()
        );
        let url = self.url();
        let mut config = Config::new(url.parse().with_context(|| format!("bad URL {url}"))?);
        config.root_cert = Some(roots);
        config.auth_info.token = Some(token.to_owned().into());
        Ok(config)
    }

    /// A client acting as `system:masters` (bypasses RBAC); for test set-up only.
    ///
    /// Like any kube `Client`, it must be created inside a tokio runtime.
    pub fn admin_client(&self) -> Result<Client> {
        self.client_for(ADMIN_USER)
    }

    /// A client that authenticates as `user`, so RBAC decides what it may do.
    pub fn client_for(&self, user: &str) -> Result<Client> {
        let config = self.config_for(user)?;
        Client::try_from(config).with_context(|| format!("cannot build a client for {user:?}"))
    }

    /// Writes a kubeconfig for `user` (mode 0600: it holds the token), for a
    /// child process such as `mco-host run --kubeconfig PATH`. It points at
    /// [`Self::ca_path`] and is valid as long as this control plane lives.
    pub fn write_kubeconfig(&self, user: &str, path: &Path) -> Result<()> {
        let token = self.token(user)?;
        let context = format!("{user}@{CLUSTER_NAME}");
        let doc = json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{
                "name": CLUSTER_NAME,
                "cluster": {
                    "server": self.url(),
                    "certificate-authority": self.ca_path(),
                },
            }],
            "users": [{ "name": user, "user": { "token": token } }],
            "contexts": [{
                "name": context,
                "context": { "cluster": CLUSTER_NAME, "user": user, "namespace": "default" },
            }],
            "current-context": context,
        });
        let yaml = serde_saphyr::to_string(&doc).context("cannot render the kubeconfig")?;
        write_private(path, yaml.as_bytes())
    }

    /// Writes `kubeconfig-<n>.yaml` for `user` into [`Self::dir`] and returns its path.
    pub fn kubeconfig_for(&self, user: &str) -> Result<PathBuf> {
        let idx = if user == ADMIN_USER {
            0
        } else {
            1 + self
                .users
                .iter()
                .position(|(u, _)| u.name == user)
                .ok_or_else(|| anyhow!("unknown user {user:?}"))?
        };
        let path = self.root.join(format!("kubeconfig-{idx}.yaml"));
        self.write_kubeconfig(user, &path)?;
        Ok(path)
    }

    /// Creates (or keeps) a namespace. NamespaceLifecycle admission rejects
    /// objects in namespaces that do not exist, and nothing else creates them.
    pub async fn create_namespace(&self, name: &str) -> Result<()> {
        let api: Api<Namespace> = Api::all(self.admin_client()?);
        let ns = json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name } });
        api.patch(
            name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&ns),
        )
        .await
        .with_context(|| format!("cannot create namespace {name}"))?;
        Ok(())
    }

    // ---- lifecycle ---------------------------------------------------------------------------------

    /// Stops kube-apiserver (etcd keeps running), e.g. to hold the API down for a
    /// while before [`Self::start_apiserver`]. Returns how long the stop took.
    pub async fn stop_apiserver(&mut self) -> Result<Duration> {
        let Some(mut proc) = self.apiserver.take() else {
            return Ok(Duration::ZERO);
        };
        tokio::task::spawn_blocking(move || proc.stop_blocking())
            .await
            .context("the task stopping kube-apiserver panicked")?
    }

    /// Starts kube-apiserver again on the same port, certs, tokens and etcd,
    /// and waits for `/readyz`. Returns the time to ready.
    pub async fn start_apiserver(&mut self) -> Result<Duration> {
        ensure!(
            self.apiserver.is_none(),
            "kube-apiserver is already running"
        );
        let t = Instant::now();
        match self.start_apiserver_inner().await {
            Ok(()) => Ok(t.elapsed()),
            Err(e) => Err(self.with_logs(e, "kube-apiserver failed to restart")),
        }
    }

    /// Stop + start, for "the apiserver restarts mid-run" tests. Objects live in
    /// etcd, which keeps running, so everything written before is still there.
    pub async fn restart_apiserver(&mut self) -> Result<Duration> {
        self.stop_apiserver().await?;
        self.start_apiserver().await
    }

    async fn start_etcd(&mut self) -> Result<()> {
        let etcd_url = self.etcd_url();
        let peer_url = format!("http://127.0.0.1:{}", self.etcd_peer_port);
        let args = vec![
            "--name=default".to_owned(),
            format!("--data-dir={}", self.root.join("etcd").display()),
            format!("--listen-client-urls={etcd_url}"),
            format!("--advertise-client-urls={etcd_url}"),
            format!("--listen-peer-urls={peer_url}"),
            format!("--initial-advertise-peer-urls={peer_url}"),
            format!("--initial-cluster=default={peer_url}"),
            // Test data is disposable; fsync on a busy disk only slows every write.
            "--unsafe-no-fsync=true".to_owned(),
        ];
        let t = Instant::now();
        self.etcd = Some(Proc::spawn(
            &self.spawner,
            "etcd",
            &self.bin_dir.join("etcd"),
            &args,
            &self.etcd_log(),
        )?);
        let deadline = t + self.start_timeout;
        let addr = SocketAddr::from(([127, 0, 0, 1], self.etcd_client_port));
        loop {
            check_running(&mut self.etcd, "etcd")?;
            let last = match timeout(Duration::from_secs(2), etcd_health(addr)).await {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) => format!("{e:#}"),
                Err(_) => "health request timed out".to_owned(),
            };
            if Instant::now() >= deadline {
                bail!(
                    "etcd not healthy at {etcd_url}/health after {:?} (last: {last})",
                    self.start_timeout
                );
            }
            sleep(POLL).await;
        }
    }

    async fn start_apiserver_inner(&mut self) -> Result<()> {
        let url = self.url();
        let root = &self.root;
        let mut args = vec![
            format!("--etcd-servers={}", self.etcd_url()),
            "--bind-address=127.0.0.1".to_owned(),
            "--advertise-address=127.0.0.1".to_owned(),
            format!("--secure-port={}", self.port),
            format!("--cert-dir={}", root.join("certs").display()),
            "--service-cluster-ip-range=10.0.0.0/24".to_owned(),
            "--allow-privileged=true".to_owned(),
            "--authorization-mode=RBAC".to_owned(),
            format!("--token-auth-file={}", root.join("tokens.csv").display()),
            format!("--service-account-issuer={url}"),
            format!(
                "--service-account-key-file={}",
                root.join("sa.key").display()
            ),
            format!(
                "--service-account-signing-key-file={}",
                root.join("sa.key").display()
            ),
            // No token controller runs, so the ServiceAccount admission plugin
            // would reject pods; identities come from the token file instead.
            "--disable-admission-plugins=ServiceAccount".to_owned(),
            // Validation rejects a loopback IP in the `kubernetes` Endpoints, and
            // the default reconciler would log that every 10 s.
            "--endpoint-reconciler-type=none".to_owned(),
        ];
        args.extend(self.extra_apiserver_args.iter().cloned());

        let log = self.apiserver_log();
        if log.exists() {
            // Mark restarts so the appended log reads in order.
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&log)
                .with_context(|| format!("cannot open {}", log.display()))?;
            writeln!(f, "----- mco-e2e: starting kube-apiserver again -----")
                .with_context(|| format!("cannot write {}", log.display()))?;
        }
        let t = Instant::now();
        self.apiserver = Some(Proc::spawn(
            &self.spawner,
            "kube-apiserver",
            &self.bin_dir.join("kube-apiserver"),
            &args,
            &log,
        )?);

        let deadline = t + self.start_timeout;
        loop {
            check_running(&mut self.apiserver, "kube-apiserver")?;
            check_running(&mut self.etcd, "etcd")?;
            let last = match self.probe_readyz().await {
                Ok(()) => return Ok(()),
                Err(e) => failed_checks(&format!("{e:#}")),
            };
            if Instant::now() >= deadline {
                bail!(
                    "kube-apiserver not ready at {url}/readyz after {:?} (last: {last})",
                    self.start_timeout
                );
            }
            sleep(POLL).await;
        }
    }

    /// One `/readyz` request as admin. Anonymous requests get 403 until RBAC
    /// bootstrap finishes, so only an authenticated "ok" means ready. A fresh
    /// client each time, because the CA file appears (and could be read
    /// half-written) only once the apiserver starts listening.
    async fn probe_readyz(&self) -> Result<()> {
        let mut config = self.config_with_token(&self.admin_token)?;
        config.connect_timeout = Some(Duration::from_secs(2));
        config.read_timeout = Some(Duration::from_secs(5));
        config.default_retry = false;
        let client = Client::try_from(config).context("cannot build the readiness client")?;
        let req = http::Request::get("/readyz")
            .body(Vec::new())
            .context("cannot build the /readyz request")?;
        let body = timeout(Duration::from_secs(6), client.request_text(req))
            .await
            .context("/readyz timed out")?
            .context("/readyz failed")?;
        ensure!(body.trim() == "ok", "/readyz answered {body:?}");
        Ok(())
    }

    /// The error plus the tail of both logs, because "not ready after 120 s"
    /// alone never says why.
    fn with_logs(&self, e: anyhow::Error, what: &str) -> anyhow::Error {
        let mut msg = format!("{what}: {e:#}\n(temp dir {})", self.root.display());
        for (name, path) in [
            ("etcd", self.etcd_log()),
            ("kube-apiserver", self.apiserver_log()),
        ] {
            let _ = write!(
                msg,
                "\n===== {name} log {} (last {LOG_TAIL_LINES} lines) =====\n{}",
                path.display(),
                tail(&path, LOG_TAIL_LINES)
            );
        }
        anyhow!(msg)
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        // The apiserver first, so it does not spend its shutdown retrying a dead etcd.
        for proc in [self.apiserver.take(), self.etcd.take()]
            .into_iter()
            .flatten()
        {
            drop(proc);
        }
        if let Some(dir) = self.dir.take() {
            if keep_dirs() {
                eprintln!("mco-e2e: keeping {}", dir.keep().display());
            } else if let Err(e) = dir.close() {
                eprintln!("mco-e2e: cannot remove {}: {e}", self.root.display());
            }
        }
    }
}

/// Fails with the exit status if the process has already exited: waiting out the
/// whole timeout for a process that died at once hides the real error.
fn check_running(proc: &mut Option<Proc>, name: &str) -> Result<()> {
    match proc.as_mut() {
        None => bail!("{name} is not running"),
        Some(p) => match p.exited()? {
            Some(status) => bail!(
                "{name} exited while starting ({status}); see {}",
                p.log().display()
            ),
            None => Ok(()),
        },
    }
}

/// A not-ready `/readyz` lists every check, one per line; only the failing
/// (`[-]`) ones help in an error message.
fn failed_checks(err: &str) -> String {
    let failed: Vec<&str> = err.lines().filter(|l| l.starts_with("[-]")).collect();
    if failed.is_empty() {
        err.to_owned()
    } else {
        format!("not ready: {}", failed.join("; "))
    }
}

/// `GET /health` on etcd's client port: 200 with `{"health":"true"}`.
async fn etcd_health(addr: SocketAddr) -> Result<()> {
    let (code, body) = http_get(addr, "/health").await?;
    let healthy =
        serde_json::from_str::<serde_json::Value>(&body).is_ok_and(|v| v["health"] == "true");
    ensure!(
        code == 200 && healthy,
        "unhealthy: HTTP {code}: {}",
        body.trim()
    );
    Ok(())
}

/// Whether `MCO_ENVTEST_KEEP_DIR` (set, not empty, not `0`) asks to keep
/// the temp dirs of control planes and fixtures for debugging.
pub fn keep_dirs() -> bool {
    std::env::var("MCO_ENVTEST_KEEP_DIR").is_ok_and(|v| !v.is_empty() && v != "0")
}

fn start_timeout_from_env() -> Result<Duration> {
    match std::env::var("MCO_ENVTEST_START_TIMEOUT") {
        Err(_) => Ok(DEFAULT_START_TIMEOUT),
        Ok(v) => {
            let secs: f64 = v
                .trim()
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s > 0.0)
                .ok_or_else(|| {
                    anyhow!("MCO_ENVTEST_START_TIMEOUT={v:?} is not a positive number of seconds")
                })?;
            Ok(Duration::from_secs_f64(secs))
        }
    }
}

/// Distinct free ports: all listeners are held until every port is picked, then
/// released for etcd and kube-apiserver to bind. The window in between is small.
fn free_ports<const N: usize>() -> Result<[u16; N]> {
    let mut listeners = Vec::with_capacity(N);
    let mut ports = [0u16; N];
    for port in &mut ports {
        let l = TcpListener::bind("127.0.0.1:0").context("cannot bind a free port on 127.0.0.1")?;
        *port = l.local_addr().context("local_addr")?.port();
        listeners.push(l);
    }
    Ok(ports)
}

fn write_private(path: &Path, data: &[u8]) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    f.write_all(data)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// One RSA key is both the ServiceAccount signing key and its verification key,
/// as in smoke.sh; the apiserver refuses to start without them.
async fn generate_sa_key(path: &Path) -> Result<()> {
    let out = tokio::process::Command::new("openssl")
        .arg("genrsa")
        .arg("-out")
        .arg(path)
        .arg("2048")
        .stdin(Stdio::null())
        .output()
        .await
        .context("cannot run `openssl genrsa` (the openssl CLI is required)")?;
    ensure!(
        out.status.success(),
        "`openssl genrsa` failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    Ok(())
}

/// Runs `tests/tools/envtest/build.sh` and returns the directory holding `etcd` and
/// `kube-apiserver` (its last stdout line).
///
/// The script is a no-op when the binaries are cached and honours
/// `MCO_ENVTEST_BIN` (the cache root). A cold build takes minutes; its
/// progress is echoed to stderr (visible with `--nocapture`).
pub async fn envtest_bin_dir() -> Result<PathBuf> {
    let script = crate::crate_dir().join("../tools/envtest/build.sh");
    let mut child = tokio::process::Command::new("bash")
        .arg(&script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {}", script.display()))?;
    let mut stdout = child.stdout.take().context("build.sh stdout")?;
    let stderr = child.stderr.take().context("build.sh stderr")?;

    let read_out = async {
        let mut s = String::new();
        stdout.read_to_string(&mut s).await.map(|_| s)
    };
    let read_err = async {
        let mut lines = BufReader::new(stderr).lines();
        let mut last = VecDeque::new();
        while let Ok(Some(line)) = lines.next_line().await {
            eprintln!("[build.sh] {line}");
            if last.len() == 40 {
                last.pop_front();
            }
            last.push_back(line);
        }
        last
    };
    let (out, err_tail, status) = tokio::join!(read_out, read_err, child.wait());
    let status = status.with_context(|| format!("waiting for {}", script.display()))?;
    let err_tail = err_tail.into_iter().collect::<Vec<_>>().join("\n");
    if !status.success() {
        bail!(
            "{} failed ({status}); it needs Go and the Go module proxy, see tests/tools/envtest/README.md. Last stderr lines:\n{err_tail}",
            script.display()
        );
    }
    let out = out.with_context(|| format!("cannot read the output of {}", script.display()))?;
    let dir = out
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            anyhow!(
                "{} printed no bin dir; stderr:\n{err_tail}",
                script.display()
            )
        })?;
    for bin in ["etcd", "kube-apiserver"] {
        let p = dir.join(bin);
        ensure!(
            p.is_file(),
            "{} reported {} but {} is missing",
            script.display(),
            dir.display(),
            p.display()
        );
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tests keep a control plane in shared state or hand it to spawned tasks.
    #[test]
    fn control_plane_is_send_and_sync() {
        fn send_sync<T: Send + Sync>() {}
        fn send<T: Send>(_: &T) {}
        send_sync::<ControlPlane>();
        // Never polled: only the type of the future is checked.
        send(&ControlPlane::start());
    }

    #[test]
    fn readyz_errors_keep_only_failed_checks() {
        let err =
            "/readyz failed: ApiError: [+]ping ok\n[-]etcd failed: reason withheld\n[+]log ok";
        assert_eq!(
            failed_checks(err),
            "not ready: [-]etcd failed: reason withheld"
        );
        assert_eq!(failed_checks("connection refused"), "connection refused");
    }
}
