//! A control plane set up the way `deploy/` sets up a cluster for
//! `mco-host run` (namespace, MCN CRD, RBAC for the ServiceAccount), the
//! OpenShift objects the controller reads, and its child processes.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::future::Future;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail, ensure};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams,
};
use kube::discovery::{Scope, pinned_kind};
use kube::{Client, ResourceExt};
use mco_e2e::{ControlPlane, FeatureSet, User, openshift};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::sleep;

use super::controller::{Controller, host_binary, tail};
use super::golden::{self, Expected};

pub const NAMESPACE: &str = "mco-system";
pub const SERVICE_ACCOUNT: &str = "mco-host";
/// deploy/rbac.yaml grants get/update/patch on this one Lease name only.
pub const LEASE: &str = "mco-host";
/// The ClusterRole deploy/rbac.yaml binds to the ServiceAccount.
const CLUSTER_ROLE: &str = "mco-host";
pub const ANNOTATION_PREFIX: &str = "machineconfiguration.openshift.io/";
/// Field manager of everything the test itself writes as admin.
const MANAGER: &str = "mco-e2e-test";
const POLL: Duration = Duration::from_millis(200);
/// Writes in flight for bulk set-up: what a 2-core apiserver takes without
/// throttling.
pub const IN_FLIGHT: usize = 32;

/// The repository's root: the crate is `tests/e2e/`.
pub fn repo_root() -> PathBuf {
    mco_e2e::crate_dir().join("../..")
}

pub fn machine_config_node() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(
            "machineconfiguration.openshift.io",
            "v1",
            "MachineConfigNode",
        ),
        "machineconfignodes",
    )
}

/// One control plane and its controllers at a time: on two cores, three at
/// once starve each other past the readiness and convergence bounds.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// One test's world: the control plane, a temp dir for controller logs and
/// the controllers themselves. Fields drop in order: controllers first (so
/// they do not log a dying apiserver), then the control plane, then the dir.
pub struct Fixture {
    pub controllers: Vec<Controller>,
    pub cp: ControlPlane,
    pub admin: Client,
    pub sa: User,
    dir: Option<TempDir>,
    dir_path: PathBuf,
    bin: PathBuf,
    kubeconfig: PathBuf,
    t0: Instant,
}

/// The feature gate of the MCN's `configImage` and its per-phase image
/// mode conditions.
pub const IMAGE_MODE: &str = "ImageModeStatusReporting";

impl Fixture {
    /// Runs `test` in a fixture of its own, one test of the binary at a time,
    /// and [`Fixture::finish`]es it: a failure comes with the log tails.
    pub async fn run(test: impl AsyncFnOnce(&mut Fixture) -> Result<()>) -> Result<()> {
        Self::run_on(FeatureSet::TechPreviewNoUpgrade, test).await
    }

    /// [`Fixture::run`] with the MCN CRD of `set` ([`Fixture::run`]'s is
    /// TechPreviewNoUpgrade's, which declares `configImage`).
    pub async fn run_on(
        set: FeatureSet,
        test: impl AsyncFnOnce(&mut Fixture) -> Result<()>,
    ) -> Result<()> {
        let _one_at_a_time = SERIAL.lock().await;
        let mut fx = Fixture::start_on(set).await?;
        let result = test(&mut fx).await;
        fx.finish(result)
    }

    /// [`Fixture::start_on`] TechPreviewNoUpgrade.
    pub async fn start() -> Result<Self> {
        Self::start_on(FeatureSet::TechPreviewNoUpgrade).await
    }

