//! `mco-host status` against a real kube-apiserver + etcd while
//! `mco-host run` reports a rolling update: at every step of the reboot
//! walk, `status -o json` shows the updating node in the phase its MCN says
//! and the pool counts add up; `status -o json --watch`, started before the
//! update, emits a frame showing each step after the MCN changed (ordering,
//! with a generous bound, not a timing threshold). The admin port it reads
//! with `--admin-url` answers only whom the cluster lets read it.
//!
//! Needs the release `mco-host` and the guests (`make host guests`), or
//! `MCO_HOST_BIN`.

use crate::support;

use std::time::Duration;

use anyhow::{Context, Result, anyhow, ensure};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;

use support::fixture::{ANNOTATION_PREFIX, Fixture};
use support::golden::{self, Expected};

const STEP_TIMEOUT: Duration = Duration::from_secs(15);
/// Bound on a watch frame showing a change: generous, as this is about
/// arrival, not speed.
const FRAME_BOUND: Duration = Duration::from_secs(20);

/// The reboot walk and the phase `status` must show for worker-0 after
/// each step (`None`: updated, not in flight).
const WALK: &[(&str, Option<&str>)] = &[
    ("reboot-01-desired-config-set", Some("Pending")),
    ("reboot-02-working", Some("Cordoning")),
    ("reboot-03-drain-requested", Some("Cordoning")),
    ("reboot-04-cordoned", Some("Draining")),
    ("reboot-05-drained", Some("Applying")),
    ("reboot-06-rebooting", Some("Rebooting")),
    ("reboot-07-rebooted", Some("Resuming")),
    ("reboot-08-uncordon-requested", Some("Uncordoning")),
    ("reboot-09-uncordoned", Some("Uncordoning")),
    ("reboot-10-done", None),
];

#[tokio::test]
async fn status_follows_a_rolling_update() -> Result<()> {
    Fixture::run(rolling_update).await
}

fn worker_pool(summary: &Value) -> Result<&Value> {
    summary["pools"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == "worker"))
        .ok_or_else(|| anyhow!("no worker pool in {summary}"))
}

/// A pool's counts, without the clock-driven ETA.
fn counts(pool: &Value) -> [Value; 5] {
    ["total", "updated", "updating", "waiting", "degraded"].map(|k| pool[k].clone())
}

/// worker-0's in-flight entry without the clock-driven field.
fn in_flight(summary: &Value) -> Option<Value> {
    let mut node = summary["nodesInFlight"]
        .as_array()?
        .iter()
        .find(|n| n["name"] == "worker-0")?
        .clone();
    node["secondsInPhase"] = Value::Null;
    Some(node)
}

async fn rolling_update(fx: &mut Fixture) -> Result<()> {
    fx.apply_pool("master", "rendered-master-a").await?;
    fx.apply_pool("worker", "rendered-worker-a").await?;
    fx.apply_machineconfig("rendered-master-a").await?;
    fx.apply_golden_machineconfigs("reboot-01-desired-config-set")
        .await?;
    fx.create_node("master-0", &["master"], &[], "rendered-master-a")
        .await?;
    let uid0 = fx
        .create_node("worker-0", &["worker"], &[], "rendered-worker-a")
        .await?;
    let uid1 = fx
        .create_node("worker-1", &["worker"], &[], "rendered-worker-a")
        .await?;
    fx.start_controller("mco-host-0", &["--resync", "1m"])
        .await?;
    for (worker, uid) in [("worker-0", &uid0), ("worker-1", &uid1)] {
        fx.wait_mcn(
            &Expected::load("reboot-00-updated-on-a", worker)?,
            uid,
            STEP_TIMEOUT,
        )
        .await?;
    }

    // The watch runs through the whole update; its frames (one JSON
    // document a line) go to a channel.
    let mut watch = fx.status_watch(&["-o", "json"])?;
    let stdout = watch
        .stdout
        .take()
        .ok_or_else(|| anyhow!("status --watch has no stdout"))?;
    let (tx, mut frames) = mpsc::unbounded_channel::<Value>();
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(v) = serde_json::from_str(&line)
                && tx.send(v).is_err()
            {
                break;
            }
        }
    });
    let first = tokio::time::timeout(FRAME_BOUND, frames.recv())
        .await
        .context("no first frame from status --watch")?
        .ok_or_else(|| anyhow!("status --watch ended"))?;
    ensure!(
        worker_pool(&first)?["updated"] == 2,
        "before the update: {first}"
    );

    fx.apply_pool("worker", "rendered-worker-b").await?;
    let mut watched = 1usize;
    // The watch prints a frame only when the view changes: a step that
    // changes nothing shown (Cordoned=True while the drain goes on) brings
    // none, and the frame of the state before it already arrived.
    let mut last_shown = None;
    for (step, phase) in WALK {
        let (annotations, unschedulable) = golden::node_state(step)?;
        let annotations: Vec<(&str, &str)> = annotations
            .iter()
            .map(|(k, v)| (k.trim_start_matches(ANNOTATION_PREFIX), v.as_str()))
            .collect();
        fx.patch_node("worker-0", &annotations, Some(unschedulable))
            .await?;
        fx.wait_mcn(&Expected::load(step, "worker-0")?, &uid0, STEP_TIMEOUT)
            .await
            .with_context(|| format!("step {step}"))?;

        // One-shot: the phase and the counts.
        let text = fx.status(&["-o", "json"]).await?;
        let summary: Value =
            serde_json::from_str(&text).with_context(|| format!("{step}: {text}"))?;
        let pool = worker_pool(&summary)?;
        let count = |k: &str| pool[k].as_u64().unwrap_or(u64::MAX);
        ensure!(
            count("updated") + count("updating") + count("waiting") + count("degraded")
                == count("total")
                && count("total") == 2,
            "{step}: pool counts do not add up: {pool}"
        );
        let shown = in_flight(&summary);
        ensure!(
            shown
                .as_ref()
                .map(|n| n["phase"].as_str().unwrap_or_default().to_owned())
                == phase.map(str::to_owned),
            "{step}: want worker-0 in {phase:?}, status shows {shown:?}"
        );
        match phase {
            Some(_) => ensure!(
                (count("updating"), count("waiting"), count("updated")) == (1, 1, 0),
                "{step}: {pool}"
            ),
            None => ensure!(
                (count("updating"), count("waiting"), count("updated")) == (0, 1, 1),
                "{step}: {pool}"
            ),
        }

        // The watch: a frame showing this very state arrives after the change.
        let state = Some((shown.clone(), counts(pool)));
        if state == last_shown {
            eprintln!("status: {step}: nothing shown changed, no frame expected");
            continue;
        }
        last_shown = state;
        let seen = tokio::time::timeout(FRAME_BOUND, async {
            while let Some(frame) = frames.recv().await {
                watched += 1;
                if in_flight(&frame) == shown
                    && worker_pool(&frame).ok().map(counts) == Some(counts(pool))
                {
                    return true;
                }
            }
            false
        })
        .await
        .unwrap_or(false);
        ensure!(
            seen,
            "{step}: status --watch showed no frame with {shown:?} (after {watched} frames)"
        );
        eprintln!("status: {step}: worker-0 {phase:?}, frames so far {watched}");
    }
    ensure!(
        watched >= WALK.len(),
        "every step that changed the view must have brought a frame"
    );
    watch.kill().await.ok();
    reader.abort();
    guests_from_the_admin_port(fx).await?;
    the_admin_port_asks_the_cluster(fx).await?;
    as_a_kubectl_plugin(fx).await?;
    terminal_and_pipe(fx).await
}

