//! What a boot image decision may change, checked by the host with the
//! job's own inputs. Guests propose, the host disposes: a patch is applied
//! to the MachineSet's providerSpec here, the result is diffed against the
//! original, and every changed path must be one the platform owns
//! (`Platform::owned` in the host's platform table, not in any guest). The new
//! image must be the one the
//! current stream publishes for the MachineSet's architecture (and, on AWS,
//! its region, or for a marketplace AMI one of its product that EC2 listed
//! to the host), and a stub upgrade must be the MachineSet's own Secret and a
//! faithful conversion of the stub the host passed. A decision that fails
//! any of this is an `invalid_output` guest failure, never a write.
//!
//! On vSphere the image is a VM template that the host imports from the
//! stream's OVA when the guest asks: the request must be for that OVA,
//! into the MachineSet's own workspace and into a template name that is
//! the job's to write (`vsphere`), and it is checked here, before any
//! vCenter call.
//!
//! The fields each platform owns and its image check are in its file of
//! the platform table (`bootimage/platform`), the patch as they read it
//! and the rules a decision breaks in `bootimage/proposal`, the
//! faithful-stub comparison in `stub`; the tests are in
//! `host/tests/authority.rs`.

use mco_bootimage::{ClusterFacts, Decision, MachineKind, MachineSetView, Stream};
use mco_k8s_rules::bounded;
use serde_json::Value;

mod stub;

use super::platform;
use super::proposal::{May, Patched, Proposal, QUOTE, Refusal, Rule};

/// Everything the host knows about one boot image job: the same inputs the
/// guest was given, plus the platform it serves and the parsed stream.
pub struct JobInputs<'a> {
    /// Infrastructure `status.platformStatus.type` the guest serves.
    pub platform: &'a str,
    pub machineset: &'a MachineSetView,
    pub cluster: &'a ClusterFacts,
    /// The decoded stub the host passed, if any.
    pub user_data: Option<&'a str>,
    /// The stream the guest was given, as the host parsed it.
    pub stream: Result<&'a Stream, &'a str>,
}

/// `Err` names the guest and the rule its decision breaks. Only `patch`
/// decisions change anything; the others pass.
pub fn check(job: &JobInputs<'_>, decision: &Decision) -> Result<(), Refusal> {
    rules(job, decision).map_err(|rule| Refusal {
        platform: job.platform.to_owned(),
        rule: Box::new(rule),
    })
}

fn rules(job: &JobInputs<'_>, decision: &Decision) -> Result<(), Rule> {
    let Decision::Patch {
        target,
        patch,
        user_data_secret,
        import,
    } = decision
    else {
        return Ok(());
    };
    // A platform the host does not know owns no field and has no image
    // check.
    let platform = platform::by_name(job.platform);
    if import.is_some() && !platform.is_some_and(|p| p.about().imports_templates) {
        return Err(Rule::ImportOffVsphere);
    }
    // An import alone leaves the MachineSet as it is: it already names the
    // template being replaced.
    let import_only = import.is_some() && patch.as_object().is_some_and(|p| p.is_empty());
    let fragment = match import_only {
        true => None,
        false => Some(provider_spec_fragment(job.machineset.kind, patch)?),
    };
    let Some(before) = job.machineset.provider_spec.as_deref() else {
        return Err(Rule::NoProviderSpec {
            noun: job.machineset.kind.noun(),
            name: job.machineset.name.clone(),
        });
    };
    let after = Patched::new(before, fragment);
    // A patch with no changes leaves the providerSpec exactly as it was.
    let changes = after.changes();
    if fragment.is_some() && import.is_none() && changes.is_empty() {
        return Err(Rule::ChangesNothing);
    }
    let owned = platform.map_or(&[][..], |p| p.about().owned);
    if let Some(platform) = platform {
        platform.check_shape(before, &after)?;
    }
    for change in &changes {
        let pattern = change.pattern();
        let Some(field) = owned.iter().find(|o| o.path == pattern) else {
            return Err(Rule::NotOwned {
                path: format!("providerSpec.value.{}", change.display()),
            });
        };
        if field.may == May::Clear && change.after.is_some() {
            return Err(Rule::ClearOnly {
                path: change.display(),
            });
        }
    }
    let arch = mco_bootimage::arch::machineset_arch(
        job.machineset,
        &job.cluster.control_plane_arch,
        job.cluster.multi_arch,
    )
    .map_err(|e| Rule::UnknownArch {
        reason: e.to_string(),
    })?;
    let stream = job.stream.map_err(|e| Rule::NoStream {
        reason: e.to_owned(),
    })?;
    let proposal = Proposal {
        stream,
        arch: &arch,
        before,
        after: &after,
        changes: &changes,
        import: import.as_deref(),
        vcenter: job.cluster.vcenter.as_ref(),
        ec2: job.cluster.ec2.as_ref(),
    };
    let image = platform.ok_or(Rule::NoImageCheck)?.image(&proposal)?;
    if *target != image {
        return Err(Rule::TargetMismatch {
            target: target.clone(),
            image,
        });
    }
    stub::upgrade(job, user_data_secret.as_ref())
}

/// The `providerSpec.value` part of the patch, at the path the object's
/// kind keeps it (one level deeper in a ControlPlaneMachineSet), or why the
/// patch has no such part of the right shape.
fn provider_spec_fragment(kind: MachineKind, patch: &Value) -> Result<&Value, Rule> {
    let envelope = kind.provider_spec_path();
    if !patch.is_object() {
        return Err(Rule::NotAnObject {
            kind: mco_bootimage::fields::kind_of(patch),
        });
    }
    let mut level = patch;
    let mut path = String::new();
    for key in envelope {
        let map = level.as_object().ok_or_else(|| Rule::ReplacesParent {
            path: path.clone(),
            kind: mco_bootimage::fields::kind_of(level),
        })?;
        if let Some(other) = map.keys().find(|k| k.as_str() != *key) {
            let at = if path.is_empty() {
                other.clone()
            } else {
                format!("{path}.{other}")
            };
            return Err(Rule::NotOwned {
                path: bounded(at, QUOTE),
            });
        }
        level = map.get(*key).ok_or_else(|| Rule::NoProviderSpecPatch {
            path: envelope.join("."),
        })?;
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
    }
    if !level.is_object() {
        return Err(Rule::NotFieldChanges {
            kind: mco_bootimage::fields::kind_of(level),
        });
    }
    Ok(level)
}
