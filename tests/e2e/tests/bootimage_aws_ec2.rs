//! AWS boot images decided from EC2, end to end: `mco-host run
//! --boot-images` as its ServiceAccount (RBAC from `deploy/`) against a
//! real kube-apiserver and etcd, and moto's EC2 on loopback
//! ([`mco_e2e::moto`]), seeded with Red Hat-owned, marketplace and other
//! AMIs, reached through `--ec2-endpoint` with the credentials of Secret
//! `openshift-machine-api/aws-cloud-credentials`. The MachineSets' `ami.id`s
//! are read back from the apiserver. Where moto falls short of EC2, and how
//! that is bridged: docs/dev/testing.md.

use crate::support;

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::core::v1::Secret;
use kube::api::ApiResource;
use mco_e2e::moto::{Ami, Moto};
use mco_e2e::openshift;
use serde_json::{Value, json};
use tokio::time::sleep;

use support::bootimages::{CONVERGE, Cluster, MAPI, Platform};

const RED_HAT: &str = "531415883065";
const MARKETPLACE: &str = "679593333241";
/// The OCP x86_64 marketplace product, and another (OKE) whose AMIs the
/// choice must not take.
const OCP: &str = "59ead7de-2540-4653-a8b0-fa7926d5c845";
const OKE: &str = "963b36c3-de6f-48ed-b802-2b38b2a2cdeb";
/// The stream's release and its us-east-1 AMI.
const RELEASE: &str = "9.6.20260210-0";
const STREAM_AMI: &str = "ami-0e0000000000000e1";
/// (a) Red Hat owns them; neither the stream nor the static list has them.
const RED_HAT_AMI: &str = "ami-0a0000000000000a1";
const RED_HAT_LATER: &str = "ami-0a0000000000000a2";
/// (b) The OCP marketplace AMIs: the MachineSet's (9.4), and the one the
/// choice must land on (9.6, the newer of two).
const MARKETPLACE_AMI: &str = "ami-0b0000000000000b1";
const MARKETPLACE_TARGET: &str = "ami-0b0000000000000b3";
/// (c) A customer's own AMI.
const OTHER_AMI: &str = "ami-0c0000000000000c1";
/// (d) In upstream's static list of published RHCOS AMIs, not in moto.
const LISTED_AMI: &str = "ami-000065c53330c76d2";
const SECRET_KEY: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const POLL: Duration = Duration::from_millis(200);
const QUIET: Duration = Duration::from_secs(3);

fn ami(id: &str, owner: &str, name: &str, description: &str, created: &str) -> Ami {
    Ami {
        id: id.to_owned(),
        owner_id: owner.to_owned(),
        name: name.to_owned(),
        description: description.to_owned(),
        creation_date: created.to_owned(),
    }
}

/// What EC2 holds: the marketplace has several releases of the product,
/// one above the stream's and one of the pre-4.19 scheme, as it does.
fn amis() -> Vec<Ami> {
    let market = |id: &str, product: &str, version: &str, description: &str, created: &str| {
        ami(
            id,
            MARKETPLACE,
            &format!("RHEL-9.4-RHCOS-{version}_HVM_GA-20250101-x86_64-0-{product}"),
            description,
            created,
        )
    };
    vec![
        ami(
            RED_HAT_AMI,
            RED_HAT,
            "rhcos-9.4.20250101-0-x86_64",
            "RHCOS 9.4",
            "2025-01-01T00:00:00.000Z",
        ),
        ami(
            RED_HAT_LATER,
            RED_HAT,
            "rhcos-9.4.20250301-0-x86_64",
            "RHCOS 9.4",
            "2025-03-01T00:00:00.000Z",
        ),
        ami(
            OTHER_AMI,
            "123456789012",
            "golden-rhcos",
            "our own image",
            "2025-02-01T00:00:00.000Z",
        ),
        market(
            MARKETPLACE_AMI,
            OCP,
            "9.4",
            "RHEL CoreOS 9.4 9.4.20250101-0 x86_64",
            "2025-01-01T00:00:00.000Z",
        ),
        market(
            "ami-0b0000000000000b2",
            OCP,
            "9.6",
            "RHEL CoreOS 9.6 9.6.20250601-0 x86_64",
            "2025-06-01T00:00:00.000Z",
        ),
        market(
            MARKETPLACE_TARGET,
            OCP,
            "9.6",
            "RHEL CoreOS 9.6 9.6.20260210-0 x86_64",
            "2026-02-10T00:00:00.000Z",
        ),
        market(
            "ami-0b0000000000000b4",
            OCP,
            "9.8",
            "RHEL CoreOS 9.8 9.8.20260428-0 x86_64",
            "2026-04-28T00:00:00.000Z",
        ),
        market(
            "ami-0b0000000000000b5",
            OCP,
            "4.18",
            "OpenShift 4.18 418.94.202511191518-0 x86_64",
            "2026-05-01T00:00:00.000Z",
        ),
        market(
            "ami-0b0000000000000b6",
            OKE,
            "9.6",
            "RHEL CoreOS 9.6 9.6.20260301-0 x86_64",
            "2026-03-01T00:00:00.000Z",
        ),
    ]
}

