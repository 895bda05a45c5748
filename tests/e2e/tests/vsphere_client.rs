//! mco-vsphere against a real vCenter simulator: govmomi's vcsim v0.45.1
//! (`tests/tools/vcsim/build.sh`), started per test on loopback with TLS from a
//! CA made for the run and one username and password. Never skipped: a
//! vcsim that cannot start fails the test.
//!
//! Outcomes are read back through the harness's own SOAP and REST calls
//! (`Vcsim::vm_property`, `Vcsim::attached_tags`), not through the client
//! under test, wherever the client's own read could hide its own mistake.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use mco_e2e::Vcsim;
use mco_e2e::ova::{self, BuiltOva, OvaOptions};
use mco_vsphere::{
    DiskType, Endpoint, Error, FetchError, ImportPlan, Imported, Ova, OvaCache, Recovery, Session,
    Step, Timeouts, Trust, temp_name,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// vcsim v0.45.1 refuses usernames with `@` (see tests/vcsim.rs).
const USER: &str = "mco-e2e-vcenter";
const PASSWORD: &str = "s3cret pass";

const R1: &str = "9.6.20250101-0";
const R2: &str = "9.6.20250601-0";

fn endpoint(v: &Vcsim) -> Endpoint {
    Endpoint {
        server: v.server.clone(),
        username: USER.into(),
        password: PASSWORD.into(),
    }
}

fn trust(v: &Vcsim) -> Trust {
    Trust::Pem(v.ca_pem().as_bytes().to_vec())
}

/// Short task and call timeouts: vcsim answers in milliseconds, and a
/// hang should fail the test quickly.
fn timeouts() -> Timeouts {
    Timeouts {
        call: Duration::from_secs(20),
        task: Duration::from_secs(60),
        transfer: Duration::from_secs(60),
    }
}

async fn login(v: &Vcsim) -> Result<Session> {
    Session::login(&endpoint(v), &trust(v), timeouts())
        .await
        .with_context(|| format!("login to vcsim failed\n{}", v.log_tail()))
}

/// A plan for `/DC0/vm/<folder>` on compute cluster `cluster`.
fn plan(template: &str, folder: &str, cluster: &str) -> ImportPlan {
    ImportPlan {
        datacenter: "DC0".into(),
        folder: format!("/DC0/vm/{folder}"),
        compute_cluster: format!("/DC0/host/{cluster}"),
        resource_pool: format!("/DC0/host/{cluster}/Resources"),
        datastore: "LocalDS_0".into(),
        network: "VM Network".into(),
        template: template.into(),
        disk_type: Some(DiskType::Thick),
        tags: Vec::new(),
    }
}

fn build_ova(dir: &tempfile::TempDir, name: &str, o: &OvaOptions) -> Result<(BuiltOva, Ova)> {
    let built = ova::build(dir.path(), name, o)?;
    let opened = Ova::open(&built.path)?;
    Ok((built, opened))
}

/// OVAs of R1 and R2, for a template and its replacement.
fn two_releases(dir: &tempfile::TempDir) -> Result<(Ova, Ova)> {
    let (_, r1) = build_ova(dir, "r1.ova", &OvaOptions::default())?;
    let r2 = OvaOptions {
        release: R2.into(),
        ..OvaOptions::default()
    };
    let (_, r2) = build_ova(dir, "r2.ova", &r2)?;
    Ok((r1, r2))
}

/// `name` and the `mco-tmp-`/`mco-old-` names an import of it uses.
fn with_temporaries(name: &str) -> Vec<String> {
    names(&[
        name,
        &temp_name("mco-tmp", name),
        &temp_name("mco-old", name),
    ])
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// A vcsim with the folder `/DC0/vm/ci`, a directory for OVAs, and a
/// session: what most tests start from.
async fn with_folder_ci() -> Result<(Vcsim, tempfile::TempDir, Session)> {
    let v = Vcsim::start(USER, PASSWORD)?;
    let dir = tempfile::tempdir()?;
    v.create_folder("/DC0/vm", "ci").await?;
    let s = login(&v).await?;
    Ok((v, dir, s))
}

/// A session dropped without a logout (a pass cancelled by shutdown or a
/// lost lease) is ended in the background, not left to vCenter's idle
/// timeout.
#[tokio::test]
async fn a_dropped_session_is_logged_out() -> Result<()> {
    let v = Vcsim::start(USER, PASSWORD)?;
    let harness = v.session_count().await?;
    let s = login(&v).await?;
    assert_eq!(v.session_count().await?, harness + 1);
    drop(s);
    // Waits for the background logout; the bound only keeps a broken one
    // from hanging the test.
    let deadline = Instant::now() + Duration::from_secs(30);
    while v.session_count().await? != harness {
        ensure!(
            Instant::now() < deadline,
            "the dropped session is still open"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

#[tokio::test]
async fn login_logout_and_a_wrong_password() -> Result<()> {
    let v = Vcsim::start(USER, PASSWORD)?;
    let s = login(&v).await?;
    assert_eq!(s.server(), v.server);
    s.logout().await?;

    let wrong = Endpoint {
        password: "wrong".into(),
        ..endpoint(&v)
    };
    let err = Session::login(&wrong, &trust(&v), timeouts())
        .await
        .expect_err("a wrong password logs in");
    match &err {
        Error::Fault { method, fault, .. } => {
            assert_eq!(
                (method.as_str(), fault.as_str()),
                ("Login", "InvalidLogin"),
                "{err}"
            );
        }
        other => panic!("not a fault: {other}"),
    }

    // The system roots do not know the run's CA: a TLS error, named.
    let err = Session::login(&endpoint(&v), &Trust::Public, timeouts())
        .await
        .expect_err("an unknown CA is trusted");
    let text = err.to_string();
    assert!(
        matches!(err, Error::Http { .. }) && text.starts_with("RetrieveServiceContent: "),
        "{text}"
    );
    assert!(text.to_lowercase().contains("certificate"), "{text}");
    // Opting out of verification works, as upstream does.
    let s = Session::login(&endpoint(&v), &Trust::InsecureSkipVerify, timeouts()).await?;
    s.logout().await?;
    Ok(())
}

#[tokio::test]
async fn find_vms_reads_the_default_inventory() -> Result<()> {
    let v = Vcsim::start(USER, PASSWORD)?;
    let s = login(&v).await?;
    let found = s
        .find_vms(
            "DC0",
            &names(&["DC0_H0_VM0", "DC0_C0_RP0_VM1", "no-such-vm"]),
        )
        .await?;
    let got: Vec<(&str, &str, bool)> = found
        .iter()
        .map(|f| (f.name.as_str(), f.folder.as_str(), f.template))
        .collect();
    assert_eq!(
        got,
        [
            ("DC0_C0_RP0_VM1", "/DC0/vm", false),
            ("DC0_H0_VM0", "/DC0/vm", false)
        ]
    );
    assert!(
        found.iter().all(|f| f.moref.starts_with("vm-")),
        "{found:?}"
    );
    // vcsim's own VMs come with a thin flat disk and no product.
    assert!(found.iter().all(|f| f.release.is_none()), "{found:?}");
    let path_dc = s.find_vms("/DC0", &names(&["DC0_H0_VM0"])).await?;
    assert_eq!(path_dc.len(), 1);

    let err = s.find_vms("DC9", &names(&["x"])).await.unwrap_err();
    assert!(
        matches!(&err, Error::NotFound { what: "datacenter", path } if path == "/DC9"),
        "{err}"
    );
    s.logout().await?;
    Ok(())
}

/// The full flow on the second of two compute clusters (two failure
/// domains, `-cluster 2`), into a folder made for it, with one tag by name
/// (as upstream attaches the infrastructure ID's) and one by ID.
#[tokio::test]
async fn import_creates_a_tagged_template() -> Result<()> {
    let v = Vcsim::start_with(USER, PASSWORD, &["-cluster", "2"])?;
    let dir = tempfile::tempdir()?;
    v.create_folder("/DC0/vm", "ci-x7k2p").await?;
    let infra_tag = v.create_tag("mco-e2e-infra", "ci-x7k2p").await?;
    let extra_tag = v.create_tag("mco-e2e-extra", "extra").await?;
    let s = login(&v).await?;
    let (_, ova) = build_ova(&dir, "r1.ova", &OvaOptions::default())?;
    assert_eq!(ova.product_version(), Some(R1));

    let name = "ci-x7k2p-rhcos-generated-1";
    let mut p = plan(name, "ci-x7k2p", "DC0_C1");
    p.tags = vec!["ci-x7k2p".into(), extra_tag.clone()];
    let started = Instant::now();
    let imported = s.import_template(&p, &ova).await?;
    eprintln!("import took {:?}", started.elapsed());
    assert!(
        matches!(imported, Imported::New { swapped: false, .. }),
        "{imported:?}"
    );

    let found = s
        .find_vms(
            "DC0",
            &names(&[
                name,
                &temp_name("mco-tmp", name),
                &temp_name("mco-old", name),
            ]),
        )
        .await?;
    assert_eq!(found.len(), 1, "{found:?}");
    let vm = &found[0];
    assert_eq!(vm.name, name);
    assert_eq!(vm.moref, imported.moref());
    assert_eq!(vm.folder, "/DC0/vm/ci-x7k2p");
    assert!(vm.template);
    assert_eq!(vm.release.as_deref(), Some(R1));
    assert_eq!(vm.disk_type, Some(DiskType::Thick));

    // What find_vms's release rests on, read back from vcsim itself: no
    // summary product, the OVF's ProductSection in the vApp config.
    let summary = v.vm_property(&vm.moref, "summary.config.product").await?;
    assert!(
        summary.as_ref().is_none_or(|s| !s.contains(R1)),
        "{summary:?}"
    );
    let vapp = v.vm_property(&vm.moref, "config.vAppConfig").await?;
    assert!(
        vapp.as_deref()
            .is_some_and(|x| x.contains(&format!("<version>{R1}</version>"))),
        "{vapp:?}"
    );
    // Imported on a host of DC0_C1, in its pool.
    let pool = v.vm_property(&vm.moref, "resourcePool").await?;
    let c1_pool = v.find_by_path("/DC0/host/DC0_C1/Resources").await?;
    // A template has no resource pool in vcsim; the host shows the cluster.
    assert!(pool.is_none(), "a template keeps a pool: {pool:?}");
    let host = v.vm_property(&vm.moref, "runtime.host").await?;
    let host = host.context("no runtime.host")?;
    let c1_hosts = v
        .soap(&format!(
            r#"<RetrievePropertiesEx xmlns="urn:vim25"><_this type="PropertyCollector">propertyCollector</_this><specSet><propSet><type>ClusterComputeResource</type><pathSet>host</pathSet></propSet><objectSet><obj type="ClusterComputeResource">{}</obj></objectSet></specSet><options></options></RetrievePropertiesEx>"#,
            v.find_by_path("/DC0/host/DC0_C1").await?.context("no DC0_C1")?.1
        ))
        .await?;
    assert!(
        c1_hosts.contains(&format!(">{host}<")),
        "{host} not in {c1_hosts}"
    );
    assert!(c1_pool.is_some());

    let mut want = vec![infra_tag, extra_tag];
    want.sort();
    assert_eq!(v.attached_tags(&vm.moref).await?, want);
    s.logout().await?;
    Ok(())
}

#[tokio::test]
async fn a_second_import_swaps_the_template() -> Result<()> {
    let (v, dir, s) = with_folder_ci().await?;
    let name = "ci-rhcos";
    let (ova1, ova2) = two_releases(&dir)?;
    let first = s
        .import_template(&plan(name, "ci", "DC0_C0"), &ova1)
        .await?;
    assert!(
        matches!(first, Imported::New { swapped: false, .. }),
        "{first:?}"
    );

    let mut p = plan(name, "ci", "DC0_C0");
    p.disk_type = Some(DiskType::EagerZeroedThick);
    let second = s.import_template(&p, &ova2).await?;
    assert!(
        matches!(second, Imported::New { swapped: true, .. }),
        "{second:?}"
    );
    assert_ne!(second.moref(), first.moref());

    let all = with_temporaries(name);
    let found = s.find_vms("DC0", &all).await?;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].name, name);
    assert_eq!(found[0].moref, second.moref());
    assert_eq!(found[0].release.as_deref(), Some(R2));
    assert_eq!(found[0].disk_type, Some(DiskType::EagerZeroedThick));
    assert!(found[0].template);
    // The old template is gone, not just renamed.
    let old = v.vm_property(first.moref(), "name").await;
    assert!(old.is_err(), "the old template still exists: {old:?}");

    // The same release again (a second MachineSet of the failure domain):
    // the template is kept as it is.
    let third = s.import_template(&p, &ova2).await?;
    assert_eq!(
        third,
        Imported::Current {
            moref: second.moref().to_owned()
        }
    );
    assert_eq!(s.find_vms("DC0", &all).await?, found);
    s.logout().await?;
    Ok(())
}

#[tokio::test]
async fn secure_boot_is_turned_off() -> Result<()> {
    let (v, dir, s) = with_folder_ci().await?;
    let (_, ova) = build_ova(
        &dir,
        "sb.ova",
        &OvaOptions {
            secure_boot: true,
            ..OvaOptions::default()
        },
    )?;
    assert!(ova.secure_boot());
    let imported = s.import_template(&plan("sb", "ci", "DC0_C0"), &ova).await?;
    let value = v
        .vm_property(imported.moref(), "config.bootOptions.efiSecureBootEnabled")
        .await?;
    assert_eq!(value.as_deref(), Some("false"));

    // Without secure boot in the OVA, no reconfiguration at all.
    let (_, plain) = build_ova(&dir, "plain.ova", &OvaOptions::default())?;
    assert!(!plain.secure_boot());
    let imported = s
        .import_template(&plan("plain", "ci", "DC0_C0"), &plain)
        .await?;
    let value = v
        .vm_property(imported.moref(), "config.bootOptions.efiSecureBootEnabled")
        .await?;
    assert_ne!(value.as_deref(), Some("false"), "reconfigured anyway");
    s.logout().await?;
    Ok(())
}

#[tokio::test]
async fn two_networks_fail_before_anything_is_created() -> Result<()> {
    let (_vcsim, dir, s) = with_folder_ci().await?;
    let (_, ova) = build_ova(
        &dir,
        "two.ova",
        &OvaOptions {
            second_network: Some("Other Network".into()),
            ..OvaOptions::default()
        },
    )?;
    assert_eq!(ova.networks().len(), 2);
    let err = s
        .import_template(&plan("two", "ci", "DC0_C0"), &ova)
        .await
        .unwrap_err();
    assert_eq!(err.step, Step::ReadingOva);
    assert_eq!(
        err.to_string(),
        "reading the OVA: expected the OVA to only have a single network adapter"
    );
    let all = names(&[
        "two",
        &temp_name("mco-tmp", "two"),
        &temp_name("mco-old", "two"),
    ]);
    assert_eq!(s.find_vms("DC0", &all).await?, []);
    s.logout().await?;
    Ok(())
}

/// The temporary names hash the template name only, so another cluster's
/// folder may hold an `mco-old-…` of the same name: neither recovery nor the
/// stale cleanup of an import here may touch it.
#[tokio::test]
async fn another_folders_namesakes_are_left_alone() -> Result<()> {
    let (v, dir, s) = with_folder_ci().await?;
    v.create_folder("/DC0/vm", "other").await?;
    let name = "shared-rhcos";
    let old = temp_name("mco-old", name);
    let (_, ova) = build_ova(&dir, "r1.ova", &OvaOptions::default())?;
    // The other cluster, mid-swap: its template renamed away, no final name.
    let theirs = s
        .import_template(&plan(name, "other", "DC0_C0"), &ova)
        .await?;
    v.rename_vm(theirs.moref(), &old).await?;

    assert_eq!(
        s.recover_swap("DC0", "/DC0/vm/ci", name).await?,
        Recovery::Nothing
    );
    let ours = s.import_template(&plan(name, "ci", "DC0_C0"), &ova).await?;
    assert!(
        matches!(ours, Imported::New { swapped: false, .. }),
        "{ours:?}"
    );
    assert_eq!(
        v.vm_property(theirs.moref(), "name").await?.as_deref(),
        Some(old.as_str()),
        "the other folder's mco-old- VM was touched"
    );
    // Its own recovery still finds it.
    assert_eq!(
        s.recover_swap("DC0", "/DC0/vm/other", name).await?,
        Recovery::RenamedBack { from: old.clone() }
    );
    assert_eq!(
        v.vm_property(theirs.moref(), "name").await?.as_deref(),
        Some(name)
    );
    s.logout().await?;
    Ok(())
}

/// A crash between the swap's two renames leaves the old template as
/// `mco-old-…` and the new one as `mco-tmp-…`: recover_swap puts the old
/// name back, and the next import clears the leftover temporary.
#[tokio::test]
async fn an_interrupted_swap_is_recovered() -> Result<()> {
    let (v, dir, s) = with_folder_ci().await?;
    let name = "ci-rhcos";
    let (tmp, old) = (temp_name("mco-tmp", name), temp_name("mco-old", name));
    let (ova1, ova2) = two_releases(&dir)?;
    let old_vm = s
        .import_template(&plan(name, "ci", "DC0_C0"), &ova1)
        .await?;
    let new_vm = s
        .import_template(&plan("scratch", "ci", "DC0_C0"), &ova2)
        .await?;
    // The state a crash between the two renames leaves.
    v.rename_vm(old_vm.moref(), &old).await?;
    v.rename_vm(new_vm.moref(), &tmp).await?;
    let all = names(&[name, &tmp, &old]);
    assert_eq!(s.find_vms("DC0", &all).await?.len(), 2);

    assert_eq!(
        s.recover_swap("DC0", "/DC0/vm/ci", name).await?,
        Recovery::RenamedBack { from: old.clone() }
    );
    let found = s.find_vms("DC0", &names(&[name])).await?;
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].moref, old_vm.moref());
    assert_eq!(found[0].release.as_deref(), Some(R1));
    assert_eq!(
        s.recover_swap("DC0", "/DC0/vm/ci", name).await?,
        Recovery::Nothing
    );
    assert_eq!(
        s.recover_swap("DC0", "/DC0/vm/ci", "never-there").await?,
        Recovery::Nothing
    );
    assert_eq!(
        s.recover_swap("DC0", "/DC0/vm/no-such-folder", name)
            .await?,
        Recovery::Nothing
    );

    // The next pass destroys the stale mco-tmp- and swaps properly.
    let done = s
        .import_template(&plan(name, "ci", "DC0_C0"), &ova2)
        .await?;
    assert!(
        matches!(done, Imported::New { swapped: true, .. }),
        "{done:?}"
    );
    let found = s.find_vms("DC0", &all).await?;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].release.as_deref(), Some(R2));

    // An import straight into the crash state (no recover_swap first) takes
    // the old template back and swaps it, never leaving no template.
    v.rename_vm(&found[0].moref, &old).await?;
    let again = s
        .import_template(&plan(name, "ci", "DC0_C0"), &ova1)
        .await?;
    assert!(
        matches!(again, Imported::New { swapped: true, .. }),
        "the mco-old- template was not swapped: {again:?}"
    );
    let found = s.find_vms("DC0", &all).await?;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].name, name);
    assert_eq!(found[0].release.as_deref(), Some(R1));

    // A swap whose final destroy did not happen: the leftover goes.
    let leftover = s
        .import_template(&plan("leftover", "ci", "DC0_C0"), &ova2)
        .await?;
    v.rename_vm(leftover.moref(), &old).await?;
    assert_eq!(
        s.recover_swap("DC0", "/DC0/vm/ci", name).await?,
        Recovery::RemovedLeftover { name: old.clone() }
    );
    let found = s.find_vms("DC0", &all).await?;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].moref, again.moref());
    s.logout().await?;
    Ok(())
}

