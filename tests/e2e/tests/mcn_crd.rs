//! The generated MachineConfigNode CRDs on the real kube-apiserver: the
//! TechPreviewNoUpgrade one validates `configImage` with upstream's CEL
//! rules, and the guests' check of image annotations
//! (`mco_k8s_rules::is_image_digest`) accepts exactly what those rules
//! accept, so a node's bad annotation is a per-node error, never a refused
//! write; the Default one has no `configImage` at all; and a test can swap
//! one for the other as a cluster's feature set change does.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use futures::{StreamExt, stream};
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use mco_e2e::{ControlPlane, FeatureSet};
use mco_k8s_rules::is_image_digest;
use serde_json::{Value, json};
use tokio::time::sleep;

const MANAGER: &str = "mco-e2e-test";
const NODE: &str = "worker-0";
const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
/// Dry-run writes in flight: enough to keep a 2-core apiserver busy.
const IN_FLIGHT: usize = 8;

fn machine_config_node() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(
            "machineconfiguration.openshift.io",
            "v1",
            "MachineConfigNode",
        ),
        "machineconfignodes",
    )
}

fn mcn(config_image: Option<Value>) -> Value {
    let mut spec = json!({
        "node": {"name": NODE},
        "pool": {"name": "worker"},
        "configVersion": {"desired": "rendered-worker-a"},
    });
    if let Some(image) = config_image {
        spec["configImage"] = image;
    }
    json!({
        "apiVersion": "machineconfiguration.openshift.io/v1",
        "kind": "MachineConfigNode",
        "metadata": {"name": NODE},
        "spec": spec,
    })
}

/// Pull specs around every edge of the two rules: each host, port and path
/// form with a good digest, and each digest form with a good name.
fn candidates() -> Vec<String> {
    let hosts = [
        "quay.io",
        "registry.example.com",
        "localhost",
        "-a.b-",
        "quay..io",
        "q_u.io",
        "",
        "quay.io.",
    ];
    let ports = ["", ":5000", ":12345", ":1", ":123456", ":"];
    let paths = [
        "/os",
        "/ns/os",
        "/a/b/c",
        "/ns.x/os",
        "",
        "/os:tag",
        "//os",
        "/",
        "/n_-/r.e_p-o",
    ];
    let mut all = Vec::new();
    for host in hosts {
        for port in ports {
            for path in paths {
                all.push(format!("{host}{port}{path}@sha256:{HEX}"));
            }
        }
    }
    let name = "quay.io/openshift/os";
    for digest in [
        format!("@sha256:{}", &HEX[1..]),
        format!("@sha256:{HEX}0"),
        format!("@sha256:{}", HEX.to_uppercase()),
        format!("@sha512:{HEX}"),
        format!("@{HEX}"),
        format!("@sha256:{HEX}@sha256:{HEX}"),
        format!("@sha256:{HEX}\n"),
        "@".to_owned(),
        ":latest".to_owned(),
        String::new(),
    ] {
        all.push(format!("{name}{digest}"));
    }
    for name in [
        format!("quay.io/{}/os", "n".repeat(61)),
        format!("quay.io/{}/os", "n".repeat(62)),
        format!("a.io/{}", "x".repeat(370)),
        format!("a.io/{}", "x".repeat(371)),
        "user@quay.io/os".to_owned(),
        "quay.io/\u{e9}".to_owned(),
        "quay.io/os\0".to_owned(),
        "\nquay.io/os".to_owned(),
        "https://quay.io/os".to_owned(),
    ] {
        all.push(format!("{name}@sha256:{HEX}"));
    }
    all
}

fn dry_run_apply() -> PatchParams {
    PatchParams::apply(MANAGER).validation_strict().dry_run()
}

/// Whether the apiserver takes `object` (a dry run, so nothing is stored);
/// a refusal other than a validation error fails the test.
async fn accepts(api: &Api<DynamicObject>, object: &Value) -> Result<bool> {
    match api
        .patch(NODE, &dry_run_apply(), &Patch::Apply(object))
        .await
    {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if is_refusal(&status) => Ok(false),
        Err(e) => Err(e).context("dry-run apply of a MachineConfigNode"),
    }
}

