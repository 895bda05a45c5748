//! The boot image job's host rules, sans-IO: reading the cluster objects,
//! the readiness, stability, release and enrollment gates, and what the
//! platform guest is given for one MachineSet. The planner (`plan`) and
//! `eval bootimage` both go through these. The last third is unit tests.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use serde_json::Value;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::core::{Selector, SelectorExt};
use mco_bootimage::{ClusterFacts, Decision, InputError, MachineKind, MachineSetView, fields};
use serde_json::Map;

/// What the host rules read for one MachineSet besides the cluster gates.
#[derive(Debug, Clone, Copy)]
pub struct MachineSetInputs<'a> {
    pub machineset: &'a MachineSetView,
    pub infrastructure: &'a Value,
    /// ClusterVersion says `Multi` (changes the architecture rule).
    pub multi_arch: bool,
    pub known_images: &'a BTreeSet<String>,
    /// Stream arch name of the control plane (the host's own arch offline).
    pub control_plane_arch: &'a str,
}

/// Where the host rules leave one MachineSet.
#[derive(Debug, Clone)]
pub enum Step {
    /// A gate (unstable cluster, not enrolled, unsupported platform) decided.
    Decided(Decision),
    /// The platform guest decides.
    Guest(Prepared),
}

/// A MachineSet that passed the host rules, with everything the guest gets.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Infrastructure `status.platformStatus.type` (`GCP`, `AWS`, ...).
    pub platform_type: String,
    pub machineset: MachineSetView,
    pub cluster: ClusterFacts,
}

impl Prepared {
    /// The decision when no guest is registered for the platform: the
    /// common rules still apply, then there is nothing to do.
    pub fn without_guest(&self) -> Decision {
        match mco_bootimage::common_rules(&self.machineset, &self.cluster) {
            Err(decision) => decision,
            Ok(_) => mco_bootimage::unsupported_platform(&self.machineset, &self.platform_type),
        }
    }
}

/// The host rules for one MachineSet that passed the cluster gates:
/// platforms that run no boot image controller, and what its guest gets.
/// `Err` means an input object is unusable.
pub fn prepare(inputs: &MachineSetInputs<'_>) -> Result<Step, InputError> {
    let prepared = Prepared {
        platform_type: platform_type(inputs.infrastructure)?,
        machineset: inputs.machineset.clone(),
        cluster: ClusterFacts {
            control_plane_arch: inputs.control_plane_arch.to_owned(),
            multi_arch: inputs.multi_arch,
            known_images: inputs.known_images.clone(),
        },
    };
    let unsupported = |label: &str| {
        Step::Decided(
            match mco_bootimage::common_rules(&prepared.machineset, &prepared.cluster) {
                Err(decision) => decision,
                Ok(_) => mco_bootimage::unsupported_platform(&prepared.machineset, label),
            },
        )
    };
    if is_azure_stack(inputs.infrastructure)? {
        return Ok(unsupported(&format!(
            "{} (AzureStackCloud)",
            prepared.platform_type
        )));
    }
    // Upstream updates ControlPlaneMachineSets on these three only (§18.2);
    // a platform team's guest for another platform is not asked.
    if prepared.machineset.kind == MachineKind::ControlPlaneMachineSet
        && !CPMS_PLATFORMS.contains(&prepared.platform_type.as_str())
    {
        return Ok(unsupported(&prepared.platform_type));
    }
    Ok(Step::Guest(prepared))
}

/// Reads `object` as what `kind` names: a MachineSet or a
/// ControlPlaneMachineSet (its providerSpec one level deeper, §18.1).
pub fn view_of(kind: MachineKind, object: &Value) -> Result<MachineSetView, InputError> {
    match kind {
        MachineKind::MachineSet => MachineSetView::from_object(object),
        MachineKind::ControlPlaneMachineSet => {
            MachineSetView::from_control_plane_machine_set(object)
        }
    }
}

