//! What `eval bootimage` reads: the MachineSet (or ControlPlaneMachineSet),
//! the stream ConfigMap, the Infrastructure and the optional ClusterVersion,
//! MachineConfiguration, user-data Secret, known images, FeatureGate and,
//! for vSphere, what vCenter holds and install-config, for AWS what EC2
//! holds, from files laid out as the flags (or a golden case) name them.

use std::borrow::Borrow;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use mco_bootimage::vcenter::{TemplateImport, VcenterFacts};
use mco_bootimage::{Decision, InputError, MachineKind, MachineSetView};
use serde_json::Value;

use super::ec2::{Ec2Answer, Ec2Facts, Ec2Inventory, Ec2Progress};
use super::error::{PassError, Subject};
use super::guest::BootImageGuestExt as _;
use super::guest::{BatchItem, BootImageGuest, StreamInput};
use super::objects::{
    ClusterVersion, ConfigMapData, Decoded, Infrastructure, MachineConfiguration, UserDataSecret,
    known_images_configmap, machine_decoder,
};
use super::plan::{Pass, UserData};
use super::prepared::Prepared;
use super::rules::{self, MachineSetInputs, Step};
use super::vcenter::{self, Answer, Inventory};
use mco_job::feature_gates::{self, FeatureGates, Modelled};
use mco_job::manifests::{self, InputError as FileError, Reader, case_file};
use mco_runtime::GuestError;

/// Everything `eval bootimage` reads, decoded as the controller's watches
/// decode it.
pub struct BootImageInputs {
    /// What `machineset` is: a MachineSet or a ControlPlaneMachineSet.
    pub kind: MachineKind,
    pub machineset: Decoded<MachineSetView>,
    /// The object as read, for [`BootImageInputs::apply_patch`].
    source: Value,
    pub configmap: Decoded<ConfigMapData>,
    pub infrastructure: Decoded<Infrastructure>,
    pub clusterversion: Option<Decoded<ClusterVersion>>,
    pub machineconfiguration: Option<Decoded<MachineConfiguration>>,
    pub user_data_secret: Option<Decoded<UserDataSecret>>,
    pub known_images: BTreeSet<String>,
    /// The gates of `--featuregate` for the ClusterVersion's version; the
    /// Default feature set without it.
    pub gates: FeatureGates,
    /// vSphere: what vCenter holds (`--vcenter`).
    pub vcenter: Option<Inventory>,
    /// vSphere: install-config's ConfigMap (`--install-config`).
    pub install_config: Option<Decoded<ConfigMapData>>,
    /// AWS: what EC2 holds (`--ec2`); without it EC2 is not consulted.
    pub ec2: Option<Ec2Inventory>,
}

/// The objects every MachineSet of a cluster is decided with, decoded
/// once as the controller's watches decode them.
pub struct ClusterObjects {
    pub configmap: Decoded<ConfigMapData>,
    pub infrastructure: Decoded<Infrastructure>,
    pub clusterversion: Option<Decoded<ClusterVersion>>,
    pub machineconfiguration: Option<Decoded<MachineConfiguration>>,
    pub known_images: BTreeSet<String>,
    pub gates: FeatureGates,
    /// vSphere: what vCenter holds, and install-config's ConfigMap.
    pub vcenter: Option<Inventory>,
    pub install_config: Option<Decoded<ConfigMapData>>,
    /// AWS: what EC2 holds.
    pub ec2: Option<Ec2Inventory>,
}

/// An object decided for, a MachineSet or the ControlPlaneMachineSet: as
/// read (what a merge patch applies to; its providerSpec is its guest's to
/// read) and decoded.
pub struct Machine {
    pub kind: MachineKind,
    source: Value,
    pub view: Decoded<MachineSetView>,
}

impl Machine {
    pub fn read(kind: MachineKind, source: Value) -> Machine {
        Machine {
            kind,
            view: Decoded::read(&source, machine_decoder(kind)),
            source,
        }
    }

    /// The user-data Secret it names, if it names one that can be read.
    pub fn user_data_secret(&self) -> Option<&str> {
        self.view
            .typed()
            .ok()?
            .user_data_secret_name()
            .ok()
            .flatten()
    }
}

/// Paths of the `eval bootimage` inputs (`-` is standard input); the
/// audit (`audit.rs`) reads them too, with any number of MachineSets in
/// `object` and of user-data Secrets in `user_data_secret`.
#[derive(Default)]
pub struct BootImagePaths<'a> {
    /// The object decided for: `--machineset` or `--controlplanemachineset`.
    pub object: (MachineKind, &'a str),
    pub configmap: &'a str,
    pub infrastructure: &'a str,
    pub clusterversion: Option<&'a str>,
    pub machineconfiguration: Option<&'a str>,
    pub user_data_secret: Option<&'a str>,
    pub known_images: Option<&'a str>,
    pub featuregate: Option<&'a str>,
    pub vcenter: Option<&'a str>,
    pub install_config: Option<&'a str>,
    pub ec2: Option<&'a str>,
}

