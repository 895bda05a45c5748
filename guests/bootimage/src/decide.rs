//! The per-MachineSet algorithm (`syncMAPIMachineSet` on MCO main) and its
//! ControlPlaneMachineSet twin (`syncControlPlaneMachineSet`), minus the
//! host's parts (informers, gates, hot-loop bookkeeping, the PATCH call).

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::arch::{self, ArchError};
use crate::decision::{Decision, UserData, UserDataUpgrade};
use crate::ec2::Ec2Facts;
use crate::ignition::{self, StubUpgrade};
use crate::machineset::{MachineKind, MachineSetView};
use crate::platform::{Platform, PlatformOutcome};
use crate::stream::{Stream, StreamQuery};
use crate::validate::validate_decision_for;
use crate::vcenter::VcenterFacts;

/// MachineSets labelled with another OS stream are managed elsewhere.
pub const OS_STREAM_LABEL: &str = "machineconfiguration.openshift.io/osstream";
/// The only OS stream whose boot images this controller manages.
pub const SUPPORTED_OS_STREAM: &str = "rhel-9";
/// Template label that marks Windows MachineSets, whose images are not RHCOS.
pub const OS_ID_LABEL: &str = "machine.openshift.io/os-id";

/// What the rules know besides the MachineSet, its user data and the
/// stream: facts about the cluster, and what the host read from the
/// platform for this MachineSet.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClusterFacts {
    /// Stream arch name (`x86_64`, ...) of the control plane, used when a
    /// MachineSet has no arch annotation on a single-arch cluster.
    pub control_plane_arch: String,
    /// ClusterVersion `status.desired.architecture == "Multi"`.
    pub multi_arch: bool,
    /// Extra image identifiers that count as published RHCOS images.
    pub known_images: BTreeSet<String>,
    /// vSphere: what the host read from vCenter for this MachineSet (none
    /// when its workspace matches no failure domain, or off vSphere).
    pub vcenter: Option<VcenterFacts>,
    /// AWS: what the host read from EC2 about the MachineSet's AMI (none
    /// when EC2 was not consulted, or off AWS).
    pub ec2: Option<Ec2Facts>,
}

/// Steps 1–4 of the per-MachineSet algorithm: owner references, OS stream,
/// Windows, architecture. `Ok` carries the stream arch name to use.
///
/// Public so that a host can apply them before it has chosen (or found no)
/// platform rule: an unsupported platform is only a no-op after these.
// The error side is a finished decision, returned at most once per
// MachineSet; boxing it would only make callers noisier.
#[allow(clippy::result_large_err)]
pub fn common_rules(ms: &MachineSetView, cluster: &ClusterFacts) -> Result<String, Decision> {
    let noun = ms.kind.noun();
    if let Some(first) = ms.owner_references.first() {
        return Err(left_alone(
            ms,
            format!(
                "{noun} {} has OwnerReference: {first}, skipping boot image update",
                ms.name
            ),
        ));
    }
    if let Some(stream) = ms.labels.get(OS_STREAM_LABEL)
        && stream != SUPPORTED_OS_STREAM
    {
        return Err(Decision::noop(format!(
            "{noun} {} uses OS stream {:?}; boot image updates only manage the {} stream",
            ms.name, stream, SUPPORTED_OS_STREAM
        )));
    }
    if ms.template_labels.get(OS_ID_LABEL).map(String::as_str) == Some("Windows") {
        return Err(Decision::noop(format!(
            "{noun} {} is a Windows {}; boot image updates do not apply",
            ms.name,
            ms.kind.kind()
        )));
    }
    match arch::machineset_arch(ms, &cluster.control_plane_arch, cluster.multi_arch) {
        Ok(a) => Ok(a),
        Err(e @ ArchError::NoAnnotation(_)) => Err(Decision::skip(format!(
            "{e}, skipping boot image update until the MachineSet is annotated with its architecture"
        ))),
        Err(e) => Err(fail(ms, &format!("failed to determine architecture: {e}"))),
    }
}

