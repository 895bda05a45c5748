//! The MachineConfigNode section of the status summary, computed from the
//! objects it read and a clock.
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

use std::time::Duration;

use clap::Args;
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

use super::{Objects, Pool};
use crate::crd::MachineConfigNode;
use crate::phase::{self, Phase};
use mco_job::status_section::text::rfc3339;

/// The job's flags of `status`: when a phase counts as stuck.
#[derive(Args, Debug, Clone, Copy)]
pub struct Thresholds {
    /// A drain lasting longer than this is marked stuck.
    #[arg(long, default_value = "30m", value_parser = humantime::parse_duration)]
    pub stuck_after_drain: Duration,
    /// Any other phase lasting longer than this is marked stuck.
    #[arg(long, default_value = "15m", value_parser = humantime::parse_duration)]
    pub stuck_after: Duration,
}

/// The section: its keys of the JSON document are its fields'.
#[derive(Debug, Clone, PartialEq)]
pub struct Nodes {
    pub pools: Vec<PoolSummary>,
    pub nodes_in_flight: Vec<NodeInFlight>,
    pub degraded_nodes: Vec<DegradedNode>,
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

/// How long `phase` may last before it counts as stuck.
fn stuck_after(thresholds: Thresholds, phase: Phase) -> Duration {
    match phase {
        Phase::Draining => thresholds.stuck_after_drain,
        _ => thresholds.stuck_after,
    }
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

/// The section at `now`.
pub fn summarize(objects: &Objects, now: Timestamp) -> Nodes {
    let thresholds = objects.thresholds;
    let mut mcns: Vec<&MachineConfigNode> = objects.mcns.iter().collect();
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
                stuck: seconds > stuck_after(thresholds, p.phase).as_secs(),
                condition: p.condition,
                message: p.message,
            });
        }
    }
    Nodes {
        pools: pools(objects, &mcns, now),
        nodes_in_flight,
        degraded_nodes,
    }
}
fn pools(objects: &Objects, mcns: &[&MachineConfigNode], now: Timestamp) -> Vec<PoolSummary> {
    let mut names: Vec<String> = objects.pools.iter().map(|p| p.name().to_owned()).collect();
    for mcn in mcns {
        if !names.contains(&mcn.spec.pool.name) {
            names.push(mcn.spec.pool.name.clone());
        }
    }
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let pool = objects.pools.iter().find(|p| p.name() == name);
            let target = pool.and_then(Pool::target).map(str::to_owned);
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
fn updating_since(pool: &Pool) -> Option<Timestamp> {
    let conditions = &pool.status.conditions;
    let updating = conditions
        .iter()
        .find(|c| c.type_ == "Updating" && c.status == "True")?;
    updating.last_transition_time.as_deref()?.parse().ok()
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
