//! An audit on the cluster's current objects, read-only (lists and gets,
//! the reads the controllers' watches make), for `guests audit
//! --kubeconfig` and for the lease holder answering a MachineConfigGuest's
//! `spec.audit`. Nodes are listed a page at a time and each page is
//! audited before the next is asked for, so the nodes in memory are one
//! page's; every MCN is kept (a node's decision reads its MCN), and both
//! are trimmed as the controller's watches trim them (managed fields but
//! the operator's, a Node's status but its phase). A kind whose CRD is not
//! served reads as none.
//!
//! The modules run inside the futures here: a caller on the controller's
//! runtime drives them from a blocking thread (`Handle::block_on` in
//! `spawn_blocking`) so no async worker waits on a guest.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Debug;

use k8s_openapi::api::core::v1::{ConfigMap, Node, Secret};
use kube::api::{Api, DynamicObject, ListParams};
use kube::{Client, ResourceExt};
use mco_bootimage::MachineKind;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::bootimage::{BootImageAudit, user_data_secret};
use super::mcn::{Cluster, McnAudit};
use super::{Audit, Module, Report};
use crate::bootimage::BootImageGuest;
use crate::bootimage::eval::ClusterObjects;
use crate::bootimage::objects::{
    CONTROL_PLANE_MACHINE_SET_NAME, ConfigMapData, Decoded, Infrastructure, MACHINE_API_NAMESPACE,
    STREAM_CONFIGMAP, STREAM_NAMESPACE,
};
use crate::bootimage::rules;
use crate::cluster::decode::Isolated;
use crate::cluster::is_status;
use crate::cluster::managers::keep_operator_entries;
use crate::cluster::resources::{
    CLUSTER_VERSION, CONTROL_PLANE_MACHINE_SET, INFRASTRUCTURE, MACHINE_CONFIGURATION, MACHINE_SET,
    ResourceType,
};
use crate::feature_gates;
use crate::mcn::McnGuest;
use crate::mcn::crd::MachineConfigNode;
use crate::mcn::objects::trim_node;
use crate::mcn::policies;
use crate::registry::{GuestSet, Job};
use crate::runtime::{Guest, World};

/// Objects asked for per list call.
const PAGE: u32 = 500;

/// Why the cluster's objects could not be audited.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("reading {what} from the cluster: {source}")]
    Read {
        what: &'static str,
        #[source]
        source: kube::Error,
    },
    /// An object the job cannot go without is missing or unreadable, or
    /// the cluster is on another platform than the job's.
    #[error("{0}")]
    Cluster(String),
    #[error("job {0} has no candidate serving to audit")]
    NoCandidate(String),
}

/// The report of `audit` run on the module and the candidate serving
/// `job` in `set`.
pub async fn of_job<W: World + 'static>(
    set: &GuestSet,
    job: &Job,
    audit: impl AsyncFnOnce((&Guest<W>, &Guest<W>)) -> Result<Audit, ReadError>,
) -> Result<Report, ReadError> {
    let no_candidate = || ReadError::NoCandidate(job.to_string());
    let slot = set.slot::<Guest<W>>(job).ok_or_else(no_candidate)?;
    let (active, candidate) = super::pair(slot).ok_or_else(no_candidate)?;
    let audited = audit((active, candidate)).await?;
    Ok(audited.report(job.to_string(), Module::of(active), Module::of(candidate)))
}

