//! The boot image job's audit (`guests audit --job bootImage.<platform>`,
//! `JobKind::audit`): each MachineSet (or the ControlPlaneMachineSet)
//! decided with each module as `eval bootimage` decides one
//! ([`BootImageInputs::decision`], the user data given where the planner
//! asks for it), and each decision keyed by what it is and, for a patch,
//! what it changes. The objects come from files or from the cluster (the
//! MachineSets, the ControlPlaneMachineSet and the objects the controller
//! watches, each decoded as its watch decodes it).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DynamicObject};
use kube::{Client, Resource};
use mco_bootimage::{Decision, MachineKind};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tracing::info_span;

use super::BootImageGuest;
use super::error::Subject;
use super::eval::{
    BootImageInputs, BootImagePaths, ClusterObjects, EvalError, Machine, inventory, known_images,
};
use super::objects::{
    CONTROL_PLANE_MACHINE_SET_NAME, Decoded, Input, MACHINE_API_NAMESPACE, STREAM_CONFIGMAP,
    STREAM_NAMESPACE, UserDataSecret,
};
use super::rules;
use mco_cluster::decode::Isolated;
use mco_cluster::resources::{
    CLUSTER_VERSION, CONTROL_PLANE_MACHINE_SET, INFRASTRUCTURE, MACHINE_CONFIGURATION, MACHINE_SET,
};
use mco_job::audit_files::{FEATUREGATE, FileAudit, FileFlag, Files, FilesError, Use, pair};
use mco_job::feature_gates::{self, Modelled};
use mco_job::manifests::Names;
use mco_job::manifests::{InputError, Reader};
use mco_registry::audit::cluster::{ReadError, dynamic, get, pages, readable};
use mco_registry::audit::{Audit, Keyed};
use mco_registry::{EntryName, Served};

/// The key saying what a decision is (`noop`, `skip`, `error` with its
/// text, or `patch` with the image it moves to).
pub const DECISION: &str = "decision";

/// The keys of one decision: [`DECISION`], and for a patch the merge
/// patch, the user-data Secret upgrade and the template import, as
/// compact JSON.
pub fn decision_fields(decision: &Decision) -> Vec<(String, String)> {
    let what = |text: String| vec![(DECISION.to_owned(), text)];
    match decision {
        Decision::Noop { reason } => what(format!("noop: {reason}")),
        Decision::Skip { reason } => what(format!("skip: {reason}")),
        Decision::Error { message } => what(format!("error: {message}")),
        Decision::Patch {
            target,
            patch,
            user_data_secret,
            import,
        } => {
            let mut keyed = what(format!("patch to {target}"));
            keyed.push(("patch".to_owned(), patch.to_string()));
            if let Some(upgrade) = user_data_secret {
                let upgrade = serde_json::to_string(upgrade).unwrap_or_default();
                keyed.push(("userDataSecret".to_owned(), upgrade));
            }
            if let Some(import) = import {
                let import = serde_json::to_string(import).unwrap_or_default();
                keyed.push(("import".to_owned(), import));
            }
            keyed
        }
    }
}

/// `guests audit --job bootImage.<Platform>` from files: `eval
/// bootimage`'s, with any number of MachineSets and user-data Secrets, and
/// the ControlPlaneMachineSet beside them.
pub const FROM_FILES: FileAudit = FileAudit {
    flags: FLAGS,
    audit: from_files,
};

const FLAGS: &[FileFlag] = &[
    FileFlag::new(
        "machinesets",
        Use::Objects,
        "The MachineSets to audit a bootImage job on, any number (instead of the cluster's)",
    ),
    FileFlag::new(
        "controlplanemachineset",
        Use::Optional,
        "The ControlPlaneMachineSet, audited beside the MachineSets",
    ),
    FileFlag::new(
        "configmap",
        Use::Required,
        "The coreos-bootimages ConfigMap",
    ),
    FileFlag::new(
        "infrastructure",
        Use::Required,
        "Infrastructure `cluster` (its platform must be the job's)",
    ),
    FileFlag::new(
        "clusterversion",
        Use::Optional,
        "ClusterVersion `version` (stability gate, multi-arch)",
    ),
    FileFlag::new(
        "machineconfiguration",
        Use::Shared(Some("enrollment")),
        "MachineConfiguration `cluster`",
    ),
    FEATUREGATE,
    FileFlag::new(
        "user-data-secrets",
        Use::Optional,
        "The MachineSets' user-data Secrets, any number, found by the name each MachineSet gives",
    ),
    FileFlag::new(
        "known-images",
        Use::Optional,
        "Extra boot images that count as RHCOS (lines, or a ConfigMap)",
    ),
    FileFlag::new(
        "vcenter",
        Use::Optional,
        "vSphere: what the MachineSets' vCenter holds (as `eval bootimage --vcenter`)",
    ),
    FileFlag::new(
        "install-config",
        Use::Optional,
        "vSphere: ConfigMap kube-system/cluster-config-v1 (as `eval bootimage --install-config`)",
    ),
];

