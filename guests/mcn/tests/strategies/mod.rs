//! proptest strategies for node-state facts: nodes with arbitrary
//! `machineconfiguration.openshift.io/*` annotations (realistic values mixed
//! with hostile ones), pools with odd selectors, rendered configs with odd
//! specs and stored conditions of any shape. Shared with the host's
//! wasm-against-native property test (`host/tests/properties.rs`), which
//! includes this file by path.

#![allow(dead_code, reason = "each including test uses a different subset")]

use std::collections::BTreeMap;

use mco_mcn::{
    Condition, ConditionStatus, DEFAULT_CONDITION_TYPES, DisruptionAction, DisruptionPolicies,
    Facts, FilePolicy, LabelSelector, Node, Pool, RenderedConfig, SelectorRequirement, StoredNode,
    UnitPolicy,
};
use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::sample::select;

pub const PREFIX: &str = "machineconfiguration.openshift.io/";

/// Every annotation the derivation reads, and one it does not.
const KEYS: [&str; 12] = [
    "currentConfig",
    "desiredConfig",
    "state",
    "reason",
    "desiredDrain",
    "lastAppliedDrain",
    "post-config-action",
    "currentImage",
    "desiredImage",
    "controlPlaneTopology",
    "ssh",
    "unrelated",
];

/// Values the daemon really writes, so generated nodes reach every phase.
const REAL_VALUES: [&str; 16] = [
    "rendered-worker-a",
    "rendered-worker-b",
    "rendered-master-a",
    "Done",
    "Working",
    "Degraded",
    "Unreconcilable",
    "drain-rendered-worker-b",
    "uncordon-rendered-worker-b",
    "drain-rendered-worker-a",
    "uncordon-rendered-worker-a",
    "Rebooting",
    "SingleReplica",
    "quay.io/openshift/os@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "quay.io/openshift/os@sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
    "failed to drain node: timed out",
];

const LABELS: [&str; 5] = [
    "node-role.kubernetes.io/worker",
    "node-role.kubernetes.io/master",
    "node-role.kubernetes.io/infra",
    "kubernetes.io/os",
    "custom",
];

/// Text an attacker or a broken writer could put anywhere: empty, blank,
/// control characters, any Unicode, almost-valid names, and megabyte-ish
/// blobs.
pub fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(REAL_VALUES.to_vec()).prop_map(str::to_owned),
        1 => Just(String::new()),
        1 => "[ \t\r\n]{1,3}",
        2 => "[a-z0-9.-]{1,30}",
        1 => "[A-Za-z0-9_,: -]{1,30}",
        2 => any::<String>(),
        1 => "\\PC{0,60}",
        1 => (250usize..20_000).prop_map(|n| "x".repeat(n)),
        1 => (1usize..300).prop_map(|n| format!("rendered-{}", "a".repeat(n))),
    ]
}

fn annotations() -> impl Strategy<Value = BTreeMap<String, String>> {
    let key = prop_oneof![
        6 => select(KEYS.to_vec()).prop_map(|k| format!("{PREFIX}{k}")),
        1 => any::<String>(),
    ];
    btree_map(key, hostile_text(), 0..12)
}

fn labels() -> impl Strategy<Value = BTreeMap<String, String>> {
    let value = prop_oneof![
        4 => Just(String::new()),
        1 => Just("windows".to_owned()),
        1 => Just("linux".to_owned()),
        1 => hostile_text(),
    ];
    let key = prop_oneof![
        6 => select(LABELS.to_vec()).prop_map(str::to_owned),
        1 => any::<String>(),
    ];
    btree_map(key, value, 0..4)
}

fn selector() -> impl Strategy<Value = Option<LabelSelector>> {
    let requirement = (
        select(LABELS.to_vec()).prop_map(str::to_owned),
        prop_oneof![
            select(vec!["In", "NotIn", "Exists", "DoesNotExist"]).prop_map(str::to_owned),
            hostile_text(),
        ],
        vec(hostile_text(), 0..3),
    )
        .prop_map(|(key, operator, values)| SelectorRequirement {
            key,
            operator,
            values,
        });
    proptest::option::weighted(
        0.9,
        (labels(), vec(requirement, 0..2)).prop_map(|(match_labels, match_expressions)| {
            LabelSelector {
                match_labels,
                match_expressions,
            }
        }),
    )
}

fn pool() -> impl Strategy<Value = Pool> {
    let name = prop_oneof![
        4 => select(vec!["worker", "master", "infra", "custom"]).prop_map(str::to_owned),
        1 => hostile_text(),
    ];
    (name, selector(), hostile_text()).prop_map(|(name, node_selector, target_config)| Pool {
        name,
        node_selector,
        target_config,
    })
}

