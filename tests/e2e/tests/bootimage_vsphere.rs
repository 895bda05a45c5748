//! vSphere boot images end to end: `mco-host run --boot-images` as its
//! ServiceAccount (RBAC from `deploy/`) against a real kube-apiserver and
//! etcd, vcsim with two compute clusters (two failure domains) and an HTTP
//! mirror of the OVAs. What vCenter holds is read back through the
//! harness's own SOAP and REST calls, not through the controller's client.
//! Where vcsim falls short of a real vCenter, and how this test bridges it
//! (the installer's tag, a host killed mid-swap):
//! docs/dev/platform-clients.md.

use crate::support;

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::ApiResource;
use mco_e2e::ova::{self, OvaOptions};
use mco_e2e::{Mirror, Vcsim, openshift};
use mco_vsphere::{Endpoint, ImportPlan, Ova, Session, Timeouts, Trust, temp_name};
use serde_json::{Value, json};
use tokio::time::sleep;

use support::bootimages::{CONVERGE, Cluster, MAPI, Platform};

const USER: &str = "mco-e2e-vcenter";
const PASSWORD: &str = "s3cret pass";
/// The workspace folder of both failure domains.
const FOLDER: &str = "/DC0/vm/c1";
const R1: &str = "9.6.20250101-0";
const R2: &str = "9.6.20250601-0";
const R3: &str = "9.8.20260428-0";
const R4: &str = "9.8.20261101-0";
/// The templates the cluster manages: `<infrastructureName>-rhcos-<fd>`.
const TEMPLATE_A: &str = "c1-rhcos-fd-a";
const TEMPLATE_B: &str = "c1-rhcos-fd-b";
/// A VM outside the workspace folder, which a customer's MachineSet names:
/// the guest falls back to the cluster's template, as upstream does.
const CUSTOMER: &str = "DC0_C0_RP0_VM0";
const POLL: Duration = Duration::from_millis(200);
const QUIET: Duration = Duration::from_secs(3);
/// How long vcsim holds every `MarkAsTemplate` in the leader-loss test: an
/// import then stands still with its `mco-tmp-` VM in vCenter, as a long
/// OVA transfer would, for longer than the lease (4 s) lasts.
const HOLD_MS: u32 = 8_000;

/// One control plane, vcsim and replicas at a time: on two cores, two
/// scenarios at once starve each other past the lease.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

struct World {
    vcsim: Vcsim,
    mirror: Mirror,
    ca_file: tempfile::NamedTempFile,
    ova_cache: tempfile::TempDir,
}

impl World {
    fn controller_args(&self) -> Vec<String> {
        [
            "--resync",
            "1s",
            "--vcenter-ca-file",
            &self.ca_file.path().display().to_string(),
            "--ova-cache-dir",
            &self.ova_cache.path().display().to_string(),
        ]
        .map(str::to_owned)
        .to_vec()
    }

    /// Builds the OVA of `release` into the mirror; its (URL, sha256).
    fn publish(&self, release: &str) -> Result<(String, String)> {
        let name = format!("rhcos-{release}-vmware.x86_64.ova");
        let options = OvaOptions {
            release: release.to_owned(),
            ..OvaOptions::default()
        };
        let built = ova::build(&self.mirror.root(), &name, &options)?;
        Ok((self.mirror.url(&name), built.sha256))
    }

    /// The VM at `FOLDER/<name>`, if any: its managed object ID.
    async fn vm(&self, name: &str) -> Result<Option<String>> {
        let found = self.vcsim.find_by_path(&format!("{FOLDER}/{name}")).await?;
        Ok(found.map(|(_, id)| id))
    }

    /// The release a template holds (its vApp product's version; see the
    /// module docs for why not the summary).
    async fn release(&self, vm: &str) -> Result<Option<String>> {
        let vapp = self.vcsim.vm_property(vm, "config.vAppConfig").await?;
        Ok(vapp.and_then(|x| {
            let (_, rest) = x.split_once("<version>")?;
            let (version, _) = rest.split_once("</version>")?;
            Some(version.to_owned())
        }))
    }

