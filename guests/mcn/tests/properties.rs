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
        if let Err(why) = mco_mcn::validate(&decision) {
            return Err(TestCaseError::fail(format!("{why}: {decision:?}")));
        }
        prop_assert_eq!(mco_mcn::derive(&facts), decision);
    }
}
