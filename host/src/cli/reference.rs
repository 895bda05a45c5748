//! The references generated from the code, so they cannot drift from it:
//! the command line in Markdown (clap-markdown, from the clap definitions,
//! plus the environment variables they read), the shell completions
//! (clap_complete) and the metric families `run` registers.
//! `mco-host docs --out-dir docs/reference` writes them all (`make
//! docs-ref`); a test compares the checked-in files with what the binary
//! prints now.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{BIN, Cli, Failure};
use clap::{Args, Command, CommandFactory};
use clap_complete::Shell;

/// The name the bash script is generated for. clap_complete 4.6 turns the
/// `-` of a binary's name into `__` where its bash script names the states
/// of the subcommands and into `__subcmd__` where it matches them
/// (clap-rs/clap#6421), so for `mco-host` nothing below the first word
/// would complete. A name without one gives matching states; the script
/// then registers its function for [`BIN`].
const BASH_NAME: &str = "mco_host";

/// The shells whose completions are checked in.
const CHECKED_IN_SHELLS: [Shell; 3] = [Shell::Bash, Shell::Zsh, Shell::Fish];

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: Shell,
}

#[derive(Args)]
pub struct DocsArgs {
    /// Write `cli.md`, `metric-families.md` and
    /// `completions/mco-host.{bash,zsh,fish}` under this directory (`make
    /// docs-ref` gives `docs/reference`).
    #[arg(long, value_name = "DIR")]
    out_dir: PathBuf,
}

/// `mco-host completions SHELL`: the script on stdout.
pub fn completions(args: &CompletionsArgs) -> Result<(), Failure> {
    super::print(&completion(args.shell)?)
}

/// `mco-host docs --out-dir DIR`: every generated reference, each in its file.
pub fn docs(args: &DocsArgs) -> Result<(), Failure> {
    let mut files = vec![
        (PathBuf::from("cli.md"), cli_markdown()),
        (PathBuf::from("metric-families.md"), metrics_markdown()?),
    ];
    for shell in CHECKED_IN_SHELLS {
        let file = Path::new("completions").join(format!("{BIN}.{shell}"));
        files.push((file, completion(shell)?));
    }
    for (file, text) in files {
        let path = args.out_dir.join(file);
        path.parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, text))
            .map_err(|e| Failure::Other(format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

fn completion(shell: Shell) -> Result<String, Failure> {
    let name = if shell == Shell::Bash { BASH_NAME } else { BIN };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut super::command(name), name, &mut script);
    let script = String::from_utf8(script)
        .map_err(|e| Failure::Other(format!("the {shell} completion is not UTF-8: {e}")))?;
    if shell == Shell::Bash {
        register_bash_for_bin(&script)
    } else {
        Ok(script)
    }
}

/// The bash script generated for [`BASH_NAME`], its `complete` lines (the
/// only ones that end with the name) registering it for [`BIN`] instead.
fn register_bash_for_bin(script: &str) -> Result<String, Failure> {
    let mut registered = String::with_capacity(script.len());
    let mut registrations = 0;
    for line in script.split_inclusive('\n') {
        match line.trim_end().strip_suffix(&format!(" {BASH_NAME}")) {
            Some(start) if line.trim_start().starts_with("complete ") => {
                registrations += 1;
                registered.push_str(&format!("{start} {BIN}\n"));
            }
            _ => registered.push_str(line),
        }
    }
    if registrations == 0 {
        return Err(Failure::Other(format!(
            "the bash completion has no `complete … {BASH_NAME}` line to register for {BIN}"
        )));
    }
    Ok(registered)
}

/// Every command, flag and default as Markdown, then the environment
/// variables the flags read (clap-markdown leaves them out).
fn cli_markdown() -> String {
    let command = Cli::command();
    let options = clap_markdown::MarkdownOptions::new()
        .title(format!("The `{BIN}` command line"))
        .show_footer(false);
    let mut text = clap_markdown::help_markdown_command_custom(&command, &options);
    text.truncate(text.trim_end().len());
    text.push_str("\n\n");
    text.push_str(&environment_markdown(&command));
    text
}

/// Every family `run` registers, the job-free components' and each job's
/// (its flags at their defaults), with its HELP text.
fn metrics_markdown() -> Result<String, Failure> {
    let registry = crate::run::registered_at_defaults().map_err(Failure::Other)?;
    let mut text = String::from(
        "# Metric families\n\n\
         Every family `mco-host run` registers, with its HELP text, generated\n\
         by `make docs-ref`. Each is served with the prefix `mco_`; a counter\n\
         as `<name>_total`, a histogram as `<name>_bucket`, `_sum` and\n\
         `_count`. [Metrics](metrics.md) says what the labels mean and what\n\
         to do about each.\n\n\
         | Family | HELP |\n|---|---|\n",
    );
    for family in mco_job::metrics::families(&registry) {
        let help = family.help.replace('|', "\\|");
        let _ = writeln!(text, "| `mco_{}` | {help} |", family.name);
    }
    Ok(text)
}

/// The table of environment variables: each with its flag and the commands
/// that take it (a global flag: every command).
fn environment_markdown(root: &Command) -> String {
    let mut rows: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    let mut visit = vec![(Vec::<String>::new(), root)];
    while let Some((path, command)) = visit.pop() {
        for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
            let (Some(env), Some(long)) = (arg.get_env(), arg.get_long()) else {
                continue;
            };
            let used_by = if arg.is_global_set() {
                "every command".to_owned()
            } else {
                format!("`{}`", path.join(" "))
            };
            let row = rows
                .entry(env.to_string_lossy().into_owned())
                .or_insert_with(|| (format!("`--{long}`"), Vec::new()));
            if !row.1.contains(&used_by) {
                row.1.push(used_by);
            }
        }
        for sub in command.get_subcommands().filter(|c| !c.is_hide_set()) {
            let mut sub_path = path.clone();
            sub_path.push(sub.get_name().to_owned());
            visit.push((sub_path, sub));
        }
    }
    let mut text = String::from(
        "## Environment variables\n\n\
         A flag's variable sets it when the flag is not given.\n\n\
         | Variable | Flag | Commands |\n|---|---|---|\n",
    );
    for (env, (flag, mut used_by)) in rows {
        used_by.sort();
        let _ = writeln!(text, "| `{env}` | {flag} | {} |", used_by.join(", "));
    }
    text
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum;

    use super::*;

    #[test]
    fn every_shell_clap_complete_knows_is_accepted() {
        for shell in Shell::value_variants() {
            let script = completion(*shell).unwrap_or_else(|e| panic!("{shell}: {e}"));
            assert!(script.contains(BIN), "{shell}: {script}");
        }
    }

    #[test]
    fn the_environment_table_names_each_variable_once_with_its_flag() {
        let text = environment_markdown(&Cli::command());
        assert!(
            text.contains("| `MCO_GUEST_DEADLINE` | `--guest-deadline` | every command |"),
            "{text}"
        );
        assert!(
            text.contains("| `MCO_MCN_MODE` | `--mcn-mode` | `run` |"),
            "{text}"
        );
        assert_eq!(text.matches("`MCO_REGISTRY`").count(), 1, "{text}");
    }
}
