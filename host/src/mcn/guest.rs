//! The node-state guest: the WIT binding of world `node-state-reporter`,
//! the conversions between WIT and the guest library's types, and the one
//! place where what a guest returns is checked before anyone acts on it.

use mco_mcn as logic;

use crate::runtime::{Guest, GuestError, GuestState, World};

mod wit_bindings {
    wasmtime::component::bindgen!({ world: "node-state-reporter", path: "../wit" });
}

use wit_bindings::NodeStateReporterPre;
use wit_bindings::exports::mco::machine_config::node_state as wit;
use wit_bindings::mco::machine_config::types as wit_types;

/// The interface a node-state guest must export.
pub const NODE_STATE_INTERFACE: &str = "mco:machine-config/node-state@0.4.0";

impl World for NodeStateReporterPre<GuestState> {
    const INTERFACE: &'static str = NODE_STATE_INTERFACE;
    fn bind(pre: wasmtime::component::InstancePre<GuestState>) -> wasmtime::Result<Self> {
        NodeStateReporterPre::new(pre)
    }
}

/// A loaded node-state guest, ready for any number of evaluations.
pub type McnGuest = Guest<NodeStateReporterPre<GuestState>>;

impl McnGuest {
    /// Runs the guest on `facts` in a fresh instance. What it returns is
    /// checked against what the CRD accepts and what the job promises
    /// (`mco_mcn::validate`: every default condition present, names the API
    /// server accepts, bounded texts); output that fails is the guest's
    /// failure, never something to write.
    pub fn derive(&self, facts: &logic::Facts) -> Result<logic::Decision, GuestError> {
        let mut store = self.store();
        let input = to_wit(facts);
        let result = self.bindings().instantiate(&mut store).and_then(|guest| {
            guest
                .mco_machine_config_node_state()
                .call_derive(&mut store, &input)
        });
        let decision = from_wit(self.finish(&store, result)?);
        self.checked(facts, decision)
    }

    /// Derives several nodes in one fresh instance: guests are pure, so
    /// nothing carries over from one node to the next, and instantiation is
    /// paid once. If the instance fails, the nodes it had not finished are
    /// retried one instance each, so only the culprit fails.
    pub fn derive_batch(&self, batch: &[logic::Facts]) -> Vec<Result<logic::Decision, GuestError>> {
        let mut store = self.store();
        let Ok(instance) = self.bindings().instantiate(&mut store) else {
            return batch.iter().map(|facts| self.derive(facts)).collect();
        };
        let mut results = Vec::with_capacity(batch.len());
        for (done, facts) in batch.iter().enumerate() {
            self.rearm(&mut store);
            let call = instance
                .mco_machine_config_node_state()
                .call_derive(&mut store, &to_wit(facts));
            match call {
                Ok(decision) => results.push(self.checked(facts, from_wit(decision))),
                Err(_) => {
                    results.extend(batch[done..].iter().map(|facts| self.derive(facts)));
                    break;
                }
            }
        }
        store.data().log_stderr(&self.module().name);
        results
    }

    /// The one place MCN output is checked: what the CRD accepts
    /// (`mco_mcn::validate`), then what this node's facts allow
    /// (`authority::check`: its pools, config names, images, condition
    /// types, observedGeneration).
    fn checked(
        &self,
        facts: &logic::Facts,
        decision: logic::Decision,
    ) -> Result<logic::Decision, GuestError> {
        logic::validate(&decision, facts.image_mode_status_reporting())
            .and_then(|()| super::authority::check(facts, &decision).map_err(|e| e.to_string()))
            .map_err(|detail| self.invalid_output(detail))?;
        Ok(decision)
    }
}