impl BootImageInputs {
    /// Reads a case directory holding files named after the flags
    /// (`machineset.yaml` or `controlplanemachineset.yaml`,
    /// `configmap.yaml`, `infrastructure.yaml`, optional
    /// `clusterversion.yaml`, `machineconfiguration.yaml`,
    /// `user-data-secret.yaml`, `known-images.txt`, `featuregate.yaml`,
    /// `vcenter.yaml`, `install-config.yaml`, `ec2.yaml`); `gates`: every
    /// job's.
    pub fn read_case(dir: &Path, gates: &Modelled) -> Result<Self, FileError> {
        let [
            machineset,
            controlplanemachineset,
            configmap,
            infrastructure,
            clusterversion,
            machineconfiguration,
            secret,
            known,
            featuregate,
            vcenter,
            install_config,
            ec2,
        ] = [
            "machineset.yaml",
            "controlplanemachineset.yaml",
            "configmap.yaml",
            "infrastructure.yaml",
            "clusterversion.yaml",
            "machineconfiguration.yaml",
            "user-data-secret.yaml",
            "known-images.txt",
            "featuregate.yaml",
            "vcenter.yaml",
            "install-config.yaml",
            "ec2.yaml",
        ]
        .map(|file| case_file(dir, file));
        let object = match (&machineset, &controlplanemachineset) {
            (None, Some(cpms)) => (MachineKind::ControlPlaneMachineSet, cpms.as_str()),
            _ => (
                MachineKind::MachineSet,
                machineset.as_deref().unwrap_or("machineset.yaml"),
            ),
        };
        let paths = BootImagePaths {
            object,
            configmap: configmap.as_deref().unwrap_or("configmap.yaml"),
            infrastructure: infrastructure.as_deref().unwrap_or("infrastructure.yaml"),
            clusterversion: clusterversion.as_deref(),
            machineconfiguration: machineconfiguration.as_deref(),
            user_data_secret: secret.as_deref(),
            known_images: known.as_deref(),
            featuregate: featuregate.as_deref(),
            vcenter: vcenter.as_deref(),
            install_config: install_config.as_deref(),
            ec2: ec2.as_deref(),
        };
        BootImageInputs::read(&paths, gates)
    }

    /// Reads the files of `paths`, the FeatureGate's `gates` (every job's,
    /// the modelled ones) among them.
    pub fn read(paths: &BootImagePaths, gates: &Modelled) -> Result<Self, FileError> {
        let mut reader = Reader::default();
        let mut read =
            |path: &str, kind: &str| -> Result<Value, FileError> { reader.object(path, kind) };
        let clusterversion = paths
            .clusterversion
            .map(|path| read(path, "ClusterVersion"))
            .transpose()?;
        let machineconfiguration = paths
            .machineconfiguration
            .map(|path| read(path, "MachineConfiguration"))
            .transpose()?;
        let user_data_secret = paths
            .user_data_secret
            .map(|path| read(path, "Secret"))
            .transpose()?;
        let install_config = paths
            .install_config
            .map(|path| read(path, "ConfigMap"))
            .transpose()?;
        let (kind, path) = paths.object;
        let machine = Machine::read(kind, read(path, kind.kind())?);
        let configmap = read(paths.configmap, "ConfigMap")?;
        let infrastructure = read(paths.infrastructure, "Infrastructure")?;
        let known_images = match paths.known_images {
            Some(path) => known_images(path, &reader.text(path)?)?,
            None => BTreeSet::new(),
        };
        let gates = feature_gates::read(
            &mut reader,
            paths.featuregate,
            clusterversion.as_ref(),
            gates,
        )?;
        let vcenter = paths
            .vcenter
            .map(|path| inventory(path, &reader.text(path)?))
            .transpose()?;
        let ec2 = paths
            .ec2
            .map(|path| ec2_inventory(path, &reader.text(path)?))
            .transpose()?;
        let cluster = ClusterObjects {
            configmap: Decoded::of(&configmap),
            infrastructure: Decoded::of(&infrastructure),
            clusterversion: clusterversion.as_ref().map(Decoded::of),
            machineconfiguration: machineconfiguration.as_ref().map(Decoded::of),
            known_images,
            gates,
            vcenter,
            install_config: install_config.as_ref().map(Decoded::of),
            ec2,
        };
        let secret = user_data_secret.as_ref().map(Decoded::of);
        Ok(BootImageInputs::of(machine, &cluster, secret.as_ref()))
    }

