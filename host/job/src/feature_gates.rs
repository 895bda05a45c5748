//! The cluster's feature gates, as every decision follows them: the
//! `config.openshift.io/v1` FeatureGate `cluster`, its
//! `status.featureGates[]` entry for the cluster's current version
//! (ClusterVersion `version`, `status.desired.version`; the first entry
//! when that is not known), each gate on when the entry lists it under
//! `enabled`, off under `disabled`. A gate the entry does not list, or any
//! gate without a FeatureGate object (plain Kubernetes), takes its value
//! in the Default feature set of the release the project models
//! (openshift/api `features/features.go`). The eval contract's
//! `--featuregate` has the same meaning.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use futures::StreamExt;
use kube::api::DynamicObject;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::watch;

use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;

use crate::manifests::{InputError, Reader};
use mco_cluster::watch::{Latest, Listed, Readiness};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::registry::Registry;

/// The gates a reader follows ([`Contract::feature_gates`](crate::jobs::Contract::feature_gates):
/// a job's own, or every job's for `run`); the registry's type, which a
/// job's audit is handed.
pub use mco_registry::job::Modelled;

/// The gates in force, and where they came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureGates {
    enabled: BTreeSet<String>,
    /// The FeatureGate entry's version; `None` for the Default set.
    version: Option<String>,
    modelled: Vec<(&'static str, bool)>,
}

impl FeatureGates {
    /// The Default feature set of the modelled release.
    pub fn default_of(modelled: &Modelled) -> Self {
        FeatureGates {
            enabled: modelled
                .iter()
                .filter(|(_, on)| *on)
                .map(|(name, _)| name.to_string())
                .collect(),
            version: None,
            modelled: modelled.to_vec(),
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    #[error("{0}")]
    Malformed(String),
    #[error("it lists no feature gates for any version (status.featureGates is empty)")]
    NoEntry,
}

#[derive(Deserialize)]
struct FeatureGate {
    #[serde(default)]
    status: Option<Status>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    #[serde(default)]
    feature_gates: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    version: String,
    #[serde(default)]
    enabled: Vec<Named>,
    #[serde(default)]
    disabled: Vec<Named>,
}

#[derive(Deserialize)]
struct Named {
    name: String,
}

impl FeatureGates {
    /// Resolves a FeatureGate object for the cluster at `current_version`
    /// (the first entry when `None` or not listed, as upstream lists the
    /// newest version first). A FeatureGate whose status is not written
    /// yet gives the Default set.
    pub fn resolve(
        object: &Value,
        current_version: Option<&str>,
        modelled: &Modelled,
    ) -> Result<Self, Error> {
        let gate = FeatureGate::deserialize(object).map_err(|e| Error::Malformed(e.to_string()))?;
        let Some(status) = gate.status else {
            return Ok(FeatureGates::default_of(modelled));
        };
        let entry = current_version
            .and_then(|v| status.feature_gates.iter().find(|e| e.version == v))
            .or_else(|| status.feature_gates.first())
            .ok_or(Error::NoEntry)?;
        let mut gates = FeatureGates::default_of(modelled);
        for named in &entry.disabled {
            gates.enabled.remove(&named.name);
        }
        for named in &entry.enabled {
            gates.enabled.insert(named.name.clone());
        }
        gates.version = Some(entry.version.clone());
        Ok(gates)
    }

    pub fn enabled(&self, gate: &str) -> bool {
        self.enabled.contains(gate)
    }

    /// Every gate that is on, by name: what a guest is told.
    pub fn enabled_names(&self) -> &BTreeSet<String> {
        &self.enabled
    }

    /// The modelled gates and their values, for logs and the status view.
    pub fn modelled(&self) -> Vec<(&'static str, bool)> {
        self.modelled
            .iter()
            .map(|(name, _)| (*name, self.enabled(name)))
            .collect()
    }
}

/// The gates in force now, read once (for `preflight`): FeatureGate
/// `cluster` and ClusterVersion `version` as [`follow`] reads them; a kind
/// the cluster does not serve counts as no object.
pub async fn read_cluster(
    client: &kube::Client,
    modelled: &Modelled,
) -> Result<FeatureGates, String> {
    use mco_cluster::resources::{CLUSTER_VERSION, FEATURE_GATE, ResourceType};
    let get = async |kind: ResourceType, name: &str| {
        let api: kube::Api<kube::api::DynamicObject> =
            kube::Api::all_with(client.clone(), &kind.api_resource());
        match api.get_opt(name).await {
            Ok(object) => Ok(object),
            Err(err) if mco_cluster::is_status(&err, 404) => Ok(None),
            Err(err) => Err(format!("reading {} {name}: {err}", kind.kind)),
        }
    };
    let clusterversion = get(CLUSTER_VERSION, "version").await?;
    let featuregate = get(FEATURE_GATE, "cluster").await?;
    resolve_objects(featuregate.as_ref(), clusterversion.as_ref(), modelled)
        .map_err(|e| format!("FeatureGate cluster: {e}"))
}

/// ClusterVersion `version`'s `status.desired.version` (of the object, or
/// of a [`DynamicObject`]'s data): the version whose entry counts.
pub fn current_version(clusterversion: &Value) -> Option<&str> {
    clusterversion
        .pointer("/status/desired/version")
        .and_then(Value::as_str)
}

/// The gates of the two objects as the cluster holds them: the Default set
/// without a FeatureGate.
fn resolve_objects(
    featuregate: Option<&DynamicObject>,
    clusterversion: Option<&DynamicObject>,
    modelled: &Modelled,
) -> Result<FeatureGates, Error> {
    match featuregate {
        None => Ok(FeatureGates::default_of(modelled)),
        Some(featuregate) => FeatureGates::resolve(
            &featuregate.data,
            clusterversion.and_then(|cv| current_version(&cv.data)),
            modelled,
        ),
    }
}

/// The FeatureGate file of an `eval` (`--featuregate`), resolved for the
/// version of `clusterversion` (when the eval was given one); without a
/// file, the Default set.
pub fn read(
    reader: &mut Reader,
    path: Option<&str>,
    clusterversion: Option<&Value>,
    modelled: &Modelled,
) -> Result<FeatureGates, InputError> {
    let Some(path) = path else {
        return Ok(FeatureGates::default_of(modelled));
    };
    let object: Value = reader.object(path, "FeatureGate")?;
    let version = clusterversion.and_then(current_version);
    FeatureGates::resolve(&object, version, modelled).map_err(|e| InputError::Malformed {
        path: path.to_owned(),
        kind: "FeatureGate".to_owned(),
        name: object["metadata"]["name"]
            .as_str()
            .unwrap_or("cluster")
            .to_owned(),
        detail: e.to_string(),
    })
}

impl fmt::Display for FeatureGates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.version {
            Some(version) => write!(f, "FeatureGate cluster (version {version}):")?,
            None => write!(f, "Default feature set:")?,
        }
        for (name, on) in self.modelled() {
            write!(f, " {name}={}", if on { "on" } else { "off" })?;
        }
        Ok(())
    }
}

