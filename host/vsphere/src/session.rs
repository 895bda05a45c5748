//! The SOAP session: TLS, the vim25 envelope, faults, bounded bodies.

use std::time::Duration;

use mco_http::{Body, Chain, Over, ReadError, TlsError, excerpt};
use reqwest::header::{CONTENT_TYPE, COOKIE, HeaderValue, SET_COOKIE};

use crate::error::Error;
use crate::xml::{self, Element, escape};
use crate::{Endpoint, MAX_BODY, Timeouts, Trust};

/// The API version asked for before vCenter has said its own: govmomi's
/// default of v0.45 too. vCenter answers `RetrieveServiceContent` for any
/// version; every later call uses the version it reports.
const INITIAL_VERSION: &str = "8.0.3.0";

/// The cookie vCenter's SOAP session lives in.
const SESSION_COOKIE: &str = "vmware_soap_session";

/// A managed object reference: `type` and ID (`VirtualMachine`, `vm-42`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct MoRef {
    pub kind: String,
    pub value: String,
}

impl MoRef {
    pub(crate) fn new(kind: &str, value: &str) -> MoRef {
        MoRef {
            kind: kind.to_owned(),
            value: value.to_owned(),
        }
    }

    /// A reference as vim25 writes one: `<x type="Folder">group-d1</x>`.
    pub(crate) fn from_element(el: &Element) -> Option<MoRef> {
        let kind = el.plain_attr("type")?;
        let value = el.text.trim();
        (!kind.is_empty() && !value.is_empty()).then(|| MoRef::new(kind, value))
    }

    /// This reference as element `name`.
    pub(crate) fn xml(&self, name: &str) -> String {
        format!(
            r#"<{name} type="{}">{}</{name}>"#,
            escape(&self.kind),
            escape(&self.value)
        )
    }
}

/// The managed objects the flow talks to, from `RetrieveServiceContent`.
#[derive(Clone, Debug)]
pub(crate) struct ServiceContent {
    pub root_folder: MoRef,
    pub property_collector: MoRef,
    pub view_manager: MoRef,
    pub session_manager: MoRef,
    pub search_index: MoRef,
    pub ovf_manager: MoRef,
}

/// A logged-in vim25 SOAP session, plus the vAPI REST session for tags,
/// opened on first use. End it with [`Session::logout`]; a session dropped
/// without it is logged out by a background task (see its `Drop`), which
/// needs a tokio runtime: without one it lives on in vCenter until its
/// idle timeout (30 minutes by default).
/// `Send + Sync`, and its futures are `Send`.
pub struct Session {
    pub(crate) http: reqwest::Client,
    pub(crate) server: String,
    sdk_url: String,
    version: String,
    cookie: Option<HeaderValue>,
    pub(crate) content: ServiceContent,
    pub(crate) timeouts: Timeouts,
    // For the lazy REST login: vAPI sessions are separate from SOAP ones.
    pub(crate) username: String,
    pub(crate) password: String,
    pub(crate) rest_token: tokio::sync::Mutex<Option<String>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("server", &self.server)
            .field("username", &self.username)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// A session dropped before [`Session::logout`] (its pass was cancelled:
/// shutdown, a lost lease) is ended in the background on the current tokio
/// runtime, rather than holding one of vCenter's sessions for the user
/// until its idle timeout.
impl Drop for Session {
    fn drop(&mut self) {
        let Some(cookie) = self.cookie.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(
                server = %self.server,
                "a vCenter session was dropped outside a tokio runtime without logging out; it stays open in vCenter until its idle timeout"
            );
            return;
        };
        let orphan = Session {
            http: self.http.clone(),
            server: std::mem::take(&mut self.server),
            sdk_url: std::mem::take(&mut self.sdk_url),
            version: std::mem::take(&mut self.version),
            cookie: Some(cookie),
            content: self.content.clone(),
            timeouts: self.timeouts,
            username: std::mem::take(&mut self.username),
            password: std::mem::take(&mut self.password),
            rest_token: tokio::sync::Mutex::new(self.rest_token.get_mut().take()),
        };
        runtime.spawn(async move {
            let server = orphan.server.clone();
            if let Err(e) = orphan.logout().await {
                tracing::debug!(%server, error = %e, "logging out a dropped vCenter session failed");
            }
        });
    }
}

