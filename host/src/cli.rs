//! Command line: `eval` (one guest on objects from files) and `crds`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use k8s_openapi::jiff::Timestamp;

use crate::crd;
use crate::eval::{McnInputs, McnPaths};
use crate::inputs::InputError;
use crate::mcn;
use crate::runtime::{
    GuestError, GuestModule, LoadError, McnGuest, NODE_STATE_INTERFACE, Runtime, RuntimeConfig,
};

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
    Eval(EvalJob),
    /// Print the CustomResourceDefinitions this host owns, as YAML.
    Crds,
}

#[derive(Subcommand)]
enum EvalJob {
    /// Derive a node's MachineConfigNode.
    Mcn(McnArgs),
}

#[derive(Args)]
struct McnArgs {
    /// The Node.
    #[arg(long, value_name = "FILE")]
    node: String,
    /// All MachineConfigPools.
    #[arg(long, value_name = "FILE")]
    pools: Option<String>,
    /// Rendered MachineConfigs (to work out drain and post-config action).
    #[arg(long, value_name = "FILE")]
    machineconfigs: Option<String>,
    /// The node's MachineConfigNode as stored in the cluster.
    #[arg(long, value_name = "FILE")]
    previous: Option<String>,
    /// Guest component to run instead of the installed one.
    #[arg(long, value_name = "FILE")]
    guest: Option<PathBuf>,
    /// Time stamped on conditions that changed (RFC 3339; default: now).
    #[arg(long, value_name = "TIME")]
    now: Option<Timestamp>,
}

/// Limits every guest runs under.
#[derive(Args)]
struct SandboxArgs {
    /// Wall-clock budget of one guest evaluation.
    #[arg(long, global = true, default_value = "1s", value_parser = humantime::parse_duration, env = "MCO_GUEST_DEADLINE")]
    guest_deadline: Duration,
    /// Linear-memory cap of one guest, in MiB.
    #[arg(
        long,
        global = true,
        default_value_t = 64,
        env = "MCO_GUEST_MEMORY_MIB"
    )]
    guest_memory_mib: usize,
    /// Instantiate on demand instead of from the pooling allocator.
    #[arg(long, global = true, env = "MCO_NO_POOLING")]
    no_pooling: bool,
    /// Where installed guests live (default: `guests/` beside the binary).
    #[arg(long, global = true, value_name = "DIR", env = "MCO_GUEST_DIR")]
    guest_dir: Option<PathBuf>,
    /// Cache directory for compiled guests (default: no cache).
    #[arg(long, global = true, value_name = "DIR", env = "MCO_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
}

/// Why a command failed, mapped to the exit statuses of the eval contract.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Guest(#[from] GuestError),
    #[error("{0}")]
    Other(String),
}

impl Failure {
    fn exit_code(&self) -> u8 {
        match self {
            Failure::Input(_) | Failure::Load(LoadError::Read { .. }) => 2,
            Failure::Load(_) | Failure::Guest(_) => 3,
            Failure::Other(_) => 1,
        }
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("mco-host: {failure}");
            ExitCode::from(failure.exit_code())
        }
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Crds => {
            let yaml = crd::manifests().map_err(|e| Failure::Other(e.to_string()))?;
            print(&yaml)
        }
        Command::Eval(EvalJob::Mcn(args)) => {
            let output = eval_mcn(&cli.sandbox, args)?;
            print(&format!("{output}\n"))
        }
    }
}

fn print(text: &str) -> Result<(), Failure> {
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(|e| Failure::Other(format!("writing to stdout: {e}")))
}

impl SandboxArgs {
    fn runtime(&self) -> Result<Runtime, LoadError> {
        Runtime::new(RuntimeConfig {
            deadline: self.guest_deadline,
            memory_limit: self.guest_memory_mib.saturating_mul(1 << 20),
            pooling: !self.no_pooling,
            cache_dir: self.cache_dir.clone(),
            ..RuntimeConfig::default()
        })
    }

    /// The installed guest for a job: `<guest dir>/<file>`.
    fn installed_guest(&self, file: &str) -> PathBuf {
        let dir = self.guest_dir.clone().unwrap_or_else(|| {
            let exe = std::env::current_exe().unwrap_or_default();
            exe.parent().unwrap_or(Path::new(".")).join("guests")
        });
        dir.join(file)
    }
}

fn eval_mcn(sandbox: &SandboxArgs, args: McnArgs) -> Result<serde_json::Value, Failure> {
    let inputs = McnInputs::read(&McnPaths {
        node: &args.node,
        pools: args.pools.as_deref(),
        machineconfigs: args.machineconfigs.as_deref(),
        previous: args.previous.as_deref(),
    })?;
    let runtime = sandbox.runtime()?;
    let path = args
        .guest
        .unwrap_or_else(|| sandbox.installed_guest("mcn.wasm"));
    let guest = McnGuest::new(
        &runtime,
        GuestModule::from_file(&runtime, &path, NODE_STATE_INTERFACE)?,
    )?;
    let decision = guest.derive(&inputs.facts())?;
    mcn::validate(&decision).map_err(|detail| GuestError::InvalidOutput {
        guest: guest.module().name.clone(),
        detail,
    })?;
    Ok(inputs.output(decision, args.now.unwrap_or_else(Timestamp::now)))
}
