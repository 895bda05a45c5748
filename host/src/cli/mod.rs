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
pub mod status;
mod test;
mod verify;
mod wit;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::jobs;
use crate::manifests::InputError;
use crate::mcn::crd::{FeatureSet, is_for_feature_set};
use crate::runtime::{GuestError, LoadError, Runtime, RuntimeConfig};
use mco_registry::table::{Location, Registry, RegistryError};
use mco_registry::{FetchError, JobError, StartError};

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
    Run(Box<RunArgs>),
    /// Print the CustomResourceDefinitions this host owns, as YAML.
    Crds(CrdsArgs),
    /// Without a subcommand: load every module the registry names with
    /// every check `run` makes (digest, world, imports, limits, smoke
    /// evaluations) and print what would serve each entry, as JSON. File
    /// registries only. With one: publish and fetch guests as OCI artifacts.
    Guests(guests_command::GuestsArgs),
    /// Show the update of every pool, the nodes in flight, boot images and
    /// guests at a glance (`kubectl mco status` as a kubectl plugin).
    Status(status::StatusArgs),
    /// Before installing: which ownership mode (observe, own) each job can
    /// run in on this cluster, and why (the MachineConfigNode CRD, the
    /// Machine Config Operator's writers seen, the host's RBAC).
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

#[derive(Args)]
struct RunArgs {
    /// Kubeconfig to use (default: in-cluster config, or $KUBECONFIG).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// The host's ServiceAccount in its namespace: its `imagePullSecrets`
    /// serve `oci:` registry entries that name no `pullSecret` (the
    /// Deployment sets it from the Pod's `spec.serviceAccountName`).
    #[arg(long, value_name = "NAME", env = "MCO_SERVICE_ACCOUNT")]
    service_account: Option<String>,
    /// Namespace of the leader-election Lease.
    #[arg(long, env = "POD_NAMESPACE", default_value = "mco-system")]
    namespace: String,
    /// Name of the leader-election Lease.
    #[arg(long, default_value = "mco-host")]
    lease_name: String,
    /// This replica's identity in the Lease (default: $POD_NAME or $HOSTNAME).
    #[arg(long)]
    identity: Option<String>,
    /// How long a lease holder may be silent before a standby takes over.
    #[arg(long, default_value = "15s", value_parser = humantime::parse_duration)]
    lease_duration: Duration,
    /// Period of the full re-check of every node.
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
    resync: Duration,
    /// Address of /healthz, /readyz, /metrics, /guests and /ownership.
    #[arg(long, default_value = "0.0.0.0:8080")]
    admin_addr: std::net::SocketAddr,
    /// Who may read /metrics, /guests and /ownership: `cluster`, a bearer
    /// token the cluster accepts (TokenReview) of a user RBAC lets `get`
    /// the path (SubjectAccessReview, `nonResourceURLs`); `none`, anyone
    /// who reaches the address. /healthz and /readyz answer anyone.
    #[arg(long, value_enum, default_value = "cluster", env = "MCO_ADMIN_AUTH")]
    admin_auth: crate::admin::auth::AdminAuth,
    /// Also run the managed boot image controller (needs the RBAC in
    /// deploy/boot-images). MachineSets are touched only when enrolled in
    /// MachineConfiguration `cluster`.
    #[arg(long, env = "MCO_BOOT_IMAGES")]
    boot_images: bool,
    /// The MCN job's ownership mode: `own` writes MCNs, but refuses while
    /// the Machine Config Operator's daemon writes their conditions;
    /// `observe` writes none, and compares what it derives with the
    /// stored MCNs (metrics, Events, `/ownership`).
    #[arg(long, value_enum, default_value = "own", env = "MCO_MCN_MODE")]
    mcn_mode: crate::ownership::Mode,
    /// The boot image job's ownership mode: `own` patches MachineSets, but
    /// refuses while the operator's boot image controller writes its
    /// conditions on MachineConfiguration `cluster`; `observe` patches
    /// nothing and compares its plan with the MachineSets.
    #[arg(long, value_enum, default_value = "own", env = "MCO_BOOT_IMAGES_MODE")]
    boot_images_mode: crate::ownership::Mode,
    /// ConfigMap (in --namespace) where the boot image controller keeps its
    /// hot-loop record and the boot images it has seen.
    #[arg(long, default_value = "mco-host-boot-images", value_name = "NAME")]
    boot_image_state: String,
    /// ConfigMap (in --namespace) listing more boot images that count as
    /// RHCOS, one per line in any key.
    #[arg(long, value_name = "NAME")]
    known_images_configmap: Option<String>,
    /// How long MachineConfiguration `cluster` may be missing or behind its
    /// spec before boot image updates report Degraded.
    #[arg(long, default_value = "2m", value_parser = humantime::parse_duration)]
    machineconfiguration_wait: Duration,
    /// vSphere: where RHCOS OVAs are kept, by digest, between imports (the
    /// Deployment mounts an emptyDir here).
    #[arg(
        long,
        default_value = "/var/cache/mco-host/ova",
        env = "MCO_OVA_CACHE_DIR"
    )]
    ova_cache_dir: PathBuf,
    /// vSphere: the OVA cache directory's size bound in MiB, the download
    /// under way included (an RHCOS OVA is about 1.2 GiB; a larger one is
    /// refused). At most the size of the volume it is on.
    #[arg(
        long,
        default_value_t = crate::bootimage::vcenter::live::DEFAULT_OVA_CACHE_MAX_MIB,
        env = "MCO_OVA_CACHE_MAX_MIB"
    )]
    ova_cache_max_mib: u64,
    /// vSphere: a PEM bundle of the CAs vCenter certificates are checked
    /// against (default: the system's roots).
    #[arg(long, value_name = "FILE", env = "MCO_VCENTER_CA_FILE")]
    vcenter_ca_file: Option<PathBuf>,
    /// vSphere: do not check vCenter certificates at all, as upstream's
    /// controller does not (anyone on the path can then read the password).
    #[arg(
        long,
        conflicts_with = "vcenter_ca_file",
        env = "MCO_VCENTER_INSECURE_SKIP_VERIFY"
    )]
    vcenter_insecure_skip_verify: bool,
    /// vSphere: how long one vCenter call may take.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    vcenter_call_timeout: Duration,
    /// vSphere: how long one vCenter task (rename, destroy, an import lease
    /// getting ready) may take.
    #[arg(long, default_value = "10m", value_parser = humantime::parse_duration)]
    vcenter_task_timeout: Duration,
    /// vSphere: how long one OVA download or disk upload may take.
    #[arg(long, default_value = "60m", value_parser = humantime::parse_duration)]
    vcenter_transfer_timeout: Duration,
    /// AWS: the EC2 endpoint of every region (a VPC or private endpoint,
    /// moto in the tests), instead of `https://ec2.<region>.amazonaws.com/`.
    #[arg(long, value_name = "URL", env = "MCO_EC2_ENDPOINT")]
    ec2_endpoint: Option<String>,
    /// AWS: how long connecting to EC2 may take.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    ec2_connect_timeout: Duration,
    /// AWS: how long an EC2 answer may stall between two reads.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    ec2_read_timeout: Duration,
    /// AWS: how long one EC2 call (one page of a listing) may take.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    ec2_call_timeout: Duration,
    /// Refuse to start when a registry entry cannot load, instead of
    /// serving the module that last served it (or the installed one) and
    /// reporting the entry degraded.
    #[arg(long, env = "MCO_STRICT_START")]
    strict_start: bool,
    /// Read the registry from key `registry.yaml` of this ConfigMap in the
    /// host's namespace instead; relative module paths follow the guest
    /// directory.
    #[arg(
        long,
        value_name = "NAME",
        env = "MCO_REGISTRY_CONFIGMAP",
        conflicts_with = "registry"
    )]
    registry_configmap: Option<String>,
    /// Read the registry from the MachineConfigGuest objects instead: one
    /// per job, jobs without one run the installed guests, and
    /// the lease holder writes what serves into their status. `--registry`
    /// and `--registry-configmap` take precedence.
    #[arg(long, env = "MCO_REGISTRY_CRD")]
    registry_crd: bool,
    /// How often the registry and its modules are re-read to swap changed
    /// guests in.
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration, env = "MCO_REGISTRY_POLL")]
    registry_poll: Duration,
}

