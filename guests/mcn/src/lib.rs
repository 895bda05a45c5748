//! Derives a node's MachineConfigNode (pool, configs and update-progress
//! conditions) from the Node, the MachineConfigPools, the rendered
//! MachineConfigs it moves between and the MCN status already stored.
//! Upstream writes these conditions as events happen in the daemon and the
//! drain controller; we see only their traces (node annotations,
//! `spec.unschedulable`), so the derivation works out the node's phase and
//! replays, in upstream order, every condition write that leads there, with
//! what annotations cannot show taken from the previous conditions. A plain
//! library, so the host runs it natively (tests, benchmarks, differential
//! checks); for `wasm32` it is also the `node-state-reporter` component
//! (`component.rs`). See docs/concepts/mcn-derivation.md.

// The component bindings wit-bindgen generates for wasm32 use `unsafe`.
#![cfg_attr(target_arch = "wasm32", allow(unsafe_code))]

mod conditions;
mod disruption;
mod pools;
mod progress;
mod reconcile;
mod registries;
mod spec;
mod validate;

#[cfg(target_arch = "wasm32")]
mod component;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub use conditions::{
    APPLIED_FILES_AND_OS, DEFAULT_CONDITION_TYPES, IMAGE_MODE_CONDITION_TYPES,
    IMAGE_MODE_STATUS_REPORTING, NOT_YET_SET, OTHER_CONDITION_TYPES, default_condition_types,
};
// The API server's rules live in their own crate so the boot image guests
// and the host share them.
pub use mco_k8s_rules::{is_condition_reason, is_dns1123_subdomain};
pub use validate::{MAX_MESSAGE, MAX_REASON_TEXT, validate};
// The host reads each rendered config into its summary once, natively, and
// hands the guest that.
pub use spec::{
    Digest, Digests, Entries, FileNote, Section, Summary, User, View, digest_from_words,
    digest_to_words,
};
// The host lends a guest only the entries that differ between the configs
// of a call: those `changed` finds, the only ones a plan compares.
pub use disruption::changed;
// The host places a node in a rollout's canary pools by the same rule; a
// guest lent the node's labels looks up the ones `label_keys` names.
pub use pools::{label_keys, primary_pool};

/// The Machine Config Daemon's annotations on a Node, the only ones the
/// derivation reads (and so the only ones the host passes).
pub const ANNOTATION_PREFIX: &str = "machineconfiguration.openshift.io/";

/// Everything one derivation looks at.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Facts {
    pub node: Node,
    pub pools: Vec<Pool>,
    /// Rendered configs named by the node's currentConfig/desiredConfig.
    pub configs: Vec<RenderedConfig>,
    /// The cluster's node disruption policies, merged with the defaults.
    pub policies: DisruptionPolicies,
    /// The stored MCN's generation and spec; `None` when there is none.
    pub stored: Option<StoredNode>,
    /// Conditions of the stored MCN, empty when there is none.
    pub previous: Vec<Condition>,
    /// The feature gates that are on, by name: the host resolves the
    /// cluster's FeatureGate (and the Default set for what it omits).
    pub feature_gates: BTreeSet<String>,
}

impl Facts {
    /// Gate `ImageModeStatusReporting`: `configImage` is written, and the
    /// files and the OS get a condition each (upstream's daemon,
    /// `pkg/daemon/update.go`), instead of `AppliedFilesAndOS`.
    pub fn image_mode_status_reporting(&self) -> bool {
        self.feature_gates.contains(IMAGE_MODE_STATUS_REPORTING)
    }
}

/// What the daemon does once a changed file, unit or SSH key is written
/// (MachineConfiguration `status.nodeDisruptionPolicyStatus`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DisruptionAction {
    Reboot,
    Drain,
    Reload(String),
    Restart(String),
    DaemonReload,
    None,
    /// The `registries.conf` rule: reload CRI-O, drain unless safe.
    Special,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FilePolicy {
    pub path: String,
    pub actions: Vec<DisruptionAction>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UnitPolicy {
    pub name: String,
    pub actions: Vec<DisruptionAction>,
}

/// Cluster policies as the operator publishes them: defaults and admin
/// entries already merged, in that order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DisruptionPolicies {
    pub files: Vec<FilePolicy>,
    pub units: Vec<UnitPolicy>,
    pub ssh_key: Vec<DisruptionAction>,
}

