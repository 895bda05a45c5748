//! What the tests that swap and roll out guests share: `MachineConfigGuest`
//! objects (apply, patch, wait on their status), ConfigMap modules, the real
//! `kubectl`, and the sha256 the host names modules by.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DynamicObject, ObjectMeta, Patch, PatchParams};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::time::sleep;

use super::fixture::{self, Fixture};

/// Lowercase hex, as the host's status and metrics spell a module.
pub fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The real kubectl as admin; its stdout, or an error with its stderr.
pub async fn kubectl(fx: &Fixture, args: &[&str], stdin: Option<&str>) -> Result<String> {
    use tokio::io::AsyncWriteExt;
    let kubeconfig = fx.admin_kubeconfig()?;
    let mut child = tokio::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .context("running kubectl (Debian's kubectl package; apt-get install kubectl)")?;
    if let Some(mut pipe) = child.stdin.take() {
        pipe.write_all(stdin.unwrap_or_default().as_bytes()).await?;
    }
    let out = child.wait_with_output().await?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure!(out.status.success(), "kubectl {}: {stderr}", args.join(" "));
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

pub fn guest_objects_api(fx: &Fixture) -> Api<DynamicObject> {
    let ar = kube::api::ApiResource::from_gvk_with_plural(
        &kube::api::GroupVersionKind::gvk("mco-wasm.io", "v1alpha1", "MachineConfigGuest"),
        "machineconfigguests",
    );
    Api::all_with(fx.admin.clone(), &ar)
}

pub async fn apply_guest_object(fx: &Fixture, object: &Value) -> Result<()> {
    let name = object["metadata"]["name"].as_str().context("no name")?;
    apply_as_test(&guest_objects_api(fx), name, object).await
}

pub async fn patch_guest_object(fx: &Fixture, name: &str, patch: &Value) -> Result<()> {
    let api = guest_objects_api(fx);
    let params = PatchParams::default();
    let patch = Patch::Merge(patch);
    fixture::retry(&format!("patch MachineConfigGuest {name}"), || {
        api.patch(name, &params, &patch)
    })
    .await?;
    Ok(())
}

/// Polls a MachineConfigGuest until its status satisfies `ok`, for at most
/// `limit`; the status.
pub async fn wait_guest_object(
    fx: &mut Fixture,
    name: &str,
    what: &str,
    limit: Duration,
    ok: impl Fn(&Value) -> bool,
) -> Result<Value> {
    let api = guest_objects_api(fx);
    let t = Instant::now();
    loop {
        fx.check_controllers()?;
        let status = match api.get_opt(name).await {
            Ok(Some(object)) => object.data["status"].clone(),
            Ok(None) => Value::Null,
            Err(e) => json!({"error": e.to_string()}),
        };
        if ok(&status) {
            return Ok(status);
        }
        if t.elapsed() > limit {
            bail!("MachineConfigGuest {name}: not {what} after {limit:?}; status {status}");
        }
        sleep(Duration::from_millis(100)).await;
    }
}

/// (status, reason) of a condition in a status.
pub fn condition<'a>(status: &'a Value, type_: &str) -> (&'a str, &'a str) {
    status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == type_)
        .map_or(("", ""), |c| {
            (
                c["status"].as_str().unwrap_or_default(),
                c["reason"].as_str().unwrap_or_default(),
            )
        })
}

/// A module as `binaryData` key `key` of ConfigMap `name` in the host's
/// namespace.
pub async fn put_configmap(fx: &Fixture, name: &str, key: &str, bytes: &[u8]) -> Result<()> {
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        binary_data: Some([(key.to_owned(), ByteString(bytes.to_vec()))].into()),
        ..ConfigMap::default()
    };
    apply_configmap(fx, name, &cm).await
}

pub async fn apply_configmap(fx: &Fixture, name: &str, cm: &ConfigMap) -> Result<()> {
    let api: Api<ConfigMap> = Api::namespaced(fx.admin.clone(), fixture::NAMESPACE);
    apply_as_test(&api, name, cm).await
}

/// Server-side applies `object` as the test's field manager, retried.
pub async fn apply_as_test<K>(
    api: &Api<K>,
    name: &str,
    object: &(impl serde::Serialize + std::fmt::Debug),
) -> Result<()>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let params = PatchParams::apply("mco-e2e-test").force();
    let patch = Patch::Apply(object);
    fixture::retry(&format!("apply {name}"), || {
        api.patch(name, &params, &patch)
    })
    .await?;
    Ok(())
}

/// Waits until the rollout of MachineConfigGuest `name` has candidate
/// `candidate` (its sha256) in `stage`; the status.
pub async fn wait_stage(
    fx: &mut Fixture,
    name: &str,
    candidate: &str,
    stage: &str,
    limit: Duration,
) -> Result<Value> {
    wait_guest_object(fx, name, &format!("in {stage}"), limit, |s| {
        s["rollout"]["candidateSha256"] == candidate && s["rollout"]["stage"] == stage
    })
    .await
}