/// The platforms whose ControlPlaneMachineSets get boot image updates.
pub const CPMS_PLATFORMS: [&str; 3] = ["AWS", "GCP", "Azure"];

/// `None` when MachineConfiguration `cluster` exists and its status caught
/// up with its spec; otherwise why not.
pub fn not_ready(mc: Option<&Value>) -> Option<String> {
    let Some(mc) = mc else {
        return Some("machineconfigurations.operator.openshift.io \"cluster\" not found".into());
    };
    let generation = mc
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let observed = mc
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64);
    (observed != Some(generation)).then(|| {
        format!(
            "status.observedGeneration {} has not caught up with generation {generation}",
            observed.map_or("unset".to_owned(), |o| o.to_string())
        )
    })
}

/// The ConfigMap's release, when stamped, must be the release the cluster
/// is on: a stream from another release must not be rolled out. A literal
/// `0.0.1-snapshot` is a development payload and is not compared.
pub fn release_mismatch(cm: &Value, cv: &Value) -> Option<String> {
    let stream_release = cm.pointer("/data/releaseVersion").and_then(Value::as_str)?;
    let cluster_release = cv
        .pointer("/status/desired/version")
        .and_then(Value::as_str)?;
    (stream_release != cluster_release && stream_release != "0.0.1-snapshot").then(|| {
        format!("the coreos-bootimages ConfigMap is for release {stream_release}, the cluster is on {cluster_release}")
    })
}

fn check_kind(obj: &Value, what: &'static str, kind: &'static str) -> Result<(), InputError> {
    let root = obj.as_object().ok_or(InputError::NotAnObject {
        what,
        found: fields::kind_of(obj),
    })?;
    match fields::opt_str(root, "kind", "").map_err(InputError::field(what))? {
        Some(k) if k != kind => Err(InputError::WrongKind {
            expected: kind,
            found: k.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// Walks `path` through nested objects; a non-object on the way is a
/// [`fields::FieldError`] naming the full path.
fn lookup<'a>(
    obj: &'a Value,
    what: &'static str,
    path: &[&str],
) -> Result<Option<&'a Value>, InputError> {
    let mut cur = obj;
    let mut walked = String::new();
    for key in path {
        let m = fields::as_object(cur, if walked.is_empty() { "(root)" } else { &walked })
            .map_err(InputError::field(what))?;
        match m.get(*key) {
            None | Some(Value::Null) => return Ok(None),
            Some(v) => cur = v,
        }
        walked = fields::join(&walked, key);
    }
    Ok(Some(cur))
}

fn lookup_str<'a>(
    obj: &'a Value,
    what: &'static str,
    path: &[&str],
) -> Result<Option<&'a str>, InputError> {
    match lookup(obj, what, path)? {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(InputError::Field {
            what,
            source: fields::FieldError {
                path: path.join("."),
                expected: "a string",
                found: fields::kind_of(v),
            },
        }),
    }
}

/// Infrastructure `status.platformStatus.type`.
pub fn platform_type(infra: &Value) -> Result<String, InputError> {
    const WHAT: &str = "Infrastructure";
    check_kind(infra, WHAT, "Infrastructure")?;
    lookup_str(infra, WHAT, &["status", "platformStatus", "type"])?
        .or(lookup_str(infra, WHAT, &["status", "platform"])?)
        .map(str::to_owned)
        .ok_or(InputError::Invalid {
            what: WHAT,
            message: "status.platformStatus.type is not set".into(),
        })
}

/// AzureStackCloud runs no boot image controller at all.
fn is_azure_stack(infra: &Value) -> Result<bool, InputError> {
    Ok(lookup_str(
        infra,
        "Infrastructure",
        &["status", "platformStatus", "azure", "cloudName"],
    )? == Some("AzureStackCloud"))
}

