//! The boot image job's section of `mco-host status`: the controller's
//! conditions, and per MachineSet its image, the stream's, whether it is
//! enrolled and the last thing the controller did with it. This file reads
//! what the section shows, decoded into the typed partial objects the
//! controller reads (`objects`, `mco_bootimage::MachineSetView`,
//! k8s-openapi's Events); `summary` computes the section (pure, so the
//! golden tests need no cluster), and `render` draws it.

mod render;
pub mod summary;

use clap::Args;
use futures::FutureExt;
use k8s_openapi::api::core::v1::{ConfigMap, Node};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DynamicObject, ListParams};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use mco_bootimage::MachineSetView;

use super::objects::{
    ConfigMapData, Input as _, MACHINE_API_NAMESPACE, MachineConfiguration, STREAM_CONFIGMAP,
    STREAM_NAMESPACE,
};
use mco_cluster::resources::{MACHINE_CONFIGURATION, MACHINE_SET};
use mco_job::status_section::{
    self, Changes, Head, ReadError, SectionInputs, SectionSummary, StatusSection, Style, dynamic,
    typed,
};

/// The section, for [`Contract::status`](mco_job::jobs::Contract::status).
pub struct Section;

/// The job's flag of `status`: where its record is.
#[derive(Args, Debug)]
pub struct RecordFlag {
    /// The boot image controller's record ConfigMap.
    #[arg(long, default_value = "mco-host-boot-images", value_name = "NAME")]
    boot_image_state: String,
}

/// What the section is computed from.
#[derive(Debug, Clone, Default)]
pub struct Objects {
    pub machinesets: Vec<MachineSetView>,
    /// MachineConfiguration `cluster`.
    pub machine_configuration: Option<MachineConfiguration>,
    /// ConfigMap `coreos-bootimages`.
    pub stream: Option<ConfigMapData>,
    /// The boot image controller's record ConfigMap (`mco-host-boot-images`).
    pub record: Option<ConfigMapData>,
    /// Events (events.k8s.io/v1) about MachineSets.
    pub events: Vec<Event>,
    /// The stream architecture of a control-plane node, for MachineSets
    /// without an architecture annotation (as the controller does).
    pub control_plane_arch: Option<String>,
}

impl StatusSection for Section {
    type Flags = RecordFlag;

    fn read<'a>(
        &'a self,
        client: &'a Client,
        namespace: &'a str,
        flags: RecordFlag,
    ) -> futures::future::BoxFuture<'a, Result<Box<dyn SectionInputs>, ReadError>> {
        async move { Ok(Box::new(read(client, namespace, flags).await?) as Box<dyn SectionInputs>) }
            .boxed()
    }

    /// Takes any ConfigMap but the stream's as the record: a list of
    /// plain objects holds one (`--boot-image-state` names it in a
    /// cluster).
    fn decode(
        &self,
        objects: &[serde_json::Value],
        _: RecordFlag,
    ) -> Result<Box<dyn SectionInputs>, ReadError> {
        let mut found = Objects::default();
        for object in objects {
            let head = Head::of(object);
            match (head.kind.as_str(), head.metadata.name.as_str()) {
                ("MachineSet", _) => found
                    .machinesets
                    .extend(MachineSetView::from_object(object).ok()),
                ("MachineConfiguration", "cluster") => {
                    found.machine_configuration = MachineConfiguration::decode(object).ok();
                }
                ("ConfigMap", STREAM_CONFIGMAP) => {
                    found.stream = ConfigMapData::decode(object).ok();
                }
                ("ConfigMap", _) => found.record = ConfigMapData::decode(object).ok(),
                ("Event", _) => found.events.extend(typed(object)),
                ("Node", _) if found.control_plane_arch.is_none() => {
                    found.control_plane_arch =
                        typed::<Node>(object).and_then(|node| control_plane_arch(&node.metadata));
                }
                _ => {}
            }
        }
        Ok(Box::new(found))
    }

    fn changes(&self, client: &Client) -> Vec<Changes> {
        let config = watcher::Config::default;
        vec![
            status_section::watch(
                dynamic(client, Some(MACHINE_API_NAMESPACE), MACHINE_SET),
                config(),
            ),
            status_section::watch(
                dynamic(client, None, MACHINE_CONFIGURATION),
                config().fields("metadata.name=cluster"),
            ),
            status_section::watch(
                Api::<Event>::namespaced(client.clone(), MACHINE_API_NAMESPACE),
                config(),
            ),
        ]
    }
}

