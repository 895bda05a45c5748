//! The managed boot image controller (`mco-host run --boot-images`) against a
//! real kube-apiserver and etcd, as the ServiceAccount with the RBAC in
//! `deploy/` and `deploy/boot-images/`.
//!
//! Each test builds a small cluster: Infrastructure, ClusterVersion,
//! MachineConfiguration, the `coreos-bootimages` ConfigMap with an older
//! release's stream, MachineSets and their user-data Secrets; then it lands
//! a newer stream (or changes enrollment, stability, a competing writer) and
//! checks what was written, and what was not.

#[allow(dead_code, reason = "the e2e files share one support module; each uses part of it")]
mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail, ensure};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use mco_e2e::openshift;
use serde_json::{Value, json};
use tokio::time::sleep;

use support::{Fixture, NAMESPACE};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
const MAPI: &str = "openshift-machine-api";
const MCO: &str = "openshift-machine-config-operator";
const MANAGER: &str = "mco-e2e-test";
const POLL: Duration = Duration::from_millis(200);
const CONVERGE: Duration = Duration::from_secs(30);
/// How long "nothing happens" is watched for.
const QUIET: Duration = Duration::from_secs(3);
const STATE: &str = "mco-host-boot-images";

const OLD: &str = "9.6.20250101-0";
const NEW: &str = "9.8.20260428-0";

// ---- the streams ---------------------------------------------------------------------------

/// The boot images of one release, per platform and arch.
fn ami(release: &str, arch: &str) -> String {
    format!("ami-{}{arch}", release.replace(['.', '-'], ""))
}

fn gcp_image(release: &str, arch: &str) -> String {
    format!(
        "projects/rhcos-cloud/global/images/rhcos-{}-gcp-{arch}",
        release.replace('.', "-")
    )
}

fn azure_image(release: &str, sku: &str) -> Value {
    json!({"publisher": "azureopenshift", "offer": "aro4", "sku": sku, "version": release,
           "resourceID": "", "type": "MarketplaceNoPlan"})
}

/// A stream for x86_64 and aarch64 only (no s390x).
fn stream(release: &str) -> String {
    let arch = |name: &str, gcp: &str, sku: &str| {
        json!({
            "images": {
                "aws": {"regions": {"us-east-1": {"release": release, "image": ami(release, name)}}},
                "gcp": {"release": release, "project": "rhcos-cloud",
                        "name": gcp_image(release, gcp).rsplit('/').next().unwrap_or_default()},
            },
            "rhel-coreos-extensions": {"marketplace": {"azure": {"no-purchase-plan": {
                "hyperVGen2": {"publisher": "azureopenshift", "offer": "aro4", "sku": sku, "version": release}
            }}}}
        })
    };
    json!({
        "stream": "rhcos-test",
        "metadata": {"last-modified": "2026-04-28T22:11:54Z"},
        "architectures": {
            "x86_64": arch("x86_64", "x86-64", "420-v2"),
            "aarch64": arch("aarch64", "aarch64", "420-arm"),
        }
    })
    .to_string()
}

// ---- the MachineSets -----------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Platform {
    Gcp,
    Aws,
    Azure,
}

impl Platform {
    fn infrastructure_type(self) -> &'static str {
        match self {
            Platform::Gcp => "GCP",
            Platform::Aws => "AWS",
            Platform::Azure => "Azure",
        }
    }

    /// The providerSpec of a MachineSet on `release`'s image for `arch`
    /// (`x86_64`/`aarch64`), or on a custom image.
    fn provider_spec(self, image: Image, secret: &str) -> Value {
        let (release, arch) = match image {
            Image::Rhcos(release, arch) => (release, arch),
            Image::Custom => ("", ""),
        };
        match self {
            Platform::Gcp => {
                let image = match image {
                    Image::Custom => "projects/mycorp/global/images/golden-1".to_owned(),
                    _ => gcp_image(
                        release,
                        if arch == "x86_64" {
                            "x86-64"
                        } else {
                            "aarch64"
                        },
                    ),
                };
                json!({"kind": "GCPMachineProviderSpec", "region": "us-central1",
                       "disks": [{"boot": true, "image": image, "sizeGb": 128},
                                 {"boot": false, "image": "projects/mycorp/global/images/data"}],
                       "userDataSecret": {"name": secret}})
            }
            Platform::Aws => {
                let id = match image {
                    Image::Custom => "ami-0c0ffee0c0ffee000".to_owned(),
                    _ => ami(release, arch),
                };
                json!({"kind": "AWSMachineProviderConfig", "ami": {"id": id},
                       "placement": {"region": "us-east-1", "availabilityZone": "us-east-1a"},
                       "userDataSecret": {"name": secret}})
            }
            Platform::Azure => {
                let image = match image {
                    Image::Custom => json!({"publisher": "mycorp", "offer": "golden", "sku": "1",
                                            "version": "1.0.0", "resourceID": "", "type": ""}),
                    _ => azure_image(
                        release,
                        if arch == "x86_64" {
                            "420-v2"
                        } else {
                            "420-arm"
                        },
                    ),
                };
                json!({"kind": "AzureMachineProviderSpec", "image": image,
                       "userDataSecret": {"name": secret}})
            }
        }
    }

    /// Where the boot image is in a providerSpec.
    fn image_of(self, spec: &Value) -> Value {
        match self {
            Platform::Gcp => spec["disks"][0]["image"].clone(),
            Platform::Aws => spec["ami"].clone(),
            Platform::Azure => spec["image"].clone(),
        }
    }
}