#[tokio::test]
async fn unknown_objects_are_not_found_by_path() -> Result<()> {
    let (_vcsim, dir, s) = with_folder_ci().await?;
    let (_, ova) = build_ova(&dir, "r1.ova", &OvaOptions::default())?;
    let base = plan("t", "ci", "DC0_C0");
    let cases: Vec<(ImportPlan, Step, &str, &str)> = vec![
        (
            ImportPlan {
                datastore: "/DC0/datastore/nope".into(),
                ..base.clone()
            },
            Step::LookingUpDatastore,
            "datastore",
            "/DC0/datastore/nope",
        ),
        (
            ImportPlan {
                datastore: "nope".into(),
                ..base.clone()
            },
            Step::LookingUpDatastore,
            "datastore",
            "/DC0/datastore/nope",
        ),
        (
            ImportPlan {
                compute_cluster: "/DC0/host/nope".into(),
                ..base.clone()
            },
            Step::LookingUpComputeCluster,
            "compute cluster",
            "/DC0/host/nope",
        ),
        (
            ImportPlan {
                network: "nope".into(),
                ..base.clone()
            },
            Step::LookingUpNetwork,
            "network",
            "/DC0/host/DC0_C0/nope",
        ),
        (
            ImportPlan {
                folder: "/DC0/vm/nope".into(),
                ..base.clone()
            },
            Step::LookingUpFolder,
            "folder",
            "/DC0/vm/nope",
        ),
        (
            // A cluster path where a folder was asked for: not a folder.
            ImportPlan {
                folder: "/DC0/host/DC0_C0".into(),
                ..base.clone()
            },
            Step::LookingUpFolder,
            "folder",
            "/DC0/host/DC0_C0",
        ),
    ];
    for (p, step, what, path) in cases {
        let err = s.import_template(&p, &ova).await.unwrap_err();
        assert_eq!(err.step, step, "{err}");
        match &err.source {
            Error::NotFound { what: w, path: got } => {
                assert_eq!((*w, got.as_str()), (what, path), "{err}");
            }
            other => panic!("not NotFound: {other}"),
        }
    }
    // A distributed portgroup the cluster sees is a network too.
    let dvpg = ImportPlan {
        network: "DC0_DVPG0".into(),
        template: "on-dvpg".into(),
        ..base.clone()
    };
    s.import_template(&dvpg, &ova).await?;
    // A name over 80 characters is refused before any call.
    let long = ImportPlan {
        template: "x".repeat(81),
        ..base
    };
    let err = s.import_template(&long, &ova).await.unwrap_err();
    assert_eq!(err.step, Step::CheckingTemplateName);
    s.logout().await?;
    Ok(())
}