impl Session {
    /// Opens a SOAP session at `https://<server>/sdk`: `RetrieveServiceContent`,
    /// then `SessionManager.Login`. A wrong password is
    /// [`Error::Fault`] with fault `InvalidLogin`.
    pub async fn login(
        endpoint: &Endpoint,
        trust: &Trust,
        timeouts: Timeouts,
    ) -> Result<Session, Error> {
        let server = endpoint.server.trim().trim_end_matches('/');
        if server.is_empty() || server.contains(['/', '@', '?', '#', ' ']) {
            return Err(Error::Invalid(format!(
                "vCenter server {:?} is not host[:port]",
                endpoint.server
            )));
        }
        let http = http_client(trust)?;
        let mut session = Session {
            http,
            server: server.to_owned(),
            sdk_url: format!("https://{server}/sdk"),
            version: INITIAL_VERSION.to_owned(),
            cookie: None,
            content: ServiceContent {
                root_folder: MoRef::new("Folder", "group-d1"),
                property_collector: MoRef::new("PropertyCollector", "propertyCollector"),
                view_manager: MoRef::new("ViewManager", "ViewManager"),
                session_manager: MoRef::new("SessionManager", "SessionManager"),
                search_index: MoRef::new("SearchIndex", "SearchIndex"),
                ovf_manager: MoRef::new("OvfManager", "OvfManager"),
            },
            timeouts,
            username: endpoint.username.clone(),
            password: endpoint.password.clone(),
            rest_token: tokio::sync::Mutex::new(None),
        };
        let instance = MoRef::new("ServiceInstance", "ServiceInstance");
        let (sc, _) = session
            .invoke_raw("RetrieveServiceContent", &instance, "")
            .await?;
        session.content = service_content(&sc)?;
        if let Some(v) = sc.text_at(&["returnval", "about", "apiVersion"])
            && !v.is_empty()
            && v.len() <= 16
            && v.chars().all(|c| c.is_ascii_digit() || c == '.')
        {
            session.version = v.to_owned();
        }
        let params = format!(
            "<userName>{}</userName><password>{}</password>",
            escape(&endpoint.username),
            escape(&endpoint.password)
        );
        let sm = session.content.session_manager.clone();
        let (_, cookie) = session.invoke_raw("Login", &sm, &params).await?;
        session.cookie = Some(cookie.ok_or_else(|| Error::Malformed {
            method: "Login".into(),
            detail: format!("no {SESSION_COOKIE} cookie in the answer"),
        })?);
        tracing::debug!(server = %session.server, version = %session.version, "vCenter session opened");
        Ok(session)
    }

    /// Ends the REST session (if one was opened) and the SOAP session.
    /// The SOAP logout's error wins; a REST logout failure is logged.
    pub async fn logout(mut self) -> Result<(), Error> {
        if let Err(e) = self.rest_logout().await {
            tracing::warn!(error = %e, "vAPI session logout failed");
        }
        let sm = self.content.session_manager.clone();
        let result = self.invoke("Logout", &sm, "").await.map(drop);
        // Tried once, whatever the answer: the drop does not try again.
        self.cookie = None;
        result
    }

    /// The `host[:port]` this session talks to.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The SOAP session cookie (`vmware_soap_session=…`).
    pub(crate) fn cookie(&self) -> Option<HeaderValue> {
        self.cookie.clone()
    }

    /// Calls `method` on `this` with `params` (the XML of its parameters
    /// after `_this`, in WSDL order); the `<methodResponse>` element.
    pub(crate) async fn invoke(
        &self,
        method: &str,
        this: &MoRef,
        params: &str,
    ) -> Result<Element, Error> {
        self.invoke_raw(method, this, params)
            .await
            .map(|(el, _)| el)
    }

