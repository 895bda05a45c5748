//! Boot image skew enforcement, the controller's half (upstream's
//! `pkg/controller/machine-set-boot-image`, `syncMAPIMachineSets` and its
//! skew status), sans-IO: after a MachineSet pass, what
//! MachineConfiguration `status.bootImageSkewEnforcementStatus.automatic`
//! should say about the release whose boot images the cluster now uses.
//! The operator owns `mode` (and initialises `automatic`); this host only
//! writes `automatic`, and only while the mode is `Automatic`.

use serde_json::{Value, json};

use super::BOOT_IMAGE_SKEW_ENFORCEMENT;
use super::objects::{ClusterVersion, ConfigMapData, MachineConfiguration};
use mco_job::feature_gates::FeatureGates;

/// What a pass came to, as far as the record is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassSummary {
    /// MachineSets that were skipped (owner references, custom image,
    /// missing arch annotation on Multi, missing region). `noop`s such as
    /// an OS stream or Windows MachineSet are not skips.
    pub skipped: usize,
    pub errors: usize,
}

/// Why the record says what it says, for logs and the metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A clean pass: every enrolled MachineSet is on this release's images.
    Recorded,
    /// Skips: only the install version can be claimed (OCPBUGS-87962).
    Reset,
}

impl Outcome {
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Recorded => "recorded",
            Outcome::Reset => "reset",
        }
    }
}

/// The `automatic` record a pass calls for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub ocp_version: String,
    pub outcome: Outcome,
    /// The record differs from what the object holds: write it.
    pub changed: bool,
}

impl Record {
    /// A merge patch of the status: `ocpVersion` set, `rhcosVersion`
    /// (only ever set for AWS marketplace images, which this host does
    /// not choose) cleared, nothing else.
    pub fn status_patch(&self) -> Value {
        json!({"status": {"bootImageSkewEnforcementStatus": {"automatic": {
            "ocpVersion": self.ocp_version, "rhcosVersion": null}}}})
    }
}

/// The record after a pass, or `None` when the pass leaves it alone:
/// `BootImageSkewEnforcement` is off (upstream's `syncMAPIMachineSets`
/// neither records nor resets then), the mode is not `Automatic`, the
/// pass had errors, or a clean pass cannot tell its release (no readable
/// `releaseVersion` in the stream ConfigMap). `cm` is the
/// `coreos-bootimages` ConfigMap, `cv` ClusterVersion `version`.
pub fn after_pass(
    gates: &FeatureGates,
    mc: &MachineConfiguration,
    summary: PassSummary,
    cm: Option<&ConfigMapData>,
    cv: Option<&ClusterVersion>,
) -> Option<Record> {
    if !gates.enabled(BOOT_IMAGE_SKEW_ENFORCEMENT) {
        return None;
    }
    let status = mc.status.boot_image_skew_enforcement_status.as_ref()?;
    if status.mode.as_deref() != Some("Automatic") || summary.errors > 0 {
        return None;
    }
    let (ocp_version, outcome) = if summary.skipped == 0 {
        let release = cm?.data.get("releaseVersion").map(String::as_str);
        let Some(version) = release.and_then(lenient_version) else {
            tracing::warn!(
                release = release.unwrap_or("(none)"),
                "the coreos-bootimages ConfigMap has no usable releaseVersion; boot image skew record unchanged"
            );
            return None;
        };
        (version, Outcome::Recorded)
    } else {
        (install_version(cv), Outcome::Reset)
    };
    let automatic = status.automatic.as_ref();
    let current = automatic.and_then(|a| a.ocp_version.as_deref());
    let rhcos = automatic.is_some_and(|a| a.rhcos_version.is_some());
    let changed = current != Some(ocp_version.as_str()) || rhcos;
    Some(Record {
        ocp_version,
        outcome,
        changed,
    })
}

