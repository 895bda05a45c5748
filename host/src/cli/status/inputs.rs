//! What `mco-host status` reads from the cluster, as plain JSON objects
//! (the way `kubectl get -o json` prints them), and the one path reader
//! over them that the summary's sections share.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::mcn::crd::MachineConfigNode;

/// Everything the summary is computed from.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub mcns: Vec<MachineConfigNode>,
    pub pools: Vec<Value>,
    pub machinesets: Vec<Value>,
    /// MachineConfiguration `cluster`.
    pub machine_configuration: Option<Value>,
    /// ConfigMap `coreos-bootimages`.
    pub stream: Option<Value>,
    /// The boot image controller's record ConfigMap (`mco-host-boot-images`).
    pub record: Option<Value>,
    /// Events (events.k8s.io/v1) about MachineSets.
    pub events: Vec<Value>,
    /// The stream architecture of a control-plane node, for MachineSets
    /// without an architecture annotation (as the controller does).
    pub control_plane_arch: Option<String>,
    pub guests: GuestSource,
    /// The host's `/ownership` (empty without an admin URL, or from a host
    /// that does not serve it).
    pub ownership: Vec<crate::ownership::JobReport>,
}

/// What the guests section shows: the host's `/guests` (and shadow counts
/// from `/metrics`) when an admin URL was given and answered.
#[derive(Debug, Clone, Default)]
pub enum GuestSource {
    /// No `--admin-url`.
    #[default]
    NotAsked,
    /// The admin URL did not answer; the error.
    Unreachable(String),
    Read {
        url: String,
        /// The `/guests` document.
        guests: Value,
        /// `mco_shadow_evaluations_total` by (job, result), if `/metrics`
        /// answered.
        shadow: BTreeMap<(String, String), f64>,
    },
}

/// The string at `path`, if every step of it is there.
pub(super) fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(v, |v, k| v.get(k))?.as_str()
}