/// The readiness name of the gates in force: [`follow`] marks it once it
/// has published the gates resolved from what both watches listed, so a
/// job that waits for it never acts under the Default set by mistake.
pub const WATCH: &str = "featuregates";
/// The readiness names of the FeatureGate and ClusterVersion watches `run`
/// starts for [`follow`] (the latter named apart from the boot image
/// job's own).
pub const SOURCES: [&str; 2] = ["featuregate-cluster", "clusterversion-for-feature-gates"];

/// The gates in force, for every job that reads them; changes when the
/// resolved gates change, not on every edit of the two objects.
pub type Gates = watch::Receiver<Arc<FeatureGates>>;

/// Follows FeatureGate `cluster` and ClusterVersion `version` into
/// [`Gates`]; the returned future must be spawned. Once the watches of
/// [`SOURCES`] have listed in `readiness`, the gates are resolved and
/// published, and only then is `listed` ([`WATCH`]) marked. A FeatureGate
/// that does not resolve keeps the gates in force, with an error logged,
/// so a broken edit never flips a job's behaviour.
pub fn follow(
    featuregate: Latest,
    clusterversion: Latest,
    (readiness, listed): (Readiness, Listed),
    gauge: Family<GateLabels, Gauge>,
    modelled: &Modelled,
) -> (Gates, impl Future<Output = ()> + Send + 'static) {
    let export = move |gates: &FeatureGates| {
        for (gate, on) in gates.modelled() {
            let labels = GateLabels {
                gate: gate.to_owned(),
            };
            gauge.get_or_create(&labels).set(i64::from(on));
        }
    };
    let default = FeatureGates::default_of(modelled);
    export(&default);
    let (tx, rx) = watch::channel(Arc::new(default));
    let modelled = modelled.to_vec();
    let run = async move {
        // Each watch publishes its object before it counts as listed.
        readiness.listed(&SOURCES).await;
        let mut listed = Some(listed);
        let changes = futures::stream::select(
            tokio_stream::wrappers::WatchStream::new(featuregate.clone()).map(|_| ()),
            tokio_stream::wrappers::WatchStream::new(clusterversion.clone()).map(|_| ()),
        );
        let mut changes = std::pin::pin!(changes);
        while changes.next().await.is_some() {
            let resolved = resolve_objects(
                featuregate.borrow().as_deref(),
                clusterversion.borrow().as_deref(),
                &modelled,
            );
            match resolved {
                Ok(gates) => {
                    tx.send_if_modified(|current| {
                        let changed = **current != gates;
                        if changed {
                            tracing::info!(gates = %gates, "feature gates in force");
                            export(&gates);
                            *current = Arc::new(gates);
                        }
                        changed
                    });
                }
                Err(err) => tracing::error!(
                    featuregate = "cluster",
                    error = %err,
                    "the FeatureGate does not resolve; keeping the feature gates in force"
                ),
            }
            // The first round (a watch stream yields its current value
            // first) resolved what the watches listed.
            if let Some(listed) = listed.take() {
                listed.mark();
            }
            if tx.is_closed() {
                break;
            }
        }
    };
    (rx, run)
}

