//! Shadow evaluation: a registry entry's candidate module runs on the same
//! inputs as the active one; its decisions are compared, counted and
//! logged, and never applied. Promotion is an explicit registry change
//! (make the candidate the entry's `module`).

use std::fmt::Debug;

use crate::metrics::Metrics;

/// How a candidate's decision compared with the active module's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    Agree,
    Differ,
    /// The candidate failed (trap, deadline, invalid output) where the
    /// active module decided.
    Failed,
}

impl Comparison {
    pub fn label(self) -> &'static str {
        match self {
            Comparison::Agree => "agree",
            Comparison::Differ => "differ",
            Comparison::Failed => "failed",
        }
    }
}

/// Compares the candidate's result for `object` with the active module's
/// decision, counts it in `mco_shadow_evaluations_total{job,result}` and
/// logs every difference with both decisions. `job` is the registry entry
/// (`mcn`, `bootImage.<platform>`, see [`super::EntryName`]);
/// `candidate` should already have passed the host's validation, so that
/// output the host would refuse counts as a failure.
pub fn compare<D, E>(
    metrics: &Metrics,
    job: &str,
    object: &str,
    active: &D,
    candidate: &Result<D, E>,
) -> Comparison
where
    D: PartialEq + Debug,
    E: std::fmt::Display,
{
    let comparison = match candidate {
        Ok(decision) if decision == active => Comparison::Agree,
        Ok(decision) => {
            tracing::info!(
                entry = job,
                object,
                active = ?active,
                candidate = ?decision,
                "shadow evaluation: the candidate decided differently"
            );
            Comparison::Differ
        }
        Err(err) => {
            tracing::warn!(
                entry = job,
                object,
                active = ?active,
                error = %err,
                "shadow evaluation: the candidate failed"
            );
            Comparison::Failed
        }
    };
    crate::metrics::count(&metrics.shadow_evaluations, job, comparison.label());
    comparison
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::JobResultLabels;

    #[test]
    fn agreement_difference_and_failure_are_counted_per_job() {
        let mut registry = prometheus_client::registry::Registry::default();
        let metrics = Metrics::register(&mut registry);
        let failed: Result<u32, String> = Err("trap".into());
        assert_eq!(
            compare(&metrics, "mcn", "n", &1, &Ok::<_, String>(1)),
            Comparison::Agree
        );
        assert_eq!(
            compare(&metrics, "mcn", "n", &1, &Ok::<_, String>(2)),
            Comparison::Differ
        );
        assert_eq!(
            compare(&metrics, "mcn", "n", &1, &failed),
            Comparison::Failed
        );
        assert_eq!(
            compare(&metrics, "mcn", "m", &3, &Ok::<_, String>(3)),
            Comparison::Agree
        );
        let count = |result: &str| {
            metrics
                .shadow_evaluations
                .get_or_create(&JobResultLabels::new("mcn", result))
                .get()
        };
        assert_eq!(
            (count("agree"), count("differ"), count("failed")),
            (2, 1, 1)
        );
    }
}
