//! vSphere boot image rule (`VSphereMachineProviderSpec`). A vSphere
//! MachineSet boots from the VM template in `providerSpec.value.template`;
//! the cluster keeps one per failure domain,
//! `<infrastructureName>-rhcos-<failure domain>`, made from the stream's OVA
//! (upstream `vsphere_helpers.go`, `resolveExistingTemplateVM`,
//! `createNewVMTemplate`). The rule resolves the template from what the host
//! read of vCenter, compares its release with the stream's, and asks for an
//! import when they differ. A VM of the name outside the workspace folder is
//! the customer's own and never touched: the rule goes on as if the name
//! were free there (upstream: "leaving the customer-managed VM untouched").
//! See docs/admin/boot-images.md.

// The component bindings wit-bindgen generates for wasm32 use `unsafe`.
#![cfg_attr(target_arch = "wasm32", allow(unsafe_code))]

use mco_bootimage::fields;
use mco_bootimage::serde_json::{Map, Value};
use mco_bootimage::vcenter::{MAX_TEMPLATE_NAME, TemplateImport, VcenterFacts, check_disk_type};
use mco_bootimage::{ClusterFacts, Platform, PlatformOutcome, RuleError, StreamQuery};

#[derive(Debug, Clone, Copy, Default)]
pub struct Vsphere;

impl Platform for Vsphere {
    fn platform_type(&self) -> &'static str {
        "VSphere"
    }

    fn provider_spec_fields(&self) -> &'static [&'static str] {
        &["workspace", "template"]
    }

    fn reconcile(
        &self,
        stream: &dyn StreamQuery,
        arch: &str,
        provider_spec: &Value,
        facts: &ClusterFacts,
    ) -> PlatformOutcome {
        reconcile(stream, arch, provider_spec, facts.vcenter.as_ref()).into()
    }
}

const SPEC: &str = "providerSpec.value";
const WORKSPACE: &str = "providerSpec.value.workspace";
/// The workspace's fields, each a string (or `null`, read as unset).
const WORKSPACE_FIELDS: [&str; 6] = [
    "server",
    "datacenter",
    "folder",
    "datastore",
    "resourcePool",
    "vmGroup",
];

fn required<'a>(workspace: &'a Map<String, Value>, key: &str) -> Result<&'a str, RuleError> {
    match fields::opt_str(workspace, key, WORKSPACE)? {
        Some(value) if !value.is_empty() => Ok(value),
        _ => Err(RuleError::Other(format!("{WORKSPACE}.{key} is not set"))),
    }
}