    async fn invoke_raw(
        &self,
        method: &str,
        this: &MoRef,
        params: &str,
    ) -> Result<(Element, Option<HeaderValue>), Error> {
        let body = format!(
            concat!(
                r#"<?xml version="1.0" encoding="UTF-8"?>"#,
                r#"<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" "#,
                r#"xmlns:xsd="http://www.w3.org/2001/XMLSchema" "#,
                r#"xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">"#,
                r#"<soapenv:Body><{method} xmlns="urn:vim25">{this}{params}</{method}>"#,
                "</soapenv:Body></soapenv:Envelope>"
            ),
            method = method,
            this = this.xml("_this"),
            params = params,
        );
        let mut request = self
            .http
            .post(&self.sdk_url)
            .timeout(self.timeouts.call)
            .header(CONTENT_TYPE, "text/xml; charset=utf-8")
            .header("SOAPAction", format!("urn:vim25/{}", self.version))
            .body(body);
        if let Some(cookie) = &self.cookie {
            request = request.header(COOKIE, cookie.clone());
        }
        let timeout = self.timeouts.call;
        let response = request
            .send()
            .await
            .map_err(|e| http_error(method, &e, "call", timeout))?;
        let status = response.status();
        let cookie = session_cookie(&response);
        let bytes = read_bounded(response, method, "call", timeout).await?;
        let text = std::str::from_utf8(&bytes).map_err(|_| Error::Malformed {
            method: method.to_owned(),
            detail: format!("HTTP {status}: the body is not UTF-8"),
        })?;
        let envelope = xml::parse(text).map_err(|detail| Error::Malformed {
            method: method.to_owned(),
            detail: if status.is_success() {
                detail
            } else {
                format!("HTTP {status}: {}", excerpt(text, 200))
            },
        })?;
        let body = (envelope.name == "Envelope")
            .then(|| envelope.child("Body"))
            .flatten()
            .ok_or_else(|| Error::Malformed {
                method: method.to_owned(),
                detail: format!("HTTP {status}: not a SOAP envelope"),
            })?;
        if let Some(fault) = body.child("Fault") {
            let (fault, message) = soap_fault(fault);
            return Err(Error::Fault {
                method: method.to_owned(),
                fault,
                message,
            });
        }
        let want = format!("{method}Response");
        let answer = body
            .children
            .iter()
            .find(|c| c.name == want)
            .ok_or_else(|| Error::Malformed {
                method: method.to_owned(),
                detail: format!("HTTP {status}: no {want} in the body"),
            })?;
        Ok((answer.clone(), cookie))
    }
}

/// The SOAP session cookie (`name=value` only) from a response.
fn session_cookie(response: &reqwest::Response) -> Option<HeaderValue> {
    response.headers().get_all(SET_COOKIE).iter().find_map(|v| {
        let text = v.to_str().ok()?;
        let pair = text.split(';').next()?.trim();
        let (name, value) = pair.split_once('=')?;
        (name.trim() == SESSION_COOKIE && !value.is_empty())
            .then(|| HeaderValue::from_str(pair).ok())
            .flatten()
    })
}

/// The fault type and message of a `soapenv:Fault`: the type is the
/// `xsi:type` of the detail's element (`InvalidLogin`), else its element
/// name less `Fault`, else the SOAP fault code.
fn soap_fault(fault: &Element) -> (String, String) {
    let message = fault
        .text_at(&["faultstring"])
        .unwrap_or_default()
        .trim()
        .to_owned();
    let detail = fault.at(&["detail"]).and_then(|d| d.children.first());
    let kind = detail
        .and_then(|d| {
            d.type_name()
                .map(str::to_owned)
                .or_else(|| Some(d.name.strip_suffix("Fault").unwrap_or(&d.name).to_owned()))
        })
        .or_else(|| fault.text_at(&["faultcode"]).map(|c| c.trim().to_owned()))
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| "UnknownFault".to_owned());
    (excerpt(&kind, 100), excerpt(&message, 1000))
}

fn service_content(sc: &Element) -> Result<ServiceContent, Error> {
    let rv = sc.child("returnval");
    let get = |name: &str| {
        rv.and_then(|r| r.child(name))
            .and_then(MoRef::from_element)
            .ok_or_else(|| Error::Malformed {
                method: "RetrieveServiceContent".into(),
                detail: format!("no {name}"),
            })
    };
    Ok(ServiceContent {
        root_folder: get("rootFolder")?,
        property_collector: get("propertyCollector")?,
        view_manager: get("viewManager")?,
        session_manager: get("sessionManager")?,
        search_index: get("searchIndex")?,
        ovf_manager: get("ovfManager")?,
    })
}

/// A reqwest error as an [`Error`], a timeout as [`Error::Timeout`] naming
/// which of [`Timeouts`] ran out.
pub(crate) fn http_error(
    method: &str,
    e: &reqwest::Error,
    timeout: &'static str,
    after: Duration,
) -> Error {
    if e.is_timeout() {
        Error::Timeout {
            method: method.to_owned(),
            timeout,
            after,
        }
    } else {
        Error::Http {
            method: method.to_owned(),
            detail: Chain(e).to_string(),
        }
    }
}

