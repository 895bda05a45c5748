//! Guests signed with certificates, the way a cluster's images are: the real
//! `cosign` signs modules in a real registry with a leaf and its chain from a
//! CA the test makes, and the host, on the real apiserver, enforces a
//! ClusterImagePolicy of each certificate type (`PKI`, `FulcioCAWithRekor`)
//! and an entry's own trusted root with a quorum (`allOf`), in both forms
//! cosign writes. Each refusal (wrong identity, swapped certificate,
//! signature copied from another repository, no log entry, a required
//! signature missing) leaves the MachineConfigGuest Degraded with its own
//! reason, and `guests verify` refuses what the controller refuses. The log
//! is the test's own: see docs/dev/testing.md.

use crate::support;

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, ensure};
use base64::Engine as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DynamicObject, ObjectMeta};
use mco_e2e::pki::{Ca, Leaf, LeafSpec, Log, now, trusted_root_json};
use serde_json::{Value, json};

use support::controller::{host_binary, installed_guest};
use support::fixture::Fixture;
use support::guests::{
    SWAP_TIMEOUT, apply_as_test, apply_configmap, apply_guest_object, patch_guest_object,
    refused_while_serving, serves, sha256, wait_guest_object,
};
use support::oci::{Registry, Tools, cosign, ok, ok_json, run};
use support::wasm::with_custom_section;

const ISSUER: &str = "https://issuer.example.com";
const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
const BUNDLE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
/// Why a bundle whose certificate is not its signer's is refused.
const BAD_SIGNATURE: &str =
    "sigstore-bundle: the signature does not verify under the certificate's key";
const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const INDEX: &str = "application/vnd.oci.image.index.v1+json";

/// ClusterImagePolicy PKI and FulcioCAWithRekor, and an entry's trusted
/// root with `allOf`, on the real apiserver with signatures the real
/// cosign made: see the module doc.
#[tokio::test]
async fn enforces_certificate_policies_and_a_quorum() -> Result<()> {
    Fixture::run(certificate_policies).await
}

/// The signers: a root, an intermediate under it, and leaves for three
/// emails, each from `ISSUER`.
struct Signers {
    root: Ca,
    ca: Ca,
    ci: Leaf,
    dev: Leaf,
    review: Leaf,
}

impl Signers {
    fn new() -> Signers {
        let root = Ca::root("mco-e2e guests root");
        let ca = root.intermediate("mco-e2e guests signing");
        let leaf = |email: &str| ca.leaf(&LeafSpec::email(email).issuer(ISSUER));
        let (ci, dev, review) = (
            leaf("ci@example.com"),
            leaf("dev@example.com"),
            leaf("review@example.com"),
        );
        Signers {
            root,
            ca,
            ci,
            dev,
            review,
        }
    }

    /// What cosign's `--certificate-chain` takes: the intermediate, then
    /// the root.
    fn chain(&self) -> String {
        format!("{}{}", self.ca.pem(), self.root.pem())
    }
}

/// The form cosign writes a signature in.
#[derive(Clone, Copy)]
enum Form {
    /// The `.sig` tag's simple-signing layer (`--new-bundle-format=false`).
    Legacy,
    /// A Sigstore bundle referrer: what cosign 3 writes by default.
    Bundle,
}

/// Signs `reference` (by digest) with `leaf`'s key, attaching the leaf
/// and `chain`, in `form` and with no log: the key is imported into
/// cosign's format first (`cosign import-key-pair`).
fn sign_with_certificate(
    tools: &Tools,
    dir: &Path,
    (name, leaf): (&str, &Leaf),
    chain: &str,
    form: Form,
    reference: &str,
) -> Result<()> {
    let (key, certificate, chain_file) = (
        dir.join(format!("{name}-leaf.key.pem")),
        dir.join(format!("{name}.crt")),
        dir.join("chain.pem"),
    );
    std::fs::write(&key, leaf.key_pem())?;
    std::fs::write(&certificate, leaf.pem())?;
    std::fs::write(&chain_file, chain)?;
    if !dir.join(format!("{name}.key")).exists() {
        ok(cosign(tools, dir)
            .args(["import-key-pair", "--output-key-prefix", name, "--key"])
            .arg(&key))?;
    }
    let mut sign = cosign(tools, dir);
    sign.args(["sign", "-y", "--key", &format!("{name}.key")])
        .arg("--certificate")
        .arg(&certificate)
        .arg("--certificate-chain")
        .arg(&chain_file)
        .args([
            "--allow-http-registry",
            "--allow-insecure-registry",
            "--use-signing-config=false",
            "--tlog-upload=false",
        ]);
    if matches!(form, Form::Legacy) {
        sign.arg("--new-bundle-format=false");
    }
    ok(sign.arg(reference))?;
    Ok(())
}