/// `--admin-auth cluster` (the default) on the real apiserver: the probes
/// answer anyone; `/metrics`, `/guests` and `/ownership` answer 401 without
/// a token or with one the cluster does not know, 403 to a user without
/// the grant (the host's own ServiceAccount), 200 to cluster-admin, and to
/// a user bound to `mco-host-metrics-reader` for `/metrics` only.
async fn the_admin_port_asks_the_cluster(fx: &Fixture) -> Result<()> {
    use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
    use kube::api::{Api, PostParams};
    let host = &fx.controllers[0];
    let admin = fx.cp.token(mco_e2e::ADMIN_USER)?.to_owned();
    let sa = fx.cp.token(&fx.sa.name)?.to_owned();
    let guarded = ["/metrics", "/guests", "/ownership"];
    let mut cases = vec![
        ("/healthz", None, 200),
        ("/readyz", None, 200),
        ("/healthz", Some("not-a-token"), 200),
    ];
    for path in guarded {
        cases.push((path, None, 401));
        cases.push((path, Some("not-a-token"), 401));
        cases.push((path, Some(sa.as_str()), 403));
        cases.push((path, Some(admin.as_str()), 200));
    }
    for (path, token, want) in cases {
        let (code, body) = host.get_as(path, token).await?;
        ensure!(
            code == want,
            "{path} with {}: HTTP {code}, not {want}: {body}",
            match token {
                None => "no token",
                Some(t) if t == admin => "the admin's token",
                Some(t) if t == sa => "the ServiceAccount's token",
                Some(_) => "an unknown token",
            }
        );
    }
    // The documented binding for Prometheus: `/metrics`, nothing else. The
    // ServiceAccount's 403 above is remembered for 10 s, and RBAC takes
    // effect within moments: poll.
    let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "mco-host-metrics-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "mco-host-metrics-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": support::fixture::SERVICE_ACCOUNT, "namespace": support::fixture::NAMESPACE}],
    }))?;
    Api::<ClusterRoleBinding>::all(fx.admin.clone())
        .create(&PostParams::default(), &binding)
        .await?;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (code, body) = host.get_as("/metrics", Some(&sa)).await?;
        if code == 200 {
            break;
        }
        ensure!(
            std::time::Instant::now() < deadline,
            "/metrics still HTTP {code} to a bound reader after 30 s: {body}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let (code, body) = host.get_as("/guests", Some(&sa)).await?;
    ensure!(
        code == 403,
        "/guests to a metrics reader: HTTP {code}: {body}"
    );
    Ok(())
}

