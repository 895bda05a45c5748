//! Proves the harness against the real kube-apiserver: start-up, the OpenShift
//! CRDs (shape and the behaviour tests depend on), static-token identities
//! under RBAC, kubeconfig files, an apiserver restart and clean shutdown.
//!
//! One control plane for the whole scenario: a start costs seconds on a busy
//! 2-core machine, and later steps deliberately build on earlier objects
//! (e.g. data written before the restart must still be there after it).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use mco_e2e::{ControlPlane, User, openshift};
use serde_json::{Value, json};

const MANAGER: &str = "mco-e2e-test";

#[tokio::test]
async fn control_plane_end_to_end() -> Result<()> {
    let sa = User::service_account("mco-system", "mco-host");
    let mut cp = ControlPlane::builder().user(sa.clone()).start().await?;
    let t = cp.timings();
    eprintln!("start timings: {t:?}");
    let admin = cp.admin_client()?;

    let version = admin.apiserver_version().await?;
    assert!(
        version.git_version.starts_with("v1.36."),
        "unexpected apiserver version {}",
        version.git_version
    );

    crds(&cp, &admin).await.context("CRDs")?;
    let pool_uid = machine_config_pool(&admin)
        .await
        .context("MachineConfigPool")?;
    machine_config(&admin).await.context("MachineConfig")?;
    cp.create_namespace(openshift::MACHINE_API_NAMESPACE)
        .await?;
    let provider_spec = machine_set(&admin).await.context("MachineSet")?;
    singletons(&admin)
        .await
        .context("Infrastructure/ClusterVersion/MachineConfiguration")?;
    let sa_client = rbac(&cp, &admin, &sa).await.context("RBAC")?;
    kubeconfig(&cp, &sa).await.context("kubeconfig")?;

    // ---- restart: same port, certs, tokens and etcd; clients made before keep working ----
    let ca_before = std::fs::read(cp.ca_path())?;
    let pid_before = cp.apiserver_pid();
    let took = cp.restart_apiserver().await?;
    eprintln!("kube-apiserver restart: ready in {took:.2?}");
    assert!(cp.apiserver_pid().is_some() && cp.apiserver_pid() != pid_before);
    assert_eq!(
        std::fs::read(cp.ca_path())?,
        ca_before,
        "the serving cert must survive a restart, or existing clients break"
    );
    let pools = Api::<DynamicObject>::all_with(admin.clone(), &openshift::machine_config_pool());
    let pool = retry_once(|| pools.get("worker")).await?;
    assert_eq!(pool.metadata.uid.as_deref(), Some(pool_uid.as_str()));
    assert_eq!(pool.data["status"]["machineCount"], json!(3));
    let sets = machine_sets(&admin);
    let set = sets.get("worker-a").await?;
    assert_eq!(
        set.data["spec"]["template"]["spec"]["providerSpec"]["value"],
        provider_spec
    );
    let sa_pools = Api::<DynamicObject>::all_with(sa_client, &openshift::machine_config_pool());
    let lp = ListParams::default();
    let listed = retry_once(|| sa_pools.list(&lp)).await?;
    assert_eq!(
        listed.items.len(),
        1,
        "the SA binding must survive the restart"
    );

    // ---- Drop stops our processes and removes the temp dir ----
    let pids = [cp.apiserver_pid(), cp.etcd_pid()];
    let dir = cp.dir().to_owned();
    drop(cp);
    for pid in pids {
        let pid = pid.context("a component was not running before drop")?;
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "pid {pid} still exists after drop"
        );
    }
    if !mco_e2e::keep_dirs() {
        assert!(!dir.exists(), "{} was not removed", dir.display());
    }
    Ok(())
}

/// A start that cannot succeed must fail fast with the process's own words,
/// not after the whole timeout with "not ready".
#[tokio::test]
async fn failed_start_reports_the_logs() -> Result<()> {
    let t = Instant::now();
    let Err(e) = ControlPlane::builder()
        .apiserver_arg("--no-such-flag=1")
        .start()
        .await
    else {
        bail!("kube-apiserver started despite an unknown flag");
    };
    let msg = format!("{e:#}");
    assert!(
        msg.contains("kube-apiserver exited while starting"),
        "{msg}"
    );
    assert!(msg.contains("unknown flag: --no-such-flag"), "{msg}");
    assert!(msg.contains("===== etcd log"), "{msg}");
    assert!(
        t.elapsed() < Duration::from_secs(60),
        "took {:?}",
        t.elapsed()
    );
    Ok(())
}