/// Swaps the certificate in the Sigstore bundle cosign wrote for
/// `reference` for `leaf`'s, the signature left as it is, and pushes the
/// bundle back where the registry lists it (the registry has no referrers
/// API, so cosign keeps an index at the `sha256-<hex>` tag): someone who
/// can push claims another signer's identity for their own signature.
fn swap_bundle_certificate(
    tools: &Tools,
    registry: &Registry,
    dir: &Path,
    reference: &str,
    leaf: &Leaf,
) -> Result<()> {
    let (repository, digest) = reference.split_once('@').context("not pinned")?;
    let index_tag = format!("{repository}:{}", digest.replace(':', "-"));
    let fetch = |reference: &str| {
        ok_json(
            Command::new(&tools.oras)
                .args(["manifest", "fetch", "--plain-http"])
                .arg(reference),
        )
    };
    // Pushes `bytes` as `name` and returns the digest they are pushed by.
    let push = |name: &str, command: &[&str], bytes: &[u8], reference: &dyn Fn(&str) -> String| {
        let file = dir.join(format!("swapped-{name}.json"));
        std::fs::write(&file, bytes)?;
        let digest = format!("sha256:{}", sha256(bytes));
        ok(Command::new(&tools.oras)
            .args(command)
            .arg("--plain-http")
            .arg(reference(&digest))
            .arg(&file))?;
        anyhow::Ok(json!({"digest": digest, "size": bytes.len()}))
    };
    let mut index = fetch(&index_tag)?;
    let entry = &mut index["manifests"][0];
    ensure!(entry["artifactType"] == BUNDLE, "not a bundle: {index}");
    let manifest_digest = entry["digest"].as_str().context("no digest")?;
    let mut manifest = fetch(&format!("{repository}@{manifest_digest}"))?;
    let layer = &mut manifest["layers"][0];
    let mut bundle: Value = serde_json::from_slice(&std::fs::read(
        registry.blob(layer["digest"].as_str().context("a layer without digest")?),
    )?)?;
    let certificate = &mut bundle["verificationMaterial"]["x509CertificateChain"]["certificates"];
    ensure!(
        certificate.is_array(),
        "cosign wrote no certificate: {bundle}"
    );
    *certificate =
        json!([{"rawBytes": base64::engine::general_purpose::STANDARD.encode(&leaf.der)}]);
    let pushed = push(
        "bundle",
        &["blob", "push"],
        &serde_json::to_vec(&bundle)?,
        &|digest| format!("{repository}@{digest}"),
    )?;
    layer["digest"] = pushed["digest"].clone();
    layer["size"] = pushed["size"].clone();
    let pushed = push(
        "manifest",
        &["manifest", "push", "--media-type", MANIFEST],
        &serde_json::to_vec(&manifest)?,
        &|digest| format!("{repository}@{digest}"),
    )?;
    entry["digest"] = pushed["digest"].clone();
    entry["size"] = pushed["size"].clone();
    push(
        "index",
        &["manifest", "push", "--media-type", INDEX],
        &serde_json::to_vec(&index)?,
        &|_| index_tag.clone(),
    )?;
    Ok(())
}

