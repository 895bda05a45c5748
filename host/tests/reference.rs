//! The generated references under `docs/reference/` (the CLI, the shell
//! completions, the metric families) are what the built `mco-host` prints
//! now, so the docs cannot drift from the code; the hand-written metrics
//! page covers every family and no other; the bash completion completes
//! in a real bash; and the README's install and completion lines work as
//! written.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::cli::{run, stderr};

/// Every file `mco-host docs --out-dir` writes, relative to `docs/reference/`.
const GENERATED: [&str; 5] = [
    "cli.md",
    "metric-families.md",
    "completions/mco-host.bash",
    "completions/mco-host.zsh",
    "completions/mco-host.fish",
];

fn reference_dir() -> PathBuf {
    common::repo_root().join("docs/reference")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> BTreeSet<String> {
    let mut files = BTreeSet::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap_or_else(|e| panic!("{}: {e}", next.display()))
        {
            let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(relative) = path.strip_prefix(dir) {
                files.insert(relative.display().to_string());
            }
        }
    }
    files
}

#[test]
fn the_checked_in_references_are_what_the_binary_generates() {
    let out = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = out.path().display().to_string();
    let output = run(&["docs", "--out-dir", &dir], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let expected: BTreeSet<String> = GENERATED.iter().map(|f| f.to_string()).collect();
    assert_eq!(files_under(out.path()), expected);
    for file in GENERATED {
        let generated = read(&out.path().join(file));
        let committed = read(&reference_dir().join(file));
        assert!(
            generated == committed,
            "docs/reference/{file} is stale: run `make docs-ref`"
        );
    }
}

/// The families of the generated list, `mco_` prefixed.
fn generated_families() -> BTreeSet<String> {
    let list = read(&reference_dir().join("metric-families.md"));
    list.lines()
        .filter_map(|line| line.strip_prefix("| `")?.split_once('`'))
        .map(|(family, _)| family.to_owned())
        .collect()
}

/// What a series named on the metrics page belongs to: its family, the
/// counter and histogram suffixes taken off.
fn family_of(series: &str) -> &str {
    ["_total", "_bucket", "_sum", "_count"]
        .iter()
        .find_map(|suffix| series.strip_suffix(suffix))
        .unwrap_or(series)
}

/// The page that says what each series means and what to do about it is
/// written by hand: it must name every family `run` registers, and no
/// family it does not.
#[test]
fn the_metrics_page_explains_every_registered_family_and_no_other() {
    let families = generated_families();
    assert!(families.len() > 20, "{families:?}");
    let page = read(&reference_dir().join("metrics.md"));
    let named: BTreeSet<String> = page
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| word.starts_with("mco_") && word.len() > "mco_".len())
        .map(|series| {
            // A family whose name ends like a suffix is named as it is.
            let family = if families.contains(series) {
                series
            } else {
                family_of(series)
            };
            family.to_owned()
        })
        .collect();
    let unexplained: Vec<&String> = families.difference(&named).collect();
    assert!(
        unexplained.is_empty(),
        "docs/reference/metrics.md says nothing of {unexplained:?}"
    );
    let unknown: Vec<&String> = named.difference(&families).collect();
    assert!(
        unknown.is_empty(),
        "docs/reference/metrics.md names series no family serves: {unknown:?}"
    );
}

#[test]
fn completions_prints_the_checked_in_script_of_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let output = run(&["completions", shell], None);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{shell}: {}",
            stderr(&output)
        );
        let committed = read(&reference_dir().join(format!("completions/mco-host.{shell}")));
        assert!(
            String::from_utf8_lossy(&output.stdout) == committed,
            "docs/reference/completions/mco-host.{shell} is stale: run `make docs-ref`"
        );
    }
    let refused = run(&["completions", "tcsh"], None);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
}