/// The audit of the objects of `files` ([`FileAudit::audit`]).
fn from_files(
    files: &Files,
    served: &Served,
    job: &EntryName,
    limit: usize,
    gates: &Modelled,
) -> Result<Audit, FilesError> {
    let guests = pair::<BootImageGuest>(served, job)?;
    let arch = super::host_stream_arch().map_err(ReadError::Cluster)?;
    let paths = BootImagePaths {
        object: (MachineKind::MachineSet, files.objects()),
        configmap: files.required("configmap")?,
        infrastructure: files.required("infrastructure")?,
        clusterversion: files.get("clusterversion"),
        machineconfiguration: files.get("machineconfiguration"),
        user_data_secret: files.get("user-data-secrets"),
        known_images: files.get("known-images"),
        featuregate: files.get("featuregate"),
        vcenter: files.get("vcenter"),
        install_config: files.get("install-config"),
        // An audit has no `--ec2` (see `BootImageObjects::read`).
        ec2: None,
    };
    let read = BootImageObjects::read(&paths, files.get("controlplanemachineset"), gates)?;
    check_cluster(&read.cluster, job.key().unwrap_or_default())?;
    let mut audit = BootImageAudit::new(guests, &read.cluster, &read.secrets, arch, limit);
    for machine in read.objects {
        audit.add(machine);
    }
    Ok(audit.finish())
}

/// The user-data Secrets an audit was given, by name.
pub type Secrets = BTreeMap<String, Decoded<UserDataSecret>>;

/// What a boot image audit reads: the objects every MachineSet shares,
/// the user-data Secrets, and the objects audited (the MachineSets, each
/// named once, then the ControlPlaneMachineSet).
pub struct BootImageObjects {
    pub cluster: ClusterObjects,
    pub secrets: Secrets,
    pub objects: Vec<Machine>,
}

impl BootImageObjects {
    /// Reads the MachineSets of `files.object`, any number, and the
    /// ControlPlaneMachineSet of `controlplanemachineset`, with what they
    /// share (`files.ec2` aside: the audit does not consult EC2), the
    /// FeatureGate's `gates` (every job's) among them.
    pub fn read(
        files: &BootImagePaths,
        controlplanemachineset: Option<&str>,
        gates: &Modelled,
    ) -> Result<BootImageObjects, InputError> {
        let mut reader = Reader::default();
        let (_, machinesets_path) = files.object;
        let machinesets: Vec<Machine> = reader
            .objects(machinesets_path, "MachineSet")?
            .into_iter()
            .map(|object| Machine::read(MachineKind::MachineSet, object))
            .collect();
        let mut names = Names::new(machinesets_path, "MachineSet");
        for machine in &machinesets {
            names.check(machine.view.metadata.name.as_deref())?;
        }
        let control_plane = controlplanemachineset
            .map(|path| reader.object(path, "ControlPlaneMachineSet"))
            .transpose()?
            .map(|object| Machine::read(MachineKind::ControlPlaneMachineSet, object));
        let clusterversion = files
            .clusterversion
            .map(|path| reader.object(path, "ClusterVersion"))
            .transpose()?;
        let machineconfiguration = files
            .machineconfiguration
            .map(|path| reader.object(path, "MachineConfiguration"))
            .transpose()?;
        let install_config = files
            .install_config
            .map(|path| reader.object(path, "ConfigMap"))
            .transpose()?;
        let configmap = reader.object(files.configmap, "ConfigMap")?;
        let infrastructure = reader.object(files.infrastructure, "Infrastructure")?;
        let mut secrets = Secrets::new();
        for object in reader.all(files.user_data_secret, "Secret")? {
            let secret = Decoded::<UserDataSecret>::of(&object);
            // The first of a name is the one found, as a lookup by name finds it.
            secrets.entry(secret.name().to_owned()).or_insert(secret);
        }
        let known_images = match files.known_images {
            Some(path) => known_images(path, &reader.text(path)?)?,
            None => Default::default(),
        };
        let gates = feature_gates::read(
            &mut reader,
            files.featuregate,
            clusterversion.as_ref(),
            gates,
        )?;
        let vcenter = match files.vcenter {
            Some(path) => Some(inventory(path, &reader.text(path)?)?),
            None => None,
        };
        Ok(BootImageObjects {
            cluster: ClusterObjects {
                configmap: Decoded::of(&configmap),
                infrastructure: Decoded::of(&infrastructure),
                clusterversion: clusterversion.as_ref().map(Decoded::of),
                machineconfiguration: machineconfiguration.as_ref().map(Decoded::of),
                known_images,
                gates,
                vcenter,
                install_config: install_config.as_ref().map(Decoded::of),
                // EC2 is not consulted: both modules decide AWS MachineSets
                // from the static AMI lists.
                ec2: None,
            },
            secrets,
            objects: machinesets.into_iter().chain(control_plane).collect(),
        })
    }
}