    /// Whether `vm` is a template holding `release`.
    async fn holds(&self, vm: &str, release: &str) -> Result<bool> {
        Ok(self.release(vm).await?.as_deref() == Some(release)
            && self
                .vcsim
                .vm_property(vm, "config.template")
                .await?
                .as_deref()
                == Some("true"))
    }

    /// Waits until `name` in the folder is a template holding `release`;
    /// its managed object ID. A swap in progress may delete the VM found
    /// under `name` before its properties are read: not there yet.
    async fn wait_template(&self, name: &str, release: &str) -> Result<String> {
        let started = Instant::now();
        loop {
            if let Some(vm) = self.vm(name).await? {
                match self.holds(&vm, release).await {
                    Ok(true) => return Ok(vm),
                    Ok(false) => {}
                    Err(err) if format!("{err:#}").contains("ManagedObjectNotFound") => {}
                    Err(err) => return Err(err),
                }
            }
            if started.elapsed() > CONVERGE {
                bail!(
                    "{FOLDER}/{name} is not a template of {release} after {CONVERGE:?}\n{}",
                    self.vcsim.log_tail()
                );
            }
            sleep(POLL).await;
        }
    }

    /// No VM of an interrupted or stale swap is left for `name`.
    async fn no_leftovers(&self, name: &str) -> Result<()> {
        for prefix in ["mco-tmp", "mco-old"] {
            let leftover = temp_name(prefix, name);
            ensure!(
                self.vm(&leftover).await?.is_none(),
                "{leftover} is left in {FOLDER}"
            );
        }
        Ok(())
    }
}

fn failure_domain(name: &str, cluster: &str, server: &str) -> Value {
    json!({"name": name, "region": "region-a", "zone": name, "server": server,
           "topology": {"datacenter": "DC0", "computeCluster": format!("/DC0/host/{cluster}"),
                        "networks": ["VM Network"], "datastore": "/DC0/datastore/LocalDS_0",
                        "resourcePool": format!("/DC0/host/{cluster}/Resources"),
                        "folder": FOLDER}})
}

fn machineset(name: &str, template: &str, cluster: &str, server: &str) -> Value {
    json!({
        "apiVersion": "machine.openshift.io/v1beta1", "kind": "MachineSet",
        "metadata": {"name": name, "namespace": MAPI, "annotations":
            {"capacity.cluster-autoscaler.kubernetes.io/labels": "kubernetes.io/arch=amd64"}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"machineset": name}},
                 "template": {"metadata": {"labels": {}}, "spec": {"providerSpec": {"value": {
                     "apiVersion": "machine.openshift.io/v1beta1",
                     "kind": "VSphereMachineProviderSpec", "template": template,
                     "numCPUs": 4, "memoryMiB": 16384,
                     "network": {"devices": [{"networkName": "VM Network"}]},
                     "userDataSecret": {"name": "worker-user-data"},
                     "workspace": {"server": server, "datacenter": "DC0", "folder": FOLDER,
                                   "datastore": "/DC0/datastore/LocalDS_0",
                                   "resourcePool": format!("/DC0/host/{cluster}/Resources")}}}}}}
    })
}

fn stream(release: &str, url: &str, sha256: &str) -> String {
    json!({"stream": "rhcos-test", "metadata": {"last-modified": "2026-04-28T22:11:54Z"},
           "architectures": {"x86_64": {"artifacts": {"vmware": {"release": release,
               "formats": {"ova": {"disk": {"location": url, "sha256": sha256}}}}}}}})
    .to_string()
}

async fn template_of(c: &Cluster, name: &str) -> Result<Value> {
    c.image(name).await
}

async fn wait_template_named(c: &Cluster, name: &str, template: &str) -> Result<()> {
    c.wait_image(name, &json!(template)).await.map(drop)
}

/// Waits until `BootImageUpdateDegraded` says `fragments`.
async fn wait_degraded(c: &Cluster, fragments: &[&str]) -> Result<String> {
    let started = Instant::now();
    loop {
        let conditions = c.conditions().await?;
        let degraded = conditions.get("BootImageUpdateDegraded");
        let message = degraded
            .and_then(|d| d["message"].as_str())
            .unwrap_or_default()
            .to_owned();
        if degraded.is_some_and(|d| d["status"] == "True")
            && fragments.iter().all(|f| message.contains(f))
        {
            return Ok(message);
        }
        if started.elapsed() > CONVERGE {
            bail!("BootImageUpdateDegraded does not say {fragments:?}: {conditions:#?}");
        }
        sleep(POLL).await;
    }
}