fn spec() -> impl Strategy<Value = String> {
    let os = prop_oneof![
        Just("os-a".to_owned()),
        Just("os-b".to_owned()),
        hostile_text()
    ];
    let key = prop_oneof![
        Just("key-a".to_owned()),
        Just("key-b".to_owned()),
        hostile_text()
    ];
    prop_oneof![
        4 => (os, key).prop_map(|(os, key)| serde_json::json!({
            "osImageURL": os,
            "config": {"ignition": {"version": "3.4.0"},
                       "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": [key]}]}},
        }).to_string()),
        1 => hostile_text(),
        1 => Just("{\"config\": 5, \"osImageURL\": []}".to_owned()),
    ]
}

fn config() -> impl Strategy<Value = RenderedConfig> {
    (hostile_text(), spec()).prop_map(|(name, spec)| RenderedConfig::new(&name, &spec))
}

fn condition() -> impl Strategy<Value = Condition> {
    let type_ = prop_oneof![
        4 => select(DEFAULT_CONDITION_TYPES.to_vec()).prop_map(str::to_owned),
        1 => hostile_text(),
    ];
    let status = select(vec![
        ConditionStatus::True,
        ConditionStatus::False,
        ConditionStatus::Unknown,
    ]);
    (type_, status, hostile_text(), hostile_text()).prop_map(|(type_, status, reason, message)| {
        Condition {
            type_,
            status,
            reason,
            message,
        }
    })
}

fn node() -> impl Strategy<Value = Node> {
    let name = prop_oneof![
        4 => "[a-z][a-z0-9-]{0,20}",
        1 => hostile_text(),
    ];
    let phase = prop_oneof![
        4 => Just(String::new()),
        1 => select(vec!["Running", "Pending", "Provisioning"]).prop_map(str::to_owned),
        1 => hostile_text(),
    ];
    (name, phase, any::<bool>(), labels(), annotations()).prop_map(
        |(name, phase, unschedulable, labels, annotations)| Node {
            name,
            phase,
            unschedulable,
            labels,
            annotations,
        },
    )
}

fn action() -> impl Strategy<Value = DisruptionAction> {
    prop_oneof![
        Just(DisruptionAction::Reboot),
        Just(DisruptionAction::Drain),
        Just(DisruptionAction::None),
        Just(DisruptionAction::Special),
        Just(DisruptionAction::DaemonReload),
        hostile_text().prop_map(DisruptionAction::Reload),
        hostile_text().prop_map(DisruptionAction::Restart),
    ]
}

/// The defaults, plus admin-style entries with odd paths and actions.
fn policies() -> impl Strategy<Value = DisruptionPolicies> {
    let path = prop_oneof![
        Just("/etc".to_string()),
        Just("/etc/containers/".to_string()),
        Just("//etc/./motd".to_string()),
        hostile_text(),
    ];
    (
        vec((path, vec(action(), 0..4)), 0..4),
        vec((hostile_text(), vec(action(), 0..4)), 0..3),
        vec(action(), 0..3),
    )
        .prop_map(|(files, units, ssh_key)| {
            let mut policies = DisruptionPolicies::defaults();
            policies.files.extend(
                files
                    .into_iter()
                    .map(|(path, actions)| FilePolicy { path, actions }),
            );
            policies.units.extend(
                units
                    .into_iter()
                    .map(|(name, actions)| UnitPolicy { name, actions }),
            );
            if !ssh_key.is_empty() {
                policies.ssh_key = ssh_key;
            }
            policies
        })
}

fn stored() -> impl Strategy<Value = Option<StoredNode>> {
    proptest::option::of(
        (
            proptest::option::of(any::<i64>()),
            proptest::option::of(any::<i64>()),
            prop_oneof![Just("worker".to_string()), hostile_text()],
            prop_oneof![Just("rendered-worker-a".to_string()), hostile_text()],
            proptest::option::of(hostile_text()),
            proptest::option::of(hostile_text()),
        )
            .prop_map(
                |(
                    generation,
                    observed_generation,
                    pool,
                    desired_config,
                    desired_image,
                    current,
                )| {
                    StoredNode {
                        generation,
                        observed_generation,
                        pool,
                        desired_config,
                        desired_image,
                        current_config: current,
                    }
                },
            ),
    )
}

/// Everything one derivation looks at, from realistic to hostile.
pub fn facts() -> impl Strategy<Value = Facts> {
    (
        node(),
        vec(pool(), 0..4),
        vec(config(), 0..3),
        vec(condition(), 0..16),
        policies(),
        stored(),
        feature_gates(),
    )
        .prop_map(
            |(node, pools, configs, previous, policies, stored, feature_gates)| Facts {
                node,
                pools,
                configs,
                previous,
                policies,
                stored,
                feature_gates,
            },
        )
}

/// The gates that are on: mostly the MCN gate on or off, sometimes others
/// and hostile names beside it.
fn feature_gates() -> impl Strategy<Value = std::collections::BTreeSet<String>> {
    let name = prop_oneof![
        4 => Just(mco_mcn::IMAGE_MODE_STATUS_REPORTING.to_string()),
        1 => Just("ManagedBootImagesCPMS".to_string()),
        1 => ".{0,40}",
    ];
    proptest::collection::btree_set(name, 0..3)
}
