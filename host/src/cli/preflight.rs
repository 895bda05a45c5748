//! `mco-host preflight`: before installing, which ownership mode each job
//! can run in on this cluster, and why: the MachineConfigNode CRD served
//! (and declaring what the writer writes), the Machine Config Operator's
//! writers seen, and what the host's ServiceAccount may do (asked with
//! SubjectAccessReviews). A command of its own rather than a section of
//! `status`: it is run before the host exists, about the host's account
//! rather than the viewer's, and needs no admin URL.

use std::path::PathBuf;

use clap::Args;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DynamicObject, ListParams, PostParams};
use serde::Serialize;

use crate::bootimage::objects::{Decoded, MACHINE_API_NAMESPACE, MachineConfiguration};
use crate::cluster::resources::MACHINE_CONFIGURATION;
use crate::cluster::served_crd;
use crate::feature_gates::{self, FeatureGates, IMAGE_MODE_STATUS_REPORTING};
use crate::mcn::crd::MachineConfigNode;
use crate::mcn::write;

#[derive(Args, Debug)]
pub struct PreflightArgs {
    /// Kubeconfig to use (default: in-cluster config, or $KUBECONFIG).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Namespace of the host's ServiceAccount.
    #[arg(long, default_value = "mco-system")]
    namespace: String,
    /// The host's ServiceAccount, whose permissions are checked.
    #[arg(long, default_value = "mco-host", value_name = "NAME")]
    service_account: String,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    #[error("connecting to the cluster: {0:#}")]
    Connect(anyhow::Error),
    #[error("encoding JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("starting the async runtime: {0}")]
    Runtime(std::io::Error),
}

/// One finding: `ok` is `None` when it could not be found out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Check {
    pub check: &'static str,
    pub ok: Option<bool>,
    pub detail: String,
    /// The modes a failed check rules out.
    #[serde(skip)]
    blocks: &'static [&'static str],
}

/// Whether a mode can run, and the failed checks that say why not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub possible: bool,
    pub why: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JobPreflight {
    pub job: &'static str,
    pub observe: Verdict,
    pub own: Verdict,
    pub checks: Vec<Check>,
}

const BOTH: &[&str] = &["observe", "own"];
const OWN: &[&str] = &["own"];

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

fn job(job: &'static str, checks: Vec<Check>) -> JobPreflight {
    JobPreflight {
        job,
        observe: verdict(&checks, "observe"),
        own: verdict(&checks, "own"),
        checks,
    }
}

pub fn run(args: PreflightArgs) -> Result<String, PreflightError> {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(PreflightError::Runtime)?;
    let jobs = tokio.block_on(async {
        let client = crate::cluster::client::connect(args.kubeconfig.as_deref())
            .await
            .map_err(PreflightError::Connect)?;
        let user = format!(
            "system:serviceaccount:{}:{}",
            args.namespace, args.service_account
        );
        Ok::<_, PreflightError>(vec![
            job("mcn", mcn_checks(&client, &user).await),
            job("bootImage", boot_image_checks(&client, &user).await),
        ])
    })?;
    if args.json {
        return Ok(serde_json::to_string_pretty(&jobs)?);
    }
    Ok(render(&jobs))
}

fn render(jobs: &[JobPreflight]) -> String {
    let yes = |v: &Verdict| if v.possible { "yes" } else { "no" };
    let mut out = format!("{:<10} {:<8} {}\n", "JOB", "OBSERVE", "OWN");
    for job in jobs {
        out.push_str(&format!(
            "{:<10} {:<8} {}\n",
            job.job,
            yes(&job.observe),
            yes(&job.own)
        ));
    }
    for job in jobs {
        out.push_str(&format!("\n{}:\n", job.job));
        for check in &job.checks {
            let mark = match check.ok {
                Some(true) => "ok",
                Some(false) => "NO",
                None => "??",
            };
            out.push_str(&format!("  {mark}  {}: {}\n", check.check, check.detail));
        }
    }
    out.trim_end().to_owned()
}