/// A port below 32768 nothing listens on (the ephemeral range starts above).
fn low_free_port() -> Result<u16> {
    let start = 20_000 + (std::process::id() % 10_000) as u16;
    (start..32_768)
        .chain(20_000..start)
        .find(|port| std::net::TcpListener::bind(("127.0.0.1", *port)).is_ok())
        .context("no free port in 20000..32767")
}

/// Whether the template's disk is eager-zeroed thick, as vCenter shows it.
async fn eager_zeroed(w: &World, vm: &str) -> Result<bool> {
    let devices = w.vcsim.vm_property(vm, "config.hardware.device").await?;
    let devices = devices.unwrap_or_default();
    Ok(devices.contains("<thinProvisioned>false</thinProvisioned>")
        && devices.contains("<eagerlyScrub>true</eagerlyScrub>"))
}

async fn set_credentials(c: &Cluster, server: &str, password: &str) -> Result<()> {
    let secret = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "vsphere-creds", "namespace": "kube-system"},
        "stringData": {format!("{server}.username"): USER, format!("{server}.password"): password}});
    c.apply(
        &ApiResource::erase::<Secret>(&()),
        Some("kube-system"),
        secret,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vsphere_templates_are_imported_swapped_and_recovered_by_the_rules() -> Result<()> {
    let _one_at_a_time = SERIAL.lock().await;
    let mut c = Cluster::start(Platform::Vsphere, &[]).await?;
    let result = scenario(&mut c).await;
    c.fx.finish(result)
}

async fn scenario(c: &mut Cluster) -> Result<()> {
    // ---- the vCenter, the mirror, the cluster's vSphere objects --------------
    // The MachineSets name the vCenter as real ones do, by host; its port
    // comes from the Infrastructure's `vcenters`, whose CRD allows up to
    // 32767: vcsim listens on one of those, not on an ephemeral port.
    let listen = format!("127.0.0.1:{}", low_free_port()?);
    let vcsim = Vcsim::start_with(USER, PASSWORD, &["-cluster", "2", "-l", &listen])?;
    let (server, port) = vcsim
        .server
        .split_once(':')
        .context("vcsim listens on host:port")?;
    let (server, port) = (server.to_owned(), port.parse::<u16>()?);
    vcsim.create_folder("/DC0/vm", "c1").await?;
    let infra_tag = vcsim.create_tag("c1-infrastructure", "c1").await?;
    let ca_file = tempfile::NamedTempFile::new()?;
    std::fs::write(ca_file.path(), vcsim.ca_pem())?;
    let w = World {
        vcsim,
        mirror: Mirror::start()?,
        ca_file,
        ova_cache: tempfile::tempdir()?,
    };
    c.apply(
        &openshift::infrastructure(),
        None,
        json!({"apiVersion": "config.openshift.io/v1", "kind": "Infrastructure",
               "metadata": {"name": "cluster"},
               "spec": {"platformSpec": {"type": "VSphere", "vsphere": {
                   "vcenters": [{"server": server, "port": port, "datacenters": ["DC0"]}],
                   "failureDomains": [failure_domain("fd-a", "DC0_C0", &server),
                                      failure_domain("fd-b", "DC0_C1", &server)]}}}}),
    )
    .await?;
    set_credentials(c, &server, PASSWORD).await?;
    c.apply(
        &ApiResource::erase::<ConfigMap>(&()),
        Some("kube-system"),
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "cluster-config-v1", "namespace": "kube-system"},
               "data": {"install-config": "platform:\n  vsphere:\n    diskType: eagerZeroedThick\n"}}),
    )
    .await?;
    let (url, sha) = w.publish(R1)?;
    c.set_stream_text(&stream(R1, &url, &sha)).await?;
    for ms in [
        machineset("fd-a", "c1-rhcos-generated", "DC0_C0", &server),
        machineset("fd-b", "", "DC0_C1", &server),
        machineset("customer", CUSTOMER, "DC0_C0", &server),
        machineset("elsewhere", "", "DC0_C9", &server),
    ] {
        c.apply(&openshift::machine_set(), Some(MAPI), ms).await?;
    }
    let customer_vm = w
        .vcsim
        .find_by_path(&format!("/DC0/vm/{CUSTOMER}"))
        .await?
        .context("vcsim has no customer VM")?
        .1;
    let customer_before = w.vcsim.vm_property(&customer_vm, "config").await?;

    // ---- 1. a new cluster: both failure domains get their template ----------
    let args = w.controller_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut controller = c.start_controller("boot-a", &args).await?;
    let a1 = w.wait_template(TEMPLATE_A, R1).await?;
    let b1 = w.wait_template(TEMPLATE_B, R1).await?;
    wait_template_named(c, "fd-a", TEMPLATE_A).await?;
    wait_template_named(c, "fd-b", TEMPLATE_B).await?;
    for vm in [&a1, &b1] {
        ensure!(
            w.vcsim.attached_tags(vm).await? == [infra_tag.clone()],
            "{vm} is not tagged {infra_tag}"
        );
    }
    // Made anew with install-config's disk type.
    ensure!(
        eager_zeroed(&w, &a1).await?,
        "{TEMPLATE_A} is not eagerZeroedThick"
    );
    c.wait_conditions(
        "Reconciled 3 of 4 MAPI MachineSets (1 skipped)",
        ("False", "0 Degraded MAPI MachineSets"),
    )
    .await?;
    // fd-a and customer both resolve to TEMPLATE_A: whichever the writer
    // takes first imports it, the other finds it current.
    // (Events about one object and reason within kube's cache time are one
    // Event with a series, its first note kept: R1's is the one to read.)
    let events = [c.events("fd-a").await?, c.events("customer").await?].concat();
    let imported = format!("template {TEMPLATE_A} imported from the release {R1} OVA");
    let current = format!(
        "template {TEMPLATE_A} already held the release {R1} (imported earlier in the pass)"
    );
    ensure!(
        events.iter().filter(|e| e.contains(&imported)).count() == 1
            && events.iter().filter(|e| e.contains(&current)).count() == 1,
        "{events:#?}"
    );
    let elsewhere = c.events("elsewhere").await?.join("\n");
    ensure!(
        elsewhere.contains("does not match any vCenter/failure domain"),
        "{elsewhere}"
    );
    ensure!(template_of(c, "customer").await? == json!(TEMPLATE_A));
    ensure!(template_of(c, "elsewhere").await? == json!(""));
    w.no_leftovers(TEMPLATE_A).await?;
    let status = c.fx.status(&[]).await?;
    ensure!(
        status.contains(&format!("template {TEMPLATE_A}")) && status.contains(&format!("OVA {R1}")),
        "the status view shows no vSphere template:\n{status}"
    );

    // ---- 2. a new stream: both templates swapped, the MachineSets stay ------
    let versions = c.resource_versions().await?;
    let (url, sha) = w.publish(R2)?;
    c.set_stream_text(&stream(R2, &url, &sha)).await?;
    let a2 = w.wait_template(TEMPLATE_A, R2).await?;
    let b2 = w.wait_template(TEMPLATE_B, R2).await?;
    ensure!(a2 != a1 && b2 != b1, "the templates were not replaced");
    for (vm, old) in [(&a2, &a1), (&b2, &b1)] {
        ensure!(
            w.vcsim.attached_tags(vm).await? == [infra_tag.clone()],
            "{vm} is not tagged"
        );
        ensure!(
            w.vcsim.vm_property(old, "name").await.is_err(),
            "the old template {old} is still there"
        );
    }
    // The new template keeps the old one's disk type.
    ensure!(
        eager_zeroed(&w, &a2).await?,
        "the new {TEMPLATE_A} lost its disk type"
    );
    w.no_leftovers(TEMPLATE_A).await?;
    w.no_leftovers(TEMPLATE_B).await?;
    c.wait_conditions(
        "Reconciled 3 of 4 MAPI MachineSets (1 skipped)",
        ("False", "0 Degraded MAPI MachineSets"),
    )
    .await?;
    ensure!(
        c.resource_versions().await? == versions,
        "a MachineSet was patched although its template name stayed"
    );

    // ---- 3. a resync changes nothing, in vCenter or in the cluster ----------
    let metrics = c.metrics(controller).await?;
    let (writes, imports, reads) = (
        metrics.writes(),
        metrics.sum("mco_bootimage_template_imports_total", &[]),
        metrics.sum("mco_bootimage_vcenter_reads_total", &[]),
    );
    // Per stream: fd-a's or customer's import, fd-b's, and the one that
    // found TEMPLATE_A current.
    let imported = metrics.sum(
        "mco_bootimage_template_imports_total",
        &[("result", "imported")],
    );
    let current = metrics.sum(
        "mco_bootimage_template_imports_total",
        &[("result", "current")],
    );
    ensure!(
        (imported, current, imports) == (4.0, 2.0, 6.0),
        "template imports so far: {imported} imported, {current} current, {imports} in all; expected 4, 2, 6"
    );
    sleep(QUIET).await;
    let metrics = c.metrics(controller).await?;
    ensure!(metrics.writes() == writes, "a resync wrote");
    ensure!(
        metrics.sum("mco_bootimage_template_imports_total", &[]) == imports,
        "a resync imported"
    );
    ensure!(
        metrics.sum("mco_bootimage_vcenter_reads_total", &[]) > reads,
        "no resync read vCenter"
    );
    ensure!(w.vm(TEMPLATE_A).await? == Some(a2.clone()) && w.vm(TEMPLATE_B).await? == Some(b2));
    ensure!(
        w.vcsim.vm_property(&customer_vm, "config").await? == customer_before,
        "the customer's VM changed"
    );

    // ---- 4. killed between the two renames of a swap to R3 -----------------
    c.fx.controllers[controller].kill_hard()?;
    let (url, sha) = w.publish(R3)?;
    // What the kill leaves: the old template renamed away, the new one
    // complete under its temporary name, no template of the name.
    w.vcsim
        .rename_vm(&a2, &temp_name("mco-old", TEMPLATE_A))
        .await?;
    let session = Session::login(
        &Endpoint {
            server: w.vcsim.server.clone(),
            username: USER.into(),
            password: PASSWORD.into(),
        },
        &Trust::Pem(w.vcsim.ca_pem().as_bytes().to_vec()),
        Timeouts::default(),
    )
    .await?;
    let ova_path = w
        .mirror
        .root()
        .join(format!("rhcos-{R3}-vmware.x86_64.ova"));
    session
        .import_template(
            &ImportPlan {
                datacenter: "DC0".into(),
                folder: FOLDER.into(),
                compute_cluster: "/DC0/host/DC0_C0".into(),
                resource_pool: "/DC0/host/DC0_C0/Resources".into(),
                datastore: "/DC0/datastore/LocalDS_0".into(),
                network: "VM Network".into(),
                template: temp_name("mco-tmp", TEMPLATE_A),
                disk_type: None,
                tags: vec![],
            },
            &Ova::open(&ova_path)?,
        )
        .await?;
    session.logout().await?;
    ensure!(
        w.vm(TEMPLATE_A).await?.is_none(),
        "the crash state has a template of the name"
    );
    c.set_stream_text(&stream(R3, &url, &sha)).await?;
    controller = c.start_controller("boot-b", &args).await?;
    let a3 = w.wait_template(TEMPLATE_A, R3).await?;
    w.wait_template(TEMPLATE_B, R3).await?;
    w.no_leftovers(TEMPLATE_A).await?;
    ensure!(a3 != a2, "{TEMPLATE_A} was not replaced after the recovery");
    c.wait_conditions(
        "Reconciled 3 of 4 MAPI MachineSets (1 skipped)",
        ("False", "0 Degraded MAPI MachineSets"),
    )
    .await?;

    // ---- 5. wrong credentials: said, and nothing changes --------------------
    set_credentials(c, &server, "wrong").await?;
    let (url, sha) = w.publish(R4)?;
    c.set_stream_text(&stream(R4, &url, &sha)).await?;
    let message = wait_degraded(
        c,
        &[
            "failed to reconcile machineset fd-a, err: vCenter",
            &w.vcsim.server,
            "logging in as mco-e2e-vcenter",
            "InvalidLogin",
        ],
    )
    .await?;
    ensure!(message.contains("machineset fd-b"), "{message}");
    ensure!(
        w.vm(TEMPLATE_A).await? == Some(a3.clone()),
        "vCenter changed"
    );
    ensure!(template_of(c, "fd-a").await? == json!(TEMPLATE_A));

    // ---- 6. an OVA whose sha256 does not match: said, nothing imported ------
    set_credentials(c, &server, PASSWORD).await?;
    let wrong = "0".repeat(64);
    c.set_stream_text(&stream(R4, &url, &wrong)).await?;
    wait_degraded(
        c,
        &[
            "failed to reconcile machineset fd-a, err: vCenter",
            "downloading the OVA",
            "does not match the expected",
            &wrong,
        ],
    )
    .await?;
    ensure!(w.vm(TEMPLATE_A).await? == Some(a3), "vCenter changed");
    let cached: Vec<_> = std::fs::read_dir(w.ova_cache.path())?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&wrong))
        .collect();
    ensure!(cached.is_empty(), "a mismatching OVA was kept: {cached:?}");

    // And with the stream put right, the pass recovers by itself.
    c.set_stream_text(&stream(R4, &url, &sha)).await?;
    w.wait_template(TEMPLATE_A, R4).await?;
    c.wait_conditions(
        "Reconciled 3 of 4 MAPI MachineSets (1 skipped)",
        ("False", "0 Degraded MAPI MachineSets"),
    )
    .await?;
    c.fx.check_controllers()?;
    let _ = controller;
    Ok(())
}