impl SectionInputs for Objects {
    fn summarize(&self, _: Timestamp) -> Box<dyn SectionSummary> {
        Box::new(summary::summarize(self))
    }
}

/// The section: one key of the JSON document, `bootImages`.
impl SectionSummary for summary::BootImages {
    fn entries(&self) -> Vec<(&'static str, &dyn erased_serde::Serialize)> {
        vec![("bootImages", self)]
    }

    fn render(&self, style: Style, out: &mut String) {
        render::render(self, style, out);
    }

    /// Nothing in it changes with the clock.
    fn without_clock(&self) -> Box<dyn SectionSummary> {
        Box::new(self.clone())
    }
}

async fn read(
    client: &Client,
    namespace: &str,
    RecordFlag { boot_image_state }: RecordFlag,
) -> Result<Objects, ReadError> {
    let machinesets = status_section::list(
        dynamic(client, Some(MACHINE_API_NAMESPACE), MACHINE_SET),
        "MachineSets",
    )
    .await?;
    let machine_configuration = status_section::get(
        dynamic(client, None, MACHINE_CONFIGURATION),
        "cluster",
        "MachineConfiguration cluster",
    )
    .await?;
    let config_map = |ns: &str| Api::<ConfigMap>::namespaced(client.clone(), ns);
    let stream = status_section::get(
        config_map(STREAM_NAMESPACE),
        STREAM_CONFIGMAP,
        "the CoreOS stream ConfigMap",
    )
    .await?;
    let record = status_section::get(
        config_map(namespace),
        &boot_image_state,
        "the boot image record",
    )
    .await?;
    let events = status_section::list(
        Api::<Event>::namespaced(client.clone(), MACHINE_API_NAMESPACE),
        "Events",
    )
    .await?;
    Ok(Objects {
        machinesets: machinesets.iter().filter_map(machineset).collect(),
        machine_configuration: machine_configuration
            .as_ref()
            .and_then(machine_configuration_of),
        stream: stream.map(config_map_data),
        record: record.map(config_map_data),
        events,
        control_plane_arch: read_control_plane_arch(client).await?,
    })
}

/// A control-plane node's architecture, in stream terms.
async fn read_control_plane_arch(client: &Client) -> Result<Option<String>, ReadError> {
    let nodes = Api::<Node>::all(client.clone());
    for role in [
        "node-role.kubernetes.io/master",
        "node-role.kubernetes.io/control-plane",
    ] {
        let found = nodes
            .list_metadata(&ListParams::default().labels(role).limit(1))
            .await
            .map_err(|source| ReadError::Cluster {
                what: "Nodes",
                source,
            })?;
        if let Some(node) = found.items.first()
            && let Some(arch) = node.labels().get("kubernetes.io/arch")
        {
            return Ok(mco_bootimage::arch::stream_arch_from_kube(arch).map(str::to_owned));
        }
    }
    Ok(None)
}

/// The stream architecture of a control-plane node, from its labels;
/// `None` for another node.
fn control_plane_arch(node: &ObjectMeta) -> Option<String> {
    let labels = node.labels.as_ref()?;
    let control_plane = labels.contains_key("node-role.kubernetes.io/master")
        || labels.contains_key("node-role.kubernetes.io/control-plane");
    let arch = labels.get("kubernetes.io/arch").filter(|_| control_plane)?;
    mco_bootimage::arch::stream_arch_from_kube(arch).map(str::to_owned)
}

