//! The managed boot image controller (`mco-host run --boot-images`) against a
//! real kube-apiserver and etcd, as the ServiceAccount with the RBAC in
//! `deploy/` and `deploy/boot-images/`.
//!
//! Each test builds a small cluster: Infrastructure, ClusterVersion,
//! MachineConfiguration, the `coreos-bootimages` ConfigMap with an older
//! release's stream, MachineSets and their user-data Secrets; then it lands
//! a newer stream (or changes enrollment, stability, a competing writer) and
//! checks what was written, and what was not.

use crate::support;

use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, ensure};
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use mco_e2e::openshift;
use serde_json::{Value, json};
use tokio::time::sleep;

use support::bootimages::{
    CONVERGE, CPMS_PROVIDER_SPEC, Cluster, Image, MAPI, MachineSetSpec, NEW, OLD, Platform,
    all_managers, ami, managers_with_cpms,
};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
const POLL: Duration = Duration::from_millis(200);
/// How long "nothing happens" is watched for.
const QUIET: Duration = Duration::from_secs(3);
/// A resync every second: a quiet period sees several passes.
const RESYNC: [&str; 2] = ["--resync", "1s"];

async fn in_cluster<F>(platform: Platform, machinesets: &[MachineSetSpec], test: F) -> Result<()>
where
    F: AsyncFnOnce(&mut Cluster) -> Result<()>,
{
    let _one_at_a_time = SERIAL.lock().await;
    let mut cluster = Cluster::start(platform, machinesets).await?;
    let result = test(&mut cluster).await;
    cluster.fx.finish(result)
}

fn platform_machinesets() -> Vec<MachineSetSpec> {
    vec![
        MachineSetSpec {
            secret: "legacy-user-data",
            ..MachineSetSpec::new("rhcos")
        },
        MachineSetSpec {
            image: Image::Rhcos(OLD, "aarch64"),
            arch_annotation: "kubernetes.io/arch=arm64",
            ..MachineSetSpec::new("arm")
        },
        MachineSetSpec {
            image: Image::Custom,
            ..MachineSetSpec::new("custom")
        },
        MachineSetSpec {
            owned: true,
            ..MachineSetSpec::new("owned")
        },
        MachineSetSpec {
            windows: true,
            ..MachineSetSpec::new("windows")
        },
        MachineSetSpec {
            arch_annotation: "kubernetes.io/arch=s390x",
            ..MachineSetSpec::new("s390x")
        },
    ]
}

/// What the platform rules make of the MachineSets that are not patched:
/// (name, event reason and note fragment, or none).
fn left_alone(platform: Platform) -> Vec<(&'static str, Option<(&'static str, &'static str)>)> {
    let s390x = match platform {
        Platform::Gcp => Some((
            "BootImageUpdateFailed",
            "does not have architecture 's390x'",
        )),
        Platform::Aws => Some(("BootImageUpdateSkipped", "s390x")),
        // vSphere has its own test (bootimage_vsphere.rs).
        Platform::Azure | Platform::Vsphere => None,
    };
    let custom = match platform {
        Platform::Azure => (
            "BootImageUpdateFailed",
            "could not determine azure marketplace variant",
        ),
        _ => ("BootImageUpdateSkipped", "unknown"),
    };
    vec![
        ("custom", Some(custom)),
        ("owned", Some(("BootImageUpdateSkipped", "OwnerReference"))),
        ("windows", None),
        ("s390x", s390x),
    ]
}

// ---- 1, 2, 3: every platform ---------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_platform_moves_exactly_the_rhcos_machinesets_to_the_new_stream() -> Result<()> {
    for platform in [Platform::Gcp, Platform::Aws, Platform::Azure] {
        eprintln!("bootimage_controller: ===== {platform:?} =====");
        in_cluster(platform, &platform_machinesets(), async |c| {
            new_stream_lands(c)
                .await
                .with_context(|| format!("{platform:?}"))
        })
        .await?;
    }
    Ok(())
}