// ---- steps ---------------------------------------------------------------------------------------

async fn crds(cp: &ControlPlane, admin: &Client) -> Result<()> {
    let mut names = cp.install_openshift_crds().await?;
    names.sort();
    let mut expected: Vec<String> = openshift::all().iter().map(openshift::crd_name).collect();
    expected.sort();
    assert_eq!(names, expected);
    // Idempotent, so several test files or steps may install them.
    cp.install_openshift_crds().await?;

    let api: Api<CustomResourceDefinition> = Api::all(admin.clone());
    // (name, scope, shortNames, status subresource, scale subresource)
    let shapes: [(&str, &str, &[&str], bool, bool); 9] = [
        (
            "machineconfigpools.machineconfiguration.openshift.io",
            "Cluster",
            &["mcp"],
            true,
            false,
        ),
        (
            "machineconfigs.machineconfiguration.openshift.io",
            "Cluster",
            &["mc"],
            false,
            false,
        ),
        (
            "machinesets.machine.openshift.io",
            "Namespaced",
            &[],
            true,
            true,
        ),
        (
            "controlplanemachinesets.machine.openshift.io",
            "Namespaced",
            &[],
            true,
            false,
        ),
        (
            "infrastructures.config.openshift.io",
            "Cluster",
            &[],
            true,
            false,
        ),
        (
            "clusterversions.config.openshift.io",
            "Cluster",
            &[],
            true,
            false,
        ),
        (
            "featuregates.config.openshift.io",
            "Cluster",
            &[],
            true,
            false,
        ),
        (
            "machineconfigurations.operator.openshift.io",
            "Cluster",
            &[],
            true,
            false,
        ),
        (
            "clusterimagepolicies.config.openshift.io",
            "Cluster",
            &[],
            true,
            false,
        ),
    ];
    for (name, scope, short, status, scale) in shapes {
        let crd = api.get(name).await?;
        assert_eq!(crd.spec.scope, scope, "{name}");
        let got_short = crd.spec.names.short_names.clone().unwrap_or_default();
        assert_eq!(got_short, short, "{name}");
        assert_eq!(crd.spec.versions.len(), 1, "{name}");
        let v = &crd.spec.versions[0];
        assert!(v.served && v.storage, "{name}");
        let sub = v.subresources.clone().unwrap_or_default();
        assert_eq!(sub.status.is_some(), status, "{name} status subresource");
        assert_eq!(sub.scale.is_some(), scale, "{name} scale subresource");
    }

    // Schema parts that are YAML aliases in the fixtures or carry list/map
    // semantics SSA depends on: present in the stored schema, not just parsed.
    let schema_has: [(&str, &str, Value); 9] = [
        (
            "machineconfigpools.machineconfiguration.openshift.io",
            "/spec/properties/nodeSelector/x-kubernetes-map-type",
            json!("atomic"),
        ),
        (
            "machineconfigpools.machineconfiguration.openshift.io",
            "/status/properties/configuration/properties/name/type",
            json!("string"),
        ),
        (
            "machineconfigpools.machineconfiguration.openshift.io",
            "/status/properties/conditions/x-kubernetes-list-type",
            json!("atomic"),
        ),
        (
            "machinesets.machine.openshift.io",
            "/spec/properties/template/properties/spec/properties/providerSpec/properties/value/x-kubernetes-preserve-unknown-fields",
            json!(true),
        ),
        (
            "infrastructures.config.openshift.io",
            "/status/properties/platformStatus/properties/type/enum/4",
            json!("GCP"),
        ),
        (
            "clusterversions.config.openshift.io",
            "/status/properties/availableUpdates/items/properties/architecture/enum",
            json!(["Multi", ""]),
        ),
        (
            "featuregates.config.openshift.io",
            "/status/properties/featureGates/x-kubernetes-list-map-keys",
            json!(["version"]),
        ),
        (
            "featuregates.config.openshift.io",
            "/status/properties/featureGates/items/properties/disabled/items/required",
            json!(["name"]),
        ),
        (
            "machineconfigurations.operator.openshift.io",
            "/status/properties/managedBootImagesStatus/properties/machineManagers/x-kubernetes-list-map-keys",
            json!(["resource", "apiGroup"]),
        ),
    ];
    for (name, pointer, want) in schema_has {
        let crd = serde_json::to_value(api.get(name).await?)?;
        let root = "/spec/versions/0/schema/openAPIV3Schema/properties";
        let got = crd.pointer(&format!("{root}{pointer}"));
        assert_eq!(got, Some(&want), "{name}: {pointer}");
    }
    Ok(())
}

