//! A real vCenter for the vSphere boot image tests: govmomi's simulator
//! `vcsim` (built by `tests/vcsim/build.sh` into a cache outside the clone)
//! as a child process on loopback, serving TLS with a certificate made for
//! it (so clients verify it like any vCenter's, against [`Vcsim::ca_pem`])
//! and accepting one username and password only. A part that cannot start
//! fails the test that needs it, never skips it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

use crate::process::{Proc, Spawner, tail};

/// How long vcsim may take to build its inventory and listen (about 0.2 s).
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A running vcsim; dropping it stops the process and removes its files.
pub struct Vcsim {
    /// `host:port` on 127.0.0.1, as a MachineSet's `workspace.server` names it.
    pub server: String,
    pub username: String,
    pub password: String,
    ca_pem: String,
    // Field order is drop order: the process goes before its directory and
    // the spawner thread that owns it.
    proc: Proc,
    _spawner: Spawner,
    _dir: tempfile::TempDir,
}

impl Vcsim {
    /// Builds (or finds) vcsim, makes a certificate for 127.0.0.1 and
    /// starts it on a port of its own choosing, accepting only
    /// `username`/`password`.
    pub fn start(username: &str, password: &str) -> Result<Vcsim> {
        ensure!(
            !username.is_empty() && !password.is_empty(),
            "vcsim accepts any login unless given both a username and a password"
        );
        let binary = binary()?;
        let dir = tempfile::tempdir().context("cannot create vcsim's temp dir")?;
        let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
        let ca = make_certificates(dir.path(), &cert, &key)?;
        let ca_pem = std::fs::read_to_string(&ca)
            .with_context(|| format!("cannot read {}", ca.display()))?;
        let env = dir.path().join("vcsim.env");
        let log = dir.path().join("vcsim.log");
        // vcsim opens the `-E` file for writing without creating it.
        std::fs::File::create(&env).with_context(|| format!("cannot create {}", env.display()))?;
        let path = |p: &Path| p.display().to_string();
        let args = vec![
            "-l".to_owned(),
            "127.0.0.1:0".to_owned(),
            "-tlscert".to_owned(),
            path(&cert),
            "-tlskey".to_owned(),
            path(&key),
            "-username".to_owned(),
            username.to_owned(),
            "-password".to_owned(),
            password.to_owned(),
            "-E".to_owned(),
            path(&env),
        ];
        let spawner = Spawner::new()?;
        let mut proc = Proc::spawn(&spawner, "vcsim", &binary, &args, &log)?;
        let server = wait_listening(&mut proc, &env)?;
        Ok(Vcsim {
            server,
            username: username.to_owned(),
            password: password.to_owned(),
            ca_pem,
            proc,
            _spawner: spawner,
            _dir: dir,
        })
    }

    /// The SOAP endpoint, `https://<server>/sdk`, as upstream opens it.
    pub fn sdk_url(&self) -> String {
        format!("https://{}/sdk", self.server)
    }

    /// The PEM certificate of the CA that signed vcsim's, made for this run.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The end of vcsim's log, for error messages.
    pub fn log_tail(&self) -> String {
        tail(self.proc.log(), 40)
    }
}

/// Runs `tests/vcsim/build.sh` (a no-op when cached) and returns the binary.
fn binary() -> Result<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("vcsim/build.sh");
    let out = Command::new("bash")
        .arg(&script)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run {}", script.display()))?;
    ensure!(out.status.success(), "{} failed", script.display());
    let stdout = String::from_utf8(out.stdout).context("build.sh printed non-UTF-8")?;
    let dir = stdout
        .lines()
        .last()
        .context("vcsim/build.sh printed nothing")?;
    let binary = Path::new(dir).join("vcsim");
    ensure!(
        binary.is_file(),
        "vcsim/build.sh named {dir}, which holds no vcsim"
    );
    Ok(binary)
}

