//! Whether this replica still holds the lease, known by itself, and the one
//! way work that must not outlive the lease runs ([`Leadership::guard`]).
//! kube-lease-manager's channel keeps saying "leader" while its renewals fail
//! and a standby takes the lease once it expires. So the host reads the Lease
//! a little after each renewal falls due and holds it only until the last
//! renewal it saw plus the lease duration, less a quarter of the grace
//! period: a standby waits the full duration by its own reading of the same
//! renewal, so this replica stops first. The term is measured on the
//! monotonic clock, so a process that was frozen finds its term over when it
//! wakes.

use std::future::Future;
use std::pin::pin;
use std::task::Poll;
use std::time::{Duration, SystemTime};

use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use tokio::sync::watch;
use tokio::time::Instant;

use mco_cluster::metrics::registered;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// Why a guarded step was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("this replica no longer holds the lease")]
pub struct NotLeader;

/// A handle on this replica's term, cheap to clone and pass down.
#[derive(Clone)]
pub struct Leadership {
    /// When the term ends by this replica's clock, while it holds the lease.
    term: watch::Receiver<Option<Instant>>,
    /// Whether it holds the lease; changes only when that does.
    held: watch::Receiver<bool>,
}

impl Leadership {
    /// `Ok` while this replica holds the lease and its term, as last
    /// confirmed in the Lease, has not ended.
    pub fn check(&self) -> Result<(), NotLeader> {
        match *self.term.borrow() {
            Some(until) if Instant::now() < until => Ok(()),
            _ => Err(NotLeader),
        }
    }

    /// Whether this replica holds the lease, for a loop that waits to
    /// lead: it changes when that does, not on every renewal.
    pub fn held(&self) -> watch::Receiver<bool> {
        self.held.clone()
    }

    /// Resolves once the lease is lost (or the term ends unrenewed).
    pub async fn lost(&self) {
        let mut term = self.term.clone();
        loop {
            let until = match *term.borrow_and_update() {
                Some(until) if Instant::now() < until => until,
                _ => return,
            };
            tokio::select! {
                changed = term.changed() => if changed.is_err() {
                    // No renewal can come any more: the term runs out.
                    tokio::time::sleep_until(until).await;
                    return;
                },
                () = tokio::time::sleep_until(until) => {}
            }
        }
    }

    /// Runs `work` only while this replica holds the lease: it is not
    /// started without it, and it is dropped, its next step never taken,
    /// once the lease is lost. Each poll of `work` comes right after a
    /// [`Self::check`], so no request leaves it once the term is over,
    /// whether or not the timer of its end has fired yet. Dropping is how
    /// the work stops: what it leaves must be what a crash would leave.
    pub async fn guard<F: Future>(&self, work: F) -> Result<F::Output, NotLeader> {
        let mut lost = pin!(self.lost());
        let mut work = pin!(work);
        std::future::poll_fn(|cx| {
            if self.check().is_err() || lost.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Err(NotLeader));
            }
            work.as_mut().poll(cx).map(Ok)
        })
        .await
    }

    /// A handle that holds (or never holds) the lease for a day, for tests
    /// of the code it is passed to.
    #[cfg(any(test, feature = "test-support"))]
    pub fn fixed(held: bool) -> Leadership {
        let until = held.then(|| Instant::now() + Duration::from_secs(86_400));
        Leadership {
            term: watch::channel(until).1,
            held: watch::channel(held).1,
        }
    }
}

/// The Lease this replica competes for, as the lease manager was given it.
pub struct LeaseSettings {
    pub name: String,
    pub identity: String,
    /// How far ahead of the lease's end the lease manager renews it.
    pub grace: Duration,
}