/// A decision that leaves the object alone on purpose. A MachineSet counts
/// as skipped; upstream counts a ControlPlaneMachineSet as reconciled in
/// every such case (upstream
/// `syncControlPlaneMachineSets`), so for it this is a `noop`
/// that says why.
fn left_alone(ms: &MachineSetView, reason: String) -> Decision {
    match ms.kind {
        MachineKind::MachineSet => Decision::skip(reason),
        MachineKind::ControlPlaneMachineSet => Decision::noop(format!(
            "{reason} (a ControlPlaneMachineSet left alone counts as reconciled)"
        )),
    }
}

/// The decision for a platform the controller has no rule for: no guest
/// is registered for it (the host's word for it: vSphere is supported
/// upstream, and here too when its guest serves), or upstream has none.
pub fn unsupported_platform(ms: &MachineSetView, platform_type: &str) -> Decision {
    match (ms.kind, platform_type) {
        (MachineKind::ControlPlaneMachineSet, _) => Decision::noop(format!(
            "Skipping controlplanemachineset {}, unsupported platform {platform_type}",
            ms.name
        )),
        (MachineKind::MachineSet, "VSphere") => Decision::noop(format!(
            "no boot image guest serves platform VSphere; nothing to do for machineset {}",
            ms.name
        )),
        (MachineKind::MachineSet, _) => Decision::noop(format!(
            "platform {platform_type:?} does not support boot image updates; nothing to do for machineset {}",
            ms.name
        )),
    }
}

/// Decides for one MachineSet with an already parsed stream.
pub fn decide<P: Platform + ?Sized>(
    platform: &P,
    stream: &dyn StreamQuery,
    ms: &MachineSetView,
    cluster: &ClusterFacts,
    user_data: Option<&str>,
) -> Decision {
    let decision = match common_rules(ms, cluster) {
        Ok(arch) => reconcile(platform, stream, &arch, ms, cluster, user_data),
        Err(d) => d,
    };
    checked(ms, decision)
}

/// The stream a `coreos-bootimages` ConfigMap carries (`None`: no
/// `data.stream` key), or why it carries none that can be used.
pub fn load_stream(text: Option<&str>) -> Result<Stream, String> {
    match text {
        None => Err(
            "the coreos-bootimages ConfigMap has no data.stream key with CoreOS stream metadata"
                .into(),
        ),
        Some(text) => Stream::parse(text).map_err(|e| e.to_string()),
    }
}

/// [`decide_loaded`] straight from the text a `coreos-bootimages` ConfigMap
/// carries in `data.stream` (`None`: no such key): the answer one guest call
/// with a fresh stream resource gives. The component and the controller load
/// a stream once for many MachineSets instead.
pub fn decide_text<P: Platform + ?Sized>(
    platform: &P,
    stream: Option<&str>,
    ms: &MachineSetView,
    cluster: &ClusterFacts,
    user_data: Option<&str>,
) -> Decision {
    let loaded = load_stream(stream);
    decide_loaded(
        platform,
        match &loaded {
            Ok(stream) => Ok(stream),
            Err(why) => Err(why),
        },
        ms,
        cluster,
        user_data,
    )
}

/// Like [`decide`], for a stream that may be unusable: the common rules and
/// the providerSpec check come first, so in the controller a MachineSet that
/// is skipped anyway is never affected by a broken ConfigMap.
pub fn decide_loaded<P: Platform + ?Sized>(
    platform: &P,
    stream: Result<&dyn StreamQuery, &str>,
    ms: &MachineSetView,
    cluster: &ClusterFacts,
    user_data: Option<&str>,
) -> Decision {
    let decision = match common_rules(ms, cluster) {
        Err(d) => d,
        Ok(_) if ms.provider_spec.is_none() => provider_spec_empty(ms),
        Ok(arch) => match stream {
            Ok(stream) => reconcile(platform, stream, &arch, ms, cluster, user_data),
            Err(detail) => fail(ms, detail),
        },
    };
    checked(ms, decision)
}

