//! vSphere in the boot image job, sans-IO: which failure domain of the
//! Infrastructure a MachineSet's workspace matches (upstream
//! `createNewVMTemplate`; since PR #6477 no match is a skip, with no
//! vCenter login), what the host then reads from vCenter ([`Lookup`]),
//! the facts the guest is given from that read, and the import the host
//! executes once the guest's request has passed the authority
//! ([`Lookup::import_plan`]). The reads and the import themselves are the
//! controller's and the writer's, over the connections of `live`.

use std::sync::Arc;

use mco_bootimage::vcenter::{TemplateImport, VcenterFacts, VcenterVm};
use mco_bootimage::{Decision, MachineSetView};
use serde::Deserialize;

use crate::objects::{ConfigMapData, Infrastructure, VsphereFailureDomain};

pub mod live;

/// `providerSpec.value.workspace`, as upstream's failure-domain match and
/// import read it. A `null` field reads as empty, as Go's `encoding/json`
/// leaves a string it is given `null` for: the whole workspace must not
/// read as empty because one field is `null`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Workspace {
    #[serde(deserialize_with = "null_as_default")]
    pub server: String,
    #[serde(deserialize_with = "null_as_default")]
    pub datacenter: String,
    #[serde(deserialize_with = "null_as_default")]
    pub folder: String,
    #[serde(deserialize_with = "null_as_default")]
    pub datastore: String,
    #[serde(deserialize_with = "null_as_default")]
    pub resource_pool: String,
    #[serde(deserialize_with = "null_as_default")]
    pub vm_group: String,
}

/// The parts of a vSphere providerSpec the host reads itself.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct VsphereSpec {
    #[serde(deserialize_with = "null_as_default")]
    template: String,
    workspace: Option<Workspace>,
    #[serde(rename = "tagIDs", deserialize_with = "null_as_default")]
    tag_ids: Vec<String>,
}

/// `null` as the type's empty value; any other wrong type is still an error.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// What the host reads from vCenter for one vSphere MachineSet, and what
/// it derived on the way: the failure domain, the vCenter and datacenter
/// to read, and the template names the guest may resolve to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    /// Infrastructure `status.infrastructureName`.
    pub infrastructure_name: String,
    pub failure_domain: VsphereFailureDomain,
    pub workspace: Workspace,
    /// The MachineSet's own template (when set and not the cluster's name)
    /// and the cluster's, `<infrastructureName>-rhcos-<failure domain>`.
    pub names: Vec<String>,
    /// `providerSpec.value.tagIDs`, attached to a new template after the
    /// infrastructure's own tag.
    pub tag_ids: Vec<String>,
    /// The vCenter's port, when the Infrastructure names one other than 443.
    pub port: Option<u16>,
}

/// A vCenter read a pass (`plan::Pass`) needs before a vSphere
/// MachineSet's guest can decide: the MachineSet's index in the pass and
/// its lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VcenterRead {
    pub index: usize,
    pub lookup: Arc<Lookup>,
}

/// Where the host's vSphere rules leave a MachineSet.
#[derive(Debug, Clone)]
pub enum Match {
    /// Read vCenter, then ask the guest.
    Read(Box<Lookup>),
    /// Decided without vCenter: no vSphere platform spec, or no failure
    /// domain for the workspace.
    Decided(Decision),
}

