//! `mco-host status` (also `kubectl mco status`): the update, the boot
//! images and the guests at a glance. This file reads the objects and runs
//! the command; `model` computes the summary from plain objects (pure, so
//! golden tests need no cluster), `boot_images` its boot images section,
//! and `render` draws it.
//!
//! `--watch` keeps kube watches open on everything the view reads and
//! redraws when one of them reports a change (never by polling the API);
//! a frame is printed only when its content differs from the last one.

pub mod boot_images;
mod inputs;
pub mod model;
pub mod render;

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Node};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DynamicObject, ListParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, ResourceExt};
use mco_bootimage::MachineSetView;

use crate::bootimage::objects::{
    ConfigMapData, Input as _, MACHINE_API_NAMESPACE, MachineConfiguration, STREAM_CONFIGMAP,
    STREAM_NAMESPACE,
};
use crate::cluster::decode::Isolated;
use crate::cluster::resources::{MACHINE_CONFIG_POOL, MACHINE_CONFIGURATION, MACHINE_SET};
use crate::mcn::crd::MachineConfigNode;
use inputs::Pool;
use model::{GuestSource, Inputs, Summary, Thresholds};
use render::Style;

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Kubeconfig to use (default: in-cluster config, or $KUBECONFIG).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Output format.
    #[arg(short, long, value_enum, default_value = "text")]
    output: Format,
    /// Keep watching and redraw on every change (JSON: one document a line).
    #[arg(long)]
    watch: bool,
    /// A drain lasting longer than this is marked stuck.
    #[arg(long, default_value = "30m", value_parser = humantime::parse_duration)]
    stuck_after_drain: Duration,
    /// Any other phase lasting longer than this is marked stuck.
    #[arg(long, default_value = "15m", value_parser = humantime::parse_duration)]
    stuck_after: Duration,
    /// The host's admin address (`http://HOST:PORT`), to show which guest
    /// serves each job (`/guests`) and shadow agreement (`/metrics`).
    /// The host guards both with the cluster's authentication: the bearer
    /// token in $MCO_ADMIN_TOKEN (e.g. `oc whoami -t`; an environment
    /// variable, to stay out of process listings) is sent, and its user
    /// must be allowed to `get` `/guests`, `/ownership` and `/metrics`.
    #[arg(long, value_name = "URL")]
    admin_url: Option<String>,
    /// Namespace of mco-host (where its boot image record lives).
    #[arg(long, default_value = "mco-system")]
    namespace: String,
    /// The boot image controller's record ConfigMap.
    #[arg(long, default_value = "mco-host-boot-images", value_name = "NAME")]
    boot_image_state: String,
    /// The time to compute durations against (RFC 3339; for tests).
    #[arg(long, value_name = "TIME")]
    now: Option<Timestamp>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error("connecting to the cluster: {0:#}")]
    Connect(anyhow::Error),
    #[error("reading {what}: {source}")]
    Read {
        what: &'static str,
        #[source]
        source: kube::Error,
    },
    #[error("watching the cluster: {0}")]
    Watch(#[from] watcher::Error),
    #[error("writing to stdout: {0}")]
    Output(#[from] std::io::Error),
    #[error("encoding JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("starting the async runtime: {0}")]
    Runtime(std::io::Error),
}

/// Runs the command to completion (for `--watch`, until interrupted).
pub fn run(args: StatusArgs) -> Result<(), StatusError> {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(StatusError::Runtime)?;
    tokio.block_on(run_async(args))
}

async fn run_async(args: StatusArgs) -> Result<(), StatusError> {
    let client = crate::cluster::client::connect(args.kubeconfig.as_deref())
        .await
        .map_err(StatusError::Connect)?;
    let reader = Reader::new(client, &args);
    let mut printer = Printer::new(&args);
    printer.frame(&reader.summary(&args).await?)?;
    if !args.watch {
        return Ok(());
    }
    let mut changes = reader.changes();
    while let Some(change) = changes.next().await {
        if let Err(err) = change {
            // The watch backs off and resumes by itself; the view stays up.
            tracing::warn!(error = %err, "watch");
            continue;
        }
        // Let a burst of events (one write touches several kinds) settle.
        tokio::time::sleep(Duration::from_millis(50)).await;
        while let Some(Some(_)) = futures::FutureExt::now_or_never(changes.next()) {}
        printer.frame(&reader.summary(&args).await?)?;
    }
    Ok(())
}

/// Prints frames, skipping ones whose content did not change.
struct Printer {
    format: Format,
    style: Style,
    tty: bool,
    watch: bool,
    last: Option<Summary>,
}

impl Printer {
    fn new(args: &StatusArgs) -> Printer {
        let tty = std::io::stdout().is_terminal();
        // `COLUMNS` first (scripts and `watch` set it), then the terminal's
        // own size: shells do not export COLUMNS to the commands they run.
        let width = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.parse().ok())
            .or_else(|| terminal_size::terminal_size().map(|(width, _)| usize::from(width.0)))
            .unwrap_or(Style::default().width);
        // https://no-color.org: a set, non-empty NO_COLOR turns colour off.
        let colour = tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        Printer {
            format: args.output,
            style: Style { width, colour },
            tty,
            watch: args.watch,
            last: None,
        }
    }

    fn frame(&mut self, summary: &Summary) -> Result<(), StatusError> {
        let key = change_key(summary);
        if self.last.as_ref() == Some(&key) {
            return Ok(());
        }
        let text = match self.format {
            Format::Json if self.last.is_some() || !self.tty => {
                format!("{}\n", serde_json::to_string(summary)?)
            }
            Format::Json => format!("{}\n", serde_json::to_string_pretty(summary)?),
            Format::Text => {
                let body = render::render(summary, self.style);
                // Only a watch on a terminal redraws in place; a one-shot
                // never clears the user's screen.
                match (self.last.is_some(), self.tty && self.watch) {
                    (_, true) => format!("\x1b[H\x1b[2J{body}"),
                    (true, false) => format!("\n{body}"),
                    (false, false) => body,
                }
            }
        };
        self.last = Some(key);
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
        Ok(())
    }
}

