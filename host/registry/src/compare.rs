//! Comparing two decisions object by object: per key (a condition type, a
//! field) whether they agree, counted per key, with a bounded sample of the
//! differences sorted by object then key, so the same cluster always shows
//! the same sample whatever order the objects were seen in.
//!
//! One piece of machinery for every "does A decide like B" question: the
//! observe mode (this host's decision against the Machine Config
//! Operator's output in the cluster, the host's `ownership`) uses it today; a
//! candidate guest audited against the active one, and a rollout counting
//! a candidate's agreement, are the same comparison.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Bytes kept of each side of a difference in the sample: enough to read
/// a condition's message, bounded whatever the objects hold.
pub const SIDE_MAX_BYTES: usize = 512;

/// How the two decisions compare on one key of one object.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Outcome {
    pub key: String,
    /// Ours (this host, or the candidate), in short; `(absent)` if none.
    pub ours: String,
    /// Theirs (the cluster, or the active module), in short.
    pub theirs: String,
    /// Judged on the whole values, before they were shortened.
    #[serde(skip)]
    agree: bool,
}

impl Outcome {
    /// Both sides shortened to [`SIDE_MAX_BYTES`]; `None` says absent.
    pub fn new(key: impl Into<String>, ours: Option<String>, theirs: Option<String>) -> Outcome {
        let agree = ours == theirs;
        let short = |side: Option<String>| {
            mco_k8s_rules::bounded(side.unwrap_or_else(|| ABSENT.to_owned()), SIDE_MAX_BYTES)
        };
        Outcome {
            key: key.into(),
            ours: short(ours),
            theirs: short(theirs),
            agree,
        }
    }

    pub fn agrees(&self) -> bool {
        self.agree
    }
}

/// How a side that has nothing for a key reads.
pub const ABSENT: &str = "(absent)";

/// The outcomes of the keys either side has, in key order: each key of
/// `ours` or `theirs` once, absent on the side that lacks it.
pub fn keyed(
    ours: impl IntoIterator<Item = (String, String)>,
    theirs: impl IntoIterator<Item = (String, String)>,
) -> Vec<Outcome> {
    let mut sides: BTreeMap<String, (Option<String>, Option<String>)> = BTreeMap::new();
    for (key, value) in ours {
        sides.entry(key).or_default().0 = Some(value);
    }
    for (key, value) in theirs {
        sides.entry(key).or_default().1 = Some(value);
    }
    sides
        .into_iter()
        .map(|(key, (ours, theirs))| Outcome::new(key, ours, theirs))
        .collect()
}

/// Agreement on one key, over every object compared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub agree: u64,
    pub differ: u64,
}

/// One difference: the object, the key and both sides.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Difference {
    pub object: String,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// The comparison of many objects: counts per key, the first `limit`
/// differences in (object, key) order, and how many more there were.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub objects: u64,
    /// Objects with at least one difference.
    pub differing_objects: u64,
    pub keys: BTreeMap<String, Counts>,
    pub sample: Vec<Difference>,
    /// Differences beyond the sample.
    pub omitted: u64,
    #[serde(skip)]
    limit: usize,
}

impl Summary {
    pub fn new(limit: usize) -> Summary {
        Summary {
            objects: 0,
            differing_objects: 0,
            keys: BTreeMap::new(),
            sample: Vec::new(),
            omitted: 0,
            limit,
        }
    }

    /// Adds one object's outcomes. The sample stays the `limit` smallest
    /// differences, so it does not depend on the order objects come in.
    pub fn add(&mut self, object: &str, outcomes: &[Outcome]) {
        self.objects += 1;
        let mut differs = false;
        for outcome in outcomes {
            let counts = self.keys.entry(outcome.key.clone()).or_default();
            if outcome.agrees() {
                counts.agree += 1;
                continue;
            }
            counts.differ += 1;
            differs = true;
            let difference = Difference {
                object: object.to_owned(),
                outcome: outcome.clone(),
            };
            if !keep_smallest(&mut self.sample, difference, self.limit) {
                self.omitted += 1;
            }
        }
        if differs {
            self.differing_objects += 1;
        }
    }

    /// Differences in total (sampled or not).
    pub fn differences(&self) -> u64 {
        self.keys.values().map(|c| c.differ).sum()
    }
}

