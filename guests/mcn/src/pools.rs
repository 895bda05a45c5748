//! Which MachineConfigPool a node reports under, as MCO's helpers decide it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use kube_core::{Selector, SelectorExt};

use std::collections::BTreeSet;

use crate::{LabelSelector, Node, Pool};

const OS_LABEL: &str = "kubernetes.io/os";

/// The labels the derivation reads: the OS label and every key the pools'
/// selectors name (a selector's result depends on no other label). A guest
/// lent the node's labels (WIT `node-labels`) looks up only these.
pub fn label_keys(pools: &[Pool]) -> BTreeSet<&str> {
    let selectors = pools.iter().filter_map(|p| p.node_selector.as_ref());
    selectors
        .flat_map(|s| {
            let labels = s.match_labels.keys().map(String::as_str);
            labels.chain(s.match_expressions.iter().map(|r| r.key.as_str()))
        })
        .chain([OS_LABEL])
        .collect()
}

pub fn is_windows(node: &Node) -> bool {
    node.labels.get(OS_LABEL).is_some_and(|os| os == "windows")
}

/// The node's primary pool: `master` wins over a custom pool, a custom pool
/// wins over `worker`, and a node in two custom pools cannot be reported.
/// Windows nodes and nodes no pool selects have none.
pub fn primary_pool<'a>(node: &Node, pools: &'a [Pool]) -> Result<Option<&'a Pool>, String> {
    if is_windows(node) {
        return Ok(None);
    }
    let mut master = None;
    let mut worker = None;
    let mut custom = Vec::new();
    for pool in pools {
        if !selects(pool, node)? {
            continue;
        }
        match pool.name.as_str() {
            "master" => master = Some(pool),
            "worker" => worker = Some(pool),
            _ => custom.push(pool),
        }
    }
    match custom.as_slice() {
        [] => Ok(master.or(worker)),
        [only] => Ok(master.or(Some(*only))),
        many => Err(format!(
            "node {} belongs to {} custom roles, cannot proceed with this Node",
            node.name,
            many.len()
        )),
    }
}

/// An absent or empty selector selects nothing (unlike Kubernetes' usual
/// "empty matches all"), so a half-written pool cannot capture every node.
fn selects(pool: &Pool, node: &Node) -> Result<bool, String> {
    let Some(selector) = &pool.node_selector else {
        return Ok(false);
    };
    if selector.match_labels.is_empty() && selector.match_expressions.is_empty() {
        return Ok(false);
    }
    let selector = Selector::try_from(to_api(selector)).map_err(|err| {
        format!(
            "MachineConfigPool {} has an invalid nodeSelector: {err}",
            pool.name
        )
    })?;
    Ok(selector.matches(&node.labels))
}

fn to_api(selector: &LabelSelector) -> meta::LabelSelector {
    meta::LabelSelector {
        match_labels: Some(selector.match_labels.clone()),
        match_expressions: Some(
            selector
                .match_expressions
                .iter()
                .map(|r| meta::LabelSelectorRequirement {
                    key: r.key.clone(),
                    operator: r.operator.clone(),
                    values: Some(r.values.clone()),
                })
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SelectorRequirement;

    fn node(labels: &[&str]) -> Node {
        Node {
            name: "n1".into(),
            labels: labels
                .iter()
                .map(|l| (l.to_string(), String::new()))
                .collect(),
            ..Node::default()
        }
    }

    fn pool(name: &str, label: &str) -> Pool {
        Pool {
            name: name.into(),
            node_selector: Some(LabelSelector {
                match_labels: [(label.to_string(), String::new())].into(),
                match_expressions: vec![],
            }),
            target_config: format!("rendered-{name}-1"),
        }
    }

    fn standard() -> Vec<Pool> {
        vec![
            pool("master", "node-role.kubernetes.io/master"),
            pool("worker", "node-role.kubernetes.io/worker"),
            pool("infra", "node-role.kubernetes.io/infra"),
            pool("gpu", "node-role.kubernetes.io/gpu"),
        ]
    }

    /// Also checks that the node's labels outside [`label_keys`] change
    /// nothing, as a guest that looks up only those sees it.
    fn primary(labels: &[&str], pools: &[Pool]) -> Result<Option<String>, String> {
        let node = node(labels);
        let mut only_read = node.clone();
        let keys = label_keys(pools);
        only_read
            .labels
            .retain(|key, _| keys.contains(key.as_str()));
        let primary = primary_pool(&node, pools).map(|p| p.map(|p| p.name.clone()));
        let seen = primary_pool(&only_read, pools).map(|p| p.map(|p| p.name.clone()));
        assert_eq!(primary, seen, "{labels:?}");
        primary
    }

    #[test]
    fn master_beats_custom_beats_worker() {
        let pools = standard();
        assert_eq!(
            primary(&["node-role.kubernetes.io/worker"], &pools),
            Ok(Some("worker".into()))
        );
        assert_eq!(
            primary(
                &[
                    "node-role.kubernetes.io/worker",
                    "node-role.kubernetes.io/infra"
                ],
                &pools
            ),
            Ok(Some("infra".into()))
        );
        assert_eq!(
            primary(
                &[
                    "node-role.kubernetes.io/master",
                    "node-role.kubernetes.io/infra"
                ],
                &pools
            ),
            Ok(Some("master".into()))
        );
        assert_eq!(primary(&["unrelated"], &pools), Ok(None));
    }

    #[test]
    fn two_custom_pools_is_an_error() {
        let err = primary(
            &[
                "node-role.kubernetes.io/infra",
                "node-role.kubernetes.io/gpu",
            ],
            &standard(),
        );
        assert_eq!(
            err,
            Err("node n1 belongs to 2 custom roles, cannot proceed with this Node".into())
        );
    }

    #[test]
    fn empty_or_missing_selectors_match_nothing() {
        let empty = Pool {
            node_selector: Some(LabelSelector::default()),
            ..pool("worker", "x")
        };
        let missing = Pool {
            node_selector: None,
            ..pool("master", "x")
        };
        assert_eq!(primary(&["anything"], &[empty, missing]), Ok(None));
    }

    #[test]
    fn windows_nodes_have_no_pool() {
        let mut n = node(&["node-role.kubernetes.io/worker"]);
        n.labels.insert(OS_LABEL.into(), "windows".into());
        assert_eq!(
            primary_pool(&n, &standard()).map(|p| p.is_some()),
            Ok(false)
        );
    }

    #[test]
    fn match_expressions_work_and_bad_operators_are_errors() {
        let mut gpu = pool("gpu", "x");
        gpu.node_selector = Some(LabelSelector {
            match_labels: Default::default(),
            match_expressions: vec![SelectorRequirement {
                key: "accelerator".into(),
                operator: "In".into(),
                values: vec!["a100".into()],
            }],
        });
        let mut n = node(&[]);
        n.labels.insert("accelerator".into(), "a100".into());
        assert_eq!(
            primary_pool(&n, std::slice::from_ref(&gpu)).map(|p| p.is_some()),
            Ok(true)
        );
        if let Some(s) = gpu.node_selector.as_mut() {
            s.match_expressions[0].operator = "Near".into();
        }
        assert!(primary_pool(&n, &[gpu]).is_err());
    }
}
