//! The template import: OVA → `mco-tmp-` VM → template → tags → swapped in
//! under the final name.
//!
//! Ordering is what makes it safe to interrupt: the old template keeps its
//! name until the new one is complete (imported, reconfigured, a template,
//! tagged), and the swap is two renames. A failure before the swap removes
//! the new VM; a failure inside it puts the old template's name back where
//! it can; whatever a crash leaves is named `mco-tmp-…`/`mco-old-…`, which
//! the next pass destroys (stale) or [`Session::recover_swap`] renames back.

// `ImportError` (a step plus the call's error, both with their names and
// messages) is the public error type of the import; it is made once per
// pass, so its size on the stack does not matter.
#![allow(clippy::result_large_err)]

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use reqwest::header::{CONTENT_LENGTH, CONTENT_TYPE, COOKIE};
use tokio::io::{AsyncRead, ReadBuf};

use crate::error::{Error, ImportError, Step};
use crate::inventory::localized_fault;
use crate::ova::Ova;
use crate::session::{MoRef, Session, http_error, read_bounded};
use crate::xml::{Element, escape};
use crate::{DiskType, FoundVm, ImportPlan, Imported, MAX_TEMPLATE_NAME, temp_name};

/// How often upload progress is reported to the lease: vCenter times out a
/// lease that hears nothing for its `leaseTimeout` (300 s in vcsim and by
/// default).
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// The failing step, for `?` on a `Result<_, Error>`.
trait At<T> {
    fn at(self, step: Step) -> Result<T, ImportError>;
}

impl<T> At<T> for Result<T, Error> {
    fn at(self, step: Step) -> Result<T, ImportError> {
        self.map_err(|source| ImportError { step, source })
    }
}

/// The objects the plan names, looked up.
struct Resolved {
    dc: MoRef,
    folder: MoRef,
    cluster: MoRef,
    pool: MoRef,
    datastore: MoRef,
    network: MoRef,
}

/// A file to upload: the OVA entry and the lease URL it goes to.
struct Upload {
    path: String,
    url: String,
    create: bool,
    size: u64,
}