    /// The inputs for `machine` decided with the objects its cluster
    /// shares and its user-data Secret.
    pub fn of(
        machine: Machine,
        cluster: &ClusterObjects,
        user_data_secret: Option<&Decoded<UserDataSecret>>,
    ) -> Self {
        let Machine { kind, source, view } = machine;
        BootImageInputs {
            kind,
            machineset: view,
            source,
            configmap: cluster.configmap.clone(),
            infrastructure: cluster.infrastructure.clone(),
            clusterversion: cluster.clusterversion.clone(),
            machineconfiguration: cluster.machineconfiguration.clone(),
            user_data_secret: user_data_secret.cloned(),
            known_images: cluster.known_images.clone(),
            gates: cluster.gates.clone(),
            vcenter: cluster.vcenter.clone(),
            install_config: cluster.install_config.clone(),
            ec2: cluster.ec2.clone(),
        }
    }

    /// The ConfigMap's `data.stream` text.
    pub fn stream(&self) -> Result<Option<&str>, InputError> {
        self.configmap.typed().map(ConfigMapData::stream)
    }

    /// Applies a decision as the controller would: the merge patch (RFC
    /// 7386) to the object decided for, as the API server would, and a
    /// template import to what vCenter holds; then reads them again.
    pub fn apply(&mut self, patch: &Value, import: Option<&TemplateImport>) {
        json_patch::merge(&mut self.source, patch);
        self.machineset = Decoded::read(&self.source, machine_decoder(self.kind));
        if let (Some(import), Some(vcenter)) = (import, self.vcenter.as_mut()) {
            vcenter.apply(import);
        }
    }

    /// What a vSphere guest is given for `prepared`, read offline (`None`
    /// off vSphere): what the native rules are run with beside the guest.
    pub fn vcenter_facts(&self, prepared: &Prepared) -> Result<Option<VcenterFacts>, InputError> {
        let Some(lookup) = &prepared.vcenter else {
            return Ok(None);
        };
        let subject = Subject {
            kind: self.kind,
            name: self.machineset.name().to_owned(),
        };
        let answer = self.vcenter_answer(&subject, &lookup.workspace.server)?;
        Ok(Some(lookup.facts(answer)))
    }

    /// What an AWS guest is given for `prepared`, read offline: the
    /// planner's EC2 rounds answered from `--ec2` (`None` off AWS, without
    /// an AMI ID, or without `--ec2`). What the native rules are run with
    /// beside the guest.
    pub fn ec2_facts(&self, prepared: &Prepared) -> Option<Ec2Facts> {
        let mut progress = Ec2Progress::Image(prepared.ec2.clone()?);
        while let Some(read) = progress.read() {
            let answer = self.ec2_answer(read);
            progress = progress.next(answer);
        }
        match progress {
            Ec2Progress::Done(Ok(facts)) => Some(facts),
            _ => None,
        }
    }

    /// What EC2 answers offline: the `--ec2` inventory, or nothing.
    fn ec2_answer(&self, read: &super::ec2::Ec2Read) -> Ec2Answer {
        match &self.ec2 {
            Some(inventory) => inventory.answer(read),
            None => Ec2Answer::Unreachable("offline, and no --ec2 file was given".into()),
        }
    }

    /// What a vCenter read gives offline: the `--vcenter` inventory, with
    /// install-config's disk type.
    fn vcenter_answer(&self, subject: &Subject, server: &str) -> Result<Answer, InputError> {
        let Some(inventory) = &self.vcenter else {
            return Err(InputError::Invalid {
                what: "input",
                message: format!(
                    "{subject} is a vSphere MachineSet on vCenter {server}: give --vcenter FILE, \
                     what that vCenter holds (docs/reference/eval-contract.md)"
                ),
            });
        };
        let install_disk_type = match &self.install_config {
            None => None,
            Some(cm) => {
                vcenter::install_disk_type(cm.typed()?).map_err(|message| InputError::Invalid {
                    what: "install-config ConfigMap",
                    message,
                })?
            }
        };
        Ok(Answer {
            vms: inventory.vms.clone(),
            install_disk_type,
        })
    }
}

/// A `--vcenter` file: YAML or JSON, `{vms: [{name, folder, template,
/// release, diskType}]}`.
pub fn inventory(path: &str, text: &str) -> Result<Inventory, FileError> {
    serde_saphyr::from_str(text).map_err(|e| FileError::Malformed {
        path: path.into(),
        kind: "vCenter inventory".into(),
        name: "(--vcenter)".into(),
        detail: e.to_string(),
    })
}