/// Holds a decision to the host's own checks ([`validate_decision_for`]): one
/// that would fail them (a Secret name the API server would refuse, an
/// image reference of megabytes) becomes an `error` decision that names
/// the problem, so hostile input is reported against its MachineSet instead
/// of looking like a broken guest.
fn checked(ms: &MachineSetView, decision: Decision) -> Decision {
    match validate_decision_for(&decision, ms.kind) {
        Ok(()) => decision,
        Err(why) => fail(
            ms,
            &format!("the decision would not pass the host's checks: {why}"),
        ),
    }
}

fn fail(ms: &MachineSetView, detail: &str) -> Decision {
    Decision::error(format!(
        "failed to reconcile {} {}, err: {detail}",
        ms.kind.noun(),
        ms.name
    ))
}

fn provider_spec_empty(ms: &MachineSetView) -> Decision {
    fail(ms, "providerSpec field was empty")
}

/// Wraps a providerSpec-level merge patch into one for the object, at the
/// path its kind keeps the providerSpec.
fn object_patch(kind: MachineKind, fragment: Map<String, Value>) -> Value {
    kind.provider_spec_path()
        .iter()
        .rev()
        .fold(Value::Object(fragment), |inner, key| json!({ *key: inner }))
}

fn reconcile<P: Platform + ?Sized>(
    platform: &P,
    stream: &dyn StreamQuery,
    arch: &str,
    ms: &MachineSetView,
    cluster: &ClusterFacts,
    user_data: Option<&str>,
) -> Decision {
    let Some(spec) = &ms.provider_spec else {
        return provider_spec_empty(ms);
    };
    let spec = spec.part(platform.provider_spec_fields());
    let (target, fragment, import) = match platform.reconcile(stream, arch, &spec, cluster) {
        PlatformOutcome::OnTarget { target } => {
            let what = match ms.kind {
                MachineKind::MachineSet => "MAPI machineset",
                MachineKind::ControlPlaneMachineSet => "ControlPlaneMachineSet",
            };
            return Decision::noop(format!(
                "No patching required for {what} {}: boot image is already {target}",
                ms.name
            ));
        }
        PlatformOutcome::Noop { reason } => {
            return Decision::noop(format!("{} {}: {reason}", ms.kind.noun(), ms.name));
        }
        PlatformOutcome::Skip { reason } => {
            return left_alone(
                ms,
                format!(
                    "{reason}, skipping boot image update of {} {}",
                    ms.kind.noun(),
                    ms.name
                ),
            );
        }
        PlatformOutcome::Error { message } => return fail(ms, &message),
        PlatformOutcome::Update {
            target,
            fragment,
            import,
        } => (target, fragment, import),
    };

    // A patch that does not converge would be applied again on the update
    // event it causes: refuse it here rather than let the host hot-loop.
    // An import changes vCenter instead, as the host will apply it.
    let mut patched = Value::clone(&spec);
    json_patch::merge(&mut patched, &Value::Object(fragment.clone()));
    if patched == *spec && import.is_none() {
        return fail(
            ms,
            &format!(
                "internal error: the {} rule produced a patch that changes nothing",
                platform.platform_type()
            ),
        );
    }
    let mut after = cluster.clone();
    if let (Some(import), Some(vcenter)) = (&import, after.vcenter.as_mut()) {
        vcenter.apply(import);
    }
    if let Some(ec2) = after.ec2.as_mut() {
        ec2.apply(&target);
    }
    match platform.reconcile(stream, arch, &patched, &after) {
        PlatformOutcome::OnTarget { target: t } if t == target => {}
        other => {
            return fail(
                ms,
                &format!(
                    "internal error: the {} rule's patch does not converge (re-evaluation gave {other:?})",
                    platform.platform_type()
                ),
            );
        }
    }

    // The stub must be readable by the new image, so it is checked (and
    // upgraded) before the MachineSet is patched, and its failure blocks the
    // patch.
    let secret = match ms.user_data_secret_name() {
        Ok(Some(name)) => name.to_owned(),
        Ok(None) => {
            return fail(
                ms,
                "error grabbing user data secret referenced in machineset: providerSpec.value.userDataSecret.name is not set",
            );
        }
        Err(e) => {
            return fail(
                ms,
                &format!("error grabbing user data secret referenced in machineset: {e}"),
            );
        }
    };
    let upgrade = match user_data.map(ignition::upgrade_stub) {
        None | Some(Ok(StubUpgrade::AlreadyCurrent)) => None,
        Some(Ok(StubUpgrade::Converted(text))) => Some(UserDataUpgrade {
            name: secret,
            data: UserData {
                user_data: base64::engine::general_purpose::STANDARD.encode(text.as_bytes()),
            },
            annotations: BTreeMap::from([(
                ignition::ANNOTATION_UPGRADED_TO.to_owned(),
                ignition::STUB_TARGET_VERSION.to_owned(),
            )]),
        }),
        Some(Err(e)) => return fail(ms, &e.to_string()),
    };

    // Only an import: the MachineSet already names the template.
    let patch = if fragment.is_empty() {
        json!({})
    } else {
        object_patch(ms.kind, fragment)
    };
    Decision::Patch {
        target,
        patch,
        user_data_secret: upgrade,
        import,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A platform whose image lives in `providerSpec.value.image` and whose
    /// target is the stream's vmware release, so tests control everything
    /// from the input.
    struct Fake {
        /// Make the patch not converge, to test the guard.
        broken: bool,
        /// Make the patch change nothing, to test the guard.
        empty: bool,
    }

    const FAKE: Fake = Fake {
        broken: false,
        empty: false,
    };

    impl Platform for Fake {
        fn platform_type(&self) -> &'static str {
            "Fake"
        }

        fn provider_spec_fields(&self) -> &'static [&'static str] {
            &["image"]
        }

        fn reconcile(
            &self,
            stream: &dyn StreamQuery,
            _arch: &str,
            spec: &Value,
            _facts: &ClusterFacts,
        ) -> PlatformOutcome {
            let target = match stream.vmware_release("x86_64") {
                Ok(release) => release,
                Err(e) => return PlatformOutcome::error(e.to_string()),
            };
            match spec.get("image").and_then(Value::as_str) {
                Some(i) if i == target => PlatformOutcome::OnTarget { target },
                Some("custom") => PlatformOutcome::skip("current image is custom"),
                Some("noop") => PlatformOutcome::noop("nothing to do here"),
                Some(_) => {
                    let mut fragment = Map::new();
                    let value = if self.broken {
                        "elsewhere".into()
                    } else {
                        target.clone()
                    };
                    if !self.empty {
                        fragment.insert("image".into(), Value::String(value));
                    }
                    PlatformOutcome::Update {
                        target,
                        fragment,
                        import: None,
                    }
                }
                None => PlatformOutcome::error("no image"),
            }
        }
    }

    const NEW: &str = r#"{"stream": "s", "architectures": {"x86_64": {"artifacts": {"vmware": {"release": "new"}}}}}"#;

    fn stream() -> Stream {
        Stream::parse(NEW).unwrap()
    }

    fn cluster() -> ClusterFacts {
        ClusterFacts {
            control_plane_arch: "x86_64".into(),
            multi_arch: false,
            known_images: BTreeSet::new(),
            vcenter: None,
            ec2: None,
        }
    }

    fn ms(image: &str) -> Value {
        json!({"metadata": {"name": "ms1", "labels": {}, "annotations": {arch::ARCH_ANNOTATION: "kubernetes.io/arch=amd64"}},
               "spec": {"template": {"metadata": {"labels": {}}, "spec": {"providerSpec": {"value": {
                   "image": image, "userDataSecret": {"name": "worker-user-data"}}}}}}})
    }

    fn view(v: &Value) -> MachineSetView {
        MachineSetView::from_object(v).unwrap()
    }

    fn run(v: &Value, user_data: Option<&str>) -> Decision {
        decide(&FAKE, &stream(), &view(v), &cluster(), user_data)
    }

    #[test]
    fn patch_shape_and_idempotence() {
        let d = run(&ms("old"), None);
        assert_eq!(
            d,
            Decision::Patch {
                target: "new".into(),
                patch: json!({"spec": {"template": {"spec": {"providerSpec": {"value": {"image": "new"}}}}}}),
                user_data_secret: None,
                import: None,
            }
        );
        let Decision::Patch { patch, .. } = d else {
            unreachable!()
        };
        let mut patched = ms("old");
        json_patch::merge(&mut patched, &patch);
        assert_eq!(run(&patched, None).action(), "noop");
    }

    #[test]
    fn platform_outcomes_are_worded_with_the_machineset_name() {
        assert_eq!(
            run(&ms("new"), None),
            Decision::noop(
                "No patching required for MAPI machineset ms1: boot image is already new"
            )
        );
        assert_eq!(
            run(&ms("custom"), None),
            Decision::skip("current image is custom, skipping boot image update of machineset ms1")
        );
        assert_eq!(
            run(&ms("noop"), None),
            Decision::noop("machineset ms1: nothing to do here")
        );
        let mut v = ms("x");
        v["spec"]["template"]["spec"]["providerSpec"]["value"] = json!({});
        assert_eq!(
            run(&v, None),
            Decision::error("failed to reconcile machineset ms1, err: no image")
        );
    }

    #[test]
    fn guards_against_patches_that_would_hot_loop() {
        for fake in [
            Fake {
                broken: true,
                empty: false,
            },
            Fake {
                broken: false,
                empty: true,
            },
        ] {
            let d = decide(&fake, &stream(), &view(&ms("old")), &cluster(), None);
            match d {
                Decision::Error { message } => {
                    assert!(message.contains("internal error"), "{message}")
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn common_rules_come_first_in_upstream_order() {
        let mut v = ms("old");
        v["metadata"]["ownerReferences"] = json!([{"kind": "MachinePool", "name": "mp"}]);
        v["metadata"]["labels"][OS_STREAM_LABEL] = json!("rhel-10");
        v["spec"]["template"]["metadata"]["labels"][OS_ID_LABEL] = json!("Windows");
        v["metadata"]["annotations"][arch::ARCH_ANNOTATION] = json!("bogus");
        let d = run(&v, None);
        assert_eq!(d.action(), "skip");
        assert!(
            matches!(&d, Decision::Skip { reason } if reason.contains("OwnerReference: MachinePool/mp")),
            "{d:?}"
        );
        v["metadata"]["ownerReferences"] = json!([]);
        assert!(matches!(run(&v, None), Decision::Noop { reason } if reason.contains("rhel-10")));
        v["metadata"]["labels"][OS_STREAM_LABEL] = json!("rhel-9");
        assert!(matches!(run(&v, None), Decision::Noop { reason } if reason.contains("Windows")));
        v["spec"]["template"]["metadata"]["labels"][OS_ID_LABEL] = json!("Linux");
        assert!(
            matches!(run(&v, None), Decision::Error { message } if message.contains("kubernetes.io/arch label not found"))
        );
        v["metadata"]["annotations"] = json!({});
        let multi = ClusterFacts {
            multi_arch: true,
            ..cluster()
        };
        assert_eq!(
            decide(&FAKE, &stream(), &view(&v), &multi, None).action(),
            "skip"
        );
        assert_eq!(run(&v, None).action(), "patch");
    }

    #[test]
    fn decide_raw_parses_the_stream_after_the_cheap_checks() {
        let v = ms("old");
        let c = cluster();
        assert_eq!(
            decide_text(&FAKE, Some(NEW), &view(&v), &c, None).action(),
            "patch"
        );
        assert_eq!(
            decide_text(&FAKE, Some("{oops"), &view(&v), &c, None),
            Decision::error(
                "failed to reconcile machineset ms1, err: failed to parse CoreOS stream metadata: key must be a string at line 1 column 2"
            )
        );
        assert!(matches!(
            decide_text(&FAKE, None, &view(&v), &c, None),
            Decision::Error { message } if message.contains("no data.stream")
        ));
        let mut no_spec = ms("old");
        no_spec["spec"]["template"]["spec"] = json!({});
        assert_eq!(
            decide_text(&FAKE, Some("{oops"), &view(&no_spec), &c, None),
            Decision::error(
                "failed to reconcile machineset ms1, err: providerSpec field was empty"
            )
        );
        assert_eq!(
            decide(&FAKE, &stream(), &view(&no_spec), &c, None),
            Decision::error(
                "failed to reconcile machineset ms1, err: providerSpec field was empty"
            )
        );
        let mut owned = ms("old");
        owned["metadata"]["ownerReferences"] = json!([{"kind": "K", "name": "n"}]);
        assert_eq!(
            decide_text(&FAKE, Some("{oops"), &view(&owned), &c, None).action(),
            "skip"
        );
    }

    #[test]
    fn stub_upgrade_rides_along_with_the_patch() {
        let v2 =
            r#"{"ignition":{"version":"2.2.0","config":{"append":[{"source":"https://x/w"}]}}}"#;
        match run(&ms("old"), Some(v2)) {
            Decision::Patch {
                user_data_secret: Some(u),
                ..
            } => {
                assert_eq!(u.name, "worker-user-data");
                let text = base64::engine::general_purpose::STANDARD
                    .decode(&u.data.user_data)
                    .unwrap();
                assert_eq!(
                    String::from_utf8(text).unwrap(),
                    r#"{"ignition":{"config":{"merge":[{"source":"https://x/w"}]},"version":"3.5.0"}}"#
                );
                assert_eq!(
                    u.annotations,
                    BTreeMap::from([(
                        ignition::ANNOTATION_UPGRADED_TO.to_owned(),
                        "3.5.0".to_owned()
                    )])
                );
            }
            other => panic!("{other:?}"),
        }
        let v3 = r#"{"ignition":{"version":"3.4.0"}}"#;
        assert!(matches!(
            run(&ms("old"), Some(v3)),
            Decision::Patch {
                user_data_secret: None,
                ..
            }
        ));
        // No patch, no stub work even for a broken stub.
        assert_eq!(run(&ms("new"), Some("garbage")).action(), "noop");
        // A stub that cannot be converted blocks the patch.
        assert!(matches!(
            run(&ms("old"), Some("garbage")),
            Decision::Error { message } if message.contains("converting ignition stub failed")
        ));
    }

    #[test]
    fn user_data_secret_name_is_required_for_a_patch() {
        let mut v = ms("old");
        v["spec"]["template"]["spec"]["providerSpec"]["value"]
            .as_object_mut()
            .unwrap()
            .remove("userDataSecret");
        assert!(matches!(
            run(&v, None),
            Decision::Error { message } if message.contains("userDataSecret.name is not set")
        ));
        v["spec"]["template"]["spec"]["providerSpec"]["value"]["userDataSecret"] = json!(["x"]);
        assert!(matches!(
            run(&v, None),
            Decision::Error { message } if message.contains("providerSpec.value.userDataSecret must be an object")
        ));
        // Not needed when there is nothing to patch.
        v["spec"]["template"]["spec"]["providerSpec"]["value"]["image"] = json!("new");
        assert_eq!(run(&v, None).action(), "noop");
    }

    fn cpms(image: &str) -> Value {
        json!({"kind": "ControlPlaneMachineSet", "metadata": {"name": "cluster", "labels": {},
                   "annotations": {arch::ARCH_ANNOTATION: "kubernetes.io/arch=arm64"}},
               "spec": {"template": {"machineType": "machines_v1beta1_machine_openshift_io",
                   "machines_v1beta1_machine_openshift_io": {"metadata": {"labels": {}}, "spec": {
                       "metadata": {"labels": {}},
                       "providerSpec": {"value": {"image": image, "userDataSecret": {"name": "master-user-data"}}}}}}}})
    }

    fn run_cpms(v: &Value) -> Decision {
        let view = MachineSetView::from_control_plane_machine_set(v).unwrap();
        let multi = ClusterFacts {
            multi_arch: true,
            ..cluster()
        };
        decide(&FAKE, &stream(), &view, &multi, None)
    }

    #[test]
    fn a_control_plane_machine_set_is_patched_one_level_deeper() {
        // Multi and an arm64 annotation play no part: the control plane's
        // arch is used, so the MachineSet's "no annotation" skip cannot happen.
        let d = run_cpms(&cpms("old"));
        let Decision::Patch { target, patch, .. } = &d else {
            panic!("{d:?}");
        };
        assert_eq!(target, "new");
        assert_eq!(
            patch,
            &json!({"spec": {"template": {"machines_v1beta1_machine_openshift_io": {"spec": {"providerSpec": {"value": {"image": "new"}}}}}}})
        );
        let mut patched = cpms("old");
        json_patch::merge(&mut patched, patch);
        assert_eq!(
            run_cpms(&patched),
            Decision::noop(
                "No patching required for ControlPlaneMachineSet cluster: boot image is already new"
            )
        );
    }

    #[test]
    fn what_a_machineset_skips_a_control_plane_machine_set_counts_as_reconciled() {
        assert_eq!(
            run_cpms(&cpms("custom")),
            Decision::noop(
                "current image is custom, skipping boot image update of ControlPlaneMachineSet cluster (a ControlPlaneMachineSet left alone counts as reconciled)"
            )
        );
        let mut owned = cpms("old");
        owned["metadata"]["ownerReferences"] = json!([{"kind": "ClusterDeployment", "name": "c1"}]);
        assert_eq!(run_cpms(&owned).action(), "noop");
        let mut windows = cpms("old");
        windows["spec"]["template"]["machines_v1beta1_machine_openshift_io"]["spec"]["metadata"]
            ["labels"]["machine.openshift.io/os-id"] = json!("Windows");
        assert_eq!(
            run_cpms(&windows),
            Decision::noop(
                "ControlPlaneMachineSet cluster is a Windows ControlPlaneMachineSet; boot image updates do not apply"
            )
        );
        // The machine-template labels are not where the marker is read.
        let mut machine_labels = cpms("old");
        machine_labels["spec"]["template"]["machines_v1beta1_machine_openshift_io"]["metadata"]["labels"]
            ["machine.openshift.io/os-id"] = json!("Windows");
        assert_eq!(run_cpms(&machine_labels).action(), "patch");
        // Errors stay errors, worded for the kind.
        assert_eq!(
            run_cpms(&cpms_without_provider_spec()),
            Decision::error(
                "failed to reconcile ControlPlaneMachineSet cluster, err: providerSpec field was empty"
            )
        );
        // A MachineSet is not read as a ControlPlaneMachineSet.
        let mut machineset = ms("old");
        machineset["kind"] = json!("MachineSet");
        assert!(MachineSetView::from_control_plane_machine_set(&machineset).is_err());
    }

    fn cpms_without_provider_spec() -> Value {
        let mut v = cpms("old");
        v["spec"]["template"]["machines_v1beta1_machine_openshift_io"]["spec"]
            .as_object_mut()
            .unwrap()
            .remove("providerSpec");
        v
    }

    #[test]
    fn unsupported_platform_wording() {
        assert_eq!(
            unsupported_platform(&view(&ms("x")), "BareMetal"),
            Decision::noop(
                "platform \"BareMetal\" does not support boot image updates; nothing to do for machineset ms1"
            )
        );
        // Upstream supports vSphere, and so does the shipped guest: only a
        // registry without one leaves it alone.
        assert_eq!(
            unsupported_platform(&view(&ms("x")), "VSphere"),
            Decision::noop(
                "no boot image guest serves platform VSphere; nothing to do for machineset ms1"
            )
        );
        let cp = MachineSetView::from_control_plane_machine_set(&cpms("x")).unwrap();
        assert_eq!(
            unsupported_platform(&cp, "VSphere"),
            Decision::noop("Skipping controlplanemachineset cluster, unsupported platform VSphere")
        );
    }
}
