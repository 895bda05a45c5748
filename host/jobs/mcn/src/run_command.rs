//! How `mco-host run` starts the MachineConfigNode job: its flag
//! ([`McnRunArgs`]), its series, and its controller with the served-CRD
//! check that an own-mode job needs.

use clap::Args;
use futures::FutureExt as _;
use futures::future::BoxFuture;
use prometheus_client::registry::Registry;

use super::job::Mcn;
use super::metrics::{McnMetrics, Metrics};
use super::{controller, write};
use mco_cluster::served_crd;
use mco_job::ownership::Mode;
use mco_job::run_context::{RunContext, Runner, RunnerError};
use mco_mcn::IMAGE_MODE_STATUS_REPORTING;
use mco_registry::JobKind as _;

/// The MCN job's flags of `run`.
#[derive(Args)]
pub struct McnRunArgs {
    /// The MCN job's ownership mode: `own` writes MCNs, but refuses while
    /// the Machine Config Operator's daemon writes their conditions;
    /// `observe` writes none, and compares what it derives with the
    /// stored MCNs (metrics, Events, `/ownership`).
    #[arg(long, value_enum, default_value = "own", env = "MCO_MCN_MODE")]
    mcn_mode: Mode,
}

/// The job as `run` starts it: its mode and its own series.
struct McnRunner {
    mode: Mode,
    metrics: McnMetrics,
}

/// [`Run::action`](mco_job::jobs::Run::action): the MCN job always starts.
pub fn runner(
    args: McnRunArgs,
    registry: &mut Registry,
) -> Result<Option<Box<dyn Runner>>, RunnerError> {
    let metrics = McnMetrics::register(registry);
    Ok(Some(Box::new(McnRunner {
        mode: args.mcn_mode,
        metrics,
    })))
}

impl Runner for McnRunner {
    fn start(self: Box<Self>, context: &RunContext) -> BoxFuture<'static, ()> {
        // Only a job that writes MCNs needs the served CRD to take them.
        let crd_check = (self.mode == Mode::Own).then(|| {
            let gates = context.gates.clone();
            tokio::spawn(served_crd::follow(
                context.client.clone(),
                context.readiness.clone(),
                write::CRD_NAME,
                write::VERSION,
                move || write::written_fields(gates.borrow().enabled(IMAGE_MODE_STATUS_REPORTING)),
            ))
        });
        let controller = controller::run(
            context.client.clone(),
            context.guests.clone(),
            controller::Options {
                resync: context.resync,
                leader: context.leadership.held(),
                metrics: job_metrics(&context.metrics, self.metrics),
                readiness: context.readiness.clone(),
                machineconfiguration: context.machineconfiguration.clone(),
                gates: context.gates.clone(),
                ownership: context.ownership.job(Mcn.name(), self.mode),
                identity: context.identity.clone(),
                failures: context.failures.clone(),
            },
            context.shutdown.clone(),
        );
        async move {
            controller.await;
            if let Some(crd_check) = crd_check {
                crd_check.abort();
            }
        }
        .boxed()
    }
}

/// The series the job's controller writes to: the host's job-free ones
/// and its own.
fn job_metrics(shared: &mco_job::metrics::Metrics, mcn: McnMetrics) -> Metrics {
    Metrics {
        cluster: shared.cluster.clone(),
        registry: shared.registry.clone(),
        mcn,
    }
}

/// The job's series, registered as `run` registers them.
#[cfg(test)]
pub(super) fn registered_metrics(registry: &mut Registry) -> Metrics {
    let prefixed = mco_job::metrics::prefixed(registry);
    let shared = mco_job::metrics::Metrics::register(prefixed);
    job_metrics(&shared, McnMetrics::register(prefixed))
}