/// Adds `item` to `sample`, kept sorted and at most `limit` long, so that
/// it holds the `limit` smallest items whatever order they came in.
/// `false`: one item (this one, or the largest kept) fell out of it.
pub fn keep_smallest<T: Ord>(sample: &mut Vec<T>, item: T, limit: usize) -> bool {
    let at = sample.partition_point(|kept| *kept < item);
    if at >= limit {
        return false;
    }
    sample.insert(at, item);
    if sample.len() > limit {
        sample.pop();
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn keys_of_either_side_are_compared_once_and_absent_on_the_other() {
        let outcomes = keyed(
            pairs(&[("Updated", "True"), ("Drained", "False")]),
            pairs(&[("Updated", "True"), ("Cordoned", "False")]),
        );
        let seen: Vec<(&str, &str, &str, bool)> = outcomes
            .iter()
            .map(|o| {
                (
                    o.key.as_str(),
                    o.ours.as_str(),
                    o.theirs.as_str(),
                    o.agrees(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("Cordoned", ABSENT, "False", false),
                ("Drained", "False", ABSENT, false),
                ("Updated", "True", "True", true),
            ]
        );
    }

    #[test]
    fn counts_agreement_per_key_and_objects_with_a_difference() {
        let mut summary = Summary::new(10);
        summary.add(
            "a",
            &keyed(
                pairs(&[("x", "1"), ("y", "1")]),
                pairs(&[("x", "1"), ("y", "2")]),
            ),
        );
        summary.add("b", &keyed(pairs(&[("x", "1")]), pairs(&[("x", "1")])));
        assert_eq!(summary.objects, 2);
        assert_eq!(summary.differing_objects, 1);
        assert_eq!(
            summary.keys["x"],
            Counts {
                agree: 2,
                differ: 0
            }
        );
        assert_eq!(
            summary.keys["y"],
            Counts {
                agree: 0,
                differ: 1
            }
        );
        assert_eq!(summary.differences(), 1);
        assert_eq!(summary.sample.len(), 1);
        assert_eq!(summary.sample[0].object, "a");
        assert_eq!(summary.sample[0].outcome.theirs, "2");
    }

    #[test]
    fn the_sample_is_bounded_and_the_same_in_any_order() {
        let objects: Vec<String> = (0..50).map(|i| format!("node-{i:02}")).collect();
        let differing = |name: &str| keyed(pairs(&[("k", name)]), pairs(&[("k", "other")]));
        let mut forward = Summary::new(3);
        for name in &objects {
            forward.add(name, &differing(name));
        }
        let mut backward = Summary::new(3);
        for name in objects.iter().rev() {
            backward.add(name, &differing(name));
        }
        assert_eq!(forward, backward);
        let sampled: Vec<&str> = forward.sample.iter().map(|d| d.object.as_str()).collect();
        assert_eq!(sampled, ["node-00", "node-01", "node-02"]);
        assert_eq!(forward.omitted, 47);
        assert_eq!(forward.differences(), 50);
    }

    #[test]
    fn a_zero_limit_keeps_no_sample_but_counts_everything() {
        let mut summary = Summary::new(0);
        summary.add("a", &keyed(pairs(&[("k", "1")]), pairs(&[("k", "2")])));
        assert!(summary.sample.is_empty());
        assert_eq!(summary.omitted, 1);
        assert_eq!(summary.keys["k"].differ, 1);
    }

    #[test]
    fn hostile_sides_are_cut_to_a_bounded_size_on_a_character_boundary() {
        let huge = "é".repeat(100_000);
        let outcome = Outcome::new("k", Some(huge.clone()), Some(huge));
        assert!(outcome.ours.len() <= SIDE_MAX_BYTES);
        assert!(
            outcome
                .theirs
                .trim_end_matches('…')
                .chars()
                .all(|c| c == 'é')
        );
        assert!(outcome.agrees());
        let (long, longer) = ("a".repeat(4096), format!("{}b", "a".repeat(4095)));
        let cut = Outcome::new("k", Some(long), Some(longer));
        assert_eq!(cut.ours, cut.theirs, "both cut to the same prefix");
        assert!(!cut.agrees(), "judged before the cut");
    }
}