/// The mcn job's audit on every Node of the cluster.
pub async fn mcn(
    client: &Client,
    (active, candidate): (&McnGuest, &McnGuest),
    limit: usize,
) -> Result<Audit, ReadError> {
    let machineconfiguration = get(
        dynamic(client, None, MACHINE_CONFIGURATION),
        "cluster",
        "MachineConfiguration cluster",
    )
    .await?;
    let mut previous = HashMap::new();
    pages(
        &Api::<Isolated<MachineConfigNode>>::all(client.clone()),
        "MachineConfigNodes",
        |page| {
            previous.extend(readable(page).map(|mut mcn| {
                keep_operator_entries(mcn.managed_fields_mut());
                (mcn.name_any(), mcn)
            }))
        },
    )
    .await?;
    let cluster = Cluster {
        pools: list(client, "MachineConfigPools").await?,
        configs: list(client, "MachineConfigs").await?,
        policies: policies::policies(machineconfiguration.as_ref()),
        previous,
        gates: feature_gates::read_cluster(client)
            .await
            .map_err(ReadError::Cluster)?,
    };
    let mut audit = McnAudit::new(active, candidate, &cluster, limit);
    pages(&Api::<Node>::all(client.clone()), "Nodes", |page| {
        for mut node in page {
            keep_operator_entries(node.managed_fields_mut());
            trim_node(&mut node);
            audit.add(node);
        }
    })
    .await?;
    Ok(audit.finish())
}

/// A bootImage job's audit on the cluster's MachineSets and its
/// ControlPlaneMachineSet, with the objects the controller watches.
pub async fn bootimage(
    client: &Client,
    platform: &str,
    guests: (&BootImageGuest, &BootImageGuest),
    control_plane_arch: &str,
    limit: usize,
) -> Result<Audit, ReadError> {
    let required = |object: Option<Value>, what: &str| {
        object.ok_or_else(|| ReadError::Cluster(format!("the cluster has no {what}")))
    };
    let stream = Api::<ConfigMap>::namespaced(client.clone(), STREAM_NAMESPACE);
    let configmap = get(stream, STREAM_CONFIGMAP, "the CoreOS stream ConfigMap").await?;
    let infrastructure = get(
        dynamic(client, None, INFRASTRUCTURE),
        "cluster",
        "Infrastructure cluster",
    )
    .await?;
    let cluster = ClusterObjects {
        configmap: required(configmap, "ConfigMap coreos-bootimages")?,
        infrastructure: required(infrastructure, "Infrastructure cluster")?,
        clusterversion: get(
            dynamic(client, None, CLUSTER_VERSION),
            "version",
            "ClusterVersion version",
        )
        .await?,
        machineconfiguration: get(
            dynamic(client, None, MACHINE_CONFIGURATION),
            "cluster",
            "MachineConfiguration cluster",
        )
        .await?,
        known_images: BTreeSet::new(),
        gates: feature_gates::read_cluster(client)
            .await
            .map_err(ReadError::Cluster)?,
        // The audit reads the cluster only: a vSphere MachineSet, whose
        // decision needs vCenter, is the same input error for both modules.
        vcenter: None,
        install_config: None,
        // Nor EC2: both modules decide AWS MachineSets from the static lists.
        ec2: None,
    };
    check_cluster(&cluster, platform)?;
    let mut machinesets = Vec::new();
    pages(
        &dynamic(client, Some(MACHINE_API_NAMESPACE), MACHINE_SET),
        "MachineSets",
        |page| machinesets.extend(page.into_iter().filter_map(value)),
    )
    .await?;
    let control_plane = get(
        dynamic(
            client,
            Some(MACHINE_API_NAMESPACE),
            CONTROL_PLANE_MACHINE_SET,
        ),
        CONTROL_PLANE_MACHINE_SET_NAME,
        "ControlPlaneMachineSet cluster",
    )
    .await?;
    let named: Vec<(MachineKind, &Value)> = machinesets
        .iter()
        .map(|object| (MachineKind::MachineSet, object))
        .chain(
            control_plane
                .iter()
                .map(|object| (MachineKind::ControlPlaneMachineSet, object)),
        )
        .collect();
    let secrets = user_data_secrets(client, &named).await?;
    let mut audit = BootImageAudit::new(guests, &cluster, &secrets, control_plane_arch, limit);
    for object in machinesets {
        audit.add(MachineKind::MachineSet, object);
    }
    if let Some(object) = control_plane {
        audit.add(MachineKind::ControlPlaneMachineSet, object);
    }
    Ok(audit.finish())
}

