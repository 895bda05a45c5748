//! The terminal text of the boot image section.

use std::fmt::Write;

use super::summary::{BootImages, Outcome};
use mco_job::status_section::Style;
use mco_job::status_section::text::{GREEN, RED, fit, table};

pub(super) fn render(b: &BootImages, style: Style, out: &mut String) {
    let width = style.width;
    out.push('\n');
    style.heading(out, "BOOT IMAGES");
    for (label, c) in [("Progressing", &b.progressing), ("Degraded", &b.degraded)] {
        if let Some(c) = c {
            let line = format!("  {label}={}: {}", c.status, c.message);
            out.push_str(&fit(&line, width));
            out.push('\n');
        }
    }
    if b.machinesets.is_empty() {
        out.push_str("  (no MachineSets)\n");
        return;
    }
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
            let line = match m.outcome {
                // Nothing done: only why (a rule that leaves it alone).
                Outcome::None => format!("    {}: {detail}", m.name),
                outcome => format!("    {} ({}): {detail}", m.name, outcome.as_str()),
            };
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