/// A MachineSet read as the boot image controller reads it (its
/// providerSpec stays the JSON its guest owns); `None` when it does not
/// decode.
fn machineset(object: &DynamicObject) -> Option<MachineSetView> {
    MachineSetView::from_object(&serde_json::to_value(object).ok()?).ok()
}

/// MachineConfiguration `cluster`, decoded as the boot image controller
/// decodes it; `None` when it does not decode.
fn machine_configuration_of(object: &DynamicObject) -> Option<MachineConfiguration> {
    MachineConfiguration::decode(&serde_json::to_value(object).ok()?).ok()
}

fn config_map_data(cm: ConfigMap) -> ConfigMapData {
    ConfigMapData {
        data: cm.data.unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use mco_test_support::large::{BootImageBulk, OBJECT_BYTES, grown_aws_bootimage_case};
    use serde_json::{Value, json};

    use super::*;
    use mco_cluster::mock::{self, Call};

    /// A YAML (or JSON) file's one document.
    fn read_doc(path: &Path) -> Value {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
    }

    fn list(items: Vec<Value>) -> Value {
        json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items})
    }

    /// A MachineSet as large as the apiserver stores (its providerSpec
    /// grown with tags, as `host/tests/cli.rs` grows it for `eval`) goes
    /// through the section's live read, typed, and its summary.
    #[tokio::test]
    async fn a_machineset_at_the_apiservers_size_reads_and_summarizes() {
        let case = mco_job::crate_dir(env!("CARGO_MANIFEST_DIR"))
            .join("../../../tests/golden/bootimage/aws-patch-known-ami");
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        grown_aws_bootimage_case(&case, dir.path(), BootImageBulk::MachineSet)
            .unwrap_or_else(|e| panic!("{e:#}"));
        let path = dir.path().join("machineset.yaml");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let machineset: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        let size = machineset.to_string().len();
        assert!(size > OBJECT_BYTES - 1024, "{size} bytes");
        let stream = read_doc(&case.join("configmap.yaml"));
        let nodes = json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList",
                           "metadata": {}, "items": []});
        let (client, scenario) = mock::serve(vec![
            Call::get(
                "/apis/machine.openshift.io/v1beta1/namespaces/openshift-machine-api/machinesets",
            )
            .answer(list(vec![machineset])),
            Call::get("/apis/operator.openshift.io/v1/machineconfigurations/cluster")
                .refuse(404, "NotFound"),
            Call::get(
                "/api/v1/namespaces/openshift-machine-config-operator/configmaps/coreos-bootimages",
            )
            .answer(stream),
            Call::get("/api/v1/namespaces/mco-system/configmaps/mco-host-boot-images")
                .refuse(404, "NotFound"),
            Call::get("/apis/events.k8s.io/v1/namespaces/openshift-machine-api/events")
                .answer(list(Vec::new())),
            Call::get("/api/v1/nodes").answer(nodes.clone()),
            Call::get("/api/v1/nodes").answer(nodes),
        ]);
        let flags = RecordFlag {
            boot_image_state: "mco-host-boot-images".into(),
        };
        let objects = read(&client, "mco-system", flags)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        scenario.done().await;
        let summary = summary::summarize(&objects);
        let [row] = &summary.machinesets[..] else {
            panic!("one row per MachineSet: {:?}", summary.machinesets);
        };
        assert_eq!(
            (
                row.name.as_str(),
                row.arch.as_deref(),
                row.current_image.as_deref(),
                row.stream_image.as_deref()
            ),
            (
                "c1-x7k2p-worker-us-east-1a",
                Some("amd64"),
                Some("ami-0c5a8e7f3b2d1e4f6"),
                Some("ami-0fbc8be8796dc1df5")
            )
        );
    }
}