/// Follows this replica's term: `manager` is the lease manager's channel
/// (whether it believes it holds the lease), `api` the Lease's namespace.
/// Returns the handle and the task that keeps it current, which ends when
/// the lease manager's channel closes. The task holds a receiver of that
/// channel: stop it before waiting for the lease manager to release.
pub fn follow(
    api: Api<Lease>,
    settings: LeaseSettings,
    manager: watch::Receiver<bool>,
    metrics: LeaseMetrics,
) -> (Leadership, impl Future<Output = ()> + Send + 'static) {
    let (term, term_rx) = watch::channel(None);
    let (held, held_rx) = watch::channel(false);
    let leadership = Leadership {
        term: term_rx,
        held: held_rx,
    };
    let watchdog = Watchdog {
        api,
        settings,
        metrics,
        term,
        held,
    };
    (leadership, watchdog.run(manager))
}

/// Why this replica stopped leading: the label of
/// `mco_lease_step_downs_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StepDown {
    /// The lease manager saw another holder, or released the lease.
    Manager,
    /// No renewal was seen before the term ended.
    RenewalOverdue,
    /// The Lease names another holder (or none) while the lease manager
    /// still believes this replica holds it.
    HeldByOther,
}

impl StepDown {
    fn label(self) -> &'static str {
        match self {
            StepDown::Manager => "lease_manager",
            StepDown::RenewalOverdue => "renewal_overdue",
            StepDown::HeldByOther => "held_by_other",
        }
    }
}

struct Watchdog {
    api: Api<Lease>,
    settings: LeaseSettings,
    metrics: LeaseMetrics,
    term: watch::Sender<Option<Instant>>,
    held: watch::Sender<bool>,
}

impl Watchdog {
    async fn run(self, mut manager: watch::Receiver<bool>) {
        // The end of the term as last read, and when to read next.
        let mut until: Option<Instant> = None;
        let mut next_read = Instant::now();
        let mut why = StepDown::Manager;
        let mut last_error: Option<String> = None;
        loop {
            let leads = *manager.borrow_and_update();
            if !leads {
                until = None;
                why = StepDown::Manager;
            }
            self.publish(until, why, last_error.as_deref());
            // A term that ended is no longer one to wake for.
            until = until.filter(|until| Instant::now() < *until);
            let wake = until.map_or(next_read, |until| next_read.min(until));
            tokio::select! {
                changed = manager.changed() => {
                    if changed.is_err() {
                        self.publish(None, StepDown::Manager, None);
                        return;
                    }
                    next_read = Instant::now();
                    continue;
                }
                () = tokio::time::sleep_until(wake), if leads => {}
            }
            let now = Instant::now();
            if now < next_read {
                // The term's end woke us, not a read: `publish` says so.
                continue;
            }
            next_read = now + self.settings.grace / 4;
            let lease = match self.api.get(&self.settings.name).await {
                Ok(lease) => lease,
                Err(err) => {
                    tracing::debug!(error = %err, "cannot read the Lease");
                    last_error = Some(err.to_string());
                    continue;
                }
            };
            last_error = None;
            match term(&lease, &self.settings, SystemTime::now(), Instant::now()) {
                Term::Until(end) => {
                    if until.is_none_or(|until| end > until) {
                        // Renewed: read again a quarter grace after the
                        // next renewal falls due (3/4 grace before `end`).
                        next_read = end - self.settings.grace / 2;
                    }
                    until = Some(end);
                    why = StepDown::RenewalOverdue;
                }
                Term::Expired => why = StepDown::RenewalOverdue,
                Term::Other(holder) => {
                    tracing::debug!(%holder, "the Lease names another holder");
                    until = None;
                    why = StepDown::HeldByOther;
                }
            }
        }
    }

    /// Publishes the term, and says so when holding the lease changes.
    fn publish(&self, until: Option<Instant>, why: StepDown, last_error: Option<&str>) {
        let until = until.filter(|until| Instant::now() < *until);
        self.term.send_replace(until);
        let now_held = until.is_some();
        if *self.held.borrow() == now_held {
            return;
        }
        self.held.send_replace(now_held);
        self.metrics.leader.set(i64::from(now_held));
        if now_held {
            tracing::info!(lease = %self.settings.name, "holding the lease");
            return;
        }
        self.metrics
            .lease_step_downs
            .get_or_create(&ReasonLabels {
                reason: why.label().into(),
            })
            .inc();
        match why {
            StepDown::Manager => {
                tracing::info!(lease = %self.settings.name, "stepped down: the lease is no longer held");
            }
            StepDown::RenewalOverdue => tracing::warn!(
                lease = %self.settings.name,
                last_error = last_error.unwrap_or("none"),
                "stepped down: no renewal of the lease was seen within its duration; writes and vCenter work stop until it is held again"
            ),
            StepDown::HeldByOther => tracing::warn!(
                lease = %self.settings.name,
                "stepped down: the Lease names another holder; writes and vCenter work stop"
            ),
        }
    }
}