/// The stored MCN, as far as `status.observedGeneration` depends on it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoredNode {
    /// `metadata.generation`; `None` when the object carries none (an
    /// earlier eval output, say).
    pub generation: Option<i64>,
    pub observed_generation: Option<i64>,
    pub pool: String,
    pub desired_config: String,
    pub desired_image: Option<String>,
    /// `status.configVersion.current`: the config the node was on when
    /// the status was last written, so a just-finished update's plan stays
    /// known.
    pub current_config: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Node {
    pub name: String,
    pub phase: String,
    pub unschedulable: bool,
    pub labels: BTreeMap<String, String>,
    /// Only the [`ANNOTATION_PREFIX`] ones: the host passes no others.
    pub annotations: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pool {
    pub name: String,
    pub node_selector: Option<LabelSelector>,
    /// `spec.configuration.name`.
    pub target_config: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct LabelSelector {
    pub match_labels: BTreeMap<String, String>,
    pub match_expressions: Vec<SelectorRequirement>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SelectorRequirement {
    pub key: String,
    pub operator: String,
    pub values: Vec<String>,
}

/// A rendered MachineConfig, as the decisions read it: its name and the
/// summary of its `spec` (digests and the few values read beyond them),
/// shared, since it is the same for every node that moves between it.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderedConfig {
    pub name: String,
    pub spec: Arc<Summary>,
}

impl RenderedConfig {
    /// Reads `spec`, the MachineConfig `spec` as JSON text, into its summary.
    pub fn new(name: &str, spec: &str) -> RenderedConfig {
        RenderedConfig {
            name: name.to_string(),
            spec: Arc::new(Summary::read(spec)),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConditionStatus {
    True,
    #[default]
    False,
    Unknown,
}

impl ConditionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Condition {
    pub type_: String,
    pub status: ConditionStatus,
    pub reason: String,
    pub message: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct MachineConfigNode {
    /// `spec.pool.name`.
    pub pool: String,
    /// `spec.configVersion.desired`.
    pub desired_config: String,
    /// `spec.configImage.desiredImage`.
    pub desired_image: Option<String>,
    /// `None` for a node no daemon reports on (Windows): spec only.
    pub status: Option<NodeStatus>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeStatus {
    pub observed_generation: i64,
    pub config_version: ConfigVersion,
    pub config_image: Option<ConfigImage>,
    pub conditions: Vec<Condition>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConfigVersion {
    pub current: Option<String>,
    pub desired: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConfigImage {
    pub current_image: Option<String>,
    pub desired_image: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    Apply(MachineConfigNode),
    /// No MCN may exist for this node.
    Skip(String),
    /// The node cannot be reported; nothing must be written.
    Error(String),
}

/// Derives the MachineConfigNode for `facts.node`. The result always passes
/// [`validate`] for the facts' gates: whatever would not (a pool targeting a config name the CRD
/// refuses, a reason of megabytes) becomes an `Error` naming the problem, so
/// hostile input is reported against its node instead of looking like a
/// broken guest.
pub fn derive(facts: &Facts) -> Decision {
    let node = &facts.node.name;
    let decision = match derive_unchecked(facts) {
        Decision::Skip(text) => Decision::Skip(mco_k8s_rules::bounded(text, MAX_REASON_TEXT)),
        Decision::Error(text) => Decision::Error(mco_k8s_rules::bounded(text, MAX_REASON_TEXT)),
        apply => apply,
    };
    match validate(&decision, facts.image_mode_status_reporting()) {
        Ok(()) => decision,
        Err(why) => Decision::Error(mco_k8s_rules::bounded(
            format!("node {node}: its MachineConfigNode would not pass the host's checks: {why}"),
            MAX_REASON_TEXT,
        )),
    }
}

/// Which nodes get an MCN (as upstream's operator
/// `syncMachineConfigNodes`): every node past Pending and
/// Provisioning. One in no pool reports under `not-yet-set`; a Windows
/// node's MCN is spec only, since no daemon runs there to report.
fn derive_unchecked(facts: &Facts) -> Decision {
    let node = &facts.node;
    if matches!(node.phase.as_str(), "Pending" | "Provisioning") {
        return Decision::Skip(format!(
            "node {} is in phase {}; its MachineConfigNode is created once it has joined the cluster",
            node.name, node.phase
        ));
    }
    let pool = match pools::primary_pool(node, &facts.pools) {
        Ok(pool) => pool,
        Err(message) => return Decision::Error(message),
    };
    let annotations = match progress::NodeAnnotations::read(node) {
        Ok(annotations) => annotations,
        Err(message) => return Decision::Error(message),
    };
    if pools::is_windows(node) {
        return Decision::Apply(MachineConfigNode {
            pool: NOT_YET_SET.to_string(),
            desired_config: annotations.desired_or_placeholder().to_string(),
            desired_image: annotations
                .desired_image()
                .filter(|_| facts.image_mode_status_reporting())
                .map(str::to_string),
            status: None,
        });
    }
    Decision::Apply(progress::report(facts, pool, &annotations))
}