#[derive(Clone, Copy)]
enum Image {
    Rhcos(&'static str, &'static str),
    Custom,
}

struct MachineSetSpec {
    name: &'static str,
    image: Image,
    arch_annotation: &'static str,
    secret: &'static str,
    labels: Value,
    owned: bool,
    windows: bool,
}

impl MachineSetSpec {
    fn new(name: &'static str) -> Self {
        MachineSetSpec {
            name,
            image: Image::Rhcos(OLD, "x86_64"),
            arch_annotation: "kubernetes.io/arch=amd64",
            secret: "worker-user-data",
            labels: json!({}),
            owned: false,
            windows: false,
        }
    }

    fn object(&self, platform: Platform) -> Value {
        let mut metadata = json!({
            "name": self.name, "namespace": MAPI, "labels": self.labels,
            "annotations": {"capacity.cluster-autoscaler.kubernetes.io/labels": self.arch_annotation},
        });
        if self.owned {
            metadata["ownerReferences"] = json!([{"apiVersion": "hive.openshift.io/v1",
                "kind": "MachinePool", "name": "pool", "uid": "5b4d1f0e-0000-4000-8000-000000000001"}]);
        }
        let template_labels = if self.windows {
            json!({"machine.openshift.io/os-id": "Windows"})
        } else {
            json!({})
        };
        json!({
            "apiVersion": "machine.openshift.io/v1beta1", "kind": "MachineSet",
            "metadata": metadata,
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"machineset": self.name}},
                "template": {
                    "metadata": {"labels": template_labels},
                    "spec": {"providerSpec": {"value": platform.provider_spec(self.image, self.secret)}}
                }
            }
        })
    }
}

/// The stubs: spec 2.2 (clusters installed before 4.6) and spec 3.
fn stub(version: &str) -> String {
    let config = if version.starts_with('2') {
        json!({"append": [{"source": "https://api-int.c1.example.com:22623/config/worker", "verification": {}}]})
    } else {
        json!({"merge": [{"source": "https://api-int.c1.example.com:22623/config/worker"}]})
    };
    json!({"ignition": {"config": config, "version": version}}).to_string()
}

// ---- the cluster ---------------------------------------------------------------------------

struct Cluster {
    fx: Fixture,
    platform: Platform,
}

fn all_managers(selection: Value) -> Value {
    json!({"machineManagers": [{"resource": "machinesets", "apiGroup": "machine.openshift.io", "selection": selection}]})
}