async fn new_stream_lands(c: &mut Cluster) -> Result<()> {
    let platform = c.platform;
    let (progress, degraded) = match platform {
        Platform::Gcp => (
            "Reconciled 3 of 6 MAPI MachineSets (2 skipped) | ",
            ("True", "1 Degraded MAPI MachineSets | "),
        ),
        Platform::Aws => (
            "Reconciled 3 of 6 MAPI MachineSets (3 skipped) | ",
            ("False", "0 Degraded MAPI MachineSets | "),
        ),
        Platform::Azure => (
            "Reconciled 4 of 6 MAPI MachineSets (1 skipped) | ",
            ("True", "1 Degraded MAPI MachineSets | "),
        ),
        Platform::Vsphere => anyhow::bail!("vSphere has its own test: bootimage_vsphere.rs"),
    };
    // Each platform's guest also shadows itself: every comparison agrees.
    let registry = c.self_shadowing_registry()?;
    let registry = registry.display().to_string();
    let controller = c
        .start_controller("boot-a", &[RESYNC[0], RESYNC[1], "--registry", &registry])
        .await?;
    // On the old stream every RHCOS MachineSet is current.
    c.wait_conditions(progress, degraded).await?;
    let state = c.state().await?;
    ensure!(
        state
            .get("known-images")
            .is_some_and(|k| k.contains(&ami(OLD, "x86_64"))),
        "the old stream's images are not recorded: {state:?}"
    );
    let before = c.resource_versions().await?;
    let secrets: Api<Secret> = Api::namespaced(c.admin(), MAPI);
    let spec3_before = secrets.get("worker-user-data").await?;
    ensure!(
        c.metrics(controller)
            .await?
            .sum("mco_bootimage_patches_total", &[])
            == 0.0
    );

    // The new release's stream lands.
    c.set_stream(NEW).await?;
    let took = c
        .wait_image("rhcos", &c.expected_image(NEW, "x86_64"))
        .await?;
    c.wait_image("arm", &c.expected_image(NEW, "aarch64"))
        .await?;
    eprintln!(
        "bootimage_controller: {platform:?} MachineSets patched {took:.2?} after the stream landed"
    );
    let conditions = c.wait_conditions(progress, degraded).await?;
    eprintln!(
        "bootimage_controller: {platform:?} conditions: {} / {}",
        conditions["BootImageUpdateProgressing"]["message"],
        conditions["BootImageUpdateDegraded"]["message"]
    );

    // Exactly the RHCOS MachineSets were written, the rest untouched.
    let after = c.resource_versions().await?;
    for (name, rv) in &before {
        let patched = name == "rhcos" || name == "arm";
        ensure!(
            (after[name] != *rv) == patched,
            "MachineSet {name}: resourceVersion {rv} -> {} (patched expected: {patched})",
            after[name]
        );
    }
    for (name, event) in left_alone(platform) {
        let events = c.events(name).await?;
        match event {
            None => ensure!(events.is_empty(), "{name} has events {events:?}"),
            Some((reason, fragment)) => ensure!(
                events
                    .iter()
                    .any(|e| e.starts_with(reason) && e.contains(fragment)),
                "{name}: no {reason} event mentioning {fragment:?} in {events:?}"
            ),
        }
    }
    for name in ["rhcos", "arm"] {
        let events = c.events(name).await?;
        ensure!(
            events.iter().any(|e| e.starts_with("BootImageUpdated")),
            "{name} has no BootImageUpdated event: {events:?}"
        );
    }
    // A data disk keeps its image.
    if platform == Platform::Gcp {
        let ms = c.machineset("rhcos").await?;
        let disks = &ms.data["spec"]["template"]["spec"]["providerSpec"]["value"]["disks"];
        ensure!(
            disks[1]["image"] == "projects/mycorp/global/images/data",
            "data disk changed: {disks}"
        );
    }

    // 3: the spec-2 stub was converted before its MachineSet was patched;
    // the spec-3 stub was not touched.
    let legacy = secrets.get("legacy-user-data").await?;
    let annotations = legacy.annotations();
    ensure!(
        annotations
            .get("machineconfiguration.openshift.io/stub-ignition-upgraded-to")
            .map(String::as_str)
            == Some("3.5.0")
            && annotations
                .contains_key("machineconfiguration.openshift.io/stub-ignition-upgraded-at"),
        "legacy-user-data annotations: {annotations:?}"
    );
    let user_data = legacy
        .data
        .as_ref()
        .and_then(|d| d.get("userData"))
        .ok_or_else(|| anyhow!("legacy-user-data has no userData"))?;
    let ignition: Value = serde_json::from_slice(&user_data.0)?;
    ensure!(
        ignition["ignition"]["version"] == "3.5.0",
        "converted stub: {ignition}"
    );
    ensure!(
        ignition["ignition"]["config"]["merge"][0]["source"]
            == "https://api-int.c1.example.com:22623/config/worker",
        "converted stub: {ignition}"
    );
    let rv = |o: Option<String>| o.and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    ensure!(
        rv(legacy.resource_version()) < rv(c.machineset("rhcos").await?.resource_version()),
        "the Secret was written after its MachineSet"
    );
    let spec3_after = secrets.get("worker-user-data").await?;
    ensure!(
        spec3_after.resource_version() == spec3_before.resource_version(),
        "the spec-3 stub was rewritten"
    );

    // 2: a second pass (and more: --resync 1s) writes nothing at all.
    let settled = c.metrics(controller).await?;
    let rvs = c.resource_versions().await?;
    sleep(QUIET).await;
    let later = c.metrics(controller).await?;
    ensure!(
        later.writes() == settled.writes(),
        "resync passes wrote: {} -> {}",
        settled.writes_summary(),
        later.writes_summary()
    );
    ensure!(
        c.resource_versions().await? == rvs,
        "a resync changed MachineSets"
    );
    let evaluations = |m: &support::controller::Metrics| m.sum("mco_evaluations_total", &[]);
    let job = format!("bootImage.{}", platform.infrastructure_type());
    let shadow = |result: &str| {
        later.sum(
            "mco_shadow_evaluations_total",
            &[("job", &job), ("result", result)],
        )
    };
    let boot_evaluations = later.sum("mco_evaluations_total", &[("job", &job)]);
    ensure!(
        shadow("agree") > 0.0 && shadow("differ") == 0.0 && shadow("failed") == 0.0,
        "shadow evaluations: agree {}, differ {}, failed {}",
        shadow("agree"),
        shadow("differ"),
        shadow("failed")
    );
    eprintln!(
        "bootimage_controller: {platform:?} shadow: {} of {} guest evaluations compared, all agreeing",
        shadow("agree"),
        boot_evaluations
    );
    ensure!(
        evaluations(&later) > evaluations(&settled),
        "no pass ran during the quiet period"
    );
    eprintln!(
        "bootimage_controller: {platform:?} resync: 0 writes while evaluations went {} -> {}; writes {}",
        evaluations(&settled),
        evaluations(&later),
        later.writes_summary()
    );
    Ok(())
}

// ---- ControlPlaneMachineSets -------------------------------------------------------------------

/// The conditions of a clean pass over 3 MachineSets and the
/// ControlPlaneMachineSet, in full.
const CPMS_PROGRESSING: &str = "Reconciled 3 of 3 MAPI MachineSets | Reconciled 1 of 1 ControlPlaneMachineSets | Reconciled 0 of 0 CAPI MachineSets | Reconciled 0 of 0 CAPI MachineDeployments";
const CPMS_DEGRADED: &str = "0 Degraded MAPI MachineSets | 0 Degraded ControlPlaneMachineSets | 0 Degraded CAPI MachineSets | 0 Degraded CAPI MachineDeployments";