fn reconcile(
    stream: &dyn StreamQuery,
    arch: &str,
    provider_spec: &Value,
    vcenter: Option<&VcenterFacts>,
) -> Result<PlatformOutcome, RuleError> {
    let spec = fields::as_object(provider_spec, SPEC)?;
    // Upstream reads the release before it logs in: a stream without one
    // fails every vSphere MachineSet alike.
    let release = stream.vmware_release(arch)?;
    let release = release.as_str();
    let workspace = fields::opt_object(spec, "workspace", SPEC)?
        .ok_or_else(|| RuleError::Other(format!("{WORKSPACE} is not set")))?;
    // Upstream reads the workspace typed (`VSphereMachineProviderSpec`), as
    // the host does when it checks the decision: a field of another type
    // fails the MachineSet, even one this guest does not use.
    for key in WORKSPACE_FIELDS {
        fields::opt_str(workspace, key, WORKSPACE)?;
    }
    let Some(vcenter) = vcenter else {
        return Err(RuleError::Other(
            "the host read nothing from vCenter for this MachineSet".into(),
        ));
    };
    let folder = required(workspace, "folder")?;
    let current = fields::opt_str(spec, "template", SPEC)?.unwrap_or("");
    let managed = vcenter.managed_template_name();

    // The MachineSet's own template first, then the cluster's.
    let own = (!current.is_empty() && current != managed)
        .then(|| vcenter.in_folder(current, folder))
        .flatten();
    let (name, existing) = match own {
        Some(vm) => (current, Some(vm)),
        None => (managed.as_str(), vcenter.in_folder(&managed, folder)),
    };
    if name.chars().count() > MAX_TEMPLATE_NAME {
        return Err(RuleError::Other(format!(
            "length of VM template name `{name}` exceeds the permitted limit of {MAX_TEMPLATE_NAME} characters"
        )));
    }

    // A new template takes the install-time disk type, a replacement the
    // one of the template it replaces.
    let import_disk_type = match existing {
        None => Some(vcenter.install_disk_type.clone()),
        Some(vm) => match vm.release.as_deref() {
            Some(held) if !held.is_empty() => (held != release).then(|| vm.disk_type.clone()),
            _ => {
                return Err(RuleError::Other(format!(
                    "unable to determine RHCOS version of virtual machine: {name}"
                )));
            }
        },
    };
    // Replacing it would destroy a VM someone runs, and pointing the
    // MachineSet at it would clone one: only a template is used (the
    // host refuses a patch to anything else).
    if let Some(vm) = existing
        && !vm.template
        && (import_disk_type.is_some() || current != name)
    {
        return Err(RuleError::Other(format!(
            "{name} in {folder} is a virtual machine, not a template; it is left alone"
        )));
    }
    let import = match import_disk_type {
        None => None,
        Some(disk_type) => {
            if let Some(disk_type) = &disk_type {
                check_disk_type(disk_type).map_err(RuleError::Other)?;
            }
            let ova = stream.vmware_ova(arch)?;
            if ova.location.is_empty() || ova.sha256.is_empty() {
                return Err(RuleError::Other(format!(
                    "the stream's vmware OVA for {arch} has no location or no sha256"
                )));
            }
            Some(Box::new(TemplateImport {
                server: required(workspace, "server")?.to_owned(),
                datacenter: required(workspace, "datacenter")?.to_owned(),
                folder: folder.to_owned(),
                template: name.to_owned(),
                release: release.to_owned(),
                url: ova.location.clone(),
                sha256: ova.sha256.clone(),
                disk_type,
            }))
        }
    };
    let mut fragment = Map::new();
    if current != name {
        fragment.insert("template".to_owned(), Value::String(name.to_owned()));
    }
    let target = name.to_owned();
    if import.is_none() && fragment.is_empty() {
        return Ok(PlatformOutcome::OnTarget { target });
    }
    Ok(PlatformOutcome::Update {
        target,
        fragment,
        import,
    })
}

// The component: this crate's rule behind the shared boot-image glue.
#[cfg(target_arch = "wasm32")]
mco_bootimage::export_platform!(Vsphere);

#[cfg(test)]
mod tests {
    use super::*;
    use mco_bootimage::Stream;
    use mco_bootimage::serde_json::json;
    use mco_bootimage::vcenter::VcenterVm;

    const NEW: &str = "9.8.20260428-0";
    const OLD: &str = "9.6.20250701-0";
    const OVA: &str = "https://rhcos.mirror.openshift.com/rhcos-9.8.20260428-0-vmware.x86_64.ova";
    const SHA: &str = "29dcca5f196f09104e68bdae7f7706dee6bb84e9a1de4515a04ed9b8f288ce3c";
    const FOLDER: &str = "/dc1/vm/c1-x7k2p";
    const MANAGED: &str = "c1-x7k2p-rhcos-fd-a";

