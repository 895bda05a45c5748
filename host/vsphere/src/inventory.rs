//! Inventory reads (property collector, search index, container views),
//! tasks, and the two public reads built on them: `find_vms` and
//! `recover_swap`.

use std::collections::HashMap;
use std::time::Duration;

use mco_http::excerpt;

use crate::error::Error;
use crate::session::{MoRef, Session};
use crate::xml::{Element, escape};
use crate::{DiskType, FoundVm, Recovery, temp_name};

/// Objects per property collector page: keeps every answer (names of a
/// 50,000-VM inventory included) far below the body and element bounds.
const PAGE: usize = 500;

/// Pages followed at most: 500 × 1,000 objects is beyond any vCenter.
const MAX_PAGES: usize = 1_000;

/// Folder levels walked up at most when building an inventory path (a
/// parent cycle in a broken answer must not loop forever).
const MAX_FOLDER_DEPTH: usize = 64;

/// One object's retrieved properties: name → the `<val>` element.
#[derive(Debug)]
pub(crate) struct Props {
    pub obj: MoRef,
    pub props: HashMap<String, Element>,
}

impl Props {
    pub(crate) fn get(&self, name: &str) -> Option<&Element> {
        self.props.get(name)
    }

    /// A string property's text.
    pub(crate) fn text(&self, name: &str) -> Option<&str> {
        self.get(name).map(|v| v.text.as_str())
    }

    /// A boolean property (`true`/`1`).
    pub(crate) fn flag(&self, name: &str) -> bool {
        self.text(name)
            .is_some_and(|t| matches!(t.trim(), "true" | "1"))
    }

    /// A reference property.
    pub(crate) fn moref(&self, name: &str) -> Option<MoRef> {
        self.get(name).and_then(MoRef::from_element)
    }

    /// An `ArrayOfManagedObjectReference` property.
    pub(crate) fn morefs(&self, name: &str) -> Vec<MoRef> {
        self.get(name)
            .map(|v| v.children.iter().filter_map(MoRef::from_element).collect())
            .unwrap_or_default()
    }
}

/// `<propSet>` for `kind` with `paths`.
fn prop_set(kind: &str, paths: &[&str]) -> String {
    let mut out = format!("<propSet><type>{}</type>", escape(kind));
    for p in paths {
        out.push_str(&format!("<pathSet>{}</pathSet>", escape(p)));
    }
    out.push_str("</propSet>");
    out
}

impl Session {
    /// `RetrievePropertiesEx` (and `ContinueRetrievePropertiesEx` while a
    /// token comes back) for one `specSet` body.
    pub(crate) async fn retrieve(&self, spec: &str) -> Result<Vec<Props>, Error> {
        let pc = self.content.property_collector.clone();
        let params =
            format!("<specSet>{spec}</specSet><options><maxObjects>{PAGE}</maxObjects></options>");
        let mut answer = self.invoke("RetrievePropertiesEx", &pc, &params).await?;
        let mut out = Vec::new();
        for _ in 0..MAX_PAGES {
            let Some(rv) = answer.child("returnval") else {
                // No returnval: nothing matched.
                return Ok(out);
            };
            for objects in rv.children_named("objects") {
                out.push(props_of(objects, "RetrievePropertiesEx")?);
            }
            let Some(token) = rv.text_at(&["token"]).filter(|t| !t.is_empty()) else {
                return Ok(out);
            };
            let params = format!("<token>{}</token>", escape(token));
            answer = self
                .invoke("ContinueRetrievePropertiesEx", &pc, &params)
                .await?;
        }
        Err(Error::Malformed {
            method: "ContinueRetrievePropertiesEx".into(),
            detail: format!("more than {MAX_PAGES} pages"),
        })
    }