impl Cluster {
    /// A cluster of `platform` with a stable ClusterVersion, every
    /// MachineSet enrolled (unless told otherwise), the old release's
    /// stream and the given MachineSets.
    async fn start(platform: Platform, machinesets: &[MachineSetSpec]) -> Result<Cluster> {
        let fx = Fixture::start().await?;
        fx.enable_boot_images().await?;
        let cluster = Cluster { fx, platform };
        cluster
            .apply(
                &openshift::infrastructure(),
                None,
                json!({"apiVersion": "config.openshift.io/v1", "kind": "Infrastructure",
                       "metadata": {"name": "cluster"}, "spec": {}}),
            )
            .await?;
        cluster
            .set_status(
                &openshift::infrastructure(),
                "cluster",
                json!({"infrastructureName": "c1",
                       "platformStatus": {"type": platform.infrastructure_type()}}),
            )
            .await?;
        cluster
            .apply(
                &openshift::cluster_version(),
                None,
                json!({"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
                       "metadata": {"name": "version"}, "spec": {"clusterID": "c1"}}),
            )
            .await?;
        cluster.set_history("Completed").await?;
        cluster
            .apply(
                &openshift::machine_configuration(),
                None,
                json!({"apiVersion": "operator.openshift.io/v1", "kind": "MachineConfiguration",
                       "metadata": {"name": "cluster"}, "spec": {}}),
            )
            .await?;
        cluster.enroll(all_managers(json!({"mode": "All"}))).await?;
        cluster.set_stream(OLD).await?;
        for (name, version) in [("worker-user-data", "3.2.0"), ("legacy-user-data", "2.2.0")] {
            let secret = json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": name, "namespace": MAPI},
                "stringData": {"userData": stub(version)}});
            cluster
                .apply(&ApiResource::erase::<Secret>(&()), Some(MAPI), secret)
                .await?;
        }
        for ms in machinesets {
            cluster
                .apply(&openshift::machine_set(), Some(MAPI), ms.object(platform))
                .await?;
        }
        Ok(cluster)
    }

    /// Starts a controller and waits until it holds the lease.
    async fn start_controller(&mut self, identity: &str) -> Result<usize> {
        let args = [
            "--boot-images",
            "--resync",
            "1s",
            "--machineconfiguration-wait",
            "2s",
            "--lease-duration",
            "4s",
        ];
        let index = self.fx.start_controller(identity, &args).await?;
        let started = Instant::now();
        while !self.metrics(index).await?.leader()? {
            ensure!(
                started.elapsed() < CONVERGE,
                "{identity} never took the lease"
            );
            sleep(POLL).await;
        }
        Ok(index)
    }

    fn admin(&self) -> Client {
        self.fx.admin.clone()
    }

    async fn apply(&self, ar: &ApiResource, ns: Option<&str>, object: Value) -> Result<()> {
        let api: Api<DynamicObject> = match ns {
            Some(ns) => Api::namespaced_with(self.admin(), ns, ar),
            None => Api::all_with(self.admin(), ar),
        };
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        api.patch(
            &name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&object),
        )
        .await
        .with_context(|| format!("applying {} {name}", ar.kind))?;
        Ok(())
    }

    async fn set_status(&self, ar: &ApiResource, name: &str, status: Value) -> Result<()> {
        let api: Api<DynamicObject> = Api::all_with(self.admin(), ar);
        api.patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": status})),
        )
        .await
        .with_context(|| format!("setting the status of {} {name}", ar.kind))?;
        Ok(())
    }

    async fn set_history(&self, state: &str) -> Result<()> {
        self.set_status(
            &openshift::cluster_version(),
            "version",
            json!({"desired": {"version": "4.21.0"},
                   "history": [{"state": state, "startedTime": "2026-11-01T00:00:00Z", "version": "4.21.0"}]}),
        )
        .await
    }

    /// Sets the effective enrollment as the operator would, status caught
    /// up with the spec.
    async fn enroll(&self, managers: Value) -> Result<()> {
        let api: Api<DynamicObject> =
            Api::all_with(self.admin(), &openshift::machine_configuration());
        let generation = api.get("cluster").await?.metadata.generation.unwrap_or(1);
        self.set_status(
            &openshift::machine_configuration(),
            "cluster",
            json!({"observedGeneration": generation, "managedBootImagesStatus": managers}),
        )
        .await
    }

    async fn set_stream(&self, release: &str) -> Result<()> {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "coreos-bootimages", "namespace": MCO},
            "data": {"stream": stream(release), "releaseVersion": "4.21.0"}});
        self.apply(&ApiResource::erase::<ConfigMap>(&()), Some(MCO), cm)
            .await
    }

    fn machinesets(&self) -> Api<DynamicObject> {
        Api::namespaced_with(self.admin(), MAPI, &openshift::machine_set())
    }

    async fn machineset(&self, name: &str) -> Result<DynamicObject> {
        self.machinesets()
            .get(name)
            .await
            .with_context(|| format!("reading MachineSet {name}"))
    }

    async fn image(&self, name: &str) -> Result<Value> {
        let ms = self.machineset(name).await?;
        Ok(self
            .platform
            .image_of(&ms.data["spec"]["template"]["spec"]["providerSpec"]["value"]))
    }

    /// The boot image a MachineSet on `release` for `arch` has.
    fn expected_image(&self, release: &'static str, arch: &'static str) -> Value {
        let spec = self
            .platform
            .provider_spec(Image::Rhcos(release, arch), "x");
        let mut image = self.platform.image_of(&spec);
        if self.platform == Platform::Aws {
            // The patch replaces the whole `ami` object; the nulls it sends
            // for `arn` and `filters` are not stored.
            image = json!({"id": image["id"]});
        }
        image
    }

    async fn resource_versions(&self) -> Result<BTreeMap<String, String>> {
        Ok(self
            .machinesets()
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .map(|ms| (ms.name_any(), ms.resource_version().unwrap_or_default()))
            .collect())
    }

    /// Conditions of MachineConfiguration `cluster` by type.
    async fn conditions(&self) -> Result<BTreeMap<String, Value>> {
        let api: Api<DynamicObject> =
            Api::all_with(self.admin(), &openshift::machine_configuration());
        let mc = api.get("cluster").await?;
        Ok(mc.data["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|c| Some((c["type"].as_str()?.to_owned(), c)))
            .collect())
    }

    /// Waits until the conditions read `progressing` and `degraded`
    /// (status, message prefix).
    async fn wait_conditions(
        &self,
        progressing: &str,
        degraded: (&str, &str),
    ) -> Result<BTreeMap<String, Value>> {
        let started = Instant::now();
        loop {
            let conditions = self.conditions().await?;
            let matches = |t: &str, status: &str, prefix: &str| {
                conditions.get(t).is_some_and(|c| {
                    c["status"] == status
                        && c["message"].as_str().is_some_and(|m| m.starts_with(prefix))
                })
            };
            if matches("BootImageUpdateProgressing", "False", progressing)
                && matches("BootImageUpdateDegraded", degraded.0, degraded.1)
            {
                return Ok(conditions);
            }
            if started.elapsed() > CONVERGE {
                bail!(
                    "conditions did not become Progressing=False {progressing:?} / Degraded={} {:?} in {CONVERGE:?}; they are {conditions:#?}",
                    degraded.0,
                    degraded.1
                );
            }
            sleep(POLL).await;
        }
    }

    async fn wait_image(&self, name: &str, want: &Value) -> Result<Duration> {
        let started = Instant::now();
        loop {
            let image = self.image(name).await?;
            if image == *want {
                return Ok(started.elapsed());
            }
            if started.elapsed() > CONVERGE {
                bail!("MachineSet {name} has image {image}, not {want}, after {CONVERGE:?}");
            }
            sleep(POLL).await;
        }
    }

    /// `reason: note` of every Event about MachineSet `name`.
    async fn events(&self, name: &str) -> Result<Vec<String>> {
        let api: Api<k8s_openapi::api::events::v1::Event> = Api::namespaced(self.admin(), MAPI);
        Ok(api
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
            .map(|e| {
                format!(
                    "{}: {}",
                    e.reason.unwrap_or_default(),
                    e.note.unwrap_or_default()
                )
            })
            .collect())
    }

    async fn state(&self) -> Result<BTreeMap<String, String>> {
        let api: Api<ConfigMap> = Api::namespaced(self.admin(), NAMESPACE);
        Ok(api
            .get_opt(STATE)
            .await?
            .and_then(|cm| cm.data)
            .unwrap_or_default())
    }

    async fn metrics(&self, controller: usize) -> Result<support::controller::Metrics> {
        self.fx.controllers[controller].metrics().await
    }
}

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
        Platform::Gcp => Some(("BootImageUpdateFailed", "has no GCP image")),
        Platform::Aws => Some(("BootImageUpdateSkipped", "s390x")),
        Platform::Azure => None,
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
    };
    let controller = c.start_controller("boot-a").await?;
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

// ---- 4: a competing writer -----------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_competing_writer_is_stopped_and_stays_stopped() -> Result<()> {
    in_cluster(Platform::Aws, &[MachineSetSpec::new("rhcos")], async |c| {
        c.start_controller("boot-a").await?;
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
        let second = c.start_controller("boot-b").await?;
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
        c.start_controller("boot-a").await?;
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
        c.start_controller("boot-a").await?;
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