/// `major.minor.patch` of a release version, parsed leniently as
/// upstream's `semver.ParseTolerant` does: `4.21.3` and `v4.21.3` stay,
/// `4.22.0-ec.2` is `4.22.0`, `4.21` is `4.21.0`; anything else is `None`.
pub fn lenient_version(text: &str) -> Option<String> {
    let text = text.trim();
    let text = text.strip_prefix('v').unwrap_or(text);
    let core = text.split(['-', '+']).next().unwrap_or_default();
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty()
        || parts.len() > 3
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) || p.len() > 9)
    {
        return None;
    }
    let number = |i: usize| {
        parts
            .get(i)
            .and_then(|p| p.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Some(format!("{}.{}.{}", number(0), number(1), number(2)))
}

/// The install version (`GetOCPInstallVersion`): the oldest `Completed`
/// entry of ClusterVersion `status.history`, scanning from the end; with
/// none completed, the last entry; `0.0.0` when nothing is readable.
pub fn install_version(cv: Option<&ClusterVersion>) -> String {
    let history = cv
        .map(|cv| cv.status.history.as_slice())
        .unwrap_or_default();
    let chosen = history
        .iter()
        .rev()
        .find(|e| e.state.as_deref() == Some("Completed"))
        .or(history.last())
        .and_then(|e| e.version.as_deref());
    chosen
        .and_then(lenient_version)
        .unwrap_or_else(|| "0.0.0".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::Input;

    fn read<T: Input + Default>(object: Value) -> T {
        T::decode(&object).unwrap_or_default()
    }

    fn mc(mode: &str, automatic: Value) -> MachineConfiguration {
        read(
            json!({"status": {"bootImageSkewEnforcementStatus": {"mode": mode, "automatic": automatic}}}),
        )
    }

    fn cm(release: &str) -> ConfigMapData {
        read(json!({"data": {"releaseVersion": release}}))
    }

    fn cv() -> ClusterVersion {
        read(json!({"status": {"history": [
            {"state": "Partial", "version": "4.22.0"},
            {"state": "Completed", "version": "4.21.3"},
            {"state": "Completed", "version": "4.19.7"},
            {"state": "Partial", "version": "4.19.0"},
        ]}}))
    }

    /// The Default feature set: skew enforcement on.
    fn on() -> FeatureGates {
        FeatureGates::default_of(crate::FEATURE_GATES)
    }

    const CLEAN: PassSummary = PassSummary {
        skipped: 0,
        errors: 0,
    };

    #[test]
    fn the_record_follows_the_outcome_of_the_pass() {
        let installed = mc("Automatic", json!({"ocpVersion": "4.19.7"}));
        // Clean pass (0 enrolled MachineSets lands here too): record.
        assert_eq!(
            after_pass(
                &on(),
                &installed,
                CLEAN,
                Some(&cm("4.22.0-ec.2")),
                Some(&cv())
            ),
            Some(Record {
                ocp_version: "4.22.0".into(),
                outcome: Outcome::Recorded,
                changed: true
            })
        );
        // Skips and no errors: reset to the install version, the oldest
        // Completed entry (not the oldest entry).
        let recorded = mc("Automatic", json!({"ocpVersion": "4.22.0"}));
        let skips = PassSummary {
            skipped: 1,
            errors: 0,
        };
        assert_eq!(
            after_pass(&on(), &recorded, skips, Some(&cm("4.22.0")), Some(&cv())),
            Some(Record {
                ocp_version: "4.19.7".into(),
                outcome: Outcome::Reset,
                changed: true
            })
        );
        // Errors: nothing, whatever else.
        let errors = PassSummary {
            skipped: 3,
            errors: 1,
        };
        assert_eq!(
            after_pass(&on(), &recorded, errors, Some(&cm("4.22.0")), Some(&cv())),
            None
        );
        // Not Automatic (Manual, None, absent): never written.
        for other in [
            mc("Manual", json!(null)),
            mc("None", json!(null)),
            read(json!({"status": {}})),
            read(json!({})),
        ] {
            assert_eq!(
                after_pass(&on(), &other, CLEAN, Some(&cm("4.22.0")), None),
                None
            );
        }
    }

    #[test]
    fn without_the_skew_gate_no_pass_records_or_resets() {
        let off = crate::gates_without(&[BOOT_IMAGE_SKEW_ENFORCEMENT]);
        let installed = mc("Automatic", json!({"ocpVersion": "4.19.7"}));
        let skips = PassSummary {
            skipped: 2,
            errors: 0,
        };
        for summary in [CLEAN, skips] {
            assert!(
                after_pass(&on(), &installed, summary, Some(&cm("4.22.0")), Some(&cv())).is_some()
            );
            assert_eq!(
                after_pass(&off, &installed, summary, Some(&cm("4.22.0")), Some(&cv())),
                None,
                "{summary:?}"
            );
        }
    }

    #[test]
    fn an_unchanged_record_is_not_written_and_rhcos_is_cleared() {
        let same = mc("Automatic", json!({"ocpVersion": "4.22.0"}));
        let record = after_pass(&on(), &same, CLEAN, Some(&cm("4.22.0")), None);
        assert_eq!(record.map(|r| r.changed), Some(false));
        let marketplace = mc(
            "Automatic",
            json!({"ocpVersion": "4.22.0", "rhcosVersion": "9.6.20260210-0"}),
        );
        let record = after_pass(&on(), &marketplace, CLEAN, Some(&cm("4.22.0")), None).unwrap();
        assert!(record.changed);
        assert_eq!(
            record.status_patch(),
            json!({"status": {"bootImageSkewEnforcementStatus": {"automatic": {
                "ocpVersion": "4.22.0", "rhcosVersion": null}}}})
        );
    }

    #[test]
    fn a_clean_pass_without_a_release_changes_nothing() {
        let installed = mc("Automatic", json!({"ocpVersion": "4.19.7"}));
        for stream in [
            None,
            Some(read(json!({"data": {}}))),
            Some(cm("snapshot")),
            Some(cm("")),
        ] {
            assert_eq!(
                after_pass(&on(), &installed, CLEAN, stream.as_ref(), None),
                None
            );
        }
    }

    #[test]
    fn versions_are_read_leniently_and_hostile_text_is_refused() {
        for (text, want) in [
            ("4.21.3", Some("4.21.3")),
            ("v4.21.3", Some("4.21.3")),
            ("4.22.0-ec.2", Some("4.22.0")),
            ("4.21", Some("4.21.0")),
            ("4.21.3+build.1", Some("4.21.3")),
            ("0.0.1-snapshot", Some("0.0.1")),
            ("", None),
            ("4..3", None),
            ("4.21.3.1", None),
            ("four.21", None),
            ("4.21.3 ", Some("4.21.3")),
            ("99999999999999999999.1.1", None),
        ] {
            assert_eq!(lenient_version(text).as_deref(), want, "{text:?}");
        }
        assert_eq!(install_version(Some(&cv())), "4.19.7");
        assert_eq!(install_version(None), "0.0.0");
        assert_eq!(
            install_version(Some(&read(json!({"status": {"history": []}})))),
            "0.0.0"
        );
        // None completed: the last entry.
        let installing =
            read(json!({"status": {"history": [{"state": "Partial", "version": "4.21.0"}]}}));
        assert_eq!(install_version(Some(&installing)), "4.21.0");
        // A version that is not a string does not decode: nothing is readable.
        let garbage = json!({"status": {"history": [{"state": "Completed", "version": 7}]}});
        let garbage = ClusterVersion::decode(&garbage).ok();
        assert_eq!(install_version(garbage.as_ref()), "0.0.0");
    }
}
