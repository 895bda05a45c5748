//! `deploy/fleet/`, rolling a MachineConfigGuest across clusters, checked
//! with the real tools short of a hub and Argo CD themselves: the real
//! `kustomize` renders it and every object it holds or its Policies carry
//! passes a strict server-side dry run; the inform policy's status template
//! matches a guest Active and Ready and conflicts with one in Shadow; the
//! Argo CD health check runs in gopher-lua, in Argo CD's sandbox, for every
//! stage; and the commands of `docs/admin/fleet.md` that need no hub run as
//! shown. What is not run, and why: docs/dev/testing.md.

use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail, ensure};
use kube::Client;
use kube::api::{Api, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::discovery::{Discovery, Scope};
use serde_json::{Value, json};

use support::fixture::{Fixture, NAMESPACE, repo_root};
use support::guests::kubectl;

/// Field manager of what the test writes as an administrator would.
const MANAGER: &str = "mco-e2e-fleet";
/// Field manager of the statuses the test writes as the host does.
const HOST_MANAGER: &str = "mco-host";
/// Where `deploy/fleet/acm` puts the policies on the hub.
const POLICY_NAMESPACE: &str = "mco-fleet";
/// A managed cluster's namespace on the hub, where the framework creates
/// the ConfigurationPolicies a Policy carries.
const CLUSTER_NAMESPACE: &str = "local-cluster";
/// Where `deploy/fleet/argocd` puts its objects.
const ARGOCD_NAMESPACE: &str = "argocd";
/// argocd-cm's key for the MachineConfigGuest health check.
const HEALTH_KEY: &str = "resource.customizations.health.mco-wasm.io_MachineConfigGuest";
/// The module sha256 the statuses name as the candidate's.
const CANDIDATE_SHA256: &str = "5b0d41c2a8e95b0d41c2a8e95b0d41c2a8e95b0d41c2a8e95b0d41c2a8e95b0d";
const INSTALLED_SHA256: &str = "9c61e0f3b2d79c61e0f3b2d79c61e0f3b2d79c61e0f3b2d79c61e0f3b2d79c61";
const SINCE: &str = "2026-12-05T10:00:00Z";

fn fleet_dir(sub: &str) -> PathBuf {
    repo_root().join("deploy/fleet").join(sub)
}

fn render(sub: &str) -> Result<Vec<Value>> {
    mco_e2e::kustomize_build(&fleet_dir(sub))
}

fn kind(object: &Value) -> &str {
    object["kind"].as_str().unwrap_or_default()
}

fn name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

/// What the Policies carry: each policy template (a ConfigurationPolicy),
/// and the object templates of the enforcing and the informing ones.
#[derive(Default)]
struct Carried {
    configuration_policies: Vec<Value>,
    enforced: Vec<Value>,
    informed: Vec<Value>,
}

fn carried(rendered: &[Value]) -> Result<Carried> {
    let mut carried = Carried::default();
    for policy in rendered.iter().filter(|o| kind(o) == "Policy") {
        let templates = policy["spec"]["policy-templates"]
            .as_array()
            .with_context(|| format!("Policy {}: no policy-templates", name(policy)))?;
        for template in templates {
            let configuration = &template["objectDefinition"];
            ensure!(
                kind(configuration) == "ConfigurationPolicy",
                "Policy {}: a template of kind {}",
                name(policy),
                kind(configuration)
            );
            // The Policy's action overrides its templates' (the framework's rule).
            let action = policy["spec"]["remediationAction"]
                .as_str()
                .or(configuration["spec"]["remediationAction"].as_str())
                .unwrap_or_default()
                .to_ascii_lowercase();
            let objects = configuration["spec"]["object-templates"]
                .as_array()
                .with_context(|| format!("{}: no object-templates", name(configuration)))?;
            for object in objects {
                let definition = object["objectDefinition"].clone();
                match action.as_str() {
                    "enforce" => carried.enforced.push(definition),
                    "inform" => carried.informed.push(definition),
                    other => bail!("{}: remediationAction {other:?}", name(configuration)),
                }
            }
            carried.configuration_policies.push(configuration.clone());
        }
    }
    Ok(carried)
}

/// Server-side applies `object` with strict field validation as a dry run
/// (what `kubectl apply --server-side --dry-run=server` asks), or for real;
/// in `namespace` when the object names none. `Ok(false)`: the apiserver
/// serves no such kind.
async fn apply(
    client: &Client,
    discovery: &Discovery,
    object: &Value,
    namespace: &str,
    dry_run: bool,
) -> Result<bool> {
    let (group, version) = match object["apiVersion"].as_str().unwrap_or_default() {
        api_version if api_version.contains('/') => api_version
            .split_once('/')
            .map(|(g, v)| (g.to_owned(), v.to_owned()))
            .unwrap_or_default(),
        version => (String::new(), version.to_owned()),
    };
    let gvk = GroupVersionKind::gvk(&group, &version, kind(object));
    let Some((resource, capabilities)) = discovery.resolve_gvk(&gvk) else {
        return Ok(false);
    };
    let api: Api<DynamicObject> = match capabilities.scope {
        Scope::Namespaced => Api::namespaced_with(
            client.clone(),
            object["metadata"]["namespace"]
                .as_str()
                .unwrap_or(namespace),
            &resource,
        ),
        Scope::Cluster => Api::all_with(client.clone(), &resource),
    };
    let mut params = PatchParams::apply(MANAGER).validation_strict();
    params.dry_run = dry_run;
    api.patch(name(object), &params, &Patch::Apply(object))
        .await
        .with_context(|| format!("{} {}: server-side apply", kind(object), name(object)))?;
    Ok(true)
}

#[tokio::test]
async fn the_fleet_manifests_and_all_they_carry_pass_a_server_side_dry_run() -> Result<()> {
    Fixture::run(dry_runs).await
}

async fn dry_runs(fx: &mut Fixture) -> Result<()> {
    // `kustomize build deploy/fleet`, as docs/admin/fleet.md shows.
    let rendered = render("")?;
    let kinds: BTreeSet<&str> = rendered.iter().map(kind).collect();
    ensure!(
        kinds
            == BTreeSet::from([
                "ApplicationSet",
                "ConfigMap",
                "ManagedClusterSetBinding",
                "Namespace",
                "Placement",
                "PlacementBinding",
                "Policy",
            ]),
        "{kinds:?}"
    );
    fx.cp
        .install_crd_dir(mco_e2e::crds_dir().join("fleet"))
        .await?;
    for namespace in [POLICY_NAMESPACE, CLUSTER_NAMESPACE, ARGOCD_NAMESPACE] {
        fx.cp.create_namespace(namespace).await?;
    }
    let discovery = Discovery::new(fx.admin.clone()).run().await?;

    let mut not_served = Vec::new();
    for object in &rendered {
        if !apply(&fx.admin, &discovery, object, "default", true).await? {
            not_served.push(kind(object));
        }
    }
    ensure!(not_served == ["ApplicationSet"], "{not_served:?}");

    let carried = carried(&rendered)?;
    ensure!(carried.configuration_policies.len() == 2);
    for object in &carried.configuration_policies {
        ensure!(apply(&fx.admin, &discovery, object, CLUSTER_NAMESPACE, true).await?);
    }
    for object in &carried.enforced {
        ensure!(apply(&fx.admin, &discovery, object, "default", true).await?);
    }
    // The Policy ships what Argo CD syncs: deploy/fleet/guest, the same
    // objects in the same order.
    ensure!(
        carried.enforced == render("guest")?,
        "deploy/fleet/acm/policy-guest.yaml carries other objects than deploy/fleet/guest"
    );

    // argocd-cm holds health.lua as checked in.
    let argocd_cm = rendered
        .iter()
        .find(|o| kind(o) == "ConfigMap" && name(o) == "argocd-cm")
        .context("no argocd-cm")?;
    ensure!(argocd_cm["metadata"]["namespace"] == ARGOCD_NAMESPACE);
    ensure!(argocd_cm["data"][HEALTH_KEY].as_str() == Some(health_script()?.as_str()));

    check_status_template(fx, &discovery, &carried).await?;

    // The guide's commands that need no hub: the objects one cluster
    // gets, and the hub's policies, each as a server-side dry run (the
    // directory made absolute), printing what the guide shows.
    for sub in ["guest", "acm"] {
        let dir = fleet_dir(sub).display().to_string();
        let out = kubectl(
            fx,
            &["apply", "--server-side", "--dry-run=server", "-k", &dir],
            None,
        )
        .await?;
        let shown = documented_output(&format!(
            "kubectl apply --server-side --dry-run=server -k deploy/fleet/{sub}"
        ))?;
        ensure!(out.lines().eq(shown.iter().map(String::as_str)), "{out}");
    }
    Ok(())
}

/// The inform policy's template against statuses the apiserver holds: the
/// guest is created from what the enforcing policy carries, and its status
/// written as the host writes it, once Active and Ready and once in Shadow.
/// A server-side apply of the template, without force, as another manager:
/// where the template's values are the status's, the apply only shares
/// ownership; where one differs, it conflicts. Strict validation refuses a
/// field the schema lacks.
async fn check_status_template(
    fx: &mut Fixture,
    discovery: &Discovery,
    carried: &Carried,
) -> Result<()> {
    let [template] = carried.informed.as_slice() else {
        bail!("{} informed object templates", carried.informed.len());
    };
    let guest = carried
        .enforced
        .iter()
        .find(|o| kind(o) == "MachineConfigGuest")
        .context("the enforcing policy carries no MachineConfigGuest")?;
    ensure!(name(template) == name(guest));
    let module = format!(
        "oci:{}",
        guest["spec"]["candidate"]["oci"]
            .as_str()
            .unwrap_or_default()
    );
    ensure!(
        template["status"]["candidate"]["module"] == module.as_str(),
        "the status template names another candidate than the one shipped"
    );
    for object in &carried.enforced {
        apply(&fx.admin, discovery, object, "default", false).await?;
    }
    let api = guests_api(fx);
    let template_apply = PatchParams {
        dry_run: true,
        ..PatchParams::apply("config-policy-check").validation_strict()
    };

    write_status(
        &api,
        name(guest),
        &host_status(1, Some(("Active", None)), Ok(()), &module),
    )
    .await?;
    api.patch_status(name(guest), &template_apply, &Patch::Apply(template))
        .await
        .context("the status template does not match a guest Active and Ready")?;
    // `kubectl get machineconfigguests` shows what the guide shows, but
    // the age.
    let table = kubectl(fx, &["get", "machineconfigguests"], None).await?;
    let columns = |line: &str| {
        let mut words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        words.pop();
        words
    };
    let shown = documented_output("kubectl get machineconfigguests")?;
    ensure!(
        table
            .lines()
            .map(columns)
            .eq(shown.iter().map(|l| columns(l))),
        "{table}"
    );

    write_status(
        &api,
        name(guest),
        &host_status(1, Some(("Shadow", None)), Ok(()), &module),
    )
    .await?;
    match api
        .patch_status(name(guest), &template_apply, &Patch::Apply(template))
        .await
    {
        Err(kube::Error::Api(status)) if status.code == 409 => {
            ensure!(
                status.message.contains(".status.rollout.stage"),
                "{}",
                status.message
            );
        }
        other => bail!("a guest in Shadow matched the Active template: {other:?}"),
    }
    Ok(())
}

/// The output `docs/admin/fleet.md` shows after `$ command`.
fn documented_output(command: &str) -> Result<Vec<String>> {
    let path = repo_root().join("docs/admin/fleet.md");
    let guide = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
    let prompt = format!("$ {command}");
    let mut lines = guide.lines().skip_while(|l| *l != prompt);
    ensure!(
        lines.next().is_some(),
        "docs/admin/fleet.md shows no `{prompt}`"
    );
    Ok(lines
        .take_while(|l| !l.starts_with("```"))
        .map(str::to_owned)
        .collect())
}

fn guests_api(fx: &Fixture) -> Api<DynamicObject> {
    support::guests::guest_objects_api(fx)
}

/// Replaces the status as the host's lease holder does (its own field
/// manager, forced), through the CRD's schema.
async fn write_status(api: &Api<DynamicObject>, name: &str, status: &Value) -> Result<()> {
    let patch = json!({
        "apiVersion": "mco-wasm.io/v1alpha1",
        "kind": "MachineConfigGuest",
        "metadata": {"name": name},
        "status": status,
    });
    api.patch_status(
        name,
        &PatchParams::apply(HOST_MANAGER).force().validation_strict(),
        &Patch::Apply(&patch),
    )
    .await
    .with_context(|| format!("writing the status of {name}"))?;
    Ok(())
}

fn condition(type_: &str, status: bool, reason: &str, message: &str) -> Value {
    json!({
        "type": type_,
        "status": if status { "True" } else { "False" },
        "reason": reason,
        "message": message,
        "lastTransitionTime": SINCE,
    })
}

/// A status in the shape `host/src/registry/crd.rs` writes: the module
/// serving, the candidate when there is a rollout (`stage`, and a rollback
/// message), `Ready` / `Degraded` (`Err`: the spec does not serve, and
/// why), and the rollout's three conditions.
fn host_status(
    generation: i64,
    rollout: Option<(&str, Option<&str>)>,
    serving: Result<(), &str>,
    candidate: &str,
) -> Value {
    let module = json!({
        "module": "mcn.wasm",
        "sha256": INSTALLED_SHA256,
        "digest": format!("sha256:{}", &INSTALLED_SHA256[..12]),
    });
    let mut conditions = match serving {
        Ok(()) => vec![
            condition(
                "Ready",
                true,
                "Serving",
                "mcn.wasm (sha256:9c61e0f3b2d7) serves",
            ),
            condition("Degraded", false, "AsSpecified", ""),
        ],
        Err(error) => vec![
            condition(
                "Ready",
                false,
                "SwapFailed",
                "the spec does not serve; mcn.wasm (sha256:9c61e0f3b2d7) serves",
            ),
            condition("Degraded", true, "SwapFailed", error),
        ],
    };
    let mut status = json!({"observedGeneration": generation, "serving": module, "conditions": []});
    if let Some((stage, rolled_back)) = rollout {
        status["candidate"] = json!({
            "module": candidate,
            "sha256": CANDIDATE_SHA256,
            "digest": format!("sha256:{}", &CANDIDATE_SHA256[..12]),
        });
        status["rollout"] = json!({
            "stage": stage,
            "requested": "Shadow",
            "since": SINCE,
            "agree": 240,
            "differ": u8::from(rolled_back.is_some()),
            "failed": 0,
            "candidateSha256": CANDIDATE_SHA256,
        });
        if let Some(message) = rolled_back {
            status["rollout"]["reason"] = json!("TooManyDifferences");
            status["rollout"]["message"] = json!(message);
        }
        let in_progress = stage == "Shadow" || stage == "Canary";
        conditions.push(condition(
            "Progressing",
            in_progress,
            &if in_progress {
                format!("In{stage}")
            } else {
                stage.to_owned()
            },
            "",
        ));
        conditions.push(condition("Promotable", false, "Waiting", ""));
        conditions.push(condition(
            "RolledBack",
            rolled_back.is_some(),
            if rolled_back.is_some() {
                "TooManyDifferences"
            } else {
                "NotRolledBack"
            },
            rolled_back.unwrap_or_default(),
        ));
    }
    status["conditions"] = Value::Array(conditions);
    status
}

// ---------------------------------------------------------------------------
// The Argo CD health check in gopher-lua
// ---------------------------------------------------------------------------

fn health_script() -> Result<String> {
    let path = fleet_dir("argocd/health.lua");
    std::fs::read_to_string(&path).with_context(|| path.display().to_string())
}

/// glua from `tests/tools/glua/build.sh` (built once, cached by version).
async fn glua() -> Result<PathBuf> {
    let script = repo_root().join("tests/tools/glua/build.sh");
    let output = tokio::process::Command::new(&script)
        .output()
        .await
        .with_context(|| script.display().to_string())?;
    ensure!(
        output.status.success(),
        "{}:\n{}",
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let dir = stdout
        .lines()
        .last()
        .context("build.sh printed no directory")?;
    Ok(Path::new(dir).join("glua"))
}

/// A Lua string literal of any bytes (decimal escapes, as Lua 5.1 reads them).
fn lua_string(text: &str) -> String {
    let mut literal = String::from("\"");
    for byte in text.bytes() {
        match byte {
            b'"' | b'\\' => {
                literal.push('\\');
                literal.push(char::from(byte));
            }
            0x20..=0x7e => literal.push(char::from(byte)),
            _ => literal.push_str(&format!("\\{byte:03}")),
        }
    }
    literal.push('"');
    literal
}

/// `value` as the Lua table Argo CD hands a health check as `obj`: maps by
/// string key, arrays from index 1, numbers as Lua numbers.
fn lua_value(value: &Value) -> String {
    match value {
        Value::Null => "nil".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => lua_string(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(lua_value).collect();
            format!("{{{}}}", items.join(", "))
        }
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("[{}] = {}", lua_string(k), lua_value(v)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
    }
}

/// Argo CD's sandbox (util/lua/lua.go, `SkipOpenLibs` with the base and
/// table libraries opened): the script sees `obj` and nothing else, so one
/// that needs the string library fails here as it would there.
const SANDBOX: &str = r#"
local env = { obj = OBJ, table = table, _VERSION = _VERSION }
for _, name in ipairs({ "assert", "error", "getmetatable", "ipairs", "next", "pairs", "pcall",
    "print", "rawequal", "rawget", "rawset", "select", "setmetatable", "tonumber", "tostring",
    "type", "unpack", "xpcall" }) do
  env[name] = _G[name]
end
local chunk = assert(loadstring(SCRIPT, "health.lua"))
setfenv(chunk, env)
local hs = chunk()
io.write(tostring(hs.status), "\n", tostring(hs.message), "\n")
"#;

/// The health status and message Argo CD would show for `object`.
async fn argo_health(glua: &Path, script: &str, object: &Value) -> Result<(String, String)> {
    let program = format!(
        "local OBJ = {}\nlocal SCRIPT = {}\n{SANDBOX}",
        lua_value(object),
        lua_string(script)
    );
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("run.lua");
    std::fs::write(&file, program)?;
    let output = tokio::process::Command::new(glua)
        .arg(&file)
        .output()
        .await
        .context("running glua")?;
    ensure!(
        output.status.success(),
        "health.lua failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let (status, message) = stdout.split_once('\n').context("no status line")?;
    Ok((status.to_owned(), message.trim_end().to_owned()))
}

/// One object the health check is asked about: a status, perhaps a spec
/// change after it (the host has not acted on yet), and what Argo CD
/// should show.
struct Case {
    name: &'static str,
    rollout: bool,
    status: Option<Value>,
    changed_after: bool,
    health: &'static str,
    message: &'static str,
}

#[tokio::test]
async fn the_argo_cd_health_check_maps_every_stage() -> Result<()> {
    Fixture::run(health_cases).await
}

async fn health_cases(fx: &mut Fixture) -> Result<()> {
    let glua = glua().await?;
    let script = health_script()?;
    let guest = render("guest")?
        .into_iter()
        .find(|o| kind(o) == "MachineConfigGuest")
        .context("deploy/fleet/guest has no MachineConfigGuest")?;
    let module = format!(
        "oci:{}",
        guest["spec"]["candidate"]["oci"]
            .as_str()
            .unwrap_or_default()
    );
    let rollout = |stage, rolled_back| host_status(1, Some((stage, rolled_back)), Ok(()), &module);
    let cases = [
        Case {
            name: "no-status",
            rollout: true,
            status: None,
            changed_after: false,
            health: "Progressing",
            message: "Waiting for mco-host to report this guest",
        },
        Case {
            name: "shadow",
            rollout: true,
            status: Some(rollout("Shadow", None)),
            changed_after: false,
            health: "Progressing",
            message: "Shadow since 2026-12-05T10:00:00Z: 240 agree, 0 differ, 0 failed",
        },
        Case {
            name: "canary",
            rollout: true,
            status: Some(rollout("Canary", None)),
            changed_after: false,
            health: "Progressing",
            message: "Canary since 2026-12-05T10:00:00Z: 240 agree, 0 differ, 0 failed",
        },
        Case {
            name: "active-ready",
            rollout: true,
            status: Some(rollout("Active", None)),
            changed_after: false,
            health: "Healthy",
            message: "Active: mcn.wasm (sha256:9c61e0f3b2d7) serves",
        },
        Case {
            name: "active-not-ready",
            rollout: true,
            status: Some(host_status(
                1,
                Some(("Active", None)),
                Err("configmap/mco-guest-signing-keys[release.pub]: not found"),
                &module,
            )),
            changed_after: false,
            health: "Degraded",
            message: "SwapFailed: configmap/mco-guest-signing-keys[release.pub]: not found",
        },
        Case {
            name: "rolled-back",
            rollout: true,
            status: Some(rollout(
                "RolledBack",
                Some("worker-canary-0: Updated differs"),
            )),
            changed_after: false,
            health: "Degraded",
            message: "The candidate was rolled back: worker-canary-0: Updated differs",
        },
        Case {
            name: "rolled-back-then-changed",
            rollout: true,
            status: Some(rollout(
                "RolledBack",
                Some("worker-canary-0: Updated differs"),
            )),
            changed_after: true,
            health: "Progressing",
            message: "Waiting for mco-host to act on generation 2",
        },
        Case {
            name: "no-rollout",
            rollout: false,
            status: Some(host_status(1, None, Ok(()), &module)),
            changed_after: false,
            health: "Healthy",
            message: "mcn.wasm (sha256:9c61e0f3b2d7) serves",
        },
    ];
    let api = guests_api(fx);
    for case in cases {
        let mut object = guest.clone();
        object["metadata"]["name"] = json!(case.name);
        if !case.rollout {
            let spec = object["spec"].as_object_mut().context("no spec")?;
            spec.remove("candidate");
            spec.remove("rollout");
        }
        api.patch(
            case.name,
            &PatchParams::apply(MANAGER).validation_strict(),
            &Patch::Apply(&object),
        )
        .await
        .with_context(|| format!("{}: creating the guest", case.name))?;
        if let Some(status) = &case.status {
            write_status(&api, case.name, status).await?;
        }
        if case.changed_after {
            object["spec"]["rollout"]["promotion"]["evaluations"] = json!(500);
            api.patch(
                case.name,
                &PatchParams::apply(MANAGER).validation_strict(),
                &Patch::Apply(&object),
            )
            .await?;
        }
        let served = serde_json::to_value(api.get(case.name).await?)?;
        let (health, message) = argo_health(&glua, &script, &served)
            .await
            .with_context(|| case.name)?;
        ensure!(
            (health.as_str(), message.as_str()) == (case.health, case.message),
            "{}: {health} {message:?}, expected {} {:?}",
            case.name,
            case.health,
            case.message
        );
    }
    Ok(())
}

#[test]
fn lua_literals_carry_any_text_and_value() {
    assert_eq!(
        lua_string("a\"b\\c\nd é"),
        "\"a\\\"b\\\\c\\010d \\195\\169\""
    );
    assert_eq!(
        lua_value(&json!({"a": [1, true, null], "b": {"c": "d"}})),
        "{[\"a\"] = {1, true, nil}, [\"b\"] = {[\"c\"] = \"d\"}}"
    );
}

/// The namespace the host reads keys from is the one the key ConfigMap names.
#[test]
fn the_key_lands_in_the_hosts_namespace() -> Result<()> {
    let guest = render("guest")?;
    let key = guest
        .iter()
        .find(|o| kind(o) == "ConfigMap")
        .context("no key ConfigMap")?;
    ensure!(key["metadata"]["namespace"] == NAMESPACE);
    let named = guest
        .iter()
        .find(|o| kind(o) == "MachineConfigGuest")
        .map(|g| g["spec"]["candidate"]["verify"]["keys"][0]["configMap"].clone())
        .context("no MachineConfigGuest")?;
    ensure!(
        named["name"] == name(key)
            && key["data"][named["key"].as_str().unwrap_or_default()].is_string()
    );
    Ok(())
}