async fn machine_config_pool(admin: &Client) -> Result<String> {
    let ar = openshift::machine_config_pool();
    let api = Api::<DynamicObject>::all_with(admin.clone(), &ar);
    let spec = json!({
        "machineConfigSelector": { "matchLabels": { "machineconfiguration.openshift.io/role": "worker" } },
        "nodeSelector": { "matchLabels": { "node-role.kubernetes.io/worker": "" } },
        "paused": false,
        "maxUnavailable": "10%",
        "configuration": { "name": "rendered-worker-0123" },
    });
    let created = api
        .create(
            &PostParams::default(),
            &object(
                &ar,
                "worker",
                json!({ "spec": spec, "status": { "machineCount": 99 } }),
            )?,
        )
        .await?;
    assert_eq!(created.data["spec"], spec);
    assert!(
        created
            .data
            .get("status")
            .is_none_or(|s| s.get("machineCount").is_none()),
        "status must be ignored on create (status subresource): {}",
        created.data
    );

    let status = json!({
        "observedGeneration": 1,
        "configuration": { "name": "rendered-worker-0123" },
        "machineCount": 3, "readyMachineCount": 3, "updatedMachineCount": 2,
        "unavailableMachineCount": 1, "degradedMachineCount": 0,
        "conditions": [
            { "type": "Updated", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "", "message": "" },
            { "type": "Updating", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "", "message": "All nodes are updating" },
        ],
    });
    api.patch_status(
        "worker",
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(apply_body(&ar, "worker", json!({ "status": status }))),
    )
    .await?;
    let got = api.get("worker").await?;
    assert_eq!(got.data["status"], status);
    assert_eq!(got.data["spec"], spec, "a status write must not touch spec");
    assert_eq!(
        got.metadata.generation,
        Some(1),
        "status writes do not bump generation"
    );

    // Typed fields are validated: the apiserver rejects a string for a boolean.
    let bad = api
        .patch(
            "worker",
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "paused": "yes" } })),
        )
        .await;
    expect_code(bad, 422, "spec.paused as a string")?;

    got.metadata.uid.context("no uid")
}

async fn machine_config(admin: &Client) -> Result<()> {
    let ar = openshift::machine_config();
    let api = Api::<DynamicObject>::all_with(admin.clone(), &ar);
    // Ignition with fields no schema knows about, nested lists and odd types:
    // it must come back byte-for-byte equal.
    let ignition = json!({
        "ignition": { "version": "3.5.0", "config": { "merge": [] } },
        "passwd": { "users": [{ "name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAA e2e"] }] },
        "storage": { "files": [{
            "path": "/etc/e2e.conf", "mode": 420, "overwrite": true,
            "contents": { "source": "data:,hello%20world", "compression": "" },
            "x-custom": { "deep": [1, 2.5, null, { "k": true }] },
        }]},
        "systemd": { "units": [{ "name": "e2e.service", "enabled": true, "contents": "[Unit]\nDescription=e2e\n" }] },
    });
    let spec = json!({
        "config": ignition,
        "osImageURL": "quay.io/openshift/os@sha256:0123",
        "kernelArguments": ["nosmt", "mitigations=auto"],
        "extensions": ["usbguard"],
        "fips": false,
        "kernelType": "default",
    });
    let name = "99-worker-e2e";
    let obj = object(&ar, name, json!({ "spec": spec }))?;
    api.create(&PostParams::default(), &obj).await?;
    let got = api.get(name).await?;
    assert_eq!(got.data["spec"]["config"], ignition);
    assert_eq!(got.data["spec"], spec);
    // MachineConfig has no status subresource (upstream neither).
    expect_code(api.get_status(name).await, 404, "machineconfigs/status")?;
    Ok(())
}

fn machine_sets(admin: &Client) -> Api<DynamicObject> {
    Api::namespaced_with(
        admin.clone(),
        openshift::MACHINE_API_NAMESPACE,
        &openshift::machine_set(),
    )
}