/// The leader is frozen (SIGSTOP: it renews nothing and sends nothing,
/// as a paused VM or a node cut off from the apiserver would) while its
/// import stands in vCenter; the standby takes the lease once it expires
/// and imports, its stale-VM cleanup removing the leader's `mco-tmp-` VM.
/// The old leader is woken while the new one's import stands in vCenter
/// in turn: its own clock says its term is over, so it drops its import
/// before taking another step, says so, and writes nothing more. One
/// template results, imported once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_frozen_mid_import_stops_and_its_successor_imports_once() -> Result<()> {
    let _one_at_a_time = SERIAL.lock().await;
    let mut c = Cluster::start(Platform::Vsphere, &[]).await?;
    let result = leader_loss(&mut c).await;
    c.fx.finish(result)
}

async fn leader_loss(c: &mut Cluster) -> Result<()> {
    let listen = format!("127.0.0.1:{}", low_free_port()?);
    let hold = format!("MarkAsTemplate:{HOLD_MS}");
    let vcsim = Vcsim::start_with(USER, PASSWORD, &["-l", &listen, "-method-delay", &hold])?;
    let (server, port) = vcsim
        .server
        .split_once(':')
        .context("vcsim listens on host:port")?;
    let (server, port) = (server.to_owned(), port.parse::<u16>()?);
    vcsim.create_folder("/DC0/vm", "c1").await?;
    vcsim.create_tag("c1-infrastructure", "c1").await?;
    let ca_file = tempfile::NamedTempFile::new()?;
    std::fs::write(ca_file.path(), vcsim.ca_pem())?;
    let w = World {
        vcsim,
        mirror: Mirror::start()?,
        ca_file,
        ova_cache: tempfile::tempdir()?,
    };
    c.apply(
        &openshift::infrastructure(),
        None,
        json!({"apiVersion": "config.openshift.io/v1", "kind": "Infrastructure",
               "metadata": {"name": "cluster"},
               "spec": {"platformSpec": {"type": "VSphere", "vsphere": {
                   "vcenters": [{"server": server, "port": port, "datacenters": ["DC0"]}],
                   "failureDomains": [failure_domain("fd-a", "DC0_C0", &server)]}}}}),
    )
    .await?;
    set_credentials(c, &server, PASSWORD).await?;
    c.apply(
        &ApiResource::erase::<ConfigMap>(&()),
        Some("kube-system"),
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "cluster-config-v1", "namespace": "kube-system"},
               "data": {"install-config": "platform:\n  vsphere:\n    diskType: thin\n"}}),
    )
    .await?;
    c.apply(
        &openshift::machine_set(),
        Some(MAPI),
        machineset("fd-a", "", "DC0_C0", &server),
    )
    .await?;

    // ---- the leader and a standby, then a release to import ------------------
    let args = w.controller_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let a = c.start_controller("boot-a", &args).await?;
    let b = c.start_replica("boot-b", &args).await?;
    ensure!(!c.metrics(b).await?.leader()?, "both replicas lead");
    let (url, sha) = w.publish(R1)?;
    c.set_stream_text(&stream(R1, &url, &sha)).await?;
    let tmp = temp_name("mco-tmp", TEMPLATE_A);
    let a_vm = wait_vm(&w, &tmp, None).await?;
    // Its few KiB are uploaded in milliseconds: then it waits on the held
    // MarkAsTemplate, with its NFC lease complete.
    sleep(Duration::from_secs(1)).await;
    let a_writes = c.metrics(a).await?.writes();

    // ---- the leader freezes mid-import; the standby takes over --------------
    c.fx.controllers[a].pause()?;
    let started = Instant::now();
    while !c.metrics(b).await?.leader()? {
        ensure!(
            started.elapsed() < CONVERGE,
            "the standby never took the lease"
        );
        sleep(POLL).await;
    }
    // Its import removed the frozen leader's VM as stale and made its own.
    let b_vm = wait_vm(&w, &tmp, Some(&a_vm)).await?;
    ensure!(
        w.vcsim.vm_property(&a_vm, "name").await.is_err(),
        "the frozen leader's {tmp} ({a_vm}) is still there beside {b_vm}"
    );

    // ---- the old leader wakes while the new one's import stands -------------
    c.fx.controllers[a].resume()?;
    w.wait_template(TEMPLATE_A, R1).await?;
    wait_template_named(c, "fd-a", TEMPLATE_A).await?;
    w.no_leftovers(TEMPLATE_A).await?;
    sleep(QUIET).await;
    let (am, bm) = (c.metrics(a).await?, c.metrics(b).await?);
    let log = c.fx.controllers[a].log();
    ensure!(
        log.contains("stepped down") && log.contains("the boot image pass stopped where it was"),
        "the old leader does not say it stepped down and stopped:\n{}",
        c.fx.controllers[a].tails()
    );
    ensure!(!am.leader()? && bm.leader()?, "the lease moved back");
    ensure!(
        am.sum("mco_bootimage_passes_stopped_total", &[]) == 1.0
            && am.sum("mco_lease_step_downs_total", &[]) >= 1.0,
        "the old leader's stop is not counted"
    );
    ensure!(
        am.sum("mco_bootimage_template_imports_total", &[]) == 0.0,
        "the old leader finished an import after it lost the lease"
    );
    ensure!(
        am.writes() == a_writes,
        "the old leader wrote after it lost the lease: {}",
        am.writes_summary()
    );
    let imported = (
        bm.sum(
            "mco_bootimage_template_imports_total",
            &[("result", "imported")],
        ),
        bm.sum("mco_bootimage_template_imports_total", &[]),
    );
    ensure!(
        imported == (1.0, 1.0),
        "the new leader's imports (imported, all): {imported:?}; expected exactly one"
    );
    c.wait_conditions(
        "Reconciled 1 of 1 MAPI MachineSets",
        ("False", "0 Degraded MAPI MachineSets"),
    )
    .await?;
    c.fx.check_controllers()?;
    Ok(())
}

/// Waits until the folder holds a VM named `name` other than `not`; its
/// managed object ID.
async fn wait_vm(w: &World, name: &str, not: Option<&str>) -> Result<String> {
    let started = Instant::now();
    loop {
        if let Some(vm) = w.vm(name).await?
            && Some(vm.as_str()) != not
        {
            return Ok(vm);
        }
        if started.elapsed() > CONVERGE {
            bail!(
                "no {FOLDER}/{name} (other than {not:?}) after {CONVERGE:?}\n{}",
                w.vcsim.log_tail()
            );
        }
        sleep(POLL).await;
    }
}
