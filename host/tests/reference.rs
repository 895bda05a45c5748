//! The generated references under `docs/reference/` (the CLI, the shell
//! completions, the metric families) are what the built `mco-host` prints
//! now, so the docs cannot drift from the code; the hand-written metrics
//! page covers every family and no other; and the bash completion
//! completes in a real bash.

mod common;

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

/// What the checked-in bash completion offers for `line` (the word under
/// the cursor last), completed by a real bash: the function the script
/// registers for `mco-host` (`complete -F`), called as bash calls it.
fn bash_completes(line: &[&str]) -> Vec<String> {
    let script = reference_dir().join("completions/mco-host.bash");
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
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .filter(|w| !w.is_empty())
        .collect()
}

/// The top level only: clap_complete 4.6.12's bash script for a name
/// with a hyphen names its subcommands' cases `mco__subcmd__host__…` but
/// looks them up as `mco__host__…`, so below the top level it offers
/// nothing (zsh and fish are not affected).
#[test]
fn the_bash_completion_completes_commands_and_global_flags() {
    let commands = bash_completes(&["mco-host", "pre"]);
    assert_eq!(commands, ["preflight"], "{commands:?}");
    let mut commands = bash_completes(&["mco-host", "c"]);
    commands.sort();
    assert_eq!(commands, ["completions", "crds"], "{commands:?}");
    let flags = bash_completes(&["mco-host", "--guest-d"]);
    assert_eq!(flags, ["--guest-deadline", "--guest-dir"], "{flags:?}");
}
