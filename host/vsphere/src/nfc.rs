//! Step 6 of the template import: `ResourcePool.ImportVApp`, its NFC lease
//! and the uploads of the OVA's files to the lease's URLs, counted as they
//! go so the lease hears progress before vCenter times it out. A failure
//! once the lease exists aborts it and destroys the VM it made.

#![allow(clippy::result_large_err)]

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use reqwest::header::{CONTENT_LENGTH, CONTENT_TYPE, COOKIE};
use tokio::io::{AsyncRead, ReadBuf};

use crate::error::{Error, ImportError, Step};
use crate::import::{At, Resolved};
use crate::inventory::localized_fault;
use crate::ova::Ova;
use crate::session::{MoRef, Session, http_error, read_bounded};
use crate::xml::Element;

/// How often upload progress is reported to the lease: vCenter times out a
/// lease that hears nothing for its `leaseTimeout` (300 s in vcsim and by
/// default).
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// A file to upload: the OVA entry and the lease URL it goes to.
struct Upload {
    path: String,
    url: String,
    create: bool,
    size: u64,
}

impl Session {
    /// Step 6: `ImportVApp`, the lease, the uploads; the new VM. On a
    /// failure once the lease exists, the lease is aborted and the VM it
    /// created destroyed.
    pub(crate) async fn import_vapp(
        &self,
        r: &Resolved,
        spec: &Element,
        host: &MoRef,
        items: &[Element],
        ova: &Ova,
    ) -> Result<MoRef, ImportError> {
        let mut params = String::new();
        spec.write_vim(&mut params, Some("spec"));
        params.push_str(&r.folder.xml("folder"));
        params.push_str(&host.xml("host"));
        let answer = self
            .invoke("ImportVApp", &r.pool, &params)
            .await
            .at(Step::ImportingVApp)?;
        let lease = answer
            .child("returnval")
            .and_then(MoRef::from_element)
            .ok_or_else(|| Error::Malformed {
                method: "ImportVApp".into(),
                detail: "no lease in the answer".into(),
            })
            .at(Step::ImportingVApp)?;

        let info = match self.wait_lease(&lease).await {
            Ok(info) => info,
            Err(e) => {
                self.abort_lease(&lease).await;
                return Err(e).at(Step::ImportingVApp);
            }
        };
        let Some(vm) = info.child("entity").and_then(MoRef::from_element) else {
            self.abort_lease(&lease).await;
            return Err(Error::Malformed {
                method: "ImportVApp".into(),
                detail: "the lease names no entity".into(),
            })
            .at(Step::ImportingVApp);
        };
        if let Err(e) = self.upload_all(&lease, &info, items, ova).await {
            self.abort_lease(&lease).await;
            self.discard(&vm).await;
            return Err(e);
        }
        Ok(vm)
    }

    /// Polls the lease until it leaves `initializing`, at most
    /// `timeouts.task`; its `info` once `ready`.
    async fn wait_lease(&self, lease: &MoRef) -> Result<Element, Error> {
        let deadline = tokio::time::Instant::now() + self.timeouts.task;
        let mut pause = Duration::from_millis(100);
        loop {
            let mut p = self.props(lease, &["state", "error", "info"]).await?;
            match p.text("state").map(str::trim) {
                Some("ready") => {
                    return p.props.remove("info").ok_or_else(|| Error::Malformed {
                        method: "ImportVApp".into(),
                        detail: "a ready lease without info".into(),
                    });
                }
                Some("error") => {
                    let (fault, message) = p
                        .get("error")
                        .map(localized_fault)
                        .unwrap_or_else(|| ("UnknownFault".into(), String::new()));
                    return Err(Error::Task {
                        method: "ImportVApp".into(),
                        fault,
                        message,
                    });
                }
                Some("initializing") => {}
                other => {
                    return Err(Error::Malformed {
                        method: "ImportVApp".into(),
                        detail: format!("lease state {other:?}"),
                    });
                }
            }
            if tokio::time::Instant::now() + pause > deadline {
                return Err(Error::Timeout {
                    method: "ImportVApp (waiting for the lease)".into(),
                    timeout: "task",
                    after: self.timeouts.task,
                });
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 3 / 2).min(Duration::from_secs(2));
        }
    }

