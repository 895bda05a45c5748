//! vSphere: the patch may point `template` only at the cluster's own
//! template, `<infrastructureName>-rhcos-<failure domain>`, and only once
//! that holds the stream's release (already, or by this decision's
//! import). An import must be the OVA the stream publishes for the
//! MachineSet's architecture (URL, sha256, release), into the MachineSet's
//! own vCenter, datacenter and folder, into the template the MachineSet is
//! left on, which must be the cluster's or the MachineSet's own in the
//! workspace folder (a VM of the name elsewhere is never touched: the
//! import goes into the folder), which must not already hold the release,
//! with the disk type the host read (the replaced template's, or
//! install-config's for a new one).

use mco_bootimage::vcenter::{TemplateImport, VcenterFacts, VcenterVm, same_folder};
use mco_bootimage::{ClusterFacts, Decision, Stream};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{About, Platform, provider_spec};
use crate::objects::Infrastructure;
use crate::prepared::Prepared;
use crate::proposal::{May, Owned, Proposal, Rule, owned, str_at};
use crate::vcenter::{self, Match, Workspace};

/// Infrastructure `status.platformStatus.type` of vSphere.
pub(crate) const NAME: &str = "VSphere";

pub(crate) struct Vsphere;

/// Its row of the platform table: it imports templates, and its
/// ControlPlaneMachineSets are left alone.
const ABOUT: About = About {
    imports_templates: true,
    updates_control_plane_machine_sets: false,
    ..About::new(
        NAME,
        "bootimage-vsphere.wasm",
        "VSphereMachineProviderSpec",
        OWNED,
    )
};

impl Platform for Vsphere {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    /// The template the decision leaves the MachineSet on, if the decision
    /// keeps within vSphere's rules.
    fn image(&self, proposal: &Proposal<'_>) -> Result<String, Rule> {
        let &Proposal {
            stream,
            arch,
            before,
            after,
            import,
            vcenter,
            ..
        } = proposal;
        let facts = vcenter.ok_or(Rule::NoVcenterFacts)?;
        let vmware = stream
            .vmware(arch)
            .map_err(|e| Rule::VsphereNothingPublished {
                arch: arch.to_owned(),
                reason: e.to_string(),
            })?;
        let workspace: Workspace = before
            .get("workspace")
            .cloned()
            .and_then(|w| serde_json::from_value(w).ok())
            .unwrap_or_default();
        let named_before = str_at(before, "/template").unwrap_or("");
        let named_after = after.str_at("/template").unwrap_or("");
        let managed = facts.managed_template_name();
        if named_after != named_before && named_after != managed {
            return Err(Rule::TemplateNotManaged {
                template: named_after.to_owned(),
                managed,
            });
        }
        let Some(import) = import else {
            // Only a rename: to a template that already holds the release.
            let current = facts
                .in_folder(named_after, &workspace.folder)
                .is_some_and(|vm| {
                    vm.template && vm.release.as_deref() == Some(vmware.release.as_str())
                });
            if !current {
                return Err(Rule::TemplateOutdated {
                    template: named_after.to_owned(),
                    release: vmware.release.clone(),
                });
            }
            return Ok(named_after.to_owned());
        };
        check_import(
            import,
            facts,
            &workspace,
            &managed,
            named_before,
            &vmware.release,
        )?;
        if import.template != named_after {
            return Err(Rule::ImportNotNamed {
                template: import.template.clone(),
                named: named_after.to_owned(),
            });
        }
        let ova = stream
            .vmware_ova(arch)
            .map_err(|e| Rule::VsphereNothingPublished {
                arch: arch.to_owned(),
                reason: e.to_string(),
            })?;
        for (field, asked, published) in [
            ("url", &import.url, &ova.location),
            ("sha256", &import.sha256, &ova.sha256),
            ("release", &import.release, &vmware.release),
        ] {
            if asked != published {
                return Err(Rule::ImportNotPublished {
                    field,
                    value: asked.clone(),
                    arch: arch.to_owned(),
                    published: published.clone(),
                });
            }
        }
        Ok(import.template.clone())
    }

