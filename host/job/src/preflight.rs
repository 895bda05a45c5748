//! What `mco-host preflight` finds out for a job, known to no job: a
//! [`Check`] and the modes it rules out, the [`Verdict`] on each mode, and
//! the SubjectAccessReview every job asks with ([`can`]). Each job makes
//! its checks in its own folder (its `preflight.rs`, through
//! [`Contract::preflight`](crate::jobs::Contract::preflight)); the command
//! (`cli/preflight.rs`) asks every job of `mco_host::JOBS` and draws
//! the answers.

use std::future::Future;
use std::pin::Pin;

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Client;
use kube::api::{Api, PostParams};
use serde::Serialize;

/// One finding: `ok` is `None` when it could not be found out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Check {
    pub check: &'static str,
    pub ok: Option<bool>,
    pub detail: String,
    /// The modes a failed check rules out.
    #[serde(skip)]
    pub blocks: &'static [&'static str],
}

/// Whether a mode can run, and the failed checks that say why not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub possible: bool,
    pub why: Vec<String>,
}

/// A job's checks and the verdict they give on each mode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JobPreflight {
    pub job: &'static str,
    pub observe: Verdict,
    pub own: Verdict,
    pub checks: Vec<Check>,
}

/// A job's checks under way ([`Contract::preflight`](crate::jobs::Contract::preflight)).
pub type Checks<'a> = Pin<Box<dyn Future<Output = Vec<Check>> + 'a>>;

/// What a check needed by both modes rules out when it fails.
pub const BOTH: &[&str] = &["observe", "own"];
/// What a check needed to own the job's writes rules out when it fails.
pub const OWN: &[&str] = &["own"];

/// A mode can run unless a check it needs failed; unknown checks do not
/// rule it out but are named.
fn verdict(checks: &[Check], mode: &str) -> Verdict {
    let relevant = checks.iter().filter(|c| c.blocks.contains(&mode));
    let failed: Vec<&Check> = relevant.clone().filter(|c| c.ok == Some(false)).collect();
    let unknown = relevant.filter(|c| c.ok.is_none());
    Verdict {
        possible: failed.is_empty(),
        why: failed
            .iter()
            .map(|c| format!("{}: {}", c.check, c.detail))
            .chain(unknown.map(|c| format!("{} (unknown): {}", c.check, c.detail)))
            .collect(),
    }
}

/// `job`'s checks with the verdict they give on each mode.
pub fn report(job: &'static str, checks: Vec<Check>) -> JobPreflight {
    JobPreflight {
        job,
        observe: verdict(&checks, "observe"),
        own: verdict(&checks, "own"),
        checks,
    }
}

/// Whether `user` may (group, resource, subresource, verb, namespace), as a
/// SubjectAccessReview answers: the `RBAC` check, ruling out `blocks`.
pub async fn can(
    client: &Client,
    user: &str,
    blocks: &'static [&'static str],
    (group, resource, subresource, verb, namespace): (&str, &str, &str, &str, Option<&str>),
) -> Check {
    let what = match subresource {
        "" => format!("{verb} {resource}"),
        sub => format!("{verb} {resource}/{sub}"),
    };
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(user.to_owned()),
            groups: Some(vec![
                "system:serviceaccounts".into(),
                "system:authenticated".into(),
            ]),
            resource_attributes: Some(ResourceAttributes {
                group: Some(group.to_owned()),
                resource: Some(resource.to_owned()),
                subresource: (!subresource.is_empty()).then(|| subresource.to_owned()),
                verb: Some(verb.to_owned()),
                namespace: namespace.map(str::to_owned),
                ..ResourceAttributes::default()
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    };
    let api: Api<SubjectAccessReview> = Api::all(client.clone());
    let (ok, detail) = match api.create(&PostParams::default(), &review).await {
        Ok(answer) => {
            let allowed = answer.status.is_some_and(|s| s.allowed);
            (
                Some(allowed),
                format!("{user} may{} {what}", if allowed { "" } else { " not" }),
            )
        }
        Err(err) => (None, format!("cannot ask whether {user} may {what}: {err}")),
    };
    Check {
        check: "RBAC",
        ok,
        detail,
        blocks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(ok: Option<bool>, blocks: &'static [&'static str]) -> Check {
        Check {
            check: "c",
            ok,
            detail: "d".into(),
            blocks,
        }
    }

    #[test]
    fn a_failed_check_rules_out_the_modes_it_blocks_only() {
        let report = report(
            "mcn",
            vec![check(Some(true), BOTH), check(Some(false), OWN)],
        );
        assert!(report.observe.possible && report.observe.why.is_empty());
        assert!(!report.own.possible);
        assert_eq!(report.own.why, ["c: d"]);
        let none = super::report("mcn", vec![check(Some(false), BOTH)]);
        assert!(!none.observe.possible && !none.own.possible);
    }

    #[test]
    fn an_unknown_check_is_named_but_rules_nothing_out() {
        let report = report("bootImage", vec![check(None, OWN)]);
        assert!(report.own.possible);
        assert_eq!(report.own.why, ["c (unknown): d"]);
    }
}