    /// `paths` of each of `objs` (one call; objects of several types).
    pub(crate) async fn props_of_many(
        &self,
        objs: &[MoRef],
        paths: &[&str],
    ) -> Result<Vec<Props>, Error> {
        if objs.is_empty() {
            return Ok(Vec::new());
        }
        let mut kinds: Vec<&str> = objs.iter().map(|o| o.kind.as_str()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        let mut spec = String::new();
        for kind in kinds {
            spec.push_str(&prop_set(kind, paths));
        }
        for obj in objs {
            spec.push_str(&format!("<objectSet>{}</objectSet>", obj.xml("obj")));
        }
        self.retrieve(&spec).await
    }

    /// `paths` of `obj`.
    pub(crate) async fn props(&self, obj: &MoRef, paths: &[&str]) -> Result<Props, Error> {
        let mut all = self.props_of_many(std::slice::from_ref(obj), paths).await?;
        match all.iter().position(|p| p.obj == *obj) {
            Some(i) => Ok(all.swap_remove(i)),
            None => Err(Error::NotFound {
                what: "managed object",
                path: format!("{}:{}", obj.kind, obj.value),
            }),
        }
    }

    /// `SearchIndex.FindByInventoryPath`; `None` when nothing is there.
    pub(crate) async fn find_by_path(&self, path: &str) -> Result<Option<MoRef>, Error> {
        let si = self.content.search_index.clone();
        let params = format!("<inventoryPath>{}</inventoryPath>", escape(path));
        let answer = self.invoke("FindByInventoryPath", &si, &params).await?;
        Ok(answer.child("returnval").and_then(MoRef::from_element))
    }

    /// The object at `path`, which must be of one of `kinds`; else
    /// [`Error::NotFound`] naming `what` and the path.
    pub(crate) async fn lookup(
        &self,
        what: &'static str,
        path: &str,
        kinds: &[&str],
    ) -> Result<MoRef, Error> {
        match self.find_by_path(path).await? {
            Some(found) if kinds.contains(&found.kind.as_str()) => Ok(found),
            _ => Err(Error::NotFound {
                what,
                path: path.to_owned(),
            }),
        }
    }

    /// The datacenter named (or at the inventory path) `datacenter`, with
    /// its inventory path.
    pub(crate) async fn datacenter(&self, datacenter: &str) -> Result<(MoRef, String), Error> {
        let path = datacenter_path(datacenter);
        let dc = self.lookup("datacenter", &path, &["Datacenter"]).await?;
        Ok((dc, path))
    }

    /// Every VM (templates included) anywhere in `dc` whose name is one of
    /// `names`: (reference, name). Names are read through a container view,
    /// a page at a time; the view is destroyed afterwards.
    pub(crate) async fn vms_named(
        &self,
        dc: &MoRef,
        names: &[&str],
    ) -> Result<Vec<(MoRef, String)>, Error> {
        let vm_mgr = self.content.view_manager.clone();
        let params = format!(
            "{}<type>VirtualMachine</type><recursive>true</recursive>",
            dc.xml("container")
        );
        let answer = self.invoke("CreateContainerView", &vm_mgr, &params).await?;
        let view = answer
            .child("returnval")
            .and_then(MoRef::from_element)
            .ok_or_else(|| Error::Malformed {
                method: "CreateContainerView".into(),
                detail: "no view in the answer".into(),
            })?;
        let spec = format!(
            concat!(
                "{props}<objectSet>{obj}<skip>true</skip>",
                r#"<selectSet xsi:type="TraversalSpec"><name>view</name>"#,
                "<type>ContainerView</type><path>view</path><skip>false</skip>",
                "</selectSet></objectSet>"
            ),
            props = prop_set("VirtualMachine", &["name"]),
            obj = view.xml("obj"),
        );
        let found = self.retrieve(&spec).await;
        if let Err(e) = self.invoke("DestroyView", &view, "").await {
            tracing::warn!(error = %e, "cannot destroy the container view");
        }
        Ok(found?
            .into_iter()
            .filter_map(|p| {
                let name = p.text("name")?.to_owned();
                names.contains(&name.as_str()).then_some((p.obj, name))
            })
            .collect())
    }

    /// Every VM (templates included) in `datacenter` (a name like `DC0`
    /// or a path like `/DC0`) whose name is one of `names`, wherever it
    /// sits, with what the boot image job needs to know about it.
    ///
    /// `release` is `summary.config.product.version`, or, when vCenter gives
    /// no summary product, the first `config.vAppConfig.product[].version`.
    /// vcsim v0.45.1 never sets `summary.config.product` for an imported VM
    /// but copies the OVF ProductSection into `config.vAppConfig.product`
    /// (its `OvfManager.CreateImportSpec` builds a `VAppConfigSpec` from
    /// it); the e2e test `vsphere_client::import_creates_a_tagged_template`
    /// reads both properties of an imported VM back from vcsim and asserts
    /// exactly that. On a real vCenter the summary product is that same
    /// vApp product, so the fallback gives the same value there.
    pub async fn find_vms(
        &self,
        datacenter: &str,
        names: &[String],
    ) -> Result<Vec<FoundVm>, Error> {
        let (dc, _) = self.datacenter(datacenter).await?;
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let found = self.describe_vms(&dc, &names).await?;
        Ok(found.into_iter().map(|(vm, _)| vm).collect())
    }

    /// [`Session::find_vms`] with each VM's parent folder reference.
    pub(crate) async fn describe_vms(
        &self,
        dc: &MoRef,
        names: &[&str],
    ) -> Result<Vec<(FoundVm, Option<MoRef>)>, Error> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let found = self.vms_named(dc, names).await?;
        let refs: Vec<MoRef> = found.into_iter().map(|(r, _)| r).collect();
        let details = self
            .props_of_many(
                &refs,
                &[
                    "name",
                    "parent",
                    "config.template",
                    "summary.config.product",
                    "config.vAppConfig",
                    "config.hardware.device",
                ],
            )
            .await?;
        let mut folders: HashMap<MoRef, String> = HashMap::new();
        let mut out = Vec::with_capacity(details.len());
        for p in details {
            let Some(name) = p.text("name").map(str::to_owned) else {
                continue;
            };
            let parent = p.moref("parent");
            let folder = match &parent {
                Some(parent) => self.inventory_path(parent, &mut folders).await?,
                None => String::new(),
            };
            let vm = FoundVm {
                name,
                moref: p.obj.value.clone(),
                folder,
                template: p.flag("config.template"),
                release: release_of(&p),
                disk_type: p.get("config.hardware.device").and_then(disk_type_of),
            };
            out.push((vm, parent));
        }
        out.sort_by(|(a, _), (b, _)| (&a.name, &a.moref).cmp(&(&b.name, &b.moref)));
        Ok(out)
    }

