//! The command line: `run` (the controllers), `eval` (one decision from
//! files, `eval.rs`), `guests` (a registry checked offline) and `crds`,
//! with the exit statuses of the eval contract.

mod bench;
mod eval;
mod guests;
mod guests_audit;
mod guests_command;
mod new;
mod offline;
mod preflight;
mod reference;
mod run;
pub mod status;
mod test;
mod verify;
mod wit;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use mco_job::crds::{FeatureSet, is_for_feature_set};
use mco_job::jobs;
use mco_job::manifests::InputError;
use mco_registry::table::{Location, Registry, RegistryError};
use mco_registry::{FetchError, JobError, StartError};
use mco_runtime::{GuestError, LoadError, Runtime, RuntimeConfig};

#[derive(Parser)]
#[command(
    name = "mco-host",
    version,
    about = "Runs OpenShift Machine Config logic as sandboxed WebAssembly guests"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    sandbox: SandboxArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Run one guest on objects read from files, without a cluster.
    #[command(subcommand)]
    Eval(eval::EvalJob),
    /// Run the controllers in the cluster.
    Run(Box<run::Run>),
    /// Print the CustomResourceDefinitions this host owns, as YAML.
    Crds(CrdsArgs),
    /// Write, test, time, compare, verify and publish guests, or check the
    /// registry's.
    ///
    /// Without a subcommand: load every module the registry names with
    /// every check `run` makes (digest, world, imports, limits, smoke
    /// evaluations) and print what would serve each entry, as JSON (file
    /// registries only). With one: scaffold a guest (`new`), write its WIT
    /// (`wit`), run cases against it (`test`), time it (`bench`), compare
    /// it with the active one (`audit`), check its signatures (`verify`),
    /// publish or fetch it as an OCI artifact (`push`, `pull`, `inspect`).
    Guests(guests_command::GuestsArgs),
    /// Show the update of every pool, the nodes in flight, boot images and
    /// guests at a glance (`kubectl mco status` as a kubectl plugin).
    Status(status::Status),
    /// Before installing: which ownership mode (observe, own) each job can
    /// run in on this cluster, and why (the MachineConfigNode CRD, the
    /// Machine Config Operator's writers seen, the host's RBAC), and
    /// whether the host may create the reviews `--admin-auth cluster` needs.
    Preflight(preflight::PreflightArgs),
    /// Print the shell completion script for SHELL (e.g. `source <(mco-host
    /// completions bash)`).
    Completions(reference::CompletionsArgs),
    /// Write the generated references (CLI, completions) under a
    /// directory: `make docs-ref`.
    #[command(hide = true)]
    Docs(reference::DocsArgs),
}

#[derive(Args)]
struct CrdsArgs {
    /// Write each CRD to the file `deploy/` keeps it in, under this
    /// directory instead (`make crds` gives `deploy`), every feature set's.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
    /// The feature set whose MachineConfigNode CRD is printed (one per
    /// set, all of one name, so a stream holds one of them).
    #[arg(
        long,
        value_enum,
        default_value = "Default",
        conflicts_with = "out_dir"
    )]
    feature_set: FeatureSet,
}

/// The help headings of [`SandboxArgs`]: the guests' limits and sources,
/// and the OCI registries modules are pulled from.
const GUEST_OPTIONS: &str = "Guest options";
const OCI_OPTIONS: &str = "OCI registry options";

/// The commands that neither run nor pull a guest, by their path below
/// `mco-host`: they accept the global [`SandboxArgs`] (which change
/// nothing there) but leave them out of their help.
const WITHOUT_GUESTS: [&[&str]; 5] = [
    &["crds"],
    &["status"],
    &["preflight"],
    &["completions"],
    &["guests", "new"],
];

/// The command line as parsed, shown in help and completed: the global
/// guest and OCI options hidden from the help of the commands they do
/// nothing for. `bin_name` is the name it is run (and completed) as.
fn command(bin_name: &str) -> clap::Command {
    let mut command = <Cli as clap::CommandFactory>::command().bin_name(bin_name);
    // The global options reach the subcommands when the command is built.
    command.build();
    let sandbox = SandboxArgs::augment_args(clap::Command::new(""));
    let ids: Vec<&clap::Id> = sandbox.get_arguments().map(clap::Arg::get_id).collect();
    for path in WITHOUT_GUESTS {
        let found = path.iter().try_fold(&mut command, |command, name| {
            command.find_subcommand_mut(name)
        });
        if let Some(sub) = found {
            // In place: a built command indexes its arguments by position.
            *sub = std::mem::take(sub).mut_args(|arg| {
                let hide = ids.contains(&arg.get_id());
                if hide { arg.hide(true) } else { arg }
            });
        }
    }
    command
}

