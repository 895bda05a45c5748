//! What checking one case folder gives ([`Pass`], [`CaseFailure`]) and
//! the files every job's check reads the same way: `now.txt` (the `--now`
//! of `eval`) and `expected.json` (the decision `eval` prints).

use std::path::Path;

use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

use crate::manifests::InputError;

/// The decision a case expects, as `eval` prints it.
pub const EXPECTED: &str = "expected.json";

/// Why a case failed.
#[derive(Debug, thiserror::Error)]
pub enum CaseFailure {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("{file}: {detail}")]
    File { file: &'static str, detail: String },
    /// The guest failed, or (in the project's tests) disagreed with the
    /// native library.
    #[error("{0}")]
    Decide(String),
    #[error(
        "decision differs from expected.json (- expected, + actual):\n{}",
        diff(expected, actual)
    )]
    Differs { expected: Value, actual: Value },
    #[error(
        "the patch does not converge: decided again after it, the decision is {after}, not noop"
    )]
    NotConverged { after: Value },
}

/// What a passing case showed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    Decided,
    /// A boot image patch, applied (RFC 7386) and decided again to `noop`.
    PatchConverged,
}

/// `now.txt`, the time `eval` is given as `--now`; the Unix epoch without
/// it, so a case never depends on the clock.
pub fn now(dir: &Path) -> Result<Timestamp, CaseFailure> {
    let file = "now.txt";
    match std::fs::read_to_string(dir.join(file)) {
        Ok(text) => text
            .trim()
            .parse()
            .map_err(|e: k8s_openapi::jiff::Error| CaseFailure::File {
                file,
                detail: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Timestamp::UNIX_EPOCH),
        Err(e) => Err(CaseFailure::File {
            file,
            detail: e.to_string(),
        }),
    }
}

pub fn json(decision: &impl serde::Serialize) -> Result<Value, CaseFailure> {
    serde_json::to_value(decision).map_err(|e| CaseFailure::Decide(e.to_string()))
}

pub fn compare(dir: &Path, actual: Value) -> Result<(), CaseFailure> {
    let file = |detail: String| CaseFailure::File {
        file: EXPECTED,
        detail,
    };
    let text = std::fs::read_to_string(dir.join(EXPECTED)).map_err(|e| file(e.to_string()))?;
    let expected: Value = serde_json::from_str(&text).map_err(|e| file(e.to_string()))?;
    if actual == expected {
        Ok(())
    } else {
        Err(CaseFailure::Differs { expected, actual })
    }
}

/// The fields that differ, one JSON pointer a line (from the RFC 6902
/// patch that turns the expected decision into the actual one), so a
/// long MachineConfigNode shows only the condition that changed.
pub fn diff(expected: &Value, actual: &Value) -> String {
    use json_patch::PatchOperation;
    let shown = |value: Option<&Value>| value.map_or_else(|| "(absent)".into(), Value::to_string);
    json_patch::diff(expected, actual)
        .iter()
        .map(|op| {
            let path = op.path().to_string();
            let pointer = if path.is_empty() { "/" } else { &path };
            let before = shown(expected.pointer(&path));
            let after = match op {
                PatchOperation::Remove(_) => "(absent)".to_string(),
                PatchOperation::Add(add) => add.value.to_string(),
                PatchOperation::Replace(replace) => replace.value.to_string(),
                _ => shown(actual.pointer(&path)),
            };
            format!("  {pointer}\n    - {before}\n    + {after}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_diff_names_each_field_that_differs_and_nothing_else() {
        let expected = json!({"action": "patch", "patch": {"a": 1, "gone": true}, "same": [1, 2]});
        let actual = json!({"action": "noop", "patch": {"a": 1, "new": "x"}, "same": [1, 2]});
        let shown = diff(&expected, &actual);
        assert!(
            shown.contains("  /action\n    - \"patch\"\n    + \"noop\""),
            "{shown}"
        );
        assert!(
            shown.contains("  /patch/gone\n    - true\n    + (absent)"),
            "{shown}"
        );
        assert!(
            shown.contains("  /patch/new\n    - (absent)\n    + \"x\""),
            "{shown}"
        );
        assert!(
            !shown.contains("/same") && !shown.contains("/patch/a"),
            "{shown}"
        );
    }
}