    /// The common rules first, as upstream runs them before it touches
    /// vCenter: a Windows or an owned MachineSet costs no session. Then
    /// the failure-domain match says what to read from vCenter.
    fn prepare(&self, infra: &Infrastructure, prepared: &mut Prepared) -> Option<Decision> {
        if let Err(decided) = mco_bootimage::common_rules(&prepared.machineset, &prepared.cluster) {
            return Some(decided);
        }
        match vcenter::prepare(infra, &prepared.machineset) {
            Some(Match::Decided(decision)) => return Some(decision),
            Some(Match::Read(lookup)) => prepared.vcenter = Some(lookup),
            // No readable workspace: the guest says what is missing.
            None => {}
        }
        None
    }

    fn fixture(&self) -> Value {
        json!({
            "kind": "VSphereMachineProviderSpec",
            "template": SMOKE_TEMPLATE,
            "workspace": {"server": "vcenter.example.com", "datacenter": "dc1",
                          "folder": SMOKE_FOLDER, "datastore": "/dc1/datastore/ds1",
                          "resourcePool": "/dc1/host/cl1/Resources"},
            "userDataSecret": {"name": "worker-user-data"},
        })
    }

    /// vCenter holds the fixture's template, at an older release.
    fn smoke_facts(&self, facts: &mut ClusterFacts) {
        facts.vcenter = Some(VcenterFacts {
            infrastructure_name: "smoke".into(),
            failure_domain: "fd".into(),
            install_disk_type: None,
            vms: vec![VcenterVm {
                name: SMOKE_TEMPLATE.into(),
                folder: SMOKE_FOLDER.into(),
                template: true,
                release: Some("9.6.1".into()),
                disk_type: Some("thin".into()),
            }],
        });
    }

    /// The VM `template` it clones.
    fn current_image(&self, spec: &Value) -> Option<String> {
        let template = provider_spec::<TemplateName>(spec)?.template?;
        Some(format!("template {template}"))
    }

    /// The release of the OVA its template is made from (which release a
    /// template holds is in vCenter, which the status view does not read).
    fn stream_image(&self, stream: &Stream, _spec: &Value, arch: &str) -> Option<String> {
        let vmware = stream.vmware(arch).ok()?;
        Some(format!("OVA {}", vmware.release))
    }
}

/// The smoke fixture's template and its folder.
const SMOKE_TEMPLATE: &str = "smoke-rhcos-fd";
const SMOKE_FOLDER: &str = "/dc1/vm/smoke";

/// `template`, pointed at another template
/// (`platform_helpers.go`, `reconcileVSphereProviderSpec`).
const OWNED: &[Owned] = &[owned("template", May::SetImage)];

/// What the status view reads of a vSphere providerSpec.
#[derive(Deserialize)]
struct TemplateName {
    template: Option<String>,
}

