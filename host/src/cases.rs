//! Case folders in the layout of `tests/golden/<job>/`: the files `eval`
//! reads, named after its flags, plus `expected.json` (the decision `eval`
//! prints) and an optional `now.txt` (its `--now`). The project's golden
//! tests and `mco-host guests test` both check cases through here, so a
//! platform team's cases mean exactly what the project's own do.

use std::path::{Path, PathBuf};

use k8s_openapi::jiff::Timestamp;
use mco_bootimage::Decision;
use serde_json::Value;

use crate::bootimage::eval::BootImageInputs;
use crate::manifests::InputError;
use crate::mcn::eval::McnInputs;

/// The job a case is for, told by the object file it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseJob {
    /// `node.yaml`: a MachineConfigNode derivation.
    Mcn,
    /// `machineset.yaml` or `controlplanemachineset.yaml`: a boot image
    /// decision.
    BootImage,
}

/// One case folder.
#[derive(Clone, Debug)]
pub struct Case {
    pub dir: PathBuf,
    pub job: CaseJob,
}

impl Case {
    /// The folder's own name, as reports name the case.
    pub fn name(&self) -> String {
        self.dir.file_name().map_or_else(
            || self.dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }
}

/// A path that holds no case to run.
#[derive(Debug, thiserror::Error)]
pub enum FindError {
    #[error("{}: {error}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    #[error(
        "{}: not a case folder (expected.json beside node.yaml, machineset.yaml or controlplanemachineset.yaml) nor a folder of them",
        path.display()
    )]
    NoCase { path: PathBuf },
}

const EXPECTED: &str = "expected.json";

/// The cases under each path, in order: a folder holding `expected.json`
/// is a case; any other folder stands for the cases among its subfolders,
/// sorted by name (so `tests/golden/mcn` runs every MCN case). A path
/// that yields none is an error rather than a silent pass.
pub fn find(paths: &[PathBuf]) -> Result<Vec<Case>, FindError> {
    let mut cases = Vec::new();
    for path in paths {
        if let Some(case) = case_at(path) {
            cases.push(case);
            continue;
        }
        let read = |error| FindError::Read {
            path: path.clone(),
            error,
        };
        let mut found: Vec<Case> = std::fs::read_dir(path)
            .map_err(read)?
            .map(|entry| entry.map(|e| e.path()).map_err(read))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .filter_map(|dir| case_at(&dir))
            .collect();
        if found.is_empty() {
            return Err(FindError::NoCase { path: path.clone() });
        }
        found.sort_by(|a, b| a.dir.cmp(&b.dir));
        cases.extend(found);
    }
    Ok(cases)
}

fn case_at(dir: &Path) -> Option<Case> {
    if !dir.join(EXPECTED).is_file() {
        return None;
    }
    let job = if dir.join("node.yaml").exists() {
        CaseJob::Mcn
    } else if ["machineset.yaml", "controlplanemachineset.yaml"]
        .iter()
        .any(|file| dir.join(file).exists())
    {
        CaseJob::BootImage
    } else {
        return None;
    };
    Some(Case {
        dir: dir.to_path_buf(),
        job,
    })
}

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

/// Checks an MCN case: `derive` gives the decision for its inputs, which,
/// stamped with `now.txt`, must be `expected.json`.
pub fn check_mcn<E: std::fmt::Display>(
    dir: &Path,
    derive: impl FnOnce(&McnInputs) -> Result<mco_mcn::Decision, E>,
) -> Result<Pass, CaseFailure> {
    let inputs = McnInputs::read_case(dir)?;
    let now = now(dir)?;
    let decision = derive(&inputs).map_err(|e| CaseFailure::Decide(e.to_string()))?;
    compare(dir, inputs.output(decision, now))?;
    Ok(Pass::Decided)
}

/// Checks a boot image case: `decide` gives the decision for its inputs
/// and the `now.txt` time, which must be `expected.json`; a patch is then
/// applied and decided again, which must give `noop`, since a patch that
/// does not converge would make the controller patch forever.
pub fn check_bootimage<E: std::fmt::Display>(
    dir: &Path,
    mut decide: impl FnMut(&BootImageInputs, Timestamp) -> Result<Decision, E>,
) -> Result<Pass, CaseFailure> {
    let mut inputs = BootImageInputs::read_case(dir)?;
    let now = now(dir)?;
    let mut decide = |inputs: &BootImageInputs| {
        decide(inputs, now).map_err(|e| CaseFailure::Decide(e.to_string()))
    };
    let decision = decide(&inputs)?;
    compare(dir, json(&decision)?)?;
    let Decision::Patch { patch, import, .. } = &decision else {
        return Ok(Pass::Decided);
    };
    inputs.apply(patch, import.as_deref());
    match decide(&inputs)? {
        Decision::Noop { .. } => Ok(Pass::PatchConverged),
        after => Err(CaseFailure::NotConverged {
            after: json(&after)?,
        }),
    }
}

/// `now.txt`, the time `eval` is given as `--now`; the Unix epoch without
/// it, so a case never depends on the clock.
fn now(dir: &Path) -> Result<Timestamp, CaseFailure> {
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

fn json(decision: &Decision) -> Result<Value, CaseFailure> {
    serde_json::to_value(decision).map_err(|e| CaseFailure::Decide(e.to_string()))
}

fn compare(dir: &Path, actual: Value) -> Result<(), CaseFailure> {
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

    #[test]
    fn a_folder_without_cases_is_an_error_not_an_empty_pass() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let err = find(&[dir.path().to_path_buf()]).err();
        assert!(matches!(err, Some(FindError::NoCase { .. })), "{err:?}");
        let missing = dir.path().join("nope");
        let err = find(&[missing]).err();
        assert!(matches!(err, Some(FindError::Read { .. })), "{err:?}");
    }
}
