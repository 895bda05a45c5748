//! Expected MachineConfigNodes from the golden cases (`tests/golden/mcn/`),
//! compared with what the controller wrote, timestamps aside.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, ensure};
use serde_json::Value;

use super::fixture::Fixture;

/// The node every golden walk uses; its name appears in messages such as
/// "Node worker-0 needs an update".
const GOLDEN_NODE: &str = "worker-0";

pub fn golden_dir() -> PathBuf {
    mco_e2e::crate_dir().join("../golden/mcn")
}

/// Every document of a golden YAML file (`node.yaml`, `machineconfigs.yaml`, …).
pub fn yaml_docs(case: &str, file: &str) -> Result<Vec<Value>> {
    let path = golden_dir().join(case).join(file);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
        .with_context(|| format!("cannot parse {}", path.display()))?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// What one condition must say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cond {
    pub status: String,
    pub reason: String,
    pub message: String,
}

/// The parts of a golden MCN the controller must reproduce exactly.
#[derive(Clone, Debug)]
pub struct Expected {
    pub case: String,
    pub node: String,
    pub pool: String,
    pub spec_desired: String,
    pub status_config_version: Value,
    /// `spec.configImage` and `status.configImage` (null with the gate off).
    pub config_image: (Value, Value),
    pub conditions: BTreeMap<String, Cond>,
}

impl Expected {
    /// The golden case's expected MCN, for node `node` (the golden walks use
    /// `worker-0`; its name in messages is replaced).
    pub fn load(case: &str, node: &str) -> Result<Self> {
        let path = golden_dir().join(case).join("expected.json");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let out: Value = serde_json::from_str(&text)
            .with_context(|| format!("cannot parse {}", path.display()))?;
        ensure!(
            out["action"] == "apply",
            "{}: expected action apply, found {}",
            path.display(),
            out["action"]
        );
        let mcn = &out["machineConfigNode"];
        let rename = |s: &str| s.replace(&format!("Node {GOLDEN_NODE} "), &format!("Node {node} "));
        let conditions = conditions(&mcn["status"])
            .with_context(|| format!("{}", path.display()))?
            .into_iter()
            .map(|(t, c)| {
                let message = rename(&c.message);
                (t, Cond { message, ..c })
            })
            .collect();
        Ok(Self {
            case: case.to_owned(),
            node: node.to_owned(),
            pool: str_at(mcn, "/spec/pool/name")?,
            spec_desired: str_at(mcn, "/spec/configVersion/desired")?,
            status_config_version: mcn["status"]["configVersion"].clone(),
            config_image: (
                mcn["spec"]["configImage"].clone(),
                mcn["status"]["configImage"].clone(),
            ),
            conditions,
        })
    }

    /// The MCN of a node done on `rendered-<pool>-a` (the golden `reboot-00`
    /// case for another pool and node).
    pub fn updated_on(node: &str, pool: &str) -> Result<Self> {
        let mut e = Expected::load("reboot-00-updated-on-a", node)?;
        let config = format!("rendered-{pool}-a");
        e.pool = pool.to_owned();
        e.spec_desired = config.clone();
        e.status_config_version = serde_json::json!({ "current": config, "desired": config });
        let updated = e
            .conditions
            .get("Updated")
            .context("golden reboot-00 has no Updated condition")?;
        ensure!(
            updated.status == "True" && updated.message == format!("Node {node} Updated"),
            "golden reboot-00 is not Updated=True: {updated:?}"
        );
        Ok(e)
    }