/// Records every layer of `reference`'s `.sig` manifest that has no log
/// entry yet in `log`, as Rekor records a cosign signature (a
/// `hashedrekord` of the payload, signature and certificate), and pushes
/// the manifest back with the entries' bundle annotations.
fn record_in_log(
    tools: &Tools,
    registry: &Registry,
    dir: &Path,
    log: &mut Log,
    reference: &str,
) -> Result<()> {
    let (repository, digest) = reference.split_once('@').context("not pinned")?;
    let sig_tag = format!("{repository}:{}.sig", digest.replace(':', "-"));
    let mut manifest = ok_json(
        Command::new(&tools.oras)
            .args(["manifest", "fetch", "--plain-http"])
            .arg(&sig_tag),
    )?;
    let layers = manifest["layers"].as_array_mut().context("no layers")?;
    for layer in layers.iter_mut() {
        if layer["mediaType"] != SIMPLE_SIGNING
            || !layer["annotations"]["dev.sigstore.cosign/bundle"].is_null()
        {
            continue;
        }
        let payload = std::fs::read(
            registry.blob(layer["digest"].as_str().context("a layer without digest")?),
        )?;
        let annotations = &mut layer["annotations"];
        let signature = base64::engine::general_purpose::STANDARD.decode(
            annotations["dev.cosignproject.cosign/signature"]
                .as_str()
                .context("no signature annotation")?,
        )?;
        let certificate = annotations["dev.sigstore.cosign/certificate"]
            .as_str()
            .context("no certificate annotation")?
            .to_string();
        let body = log.hashedrekord(&payload, &signature, &certificate);
        let entry = log.append(body, now());
        annotations["dev.sigstore.cosign/bundle"] = json!(entry.cosign_bundle_annotation());
    }
    let file = dir.join("sig-manifest.json");
    std::fs::write(&file, serde_json::to_vec(&manifest)?)?;
    ok(Command::new(&tools.oras)
        .args(["manifest", "push", "--plain-http", "--media-type", MANIFEST])
        .arg(&sig_tag)
        .arg(&file))?;
    Ok(())
}

/// Copies the module `reference` (pinned) and its `.sig` tag to
/// `repository` of the same registry with `oras cp`; the copy, pinned.
fn copy_with_signature(tools: &Tools, reference: &str, repository: &str) -> Result<String> {
    let (from, digest) = reference.split_once('@').context("not pinned")?;
    let registry = from.split_once('/').context("no registry")?.0;
    let to = format!("{registry}/{repository}");
    let sig = |repository: &str| format!("{repository}:{}.sig", digest.replace(':', "-"));
    for (source, target) in [
        (reference.to_string(), format!("{to}@{digest}")),
        (sig(from), sig(&to)),
    ] {
        ok(Command::new(&tools.oras)
            .args(["cp", "--from-plain-http", "--to-plain-http"])
            .arg(&source)
            .arg(&target))?;
    }
    Ok(format!("{to}@{digest}"))
}

/// Pushes a variant of the installed MCN guest (its custom section names
/// it) as `REPOSITORY:v1`; the reference pinned by digest and the
/// module's sha256.
fn push(registry: &Registry, dir: &Path, repository: &str, mcn: &[u8]) -> Result<(String, String)> {
    let bytes = with_custom_section(mcn, "mco-e2e-signing", repository.as_bytes());
    let file = dir.join(format!("{}.wasm", repository.replace('/', "-")));
    std::fs::write(&file, &bytes)?;
    let pushed = ok_json(
        Command::new(host_binary()?)
            .args(["--plain-http-registry", &registry.addr.to_string()])
            .args(["guests", "push"])
            .arg(&file)
            .arg(registry.reference(&format!("{repository}:v1"))),
    )?;
    let pinned = pushed["pinned"].as_str().context("no pinned reference")?;
    Ok((pinned.to_string(), sha256(&bytes)))
}

/// Base64 of PEM, as a ClusterImagePolicy's `[]byte` fields hold it.
fn data(pem: &str) -> Result<Value> {
    Ok(serde_json::to_value(ByteString(pem.as_bytes().to_vec()))?)
}

fn policy(name: &str, scope: &str, root_of_trust: Value) -> Value {
    json!({
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterImagePolicy",
        "metadata": {"name": name},
        "spec": {"scopes": [scope], "policy": {"rootOfTrust": root_of_trust}},
    })
}