    /// The inventory path of `obj` (`/DC0/vm/ci`), walking `parent` up to
    /// the root folder (whose own name, `Datacenters`, is not part of it).
    async fn inventory_path(
        &self,
        obj: &MoRef,
        cache: &mut HashMap<MoRef, String>,
    ) -> Result<String, Error> {
        if let Some(p) = cache.get(obj) {
            return Ok(p.clone());
        }
        let mut names = Vec::new();
        let mut at = obj.clone();
        for _ in 0..MAX_FOLDER_DEPTH {
            if at == self.content.root_folder {
                names.reverse();
                let path = format!("/{}", names.join("/"));
                cache.insert(obj.clone(), path.clone());
                return Ok(path);
            }
            let p = self.props(&at, &["name", "parent"]).await?;
            names.push(p.text("name").unwrap_or_default().to_owned());
            match p.moref("parent") {
                Some(parent) => at = parent,
                None => {
                    names.reverse();
                    let path = format!("/{}", names.join("/"));
                    cache.insert(obj.clone(), path.clone());
                    return Ok(path);
                }
            }
        }
        Err(Error::Malformed {
            method: "RetrievePropertiesEx".into(),
            detail: format!("{} sits deeper than {MAX_FOLDER_DEPTH} folders", obj.value),
        })
    }