impl Session {
    /// Imports `ova` as the template `plan.template`, replacing a template
    /// of that name in `plan.folder` if there is one:
    ///
    /// 1. refuse a name over 80 characters; look up the datacenter, folder,
    ///    compute cluster, resource pool, datastore, the network among the
    ///    cluster's, and the VMs named like the template or its temporaries;
    /// 2. destroy stale `mco-tmp-`/`mco-old-` VMs an earlier pass left
    ///    (but an `mco-old-` template in the folder with no VM of the final
    ///    name there is an interrupted swap's old template: it is renamed
    ///    back and swapped as the old template instead);
    /// 3. refuse an OVF with other than one network;
    /// 4. `OvfManager.CreateImportSpec` as `mco-tmp-…`;
    /// 5. pick the first cluster host that sees the network and datastore
    ///    and is not in maintenance mode;
    /// 6. `ResourcePool.ImportVApp`, upload the files to the NFC lease;
    /// 7. secure boot off if the OVA turns it on; `MarkAsTemplate`;
    /// 8. attach the tags;
    /// 9. swap: old → `mco-old-…`, new → final name, destroy the old.
    ///
    /// A VM of the template name elsewhere in the datacenter is someone
    /// else's and left alone; one in `plan.folder` that is not a template is
    /// an error before any change ([`Error::NotATemplate`]).
    pub async fn import_template(
        &self,
        plan: &ImportPlan,
        ova: &Ova,
    ) -> Result<Imported, ImportError> {
        let name = plan.template.as_str();
        if name.is_empty() || name.chars().count() > MAX_TEMPLATE_NAME {
            return Err(Error::Invalid(format!(
                "length of VM template name {name:?} is not between 1 and {MAX_TEMPLATE_NAME} characters"
            )))
            .at(Step::CheckingTemplateName);
        }
        let tmp = temp_name("mco-tmp", name);
        let old_name = temp_name("mco-old", name);
        let r = self.resolve(plan).await?;

        // The old template and stale temporaries, in the target folder.
        let found = self
            .describe_vms(&r.dc, &[name, &tmp, &old_name])
            .await
            .at(Step::LookingUpVms)?;
        let mut old = None;
        for (vm, parent) in &found {
            if vm.name == name && parent.as_ref() == Some(&r.folder) {
                if !vm.template {
                    return Err(Error::NotATemplate {
                        name: vm.name.clone(),
                        moref: vm.moref.clone(),
                    })
                    .at(Step::LookingUpVms);
                }
                // Two MachineSets of one failure domain resolve to the
                // same template: the first one's import serves both.
                if vm.release.is_some() && vm.release.as_deref() == ova.product_version() {
                    tracing::info!(template = %name, moref = %vm.moref, "the template already holds the OVA's release");
                    return Ok(Imported::Current {
                        moref: vm.moref.clone(),
                    });
                }
                old = Some(MoRef::new("VirtualMachine", &vm.moref));
            }
        }
        // An interrupted swap left the old template as `mco-old-…` and no VM
        // of the final name: take it back (as recover_swap would) rather
        // than destroy the only template there is before the new one exists.
        let mut recovered = None;
        if old.is_none() {
            let olds: Vec<&FoundVm> = found
                .iter()
                .filter(|(v, p)| v.name == old_name && v.template && p.as_ref() == Some(&r.folder))
                .map(|(v, _)| v)
                .collect();
            if let [vm] = olds.as_slice() {
                let moref = MoRef::new("VirtualMachine", &vm.moref);
                self.rename(&moref, name).await.at(Step::Renaming {
                    from: old_name.clone(),
                    to: name.to_owned(),
                })?;
                tracing::info!(from = %old_name, to = %name, "renamed the old template back after an interrupted swap");
                recovered = Some(vm.moref.clone());
                old = Some(moref);
            }
        }
        // Only this folder's: the names hash the template name alone, and
        // another cluster's folder may hold a template of the same name.
        for (vm, _) in found.iter().filter(|(v, parent)| {
            (v.name == tmp || v.name == old_name)
                && parent.as_ref() == Some(&r.folder)
                && Some(&v.moref) != recovered.as_ref()
        }) {
            tracing::info!(vm = %vm.name, moref = %vm.moref, "destroying a stale VM of an earlier pass");
            self.destroy(&MoRef::new("VirtualMachine", &vm.moref))
                .await
                .at(Step::DestroyingStale {
                    name: vm.name.clone(),
                })?;
        }

        // The OVF, checked against the plan.
        let ovf_network = match ova.networks() {
            [one] => one.clone(),
            _ => {
                return Err(Error::Invalid(
                    "expected the OVA to only have a single network adapter".into(),
                ))
                .at(Step::ReadingOva);
            }
        };
        let (spec, items) = self
            .create_import_spec(plan, &r, ova, &ovf_network, &tmp)
            .await
            .at(Step::CreatingImportSpec)?;
        let host = self
            .choose_host(&r.cluster, &r.network, &r.datastore)
            .await
            .at(Step::ChoosingHost)?;

        let vm = self.import_vapp(&r, &spec, &host, &items, ova).await?;

        // From here on the new VM exists: on failure, remove it.
        let finished = self.finish(plan, ova, &vm).await;
        if let Err(e) = finished {
            self.discard(&vm).await;
            return Err(e);
        }

        let swapped = self.swap(&vm, old.as_ref(), &tmp, name, &old_name).await?;
        tracing::info!(template = %name, moref = %vm.value, swapped, "template imported");
        Ok(Imported::New {
            moref: vm.value,
            swapped,
        })
    }

    /// Step 1's lookups.
    async fn resolve(&self, plan: &ImportPlan) -> Result<Resolved, ImportError> {
        let (dc, dc_path) = self
            .datacenter(&plan.datacenter)
            .await
            .at(Step::LookingUpDatacenter)?;
        let folder = self
            .lookup("folder", plan.folder.trim_end_matches('/'), &["Folder"])
            .await
            .at(Step::LookingUpFolder)?;
        let cluster = self
            .lookup(
                "compute cluster",
                plan.compute_cluster.trim_end_matches('/'),
                &["ClusterComputeResource", "ComputeResource"],
            )
            .await
            .at(Step::LookingUpComputeCluster)?;
        let pool = self
            .lookup(
                "resource pool",
                plan.resource_pool.trim_end_matches('/'),
                &["ResourcePool"],
            )
            .await
            .at(Step::LookingUpResourcePool)?;
        let ds_path = if plan.datastore.contains('/') {
            plan.datastore.trim_end_matches('/').to_owned()
        } else {
            format!("{dc_path}/datastore/{}", plan.datastore)
        };
        let datastore = self
            .lookup("datastore", &ds_path, &["Datastore"])
            .await
            .at(Step::LookingUpDatastore)?;
        let network = self
            .cluster_network(&cluster, &plan.network, &plan.compute_cluster)
            .await
            .at(Step::LookingUpNetwork)?;
        Ok(Resolved {
            dc,
            folder,
            cluster,
            pool,
            datastore,
            network,
        })
    }

