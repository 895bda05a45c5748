//! Calling the node-state guest: a fresh store and instance per evaluation
//! from one pre-instantiated component.

use mco_mcn as logic;

use super::bindings::node_state::NodeStateReporterPre;
use super::bindings::node_state::exports::mco::machine_config::node_state as wit;
use super::bindings::node_state::mco::machine_config::types as wit_types;
use super::engine::{GuestLimits, Runtime};
use super::error::{GuestError, LoadError};
use super::guest::{GuestModule, check_limits, link};
use super::store::GuestState;

/// The interface a node-state guest must export.
pub const NODE_STATE_INTERFACE: &str = "mco:machine-config/node-state@0.1.0";

/// A loaded node-state guest, ready for any number of evaluations.
#[derive(Clone)]
pub struct McnGuest {
    runtime: Runtime,
    module: GuestModule,
    pre: NodeStateReporterPre<GuestState>,
    limits: GuestLimits,
}

impl McnGuest {
    pub fn new(runtime: &Runtime, module: GuestModule) -> Result<Self, LoadError> {
        let pre = link(
            runtime,
            &module,
            NODE_STATE_INTERFACE,
            NodeStateReporterPre::new,
        )?;
        Ok(McnGuest {
            runtime: runtime.clone(),
            module,
            pre,
            limits: runtime.default_limits(),
        })
    }

    /// The same guest under its registry entry's own limits.
    pub fn with_limits(mut self, limits: GuestLimits) -> Result<Self, LoadError> {
        check_limits(&self.runtime, &self.module, &limits)?;
        self.limits = limits;
        Ok(self)
    }

    pub fn module(&self) -> &GuestModule {
        &self.module
    }

    pub fn limits(&self) -> &GuestLimits {
        &self.limits
    }

    /// Runs the guest on `facts` in a fresh instance.
    pub fn derive(&self, facts: &logic::Facts) -> Result<logic::Decision, GuestError> {
        let mut store = self.runtime.new_store(&self.limits);
        let input = to_wit(facts);
        let result = self.pre.instantiate(&mut store).and_then(|guest| {
            guest
                .mco_machine_config_node_state()
                .call_derive(&mut store, &input)
        });
        store.data().log_stderr(&self.module.name);
        match result {
            Ok(decision) => Ok(from_wit(decision)),
            Err(err) => {
                Err(self
                    .runtime
                    .classify(&self.module.name, &err, store.data(), &self.limits))
            }
        }
    }

    /// Derives several nodes in one fresh instance: guests are pure, so
    /// nothing carries over from one node to the next, and instantiation is
    /// paid once. If the instance fails, the nodes it had not finished are
    /// retried one instance each, so only the culprit fails.
    pub fn derive_batch(&self, batch: &[logic::Facts]) -> Vec<Result<logic::Decision, GuestError>> {
        let mut store = self.runtime.new_store(&self.limits);
        let Ok(instance) = self.pre.instantiate(&mut store) else {
            return batch.iter().map(|facts| self.derive(facts)).collect();
        };
        let mut results = Vec::with_capacity(batch.len());
        for (done, facts) in batch.iter().enumerate() {
            self.runtime.rearm(&mut store, &self.limits);
            let call = instance
                .mco_machine_config_node_state()
                .call_derive(&mut store, &to_wit(facts));
            match call {
                Ok(decision) => results.push(Ok(from_wit(decision))),
                Err(_) => {
                    results.extend(batch[done..].iter().map(|facts| self.derive(facts)));
                    break;
                }
            }
        }
        results
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
            generation: node.generation,
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
    }
}

fn from_wit(decision: wit::Decision) -> logic::Decision {
    match decision {
        wit::Decision::Apply(mcn) => {
            let status = mcn.status;
            logic::Decision::Apply(logic::MachineConfigNode {
                pool: mcn.pool,
                desired_config: mcn.desired_config,
                desired_image: mcn.desired_image,
                status: logic::NodeStatus {
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
                                wit_types::ConditionStatus::Unknown => {
                                    logic::ConditionStatus::Unknown
                                }
                            },
                            reason: c.reason,
                            message: c.message,
                        })
                        .collect(),
                },
            })
        }
        wit::Decision::Skip(reason) => logic::Decision::Skip(reason),
        wit::Decision::Error(message) => logic::Decision::Error(message),
    }
}
