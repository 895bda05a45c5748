//! The vCenter the vSphere boot image tests run against: govmomi's `vcsim`
//! (`tests/tools/vcsim/build.sh`), started by the harness on loopback with TLS and
//! one username and password. These tests hold the harness to that: the
//! certificate verifies for 127.0.0.1, the right login opens a session, a
//! wrong one is refused with vSphere's own fault, and plain HTTP is not
//! served. The SOAP here is the smallest a client sends (`Login` on the
//! `SessionManager`), over rustls: only the harness is under test.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use mco_e2e::Vcsim;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};

/// vcsim v0.45.1 refuses every login for a username with an `@` (it keeps
/// the credentials in a URL and compares them after a round trip through
/// it), so the test user is not spelled `administrator@vsphere.local` as a
/// real vCenter's would be; the login itself is the same call.
const USER: &str = "mco-e2e-vcenter";
const PASSWORD: &str = "s3cret pass";

/// POSTs a SOAP `Login` to `/sdk` over TLS verified against vcsim's own
/// certificate; the HTTP status line and body.
fn login(vcsim: &Vcsim, user: &str, password: &str) -> Result<(String, String)> {
    let mut roots = rustls::RootCertStore::empty();
    let cert = CertificateDer::from_pem_slice(vcsim.ca_pem().as_bytes())
        .context("vcsim's certificate is not PEM")?;
    roots.add(cert)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = ServerName::try_from("127.0.0.1")?;
    let conn = rustls::ClientConnection::new(Arc::new(config), name)?;
    let tcp = TcpStream::connect(&vcsim.server)?;
    tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let body = format!(
        concat!(
            r#"<?xml version="1.0" encoding="UTF-8"?>"#,
            r#"<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:urn="urn:vim25">"#,
            r#"<soapenv:Body><urn:Login><urn:_this type="SessionManager">SessionManager</urn:_this>"#,
            "<urn:userName>{}</urn:userName><urn:password>{}</urn:password>",
            "</urn:Login></soapenv:Body></soapenv:Envelope>"
        ),
        user, password
    );
    write!(
        tls,
        "POST /sdk HTTP/1.1\r\nHost: {}\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: urn:vim25/8.0.3.0\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        vcsim.server,
        body.len()
    )?;
    let mut response = Vec::new();
    match tls.read_to_end(&mut response) {
        Ok(_) => {}
        // vcsim closes without close_notify; what was read is complete.
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {}
        Err(e) => return Err(e.into()),
    }
    let text = String::from_utf8(response)?;
    let (head, body) = text.split_once("\r\n\r\n").context("no HTTP header end")?;
    let status = head.lines().next().unwrap_or_default().to_owned();
    Ok((status, body.to_owned()))
}

#[test]
fn vcsim_serves_tls_and_accepts_only_its_login() -> Result<()> {
    let vcsim = Vcsim::start(USER, PASSWORD)?;
    assert!(vcsim.server.starts_with("127.0.0.1:"), "{}", vcsim.server);
    assert_eq!(vcsim.sdk_url(), format!("https://{}/sdk", vcsim.server));

    let (status, body) = login(&vcsim, USER, PASSWORD)?;
    assert!(
        status.contains(" 200 "),
        "{status}\n{body}\n{}",
        vcsim.log_tail()
    );
    assert!(body.contains("LoginResponse"), "{body}");
    assert!(body.contains(USER), "the session names its user: {body}");

    let (status, body) = login(&vcsim, USER, "wrong")?;
    assert!(status.contains(" 500 "), "{status}\n{body}");
    assert!(body.contains("InvalidLogin"), "{body}");
    let (_, body) = login(&vcsim, "someone-else", PASSWORD)?;
    assert!(body.contains("InvalidLogin"), "{body}");

    // TLS only: a plain HTTP request gets no SOAP answer.
    let mut plain = TcpStream::connect(&vcsim.server)?;
    plain.set_read_timeout(Some(Duration::from_secs(10)))?;
    plain.write_all(
        b"POST /sdk HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )?;
    let mut answer = Vec::new();
    let _ = plain.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(!answer.contains("Envelope"), "{answer}");
    Ok(())
}

#[test]
fn a_vcsim_that_cannot_start_fails_with_its_reason() {
    let err = Vcsim::start("", PASSWORD).err().map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("username and a password")),
        "{err:?}"
    );
}