    /// Differences between a stored MCN and this expectation; empty when it
    /// matches. `node_uid` is the real Node's uid for the owner reference.
    pub fn diff(&self, mcn: &Value, node_uid: &str) -> Vec<String> {
        let mut d = Vec::new();
        let mut want = |what: &str, got: &Value, expected: &Value| {
            if got != expected {
                d.push(format!("{what}: got {got}, expected {expected}"));
            }
        };
        want(
            "spec.node.name",
            &mcn["spec"]["node"]["name"],
            &Value::from(self.node.as_str()),
        );
        want(
            "spec.pool.name",
            &mcn["spec"]["pool"]["name"],
            &Value::from(self.pool.as_str()),
        );
        want(
            "spec.configVersion.desired",
            &mcn["spec"]["configVersion"]["desired"],
            &Value::from(self.spec_desired.as_str()),
        );
        want(
            "status.configVersion",
            &mcn["status"]["configVersion"],
            &self.status_config_version,
        );
        want(
            "spec.configImage",
            &mcn["spec"]["configImage"],
            &self.config_image.0,
        );
        want(
            "status.configImage",
            &mcn["status"]["configImage"],
            &self.config_image.1,
        );
        let owners = mcn["metadata"]["ownerReferences"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let owner_ok = owners.len() == 1
            && owners[0]["apiVersion"] == "v1"
            && owners[0]["kind"] == "Node"
            && owners[0]["name"] == self.node.as_str()
            && owners[0]["uid"] == node_uid;
        if !owner_ok {
            d.push(format!(
                "metadata.ownerReferences: got {}, expected the Node {} (uid {node_uid})",
                Value::from(owners),
                self.node
            ));
        }
        match conditions(&mcn["status"]) {
            Err(e) => d.push(format!("status.conditions: {e:#}")),
            Ok(got) => {
                for (t, want) in &self.conditions {
                    match got.get(t) {
                        None => d.push(format!("condition {t}: missing, expected {want:?}")),
                        Some(c) if c != want => {
                            d.push(format!("condition {t}: got {c:?}, expected {want:?}"));
                        }
                        Some(_) => {}
                    }
                }
                for t in got.keys().filter(|t| !self.conditions.contains_key(*t)) {
                    d.push(format!("condition {t}: not expected"));
                }
            }
        }
        d
    }
}

/// `status.conditions` by type; every one must have a lastTransitionTime.
pub fn conditions(status: &Value) -> Result<BTreeMap<String, Cond>> {
    let list = status["conditions"]
        .as_array()
        .ok_or_else(|| anyhow!("no conditions"))?;
    let mut out = BTreeMap::new();
    for c in list {
        let t = str_at(c, "/type")?;
        ensure!(
            c["lastTransitionTime"].is_string(),
            "condition {t} has no lastTransitionTime"
        );
        let cond = Cond {
            status: str_at(c, "/status")?,
            reason: str_at(c, "/reason")?,
            message: str_at(c, "/message")?,
        };
        ensure!(
            out.insert(t.clone(), cond).is_none(),
            "condition {t} appears twice"
        );
    }
    Ok(out)
}

fn str_at(v: &Value, pointer: &str) -> Result<String> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| anyhow!("{pointer} is not a string in {v}"))
}

/// The `machineconfiguration.openshift.io/*` annotations and
/// `spec.unschedulable` of a golden case's node, to check that the steps the
/// test replays reach the same node state the golden case was generated from.
pub fn node_state(case: &str) -> Result<(BTreeMap<String, String>, bool)> {
    let docs = yaml_docs(case, "node.yaml")?;
    let node = docs
        .first()
        .ok_or_else(|| anyhow!("{case}/node.yaml is empty"))?;
    Ok(mco_state(node))
}

/// The MCO annotations and unschedulable flag of a Node (JSON).
pub fn mco_state(node: &Value) -> (BTreeMap<String, String>, bool) {
    let annotations = node["metadata"]["annotations"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| k.starts_with(super::fixture::ANNOTATION_PREFIX))
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect()
        })
        .unwrap_or_default();
    let unschedulable = node["spec"]["unschedulable"].as_bool().unwrap_or(false);
    (annotations, unschedulable)
}

/// The config the golden update walks move a worker to.
pub const B: &str = "rendered-worker-b";

/// One update step as the MCD and the drain controller write it: node
/// annotations (prefix omitted) and `spec.unschedulable`, reaching the state
/// of golden case `case` (which `tests/golden/mcn/generate.py` wrote).
pub struct Step {
    pub case: &'static str,
    pub set: &'static [(&'static str, &'static str)],
    pub unschedulable: bool,
}

/// One standard (reboot) update as upstream's daemon and drain controller
/// write it (the MachineConfigNode enhancement's walk-through), as
/// `generate.py`'s reboot walk replays it.
pub const REBOOT_WALK: &[Step] = &[
    Step {
        case: "reboot-01-desired-config-set",
        set: &[("desiredConfig", B)],
        unschedulable: false,
    },
    Step {
        case: "reboot-02-working",
        set: &[("state", "Working")],
        unschedulable: false,
    },
    Step {
        case: "reboot-03-drain-requested",
        set: &[("desiredDrain", "drain-rendered-worker-b")],
        unschedulable: false,
    },
    Step {
        case: "reboot-04-cordoned",
        set: &[],
        unschedulable: true,
    },
    Step {
        case: "reboot-05-drained",
        set: &[("lastAppliedDrain", "drain-rendered-worker-b")],
        unschedulable: true,
    },
    Step {
        case: "reboot-06-rebooting",
        set: &[("post-config-action", "Rebooting")],
        unschedulable: true,
    },
    Step {
        case: "reboot-07-rebooted",
        set: &[("post-config-action", "")],
        unschedulable: true,
    },
    Step {
        case: "reboot-08-uncordon-requested",
        set: &[("desiredDrain", "uncordon-rendered-worker-b")],
        unschedulable: true,
    },
    Step {
        case: "reboot-09-uncordoned",
        set: &[("lastAppliedDrain", "uncordon-rendered-worker-b")],
        unschedulable: false,
    },
    Step {
        case: "reboot-10-done",
        set: &[("state", "Done"), ("currentConfig", B)],
        unschedulable: false,
    },
    Step {
        case: "reboot-11-resync",
        set: &[],
        unschedulable: false,
    },
];