#[test]
fn the_cli_reference_documents_each_visible_command_and_no_hidden_one() {
    let text = read(&reference_dir().join("cli.md"));
    for command in [
        "eval mcn",
        "eval bootimage",
        "run",
        "crds",
        "guests",
        "status",
        "preflight",
        "completions",
    ] {
        assert!(
            text.contains(&format!("## `mco-host {command}`")),
            "no section for {command}"
        );
    }
    assert!(!text.contains("`mco-host docs`"), "the hidden docs command");
    assert!(
        text.contains("| `MCO_REGISTRY_CRD` | `--registry-crd` | `run` |"),
        "the environment table"
    );
}

/// What the bash completion `script` offers for `line` (the word under
/// the cursor last), completed by a real bash: the function the script
/// registers for `mco-host` (`complete -F`), called as bash calls it.
fn bash_completes_with(script: &Path, line: &[&str]) -> Vec<String> {
    let words: Vec<String> = line.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'\n\
         COMP_WORDS=({})\n\
         COMP_CWORD={}\n\
         COMP_LINE=\"${{COMP_WORDS[*]}}\"\n\
         COMP_POINT=${{#COMP_LINE}}\n\
         spec=$(complete -p mco-host)\n\
         handler=${{spec#*-F }}\n\
         \"${{handler%% *}}\" mco-host \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        words.join(" "),
        line.len() - 1,
    );
    let output = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .unwrap_or_else(|e| panic!("bash: {e}"));
    assert!(
        output.status.success(),
        "bash: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut words: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .filter(|w| !w.is_empty())
        .collect();
    words.sort();
    words
}

/// [`bash_completes_with`] the checked-in script.
fn bash_completes(line: &[&str]) -> Vec<String> {
    bash_completes_with(&reference_dir().join("completions/mco-host.bash"), line)
}

#[test]
fn the_bash_completion_completes_commands_and_global_flags() {
    let commands = bash_completes(&["mco-host", "pre"]);
    assert_eq!(commands, ["preflight"], "{commands:?}");
    let commands = bash_completes(&["mco-host", "c"]);
    assert_eq!(commands, ["completions", "crds"], "{commands:?}");
    let flags = bash_completes(&["mco-host", "--guest-d"]);
    assert_eq!(flags, ["--guest-deadline", "--guest-dir"], "{flags:?}");
}

/// Below the first word too: a subcommand's subcommands, its flags and a
/// flag's values (clap_complete names the script's states wrongly for a
/// name with a hyphen, which `mco-host completions` works around).
#[test]
fn the_bash_completion_completes_subcommands_flags_and_values() {
    let commands = bash_completes(&["mco-host", "guests", ""]);
    for command in [
        "audit", "bench", "inspect", "new", "pull", "push", "test", "verify", "wit",
    ] {
        assert!(
            commands.iter().any(|c| c == command),
            "{command}: {commands:?}"
        );
    }
    let jobs = bash_completes(&["mco-host", "guests", "new", "--job", ""]);
    assert_eq!(jobs, ["bootImage", "mcn"], "{jobs:?}");
    let flags = bash_completes(&["mco-host", "eval", "mcn", "--n"]);
    assert_eq!(flags, ["--no-pooling", "--node", "--now"], "{flags:?}");
    let formats = bash_completes(&["mco-host", "status", "-o", ""]);
    assert_eq!(formats, ["json", "text"], "{formats:?}");
}

/// What fish offers for `line` from the checked-in fish completion
/// (`complete -C`), the candidates without their descriptions; `None`
/// where fish is not installed (bash is the shell the tests require).
fn fish_completes(line: &str) -> Option<Vec<String>> {
    let script = reference_dir().join("completions/mco-host.fish");
    let program = format!("source '{}'; complete -C '{line}'", script.display());
    let output = match Command::new("fish")
        .args(["--no-config", "-c", &program])
        .output()
    {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        result => result.unwrap_or_else(|e| panic!("fish: {e}")),
    };
    assert!(output.status.success(), "fish: {}", stderr(&output));
    let mut words: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split('\t').next())
        .map(str::to_owned)
        .collect();
    words.sort();
    Some(words)
}

