//! Reading the cluster's current objects for an audit, read-only (lists
//! and gets, the reads the controllers' watches make), for `guests audit
//! --kubeconfig` and for the lease holder answering a MachineConfigGuest's
//! `spec.audit`. A job's audit (its `audit.rs`) names what it reads; this
//! file reads it. Lists come a page at a time and each page is handed on
//! before the next is asked for, so a job can audit a page and drop it. A
//! kind whose CRD is not served reads as none.

use std::fmt::Debug;

use kube::api::{Api, DynamicObject, ListParams};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;

use mco_cluster::decode::Isolated;
use mco_cluster::is_status;
use mco_cluster::resources::ResourceType;

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

/// The objects of `resource` (in `namespace`, if it is namespaced), of a
/// type known at run time.
pub fn dynamic(
    client: &Client,
    namespace: Option<&str>,
    resource: ResourceType,
) -> Api<DynamicObject> {
    let resource = resource.api_resource();
    match namespace {
        Some(namespace) => Api::namespaced_with(client.clone(), namespace, &resource),
        None => Api::all_with(client.clone(), &resource),
    }
}

/// One object; `None` when it or its kind is not there.
pub async fn get<K>(api: Api<K>, name: &str, what: &'static str) -> Result<Option<K>, ReadError>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    match api.get_opt(name).await {
        Ok(object) => Ok(object),
        Err(err) if is_status(&err, 404) => Ok(None),
        Err(source) => Err(ReadError::Read { what, source }),
    }
}

/// Every object of a kind read typed; one that does not decode is left
/// out with a warning, as the controller's watch leaves it.
pub async fn list<K>(client: &Client, what: &'static str) -> Result<Vec<K>, ReadError>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    let mut objects = Vec::new();
    pages(&Api::<Isolated<K>>::all(client.clone()), what, |page| {
        objects.extend(readable(page))
    })
    .await?;
    Ok(objects)
}

/// The objects of a page that decode; the others are logged and left out.
pub fn readable<K>(page: Vec<Isolated<K>>) -> impl Iterator<Item = K> {
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
pub async fn pages<K>(
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