/// A listener that accepts and never answers: the call timeout fires and
/// the error names the first method and which timeout.
#[tokio::test]
async fn a_silent_server_times_out_naming_the_method() -> Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = listener.accept().await {
            held.push(sock);
        }
    });
    let endpoint = Endpoint {
        server: addr.to_string(),
        username: USER.into(),
        password: PASSWORD.into(),
    };
    let t = Timeouts {
        call: Duration::from_millis(700),
        ..timeouts()
    };
    let started = Instant::now();
    let err = Session::login(&endpoint, &Trust::InsecureSkipVerify, t)
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert!(
        matches!(&err, Error::Timeout { method, timeout: "call", .. } if method == "RetrieveServiceContent"),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "RetrieveServiceContent: no answer within the call timeout (700ms)"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
    hold.abort();
    Ok(())
}

/// A small static HTTP server on loopback: `GET /<name>` answers the bytes
/// registered for `name`; counts the GETs.
/// Files whose name starts so are served half, then held: a transfer that
/// stalls.
const STALLED: &str = "stalled-";

struct Files {
    addr: std::net::SocketAddr,
    gets: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Files {
    async fn serve(files: HashMap<String, Vec<u8>>) -> Result<Files> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let gets = Arc::new(AtomicUsize::new(0));
        let files = Arc::new(files);
        let counter = gets.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let files = files.clone();
                let counter = counter.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    let mut head = Vec::new();
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16384 {
                        match sock.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&head);
                    let path = head.split_whitespace().nth(1).unwrap_or("/");
                    counter.fetch_add(1, Ordering::SeqCst);
                    // A little delay makes concurrent fetches overlap.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    let name = path.trim_start_matches('/');
                    if let (Some(body), true) = (files.get(name), name.starts_with(STALLED)) {
                        let head =
                            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
                        let _ = sock.write_all(head.as_bytes()).await;
                        let _ = sock.write_all(&body[..body.len() / 2]).await;
                        std::future::pending::<()>().await;
                    }
                    let response = match files.get(name) {
                        Some(body) => {
                            let mut r = format!(
                                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                                body.len()
                            )
                            .into_bytes();
                            r.extend_from_slice(body);
                            r
                        }
                        None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec(),
                    };
                    let _ = sock.write_all(&response).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        Ok(Files { addr, gets, task })
    }

