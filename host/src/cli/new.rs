//! `mco-host guests new --job JOB [--platform NAME] DIR`: a Rust guest
//! crate to start from. It builds a component against the WIT package
//! this binary embeds (written by the same code as `guests wit`), depends
//! on nothing of this repository (a user has only the binary), pins
//! wit-bindgen and every other crate through its own `Cargo.lock`, and
//! carries two cases its logic really decides, run by `make test` (`cargo
//! build --release --target wasm32-wasip2`, then `guests test`). The
//! templates are the files under `host/scaffold/`: the ones every crate
//! has here, each job's from its [`Scaffold`]
//! ([`Contract::scaffold`](mco_job::jobs::Contract::scaffold)).

use std::path::{Path, PathBuf};

use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser};
use serde_json::{Value, json};

use crate::JOBS;
use mco_job::jobs::Job;
use mco_job::jobs::scaffold::{Scaffold, Template};

#[derive(Args)]
pub(super) struct NewArgs {
    /// The job the guest serves.
    #[arg(long, value_parser = jobs_with_a_scaffold())]
    job: String,
    // Its help says which jobs take it, and what it names for each.
    #[arg(long, value_name = "NAME", help = platform_help())]
    platform: Option<String>,
    /// The crate's folder, new or empty; its name is the crate's.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

/// `--job`'s values: the jobs of [`JOBS`] that have a crate template.
fn jobs_with_a_scaffold() -> PossibleValuesParser {
    let values =
        scaffolds().map(|(job, scaffold)| PossibleValue::new(job.name()).help(scaffold.help()));
    PossibleValuesParser::new(values)
}

/// The jobs of [`JOBS`] that have a crate template, with it.
fn scaffolds() -> impl Iterator<Item = (&'static dyn Job, &'static dyn Scaffold)> {
    JOBS.iter()
        .filter_map(|job| Some((job, job.contract().scaffold?)))
}

/// `--platform`'s help: what it names for each job that takes it.
fn platform_help() -> String {
    scaffolds()
        .filter_map(|(job, scaffold)| {
            let platform = scaffold.platform()?;
            Some(format!("For `--job {}`: {}", job.name(), platform.help))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The jobs that take `--platform`, for the error that refuses it.
fn jobs_with_platforms() -> String {
    scaffolds()
        .filter(|(_, scaffold)| scaffold.platform().is_some())
        .map(|(job, _)| job.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why no crate was made.
#[derive(Debug, thiserror::Error)]
pub(super) enum NewError {
    #[error("{}: exists and is not an empty folder; name a new one", dir.display())]
    NotEmpty { dir: PathBuf },
    #[error(
        "{}: the crate takes the folder's name, which must start with a letter and hold only letters, digits, - and _",
        dir.display()
    )]
    Name { dir: PathBuf },
    #[error(
        "--job {job} needs --platform NAME, the Infrastructure status.platformStatus.type it serves ({})",
        names.join(", ")
    )]
    NoPlatform {
        job: &'static str,
        names: &'static [&'static str],
    },
    #[error("--platform {given:?} is not an OpenShift platform type ({})", names.join(", "))]
    Platform {
        given: String,
        names: &'static [&'static str],
    },
    #[error(
        "--platform is for --job {}; the {job} job has one guest for every platform",
        jobs_with_platforms()
    )]
    PlatformNotTaken { job: &'static str },
    #[error("writing {}: {error}", path.display())]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(transparent)]
    Wit(#[from] super::guests::GuestsError),
    /// `--job` names no job with a template: clap lets none through.
    #[error("--job {0}: no such job")]
    NoJob(String),
}

/// The wit-bindgen the project's guests are built with: the scaffold's
/// `Cargo.toml` pins it and its `Cargo.lock` holds it.
const WIT_BINDGEN: &str = "0.61.1";

const COMMON: [Template; 4] = [
    ("Cargo.toml", include_str!("../../scaffold/Cargo.toml")),
    ("Makefile", include_str!("../../scaffold/Makefile")),
    ("README.md", include_str!("../../scaffold/README.md")),
    (".gitignore", include_str!("../../scaffold/gitignore")),
];

/// `Cargo.lock` for a crate named `{{name}}`, which `lock` moves to its
/// sorted place.
const LOCK: &str = include_str!("../../scaffold/Cargo.lock");

pub(super) fn run(args: NewArgs) -> Result<Value, NewError> {
    let (job, scaffold) = scaffolds()
        .find(|(job, _)| job.name() == args.job)
        .ok_or_else(|| NewError::NoJob(args.job.clone()))?;
    let platform = platform(job, scaffold, args.platform)?;
    let name = crate_name(&args.dir)?;
    refuse_non_empty(&args.dir)?;
    let vars = Vars::new(&name, job, scaffold, platform.as_deref());
    let mut files = Vec::new();
    for (path, text) in COMMON.into_iter().chain(scaffold.templates()) {
        files.push(write(&args.dir, path, &vars.fill(text))?);
    }
    files.push(write(&args.dir, "Cargo.lock", &lock(LOCK, &name))?);
    let wit = super::wit::write(&args.dir.join("wit"))?;
    let host = std::env::current_exe().unwrap_or_else(|_| "mco-host".into());
    Ok(json!({
        "crate": name,
        "dir": args.dir.display().to_string(),
        "job": job.name(),
        "platform": platform,
        "package": crate::wit::package(),
        "files": files,
        "wit": wit["files"],
        "test": format!("cd {} && make test MCO_HOST={}", args.dir.display(), host.display()),
    }))
}

/// `--platform` checked against what the job takes: needed, and one of
/// its names, for a job whose guests serve one platform each; refused for
/// the others.
fn platform(
    job: &dyn Job,
    scaffold: &dyn Scaffold,
    given: Option<String>,
) -> Result<Option<String>, NewError> {
    match (scaffold.platform(), given) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err(NewError::PlatformNotTaken { job: job.name() }),
        (Some(taken), None) => Err(NewError::NoPlatform {
            job: job.name(),
            names: taken.names,
        }),
        (Some(taken), Some(p)) if taken.names.contains(&p.as_str()) => Ok(Some(p)),
        (Some(taken), Some(given)) => Err(NewError::Platform {
            given,
            names: taken.names,
        }),
    }
}