/// Limits every guest runs under, and where guests come from. Global, so
/// they may stand before or after the subcommand; the commands that run
/// and pull no guest accept them but leave them out of their help
/// ([`WITHOUT_GUESTS`]).
#[derive(Args)]
#[command(next_help_heading = GUEST_OPTIONS)]
struct SandboxArgs {
    /// Wall-clock budget of one guest evaluation.
    #[arg(long, global = true, default_value = "1s", value_parser = humantime::parse_duration, env = "MCO_GUEST_DEADLINE")]
    guest_deadline: Duration,
    /// Linear-memory cap of one guest, in MiB.
    #[arg(
        long,
        global = true,
        default_value_t = mco_runtime::DEFAULT_MEMORY_MIB,
        env = "MCO_GUEST_MEMORY_MIB"
    )]
    guest_memory_mib: usize,
    /// The most a registry entry's `memoryMiB` may ask for, in MiB
    /// (default: --guest-memory-mib). Raising it raises no guest's cap: it
    /// admits entries that set a larger one of their own.
    #[arg(
        long,
        global = true,
        value_name = "MIB",
        env = "MCO_GUEST_MEMORY_MAX_MIB"
    )]
    guest_memory_max_mib: Option<usize>,
    /// Instantiate on demand instead of from the pooling allocator.
    #[arg(long, global = true, env = "MCO_NO_POOLING")]
    no_pooling: bool,
    /// Write `/tmp/perf-<pid>.map`, so that `perf record` / `perf report`
    /// name the guest's functions (docs/dev/benchmarks.md). The variable
    /// takes 1 or 0 as the benches do, as well as true or false.
    #[arg(long, global = true, env = "MCO_PERF_MAP",
          value_parser = clap::builder::BoolishValueParser::new())]
    perf_map: bool,
    /// Where installed guests live (default: `guests/` beside the binary).
    #[arg(long, global = true, value_name = "DIR", env = "MCO_GUEST_DIR")]
    guest_dir: Option<PathBuf>,
    /// Registry file mapping jobs and platforms to guest modules (default:
    /// the installed guests).
    #[arg(long, global = true, value_name = "FILE", env = "MCO_REGISTRY")]
    registry: Option<PathBuf>,
    /// Cache directory for compiled guests (default: no cache).
    #[arg(long, global = true, value_name = "DIR", env = "MCO_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
    /// Where modules pulled from OCI registries are kept, by digest: a
    /// module pinned by digest and cached here loads without its registry
    /// (default: no cache).
    #[arg(long, global = true, help_heading = OCI_OPTIONS, value_name = "DIR", env = "MCO_OCI_CACHE_DIR")]
    oci_cache_dir: Option<PathBuf>,
    /// An OCI registry (`host:port`) reached over plain HTTP, such as one on
    /// loopback; repeat for more, or separate them with commas.
    #[arg(
        long,
        global = true,
        help_heading = OCI_OPTIONS,
        value_name = "HOST",
        env = "MCO_PLAIN_HTTP_REGISTRIES",
        value_delimiter = ','
    )]
    plain_http_registry: Vec<String>,
    /// How long connecting to an OCI registry may take, TLS included
    /// (default: 10s).
    #[arg(long, global = true, help_heading = OCI_OPTIONS, value_name = "DURATION", env = "MCO_OCI_CONNECT_TIMEOUT",
          value_parser = humantime::parse_duration)]
    oci_connect_timeout: Option<Duration>,
    /// The longest an OCI registry may stay silent within an answer, its
    /// headers included, before the pull fails (default: 30s).
    #[arg(long, global = true, help_heading = OCI_OPTIONS, value_name = "DURATION", env = "MCO_OCI_READ_TIMEOUT",
          value_parser = humantime::parse_duration)]
    oci_read_timeout: Option<Duration>,
    /// How long one OCI pull may take in all: manifest, signatures, config
    /// and module layer (default: 60s).
    #[arg(long, global = true, help_heading = OCI_OPTIONS, value_name = "DURATION", env = "MCO_OCI_PULL_TIMEOUT",
          value_parser = humantime::parse_duration)]
    oci_pull_timeout: Option<Duration>,
    /// The largest module layer pulled from an OCI registry, in MiB; a
    /// larger one is refused, and one that sends more than it declares is
    /// cut off (default: 32).
    #[arg(
        long,
        global = true,
        help_heading = OCI_OPTIONS,
        value_name = "MIB",
        env = "MCO_OCI_MAX_MODULE_MIB"
    )]
    oci_max_module_mib: Option<usize>,
}