    /// The network named `name` among the cluster's `network` property.
    async fn cluster_network(
        &self,
        cluster: &MoRef,
        name: &str,
        cluster_path: &str,
    ) -> Result<MoRef, Error> {
        let networks = self.props(cluster, &["network"]).await?.morefs("network");
        let named = self.props_of_many(&networks, &["name"]).await?;
        // Keep the cluster's order: the first network of that name.
        networks
            .into_iter()
            .find(|n| {
                named
                    .iter()
                    .any(|p| p.obj == *n && p.text("name") == Some(name))
            })
            .ok_or_else(|| Error::NotFound {
                what: "network",
                path: format!("{}/{name}", cluster_path.trim_end_matches('/')),
            })
    }

    /// Step 4: the import spec (with the disk backings pinned to the plan's
    /// type) and the file items to upload.
    async fn create_import_spec(
        &self,
        plan: &ImportPlan,
        r: &Resolved,
        ova: &Ova,
        ovf_network: &str,
        entity: &str,
    ) -> Result<(Element, Vec<Element>), Error> {
        let provisioning = plan
            .disk_type
            .map(|t| format!("<diskProvisioning>{t}</diskProvisioning>"))
            .unwrap_or_default();
        let params = format!(
            concat!(
                "<ovfDescriptor>{descriptor}</ovfDescriptor>{pool}{datastore}",
                "<cisp><locale></locale><deploymentOption></deploymentOption>",
                "<entityName>{entity}</entityName>",
                "<networkMapping><name>{ovf_network}</name>{network}</networkMapping>",
                "{provisioning}</cisp>"
            ),
            descriptor = escape(ova.descriptor()),
            pool = r.pool.xml("resourcePool"),
            datastore = r.datastore.xml("datastore"),
            entity = escape(entity),
            ovf_network = escape(ovf_network),
            network = r.network.xml("network"),
            provisioning = provisioning,
        );
        let om = self.content.ovf_manager.clone();
        let answer = self.invoke("CreateImportSpec", &om, &params).await?;
        let mut rv = answer
            .children
            .into_iter()
            .find(|c| c.name == "returnval")
            .ok_or_else(|| Error::Malformed {
                method: "CreateImportSpec".into(),
                detail: "no returnval".into(),
            })?;
        if let Some(err) = rv.child("error") {
            let (fault, message) = localized_fault(err);
            return Err(Error::Fault {
                method: "CreateImportSpec".into(),
                fault,
                message,
            });
        }
        for w in rv.children_named("warning") {
            let (fault, message) = localized_fault(w);
            tracing::warn!(%fault, %message, "CreateImportSpec warning");
        }
        let items: Vec<Element> = rv
            .children
            .iter()
            .filter(|c| c.name == "fileItem")
            .cloned()
            .collect();
        let i = rv
            .children
            .iter()
            .position(|c| c.name == "importSpec")
            .ok_or_else(|| Error::Malformed {
                method: "CreateImportSpec".into(),
                detail: "no importSpec".into(),
            })?;
        let mut spec = rv.children.swap_remove(i);
        if let Some(t) = plan.disk_type {
            pin_disk_provisioning(&mut spec, t);
        }
        unpin_disk_files(&mut spec, entity);
        Ok((spec, items))
    }

    /// Step 5: the first host of the cluster that sees the network (a
    /// distributed portgroup counts as seen) and the datastore and is not in
    /// maintenance mode.
    async fn choose_host(
        &self,
        cluster: &MoRef,
        network: &MoRef,
        datastore: &MoRef,
    ) -> Result<MoRef, Error> {
        let hosts = self.props(cluster, &["host"]).await?.morefs("host");
        if hosts.is_empty() {
            return Err(Error::Invalid(
                "the compute cluster has no ESXi hosts".into(),
            ));
        }
        let props = self
            .props_of_many(
                &hosts,
                &["name", "network", "datastore", "runtime.inMaintenanceMode"],
            )
            .await?;
        let distributed = network.kind != "Network";
        for host in &hosts {
            let Some(p) = props.iter().find(|p| p.obj == *host) else {
                continue;
            };
            let sees_network = distributed || p.morefs("network").contains(network);
            let sees_datastore = p.morefs("datastore").contains(datastore);
            if sees_network && sees_datastore && !p.flag("runtime.inMaintenanceMode") {
                tracing::debug!(
                    host = p.text("name").unwrap_or_default(),
                    "importing through this ESXi host"
                );
                return Ok(host.clone());
            }
        }
        Err(Error::Invalid("all hosts unavailable".into()))
    }

