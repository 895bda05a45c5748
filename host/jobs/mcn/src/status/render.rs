//! The terminal text of the MachineConfigNode section: pools, nodes in
//! flight, degraded nodes.

use std::fmt::Write;

use super::summary::Nodes;
use mco_job::status_section::Style;
use mco_job::status_section::text::{RED, YELLOW, bar, duration, fit, table};

pub(super) fn render(nodes: &Nodes, style: Style, out: &mut String) {
    let width = style.width;
    out.push('\n');
    style.heading(out, "POOLS");
    if nodes.pools.is_empty() {
        out.push_str("  (no MachineConfigPools)\n");
    }
    // What a pool row holds besides the bar takes up to about 96 columns.
    let bar_width = width.saturating_sub(96).clamp(8, 30);
    let rows: Vec<Vec<String>> = nodes
        .pools
        .iter()
        .map(|p| {
            let eta = match (p.eta_seconds, p.updated == p.total) {
                (_, true) => "done".to_owned(),
                // Longer than the rollout's pace says it should take.
                (Some(0), _) => "ETA overdue".to_owned(),
                (Some(s), _) => format!("ETA {}", duration(s)),
                (None, _) => "ETA unknown".to_owned(),
            };
            vec![
                p.name.clone(),
                p.target.clone().unwrap_or_else(|| "-".into()),
                bar(p.updated, p.total, bar_width),
                format!("{}/{} updated", p.updated, p.total),
                format!("{} updating", p.updating),
                format!("{} waiting", p.waiting),
                format!("{} degraded", p.degraded),
                eta,
            ]
        })
        .collect();
    out.push_str(&table(&rows, 2, width));

    out.push('\n');
    style.heading(out, "NODES IN FLIGHT");
    if nodes.nodes_in_flight.is_empty() {
        out.push_str("  (none)\n");
    }
    for n in &nodes.nodes_in_flight {
        let stuck = if n.stuck {
            format!("  {}", style.paint(RED, "STUCK"))
        } else {
            String::new()
        };
        let line = format!(
            "  {}  {}  {}  since {} ({}){}",
            n.name,
            n.pool,
            style.paint(YELLOW, n.phase.as_str()),
            n.since,
            duration(n.seconds_in_phase),
            stuck
        );
        // Colour codes are not columns: fit the plain form, then paint.
        out.push_str(&line);
        out.push('\n');
        let why = format!("      {}: {}", n.condition, n.message);
        out.push_str(&fit(&why, width));
        out.push('\n');
    }

    if !nodes.degraded_nodes.is_empty() {
        out.push('\n');
        style.heading(out, "DEGRADED");
        for d in &nodes.degraded_nodes {
            let line = format!(
                "  {}  {}  since {}  {}: {}",
                d.name, d.pool, d.since, d.reason, d.message
            );
            let _ = writeln!(out, "{}", style.paint(RED, &fit(&line, width)));
        }
    }
}
