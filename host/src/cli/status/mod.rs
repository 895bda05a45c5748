//! `mco-host status` (also `kubectl mco status`): every job's section
//! (each job's `status_section`, in `JOBS` order) and the guests at a
//! glance. This file holds the view's own flags (each job adds its own,
//! `StatusCommand::args`), reads what the view shows and runs the command;
//! `model` computes the summary from what was read (pure, so golden tests
//! need no cluster), and `render` draws it.
//!
//! `--watch` keeps kube watches open on everything the view reads and
//! redraws when one of them reports a change (never by polling the API);
//! a frame is printed only when its content differs from the last one.

mod inputs;
pub mod model;
pub mod render;

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgMatches, Args, FromArgMatches, ValueEnum};
use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::runtime::watcher;
use mco_http::{Body, Over};

use inputs::sections;
use mco_job::status_section::{Flags, ReadError, absent};
use model::{GuestSource, Inputs, Summary};
use render::Style;

/// `status`: the view's flags, and the matches each job's section reads
/// its own from ([`Flags`]).
#[derive(Debug)]
pub struct Status {
    args: StatusArgs,
    matches: ArgMatches,
}

impl FromArgMatches for Status {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Status, clap::Error> {
        Ok(Status {
            args: StatusArgs::from_arg_matches(matches)?,
            matches: matches.clone(),
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Status::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for Status {
    /// The view's flags, then each job's in [`JOBS`](crate::JOBS) order.
    fn augment_args(command: clap::Command) -> clap::Command {
        sections().fold(StatusArgs::augment_args(command), |command, section| {
            section.args(command)
        })
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Status::augment_args(command)
    }
}

impl Status {
    /// The sections' flags of `status` given none (their defaults), for a
    /// view computed from plain objects (the golden tests).
    pub fn default_flags() -> Result<Flags, clap::Error> {
        let matches =
            Status::augment_args(clap::Command::new("status")).try_get_matches_from(["status"])?;
        Ok(Status::from_arg_matches(&matches)?.flags())
    }

    /// What the sections read of the command line.
    fn flags(&self) -> Flags {
        Flags {
            namespace: self.args.namespace.clone(),
            matches: self.matches.clone(),
        }
    }
}

/// The view's own flags of `status`, the same whatever jobs it shows.
#[derive(Args, Debug)]
struct StatusArgs {
    /// Kubeconfig to use (default: in-cluster config, or $KUBECONFIG).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Output format.
    #[arg(short, long, value_enum, default_value = "text")]
    output: Format,
    /// Keep watching and redraw on every change (JSON: one document a line).
    #[arg(long)]
    watch: bool,
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
    #[error(transparent)]
    Connect(#[from] crate::cli::ConnectError),
    #[error(transparent)]
    Read(#[from] ReadError),
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
pub fn run(status: Status) -> Result<(), StatusError> {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(StatusError::Runtime)?;
    tokio.block_on(run_async(status))
}

async fn run_async(status: Status) -> Result<(), StatusError> {
    let args = &status.args;
    let client = crate::cli::connect(args.kubeconfig.as_deref()).await?;
    let reader = Reader::new(client, status.flags());
    let mut printer = Printer::new(args);
    printer.frame(&reader.summary(args).await?)?;
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
        printer.frame(&reader.summary(args).await?)?;
    }
    Ok(())
}

/// Prints frames, skipping ones whose content did not change.
struct Printer {
    format: Format,
    style: Style,
    tty: bool,
    watch: bool,
    /// The last frame's [`Summary::change_key`].
    last: Option<String>,
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
        let key = summary.change_key()?;
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

/// Reads what the view needs: each section its objects, the view the
/// admin address.
struct Reader {
    client: Client,
    flags: Flags,
    http: reqwest::Client,
    /// Never printed: no Debug here.
    admin_token: Option<String>,
}

/// How long one answer of `--admin-url` may take, its body included.
const ADMIN_DEADLINE: Duration = Duration::from_secs(5);

/// The largest answer of `--admin-url` read: a host's `/guests`,
/// `/ownership` and `/metrics` run to kilobytes.
const ADMIN_ANSWER_MAX: u64 = 8 << 20;

/// The environment variable holding the token sent to `--admin-url`.
const ADMIN_TOKEN_ENV: &str = "MCO_ADMIN_TOKEN";

impl Reader {
    fn new(client: Client, flags: Flags) -> Reader {
        Reader {
            client,
            flags,
            http: reqwest::Client::new(),
            admin_token: std::env::var(ADMIN_TOKEN_ENV).ok(),
        }
    }

    /// `GET url`'s body, with the admin token when there is one, within
    /// [`ADMIN_DEADLINE`] and [`ADMIN_ANSWER_MAX`] bytes, counted as they
    /// arrive (a URL that is not a host's may answer anything).
    async fn admin_text(&self, url: &str) -> Result<String, String> {
        let request = self.http.get(url).timeout(ADMIN_DEADLINE);
        let request = match &self.admin_token {
            Some(token) => request.bearer_auth(token),
            None => request,
        };
        let response = (request.send().await)
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| e.to_string())?;
        let body = Body::new(response, ADMIN_ANSWER_MAX)
            .read(Over::Refuse)
            .await
            .map_err(|e| match e {
                mco_http::ReadError::TooLarge { .. } => format!(
                    "the answer is over {} MiB, more than a host sends",
                    ADMIN_ANSWER_MAX >> 20
                ),
                e => e.to_string(),
            })?;
        String::from_utf8(body).map_err(|e| e.to_string())
    }

    async fn inputs(&self) -> Result<Inputs, StatusError> {
        let mut read = Vec::new();
        for section in sections() {
            read.push(section.read(&self.client, &self.flags).await?);
        }
        Ok(Inputs {
            sections: read,
            guests: GuestSource::NotAsked,
            ownership: Vec::new(),
        })
    }

    /// `/guests` and the shadow counts of `/metrics` from the admin URL.
    async fn guests(&self, url: &str) -> GuestSource {
        let base = url.trim_end_matches('/');
        let guests = match self.admin_text(&format!("{base}/guests")).await {
            Ok(text) => match serde_json::from_str(&text) {
                Ok(v) => v,
                Err(e) => return GuestSource::Unreachable(format!("{base}/guests: {e}")),
            },
            Err(e) => return GuestSource::Unreachable(format!("{base}/guests: {e}")),
        };
        let shadow = self
            .admin_text(&format!("{base}/metrics"))
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
    async fn ownership(&self, url: &str) -> Vec<mco_job::ownership::JobReport> {
        let url = format!("{}/ownership", url.trim_end_matches('/'));
        match self.admin_text(&url).await {
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
        Ok(model::summarize(
            &inputs,
            args.now.unwrap_or_else(Timestamp::now),
        ))
    }

    /// One item per change reported by any of the watches.
    fn changes(&self) -> futures::stream::BoxStream<'static, Result<(), watcher::Error>> {
        let streams = sections().flat_map(|section| section.changes(&self.client));
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

#[cfg(test)]
mod admin_tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// An admin URL that answers with a body larger than any host's,
    /// declared by no length (the connection's close ends it).
    async fn oversized_admin() -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let address = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        tokio::spawn(async move {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let mut request = [0u8; 4096];
            let _ = socket.read(&mut request).await;
            let _ = socket
                .write_all(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n")
                .await;
            let chunk = vec![b'x'; 1 << 20];
            for _ in 0..(ADMIN_ANSWER_MAX >> 20) + 4 {
                if socket.write_all(&chunk).await.is_err() {
                    return;
                }
            }
        });
        format!("http://{address}")
    }

    #[tokio::test]
    async fn an_admin_answer_over_the_bound_is_refused_as_it_arrives() {
        let url = oversized_admin().await;
        let client = kube::Client::try_from(kube::Config::new(
            "http://127.0.0.1:9"
                .parse()
                .unwrap_or_else(|e| panic!("{e}")),
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        let flags = Status::default_flags().unwrap_or_else(|e| panic!("{e}"));
        let reader = Reader::new(client, flags);
        let refused = reader.admin_text(&format!("{url}/guests")).await;
        assert_eq!(
            refused,
            Err("the answer is over 8 MiB, more than a host sends".to_owned())
        );
    }
}
