//! A small OpenShift cluster for the boot image controller: Infrastructure,
//! ClusterVersion, MachineConfiguration, the `coreos-bootimages` ConfigMap
//! with an older release's stream, MachineSets and their user-data Secrets,
//! and ways to change each the way the operator, the CVO or an admin would.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use mco_e2e::openshift;
use serde_json::{Value, json};
use tokio::time::sleep;

use super::fixture::{Fixture, NAMESPACE};

pub const MAPI: &str = "openshift-machine-api";
pub const MCO: &str = "openshift-machine-config-operator";
const MANAGER: &str = "mco-e2e-test";
const POLL: Duration = Duration::from_millis(200);
pub const CONVERGE: Duration = Duration::from_secs(30);
const STATE: &str = "mco-host-boot-images";

pub const OLD: &str = "9.6.20250101-0";
pub const NEW: &str = "9.8.20260428-0";

// ---- the streams ---------------------------------------------------------------------------

/// The boot images of one release, per platform and arch.
pub fn ami(release: &str, arch: &str) -> String {
    format!("ami-{}{arch}", release.replace(['.', '-'], ""))
}

pub fn gcp_image(release: &str, arch: &str) -> String {
    format!(
        "projects/rhcos-cloud/global/images/rhcos-{}-gcp-{arch}",
        release.replace('.', "-")
    )
}

pub fn azure_image(release: &str, sku: &str) -> Value {
    json!({"publisher": "azureopenshift", "offer": "aro4", "sku": sku, "version": release,
           "resourceID": "", "type": "MarketplaceNoPlan"})
}

/// A stream for x86_64 and aarch64 only (no s390x).
pub fn stream(release: &str) -> String {
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
pub enum Platform {
    Gcp,
    Aws,
    Azure,
    /// Its MachineSets name a template in vCenter: `bootimage_vsphere.rs`
    /// builds them itself, with their workspaces.
    Vsphere,
}

impl Platform {
    pub fn infrastructure_type(self) -> &'static str {
        match self {
            Platform::Gcp => "GCP",
            Platform::Aws => "AWS",
            Platform::Azure => "Azure",
            Platform::Vsphere => "VSphere",
        }
    }

    /// The providerSpec of a MachineSet on `release`'s image for `arch`
    /// (`x86_64`/`aarch64`), or on a custom image.
    pub fn provider_spec(self, image: Image, secret: &str) -> Value {
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
            Platform::Vsphere => {
                let template = match image {
                    Image::Custom => "customer-golden".to_owned(),
                    Image::Rhcos(..) => "c1-rhcos-fd-a".to_owned(),
                };
                json!({"kind": "VSphereMachineProviderSpec", "template": template,
                       "userDataSecret": {"name": secret}})
            }
        }
    }

    /// Where the boot image is in a providerSpec.
    pub fn image_of(self, spec: &Value) -> Value {
        match self {
            Platform::Gcp => spec["disks"][0]["image"].clone(),
            Platform::Aws => spec["ami"].clone(),
            Platform::Azure => spec["image"].clone(),
            Platform::Vsphere => spec["template"].clone(),
        }
    }
}

#[derive(Clone, Copy)]
pub enum Image {
    Rhcos(&'static str, &'static str),
    Custom,
}

pub struct MachineSetSpec {
    pub name: &'static str,
    pub image: Image,
    pub arch_annotation: &'static str,
    pub secret: &'static str,
    pub labels: Value,
    pub owned: bool,
    pub windows: bool,
}