async fn machine_set(admin: &Client) -> Result<Value> {
    let ar = openshift::machine_set();
    let api = machine_sets(admin);
    let provider_spec = json!({
        "apiVersion": "machine.openshift.io/v1beta1",
        "kind": "GCPMachineProviderSpec",
        "disks": [{ "autoDelete": true, "boot": true, "sizeGb": 128, "type": "pd-ssd",
                    "image": "projects/rhcos-cloud/global/images/rhcos-418-94-202501010000-0-gcp-x86-64" }],
        "userDataSecret": { "name": "worker-user-data" },
        "region": "us-central1", "zone": "us-central1-a",
        "metadata": { "creationTimestamp": null },
        "tags": [],
    });
    let labels = json!({ "machine.openshift.io/cluster-api-machineset": "worker-a" });
    let spec = json!({
        "replicas": 2,
        "selector": { "matchLabels": labels },
        "template": {
            "metadata": { "labels": labels },
            "spec": { "providerSpec": { "value": provider_spec } },
        },
    });
    let obj = object(&ar, "worker-a", json!({ "spec": spec }))?;
    api.create(&PostParams::default(), &obj).await?;
    let got = api.get("worker-a").await?;
    assert_eq!(
        got.data["spec"]["template"]["spec"]["providerSpec"]["value"],
        provider_spec
    );

    let selector = "machine.openshift.io/cluster-api-machineset=worker-a";
    let status = json!({
        "replicas": 2, "readyReplicas": 1, "availableReplicas": 1, "fullyLabeledReplicas": 2,
        "observedGeneration": 1, "labelSelector": selector,
    });
    api.patch_status(
        "worker-a",
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(apply_body(&ar, "worker-a", json!({ "status": status }))),
    )
    .await?;
    let got = api.get_status("worker-a").await?;
    assert_eq!(got.data["status"], status);

    let scale = api.get_scale("worker-a").await?;
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(2));
    let scale_status = scale.status.context("scale has no status")?;
    assert_eq!(scale_status.replicas, 2);
    assert_eq!(scale_status.selector.as_deref(), Some(selector));

    // The boot image controller's kind of write: a merge patch of the provider
    // spec. Merge patch replaces lists whole and must leave everything else alone.
    let new_disks = json!([{ "autoDelete": true, "boot": true, "sizeGb": 128, "type": "pd-ssd",
                             "image": "projects/rhcos-cloud/global/images/rhcos-9-6-20260101-0-gcp-x86-64" }]);
    api.patch(
        "worker-a",
        &PatchParams::default(),
        &Patch::Merge(json!({ "spec": { "template": { "spec": { "providerSpec": { "value": { "disks": new_disks } } } } } })),
    )
    .await?;
    let got = api.get("worker-a").await?;
    let mut expected = provider_spec.clone();
    expected["disks"] = new_disks;
    assert_eq!(
        got.data["spec"]["template"]["spec"]["providerSpec"]["value"],
        expected
    );
    assert_eq!(
        got.metadata.generation,
        Some(2),
        "a spec change bumps generation"
    );
    assert_eq!(
        got.data["status"], status,
        "a spec patch must not touch status"
    );
    Ok(expected)
}