/// `mco-host guests verify` with `args`: its JSON, or its stderr.
fn guests_verify(registry: &Registry, args: &[&str]) -> Result<Result<Value, String>> {
    let out = run(Command::new(host_binary()?)
        .args(["--plain-http-registry", &registry.addr.to_string()])
        .args(["guests", "verify"])
        .args(args))?;
    if !out.status.success() {
        ensure!(
            out.status.code() == Some(2),
            "guests verify {args:?}: {out:?}"
        );
        return Ok(Err(String::from_utf8_lossy(&out.stderr).into_owned()));
    }
    Ok(Ok(serde_json::from_slice(&out.stdout)?))
}

/// Points the MachineConfigGuest at `module` (pinned reference, sha256)
/// and waits until it serves.
async fn swap_to(fx: &mut Fixture, module: &(String, String), serving: &str) -> Result<()> {
    let patch = json!({"spec": {"oci": module.0}});
    patch_guest_object(fx, "mcn", &patch).await?;
    wait_guest_object(fx, "mcn", serving, SWAP_TIMEOUT, serves(&module.1)).await?;
    Ok(())
}

/// `guests verify` of `module` under the ClusterImagePolicy file
/// `policy` refuses it, saying each of `why`.
fn verify_refused(registry: &Registry, module: &str, policy: &str, why: &[&str]) -> Result<()> {
    let refused = guests_verify(registry, &[module, "--cluster-image-policy", policy])?;
    ensure!(
        refused
            .as_ref()
            .is_err_and(|e| why.iter().all(|w| e.contains(w))),
        "{refused:?}"
    );
    Ok(())
}

