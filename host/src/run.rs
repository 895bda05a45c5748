//! `mco-host run`: the composition root of the in-cluster host — client,
//! admin server, lease, the shared watches, each job's controller (started
//! through [`Runner`], `run_context`) — and a clean shutdown on SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::Context as _;
use clap::ArgMatches;
use kube::Api;
use kube_lease_manager::LeaseManagerBuilder;
use prometheus_client::registry::Registry;

use futures::FutureExt;
use tokio::sync::Notify;

use crate::admin::{self, AdminState};
use mco_cluster::FIELD_MANAGER;
use mco_cluster::decode::Failures;
use mco_cluster::resources::{
    CLUSTER_VERSION, FEATURE_GATE, MACHINE_CONFIGURATION, MACHINE_CONFIGURATION_WATCH,
};
use mco_cluster::watch::{Readiness, latest, latest_optional};
use mco_job::feature_gates;
use mco_job::jobs::{Job, RunCommand};
use mco_job::leadership;
use mco_job::metrics::{self, Metrics};
use mco_job::ownership::Ownership;
use mco_job::run_context::{RunContext, Runner, RunnerError};
use mco_registry::swap;

/// The `/readyz` subject of the guests while they load.
const GUESTS_LOADING: &str = "guests";

/// How long shutdown waits for the lease to be released.
const LEASE_RELEASE_WAIT: Duration = Duration::from_secs(3);

pub struct RunOptions {
    pub kubeconfig: Option<PathBuf>,
    pub namespace: String,
    pub lease_name: String,
    pub identity: String,
    pub lease_duration: Duration,
    pub resync: Duration,
    pub admin_addr: SocketAddr,
    pub admin_auth: admin::auth::AdminAuth,
}