/// The host's vSphere rules for one MachineSet. `None` when its
/// providerSpec has no readable workspace: the guest is asked without
/// facts and says what is missing.
pub fn prepare(infra: &Infrastructure, ms: &MachineSetView) -> Option<Match> {
    let noun = ms.kind.noun();
    let platform = match &infra.spec.platform_spec.vsphere {
        None => {
            return Some(Match::Decided(Decision::noop(format!(
                "{noun} {}: Infrastructure cluster has no spec.platformSpec.vsphere; nothing to do",
                ms.name
            ))));
        }
        Some(lenient) => match &lenient.0 {
            Ok(platform) => platform,
            Err(err) => {
                return Some(Match::Decided(Decision::error(format!(
                    "failed to reconcile {noun} {}, err: invalid Infrastructure spec.platformSpec.vsphere: {err}",
                    ms.name
                ))));
            }
        },
    };
    let spec = VsphereSpec::deserialize(ms.provider_spec.as_deref()?).ok()?;
    let workspace = spec.workspace?;
    let vcenter = platform
        .vcenters
        .iter()
        .find(|v| v.server == workspace.server);
    let matched = platform
        .failure_domains
        .iter()
        .find(|fd| vcenter.is_some() && matches(fd, &workspace));
    let Some(failure_domain) = matched else {
        return Some(Match::Decided(Decision::skip(format!(
            "providerSpec workspace (server: {}, datacenter: {}, datastore: {}, resourcePool: {}, \
             vmGroup: {}) does not match any vCenter/failure domain in the Infrastructure object, \
             skipping boot image update of {noun} {}",
            workspace.server,
            workspace.datacenter,
            workspace.datastore,
            workspace.resource_pool,
            workspace.vm_group,
            ms.name
        ))));
    };
    // The template's name and its tag both carry it.
    let Some(infrastructure_name) = infra
        .status
        .infrastructure_name
        .clone()
        .filter(|name| !name.is_empty())
    else {
        return Some(Match::Decided(Decision::error(format!(
            "failed to reconcile {noun} {}, err: Infrastructure cluster has no status.infrastructureName",
            ms.name
        ))));
    };
    let managed = managed_name(&infrastructure_name, &failure_domain.name);
    let mut names = Vec::new();
    if !spec.template.is_empty() && spec.template != managed {
        names.push(spec.template);
    }
    names.push(managed);
    Some(Match::Read(Box::new(Lookup {
        infrastructure_name,
        failure_domain: failure_domain.clone(),
        workspace,
        names,
        tag_ids: spec.tag_ids,
        port: vcenter.and_then(|v| v.port).filter(|&port| port != 443),
    })))
}

/// Upstream's match: every field of the failure domain that places a VM
/// equals the workspace's, resource pools compared cleaned.
fn matches(fd: &VsphereFailureDomain, workspace: &Workspace) -> bool {
    let topology = &fd.topology;
    let vm_group = fd
        .zone_affinity
        .as_ref()
        .and_then(|z| z.host_group.as_ref());
    let vm_group = vm_group.map_or("", |h| h.vm_group.as_str());
    fd.server == workspace.server
        && topology.datacenter == workspace.datacenter
        && topology.datastore == workspace.datastore
        && vm_group == workspace.vm_group
        && clean(&topology.resource_pool) == clean(&workspace.resource_pool)
}

/// Go's `path.Clean`: one slash between elements, no `.`, `..` resolved,
/// no trailing slash; `.` for nothing.
fn clean(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if rooted => {}
                _ => parts.push(".."),
            },
            part => parts.push(part),
        }
    }
    match (rooted, parts.is_empty()) {
        (true, _) => format!("/{}", parts.join("/")),
        (false, true) => ".".to_owned(),
        (false, false) => parts.join("/"),
    }
}

/// `<infrastructureName>-rhcos-<failure domain>`.
fn managed_name(infrastructure_name: &str, failure_domain: &str) -> String {
    format!("{infrastructure_name}-rhcos-{failure_domain}")
}

/// What a vCenter read gave for one [`Lookup`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    /// The VMs of the datacenter under the lookup's names (others are
    /// dropped: the guest sees only what it may resolve to).
    pub vms: Vec<VcenterVm>,
    /// install-config's `platform.vsphere.diskType`.
    pub install_disk_type: Option<String>,
}

impl Lookup {
    /// Where the vCenter answers: `server`, or `server:port` when the
    /// Infrastructure names another port than 443. Credentials are keyed
    /// by `server` alone (a Secret key cannot hold a `:`).
    pub fn address(&self) -> String {
        match self.port {
            Some(port) => format!("{}:{port}", self.workspace.server),
            None => self.workspace.server.clone(),
        }
    }

    /// The cluster's own template name for this failure domain.
    pub fn managed(&self) -> String {
        managed_name(&self.infrastructure_name, &self.failure_domain.name)
    }

    /// The guest's facts from what was read.
    pub fn facts(&self, answer: Answer) -> VcenterFacts {
        VcenterFacts {
            infrastructure_name: self.infrastructure_name.clone(),
            failure_domain: self.failure_domain.name.clone(),
            install_disk_type: answer.install_disk_type,
            vms: answer
                .vms
                .into_iter()
                .filter(|vm| self.names.contains(&vm.name))
                .collect(),
        }
    }

