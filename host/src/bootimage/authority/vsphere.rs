//! vSphere: the patch may point `template` only at the cluster's own
//! template, `<infrastructureName>-rhcos-<failure domain>`, and only once
//! that holds the stream's release (already, or by this decision's
//! import). An import must be the OVA the stream publishes for the
//! MachineSet's architecture (URL, sha256, release), into the MachineSet's
//! own vCenter, datacenter and folder, into the template the MachineSet is
//! left on, which must be the cluster's or the MachineSet's own in the
//! workspace folder (never a customer's template elsewhere), with the disk
//! type the host read (the replaced template's, or install-config's for a
//! new one).

use mco_bootimage::vcenter::{TemplateImport, VcenterFacts, VcenterVm, same_folder};

use super::{Proposal, Rule, str_at};
use crate::bootimage::vcenter::Workspace;

/// Infrastructure `status.platformStatus.type` of vSphere.
pub(super) const PLATFORM: &str = crate::bootimage::vcenter::VSPHERE;

/// The template the decision leaves the MachineSet on, if the decision
/// keeps within vSphere's rules.
pub(super) fn image(proposal: &Proposal<'_>) -> Result<String, Rule> {
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
    let named_after = str_at(after, "/template").unwrap_or("");
    let managed = facts.managed_template_name();
    if named_after != named_before && named_after != managed {
        return Err(Rule::TemplateNotManaged {
            template: named_after.to_owned(),
            managed,
        });
    }
    let Some(import) = import else {
        // Only a rename: to a template that already holds the release.
        let current = in_folder(facts, named_after, &workspace)
            .is_some_and(|vm| vm.release.as_deref() == Some(vmware.release.as_str()));
        if !current {
            return Err(Rule::TemplateOutdated {
                template: named_after.to_owned(),
                release: vmware.release.clone(),
            });
        }
        return Ok(named_after.to_owned());
    };
    check_import(import, facts, &workspace, &managed, named_before)?;
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

/// Where the import goes, and with which disk type.
fn check_import(
    import: &TemplateImport,
    facts: &VcenterFacts,
    workspace: &Workspace,
    managed: &str,
    named_before: &str,
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
    let existing = in_folder(facts, template, workspace);
    if existing.is_none()
        && let Some(vm) = facts.named(template).next()
    {
        return Err(Rule::CustomerTemplate {
            template: template.to_owned(),
            folder: vm.folder.clone(),
        });
    }
    // The MachineSet's own template may be replaced only where it is the
    // cluster's to replace: in the workspace folder.
    let own = template == named_before && existing.is_some();
    if template != managed && !own {
        return Err(Rule::ImportTemplate {
            template: template.to_owned(),
            managed: managed.to_owned(),
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

/// The VM of that name in the workspace folder.
fn in_folder<'a>(
    facts: &'a VcenterFacts,
    name: &'a str,
    workspace: &Workspace,
) -> Option<&'a VcenterVm> {
    facts
        .named(name)
        .find(|vm| same_folder(&vm.folder, &workspace.folder))
}