/// The rebootless variant (rendered-worker-b differs only in SSH keys).
pub const REBOOTLESS_WALK: &[Step] = &[
    Step {
        case: "rebootless-01-desired-config-set",
        set: &[("desiredConfig", B)],
        unschedulable: false,
    },
    Step {
        case: "rebootless-02-working-no-drain",
        set: &[("state", "Working")],
        unschedulable: false,
    },
    Step {
        case: "rebootless-03-uncordon-requested",
        set: &[("desiredDrain", "uncordon-rendered-worker-b")],
        unschedulable: false,
    },
    Step {
        case: "rebootless-04-uncordoned",
        set: &[("lastAppliedDrain", "uncordon-rendered-worker-b")],
        unschedulable: false,
    },
    Step {
        case: "rebootless-05-done",
        set: &[("state", "Done"), ("currentConfig", B)],
        unschedulable: false,
    },
];

/// An update whose only change is a file an admin gave a `Restart` policy
/// in MachineConfiguration `cluster` (golden `policy-admin-file-restart`).
pub const RESTART_WALK: &[Step] = &[
    Step {
        case: "policy-admin-file-restart-01-working",
        set: &[("desiredConfig", B), ("state", "Working")],
        unschedulable: false,
    },
    Step {
        case: "policy-admin-file-restart-02-uncordon-requested",
        set: &[("desiredDrain", "uncordon-rendered-worker-b")],
        unschedulable: false,
    },
];

/// The OS image of the golden image-mode nodes before an image update, and
/// the one the image-only walk moves to (`generate.py`'s `image`, `image_2`).
pub const IMAGE_1: &str = "quay.io/openshift/os-layered@sha256:abababababababababababababababababababababababababababababababab";
pub const IMAGE_2: &str = "quay.io/openshift/os-layered@sha256:cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd";

/// An update of the OS image alone (gate `ImageModeStatusReporting` on):
/// the config stays, so the drain requests carry its name, as
/// `generate.py`'s image-only walk replays it.
pub const IMAGE_ONLY_WALK: &[Step] = &[
    Step {
        case: "image-only-01-desired-image-set",
        set: &[("desiredImage", IMAGE_2)],
        unschedulable: false,
    },
    Step {
        case: "image-only-02-working",
        set: &[("state", "Working")],
        unschedulable: false,
    },
    Step {
        case: "image-only-03-drain-requested",
        set: &[("desiredDrain", "drain-rendered-worker-a")],
        unschedulable: false,
    },
    Step {
        case: "image-only-04-cordoned",
        set: &[],
        unschedulable: true,
    },
    Step {
        case: "image-only-05-drained",
        set: &[("lastAppliedDrain", "drain-rendered-worker-a")],
        unschedulable: true,
    },
    Step {
        case: "image-only-06-rebooting",
        set: &[("post-config-action", "Rebooting")],
        unschedulable: true,
    },
    Step {
        case: "image-only-07-rebooted",
        set: &[("post-config-action", "")],
        unschedulable: true,
    },
    Step {
        case: "image-only-08-uncordon-requested",
        set: &[("desiredDrain", "uncordon-rendered-worker-a")],
        unschedulable: true,
    },
    Step {
        case: "image-only-09-uncordoned",
        set: &[("lastAppliedDrain", "uncordon-rendered-worker-a")],
        unschedulable: false,
    },
    Step {
        case: "image-only-10-done",
        set: &[("state", "Done"), ("currentImage", IMAGE_2)],
        unschedulable: false,
    },
];

/// Replays steps on `node` (see [`step`]).
pub async fn steps(
    fx: &mut Fixture,
    node: &str,
    uid: &str,
    walk: &[Step],
    limit: Duration,
) -> Result<()> {
    for one in walk {
        step(fx, node, uid, one, limit).await?;
    }
    Ok(())
}

/// Replays one step on `node`, checked against its golden node state first
/// (so the replay cannot drift from generate.py), then waits for the MCN;
/// returns what it expected.
pub async fn step(
    fx: &mut Fixture,
    node: &str,
    uid: &str,
    step: &Step,
    limit: Duration,
) -> Result<Expected> {
    let patched = fx
        .patch_node(node, step.set, Some(step.unschedulable))
        .await?;
    let (want_annotations, want_unschedulable) = node_state(step.case)?;
    let (got_annotations, got_unschedulable) = mco_state(&patched);
    ensure!(
        got_annotations == want_annotations && got_unschedulable == want_unschedulable,
        "replaying {} on {node}: node state differs from the golden node.yaml:\n got {got_annotations:?} unschedulable={got_unschedulable}\nwant {want_annotations:?} unschedulable={want_unschedulable}",
        step.case
    );
    let expected = Expected::load(step.case, node)?;
    let (took, _) = fx
        .wait_mcn(&expected, uid, limit)
        .await
        .with_context(|| format!("{node}, step {}", step.case))?;
    eprintln!("  {node} {}: converged in {took:.2?}", step.case);
    Ok(expected)
}