    /// Crash recovery of an interrupted swap in `folder` (an inventory
    /// path): if no VM named `name` exists there but
    /// `temp_name("mco-old", name)` does, rename it back to `name`. If both
    /// exist, templates both, the swap got as far as the new template's
    /// rename and only the old one's destruction is missing (it failed, or
    /// the process died): the `mco-old-` leftover is destroyed. More than
    /// one `mco-old-` VM is ambiguous and an error. VMs of these names in
    /// other folders are another owner's (the names hash only the template
    /// name, which two clusters may share) and are left alone.
    pub async fn recover_swap(
        &self,
        datacenter: &str,
        folder: &str,
        name: &str,
    ) -> Result<Recovery, Error> {
        let (dc, _) = self.datacenter(datacenter).await?;
        // No folder, no swap in it to recover; an import there says so.
        let folder_ref = match self
            .lookup("folder", folder.trim_end_matches('/'), &["Folder"])
            .await
        {
            Ok(folder_ref) => folder_ref,
            Err(Error::NotFound { .. }) => return Ok(Recovery::Nothing),
            Err(e) => return Err(e),
        };
        let old = temp_name("mco-old", name);
        let found = self.describe_vms(&dc, &[name, &old]).await?;
        let in_folder = |wanted: &str| -> Vec<&FoundVm> {
            found
                .iter()
                .filter(|(v, parent)| v.name == wanted && parent.as_ref() == Some(&folder_ref))
                .map(|(v, _)| v)
                .collect()
        };
        let (finals, olds) = (in_folder(name), in_folder(&old));
        let [vm] = olds.as_slice() else {
            if olds.is_empty() {
                return Ok(Recovery::Nothing);
            }
            return Err(Error::Invalid(format!(
                "{} VMs are named {old} in {folder}; not guessing which to recover",
                olds.len()
            )));
        };
        let moref = MoRef::new("VirtualMachine", &vm.moref);
        if finals.is_empty() {
            self.rename(&moref, name).await?;
            tracing::info!(from = %old, to = %name, "renamed the old template back after an interrupted swap");
            return Ok(Recovery::RenamedBack { from: old });
        }
        if vm.template && finals.iter().any(|f| f.template) {
            self.destroy(&moref).await?;
            tracing::info!(vm = %old, "destroyed the old template a finished swap left behind");
            return Ok(Recovery::RemovedLeftover { name: old });
        }
        Ok(Recovery::Nothing)
    }

    /// `Rename_Task`, awaited.
    pub(crate) async fn rename(&self, obj: &MoRef, new_name: &str) -> Result<(), Error> {
        let params = format!("<newName>{}</newName>", escape(new_name));
        let task = self.start_task("Rename_Task", obj, &params).await?;
        self.wait_task("Rename_Task", &task).await.map(drop)
    }

    /// `Destroy_Task`, awaited.
    pub(crate) async fn destroy(&self, obj: &MoRef) -> Result<(), Error> {
        let task = self.start_task("Destroy_Task", obj, "").await?;
        self.wait_task("Destroy_Task", &task).await.map(drop)
    }

    /// Calls a `…_Task` method; the task it started.
    pub(crate) async fn start_task(
        &self,
        method: &str,
        this: &MoRef,
        params: &str,
    ) -> Result<MoRef, Error> {
        let answer = self.invoke(method, this, params).await?;
        answer
            .child("returnval")
            .and_then(MoRef::from_element)
            .ok_or_else(|| Error::Malformed {
                method: method.to_owned(),
                detail: "no task in the answer".into(),
            })
    }

    /// Polls `task` until it ends, at most `timeouts.task`; its `info.result`
    /// on success, [`Error::Task`] with vCenter's fault on error.
    pub(crate) async fn wait_task(
        &self,
        method: &str,
        task: &MoRef,
    ) -> Result<Option<Element>, Error> {
        let deadline = tokio::time::Instant::now() + self.timeouts.task;
        let mut pause = Duration::from_millis(100);
        loop {
            let p = self.props(task, &["info"]).await?;
            let info = p.get("info").ok_or_else(|| Error::Malformed {
                method: method.to_owned(),
                detail: format!("task {} has no info", task.value),
            })?;
            match info.text_at(&["state"]).map(str::trim) {
                Some("success") => return Ok(info.child("result").cloned()),
                Some("error") => {
                    let (fault, message) = info
                        .child("error")
                        .map(localized_fault)
                        .unwrap_or_else(|| ("UnknownFault".into(), String::new()));
                    return Err(Error::Task {
                        method: method.to_owned(),
                        fault,
                        message,
                    });
                }
                Some("queued" | "running") => {}
                other => {
                    return Err(Error::Malformed {
                        method: method.to_owned(),
                        detail: format!("task state {other:?}"),
                    });
                }
            }
            if tokio::time::Instant::now() + pause > deadline {
                return Err(Error::Timeout {
                    method: method.to_owned(),
                    timeout: "task",
                    after: self.timeouts.task,
                });
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 3 / 2).min(Duration::from_secs(2));
        }
    }
}