    fn url(&self, name: &str) -> String {
        format!("http://{}/{name}", self.addr)
    }

    fn gets(&self) -> usize {
        self.gets.load(Ordering::SeqCst)
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn ovas_in(dir: &std::path::Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        out.push(e?.file_name().to_string_lossy().into_owned());
    }
    out.sort();
    Ok(out)
}

#[tokio::test]
async fn the_ova_cache_hits_checks_bounds_and_evicts() -> Result<()> {
    let src = tempfile::tempdir()?;
    let mut files = HashMap::new();
    let mut built = Vec::new();
    for (i, release) in ["a", "b", "c"].iter().enumerate() {
        let b = ova::build(
            src.path(),
            &format!("{release}.ova"),
            &OvaOptions {
                release: (*release).into(),
                ..OvaOptions::default()
            },
        )?;
        files.insert(format!("{release}.ova"), std::fs::read(&b.path)?);
        built.push(b);
        ensure!(i < 3);
    }
    let server = Files::serve(files).await?;
    let size = built[0].size;
    let t = Duration::from_secs(20);

    // Hit: the second fetch (and a concurrent one) downloads nothing more.
    let cache_dir = tempfile::tempdir()?;
    let cache = OvaCache::new(cache_dir.path().to_owned(), 2 * size + size / 2);
    let url_a = server.url("a.ova");
    let upper = built[0].sha256.to_uppercase();
    let (p1, p2) = tokio::join!(
        cache.fetch(&url_a, &built[0].sha256, t),
        cache.fetch(&url_a, &upper, t)
    );
    let (p1, p2) = (p1?, p2?);
    assert_eq!(p1, p2);
    assert_eq!(
        p1,
        cache_dir.path().join(format!("{}.ova", built[0].sha256))
    );
    assert_eq!(server.gets(), 1, "concurrent fetches downloaded twice");
    cache.fetch(&url_a, &built[0].sha256, t).await?;
    assert_eq!(server.gets(), 1);
    Ova::open(&p1)?;

    // A corrupted cached file is fetched again.
    std::fs::write(&p1, b"corrupt")?;
    cache.fetch(&url_a, &built[0].sha256, t).await?;
    assert_eq!(server.gets(), 2);
    assert_eq!(ova::sha256_hex(&std::fs::read(&p1)?), built[0].sha256);

    // Eviction: room for two; a third pushes out the least recently used.
    tokio::time::sleep(Duration::from_millis(20)).await;
    cache
        .fetch(&server.url("b.ova"), &built[1].sha256, t)
        .await?;
    tokio::time::sleep(Duration::from_millis(20)).await;
    cache.fetch(&url_a, &built[0].sha256, t).await?; // a is now newer than b
    tokio::time::sleep(Duration::from_millis(20)).await;
    cache
        .fetch(&server.url("c.ova"), &built[2].sha256, t)
        .await?;
    let mut want = vec![
        format!("{}.ova", built[0].sha256),
        format!("{}.ova", built[2].sha256),
    ];
    want.sort();
    assert_eq!(ovas_in(cache_dir.path())?, want);

    // Mismatch: nothing of it kept, both digests and the URL said. Room
    // for it was made before its bytes landed (the directory never holds
    // more than the bound, downloads included): the least recently used
    // OVA, a, is gone.
    let wrong = "0".repeat(64);
    let err = cache
        .fetch(&server.url("b.ova"), &wrong, t)
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, FetchError::DigestMismatch { .. }), "{text}");
    assert!(
        text.contains(&wrong) && text.contains(&built[1].sha256) && text.contains("/b.ova"),
        "{text}"
    );
    assert_eq!(
        ovas_in(cache_dir.path())?,
        [format!("{}.ova", built[2].sha256)],
        "a mismatch left a file, or made no room before downloading"
    );

    // Size bound: an OVA larger than the cache is refused, nothing kept.
    let small_dir = tempfile::tempdir()?;
    let small = OvaCache::new(small_dir.path().to_owned(), size - 1);
    let err = small
        .fetch(&server.url("b.ova"), &built[1].sha256, t)
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::TooLarge { .. }), "{err}");
    assert_eq!(ovas_in(small_dir.path())?, Vec::<String>::new());

    // Not found, and not a digest.
    let err = cache
        .fetch(&server.url("x.ova"), &wrong, t)
        .await
        .unwrap_err();
    assert!(
        matches!(err, FetchError::Status { status: 404, .. }),
        "{err}"
    );
    let err = cache.fetch(&url_a, "abc", t).await.unwrap_err();
    assert!(matches!(err, FetchError::BadDigest { .. }), "{err}");
    Ok(())
}

