//! `mco-host guests push|pull|inspect`: guests as OCI artifacts in the
//! CNCF TAG Runtime layout, from the command line (see mco-fetch's oci/);
//! `guests verify` is verify.rs.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use oci_client::secrets::RegistryAuth;
use serde_json::{Value, json};

use super::offline::{in_cluster_only, no_policies, runtime};
use super::{Failure, SandboxArgs};
use crate::JOBS;
use mco_fetch::oci::{
    CREATED, ComponentInfo, CredentialsError, LookupError, WasmConfig, docker_auth, parse_reference,
};
use mco_fetch::signature_policy::Policy;
use mco_registry::entries::{KeySource, OciSource, Verify};
use mco_registry::read_policy;
use mco_registry_formats::blob::digest;
use mco_registry_formats::cosign::Signature;
use mco_runtime::{GuestModule, LoadError, interfaces, same_interface};

/// Why `guests push|pull|inspect` failed around the registry call itself
/// (a refused pull is a [`PullError`]).
#[derive(Debug, thiserror::Error)]
pub(super) enum GuestsError {
    #[error("--auth-file {}: {error}", path.display())]
    AuthFile { path: PathBuf, error: io::Error },
    #[error("--auth-file {}: {error}", path.display())]
    Credentials {
        path: PathBuf,
        error: CredentialsError,
    },
    #[error("{reference}: {error}")]
    Reference {
        reference: String,
        error: oci_client::ParseError,
    },
    #[error("{}: {error}", path.display())]
    Read { path: PathBuf, error: io::Error },
    #[error("writing {}: {error}", path.display())]
    Write { path: PathBuf, error: io::Error },
    #[error("oci:{target}: signatures: {error}")]
    Signatures { target: String, error: LookupError },
}

/// The actions on one module, each printing JSON.
#[derive(Subcommand)]
pub(super) enum OciAction {
    /// Push a guest component as an OCI artifact (config
    /// application/vnd.wasm.config.v0+json with its exports and imports,
    /// one application/wasm layer); prints the manifest digest.
    Push {
        file: PathBuf,
        /// `registry/repository:tag`.
        reference: String,
        #[command(flatten)]
        auth: AuthArgs,
    },
    /// Pull a guest module (CNCF or Kubewarden layout) into a file; with
    /// `--key`, only if a cosign signature verifies under one of the keys.
    Pull {
        reference: String,
        #[command(flatten)]
        keys: KeyArgs,
        /// Where to write the module (default: the repository's last part
        /// with `.wasm`, in the current directory).
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        auth: AuthArgs,
    },
    /// Show a module's world, WIT version, imports, size and digest, and
    /// whether `run` would load it (exit status 3 when it would refuse it),
    /// from a file, or from a registry for `oci:REF` or a reference that
    /// starts with a registry host (`quay.io/…`, `host:port/…`), with the
    /// cosign signatures the registry holds for it (verified when `--key`
    /// is given).
    Inspect {
        target: String,
        #[command(flatten)]
        keys: KeyArgs,
        #[command(flatten)]
        auth: AuthArgs,
    },
}

#[derive(Args)]
pub(super) struct AuthArgs {
    /// A Docker config.json (or a Secret's `.dockerconfigjson`) with
    /// credentials for the registry (default: anonymous).
    #[arg(long, value_name = "FILE", env = "MCO_REGISTRY_AUTH_FILE")]
    auth_file: Option<PathBuf>,
}

#[derive(Args)]
pub(super) struct KeyArgs {
    /// A cosign public key (`cosign.pub`); repeat for several, any one of
    /// which may have signed the module.
    #[arg(long = "key", value_name = "FILE")]
    keys: Vec<PathBuf>,
}