/// `/DC0` for `DC0`, `/DC0`, `DC0/` alike.
pub(crate) fn datacenter_path(datacenter: &str) -> String {
    let trimmed = datacenter.trim().trim_matches('/');
    format!("/{trimmed}")
}

/// A `LocalizedMethodFault`'s type and message.
pub(crate) fn localized_fault(el: &Element) -> (String, String) {
    let fault = el
        .child("fault")
        .and_then(|f| f.type_name())
        .filter(|t| !t.is_empty())
        .unwrap_or("UnknownFault");
    let message = el.text_at(&["localizedMessage"]).unwrap_or_default().trim();
    (excerpt(fault, 100), excerpt(message, 1000))
}

fn props_of(objects: &Element, method: &str) -> Result<Props, Error> {
    let obj = objects
        .child("obj")
        .and_then(MoRef::from_element)
        .ok_or_else(|| Error::Malformed {
            method: method.to_owned(),
            detail: "an object without obj".into(),
        })?;
    let mut props = HashMap::new();
    for set in objects.children_named("propSet") {
        if let (Some(name), Some(val)) = (set.text_at(&["name"]), set.child("val")) {
            props.insert(name.to_owned(), val.clone());
        }
    }
    Ok(Props { obj, props })
}

/// The release: `summary.config.product.version`, else the first vApp
/// product's version (see [`Session::find_vms`]).
fn release_of(p: &Props) -> Option<String> {
    let nonempty = |s: &str| {
        let s = s.trim();
        (!s.is_empty()).then(|| excerpt(s, 256))
    };
    p.get("summary.config.product")
        .and_then(|prod| prod.text_at(&["version"]))
        .and_then(nonempty)
        .or_else(|| {
            p.get("config.vAppConfig")
                .and_then(|v| v.child("product"))
                .and_then(|prod| prod.text_at(&["version"]))
                .and_then(nonempty)
        })
}