/// Limits every guest runs under, and where guests come from.
#[derive(Args)]
struct SandboxArgs {
    /// Wall-clock budget of one guest evaluation.
    #[arg(long, global = true, default_value = "1s", value_parser = humantime::parse_duration, env = "MCO_GUEST_DEADLINE")]
    guest_deadline: Duration,
    /// Linear-memory cap of one guest, in MiB.
    #[arg(
        long,
        global = true,
        default_value_t = crate::runtime::DEFAULT_MEMORY_MIB,
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
    #[arg(long, global = true, value_name = "DIR", env = "MCO_OCI_CACHE_DIR")]
    oci_cache_dir: Option<PathBuf>,
    /// An OCI registry (`host:port`) reached over plain HTTP, such as one on
    /// loopback; repeat for more, or separate them with commas.
    #[arg(
        long,
        global = true,
        value_name = "HOST",
        env = "MCO_PLAIN_HTTP_REGISTRIES",
        value_delimiter = ','
    )]
    plain_http_registry: Vec<String>,
    /// How long connecting to an OCI registry may take, TLS included
    /// (default: 10s).
    #[arg(long, global = true, value_name = "DURATION", env = "MCO_OCI_CONNECT_TIMEOUT",
          value_parser = humantime::parse_duration)]
    oci_connect_timeout: Option<Duration>,
    /// The longest an OCI registry may stay silent within an answer, its
    /// headers included, before the pull fails (default: 30s).
    #[arg(long, global = true, value_name = "DURATION", env = "MCO_OCI_READ_TIMEOUT",
          value_parser = humantime::parse_duration)]
    oci_read_timeout: Option<Duration>,
    /// How long one OCI pull may take in all: manifest, signatures, config
    /// and module layer (default: 60s).
    #[arg(long, global = true, value_name = "DURATION", env = "MCO_OCI_PULL_TIMEOUT",
          value_parser = humantime::parse_duration)]
    oci_pull_timeout: Option<Duration>,
    /// The largest module layer pulled from an OCI registry, in MiB; a
    /// larger one is refused, and one that sends more than it declares is
    /// cut off (default: 32).
    #[arg(
        long,
        global = true,
        value_name = "MIB",
        env = "MCO_OCI_MAX_MODULE_MIB"
    )]
    oci_max_module_mib: Option<usize>,
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
            jobs::EvalError::Other(_) | jobs::EvalError::NoEval(_) => {
                Failure::Other(err.to_string())
            }
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
            | Failure::Other(_) => 1,
        }
    }
}