/// Which of `replicas` (indexes into the fixture's controllers, none of
/// them killed) holds the lease.
pub async fn leader_of(fx: &mut Fixture, replicas: &[usize]) -> Result<usize> {
    let t = Instant::now();
    loop {
        for &c in replicas {
            if !fx.controllers[c].killed() && fx.controllers[c].metrics().await?.leader()? {
                return Ok(c);
            }
        }
        if t.elapsed() > Duration::from_secs(20) {
            bail!("none of the replicas {replicas:?} holds the lease");
        }
        sleep(Duration::from_millis(200)).await;
    }
}

/// SIGKILLs replica `leader` and waits until `standby` holds the lease.
pub async fn fail_over(fx: &mut Fixture, leader: usize, standby: usize) -> Result<()> {
    fx.controllers[leader].kill_hard()?;
    let killed = Instant::now();
    while !fx.controllers[standby].metrics().await?.leader()? {
        ensure!(
            killed.elapsed() < Duration::from_secs(20),
            "the standby did not take the lease within 20 s of the leader's SIGKILL"
        );
        sleep(Duration::from_millis(200)).await;
    }
    Ok(())
}

/// (reason, note) of the Events on MachineConfigGuest `name`.
pub async fn guest_events(fx: &Fixture, name: &str) -> Result<Vec<(String, String)>> {
    let api: Api<Event> = Api::all(fx.admin.clone());
    let lp = Default::default();
    let list = fixture::retry("list Events", || api.list(&lp)).await?;
    Ok(list
        .items
        .into_iter()
        .filter(|e| {
            e.regarding.as_ref().is_some_and(|r| {
                r.kind.as_deref() == Some("MachineConfigGuest") && r.name.as_deref() == Some(name)
            })
        })
        .map(|e| (e.reason.unwrap_or_default(), e.note.unwrap_or_default()))
        .collect())
}

/// Fails unless MachineConfigGuest `name` has the Events of a rollout
/// promoted by itself from `Shadow` to `Canary` and on to `Active`.
pub async fn ensure_promoted_twice(fx: &Fixture, name: &str) -> Result<()> {
    let moves = guest_events(fx, name).await?;
    for wanted in ["Shadow → Canary (Promoted)", "Canary → Active (Promoted)"] {
        ensure!(
            moves
                .iter()
                .any(|(reason, note)| reason == "GuestRolloutMoved" && note.starts_with(wanted)),
            "no GuestRolloutMoved Event {wanted:?} on {name}: {moves:?}"
        );
    }
    Ok(())
}

/// Bound on a registry change being served or refused (poll 500 ms, then
/// compiling and smoke-testing the module on a busy machine).
pub const SWAP_TIMEOUT: Duration = Duration::from_secs(15);

/// Whether a MachineConfigGuest status says the module of `sha256` serves.
pub fn serves(sha256: &str) -> impl Fn(&Value) -> bool {
    let sha256 = sha256.to_string();
    move |s: &Value| {
        s["serving"]["sha256"] == sha256.as_str() && condition(s, "Ready") == ("True", "Serving")
    }
}

/// Merge-patches MachineConfigGuest `mcn` with `patch` and waits for the
/// refusal: Degraded (`SwapFailed`) with `why` in `lastError`, the pull
/// counted as `result` in `mco_guest_fetches_total`, and the module of
/// sha256 `before` still serving.
pub async fn refused_while_serving(
    fx: &mut Fixture,
    c: usize,
    patch: &Value,
    (result, why): (&str, &str),
    before: &str,
) -> Result<()> {
    patch_guest_object(fx, "mcn", patch).await?;
    let status = wait_guest_object(
        fx,
        "mcn",
        &format!("refused ({result})"),
        SWAP_TIMEOUT,
        |s| {
            condition(s, "Degraded") == ("True", "SwapFailed")
                && s["lastError"].as_str().is_some_and(|e| e.contains(why))
        },
    )
    .await?;
    ensure!(
        status["serving"]["sha256"] == before,
        "a refused pull must leave the module before serving: {status}"
    );
    let m = fx.controllers[c].metrics().await?;
    let fetches = m.sum(
        "mco_guest_fetches_total",
        &[("job", "mcn"), ("result", result)],
    );
    ensure!(
        fetches >= 1.0 && serving(&m, before),
        "{patch} must count as {result}, the module before serving"
    );
    Ok(())
}

/// Whether the metrics say the module of `sha256` serves job `mcn`.
pub fn serving(m: &super::controller::Metrics, sha256: &str) -> bool {
    m.sum(
        "mco_guest_info",
        &[("job", "mcn"), ("role", "active"), ("sha256", sha256)],
    ) == 1.0
}