/// An AWS cluster with 3 MachineSets and ControlPlaneMachineSet `cluster`
/// (spec-2 stub in `master-user-data`), both managers `All`: a new stream
/// lands, the ControlPlaneMachineSet and the MachineSets move, the
/// conditions count each kind, the skew record is written, and a second
/// pass writes nothing. Opting the ControlPlaneMachineSet out (the default,
/// None) leaves it out of the counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_control_plane_machine_set_moves_with_the_machinesets() -> Result<()> {
    let machinesets = [
        MachineSetSpec::new("worker-a"),
        MachineSetSpec::new("worker-b"),
        MachineSetSpec::new("worker-c"),
    ];
    in_cluster(Platform::Aws, &machinesets, async |c| {
        // The control plane's architecture is the host's.
        let arch = std::env::consts::ARCH;
        c.add_control_plane_machine_set(Image::Rhcos(OLD, "x86_64"))
            .await?;
        c.enroll(managers_with_cpms(json!({"mode": "All"}), "All"))
            .await?;
        c.set_status(
            &openshift::machine_configuration(),
            "cluster",
            json!({"bootImageSkewEnforcementStatus": {"mode": "Automatic",
                   "automatic": {"ocpVersion": "4.19.7"}}}),
        )
        .await?;
        let controller = c.start_controller("boot-a", &RESYNC).await?;
        // On the old stream everything is current.
        c.wait_conditions(CPMS_PROGRESSING, ("False", CPMS_DEGRADED))
            .await?;
        let before = c.cpms().await?;

        c.set_stream(NEW).await?;
        let took = c.wait_cpms_image(&c.expected_image(NEW, arch)).await?;
        for name in ["worker-a", "worker-b", "worker-c"] {
            c.wait_image(name, &c.expected_image(NEW, "x86_64"))
                .await?;
        }
        eprintln!(
            "bootimage_controller: ControlPlaneMachineSet patched {took:.2?} after the stream landed"
        );
        let conditions = c
            .wait_conditions(CPMS_PROGRESSING, ("False", CPMS_DEGRADED))
            .await?;
        // The cluster has no AWS credentials: EC2 is not consulted, the
        // static lists decide, and Progressing says so after upstream's
        // segments.
        let no_ec2 = " | EC2 could not be reached, the static AMI lists decided for: [ControlPlaneMachineSet cluster: Secret openshift-machine-api/aws-cloud-credentials does not exist, machineset worker-a: Secret openshift-machine-api/aws-cloud-credentials does not exist, machineset worker-b: Secret openshift-machine-api/aws-cloud-credentials does not exist, machineset worker-c: Secret openshift-machine-api/aws-cloud-credentials does not exist]";
        for (type_, want) in [
            ("BootImageUpdateProgressing", format!("{CPMS_PROGRESSING}{no_ec2}")),
            ("BootImageUpdateDegraded", CPMS_DEGRADED.to_owned()),
        ] {
            ensure!(
                conditions[type_]["message"] == want.as_str(),
                "{type_}: {}",
                conditions[type_]["message"]
            );
        }
        wait_skew_record(c, &json!({"ocpVersion": "4.21.0"})).await?;

        // The patch touched the boot image and nothing else.
        let after = c.cpms().await?;
        let mut expected = before.data["spec"].clone();
        let ami = CPMS_PROVIDER_SPEC.trim_start_matches("/spec");
        if let Some(slot) = expected.pointer_mut(&format!("{ami}/ami")) {
            *slot = c.expected_image(NEW, arch);
        }
        ensure!(
            after.data["spec"] == expected,
            "the ControlPlaneMachineSet spec changed beyond its AMI: {:#}",
            after.data["spec"]
        );
        let events = c.events("cluster").await?;
        ensure!(
            events.iter().any(|e| e.starts_with("BootImageUpdated")),
            "ControlPlaneMachineSet cluster has no BootImageUpdated event: {events:?}"
        );
        // Its spec-2 stub was upgraded as a MachineSet's is.
        let secrets: Api<Secret> = Api::namespaced(c.admin(), MAPI);
        let master = secrets.get("master-user-data").await?;
        let upgraded = master
            .annotations()
            .get("machineconfiguration.openshift.io/stub-ignition-upgraded-to");
        ensure!(
            upgraded.map(String::as_str) == Some("3.5.0"),
            "master-user-data annotations: {:?}",
            master.annotations()
        );
        ensure!(
            c.metrics(controller)
                .await?
                .writes_of("patch_controlplanemachineset")
                == 1.0
        );

        // A second pass (several: --resync 1s) writes nothing.
        let settled = c.metrics(controller).await?;
        let rvs = c.resource_versions().await?;
        let cpms_rv = c.cpms().await?.resource_version();
        sleep(QUIET).await;
        let later = c.metrics(controller).await?;
        ensure!(
            later.writes() == settled.writes(),
            "resync passes wrote: {} -> {}",
            settled.writes_summary(),
            later.writes_summary()
        );
        ensure!(c.resource_versions().await? == rvs, "a resync changed MachineSets");
        ensure!(
            c.cpms().await?.resource_version() == cpms_rv,
            "a resync changed the ControlPlaneMachineSet"
        );
        ensure!(
            later.sum("mco_evaluations_total", &[]) > settled.sum("mco_evaluations_total", &[]),
            "no pass ran during the quiet period"
        );

        // Opted out (the default, None): out of the pass and the counts.
        c.enroll(managers_with_cpms(json!({"mode": "All"}), "None"))
            .await?;
        c.wait_conditions(
            "Reconciled 3 of 3 MAPI MachineSets | Reconciled 0 of 0 ControlPlaneMachineSets | ",
            ("False", CPMS_DEGRADED),
        )
        .await?;
        Ok(())
    })
    .await
}

/// Without the ControlPlaneMachineSet CRD the controller becomes ready and
/// updates MachineSets, counting `0 of 0` ControlPlaneMachineSets; once
/// the CRD and the object appear, the ControlPlaneMachineSet is updated
/// too, without a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn machinesets_are_updated_without_the_control_plane_machine_set_crd() -> Result<()> {
    in_cluster(Platform::Aws, &[MachineSetSpec::new("rhcos")], async |c| {
        let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
            Api::all(c.admin());
        let crd = openshift::crd_name(&openshift::control_plane_machine_set());
        crds.delete(&crd, &Default::default()).await?;
        let started = Instant::now();
        while crds.get_opt(&crd).await?.is_some() {
            ensure!(started.elapsed() < CONVERGE, "CRD {crd} is not gone");
            sleep(POLL).await;
        }
        c.enroll(managers_with_cpms(json!({"mode": "All"}), "All"))
            .await?;
        c.start_controller("boot-a", &RESYNC).await?;
        // The old stream is learned (its AMIs known) before the new lands.
        let clean = ("False", "0 Degraded MAPI MachineSets | 0 Degraded ControlPlaneMachineSets | ");
        c.wait_conditions(
            "Reconciled 1 of 1 MAPI MachineSets | Reconciled 0 of 0 ControlPlaneMachineSets | ",
            clean,
        )
        .await?;
        c.set_stream(NEW).await?;
        c.wait_image("rhcos", &c.expected_image(NEW, "x86_64"))
            .await?;
        c.wait_conditions(
            "Reconciled 1 of 1 MAPI MachineSets | Reconciled 0 of 0 ControlPlaneMachineSets | ",
            ("False", "0 Degraded MAPI MachineSets | 0 Degraded ControlPlaneMachineSets | "),
        )
        .await?;

        c.fx.cp.install_openshift_crds().await?;
        c.add_control_plane_machine_set(Image::Rhcos(OLD, "x86_64"))
            .await?;
        let took = c
            .wait_cpms_image(&c.expected_image(NEW, std::env::consts::ARCH))
            .await?;
        eprintln!(
            "bootimage_controller: ControlPlaneMachineSet patched {took:.2?} after its CRD appeared"
        );
        c.wait_conditions(
            "Reconciled 1 of 1 MAPI MachineSets | Reconciled 1 of 1 ControlPlaneMachineSets | ",
            ("False", "0 Degraded MAPI MachineSets | 0 Degraded ControlPlaneMachineSets | "),
        )
        .await?;
        Ok(())
    })
    .await
}

// ---- feature gates ----------------------------------------------------------------------------