/// What a read of the Lease says about this replica's term.
#[derive(Debug, PartialEq, Eq)]
enum Term {
    /// Held, until this instant of this replica's clock.
    Until(Instant),
    /// Held by this replica's identity, but not renewed within the lease
    /// duration (less the margin).
    Expired,
    /// Another holder's, or no one's.
    Other(String),
}

/// This replica's term by `lease`: its last renewal plus the lease's
/// duration, less a quarter of the grace, read on this replica's clock
/// (`now_wall` and `now` are the same moment). The renewal time is this
/// replica's own clock too: its lease manager wrote it.
fn term(lease: &Lease, settings: &LeaseSettings, now_wall: SystemTime, now: Instant) -> Term {
    let spec = lease.spec.as_ref();
    let holder = spec.and_then(|s| s.holder_identity.clone());
    if holder.as_deref() != Some(settings.identity.as_str()) {
        return Term::Other(holder.unwrap_or_else(|| "(none)".into()));
    }
    let renewed = spec.and_then(|s| s.renew_time.as_ref());
    let seconds = spec.and_then(|s| s.lease_duration_seconds);
    let (Some(renewed), Some(seconds)) = (renewed, seconds) else {
        return Term::Expired;
    };
    let duration = Duration::from_secs(u64::try_from(seconds).unwrap_or(0));
    let end = SystemTime::from(renewed.0) + duration.saturating_sub(settings.grace / 4);
    match end.duration_since(now_wall) {
        Ok(left) if !left.is_zero() => Term::Until(now + left),
        _ => Term::Expired,
    }
}

/// Why this replica stopped holding the lease.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabels {
    pub reason: String,
}

/// Whether this replica holds the lease, and why it stopped holding it.
#[derive(Clone, Debug, Default)]
pub struct LeaseMetrics {
    pub leader: Gauge,
    /// Times this replica stopped holding the lease, by reason:
    /// `lease_manager` (it saw another holder or released),
    /// `renewal_overdue`, `held_by_other`.
    pub lease_step_downs: Family<ReasonLabels, Counter>,
}

