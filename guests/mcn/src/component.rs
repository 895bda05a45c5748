//! The `node-state-reporter` component: converts WIT values to the library's
//! types and back, and looks up through the handles it is lent what the
//! library reads (the labels the pools' selectors name, the configs'
//! summaries). No decisions here. Same role, and same file name, as
//! `mco_bootimage::component` on the boot image side.

use std::sync::Arc;

use exports::mco::machine_config::node_state as wit;
use exports::mco::machine_config::node_state_records as records;
use mco::machine_config::node_inputs as inputs;
use mco::machine_config::types as wit_types;
// Linked for its memcmp and bcmp, which replace wasi-libc's byte loops.
use mco_guest_memcmp as _;

wit_bindgen::generate!({ world: "node-state-offline", path: "../../wit" });

struct Component;

impl wit::Guest for Component {
    fn derive(
        labels: &inputs::NodeLabels,
        configs: &inputs::RenderedConfigs,
        facts: wit::Facts,
    ) -> wit::Decision {
        let configs = configs
            .names()
            .into_iter()
            .filter_map(|name| configs.summary(&name).map(|summary| (name, summary)));
        decide(facts, |key| labels.label(key), configs)
    }
}

impl records::Guest for Component {
    fn derive_records(
        labels: Vec<(String, String)>,
        configs: Vec<records::RenderedConfig>,
        facts: wit::Facts,
    ) -> wit::Decision {
        let labels: std::collections::BTreeMap<String, String> = labels.into_iter().collect();
        let configs = configs.into_iter().map(|c| (c.name, c.summary));
        decide(facts, |key| labels.get(key).cloned(), configs)
    }
}

/// Both entries: the labels the library reads (those the pools' selectors
/// name) looked up through `label`, the configs' summaries converted, and
/// the library's decision converted back.
fn decide(
    facts: wit::Facts,
    label: impl Fn(&str) -> Option<String>,
    configs: impl Iterator<Item = (String, inputs::Summary)>,
) -> wit::Decision {
    let mut facts: crate::Facts = facts.into();
    #[cfg(feature = "test-faults")]
    let read = [test_faults::LABEL];
    #[cfg(not(feature = "test-faults"))]
    let read: [&str; 0] = [];
    let keys = crate::pools::label_keys(&facts.pools)
        .into_iter()
        .chain(read);
    facts.node.labels = keys
        .filter_map(|key| label(key).map(|value| (key.to_string(), value)))
        .collect();
    facts.configs = configs
        .map(|(name, summary)| crate::RenderedConfig {
            name,
            spec: Arc::new(summary.into()),
        })
        .collect();
    let decision = crate::derive(&facts);
    #[cfg(feature = "test-faults")]
    let decision = test_faults::apply(&facts, decision);
    match decision {
        crate::Decision::Apply(mcn) => wit::Decision::Apply(mcn.into()),
        crate::Decision::Skip(reason) => wit::Decision::Skip(reason),
        crate::Decision::Error(message) => wit::Decision::Error(message),
    }
}

/// The faults of the rollout tests' candidate, chosen per node by its
/// label: `differ` adds ` (candidate)` to the message of the `Updated`
/// condition (or the first one), a difference the host's checks accept,
/// so the MCN shows which module wrote it; `trap` panics.
#[cfg(feature = "test-faults")]
mod test_faults {
    pub const LABEL: &str = "mco-e2e.io/candidate-fault";

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
                // Looked up through the handle, in `derive`.
                labels: Default::default(),
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
            // Read through the handle, in `derive`.
            configs: Vec::new(),
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

impl From<inputs::Summary> for crate::Summary {
    fn from(summary: inputs::Summary) -> Self {
        crate::Summary {
            spec: summary.spec.map(|digests| {
                let s = digests.sections;
                crate::Digests {
                    // In `crate::Section::ALL`'s order.
                    sections: [
                        s.os_image_url,
                        s.extensions,
                        s.kernel_arguments,
                        s.passwd,
                        s.passwd_groups,
                        s.passwd_users,
                        s.ignition_kernel_arguments,
                        s.files,
                        s.units,
                        s.disks,
                        s.filesystems,
                        s.raid,
                        s.directories,
                        s.links,
                    ]
                    .map(|digest| digest.map(from_words)),
                    kernel_type: digests.kernel_type,
                    fips: digests.fips,
                    files: digests
                        .files
                        .map(|files| entries(files, digests.registries_conf)),
                    units: digests.units.map(|units| entries(units, String::new())),
                }
            }),
            view: summary.view.map(|view| crate::View {
                users: view
                    .users
                    .into_iter()
                    .map(|u| crate::User {
                        name: u.name,
                        set_fields: u.set_fields,
                        ssh_keys: u.ssh_keys,
                    })
                    .collect(),
                files: view
                    .files
                    .into_iter()
                    .map(|f| crate::FileNote {
                        path: f.path,
                        appends: f.appends,
                    })
                    .collect(),
            }),
        }
    }
}

fn entries(entries: Vec<inputs::Entry>, registries_conf: String) -> crate::Entries {
    let by_key = entries
        .into_iter()
        .map(|e| (e.key, from_words(e.digest)))
        .collect();
    crate::Entries::new(by_key, registries_conf)
}

fn from_words(words: inputs::Digest) -> crate::Digest {
    crate::digest_from_words([words.0, words.1, words.2, words.3])
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