async fn mcn_checks(client: &Client, user: &str) -> Vec<Check> {
    // What the writer writes follows the gates: configImage only with
    // ImageModeStatusReporting on.
    let (gates, gates_check) = match feature_gates::read_cluster(client).await {
        Ok(gates) => {
            let detail = gates.to_string();
            (
                gates,
                Check {
                    check: "feature gates",
                    ok: Some(true),
                    detail,
                    blocks: &[],
                },
            )
        }
        Err(err) => (
            FeatureGates::default(),
            Check {
                check: "feature gates",
                ok: None,
                detail: format!("{err}; assuming the Default feature set"),
                blocks: &[],
            },
        ),
    };
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut crd = match crds.get_opt(write::CRD_NAME).await {
        Ok(Some(crd)) => {
            let fields = write::written_fields(gates.enabled(IMAGE_MODE_STATUS_REPORTING));
            let declared = served_crd::check(&crd, write::VERSION, &fields);
            vec![
                Check {
                    check: "MachineConfigNode CRD served",
                    ok: Some(true),
                    detail: write::CRD_NAME.into(),
                    blocks: BOTH,
                },
                Check {
                    check: "MachineConfigNode CRD takes the host's writes",
                    ok: Some(declared.is_ok()),
                    detail: declared.err().map_or_else(
                        || format!("{} declares every field written", write::VERSION),
                        |e| e.to_string(),
                    ),
                    blocks: OWN,
                },
            ]
        }
        Ok(None) => vec![Check {
            check: "MachineConfigNode CRD served",
            ok: Some(false),
            detail: "not installed (plain Kubernetes: add deploy/components/machineconfignode-crd)"
                .into(),
            blocks: BOTH,
        }],
        Err(err) => vec![Check {
            check: "MachineConfigNode CRD served",
            ok: None,
            detail: format!("cannot read it: {err}"),
            blocks: BOTH,
        }],
    };
    let mcns: Api<MachineConfigNode> = Api::all(client.clone());
    let writers = match mcns.list(&ListParams::default()).await {
        Ok(list) => {
            let items: Vec<_> = list.items.into_iter().map(std::sync::Arc::new).collect();
            let refusal = crate::mcn::observe::operator_writes(&items);
            Check {
                check: "operator's daemon writes MCN conditions",
                ok: Some(refusal.is_none()),
                detail: refusal.unwrap_or_else(|| format!("not seen on {} MCNs", items.len())),
                blocks: OWN,
            }
        }
        Err(err) => Check {
            check: "operator's daemon writes MCN conditions",
            ok: None,
            detail: format!("cannot list MachineConfigNodes: {err}"),
            blocks: OWN,
        },
    };
    let mco = "machineconfiguration.openshift.io";
    let mut checks = vec![gates_check];
    checks.append(&mut crd);
    checks.push(writers);
    checks.push(
        can(
            client,
            user,
            BOTH,
            (mco, "machineconfignodes", "", "watch", None),
        )
        .await,
    );
    checks.push(can(client, user, BOTH, ("", "nodes", "", "watch", None)).await);
    checks.push(
        can(
            client,
            user,
            OWN,
            (mco, "machineconfignodes", "status", "patch", None),
        )
        .await,
    );
    checks.push(
        can(
            client,
            user,
            OWN,
            (mco, "machineconfignodes", "", "create", None),
        )
        .await,
    );
    checks
}

async fn boot_image_checks(client: &Client, user: &str) -> Vec<Check> {
    let api: Api<DynamicObject> =
        Api::all_with(client.clone(), &MACHINE_CONFIGURATION.api_resource());
    let writers = match api.get_opt("cluster").await {
        Ok(object) => {
            let decoded = object
                .and_then(|o| serde_json::to_value(o).ok())
                .map(|v| Decoded::<MachineConfiguration>::of(&v));
            let refusal = crate::bootimage::controller::operator_writes(decoded.as_ref());
            Check {
                check: "operator's boot image controller writes its conditions",
                ok: Some(refusal.is_none()),
                detail: refusal
                    .unwrap_or_else(|| "not seen on MachineConfiguration cluster".into()),
                blocks: OWN,
            }
        }
        Err(err) => Check {
            check: "operator's boot image controller writes its conditions",
            ok: None,
            detail: format!("cannot read MachineConfiguration cluster: {err}"),
            blocks: OWN,
        },
    };
    let machine = "machine.openshift.io";
    let ns = Some(MACHINE_API_NAMESPACE);
    vec![
        writers,
        can(
            client,
            user,
            BOTH,
            (machine, "machinesets", "", "watch", ns),
        )
        .await,
        can(client, user, OWN, (machine, "machinesets", "", "patch", ns)).await,
        can(
            client,
            user,
            OWN,
            (
                "operator.openshift.io",
                "machineconfigurations",
                "status",
                "patch",
                None,
            ),
        )
        .await,
    ]
}

/// (group, resource, subresource, verb, namespace) as a SubjectAccessReview
/// for `user`.
async fn can(
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
        let report = job(
            "mcn",
            vec![check(Some(true), BOTH), check(Some(false), OWN)],
        );
        assert!(report.observe.possible && report.observe.why.is_empty());
        assert!(!report.own.possible);
        assert_eq!(report.own.why, ["c: d"]);
        let none = job("mcn", vec![check(Some(false), BOTH)]);
        assert!(!none.observe.possible && !none.own.possible);
    }

    #[test]
    fn an_unknown_check_is_named_but_rules_nothing_out() {
        let report = job("bootImage", vec![check(None, OWN)]);
        assert!(report.own.possible);
        assert_eq!(report.own.why, ["c (unknown): d"]);
        let text = render(&[report]);
        assert!(
            text.starts_with("JOB        OBSERVE  OWN\nbootImage  yes      yes"),
            "{text}"
        );
        assert!(text.contains("  ??  c: d"), "{text}");
    }
}