/// FeatureGate `cluster` publishing, for the cluster's version (4.21.0),
/// `disabled` off and every other gate at its Default value.
async fn set_feature_gates(c: &Cluster, disabled: &[&str]) -> Result<()> {
    let disabled: Vec<Value> = disabled.iter().map(|n| json!({"name": n})).collect();
    c.set_status(
        &openshift::feature_gate(),
        "cluster",
        json!({"featureGates": [{"version": "4.21.0", "enabled": [], "disabled": disabled}]}),
    )
    .await
}

/// With `ManagedBootImagesCPMS` and `BootImageSkewEnforcement` off for the
/// cluster's version, an enrolled ControlPlaneMachineSet is neither patched
/// nor counted (`0 of 0`), an edit of it starts no pass, and no pass writes
/// the skew record, while the MachineSet moves to a new stream. Turning the
/// gates on starts a pass by itself (no resync) that does what the Default
/// set does: the ControlPlaneMachineSet moves and the record is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feature_gates_in_force_decide_the_control_plane_machine_set_and_the_skew_record()
-> Result<()> {
    in_cluster(Platform::Aws, &[MachineSetSpec::new("worker-a")], async |c| {
        c.apply(
            &openshift::feature_gate(),
            None,
            json!({"apiVersion": "config.openshift.io/v1", "kind": "FeatureGate",
                   "metadata": {"name": "cluster"}, "spec": {"featureSet": "CustomNoUpgrade"}}),
        )
        .await?;
        set_feature_gates(c, &["ManagedBootImagesCPMS", "BootImageSkewEnforcement"]).await?;
        c.add_control_plane_machine_set(Image::Rhcos(OLD, "x86_64"))
            .await?;
        c.enroll(managers_with_cpms(json!({"mode": "All"}), "All"))
            .await?;
        let installed = json!({"ocpVersion": "4.19.7"});
        c.set_status(
            &openshift::machine_configuration(),
            "cluster",
            json!({"bootImageSkewEnforcementStatus": {"mode": "Automatic", "automatic": installed}}),
        )
        .await?;
        // The default resync (5 minutes): every pass below has a trigger.
        let controller = c.start_controller("boot-a", &[]).await?;
        let clean = ("False", "0 Degraded MAPI MachineSets | 0 Degraded ControlPlaneMachineSets | ");
        let gates_off =
            "Reconciled 1 of 1 MAPI MachineSets | Reconciled 0 of 0 ControlPlaneMachineSets | ";
        c.wait_conditions(gates_off, clean).await?;
        let cpms_rv = c.cpms().await?.resource_version();

        c.set_stream(NEW).await?;
        c.wait_image("worker-a", &c.expected_image(NEW, "x86_64"))
            .await?;
        c.wait_conditions(gates_off, clean).await?;
        sleep(QUIET).await;
        ensure!(
            c.cpms().await?.resource_version() == cpms_rv,
            "the ControlPlaneMachineSet was written with ManagedBootImagesCPMS off"
        );
        let settled = c.metrics(controller).await?;
        ensure!(settled.writes_of("patch_controlplanemachineset") == 0.0);
        ensure!(
            skew_record(c).await? == installed,
            "the skew record was written with BootImageSkewEnforcement off: {}",
            skew_record(c).await?
        );

        // An edit of the ControlPlaneMachineSet's providerSpec starts no pass.
        let edit = json!({"spec": {"template": {"machines_v1beta1_machine_openshift_io": {"spec": {
            "providerSpec": {"value": {"instanceType": "m6i.4xlarge"}}}}}}});
        c.controlplanemachinesets()
            .patch("cluster", &PatchParams::default(), &Patch::Merge(&edit))
            .await?;
        sleep(QUIET).await;
        let evaluations = |m: &support::controller::Metrics| m.sum("mco_evaluations_total", &[]);
        let later = c.metrics(controller).await?;
        ensure!(
            evaluations(&later) == evaluations(&settled),
            "a ControlPlaneMachineSet edit started a pass with ManagedBootImagesCPMS off: {} -> {} evaluations",
            evaluations(&settled),
            evaluations(&later)
        );

        // Both gates on: the change alone starts a pass.
        set_feature_gates(c, &[]).await?;
        let took = c
            .wait_cpms_image(&c.expected_image(NEW, std::env::consts::ARCH))
            .await?;
        eprintln!(
            "bootimage_controller: ControlPlaneMachineSet patched {took:.2?} after ManagedBootImagesCPMS turned on"
        );
        c.wait_conditions(
            "Reconciled 1 of 1 MAPI MachineSets | Reconciled 1 of 1 ControlPlaneMachineSets | ",
            clean,
        )
        .await?;
        wait_skew_record(c, &json!({"ocpVersion": "4.21.0"})).await?;
        Ok(())
    })
    .await
}

// ---- 4: a competing writer -----------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_competing_writer_is_stopped_and_stays_stopped() -> Result<()> {
    in_cluster(Platform::Aws, &[MachineSetSpec::new("rhcos")], async |c| {
        c.start_controller("boot-a", &RESYNC).await?;
        c.wait_conditions(
            "Reconciled 1 of 1 MAPI MachineSets | ",
            ("False", "0 Degraded"),
        )
        .await?;
        c.set_stream(NEW).await?;
        let new = c.expected_image(NEW, "x86_64");
        let old = c.expected_image(OLD, "x86_64");
        let revert =
            json!({"spec": {"template": {"spec": {"providerSpec": {"value": {"ami": old}}}}}});
        // Three patches are allowed; the writer undoes each.
        for round in 1..=3 {
            c.wait_image("rhcos", &new)
                .await
                .with_context(|| format!("patch {round}"))?;
            c.machinesets()
                .patch("rhcos", &PatchParams::default(), &Patch::Merge(&revert))
                .await?;
        }
        let hot_loop = "refusing to reconcile machineset rhcos, hot loop detected";
        let conditions = c
            .wait_conditions(
                "Reconciled 0 of 1 MAPI MachineSets | ",
                ("True", "1 Degraded MAPI MachineSets | "),
            )
            .await?;
        ensure!(
            conditions["BootImageUpdateDegraded"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(hot_loop)),
            "{conditions:#?}"
        );
        sleep(QUIET).await;
        ensure!(c.image("rhcos").await? == old, "patched a fourth time");
        let metrics = c.metrics(0).await?;
        ensure!(
            metrics.sum("mco_bootimage_patches_total", &[]) == 3.0,
            "{}",
            metrics.writes_summary()
        );
        ensure!(metrics.sum("mco_bootimage_hot_loops_total", &[]) >= 1.0);
        ensure!(
            c.events("rhcos")
                .await?
                .iter()
                .any(|e| e.starts_with("HotLoopDetected"))
        );
        ensure!(
            c.state()
                .await?
                .get("hot-loops.json")
                .is_some_and(|h| h.contains("\"count\":3"))
        );

        // A restarted controller still refuses.
        c.fx.controllers[0].kill_hard()?;
        let second = c.start_controller("boot-b", &RESYNC).await?;
        sleep(QUIET).await;
        ensure!(
            c.image("rhcos").await? == old,
            "the restarted controller patched again"
        );
        ensure!(
            c.metrics(second)
                .await?
                .sum("mco_bootimage_patches_total", &[])
                == 0.0
        );
        c.wait_conditions(
            "Reconciled 0 of 1 MAPI MachineSets | ",
            ("True", "1 Degraded"),
        )
        .await?;

        // Opting out clears the guard; opting back in resumes updates.
        c.enroll(all_managers(json!({"mode": "None"}))).await?;
        c.wait_conditions(
            "Reconciled 0 of 0 MAPI MachineSets | ",
            ("False", "0 Degraded"),
        )
        .await?;
        ensure!(
            !c.state().await?.contains_key("hot-loops.json"),
            "opting out kept the hot-loop record"
        );
        c.enroll(all_managers(json!({"mode": "All"}))).await?;
        c.wait_image("rhcos", &new).await?;
        c.wait_conditions(
            "Reconciled 1 of 1 MAPI MachineSets | ",
            ("False", "0 Degraded"),
        )
        .await?;
        Ok(())
    })
    .await
}

