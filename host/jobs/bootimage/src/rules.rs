//! The boot image job's host rules, sans-IO: the readiness, stability,
//! release and enrollment gates, and what the platform guest is given for
//! one MachineSet, read from the typed objects of `objects`. The planner
//! (`plan`) and `eval bootimage` both go through these. The last third is
//! unit tests.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::core::{Selector, SelectorExt};
use mco_bootimage::{ClusterFacts, Decision, InputError, MachineKind, MachineSetView};

use super::MANAGED_BOOT_IMAGES_CPMS;
use super::objects::{
    ClusterVersion, ConfigMapData, Infrastructure, Lenient, MachineConfiguration, MachineManager,
    Selection, Undecodable, UserDataSecret,
};
use super::platform;
use super::prepared::Prepared;
use mco_job::feature_gates::FeatureGates;

/// What the host rules read for one MachineSet besides the cluster gates.
#[derive(Debug, Clone, Copy)]
pub struct MachineSetInputs<'a> {
    pub machineset: &'a MachineSetView,
    pub infrastructure: &'a Infrastructure,
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
    Guest(Box<Prepared>),
}

/// The host rules for one MachineSet that passed the cluster gates:
/// platforms that run no boot image controller, and what its guest gets.
/// `Err` means the Infrastructure names no platform.
pub fn prepare(inputs: &MachineSetInputs<'_>) -> Result<Step, InputError> {
    let mut prepared = Prepared {
        platform_type: platform_type(inputs.infrastructure)?,
        machineset: inputs.machineset.clone(),
        cluster: ClusterFacts {
            control_plane_arch: inputs.control_plane_arch.to_owned(),
            multi_arch: inputs.multi_arch,
            known_images: inputs.known_images.clone(),
            vcenter: None,
            ec2: None,
        },
        vcenter: None,
        ec2: None,
    };
    if is_azure_stack(inputs.infrastructure) {
        let label = format!("{} (AzureStackCloud)", prepared.platform_type);
        return Ok(Step::Decided(prepared.unsupported(&label)));
    }
    let platform = platform::by_name(&prepared.platform_type);
    // A platform team's guest for a platform whose ControlPlaneMachineSets
    // upstream does not update is not asked.
    if prepared.machineset.kind == MachineKind::ControlPlaneMachineSet
        && !platform.is_some_and(|p| p.about().updates_control_plane_machine_sets)
    {
        return Ok(Step::Decided(prepared.without_guest()));
    }
    if let Some(decided) = platform.and_then(|p| p.prepare(inputs.infrastructure, &mut prepared)) {
        return Ok(Step::Decided(decided));
    }
    Ok(Step::Guest(Box::new(prepared)))
}

/// Whether a pass takes up objects of `kind` at all under `gates`. With
/// `ManagedBootImagesCPMS` off, upstream registers no ControlPlaneMachineSet
/// event handlers and `syncControlPlaneMachineSets` returns before it reads
/// enrollment, so no ControlPlaneMachineSet is part of a pass, whatever its
/// machine manager says (`pkg/controller/bootimage`, `cpms_helpers.go`).
pub fn in_pass(gates: &FeatureGates, kind: MachineKind) -> bool {
    match kind {
        MachineKind::MachineSet => true,
        MachineKind::ControlPlaneMachineSet => gates.enabled(MANAGED_BOOT_IMAGES_CPMS),
    }
}

/// `Some(skip)` naming the gate for an object no pass takes up (see
/// [`in_pass`]): what `eval` prints where the controller does nothing.
pub fn feature_gate(gates: &FeatureGates, ms: &MachineSetView) -> Option<Decision> {
    (!in_pass(gates, ms.kind)).then(|| {
        Decision::skip(format!(
            "feature gate {MANAGED_BOOT_IMAGES_CPMS} is off: ControlPlaneMachineSet {} gets no \
             boot image updates (no ControlPlaneMachineSet pass runs)",
            ms.name
        ))
    })
}