/// A CA (`ca.crt`, what clients trust) and vcsim's key and certificate for
/// `127.0.0.1` signed by it (the IP in the subject alternative names, where
/// rustls looks; webpki refuses a CA certificate as a server's own), made
/// with the openssl CLI as the control plane's keys are.
fn make_certificates(dir: &Path, cert: &Path, key: &Path) -> Result<PathBuf> {
    let (ca, ca_key) = (dir.join("ca.crt"), dir.join("ca.key"));
    let csr = dir.join("tls.csr");
    let ext = dir.join("tls.ext");
    std::fs::write(
        &ext,
        "basicConstraints=critical,CA:FALSE\nsubjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
    )
    .with_context(|| format!("cannot write {}", ext.display()))?;
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    openssl(|c| {
        c.args(["req", "-x509"]).args(ec);
        c.args(["-days", "2", "-subj", "/CN=mco-e2e vcsim CA"]);
        c.arg("-keyout").arg(&ca_key).arg("-out").arg(&ca);
    })?;
    openssl(|c| {
        c.arg("req").args(ec).args(["-subj", "/CN=vcsim"]);
        c.arg("-keyout").arg(key).arg("-out").arg(&csr);
    })?;
    openssl(|c| {
        c.args(["x509", "-req", "-days", "2"]).arg("-in").arg(&csr);
        c.arg("-CA").arg(&ca).arg("-CAkey").arg(&ca_key);
        c.arg("-CAcreateserial").arg("-extfile").arg(&ext);
        c.arg("-out").arg(cert);
    })?;
    Ok(ca)
}

fn openssl(args: impl FnOnce(&mut Command)) -> Result<()> {
    let mut command = Command::new("openssl");
    args(&mut command);
    let out = command
        .stdin(Stdio::null())
        .output()
        .context("cannot run openssl (the openssl CLI is required)")?;
    ensure!(
        out.status.success(),
        "openssl failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    Ok(())
}

/// vcsim writes its `GOVC_URL` (with the port it bound) to the `-E` file
/// once it listens: that line is the readiness signal, and the address.
fn wait_listening(proc: &mut Proc, env: &Path) -> Result<String> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Ok(text) = std::fs::read_to_string(env)
            && let Some(server) = server_of(&text)
        {
            return Ok(server);
        }
        if let Some(status) = proc.exited()? {
            bail!(
                "vcsim exited ({status}) before listening:\n{}",
                tail(proc.log(), 40)
            );
        }
        if Instant::now() >= deadline {
            bail!(
                "vcsim did not listen within {START_TIMEOUT:?}:\n{}",
                tail(proc.log(), 40)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `host:port` from an `export GOVC_URL=https://user:pass@host:port/sdk`
/// line.
fn server_of(env: &str) -> Option<String> {
    let url = env
        .lines()
        .find_map(|line| line.trim().strip_prefix("export GOVC_URL="))?;
    let url = url.trim_matches(|c| c == '"' || c == '\'');
    let rest = url.strip_prefix("https://")?;
    let authority = rest.split('/').next()?;
    let host_port = authority.rsplit('@').next()?;
    host_port.contains(':').then(|| host_port.to_owned())
}

#[cfg(test)]
mod tests {
    use super::server_of;

    #[test]
    fn the_address_comes_from_govc_url() {
        let env = "export GOVC_USERNAME=u\nexport GOVC_URL=https://u:p@127.0.0.1:40123/sdk GOVC_SIM_PID=7\n";
        assert_eq!(server_of(env).as_deref(), Some("127.0.0.1:40123"));
        assert_eq!(
            server_of("export GOVC_URL=\"https://127.0.0.1:8989/sdk\"").as_deref(),
            Some("127.0.0.1:8989")
        );
        assert_eq!(server_of("export GOVC_URL=http://127.0.0.1:1/sdk"), None);
        assert_eq!(server_of("export GOVC_URL=https://localhost/sdk"), None);
        assert_eq!(server_of(""), None);
    }
}