// ---- 5: enrollment -------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_enrolled_machinesets_are_updated() -> Result<()> {
    let machinesets = [
        MachineSetSpec {
            labels: json!({"env": "prod"}),
            ..MachineSetSpec::new("prod")
        },
        MachineSetSpec {
            labels: json!({"env": "dev"}),
            ..MachineSetSpec::new("dev")
        },
    ];
    in_cluster(Platform::Gcp, &machinesets, async |c| {
        let old = c.expected_image(OLD, "x86_64");
        let new = c.expected_image(NEW, "x86_64");
        c.enroll(all_managers(json!({"mode": "None"}))).await?;
        c.set_stream(NEW).await?;
        c.start_controller("boot-a", &RESYNC).await?;
        for managers in [
            all_managers(json!({"mode": "None"})),
            json!({"machineManagers": []}),
        ] {
            c.enroll(managers.clone()).await?;
            c.wait_conditions(
                "Reconciled 0 of 0 MAPI MachineSets | ",
                ("False", "0 Degraded"),
            )
            .await?;
            sleep(QUIET).await;
            for name in ["prod", "dev"] {
                ensure!(
                    c.image(name).await? == old,
                    "{name} patched with {managers}"
                );
            }
        }
        ensure!(c.metrics(0).await?.sum("mco_bootimage_patches_total", &[]) == 0.0);

        c.enroll(all_managers(json!({"mode": "Partial",
            "partial": {"machineResourceSelector": {"matchLabels": {"env": "prod"}}}})))
            .await?;
        c.wait_image("prod", &new).await?;
        c.wait_conditions(
            "Reconciled 1 of 1 MAPI MachineSets | ",
            ("False", "0 Degraded"),
        )
        .await?;
        ensure!(
            c.image("dev").await? == old,
            "dev is not selected but was patched"
        );

        c.enroll(all_managers(json!({"mode": "All"}))).await?;
        c.wait_image("dev", &new).await?;
        c.wait_conditions(
            "Reconciled 2 of 2 MAPI MachineSets | ",
            ("False", "0 Degraded"),
        )
        .await?;
        Ok(())
    })
    .await
}

// ---- 6: readiness and stability gates ------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_wait_for_a_ready_configuration_and_a_stable_cluster() -> Result<()> {
    in_cluster(Platform::Gcp, &[MachineSetSpec::new("rhcos")], async |c| {
        let old = c.expected_image(OLD, "x86_64");
        let new = c.expected_image(NEW, "x86_64");
        // The operator has not caught up with a spec change yet.
        let api: Api<DynamicObject> = Api::all_with(c.admin(), &openshift::machine_configuration());
        api.patch(
            "cluster",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"logLevel": "Debug"}})),
        )
        .await?;
        c.set_history("Partial").await?;
        c.set_stream(NEW).await?;
        c.start_controller("boot-a", &RESYNC).await?;
        // --machineconfiguration-wait 2s, then Degraded.
        let started = Instant::now();
        loop {
            let conditions = c.conditions().await?;
            if conditions.get("BootImageUpdateDegraded").is_some_and(|d| {
                d["status"] == "True"
                    && d["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("MachineConfiguration was not ready"))
            }) {
                break;
            }
            ensure!(
                started.elapsed() < CONVERGE,
                "no Degraded for a lagging MachineConfiguration: {conditions:#?}"
            );
            sleep(POLL).await;
        }
        eprintln!(
            "bootimage_controller: Degraded for a lagging MachineConfiguration after {:.2?}",
            started.elapsed()
        );
        ensure!(c.image("rhcos").await? == old);

        // Ready, but the cluster is upgrading: nothing moves.
        c.enroll(all_managers(json!({"mode": "All"}))).await?;
        sleep(QUIET).await;
        ensure!(
            c.image("rhcos").await? == old,
            "patched while the ClusterVersion is Partial"
        );
        ensure!(c.metrics(0).await?.sum("mco_bootimage_patches_total", &[]) == 0.0);

        c.set_history("Completed").await?;
        let took = c.wait_image("rhcos", &new).await?;
        eprintln!("bootimage_controller: patched {took:.2?} after the ClusterVersion completed");
        c.wait_conditions(
            "Reconciled 1 of 1 MAPI MachineSets | ",
            ("False", "0 Degraded"),
        )
        .await?;
        Ok(())
    })
    .await
}

/// The skew enforcement record in MachineConfiguration
/// `status.bootImageSkewEnforcementStatus.automatic`, as stored.
async fn skew_record(c: &Cluster) -> Result<Value> {
    let api: Api<DynamicObject> = Api::all_with(c.admin(), &openshift::machine_configuration());
    let mc = api.get("cluster").await?;
    Ok(mc.data["status"]["bootImageSkewEnforcementStatus"]["automatic"].clone())
}

async fn wait_skew_record(c: &Cluster, want: &Value) -> Result<Duration> {
    let started = Instant::now();
    loop {
        let got = skew_record(c).await?;
        if got == *want {
            return Ok(started.elapsed());
        }
        ensure!(
            started.elapsed() < CONVERGE,
            "skew record is {got}, want {want}"
        );
        sleep(POLL).await;
    }
}