async fn certificate_policies(fx: &mut Fixture) -> Result<()> {
    let mcn = installed_guest("mcn.wasm")?;
    let tools = support::oci::tools()?;
    let registry = Registry::start(&tools.registry)?;
    let addr = registry.addr.to_string();
    let work = tempfile::tempdir()?;
    let dir = work.path();
    let signers = Signers::new();
    let chain = signers.chain();
    let mut log = Log::new("rekor.mco-e2e");
    let sign = |signer: (&str, &Leaf), form: Form, reference: &str| {
        sign_with_certificate(&tools, dir, signer, &chain, form, reference)
    };

    // PKI: one module signed by ci@, one by dev@ (the wrong identity).
    let pki_good = push(&registry, dir, "pki/good", &mcn)?;
    let pki_wrong = push(&registry, dir, "pki/wrong", &mcn)?;
    sign(("ci", &signers.ci), Form::Legacy, &pki_good.0)?;
    sign(("dev", &signers.dev), Form::Legacy, &pki_wrong.0)?;
    // The same policy in cosign 3's own form, a Sigstore bundle: one by
    // ci@, and one by dev@ whose bundle then claims ci@'s certificate.
    let pki_bundle = push(&registry, dir, "pki/bundle", &mcn)?;
    let pki_forged = push(&registry, dir, "pki/forged", &mcn)?;
    sign(("ci", &signers.ci), Form::Bundle, &pki_bundle.0)?;
    sign(("dev", &signers.dev), Form::Bundle, &pki_forged.0)?;
    swap_bundle_certificate(&tools, &registry, dir, &pki_forged.0, &signers.ci)?;
    // A module signed by ci@ in pki/elsewhere, copied with its signature
    // to pki/copy (the same digest): the signature claims the other
    // repository, which the policy's signedIdentity refuses.
    let elsewhere = push(&registry, dir, "pki/elsewhere", &mcn)?;
    sign(("ci", &signers.ci), Form::Legacy, &elsewhere.0)?;
    let copy = copy_with_signature(&tools, &elsewhere.0, "pki/copy")?;
    // Fulcio and Rekor: one signature recorded in the log, one not.
    let logged = push(&registry, dir, "fulcio/logged", &mcn)?;
    let unlogged = push(&registry, dir, "fulcio/unlogged", &mcn)?;
    for (module, record) in [(&logged, true), (&unlogged, false)] {
        sign(("ci", &signers.ci), Form::Legacy, &module.0)?;
        if record {
            record_in_log(&tools, &registry, dir, &mut log, &module.0)?;
        }
    }
    // The quorum: signed by ci@ (recorded) only, for now.
    let quorum = push(&registry, dir, "quorum/mcn", &mcn)?;
    sign(("ci", &signers.ci), Form::Legacy, &quorum.0)?;
    record_in_log(&tools, &registry, dir, &mut log, &quorum.0)?;

    let mut pki_policy = policy(
        "pki",
        &format!("{addr}/pki"),
        json!({"policyType": "PKI", "pki": {
            "caRootsData": data(&signers.root.pem())?,
            "caIntermediatesData": data(&signers.ca.pem())?,
            "pkiCertificateSubject": {"email": "ci@example.com"},
        }}),
    );
    pki_policy["spec"]["policy"]["signedIdentity"] = json!({"matchPolicy": "MatchRepository"});
    let fulcio_policy = policy(
        "fulcio",
        &format!("{addr}/fulcio"),
        json!({"policyType": "FulcioCAWithRekor", "fulcioCAWithRekor": {
            "fulcioCAData": data(&chain)?,
            "rekorKeyData": data(&log.public_key_pem())?,
            "fulcioSubject": {"oidcIssuer": ISSUER, "signedEmail": "ci@example.com"},
        }}),
    );

    // guests verify, before any entry points at a module.
    let pki_file = dir.join("pki-policy.json");
    let fulcio_file = dir.join("fulcio-policy.json");
    std::fs::write(&pki_file, pki_policy.to_string())?;
    std::fs::write(&fulcio_file, fulcio_policy.to_string())?;
    let pki_arg = pki_file.display().to_string();
    let fulcio_arg = fulcio_file.display().to_string();
    let shown = guests_verify(
        &registry,
        &[&pki_good.0, "--cluster-image-policy", &pki_arg],
    )?
    .map_err(anyhow::Error::msg)?;
    let met = &shown["signatures"][0]["met"][0];
    ensure!(
        met["requirement"] == "clusterimagepolicy/pki"
            && met["subjects"] == json!(["ci@example.com"])
            && met["issuer"] == ISSUER
            && met["log"].is_null(),
        "{shown}"
    );
    let shown = guests_verify(
        &registry,
        &[&pki_bundle.0, "--cluster-image-policy", &pki_arg],
    )?
    .map_err(anyhow::Error::msg)?;
    let signature = &shown["signatures"][0];
    ensure!(
        signature["form"] == "sigstore-bundle"
            && signature["met"][0]["requirement"] == "clusterimagepolicy/pki"
            && signature["met"][0]["subjects"] == json!(["ci@example.com"]),
        "{shown}"
    );
    verify_refused(&registry, &pki_forged.0, &pki_arg, &[BAD_SIGNATURE])?;
    let shown = guests_verify(
        &registry,
        &[&logged.0, "--cluster-image-policy", &fulcio_arg],
    )?
    .map_err(anyhow::Error::msg)?;
    let met = &shown["signatures"][0]["met"][0];
    ensure!(
        met["requirement"] == "clusterimagepolicy/fulcio"
            && met["log"]["index"].is_u64()
            && met["signedAt"].is_string(),
        "{shown}"
    );
    verify_refused(
        &registry,
        &pki_wrong.0,
        &pki_arg,
        &["wrong identity", "dev@example.com"],
    )?;

    // The cluster: both policies, and the MachineConfigGuest.
    let policies: Api<DynamicObject> = Api::all_with(
        fx.admin.clone(),
        &mco_e2e::openshift::cluster_image_policy(),
    );
    apply_as_test(&policies, "pki", &pki_policy).await?;
    apply_as_test(&policies, "fulcio", &fulcio_policy).await?;
    apply_guest_object(
        fx,
        &json!({
            "apiVersion": "mco-wasm.io/v1alpha1",
            "kind": "MachineConfigGuest",
            "metadata": {"name": "mcn"},
            "spec": {"job": "mcn", "oci": pki_good.0, "verify": {"clusterImagePolicies": true}},
        }),
    )
    .await?;
    let args = [
        "--registry-crd",
        "--registry-poll",
        "500ms",
        "--plain-http-registry",
        &addr,
    ];
    let c = fx.start_controller("mco-host-0", &args).await?;
    wait_guest_object(
        fx,
        "mcn",
        "PKI module serving",
        SWAP_TIMEOUT,
        serves(&pki_good.1),
    )
    .await?;

    let wrong_identity = "by any of the keys tried (clusterimagepolicy/pki): simple-signing: wrong identity: \
                          the certificate's subjects [dev@example.com] do not match email \"ci@example.com\"";
    let patch = json!({"spec": {"oci": pki_wrong.0}});
    refused_while_serving(
        fx,
        c,
        &patch,
        ("signature_failure", wrong_identity),
        &pki_good.1,
    )
    .await?;

    // cosign 3's bundle serves; the forged one is refused, it serving.
    swap_to(fx, &pki_bundle, "the bundle-signed module serving").await?;
    let patch = json!({"spec": {"oci": pki_forged.0}});
    let forged = ("signature_failure", BAD_SIGNATURE);
    refused_while_serving(fx, c, &patch, forged, &pki_bundle.1).await?;
    let patch = json!({"spec": {"oci": copy}});
    let claims_elsewhere = format!(
        "simple-signing: signed identity: the signature claims {addr}/pki/elsewhere, not repository \
         {addr}/pki/copy (signedIdentity MatchRepository)"
    );
    let claimed = ("signature_failure", claims_elsewhere.as_str());
    refused_while_serving(fx, c, &patch, claimed, &pki_bundle.1).await?;

    swap_to(fx, &logged, "the logged module serving").await?;
    let not_in_log = "(clusterimagepolicy/fulcio): simple-signing: no transparency log entry";
    let patch = json!({"spec": {"oci": unlogged.0}});
    refused_while_serving(fx, c, &patch, ("signature_failure", not_in_log), &logged.1).await?;

    // The entry's own trusted root (a ConfigMap) and two required signers.
    let trusted_root = trusted_root_json(&[&[&signers.ca, &signers.root]], &[&log]);
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("sigstore".into()),
            ..ObjectMeta::default()
        },
        data: Some([("trusted_root.json".to_string(), trusted_root)].into()),
        ..ConfigMap::default()
    };
    apply_configmap(fx, "sigstore", &cm).await?;
    let identity =
        |email: &str| json!({"identity": {"issuer": ISSUER, "subject": {"equal": email}}});
    let patch = json!({"spec": {"oci": quorum.0, "verify": {
        "clusterImagePolicies": null,
        "trustedRoot": {"configMap": {"name": "sigstore", "key": "trusted_root.json"}},
        "allOf": [identity("ci@example.com"), identity("review@example.com")],
    }}});
    let one_of_two = format!(
        "the signatures of {} do not meet the signature policy: allOf: 1 of 2 required signatures; \
         identity review@example.com from {ISSUER}: simple-signing: wrong identity",
        quorum.0.rsplit_once('@').map_or("", |(_, d)| d)
    );
    refused_while_serving(fx, c, &patch, ("signature_failure", &one_of_two), &logged.1).await?;
    // The reviewer signs too: both signatures count, the module serves.
    sign(("review", &signers.review), Form::Legacy, &quorum.0)?;
    record_in_log(&tools, &registry, dir, &mut log, &quorum.0)?;
    wait_guest_object(
        fx,
        "mcn",
        "the quorum module serving",
        SWAP_TIMEOUT,
        serves(&quorum.1),
    )
    .await?;
    eprintln!(
        "certificate policies: PKI (legacy .sig and cosign 3's Sigstore bundle) and \
         FulcioCAWithRekor modules served, 5 refusals (wrong identity, a bundle claiming \
         another signer's certificate, a signature claiming another repository, not in the \
         log, 1 of 2 required signatures) with the module before serving, the quorum met \
         once the reviewer signed; no Rekor server: the test's own log recorded cosign's \
         signatures"
    );
    Ok(())
}
