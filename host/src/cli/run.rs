//! `mco-host run`: the host's flags ([`RunArgs`]) and every job's
//! ([`Contract::run`](mco_job::jobs::Contract::run)), read into what [`crate::run`] starts.

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgMatches, Args, FromArgMatches};

use super::{Failure, SandboxArgs};
use mco_registry::table::{Location, Registry};

/// `run`: the host's flags, and the matches each job reads its own from
/// ([`RunCommand::runner`](mco_job::jobs::RunCommand::runner)).
pub(super) struct Run {
    args: RunArgs,
    matches: ArgMatches,
}

impl FromArgMatches for Run {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Run, clap::Error> {
        Ok(Run {
            args: RunArgs::from_arg_matches(matches)?,
            matches: matches.clone(),
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Run::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for Run {
    /// The host's flags, then each job's in [`JOBS`](crate::JOBS) order.
    fn augment_args(command: clap::Command) -> clap::Command {
        crate::run::job_args(RunArgs::augment_args(command))
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Run::augment_args(command)
    }
}

/// The host's own flags of `run`, the same whatever jobs it runs.
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
    /// How long an `oci:` module pulled well serves without its registry
    /// being asked again: a tag moved to another module is noticed within
    /// this and one --registry-poll. A changed entry, other credentials or
    /// keys, and a failed pull are pulled at the next poll.
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration, env = "MCO_OCI_REFRESH")]
    oci_refresh: Duration,
}

/// Reads every flag (each job's too), then runs the host until SIGTERM.
pub(super) fn run_controllers(sandbox: &SandboxArgs, run: Run) -> Result<(), Failure> {
    let Run { args, matches } = run;
    let guests = mco_registry::swap::Config {
        runtime: sandbox.runtime()?,
        jobs: &crate::JOBS,
        gates: &crate::FEATURE_GATES,
        location: args.location(sandbox),
        poll: args.registry_poll,
        oci_refresh: args.oci_refresh,
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
    let prepared = crate::run::prepare(&matches).map_err(|e| Failure::Other(e.to_string()))?;
    let options = crate::run::RunOptions {
        kubeconfig: args.kubeconfig,
        namespace: args.namespace,
        lease_name: args.lease_name,
        identity,
        lease_duration: args.lease_duration,
        resync: args.resync,
        admin_addr: args.admin_addr,
        admin_auth: args.admin_auth,
    };
    let tokio = tokio::runtime::Runtime::new().map_err(|e| Failure::Other(e.to_string()))?;
    tokio
        .block_on(crate::run::run(options, prepared, guests))
        .map_err(|e| Failure::Other(super::Chain(e.as_ref()).to_string()))
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
}
