//! `mco-host preflight` on a real apiserver, about the admin endpoints:
//! with `--admin-auth cluster` (the default) it asks whether the host's
//! ServiceAccount may create the TokenReviews and SubjectAccessReviews that
//! guard takes (its `admin` row). An account whose RBAC lacks them gets a
//! `no` in both modes that names each missing right, in the table as in
//! JSON, and the command still exits 0 as it does for any failed check;
//! `--admin-auth none` asks nothing.

use crate::support;

use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, ensure};
use kube::api::{ApiResource, GroupVersionKind};
use serde_json::Value;
use tokio::time::sleep;

use support::fixture::Fixture;

/// How long RBAC changes may take to reach the apiserver's authorizer.
const RBAC_SETTLES: Duration = Duration::from_secs(10);

/// The `admin` row of `preflight ARGS`.
async fn admin_row(fx: &Fixture, args: &[&str]) -> Result<Value> {
    fx.preflight(args)
        .await?
        .into_iter()
        .find(|row| row["job"] == "admin")
        .ok_or_else(|| anyhow!("preflight {args:?} has no admin row"))
}

#[tokio::test]
async fn preflight_checks_the_reviews_admin_auth_cluster_takes() -> Result<()> {
    Fixture::run(async |fx| {
        // deploy/rbac.yaml grants both.
        let granted = admin_row(fx, &[]).await?;
        ensure!(
            granted["observe"]["possible"] == true && granted["own"]["possible"] == true,
            "{granted:#}"
        );

        for (group, kind, plural) in [
            ("authentication.k8s.io", "TokenReview", "tokenreviews"),
            (
                "authorization.k8s.io",
                "SubjectAccessReview",
                "subjectaccessreviews",
            ),
        ] {
            let gvk = GroupVersionKind::gvk(group, "v1", kind);
            fx.take_away(
                &ApiResource::from_gvk_with_plural(&gvk, plural),
                &["create"],
            )
            .await?;
        }
        let account = "system:serviceaccount:mco-system:mco-host";
        let missing = ["tokenreviews", "subjectaccessreviews"]
            .map(|plural| format!("RBAC: {account} may not create {plural}"));
        let started = Instant::now();
        let refused = loop {
            let row = admin_row(fx, &[]).await?;
            let why = row["own"]["why"].to_string();
            if missing.iter().all(|m| why.contains(m)) {
                break row;
            }
            ensure!(
                started.elapsed() < RBAC_SETTLES,
                "the admin row still allows {RBAC_SETTLES:?} after the rights went: {row:#}"
            );
            sleep(Duration::from_millis(200)).await;
        };
        ensure!(
            refused["observe"]["possible"] == false && refused["own"]["possible"] == false,
            "{refused:#}"
        );
        ensure!(
            refused["observe"]["why"] == refused["own"]["why"],
            "{refused:#}"
        );

        // The table says the same, exit status 0.
        let out = tokio::process::Command::new(support::controller::host_binary()?)
            .arg("preflight")
            .arg("--kubeconfig")
            .arg(fx.admin_kubeconfig()?)
            .output()
            .await
            .context("running mco-host preflight")?;
        let table = String::from_utf8_lossy(&out.stdout);
        ensure!(out.status.success(), "exit status {}: {table}", out.status);
        ensure!(
            table
                .lines()
                .any(|l| l.split_whitespace().eq(["admin", "no", "no"])),
            "{table}"
        );
        for line in &missing {
            ensure!(table.contains(&format!("  NO  {line}")), "{table}");
        }

        // Not asked for without the cluster guard.
        let rows = fx.preflight(&["--admin-auth", "none"]).await?;
        ensure!(
            rows.iter().all(|row| row["job"] != "admin"),
            "--admin-auth none: {rows:#?}"
        );
        Ok(())
    })
    .await
}
