//! Case folders in the layout of `tests/golden/<job>/`: the files `eval`
//! reads, named after its flags, plus `expected.json` (the decision `eval`
//! prints) and an optional `now.txt` (its `--now`). The project's golden
//! tests and `mco-host guests test` both check cases through here, so a
//! platform team's cases mean exactly what the project's own do.

use std::fmt;
use std::path::{Path, PathBuf};

use mco_job::case_check::EXPECTED;
pub use mco_job::case_check::{CaseFailure, Pass, diff};
use mco_job::jobs::{Cases, Job};

/// One case folder.
#[derive(Clone)]
pub struct Case {
    pub dir: PathBuf,
    /// The job whose object file the folder holds ([`Cases::files`]).
    pub job: &'static dyn Job,
    /// What that job does with its cases.
    pub cases: &'static Cases,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Case")
            .field("dir", &self.dir)
            .field("job", &self.job.name())
            .finish()
    }
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
        "{}: not a case folder (expected.json beside {}) nor a folder of them",
        path.display(),
        case_files()
    )]
    NoCase { path: PathBuf },
}

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
    let (job, cases) =
        with_cases().find(|(_, cases)| cases.files.iter().any(|file| dir.join(file).exists()))?;
    Some(Case {
        dir: dir.to_path_buf(),
        job,
        cases,
    })
}

/// The jobs that have cases, in `JOBS` order.
fn with_cases() -> impl Iterator<Item = (&'static dyn Job, &'static Cases)> {
    crate::JOBS
        .iter()
        .filter_map(|job| Some((job, job.contract().cases?)))
}

/// Every job's case files, `a, b or c`.
fn case_files() -> String {
    let files: Vec<&str> = with_cases()
        .flat_map(|(_, cases)| cases.files.iter().copied())
        .collect();
    match files.split_last() {
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_without_cases_is_an_error_not_an_empty_pass() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let err = find(&[dir.path().to_path_buf()]).err();
        assert!(matches!(err, Some(FindError::NoCase { .. })), "{err:?}");
        let missing = dir.path().join("nope");
        let err = find(&[missing]).err();
        assert!(matches!(err, Some(FindError::Read { .. })), "{err:?}");
    }

    /// The case finder knows a case of every job by the job's own files.
    #[test]
    fn a_case_of_every_job_is_found_as_that_jobs() {
        let mut jobs_with_cases = 0;
        for (job, cases) in with_cases() {
            for file in cases.files {
                let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
                let write = |name: &str| {
                    std::fs::write(dir.path().join(name), "{}").unwrap_or_else(|e| panic!("{e}"))
                };
                write(EXPECTED);
                write(file);
                let found =
                    find(&[dir.path().to_path_buf()]).unwrap_or_else(|e| panic!("{file}: {e}"));
                let names: Vec<&str> = found.iter().map(|case| case.job.name()).collect();
                assert_eq!(names, [job.name()], "{file}");
            }
            jobs_with_cases += usize::from(!cases.files.is_empty());
        }
        assert_eq!(jobs_with_cases, crate::JOBS.iter().count());
    }
}