/// `kubectl mco status`: the real kubectl finds `kubectl-mco` (a symlink to
/// mco-host) on `PATH` and runs it with kubectl's kubeconfig.
async fn as_a_kubectl_plugin(fx: &Fixture) -> Result<()> {
    let plugins = tempfile::tempdir()?;
    std::os::unix::fs::symlink(
        support::controller::host_binary()?,
        plugins.path().join("kubectl-mco"),
    )?;
    let path = std::env::join_paths(std::iter::once(plugins.path().to_owned()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))?;
    let out = tokio::process::Command::new("kubectl")
        .args(["mco", "status", "-o", "json"])
        .env("PATH", &path)
        .env("KUBECONFIG", fx.admin_kubeconfig()?)
        .output()
        .await
        .context("running kubectl (Debian's kubectl package; apt-get install kubectl)")?;
    ensure!(
        out.status.success(),
        "kubectl mco status failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout)?;
    ensure!(worker_pool(&summary)?["total"] == 2, "{summary}");
    // Errors and help name the plugin as the user typed it.
    let out = tokio::process::Command::new("kubectl")
        .args(["mco", "status", "--no-such-flag"])
        .env("PATH", &path)
        .output()
        .await?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure!(
        !out.status.success() && stderr.contains("kubectl mco status"),
        "a bad flag through kubectl: {stderr}"
    );
    Ok(())
}

/// `--admin-url`: the guests section comes from the running host's
/// `/guests`, and names the module that serves by its digest; the
/// ownership section from its `/ownership`.
async fn guests_from_the_admin_port(fx: &Fixture) -> Result<()> {
    use sha2::{Digest, Sha256};
    let url = format!("http://{}", fx.controllers[0].admin_addr);
    let text = fx.status(&["-o", "json", "--admin-url", &url]).await?;
    let summary: Value = serde_json::from_str(&text).with_context(|| text.clone())?;
    let guests = &summary["guests"];
    ensure!(
        guests["known"] == true && guests["source"] == url,
        "{guests}"
    );
    let mcn = guests["jobs"]
        .as_array()
        .and_then(|jobs| jobs.iter().find(|j| j["job"] == "mcn"))
        .ok_or_else(|| anyhow!("no mcn job in {guests}"))?;
    let served = support::controller::host_binary()?
        .parent()
        .map(|release| release.join("guests").join("mcn.wasm"))
        .ok_or_else(|| anyhow!("the host binary has no directory"))?;
    let digest = format!("{:x}", Sha256::digest(std::fs::read(&served)?));
    ensure!(
        mcn["sha256"] == digest.as_str(),
        "{mcn}: not the digest of {}",
        served.display()
    );
    // `/ownership`: the MCN job owns its MCNs (no operator here).
    let mcn_ownership = summary["ownership"]
        .as_array()
        .and_then(|jobs| jobs.iter().find(|j| j["job"] == "mcn"))
        .ok_or_else(|| anyhow!("no mcn ownership in {summary}"))?;
    ensure!(
        mcn_ownership["mode"] == "own" && mcn_ownership["state"] == "writing",
        "{mcn_ownership}"
    );
    let plain = fx.status(&["--admin-url", &url]).await?;
    ensure!(
        plain.contains(&digest[..12]),
        "the text view does not name the digest:\n{plain}"
    );
    ensure!(
        plain.contains("OWNERSHIP") && plain.contains("writing"),
        "the text view has no ownership section:\n{plain}"
    );
    Ok(())
}

/// Colours only on a terminal, the view cut to the terminal's width, and a
/// one-shot never clears the screen; a pipe gets plain text.
async fn terminal_and_pipe(fx: &Fixture) -> Result<()> {
    let plain = fx.status(&[]).await?;
    println!("{plain}");
    ensure!(
        !plain.contains('\x1b'),
        "escape codes on a pipe:\n{plain:?}"
    );
    const COLUMNS: u16 = 72;
    let shown = fx.status_on_terminal(&[], COLUMNS).await?;
    ensure!(
        shown.contains("\x1b[1m"),
        "no colour on a terminal:\n{shown:?}"
    );
    ensure!(
        !shown.contains("\x1b[2J"),
        "a one-shot cleared the screen:\n{shown:?}"
    );
    let widest = |text: &str| {
        let visible = without_escapes(text);
        let widest = visible.lines().map(|l| l.chars().count()).max();
        (widest.unwrap_or(0), visible)
    };
    let (narrow, visible) = widest(&shown);
    ensure!(
        narrow <= usize::from(COLUMNS),
        "the view is {narrow} columns wide on a {COLUMNS}-column terminal:\n{visible}"
    );
    // The same view on a wide terminal has longer lines: the cut above came
    // from the terminal's size.
    let (wide, visible) = widest(&fx.status_on_terminal(&[], 200).await?);
    ensure!(
        wide > usize::from(COLUMNS),
        "on a 200-column terminal the view is only {wide} wide:\n{visible}"
    );
    Ok(())
}

/// `text` without its SGR escape sequences (`ESC [ … m`).
fn without_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\x1b') {
        out.push_str(&rest[..at]);
        rest = rest[at..].find('m').map_or("", |end| &rest[at + end + 1..]);
    }
    out.push_str(rest);
    out
}
