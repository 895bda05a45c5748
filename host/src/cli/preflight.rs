//! `mco-host preflight`: before installing, which ownership mode each job
//! can run in on this cluster, and why: each job of [`JOBS`] that has
//! something to check says what its writes need (the CRDs served, the
//! Machine Config Operator's writers seen, what the host's ServiceAccount
//! may do, asked with SubjectAccessReviews; see `mco_job::preflight`), and
//! the admin endpoints under `--admin-auth cluster` (`admin::auth`). A
//! command of its own rather than a section of `status`: it is run before
//! the host exists, about the host's account rather than the viewer's, and
//! needs no admin URL.

use std::path::PathBuf;

use clap::Args;

use crate::JOBS;
use crate::admin::auth::{self, AdminAuth};
use mco_job::preflight::{JobPreflight, Verdict, report};

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
    /// How the host will guard its admin endpoints (its `run
    /// --admin-auth`): with `cluster`, whether its account may create the
    /// TokenReviews and SubjectAccessReviews that mode needs (the `admin` row).
    #[arg(long, value_enum, default_value = "cluster", env = "MCO_ADMIN_AUTH")]
    admin_auth: AdminAuth,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    #[error(transparent)]
    Connect(#[from] super::ConnectError),
    #[error("encoding JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("starting the async runtime: {0}")]
    Runtime(std::io::Error),
}

pub fn run(args: PreflightArgs) -> Result<String, PreflightError> {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(PreflightError::Runtime)?;
    let jobs = tokio.block_on(async {
        let client = super::connect(args.kubeconfig.as_deref()).await?;
        let user = format!(
            "system:serviceaccount:{}:{}",
            args.namespace, args.service_account
        );
        let mut jobs = Vec::new();
        for job in JOBS.iter() {
            if let Some(preflight) = job.contract().preflight {
                let checks = preflight(&client, &user, &crate::FEATURE_GATES).await;
                jobs.push(report(job.name(), checks));
            }
        }
        if args.admin_auth == AdminAuth::Cluster {
            jobs.push(report("admin", auth::preflight(&client, &user).await));
        }
        Ok::<_, PreflightError>(jobs)
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

#[cfg(test)]
mod tests {
    use super::*;
    use mco_job::preflight::{Check, OWN};

    #[test]
    fn an_unknown_check_is_drawn_as_such_and_rules_nothing_out() {
        let unknown = Check {
            check: "c",
            ok: None,
            detail: "d".into(),
            blocks: OWN,
        };
        let text = render(&[report("bootImage", vec![unknown])]);
        assert!(
            text.starts_with("JOB        OBSERVE  OWN\nbootImage  yes      yes"),
            "{text}"
        );
        assert!(text.contains("  ??  c: d"), "{text}");
    }
}