/// The summary without what only the clock changes, so a redraw happens
/// for a change in the cluster, not for every tick of the durations.
fn change_key(summary: &Summary) -> Summary {
    let mut key = summary.clone();
    key.now = String::new();
    for pool in &mut key.pools {
        pool.eta_seconds = None;
    }
    for node in &mut key.nodes_in_flight {
        node.seconds_in_phase = 0;
    }
    key
}

/// Reads what the view needs. Kinds whose CRD is absent (a cluster without
/// the Machine API, say) read as empty.
struct Reader {
    client: Client,
    namespace: String,
    record: String,
    http: reqwest::Client,
    /// Never printed: no Debug here.
    admin_token: Option<String>,
}

/// The environment variable holding the token sent to `--admin-url`.
const ADMIN_TOKEN_ENV: &str = "MCO_ADMIN_TOKEN";

fn absent(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.code == 404)
}

impl Reader {
    fn new(client: Client, args: &StatusArgs) -> Reader {
        Reader {
            client,
            namespace: args.namespace.clone(),
            record: args.boot_image_state.clone(),
            http: reqwest::Client::new(),
            admin_token: std::env::var(ADMIN_TOKEN_ENV).ok(),
        }
    }

    /// `GET url`, with the admin token when there is one.
    fn admin_get(&self, url: String) -> reqwest::RequestBuilder {
        let request = self.http.get(url).timeout(Duration::from_secs(5));
        match &self.admin_token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    fn dynamic(
        &self,
        ns: Option<&str>,
        rt: crate::cluster::resources::ResourceType,
    ) -> Api<DynamicObject> {
        let ar = rt.api_resource();
        match ns {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        }
    }

    async fn list<K>(&self, api: Api<K>, what: &'static str) -> Result<Vec<K>, StatusError>
    where
        K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        match api.list(&ListParams::default()).await {
            Ok(list) => Ok(list.items),
            Err(err) if absent(&err) => Ok(Vec::new()),
            Err(source) => Err(StatusError::Read { what, source }),
        }
    }

    async fn get<K>(
        &self,
        api: Api<K>,
        name: &str,
        what: &'static str,
    ) -> Result<Option<K>, StatusError>
    where
        K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        match api.get_opt(name).await {
            Ok(o) => Ok(o),
            Err(err) if absent(&err) => Ok(None),
            Err(source) => Err(StatusError::Read { what, source }),
        }
    }

    async fn inputs(&self) -> Result<Inputs, StatusError> {
        let mcns = self
            .list(
                Api::<MachineConfigNode>::all(self.client.clone()),
                "MachineConfigNodes",
            )
            .await?;
        let pools = self
            .list(
                Api::<Isolated<Pool>>::all(self.client.clone()),
                "MachineConfigPools",
            )
            .await?;
        let machinesets = self
            .list(
                self.dynamic(Some(MACHINE_API_NAMESPACE), MACHINE_SET),
                "MachineSets",
            )
            .await?;
        let machine_configuration = self
            .get(
                self.dynamic(None, MACHINE_CONFIGURATION),
                "cluster",
                "MachineConfiguration cluster",
            )
            .await?;
        let config_map = |ns: &str| Api::<ConfigMap>::namespaced(self.client.clone(), ns);
        let stream = self
            .get(
                config_map(STREAM_NAMESPACE),
                STREAM_CONFIGMAP,
                "the CoreOS stream ConfigMap",
            )
            .await?;
        let record = self
            .get(
                config_map(&self.namespace),
                &self.record,
                "the boot image record",
            )
            .await?;
        let events = self
            .list(
                Api::<Event>::namespaced(self.client.clone(), MACHINE_API_NAMESPACE),
                "Events",
            )
            .await?;
        Ok(Inputs {
            mcns,
            pools: pools.into_iter().filter_map(|pool| pool.0.ok()).collect(),
            machinesets: machinesets.iter().filter_map(machineset).collect(),
            machine_configuration: machine_configuration
                .as_ref()
                .and_then(machine_configuration_of),
            stream: stream.map(config_map_data),
            record: record.map(config_map_data),
            events,
            control_plane_arch: self.control_plane_arch().await?,
            guests: GuestSource::NotAsked,
            ownership: Vec::new(),
        })
    }