    /// Control plane with the controller's ServiceAccount user, the OpenShift
    /// CRDs, the generated MCN CRD of `set` (`ControlPlane::install_mcn_crd`
    /// replaces it), namespace `mco-system` and `deploy/rbac.yaml`.
    pub async fn start_on(set: FeatureSet) -> Result<Self> {
        let t0 = Instant::now();
        // Before the control plane: a missing binary is the most likely failure.
        let bin = host_binary()?;
        let sa = User::service_account(NAMESPACE, SERVICE_ACCOUNT);
        let cp = ControlPlane::builder().user(sa.clone()).start().await?;
        let admin = cp.admin_client()?;
        cp.install_openshift_crds().await?;
        cp.install_crd_dir(repo_root().join("deploy").join("crds"))
            .await?;
        // What plain Kubernetes adds (on OpenShift the cluster owns it).
        cp.install_mcn_crd(set).await?;
        cp.create_namespace(NAMESPACE).await?;
        apply_manifest(&admin, &repo_root().join("deploy").join("rbac.yaml"))
            .await
            .context("applying deploy/rbac.yaml")?;

        let dir = tempfile::Builder::new()
            .prefix("mco-mcn-controller.")
            .tempdir()
            .context("cannot create a temp dir")?;
        let dir_path = dir.path().to_owned();
        let kubeconfig = dir_path.join("kubeconfig.yaml");
        cp.write_kubeconfig(&sa.name, &kubeconfig)?;

        // RBAC takes effect within milliseconds, but not synchronously.
        let nodes: Api<Node> = Api::all(cp.client_for(&sa.name)?);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match nodes.list(&Default::default()).await {
                Ok(_) => break,
                Err(e) if Instant::now() < deadline => {
                    eprintln!("mcn_controller: waiting for the RBAC grant ({e})");
                    sleep(POLL).await;
                }
                Err(e) => {
                    return Err(e).context(
                        "the ServiceAccount cannot list nodes 10 s after deploy/rbac.yaml was applied",
                    );
                }
            }
        }
        eprintln!(
            "mcn_controller: fixture ready in {:.2?}; controller logs in {}",
            t0.elapsed(),
            dir_path.display()
        );
        Ok(Self {
            controllers: Vec::new(),
            cp,
            admin,
            sa,
            dir: Some(dir),
            dir_path,
            bin,
            kubeconfig,
            t0,
        })
    }

    /// What `deploy/boot-images` adds: the namespaces the boot image
    /// controller reads and its RBAC, with the user-data Secret the tests'
    /// MachineSets name beside the installer's added as deploy/README.md
    /// says ("User-data Secrets with other names").
    pub async fn enable_boot_images(&self) -> Result<()> {
        for ns in ["openshift-machine-api", "openshift-machine-config-operator"] {
            self.cp.create_namespace(ns).await?;
        }
        let rbac = repo_root()
            .join("deploy")
            .join("boot-images")
            .join("rbac.yaml");
        apply_manifest(&self.admin, &rbac)
            .await
            .context("applying deploy/boot-images/rbac.yaml")?;
        // The patch's `add` to /rules/2/resourceNames, as a replace.
        let roles: Api<k8s_openapi::api::rbac::v1::Role> =
            Api::namespaced(self.admin.clone(), "openshift-machine-api");
        let mut role = roles.get("mco-host-boot-images").await?;
        let names = role
            .rules
            .as_mut()
            .and_then(|rules| rules.get_mut(2))
            .and_then(|rule| rule.resource_names.as_mut())
            .context("the boot image Role's third rule names no Secrets")?;
        names.push("legacy-user-data".into());
        roles
            .replace("mco-host-boot-images", &PostParams::default(), &role)
            .await
            .context("adding legacy-user-data to the boot image Role")?;
        Ok(())
    }

    /// Starts `mco-host run` as the ServiceAccount and waits for `/readyz`.
    /// Returns its index in `controllers`.
    pub async fn start_controller(&mut self, identity: &str, extra: &[&str]) -> Result<usize> {
        self.start_controller_within(identity, extra, Duration::from_secs(30))
            .await
    }

    /// [`Self::start_controller`], waiting up to `limit` for `/readyz`.
    pub async fn start_controller_within(
        &mut self,
        identity: &str,
        extra: &[&str],
        limit: Duration,
    ) -> Result<usize> {
        let i = self.spawn_controller(identity, extra)?;
        let took = self.controllers[i].wait_ready(limit).await?;
        eprintln!("mcn_controller: controller {identity} ready in {took:.2?}");
        Ok(i)
    }

    /// Starts `mco-host run` as the ServiceAccount, without waiting for
    /// `/readyz` (which a watch held back keeps from answering 200).
    /// Returns its index in `controllers`.
    pub fn spawn_controller(&mut self, identity: &str, extra: &[&str]) -> Result<usize> {
        let common = vec![
            "--kubeconfig".to_owned(),
            self.kubeconfig.display().to_string(),
            "--namespace".to_owned(),
            NAMESPACE.to_owned(),
            "--lease-name".to_owned(),
            LEASE.to_owned(),
        ];
        let mut c = Controller::spawn(&self.bin, &self.dir_path, identity, &common, extra)?;
        c.admin_token = Some(self.cp.token(mco_e2e::ADMIN_USER)?.to_owned());
        self.controllers.push(c);
        Ok(self.controllers.len() - 1)
    }

    /// Takes `verbs` on `resource` away from the ServiceAccount's
    /// ClusterRole (the rest of its rules stay), and waits until the
    /// apiserver refuses it a list. [`Self::restore_rbac`] gives them back.
    pub async fn withhold(&self, resource: &ApiResource, verbs: &[&str]) -> Result<()> {
        self.take_away(resource, verbs).await?;
        self.wait_list_allowed(resource, false).await
    }

    /// [`Self::withhold`] without the wait, for a resource that is never
    /// listed (a review): the caller waits its own way, as RBAC changes
    /// take effect soon, not at once.
    pub async fn take_away(&self, resource: &ApiResource, verbs: &[&str]) -> Result<()> {
        let roles: Api<ClusterRole> = Api::all(self.admin.clone());
        let mut role = roles.get(CLUSTER_ROLE).await?;
        let mut rules = Vec::new();
        for rule in role.rules.take().unwrap_or_default() {
            let covers = rule
                .api_groups
                .as_ref()
                .is_some_and(|g| g.contains(&resource.group))
                && rule
                    .resources
                    .as_ref()
                    .is_some_and(|r| r.contains(&resource.plural));
            if !covers {
                rules.push(rule);
                continue;
            }
            let kept: Vec<String> = rule
                .verbs
                .iter()
                .filter(|v| !verbs.contains(&v.as_str()))
                .cloned()
                .collect();
            let others: Vec<String> = rule
                .resources
                .iter()
                .flatten()
                .filter(|r| **r != resource.plural)
                .cloned()
                .collect();
            if !others.is_empty() {
                rules.push(PolicyRule {
                    resources: Some(others),
                    ..rule.clone()
                });
            }
            if !kept.is_empty() {
                rules.push(PolicyRule {
                    resources: Some(vec![resource.plural.clone()]),
                    verbs: kept,
                    ..rule
                });
            }
        }
        role.rules = Some(rules);
        roles
            .replace(CLUSTER_ROLE, &PostParams::default(), &role)
            .await
            .with_context(|| format!("withholding {verbs:?} on {}", resource.plural))?;
        Ok(())
    }

    /// Applies deploy/rbac.yaml again (after [`Self::withhold`]), and waits
    /// until the ServiceAccount may list `resource` again.
    pub async fn restore_rbac(&self, resource: &ApiResource) -> Result<()> {
        apply_manifest(&self.admin, &repo_root().join("deploy").join("rbac.yaml"))
            .await
            .context("applying deploy/rbac.yaml again")?;
        self.wait_list_allowed(resource, true).await
    }

    /// Waits until the ServiceAccount's list of `resource` is allowed, or
    /// refused (403): RBAC changes take effect soon, not at once.
    async fn wait_list_allowed(&self, resource: &ApiResource, allowed: bool) -> Result<()> {
        let api: Api<DynamicObject> = Api::all_with(self.cp.client_for(&self.sa.name)?, resource);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let listed = api.list(&ListParams::default().limit(1)).await;
            let now = match &listed {
                Ok(_) => true,
                Err(e) if api_code(e) == Some(403) => false,
                Err(e) => bail!("listing {} as {}: {e}", resource.plural, self.sa.name),
            };
            if now == allowed {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "{} may{} list {} 10 s after its ClusterRole changed",
                    self.sa.name,
                    if allowed { " not" } else { " still" },
                    resource.plural
                );
            }
            sleep(POLL).await;
        }
    }

    /// A kubeconfig for the admin user: what a person running
    /// `mco-host status` has (the controller's ServiceAccount may not read
    /// everything the view shows).
    pub fn admin_kubeconfig(&self) -> Result<PathBuf> {
        let path = self.dir_path.join("admin-kubeconfig.yaml");
        if !path.exists() {
            self.cp.write_kubeconfig(mco_e2e::ADMIN_USER, &path)?;
        }
        Ok(path)
    }

    /// The arguments of `mco-host status --kubeconfig <admin> …`.
    fn status_command(&self, args: &[&str]) -> Result<tokio::process::Command> {
        let mut command = tokio::process::Command::new(&self.bin);
        command
            .arg("status")
            .arg("--kubeconfig")
            .arg(self.admin_kubeconfig()?)
            .args(args)
            .env("MCO_ADMIN_TOKEN", self.cp.token(mco_e2e::ADMIN_USER)?)
            .env("COLUMNS", "120")
            .kill_on_drop(true);
        Ok(command)
    }

    /// `mco-host preflight --json ARGS` as the admin, about the
    /// ServiceAccount: one entry per job (and `admin`).
    pub async fn preflight(&self, args: &[&str]) -> Result<Vec<Value>> {
        let out = tokio::process::Command::new(&self.bin)
            .arg("preflight")
            .arg("--kubeconfig")
            .arg(self.admin_kubeconfig()?)
            .arg("--json")
            .args(args)
            .output()
            .await
            .context("running mco-host preflight")?;
        ensure!(
            out.status.success(),
            "preflight failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(serde_json::from_slice(&out.stdout)?)
    }

    /// Runs `mco-host status ARGS` once and returns its stdout.
    pub async fn status(&self, args: &[&str]) -> Result<String> {
        let out = self
            .status_command(args)?
            .output()
            .await
            .context("running mco-host status")?;
        status_output(out, args, "")
    }

    /// Runs `mco-host status ARGS` once with its stdout on a pseudo-terminal
    /// of `columns` columns, as at a person's terminal (no `COLUMNS` in its
    /// environment, as shells do not export it), and returns what it wrote.
    pub async fn status_on_terminal(&self, args: &[&str], columns: u16) -> Result<String> {
        use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY)?;
        grantpt(&master)?;
        unlockpt(&master)?;
        let size = rustix::termios::Winsize {
            ws_row: 50,
            ws_col: columns,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        rustix::termios::tcsetwinsize(&master, size)?;
        let terminal = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(OsStr::from_bytes(ptsname(&master, Vec::new())?.as_bytes()))
            .context("opening the pseudo-terminal")?;
        let child = self
            .status_command(args)?
            .env_remove("COLUMNS")
            .env_remove("NO_COLOR")
            .stdout(terminal)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .context("starting mco-host status on a terminal")?;
        // The `Command` is gone with its copy of the terminal: reads give
        // what the child writes, then EIO once it exits.
        let mut reader = std::fs::File::from(master);
        let echoed = tokio::task::spawn_blocking(move || {
            let mut text = Vec::new();
            let _eio_at_close = std::io::Read::read_to_end(&mut reader, &mut text);
            text
        });
        let out = child
            .wait_with_output()
            .await
            .context("running mco-host status on a terminal")?;
        let out = std::process::Output {
            stdout: echoed.await.context("reading the pseudo-terminal")?,
            ..out
        };
        // The terminal turns `\n` into `\r\n`.
        Ok(status_output(out, args, " on a terminal")?.replace("\r\n", "\n"))
    }

    /// Starts `mco-host status --watch ARGS` with its stdout piped.
    pub fn status_watch(&self, args: &[&str]) -> Result<tokio::process::Child> {
        self.status_command(args)?
            .arg("--watch")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .context("starting mco-host status --watch")
    }

    /// The test's result, with the controllers' and the apiserver's log tails
    /// attached to an error.
    pub fn finish(self, result: Result<()>) -> Result<()> {
        let elapsed = self.t0.elapsed();
        match result {
            Ok(()) => {
                eprintln!("mcn_controller: passed in {elapsed:.2?}");
                Ok(())
            }
            Err(e) => {
                let mut msg = format!("{e:#}\n(after {elapsed:.2?})\n");
                for c in &self.controllers {
                    msg.push_str(&c.tails());
                }
                msg.push_str(&format!(
                    "===== kube-apiserver {} (last 20 lines) =====\n{}",
                    self.cp.apiserver_log().display(),
                    tail(&self.cp.apiserver_log(), 20)
                ));
                Err(anyhow!(msg))
            }
        }
    }

    // ---- objects -------------------------------------------------------------------------------

    pub async fn apply_pool(&self, name: &str, target: &str) -> Result<()> {
        let ar = openshift::machine_config_pool();
        let obj = json!({
            "apiVersion": ar.api_version, "kind": ar.kind,
            "metadata": { "name": name },
            "spec": {
                "nodeSelector": { "matchLabels": { format!("node-role.kubernetes.io/{name}"): "" } },
                "configuration": { "name": target },
            },
        });
        self.apply(&ar, name, &obj)
            .await
            .with_context(|| format!("pool {name} → {target}"))
    }

    /// Server-side applies every MachineConfig of a golden case.
    pub async fn apply_golden_machineconfigs(&self, case: &str) -> Result<()> {
        let docs = golden::yaml_docs(case, "machineconfigs.yaml")?;
        self.apply_machineconfigs(&docs)
            .await
            .with_context(|| format!("the MachineConfigs of {case}"))
    }

    /// Server-side applies MachineConfigs.
    pub async fn apply_machineconfigs(&self, docs: &[Value]) -> Result<()> {
        let ar = openshift::machine_config();
        for doc in docs {
            let name = doc["metadata"]["name"]
                .as_str()
                .ok_or_else(|| anyhow!("a MachineConfig without a name"))?;
            self.apply(&ar, name, doc).await?;
        }
        Ok(())
    }

    /// A minimal rendered MachineConfig, for pools the walks do not update.
    pub async fn apply_machineconfig(&self, name: &str) -> Result<()> {
        let ar = openshift::machine_config();
        let obj = json!({
            "apiVersion": ar.api_version, "kind": ar.kind,
            "metadata": { "name": name },
            "spec": {
                "osImageURL": format!("quay.io/openshift/os-a@sha256:{}", "0".repeat(64)),
                "config": { "ignition": { "version": "3.4.0" } },
            },
        });
        self.apply(&ar, name, &obj).await
    }

    async fn apply(&self, ar: &ApiResource, name: &str, obj: &Value) -> Result<()> {
        let api = Api::<DynamicObject>::all_with(self.admin.clone(), ar);
        let params = PatchParams::apply(MANAGER).force();
        let patch = Patch::Apply(obj);
        retry(&format!("apply {} {name}", ar.kind), || {
            api.patch(name, &params, &patch)
        })
        .await?;
        Ok(())
    }

    /// A Node as the installer and the MCO leave it: done on `config`, with
    /// `node-role.kubernetes.io/<role>` labels. Returns its uid.
    pub async fn create_node(
        &self,
        name: &str,
        roles: &[&str],
        labels: &[(&str, &str)],
        config: &str,
    ) -> Result<String> {
        let mut l: BTreeMap<String, String> = roles
            .iter()
            .map(|r| (format!("node-role.kubernetes.io/{r}"), String::new()))
            .collect();
        l.extend(
            labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        let a: BTreeMap<String, String> = [
            ("currentConfig", config.to_owned()),
            ("desiredConfig", config.to_owned()),
            ("state", "Done".to_owned()),
            ("desiredDrain", format!("uncordon-{config}")),
            ("lastAppliedDrain", format!("uncordon-{config}")),
        ]
        .into_iter()
        .map(|(k, v)| (format!("{ANNOTATION_PREFIX}{k}"), v))
        .collect();
        // Nodes keep status on create (kubelet registers them that way).
        let node: Node = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": { "name": name, "labels": l, "annotations": a },
            "spec": {},
            "status": { "phase": "Running" },
        }))?;
        let api: Api<Node> = Api::all(self.admin.clone());
        let pp = PostParams::default();
        let created = retry(&format!("create node {name}"), || api.create(&pp, &node)).await?;
        created
            .metadata
            .uid
            .ok_or_else(|| anyhow!("node {name} has no uid"))
    }

    /// `count` worker Nodes `worker-00000`… done on `config`, created
    /// [`IN_FLIGHT`] at a time, as a plain client would.
    pub async fn create_workers(&self, count: usize, config: &str) -> Result<()> {
        let api: Api<Node> = Api::all(self.admin.clone());
        let slots = Arc::new(Semaphore::new(IN_FLIGHT));
        let mut creates = JoinSet::new();
        for i in 0..count {
            let (api, slots) = (api.clone(), slots.clone());
            let node: Node = serde_json::from_value(json!({
                "metadata": {
                    "name": format!("worker-{i:05}"),
                    "labels": {"node-role.kubernetes.io/worker": ""},
                    "annotations": {
                        format!("{ANNOTATION_PREFIX}currentConfig"): config,
                        format!("{ANNOTATION_PREFIX}desiredConfig"): config,
                        format!("{ANNOTATION_PREFIX}state"): "Done",
                    },
                },
                "status": {"phase": "Running"},
            }))?;
            creates.spawn(async move {
                let _slot = slots.acquire_owned().await?;
                api.create(&PostParams::default(), &node).await?;
                anyhow::Ok(())
            });
        }
        while let Some(created) = creates.join_next().await {
            created.context("a create task panicked")??;
        }
        Ok(())
    }

    /// What the MCD or the drain controller would do to a node: set MCO
    /// annotations and, if given, `spec.unschedulable`.
    pub async fn patch_node(
        &self,
        name: &str,
        annotations: &[(&str, &str)],
        unschedulable: Option<bool>,
    ) -> Result<Value> {
        let a: serde_json::Map<String, Value> = annotations
            .iter()
            .map(|(k, v)| (format!("{ANNOTATION_PREFIX}{k}"), Value::from(*v)))
            .collect();
        let mut patch = json!({ "metadata": { "annotations": a } });
        if let Some(u) = unschedulable {
            // Like `kubectl uncordon`: false is written as the field's absence.
            patch["spec"] =
                json!({ "unschedulable": if u { Value::Bool(true) } else { Value::Null } });
        }
        let api: Api<Node> = Api::all(self.admin.clone());
        let (pp, patch) = (PatchParams::default(), Patch::Merge(&patch));
        let node = retry(&format!("patch node {name}"), || {
            api.patch(name, &pp, &patch)
        })
        .await?;
        Ok(serde_json::to_value(node)?)
    }

    pub async fn set_labels(&self, name: &str, labels: Value) -> Result<()> {
        let api: Api<Node> = Api::all(self.admin.clone());
        let patch = json!({ "metadata": { "labels": labels } });
        let (pp, patch) = (PatchParams::default(), Patch::Merge(&patch));
        retry(&format!("label node {name}"), || {
            api.patch(name, &pp, &patch)
        })
        .await?;
        Ok(())
    }

    pub async fn delete_node(&self, name: &str) -> Result<()> {
        let api: Api<Node> = Api::all(self.admin.clone());
        let dp = DeleteParams::default();
        retry(&format!("delete node {name}"), || api.delete(name, &dp)).await?;
        Ok(())
    }

    /// Writes FeatureGate `cluster` as the cluster-config operator publishes
    /// it: one entry, for version 4.22.0, with the MCN gate on or off.
    pub async fn set_image_mode(&self, on: bool) -> Result<()> {
        let api: Api<DynamicObject> = Api::all_with(self.admin.clone(), &openshift::feature_gate());
        let apply = PatchParams::apply("test-cluster-config-operator").force();
        let object = json!({
            "apiVersion": "config.openshift.io/v1", "kind": "FeatureGate",
            "metadata": {"name": "cluster"},
            "spec": {"featureSet": if on { "TechPreviewNoUpgrade" } else { "" }},
        });
        api.patch("cluster", &apply, &Patch::Apply(&object))
            .await
            .context("applying FeatureGate cluster")?;
        let named = |names: &[&str]| names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>();
        let (enabled, disabled) = if on {
            (named(&[IMAGE_MODE, "ManagedBootImagesCPMS"]), named(&[]))
        } else {
            (named(&["ManagedBootImagesCPMS"]), named(&[IMAGE_MODE]))
        };
        let status = json!({
            "apiVersion": "config.openshift.io/v1", "kind": "FeatureGate",
            "metadata": {"name": "cluster"},
            "status": {"featureGates": [{"version": "4.22.0", "enabled": enabled, "disabled": disabled}]},
        });
        api.patch_status("cluster", &apply, &Patch::Apply(&status))
            .await
            .context("writing FeatureGate cluster's status")?;
        Ok(())
    }

    pub fn mcns(&self) -> Api<DynamicObject> {
        Api::all_with(self.admin.clone(), &machine_config_node())
    }

    pub async fn mcn_names(&self) -> Result<Vec<String>> {
        let (api, lp) = (self.mcns(), ListParams::default());
        let list = retry("list MCNs", || api.list(&lp)).await?;
        let mut names: Vec<String> = list.items.iter().map(ResourceExt::name_any).collect();
        names.sort();
        Ok(names)
    }

    /// Polls the MCN of `expected.node` until it matches; returns the time it
    /// took and the stored object.
    pub async fn wait_mcn(
        &mut self,
        expected: &Expected,
        node_uid: &str,
        limit: Duration,
    ) -> Result<(Duration, Value)> {
        let t = Instant::now();
        let api = self.mcns();
        loop {
            let last = match api.get_opt(&expected.node).await {
                Ok(Some(obj)) => {
                    let v = serde_json::to_value(&obj)?;
                    let diff = expected.diff(&v, node_uid);
                    if diff.is_empty() {
                        return Ok((t.elapsed(), v));
                    }
                    format!("differences:\n  {}", diff.join("\n  "))
                }
                Ok(None) => "it does not exist".to_owned(),
                Err(e) => format!("reading it failed: {e}"),
            };
            if t.elapsed() > limit {
                bail!(
                    "MachineConfigNode {} does not match golden case {} after {limit:?}; {last}",
                    expected.node,
                    expected.case
                );
            }
            self.check_controllers()?;
            sleep(POLL).await;
        }
    }

    pub async fn wait_mcn_gone(&mut self, name: &str, limit: Duration) -> Result<Duration> {
        let t = Instant::now();
        let api = self.mcns();
        loop {
            match api.get_opt(name).await {
                Ok(None) => return Ok(t.elapsed()),
                Ok(Some(_)) | Err(_) if t.elapsed() > limit => {
                    bail!("MachineConfigNode {name} still exists after {limit:?}")
                }
                _ => {}
            }
            self.check_controllers()?;
            sleep(POLL).await;
        }
    }

    /// Fails as soon as a controller that should be running has exited.
    pub fn check_controllers(&mut self) -> Result<()> {
        for c in &mut self.controllers {
            if !c.killed() {
                c.check_running()?;
            }
        }
        Ok(())
    }

    pub async fn lease_holder(&self) -> Result<Option<String>> {
        let api: Api<Lease> = Api::namespaced(self.admin.clone(), NAMESPACE);
        let lease = retry("get lease", || api.get_opt(LEASE)).await?;
        Ok(lease.and_then(|l| l.spec).and_then(|s| s.holder_identity))
    }
}