    /// Step 6: `ImportVApp`, the lease, the uploads; the new VM. On a
    /// failure once the lease exists, the lease is aborted and the VM it
    /// created destroyed.
    async fn import_vapp(
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
                body: crate::error::excerpt(&String::from_utf8_lossy(&body), 500),
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

    /// Destroys a half-made VM, best effort: one already gone (a real
    /// vCenter removes it with an aborted lease) is fine.
    async fn discard(&self, vm: &MoRef) {
        match self.destroy(vm).await {
            Ok(()) => tracing::info!(moref = %vm.value, "destroyed the unfinished VM"),
            Err(Error::Fault { fault, .. }) if fault == "ManagedObjectNotFound" => {}
            Err(e) => {
                tracing::warn!(moref = %vm.value, error = %e, "cannot destroy the unfinished VM; the next pass removes it")
            }
        }
    }

    /// Steps 7 and 8: secure boot off, template, tags.
    async fn finish(&self, plan: &ImportPlan, ova: &Ova, vm: &MoRef) -> Result<(), ImportError> {
        if ova.secure_boot() {
            let params = concat!(
                "<spec><bootOptions><efiSecureBootEnabled>false</efiSecureBootEnabled>",
                "</bootOptions></spec>"
            );
            let task = self
                .start_task("ReconfigVM_Task", vm, params)
                .await
                .at(Step::SecureBootOff)?;
            self.wait_task("ReconfigVM_Task", &task)
                .await
                .at(Step::SecureBootOff)?;
        }
        self.invoke("MarkAsTemplate", vm, "")
            .await
            .at(Step::MarkingAsTemplate)?;
        for tag in &plan.tags {
            self.attach_tag(tag, &vm.value)
                .await
                .at(Step::AttachingTag { tag: tag.clone() })?;
        }
        Ok(())
    }

    /// Step 9. Without an old template: one rename. With one: old →
    /// `mco-old-…`, new → final, destroy old. If the second rename fails,
    /// the old template gets its name back and the new VM is removed. If
    /// only the destruction fails, the new template is in place already;
    /// the error says which step, and [`Session::recover_swap`] (or the
    /// next import) removes the leftover.
    async fn swap(
        &self,
        vm: &MoRef,
        old: Option<&MoRef>,
        tmp: &str,
        name: &str,
        old_name: &str,
    ) -> Result<bool, ImportError> {
        let renaming = |from: &str, to: &str| Step::Renaming {
            from: from.to_owned(),
            to: to.to_owned(),
        };
        let Some(old) = old else {
            if let Err(e) = self.rename(vm, name).await {
                self.discard(vm).await;
                return Err(e).at(renaming(tmp, name));
            }
            return Ok(false);
        };
        if let Err(e) = self.rename(old, old_name).await {
            self.discard(vm).await;
            return Err(e).at(renaming(name, old_name));
        }
        if let Err(e) = self.rename(vm, name).await {
            if let Err(back) = self.rename(old, name).await {
                tracing::warn!(error = %back, "cannot rename the old template back; recover_swap will");
            }
            self.discard(vm).await;
            return Err(e).at(renaming(tmp, name));
        }
        self.destroy(old).await.at(Step::DestroyingOld {
            name: old_name.to_owned(),
        })?;
        Ok(true)
    }
}

/// Sets `thinProvisioned`/`eagerlyScrub` of every flat disk backing in an
/// import spec to what `t` means. A real vCenter's `CreateImportSpec`
/// already wrote these from `diskProvisioning`; vcsim v0.45.1 accepts the
/// parameter but always writes a thin backing, so without this its VMs
/// would not show the type asked for. The fields are inserted in the XSD
/// order vim25 requires when absent.
pub(crate) fn pin_disk_provisioning(spec: &mut Element, t: DiskType) {
    let (thin, scrub) = match t {
        DiskType::Thin => ("true", "false"),
        DiskType::Thick => ("false", "false"),
        DiskType::EagerZeroedThick => ("false", "true"),
    };
    visit_mut(spec, &mut |el| {
        if el.name == "backing" && el.type_name() == Some("VirtualDiskFlatVer2BackingInfo") {
            set_field(el, "thinProvisioned", thin);
            set_field(el, "eagerlyScrub", scrub);
        }
    });
}

/// Empties the file name of every disk backing the import spec places in
/// a directory named after the entity (`[ds] mco-tmp-1a2b3c4d/disk-0.vmdk`,
/// as vcsim writes them), so the host names the disk inside the new VM's
/// own directory. A VM keeps its files' paths when renamed, so the template
/// a previous pass imported as `mco-tmp-…` still owns that directory: a
/// fixed name there collides (vcsim: `FileAlreadyExists`). An empty name
/// for a disk being created is the API's way of letting ESX choose
/// (`<vm>/<vm>.vmdk`, then `_1`, …); vcsim does the same.
pub(crate) fn unpin_disk_files(spec: &mut Element, entity: &str) {
    let dir = format!("] {entity}/");
    visit_mut(spec, &mut |el| {
        if el.name == "backing"
            && el.type_name() == Some("VirtualDiskFlatVer2BackingInfo")
            && let Some(f) = el.children.iter_mut().find(|c| c.name == "fileName")
            && f.text.contains(&dir)
        {
            f.text.clear();
        }
    });
}

fn visit_mut(el: &mut Element, f: &mut impl FnMut(&mut Element)) {
    f(el);
    for c in &mut el.children {
        visit_mut(c, f);
    }
}

/// The fields of `VirtualDiskFlatVer2BackingInfo` (with those of its base
/// `VirtualDeviceFileBackingInfo`) in XSD order.
const FLAT_BACKING_ORDER: &[&str] = &[
    "fileName",
    "datastore",
    "backingObjectId",
    "diskMode",
    "split",
    "writeThrough",
    "thinProvisioned",
    "eagerlyScrub",
    "uuid",
    "contentId",
    "changeId",
    "parent",
    "deltaDiskFormat",
    "digestEnabled",
    "deltaGrainSize",
    "deltaDiskFormatVariant",
    "sharing",
    "keyId",
];

fn set_field(el: &mut Element, name: &str, value: &str) {
    if let Some(c) = el.children.iter_mut().find(|c| c.name == name) {
        c.text = value.to_owned();
        c.children.clear();
        return;
    }
    let rank = |n: &str| FLAT_BACKING_ORDER.iter().position(|o| *o == n);
    let mine = rank(name).unwrap_or(usize::MAX);
    let at = el
        .children
        .iter()
        .position(|c| rank(&c.name).is_some_and(|r| r > mine))
        .unwrap_or(el.children.len());
    let mut field = Element::new(name);
    field.text = value.to_owned();
    el.children.insert(at, field);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml;

    #[test]
    fn disk_provisioning_is_pinned_in_xsd_order() {
        let doc = r#"<importSpec xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="VirtualMachineImportSpec"><configSpec><deviceChange><device xsi:type="VirtualDisk"><backing xsi:type="VirtualDiskFlatVer2BackingInfo"><fileName>[ds] a.vmdk</fileName><diskMode>persistent</diskMode><thinProvisioned>true</thinProvisioned><uuid>u</uuid></backing></device></deviceChange><deviceChange><device xsi:type="VirtualCdrom"><backing xsi:type="VirtualCdromIsoBackingInfo"><fileName>x</fileName></backing></device></deviceChange></configSpec></importSpec>"#;
        let mut spec = xml::parse(doc).unwrap();
        pin_disk_provisioning(&mut spec, DiskType::EagerZeroedThick);
        let mut out = String::new();
        spec.write_vim(&mut out, Some("spec"));
        assert!(
            out.contains("<diskMode>persistent</diskMode><thinProvisioned>false</thinProvisioned><eagerlyScrub>true</eagerlyScrub><uuid>u</uuid>"),
            "{out}"
        );
        assert!(!out.contains("VirtualCdromIsoBackingInfo\"><fileName>x</fileName><thin"));
        // Disk files named after the entity are left to the host.
        let mut spec = xml::parse(
            r#"<s xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><backing xsi:type="VirtualDiskFlatVer2BackingInfo"><fileName>[LocalDS_0] mco-tmp-1/disk-0.vmdk</fileName></backing><backing xsi:type="VirtualDiskFlatVer2BackingInfo"><fileName>[LocalDS_0] other/disk-0.vmdk</fileName></backing></s>"#,
        )
        .unwrap();
        unpin_disk_files(&mut spec, "mco-tmp-1");
        let names: Vec<&str> = spec
            .children
            .iter()
            .map(|b| b.text_at(&["fileName"]).unwrap())
            .collect();
        assert_eq!(names, ["", "[LocalDS_0] other/disk-0.vmdk"]);
        // Absent fields are inserted before the later ones.
        let mut b = xml::parse(
            r#"<backing><fileName>f</fileName><digestEnabled>false</digestEnabled></backing>"#,
        )
        .unwrap();
        set_field(&mut b, "eagerlyScrub", "false");
        set_field(&mut b, "thinProvisioned", "true");
        let names: Vec<&str> = b.children.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "fileName",
                "thinProvisioned",
                "eagerlyScrub",
                "digestEnabled"
            ]
        );
    }
}