/// A feature gate some job follows: three series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct GateLabels {
    pub gate: String,
}

/// The feature gates the host follows.
#[derive(Clone, Debug, Default)]
pub struct GateMetrics {
    /// 1 when a gate the host follows is on, 0 when off.
    pub feature_gate: Family<GateLabels, Gauge>,
}

impl GateMetrics {
    /// Registers the family in `registry` (already prefixed by the caller).
    pub fn register(registry: &mut Registry) -> GateMetrics {
        let metrics = GateMetrics::default();
        registry.register(
            "feature_gate",
            "1 when a feature gate the host follows is on, 0 when off: FeatureGate cluster for the current version, else the Default feature set",
            metrics.feature_gate.clone(),
        );
        metrics
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const IMAGE_MODE_STATUS_REPORTING: &str = "ImageModeStatusReporting";
    const MANAGED_BOOT_IMAGES_CPMS: &str = "ManagedBootImagesCPMS";
    const BOOT_IMAGE_SKEW_ENFORCEMENT: &str = "BootImageSkewEnforcement";
    /// The gates of both jobs, as `run` follows them.
    const MODELLED: &Modelled = &[
        (IMAGE_MODE_STATUS_REPORTING, false),
        (MANAGED_BOOT_IMAGES_CPMS, true),
        (BOOT_IMAGE_SKEW_ENFORCEMENT, true),
    ];

    fn object(entries: Value) -> Value {
        json!({
            "apiVersion": "config.openshift.io/v1",
            "kind": "FeatureGate",
            "metadata": {"name": "cluster"},
            "spec": {"featureSet": "TechPreviewNoUpgrade"},
            "status": {"featureGates": entries},
        })
    }

    fn names(list: &[&str]) -> Value {
        list.iter().map(|n| json!({"name": n})).collect()
    }

    #[test]
    fn default_set_has_image_mode_reporting_off_and_boot_image_gates_on() {
        let gates = FeatureGates::default_of(MODELLED);
        assert!(!gates.enabled(IMAGE_MODE_STATUS_REPORTING));
        assert!(gates.enabled(MANAGED_BOOT_IMAGES_CPMS));
        assert!(gates.enabled(BOOT_IMAGE_SKEW_ENFORCEMENT));
        assert_eq!(
            gates.to_string(),
            "Default feature set: ImageModeStatusReporting=off ManagedBootImagesCPMS=on BootImageSkewEnforcement=on"
        );
    }

    #[test]
    fn the_entry_of_the_current_version_counts() {
        let fg = object(json!([
            {"version": "4.22.1", "enabled": names(&["ImageModeStatusReporting"]), "disabled": names(&["ManagedBootImagesCPMS"])},
            {"version": "4.21.9", "enabled": [], "disabled": names(&["ImageModeStatusReporting"])},
        ]));
        let current =
            FeatureGates::resolve(&fg, Some("4.22.1"), MODELLED).unwrap_or_else(|e| panic!("{e}"));
        assert!(current.enabled(IMAGE_MODE_STATUS_REPORTING));
        assert!(!current.enabled(MANAGED_BOOT_IMAGES_CPMS));
        let older =
            FeatureGates::resolve(&fg, Some("4.21.9"), MODELLED).unwrap_or_else(|e| panic!("{e}"));
        assert!(!older.enabled(IMAGE_MODE_STATUS_REPORTING));
        // Unlisted there: the Default value.
        assert!(older.enabled(MANAGED_BOOT_IMAGES_CPMS));
        // Unknown or no version: the first entry.
        for version in [None, Some("5.0.0")] {
            let first =
                FeatureGates::resolve(&fg, version, MODELLED).unwrap_or_else(|e| panic!("{e}"));
            assert!(first.enabled(IMAGE_MODE_STATUS_REPORTING), "{version:?}");
        }
    }

    /// The gates count as listed once the ones resolved from what the
    /// watches listed are published, not when the watches list: a job
    /// that waited for them reads the cluster's gates, never the Default
    /// set.
    #[tokio::test]
    async fn the_gates_count_as_listed_once_published() {
        let readiness = Readiness::default();
        let sources = SOURCES.map(|name| readiness.watch(name));
        let (featuregate_tx, featuregate) = watch::channel(None);
        let (_clusterversion_tx, clusterversion) = watch::channel(None);
        let listed = (readiness.clone(), readiness.watch(WATCH));
        let (gates, run) = follow(
            featuregate,
            clusterversion,
            listed,
            Family::default(),
            MODELLED,
        );
        let run = tokio::spawn(run);
        // As the watches list: their objects published, then marked.
        let fg =
            object(json!([{"version": "4.22.1", "enabled": names(&["ImageModeStatusReporting"])}]));
        let fg: DynamicObject = serde_json::from_value(fg).unwrap_or_else(|e| panic!("{e}"));
        featuregate_tx.send_replace(Some(Arc::new(fg)));
        assert_eq!(readiness.pending(), [SOURCES[1], SOURCES[0], WATCH]);
        for source in &sources {
            source.mark();
        }
        readiness.listed(&[WATCH]).await;
        assert!(gates.borrow().enabled(IMAGE_MODE_STATUS_REPORTING));
        run.abort();
    }

    #[test]
    fn gates_the_host_does_not_model_are_passed_on_when_enabled() {
        let fg = object(json!([{"version": "4.22.0", "enabled": names(&["SomeNewGate"])}]));
        let gates = FeatureGates::resolve(&fg, None, MODELLED).unwrap_or_else(|e| panic!("{e}"));
        assert!(gates.enabled_names().contains("SomeNewGate"));
        assert!(!gates.enabled(IMAGE_MODE_STATUS_REPORTING));
    }

    #[test]
    fn a_status_not_written_yet_is_the_default_set() {
        let fg = json!({"metadata": {"name": "cluster"}, "spec": {}});
        assert_eq!(
            FeatureGates::resolve(&fg, None, MODELLED),
            Ok(FeatureGates::default_of(MODELLED))
        );
    }

    #[test]
    fn broken_feature_gates_are_named_errors() {
        assert_eq!(
            FeatureGates::resolve(&object(json!([])), None, MODELLED),
            Err(Error::NoEntry)
        );
        for broken in [
            object(json!("all of them")),
            object(json!([{"enabled": names(&["X"])}])),
            object(json!([{"version": "4.22.0", "enabled": [{"nom": "X"}]}])),
            object(json!([{"version": 4, "enabled": []}])),
        ] {
            let err = FeatureGates::resolve(&broken, None, MODELLED);
            assert!(
                matches!(&err, Err(Error::Malformed(m)) if !m.is_empty()),
                "{broken}: {err:?}"
            );
        }
    }
}
