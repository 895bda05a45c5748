//! `mco-host guests wit [DIR] | --push REF`: the WIT package guests are
//! built against, as files for a guest's tooling, or published in the OCI
//! layout the wasm-pkg tools (`wkg`) read, so any language's tooling can
//! fetch `mco:machine-config@<version>` from a registry. The layout is
//! wasm-pkg-client's (`oci/publisher.rs`, on `oci-wasm`): a CNCF wasm config
//! listing the package's worlds and interfaces, one `application/wasm` layer
//! titled `<name>.wasm`, and the version as the manifest's
//! `org.opencontainers.image.version`. wkg maps `mco:machine-config@0.6.0` to
//! `<registry>/mco/machine-config:0.6.0`, so a REF without a tag is pushed
//! under the package version.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{Value, json};

use super::guests::{Artifact, AuthArgs, GuestsError, publish, strip_tag};
use super::{Failure, SandboxArgs};
use mco_fetch::oci::{ComponentInfo, VERSION_ANNOTATION};

#[derive(Args)]
pub(super) struct WitArgs {
    /// Where to write the files.
    #[arg(value_name = "DIR", default_value = "wit", conflicts_with = "push")]
    dir: PathBuf,
    /// Publish the package to this OCI reference (`registry/repository`,
    /// tag default: the package version) in the layout wkg reads, instead
    /// of writing files; prints the manifest digest.
    #[arg(long, value_name = "REF")]
    push: Option<String>,
    #[command(flatten)]
    auth: AuthArgs,
}

pub(super) fn run(sandbox: &SandboxArgs, args: WitArgs) -> Result<Value, Failure> {
    match &args.push {
        None => Ok(write(&args.dir)?),
        Some(reference) => push(sandbox, &with_version_tag(reference), &args.auth),
    }
}

/// Writes the embedded WIT package, each file whole.
pub(super) fn write(dir: &Path) -> Result<Value, GuestsError> {
    let write = |path: PathBuf, error| GuestsError::Write { path, error };
    std::fs::create_dir_all(dir).map_err(|e| write(dir.to_path_buf(), e))?;
    let mut files = Vec::new();
    for (name, text) in crate::wit::FILES {
        let path = dir.join(name);
        mco_registry_formats::blob::write_atomically(&path, text.as_bytes())
            .map_err(|e| write(path.clone(), e))?;
        files.push(path.display().to_string());
    }
    Ok(json!({"package": crate::wit::package(), "files": files}))
}

fn push(sandbox: &SandboxArgs, reference: &str, auth: &AuthArgs) -> Result<Value, Failure> {
    let encode = |e: crate::wit::EncodeError| Failure::Other(e.to_string());
    let artifact = Artifact {
        bytes: crate::wit::encode().map_err(encode)?,
        component: ComponentInfo {
            exports: crate::wit::exports().map_err(encode)?,
            imports: Vec::new(),
        },
        title: format!("{}.wasm", crate::wit::name()),
        annotations: BTreeMap::from([(
            VERSION_ANNOTATION.to_string(),
            crate::wit::version().to_string(),
        )]),
    };
    let mut published = publish(sandbox, reference, artifact, auth)?;
    published["package"] = json!(crate::wit::package());
    Ok(published)
}

/// `REF` with the package version as its tag when it names none, where
/// wkg looks for the package.
fn with_version_tag(reference: &str) -> String {
    if strip_tag(reference) == reference {
        format!("{reference}:{}", crate::wit::version())
    } else {
        reference.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_without_a_tag_gets_the_package_version() {
        let v = crate::wit::version();
        for (given, pushed) in [
            (
                "127.0.0.1:5000/mco/machine-config",
                format!("127.0.0.1:5000/mco/machine-config:{v}"),
            ),
            (
                "q.io/team/mco/machine-config:edge",
                "q.io/team/mco/machine-config:edge".into(),
            ),
            (
                "q.io/mco/machine-config@sha256:ab",
                "q.io/mco/machine-config@sha256:ab".into(),
            ),
        ] {
            assert_eq!(with_version_tag(given), pushed, "{given}");
        }
    }
}