    fn stream() -> Stream {
        Stream::parse(&format!(
            r#"{{"stream": "rhcos-4.21", "architectures": {{
                "x86_64": {{"artifacts": {{"vmware": {{"release": "{NEW}", "formats": {{"ova": {{"disk": {{"location": "{OVA}", "sha256": "{SHA}"}}}}}}}}}}}},
                "aarch64": {{"artifacts": {{"vmware": {{"release": "{NEW}", "formats": {{}}}}}}}},
                "s390x": {{"images": {{}}}}
            }}}}"#
        ))
        .unwrap()
    }

    fn spec(template: &str) -> Value {
        json!({
            "kind": "VSphereMachineProviderSpec",
            "template": template,
            "workspace": {"server": "vcenter.example.com", "datacenter": "dc1",
                          "folder": FOLDER, "datastore": "/dc1/datastore/ds1",
                          "resourcePool": "/dc1/host/cl1/Resources"},
            "numCPUs": 4,
            "userDataSecret": {"name": "worker-user-data"},
        })
    }

    fn vm(name: &str, folder: &str, release: Option<&str>) -> VcenterVm {
        VcenterVm {
            name: name.into(),
            folder: folder.into(),
            template: true,
            release: release.map(Into::into),
            disk_type: Some("thick".into()),
        }
    }

    fn facts(vms: Vec<VcenterVm>) -> VcenterFacts {
        VcenterFacts {
            infrastructure_name: "c1-x7k2p".into(),
            failure_domain: "fd-a".into(),
            install_disk_type: Some("thin".into()),
            vms,
        }
    }

    fn run(spec: &Value, vcenter: &VcenterFacts) -> PlatformOutcome {
        let facts = ClusterFacts {
            vcenter: Some(vcenter.clone()),
            ..ClusterFacts::default()
        };
        Vsphere.reconcile(&stream(), "x86_64", spec, &facts)
    }

    fn import(template: &str, disk_type: Option<&str>) -> TemplateImport {
        TemplateImport {
            server: "vcenter.example.com".into(),
            datacenter: "dc1".into(),
            folder: FOLDER.into(),
            template: template.into(),
            release: NEW.into(),
            url: OVA.into(),
            sha256: SHA.into(),
            disk_type: disk_type.map(Into::into),
        }
    }

    fn template_fragment(name: &str) -> Map<String, Value> {
        json!({"template": name}).as_object().cloned().unwrap()
    }

    #[test]
    fn a_current_template_of_the_right_name_is_on_target() {
        let out = run(&spec(MANAGED), &facts(vec![vm(MANAGED, FOLDER, Some(NEW))]));
        assert_eq!(
            out,
            PlatformOutcome::OnTarget {
                target: MANAGED.into()
            }
        );
        // A trailing slash on either side is the same folder.
        let out = run(
            &spec(MANAGED),
            &facts(vec![vm(MANAGED, &format!("{FOLDER}/"), Some(NEW))]),
        );
        assert!(matches!(out, PlatformOutcome::OnTarget { .. }), "{out:?}");
    }

    #[test]
    fn an_outdated_template_is_replaced_with_its_own_disk_type_and_no_patch() {
        let out = run(&spec(MANAGED), &facts(vec![vm(MANAGED, FOLDER, Some(OLD))]));
        assert_eq!(
            out,
            PlatformOutcome::Update {
                target: MANAGED.into(),
                fragment: Map::new(),
                import: Some(Box::new(import(MANAGED, Some("thick")))),
            }
        );
    }

    #[test]
    fn a_missing_template_is_made_with_the_install_disk_type_and_named_in_the_patch() {
        let out = run(&spec("c1-x7k2p-rhcos-generated"), &facts(vec![]));
        assert_eq!(
            out,
            PlatformOutcome::Update {
                target: MANAGED.into(),
                fragment: template_fragment(MANAGED),
                import: Some(Box::new(import(MANAGED, Some("thin")))),
            }
        );
        let mut default_disk = facts(vec![]);
        default_disk.install_disk_type = None;
        let out = run(&spec(""), &default_disk);
        assert!(
            matches!(&out, PlatformOutcome::Update { import: Some(i), .. } if i.disk_type.is_none()),
            "{out:?}"
        );
    }

    #[test]
    fn a_diverged_name_with_a_current_template_is_only_patched() {
        let out = run(&spec(""), &facts(vec![vm(MANAGED, FOLDER, Some(NEW))]));
        assert_eq!(
            out,
            PlatformOutcome::Update {
                target: MANAGED.into(),
                fragment: template_fragment(MANAGED),
                import: None,
            }
        );
    }

    #[test]
    fn the_machinesets_own_template_in_the_folder_is_kept_and_replaced_in_place() {
        let own = "ci-golden-template";
        let vms = vec![vm(own, FOLDER, Some(OLD)), vm(MANAGED, FOLDER, Some(NEW))];
        let out = run(&spec(own), &facts(vms));
        assert_eq!(
            out,
            PlatformOutcome::Update {
                target: own.into(),
                fragment: Map::new(),
                import: Some(Box::new(import(own, Some("thick")))),
            }
        );
    }

    #[test]
    fn a_vm_outside_the_workspace_folder_is_left_to_its_owner() {
        // The MachineSet's template sits elsewhere: the cluster's is used.
        let theirs = "rhcos-golden";
        let out = run(
            &spec(theirs),
            &facts(vec![
                vm(theirs, "/dc1/vm/templates", Some(OLD)),
                vm(MANAGED, FOLDER, Some(NEW)),
            ]),
        );
        assert_eq!(
            out,
            PlatformOutcome::Update {
                target: MANAGED.into(),
                fragment: template_fragment(MANAGED),
                import: None,
            }
        );
        // The cluster's own name sits elsewhere: made anew in the folder,
        // whatever that VM holds, with install-config's disk type.
        let out = run(
            &spec(""),
            &facts(vec![vm(MANAGED, "/dc1/vm/other", Some(NEW))]),
        );
        assert_eq!(
            out,
            PlatformOutcome::Update {
                target: MANAGED.into(),
                fragment: template_fragment(MANAGED),
                import: Some(Box::new(import(MANAGED, Some("thin")))),
            }
        );
    }

    #[test]
    fn a_missing_own_template_falls_back_to_the_clusters() {
        let out = run(
            &spec("deleted-template"),
            &facts(vec![vm(MANAGED, FOLDER, Some(OLD))]),
        );
        assert_eq!(
            out,
            PlatformOutcome::Update {
                target: MANAGED.into(),
                fragment: template_fragment(MANAGED),
                import: Some(Box::new(import(MANAGED, Some("thick")))),
            }
        );
    }

    #[test]
    fn a_virtual_machine_under_the_name_is_never_replaced() {
        let mut running = vm(MANAGED, FOLDER, Some(OLD));
        running.template = false;
        assert_eq!(
            run(&spec(MANAGED), &facts(vec![running.clone()])),
            PlatformOutcome::error(
                "c1-x7k2p-rhcos-fd-a in /dc1/vm/c1-x7k2p is a virtual machine, not a template; it is left alone"
            )
        );
        // Holding the release, it is current: nothing to replace.
        running.release = Some(NEW.into());
        assert!(matches!(
            run(&spec(MANAGED), &facts(vec![running.clone()])),
            PlatformOutcome::OnTarget { .. }
        ));
        // But a MachineSet on another template is not pointed at it: a
        // clone of a running VM is not a boot image (the host refuses the
        // patch too).
        assert_eq!(
            run(&spec("c1-x7k2p-rhcos-deleted"), &facts(vec![running])),
            PlatformOutcome::error(
                "c1-x7k2p-rhcos-fd-a in /dc1/vm/c1-x7k2p is a virtual machine, not a template; it is left alone"
            )
        );
    }

    #[test]
    fn template_names_over_80_characters_are_refused() {
        let mut long = facts(vec![]);
        long.failure_domain = "f".repeat(80);
        let PlatformOutcome::Error { message } = run(&spec(""), &long) else {
            panic!()
        };
        assert!(
            message.starts_with("length of VM template name `c1-x7k2p-rhcos-fff")
                && message.ends_with("exceeds the permitted limit of 80 characters"),
            "{message}"
        );
    }

    #[test]
    fn what_cannot_be_decided_is_an_error() {
        let error = |out: PlatformOutcome| match out {
            PlatformOutcome::Error { message } => message,
            other => panic!("{other:?}"),
        };
        let no_release = error(run(&spec(MANAGED), &facts(vec![vm(MANAGED, FOLDER, None)])));
        assert_eq!(
            no_release,
            "unable to determine RHCOS version of virtual machine: c1-x7k2p-rhcos-fd-a"
        );
        let empty = error(run(
            &spec(MANAGED),
            &facts(vec![vm(MANAGED, FOLDER, Some(""))]),
        ));
        assert_eq!(empty, no_release);
        let mut bad_disk = facts(vec![]);
        bad_disk.install_disk_type = Some("sparse".into());
        assert_eq!(
            error(run(&spec(""), &bad_disk)),
            "disk provisioning type \"sparse\" is not supported"
        );
        assert_eq!(
            error(Vsphere.reconcile(
                &stream(),
                "x86_64",
                &spec(MANAGED),
                &ClusterFacts::default()
            )),
            "the host read nothing from vCenter for this MachineSet"
        );
        let mut no_workspace = spec(MANAGED);
        no_workspace.as_object_mut().unwrap().remove("workspace");
        assert_eq!(
            error(run(&no_workspace, &facts(vec![]))),
            "providerSpec.value.workspace is not set"
        );
        let mut typed = spec("");
        typed["workspace"]["datastore"] = json!(false);
        assert_eq!(
            error(run(&typed, &facts(vec![]))),
            "providerSpec.value.workspace.datastore must be a string, got a boolean"
        );
        let mut no_server = spec("");
        no_server["workspace"]["server"] = json!("");
        assert_eq!(
            error(run(&no_server, &facts(vec![]))),
            "providerSpec.value.workspace.server is not set"
        );
        assert_eq!(
            error(run(
                &json!({"template": 5, "workspace": {"folder": FOLDER}}),
                &facts(vec![])
            )),
            "providerSpec.value.template must be a string, got a number"
        );
        assert_eq!(
            error(run(&json!(["x"]), &facts(vec![]))),
            "providerSpec.value must be an object, got an array"
        );
    }

    #[test]
    fn the_stream_must_give_the_release_and_for_an_import_the_ova() {
        let vcenter = facts(vec![vm(MANAGED, FOLDER, Some(NEW))]);
        let with = |arch: &str, vcenter: &VcenterFacts| {
            let facts = ClusterFacts {
                vcenter: Some(vcenter.clone()),
                ..ClusterFacts::default()
            };
            Vsphere.reconcile(&stream(), arch, &spec(MANAGED), &facts)
        };
        assert_eq!(
            with("s390x", &vcenter),
            PlatformOutcome::error("rhcos-4.21/s390x: artifact 'vmware' not found")
        );
        assert_eq!(
            with("ppc64le", &vcenter),
            PlatformOutcome::error("stream:rhcos-4.21 does not have architecture 'ppc64le'")
        );
        // The release matches: the OVA is not needed, so not asked for.
        assert!(matches!(
            with("aarch64", &vcenter),
            PlatformOutcome::OnTarget { .. }
        ));
        let outdated = facts(vec![vm(MANAGED, FOLDER, Some(OLD))]);
        assert_eq!(
            with("aarch64", &outdated),
            PlatformOutcome::error(
                "rhcos-4.21/aarch64: artifact 'vmware' format 'ova' disk not found"
            )
        );
    }

    #[test]
    fn applying_the_decision_converges() {
        let cases = [
            (spec(""), facts(vec![])),
            (spec(MANAGED), facts(vec![vm(MANAGED, FOLDER, Some(OLD))])),
            (spec("gone"), facts(vec![vm(MANAGED, FOLDER, Some(NEW))])),
        ];
        for (mut spec, mut vcenter) in cases {
            let PlatformOutcome::Update {
                target,
                fragment,
                import,
            } = run(&spec, &vcenter)
            else {
                panic!("{spec}")
            };
            for (key, value) in fragment {
                spec[key] = value;
            }
            if let Some(import) = &import {
                vcenter.apply(import);
            }
            assert_eq!(run(&spec, &vcenter), PlatformOutcome::OnTarget { target });
        }
    }
}