/// A stream of one arch and region, with the `aws` artifact whose release
/// bounds the marketplace choice.
fn stream() -> String {
    json!({
        "stream": "rhcos-test",
        "metadata": {"last-modified": "2026-02-10T00:00:00Z"},
        "architectures": {"x86_64": {
            "artifacts": {"aws": {"release": RELEASE, "formats": {}}},
            "images": {"aws": {"regions": {"us-east-1": {"release": RELEASE, "image": STREAM_AMI}}}}
        }}
    })
    .to_string()
}

fn machineset(name: &str, ami_id: &str) -> Value {
    json!({
        "apiVersion": "machine.openshift.io/v1beta1", "kind": "MachineSet",
        "metadata": {"name": name, "namespace": MAPI,
                     "annotations": {"capacity.cluster-autoscaler.kubernetes.io/labels": "kubernetes.io/arch=amd64"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"machineset": name}},
            "template": {"metadata": {"labels": {}}, "spec": {"providerSpec": {"value": {
                "kind": "AWSMachineProviderConfig", "ami": {"id": ami_id},
                "placement": {"region": "us-east-1", "availabilityZone": "us-east-1a"},
                "userDataSecret": {"name": "worker-user-data"}}}}}
        }
    })
}

async fn ami_id(c: &Cluster, name: &str) -> Result<String> {
    let ms = c.machineset(name).await?;
    ms.data
        .pointer("/spec/template/spec/providerSpec/value/ami/id")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .with_context(|| format!("MachineSet {name} has no ami.id"))
}

async fn wait_ami(c: &Cluster, name: &str, want: &str) -> Result<()> {
    let started = Instant::now();
    loop {
        let id = ami_id(c, name).await?;
        if id == want {
            return Ok(());
        }
        if started.elapsed() > CONVERGE {
            bail!("MachineSet {name} has ami.id {id}, not {want}, after {CONVERGE:?}");
        }
        sleep(POLL).await;
    }
}