#[test]
fn the_fish_completion_completes_subcommands_and_values() {
    let Some(commands) = fish_completes("mco-host guests ") else {
        eprintln!("fish is not installed: its completion is not run");
        return;
    };
    for command in ["audit", "bench", "new", "push", "test", "wit"] {
        assert!(
            commands.iter().any(|c| c == command),
            "{command}: {commands:?}"
        );
    }
    let jobs = fish_completes("mco-host guests new --job ");
    assert_eq!(
        jobs.as_deref(),
        Some(&["bootImage".to_owned(), "mcn".to_owned()][..])
    );
    let formats = fish_completes("mco-host status -o ");
    assert_eq!(
        formats.as_deref(),
        Some(&["json".to_owned(), "text".to_owned()][..])
    );
}

/// The fenced `sh` block that follows `heading` in README.md.
fn readme_block(heading: &str) -> String {
    let readme = read(&common::repo_root().join("README.md"));
    let after = readme
        .split_once(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no {heading:?}"))
        .1;
    let block = after
        .split_once("```sh\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .unwrap_or_else(|| panic!("no sh block under {heading:?}"))
        .0;
    block.to_owned()
}

/// `program` on `PATH`.
fn on_path(program: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| panic!("no {program} on PATH"))
}

/// The README's install and completion lines, run as written by bash in a
/// fresh HOME: the binary lands on `PATH` with the guests it loads, and
/// bash completes from the script they installed. `make` takes the host and
/// the guests as built (`-o`): `make test` built them before any test runs,
/// and building them again would rewrite the guests other tests are reading.
#[test]
fn the_readmes_install_and_completion_lines_work_as_written() {
    let lines = readme_block("## The command line on your machine");
    assert!(lines.contains("make install"), "{lines}");
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let shims = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let make = shims.path().join("make");
    std::fs::write(
        &make,
        format!(
            "#!/bin/sh\nexec '{}' -o guests -o host \"$@\"\n",
            on_path("make").display()
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut permissions = std::fs::metadata(&make)
        .unwrap_or_else(|e| panic!("{e}"))
        .permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&make, permissions).unwrap_or_else(|e| panic!("{e}"));
    let path = std::env::join_paths(std::iter::once(shims.path().to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let in_home = |script: &str| {
        Command::new("bash")
            .args(["--norc", "--noprofile", "-euo", "pipefail", "-c", script])
            .current_dir(common::repo_root())
            .env("HOME", home.path())
            .env("PATH", &path)
            .env("CARGO_TARGET_DIR", common::target_dir())
            .env_remove("MCO_GUEST_DIR")
            .env_remove("MCO_REGISTRY")
            .env_remove("PREFIX")
            // Not the jobserver of a `make test` this runs under.
            .env_remove("MAKEFLAGS")
            .env_remove("MAKELEVEL")
            .output()
            .unwrap_or_else(|e| panic!("bash: {e}"))
    };
    let installed = in_home(&lines);
    assert!(
        installed.status.success(),
        "{lines}\n{}{}",
        String::from_utf8_lossy(&installed.stdout),
        stderr(&installed)
    );
    // The linked binary finds its guests: every module loads.
    let guests = in_home("export PATH=\"$HOME/.local/bin:$PATH\"\nmco-host guests");
    assert!(guests.status.success(), "{}", stderr(&guests));
    let served = String::from_utf8_lossy(&guests.stdout);
    let guest_dir = home.path().join(".local/lib/mco-host/guests/mcn.wasm");
    assert!(
        served.contains(&guest_dir.display().to_string()),
        "{served}"
    );
    let script = home
        .path()
        .join(".local/share/bash-completion/completions/mco-host");
    let jobs = bash_completes_with(&script, &["mco-host", "guests", "new", "--job", ""]);
    assert_eq!(jobs, ["bootImage", "mcn"], "{jobs:?}");
}