    /// What the host imports for a request that passed the authority: the
    /// template, OVA and disk type the guest asked for (checked equal to
    /// the host's own), placed where the failure domain and the workspace
    /// say, with the cluster's tag and the MachineSet's. `Err` for a disk
    /// type the client does not know (the authority admits only those).
    pub fn import_plan(&self, import: &TemplateImport) -> Result<ImportPlan, String> {
        let topology = &self.failure_domain.topology;
        let mut tags = vec![self.infrastructure_name.clone()];
        tags.extend(self.tag_ids.iter().cloned());
        let disk_type = import
            .disk_type
            .as_deref()
            .map(str::parse::<mco_vsphere::DiskType>)
            .transpose()
            .map_err(|e| e.to_string())?;
        Ok(ImportPlan {
            server: self.workspace.server.clone(),
            address: self.address(),
            placement: mco_vsphere::ImportPlan {
                datacenter: topology.datacenter.clone(),
                folder: self.workspace.folder.clone(),
                compute_cluster: topology.compute_cluster.clone(),
                resource_pool: self.workspace.resource_pool.clone(),
                datastore: self.workspace.datastore.clone(),
                network: topology.networks.first().cloned().unwrap_or_default(),
                template: import.template.clone(),
                disk_type,
                tags,
            },
            url: import.url.clone(),
            sha256: import.sha256.clone(),
            release: import.release.clone(),
        })
    }
}

/// What vCenter holds, as `eval bootimage --vcenter` reads it: the VMs the
/// host would find, one entry each.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Inventory {
    pub vms: Vec<VcenterVm>,
}

impl Inventory {
    /// What vCenter holds once `import` is done.
    pub fn apply(&mut self, import: &TemplateImport) {
        let mut facts = VcenterFacts {
            vms: std::mem::take(&mut self.vms),
            ..VcenterFacts::default()
        };
        facts.apply(import);
        self.vms = facts.vms;
    }
}

/// Where install-config is kept: ConfigMap `kube-system/cluster-config-v1`,
/// key `install-config`. Its `platform.vsphere.diskType` is the disk type
/// of a template made anew (no template to copy it from).
pub const INSTALL_CONFIG_NAMESPACE: &str = "kube-system";
pub const INSTALL_CONFIG_CONFIGMAP: &str = "cluster-config-v1";
const INSTALL_CONFIG_KEY: &str = "install-config";

/// install-config's `platform.vsphere.diskType` (`None` when unset or
/// empty: the datastore's default policy), or why it cannot be read, in
/// upstream's words (`getDiskTypeFromInstallConfig`).
pub fn install_disk_type(cm: &ConfigMapData) -> Result<Option<String>, String> {
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct InstallConfig {
        platform: InstallPlatform,
    }
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct InstallPlatform {
        vsphere: Option<InstallVsphere>,
    }
    #[derive(Deserialize, Default)]
    #[serde(default, rename_all = "camelCase")]
    struct InstallVsphere {
        disk_type: Option<String>,
    }
    let text = cm.data.get(INSTALL_CONFIG_KEY).ok_or_else(|| {
        format!("{INSTALL_CONFIG_CONFIGMAP} configmap has no \"{INSTALL_CONFIG_KEY}\" key")
    })?;
    let config: InstallConfig =
        serde_saphyr::from_str(text).map_err(|e| format!("failed to parse install-config: {e}"))?;
    let disk_type = config.platform.vsphere.and_then(|v| v.disk_type);
    Ok(disk_type.filter(|d| !d.is_empty()))
}