/// The ConfigMap's `data.stream`, `None` if the key is absent.
pub fn stream_from_configmap(cm: &Value) -> Result<Option<&str>, InputError> {
    check_kind(cm, "ConfigMap", "ConfigMap")?;
    lookup_str(cm, "ConfigMap", &["data", "stream"])
}

/// The decoded `userData` of the user-data Secret (`data`, base64, or
/// `stringData` as written in manifests). A Secret without it yields an empty
/// text, which the stub upgrade then reports, as the controller would.
pub fn user_data_from_secret(secret: &Value) -> Result<String, InputError> {
    const WHAT: &str = "user-data Secret";
    check_kind(secret, WHAT, "Secret")?;
    if let Some(b64) = lookup_str(secret, WHAT, &["data", "userData"])? {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .map_err(|e| InputError::Invalid {
                what: WHAT,
                message: format!("data.userData is not valid base64: {e}"),
            })?;
        // Go's JSON decoder also replaces invalid UTF-8, so this loses nothing
        // the controller would have kept.
        return Ok(String::from_utf8_lossy(&bytes).into_owned());
    }
    Ok(lookup_str(secret, WHAT, &["stringData", "userData"])?
        .unwrap_or("")
        .to_owned())
}

/// Known-images file: one identifier per line; blank lines and `#` comments
/// are ignored.
pub fn known_images_from_text(text: &str) -> BTreeSet<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// Known images from a ConfigMap: every data value, read as a known-images
/// text.
pub fn known_images_from_configmap(cm: &Value) -> Result<BTreeSet<String>, InputError> {
    check_kind(cm, "known-images ConfigMap", "ConfigMap")?;
    let mut out = BTreeSet::new();
    if let Some(data) = lookup(cm, "known-images ConfigMap", &["data"])? {
        let data =
            fields::as_object(data, "data").map_err(InputError::field("known-images ConfigMap"))?;
        for (k, v) in data {
            let text = v.as_str().ok_or_else(|| InputError::Field {
                what: "known-images ConfigMap",
                source: fields::FieldError {
                    path: format!("data.{k}"),
                    expected: "a string",
                    found: fields::kind_of(v),
                },
            })?;
            out.extend(known_images_from_text(text));
        }
    }
    Ok(out)
}

/// ClusterVersion `status.desired.architecture == "Multi"`.
pub fn is_multi_arch(cv: &Value) -> Result<bool, InputError> {
    check_kind(cv, "ClusterVersion", "ClusterVersion")?;
    Ok(lookup_str(cv, "ClusterVersion", &["status", "desired", "architecture"])? == Some("Multi"))
}

/// `isClusterStable`: updates wait while the cluster installs or upgrades
/// (boot image sources such as vCenter may be unreachable then).
pub fn stability_gate(cv: &Value) -> Result<Option<Decision>, InputError> {
    const WHAT: &str = "ClusterVersion";
    check_kind(cv, WHAT, "ClusterVersion")?;
    let state = match lookup(cv, WHAT, &["status", "history"])? {
        None => None,
        Some(Value::Array(h)) => match h.first() {
            None => None,
            Some(first) => {
                let entry = fields::as_object(first, "status.history[0]")
                    .map_err(InputError::field(WHAT))?;
                fields::opt_str(entry, "state", "status.history[0]")
                    .map_err(InputError::field(WHAT))?
            }
        },
        Some(v) => {
            return Err(InputError::Field {
                what: WHAT,
                source: fields::FieldError {
                    path: "status.history".into(),
                    expected: "an array",
                    found: fields::kind_of(v),
                },
            });
        }
    };
    Ok(match state {
        Some("Completed") => None,
        Some(s) => Some(Decision::noop(format!(
            "cluster is not stable (ClusterVersion history[0].state is {s:?}); deferring boot image updates until the install or upgrade completes"
        ))),
        None => Some(Decision::noop(
            "cluster is not stable (ClusterVersion has no history yet); deferring boot image updates until the install completes",
        )),
    })
}