/// Installed as `kubectl-mco` (a symlink to `mco-host`), kubectl runs
/// `kubectl mco status` as `kubectl-mco status`: the same arguments, so
/// only the name shown in help and errors changes.
const KUBECTL_PLUGIN: &str = "kubectl-mco";

pub fn main() -> ExitCode {
    crate::install_crypto_provider();
    let as_plugin = std::env::args_os()
        .next()
        .map(PathBuf::from)
        .and_then(|p| p.file_name().map(|n| n == KUBECTL_PLUGIN))
        .unwrap_or(false);
    let mut command = <Cli as clap::CommandFactory>::command();
    if as_plugin {
        command = command.bin_name("kubectl mco");
    }
    let cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&command.get_matches()) {
        Ok(cli) => cli,
        Err(err) => err.exit(),
    };
    // The controller logs JSON at info for log pipelines; offline commands
    // log plain text and only warnings, as stdout carries their output.
    crate::telemetry::init(matches!(cli.command, Command::Run(_)));
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
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
        Command::Run(args) => return run_controllers(&cli.sandbox, *args),
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
        .map_err(|e| Failure::Other(format!("writing to stdout: {e}")))
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
    /// cluster's instead ([`RunArgs::location`]).
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
    for (file, crd) in crate::crds() {
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

fn run_controllers(sandbox: &SandboxArgs, args: RunArgs) -> Result<(), Failure> {
    let guests = mco_registry::swap::Config {
        runtime: sandbox.runtime()?,
        jobs: &crate::JOBS,
        location: args.location(sandbox),
        poll: args.registry_poll,
        oci: sandbox.oci(),
        strict_start: args.strict_start,
        installed: Registry::installed(&sandbox.guest_dir(), &crate::JOBS),
        service_account: args.service_account.clone(),
    };
    let identity = args
        .identity
        .clone()
        .or_else(|| std::env::var("POD_NAME").ok())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .ok_or_else(|| Failure::Other("no --identity, $POD_NAME or $HOSTNAME".into()))?;
    let options = args.into_options(identity)?;
    let tokio = tokio::runtime::Runtime::new().map_err(|e| Failure::Other(e.to_string()))?;
    tokio
        .block_on(crate::run::run(options, guests))
        .map_err(|e| Failure::Other(format!("{e:#}")))
}

impl RunArgs {
    fn location(&self, sandbox: &SandboxArgs) -> Location {
        let guest_dir = sandbox.guest_dir();
        match (&sandbox.registry, &self.registry_configmap) {
            (Some(path), _) => Location::File(path.clone()),
            (None, Some(name)) => Location::ConfigMap {
                name: name.clone(),
                guest_dir,
            },
            (None, None) if self.registry_crd => Location::Crd { guest_dir },
            (None, None) => Location::Installed(guest_dir),
        }
    }

    fn into_options(self, identity: String) -> Result<crate::run::RunOptions, Failure> {
        let boot_images = if self.boot_images {
            Some(crate::run::BootImageOptions {
                mode: self.boot_images_mode,
                state_configmap: self.boot_image_state,
                known_images_configmap: self.known_images_configmap,
                machineconfiguration_wait: self.machineconfiguration_wait,
                control_plane_arch: host_stream_arch()?.to_owned(),
                vsphere: crate::bootimage::vcenter::live::Options {
                    ova_cache: self.ova_cache_dir,
                    ova_cache_max_bytes: self.ova_cache_max_mib.saturating_mul(1 << 20),
                    trust: match (&self.vcenter_ca_file, self.vcenter_insecure_skip_verify) {
                        (Some(file), _) => {
                            mco_vsphere::Trust::Pem(std::fs::read(file).map_err(|e| {
                                Failure::Other(format!("--vcenter-ca-file {}: {e}", file.display()))
                            })?)
                        }
                        (None, true) => mco_vsphere::Trust::InsecureSkipVerify,
                        (None, false) => mco_vsphere::Trust::Public,
                    },
                    timeouts: mco_vsphere::Timeouts {
                        call: self.vcenter_call_timeout,
                        task: self.vcenter_task_timeout,
                        transfer: self.vcenter_transfer_timeout,
                    },
                },
                ec2: crate::bootimage::ec2::live::Options {
                    endpoint: self.ec2_endpoint,
                    timeouts: mco_ec2::Timeouts {
                        connect: self.ec2_connect_timeout,
                        read: self.ec2_read_timeout,
                        call: self.ec2_call_timeout,
                    },
                },
            })
        } else {
            None
        };
        Ok(crate::run::RunOptions {
            kubeconfig: self.kubeconfig,
            namespace: self.namespace,
            lease_name: self.lease_name,
            identity,
            lease_duration: self.lease_duration,
            resync: self.resync,
            admin_addr: self.admin_addr,
            admin_auth: self.admin_auth,
            mcn_mode: self.mcn_mode,
            boot_images,
        })
    }
}

fn host_stream_arch() -> Result<&'static str, Failure> {
    crate::bootimage::host_stream_arch().map_err(Failure::Other)
}