/// Waits for `BootImageUpdateProgressing`'s message to contain all of
/// `fragments`, and returns it.
async fn wait_progressing(c: &Cluster, fragments: &[&str]) -> Result<String> {
    let started = Instant::now();
    loop {
        let conditions = c.conditions().await?;
        let message = conditions["BootImageUpdateProgressing"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if fragments.iter().all(|f| message.contains(f)) {
            return Ok(message);
        }
        if started.elapsed() > CONVERGE {
            bail!("Progressing never said {fragments:?}: {message}");
        }
        sleep(POLL).await;
    }
}

/// Waits for an Event about MachineSet `name` containing all of `fragments`.
async fn wait_event(c: &Cluster, name: &str, fragments: &[&str]) -> Result<String> {
    let started = Instant::now();
    loop {
        let events = c.events(name).await?;
        if let Some(found) = events
            .iter()
            .find(|e| fragments.iter().all(|f| e.contains(f)))
        {
            return Ok(found.clone());
        }
        if started.elapsed() > CONVERGE {
            bail!(
                "MachineSet {name} has no Event with {fragments:?} after {CONVERGE:?}: {events:?}"
            );
        }
        sleep(POLL).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_machinesets_move_as_ec2_says_and_the_static_list_decides_without_it() -> Result<()> {
    let mut c = Cluster::start(Platform::Aws, &[]).await?;
    let result = scenario(&mut c).await;
    c.fx.finish(result)
}

async fn scenario(c: &mut Cluster) -> Result<()> {
    let mut moto = Moto::start(&amis())?;
    c.apply(
        &ApiResource::erase::<Secret>(&()),
        Some(MAPI),
        json!({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": "aws-cloud-credentials", "namespace": MAPI},
               "stringData": {"aws_access_key_id": "AKIDEXAMPLE", "aws_secret_access_key": SECRET_KEY}}),
    )
    .await?;
    c.set_stream_text(&stream()).await?;
    for (name, id) in [
        ("red-hat", RED_HAT_AMI),
        ("marketplace", MARKETPLACE_AMI),
        ("other-owner", OTHER_AMI),
    ] {
        c.apply(&openshift::machine_set(), Some(MAPI), machineset(name, id))
            .await?;
    }

    // ---- EC2 answers ------------------------------------------------------
    let args = ["--resync", "1s", "--ec2-endpoint", &moto.endpoint];
    let controller = c.start_controller("boot-a", &args).await?;
    // (a) Red Hat's AMI, unknown to both lists, moves to the stream's.
    wait_ami(c, "red-hat", STREAM_AMI).await?;
    // (b) The marketplace AMI moves to its product's newest AMI at or
    // below the stream's 9.6: not 9.8, not the 418.94 one, not OKE's.
    wait_ami(c, "marketplace", MARKETPLACE_TARGET).await?;
    // (c) Another owner's AMI is left alone, and the Event says why.
    let why = wait_event(
        c,
        "other-owner",
        &[
            "BootImageUpdateSkipped",
            OTHER_AMI,
            "unrecognised owner",
            "123456789012",
        ],
    )
    .await?;
    eprintln!("bootimage_aws_ec2: other-owner: {why}");
    ensure!(ami_id(c, "other-owner").await? == OTHER_AMI);
    let metrics = c.metrics(controller).await?;
    ensure!(
        metrics.sum("mco_bootimage_ec2_reads_total", &[("result", "read")]) >= 4.0,
        "EC2 reads: {}",
        metrics.sum("mco_bootimage_ec2_reads_total", &[])
    );
    ensure!(
        metrics.sum(
            "mco_bootimage_ec2_reads_total",
            &[("result", "unreachable")]
        ) == 0.0
    );
    let conditions = c.conditions().await?;
    let progressing = conditions["BootImageUpdateProgressing"]["message"].to_string();
    ensure!(!progressing.contains("EC2"), "Progressing: {progressing}");

    // ---- EC2 refuses the credentials ---------------------------------------
    moto.refuse_credentials()?;
    c.apply(
        &openshift::machine_set(),
        Some(MAPI),
        machineset("refused", RED_HAT_LATER),
    )
    .await?;
    // (c') Said apart from an unreachable EC2, quoting EC2's code, and the
    // static lists decide: an AMI only EC2 could vouch for stays.
    let progressing = wait_progressing(
        c,
        &[
            "EC2 refused the credentials of Secret openshift-machine-api/aws-cloud-credentials, the static AMI lists decided for: ",
            "machineset refused: EC2 DescribeImages: HTTP 401: AuthFailure",
        ],
    )
    .await?;
    eprintln!("bootimage_aws_ec2: Progressing: {progressing}");
    ensure!(
        !progressing.contains(SECRET_KEY) && !progressing.contains("could not be reached"),
        "Progressing: {progressing}"
    );
    wait_event(
        c,
        "refused",
        &["EC2 refused the credentials", "AuthFailure"],
    )
    .await?;
    ensure!(ami_id(c, "refused").await? == RED_HAT_LATER);
    let metrics = c.metrics(controller).await?;
    ensure!(
        metrics.sum("mco_bootimage_ec2_reads_total", &[("result", "denied")]) >= 1.0,
        "EC2 reads: {}",
        metrics.sum("mco_bootimage_ec2_reads_total", &[])
    );
    // Accepted again: EC2 decides, and the AMI moves.
    moto.accept_any_credentials()?;
    wait_ami(c, "refused", STREAM_AMI).await?;

    // ---- EC2 cannot be reached ---------------------------------------------
    moto.stop()?;
    for (name, id) in [("red-hat-later", RED_HAT_LATER), ("listed", LISTED_AMI)] {
        c.apply(&openshift::machine_set(), Some(MAPI), machineset(name, id))
            .await?;
    }
    // (d) The static list decides: its AMI moves, Red Hat's other AMI
    // (which only EC2 could vouch for) stays, and Progressing says EC2
    // was not consulted.
    wait_ami(c, "listed", STREAM_AMI).await?;
    let progressing = wait_progressing(c, &["EC2 could not be reached", "red-hat-later"]).await?;
    eprintln!("bootimage_aws_ec2: Progressing: {progressing}");
    ensure!(
        !progressing.contains(SECRET_KEY),
        "Progressing: {progressing}"
    );
    wait_event(c, "red-hat-later", &["EC2 could not be reached", "unknown"]).await?;
    sleep(QUIET).await;
    ensure!(ami_id(c, "red-hat-later").await? == RED_HAT_LATER);
    // What EC2 decided earlier stays: nothing is moved back.
    ensure!(ami_id(c, "red-hat").await? == STREAM_AMI);
    ensure!(ami_id(c, "marketplace").await? == MARKETPLACE_TARGET);
    ensure!(ami_id(c, "other-owner").await? == OTHER_AMI);
    let metrics = c.metrics(controller).await?;
    ensure!(
        metrics.sum(
            "mco_bootimage_ec2_reads_total",
            &[("result", "unreachable")]
        ) >= 1.0
    );
    for name in ["red-hat-later", "listed", "marketplace"] {
        for event in c.events(name).await? {
            ensure!(!event.contains(SECRET_KEY), "{name}: {event}");
        }
    }
    Ok(())
}
