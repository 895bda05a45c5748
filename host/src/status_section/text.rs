//! How the status view writes text, for its own sections and the jobs':
//! columns cut to the width, colour only when the caller asks for it (on
//! a terminal), so the golden renders are plain text.

use std::fmt::Write;

use k8s_openapi::jiff::Timestamp;

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

pub const RED: &str = "\x1b[31m";
pub const GREEN: &str = "\x1b[32m";
pub const YELLOW: &str = "\x1b[33m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

impl Style {
    /// `text` in colour `code`, when colour is on.
    pub fn paint(&self, code: &str, text: &str) -> String {
        if self.colour {
            format!("{code}{text}{RESET}")
        } else {
            text.to_owned()
        }
    }

    /// A section's heading line.
    pub fn heading(&self, out: &mut String, text: &str) {
        let _ = writeln!(out, "{}", self.paint(BOLD, text));
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

/// A time as the view prints it, in text and JSON.
pub fn rfc3339(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Cuts `text` to `width` characters, marking the cut with `…`.
pub fn fit(text: &str, width: usize) -> String {
    let width = width.max(1);
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(width - 1).collect();
    cut.push('…');
    cut
}

/// Pads every column of `rows` to its widest cell (by characters).
pub fn table(rows: &[Vec<String>], indent: usize, width: usize) -> String {
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

/// A progress bar of `width` cells, `done` of `total` filled.
pub fn bar(done: usize, total: usize, width: usize) -> String {
    let filled = (done * width).checked_div(total).unwrap_or(width);
    format!("[{}{}]", "#".repeat(filled), ".".repeat(width - filled))
}

#[cfg(test)]
mod tests {
    use super::*;

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
