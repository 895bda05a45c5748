//! Which stream architecture a MachineSet's machines run on.
//!
//! Stream metadata is keyed by RPM architecture names (`x86_64`, `aarch64`),
//! while Kubernetes labels use Go names (`amd64`, `arm64`); picking the wrong
//! one puts x86 images on arm workers (OCPBUGS-69674), so anything unexpected
//! is an error or a skip rather than a guess.

use crate::machineset::{MachineKind, MachineSetView};

/// Set by the MAPI controller; the arch is one of its comma-separated labels.
pub const ARCH_ANNOTATION: &str = "capacity.cluster-autoscaler.kubernetes.io/labels";
const ARCH_LABEL_PREFIX: &str = "kubernetes.io/arch=";

/// Why no architecture could be determined.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchError {
    #[error("invalid architecture value found in annotation: {0}")]
    InvalidValue(String),
    #[error("kubernetes.io/arch label not found in annotation: {0}")]
    LabelNotFound(String),
    /// On a multi-arch cluster the control-plane arch says nothing about the
    /// workers, so the MachineSet waits until MAPI has annotated it.
    #[error("no architecture annotation found on machineset {0}")]
    NoAnnotation(String),
}

/// The four architectures RHCOS ships, as Kubernetes names them and as
/// the stream does.
const KUBE_AND_STREAM: [(&str, &str); 4] = [
    ("amd64", "x86_64"),
    ("arm64", "aarch64"),
    ("ppc64le", "ppc64le"),
    ("s390x", "s390x"),
];

/// `amd64` → `x86_64` etc., for the four architectures RHCOS ships.
pub fn stream_arch_from_kube(kube_arch: &str) -> Option<&'static str> {
    KUBE_AND_STREAM
        .iter()
        .find(|(kube, _)| *kube == kube_arch)
        .map(|(_, stream)| *stream)
}

/// `x86_64` → `amd64` etc.: the name `oc` and the `kubernetes.io/arch`
/// label show an admin, for views that speak to one.
pub fn kube_arch_from_stream(stream_arch: &str) -> Option<&'static str> {
    KUBE_AND_STREAM
        .iter()
        .find(|(_, stream)| *stream == stream_arch)
        .map(|(kube, _)| *kube)
}

/// The stream architecture of a host as Rust names it
/// (`std::env::consts::ARCH`), so a host can pass its own arch as the
/// control-plane arch without a table of its own.
pub fn stream_arch_from_rust(rust_arch: &str) -> Option<&'static str> {
    match rust_arch {
        "x86_64" => Some("x86_64"),
        "aarch64" => Some("aarch64"),
        "powerpc64" => Some("ppc64le"),
        "s390x" => Some("s390x"),
        _ => None,
    }
}

/// `getArchFromMachineSet`: the annotation wins; without it a single-arch
/// cluster uses the control-plane arch and a multi-arch cluster gives up.
/// A ControlPlaneMachineSet's machines are the control plane, so its
/// annotations and `Multi` play no part (upstream
/// `syncControlPlaneMachineSets`).
pub fn machineset_arch(
    ms: &MachineSetView,
    control_plane_arch: &str,
    multi_arch: bool,
) -> Result<String, ArchError> {
    if ms.kind == MachineKind::ControlPlaneMachineSet {
        return Ok(control_plane_arch.to_owned());
    }
    let Some(annotation) = ms.annotations.get(ARCH_ANNOTATION) else {
        if multi_arch {
            return Err(ArchError::NoAnnotation(ms.name.clone()));
        }
        return Ok(control_plane_arch.to_owned());
    };
    for item in annotation.split(',') {
        if let Some(value) = item.trim().strip_prefix(ARCH_LABEL_PREFIX) {
            return stream_arch_from_kube(value)
                .map(str::to_owned)
                .ok_or_else(|| ArchError::InvalidValue(value.to_owned()));
        }
    }
    Err(ArchError::LabelNotFound(annotation.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ms(annotation: Option<&str>) -> MachineSetView {
        let mut o = json!({"metadata": {"name": "ms1", "annotations": {}}});
        if let Some(a) = annotation {
            o["metadata"]["annotations"][ARCH_ANNOTATION] = json!(a);
        }
        MachineSetView::from_object(&o).unwrap()
    }

    #[test]
    fn upstream_test_expectations() {
        assert_eq!(
            machineset_arch(&ms(Some("kubernetes.io/arch=amd64")), "x86_64", false).unwrap(),
            "x86_64"
        );
        assert_eq!(
            machineset_arch(&ms(Some("kubernetes.io/arch=arm64")), "x86_64", false).unwrap(),
            "aarch64"
        );
        assert_eq!(
            machineset_arch(
                &ms(Some(" a=b , kubernetes.io/arch=ppc64le , c=d")),
                "x86_64",
                false
            )
            .unwrap(),
            "ppc64le"
        );
        assert_eq!(
            machineset_arch(
                &ms(Some(
                    "kubernetes.io/arch=s390x,topology.ebs.csi.aws.com/zone=eu-central-1a"
                )),
                "x86_64",
                true
            )
            .unwrap(),
            "s390x"
        );
    }

    #[test]
    fn errors_and_skips() {
        assert_eq!(
            machineset_arch(&ms(Some("kubernetes.io/arch=x86_64")), "x86_64", false),
            Err(ArchError::InvalidValue("x86_64".into()))
        );
        assert_eq!(
            machineset_arch(&ms(Some("kubernetes.io/arch=")), "x86_64", false),
            Err(ArchError::InvalidValue(String::new()))
        );
        assert_eq!(
            machineset_arch(&ms(Some("a=b,c=d")), "x86_64", false)
                .unwrap_err()
                .to_string(),
            "kubernetes.io/arch label not found in annotation: a=b,c=d"
        );
        assert!(matches!(
            machineset_arch(&ms(Some("")), "x86_64", false),
            Err(ArchError::LabelNotFound(_))
        ));
        assert_eq!(
            machineset_arch(&ms(None), "x86_64", true)
                .unwrap_err()
                .to_string(),
            "no architecture annotation found on machineset ms1"
        );
        assert_eq!(
            machineset_arch(&ms(None), "aarch64", false).unwrap(),
            "aarch64"
        );
    }

    #[test]
    fn huge_annotation() {
        let a = format!("{},kubernetes.io/arch=arm64", "x=y,".repeat(200_000));
        assert_eq!(
            machineset_arch(&ms(Some(&a)), "x86_64", false).unwrap(),
            "aarch64"
        );
    }

    #[test]
    fn rust_arch_names() {
        assert_eq!(stream_arch_from_rust("x86_64"), Some("x86_64"));
        assert_eq!(stream_arch_from_rust("powerpc64"), Some("ppc64le"));
        assert_eq!(stream_arch_from_rust("wasm32"), None);
    }

    #[test]
    fn kube_and_stream_names_map_both_ways() {
        for kube in ["amd64", "arm64", "ppc64le", "s390x"] {
            let stream = stream_arch_from_kube(kube).unwrap_or_else(|| panic!("{kube}"));
            assert_eq!(kube_arch_from_stream(stream), Some(kube));
        }
        assert_eq!(kube_arch_from_stream("aarch64"), Some("arm64"));
        assert_eq!(kube_arch_from_stream("arm64"), None);
    }
}