/// Platforms whose MachineSets are enrolled by default when the admin says
/// nothing (`CheckBootImagePlatform` default-on on MCO main, §21). Azure
/// Stack Hub runs no boot image controller at all and never gets here.
const DEFAULT_ON_PLATFORMS: [&str; 4] = ["AWS", "GCP", "Azure", "VSphere"];

/// The machine manager `resource` that enrolls objects of `kind`.
fn manager_resource(kind: MachineKind) -> &'static str {
    match kind {
        MachineKind::MachineSet => "machinesets",
        MachineKind::ControlPlaneMachineSet => "controlplanemachinesets",
    }
}

/// The machine manager for `resource` in `managers`, by `resource` and
/// `apiGroup`, as `getMachineResourceSelectorFromMachineManagers` finds it.
fn find_manager<'a>(managers: &'a [Value], resource: &str) -> Option<&'a Map<String, Value>> {
    managers.iter().filter_map(Value::as_object).find(|m| {
        m.get("apiGroup").and_then(Value::as_str) == Some("machine.openshift.io")
            && m.get("resource").and_then(Value::as_str) == Some(resource)
    })
}

fn managers_at<'a>(at: Option<&'a Value>, path: &str) -> Result<Option<&'a [Value]>, InputError> {
    match at {
        None => Ok(None),
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(v) => Err(InputError::Field {
            what: "MachineConfiguration",
            source: fields::FieldError {
                path: path.to_owned(),
                expected: "an array",
                found: fields::kind_of(v),
            },
        }),
    }
}

/// Which machine manager selection applies to objects of `kind`, and the
/// words that say where it came from.
struct Selection {
    /// `None`: nothing is enrolled (no manager for the resource, or a
    /// computed default of mode None).
    selection: Option<Value>,
    /// Where it was read or which rule of the operator's computation gave it.
    rule: String,
    /// Computed from the spec (no published status), not read.
    computed: bool,
}

/// The selection the operator publishes in `status.managedBootImagesStatus`
/// for `kind`, read from the status when it is there, computed as
/// `syncManagedBootImagesStatus` would from the spec when it is not
/// (spec/bootimage.md §21): `machineManagers: []` opts out of everything; a
/// spec entry for the resource is copied; otherwise MachineSets are `All`
/// on a default-on platform and `None` elsewhere, and a
/// ControlPlaneMachineSet is `None` everywhere (opt-in).
fn effective_selection(
    mc: &Value,
    kind: MachineKind,
    platform: &str,
) -> Result<Selection, InputError> {
    const WHAT: &str = "MachineConfiguration";
    let resource = manager_resource(kind);
    if let Some(status) = lookup(mc, WHAT, &["status", "managedBootImagesStatus"])? {
        let path = "status.managedBootImagesStatus";
        let managers = managers_at(
            lookup(status, WHAT, &["machineManagers"])?,
            &format!("{path}.machineManagers"),
        )?;
        let selection = managers
            .and_then(|m| find_manager(m, resource))
            .map(|m| m.get("selection").cloned().unwrap_or(Value::Null));
        let rule = match (&selection, managers) {
            (Some(_), _) => path.to_owned(),
            (None, None | Some([])) => format!("{path}: no machine managers"),
            (None, Some(_)) => {
                format!("{path}: no manager for machine.openshift.io {resource}")
            }
        };
        return Ok(Selection {
            selection,
            rule,
            computed: false,
        });
    }
    let computed = |selection: Option<Value>, why: String| Selection {
        selection,
        rule: format!("{COMPUTED}: {why}"),
        computed: true,
    };
    let spec = managers_at(
        lookup(mc, WHAT, &["spec", "managedBootImages", "machineManagers"])?,
        "spec.managedBootImages.machineManagers",
    )?;
    if spec.is_some_and(<[Value]>::is_empty) {
        return Ok(computed(
            None,
            "machineManagers is [], which opts out of everything".into(),
        ));
    }
    if let Some(entry) = spec.and_then(|m| find_manager(m, resource)) {
        return Ok(computed(
            Some(entry.get("selection").cloned().unwrap_or(Value::Null)),
            format!("the spec's {resource} entry"),
        ));
    }
    // The operator's default: `All` for MachineSets on a default-on
    // platform; otherwise `None`, which enrolls nothing, so it is given as
    // no selection, with the rule as the reason.
    let (selection, why) = match kind {
        MachineKind::MachineSet if DEFAULT_ON_PLATFORMS.contains(&platform) => (
            Some(serde_json::json!({ "mode": "All" })),
            format!("no {resource} entry, and {platform} MachineSets are enrolled by default"),
        ),
        MachineKind::MachineSet => (
            None,
            format!("no {resource} entry, and platform {platform:?} is not enrolled by default"),
        ),
        MachineKind::ControlPlaneMachineSet => (
            None,
            format!("no {resource} entry, and ControlPlaneMachineSets are opt-in (default None)"),
        ),
    };
    Ok(computed(selection, why))
}