/// The audit of `platform`'s job on the cluster's MachineSets and its
/// ControlPlaneMachineSet, with the objects the controller watches.
pub async fn on_cluster(
    client: &Client,
    platform: &str,
    guests: (&BootImageGuest, &BootImageGuest),
    control_plane_arch: &str,
    limit: usize,
    gates: &Modelled,
) -> Result<Audit, ReadError> {
    let stream = Api::<ConfigMap>::namespaced(client.clone(), STREAM_NAMESPACE);
    let configmap = decoded(stream, STREAM_CONFIGMAP, "the CoreOS stream ConfigMap").await?;
    let infrastructure = decoded(
        dynamic(client, None, INFRASTRUCTURE),
        "cluster",
        "Infrastructure cluster",
    )
    .await?;
    let cluster = ClusterObjects {
        configmap: required(configmap, "ConfigMap coreos-bootimages")?,
        infrastructure: required(infrastructure, "Infrastructure cluster")?,
        clusterversion: decoded(
            dynamic(client, None, CLUSTER_VERSION),
            "version",
            "ClusterVersion version",
        )
        .await?,
        machineconfiguration: decoded(
            dynamic(client, None, MACHINE_CONFIGURATION),
            "cluster",
            "MachineConfiguration cluster",
        )
        .await?,
        known_images: BTreeSet::new(),
        gates: feature_gates::read_cluster(client, gates)
            .await
            .map_err(ReadError::Cluster)?,
        // The audit reads the cluster only: a vSphere MachineSet, whose
        // decision needs vCenter, is the same input error for both modules.
        vcenter: None,
        install_config: None,
        // Nor EC2: both modules decide AWS MachineSets from the static lists.
        ec2: None,
    };
    check_cluster(&cluster, platform)?;
    let mut machines = Vec::new();
    // Each MachineSet decoded on its own, as the controller's watch
    // decodes it: one nested too deep is left out, not the whole list.
    let machinesets = Api::<Isolated<DynamicObject>>::namespaced_with(
        client.clone(),
        MACHINE_API_NAMESPACE,
        &MACHINE_SET.api_resource(),
    );
    pages(&machinesets, "MachineSets", |page| {
        machines.extend(readable(page).filter_map(|object| {
            let object = serde_json::to_value(object).ok()?;
            Some(Machine::read(MachineKind::MachineSet, object))
        }))
    })
    .await?;
    let control_plane = get(
        dynamic(
            client,
            Some(MACHINE_API_NAMESPACE),
            CONTROL_PLANE_MACHINE_SET,
        ),
        CONTROL_PLANE_MACHINE_SET_NAME,
        "ControlPlaneMachineSet cluster",
    )
    .await?
    .and_then(|object| serde_json::to_value(object).ok());
    machines.extend(
        control_plane.map(|object| Machine::read(MachineKind::ControlPlaneMachineSet, object)),
    );
    let secrets = user_data_secrets(client, &machines).await?;
    let mut audit = BootImageAudit::new(guests, &cluster, &secrets, control_plane_arch, limit);
    for machine in machines {
        audit.add(machine);
    }
    Ok(audit.finish())
}

/// `object`, which the job cannot go without.
fn required<T>(object: Option<T>, what: &str) -> Result<T, ReadError> {
    object.ok_or_else(|| ReadError::Cluster(format!("the cluster has no {what}")))
}

/// One object, decoded as the controller's watch decodes it; `None` when
/// it or its kind is not there.
async fn decoded<K, T>(
    api: Api<K>,
    name: &str,
    what: &'static str,
) -> Result<Option<Decoded<T>>, ReadError>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug,
    T: Input,
{
    let object = get(api, name, what).await?;
    Ok(object
        .and_then(|object| serde_json::to_value(object).ok())
        .map(|object| Decoded::of(&object)))
}