fn pairs(map: &std::collections::BTreeMap<String, String>) -> Vec<(String, String)> {
    map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn to_wit(facts: &logic::Facts) -> wit::Facts {
    let node = &facts.node;
    wit::Facts {
        node: wit::Node {
            name: node.name.clone(),
            phase: node.phase.clone(),
            unschedulable: node.unschedulable,
            labels: pairs(&node.labels),
            annotations: pairs(&node.annotations),
        },
        pools: facts
            .pools
            .iter()
            .map(|pool| wit::Pool {
                name: pool.name.clone(),
                node_selector: pool.node_selector.as_ref().map(|s| wit::LabelSelector {
                    match_labels: pairs(&s.match_labels),
                    match_expressions: s
                        .match_expressions
                        .iter()
                        .map(|r| wit::LabelSelectorRequirement {
                            key: r.key.clone(),
                            operator: r.operator.clone(),
                            values: r.values.clone(),
                        })
                        .collect(),
                }),
                target_config: pool.target_config.clone(),
            })
            .collect(),
        configs: facts
            .configs
            .iter()
            .map(|c| wit::RenderedConfig {
                name: c.name.clone(),
                spec: c.spec.clone(),
            })
            .collect(),
        policies: wit::DisruptionPolicies {
            files: facts
                .policies
                .files
                .iter()
                .map(|f| wit::FilePolicy {
                    path: f.path.clone(),
                    actions: actions(&f.actions),
                })
                .collect(),
            units: facts
                .policies
                .units
                .iter()
                .map(|u| wit::UnitPolicy {
                    name: u.name.clone(),
                    actions: actions(&u.actions),
                })
                .collect(),
            ssh_key: actions(&facts.policies.ssh_key),
        },
        stored: facts.stored.as_ref().map(|s| wit::StoredNode {
            generation: s.generation,
            observed_generation: s.observed_generation,
            pool: s.pool.clone(),
            desired_config: s.desired_config.clone(),
            desired_image: s.desired_image.clone(),
            current_config: s.current_config.clone(),
        }),
        previous: facts
            .previous
            .iter()
            .map(|c| wit_types::Condition {
                type_: c.type_.clone(),
                status: match c.status {
                    logic::ConditionStatus::True => wit_types::ConditionStatus::True,
                    logic::ConditionStatus::False => wit_types::ConditionStatus::False,
                    logic::ConditionStatus::Unknown => wit_types::ConditionStatus::Unknown,
                },
                reason: c.reason.clone(),
                message: c.message.clone(),
            })
            .collect(),
        feature_gates: facts.feature_gates.iter().cloned().collect(),
    }
}

fn actions(actions: &[logic::DisruptionAction]) -> Vec<wit::DisruptionAction> {
    use logic::DisruptionAction as A;
    actions
        .iter()
        .map(|action| match action {
            A::Reboot => wit::DisruptionAction::Reboot,
            A::Drain => wit::DisruptionAction::Drain,
            A::Reload(service) => wit::DisruptionAction::Reload(service.clone()),
            A::Restart(service) => wit::DisruptionAction::Restart(service.clone()),
            A::DaemonReload => wit::DisruptionAction::DaemonReload,
            A::None => wit::DisruptionAction::None,
            A::Special => wit::DisruptionAction::Special,
        })
        .collect()
}

fn from_wit(decision: wit::Decision) -> logic::Decision {
    match decision {
        wit::Decision::Apply(mcn) => logic::Decision::Apply(logic::MachineConfigNode {
            pool: mcn.pool,
            desired_config: mcn.desired_config,
            desired_image: mcn.desired_image,
            status: mcn.status.map(|status| logic::NodeStatus {
                observed_generation: status.observed_generation,
                config_version: logic::ConfigVersion {
                    current: status.config_version.current,
                    desired: status.config_version.desired,
                },
                config_image: status.config_image.map(|i| logic::ConfigImage {
                    current_image: i.current_image,
                    desired_image: i.desired_image,
                }),
                conditions: status
                    .conditions
                    .into_iter()
                    .map(|c| logic::Condition {
                        type_: c.type_,
                        status: match c.status {
                            wit_types::ConditionStatus::True => logic::ConditionStatus::True,
                            wit_types::ConditionStatus::False => logic::ConditionStatus::False,
                            wit_types::ConditionStatus::Unknown => logic::ConditionStatus::Unknown,
                        },
                        reason: c.reason,
                        message: c.message,
                    })
                    .collect(),
            }),
        }),
        wit::Decision::Skip(reason) => logic::Decision::Skip(reason),
        wit::Decision::Error(message) => logic::Decision::Error(message),
    }
}