/// `None` when MachineConfiguration `cluster` exists and its status caught
/// up with its spec; otherwise why not.
pub fn not_ready(mc: Option<&MachineConfiguration>) -> Option<String> {
    let Some(mc) = mc else {
        return Some("machineconfigurations.operator.openshift.io \"cluster\" not found".into());
    };
    let generation = mc.metadata.generation.unwrap_or(0);
    let observed = mc.status.observed_generation;
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
pub fn release_mismatch(cm: &ConfigMapData, cv: &ClusterVersion) -> Option<String> {
    let stream_release = cm.data.get("releaseVersion")?;
    let cluster_release = cv.status.desired.as_ref()?.version.as_ref()?;
    (stream_release != cluster_release && stream_release != "0.0.1-snapshot").then(|| {
        format!("the coreos-bootimages ConfigMap is for release {stream_release}, the cluster is on {cluster_release}")
    })
}

/// Infrastructure `status.platformStatus.type`.
pub fn platform_type(infra: &Infrastructure) -> Result<String, InputError> {
    let status = &infra.status;
    let platform = status
        .platform_status
        .as_ref()
        .and_then(|p| p.type_.as_ref());
    platform
        .or(status.platform.as_ref())
        .cloned()
        .ok_or(InputError::Invalid {
            what: "Infrastructure",
            message: "status.platformStatus.type is not set".into(),
        })
}

/// AzureStackCloud runs no boot image controller at all.
fn is_azure_stack(infra: &Infrastructure) -> bool {
    let platform = infra.status.platform_status.as_ref();
    let azure = platform.and_then(|p| p.azure.as_ref());
    azure.and_then(|a| a.cloud_name.as_deref()) == Some("AzureStackCloud")
}

impl ConfigMapData {
    /// `data.stream`, `None` if the key is absent.
    pub fn stream(&self) -> Option<&str> {
        self.data.get("stream").map(String::as_str)
    }

    /// Every data value, read as a known-images text.
    pub fn known_images(&self) -> BTreeSet<String> {
        let texts = self.data.values();
        texts
            .flat_map(|text| known_images_from_text(text))
            .collect()
    }
}

/// The decoded `userData` of the user-data Secret (`data`, or `stringData`
/// as written in manifests). A Secret without it yields an empty text,
/// which the stub upgrade then reports, as the controller would.
pub fn user_data_from_secret(secret: &UserDataSecret) -> String {
    match secret.data.get("userData") {
        // Go's JSON decoder also replaces invalid UTF-8, so this loses
        // nothing the controller would have kept.
        Some(bytes) => String::from_utf8_lossy(&bytes.0).into_owned(),
        None => secret
            .string_data
            .get("userData")
            .cloned()
            .unwrap_or_default(),
    }
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

/// ClusterVersion `status.desired.architecture == "Multi"`.
pub fn is_multi_arch(cv: &ClusterVersion) -> bool {
    let desired = cv.status.desired.as_ref();
    desired.and_then(|d| d.architecture.as_deref()) == Some("Multi")
}

/// `isClusterStable`: updates wait while the cluster installs or upgrades
/// (boot image sources such as vCenter may be unreachable then).
pub fn stability_gate(cv: &ClusterVersion) -> Option<Decision> {
    match cv.status.history.first().map(|h| h.state.as_deref()) {
        Some(Some("Completed")) => None,
        Some(Some(s)) => Some(Decision::noop(format!(
            "cluster is not stable (ClusterVersion history[0].state is {s:?}); deferring boot image updates until the install or upgrade completes"
        ))),
        Some(None) | None => Some(Decision::noop(
            "cluster is not stable (ClusterVersion has no history yet); deferring boot image updates until the install completes",
        )),
    }
}

/// The machine manager `resource` that enrolls objects of `kind`.
fn manager_resource(kind: MachineKind) -> &'static str {
    match kind {
        MachineKind::MachineSet => "machinesets",
        MachineKind::ControlPlaneMachineSet => "controlplanemachinesets",
    }
}

/// The machine manager for `resource` in `managers`, by `resource` and
/// `apiGroup`, as `getMachineResourceSelectorFromMachineManagers` finds it.
fn find_manager<'a>(managers: &'a [MachineManager], resource: &str) -> Option<&'a MachineManager> {
    managers
        .iter()
        .find(|m| m.api_group == "machine.openshift.io" && m.resource == resource)
}

/// Which machine manager selection applies to objects of `kind`, and the
/// words that say where it came from.
struct Effective<'a> {
    /// `None`: nothing is enrolled (no manager for the resource, or a
    /// computed default of mode None).
    selection: Option<Chosen<'a>>,
    /// Where it was read or which rule of the operator's computation gave it.
    rule: String,
    /// Computed from the spec (no published status), not read.
    computed: bool,
}

/// A manager's selection, or the operator's default `All`.
enum Chosen<'a> {
    Manager(Option<&'a Selection>),
    All,
}