/// The objects a boot image audit shares are readable, and the cluster is
/// on the job's platform: another platform's MachineSets never reach this
/// job's modules.
pub fn check_cluster(cluster: &ClusterObjects, platform: &str) -> Result<(), ReadError> {
    let unreadable = |e: mco_bootimage::InputError| ReadError::Cluster(e.to_string());
    let infrastructure = cluster.infrastructure.typed().map_err(unreadable)?;
    let found = rules::platform_type(infrastructure).map_err(unreadable)?;
    if found != platform {
        return Err(ReadError::Cluster(format!(
            "Infrastructure cluster is on platform {found}; job bootImage.{platform} audits \
             another platform's guests"
        )));
    }
    cluster.configmap.typed().map_err(unreadable)?;
    Ok(())
}

/// The user-data Secrets the objects name, each read once; one that is
/// missing is left out (the host rules then decide without it).
async fn user_data_secrets(client: &Client, machines: &[Machine]) -> Result<Secrets, ReadError> {
    let names: BTreeSet<&str> = machines
        .iter()
        .filter_map(Machine::user_data_secret)
        .collect();
    let api = Api::<Secret>::namespaced(client.clone(), MACHINE_API_NAMESPACE);
    let mut secrets = Secrets::new();
    for name in names {
        if let Some(secret) = get(api.clone(), name, "a user-data Secret").await? {
            let decoded = Decoded {
                metadata: secret.metadata.clone(),
                object: Ok(UserDataSecret::from(secret)),
            };
            secrets.insert(name.to_owned(), decoded);
        }
    }
    Ok(secrets)
}

/// An audit of one platform's boot image job under way.
pub struct BootImageAudit<'a> {
    active: &'a BootImageGuest,
    candidate: &'a BootImageGuest,
    cluster: &'a ClusterObjects,
    /// The user-data Secrets, found by the name a MachineSet gives.
    secrets: &'a Secrets,
    control_plane_arch: &'a str,
    now: Timestamp,
    audit: Audit,
}

impl<'a> BootImageAudit<'a> {
    pub fn new(
        (active, candidate): (&'a BootImageGuest, &'a BootImageGuest),
        cluster: &'a ClusterObjects,
        secrets: &'a Secrets,
        control_plane_arch: &'a str,
        limit: usize,
    ) -> BootImageAudit<'a> {
        BootImageAudit {
            active,
            candidate,
            cluster,
            secrets,
            control_plane_arch,
            now: Timestamp::now(),
            audit: Audit::new(limit),
        }
    }

    /// Decides `machine` with both modules and compares the decisions.
    /// Input the host rules refuse is the same `error` for both: it never
    /// reaches a module.
    pub fn add(&mut self, machine: Machine) {
        let secret = machine
            .user_data_secret()
            .and_then(|name| self.secrets.get(name));
        let inputs = BootImageInputs::of(machine, self.cluster, secret);
        let subject = Subject {
            kind: inputs.kind,
            name: inputs.machineset.name().to_owned(),
        };
        let name = subject.key();
        let _span = info_span!("audit", object = %name).entered();
        let active = self.decide(&inputs, self.active);
        let candidate = self.decide(&inputs, self.candidate);
        self.audit.add(&name, active, candidate);
    }

    fn decide(&self, inputs: &BootImageInputs, guest: &BootImageGuest) -> Keyed {
        let decided = inputs.decision(self.control_plane_arch, self.now, |_| {
            Ok::<_, EvalError>(Some(guest))
        });
        match decided {
            Ok(decision) => Ok(decision_fields(&decision)),
            Err(EvalError::Guest(error)) => Err(error),
            Err(EvalError::Input(error)) => {
                Ok(decision_fields(&Decision::error(error.to_string())))
            }
        }
    }

    /// The audit of every object added.
    pub fn finish(self) -> Audit {
        self.audit
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_patch_is_keyed_by_its_target_its_patch_and_its_secret_upgrade() {
        let patch = Decision::Patch {
            target: "ami-2".into(),
            patch: json!({"spec": {"x": 1}}),
            user_data_secret: None,
            import: None,
        };
        assert_eq!(
            decision_fields(&patch),
            [
                ("decision".to_owned(), "patch to ami-2".to_owned()),
                ("patch".to_owned(), r#"{"spec":{"x":1}}"#.to_owned()),
            ]
        );
        assert_eq!(
            decision_fields(&Decision::noop("on target")),
            [("decision".to_owned(), "noop: on target".to_owned())]
        );
    }
}