async fn singletons(admin: &Client) -> Result<()> {
    // Infrastructure/cluster
    let ar = openshift::infrastructure();
    let api = Api::<DynamicObject>::all_with(admin.clone(), &ar);
    let spec =
        json!({ "cloudConfig": { "name": "" }, "platformSpec": { "type": "GCP", "gcp": {} } });
    api.create(
        &PostParams::default(),
        &object(&ar, "cluster", json!({ "spec": spec }))?,
    )
    .await?;
    let status = json!({
        "infrastructureName": "e2e-x7k2p",
        "platform": "GCP",
        "platformStatus": { "type": "GCP", "gcp": { "projectID": "e2e-project", "region": "us-central1", "resourceLabels": [] } },
        "controlPlaneTopology": "HighlyAvailable",
        "infrastructureTopology": "HighlyAvailable",
        "cpuPartitioning": "None",
        "apiServerURL": "https://api.e2e.example.com:6443",
    });
    let params = PatchParams::apply(MANAGER).force();
    api.patch_status(
        "cluster",
        &params,
        &Patch::Apply(apply_body(&ar, "cluster", json!({ "status": status }))),
    )
    .await?;
    assert_eq!(api.get("cluster").await?.data["status"], status);
    let bad = api
        .patch_status(
            "cluster",
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": { "platformStatus": { "type": "Mars" } } })),
        )
        .await;
    expect_code(bad, 422, "an unknown platform type")?;

    // ClusterVersion/version
    let ar = openshift::cluster_version();
    let api = Api::<DynamicObject>::all_with(admin.clone(), &ar);
    let no_id = api
        .create(
            &PostParams::default(),
            &object(
                &ar,
                "version",
                json!({ "spec": { "channel": "stable-4.21" } }),
            )?,
        )
        .await;
    expect_code(no_id, 422, "a ClusterVersion without spec.clusterID")?;
    let spec =
        json!({ "clusterID": "6f1f4c4e-0000-4000-8000-000000000001", "channel": "stable-4.21" });
    api.create(
        &PostParams::default(),
        &object(&ar, "version", json!({ "spec": spec }))?,
    )
    .await?;
    let status = json!({
        "observedGeneration": 1,
        "versionHash": "abc123",
        "desired": { "version": "4.21.0", "image": "quay.io/openshift-release-dev/ocp-release@sha256:01", "architecture": "Multi" },
        "history": [{
            "state": "Completed", "version": "4.21.0", "verified": false,
            "image": "quay.io/openshift-release-dev/ocp-release@sha256:01",
            "startedTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T01:00:00Z",
        }],
        "availableUpdates": null,
    });
    api.patch_status(
        "version",
        &params,
        &Patch::Apply(apply_body(&ar, "version", json!({ "status": status }))),
    )
    .await?;
    let got = api.get("version").await?;
    assert_eq!(got.data["status"]["desired"], status["desired"]);
    assert_eq!(got.data["status"]["history"], status["history"]);

    // MachineConfiguration/cluster
    let ar = openshift::machine_configuration();
    let api = Api::<DynamicObject>::all_with(admin.clone(), &ar);
    let managers = json!([{
        "resource": "machinesets", "apiGroup": "machine.openshift.io",
        "selection": { "mode": "Partial", "partial": { "machineResourceSelector": { "matchLabels": { "env": "prod" } } } },
    }]);
    let spec = json!({ "managementState": "Managed", "managedBootImages": { "machineManagers": managers } });
    api.create(
        &PostParams::default(),
        &object(&ar, "cluster", json!({ "spec": spec }))?,
    )
    .await?;
    // The CEL rule: `partial` only with mode Partial.
    let bad = api
        .patch(
            "cluster",
            &PatchParams::default(),
            &Patch::Merge(
                json!({ "spec": { "managedBootImages": { "machineManagers": [{
                "resource": "machinesets", "apiGroup": "machine.openshift.io",
                "selection": { "mode": "All", "partial": { "machineResourceSelector": {} } },
            }] } } }),
            ),
        )
        .await;
    expect_code(bad, 422, "partial with mode All")?;

    // Two field managers own one condition each. With the list-map keyed by
    // type both survive; an atomic list would keep only the last apply.
    let condition = |ty: &str| json!({ "type": ty, "status": "False", "reason": "NA", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z" });
    let first = json!({ "status": {
        "observedGeneration": 1,
        "managedBootImagesStatus": { "machineManagers": managers },
        "conditions": [condition("BootImageUpdateProgressing")],
    }});
    api.patch_status(
        "cluster",
        &PatchParams::apply("operator").force(),
        &Patch::Apply(apply_body(&ar, "cluster", first)),
    )
    .await?;
    let second = json!({ "status": { "conditions": [condition("BootImageUpdateDegraded")] } });
    api.patch_status(
        "cluster",
        &PatchParams::apply("controller").force(),
        &Patch::Apply(apply_body(&ar, "cluster", second)),
    )
    .await?;
    let got = api.get("cluster").await?;
    let mut types: Vec<&str> = got.data["status"]["conditions"]
        .as_array()
        .context("no conditions")?
        .iter()
        .filter_map(|c| c["type"].as_str())
        .collect();
    types.sort_unstable();
    assert_eq!(
        types,
        ["BootImageUpdateDegraded", "BootImageUpdateProgressing"]
    );
    assert_eq!(
        got.data["status"]["managedBootImagesStatus"]["machineManagers"],
        managers
    );
    assert_eq!(got.data["status"]["observedGeneration"], json!(1));
    Ok(())
}

/// The ServiceAccount-style user is denied until the admin grants it a role,
/// then allowed exactly what the role says. Returns the user's client.
async fn rbac(cp: &ControlPlane, admin: &Client, sa: &User) -> Result<Client> {
    let client = cp.client_for(&sa.name)?;
    let review = whoami(&client).await?;
    assert_eq!(review.0, sa.name);
    for g in &sa.groups {
        assert!(
            review.1.contains(g),
            "group {g} missing from {:?}",
            review.1
        );
    }

    let pools = Api::<DynamicObject>::all_with(client.clone(), &openshift::machine_config_pool());
    expect_code(
        pools.list(&Default::default()).await,
        403,
        "listing pools before the grant",
    )?;

    let role: ClusterRole = serde_json::from_value(json!({
        "metadata": { "name": "mco-e2e-pool-reader" },
        "rules": [{
            "apiGroups": ["machineconfiguration.openshift.io"],
            "resources": ["machineconfigpools"],
            "verbs": ["get", "list", "watch"],
        }],
    }))?;
    Api::<ClusterRole>::all(admin.clone())
        .create(&PostParams::default(), &role)
        .await?;
    // A ServiceAccount subject, as deploy/ will use: it must match the token user.
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": { "name": "mco-e2e-pool-reader" },
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "mco-e2e-pool-reader" },
        "subjects": [{ "kind": "ServiceAccount", "name": "mco-host", "namespace": "mco-system" }],
    }))?;
    Api::<ClusterRoleBinding>::all(admin.clone())
        .create(&PostParams::default(), &binding)
        .await?;

    // The authorizer's cache catches up within milliseconds; allow a few seconds.
    let deadline = Instant::now() + Duration::from_secs(10);
    let listed = loop {
        match pools.list(&Default::default()).await {
            Ok(l) => break l,
            Err(e) if Instant::now() < deadline && api_code(&e) == Some(403) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => return Err(e).context("listing pools after the grant"),
        }
    };
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].metadata.name.as_deref(), Some("worker"));

    // Read-only: writes and other resources stay forbidden.
    let write = pools
        .patch(
            "worker",
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "paused": true } })),
        )
        .await;
    expect_code(write, 403, "patching a pool with a read-only role")?;
    let configs = Api::<DynamicObject>::all_with(client.clone(), &openshift::machine_config());
    expect_code(
        configs.list(&Default::default()).await,
        403,
        "listing machineconfigs",
    )?;
    Ok(client)
}

