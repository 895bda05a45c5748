//! vSphere's boot image is a VM template inside vCenter, which the
//! controller makes itself from the stream's OVA (upstream
//! `pkg/controller/bootimage/vsphere_helpers.go`). A pure rule cannot read
//! vCenter or import anything, so the host reads what the rule needs first
//! ([`VcenterFacts`]) and the rule answers with the import it wants
//! ([`TemplateImport`]) beside its patch; the host checks that request
//! against its own inputs and only then acts.

use serde::{Deserialize, Serialize};

/// vCenter refuses longer VM names; upstream checks before importing.
pub const MAX_TEMPLATE_NAME: usize = 80;

/// The disk provisioning types upstream imports with (install-config's
/// spelling); anything else is refused before vCenter is asked.
pub const DISK_TYPES: [&str; 3] = ["thin", "thick", "eagerZeroedThick"];

/// What the host read for one vSphere MachineSet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VcenterFacts {
    /// Infrastructure `status.infrastructureName`: the templates the
    /// cluster manages are named `<infrastructure-name>-rhcos-<failure domain>`.
    pub infrastructure_name: String,
    /// The failure domain the MachineSet's workspace matches.
    pub failure_domain: String,
    /// install-config `platform.vsphere.diskType`: the disk type of a
    /// template made anew (`None`: the datastore's default policy).
    pub install_disk_type: Option<String>,
    /// The VMs of the workspace's datacenter named like a template the
    /// MachineSet may resolve to.
    pub vms: Vec<VcenterVm>,
}

/// One VM as vCenter showed it; `eval bootimage --vcenter` reads a list
/// of these.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VcenterVm {
    pub name: String,
    /// Inventory path of the folder it sits in.
    pub folder: String,
    #[serde(default)]
    pub template: bool,
    /// The RHCOS release it holds (its vApp product version).
    #[serde(default)]
    pub release: Option<String>,
    #[serde(default)]
    pub disk_type: Option<String>,
}

/// The stream's OVA, to be imported as template `template` in `folder`
/// (of `datacenter`, on vCenter `server`) before the patch is applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateImport {
    pub server: String,
    pub datacenter: String,
    pub folder: String,
    pub template: String,
    /// The release the OVA holds (`artifacts.vmware.release`).
    pub release: String,
    pub url: String,
    pub sha256: String,
    pub disk_type: Option<String>,
}

impl VcenterFacts {
    /// The template name the cluster manages for its failure domain.
    pub fn managed_template_name(&self) -> String {
        format!("{}-rhcos-{}", self.infrastructure_name, self.failure_domain)
    }

    /// The VMs named `name`.
    pub fn named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a VcenterVm> + 'a {
        self.vms.iter().filter(move |vm| vm.name == name)
    }

    /// The VM named `name` in `folder` (the workspace folder): the only one
    /// the cluster may use or replace; one of that name elsewhere is
    /// someone else's (upstream `isInFolder`).
    pub fn in_folder<'a>(&'a self, name: &'a str, folder: &str) -> Option<&'a VcenterVm> {
        self.named(name).find(|vm| same_folder(&vm.folder, folder))
    }

    /// What vCenter holds once `import` is done: one template of its name
    /// in its folder, holding its release. Offline evaluation applies a
    /// decision with this, as it applies the patch to the MachineSet, and
    /// decides again.
    pub fn apply(&mut self, import: &TemplateImport) {
        self.vms
            .retain(|vm| !(vm.name == import.template && same_folder(&vm.folder, &import.folder)));
        self.vms.push(VcenterVm {
            name: import.template.clone(),
            folder: import.folder.clone(),
            template: true,
            release: Some(import.release.clone()),
            disk_type: import.disk_type.clone(),
        });
    }
}

/// Whether two inventory paths name the same folder: vCenter's paths and
/// a providerSpec's may differ by a trailing slash.
pub fn same_folder(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// `Ok` for a disk type vCenter imports with; the error is upstream's
/// (`getCISP`).
pub fn check_disk_type(disk_type: &str) -> Result<(), String> {
    if DISK_TYPES.contains(&disk_type) {
        Ok(())
    } else {
        Err(format!(
            "disk provisioning type {disk_type:?} is not supported"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vm(name: &str, folder: &str, release: &str) -> VcenterVm {
        VcenterVm {
            name: name.into(),
            folder: folder.into(),
            template: true,
            release: Some(release.into()),
            disk_type: Some("thin".into()),
        }
    }

    #[test]
    fn an_import_replaces_the_template_of_its_name_in_its_folder_only() {
        let mut facts = VcenterFacts {
            infrastructure_name: "c1".into(),
            failure_domain: "fd-a".into(),
            install_disk_type: None,
            vms: vec![
                vm("c1-rhcos-fd-a", "/dc/vm/c1/", "old"),
                vm("c1-rhcos-fd-a", "/dc/vm/elsewhere", "other"),
            ],
        };
        assert_eq!(facts.managed_template_name(), "c1-rhcos-fd-a");
        facts.apply(&TemplateImport {
            server: "vc".into(),
            datacenter: "dc".into(),
            folder: "/dc/vm/c1".into(),
            template: "c1-rhcos-fd-a".into(),
            release: "new".into(),
            url: "https://mirror/x.ova".into(),
            sha256: "ab".into(),
            disk_type: None,
        });
        let releases: Vec<_> = facts
            .named("c1-rhcos-fd-a")
            .map(|vm| (vm.folder.as_str(), vm.release.as_deref()))
            .collect();
        assert_eq!(
            releases,
            [
                ("/dc/vm/elsewhere", Some("other")),
                ("/dc/vm/c1", Some("new"))
            ]
        );
    }

    #[test]
    fn disk_types_are_upstreams() {
        for ok in DISK_TYPES {
            assert_eq!(check_disk_type(ok), Ok(()));
        }
        assert_eq!(
            check_disk_type("sparse"),
            Err("disk provisioning type \"sparse\" is not supported".into())
        );
        assert!(check_disk_type("").is_err());
    }

    #[test]
    fn a_vm_needs_only_its_name_and_folder() {
        let vm: VcenterVm = serde_json::from_str(r#"{"name":"t","folder":"/dc/vm"}"#).unwrap();
        assert_eq!((vm.release, vm.disk_type, vm.template), (None, None, false));
        let vm: VcenterVm = serde_json::from_str(
            r#"{"name":"t","folder":"/dc/vm","template":true,"release":"9.8","diskType":"thin"}"#,
        )
        .unwrap();
        assert_eq!(vm.disk_type.as_deref(), Some("thin"));
        assert!(serde_json::from_str::<VcenterVm>(r#"{"name":"t"}"#).is_err());
    }
}
