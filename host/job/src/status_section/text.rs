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

/// Cuts `text` to `width` characters at its start, marking the cut with
/// `…`: a path keeps its file name.
pub fn fit_start(text: &str, width: usize) -> String {
    let width = width.max(1);
    let count = text.chars().count();
    if count <= width {
        return text.to_owned();
    }
    let mut cut = String::from('…');
    cut.extend(text.chars().skip(count - (width - 1)));
    cut
}

/// The columns left for the last cell of each of `rows` once [`table`]
/// has padded the others (indent `indent`, `width` in all).
pub fn last_column_room(rows: &[Vec<String>], indent: usize, width: usize) -> usize {
    let mut widths = column_widths(rows);
    widths.pop();
    let before: usize = widths.iter().map(|w| w + 2).sum();
    width.saturating_sub(indent + before)
}

/// The widest cell of each column of `rows` (by characters).
fn column_widths(rows: &[Vec<String>]) -> Vec<usize> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// Pads every column of `rows` to its widest cell (by characters).
pub fn table(rows: &[Vec<String>], indent: usize, width: usize) -> String {
    let widths = column_widths(rows);
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
        assert_eq!(fit_start("/a/guests/mcn.wasm", 10), "…/mcn.wasm");
        assert_eq!(fit_start("mcn.wasm", 10), "mcn.wasm");
    }

    #[test]
    fn the_last_column_gets_what_the_others_leave() {
        let rows = [
            vec!["JOB".to_owned(), "MODULE".to_owned()],
            vec!["bootImage.AWS".to_owned(), "/a/b.wasm".to_owned()],
        ];
        // Indent 2, then "bootImage.AWS" (13) and two spaces.
        assert_eq!(last_column_room(&rows, 2, 40), 40 - 2 - 15);
        let line = table(&rows, 2, 40);
        assert!(line.lines().all(|l| l.chars().count() <= 40), "{line}");
        assert_eq!(bar(1, 4, 8), "[##......]");
        assert_eq!(bar(0, 0, 4), "[####]");
    }
}