impl LeaseMetrics {
    /// Registers the families in `registry` (already prefixed by the caller).
    pub fn register(registry: &mut Registry) -> LeaseMetrics {
        LeaseMetrics {
            leader: registered(
                registry,
                "leader",
                "1 while this replica holds the lease and writes",
            ),
            lease_step_downs: registered(
                registry,
                "lease_step_downs",
                "Times this replica stopped holding the lease, by reason (lease_manager: the lease manager saw another holder or released it; renewal_overdue: no renewal seen within the lease duration; held_by_other: the Lease names another holder)",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use k8s_openapi::api::coordination::v1::LeaseSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    use serde_json::json;

    use super::*;
    use mco_cluster::mock::{self, Call};

    const LEASE: &str = "/apis/coordination.k8s.io/v1/namespaces/mco-system/leases/mco-host";

    fn settings() -> LeaseSettings {
        LeaseSettings {
            name: "mco-host".into(),
            identity: "a".into(),
            grace: Duration::from_secs(4),
        }
    }

    fn lease(holder: Option<&str>, renewed: SystemTime, seconds: i32) -> Lease {
        Lease {
            metadata: Default::default(),
            spec: Some(LeaseSpec {
                holder_identity: holder.map(Into::into),
                renew_time: Some(MicroTime(renewed.try_into().unwrap())),
                lease_duration_seconds: Some(seconds),
                ..LeaseSpec::default()
            }),
        }
    }

    #[test]
    fn the_term_is_the_last_renewal_plus_the_duration_less_a_quarter_grace() {
        let (wall, now) = (SystemTime::now(), Instant::now());
        let ago = |s: u64| wall - Duration::from_secs(s);
        // Renewed 5 s ago for 16 s, grace 4 s: 10 s left.
        let held = term(&lease(Some("a"), ago(5), 16), &settings(), wall, now);
        assert_eq!(held, Term::Until(now + Duration::from_secs(10)));
        // Renewed 15 s ago: within the duration, but past the margin.
        let late = term(&lease(Some("a"), ago(15), 16), &settings(), wall, now);
        assert_eq!(late, Term::Expired);
        let other = term(&lease(Some("b"), ago(0), 16), &settings(), wall, now);
        assert_eq!(other, Term::Other("b".into()));
        let released = term(&lease(None, ago(0), 16), &settings(), wall, now);
        assert_eq!(released, Term::Other("(none)".into()));
        let mut unrenewed = lease(Some("a"), ago(0), 16);
        unrenewed.spec.as_mut().unwrap().renew_time = None;
        assert_eq!(term(&unrenewed, &settings(), wall, now), Term::Expired);
    }

    /// A future that never completes and says when it was dropped.
    struct Pending(Arc<AtomicBool>);

    impl Future for Pending {
        type Output = ();
        fn poll(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> Poll<()> {
            Poll::Pending
        }
    }

    impl Drop for Pending {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    fn handle(until: Option<Instant>) -> (Leadership, watch::Sender<Option<Instant>>) {
        let (term, term_rx) = watch::channel(until);
        let leadership = Leadership {
            term: term_rx,
            held: watch::channel(until.is_some()).1,
        };
        (leadership, term)
    }

    #[tokio::test(start_paused = true)]
    async fn guarded_work_is_dropped_when_the_term_ends_and_never_starts_without_it() {
        let (leadership, _term) = handle(Some(Instant::now() + Duration::from_secs(10)));
        assert_eq!(leadership.guard(async { 7 }).await, Ok(7));
        let dropped = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let stopped = leadership.guard(Pending(dropped.clone())).await;
        assert_eq!(stopped, Err(NotLeader));
        assert!(dropped.load(Ordering::SeqCst));
        let served = started.elapsed();
        assert!(served >= Duration::from_secs(10) && served < Duration::from_secs(11));
        assert_eq!(leadership.check(), Err(NotLeader));
        // Past its term, work is never polled.
        let polled = Arc::new(AtomicBool::new(false));
        let flag = polled.clone();
        let refused = leadership
            .guard(async move { flag.store(true, Ordering::SeqCst) })
            .await;
        assert_eq!(refused, Err(NotLeader));
        assert!(!polled.load(Ordering::SeqCst));
    }

    #[tokio::test(start_paused = true)]
    async fn guarded_work_stops_when_the_lease_is_lost_before_its_term_ends() {
        let (leadership, term) = handle(Some(Instant::now() + Duration::from_secs(60)));
        let dropped = Arc::new(AtomicBool::new(false));
        let work = tokio::spawn({
            let leadership = leadership.clone();
            let dropped = dropped.clone();
            async move { leadership.guard(Pending(dropped)).await }
        });
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!dropped.load(Ordering::SeqCst));
        term.send_replace(None);
        assert_eq!(work.await.ok(), Some(Err(NotLeader)));
        assert!(dropped.load(Ordering::SeqCst));
    }

    /// The check reads the clock: a replica frozen past its term (the timer
    /// of its end not yet fired) takes no further step when it wakes.
    #[test]
    fn a_term_that_ended_refuses_before_any_timer_fires() {
        let ended = Instant::now();
        let (leadership, _term) = handle(Some(ended));
        assert_eq!(leadership.check(), Err(NotLeader));
    }

    fn lease_json(holder: &str, renewed: SystemTime, seconds: i32) -> serde_json::Value {
        let renewed = k8s_openapi::jiff::Timestamp::try_from(renewed).unwrap();
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
               "metadata": {"name": "mco-host", "namespace": "mco-system"},
               "spec": {"holderIdentity": holder, "renewTime": MicroTime(renewed),
                        "leaseDurationSeconds": seconds}})
    }

    fn step_downs(metrics: &LeaseMetrics, reason: &str) -> u64 {
        let labels = ReasonLabels {
            reason: reason.into(),
        };
        metrics.lease_step_downs.get_or_create(&labels).get()
    }

    /// After one read, the API server is gone (as in a partition: every
    /// read fails, and so would every renewal) while the lease manager
    /// still says "leader": the replica steps down by itself when its term
    /// ends, before the lease expires for a standby.
    #[tokio::test(start_paused = true)]
    async fn a_replica_that_stops_renewing_steps_down_before_the_lease_expires() {
        // Renewed 12 s ago for 16 s, grace 4 s: expires in 4 s, the term
        // ends in 3 s.
        let renewed = SystemTime::now() - Duration::from_secs(12);
        let (client, scenario) =
            mock::serve(vec![Call::get(LEASE).answer(lease_json("a", renewed, 16))]);
        let metrics = LeaseMetrics::register(&mut Default::default());
        let (manager_tx, manager) = watch::channel(true);
        let api = Api::namespaced(client, "mco-system");
        let (leadership, watchdog) = follow(api, settings(), manager, metrics.clone());
        let watchdog = tokio::spawn(watchdog);
        let mut held = leadership.held();
        held.wait_for(|held| *held).await.unwrap();
        let since = Instant::now();
        assert_eq!(leadership.check(), Ok(()));
        assert_eq!(metrics.leader.get(), 1);
        scenario.done().await;
        held.wait_for(|held| !*held).await.unwrap();
        let served = since.elapsed();
        assert!(
            served > Duration::from_secs(2) && served < Duration::from_secs(4),
            "stepped down {served:?} after the read"
        );
        assert_eq!(leadership.check(), Err(NotLeader));
        assert_eq!(metrics.leader.get(), 0);
        assert_eq!(step_downs(&metrics, "renewal_overdue"), 1);
        // The lease manager learning of it later counts no second time.
        manager_tx.send_replace(false);
        drop(manager_tx);
        watchdog.await.unwrap();
        assert_eq!(step_downs(&metrics, "lease_manager"), 0);
    }

    /// Renewals seen in the Lease keep the term going; a Lease naming
    /// another holder while the lease manager still says "leader" ends it
    /// at once.
    #[tokio::test(start_paused = true)]
    async fn renewals_extend_the_term_and_another_holder_ends_it() {
        let now = SystemTime::now();
        let (client, scenario) = mock::serve(vec![
            Call::get(LEASE).answer(lease_json("a", now, 16)),
            // Read 13 s later (paused time; the wall clock hardly moved):
            // renewed a second before.
            Call::get(LEASE).answer(lease_json("a", now - Duration::from_secs(1), 16)),
            Call::get(LEASE).answer(lease_json("b", now, 16)),
        ]);
        let metrics = LeaseMetrics::register(&mut Default::default());
        let (_manager_tx, manager) = watch::channel(true);
        let api = Api::namespaced(client, "mco-system");
        let (leadership, watchdog) = follow(api, settings(), manager, metrics.clone());
        let watchdog = tokio::spawn(watchdog);
        let mut held = leadership.held();
        held.wait_for(|held| *held).await.unwrap();
        let since = Instant::now();
        held.wait_for(|held| !*held).await.unwrap();
        // Held past the first term's end (15 s) thanks to the renewal, then
        // stepped down at the read that saw "b" (25 s).
        assert!(
            since.elapsed() > Duration::from_secs(15),
            "{:?}",
            since.elapsed()
        );
        assert_eq!(step_downs(&metrics, "held_by_other"), 1);
        assert_eq!(step_downs(&metrics, "renewal_overdue"), 0);
        scenario.done().await;
        watchdog.abort();
    }
}