/// What `mco-host status ARGS` printed, or why it failed (`how`: where it ran).
fn status_output(out: std::process::Output, args: &[&str], how: &str) -> Result<String> {
    if !out.status.success() {
        bail!(
            "mco-host status {args:?}{how} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8(out.stdout).context("mco-host status printed non-UTF-8")
}

impl Drop for Fixture {
    fn drop(&mut self) {
        // Stop the controllers before their log dir goes.
        self.controllers.clear();
        if let Some(dir) = self.dir.take() {
            if mco_e2e::keep_dirs() {
                eprintln!("mcn_controller: keeping {}", dir.keep().display());
            } else if let Err(e) = dir.close() {
                eprintln!(
                    "mcn_controller: cannot remove {}: {e}",
                    self.dir_path.display()
                );
            }
        }
    }
}

/// Server-side applies every document of a manifest as admin; namespaced
/// objects without a namespace go to `mco-system`, as the kustomization does.
async fn apply_manifest(admin: &Client, path: &Path) -> Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
        .with_context(|| format!("cannot parse {}", path.display()))?;
    let params = PatchParams::apply(MANAGER).force().validation_strict();
    let mut applied = 0;
    for doc in docs.into_iter().filter(|d| !d.is_null()) {
        let api_version = doc["apiVersion"].as_str().unwrap_or_default();
        let kind = doc["kind"].as_str().unwrap_or_default();
        let name = doc["metadata"]["name"]
            .as_str()
            .ok_or_else(|| anyhow!("a {kind} without a name"))?;
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let (ar, caps) = pinned_kind(admin, &gvk)
            .await
            .with_context(|| format!("{api_version} {kind} is not served"))?;
        let api: Api<DynamicObject> = match caps.scope {
            Scope::Cluster => Api::all_with(admin.clone(), &ar),
            Scope::Namespaced => {
                let ns = doc["metadata"]["namespace"].as_str().unwrap_or(NAMESPACE);
                Api::namespaced_with(admin.clone(), ns, &ar)
            }
        };
        api.patch(name, &params, &Patch::Apply(&doc))
            .await
            .with_context(|| format!("cannot apply {kind} {name}"))?;
        applied += 1;
    }
    if applied == 0 {
        bail!("{} holds no objects", path.display());
    }
    Ok(())
}

/// Retries a request for up to 20 s while the failure is the connection
/// (an apiserver restarting) or a 5xx/429; API errors such as 404/409/422 fail
/// at once.
pub async fn retry<T, F, Fut>(what: &str, mut f: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = kube::Result<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match f().await {
            Ok(v) => return Ok(v),
            Err(e) => {
                let transient = match &e {
                    kube::Error::Api(s) => s.code >= 500 || s.code == 429,
                    _ => true,
                };
                if !transient || Instant::now() >= deadline {
                    return Err(e).with_context(|| what.to_owned());
                }
                sleep(POLL).await;
            }
        }
    }
}

pub fn api_code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}
