//! The floor of a node-state call: a guest that answers an MCN of the shape
//! the real guest answers (its pool, a config name, every stored condition)
//! without deriving anything. It reads through its handles what the real
//! guest reads and drops it, and hands the stored conditions back as they
//! were lowered, so what it costs is what the sandbox and the typed contract
//! (`wit/node-state.wit`) cost before any logic runs: the `mcn` bench and
//! `make bench-scale` (`MCO_SCALE_SHADOW`) measure it beside the real guest
//! (docs/dev/benchmarks.md). A node without stored conditions gets the
//! default ones, not yet occurred: the host refuses an MCN without them.

#[cfg(target_arch = "wasm32")]
mod node_state {
    use exports::mco::machine_config::node_state::{
        ConfigVersion, Decision, Facts, Guest, MachineConfigNode, NodeLabels, NodeStatus,
        RenderedConfigs,
    };
    use mco::machine_config::types::{Condition, ConditionStatus};
    use std::hint::black_box;

    wit_bindgen::generate!({ world: "node-state-reporter", path: "../../wit" });

    struct Floor;

    /// The condition types every MCN carries (`mco_mcn::DEFAULT_CONDITION_TYPES`).
    const DEFAULT_TYPES: [&str; 14] = [
        "UpdatePrepared",
        "UpdateExecuted",
        "UpdatePostActionComplete",
        "UpdateComplete",
        "Resumed",
        "Drained",
        "AppliedFilesAndOS",
        "Cordoned",
        "RebootedNode",
        "Updated",
        "Uncordoned",
        "NodeDegraded",
        "PinnedImageSetsDegraded",
        "PinnedImageSetsProgressing",
    ];

    impl Guest for Floor {
        fn derive(labels: &NodeLabels, configs: &RenderedConfigs, facts: Facts) -> Decision {
            for name in configs.names() {
                black_box(configs.summary(&name));
            }
            let selectors = facts.pools.iter().filter_map(|p| p.node_selector.as_ref());
            for selector in selectors {
                let keys = selector.match_labels.iter().map(|(key, _)| key);
                for key in keys.chain(selector.match_expressions.iter().map(|r| &r.key)) {
                    black_box(labels.label(key));
                }
            }
            let Some(pool) = facts.pools.into_iter().next() else {
                return Decision::Skip("no pool".into());
            };
            let observed_generation = facts
                .stored
                .and_then(|stored| stored.observed_generation)
                .unwrap_or(1);
            Decision::Apply(MachineConfigNode {
                pool: pool.name,
                desired_config: pool.target_config.clone(),
                desired_image: None,
                status: Some(NodeStatus {
                    observed_generation,
                    config_version: ConfigVersion {
                        current: None,
                        desired: pool.target_config,
                    },
                    config_image: None,
                    conditions: if facts.previous.is_empty() {
                        DEFAULT_TYPES
                            .iter()
                            .map(|t| Condition {
                                type_: (*t).into(),
                                status: ConditionStatus::False,
                                reason: "NotYetOccurred".into(),
                                message: String::new(),
                            })
                            .collect()
                    } else {
                        facts.previous
                    },
                }),
            })
        }
    }

    export!(Floor);
}
