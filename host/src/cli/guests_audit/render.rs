//! The table `guests audit` prints without `--json`: the two modules, the
//! objects that agree, differ and failed, agreement per key (the keys with
//! differences first), the failures per module and kind, and the sampled
//! differences and failures with both sides in full (as bounded as the
//! JSON's).

use std::fmt::Write as _;

use mco_registry::audit::{Module, Report};

pub(super) fn table(report: &Report) -> String {
    let mut text = String::new();
    let module = |m: &Module| format!("{} (sha256 {})", m.module, short_digest(&m.sha256));
    let _ = writeln!(text, "job        {}", report.job);
    let _ = writeln!(text, "candidate  {}", module(&report.candidate));
    let _ = writeln!(text, "active     {}", module(&report.active));
    let _ = writeln!(text, "\n{}", report.summary());
    if !report.keys.is_empty() {
        let width = report
            .keys
            .keys()
            .map(String::len)
            .max()
            .unwrap_or(0)
            .max(3);
        let _ = writeln!(text, "\n{:width$}  {:>7}  {:>7}", "KEY", "AGREE", "DIFFER");
        let mut keys: Vec<_> = report.keys.iter().collect();
        keys.sort_by_key(|(key, counts)| (counts.differ == 0, *key));
        for (key, counts) in keys {
            let _ = writeln!(
                text,
                "{key:width$}  {:>7}  {:>7}",
                counts.agree, counts.differ
            );
        }
    }
    for (role, failures) in [
        ("candidate", &report.failures.candidate),
        ("active", &report.failures.active),
    ] {
        if !failures.is_empty() {
            let kinds: Vec<String> = failures.iter().map(|(k, n)| format!("{k} {n}")).collect();
            let _ = writeln!(text, "\n{role} failed: {}", kinds.join(", "));
        }
    }
    if !report.sample.is_empty() {
        let _ = writeln!(
            text,
            "\ndifferences ({} shown, {} more):",
            report.sample.len(),
            report.omitted
        );
        for difference in &report.sample {
            let _ = writeln!(text, "  {} {}", difference.object, difference.key);
            let _ = writeln!(text, "    candidate: {}", difference.candidate);
            let _ = writeln!(text, "    active:    {}", difference.active);
        }
    }
    if !report.failure_sample.is_empty() {
        let _ = writeln!(
            text,
            "\nfailures ({} shown, {} more):",
            report.failure_sample.len(),
            report.omitted_failures
        );
        for failed in &report.failure_sample {
            let _ = writeln!(
                text,
                "  {} {} {}: {}",
                failed.object,
                failed.module.label(),
                failed.kind,
                failed.error
            );
        }
    }
    text
}

/// The first 12 hex digits: enough to tell two modules apart at a glance.
fn short_digest(sha256: &str) -> &str {
    sha256.get(..12).unwrap_or(sha256)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use mco_registry::audit::{Failed, Failures, Role, Sampled};
    use mco_registry::compare::Counts;

    #[test]
    fn the_table_shows_counts_keys_with_differences_first_and_both_samples() {
        let module = |name: &str| Module {
            module: name.into(),
            sha256: "0123456789abcdef".into(),
        };
        let report = Report {
            job: "mcn".into(),
            active: module("mcn.wasm"),
            candidate: module("next.wasm"),
            objects: 3,
            agree: 1,
            differ: 1,
            failed: 1,
            failures: Failures {
                active: BTreeMap::new(),
                candidate: BTreeMap::from([("trap".into(), 1)]),
            },
            keys: BTreeMap::from([
                (
                    "Drained".into(),
                    Counts {
                        agree: 2,
                        differ: 0,
                    },
                ),
                (
                    "Updated".into(),
                    Counts {
                        agree: 1,
                        differ: 1,
                    },
                ),
            ]),
            sample: vec![Sampled {
                object: "worker-1".into(),
                key: "Updated".into(),
                candidate: "False".into(),
                active: "True".into(),
            }],
            omitted: 0,
            failure_sample: vec![Failed {
                object: "worker-2".into(),
                module: Role::Candidate,
                kind: "trap".into(),
                error: "guest next.wasm trapped".into(),
            }],
            omitted_failures: 0,
        };
        assert_eq!(
            table(&report),
            "job        mcn\n\
             candidate  next.wasm (sha256 0123456789ab)\n\
             active     mcn.wasm (sha256 0123456789ab)\n\
             \n3 objects: 1 agree, 1 differ, 1 failed\n\
             \nKEY        AGREE   DIFFER\n\
             Updated        1        1\n\
             Drained        2        0\n\
             \ncandidate failed: trap 1\n\
             \ndifferences (1 shown, 0 more):\n  worker-1 Updated\n    candidate: False\n    active:    True\n\
             \nfailures (1 shown, 0 more):\n  worker-2 candidate trap: guest next.wasm trapped\n"
        );
    }
}
