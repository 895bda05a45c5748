//! A real vCenter for the vSphere boot image tests: govmomi's simulator
//! `vcsim` (built by `tests/tools/vcsim/build.sh` into a cache outside the clone)
//! as a child process on loopback, serving TLS with a certificate made for
//! it (so clients verify it like any vCenter's, against [`Vcsim::ca_pem`])
//! and accepting one username and password only. A part that cannot start
//! fails the test that needs it, never skips it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

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
    /// The harness's own SOAP session ([`Vcsim::soap`]), opened on first use.
    soap_cookie: std::sync::Mutex<Option<String>>,
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
        Vcsim::start_with(username, password, &[])
    }

    /// [`Vcsim::start`] with more vcsim flags, e.g. `["-cluster", "2"]` for
    /// two compute clusters (each with its own resource pool: two failure
    /// domains).
    pub fn start_with(username: &str, password: &str, extra_args: &[&str]) -> Result<Vcsim> {
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
        let mut args = vec![
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
        args.extend(extra_args.iter().map(|a| (*a).to_owned()));
        let spawner = Spawner::new()?;
        let mut proc = Proc::spawn(&spawner, "vcsim", &binary, &args, &log)?;
        let server = wait_listening(&mut proc, &env)?;
        Ok(Vcsim {
            server,
            username: username.to_owned(),
            password: password.to_owned(),
            ca_pem,
            soap_cookie: std::sync::Mutex::new(None),
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

/// The harness's own view of vcsim over HTTP: just enough SOAP and vAPI
/// REST for tests to set up inventory (folders, tags) and read back
/// outcomes independently of the client under test. Answers are matched as
/// text: vcsim's serializer is fixed for a pinned version.
impl Vcsim {
    /// A client that trusts vcsim's CA only, without proxies or idle
    /// connections (each test has its own runtime).
    fn client(&self) -> Result<reqwest::Client> {
        let mut roots = rustls::RootCertStore::empty();
        let cert = CertificateDer::from_pem_slice(self.ca_pem.as_bytes())
            .context("vcsim's CA is not PEM")?;
        roots.add(cert)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
        reqwest::Client::builder()
            .tls_backend_preconfigured(config)
            .no_proxy()
            .pool_max_idle_per_host(0)
            .timeout(Duration::from_secs(30))
            .build()
            .context("cannot build the vcsim HTTP client")
    }

    /// POSTs one vim25 call (`<Method xmlns="urn:vim25">…</Method>`) to
    /// `/sdk` in the harness's session; the answer's text. A SOAP fault is
    /// an error carrying the whole answer.
    pub async fn soap(&self, call: &str) -> Result<String> {
        let cookie = self.soap_cookie.lock().map(|c| c.clone()).unwrap_or(None);
        let cookie = match cookie {
            Some(c) => c,
            None => {
                let login = format!(
                    r#"<Login xmlns="urn:vim25"><_this type="SessionManager">SessionManager</_this><userName>{}</userName><password>{}</password></Login>"#,
                    xml_escape(&self.username),
                    xml_escape(&self.password)
                );
                let (_, set_cookie) = self.post_soap(&login, None).await?;
                let c = set_cookie.context("vcsim's Login set no cookie")?;
                if let Ok(mut slot) = self.soap_cookie.lock() {
                    *slot = Some(c.clone());
                }
                c
            }
        };
        Ok(self.post_soap(call, Some(&cookie)).await?.0)
    }

    async fn post_soap(
        &self,
        call: &str,
        cookie: Option<&str>,
    ) -> Result<(String, Option<String>)> {
        let body = format!(
            concat!(
                r#"<?xml version="1.0" encoding="UTF-8"?>"#,
                r#"<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" "#,
                r#"xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">"#,
                "<soapenv:Body>{}</soapenv:Body></soapenv:Envelope>"
            ),
            call
        );
        let mut request = self
            .client()?
            .post(self.sdk_url())
            .header("Content-Type", "text/xml; charset=utf-8")
            .header("SOAPAction", "urn:vim25/8.0.3.0")
            .body(body);
        if let Some(c) = cookie {
            request = request.header("Cookie", c);
        }
        let response = request.send().await.context("POST /sdk")?;
        let set_cookie = response
            .headers()
            .get("set-cookie")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(str::to_owned);
        let text = response.text().await.context("POST /sdk: reading")?;
        ensure!(!text.contains("Fault>"), "vcsim answered a fault: {text}");
        Ok((text, set_cookie))
    }

    /// The object at an inventory path (`Folder:group-v3`), if any.
    pub async fn find_by_path(&self, path: &str) -> Result<Option<(String, String)>> {
        let answer = self
            .soap(&format!(
                r#"<FindByInventoryPath xmlns="urn:vim25"><_this type="SearchIndex">SearchIndex</_this><inventoryPath>{}</inventoryPath></FindByInventoryPath>"#,
                xml_escape(path)
            ))
            .await?;
        Ok(moref_in(&answer, "returnval"))
    }

    /// Creates folder `name` in the folder at `parent` (`/DC0/vm`); its
    /// managed object ID.
    pub async fn create_folder(&self, parent: &str, name: &str) -> Result<String> {
        let (kind, id) = self
            .find_by_path(parent)
            .await?
            .with_context(|| format!("no folder at {parent}"))?;
        let answer = self
            .soap(&format!(
                r#"<CreateFolder xmlns="urn:vim25"><_this type="{kind}">{id}</_this><name>{}</name></CreateFolder>"#,
                xml_escape(name)
            ))
            .await?;
        moref_in(&answer, "returnval")
            .map(|(_, id)| id)
            .with_context(|| format!("CreateFolder answered no folder: {answer}"))
    }

    /// The raw `<val>` text of one property of a VM (`vm-42`), e.g.
    /// `config.bootOptions.efiSecureBootEnabled`; `None` when vcsim reports
    /// no value.
    pub async fn vm_property(&self, vm: &str, path: &str) -> Result<Option<String>> {
        let answer = self
            .soap(&format!(
                concat!(
                    r#"<RetrievePropertiesEx xmlns="urn:vim25"><_this type="PropertyCollector">propertyCollector</_this>"#,
                    "<specSet><propSet><type>VirtualMachine</type><pathSet>{path}</pathSet></propSet>",
                    r#"<objectSet><obj type="VirtualMachine">{vm}</obj></objectSet></specSet><options></options></RetrievePropertiesEx>"#
                ),
                path = xml_escape(path),
                vm = xml_escape(vm)
            ))
            .await?;
        Ok(answer
            .split_once("<val")
            .and_then(|(_, rest)| rest.split_once('>'))
            .and_then(|(_, rest)| rest.split_once("</val>"))
            .map(|(val, _)| val.to_owned()))
    }

    /// How many SOAP sessions vcsim holds (`SessionManager.sessionList`),
    /// the harness's own included.
    pub async fn session_count(&self) -> Result<usize> {
        let answer = self
            .soap(concat!(
                r#"<RetrievePropertiesEx xmlns="urn:vim25"><_this type="PropertyCollector">propertyCollector</_this>"#,
                "<specSet><propSet><type>SessionManager</type><pathSet>sessionList</pathSet></propSet>",
                r#"<objectSet><obj type="SessionManager">SessionManager</obj></objectSet></specSet><options></options></RetrievePropertiesEx>"#
            ))
            .await?;
        Ok(answer.matches("<userName>").count())
    }

    /// Renames a VM (`Rename_Task`; vcsim finishes it before answering).
    pub async fn rename_vm(&self, vm: &str, new_name: &str) -> Result<()> {
        self.soap(&format!(
            r#"<Rename_Task xmlns="urn:vim25"><_this type="VirtualMachine">{}</_this><newName>{}</newName></Rename_Task>"#,
            xml_escape(vm),
            xml_escape(new_name)
        ))
        .await
        .map(drop)
    }

    /// One vAPI REST call under `/rest` with a fresh session: the JSON
    /// answer's `value`.
    async fn rest(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> Result<serde_json::Value> {
        let client = self.client()?;
        let base = format!("https://{}/rest", self.server);
        let session = client
            .post(format!("{base}/com/vmware/cis/session"))
            .basic_auth(&self.username, Some(&self.password))
            .send()
            .await?
            .error_for_status()
            .context("vAPI login")?
            .text()
            .await?;
        let session: serde_json::Value =
            serde_json::from_str(&session).context("vAPI login: not JSON")?;
        let id = session["value"]
            .as_str()
            .context("no vAPI session ID")?
            .to_owned();
        let mut request = client
            .request(method.clone(), format!("{base}{path}"))
            .header("vmware-api-session-id", id);
        if let Some(body) = body {
            request = request
                .header("Content-Type", "application/json")
                .body(body.to_string());
        }
        let response = request
            .send()
            .await
            .with_context(|| format!("{method} {path}"))?;
        let status = response.status();
        let text = response.text().await?;
        ensure!(
            status.is_success(),
            "{method} {path}: HTTP {status}: {text}"
        );
        if text.trim().is_empty() {
            return Ok(serde_json::Value::Null);
        }
        let value: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{method} {path}: not JSON: {text}"))?;
        Ok(value["value"].clone())
    }

    /// Creates a tag category (one tag per object, for VMs) and a tag
    /// named `name` in it, as the installer creates the infrastructure ID's;
    /// the tag's ID.
    pub async fn create_tag(&self, category: &str, name: &str) -> Result<String> {
        let category_id = self
            .rest(
                reqwest::Method::POST,
                "/com/vmware/cis/tagging/category",
                Some(serde_json::json!({"create_spec": {
                    "name": category, "description": "mco-e2e",
                    "cardinality": "SINGLE", "associable_types": ["VirtualMachine"]}})),
            )
            .await?;
        let category_id = category_id.as_str().context("no category ID")?.to_owned();
        let tag = self
            .rest(
                reqwest::Method::POST,
                "/com/vmware/cis/tagging/tag",
                Some(serde_json::json!({"create_spec": {
                    "name": name, "description": "mco-e2e", "category_id": category_id}})),
            )
            .await?;
        Ok(tag.as_str().context("no tag ID")?.to_owned())
    }

    /// The IDs of the tags attached to VM `vm` (`vm-42`).
    pub async fn attached_tags(&self, vm: &str) -> Result<Vec<String>> {
        let ids = self
            .rest(
                reqwest::Method::POST,
                "/com/vmware/cis/tagging/tag-association?~action=list-attached-tags",
                Some(serde_json::json!({"object_id": {"id": vm, "type": "VirtualMachine"}})),
            )
            .await?;
        let mut ids: Vec<String> = ids
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        ids.sort();
        Ok(ids)
    }
}

/// `type` and ID of the first `<tag type="T">id</tag>` in `text`.
fn moref_in(text: &str, tag: &str) -> Option<(String, String)> {
    let (_, rest) = text.split_once(&format!("<{tag} type=\""))?;
    let (kind, rest) = rest.split_once('"')?;
    let (_, rest) = rest.split_once('>')?;
    let (id, _) = rest.split_once(&format!("</{tag}>"))?;
    Some((kind.to_owned(), id.to_owned()))
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Runs `tests/tools/vcsim/build.sh` (a no-op when cached) and returns the binary.
fn binary() -> Result<PathBuf> {
    let script = crate::crate_dir().join("../tools/vcsim/build.sh");
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
