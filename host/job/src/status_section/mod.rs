//! One job's part of `mco-host status`, as the view knows it: what the
//! job reads, its part of the summary, its text and its keys of the JSON
//! document. The view (`cli/status`) reads guests, ownership and shadow
//! counts itself and asks each job of `mco_host::JOBS` for its
//! [`StatusSection`] ([`Contract::status`](crate::jobs::Contract::status)); the
//! sections come in `JOBS` order, in the text as in the JSON. A job's
//! flags of `status` are its section's own typed
//! [`StatusSection::Flags`], which the view adds and parses for it
//! ([`Status`](crate::jobs::Status)).

pub mod text;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DynamicObject, ListParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::fmt::Debug;

use mco_cluster::resources::ResourceType;
pub use text::Style;

/// A job's section of the status view.
pub trait StatusSection: Sync {
    /// The job's flags of `status`, added after the view's own.
    type Flags: clap::Args + Send;

    /// Reads the section's objects from the cluster, mco-host being in
    /// `namespace`. A kind whose CRD is absent (a cluster without the
    /// Machine API, say) reads as empty.
    fn read<'a>(
        &'a self,
        client: &'a Client,
        namespace: &'a str,
        flags: Self::Flags,
    ) -> BoxFuture<'a, Result<Box<dyn SectionInputs>, ReadError>>;

    /// The section's objects among plain ones (a `kubectl get -o json`
    /// list, the golden cases), each decoded as [`read`](Self::read)
    /// decodes it; other objects, and ones that do not decode, are left
    /// out.
    fn decode(
        &self,
        objects: &[serde_json::Value],
        flags: Self::Flags,
    ) -> Result<Box<dyn SectionInputs>, ReadError>;

    /// One watch per kind [`read`](Self::read) reads: `--watch` redraws
    /// when one of them reports a change.
    fn changes(&self, client: &Client) -> Vec<Changes>;
}

/// A watch's reports, reduced to "something changed".
pub type Changes = BoxStream<'static, Result<(), watcher::Error>>;

/// What a section read, at one time.
pub trait SectionInputs: Debug + Send + Sync {
    /// The section's part of the summary at `now`.
    fn summarize(&self, now: Timestamp) -> Box<dyn SectionSummary>;
}

/// A section's part of the summary.
pub trait SectionSummary: Debug + Send + Sync {
    /// Its keys of the JSON document, in order (the document holds them
    /// beside the view's own, not under a key of the section's).
    fn entries(&self) -> Vec<(&'static str, &dyn erased_serde::Serialize)>;

    /// Appends its text (headings included) to `out`.
    fn render(&self, style: Style, out: &mut String);

    /// The same without what only the clock changes (durations, ETAs), so
    /// that `--watch` redraws for a change in the cluster, not for every
    /// tick.
    fn without_clock(&self) -> Box<dyn SectionSummary>;
}

/// The flags of `status`, for the sections: the view's own they share,
/// and the command's matches, from which [`Status`](crate::jobs::Status)
/// parses each section's [`StatusSection::Flags`].
#[derive(Debug, Clone)]
pub struct Flags {
    /// `--namespace`: mco-host's namespace.
    pub namespace: String,
    /// The `status` subcommand's matches, with every job's flags.
    pub matches: clap::ArgMatches,
}

/// What a section could not read: an object or a list, or its flags.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("reading {what}: {source}")]
    Cluster {
        what: &'static str,
        #[source]
        source: kube::Error,
    },
    /// Its flags are not among the matches (the view did not add them).
    #[error("reading the flags of status: {0}")]
    Flags(#[from] clap::Error),
}

/// What says which object a plain one is, for
/// [`StatusSection::decode`].
#[derive(Deserialize, Debug, Default)]
#[serde(default)]
pub struct Head {
    pub kind: String,
    pub metadata: Named,
}

#[derive(Deserialize, Debug, Default)]
#[serde(default)]
pub struct Named {
    pub name: String,
}

impl Head {
    /// `object`'s kind and name; empty where it has none.
    pub fn of(object: &serde_json::Value) -> Head {
        Head::deserialize(object).unwrap_or_default()
    }
}

/// `object` decoded as a `T`; `None` when it does not decode.
pub fn typed<T: DeserializeOwned>(object: &serde_json::Value) -> Option<T> {
    T::deserialize(object).ok()
}

/// Whether `err` says the kind is not served (its CRD is absent).
pub fn absent(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.code == 404)
}

/// An `Api` of untyped objects of `rt`, in `ns` or cluster-wide.
pub fn dynamic(client: &Client, ns: Option<&str>, rt: ResourceType) -> Api<DynamicObject> {
    let ar = rt.api_resource();
    match ns {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    }
}

/// Every object of `api`; none when the kind is absent.
pub async fn list<K>(api: Api<K>, what: &'static str) -> Result<Vec<K>, ReadError>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    match api.list(&ListParams::default()).await {
        Ok(list) => Ok(list.items),
        Err(err) if absent(&err) => Ok(Vec::new()),
        Err(source) => Err(ReadError::Cluster { what, source }),
    }
}

/// The object `name` of `api`; none when it or its kind is absent.
pub async fn get<K>(api: Api<K>, name: &str, what: &'static str) -> Result<Option<K>, ReadError>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    match api.get_opt(name).await {
        Ok(o) => Ok(o),
        Err(err) if absent(&err) => Ok(None),
        Err(source) => Err(ReadError::Cluster { what, source }),
    }
}

/// A watch on `api`, backing off and resuming by itself.
pub fn watch<K>(api: Api<K>, config: watcher::Config) -> Changes
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    watcher(api, config)
        .default_backoff()
        .map_ok(|_| ())
        .boxed()
}
