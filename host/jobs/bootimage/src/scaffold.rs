//! `guests new --job bootImage --platform NAME`: a boot image guest crate
//! for one platform, the files under `scaffold/` (its guest
//! and two cases), and which platforms it may be made for.

use super::platform::PLATFORMS;
use mco_job::jobs::scaffold::{PlatformOption, Scaffold, Template};

/// The boot image job's crate template.
pub(super) struct BootImageScaffold;

/// `--platform`: the values of Infrastructure `status.platformStatus.type`
/// (openshift/api `config/v1/types_infrastructure.go`, `PlatformType`).
static PLATFORM: PlatformOption = PlatformOption {
    help: "the Infrastructure `status.platformStatus.type` the guest serves (`GCP`, `AWS`, \
           `Azure`, `Nutanix`, …)",
    names: &[
        "AWS",
        "Azure",
        "BareMetal",
        "GCP",
        "Libvirt",
        "OpenStack",
        "None",
        "VSphere",
        "oVirt",
        "IBMCloud",
        "KubeVirt",
        "EquinixMetal",
        "PowerVS",
        "AlibabaCloud",
        "Nutanix",
        "External",
    ],
};

/// The files of one boot image case, under `cases/<case>/`.
macro_rules! case {
    ($case:literal) => {
        [
            (
                concat!("cases/", $case, "/machineset.yaml"),
                include_str!(concat!("../scaffold/cases/", $case, "/machineset.yaml")),
            ),
            (
                concat!("cases/", $case, "/configmap.yaml"),
                include_str!(concat!("../scaffold/cases/", $case, "/configmap.yaml")),
            ),
            (
                concat!("cases/", $case, "/infrastructure.yaml"),
                include_str!(concat!("../scaffold/cases/", $case, "/infrastructure.yaml")),
            ),
            (
                concat!("cases/", $case, "/machineconfiguration.yaml"),
                include_str!(concat!(
                    "../scaffold/cases/",
                    $case,
                    "/machineconfiguration.yaml"
                )),
            ),
            (
                concat!("cases/", $case, "/expected.json"),
                include_str!(concat!("../scaffold/cases/", $case, "/expected.json")),
            ),
        ]
    };
}

const LIB: Template = ("src/lib.rs", include_str!("../scaffold/lib.rs"));
const CASES: [[Template; 5]; 2] = [case!("noop"), case!("skip-no-arm64-images")];

/// The platforms whose boot image fields the host lets a guest patch (the
/// authority's field ownership); any other platform's guest may only
/// decide `noop`, `skip` or `error`.
fn patchable() -> impl Iterator<Item = &'static str> {
    PLATFORMS
        .iter()
        .filter(|p| !p.about().owned.is_empty())
        .map(|p| p.about().name)
}

impl Scaffold for BootImageScaffold {
    fn help(&self) -> &'static str {
        "The boot image job of one platform (world `boot-image-selector`)"
    }

    fn platform(&self) -> Option<&'static PlatformOption> {
        Some(&PLATFORM)
    }

    fn templates(&self) -> Vec<Template> {
        std::iter::once(LIB)
            .chain(CASES.into_iter().flatten())
            .collect()
    }

    fn what(&self, platform: Option<&str>) -> String {
        let platform = platform.unwrap_or_default();
        format!(
            "A boot image guest for mco-host on {platform}: it decides each MachineSet's boot \
             image update."
        )
    }

    fn limits(&self, platform: Option<&str>) -> String {
        let p = platform.unwrap_or_default();
        if patchable().any(|known| known == p) {
            format!(
                "For {p} a patch may change only the boot image fields the host lets {p} \
                 change, to the image the stream publishes for the MachineSet's architecture."
            )
        } else {
            format!(
                "The host lets no guest patch a {p} MachineSet yet (it knows which fields are \
                 a boot image only for {}): a {p} guest decides `noop`, `skip` or `error`.",
                patchable().collect::<Vec<_>>().join(", ")
            )
        }
    }
}