/// The selection the operator publishes in `status.managedBootImagesStatus`
/// for `kind`, read from the status when it is there, computed as
/// `syncManagedBootImagesStatus` would from the spec when it is not:
/// `machineManagers: []` opts out of everything; a spec entry for the
/// resource is copied; otherwise MachineSets are `All` on a default-on
/// platform and `None` elsewhere, and a ControlPlaneMachineSet is `None`
/// everywhere (opt-in).
fn effective_selection<'a>(
    mc: &'a MachineConfiguration,
    kind: MachineKind,
    platform: &str,
) -> Effective<'a> {
    let resource = manager_resource(kind);
    if let Some(status) = &mc.status.managed_boot_images_status {
        let path = "status.managedBootImagesStatus";
        let managers = status.machine_managers.as_deref();
        let selection = managers
            .and_then(|m| find_manager(m, resource))
            .map(|m| Chosen::Manager(m.selection.as_ref()));
        let rule = match (&selection, managers) {
            (Some(_), _) => path.to_owned(),
            (None, None | Some([])) => format!("{path}: no machine managers"),
            (None, Some(_)) => {
                format!("{path}: no manager for machine.openshift.io {resource}")
            }
        };
        return Effective {
            selection,
            rule,
            computed: false,
        };
    }
    let computed = |selection: Option<Chosen<'a>>, why: String| Effective {
        selection,
        rule: format!("{COMPUTED}: {why}"),
        computed: true,
    };
    let spec = mc.spec.managed_boot_images.as_ref();
    let spec = spec.and_then(|m| m.machine_managers.as_deref());
    if spec.is_some_and(<[MachineManager]>::is_empty) {
        return computed(
            None,
            "machineManagers is [], which opts out of everything".into(),
        );
    }
    if let Some(entry) = spec.and_then(|m| find_manager(m, resource)) {
        return computed(
            Some(Chosen::Manager(entry.selection.as_ref())),
            format!("the spec's {resource} entry"),
        );
    }
    // The operator's default: `All` for MachineSets on a default-on
    // platform (Azure Stack Hub runs no boot image controller at all and
    // never gets here); otherwise `None`, which enrolls nothing, so it is
    // given as no selection, with the rule as the reason.
    let default_on =
        super::platform::by_name(platform).is_some_and(|p| p.about().enrolled_by_default);
    let (selection, why) = match kind {
        MachineKind::MachineSet if default_on => (
            Some(Chosen::All),
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
    computed(selection, why)
}

/// How [`effective_selection`] words a selection it computed rather than read.
const COMPUTED: &str = "computed from spec.managedBootImages, as the operator would publish it";

/// The operator rule that enrolls or leaves out objects of `kind` when
/// MachineConfiguration `cluster` has no published status, for the
/// conditions to say; `None` when the status is there (nothing to explain).
pub fn computed_enrollment(
    mc: &MachineConfiguration,
    kind: MachineKind,
    platform: &str,
) -> Option<String> {
    let effective = effective_selection(mc, kind, platform);
    effective.computed.then_some(effective.rule)
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
    mc: &MachineConfiguration,
    ms: &MachineSetView,
    platform: &str,
) -> Option<Decision> {
    let Effective {
        selection, rule, ..
    } = effective_selection(mc, ms.kind, platform);
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
    let selection = match selection {
        None => return not_enrolled(""),
        Some(Chosen::All) => return None,
        Some(Chosen::Manager(selection)) => selection,
    };
    let mode = selection.map_or("", |s| s.mode.as_str());
    match mode {
        "All" => None,
        "None" => not_enrolled("mode None"),
        "Partial" => {
            let partial = selection.and_then(|s| s.partial.as_ref());
            let selector = partial.and_then(|p| p.machine_resource_selector.as_ref());
            match label_selector_matches(selector, &ms.labels) {
                Ok(true) => None,
                Ok(false) => not_enrolled("labels do not match the Partial selector"),
                Err(e) => Some(Decision::error(format!(
                    "invalid machineResourceSelector in {rule}: {e}"
                ))),
            }
        }
        other => Some(Decision::error(format!(
            "invalid machine manager selection mode {other:?} in {rule}"
        ))),
    }
}

/// A `machineResourceSelector` that selects nothing it could be asked to:
/// not a LabelSelector, or one whose expressions kube cannot parse.
#[derive(Debug, thiserror::Error)]
pub enum SelectorError {
    #[error(transparent)]
    Undecodable(#[from] Undecodable),
    #[error(transparent)]
    Invalid(#[from] kube::core::ParseExpressionError),
}

/// Kubernetes label-selector semantics (kube's implementation): no
/// selector selects nothing, an empty one everything.
pub fn label_selector_matches(
    selector: Option<&Lenient<LabelSelector>>,
    labels: &BTreeMap<String, String>,
) -> Result<bool, SelectorError> {
    let Some(Lenient(selector)) = selector else {
        return Ok(false);
    };
    let selector = Selector::try_from(selector.clone()?)?;
    Ok(selector.matches(labels))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::{Input, decode_as, known_images_configmap};
    use serde_json::{Value, json};

    fn mc(object: Value) -> Result<MachineConfiguration, InputError> {
        MachineConfiguration::decode(&object)
    }

    /// Enrollment as the planner applies it to MachineConfiguration JSON:
    /// an object that does not decode is an error.
    fn enrollment_gate(
        mc: &Value,
        ms: &MachineSetView,
        platform: &str,
    ) -> Result<Option<Decision>, InputError> {
        Ok(super::enrollment_gate(&self::mc(mc.clone())?, ms, platform))
    }

    fn computed_enrollment(mc: &Value, kind: MachineKind, platform: &str) -> Option<String> {
        super::computed_enrollment(&self::mc(mc.clone()).ok()?, kind, platform)
    }

    fn label_selector_matches(
        selector: &Value,
        labels: &BTreeMap<String, String>,
    ) -> Result<bool, SelectorError> {
        // Read as the field of a MachineConfiguration that holds it (a
        // Lenient field reads any JSON).
        let selector: Option<Lenient<LabelSelector>> =
            serde_json::from_value(selector.clone()).ok().flatten();
        super::label_selector_matches(selector.as_ref(), labels)
    }

    fn cv(object: &Value) -> Result<ClusterVersion, InputError> {
        ClusterVersion::decode(object)
    }

    fn stability_gate(object: &Value) -> Result<Option<Decision>, InputError> {
        cv(object).map(|cv| super::stability_gate(&cv))
    }

    fn is_multi_arch(object: &Value) -> Result<bool, InputError> {
        cv(object).map(|cv| super::is_multi_arch(&cv))
    }

    fn user_data_from_secret(object: &Value) -> Result<String, InputError> {
        UserDataSecret::decode(object).map(|s| super::user_data_from_secret(&s))
    }

    fn stream_from_configmap(object: &Value) -> Result<Option<String>, InputError> {
        let cm: ConfigMapData = decode_as(object, "ConfigMap")?;
        Ok(cm.stream().map(str::to_owned))
    }

    fn known_images_from_configmap(object: &Value) -> Result<BTreeSet<String>, InputError> {
        known_images_configmap(object).map(|cm| cm.known_images())
    }

    fn infra(object: &Value) -> Result<Infrastructure, InputError> {
        Infrastructure::decode(object)
    }

    fn platform_type(object: &Value) -> Result<String, InputError> {
        super::platform_type(&infra(object)?)
    }

    fn is_azure_stack(object: &Value) -> Result<bool, InputError> {
        infra(object).map(|i| super::is_azure_stack(&i))
    }

    fn not_ready(object: Option<&Value>) -> Option<String> {
        let mc = object.map(|o| self::mc(o.clone()).unwrap_or_default());
        super::not_ready(mc.as_ref())
    }

    fn release_mismatch(cm: &Value, cv: &Value) -> Option<String> {
        let cm: ConfigMapData = decode_as(cm, "ConfigMap").ok()?;
        super::release_mismatch(&cm, &self::cv(cv).ok()?)
    }

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
        assert!(!label_selector_matches(&json!(null), &l).unwrap());
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
        // Without a status, what the operator would publish
        // (`syncManagedBootImagesStatus`).
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
        assert_eq!(stream_from_configmap(&cm).unwrap().as_deref(), Some("{}"));
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
            not_ready(Some(&mc(1, json!(null))))
                .unwrap()
                .contains("unset")
        );
    }

    #[test]
    fn without_the_cpms_gate_no_control_plane_machine_set_is_in_a_pass() {
        let cpms = MachineSetView {
            kind: MachineKind::ControlPlaneMachineSet,
            name: "cluster".into(),
            ..ms(&[])
        };
        let on = FeatureGates::default_of(crate::FEATURE_GATES);
        assert!(in_pass(&on, MachineKind::ControlPlaneMachineSet));
        assert_eq!(feature_gate(&on, &cpms), None);
        let off = crate::gates_without(&[MANAGED_BOOT_IMAGES_CPMS]);
        assert!(!in_pass(&off, MachineKind::ControlPlaneMachineSet));
        assert_eq!(
            feature_gate(&off, &cpms),
            Some(Decision::skip(
                "feature gate ManagedBootImagesCPMS is off: ControlPlaneMachineSet cluster gets \
                 no boot image updates (no ControlPlaneMachineSet pass runs)"
            ))
        );
        // MachineSets follow no gate; the skew gate is not this one.
        assert!(in_pass(&off, MachineKind::MachineSet));
        assert_eq!(feature_gate(&off, &ms(&[])), None);
        let skew_off = crate::gates_without(&[crate::BOOT_IMAGE_SKEW_ENFORCEMENT]);
        assert!(in_pass(&skew_off, MachineKind::ControlPlaneMachineSet));
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
