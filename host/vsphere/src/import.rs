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

use crate::error::{Error, ImportError, Step};
use crate::inventory::localized_fault;
use crate::ova::Ova;
use crate::session::{MoRef, Session};
use crate::xml::{Element, escape};
use crate::{DiskType, FoundVm, ImportPlan, Imported, MAX_TEMPLATE_NAME, temp_name};

/// The failing step, for `?` on a `Result<_, Error>`.
pub(crate) trait At<T> {
    fn at(self, step: Step) -> Result<T, ImportError>;
}

impl<T> At<T> for Result<T, Error> {
    fn at(self, step: Step) -> Result<T, ImportError> {
        self.map_err(|source| ImportError { step, source })
    }
}

/// The objects the plan names, looked up.
pub(crate) struct Resolved {
    pub(crate) dc: MoRef,
    pub(crate) folder: MoRef,
    pub(crate) cluster: MoRef,
    pub(crate) pool: MoRef,
    pub(crate) datastore: MoRef,
    pub(crate) network: MoRef,
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

    /// Destroys a half-made VM, best effort: one already gone (a real
    /// vCenter removes it with an aborted lease) is fine.
    pub(crate) async fn discard(&self, vm: &MoRef) {
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
