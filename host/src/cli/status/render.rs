//! The terminal text of a [`Summary`]: the time, each job's section (as
//! the job draws it), then guests and ownership, cut to `width` columns.
//! Colour is an option the caller sets only for a terminal, so the golden
//! renders are plain text.

use std::fmt::Write;

use super::inputs::Rollout;
use super::model::Summary;
pub use mco_job::status_section::Style;
use mco_job::status_section::text::{fit_start, last_column_room, table};

fn short_digest(sha: &str) -> String {
    sha.chars().take(12).collect()
}

/// The whole view.
pub fn render(summary: &Summary, style: Style) -> String {
    let style = Style {
        width: style.width.max(40),
        ..style
    };
    let width = style.width;
    let mut out = String::new();
    let _ = writeln!(out, "MachineConfig status at {}", summary.now);
    for section in &summary.sections.0 {
        section.render(style, &mut out);
    }

    out.push('\n');
    style.heading(&mut out, "GUESTS");
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
        // A long path loses its start, so its file name still shows.
        let room = last_column_room(&rows, 2, width);
        for row in rows.iter_mut().skip(1) {
            if let Some(module) = row.last_mut() {
                *module = fit_start(module, room);
            }
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
        style.heading(&mut out, "OWNERSHIP");
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
fn ownership(reports: &[mco_job::ownership::JobReport], width: usize) -> String {
    use mco_job::ownership::State;
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
        use mco_job::ownership::{JobReport, Mode, State};
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
        let flags = crate::cli::status::Status::default_flags().unwrap_or_else(|e| panic!("{e}"));
        let inputs = crate::cli::status::model::Inputs::from_objects([], &flags)
            .unwrap_or_else(|e| panic!("{e}"));
        let now = "2026-12-02T00:00:00Z"
            .parse()
            .unwrap_or_else(|e| panic!("{e}"));
        let summary = crate::cli::status::model::summarize(&inputs, now);
        assert!(!render(&summary, Style::default()).contains("OWNERSHIP"));
        let json = serde_json::to_value(&summary).unwrap_or_default();
        assert!(
            json.get("ownership").is_none(),
            "no key without a report: {json}"
        );
    }
}