/// An `--ec2` file: YAML or JSON, region to the images EC2 describes
/// there (`{us-east-1: [{imageId, ownerId, name, description,
/// creationDate}]}`).
pub fn ec2_inventory(path: &str, text: &str) -> Result<Ec2Inventory, FileError> {
    serde_saphyr::from_str(text).map_err(|e| FileError::Malformed {
        path: path.into(),
        kind: "EC2 images".into(),
        name: "(--ec2)".into(),
        detail: e.to_string(),
    })
}

/// A known-images file: a ConfigMap whose data values list images, or
/// plain text with one image per line.
pub fn known_images(path: &str, text: &str) -> Result<BTreeSet<String>, FileError> {
    match serde_saphyr::from_str::<Value>(text) {
        Ok(object) if manifests::kind_of(&object).as_deref() == Some("ConfigMap") => {
            let configmap = known_images_configmap(&object).map_err(|e| FileError::Malformed {
                path: path.into(),
                kind: "ConfigMap".into(),
                name: "known images".into(),
                detail: e.to_string(),
            })?;
            Ok(configmap.known_images())
        }
        _ => Ok(rules::known_images_from_text(text)),
    }
}

/// Why `eval bootimage` could not decide: unusable input (exit status 2)
/// or a guest that failed (exit status 3).
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Guest(#[from] GuestError),
}

/// The host rules' verdict on the `eval bootimage` inputs, with the user
/// data read from `--user-data-secret`.
pub struct EvalStep {
    pub step: Step,
    pub user_data: Option<String>,
}

impl BootImageInputs {
    /// The host rules as `eval` applies them: like the controller's, but a
    /// gate is a decision to print (an unstable cluster is `noop`, a
    /// ControlPlaneMachineSet without `ManagedBootImagesCPMS` or a
    /// MachineSet not enrolled `skip`), and ClusterVersion and
    /// MachineConfiguration are optional. `Err` is unusable input.
    pub fn host_rules(&self, control_plane_arch: &str) -> Result<EvalStep, InputError> {
        let machineset = self.machineset.typed()?;
        let infrastructure = self.infrastructure.typed()?;
        let platform = rules::platform_type(infrastructure)?;
        let user_data = match &self.user_data_secret {
            Some(secret) => Some(rules::user_data_from_secret(secret.typed()?)),
            None => None,
        };
        let decided = |decision| EvalStep {
            step: Step::Decided(decision),
            user_data: None,
        };
        let mut multi_arch = false;
        if let Some(cv) = &self.clusterversion {
            let cv = cv.typed()?;
            if let Some(decision) = rules::stability_gate(cv) {
                return Ok(decided(decision));
            }
            multi_arch = rules::is_multi_arch(cv);
        }
        if let Some(decision) = rules::feature_gate(&self.gates, machineset) {
            return Ok(decided(decision));
        }
        if let Some(mc) = &self.machineconfiguration
            && let Some(decision) = rules::enrollment_gate(mc.typed()?, machineset, &platform)
        {
            return Ok(decided(decision));
        }
        let step = rules::prepare(&MachineSetInputs {
            machineset,
            infrastructure,
            multi_arch,
            known_images: &self.known_images,
            control_plane_arch,
        })?;
        Ok(EvalStep { step, user_data })
    }

    /// The decision `eval bootimage` prints and an audit compares: the host
    /// rules, then, when they leave it to a guest, the one `guest_for`
    /// gives for the platform (none: the platform has no guest, which is
    /// `noop`), then the planner with it ([`BootImageInputs::decide`]).
    pub fn decision<G, E>(
        &self,
        control_plane_arch: &str,
        now: Timestamp,
        guest_for: impl FnOnce(&str) -> Result<Option<G>, E>,
    ) -> Result<Decision, E>
    where
        G: Borrow<BootImageGuest>,
        E: From<EvalError>,
    {
        self.stream().map_err(EvalError::from)?;
        let rules = self
            .host_rules(control_plane_arch)
            .map_err(EvalError::from)?;
        let guest = match &rules.step {
            Step::Decided(_) => None,
            Step::Guest(prepared) => guest_for(&prepared.platform_type)?,
        };
        Ok(self.decide(rules, guest.as_ref().map(Borrow::borrow), now)?)
    }