impl KeyArgs {
    /// The policy "any one of the keys", or none when no `--key` was given.
    fn read(&self, reference: &str) -> Result<Option<Policy>, Failure> {
        if self.keys.is_empty() {
            return Ok(None);
        }
        let keys = self.keys.iter().cloned().map(KeySource::File).collect();
        let source = OciSource {
            verify: Some(Verify::keys(keys)),
            ..OciSource::anonymous(reference)
        };
        let policies = no_policies();
        let policy = read_policy(&source, in_cluster_only, &policies);
        Ok(runtime()?.block_on(policy)?)
    }
}

impl AuthArgs {
    pub(super) fn auth(&self, reference: &str) -> Result<RegistryAuth, GuestsError> {
        let Some(path) = &self.auth_file else {
            return Ok(RegistryAuth::Anonymous);
        };
        let json = std::fs::read(path).map_err(|error| GuestsError::AuthFile {
            path: path.clone(),
            error,
        })?;
        let parsed = reference_of(reference)?;
        docker_auth(&json, &parsed).map_err(|error| GuestsError::Credentials {
            path: path.clone(),
            error,
        })
    }
}

fn reference_of(reference: &str) -> Result<oci_client::Reference, GuestsError> {
    parse_reference(reference).map_err(|error| GuestsError::Reference {
        reference: reference.to_string(),
        error,
    })
}

pub(super) fn run(sandbox: &SandboxArgs, action: OciAction) -> Result<Value, Failure> {
    let oci = sandbox.oci();
    let tokio = runtime()?;
    match action {
        OciAction::Push {
            file,
            reference,
            auth,
        } => {
            let bytes = read(&file)?;
            let (exports, imports) =
                interfaces(&sandbox.runtime()?, &file.display().to_string(), &bytes)?;
            let title = file
                .file_name()
                .map_or_else(|| "guest.wasm".into(), |n| n.to_string_lossy().into_owned());
            let artifact = Artifact {
                bytes,
                component: ComponentInfo { exports, imports },
                title,
                annotations: BTreeMap::new(),
            };
            publish(sandbox, &reference, artifact, &auth)
        }
        OciAction::Pull {
            reference,
            keys,
            output,
            auth,
        } => {
            let policy = keys.read(&reference)?;
            let auth = auth.auth(&reference)?;
            let pulled = tokio.block_on(oci.pull(&reference, &auth, policy.as_ref(), None))?;
            let output = match output {
                Some(path) => path,
                None => default_output(&reference)?,
            };
            std::fs::write(&output, pulled.bytes.as_slice()).map_err(|error| {
                GuestsError::Write {
                    path: output.clone(),
                    error,
                }
            })?;
            Ok(json!({
                "reference": reference,
                "manifestDigest": pulled.manifest_digest,
                "layerMediaType": pulled.layer_media_type,
                "sha256": digest(&pulled.bytes),
                "size": pulled.bytes.len(),
                "file": output.display().to_string(),
                "verifiedBy": pulled.verified_by,
            }))
        }
        OciAction::Inspect { target, keys, auth } => {
            let (bytes, pulled_from) = match registry_reference(&target) {
                None => (read(Path::new(&target))?, Value::Null),
                Some(target) => {
                    let policy = keys.read(target)?;
                    let auth = auth.auth(target)?;
                    let pulled = tokio.block_on(oci.pull(target, &auth, None, None))?;
                    let reference = reference_of(target)?;
                    let signatures = tokio
                        .block_on(oci.signatures(&reference, &pulled.manifest_digest, &auth))
                        .map_err(|error| GuestsError::Signatures {
                            target: target.to_string(),
                            error,
                        })?;
                    let pulled_from = json!({
                        "manifestDigest": pulled.manifest_digest,
                        "layerMediaType": pulled.layer_media_type,
                        "config": pulled.config,
                        "signatures": signatures_json(&signatures, &pulled.manifest_digest, policy.as_ref()),
                    });
                    (pulled.bytes.to_vec(), pulled_from)
                }
            };
            let runtime = sandbox.runtime()?;
            let (exports, imports) = interfaces(&runtime, &target, &bytes)?;
            let (world, wit_version) = world_of(&exports);
            let refused = run_refusal(&runtime, &target, &bytes, world);
            let shown = json!({
                "target": target,
                "world": world,
                "witVersion": wit_version,
                "exports": exports,
                "imports": imports,
                "size": bytes.len(),
                "sha256": digest(&bytes),
                "registry": pulled_from,
                "runRefuses": refused.as_ref().map(ToString::to_string),
            });
            match refused {
                None => Ok(shown),
                Some(refused) => {
                    super::print(&format!("{shown}\n"))?;
                    Err(refused.into())
                }
            }
        }
    }
}

