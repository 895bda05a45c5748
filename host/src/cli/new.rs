//! `mco-host guests new --job mcn|bootImage [--platform NAME] DIR`: a Rust
//! guest crate to start from. It builds a component against the WIT
//! package this binary embeds (written by the same code as `guests wit`),
//! depends on nothing of this repository (a user has only the binary),
//! pins wit-bindgen and every other crate through its own `Cargo.lock`,
//! and carries two cases its logic really decides, run by `make test`
//! (`cargo build --release --target wasm32-wasip2`, then `guests test`).
//! The templates are the files under `host/scaffold/`.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

#[derive(Args)]
pub(super) struct NewArgs {
    /// The job the guest serves.
    #[arg(long, value_enum)]
    job: NewJob,
    /// For `--job bootImage`: the Infrastructure `status.platformStatus.type`
    /// the guest serves (`GCP`, `AWS`, `Azure`, `Nutanix`, …).
    #[arg(long, value_name = "NAME")]
    platform: Option<String>,
    /// The crate's folder, new or empty; its name is the crate's.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

#[derive(Clone, Copy, ValueEnum)]
enum NewJob {
    /// The MachineConfigNode job (world `node-state-reporter`).
    Mcn,
    /// The boot image job of one platform (world `boot-image-selector`).
    #[value(name = "bootImage")]
    BootImage,
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
        "--job bootImage needs --platform NAME, the Infrastructure status.platformStatus.type it serves ({})",
        PLATFORMS.join(", ")
    )]
    NoPlatform,
    #[error("--platform {given:?} is not an OpenShift platform type ({})", PLATFORMS.join(", "))]
    Platform { given: String },
    #[error("--platform is for --job bootImage; the mcn job has one guest for every platform")]
    PlatformForMcn,
    #[error("writing {}: {error}", path.display())]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(transparent)]
    Wit(#[from] super::guests::GuestsError),
}

/// The values of Infrastructure `status.platformStatus.type`
/// (openshift/api `config/v1/types_infrastructure.go`, `PlatformType`).
const PLATFORMS: [&str; 16] = [
    "AWS",
    "Azure",
    "BareMetal",
    "GCP",
    "Libvirt",
    "OpenStack",
    "None",
    "VSphere",
    "oVirt",
    "IBMCloud",
    "KubeVirt",
    "EquinixMetal",
    "PowerVS",
    "AlibabaCloud",
    "Nutanix",
    "External",
];

/// The wit-bindgen the project's guests are built with: the scaffold's
/// `Cargo.toml` pins it and its `Cargo.lock` holds it.
const WIT_BINDGEN: &str = "0.61.1";

/// A template: where it goes in the crate, and its text.
type Template = (&'static str, &'static str);

const COMMON: [Template; 4] = [
    ("Cargo.toml", include_str!("../../scaffold/Cargo.toml")),
    ("Makefile", include_str!("../../scaffold/Makefile")),
    ("README.md", include_str!("../../scaffold/README.md")),
    (".gitignore", include_str!("../../scaffold/gitignore")),
];

/// `Cargo.lock` for a crate named `{{name}}`, which `lock` moves to its
/// sorted place.
/// The platforms whose boot image fields the host lets a guest patch (the
/// authority's field ownership); any other platform's guest may only
/// decide `noop`, `skip` or `error`.
fn patchable() -> impl Iterator<Item = &'static str> {
    let platforms = crate::bootimage::platform::PLATFORMS.iter();
    platforms
        .filter(|p| !p.about().owned.is_empty())
        .map(|p| p.about().name)
}

const LOCK: &str = include_str!("../../scaffold/Cargo.lock");

const MCN: [Template; 8] = [
    ("src/lib.rs", include_str!("../../scaffold/mcn/lib.rs")),
    (
        "cases/updated/node.yaml",
        include_str!("../../scaffold/mcn/cases/updated/node.yaml"),
    ),
    (
        "cases/updated/pools.yaml",
        include_str!("../../scaffold/mcn/cases/updated/pools.yaml"),
    ),
    (
        "cases/updated/expected.json",
        include_str!("../../scaffold/mcn/cases/updated/expected.json"),
    ),
    (
        "cases/updating/node.yaml",
        include_str!("../../scaffold/mcn/cases/updating/node.yaml"),
    ),
    (
        "cases/updating/pools.yaml",
        include_str!("../../scaffold/mcn/cases/updating/pools.yaml"),
    ),
    (
        "cases/updating/now.txt",
        include_str!("../../scaffold/mcn/cases/updating/now.txt"),
    ),
    (
        "cases/updating/expected.json",
        include_str!("../../scaffold/mcn/cases/updating/expected.json"),
    ),
];

/// The files of one boot image case, under `cases/<case>/`.
macro_rules! boot_image_case {
    ($case:literal) => {
        [
            (
                concat!("cases/", $case, "/machineset.yaml"),
                include_str!(concat!(
                    "../../scaffold/bootimage/cases/",
                    $case,
                    "/machineset.yaml"
                )),
            ),
            (
                concat!("cases/", $case, "/configmap.yaml"),
                include_str!(concat!(
                    "../../scaffold/bootimage/cases/",
                    $case,
                    "/configmap.yaml"
                )),
            ),
            (
                concat!("cases/", $case, "/infrastructure.yaml"),
                include_str!(concat!(
                    "../../scaffold/bootimage/cases/",
                    $case,
                    "/infrastructure.yaml"
                )),
            ),
            (
                concat!("cases/", $case, "/machineconfiguration.yaml"),
                include_str!(concat!(
                    "../../scaffold/bootimage/cases/",
                    $case,
                    "/machineconfiguration.yaml"
                )),
            ),
            (
                concat!("cases/", $case, "/expected.json"),
                include_str!(concat!(
                    "../../scaffold/bootimage/cases/",
                    $case,
                    "/expected.json"
                )),
            ),
        ]
    };
}