/// The objects a boot image audit shares are readable, and the cluster is
/// on the job's platform: another platform's MachineSets never reach this
/// job's modules.
pub fn check_cluster(cluster: &ClusterObjects, platform: &str) -> Result<(), ReadError> {
    let unreadable = |e: mco_bootimage::InputError| ReadError::Cluster(e.to_string());
    let infrastructure = Decoded::<Infrastructure>::of(&cluster.infrastructure);
    let found =
        rules::platform_type(infrastructure.typed().map_err(unreadable)?).map_err(unreadable)?;
    if found != platform {
        return Err(ReadError::Cluster(format!(
            "Infrastructure cluster is on platform {found}; job bootImage.{platform} audits \
             another platform's guests"
        )));
    }
    Decoded::<ConfigMapData>::of(&cluster.configmap)
        .typed()
        .map_err(unreadable)?;
    Ok(())
}

/// The user-data Secrets the objects name, each read once; one that is
/// missing is left out (the host rules then decide without it).
async fn user_data_secrets(
    client: &Client,
    objects: &[(MachineKind, &Value)],
) -> Result<Vec<Value>, ReadError> {
    let names: BTreeSet<String> = objects
        .iter()
        .filter_map(|(kind, object)| user_data_secret(*kind, object))
        .collect();
    let api = Api::<Secret>::namespaced(client.clone(), MACHINE_API_NAMESPACE);
    let mut secrets = Vec::new();
    for name in names {
        secrets.extend(get(api.clone(), &name, "a user-data Secret").await?);
    }
    Ok(secrets)
}

fn dynamic(client: &Client, namespace: Option<&str>, resource: ResourceType) -> Api<DynamicObject> {
    let resource = resource.api_resource();
    match namespace {
        Some(namespace) => Api::namespaced_with(client.clone(), namespace, &resource),
        None => Api::all_with(client.clone(), &resource),
    }
}

fn value<K: serde::Serialize>(object: K) -> Option<Value> {
    serde_json::to_value(object).ok()
}

/// One object, as JSON; `None` when it or its kind is not there.
async fn get<K>(api: Api<K>, name: &str, what: &'static str) -> Result<Option<Value>, ReadError>
where
    K: kube::Resource + Clone + DeserializeOwned + serde::Serialize + Debug,
{
    match api.get_opt(name).await {
        Ok(object) => Ok(object.and_then(value)),
        Err(err) if is_status(&err, 404) => Ok(None),
        Err(source) => Err(ReadError::Read { what, source }),
    }
}

/// Every object of a kind the MCN job reads typed; one that does not
/// decode is left out with a warning, as the controller's watch leaves it.
async fn list<K>(client: &Client, what: &'static str) -> Result<Vec<K>, ReadError>
where
    K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    let mut objects = Vec::new();
    pages(&Api::<Isolated<K>>::all(client.clone()), what, |page| {
        objects.extend(readable(page))
    })
    .await?;
    Ok(objects)
}

fn readable<K>(page: Vec<Isolated<K>>) -> impl Iterator<Item = K> {
    page.into_iter().filter_map(|object| match object.0 {
        Ok(object) => Some(object),
        Err(failure) => {
            tracing::warn!(object = %failure.name(), problem = %failure.problem, "left out an object that does not decode");
            None
        }
    })
}

/// Lists `api` a page at a time, handing each page to `each` before the
/// next is asked for. A kind that is not served has no pages.
async fn pages<K>(
    api: &Api<K>,
    what: &'static str,
    mut each: impl FnMut(Vec<K>),
) -> Result<(), ReadError>
where
    K: Clone + DeserializeOwned + Debug,
{
    let mut params = ListParams::default().limit(PAGE);
    loop {
        let list = match api.list(&params).await {
            Ok(list) => list,
            Err(err) if is_status(&err, 404) => return Ok(()),
            Err(source) => return Err(ReadError::Read { what, source }),
        };
        let next = list.metadata.continue_.clone().filter(|t| !t.is_empty());
        each(list.items);
        match next {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(()),
        }
    }
}
