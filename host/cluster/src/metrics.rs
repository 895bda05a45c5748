//! The cluster plumbing's own series, registered the way linkerd's
//! policy-controller registers each component's (`register(&mut Registry)
//! -> Self`): the caller picks the prefix (the host's `mco_`), this
//! component names its families.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::{Metric, Registry};

/// A new metric registered in `registry` as `name` with `help`: each
/// component's `register` builds its struct from these, one family a
/// field, so a family's name and help stand next to the field they fill.
pub fn registered<M: Metric + Clone + Default>(
    registry: &mut Registry,
    name: &str,
    help: &str,
) -> M {
    let metric = M::default();
    registry.register(name, help, metric.clone());
    metric
}

/// An object kind, or a kind of write (`apply_status`, `delete`, `event`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    pub kind: String,
}

/// Writes to the API server and objects a watch could not decode.
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    /// Writes to the Kubernetes API, by kind.
    pub api_writes: Family<KindLabels, Counter>,
    /// Objects a watch skipped because they could not be decoded, by kind.
    pub watch_decode_failures: Family<KindLabels, Counter>,
}

impl Metrics {
    /// Registers the families in `registry` (already prefixed by the caller).
    pub fn register(registry: &mut Registry) -> Metrics {
        Metrics {
            api_writes: registered(
                registry,
                "api_writes",
                "Writes to the Kubernetes API by kind",
            ),
            watch_decode_failures: registered(
                registry,
                "watch_decode_failures",
                "Objects a watch skipped because they could not be decoded (nested too deep, fields of the wrong type), by kind",
            ),
        }
    }

    /// Counts one write of `kind` to the API server.
    pub fn count_write(&self, kind: &str) {
        self.api_writes
            .get_or_create(&KindLabels { kind: kind.into() })
            .inc();
    }

    /// Counts an object of `kind` a watch could not decode.
    pub fn count_decode_failure(&self, kind: &str) {
        self.watch_decode_failures
            .get_or_create(&KindLabels { kind: kind.into() })
            .inc();
    }
}
