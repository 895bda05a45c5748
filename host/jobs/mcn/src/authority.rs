//! What a MachineConfigNode decision may say, checked by the host with the
//! node's own facts. The MCN's name and owner come from the host anyway;
//! this bounds the rest: the pool is one the host passed (or upstream's
//! placeholder), the config names come from the node's annotations or its
//! pool's target, the images from the node's annotations, every condition
//! type is one the CRD's set allows and appears at most once, only a
//! Windows node's MCN goes without status, and `observedGeneration` never
//! goes below the stored one nor beyond the generation the next write can
//! reach (the CRD forbids lowering it again, so an inflated value would
//! stick).

use std::collections::BTreeSet;

use mco_k8s_rules::quote;
use mco_mcn::{ANNOTATION_PREFIX, Decision, Facts, MachineConfigNode, NOT_YET_SET, NodeStatus};

/// How much of an offending value a message quotes, in bytes.
const QUOTE: usize = 120;

/// Every condition type the MCN CRD's set allows (the `StateProgress`
/// constants of openshift/api `machineconfiguration/v1/types_machineconfignode.go`):
/// the default list plus the types of the `ImageModeStatusReporting` gate
/// and the internal release image manager.
pub fn allowed_condition_types() -> impl Iterator<Item = &'static str> {
    mco_mcn::DEFAULT_CONDITION_TYPES
        .into_iter()
        .chain(mco_mcn::OTHER_CONDITION_TYPES)
}

/// The rule an `apply` decision breaks. Offending values are quoted, and
/// cut to [`QUOTE`] bytes, as the guest wrote them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Overreach {
    #[error(
        "the MCN guest puts node {node} in pool {pool}, which is not one of the pools the host passed ({passed}) nor {NOT_YET_SET}"
    )]
    Pool {
        node: String,
        pool: String,
        /// The pools the host passed, joined, or `none`.
        passed: String,
    },
    #[error(
        "the MCN guest reports node {node} without a status, which only a Windows node's MCN may lack"
    )]
    NoStatus { node: String },
    #[error(
        "the MCN guest lowers status.observedGeneration of node {node} from {floor} to {observed}"
    )]
    GenerationLowered {
        node: String,
        floor: i64,
        observed: i64,
    },
    #[error(
        "the MCN guest sets status.observedGeneration of node {node} to {observed}, beyond {ceiling}, the most the next write can reach"
    )]
    GenerationBeyond {
        node: String,
        observed: i64,
        ceiling: i64,
    },
    #[error(
        "the MCN guest sets {field} of node {node} to {name}, which is neither one of the node's config annotations nor its pool's target config"
    )]
    ConfigName {
        field: &'static str,
        node: String,
        name: String,
    },
    #[error(
        "the MCN guest sets {field} of node {node} to {image}, which is not one of the node's image annotations"
    )]
    Image {
        field: &'static str,
        node: String,
        image: String,
    },
    #[error(
        "the MCN guest reports condition type {kind}, which the MachineConfigNode CRD's condition set does not allow"
    )]
    ConditionType { kind: String },
    #[error("the MCN guest reports condition type {kind} more than once")]
    ConditionTwice { kind: String },
    #[error(
        "the MCN guest sets {field} of node {node}, which is written only with feature gate ImageModeStatusReporting on (it is off, and a Default cluster's CRD refuses the field)"
    )]
    GatedField { field: &'static str, node: String },
    #[error(
        "the MCN guest reports condition type AppliedFilesAndOS for node {node}, which feature gate ImageModeStatusReporting (on) replaces with AppliedFiles and AppliedOSImage"
    )]
    ReplacedCondition { node: String },
}

pub fn check(facts: &Facts, decision: &Decision) -> Result<(), Overreach> {
    let Decision::Apply(mcn) = decision else {
        return Ok(());
    };
    let node = &facts.node.name;
    let pools: Vec<&str> = facts.pools.iter().map(|p| p.name.as_str()).collect();
    if mcn.pool != NOT_YET_SET && !pools.contains(&mcn.pool.as_str()) {
        return Err(Overreach::Pool {
            node: node.clone(),
            pool: quote(&mcn.pool, QUOTE),
            passed: if pools.is_empty() {
                "none".to_owned()
            } else {
                pools.join(", ")
            },
        });
    }
    config_names(facts, mcn)?;
    images(facts, mcn)?;
    gated(facts, mcn)?;
    let Some(status) = &mcn.status else {
        let windows = facts
            .node
            .labels
            .get("kubernetes.io/os")
            .map(String::as_str)
            == Some("windows");
        return if windows {
            Ok(())
        } else {
            Err(Overreach::NoStatus { node: node.clone() })
        };
    };
    conditions(status)?;
    observed_generation(facts, status.observed_generation)
}