/// A fetch dropped mid-download (its replica lost the lease, and the pass
/// around it was dropped) leaves no partial file, and the next fetch of
/// that OVA downloads it whole.
#[tokio::test]
async fn a_fetch_dropped_mid_download_leaves_nothing_behind() -> Result<()> {
    let src = tempfile::tempdir()?;
    let built = ova::build(src.path(), "a.ova", &OvaOptions::default())?;
    let bytes = std::fs::read(&built.path)?;
    let stalled = format!("{STALLED}a.ova");
    let server = Files::serve(HashMap::from([
        ("a.ova".to_owned(), bytes.clone()),
        (stalled.clone(), bytes),
    ]))
    .await?;
    let dir = tempfile::tempdir()?;
    let cache = OvaCache::new(dir.path().to_owned(), 4 * built.size);
    let t = Duration::from_secs(20);
    let url = server.url(&stalled);
    let mut fetch = Box::pin(cache.fetch(&url, &built.sha256, t));
    let started = Instant::now();
    // Polled until half the OVA is in its partial file, then dropped.
    loop {
        tokio::select! {
            done = &mut fetch => anyhow::bail!("the stalled fetch ended: {done:?}"),
            () = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
        let partial = std::fs::read_dir(dir.path())?
            .filter_map(|e| e.ok()?.metadata().ok())
            .any(|m| m.len() >= built.size / 2);
        if partial {
            break;
        }
        ensure!(started.elapsed() < t, "no partial download after {t:?}");
    }
    drop(fetch);
    assert_eq!(ovas_in(dir.path())?, Vec::<String>::new());
    let path = cache.fetch(&server.url("a.ova"), &built.sha256, t).await?;
    assert_eq!(ova::sha256_hex(&std::fs::read(&path)?), built.sha256);
    assert_eq!(ovas_in(dir.path())?, vec![format!("{}.ova", built.sha256)]);
    Ok(())
}

/// A step failing once the new VM exists (here: a tag that does not exist)
/// removes the new VM and leaves the old template as it was.
#[tokio::test]
async fn a_failure_after_the_import_removes_the_new_vm() -> Result<()> {
    let (_vcsim, dir, s) = with_folder_ci().await?;
    let name = "ci-rhcos";
    let (ova1, ova2) = two_releases(&dir)?;
    let first = s
        .import_template(&plan(name, "ci", "DC0_C0"), &ova1)
        .await?;
    let mut p = plan(name, "ci", "DC0_C0");
    p.tags = vec!["no-such-tag".into()];
    let err = s.import_template(&p, &ova2).await.unwrap_err();
    assert_eq!(
        err.step,
        Step::AttachingTag {
            tag: "no-such-tag".into()
        }
    );
    assert!(
        matches!(&err.source, Error::NotFound { what: "tag", path } if path == "no-such-tag"),
        "{err}"
    );
    let all = with_temporaries(name);
    let found = s.find_vms("DC0", &all).await?;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].moref, first.moref());
    assert_eq!(found[0].release.as_deref(), Some(R1));
    s.logout().await?;
    Ok(())
}
