//! The terminal text of a [`Summary`]: sections for pools, nodes in flight,
//! degraded nodes, boot images and guests, cut to `width` columns. Colour
//! is an option the caller sets only for a terminal, so the golden renders
//! are plain text.

use std::fmt::Write;

use super::boot_images::Outcome;
use super::inputs::Rollout;
use super::model::Summary;

/// How to draw.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub width: usize,
    pub colour: bool,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            width: 120,
            colour: false,
        }
    }
}

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.colour {
            format!("{code}{text}{RESET}")
        } else {
            text.to_owned()
        }
    }
}

/// `1h02m`, `48m`, `30s`: precise enough to act on, short enough for a row.
pub fn duration(seconds: u64) -> String {
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, _) => format!("{m}m{s:02}s"),
        _ => format!("{h}h{m:02}m"),
    }
}

/// Cuts `text` to `width` characters, marking the cut with `…`.
fn fit(text: &str, width: usize) -> String {
    let width = width.max(1);
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(width - 1).collect();
    cut.push('…');
    cut
}

/// Pads every column of `rows` to its widest cell (by characters).
fn table(rows: &[Vec<String>], indent: usize, width: usize) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = " ".repeat(indent);
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if i + 1 < row.len() {
                let pad = widths[i].saturating_sub(cell.chars().count()) + 2;
                line.push_str(&" ".repeat(pad));
            }
        }
        out.push_str(&fit(line.trim_end(), width));
        out.push('\n');
    }
    out
}

fn bar(done: usize, total: usize, width: usize) -> String {
    let filled = (done * width).checked_div(total).unwrap_or(width);
    format!("[{}{}]", "#".repeat(filled), ".".repeat(width - filled))
}

fn short_digest(sha: &str) -> String {
    sha.chars().take(12).collect()
}

/// The whole view.
pub fn render(summary: &Summary, style: Style) -> String {
    let width = style.width.max(40);
    let mut out = String::new();
    let heading = |out: &mut String, text: &str| {
        let _ = writeln!(out, "{}", style.paint(BOLD, text));
    };
    let _ = writeln!(out, "MachineConfig status at {}", summary.now);

    out.push('\n');
    heading(&mut out, "POOLS");
    if summary.pools.is_empty() {
        out.push_str("  (no MachineConfigPools)\n");
    }
    // What a pool row holds besides the bar takes up to about 96 columns.
    let bar_width = width.saturating_sub(96).clamp(8, 30);
    let rows: Vec<Vec<String>> = summary
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
    heading(&mut out, "NODES IN FLIGHT");
    if summary.nodes_in_flight.is_empty() {
        out.push_str("  (none)\n");
    }
    for n in &summary.nodes_in_flight {
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

    if !summary.degraded_nodes.is_empty() {
        out.push('\n');
        heading(&mut out, "DEGRADED");
        for d in &summary.degraded_nodes {
            let line = format!(
                "  {}  {}  since {}  {}: {}",
                d.name, d.pool, d.since, d.reason, d.message
            );
            let _ = writeln!(out, "{}", style.paint(RED, &fit(&line, width)));
        }
    }

    out.push('\n');
    heading(&mut out, "BOOT IMAGES");
    let b = &summary.boot_images;
    for (label, c) in [("Progressing", &b.progressing), ("Degraded", &b.degraded)] {
        if let Some(c) = c {
            let line = format!("  {label}={}: {}", c.status, c.message);
            out.push_str(&fit(&line, width));
            out.push('\n');
        }
    }
    if b.machinesets.is_empty() {
        out.push_str("  (no MachineSets)\n");
    } else {
        let mut rows = vec![
            [
                "MACHINESET",
                "ARCH",
                "ENROLLED",
                "LAST",
                "CURRENT",
                "STREAM",
            ]
            .map(str::to_owned)
            .to_vec(),
        ];
        for m in &b.machinesets {
            let same = m.current_image.is_some() && m.current_image == m.stream_image;
            rows.push(vec![
                m.name.clone(),
                m.arch.clone().unwrap_or_else(|| "?".into()),
                if m.enrolled { "yes" } else { "no" }.into(),
                m.outcome.as_str().into(),
                m.current_image.clone().unwrap_or_else(|| "-".into()),
                if same {
                    "(same)".into()
                } else {
                    m.stream_image.clone().unwrap_or_else(|| "-".into())
                },
            ]);
        }
        out.push_str(&table(&rows, 2, width));
        for m in &b.machinesets {
            if let Some(detail) = &m.detail {
                let line = format!("    {} ({}): {}", m.name, m.outcome.as_str(), detail);
                let line = fit(&line, width);
                let painted = match m.outcome {
                    Outcome::Failed | Outcome::HotLoop => style.paint(RED, &line),
                    Outcome::Updated => style.paint(GREEN, &line),
                    _ => line,
                };
                let _ = writeln!(out, "{painted}");
            }
        }
    }

    out.push('\n');
    heading(&mut out, "GUESTS");
    let g = &summary.guests;
    if !g.known {
        let _ = writeln!(out, "  {}", g.source);
    } else {
        let _ = writeln!(out, "  from {}", g.source);
        // The counts in short, so the module's path still fits in 120
        // columns; the legend says what they are.
        let mut rows = vec![
            [
                "JOB",
                "SHA256",
                "CANDIDATE",
                "SHADOW A/D/F",
                "STAGE A/D/F",
                "MODULE",
            ]
            .map(str::to_owned)
            .to_vec(),
        ];
        for j in &g.jobs {
            let shadow = j.shadow.as_ref().map_or_else(
                || "-".to_owned(),
                |s| {
                    let n = |k: &str| s.get(k).copied().unwrap_or(0);
                    counts(n("agree"), n("differ"), n("failed"))
                },
            );
            rows.push(vec![
                j.job.clone(),
                short_digest(&j.sha256),
                j.candidate_sha256
                    .as_deref()
                    .map_or_else(|| "-".to_owned(), short_digest),
                shadow,
                j.rollout
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), rollout_stage),
                j.module.clone(),
            ]);
        }
        out.push_str(&table(&rows, 2, width));
        if g.jobs
            .iter()
            .any(|j| j.shadow.is_some() || j.rollout.is_some())
        {
            out.push_str("  A/D/F: the candidate's evaluations that agreed, differed, failed\n");
        }
    }
    if !summary.ownership.is_empty() {
        out.push('\n');
        heading(&mut out, "OWNERSHIP");
        out.push_str(&ownership(&summary.ownership, width));
    }
    out
}