/// Boot image skew enforcement (upstream's `syncMAPIMachineSets`): nothing is written
/// while the cluster is not stable; a clean pass records the stream's
/// release; a pass with a skipped MachineSet resets the record to the
/// install version (the oldest Completed release); the metric says the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_skew_record_follows_clean_passes_and_is_reset_after_skips() -> Result<()> {
    in_cluster(Platform::Gcp, &[MachineSetSpec::new("rhcos")], async |c| {
        let cv = openshift::cluster_version();
        let history = |state: &str| {
            json!({"desired": {"version": "4.21.0"}, "history": [
                {"state": state, "startedTime": "2026-11-01T00:00:00Z", "version": "4.21.0"},
                {"state": "Completed", "startedTime": "2026-01-01T00:00:00Z", "version": "4.19.7"}]})
        };
        let installed = json!({"ocpVersion": "4.19.7"});
        c.set_status(&cv, "version", history("Partial")).await?;
        // The operator's first Automatic record: the install version.
        c.set_status(
            &openshift::machine_configuration(),
            "cluster",
            json!({"bootImageSkewEnforcementStatus": {"mode": "Automatic", "automatic": installed}}),
        )
        .await?;
        c.set_stream(NEW).await?;
        c.start_controller("boot-a", &RESYNC).await?;
        sleep(QUIET).await;
        ensure!(
            skew_record(c).await? == installed,
            "the skew record was written while the cluster is not stable"
        );

        c.set_status(&cv, "version", history("Completed")).await?;
        c.wait_image("rhcos", &c.expected_image(NEW, "x86_64"))
            .await?;
        let took = wait_skew_record(c, &json!({"ocpVersion": "4.21.0"})).await?;
        eprintln!("bootimage_controller: skew record written {took:.2?} after the patch");
        let recorded = [("ocp_version", "4.21.0"), ("outcome", "recorded")];
        let metric = "mco_bootimage_skew_enforcement_ocp_version";
        ensure!(c.metrics(0).await?.sum(metric, &recorded) == 1.0);

        // A MachineSet on a custom image is skipped: only the install
        // version can be claimed now.
        let custom = MachineSetSpec {
            image: Image::Custom,
            ..MachineSetSpec::new("custom")
        };
        c.apply(&openshift::machine_set(), Some(MAPI), custom.object(c.platform))
            .await?;
        wait_skew_record(c, &installed).await?;
        let metrics = c.metrics(0).await?;
        ensure!(metrics.sum(metric, &[("ocp_version", "4.19.7"), ("outcome", "reset")]) == 1.0);
        ensure!(
            metrics.sum(metric, &recorded) == 0.0,
            "the metric still claims the recorded release"
        );
        Ok(())
    })
    .await
}

// ---- hostile inputs from the cluster -------------------------------------------------------

/// A stream that is not JSON, a nested bomb, and a corrupt hot-loop record:
/// each is reported as Degraded with a message that says what is wrong, and
/// no MachineSet is written until it is fixed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_streams_and_records_are_reported_and_nothing_is_written() -> Result<()> {
    in_cluster(Platform::Aws, &[MachineSetSpec::new("rhcos")], async |c| {
        c.start_controller("boot-a", &RESYNC).await?;
        c.wait_conditions(
            "Reconciled 1 of 1 MAPI MachineSets | ",
            ("False", "0 Degraded"),
        )
        .await?;
        let before = c.resource_versions().await?;
        let bomb = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        for (text, says) in [
            (
                "{\"architectures\": {\"x86_64\": ",
                "failed to parse CoreOS stream metadata",
            ),
            (bomb.as_str(), "failed to parse CoreOS stream metadata"),
            ("[]", "failed to parse CoreOS stream metadata"),
        ] {
            c.set_stream_text(text).await?;
            let conditions = c
                .wait_conditions(
                    "Reconciled 0 of 1 MAPI MachineSets | ",
                    ("True", "1 Degraded"),
                )
                .await?;
            let message = conditions["BootImageUpdateDegraded"]["message"]
                .as_str()
                .unwrap_or_default();
            ensure!(message.contains(says), "for {:.40}…: {message}", text);
            ensure!(
                c.resource_versions().await? == before,
                "a MachineSet was written"
            );
            c.set_stream(OLD).await?;
            c.wait_conditions(
                "Reconciled 1 of 1 MAPI MachineSets | ",
                ("False", "0 Degraded"),
            )
            .await?;
        }

        // A record the controller cannot read blocks updates instead of
        // being taken as empty (that would forget a hot loop).
        c.set_state(json!({"hot-loops.json": "{not json"})).await?;
        c.set_stream(NEW).await?;
        let conditions = c
            .wait_conditions("Reconciled ", ("True", "1 Degraded"))
            .await?;
        let message = conditions["BootImageUpdateDegraded"]["message"]
            .as_str()
            .unwrap_or_default();
        ensure!(
            message.contains("is unreadable") && message.contains("fix or delete it"),
            "{message}"
        );
        sleep(QUIET).await;
        ensure!(
            c.resource_versions().await? == before,
            "patched despite an unreadable record"
        );
        // Repaired in place; deleting it would also forget the images the
        // controller has seen, and the old AMI would then count as custom.
        c.set_state(json!({"hot-loops.json": "{}"})).await?;
        c.wait_image("rhcos", &c.expected_image(NEW, "x86_64"))
            .await?;
        c.wait_conditions(
            "Reconciled 1 of 1 MAPI MachineSets | ",
            ("False", "0 Degraded"),
        )
        .await?;
        Ok(())
    })
    .await
}

// ---- a guest that oversteps its authority ----------------------------------------------------

/// A registry with `aws` (and `candidate`, if any) as the AWS boot image
/// guest, the shipped guests elsewhere; written where `--registry` reads it.
fn write_registry(
    c: &Cluster,
    aws: &std::path::Path,
    candidate: Option<&std::path::Path>,
) -> Result<String> {
    let guests = support::controller::host_binary()?
        .parent()
        .map(|release| release.join("guests"))
        .ok_or_else(|| anyhow!("the host binary has no directory"))?;
    let candidate = candidate
        .map(|m| format!(", candidate: {{module: {}}}", m.display()))
        .unwrap_or_default();
    let text = format!(
        "mcn: {}\nbootImage:\n  GCP: {}\n  AWS: {{module: {}{candidate}}}\n  Azure: {}\n",
        guests.join("mcn.wasm").display(),
        guests.join("bootimage-gcp.wasm").display(),
        aws.display(),
        guests.join("bootimage-azure.wasm").display(),
    );
    let path = c.fx.cp.dir().join("registry.yaml");
    // Written whole and renamed: a poll never reads half a registry.
    let partial = path.with_extension("partial");
    std::fs::write(&partial, text).with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, &path)?;
    Ok(path.display().to_string())
}

