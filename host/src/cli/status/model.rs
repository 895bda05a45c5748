//! The summary `mco-host status` shows, computed from plain objects (as
//! JSON values, the way `kubectl get -o json` prints them) and a clock, so
//! that the golden tests need no cluster and `-o json` is this struct. Over
//! 500 lines because pools, nodes, boot images and guests are summarized
//! here together, with their unit tests.
//!
//! **Pool counts.** Every MachineConfigNode of a pool is in exactly one
//! bucket: `degraded` (`NodeDegraded=True`), else `updating` (`Updated=False`:
//! its update cycle started), else `updated` (`Updated=True` on the pool's
//! target config), else `waiting` (not yet asked to move to the target).
//! So `updated + updating + waiting + degraded = total`.
//!
//! **ETA.** From the nodes that finished in this rollout: completion times
//! t₁ ≤ … ≤ tₖ (`Updated=True` `lastTransitionTime` of nodes on the target,
//! not before the rollout start s, which is the pool's `Updating=True`
//! `lastTransitionTime` when the pool status has it). Per-node durations are
//! the gaps between completions (t₁ − s, t₂ − t₁, …), so they already
//! include the pool's parallelism; their mean is d = (tₖ − s)/k, or
//! (tₖ − t₁)/(k − 1) without s. With r nodes left (updating + waiting +
//! degraded), ETA = max(0, r·d − (now − tₖ)): the time since the last
//! completion counts as progress on the next one. Unknown until d is.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;

use crate::bootimage::objects::{Input as _, MachineConfiguration};
use crate::bootimage::state::{ControllerState, HOT_LOOP_LIMIT};
use crate::mcn::crd::MachineConfigNode;
use crate::mcn::phase::{self, Phase};

/// When a phase counts as stuck.
#[derive(Debug, Clone, Copy)]
pub struct Thresholds {
    pub drain: Duration,
    pub other: Duration,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            drain: Duration::from_secs(30 * 60),
            other: Duration::from_secs(15 * 60),
        }
    }
}

impl Thresholds {
    pub fn for_phase(&self, phase: Phase) -> Duration {
        match phase {
            Phase::Draining => self.drain,
            _ => self.other,
        }
    }
}

/// What the guests section shows: the host's `/guests` (and shadow counts
/// from `/metrics`) when an admin URL was given and answered.
#[derive(Debug, Clone, Default)]
pub enum GuestSource {
    /// No `--admin-url`.
    #[default]
    NotAsked,
    /// The admin URL did not answer; the error.
    Unreachable(String),
    Read {
        url: String,
        /// The `/guests` document.
        guests: Value,
        /// `mco_shadow_evaluations_total` by (job, result), if `/metrics`
        /// answered.
        shadow: BTreeMap<(String, String), f64>,
    },
}

impl Inputs {
    /// Sorts objects by kind, as a `kubectl get -o json` list of
    /// everything would hold them (the golden cases are such lists).
    /// Unknown kinds and MCNs that do not parse are left out.
    pub fn from_objects(objects: impl IntoIterator<Item = Value>) -> Inputs {
        let mut inputs = Inputs::default();
        for object in objects {
            match object["kind"].as_str().unwrap_or_default() {
                "MachineConfigNode" => {
                    if let Ok(mcn) = serde_json::from_value(object) {
                        inputs.mcns.push(mcn);
                    }
                }
                "MachineConfigPool" => inputs.pools.push(object),
                "MachineSet" => inputs.machinesets.push(object),
                "MachineConfiguration" if name_of(&object) == "cluster" => {
                    inputs.machine_configuration = Some(object);
                }
                "ConfigMap" if name_of(&object) == crate::bootimage::objects::STREAM_CONFIGMAP => {
                    inputs.stream = Some(object);
                }
                "ConfigMap" => inputs.record = Some(object),
                "Event" => inputs.events.push(object),
                "Node" => {
                    let labels = &object["metadata"]["labels"];
                    let control_plane = labels.get("node-role.kubernetes.io/master").is_some()
                        || labels
                            .get("node-role.kubernetes.io/control-plane")
                            .is_some();
                    if control_plane && inputs.control_plane_arch.is_none() {
                        inputs.control_plane_arch = labels["kubernetes.io/arch"]
                            .as_str()
                            .and_then(mco_bootimage::arch::stream_arch_from_kube)
                            .map(str::to_owned);
                    }
                }
                _ => {}
            }
        }
        inputs
    }
}