/// An error and its sources on one line, repeats left out and
/// credentials masked (kube's errors quote their sources).
pub(crate) use mco_http::Chain;

/// The cluster of `preflight`, `status` or `guests audit` could not be
/// reached: the causes on one line.
#[derive(Debug, thiserror::Error)]
#[error("connecting to the cluster: {}", Chain(.0.as_ref()))]
pub struct ConnectError(anyhow::Error);

/// The client of a command that reads the cluster (`run` connects with
/// its own message).
pub(crate) async fn connect(kubeconfig: Option<&Path>) -> Result<kube::Client, ConnectError> {
    mco_cluster::client::connect(kubeconfig)
        .await
        .map_err(ConnectError)
}

/// Why a command failed, mapped to the exit statuses of the eval contract.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error(transparent)]
    Pull(#[from] mco_fetch::oci::PullError),
    #[error(transparent)]
    Start(#[from] StartError),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Guest(#[from] GuestError),
    /// A job's `eval` input ([`jobs::EvalError::Input`]).
    #[error(transparent)]
    EvalInput(Box<dyn std::error::Error + Send + Sync>),
    #[error(transparent)]
    Status(#[from] status::StatusError),
    #[error(transparent)]
    Preflight(#[from] preflight::PreflightError),
    #[error(transparent)]
    Guests(#[from] guests::GuestsError),
    #[error(transparent)]
    Cases(#[from] crate::cases::FindError),
    #[error(transparent)]
    Bench(#[from] bench::BenchError),
    #[error(transparent)]
    New(#[from] new::NewError),
    #[error(transparent)]
    Audit(#[from] guests_audit::AuditError),
    #[error(transparent)]
    Verify(#[from] verify::VerifyError),
    #[error("{failed} of {total} cases failed")]
    CasesFailed { failed: usize, total: usize },
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("writing to stdout: {0}")]
    Stdout(std::io::Error),
    #[error("{0}")]
    Other(String),
}

impl From<jobs::EvalError> for Failure {
    fn from(err: jobs::EvalError) -> Failure {
        match err {
            jobs::EvalError::Input(e) => Failure::EvalInput(e),
            jobs::EvalError::Guest(e) => Failure::Guest(e),
            // What `eval`'s own modules returned, given back unchanged.
            jobs::EvalError::Modules(e) => match e.downcast::<Failure>() {
                Ok(failure) => *failure,
                Err(e) => Failure::Other(e.to_string()),
            },
            jobs::EvalError::Other(_) => Failure::Other(err.to_string()),
        }
    }
}

impl Failure {
    fn exit_code(&self) -> u8 {
        match self {
            Failure::Input(_)
            | Failure::EvalInput(_)
            | Failure::Registry(_)
            | Failure::Fetch(_)
            | Failure::Pull(_)
            | Failure::Cases(_)
            | Failure::New(_)
            | Failure::Verify(_)
            | Failure::Load(LoadError::Read { .. }) => 2,
            Failure::Start(StartError::Job {
                error: JobError::Load(LoadError::Read { .. }),
                ..
            }) => 2,
            Failure::Load(_)
            | Failure::Guest(_)
            | Failure::Start(StartError::Job {
                error: JobError::Load(_),
                ..
            }) => 3,
            Failure::Start(_) => 2,
            Failure::Bench(e) => e.exit_code(),
            Failure::Audit(e) => e.exit_code(),
            Failure::Status(_)
            | Failure::Preflight(_)
            | Failure::Guests(_)
            | Failure::CasesFailed { .. }
            | Failure::Runtime(_)
            | Failure::Stdout(_)
            | Failure::Other(_) => 1,
        }
    }

    /// Whatever read stdout closed it before the output was all written.
    fn is_closed_stdout(&self) -> bool {
        let error = match self {
            Failure::Stdout(e) | Failure::Status(status::StatusError::Output(e)) => e,
            _ => return false,
        };
        error.kind() == std::io::ErrorKind::BrokenPipe
    }
}

/// Installed as `kubectl-mco` (a symlink to `mco-host`), kubectl runs
/// `kubectl mco status` as `kubectl-mco status`: the same arguments, so
/// only the name shown in help and errors changes.
const KUBECTL_PLUGIN: &str = "kubectl-mco";

/// The binary's name, as help shows it and completions complete it.
const BIN: &str = "mco-host";

pub fn main() -> ExitCode {
    crate::install_crypto_provider();
    let as_plugin = std::env::args_os()
        .next()
        .map(PathBuf::from)
        .and_then(|p| p.file_name().map(|n| n == KUBECTL_PLUGIN))
        .unwrap_or(false);
    let command = command(if as_plugin { "kubectl mco" } else { BIN });
    let cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&command.get_matches()) {
        Ok(cli) => cli,
        Err(err) => err.exit(),
    };
    // The controller logs JSON at info for log pipelines; offline commands
    // log plain text and only warnings, as stdout carries their output.
    crate::telemetry::init(matches!(cli.command, Command::Run(_)));
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`mco-host completions zsh | head`): it has
        // all it wanted, and there is no one left to tell.
        Err(failure) if failure.is_closed_stdout() => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("mco-host: {failure}");
            ExitCode::from(failure.exit_code())
        }
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    let output = match cli.command {
        Command::Crds(args) => return write_crds(args.out_dir.as_deref(), args.feature_set),
        Command::Eval(job) => eval::eval(&cli.sandbox, &job)?,
        Command::Run(args) => return run::run_controllers(&cli.sandbox, *args),
        Command::Guests(args) => match args.action {
            None => eval::check_guests(&cli.sandbox)?,
            Some(guests_command::GuestsAction::Test(args)) => return test::run(&cli.sandbox, args),
            Some(guests_command::GuestsAction::Bench(args)) => {
                return bench::run(&cli.sandbox, args);
            }
            Some(guests_command::GuestsAction::Audit(args)) => {
                return guests_audit::run(&cli.sandbox, *args);
            }
            Some(guests_command::GuestsAction::Wit(args)) => wit::run(&cli.sandbox, args)?,
            Some(guests_command::GuestsAction::New(args)) => new::run(args)?,
            Some(guests_command::GuestsAction::Verify(args)) => verify::run(&cli.sandbox, *args)?,
            Some(guests_command::GuestsAction::Oci(action)) => guests::run(&cli.sandbox, action)?,
        },
        Command::Status(args) => return Ok(status::run(args)?),
        Command::Preflight(args) => return print(&format!("{}\n", preflight::run(args)?)),
        Command::Completions(args) => return reference::completions(&args),
        Command::Docs(args) => return reference::docs(&args),
    };
    print(&format!("{output}\n"))
}

fn print(text: &str) -> Result<(), Failure> {
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(Failure::Stdout)
}

impl SandboxArgs {
    fn runtime(&self) -> Result<Runtime, LoadError> {
        Runtime::new(RuntimeConfig {
            deadline: self.guest_deadline,
            memory_limit: self.guest_memory_mib.saturating_mul(1 << 20),
            memory_ceiling: self.memory_ceiling_mib().saturating_mul(1 << 20),
            pooling: !self.no_pooling,
            cache_dir: self.cache_dir.clone(),
            perf_map: self.perf_map,
            ..RuntimeConfig::default()
        })
    }

    /// `--guest-memory-max-mib`, never below `--guest-memory-mib`.
    fn memory_ceiling_mib(&self) -> usize {
        self.guest_memory_max_mib
            .unwrap_or(self.guest_memory_mib)
            .max(self.guest_memory_mib)
    }

    fn guest_dir(&self) -> PathBuf {
        self.guest_dir.clone().unwrap_or_else(|| {
            let exe = std::env::current_exe().unwrap_or_default();
            exe.parent().unwrap_or(Path::new(".")).join("guests")
        })
    }

    /// The registry file, or the installed guests; `run` may read the
    /// cluster's instead (`run.rs`).
    fn location(&self) -> Location {
        match &self.registry {
            Some(path) => Location::File(path.clone()),
            None => Location::Installed(self.guest_dir()),
        }
    }

    fn oci(&self) -> mco_fetch::oci::Oci {
        let default = mco_fetch::oci::PullLimits::default();
        let limits = mco_fetch::oci::PullLimits {
            connect: self.oci_connect_timeout.unwrap_or(default.connect),
            idle: self.oci_read_timeout.unwrap_or(default.idle),
            deadline: self.oci_pull_timeout.unwrap_or(default.deadline),
            max_module_bytes: self
                .oci_max_module_mib
                .map_or(default.max_module_bytes, |mib| mib.saturating_mul(1 << 20)),
        };
        mco_fetch::oci::Oci::with_limits(
            &self.plain_http_registry,
            self.oci_cache_dir.clone(),
            limits,
        )
    }

    fn registry(&self) -> Result<Registry, RegistryError> {
        mco_registry::read_local(&self.location(), &crate::JOBS)
    }
}

/// The CRDs of `feature_set` as one multi-document stream, or one file per
/// CRD of every set.
fn write_crds(out_dir: Option<&Path>, feature_set: FeatureSet) -> Result<(), Failure> {
    let mut all = String::new();
    let crds = crate::crds().map_err(|e| Failure::Other(e.to_string()))?;
    for (file, crd) in crds {
        if out_dir.is_none() && !is_for_feature_set(&crd, feature_set) {
            continue;
        }
        let yaml = serde_saphyr::to_string(&crd).map_err(|e| Failure::Other(e.to_string()))?;
        match out_dir {
            Some(dir) => {
                let path = dir.join(file);
                path.parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::write(&path, yaml))
                    .map_err(|e| Failure::Other(format!("{}: {e}", path.display())))?;
            }
            None => all.push_str(&format!("---\n{yaml}")),
        }
    }
    if out_dir.is_some() {
        Ok(())
    } else {
        print(&all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn help(path: &[&str]) -> String {
        let mut command = command(BIN);
        let mut sub = &mut command;
        for name in path {
            sub = sub
                .find_subcommand_mut(name)
                .unwrap_or_else(|| panic!("no {name}"));
        }
        sub.render_help().to_string()
    }

    #[test]
    fn the_guest_and_oci_options_have_headings_of_their_own() {
        let text = help(&["guests", "test"]);
        // Each heading above its own flags.
        let order = [
            "Guest options:",
            "--guest-deadline",
            "OCI registry options:",
            "--oci-pull-timeout",
        ]
        .map(|needle| {
            text.find(needle)
                .unwrap_or_else(|| panic!("{needle}: {text}"))
        });
        assert!(order.is_sorted(), "{text}");
    }

    /// Hidden where they do nothing, and still accepted there: they are
    /// global, so a script may give them before any subcommand.
    #[test]
    fn commands_without_guests_leave_their_options_out_of_help_only() {
        for path in WITHOUT_GUESTS {
            let text = help(path);
            assert!(!text.contains("--guest-deadline"), "{path:?}: {text}");
            assert!(!text.contains("--oci-pull-timeout"), "{path:?}: {text}");
        }
        let new = help(&["guests", "new"]);
        assert!(new.contains("--job") && new.contains("--platform"), "{new}");
        let args = ["mco-host", "status", "--guest-deadline", "2s", "-o", "json"];
        let matches = command(BIN)
            .try_get_matches_from(args)
            .unwrap_or_else(|e| panic!("{e}"));
        let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cli.sandbox.guest_deadline, Duration::from_secs(2));
    }

    #[derive(Debug, thiserror::Error)]
    #[error("failed to read kubeconfig: {0}")]
    struct Quoting(#[source] std::io::Error);

    /// A cluster that cannot be reached is said once, each cause once.
    #[test]
    fn a_connect_error_says_each_cause_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let error = anyhow::Error::new(Quoting(io)).context("no in-cluster config");
        assert_eq!(
            ConnectError(error).to_string(),
            "connecting to the cluster: no in-cluster config: failed to read kubeconfig: no such file"
        );
    }

    /// The commands that read the cluster say so in one message, whatever
    /// their own error type.
    #[tokio::test]
    async fn a_missing_kubeconfig_is_one_message_in_every_command() {
        async fn refused() -> ConnectError {
            match connect(Some(Path::new("/nonexistent/kubeconfig"))).await {
                Ok(_) => panic!("a missing kubeconfig connected"),
                Err(e) => e,
            }
        }
        let messages = [
            preflight::PreflightError::from(refused().await).to_string(),
            status::StatusError::from(refused().await).to_string(),
            guests_audit::AuditError::from(refused().await).to_string(),
        ];
        for message in &messages {
            assert!(
                message.starts_with("connecting to the cluster: reading /nonexistent/kubeconfig: "),
                "{message}"
            );
        }
        assert!(messages.iter().all(|m| m == &messages[0]), "{messages:?}");
    }
}