async fn kubeconfig(cp: &ControlPlane, sa: &User) -> Result<()> {
    let path = cp.kubeconfig_for(&sa.name)?;
    let mode = std::fs::metadata(&path)?.permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the kubeconfig holds a token");
    // The same loading path a child `mco-host run --kubeconfig` would take.
    let kc = Kubeconfig::read_from(&path)?;
    let config = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).await?;
    assert_eq!(
        config.cluster_url.to_string().trim_end_matches('/'),
        cp.url()
    );
    let client = Client::try_from(config)?;
    assert_eq!(whoami(&client).await?.0, sa.name);
    Ok(())
}

// ---- helpers -------------------------------------------------------------------------------------

fn object(ar: &ApiResource, name: &str, body: Value) -> Result<DynamicObject> {
    let mut v = apply_body(ar, name, body);
    v["metadata"] = json!({ "name": name });
    Ok(serde_json::from_value(v)?)
}

/// apiVersion + kind + metadata.name around `body`, as SSA requires.
fn apply_body(ar: &ApiResource, name: &str, mut body: Value) -> Value {
    body["apiVersion"] = json!(ar.api_version);
    body["kind"] = json!(ar.kind);
    body["metadata"] = json!({ "name": name });
    body
}

fn api_code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

fn expect_code<T: std::fmt::Debug>(r: kube::Result<T>, code: u16, what: &str) -> Result<()> {
    match r {
        Err(e) if api_code(&e) == Some(code) => Ok(()),
        Err(e) => bail!("{what}: expected HTTP {code}, got error {e}"),
        Ok(v) => bail!("{what}: expected HTTP {code}, but it succeeded: {v:?}"),
    }
}

async fn whoami(client: &Client) -> Result<(String, Vec<String>)> {
    let review = Api::<SelfSubjectReview>::all(client.clone())
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await?;
    let info = review
        .status
        .and_then(|s| s.user_info)
        .context("SelfSubjectReview without userInfo")?;
    Ok((
        info.username.unwrap_or_default(),
        info.groups.unwrap_or_default(),
    ))
}

/// A client made before the restart may hold a pooled connection the old
/// apiserver closed; controllers retry such errors, and so does this, once.
async fn retry_once<T, F, Fut>(mut f: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = kube::Result<T>>,
{
    match f().await {
        Ok(v) => Ok(v),
        Err(e) => {
            eprintln!("first request after the restart failed ({e}); retrying once");
            ensure!(api_code(&e).is_none(), "API error after restart: {e}");
            Ok(f().await?)
        }
    }
}