/// Everything the summary is computed from.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub mcns: Vec<MachineConfigNode>,
    pub pools: Vec<Value>,
    pub machinesets: Vec<Value>,
    /// MachineConfiguration `cluster`.
    pub machine_configuration: Option<Value>,
    /// ConfigMap `coreos-bootimages`.
    pub stream: Option<Value>,
    /// The boot image controller's record ConfigMap (`mco-host-boot-images`).
    pub record: Option<Value>,
    /// Events (events.k8s.io/v1) about MachineSets.
    pub events: Vec<Value>,
    /// The stream architecture of a control-plane node, for MachineSets
    /// without an architecture annotation (as the controller does).
    pub control_plane_arch: Option<String>,
    pub guests: GuestSource,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub now: String,
    pub pools: Vec<PoolSummary>,
    pub nodes_in_flight: Vec<NodeInFlight>,
    pub degraded_nodes: Vec<DegradedNode>,
    pub boot_images: BootImages,
    pub guests: Guests,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PoolSummary {
    pub name: String,
    /// `spec.configuration.name` (the rendered config nodes move to).
    pub target: Option<String>,
    pub total: usize,
    pub updated: usize,
    pub updating: usize,
    pub waiting: usize,
    pub degraded: usize,
    /// See the module documentation; `None` while unknown.
    pub eta_seconds: Option<u64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NodeInFlight {
    pub name: String,
    pub pool: String,
    pub phase: Phase,
    /// RFC 3339: `lastTransitionTime` of the condition the phase comes from.
    pub since: String,
    pub seconds_in_phase: u64,
    pub stuck: bool,
    /// The condition that explains the phase.
    pub condition: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DegradedNode {
    pub name: String,
    pub pool: String,
    pub since: String,
    pub reason: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct BootImages {
    /// `BootImageUpdateProgressing` on MachineConfiguration `cluster`.
    pub progressing: Option<ConditionText>,
    /// `BootImageUpdateDegraded`.
    pub degraded: Option<ConditionText>,
    pub machinesets: Vec<MachineSetRow>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ConditionText {
    pub status: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetRow {
    pub name: String,
    pub arch: Option<String>,
    pub current_image: Option<String>,
    pub stream_image: Option<String>,
    pub enrolled: bool,
    pub outcome: Outcome,
    /// Why: the Event note, the hot-loop record, or the condition text.
    pub detail: Option<String>,
}

/// The last thing the boot image controller did with a MachineSet.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    Updated,
    /// On the stream's image, nothing recorded.
    Current,
    Skipped,
    Failed,
    HotLoop,
    /// Nothing known.
    None,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Updated => "updated",
            Outcome::Current => "current",
            Outcome::Skipped => "skipped",
            Outcome::Failed => "failed",
            Outcome::HotLoop => "hot loop",
            Outcome::None => "-",
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Guests {
    /// Where the answer came from, or why it is unknown.
    pub source: String,
    pub known: bool,
    pub jobs: Vec<GuestRow>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct GuestRow {
    pub job: String,
    pub module: String,
    pub sha256: String,
    pub candidate_sha256: Option<String>,
    /// agree / differ / failed counts of the candidate, when shadowing.
    pub shadow: Option<BTreeMap<String, u64>>,
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(v, |v, k| v.get(k))?.as_str()
}

fn name_of(v: &Value) -> String {
    str_at(v, &["metadata", "name"])
        .unwrap_or_default()
        .to_owned()
}

fn rfc3339(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn seconds_between(from: Timestamp, to: Timestamp) -> u64 {
    u64::try_from(to.as_second().saturating_sub(from.as_second())).unwrap_or(0)
}

fn condition<'a>(
    mcn: &'a MachineConfigNode,
    type_: &str,
) -> Option<&'a k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> {
    mcn.status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
}

/// The whole summary at `now`.
pub fn summarize(inputs: &Inputs, now: Timestamp, thresholds: Thresholds) -> Summary {
    let mut mcns: Vec<&MachineConfigNode> = inputs.mcns.iter().collect();
    mcns.sort_by_key(|m| m.metadata.name.clone());
    let mut nodes_in_flight = Vec::new();
    let mut degraded_nodes = Vec::new();
    for mcn in &mcns {
        let name = mcn.metadata.name.clone().unwrap_or_default();
        let pool = mcn.spec.pool.name.clone();
        if let Some(d) = phase::degraded(mcn) {
            degraded_nodes.push(DegradedNode {
                name: name.clone(),
                pool: pool.clone(),
                since: rfc3339(d.since),
                reason: d.reason,
                message: d.message,
            });
            continue;
        }
        if let Some(p) = phase::in_flight(mcn) {
            let seconds = seconds_between(p.since, now);
            nodes_in_flight.push(NodeInFlight {
                name,
                pool,
                phase: p.phase,
                since: rfc3339(p.since),
                seconds_in_phase: seconds,
                stuck: seconds > thresholds.for_phase(p.phase).as_secs(),
                condition: p.condition,
                message: p.message,
            });
        }
    }
    Summary {
        now: rfc3339(now),
        pools: pools(inputs, &mcns, now),
        nodes_in_flight,
        degraded_nodes,
        boot_images: boot_images(inputs),
        guests: guests(&inputs.guests),
    }
}

fn pools(inputs: &Inputs, mcns: &[&MachineConfigNode], now: Timestamp) -> Vec<PoolSummary> {
    let mut names: Vec<String> = inputs.pools.iter().map(name_of).collect();
    for mcn in mcns {
        if !names.contains(&mcn.spec.pool.name) {
            names.push(mcn.spec.pool.name.clone());
        }
    }
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let pool = inputs.pools.iter().find(|p| name_of(p) == name);
            let target = pool
                .and_then(|p| {
                    str_at(p, &["spec", "configuration", "name"])
                        .or_else(|| str_at(p, &["status", "configuration", "name"]))
                })
                .map(str::to_owned);
            let rollout_start = pool.and_then(updating_since);
            let members: Vec<&&MachineConfigNode> =
                mcns.iter().filter(|m| m.spec.pool.name == name).collect();
            let mut summary = PoolSummary {
                name,
                target: target.clone(),
                total: members.len(),
                updated: 0,
                updating: 0,
                waiting: 0,
                degraded: 0,
                eta_seconds: None,
            };
            let mut completions = Vec::new();
            for mcn in members {
                let current = mcn
                    .status
                    .as_ref()
                    .and_then(|s| s.config_version.as_ref())
                    .and_then(|v| v.current.clone());
                if phase::degraded(mcn).is_some() {
                    summary.degraded += 1;
                } else if phase::in_flight(mcn).is_some() {
                    summary.updating += 1;
                } else if phase::is_updated(mcn) && current.is_some() && current == target {
                    summary.updated += 1;
                    if let Some(c) = condition(mcn, "Updated") {
                        let t = c.last_transition_time.0;
                        if rollout_start.is_none_or(|s| t >= s) {
                            completions.push(t);
                        }
                    }
                } else {
                    summary.waiting += 1;
                }
            }
            let remaining = summary.updating + summary.waiting + summary.degraded;
            summary.eta_seconds = eta(&mut completions, rollout_start, remaining, now);
            summary
        })
        .collect()
}

/// The pool's `Updating=True` `lastTransitionTime`: when the rollout began.
fn updating_since(pool: &Value) -> Option<Timestamp> {
    pool.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Updating" && c["status"] == "True")
        .and_then(|c| c["lastTransitionTime"].as_str())
        .and_then(|t| t.parse().ok())
}

/// The module documentation's formula.
fn eta(
    completions: &mut [Timestamp],
    start: Option<Timestamp>,
    remaining: usize,
    now: Timestamp,
) -> Option<u64> {
    if remaining == 0 {
        return Some(0);
    }
    completions.sort();
    let (first, last) = (*completions.first()?, *completions.last()?);
    let mean = match start {
        Some(s) => seconds_between(s, last) as f64 / completions.len() as f64,
        None if completions.len() >= 2 => {
            seconds_between(first, last) as f64 / (completions.len() - 1) as f64
        }
        None => return None,
    };
    let left = mean * remaining as f64 - seconds_between(last, now) as f64;
    Some(left.max(0.0).round() as u64)
}

fn condition_text(mc: Option<&Value>, type_: &str) -> Option<ConditionText> {
    let c = mc?
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)?;
    Some(ConditionText {
        status: c["status"].as_str().unwrap_or_default().to_owned(),
        message: c["message"].as_str().unwrap_or_default().to_owned(),
    })
}

fn boot_images(inputs: &Inputs) -> BootImages {
    let stream = inputs
        .stream
        .as_ref()
        .and_then(|cm| str_at(cm, &["data", "stream"]))
        .and_then(|text| mco_bootimage::Stream::parse(text).ok());
    let record = inputs
        .record
        .as_ref()
        .and_then(|cm| cm.get("data"))
        .and_then(|d| serde_json::from_value::<BTreeMap<String, String>>(d.clone()).ok())
        .and_then(|d| ControllerState::from_data(&d).ok())
        .unwrap_or_default();
    let degraded = condition_text(
        inputs.machine_configuration.as_ref(),
        crate::bootimage::conditions::DEGRADED,
    );
    let mut machinesets: Vec<MachineSetRow> = inputs
        .machinesets
        .iter()
        .filter_map(|ms| {
            let view = mco_bootimage::MachineSetView::from_object(ms).ok()?;
            Some(machineset_row(
                inputs,
                &view,
                stream.as_ref(),
                &record,
                degraded.as_ref(),
            ))
        })
        .collect();
    machinesets.sort_by(|a, b| a.name.cmp(&b.name));
    BootImages {
        progressing: condition_text(
            inputs.machine_configuration.as_ref(),
            crate::bootimage::conditions::PROGRESSING,
        ),
        degraded,
        machinesets,
    }
}

fn machineset_row(
    inputs: &Inputs,
    view: &mco_bootimage::MachineSetView,
    stream: Option<&mco_bootimage::Stream>,
    record: &ControllerState,
    degraded: Option<&ConditionText>,
) -> MachineSetRow {
    let arch = mco_bootimage::arch::machineset_arch(
        view,
        inputs.control_plane_arch.as_deref().unwrap_or("x86_64"),
        false,
    )
    .ok();
    let spec = view.provider_spec.as_ref();
    let current_image = spec.and_then(current_image);
    let stream_image = match (stream, spec, &arch) {
        (Some(stream), Some(spec), Some(arch)) => stream_image(stream, spec, arch),
        _ => None,
    };
    let enrolled = inputs
        .machine_configuration
        .as_ref()
        .and_then(|mc| MachineConfiguration::decode(mc).ok())
        .is_some_and(|mc| {
            crate::bootimage::rules::enrollment_gate(&mc, view, platform_of(view)).is_none()
        });
    let (mut outcome, mut detail) = last_event(&inputs.events, &view.name);
    if let Some(h) = record.hot_loops.get(&view.name)
        && h.count >= HOT_LOOP_LIMIT
        && matches!(outcome, Outcome::HotLoop | Outcome::Updated | Outcome::None)
    {
        if outcome != Outcome::HotLoop {
            detail = Some(format!(
                "the same patch was applied {} times in a row (record {})",
                h.count, "mco-host-boot-images"
            ));
        }
        outcome = Outcome::HotLoop;
    }
    if outcome == Outcome::None {
        if let Some(d) = degraded.filter(|d| d.status == "True" && d.message.contains(&view.name)) {
            outcome = Outcome::Failed;
            detail = Some(d.message.clone());
        } else if current_image.is_some() && current_image == stream_image {
            outcome = Outcome::Current;
        }
    }
    MachineSetRow {
        name: view.name.clone(),
        arch,
        current_image,
        stream_image,
        enrolled,
        outcome,
        detail,
    }
}

/// The image a providerSpec boots from: AWS `ami.id`, GCP boot disk
/// `image`, Azure `image` (`resourceID`, or publisher:offer:sku:version).
fn current_image(spec: &Value) -> Option<String> {
    if let Some(ami) = str_at(spec, &["ami", "id"]) {
        return Some(ami.to_owned());
    }
    if let Some(disks) = spec.get("disks").and_then(Value::as_array) {
        let boot = disks
            .iter()
            .find(|d| d["boot"] == true)
            .or_else(|| disks.first())?;
        return boot["image"].as_str().map(str::to_owned);
    }
    let image = spec.get("image")?;
    if let Some(id) = image["resourceID"].as_str().filter(|s| !s.is_empty()) {
        return Some(id.to_owned());
    }
    let parts: Vec<&str> = ["publisher", "offer", "sku", "version"]
        .iter()
        .filter_map(|k| image[*k].as_str())
        .collect();
    (parts.len() == 4).then(|| parts.join(":"))
}

/// The platform a providerSpec kind belongs to (the status view reads no
/// Infrastructure), for the enrollment defaults.
fn platform_of(view: &mco_bootimage::MachineSetView) -> &'static str {
    match view
        .provider_spec
        .as_ref()
        .and_then(|spec| spec.get("kind"))
        .and_then(Value::as_str)
    {
        Some("AWSMachineProviderConfig") => "AWS",
        Some("GCPMachineProviderSpec") => "GCP",
        Some("AzureMachineProviderSpec") => "Azure",
        Some("VSphereMachineProviderSpec") => "VSphere",
        _ => "",
    }
}

/// The stream's image for the same platform, region and architecture.
fn stream_image(stream: &mco_bootimage::Stream, spec: &Value, arch: &str) -> Option<String> {
    if spec.get("ami").is_some() {
        let region = str_at(spec, &["placement", "region"])?;
        return stream
            .aws_region_image(arch, region)
            .ok()
            .map(|i| i.image.clone());
    }
    if spec.get("disks").is_some() {
        return stream.gcp_image_path(arch).ok();
    }
    None
}

/// The newest boot image Event about `name`.
fn last_event(events: &[Value], name: &str) -> (Outcome, Option<String>) {
    let newest = events
        .iter()
        .filter(|e| {
            str_at(e, &["regarding", "kind"]) == Some("MachineSet")
                && str_at(e, &["regarding", "name"]) == Some(name)
        })
        .filter_map(|e| {
            let outcome = match e["reason"].as_str()? {
                "BootImageUpdated" => Outcome::Updated,
                "BootImageUpdateSkipped" => Outcome::Skipped,
                "BootImageUpdateFailed" => Outcome::Failed,
                "HotLoopDetected" => Outcome::HotLoop,
                _ => return None,
            };
            let time = [
                "/series/lastObservedTime",
                "/eventTime",
                "/deprecatedLastTimestamp",
                "/metadata/creationTimestamp",
            ]
            .iter()
            .find_map(|p| e.pointer(p).and_then(Value::as_str))
            .and_then(|t| t.parse::<Timestamp>().ok());
            Some((time, outcome, e["note"].as_str().map(str::to_owned)))
        })
        .max_by_key(|(time, _, _)| *time);
    match newest {
        Some((_, outcome, note)) => (outcome, note),
        None => (Outcome::None, None),
    }
}

fn guests(source: &GuestSource) -> Guests {
    match source {
        GuestSource::NotAsked => Guests {
            source: "unknown (no --admin-url)".into(),
            known: false,
            jobs: Vec::new(),
        },
        GuestSource::Unreachable(err) => Guests {
            source: format!("unknown ({err})"),
            known: false,
            jobs: Vec::new(),
        },
        GuestSource::Read {
            url,
            guests,
            shadow,
        } => {
            let jobs = guests["jobs"]
                .as_object()
                .map(|jobs| {
                    jobs.iter()
                        .map(|(job, s)| {
                            let candidate = s["candidate"]["sha256"].as_str().map(str::to_owned);
                            let counts: BTreeMap<String, u64> = shadow
                                .iter()
                                .filter(|((j, _), _)| j == job)
                                .map(|((_, r), n)| (r.clone(), n.max(0.0) as u64))
                                .collect();
                            GuestRow {
                                job: job.clone(),
                                module: s["module"].as_str().unwrap_or_default().to_owned(),
                                sha256: s["sha256"].as_str().unwrap_or_default().to_owned(),
                                shadow: candidate.as_ref().map(|_| counts),
                                candidate_sha256: candidate,
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            Guests {
                source: url.clone(),
                known: true,
                jobs,
            }
        }
    }
}
