//! Stub Ignition upgrade (spec 2.0, 2.1 and 2.2 → 3.5) for the MachineSet
//! user-data Secret: clusters installed before OpenShift 4.6 boot workers
//! from a spec 2 stub that newer RHCOS cannot read. This mirrors MCO's
//! `ParseAndConvertConfig` (`IgnParseWrapper` → `removeIgnDuplicateFilesUnitsUsers`
//! → ign-converter `v23tov30`, only the root filesystem mapped); anything the
//! converter would refuse, and disk/RAID sections, is an error, so no
//! MachineSet moves to an image its machines could not boot from.
//!
//! - `legacy`: a spec 2.0 or 2.1 stub brought to spec 2.2's shape;
//! - `v2`: the spec 2.2 stub as Ignition's Go types read it;
//! - `dedupe`: the duplicates spec 3 forbids removed;
//! - `translate`, `v3`: what the converter refuses, the spec 3 output; `tests`.

mod dedupe;
mod legacy;
mod translate;
mod v2;
mod v3;

#[cfg(test)]
mod tests;

use legacy::Legacy;
use serde_json::Value;

/// The version upstream converts to (`IgnitionDefaultVersion`).
pub const STUB_TARGET_VERSION: &str = "3.5.0";
/// Set on the Secret after a conversion, value [`STUB_TARGET_VERSION`].
pub const ANNOTATION_UPGRADED_TO: &str =
    "machineconfiguration.openshift.io/stub-ignition-upgraded-to";
/// Set on the Secret after a conversion, value RFC 3339 time. Guests have no
/// clock, so only the host can fill it in.
pub const ANNOTATION_UPGRADED_AT: &str =
    "machineconfiguration.openshift.io/stub-ignition-upgraded-at";

const SUPPORTED: &str = "Supported spec versions: 2.2, 3.0, 3.1, 3.2, 3.3, 3.4, 3.5";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StubUpgrade {
    /// Spec 3 already (`ignition.version` starts with "3"): leave it alone.
    AlreadyCurrent,
    /// The converted spec 3.5 config as JSON text.
    Converted(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StubError {
    #[error("converting ignition stub failed: failed to unmarshal decoded user-data to json: {0}")]
    NotJson(String),
    #[error("converting ignition stub failed: failed to find version field in ignition: {0}")]
    Version(String),
    #[error("converting ignition stub failed: failed to parse Ignition config: {0}")]
    Parse(String),
    #[error("converting ignition stub failed: {0}")]
    Dedupe(String),
    #[error(
        "converting ignition stub failed: failed to convert Ignition config spec v2 to v3: unable to convert Ignition spec v2 config to v3: {0}"
    )]
    Convert(String),
}

/// Converts a spec 2.0, 2.1 or 2.2 stub to spec 3.5, or reports that it is
/// spec 3 already.
pub fn upgrade_stub(user_data: &str) -> Result<StubUpgrade, StubError> {
    let raw: Value =
        serde_json::from_str(user_data).map_err(|e| StubError::NotJson(e.to_string()))?;
    let version = match raw.get("ignition") {
        None | Some(Value::Null) => String::new(),
        Some(Value::Object(ign)) => match ign.get("version") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(v)) => v.clone(),
            Some(other) => {
                return Err(StubError::Version(format!(
                    ".ignition.version accessor error: {} is of the type {}, expected string",
                    other,
                    crate::fields::kind_of(other)
                )));
            }
        },
        Some(other) => {
            return Err(StubError::Version(format!(
                ".ignition accessor error: {} is of the type {}, expected object",
                other,
                crate::fields::kind_of(other)
            )));
        }
    };
    if !raw.is_object() {
        return Err(StubError::NotJson(format!(
            "expected a JSON object, got {}",
            crate::fields::kind_of(&raw)
        )));
    }
    if version.starts_with('3') {
        return Ok(StubUpgrade::AlreadyCurrent);
    }
    let spec_v2_failed =
        |e: String| StubError::Parse(format!("parsing Ignition spec v2 failed with error: {e}"));
    let raw = match Legacy::of(&version) {
        Some(older) => legacy::as_v2_2(raw, older).map_err(spec_v2_failed)?,
        None if version == "2.2.0" => raw,
        None => {
            let what = if is_semver(&version) {
                "unknown"
            } else {
                "invalid"
            };
            return Err(StubError::Parse(format!(
                "parsing Ignition config failed: {what} version. {SUPPORTED}"
            )));
        }
    };
    let cfg: v2::Config = serde_json::from_value(raw).map_err(|e| spec_v2_failed(e.to_string()))?;
    v2::validate(&cfg).map_err(spec_v2_failed)?;
    let cfg = dedupe::dedupe(cfg).map_err(StubError::Dedupe)?;
    let out = translate::translate(cfg).map_err(StubError::Convert)?;
    serde_json::to_string(&out)
        .map(StubUpgrade::Converted)
        .map_err(|e| StubError::Convert(e.to_string()))
}

/// `x.y.z` with an optional pre-release/build suffix, the shape Ignition's
/// semver parser accepts; it decides between "unknown" and "invalid".
fn is_semver(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}