const BOOT_IMAGE_LIB: Template = (
    "src/lib.rs",
    include_str!("../../scaffold/bootimage/lib.rs"),
);
const BOOT_IMAGE_CASES: [[Template; 5]; 2] = [
    boot_image_case!("noop"),
    boot_image_case!("skip-no-arm64-images"),
];

pub(super) fn run(args: NewArgs) -> Result<Value, NewError> {
    let platform = match (args.job, args.platform) {
        (NewJob::Mcn, None) => None,
        (NewJob::Mcn, Some(_)) => return Err(NewError::PlatformForMcn),
        (NewJob::BootImage, None) => return Err(NewError::NoPlatform),
        (NewJob::BootImage, Some(p)) if PLATFORMS.contains(&p.as_str()) => Some(p),
        (NewJob::BootImage, Some(given)) => return Err(NewError::Platform { given }),
    };
    let name = crate_name(&args.dir)?;
    refuse_non_empty(&args.dir)?;
    let vars = Vars::new(&name, args.job, platform.as_deref());
    let templates: Vec<Template> = match args.job {
        NewJob::Mcn => MCN.to_vec(),
        NewJob::BootImage => std::iter::once(BOOT_IMAGE_LIB)
            .chain(BOOT_IMAGE_CASES.into_iter().flatten())
            .collect(),
    };
    let mut files = Vec::new();
    for (path, text) in COMMON.into_iter().chain(templates) {
        files.push(write(&args.dir, path, &vars.fill(text))?);
    }
    files.push(write(&args.dir, "Cargo.lock", &lock(LOCK, &name))?);
    let wit = super::wit::write(&args.dir.join("wit"))?;
    let host = std::env::current_exe().unwrap_or_else(|_| "mco-host".into());
    Ok(json!({
        "crate": name,
        "dir": args.dir.display().to_string(),
        "job": vars.job,
        "platform": platform,
        "package": crate::wit::package(),
        "files": files,
        "wit": wit["files"],
        "test": format!("cd {} && make test MCO_HOST={}", args.dir.display(), host.display()),
    }))
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
    job: &'static str,
    pairs: Vec<(&'static str, String)>,
}

impl Vars {
    fn new(name: &str, job: NewJob, platform: Option<&str>) -> Vars {
        let (job_name, world, what, eval, entry) = match job {
            NewJob::Mcn => (
                "mcn",
                "node-state-reporter",
                "A MachineConfigNode guest for mco-host: it derives each node's \
                 MachineConfigNode."
                    .to_string(),
                "mcn",
                "`spec.job: mcn`".to_string(),
            ),
            NewJob::BootImage => {
                let platform = platform.unwrap_or_default();
                (
                    "bootImage",
                    "boot-image-selector",
                    format!(
                        "A boot image guest for mco-host on {platform}: it decides each \
                         MachineSet's boot image update."
                    ),
                    "bootimage",
                    format!("`spec.job: bootImage`, `spec.platform: {platform}`"),
                )
            }
        };
        let limits = match platform {
            Some(p) if patchable().any(|known| known == p) => format!(
                "For {p} a patch may change only the boot image fields the host lets \
                 {p} change, to the image the stream publishes for the MachineSet's \
                 architecture."
            ),
            Some(p) => format!(
                "The host lets no guest patch a {p} MachineSet yet (it knows which \
                 fields are a boot image only for {}): a {p} guest decides `noop`, \
                 `skip` or `error`.",
                patchable().collect::<Vec<_>>().join(", ")
            ),
            None => "Its pool, config names and condition types must be ones the \
                     host passed or the MachineConfigNode CRD allows."
                .to_string(),
        };
        Vars {
            job: job_name,
            pairs: vec![
                ("name", name.to_string()),
                ("lib", name.replace('-', "_")),
                ("job", job_name.to_string()),
                ("world", world.to_string()),
                ("package", crate::wit::package().to_string()),
                ("platform", platform.unwrap_or_default().to_string()),
                ("wit_bindgen", WIT_BINDGEN.to_string()),
                ("what", what),
                ("eval", eval.to_string()),
                ("entry", entry),
                ("limits", limits),
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

    #[test]
    fn templates_fill_every_placeholder() {
        for (job, platform) in [(NewJob::Mcn, None), (NewJob::BootImage, Some("Nutanix"))] {
            let vars = Vars::new("my-guest", job, platform);
            for (path, text) in COMMON
                .into_iter()
                .chain(MCN)
                .chain([BOOT_IMAGE_LIB])
                .chain(BOOT_IMAGE_CASES.into_iter().flatten())
            {
                let filled = vars.fill(text);
                assert!(!filled.contains("{{"), "{path}: {filled}");
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