    /// The decision for what passed the host rules, through the
    /// controller's own planner: the guest decides, and a patch is decided
    /// again with the user data, exactly as in the cluster. `guest` is the
    /// one registered for the platform, if any; a stub upgrade is stamped
    /// with `now`, as the controller stamps it with the time of its pass.
    pub fn decide(
        &self,
        rules: EvalStep,
        guest: Option<&BootImageGuest>,
        now: Timestamp,
    ) -> Result<Decision, EvalError> {
        let stream = Arc::new(StreamInput::new(self.stream()?));
        let platforms: BTreeSet<String> = match (&rules.step, guest) {
            (Step::Guest(prepared), Some(_)) => BTreeSet::from([prepared.platform_type.clone()]),
            _ => BTreeSet::new(),
        };
        let subject = Subject {
            kind: self.kind,
            name: self.machineset.name().to_owned(),
        };
        let object = Arc::new(self.machineset.clone());
        let mut pass = Pass::single(
            subject.clone(),
            object,
            rules.step,
            stream.clone(),
            &platforms,
            now,
        );
        while let Some(guest) = guest {
            for read in pass.vcenter_reads() {
                let answer = self.vcenter_answer(&subject, &read.lookup.workspace.server)?;
                pass.give_vcenter(read.index, Ok(answer));
            }
            // Both EC2 rounds, as the controller makes them.
            loop {
                let reads = pass.ec2_reads();
                if reads.is_empty() {
                    break;
                }
                for request in reads {
                    pass.give_ec2(request.index, self.ec2_answer(&request.read));
                }
            }
            let requests = pass.take_requests();
            if requests.is_empty() {
                break;
            }
            let platform = requests
                .first()
                .map(|r| r.platform.clone())
                .unwrap_or_default();
            let items: Vec<&BatchItem> = requests.iter().map(|r| &r.item).collect();
            let results = guest.decide_batch(&platform, &stream, items);
            for (request, result) in requests.into_iter().zip(results) {
                let result = result.map_err(|error| PassError::Guest {
                    subject: subject.clone(),
                    guest: guest.module().name.clone(),
                    error,
                });
                pass.answer(request, result);
            }
            for secret in pass.secrets() {
                let given = rules.user_data.clone().map(|text| {
                    Ok(UserData {
                        text,
                        resource_version: None,
                    })
                });
                pass.give_secret(secret.index, given);
            }
        }
        let outcome = pass.finish().actions.into_iter().next().map(|a| a.outcome);
        match outcome {
            Some(Ok(decision)) => Ok(decision),
            Some(Err(PassError::Guest { error, .. })) => Err(error.into()),
            Some(Err(other)) => Ok(Decision::error(other.to_string())),
            None => Ok(Decision::error("the pass decided nothing")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mco_test_support::large::{BootImageBulk, OBJECT_BYTES, grown_aws_bootimage_case};

    /// A MachineSet as large as the apiserver stores one (a providerSpec of
    /// 10,000 tags, about 1.5 MiB) decodes through the typed read `eval
    /// bootimage` uses, passes the host rules to its platform, and the
    /// platform's rules decide it as the golden case it was grown from.
    /// (The wasm guest needs more than the default memory for it: see
    /// `host/tests/cli.rs`.)
    #[test]
    fn a_machineset_at_the_apiservers_size_decodes_and_decides() {
        let golden = mco_job::crate_dir(env!("CARGO_MANIFEST_DIR"))
            .join("../../../tests/golden/bootimage/aws-patch-known-ami");
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        grown_aws_bootimage_case(&golden, dir.path(), BootImageBulk::MachineSet)
            .unwrap_or_else(|e| panic!("{e:#}"));
        let size = std::fs::metadata(dir.path().join("machineset.yaml")).map_or(0, |m| m.len());
        assert!(size > (OBJECT_BYTES - 1024) as u64, "{size} bytes");

        let inputs = BootImageInputs::read_case(dir.path(), crate::FEATURE_GATES)
            .unwrap_or_else(|e| panic!("{e}"));
        let rules = inputs
            .host_rules("x86_64")
            .unwrap_or_else(|e| panic!("{e}"));
        let Step::Guest(prepared) = &rules.step else {
            panic!("the host rules decided alone");
        };
        let stream = inputs.stream().unwrap_or_else(|e| panic!("{e}"));
        let decision = mco_bootimage::decide_text(
            &mco_bootimage_aws::Aws,
            stream,
            &prepared.machineset,
            &prepared.cluster,
            None,
        );
        let expected =
            std::fs::read_to_string(golden.join("expected.json")).unwrap_or_else(|e| panic!("{e}"));
        let expected: Value = serde_json::from_str(&expected).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            serde_json::to_value(&decision).unwrap_or_else(|e| panic!("{e}")),
            expected
        );
    }
}