/// Guests propose, the host disposes: a serving AWS guest that
/// also changes instanceType and credentialsSecret writes nothing — no
/// MachineSet, no Secret — and the refusal names the field in
/// `BootImageUpdateDegraded`; once the registry serves the shipped guest
/// again the MachineSets move, and the overstepping module as that entry's
/// shadow candidate counts as a failed comparison, never as agreement.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_that_oversteps_writes_nothing_and_is_named() -> Result<()> {
    let machinesets = [
        MachineSetSpec::new("rhcos"),
        MachineSetSpec {
            secret: "legacy-user-data",
            ..MachineSetSpec::new("legacy")
        },
    ];
    in_cluster(Platform::Aws, &machinesets, async |c| {
        // Oversteps on every MachineSet but the host's smoke fixture
        // (instanceType and credentialsSecret besides the AMI), so that it
        // passes the smoke evaluations and serves.
        let hostile = support::controller::test_guest("hostile-sleeper.wasm")?;
        let good = support::controller::host_binary()?
            .parent()
            .map(|d| d.join("guests").join("bootimage-aws.wasm"))
            .ok_or_else(|| anyhow!("the host binary has no directory"))?;
        // The shipped guest serves first, so the old stream's images are
        // recorded as RHCOS ones (the controller learns them on a pass).
        let registry = write_registry(c, &good, None)?;
        let controller = c
            .start_controller(
                "boot-a",
                &[
                    RESYNC[0],
                    RESYNC[1],
                    "--registry",
                    &registry,
                    "--registry-poll",
                    "500ms",
                ],
            )
            .await?;
        c.wait_conditions(
            "Reconciled 2 of 2 MAPI MachineSets | ",
            ("False", "0 Degraded"),
        )
        .await?;
        let secrets: Api<Secret> = Api::namespaced(c.admin(), MAPI);
        let secret_versions = async || -> Result<Vec<(String, Option<String>)>> {
            Ok(secrets
                .list(&Default::default())
                .await?
                .items
                .iter()
                .map(|s| (s.name_any(), s.resource_version()))
                .collect())
        };
        let machinesets_before = c.resource_versions().await?;
        let secrets_before = secret_versions().await?;
        let job = "bootImage.AWS";
        let refused = |m: &support::controller::Metrics| {
            m.sum(
                "mco_evaluations_total",
                &[("job", job), ("result", "failed")],
            )
        };
        let rule = |conditions: &std::collections::BTreeMap<String, Value>| {
            let message = conditions["BootImageUpdateDegraded"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            ensure!(
                (message.contains("providerSpec.value.credentialsSecret")
                    || message.contains("providerSpec.value.instanceType"))
                    && message.contains("may not touch")
                    && message.contains("hostile-sleeper.wasm"),
                "Degraded does not name the rule: {message}"
            );
            Ok(message)
        };

        // The registry now names the overstepping module; it passes the
        // smoke evaluations and serves, and its first decisions are refused.
        write_registry(c, &hostile, None)?;
        let conditions = c
            .wait_conditions(
                "Reconciled 0 of 2 MAPI MachineSets | ",
                ("True", "2 Degraded"),
            )
            .await?;
        rule(&conditions)?;

        // The new stream lands while the overstepping guest serves.
        let landed = c.metrics(controller).await?;
        c.set_stream(NEW).await?;
        let conditions = c
            .wait_conditions(
                "Reconciled 0 of 2 MAPI MachineSets | ",
                ("True", "2 Degraded"),
            )
            .await?;
        let message = rule(&conditions)?;
        eprintln!("bootimage_controller: overstepping guest refused: {message}");
        // Several passes (--resync 1s) on the new stream, each refused.
        sleep(QUIET).await;
        let after = c.metrics(controller).await?;
        ensure!(
            refused(&after) >= refused(&landed) + 4.0,
            "refusals went {} -> {}: the new stream was not evaluated repeatedly",
            refused(&landed),
            refused(&after)
        );
        ensure!(
            after.sum("mco_guest_failures_total", &[("kind", "invalid_output")]) >= refused(&after),
            "the refusals are not counted as invalid output"
        );
        ensure!(
            c.resource_versions().await? == machinesets_before,
            "a MachineSet was written on the overstepping guest's decision"
        );
        ensure!(
            secret_versions().await? == secrets_before,
            "a Secret was written on the overstepping guest's decision"
        );
        ensure!(after.writes_of("patch_machineset") == 0.0 && after.writes_of("update_secret") == 0.0,
            "writes: {}", after.writes_summary());
        ensure!(
            c.image("rhcos").await? == c.expected_image(OLD, "x86_64"),
            "rhcos moved"
        );

        // The shipped guest serves again, the overstepping one shadows it.
        write_registry(c, &good, Some(&hostile))?;
        c.wait_image("rhcos", &c.expected_image(NEW, "x86_64"))
            .await?;
        c.wait_image("legacy", &c.expected_image(NEW, "x86_64"))
            .await?;
        c.wait_conditions(
            "Reconciled 2 of 2 MAPI MachineSets | ",
            ("False", "0 Degraded"),
        )
        .await?;
        let legacy = secrets.get("legacy-user-data").await?;
        ensure!(
            legacy
                .annotations()
                .get("machineconfiguration.openshift.io/stub-ignition-upgraded-to")
                .map(String::as_str)
                == Some("3.5.0"),
            "the shipped guest did not upgrade the spec-2 stub: {:?}",
            legacy.annotations()
        );
        // A few more passes for the shadow.
        sleep(QUIET).await;
        let swapped = c.metrics(controller).await?;
        let shadow = |result: &str| {
            swapped.sum(
                "mco_shadow_evaluations_total",
                &[("job", job), ("result", result)],
            )
        };
        ensure!(
            shadow("failed") > 0.0 && shadow("agree") == 0.0 && shadow("differ") == 0.0,
            "shadow evaluations of the overstepping candidate: agree {}, differ {}, failed {}",
            shadow("agree"),
            shadow("differ"),
            shadow("failed")
        );
        eprintln!(
            "bootimage_controller: overstepping candidate: {} shadow evaluations failed, 0 agreed; writes {}",
            shadow("failed"),
            swapped.writes_summary()
        );
        Ok(())
    })
    .await
}