/// Each signature's form and, when keys were given, the key it verifies
/// under or why none does.
fn signatures_json(
    signatures: &[Signature],
    manifest_digest: &str,
    keys: Option<&Policy>,
) -> Value {
    signatures
        .iter()
        .map(|s| {
            let mut shown = json!({"form": s.form()});
            if let Some(keys) = keys {
                let alone = std::slice::from_ref(s);
                // Keys only: the signing time is not looked at.
                shown["verified"] = match keys.verify(alone, manifest_digest, 0) {
                    Ok(verdict) => json!({"key": verdict.signers()}),
                    Err(why) => json!({"error": why.to_string()}),
                };
            }
            shown
        })
        .collect()
}

fn read(path: &Path) -> Result<Vec<u8>, GuestsError> {
    std::fs::read(path).map_err(|error| GuestsError::Read {
        path: path.to_path_buf(),
        error,
    })
}

/// The job worlds this host calls, with the interface each exports: one
/// per job of [`JOBS`].
fn worlds() -> impl Iterator<Item = (&'static str, &'static str)> {
    JOBS.iter()
        .map(|job| (job.contract().world, job.interface()))
}

/// What `inspect` reads from a registry: `oci:REF`, or a reference whose
/// first component is a registry host (it has a `.` or a `:`, or is
/// `localhost`), as Docker tells a host from a repository. Anything else,
/// and any file that exists, is a file, so a mistyped path is a missing
/// file rather than a lookup on Docker Hub.
fn registry_reference(target: &str) -> Option<&str> {
    if let Some(reference) = target.strip_prefix("oci:") {
        return Some(reference);
    }
    if Path::new(target).exists() {
        return None;
    }
    let (first, _) = target.split_once('/')?;
    let host = !matches!(first, "." | "..")
        && (first.contains('.') || first.contains(':') || first == "localhost");
    host.then_some(target)
}

/// Why `run` would refuse the module, with the checks it makes on a
/// module it loads (imports, world, WIT version): against the world it
/// exports, or, exporting none, against each job's, the clearest refusal
/// first (a forbidden import or another version over "wrong world").
fn run_refusal(
    runtime: &mco_runtime::Runtime,
    name: &str,
    bytes: &[u8],
    world: Option<&str>,
) -> Option<LoadError> {
    let mut refusals: Vec<LoadError> = Vec::new();
    for (candidate, interface) in worlds() {
        if world.is_some_and(|w| w != candidate) {
            continue;
        }
        match GuestModule::from_bytes(runtime, name, bytes, interface) {
            Ok(_) => return None,
            Err(refused) => refusals.push(refused),
        }
    }
    refusals.sort_by_key(|refused| matches!(refused, LoadError::WrongWorld { .. }));
    refusals.into_iter().next()
}

/// The job world a module's exports serve, and the version of its
/// interface.
fn world_of(exports: &[String]) -> (Option<&'static str>, Option<String>) {
    for (world, interface) in worlds() {
        if let Some(found) = exports.iter().find(|e| same_interface(e, interface)) {
            let version = found.split_once('@').map(|(_, v)| v.to_string());
            return (Some(world), version);
        }
    }
    (None, None)
}

