//! The boot image job's audit: each MachineSet (or the
//! ControlPlaneMachineSet) through the host rules and then the planner
//! with each module, as `eval bootimage` decides one (the user data given
//! where the planner asks for it), and each decision keyed by what it is
//! and, for a patch, what it changes.

use k8s_openapi::jiff::Timestamp;
use mco_bootimage::{Decision, MachineKind};
use serde_json::Value;
use tracing::info_span;

use super::{Audit, Keyed, Names};
use crate::bootimage::BootImageGuest;
use crate::bootimage::error::Subject;
use crate::bootimage::eval::{BootImageInputs, ClusterObjects, EvalError, inventory, known_images};
use crate::bootimage::objects::machine_decoder;
use crate::manifests::{InputError, Reader};

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

/// Paths of the files an audit of a boot image job reads (`-` is standard
/// input): `eval bootimage`'s, with any number of MachineSets and
/// user-data Secrets.
#[derive(Default)]
pub struct BootImageFiles<'a> {
    pub machinesets: &'a str,
    pub controlplanemachineset: Option<&'a str>,
    pub configmap: &'a str,
    pub infrastructure: &'a str,
    pub clusterversion: Option<&'a str>,
    pub machineconfiguration: Option<&'a str>,
    pub user_data_secrets: Option<&'a str>,
    pub known_images: Option<&'a str>,
    pub featuregate: Option<&'a str>,
    pub vcenter: Option<&'a str>,
    pub install_config: Option<&'a str>,
}

/// What a boot image audit reads: the objects every MachineSet shares,
/// the user-data Secrets, and the objects audited (the MachineSets, each
/// named once, then the ControlPlaneMachineSet).
pub struct BootImageObjects {
    pub cluster: ClusterObjects,
    pub secrets: Vec<Value>,
    pub objects: Vec<(MachineKind, Value)>,
}

impl BootImageObjects {
    pub fn read(files: &BootImageFiles) -> Result<BootImageObjects, InputError> {
        let mut reader = Reader::default();
        let machinesets: Vec<Value> = reader.objects(files.machinesets, "MachineSet")?;
        let mut names = Names::new(files.machinesets, "MachineSet");
        for object in &machinesets {
            names.check(object.pointer("/metadata/name").and_then(Value::as_str))?;
        }
        let mut optional = |path: Option<&str>, kind: &str| -> Result<Option<Value>, InputError> {
            path.map(|p| reader.object(p, kind)).transpose()
        };
        let control_plane = optional(files.controlplanemachineset, "ControlPlaneMachineSet")?;
        let clusterversion = optional(files.clusterversion, "ClusterVersion")?;
        let machineconfiguration = optional(files.machineconfiguration, "MachineConfiguration")?;
        let install_config = optional(files.install_config, "ConfigMap")?;
        let configmap = reader.object(files.configmap, "ConfigMap")?;
        let infrastructure = reader.object(files.infrastructure, "Infrastructure")?;
        let secrets = reader.all(files.user_data_secrets, "Secret")?;
        let known_images = match files.known_images {
            Some(path) => known_images(path, &reader.text(path)?)?,
            None => Default::default(),
        };
        let objects = machinesets
            .into_iter()
            .map(|object| (MachineKind::MachineSet, object))
            .chain(control_plane.map(|object| (MachineKind::ControlPlaneMachineSet, object)))
            .collect();
        let gates =
            crate::feature_gates::read(&mut reader, files.featuregate, clusterversion.as_ref())?;
        let vcenter = match files.vcenter {
            Some(path) => Some(inventory(path, &reader.text(path)?)?),
            None => None,
        };
        Ok(BootImageObjects {
            cluster: ClusterObjects {
                configmap,
                infrastructure,
                clusterversion,
                machineconfiguration,
                known_images,
                gates,
                vcenter,
                install_config,
                // EC2 is not consulted: both modules decide AWS MachineSets
                // from the static AMI lists.
                ec2: None,
            },
            secrets,
            objects,
        })
    }
}

/// The user-data Secret `object` (a `kind`) names, if it names one that
/// can be read.
pub fn user_data_secret(kind: MachineKind, object: &Value) -> Option<String> {
    let view = machine_decoder(kind)(object).ok()?;
    view.user_data_secret_name()
        .ok()
        .flatten()
        .map(str::to_owned)
}

/// An audit of one platform's boot image job under way.
pub struct BootImageAudit<'a> {
    active: &'a BootImageGuest,
    candidate: &'a BootImageGuest,
    cluster: &'a ClusterObjects,
    /// The user-data Secrets, found by the name a MachineSet gives.
    secrets: &'a [Value],
    control_plane_arch: &'a str,
    now: Timestamp,
    audit: Audit,
}

impl<'a> BootImageAudit<'a> {
    pub fn new(
        (active, candidate): (&'a BootImageGuest, &'a BootImageGuest),
        cluster: &'a ClusterObjects,
        secrets: &'a [Value],
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

    /// Decides `object` with both modules and compares the decisions. Input
    /// the host rules refuse is the same `error` for both: it never reaches
    /// a module.
    pub fn add(&mut self, kind: MachineKind, object: Value) {
        let wanted = user_data_secret(kind, &object);
        let secret = wanted.and_then(|wanted| {
            self.secrets.iter().find(|secret| {
                secret.pointer("/metadata/name").and_then(Value::as_str) == Some(wanted.as_str())
            })
        });
        let inputs = BootImageInputs::of(kind, object, self.cluster, secret);
        let subject = Subject {
            kind,
            name: inputs.machineset.name().to_owned(),
        };
        let name = subject.key();
        let _span = info_span!("audit", object = %name).entered();
        let active = self.decide(&inputs, self.active);
        let candidate = self.decide(&inputs, self.candidate);
        self.audit.add(&name, active, candidate);
    }

    fn decide(&self, inputs: &BootImageInputs, guest: &BootImageGuest) -> Keyed {
        let refused = |error: mco_bootimage::InputError| -> Keyed {
            Ok(decision_fields(&Decision::error(error.to_string())))
        };
        let rules = match inputs.host_rules(self.control_plane_arch) {
            Ok(rules) => rules,
            Err(error) => return refused(error),
        };
        match inputs.decide(rules, Some(guest), self.now) {
            Ok(decision) => Ok(decision_fields(&decision)),
            Err(EvalError::Guest(error)) => Err(error),
            Err(EvalError::Input(error)) => refused(error),
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
