//! The `node-state-reporter` component: converts WIT values to the library's
//! types and back. No decisions here. Same role, and same file name, as
//! `mco_bootimage::component` on the boot image side.

use exports::mco::machine_config::node_state as wit;
// Linked for its memcmp and bcmp, which replace wasi-libc's byte loops.
use mco::machine_config::types as wit_types;
use mco_guest_memcmp as _;

wit_bindgen::generate!({ world: "node-state-reporter", path: "../../wit" });

struct Component;

impl wit::Guest for Component {
    fn derive(facts: wit::Facts) -> wit::Decision {
        let facts: crate::Facts = facts.into();
        let decision = crate::derive(&facts);
        #[cfg(feature = "test-faults")]
        let decision = test_faults::apply(&facts, decision);
        match decision {
            crate::Decision::Apply(mcn) => wit::Decision::Apply(mcn.into()),
            crate::Decision::Skip(reason) => wit::Decision::Skip(reason),
            crate::Decision::Error(message) => wit::Decision::Error(message),
        }
    }
}

/// The faults of the rollout tests' candidate, chosen per node by its
/// label: `differ` adds ` (candidate)` to the message of the `Updated`
/// condition (or the first one), a difference the host's checks accept,
/// so the MCN shows which module wrote it; `trap` panics.
#[cfg(feature = "test-faults")]
mod test_faults {
    const LABEL: &str = "mco-e2e.io/candidate-fault";

    pub fn apply(facts: &crate::Facts, decision: crate::Decision) -> crate::Decision {
        match facts.node.labels.get(LABEL).map(String::as_str) {
            Some("trap") => panic!("candidate fault: trap on node {}", facts.node.name),
            Some("differ") => differ(decision),
            _ => decision,
        }
    }

    fn differ(mut decision: crate::Decision) -> crate::Decision {
        if let crate::Decision::Apply(mcn) = &mut decision
            && let Some(status) = mcn.status.as_mut()
        {
            let updated = status.conditions.iter().position(|c| c.type_ == "Updated");
            if let Some(condition) = status.conditions.get_mut(updated.unwrap_or(0)) {
                condition.message.push_str(" (candidate)");
            }
        }
        decision
    }
}

export!(Component);

impl From<wit::Facts> for crate::Facts {
    fn from(facts: wit::Facts) -> Self {
        let node = facts.node;
        crate::Facts {
            node: crate::Node {
                name: node.name,
                phase: node.phase,
                unschedulable: node.unschedulable,
                labels: node.labels.into_iter().collect(),
                annotations: node.annotations.into_iter().collect(),
            },
            pools: facts
                .pools
                .into_iter()
                .map(|pool| crate::Pool {
                    name: pool.name,
                    node_selector: pool.node_selector.map(|s| crate::LabelSelector {
                        match_labels: s.match_labels.into_iter().collect(),
                        match_expressions: s
                            .match_expressions
                            .into_iter()
                            .map(|r| crate::SelectorRequirement {
                                key: r.key,
                                operator: r.operator,
                                values: r.values,
                            })
                            .collect(),
                    }),
                    target_config: pool.target_config,
                })
                .collect(),
            configs: facts
                .configs
                .into_iter()
                .map(|c| crate::RenderedConfig {
                    name: c.name,
                    spec: c.spec,
                })
                .collect(),
            policies: crate::DisruptionPolicies {
                files: facts
                    .policies
                    .files
                    .into_iter()
                    .map(|f| crate::FilePolicy {
                        path: f.path,
                        actions: actions(f.actions),
                    })
                    .collect(),
                units: facts
                    .policies
                    .units
                    .into_iter()
                    .map(|u| crate::UnitPolicy {
                        name: u.name,
                        actions: actions(u.actions),
                    })
                    .collect(),
                ssh_key: actions(facts.policies.ssh_key),
            },
            stored: facts.stored.map(|s| crate::StoredNode {
                generation: s.generation,
                observed_generation: s.observed_generation,
                pool: s.pool,
                desired_config: s.desired_config,
                desired_image: s.desired_image,
                current_config: s.current_config,
            }),
            previous: facts.previous.into_iter().map(Into::into).collect(),
            feature_gates: facts.feature_gates.into_iter().collect(),
        }
    }
}

fn actions(actions: Vec<wit::DisruptionAction>) -> Vec<crate::DisruptionAction> {
    use crate::DisruptionAction as A;
    actions
        .into_iter()
        .map(|action| match action {
            wit::DisruptionAction::Reboot => A::Reboot,
            wit::DisruptionAction::Drain => A::Drain,
            wit::DisruptionAction::Reload(service) => A::Reload(service),
            wit::DisruptionAction::Restart(service) => A::Restart(service),
            wit::DisruptionAction::DaemonReload => A::DaemonReload,
            wit::DisruptionAction::None => A::None,
            wit::DisruptionAction::Special => A::Special,
        })
        .collect()
}

impl From<wit_types::Condition> for crate::Condition {
    fn from(c: wit_types::Condition) -> Self {
        let status = match c.status {
            wit_types::ConditionStatus::True => crate::ConditionStatus::True,
            wit_types::ConditionStatus::False => crate::ConditionStatus::False,
            wit_types::ConditionStatus::Unknown => crate::ConditionStatus::Unknown,
        };
        crate::Condition {
            type_: c.type_,
            status,
            reason: c.reason,
            message: c.message,
        }
    }
}

impl From<crate::Condition> for wit_types::Condition {
    fn from(c: crate::Condition) -> Self {
        let status = match c.status {
            crate::ConditionStatus::True => wit_types::ConditionStatus::True,
            crate::ConditionStatus::False => wit_types::ConditionStatus::False,
            crate::ConditionStatus::Unknown => wit_types::ConditionStatus::Unknown,
        };
        wit_types::Condition {
            type_: c.type_,
            status,
            reason: c.reason,
            message: c.message,
        }
    }
}

impl From<crate::MachineConfigNode> for wit::MachineConfigNode {
    fn from(mcn: crate::MachineConfigNode) -> Self {
        wit::MachineConfigNode {
            pool: mcn.pool,
            desired_config: mcn.desired_config,
            desired_image: mcn.desired_image,
            status: mcn.status.map(|status| wit::NodeStatus {
                observed_generation: status.observed_generation,
                config_version: wit::ConfigVersion {
                    current: status.config_version.current,
                    desired: status.config_version.desired,
                },
                config_image: status.config_image.map(|i| wit::ConfigImage {
                    current_image: i.current_image,
                    desired_image: i.desired_image,
                }),
                conditions: status.conditions.into_iter().map(Into::into).collect(),
            }),
        }
    }
}