/// The folder's name, if it makes a crate name cargo takes.
fn crate_name(dir: &Path) -> Result<String, NewError> {
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| {
            n.starts_with(|c: char| c.is_ascii_alphabetic())
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
        .ok_or_else(|| NewError::Name {
            dir: dir.to_path_buf(),
        })?;
    Ok(name.to_string())
}

fn refuse_non_empty(dir: &Path) -> Result<(), NewError> {
    let not_empty = || NewError::NotEmpty {
        dir: dir.to_path_buf(),
    };
    match std::fs::read_dir(dir) {
        Ok(mut entries) => match entries.next() {
            None => Ok(()),
            Some(_) => Err(not_empty()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        // A file, or a folder that cannot be read.
        Err(_) => Err(not_empty()),
    }
}

fn write(dir: &Path, relative: &str, text: &str) -> Result<String, NewError> {
    let path = dir.join(relative);
    let fail = |error| NewError::Write {
        path: path.clone(),
        error,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    std::fs::write(&path, text).map_err(fail)?;
    Ok(path.display().to_string())
}

/// What the templates' `{{…}}` stand for.
struct Vars {
    pairs: Vec<(&'static str, String)>,
}

impl Vars {
    fn new(name: &str, job: &dyn Job, scaffold: &dyn Scaffold, platform: Option<&str>) -> Vars {
        let eval = job.contract().eval.map_or("", |eval| eval.name());
        let entry = match platform {
            Some(p) => format!("`spec.job: {}`, `spec.platform: {p}`", job.name()),
            None => format!("`spec.job: {}`", job.name()),
        };
        Vars {
            pairs: vec![
                ("name", name.to_string()),
                ("lib", name.replace('-', "_")),
                ("job", job.name().to_string()),
                ("world", job.contract().world.to_string()),
                ("package", crate::wit::package().to_string()),
                ("platform", platform.unwrap_or_default().to_string()),
                ("wit_bindgen", WIT_BINDGEN.to_string()),
                ("what", scaffold.what(platform)),
                ("eval", eval.to_string()),
                ("entry", entry),
                ("limits", scaffold.limits(platform)),
            ],
        }
    }

    fn fill(&self, template: &str) -> String {
        self.pairs
            .iter()
            .fold(template.to_string(), |text, (key, value)| {
                text.replace(&format!("{{{{{key}}}}}"), value)
            })
    }
}

/// The lock file for the crate `name`: cargo keeps packages sorted by
/// name, so `--locked` accepts the file only with the crate's own entry at
/// its place among its dependencies'.
fn lock(template: &str, name: &str) -> String {
    const SEPARATOR: &str = "\n[[package]]\n";
    let mut blocks: Vec<String> = template.split(SEPARATOR).map(str::to_string).collect();
    let header = blocks.remove(0);
    let ours = blocks
        .iter()
        .position(|block| block.starts_with("name = \"{{name}}\"\n"))
        .map(|i| blocks.remove(i).replace("{{name}}", name));
    let block_name = |block: &str| {
        block
            .lines()
            .next()
            .unwrap_or_default()
            .trim_start_matches("name = \"")
            .trim_end_matches('"')
            .to_string()
    };
    if let Some(ours) = ours {
        let at = blocks
            .iter()
            .position(|block| block_name(block).as_str() > name)
            .unwrap_or(blocks.len());
        blocks.insert(at, ours);
    }
    std::iter::once(header)
        .chain(blocks)
        .collect::<Vec<_>>()
        .join(SEPARATOR)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(lock: &str) -> Vec<String> {
        lock.lines()
            .filter_map(|l| l.strip_prefix("name = \""))
            .map(|n| n.trim_end_matches('"').to_string())
            .collect()
    }

    /// Wherever the crate's name sorts, its entry lands there and the file
    /// stays sorted, as cargo writes it.
    #[test]
    fn the_lock_file_keeps_cargo_s_order_for_any_crate_name() {
        for name in ["a-guest", "my-gcp-guest", "serde-guest", "zz"] {
            let lock = lock(LOCK, name);
            let names = names(&lock);
            assert!(names.contains(&name.to_string()), "{name}: {names:?}");
            assert!(!lock.contains("{{"), "{name}");
            let mut sorted = names.clone();
            sorted.sort();
            assert_eq!(names, sorted, "{name}");
        }
    }

    /// The scaffold builds with the crates this workspace builds its own
    /// guests with: every package its lock holds, at the version this
    /// workspace's lock holds (when it holds that package), wit-bindgen
    /// among them at the pinned version.
    #[test]
    fn the_scaffold_pins_the_project_s_versions() {
        let workspace = include_str!("../../../Cargo.lock");
        let versions = |lock: &str| -> Vec<(String, String)> {
            let lines: Vec<&str> = lock.lines().collect();
            lines
                .windows(2)
                .filter_map(|pair| {
                    let name = pair[0].strip_prefix("name = \"")?.trim_end_matches('"');
                    let version = pair[1].strip_prefix("version = \"")?.trim_end_matches('"');
                    Some((name.to_string(), version.to_string()))
                })
                .collect()
        };
        let ours = versions(LOCK);
        let theirs = versions(workspace);
        assert!(
            ours.contains(&("wit-bindgen".to_string(), WIT_BINDGEN.to_string())),
            "{ours:?}"
        );
        assert!(theirs.contains(&("wit-bindgen".to_string(), WIT_BINDGEN.to_string())));
        for (name, version) in &ours {
            let same_name: Vec<&String> = theirs
                .iter()
                .filter(|(n, _)| n == name)
                .map(|(_, v)| v)
                .collect();
            assert!(
                same_name.is_empty() || same_name.contains(&version),
                "{name} {version} in the scaffold's lock, {same_name:?} in the workspace's"
            );
        }
    }

    /// Every job's crate, for a platform the host lets no guest patch
    /// where the job takes one.
    #[test]
    fn templates_fill_every_placeholder() {
        assert_eq!(scaffolds().count(), JOBS.iter().count());
        for (job, scaffold) in scaffolds() {
            let platform = scaffold.platform().map(|_| "Nutanix");
            let vars = Vars::new("my-guest", job, scaffold, platform);
            for (path, text) in COMMON.into_iter().chain(scaffold.templates()) {
                let filled = vars.fill(text);
                assert!(!filled.contains("{{"), "{}: {path}: {filled}", job.name());
            }
        }
    }

    #[test]
    fn only_a_folder_name_cargo_takes_names_the_crate() {
        assert_eq!(
            crate_name(Path::new("/tmp/my-gcp_guest2")).ok().as_deref(),
            Some("my-gcp_guest2")
        );
        for bad in [
            "/tmp/2guest",
            "/tmp/my guest",
            "/tmp/.hidden",
            "/",
            "/tmp/gäst",
        ] {
            assert!(crate_name(Path::new(bad)).is_err(), "{bad}");
        }
    }
}