/// What `guests push` and `guests wit --push` publish: a component's
/// bytes, what its config lists, the layer's file name and the manifest's
/// annotations.
pub(super) struct Artifact {
    pub bytes: Vec<u8>,
    pub component: ComponentInfo,
    pub title: String,
    pub annotations: BTreeMap<String, String>,
}

/// Pushes `artifact` in the CNCF layout and prints what a user pins: the
/// manifest digest, the pinned reference and the layer's sha256 and size.
pub(super) fn publish(
    sandbox: &SandboxArgs,
    reference: &str,
    artifact: Artifact,
    auth: &AuthArgs,
) -> Result<Value, Failure> {
    let config = WasmConfig {
        created: Some(CREATED.into()),
        architecture: "wasm".into(),
        os: "wasip2".into(),
        layer_digests: Vec::new(),
        component: Some(artifact.component),
    };
    let (size, sha256) = (artifact.bytes.len(), digest(&artifact.bytes));
    let auth = auth.auth(reference)?;
    let manifest = runtime()?.block_on(sandbox.oci().push(
        reference,
        artifact.bytes,
        config,
        &artifact.title,
        artifact.annotations,
        &auth,
    ))?;
    Ok(json!({
        "reference": reference,
        "manifestDigest": manifest,
        "pinned": format!("{}@{manifest}", strip_tag(reference)),
        "sha256": sha256,
        "size": size,
    }))
}

/// `registry/repo:tag` → `registry/repo`, for the pinned form.
pub(super) fn strip_tag(reference: &str) -> &str {
    let without_digest = reference.split('@').next().unwrap_or(reference);
    let last_slash = without_digest.rfind('/').map_or(0, |i| i + 1);
    match without_digest[last_slash..].find(':') {
        Some(colon) => &without_digest[..last_slash + colon],
        None => without_digest,
    }
}

fn default_output(reference: &str) -> Result<PathBuf, GuestsError> {
    let parsed = reference_of(reference)?;
    let name = parsed.repository().rsplit('/').next().unwrap_or("guest");
    Ok(PathBuf::from(format!("{name}.wasm")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_references_drop_the_tag_but_keep_a_registry_port() {
        assert_eq!(strip_tag("127.0.0.1:5000/g/mcn:v1"), "127.0.0.1:5000/g/mcn");
        assert_eq!(strip_tag("127.0.0.1:5000/g/mcn"), "127.0.0.1:5000/g/mcn");
        assert_eq!(strip_tag("q.io/g/mcn:v1@sha256:ab"), "q.io/g/mcn");
    }

    #[test]
    fn only_oci_or_a_registry_host_goes_to_a_registry() {
        for file in [
            "mcn.wasm",
            "/tmp/nope.wasm",
            "./g/mcn.wasm",
            "target/release/guests/mcn.wasm",
        ] {
            assert_eq!(registry_reference(file), None, "{file}");
        }
        for (target, reference) in [
            ("quay.io/team/mcn:v2", "quay.io/team/mcn:v2"),
            ("127.0.0.1:5000/g/mcn", "127.0.0.1:5000/g/mcn"),
            ("localhost/g/mcn", "localhost/g/mcn"),
            ("oci:team/mcn:v2", "team/mcn:v2"),
        ] {
            assert_eq!(registry_reference(target), Some(reference), "{target}");
        }
    }

    #[test]
    fn the_world_is_named_by_the_interface_exported() {
        let mcn = vec!["mco:machine-config/node-state@0.6.1".to_string()];
        assert_eq!(
            world_of(&mcn),
            (Some("node-state-reporter"), Some("0.6.1".into()))
        );
        // The previous minor of a 0.x contract is not a world this host calls.
        let previous = vec!["mco:machine-config/node-state@0.5.2".to_string()];
        assert_eq!(world_of(&previous), (None, None));
        let other = vec!["wasi:http/incoming-handler@0.2.0".to_string()];
        assert_eq!(world_of(&other), (None, None));
    }
}
