//! Property tests: for any node, pools, rendered configs and stored
//! conditions, however hostile, `derive` returns (never panics, which in the
//! guest would be a trap) a decision the host accepts, and the same one
//! every time.

mod strategies;

use proptest::prelude::*;

/// Release builds run these in about a second; CI keeps them all.
const CASES: u32 = 2000;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn derive_is_total_well_formed_and_deterministic(facts in strategies::facts()) {
        let decision = mco_mcn::derive(&facts);
        if let Err(why) = mco_mcn::validate(&decision, facts.image_mode_status_reporting()) {
            return Err(TestCaseError::fail(format!("{why}: {decision:?}")));
        }
        prop_assert_eq!(mco_mcn::derive(&facts), decision);
    }
}

/// What the property test found before `derive` checked its own output:
/// each would have been refused by the host as a broken guest.
#[test]
fn decisions_the_host_would_refuse_become_bounded_errors() {
    use mco_mcn::{Decision, Facts, LabelSelector, Node, Pool};

    let role = || [("node-role.kubernetes.io/worker".to_owned(), String::new())].into();
    let node = |name: &str| Node {
        name: name.into(),
        labels: role(),
        ..Node::default()
    };
    let facts = |node: Node, pool: &str| Facts {
        node,
        pools: vec![Pool {
            name: pool.into(),
            node_selector: Some(LabelSelector {
                match_labels: role(),
                match_expressions: vec![],
            }),
            target_config: "rendered-worker-a".into(),
        }],
        ..Facts::default()
    };
    let long_name = "x".repeat(5000);
    let cases = [
        // A pool name the CRD refuses as spec.pool.name.
        (
            facts(node("worker-0"), "Rebooting"),
            "error",
            "spec.pool.name",
        ),
        // A skip reason quoting a 5000-byte node name.
        (
            Facts {
                node: Node {
                    phase: "Pending".into(),
                    ..node(&long_name)
                },
                ..Facts::default()
            },
            "skip",
            "node xxx",
        ),
    ];
    for (facts, action, fragment) in cases {
        let decision = mco_mcn::derive(&facts);
        let (got, text) = match &decision {
            Decision::Apply(_) => ("apply", ""),
            Decision::Skip(text) => ("skip", text.as_str()),
            Decision::Error(text) => ("error", text.as_str()),
        };
        assert_eq!(got, action, "{decision:?}");
        assert!(text.contains(fragment), "{text:.200}");
        assert_eq!(
            mco_mcn::validate(&decision, facts.image_mode_status_reporting()),
            Ok(())
        );
    }
}