/// How [`effective_selection`] words a selection it computed rather than read.
const COMPUTED: &str = "computed from spec.managedBootImages, as the operator would publish it";

/// The operator rule that enrolls or leaves out objects of `kind` when
/// MachineConfiguration `cluster` has no published status (§21), for the
/// conditions to say; `None` when the status is there (nothing to explain)
/// or unreadable (the gates report that).
pub fn computed_enrollment(mc: &Value, kind: MachineKind, platform: &str) -> Option<String> {
    effective_selection(mc, kind, platform)
        .ok()
        .filter(|s| s.computed)
        .map(|s| s.rule)
}

/// Enrollment by `MachineConfiguration/cluster`: the effective
/// `status.managedBootImagesStatus` (what the controller reads), or what
/// the operator would publish from the spec when the status is absent, for
/// `ms` (a MachineSet through the `machinesets` manager, a
/// ControlPlaneMachineSet through the `controlplanemachinesets` one) on
/// `platform` (Infrastructure `status.platformStatus.type`).
/// `Some(skip)` if it is not enrolled, naming the rule that left it out;
/// `Some(error)` for an invalid selection; `None` to go on.
pub fn enrollment_gate(
    mc: &Value,
    ms: &MachineSetView,
    platform: &str,
) -> Result<Option<Decision>, InputError> {
    const WHAT: &str = "MachineConfiguration";
    check_kind(mc, WHAT, "MachineConfiguration")?;
    let Selection {
        selection, rule, ..
    } = effective_selection(mc, ms.kind, platform)?;
    let not_enrolled = |why: &str| {
        let detail = if why.is_empty() {
            rule.clone()
        } else {
            format!("{rule}: {why}")
        };
        Some(Decision::skip(format!(
            "{} {} is not enrolled for boot image updates ({detail})",
            ms.kind.noun(),
            ms.name
        )))
    };
    let Some(selection) = selection else {
        return Ok(not_enrolled(""));
    };
    let mode = selection.get("mode").and_then(Value::as_str).unwrap_or("");
    match mode {
        "All" => Ok(None),
        "None" => Ok(not_enrolled("mode None")),
        "Partial" => {
            let selector = selection
                .get("partial")
                .and_then(|p| p.get("machineResourceSelector"))
                .unwrap_or(&Value::Null);
            match label_selector_matches(selector, &ms.labels) {
                Ok(true) => Ok(None),
                Ok(false) => Ok(not_enrolled("labels do not match the Partial selector")),
                Err(e) => Ok(Some(Decision::error(format!(
                    "invalid machineResourceSelector in {rule}: {e}"
                )))),
            }
        }
        other => Ok(Some(Decision::error(format!(
            "invalid machine manager selection mode {other:?} in {rule}"
        )))),
    }
}