/// 422 Invalid for a rule; server-side apply answers a field the schema
/// does not declare with 500 and this message.
fn is_refusal(status: &kube::core::Status) -> bool {
    status.code == 422 || status.message.contains("field not declared in schema")
}

#[tokio::test]
async fn the_generated_mcn_crds_validate_as_the_guests_check() -> Result<()> {
    let cp = ControlPlane::builder().start().await?;
    let admin = cp.admin_client()?;
    let api: Api<DynamicObject> = Api::all_with(admin.clone(), &machine_config_node());

    cp.install_mcn_crd(FeatureSet::TechPreviewNoUpgrade).await?;
    images_are_checked_as_the_cel_rules_do(&api).await?;
    status_config_image(&admin).await?;

    // A feature set change: the Default CRD replaces the other.
    cp.install_mcn_crd(FeatureSet::Default).await?;
    let image = json!({"desiredImage": format!("quay.io/os@sha256:{HEX}")});
    served_within(&api, &image, false).await?;
    ensure!(
        accepts(&api, &mcn(None)).await?,
        "the Default CRD refuses an MCN without configImage"
    );
    cp.install_mcn_crd(FeatureSet::TechPreviewNoUpgrade).await?;
    served_within(&api, &image, true).await
}

/// Every candidate in `spec.configImage.desiredImage`: the apiserver and
/// [`is_image_digest`] agree on each.
async fn images_are_checked_as_the_cel_rules_do(api: &Api<DynamicObject>) -> Result<()> {
    let candidates = candidates();
    let total = candidates.len();
    let verdicts: Vec<Result<(String, bool)>> = stream::iter(candidates)
        .map(|image| async move {
            let object = mcn(Some(json!({"desiredImage": image})));
            Ok((image, accepts(api, &object).await?))
        })
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    let mut accepted = 0;
    let mut differ = Vec::new();
    for verdict in verdicts {
        let (image, apiserver) = verdict?;
        accepted += usize::from(apiserver);
        if apiserver != is_image_digest(&image) {
            differ.push(format!("{image:?}: apiserver accepts: {apiserver}"));
        }
    }
    eprintln!("mcn_crd: {accepted} of {total} pull specs accepted");
    ensure!(
        differ.is_empty(),
        "is_image_digest and the CRD's rules differ on:\n{}",
        differ.join("\n")
    );
    // Both sides of the rules were reached.
    ensure!(accepted > 0 && accepted < total, "{accepted} accepted");
    Ok(())
}

/// `status.configImage`: its images by the same rules, and never empty.
async fn status_config_image(admin: &Client) -> Result<()> {
    let api: Api<DynamicObject> = Api::all_with(admin.clone(), &machine_config_node());
    api.patch(
        NODE,
        &PatchParams::apply(MANAGER),
        &Patch::Apply(&mcn(None)),
    )
    .await
    .context("creating the MachineConfigNode")?;
    let good = format!("quay.io/os@sha256:{HEX}");
    for (config_image, taken) in [
        (json!({"currentImage": good, "desiredImage": good}), true),
        (json!({"desiredImage": good}), true),
        (json!({}), false),
        (json!({"currentImage": "quay.io/os:latest"}), false),
        (
            json!({"desiredImage": format!("localhost/os@sha256:{HEX}")}),
            false,
        ),
        (json!({"currentImage": ""}), false),
    ] {
        let patch = json!({"status": {"configImage": config_image}});
        let params = PatchParams::default().dry_run();
        let result = api.patch_status(NODE, &params, &Patch::Merge(&patch)).await;
        match (result, taken) {
            (Ok(_), true) => {}
            (Err(kube::Error::Api(status)), false) if is_refusal(&status) => {}
            (Ok(_), false) => bail!("status.configImage {config_image} accepted"),
            (Err(e), _) => {
                return Err(e).with_context(|| format!("status.configImage {config_image}"));
            }
        }
    }
    Ok(())
}

/// Waits until the served schema takes (or refuses) `spec.configImage`:
/// a replaced CRD is served anew shortly after the apply returns.
async fn served_within(api: &Api<DynamicObject>, image: &Value, taken: bool) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if accepts(api, &mcn(Some(image.clone()))).await? == taken {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "spec.configImage still accepted={} 30 s after the CRD changed",
                !taken
            );
        }
        sleep(Duration::from_millis(200)).await;
    }
}