    /// Matches each file item to its device URL and uploads them in turn,
    /// reporting progress; then `HttpNfcLeaseComplete`.
    async fn upload_all(
        &self,
        lease: &MoRef,
        info: &Element,
        items: &[Element],
        ova: &Ova,
    ) -> Result<(), ImportError> {
        let mut uploads = Vec::new();
        for item in items {
            let path = item.text_at(&["path"]).unwrap_or_default().to_owned();
            let step = || Step::Uploading { file: path.clone() };
            let device = item.text_at(&["deviceId"]).unwrap_or_default();
            let url = info
                .children_named("deviceUrl")
                .find(|d| d.text_at(&["importKey"]) == Some(device))
                .and_then(|d| d.text_at(&["url"]))
                .ok_or_else(|| Error::Malformed {
                    method: "ImportVApp".into(),
                    detail: format!("the lease has no URL for device {device:?}"),
                })
                .at(step())?;
            let entry = ova
                .entry(&path)
                .ok_or_else(|| Error::Malformed {
                    method: "CreateImportSpec".into(),
                    detail: format!("file item {path:?} is not in the OVA"),
                })
                .at(step())?;
            uploads.push(Upload {
                url: self.nfc_url(url).at(step())?,
                create: item.text_at(&["create"]).map(str::trim) == Some("true"),
                size: entry.size,
                path,
            });
        }
        let total: u64 = uploads.iter().map(|u| u.size).sum::<u64>().max(1);
        let sent = Arc::new(AtomicU64::new(0));
        for upload in &uploads {
            let step = || Step::Uploading {
                file: upload.path.clone(),
            };
            let before = sent.load(Ordering::Relaxed);
            let transfer = self.upload(upload, ova, sent.clone());
            tokio::pin!(transfer);
            let mut tick = tokio::time::interval(PROGRESS_EVERY);
            tick.tick().await;
            loop {
                tokio::select! {
                    done = &mut transfer => { done.at(step())?; break; }
                    _ = tick.tick() => {
                        let pct = (sent.load(Ordering::Relaxed).min(total) * 100 / total) as i32;
                        if let Err(e) = self.lease_progress(lease, pct).await {
                            tracing::warn!(error = %e, "HttpNfcLeaseProgress failed");
                        }
                    }
                }
            }
            sent.store(before + upload.size, Ordering::Relaxed);
        }
        self.lease_progress(lease, 100)
            .await
            .at(Step::CompletingUpload)?;
        self.invoke("HttpNfcLeaseComplete", lease, "")
            .await
            .at(Step::CompletingUpload)?;
        Ok(())
    }

    /// A lease URL with vCenter's `*` host replaced by the server's.
    fn nfc_url(&self, url: &str) -> Result<String, Error> {
        let rest = url
            .strip_prefix("https://")
            .ok_or_else(|| Error::Malformed {
                method: "ImportVApp".into(),
                detail: format!("lease URL {url:?} is not https"),
            })?;
        Ok(match rest.strip_prefix("*/") {
            Some(path) => format!("https://{}/{path}", self.server),
            None => url.to_owned(),
        })
    }

    /// PUTs (or POSTs, for a file the lease does not create) one file from
    /// the OVA, streamed, within `timeouts.transfer`.
    async fn upload(&self, upload: &Upload, ova: &Ova, sent: Arc<AtomicU64>) -> Result<(), Error> {
        let label = format!(
            "{} {}",
            if upload.create { "PUT" } else { "POST" },
            upload.url
        );
        let entry = ova.entry(&upload.path).ok_or_else(|| Error::Malformed {
            method: label.clone(),
            detail: "not in the OVA".into(),
        })?;
        let reader = ova.reader(entry).await.map_err(|e| Error::Http {
            method: label.clone(),
            detail: format!("reading {} from the OVA: {e}", upload.path),
        })?;
        let body = reqwest::Body::wrap_stream(tokio_util::io::ReaderStream::new(Counting {
            inner: reader,
            sent,
        }));
        let content_type = if upload.path.ends_with(".vmdk") {
            "application/x-vnd.vmware-streamVmdk"
        } else {
            "application/octet-stream"
        };
        let method = if upload.create {
            reqwest::Method::PUT
        } else {
            reqwest::Method::POST
        };
        let mut request = self
            .http
            .request(method, &upload.url)
            .timeout(self.timeouts.transfer)
            .header(CONTENT_TYPE, content_type)
            .header(CONTENT_LENGTH, upload.size)
            .body(body);
        // The SOAP session cookie goes to vCenter only, never to another
        // host a lease URL names (an ESXi host takes the lease's ticket).
        if upload.url.starts_with(&format!("https://{}/", self.server))
            && let Some(cookie) = self.cookie()
        {
            request = request.header(COOKIE, cookie);
        }
        let response = request
            .send()
            .await
            .map_err(|e| http_error(&label, &e, "transfer", self.timeouts.transfer))?;
        let status = response.status();
        let body = read_bounded(response, &label, "transfer", self.timeouts.transfer).await?;
        if !status.is_success() {
            return Err(Error::Rest {
                path: label,
                status: status.as_u16(),
                body: mco_http::excerpt(&String::from_utf8_lossy(&body), 500),
            });
        }
        Ok(())
    }

    async fn lease_progress(&self, lease: &MoRef, percent: i32) -> Result<(), Error> {
        let params = format!("<percent>{}</percent>", percent.clamp(0, 100));
        self.invoke("HttpNfcLeaseProgress", lease, &params)
            .await
            .map(drop)
    }

    /// `HttpNfcLeaseAbort`, best effort (the failure being reported is the
    /// one that matters).
    async fn abort_lease(&self, lease: &MoRef) {
        if let Err(e) = self.invoke("HttpNfcLeaseAbort", lease, "").await {
            tracing::warn!(error = %e, "HttpNfcLeaseAbort failed");
        }
    }
}

/// Counts the bytes read through it (upload progress).
struct Counting<R> {
    inner: R,
    sent: Arc<AtomicU64>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Counting<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = buf.filled().len().saturating_sub(before) as u64;
        self.sent.fetch_add(n, Ordering::Relaxed);
        poll
    }
}