    /// A control-plane node's architecture, in stream terms.
    async fn control_plane_arch(&self) -> Result<Option<String>, StatusError> {
        let nodes = Api::<Node>::all(self.client.clone());
        for role in [
            "node-role.kubernetes.io/master",
            "node-role.kubernetes.io/control-plane",
        ] {
            let found = nodes
                .list_metadata(&ListParams::default().labels(role).limit(1))
                .await
                .map_err(|source| StatusError::Read {
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

    /// `/guests` and the shadow counts of `/metrics` from the admin URL.
    async fn guests(&self, url: &str) -> GuestSource {
        let base = url.trim_end_matches('/');
        let fetch = |path: &str| {
            let request = self.admin_get(format!("{base}{path}"));
            async move {
                let response = request.send().await?.error_for_status()?;
                response.text().await
            }
        };
        let guests = match fetch("/guests").await {
            Ok(text) => match serde_json::from_str(&text) {
                Ok(v) => v,
                Err(e) => return GuestSource::Unreachable(format!("{base}/guests: {e}")),
            },
            Err(e) => return GuestSource::Unreachable(format!("{base}/guests: {e}")),
        };
        let shadow = fetch("/metrics")
            .await
            .map(|text| shadow_counts(&text))
            .unwrap_or_default();
        GuestSource::Read {
            url: base.to_owned(),
            guests,
            shadow,
        }
    }

    /// `/ownership` from the admin URL; nothing when it does not answer
    /// (an older host), which the view then leaves out.
    async fn ownership(&self, url: &str) -> Vec<crate::ownership::JobReport> {
        let url = format!("{}/ownership", url.trim_end_matches('/'));
        let request = self.admin_get(url.clone());
        let text = async move {
            let response = request.send().await?.error_for_status()?;
            response.text().await
        };
        match text.await {
            Ok(text) => serde_json::from_str(&text).unwrap_or_else(|err| {
                tracing::warn!(%url, error = %err, "ignoring an unreadable /ownership");
                Vec::new()
            }),
            Err(err) => {
                tracing::debug!(%url, error = %err, "no /ownership");
                Vec::new()
            }
        }
    }

    async fn summary(&self, args: &StatusArgs) -> Result<Summary, StatusError> {
        let mut inputs = self.inputs().await?;
        if let Some(url) = &args.admin_url {
            inputs.guests = self.guests(url).await;
            inputs.ownership = self.ownership(url).await;
        }
        let thresholds = Thresholds {
            drain: args.stuck_after_drain,
            other: args.stuck_after,
        };
        Ok(model::summarize(
            &inputs,
            args.now.unwrap_or_else(Timestamp::now),
            thresholds,
        ))
    }

    /// One item per change reported by any of the watches.
    fn changes(&self) -> futures::stream::BoxStream<'static, Result<(), watcher::Error>> {
        let config = watcher::Config::default;
        let c = &self.client;
        let streams = vec![
            watcher(Api::<MachineConfigNode>::all(c.clone()), config())
                .default_backoff()
                .map_ok(|_| ())
                .boxed(),
            watcher(self.dynamic(None, MACHINE_CONFIG_POOL), config())
                .default_backoff()
                .map_ok(|_| ())
                .boxed(),
            watcher(
                self.dynamic(Some(MACHINE_API_NAMESPACE), MACHINE_SET),
                config(),
            )
            .default_backoff()
            .map_ok(|_| ())
            .boxed(),
            watcher(
                self.dynamic(None, MACHINE_CONFIGURATION),
                config().fields("metadata.name=cluster"),
            )
            .default_backoff()
            .map_ok(|_| ())
            .boxed(),
            watcher(
                Api::<Event>::namespaced(c.clone(), MACHINE_API_NAMESPACE),
                config(),
            )
            .default_backoff()
            .map_ok(|_| ())
            .boxed(),
        ];
        // A kind whose CRD is missing makes its watch fail on every retry:
        // such errors are dropped, so the others keep the view live.
        futures::stream::select_all(streams)
            .filter(|r| {
                std::future::ready(
                    !matches!(r, Err(watcher::Error::InitialListFailed(e)) if absent(e)),
                )
            })
            .boxed()
    }
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

/// `mco_shadow_evaluations_total{job="…",result="…"} N` lines of the
/// metrics text, summed by (job, result).
pub fn shadow_counts(text: &str) -> BTreeMap<(String, String), f64> {
    let mut counts = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("mco_shadow_evaluations_total{") else {
            continue;
        };
        let Some((labels, value)) = rest.split_once('}') else {
            continue;
        };
        let label = |name: &str| {
            labels.split(',').find_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                (k.trim() == name).then(|| v.trim().trim_matches('"').to_owned())
            })
        };
        if let (Some(job), Some(result), Ok(n)) =
            (label("job"), label("result"), value.trim().parse::<f64>())
        {
            *counts.entry((job, result)).or_insert(0.0) += n;
        }
    }
    counts
}