/// A boot image guest rolled out by MachineSet labels (MachineConfigGuest
/// `spec.rollout`): a candidate that oversteps in `Canary` is
/// refused by the same authority checks as the module, rolled back at once,
/// and the module's decisions are written (the new stream lands without
/// the candidate's instanceType); a benign candidate in `Canary` decides the
/// MachineSets `canary.machineSets` selects and the module the others; by
/// hand to `Active`, the candidate decides every MachineSet.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canary_of_machinesets_rolls_a_candidate_out_and_back() -> Result<()> {
    use support::guests::{
        apply_guest_object, condition, patch_guest_object, put_configmap, wait_guest_object,
    };
    let machinesets = [
        MachineSetSpec {
            labels: json!({"mco-e2e.io/canary": "true"}),
            ..MachineSetSpec::new("canary")
        },
        MachineSetSpec::new("rhcos"),
    ];
    in_cluster(Platform::Aws, &machinesets, async |c| {
        let shipped = support::controller::installed_guest("bootimage-aws.wasm")?;
        let benign = support::wasm::with_custom_section(&shipped, "mco-e2e-rollout", b"benign");
        let hostile = std::fs::read(support::controller::test_guest("hostile-sleeper.wasm")?)?;
        put_configmap(&c.fx, "aws-benign", "aws.wasm", &benign).await?;
        put_configmap(&c.fx, "aws-hostile", "aws.wasm", &hostile).await?;
        let job = "bootImage.AWS";
        apply_guest_object(
            &c.fx,
            &json!({
                "apiVersion": "mco-wasm.io/v1alpha1", "kind": "MachineConfigGuest",
                "metadata": {"name": "bootimage-aws"},
                "spec": {
                    "job": "bootImage", "platform": "AWS", "module": "bootimage-aws.wasm",
                    "candidate": {"configMap": {"name": "aws-hostile", "key": "aws.wasm"}},
                    "rollout": {"stage": "Canary",
                                "canary": {"machineSets": {"matchLabels": {"mco-e2e.io/canary": "true"}}}},
                },
            }),
        )
        .await?;
        let args = [RESYNC[0], RESYNC[1], "--registry-crd", "--registry-poll", "500ms"];
        let controller = c.start_controller("boot-a", &args).await?;
        let limit = Duration::from_secs(30);

        // The overstepping candidate: refused on its first decision.
        let status = wait_guest_object(&mut c.fx, "bootimage-aws", "rolled back", limit, |s| {
            s["rollout"]["stage"] == "RolledBack"
        })
        .await?;
        ensure!(
            condition(&status, "RolledBack") == ("True", "CandidateFailed"),
            "an overstepping candidate must be rolled back as failed: {status}"
        );
        // An audit of it on request: every MachineSet decided by both, the
        // candidate's refused decisions counted failed and sampled.
        let audit = audited(&mut c.fx, "overstepping").await?;
        ensure!(
            audit["state"] == "Complete"
                && audit["objects"].as_u64() >= Some(2)
                && audit["failed"] == audit["objects"]
                && audit["failureSample"][0]["module"] == "candidate"
                && audit["failureSample"][0]["kind"] == "invalid_output",
            "the audit must count the overstepping candidate's decisions failed: {audit}"
        );
        c.set_stream(NEW).await?;
        for name in ["canary", "rhcos"] {
            c.wait_image(name, &c.expected_image(NEW, "x86_64")).await?;
            let ms = c.machineset(name).await?;
            let instance = &ms.data["spec"]["template"]["spec"]["providerSpec"]["value"]["instanceType"];
            ensure!(
                instance != "m5.metal",
                "{name}: the refused candidate's instanceType was written: {instance}"
            );
        }
        let decisions = |m: &support::controller::Metrics, role: &str| {
            m.sum("mco_guest_decisions_total", &[("job", job), ("role", role)])
        };
        ensure!(
            decisions(&c.metrics(controller).await?, "candidate") == 0.0,
            "a decision was taken from the refused candidate"
        );

        // A benign candidate in Canary: the canary's decisions are its own.
        patch_guest_object(
            &c.fx,
            "bootimage-aws",
            &json!({"spec": {"candidate": {"configMap": {"name": "aws-benign"}}}}),
        )
        .await?;
        wait_guest_object(&mut c.fx, "bootimage-aws", "agreeing in Canary", limit, |s| {
            s["rollout"]["stage"] == "Canary" && s["rollout"]["agree"].as_u64().unwrap_or(0) >= 4
        })
        .await?;
        let before = c.metrics(controller).await?;
        sleep(QUIET).await;
        let after = c.metrics(controller).await?;
        let delta = |role: &str| decisions(&after, role) - decisions(&before, role);
        // Every pass takes one decision from each: the canary's from the
        // candidate, rhcos's from the module.
        ensure!(
            delta("candidate") > 0.0 && (delta("candidate") - delta("active")).abs() <= 1.0,
            "in Canary the candidate must decide the canary only: candidate {}, module {}",
            delta("candidate"),
            delta("active")
        );

        // By hand to Active: every decision is the candidate's.
        patch_guest_object(&c.fx, "bootimage-aws", &json!({"spec": {"rollout": {"stage": "Active"}}}))
            .await?;
        wait_guest_object(&mut c.fx, "bootimage-aws", "Active", limit, |s| {
            s["rollout"]["stage"] == "Active" && s["rollout"]["agree"].as_u64().unwrap_or(0) >= 2
        })
        .await?;
        let before = c.metrics(controller).await?;
        sleep(QUIET).await;
        let after = c.metrics(controller).await?;
        ensure!(
            decisions(&after, "active") == decisions(&before, "active")
                && decisions(&after, "candidate") > decisions(&before, "candidate"),
            "in Active every decision must come from the candidate"
        );
        let audit = audited(&mut c.fx, "benign").await?;
        ensure!(
            audit["state"] == "Complete"
                && audit["objects"].as_u64() >= Some(2)
                && audit["agree"] == audit["objects"]
                && audit["sample"].is_null(),
            "the benign candidate must agree on every MachineSet: {audit}"
        );
        eprintln!(
            "bootimage_controller: rollout by MachineSet labels: an overstepping candidate rolled back \
             in Canary (its audit: every decision refused), a benign one decided the canary only, then \
             every MachineSet once Active (its audit: {})",
            audit["message"]
        );
        Ok(())
    })
    .await
}

/// `status.audit` once the lease holder answered `spec.audit.request`
/// `request` on MachineConfigGuest `bootimage-aws`.
async fn audited(fx: &mut support::fixture::Fixture, request: &str) -> Result<Value> {
    use support::guests::{patch_guest_object, wait_guest_object};
    let ask = json!({"spec": {"audit": {"request": request}}});
    patch_guest_object(fx, "bootimage-aws", &ask).await?;
    let status = wait_guest_object(
        fx,
        "bootimage-aws",
        "audited",
        Duration::from_secs(60),
        |s| s["audit"]["request"] == request && s["audit"]["state"] != "Running",
    )
    .await?;
    Ok(status["audit"].clone())
}