impl MachineSetSpec {
    pub fn new(name: &'static str) -> Self {
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

    pub fn object(&self, platform: Platform) -> Value {
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

/// ControlPlaneMachineSet `cluster` as the installer leaves it, trimmed: the
/// providerSpec of `platform` on `image` one level deeper than a
/// MachineSet's, with an empty zone (the failure domains place the
/// machines) and the `master-user-data` stub.
pub fn control_plane_machine_set(platform: Platform, image: Image) -> Value {
    let mut provider_spec = platform.provider_spec(image, "master-user-data");
    if platform == Platform::Aws {
        provider_spec["placement"]["availabilityZone"] = json!("");
    }
    json!({
        "apiVersion": "machine.openshift.io/v1", "kind": "ControlPlaneMachineSet",
        "metadata": {"name": "cluster", "namespace": MAPI,
                     "labels": {"machine.openshift.io/cluster-api-cluster": "c1"}},
        "spec": {
            "replicas": 3,
            "state": "Active",
            "strategy": {"type": "RollingUpdate"},
            "selector": {"matchLabels": {"machine.openshift.io/cluster-api-machine-role": "master"}},
            "template": {
                "machineType": "machines_v1beta1_machine_openshift_io",
                "machines_v1beta1_machine_openshift_io": {
                    "failureDomains": {"platform": platform.infrastructure_type()},
                    "metadata": {"labels": {"machine.openshift.io/cluster-api-machine-role": "master"}},
                    "spec": {"metadata": {}, "providerSpec": {"value": provider_spec}}
                }
            }
        }
    })
}

/// Where the providerSpec is in a ControlPlaneMachineSet.
pub const CPMS_PROVIDER_SPEC: &str =
    "/spec/template/machines_v1beta1_machine_openshift_io/spec/providerSpec/value";

/// The stubs: spec 2.2 (clusters installed before 4.6) and spec 3.
pub fn stub(version: &str) -> String {
    let config = if version.starts_with('2') {
        json!({"append": [{"source": "https://api-int.c1.example.com:22623/config/worker", "verification": {}}]})
    } else {
        json!({"merge": [{"source": "https://api-int.c1.example.com:22623/config/worker"}]})
    };
    json!({"ignition": {"config": config, "version": version}}).to_string()
}

// ---- the cluster ---------------------------------------------------------------------------

pub struct Cluster {
    pub fx: Fixture,
    pub platform: Platform,
}

pub fn all_managers(selection: Value) -> Value {
    json!({"machineManagers": [{"resource": "machinesets", "apiGroup": "machine.openshift.io", "selection": selection}]})
}

/// Both managers: MachineSets with `machinesets`, the ControlPlaneMachineSet
/// with mode `cpms` (`All` or `None`).
pub fn managers_with_cpms(machinesets: Value, cpms: &str) -> Value {
    json!({"machineManagers": [
        {"resource": "machinesets", "apiGroup": "machine.openshift.io", "selection": machinesets},
        {"resource": "controlplanemachinesets", "apiGroup": "machine.openshift.io",
         "selection": {"mode": cpms}}]})
}

impl Cluster {
    /// A cluster of `platform` with a stable ClusterVersion, every
    /// MachineSet enrolled (unless told otherwise), the old release's
    /// stream and the given MachineSets.
    pub async fn start(platform: Platform, machinesets: &[MachineSetSpec]) -> Result<Cluster> {
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
    pub async fn start_controller(&mut self, identity: &str, extra: &[&str]) -> Result<usize> {
        let index = self.start_replica(identity, extra).await?;
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

    /// Starts a controller of the boot image job, ready but maybe standing
    /// by for the lease.
    pub async fn start_replica(&mut self, identity: &str, extra: &[&str]) -> Result<usize> {
        let mut args = vec![
            "--boot-images",
            "--machineconfiguration-wait",
            "2s",
            "--lease-duration",
            "4s",
        ];
        args.extend_from_slice(extra);
        self.fx.start_controller(identity, &args).await
    }

    pub fn admin(&self) -> Client {
        self.fx.admin.clone()
    }

    pub async fn apply(&self, ar: &ApiResource, ns: Option<&str>, object: Value) -> Result<()> {
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

    pub async fn set_status(&self, ar: &ApiResource, name: &str, status: Value) -> Result<()> {
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

    pub async fn set_history(&self, state: &str) -> Result<()> {
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
    pub async fn enroll(&self, managers: Value) -> Result<()> {
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

    pub async fn set_stream(&self, release: &str) -> Result<()> {
        self.set_stream_text(&stream(release)).await
    }

    /// Puts any text, JSON or not, into the ConfigMap's `data.stream`.
    pub async fn set_stream_text(&self, text: &str) -> Result<()> {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "coreos-bootimages", "namespace": MCO},
            "data": {"stream": text, "releaseVersion": "4.21.0"}});
        self.apply(&ApiResource::erase::<ConfigMap>(&()), Some(MCO), cm)
            .await
    }

    /// A registry in which every shipped boot image guest also shadows
    /// itself as the candidate: every shadow evaluation must agree.
    pub fn self_shadowing_registry(&self) -> Result<std::path::PathBuf> {
        let guests = super::controller::host_binary()?
            .parent()
            .map(|release| release.join("guests"))
            .ok_or_else(|| anyhow::anyhow!("the host binary has no directory"))?;
        let mut text = format!("mcn: {}\nbootImage:\n", guests.join("mcn.wasm").display());
        for (platform, file) in [
            ("GCP", "bootimage-gcp.wasm"),
            ("AWS", "bootimage-aws.wasm"),
            ("Azure", "bootimage-azure.wasm"),
        ] {
            let module = guests.join(file);
            text.push_str(&format!(
                "  {platform}: {{module: {m}, candidate: {{module: {m}}}}}\n",
                m = module.display()
            ));
        }
        let path = self.fx.cp.dir().join("registry.yaml");
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        Ok(path)
    }

    /// Sets keys of the controller's record, as an admin editing it would.
    pub async fn set_state(&self, data: Value) -> Result<()> {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": STATE, "namespace": NAMESPACE}, "data": data});
        self.apply(&ApiResource::erase::<ConfigMap>(&()), Some(NAMESPACE), cm)
            .await
    }

    pub fn machinesets(&self) -> Api<DynamicObject> {
        Api::namespaced_with(self.admin(), MAPI, &openshift::machine_set())
    }

    pub async fn machineset(&self, name: &str) -> Result<DynamicObject> {
        self.machinesets()
            .get(name)
            .await
            .with_context(|| format!("reading MachineSet {name}"))
    }

    /// Creates ControlPlaneMachineSet `cluster` on `image` and its
    /// `master-user-data` stub (spec 2.2, as a pre-4.6 install has it).
    pub async fn add_control_plane_machine_set(&self, image: Image) -> Result<()> {
        let master = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "master-user-data", "namespace": MAPI},
            "stringData": {"userData": stub("2.2.0")}});
        self.apply(&ApiResource::erase::<Secret>(&()), Some(MAPI), master)
            .await?;
        let cpms = control_plane_machine_set(self.platform, image);
        self.apply(&openshift::control_plane_machine_set(), Some(MAPI), cpms)
            .await
    }

    pub fn controlplanemachinesets(&self) -> Api<DynamicObject> {
        Api::namespaced_with(self.admin(), MAPI, &openshift::control_plane_machine_set())
    }

    /// ControlPlaneMachineSet `cluster`, as stored.
    pub async fn cpms(&self) -> Result<DynamicObject> {
        self.controlplanemachinesets()
            .get("cluster")
            .await
            .context("reading ControlPlaneMachineSet cluster")
    }

    /// The boot image in the providerSpec of ControlPlaneMachineSet `cluster`.
    pub async fn cpms_image(&self) -> Result<Value> {
        let cpms = self.cpms().await?;
        let spec = cpms.data.pointer(CPMS_PROVIDER_SPEC).cloned();
        Ok(self.platform.image_of(&spec.unwrap_or(Value::Null)))
    }

    pub async fn wait_cpms_image(&self, want: &Value) -> Result<Duration> {
        let started = Instant::now();
        loop {
            let image = self.cpms_image().await?;
            if image == *want {
                return Ok(started.elapsed());
            }
            if started.elapsed() > CONVERGE {
                bail!(
                    "ControlPlaneMachineSet cluster has image {image}, not {want}, after {CONVERGE:?}"
                );
            }
            sleep(POLL).await;
        }
    }

    pub async fn image(&self, name: &str) -> Result<Value> {
        let ms = self.machineset(name).await?;
        Ok(self
            .platform
            .image_of(&ms.data["spec"]["template"]["spec"]["providerSpec"]["value"]))
    }

    /// The boot image a MachineSet on `release` for `arch` has.
    pub fn expected_image(&self, release: &'static str, arch: &'static str) -> Value {
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

    pub async fn resource_versions(&self) -> Result<BTreeMap<String, String>> {
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
    pub async fn conditions(&self) -> Result<BTreeMap<String, Value>> {
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
    pub async fn wait_conditions(
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

    pub async fn wait_image(&self, name: &str, want: &Value) -> Result<Duration> {
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
    pub async fn events(&self, name: &str) -> Result<Vec<String>> {
        self.events_in(MAPI, name).await
    }

    /// `reason: note` of every Event in `namespace` about the object `name`.
    pub async fn events_in(&self, namespace: &str, name: &str) -> Result<Vec<String>> {
        let api: Api<k8s_openapi::api::events::v1::Event> =
            Api::namespaced(self.admin(), namespace);
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

    pub async fn state(&self) -> Result<BTreeMap<String, String>> {
        let api: Api<ConfigMap> = Api::namespaced(self.admin(), NAMESPACE);
        Ok(api
            .get_opt(STATE)
            .await?
            .and_then(|cm| cm.data)
            .unwrap_or_default())
    }

    pub async fn metrics(&self, controller: usize) -> Result<super::controller::Metrics> {
        self.fx.controllers[controller].metrics().await
    }
}