/// Where the import goes, over what, and with which disk type.
fn check_import(
    import: &TemplateImport,
    facts: &VcenterFacts,
    workspace: &Workspace,
    managed: &str,
    named_before: &str,
    release: &str,
) -> Result<(), Rule> {
    for (field, asked, own) in [
        ("vCenter", &import.server, &workspace.server),
        ("datacenter", &import.datacenter, &workspace.datacenter),
    ] {
        if asked != own {
            return Err(Rule::ImportElsewhere {
                field,
                value: asked.clone(),
                own: own.clone(),
            });
        }
    }
    if !same_folder(&import.folder, &workspace.folder) {
        return Err(Rule::ImportElsewhere {
            field: "folder",
            value: import.folder.clone(),
            own: workspace.folder.clone(),
        });
    }
    let template = import.template.as_str();
    let existing = facts.in_folder(template, &workspace.folder);
    // The MachineSet's own template may be replaced only where it is the
    // cluster's to replace: in the workspace folder.
    let own = template == named_before && existing.is_some();
    if template != managed && !own {
        return Err(Rule::ImportTemplate {
            template: template.to_owned(),
            managed: managed.to_owned(),
        });
    }
    if existing.is_some_and(|vm| vm.release.as_deref() == Some(release)) {
        return Err(Rule::ImportCurrent {
            template: template.to_owned(),
            release: release.to_owned(),
        });
    }
    let wanted = match existing {
        Some(vm) => &vm.disk_type,
        None => &facts.install_disk_type,
    };
    if import.disk_type != *wanted {
        return Err(Rule::ImportDiskType {
            asked: import.disk_type.clone(),
            wanted: wanted.clone(),
            replaced: existing.is_some(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use mco_bootimage::Stream;
    use mco_bootimage::vcenter::VcenterVm;
    use serde_json::{Value, json};

    use super::*;

    const RELEASE: &str = "9.8.20260428-0";
    const FOLDER: &str = "/dc1/vm/c1";
    const MANAGED: &str = "c1-rhcos-fd";

    fn spec(template: &str) -> Value {
        json!({"template": template, "workspace": {"server": "vc", "datacenter": "dc1", "folder": FOLDER}})
    }

    fn vm(name: &str, folder: &str, release: &str, template: bool) -> VcenterVm {
        VcenterVm {
            name: name.into(),
            folder: folder.into(),
            template,
            release: Some(release.into()),
            disk_type: Some("thin".into()),
        }
    }

    fn import(template: &str) -> TemplateImport {
        TemplateImport {
            server: "vc".into(),
            datacenter: "dc1".into(),
            folder: FOLDER.into(),
            template: template.into(),
            release: RELEASE.into(),
            url: "https://m/x.ova".into(),
            sha256: "ab".into(),
            disk_type: Some("thin".into()),
        }
    }

    /// The template a decision moving `before` → `after` (with `import`)
    /// leaves the MachineSet on, against `vms`.
    fn check(
        before: &str,
        after: &str,
        import: Option<&TemplateImport>,
        vms: Vec<VcenterVm>,
    ) -> Result<String, Rule> {
        let stream = Stream::parse(
            &json!({"stream": "rhcos-4.21", "architectures": {"x86_64": {"artifacts": {"vmware": {
                "release": RELEASE,
                "formats": {"ova": {"disk": {"location": "https://m/x.ova", "sha256": "ab"}}}}}}}})
            .to_string(),
        )
        .unwrap();
        let facts = VcenterFacts {
            infrastructure_name: "c1".into(),
            failure_domain: "fd".into(),
            install_disk_type: Some("thin".into()),
            vms,
        };
        let (before, patch) = (spec(before), json!({"template": after}));
        let after = crate::proposal::Patched::new(&before, Some(&patch));
        Vsphere.image(&Proposal {
            stream: &stream,
            arch: "x86_64",
            before: &before,
            after: &after,
            changes: &[],
            import,
            vcenter: Some(&facts),
            ec2: None,
        })
    }

    #[test]
    fn a_rename_needs_a_current_template_in_the_folder() {
        let current = vm(MANAGED, FOLDER, RELEASE, true);
        assert_eq!(check("old", MANAGED, None, vec![current]).unwrap(), MANAGED);
        let running = vm(MANAGED, FOLDER, RELEASE, false);
        let err = check("old", MANAGED, None, vec![running]).unwrap_err();
        assert!(matches!(err, Rule::TemplateOutdated { .. }), "{err}");
        let elsewhere = vm(MANAGED, "/dc1/vm/other", RELEASE, true);
        let err = check("old", MANAGED, None, vec![elsewhere]).unwrap_err();
        assert!(matches!(err, Rule::TemplateOutdated { .. }), "{err}");
    }

    #[test]
    fn an_import_never_replaces_a_current_template() {
        let current = vm(MANAGED, FOLDER, RELEASE, true);
        let err = check(MANAGED, MANAGED, Some(&import(MANAGED)), vec![current]).unwrap_err();
        assert!(matches!(err, Rule::ImportCurrent { .. }), "{err}");
        let outdated = vm(MANAGED, FOLDER, "9.6.20250701-0", true);
        let ok = check(MANAGED, MANAGED, Some(&import(MANAGED)), vec![outdated]);
        assert_eq!(ok.unwrap(), MANAGED);
    }

    #[test]
    fn a_namesake_outside_the_folder_does_not_stop_a_new_template() {
        let theirs = vm(MANAGED, "/dc1/vm/other", RELEASE, true);
        let ok = check("", MANAGED, Some(&import(MANAGED)), vec![theirs.clone()]);
        assert_eq!(ok.unwrap(), MANAGED);
        // But its name is not the MachineSet's to import under.
        let customer = vm("golden", "/dc1/vm/other", "9.6.20250701-0", true);
        let err = check("golden", "golden", Some(&import("golden")), vec![customer]).unwrap_err();
        assert!(matches!(err, Rule::ImportTemplate { .. }), "{err}");
    }
}