/// Not below the stored value; at most two above the stored generation
/// (a spec change, then the status write's "+1"), or 2 for a new MCN.
fn observed_generation(facts: &Facts, observed: i64) -> Result<(), Overreach> {
    let node = &facts.node.name;
    let stored = facts.stored.as_ref();
    let floor = stored
        .and_then(|s| s.observed_generation)
        .unwrap_or(i64::MIN);
    // A stored object has generation 1 at least, whatever it claims.
    let generation = stored.map_or(0, |s| {
        s.generation
            .unwrap_or(0)
            .max(s.observed_generation.unwrap_or(0).saturating_sub(1))
            .max(1)
    });
    let ceiling = generation.saturating_add(2).max(floor);
    if observed < floor {
        return Err(Overreach::GenerationLowered {
            node: node.clone(),
            floor,
            observed,
        });
    }
    if observed > ceiling {
        return Err(Overreach::GenerationBeyond {
            node: node.clone(),
            observed,
            ceiling,
        });
    }
    Ok(())
}

fn annotation<'f>(facts: &'f Facts, key: &str) -> Option<&'f str> {
    facts
        .node
        .annotations
        .get(&format!("{ANNOTATION_PREFIX}{key}"))
        .map(String::as_str)
}

/// desired/current config names: the node's annotations, its pool's
/// target config, or the placeholder.
fn config_names(facts: &Facts, mcn: &MachineConfigNode) -> Result<(), Overreach> {
    let pool_target = facts
        .pools
        .iter()
        .find(|p| p.name == mcn.pool)
        .map(|p| p.target_config.as_str());
    let allowed: BTreeSet<&str> = [
        annotation(facts, "currentConfig"),
        annotation(facts, "desiredConfig"),
        pool_target,
        Some(NOT_YET_SET),
    ]
    .into_iter()
    .flatten()
    .collect();
    let version = mcn.status.as_ref().map(|s| &s.config_version);
    for (field, name) in [
        ("spec.configVersion.desired", Some(&mcn.desired_config)),
        ("status.configVersion.desired", version.map(|v| &v.desired)),
        (
            "status.configVersion.current",
            version.and_then(|v| v.current.as_ref()),
        ),
    ] {
        if let Some(name) = name
            && !allowed.contains(name.as_str())
        {
            return Err(Overreach::ConfigName {
                field,
                node: facts.node.name.clone(),
                name: quote(name, QUOTE),
            });
        }
    }
    Ok(())
}

/// Beyond the issue: the images come from the node's image annotations.
fn images(facts: &Facts, mcn: &MachineConfigNode) -> Result<(), Overreach> {
    let allowed: BTreeSet<&str> = [
        annotation(facts, "currentImage"),
        annotation(facts, "desiredImage"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let image = mcn.status.as_ref().and_then(|s| s.config_image.as_ref());
    for (field, value) in [
        ("spec.configImage.desiredImage", mcn.desired_image.as_ref()),
        (
            "status.configImage.currentImage",
            image.and_then(|i| i.current_image.as_ref()),
        ),
        (
            "status.configImage.desiredImage",
            image.and_then(|i| i.desired_image.as_ref()),
        ),
    ] {
        if let Some(value) = value
            && !allowed.contains(value.as_str())
        {
            return Err(Overreach::Image {
                field,
                node: facts.node.name.clone(),
                image: quote(value, QUOTE),
            });
        }
    }
    Ok(())
}

/// What gate `ImageModeStatusReporting` decides: off, no `configImage`
/// anywhere; on, no `AppliedFilesAndOS` (upstream's migration removes it).
fn gated(facts: &Facts, mcn: &MachineConfigNode) -> Result<(), Overreach> {
    let node = || facts.node.name.clone();
    if facts.image_mode_status_reporting() {
        let replaced = mcn.status.as_ref().is_some_and(|s| {
            s.conditions
                .iter()
                .any(|c| c.type_ == mco_mcn::APPLIED_FILES_AND_OS)
        });
        return if replaced {
            Err(Overreach::ReplacedCondition { node: node() })
        } else {
            Ok(())
        };
    }
    if mcn.desired_image.is_some() {
        return Err(Overreach::GatedField {
            field: "spec.configImage",
            node: node(),
        });
    }
    if mcn
        .status
        .as_ref()
        .is_some_and(|s| s.config_image.is_some())
    {
        return Err(Overreach::GatedField {
            field: "status.configImage",
            node: node(),
        });
    }
    Ok(())
}

fn conditions(status: &NodeStatus) -> Result<(), Overreach> {
    let allowed: BTreeSet<&str> = allowed_condition_types().collect();
    let mut seen = BTreeSet::new();
    for condition in &status.conditions {
        let kind = condition.type_.as_str();
        if !allowed.contains(kind) {
            return Err(Overreach::ConditionType {
                kind: quote(kind, QUOTE),
            });
        }
        if !seen.insert(kind) {
            return Err(Overreach::ConditionTwice {
                kind: kind.to_owned(),
            });
        }
    }
    Ok(())
}