/// Kubernetes label-selector semantics (kube's implementation): a null
/// selector selects nothing, an empty one everything.
pub fn label_selector_matches(
    selector: &Value,
    labels: &BTreeMap<String, String>,
) -> Result<bool, String> {
    if selector.is_null() {
        return Ok(false);
    }
    let selector: LabelSelector =
        serde_json::from_value(selector.clone()).map_err(|e| e.to_string())?;
    let selector = Selector::try_from(selector).map_err(|e| e.to_string())?;
    Ok(selector.matches(labels))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn selectors() {
        let l = labels(&[("env", "prod"), ("tier", "web")]);
        assert!(label_selector_matches(&json!({}), &l).unwrap());
        assert!(!label_selector_matches(&Value::Null, &l).unwrap());
        assert!(label_selector_matches(&json!({"matchLabels": {"env": "prod"}}), &l).unwrap());
        assert!(!label_selector_matches(&json!({"matchLabels": {"env": "dev"}}), &l).unwrap());
        assert!(
            label_selector_matches(
                &json!({"matchExpressions": [
                    {"key": "tier", "operator": "In", "values": ["web", "db"]},
                    {"key": "gpu", "operator": "DoesNotExist"},
                    {"key": "env", "operator": "NotIn", "values": ["dev"]},
                    {"key": "env", "operator": "Exists"}
                ]}),
                &l
            )
            .unwrap()
        );
        assert!(
            label_selector_matches(
                &json!({"matchExpressions": [{"key": "x", "operator": "Bogus", "values": []}]}),
                &l
            )
            .is_err()
        );
        assert!(label_selector_matches(&json!({"matchLabels": []}), &l).is_err());
        assert!(label_selector_matches(&json!("x"), &l).is_err());
    }

    fn ms(l: &[(&str, &str)]) -> MachineSetView {
        MachineSetView::from_object(&json!({"metadata": {"name": "w", "labels": labels(l)}}))
            .unwrap()
    }

    #[test]
    fn enrollment_rules() {
        let mc = |managers: Value| json!({"kind": "MachineConfiguration", "status": {"managedBootImagesStatus": {"machineManagers": managers}}});
        let all = mc(
            json!([{"resource": "machinesets", "apiGroup": "machine.openshift.io", "selection": {"mode": "All"}}]),
        );
        assert_eq!(enrollment_gate(&all, &ms(&[]), "AWS").unwrap(), None);
        let none = mc(
            json!([{"resource": "machinesets", "apiGroup": "machine.openshift.io", "selection": {"mode": "None"}}]),
        );
        assert_eq!(
            enrollment_gate(&none, &ms(&[]), "AWS")
                .unwrap()
                .unwrap()
                .action(),
            "skip"
        );
        let empty = mc(json!([]));
        assert_eq!(
            enrollment_gate(&empty, &ms(&[]), "AWS")
                .unwrap()
                .unwrap()
                .action(),
            "skip"
        );
        let cpms_only = mc(
            json!([{"resource": "controlplanemachinesets", "apiGroup": "machine.openshift.io", "selection": {"mode": "All"}}]),
        );
        assert_eq!(
            enrollment_gate(&cpms_only, &ms(&[]), "AWS")
                .unwrap()
                .unwrap()
                .action(),
            "skip"
        );
        let partial = mc(
            json!([{"resource": "machinesets", "apiGroup": "machine.openshift.io",
            "selection": {"mode": "Partial", "partial": {"machineResourceSelector": {"matchLabels": {"env": "prod"}}}}}]),
        );
        assert_eq!(
            enrollment_gate(&partial, &ms(&[("env", "prod")]), "AWS").unwrap(),
            None
        );
        assert_eq!(
            enrollment_gate(&partial, &ms(&[("env", "dev")]), "AWS")
                .unwrap()
                .unwrap()
                .action(),
            "skip"
        );
        // Without a status, what the operator would publish (§21).
        let spec =
            |managers: Value| json!({"spec": {"managedBootImages": {"machineManagers": managers}}});
        let spec_none = spec(
            json!([{"resource": "machinesets", "apiGroup": "machine.openshift.io", "selection": {"mode": "None"}}]),
        );
        assert_eq!(
            enrollment_gate(&spec_none, &ms(&[]), "AWS")
                .unwrap()
                .unwrap()
                .action(),
            "skip"
        );
        // No opinion: default on for the four platforms, with the rule named.
        for platform in ["AWS", "GCP", "Azure", "VSphere"] {
            assert_eq!(
                enrollment_gate(&json!({}), &ms(&[]), platform).unwrap(),
                None
            );
            let rule = computed_enrollment(&json!({}), MachineKind::MachineSet, platform)
                .unwrap_or_default();
            assert!(
                rule.contains(&format!("{platform} MachineSets are enrolled by default")),
                "{platform}: {rule:?}"
            );
        }
        let other_platform = enrollment_gate(&json!({}), &ms(&[]), "BareMetal").unwrap();
        assert!(
            matches!(&other_platform, Some(Decision::Skip { reason }) if reason.contains("not enrolled by default")),
            "{other_platform:?}"
        );
        // A CPMS opinion does not wipe the MachineSet default (OCPBUGS-72553).
        let cpms_spec = spec(
            json!([{"resource": "controlplanemachinesets", "apiGroup": "machine.openshift.io", "selection": {"mode": "All"}}]),
        );
        assert_eq!(enrollment_gate(&cpms_spec, &ms(&[]), "GCP").unwrap(), None);
        // `machineManagers: []` is the legacy opt-out of everything.
        let opted_out = enrollment_gate(&spec(json!([])), &ms(&[]), "AWS").unwrap();
        assert!(
            matches!(&opted_out, Some(Decision::Skip { reason }) if reason.contains("machineManagers is [], which opts out of everything")),
            "{opted_out:?}"
        );
        // The status, once published, is read as is: nothing to explain.
        assert_eq!(
            computed_enrollment(&all, MachineKind::MachineSet, "AWS"),
            None
        );

        // A ControlPlaneMachineSet goes by its own manager only.
        let cpms = MachineSetView::from_control_plane_machine_set(
            &json!({"kind": "ControlPlaneMachineSet", "metadata": {"name": "cluster"}}),
        )
        .unwrap();
        let skipped = enrollment_gate(&all, &cpms, "AWS").unwrap();
        assert!(
            matches!(&skipped, Some(Decision::Skip { reason }) if reason == "ControlPlaneMachineSet cluster is not enrolled for boot image updates (status.managedBootImagesStatus: no manager for machine.openshift.io controlplanemachinesets)"),
            "{skipped:?}"
        );
        assert_eq!(enrollment_gate(&cpms_only, &cpms, "AWS").unwrap(), None);
        let default = enrollment_gate(&json!({}), &cpms, "AWS").unwrap();
        assert!(
            matches!(&default, Some(Decision::Skip { reason }) if reason.contains("ControlPlaneMachineSets are opt-in (default None)")),
            "{default:?}"
        );
        assert_eq!(enrollment_gate(&cpms_spec, &cpms, "AWS").unwrap(), None);
        assert!(enrollment_gate(&mc(json!("x")), &ms(&[]), "AWS").is_err());
        assert!(enrollment_gate(&json!({"kind": "Node"}), &ms(&[]), "AWS").is_err());
    }

    #[test]
    fn stability() {
        let cv = |h: Value| json!({"kind": "ClusterVersion", "status": {"history": h}});
        assert_eq!(
            stability_gate(&cv(json!([{"state": "Completed"}, {"state": "Partial"}]))).unwrap(),
            None
        );
        assert_eq!(
            stability_gate(&cv(json!([{"state": "Partial"}])))
                .unwrap()
                .unwrap()
                .action(),
            "noop"
        );
        assert_eq!(
            stability_gate(&cv(json!([]))).unwrap().unwrap().action(),
            "noop"
        );
        assert!(stability_gate(&cv(json!("x"))).is_err());
        assert!(stability_gate(&cv(json!([5]))).is_err());
        assert!(is_multi_arch(&json!({"status": {"desired": {"architecture": "Multi"}}})).unwrap());
        assert!(!is_multi_arch(&json!({})).unwrap());
        assert!(is_multi_arch(&json!({"status": {"desired": {"architecture": 1}}})).is_err());
    }

    #[test]
    fn secrets_and_configmaps() {
        let s = json!({"kind": "Secret", "data": {"userData": "eyJhIjoxfQ=="}});
        assert_eq!(user_data_from_secret(&s).unwrap(), r#"{"a":1}"#);
        let s = json!({"kind": "Secret", "stringData": {"userData": "{}"}});
        assert_eq!(user_data_from_secret(&s).unwrap(), "{}");
        assert_eq!(user_data_from_secret(&json!({"data": {}})).unwrap(), "");
        assert!(user_data_from_secret(&json!({"data": {"userData": "%%%"}})).is_err());
        assert!(user_data_from_secret(&json!({"data": {"userData": 5}})).is_err());
        assert!(user_data_from_secret(&json!({"kind": "ConfigMap"})).is_err());

        let cm = json!({"kind": "ConfigMap", "data": {"stream": "{}"}});
        assert_eq!(stream_from_configmap(&cm).unwrap(), Some("{}"));
        assert_eq!(stream_from_configmap(&json!({"data": {}})).unwrap(), None);
        assert!(stream_from_configmap(&json!({"data": "x"})).is_err());
        assert!(stream_from_configmap(&json!({"data": {"stream": {}}})).is_err());

        assert_eq!(
            known_images_from_text("# c\n ami-1 \n\nami-2\n"),
            BTreeSet::from(["ami-1".to_owned(), "ami-2".to_owned()])
        );
        let kcm = json!({"kind": "ConfigMap", "data": {"a": "ami-1\nami-2", "b": "ami-3"}});
        assert_eq!(known_images_from_configmap(&kcm).unwrap().len(), 3);
        assert!(known_images_from_configmap(&json!({"data": {"a": 1}})).is_err());

        assert_eq!(
            platform_type(&json!({"status": {"platformStatus": {"type": "GCP"}}})).unwrap(),
            "GCP"
        );
        assert!(platform_type(&json!({"status": {}})).is_err());
        assert!(platform_type(&json!({"status": {"platformStatus": 3}})).is_err());
        assert!(
            is_azure_stack(
                &json!({"status": {"platformStatus": {"type": "Azure", "azure": {"cloudName": "AzureStackCloud"}}}})
            )
            .unwrap()
        );
    }

    #[test]
    fn machineconfiguration_readiness() {
        assert!(not_ready(None).unwrap().contains("not found"));
        let mc = |generation: i64, observed: Value| {
            json!({
                "metadata": {"name": "cluster", "generation": generation},
                "status": {"observedGeneration": observed},
            })
        };
        assert_eq!(not_ready(Some(&mc(2, json!(2)))), None);
        assert!(
            not_ready(Some(&mc(3, json!(2))))
                .unwrap()
                .contains("generation 3")
        );
        assert!(
            not_ready(Some(&mc(1, Value::Null)))
                .unwrap()
                .contains("unset")
        );
    }

    #[test]
    fn a_stream_for_another_release_waits() {
        let cm = |v: &str| json!({"data": {"releaseVersion": v}});
        let cv = json!({"status": {"desired": {"version": "4.21.3"}}});
        assert_eq!(release_mismatch(&cm("4.21.3"), &cv), None);
        assert_eq!(release_mismatch(&cm("0.0.1-snapshot"), &cv), None);
        assert_eq!(release_mismatch(&json!({"data": {}}), &cv), None);
        assert!(
            release_mismatch(&cm("4.22.0"), &cv)
                .unwrap()
                .contains("4.22.0")
        );
    }
}