/// A rollout's stage and its counts in that stage, as `/guests` gives them.
fn rollout_stage(rollout: &Rollout) -> String {
    format!(
        "{} {}",
        rollout.stage.as_deref().unwrap_or("?"),
        counts(rollout.agree, rollout.differ, rollout.failed)
    )
}

/// Agreed, differed, failed: `41/2/0`.
fn counts(agree: u64, differ: u64, failed: u64) -> String {
    format!("{agree}/{differ}/{failed}")
}

/// Each job's mode and state; in observe mode its agreement and sample.
fn ownership(reports: &[crate::ownership::JobReport], width: usize) -> String {
    use crate::ownership::State;
    let mut rows = vec![["JOB", "MODE", "STATE"].map(str::to_owned).to_vec()];
    let mut samples = Vec::new();
    for report in reports {
        let state = match (&report.state, &report.observed) {
            (State::Refused { reason }, _) => format!("refused: {reason}"),
            (State::Observing, Some(seen)) => {
                for d in &seen.sample {
                    samples.push(vec![
                        format!("{}:", report.job),
                        d.object.clone(),
                        d.outcome.key.clone(),
                        format!(
                            "derived {:?}, stored {:?}",
                            d.outcome.ours, d.outcome.theirs
                        ),
                    ]);
                }
                format!(
                    "observing: {} of {} objects differ ({} differences{})",
                    seen.differing_objects,
                    seen.objects,
                    seen.differences(),
                    if seen.omitted > 0 {
                        format!(", {} not shown", seen.omitted)
                    } else {
                        String::new()
                    }
                )
            }
            (state, _) => state.label().to_owned(),
        };
        rows.push(vec![
            report.job.clone(),
            report.mode.label().to_owned(),
            state,
        ]);
    }
    let mut out = table(&rows, 2, width);
    if !samples.is_empty() {
        out.push_str(&table(&samples, 4, width));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ownership_shows_refusals_and_the_observed_sample_only_when_reported() {
        use crate::ownership::{JobReport, Mode, State};
        use mco_registry::compare::{Outcome, Summary as Compared};
        let mut seen = Compared::new(20);
        seen.add(
            "behind",
            &[Outcome::new(
                "MachineSet.bootImage",
                Some("boot image b".into()),
                Some("left as it is".into()),
            )],
        );
        seen.add(
            "current",
            &[Outcome::new(
                "MachineSet.bootImage",
                Some("x".into()),
                Some("x".into()),
            )],
        );
        let reports = vec![
            JobReport {
                job: "mcn".into(),
                mode: Mode::Own,
                state: State::Refused {
                    reason: "the daemon writes".into(),
                },
                observed: None,
            },
            JobReport {
                job: "bootImage".into(),
                mode: Mode::Observe,
                state: State::Observing,
                observed: Some(seen),
            },
        ];
        let text = ownership(&reports, 200);
        assert_eq!(
            text,
            "  JOB        MODE     STATE\n\
             \x20 mcn        own      refused: the daemon writes\n\
             \x20 bootImage  observe  observing: 1 of 2 objects differ (1 differences)\n\
             \x20   bootImage:  behind  MachineSet.bootImage  derived \"boot image b\", stored \"left as it is\"\n"
        );
        let inputs = crate::cli::status::model::Inputs::default();
        let now = "2026-12-02T00:00:00Z"
            .parse()
            .unwrap_or_else(|e| panic!("{e}"));
        let summary = crate::cli::status::model::summarize(&inputs, now, Default::default());
        assert!(!render(&summary, Style::default()).contains("OWNERSHIP"));
        let json = serde_json::to_value(&summary).unwrap_or_default();
        assert!(
            json.get("ownership").is_none(),
            "no key without a report: {json}"
        );
    }

    #[test]
    fn durations_and_fits() {
        assert_eq!(
            [duration(30), duration(300), duration(3 * 3600 + 120)],
            ["30s", "5m00s", "3h02m"]
        );
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(bar(1, 4, 8), "[##......]");
        assert_eq!(bar(0, 0, 4), "[####]");
    }
}