/// The body, at most [`MAX_BODY`] bytes of it.
pub(crate) async fn read_bounded(
    response: reqwest::Response,
    method: &str,
    timeout: &'static str,
    after: Duration,
) -> Result<Vec<u8>, Error> {
    match Body::new(response, MAX_BODY).read(Over::Refuse).await {
        Ok(body) => Ok(body),
        Err(ReadError::Transport(e)) => Err(http_error(method, &e, timeout, after)),
        Err(ReadError::TooLarge { limit }) => Err(Error::TooLarge {
            method: method.to_owned(),
            limit,
        }),
        Err(ReadError::Deadline) => Err(Error::Timeout {
            method: method.to_owned(),
            timeout,
            after,
        }),
    }
}

/// A client for one vCenter (SOAP, REST and NFC uploads alike), checking
/// TLS as `trust` says.
pub(crate) fn http_client(trust: &Trust) -> Result<reqwest::Client, Error> {
    let trust = match trust {
        Trust::Public => mco_http::Trust::Platform,
        Trust::Pem(pem) => mco_http::Trust::Pem(pem),
        Trust::InsecureSkipVerify => mco_http::Trust::AnyCertificate,
    };
    mco_http::client_builder(trust)
        .map_err(|e| match e {
            TlsError::NoCertificate => {
                Error::Invalid("the vCenter CA bundle holds no PEM certificate".into())
            }
            e => Error::Invalid(e.to_string()),
        })?
        .build()
        .map_err(|e| Error::Invalid(format!("HTTP client setup: {}", Chain(&e))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A server on loopback that answers every request with `response`
    /// (plain HTTP: what is under test is the body handling).
    async fn answering(response: Vec<u8>) -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let response = response.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 65536];
                    let _ = sock.read(&mut buf).await;
                    let _ = sock.write_all(&response).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        addr
    }

    fn session_at(addr: std::net::SocketAddr) -> Session {
        Session {
            http: http_client(&Trust::InsecureSkipVerify).unwrap(),
            server: addr.to_string(),
            sdk_url: format!("http://{addr}/sdk"),
            version: INITIAL_VERSION.to_owned(),
            cookie: None,
            content: ServiceContent {
                root_folder: MoRef::new("Folder", "group-d1"),
                property_collector: MoRef::new("PropertyCollector", "pc"),
                view_manager: MoRef::new("ViewManager", "vm"),
                session_manager: MoRef::new("SessionManager", "sm"),
                search_index: MoRef::new("SearchIndex", "si"),
                ovf_manager: MoRef::new("OvfManager", "om"),
            },
            timeouts: Timeouts {
                call: Duration::from_secs(10),
                ..Timeouts::default()
            },
            username: "u".into(),
            password: "p".into(),
            rest_token: tokio::sync::Mutex::new(None),
        }
    }

    fn http(status: &str, body: &[u8]) -> Vec<u8> {
        let mut r = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        r.extend_from_slice(body);
        r
    }

    async fn call(response: Vec<u8>) -> Result<Element, Error> {
        let s = session_at(answering(response).await);
        s.invoke("FindByInventoryPath", &MoRef::new("SearchIndex", "si"), "")
            .await
    }

    #[tokio::test]
    async fn hostile_answers_are_errors_naming_the_method() {
        let ok = br#"<Envelope><Body><FindByInventoryPathResponse><returnval type="Folder">f</returnval></FindByInventoryPathResponse></Body></Envelope>"#;
        let answer = call(http("200 OK", ok)).await.unwrap();
        assert_eq!(answer.name, "FindByInventoryPathResponse");

        let cases: Vec<(Vec<u8>, &str)> = vec![
            (
                http("200 OK", b"<Envelope><Body><unclosed></Body></Envelope>"),
                "FindByInventoryPath: malformed answer",
            ),
            (
                http("503 Service Unavailable", b"<html><body>down"),
                "FindByInventoryPath: malformed answer: HTTP 503 Service Unavailable: <html><body>down",
            ),
            (
                http("200 OK", b"<NotSoap/>"),
                "not a SOAP envelope",
            ),
            (
                http("200 OK", b"<Envelope><Body><OtherResponse/></Body></Envelope>"),
                "no FindByInventoryPathResponse",
            ),
            (http("200 OK", b"\xff\xfe"), "not UTF-8"),
            (
                http(
                    "500 Internal Server Error",
                    br#"<Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><Body><Fault><faultcode>ServerFaultCode</faultcode><faultstring>gone</faultstring><detail><F xsi:type="ManagedObjectNotFound"/></detail></Fault></Body></Envelope>"#,
                ),
                "FindByInventoryPath: ManagedObjectNotFound: gone",
            ),
            (
                // Announced too large: refused before reading.
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n<",
                    MAX_BODY + 1
                )
                .into_bytes(),
                "exceeds 16777216 bytes",
            ),
        ];
        for (response, want) in cases {
            let err = call(response).await.unwrap_err().to_string();
            assert!(err.contains(want), "{want}: {err}");
        }

        // Chunked, no length: cut off once past the bound.
        let mut chunked =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..17 {
            chunked.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            chunked.extend_from_slice(&chunk);
            chunked.extend_from_slice(b"\r\n");
        }
        chunked.extend_from_slice(b"0\r\n\r\n");
        let err = call(chunked).await.unwrap_err();
        assert!(
            matches!(&err, Error::TooLarge { method, limit } if method == "FindByInventoryPath" && *limit == MAX_BODY),
            "{err}"
        );
    }

    #[test]
    fn faults_name_their_type_and_message() {
        let doc = r#"<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body><soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>Login failure</faultstring><detail><InvalidLoginFault xmlns="urn:vim25" xsi:type="InvalidLogin"></InvalidLoginFault></detail></soapenv:Fault></soapenv:Body></soapenv:Envelope>"#;
        let env = xml::parse(doc).unwrap();
        let fault = env.at(&["Body", "Fault"]).unwrap();
        assert_eq!(
            soap_fault(fault),
            ("InvalidLogin".to_owned(), "Login failure".to_owned())
        );
        // No xsi:type: the element name less "Fault"; no detail: the code.
        let doc = r#"<Fault><faultcode>x</faultcode><faultstring>m</faultstring><detail><NotAuthenticatedFault/></detail></Fault>"#;
        assert_eq!(soap_fault(&xml::parse(doc).unwrap()).0, "NotAuthenticated");
        let doc = r#"<Fault><faultcode>ServerFaultCode</faultcode></Fault>"#;
        assert_eq!(
            soap_fault(&xml::parse(doc).unwrap()),
            ("ServerFaultCode".to_owned(), String::new())
        );
    }

    #[test]
    fn service_content_needs_every_manager() {
        let doc = r#"<R><returnval><rootFolder type="Folder">group-d1</rootFolder><propertyCollector type="PropertyCollector">pc</propertyCollector><viewManager type="ViewManager">vm</viewManager><sessionManager type="SessionManager">sm</sessionManager><searchIndex type="SearchIndex">si</searchIndex><ovfManager type="OvfManager">om</ovfManager></returnval></R>"#;
        let sc = service_content(&xml::parse(doc).unwrap()).unwrap();
        assert_eq!(sc.property_collector, MoRef::new("PropertyCollector", "pc"));
        let doc =
            r#"<R><returnval><rootFolder type="Folder">group-d1</rootFolder></returnval></R>"#;
        let err = service_content(&xml::parse(doc).unwrap()).unwrap_err();
        assert!(err.to_string().contains("no propertyCollector"), "{err}");
    }

    #[test]
    fn morefs_escape_and_parse() {
        let m = MoRef::new("VirtualMachine", "vm-<1>");
        assert_eq!(
            m.xml("obj"),
            r#"<obj type="VirtualMachine">vm-&lt;1&gt;</obj>"#
        );
        let el = xml::parse(&m.xml("obj")).unwrap();
        assert_eq!(MoRef::from_element(&el), Some(m));
        assert_eq!(
            MoRef::from_element(&xml::parse("<obj>x</obj>").unwrap()),
            None
        );
    }

    #[test]
    fn a_pem_bundle_without_certificates_is_refused() {
        let err = http_client(&Trust::Pem(b"not a pem".to_vec())).unwrap_err();
        assert!(err.to_string().contains("no PEM certificate"), "{err}");
    }
}