/// The provisioning of the first virtual disk with a flat (v2) backing.
fn disk_type_of(devices: &Element) -> Option<DiskType> {
    let backing = devices
        .children
        .iter()
        .filter(|d| d.type_name() == Some("VirtualDisk"))
        .find_map(|d| {
            d.child("backing")
                .filter(|b| b.type_name() == Some("VirtualDiskFlatVer2BackingInfo"))
        })?;
    let yes = |name: &str| {
        backing
            .text_at(&[name])
            .is_some_and(|t| matches!(t.trim(), "true" | "1"))
    };
    Some(if yes("thinProvisioned") {
        DiskType::Thin
    } else if yes("eagerlyScrub") {
        DiskType::EagerZeroedThick
    } else {
        DiskType::Thick
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml;

    fn objects(doc: &str) -> Props {
        props_of(&xml::parse(doc).unwrap(), "t").unwrap()
    }

    #[test]
    fn vm_properties_decode() {
        let p = objects(
            r#"<objects xmlns:X="http://www.w3.org/2001/XMLSchema-instance"><obj type="VirtualMachine">vm-42</obj>
<propSet><name>config.template</name><val X:type="xsd:boolean">true</val></propSet>
<propSet><name>parent</name><val X:type="ManagedObjectReference" type="Folder">group-v3</val></propSet>
<propSet><name>config.vAppConfig</name><val X:type="VmConfigInfo"><product><key>0</key><version>9.6.20250101-0</version></product></val></propSet>
<propSet><name>config.hardware.device</name><val X:type="ArrayOfVirtualDevice">
 <VirtualDevice X:type="VirtualLsiLogicController"><key>1000</key></VirtualDevice>
 <VirtualDevice X:type="VirtualDisk"><key>2000</key><backing X:type="VirtualDiskFlatVer2BackingInfo"><fileName>[ds] a.vmdk</fileName><thinProvisioned>false</thinProvisioned><eagerlyScrub>true</eagerlyScrub></backing></VirtualDevice>
 <VirtualDevice X:type="VirtualDisk"><backing X:type="VirtualDiskFlatVer2BackingInfo"><thinProvisioned>true</thinProvisioned></backing></VirtualDevice>
</val></propSet></objects>"#,
        );
        assert_eq!(p.obj, MoRef::new("VirtualMachine", "vm-42"));
        assert!(p.flag("config.template"));
        assert_eq!(p.moref("parent"), Some(MoRef::new("Folder", "group-v3")));
        assert_eq!(release_of(&p).as_deref(), Some("9.6.20250101-0"));
        assert_eq!(
            disk_type_of(p.get("config.hardware.device").unwrap()),
            Some(DiskType::EagerZeroedThick)
        );
    }

    #[test]
    fn the_summary_product_wins_and_empty_versions_do_not_count() {
        let p = objects(
            r#"<objects><obj type="VirtualMachine">vm-1</obj>
<propSet><name>summary.config.product</name><val><version>  </version></val></propSet>
<propSet><name>config.vAppConfig</name><val><product><version>b</version></product></val></propSet></objects>"#,
        );
        assert_eq!(release_of(&p).as_deref(), Some("b"));
        let p = objects(
            r#"<objects><obj type="VirtualMachine">vm-1</obj>
<propSet><name>summary.config.product</name><val><version>a</version></val></propSet>
<propSet><name>config.vAppConfig</name><val><product><version>b</version></product></val></propSet></objects>"#,
        );
        assert_eq!(release_of(&p).as_deref(), Some("a"));
        let p = objects(r#"<objects><obj type="VirtualMachine">vm-1</obj></objects>"#);
        assert_eq!(release_of(&p), None);
        assert!(!p.flag("config.template"));
    }

    #[test]
    fn disk_types_follow_the_flat_backing() {
        let dev = |backing: &str| {
            xml::parse(&format!(
                r#"<val xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><VirtualDevice xsi:type="VirtualDisk">{backing}</VirtualDevice></val>"#
            ))
            .unwrap()
        };
        let flat = |inner: &str| {
            dev(&format!(
                r#"<backing xsi:type="VirtualDiskFlatVer2BackingInfo">{inner}</backing>"#
            ))
        };
        assert_eq!(
            disk_type_of(&flat("<thinProvisioned>true</thinProvisioned>")),
            Some(DiskType::Thin)
        );
        assert_eq!(
            disk_type_of(&flat("<thinProvisioned>false</thinProvisioned>")),
            Some(DiskType::Thick)
        );
        assert_eq!(disk_type_of(&flat("")), Some(DiskType::Thick));
        assert_eq!(
            disk_type_of(&dev(
                r#"<backing xsi:type="VirtualDiskSeSparseBackingInfo"></backing>"#
            )),
            None
        );
        assert_eq!(disk_type_of(&xml::parse("<val/>").unwrap()), None);
    }

    #[test]
    fn task_faults_decode() {
        let el = xml::parse(
            r#"<error xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><fault xsi:type="DuplicateName"><name>x</name></fault><localizedMessage>The name 'x' already exists.</localizedMessage></error>"#,
        )
        .unwrap();
        assert_eq!(
            localized_fault(&el),
            (
                "DuplicateName".to_owned(),
                "The name 'x' already exists.".to_owned()
            )
        );
    }

    #[test]
    fn datacenter_paths() {
        assert_eq!(datacenter_path("DC0"), "/DC0");
        assert_eq!(datacenter_path("/DC0/"), "/DC0");
        assert_eq!(datacenter_path("/F/DC0"), "/F/DC0");
    }
}