/// One template import, as the writer hands it to vCenter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportPlan {
    /// The workspace's vCenter, as its credentials are keyed.
    pub server: String,
    /// Where it answers ([`Lookup::address`]).
    pub address: String,
    /// Where the template goes; tags: the infrastructure's first.
    pub placement: mco_vsphere::ImportPlan,
    pub url: String,
    pub sha256: String,
    pub release: String,
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::objects::Decoded;

    fn infra(spec: Value) -> Infrastructure {
        let object = json!({"kind": "Infrastructure", "spec": {"platformSpec": {"type": "VSphere", "vsphere": spec}},
            "status": {"infrastructureName": "c1-x7k2p", "platformStatus": {"type": "VSphere"}}});
        Decoded::<Infrastructure>::of(&object)
            .object
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn fd(name: &str, pool: &str) -> Value {
        json!({"name": name, "server": "vc.example.com", "topology": {
            "datacenter": "dc1", "computeCluster": "/dc1/host/cl1", "networks": ["VM Network"],
            "datastore": "/dc1/datastore/ds1", "resourcePool": pool, "folder": "/dc1/vm/c1"}})
    }

    fn platform(fds: Vec<Value>) -> Value {
        json!({"vcenters": [{"server": "vc.example.com"}], "failureDomains": fds})
    }

    fn ms(workspace: Value, template: &str) -> MachineSetView {
        let object = json!({"kind": "MachineSet", "metadata": {"name": "w"},
            "spec": {"template": {"spec": {"providerSpec": {"value": {
                "template": template, "workspace": workspace, "tagIDs": ["urn:tag:2"]}}}}}});
        MachineSetView::from_object(&object).unwrap_or_else(|e| panic!("{e}"))
    }

    fn workspace(pool: &str) -> Value {
        json!({"server": "vc.example.com", "datacenter": "dc1", "datastore": "/dc1/datastore/ds1",
               "resourcePool": pool, "folder": "/dc1/vm/c1"})
    }

    #[test]
    fn the_workspace_picks_its_failure_domain_and_the_names_to_read() {
        let infra = infra(platform(vec![
            fd("fd-a", "/dc1/host/cl1/Resources"),
            fd("fd-b", "/dc1/host/cl2//Resources/"),
        ]));
        let Some(Match::Read(lookup)) = prepare(
            &infra,
            &ms(workspace("/dc1/host/cl2/./Resources"), "installer-template"),
        ) else {
            panic!("no lookup")
        };
        assert_eq!(lookup.failure_domain.name, "fd-b");
        assert_eq!(lookup.names, ["installer-template", "c1-x7k2p-rhcos-fd-b"]);
        assert_eq!(lookup.managed(), "c1-x7k2p-rhcos-fd-b");
        // The cluster's own name is read once.
        let Some(Match::Read(lookup)) = prepare(
            &infra,
            &ms(workspace("/dc1/host/cl1/Resources"), "c1-x7k2p-rhcos-fd-a"),
        ) else {
            panic!("no lookup")
        };
        assert_eq!(lookup.names, ["c1-x7k2p-rhcos-fd-a"]);
    }

    #[test]
    fn a_null_workspace_field_reads_as_empty_and_keeps_the_others() {
        let mut nulls = workspace("/dc1/host/cl1/Resources");
        nulls["datastore"] = Value::Null;
        nulls["vmGroup"] = Value::Null;
        let spec = json!({"template": null, "workspace": nulls, "tagIDs": null});
        let read = VsphereSpec::deserialize(&spec).unwrap_or_else(|e| panic!("{e}"));
        let kept = read.workspace.unwrap_or_else(|| panic!("no workspace"));
        assert_eq!(kept.server, "vc.example.com");
        assert_eq!(kept.folder, "/dc1/vm/c1");
        assert_eq!(kept.datastore, "");
        assert_eq!((read.template.as_str(), read.tag_ids.len()), ("", 0));
        // Another wrong type is still an error, not an empty field.
        let number = json!({"workspace": {"server": 7}});
        assert!(VsphereSpec::deserialize(&number).is_err());
        let infra = infra(platform(vec![fd("fd-a", "/dc1/host/cl1/Resources")]));
        let mut nulls = workspace("/dc1/host/cl1/Resources");
        nulls["datastore"] = Value::Null;
        assert!(
            matches!(prepare(&infra, &ms(nulls, "t")), Some(Match::Decided(d)) if d.action() == "skip"),
            "a null datastore matches no failure domain that names one"
        );
    }

    #[test]
    fn no_match_no_platform_spec_and_no_workspace() {
        let infra_ = infra(platform(vec![fd("fd-a", "/dc1/host/cl1/Resources")]));
        let Some(Match::Decided(skip)) = prepare(&infra_, &ms(workspace("/dc1/host/x"), "t"))
        else {
            panic!()
        };
        assert_eq!(skip.action(), "skip");
        assert!(
            skip.to_json()
                .contains("does not match any vCenter/failure domain"),
            "{}",
            skip.to_json()
        );
        // A vCenter the Infrastructure does not list matches nothing,
        // even if a failure domain names it.
        let unlisted = infra(
            json!({"vcenters": [], "failureDomains": [fd("fd-a", "/dc1/host/cl1/Resources")]}),
        );
        let decided = prepare(&unlisted, &ms(workspace("/dc1/host/cl1/Resources"), "t"));
        assert!(matches!(decided, Some(Match::Decided(d)) if d.action() == "skip"));
        let bare = Decoded::<Infrastructure>::of(&json!({"kind": "Infrastructure"}))
            .object
            .unwrap_or_default();
        assert!(
            matches!(prepare(&bare, &ms(workspace("/p"), "t")), Some(Match::Decided(d)) if d.action() == "noop")
        );
        let broken = Decoded::<Infrastructure>::of(
            &json!({"kind": "Infrastructure", "spec": {"platformSpec": {"vsphere": {"failureDomains": 7}}}}),
        )
        .object
        .unwrap_or_else(|e| panic!("the rest still reads: {e}"));
        assert!(
            matches!(prepare(&broken, &ms(workspace("/p"), "t")), Some(Match::Decided(d)) if d.action() == "error")
        );
        let no_workspace =
            MachineSetView::from_object(&json!({"kind": "MachineSet", "metadata": {"name": "w"},
            "spec": {"template": {"spec": {"providerSpec": {"value": {"template": "t"}}}}}}))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(prepare(&infra_, &no_workspace).is_none());
        // No infrastructureName: no template name to resolve, no tag.
        let mut unnamed = infra_.clone();
        unnamed.status.infrastructure_name = Some(String::new());
        let Some(Match::Decided(error)) =
            prepare(&unnamed, &ms(workspace("/dc1/host/cl1/Resources"), "t"))
        else {
            panic!("read without an infrastructure name")
        };
        assert_eq!(error.action(), "error");
        assert!(
            error
                .to_json()
                .contains("Infrastructure cluster has no status.infrastructureName"),
            "{}",
            error.to_json()
        );
    }

    #[test]
    fn install_config_gives_the_disk_type_of_new_templates() {
        let cm = |text: &str| ConfigMapData {
            data: [(INSTALL_CONFIG_KEY.to_owned(), text.to_owned())].into(),
        };
        let read = |text: &str| install_disk_type(&cm(text));
        assert_eq!(
            read("platform:\n  vsphere:\n    diskType: thin\n"),
            Ok(Some("thin".into()))
        );
        assert_eq!(read("platform:\n  vsphere:\n    diskType: ''\n"), Ok(None));
        assert_eq!(read("platform:\n  aws: {}\n"), Ok(None));
        assert_eq!(read("{}"), Ok(None));
        assert!(
            read("platform: [").is_err_and(|e| e.starts_with("failed to parse install-config: ")),
        );
        assert_eq!(
            install_disk_type(&ConfigMapData::default()),
            Err("cluster-config-v1 configmap has no \"install-config\" key".into())
        );
    }

    #[test]
    fn go_path_clean() {
        for (path, cleaned) in [
            ("", "."),
            ("/", "/"),
            ("/a/b/", "/a/b"),
            ("//a//b", "/a/b"),
            ("/a/./b/../c", "/a/c"),
            ("/../a", "/a"),
            ("a/../../b", "../b"),
        ] {
            assert_eq!(clean(path), cleaned, "{path}");
        }
    }

    #[test]
    fn the_import_goes_where_the_host_says_with_the_clusters_tag_first() {
        let one = infra(platform(vec![fd("fd-a", "/dc1/host/cl1/Resources")]));
        let Some(Match::Read(lookup)) =
            prepare(&one, &ms(workspace("/dc1/host/cl1/Resources"), ""))
        else {
            panic!()
        };
        let facts = lookup.facts(Answer {
            vms: vec![
                VcenterVm {
                    name: "c1-x7k2p-rhcos-fd-a".into(),
                    folder: "/dc1/vm/c1".into(),
                    ..VcenterVm::default()
                },
                VcenterVm {
                    name: "unrelated".into(),
                    ..VcenterVm::default()
                },
            ],
            install_disk_type: Some("thin".into()),
        });
        assert_eq!(facts.vms.len(), 1);
        assert_eq!(facts.failure_domain, "fd-a");
        let plan = lookup
            .import_plan(&TemplateImport {
                server: "vc.example.com".into(),
                datacenter: "dc1".into(),
                folder: "/dc1/vm/c1".into(),
                template: "c1-x7k2p-rhcos-fd-a".into(),
                release: "9.8".into(),
                url: "https://m/x.ova".into(),
                sha256: "ab".into(),
                disk_type: Some("thin".into()),
            })
            .unwrap();
        assert_eq!(plan.placement.compute_cluster, "/dc1/host/cl1");
        assert_eq!(plan.placement.network, "VM Network");
        assert_eq!(plan.placement.tags, ["c1-x7k2p", "urn:tag:2"]);
        assert_eq!(plan.placement.disk_type, Some(mco_vsphere::DiskType::Thin));
        assert_eq!(plan.address, "vc.example.com");
        let on_port = infra(
            json!({"vcenters": [{"server": "vc.example.com", "port": 8443}],
            "failureDomains": [fd("fd-a", "/dc1/host/cl1/Resources")]}),
        );
        let Some(Match::Read(lookup)) =
            prepare(&on_port, &ms(workspace("/dc1/host/cl1/Resources"), ""))
        else {
            panic!()
        };
        assert_eq!(lookup.address(), "vc.example.com:8443");
    }
}