/// What `run` registered and will start before it connects ([`prepare`]).
pub struct Prepared {
    /// Every family of the host: the job-free components' and each job's.
    pub registry: Registry,
    /// The job-free components' series.
    pub metrics: Metrics,
    /// The jobs to start, in [`JOBS`](crate::JOBS) order, by name.
    pub jobs: Vec<(&'static str, Box<dyn Runner>)>,
}

/// Registers every family and reads each job's flags from `matches` (the
/// `run` subcommand's): a flag a job cannot use stops the host before it
/// connects.
pub fn prepare(matches: &ArgMatches) -> Result<Prepared, RunnerError> {
    let mut registry = Registry::default();
    let prefixed = metrics::prefixed(&mut registry);
    let metrics = Metrics::register(prefixed);
    let mut jobs = Vec::new();
    for (job, run) in runs() {
        if let Some(runner) = run.runner(matches, prefixed)? {
            jobs.push((job.name(), runner));
        }
    }
    Ok(Prepared {
        registry,
        metrics,
        jobs,
    })
}

/// The jobs that have a `run` side, in [`JOBS`](crate::JOBS) order.
fn runs() -> impl Iterator<Item = (&'static dyn Job, &'static dyn RunCommand)> {
    crate::JOBS
        .iter()
        .filter_map(|job| Some((job, job.contract().run?)))
}

/// `command` with every job's `run` flags added, in
/// [`JOBS`](crate::JOBS) order.
pub fn job_args(command: clap::Command) -> clap::Command {
    runs().fold(command, |command, (_, run)| run.args(command))
}

/// The families [`prepare`] registers with every job's `run` flags at
/// their defaults: what the metrics reference lists.
pub fn registered_at_defaults() -> Result<Registry, String> {
    let matches = job_args(clap::Command::new("run"))
        .try_get_matches_from(["run"])
        .map_err(|e| format!("the jobs' run flags: {e}"))?;
    prepare(&matches)
        .map(|prepared| prepared.registry)
        .map_err(|e| e.to_string())
}

pub async fn run(
    options: RunOptions,
    prepared: Prepared,
    guests: swap::Config,
) -> anyhow::Result<()> {
    let client = mco_cluster::client::connect(options.kubeconfig.as_deref()).await?;
    let Prepared {
        registry,
        metrics,
        jobs,
    } = prepared;
    let ns = &options.namespace;
    // The admin server answers /healthz while the guests load below (their
    // OCI pulls each within its deadline); /readyz waits for them and for
    // the controllers' watches, registered before the problem clears.
    let readiness = Readiness::default();
    readiness.set_problem(GUESTS_LOADING, Some("the guests are loading".into()));
    let ownership = Ownership::new(metrics.ownership.clone());
    let loaded_guests = Arc::new(OnceLock::new());
    let admin = AdminState {
        registry: Arc::new(registry),
        readiness: readiness.clone(),
        guests: loaded_guests.clone(),
        ownership: ownership.clone(),
        auth: options.admin_auth.authorizer(&client),
    };
    let admin = tokio::spawn(admin::serve(options.admin_addr, admin));
    // The guests load before this replica competes for the lease, so a
    // replica whose guests cannot load never holds it; they learn of the
    // lease through this channel once it exists.
    let (lease_held, guests_leader) = tokio::sync::watch::channel(false);
    let cluster = swap::Cluster {
        namespace: ns,
        identity: &options.identity,
        leader: guests_leader,
    };
    let guests = swap::start(guests, client.clone(), cluster, &metrics.registry).await?;
    let _ = loaded_guests.set(guests.clone());

    let lease_seconds = options.lease_duration.as_secs().max(2);
    let lease_grace = (lease_seconds / 3).max(1);
    let lease = LeaseManagerBuilder::new(client.clone(), &options.lease_name)
        .with_namespace(&options.namespace)
        .with_identity(&options.identity)
        .with_duration(lease_seconds)
        .with_grace(lease_grace)
        .with_field_manager(FIELD_MANAGER)
        .build()
        .await
        .context("setting up the leader-election lease")?;
    let (manager, lease_task) = lease.watch().await;
    tracing::info!(identity = %options.identity, lease = %options.lease_name, namespace = %options.namespace, "waiting for the lease");
    // The lease manager does not report a renewal that fails: the host
    // follows its term itself, and everything that writes asks it.
    let (leadership, follow_lease) = leadership::follow(
        Api::namespaced(client.clone(), &options.namespace),
        leadership::LeaseSettings {
            name: options.lease_name.clone(),
            identity: options.identity.clone(),
            grace: Duration::from_secs(lease_grace),
        },
        manager,
        metrics.leadership.clone(),
    );
    let follow_lease = tokio::spawn(follow_lease);
    let leader = leadership.held();
    let forward_leader = {
        let mut leader = leader.clone();
        async move {
            loop {
                let is_leader = *leader.borrow_and_update();
                lease_held.send_replace(is_leader);
                tracing::info!(leader = is_leader, "leadership changed");
                if leader.changed().await.is_err() {
                    break;
                }
            }
        }
    };
    let forward_leader = tokio::spawn(forward_leader);

    // A job whose controller stops abnormally (a panic) stops the host, so
    // the Pod restarts with every job rather than run on without one.
    let job_failed = Arc::new(Notify::new());
    let shutdown = {
        let job_failed = job_failed.clone();
        async move {
            tokio::select! {
                () = shutdown_signal() => {}
                () = job_failed.notified() => tracing::error!("shutting down: a job's controller stopped"),
            }
        }
        .boxed()
        .shared()
    };
    // Every job's controller registers its watches before the guests'
    // problem clears, so /readyz is never ready before they listed.
    // MachineConfiguration `cluster`, the operator's configuration, is
    // read by every job: one watch, shared.
    // An object of any watch that cannot be decoded is reported by one
    // reporter, so an object two watches share is reported once.
    let failures = Failures::new(client.clone(), &options.identity, metrics.cluster.clone());
    let (machineconfiguration, watch_machineconfiguration) = latest(
        Api::all_with(client.clone(), &MACHINE_CONFIGURATION.api_resource()),
        "cluster",
        readiness.watch(MACHINE_CONFIGURATION_WATCH),
        failures.clone(),
    );
    let machineconfiguration_watch = tokio::spawn(watch_machineconfiguration);
    // The feature gates, which every job follows. Plain Kubernetes serves
    // neither kind: the Default feature set applies.
    let (featuregate, watch_featuregate) = latest_optional(
        Api::all_with(client.clone(), &FEATURE_GATE.api_resource()),
        "cluster",
        readiness.watch(feature_gates::SOURCES[0]),
        failures.clone(),
    );
    let (clusterversion, watch_clusterversion) = latest_optional(
        Api::all_with(client.clone(), &CLUSTER_VERSION.api_resource()),
        "version",
        readiness.watch(feature_gates::SOURCES[1]),
        failures.clone(),
    );
    let (gates, follow_gates) = feature_gates::follow(
        featuregate,
        clusterversion,
        (readiness.clone(), readiness.watch(feature_gates::WATCH)),
        metrics.feature_gates.feature_gate.clone(),
        &crate::FEATURE_GATES,
    );
    let gate_watches = [
        tokio::spawn(watch_featuregate),
        tokio::spawn(watch_clusterversion),
        tokio::spawn(follow_gates),
    ];
    let context = RunContext {
        client: client.clone(),
        guests,
        namespace: options.namespace.clone(),
        identity: options.identity.clone(),
        resync: options.resync,
        leadership: leadership.clone(),
        readiness: readiness.clone(),
        machineconfiguration,
        gates,
        ownership,
        failures,
        metrics,
        shutdown,
    };
    let started: Vec<_> = jobs
        .into_iter()
        .map(|(job, runner)| (job, tokio::spawn(runner.start(&context))))
        .collect();
    drop(context);
    readiness.set_problem(GUESTS_LOADING, None);
    let failed = wait_for_jobs(started, &job_failed).await;
    tracing::info!("controllers stopped");
    // The lease manager releases the lease once every receiver of its
    // channel is gone, so a successor takes over now, not when the lease
    // would have expired.
    forward_leader.abort();
    let _ = forward_leader.await;
    follow_lease.abort();
    let _ = follow_lease.await;
    drop(leader);
    drop(leadership);
    match tokio::time::timeout(LEASE_RELEASE_WAIT, lease_task).await {
        Ok(Ok(Ok(_))) => tracing::info!("lease released"),
        Ok(Ok(Err(err))) => tracing::warn!(error = %err, "could not release the lease"),
        Ok(Err(err)) => tracing::warn!(error = %err, "the lease task failed"),
        Err(_) => tracing::warn!("the lease was not released in time; it will expire"),
    }
    machineconfiguration_watch.abort();
    for task in gate_watches {
        task.abort();
    }
    admin.abort();
    match failed {
        Some(job) => anyhow::bail!("the {job} job's controller stopped abnormally"),
        None => Ok(()),
    }
}

/// Waits for every job's controller. The first to stop abnormally (a
/// panic) wakes `job_failed`, which the shutdown the others follow
/// listens to; its name is returned.
async fn wait_for_jobs(
    started: Vec<(&'static str, tokio::task::JoinHandle<()>)>,
    job_failed: &Notify,
) -> Option<&'static str> {
    let stopped = started.into_iter().map(|(job, task)| async move {
        let err = task.await.err()?;
        tracing::error!(job, error = %err, "the job's controller stopped abnormally");
        job_failed.notify_one();
        Some(job)
    });
    futures::future::join_all(stopped)
        .await
        .into_iter()
        .flatten()
        .next()
}

/// SIGTERM (Kubernetes) or Ctrl-C.
async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(err) => {
                tracing::warn!(error = %err, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = terminate => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    tracing::info!("shutting down");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bound on each test, so a controller that is never stopped fails
    /// the test instead of hanging it.
    const HANG: Duration = Duration::from_secs(30);

    /// A controller that panics wakes the shutdown the others follow, so
    /// they stop too, and is named as the reason the host exits.
    #[tokio::test]
    async fn a_panicking_controller_stops_the_others_and_is_named() {
        let job_failed = Arc::new(Notify::new());
        let shutdown = {
            let job_failed = job_failed.clone();
            async move { job_failed.notified().await }.boxed().shared()
        };
        let started = vec![
            ("follows-shutdown", tokio::spawn(shutdown)),
            (
                "panics",
                tokio::spawn(async { panic!("the controller fails") }),
            ),
        ];
        let failed = tokio::time::timeout(HANG, wait_for_jobs(started, &job_failed)).await;
        assert_eq!(failed.ok().flatten(), Some("panics"));
    }

    /// Controllers that return (after a shutdown) name no failure.
    #[tokio::test]
    async fn controllers_that_return_name_no_failure() {
        let job_failed = Notify::new();
        let started = vec![
            ("one", tokio::spawn(async {})),
            ("two", tokio::spawn(async {})),
        ];
        let failed = tokio::time::timeout(HANG, wait_for_jobs(started, &job_failed)).await;
        assert_eq!(failed.ok(), Some(None));
    }
}

#[cfg(test)]
mod families {
    use mco_job::metrics::families;

    /// Every family's name and HELP text (prometheus-client adds the final
    /// period) as `mco-host run` registered them before the metrics were
    /// split per component: a family renamed, re-described or lost from
    /// the composition shows here.
    const FAMILIES: &str = r#"api_writes Writes to the Kubernetes API by kind.
bootimage_ec2_reads EC2 reads for AWS MachineSets (who owns the AMI; a marketplace product's AMIs), by job and result (read; unreachable, or denied: EC2 refused the credentials; both: the static AMI lists decided).
bootimage_hot_loops Boot image patches refused because another writer keeps reverting them.
bootimage_machinesets Enrolled MachineSets by the result of the last boot image pass (patched, current, skipped, degraded).
bootimage_passes_stopped Boot image passes stopped where they were (vCenter imports included) because this replica lost the lease.
bootimage_patches Boot image patches applied to MachineSets.
bootimage_skew_enforcement_ocp_version 1 for the OCP version whose boot images the skew enforcement record (MachineConfiguration status.bootImageSkewEnforcementStatus.automatic) says the cluster uses, by outcome of the last pass (recorded, reset).
bootimage_template_imports vSphere template imports the writer ran, by job and result (imported; current: the folder's template already held the release, imported earlier in the pass for another MachineSet; failed).
bootimage_vcenter_reads vCenter reads for vSphere MachineSets (the templates they may use), by job and result (read, failed).
evaluation_cpu_seconds CPU time spent in guest evaluations, by job and module (role active, or candidate).
evaluation_duration_seconds Time of one guest evaluation (fresh instance and call).
evaluations Guest evaluations by job and result.
feature_gate 1 when a feature gate the host follows is on, 0 when off: FeatureGate cluster for the current version, else the Default feature set.
guest_audits Audits of a candidate the lease holder answered for MachineConfigGuest spec.audit, by registry entry and result (complete, failed).
guest_decisions Decisions a job took, by registry entry and the module that made them (role active, or candidate during a rollout's Canary and Active stages).
guest_failures Guest failures by kind (deadline, memory_limit, stack_overflow, trap, invalid_output).
guest_fetches OCI pulls of guest modules by registry entry and result (success, manifest_failure, download_failure, digest_mismatch, refused, secret_failure, signature_failure, key_failure, too_large, timeout).
guest_info 1 for the module serving (role active) or shadowing (role candidate) each registry entry.
guest_rollbacks Candidate rollouts rolled back, by registry entry and reason (CandidateFailed, TooManyDifferences).
guest_rollout_stage 1 for the stage (Shadow, Canary, Active, RolledBack) of each registry entry's candidate rollout (MachineConfigGuest spec.rollout).
guest_swaps Guest module changes by registry entry and result (loaded, swapped, removed, failed).
leader 1 while this replica holds the lease and writes.
lease_step_downs Times this replica stopped holding the lease, by reason (lease_manager: the lease manager saw another holder or released it; renewal_overdue: no renewal seen within the lease duration; held_by_other: the Lease names another holder).
node_phase_seconds Longest time a node of the pool has spent in its current update phase (Pending, Preparing, Cordoning, Draining, Applying, Rebooting, PostAction, Resuming, Uncordoning, Degraded).
observed Observe mode: objects whose derived decision agrees or differs with what the cluster holds, by job and key (condition type or field), as of the last comparison.
observed_difference Observe mode: 1 for each difference in the bounded, sorted sample (by job, object and key).
ownership 1 for each job's ownership mode (observe, own) and state (starting, writing, refused: the Machine Config Operator writes the same objects, observing).
reconcile_errors Reconciles that failed and were requeued.
shadow_evaluations Candidate evaluations compared with the active module's, by registry entry and result (agree, differ, failed).
watch_decode_failures Objects a watch skipped because they could not be decoded (nested too deep, fields of the wrong type), by kind."#;

    /// The families `run` registers: the job-free ones and every job's,
    /// through the hook `run` asks each job with (its flags at their
    /// defaults).
    #[test]
    fn every_family_keeps_its_name_and_help() {
        let registry = super::registered_at_defaults().unwrap_or_else(|e| panic!("{e}"));
        assert!(format!("{registry:?}").contains("Prefix(\"mco\")"));
        let expected: Vec<&str> = FAMILIES.lines().collect();
        let listed: Vec<String> = (families(&registry).iter())
            .map(|family| format!("{} {}", family.name, family.help))
            .collect();
        assert_eq!(listed, expected);
    }
}
