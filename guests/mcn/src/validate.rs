//! The checks every decision must pass before the host writes anything:
//! what the MachineConfigNode CRD accepts and what the job promises (every
//! default condition present). The host runs them on whatever a guest
//! returns; the library states them so native runs, property tests and fuzz
//! targets can hold the derivation to the same rules.

use std::collections::BTreeSet;

use crate::{Decision, default_condition_types};
use mco_k8s_rules::{is_condition_reason, is_dns1123_subdomain, quote};

/// Bound on a skip reason or error message.
pub const MAX_REASON_TEXT: usize = 4096;
/// The CRD's bound on one condition message, in bytes.
pub const MAX_MESSAGE: usize = 32768;
/// The CRD's bound on image references.
const MAX_IMAGE: usize = 447;
/// The CRD's bound on the condition list.
const MAX_CONDITIONS: usize = 20;
/// How much of an offending value an error message quotes, in bytes.
pub(crate) const QUOTE: usize = 80;

/// `Err` says what is wrong with the first offending field. The default
/// conditions every MCN carries depend on gate `ImageModeStatusReporting`
/// (`image_mode`).
pub fn validate(decision: &Decision, image_mode: bool) -> Result<(), String> {
    let mcn = match decision {
        Decision::Apply(mcn) => mcn,
        Decision::Skip(text) | Decision::Error(text) => {
            return if text.trim().is_empty() {
                Err("empty skip reason or error message".into())
            } else if text.len() > MAX_REASON_TEXT {
                Err(format!(
                    "skip reason or error message of {} bytes (limit {MAX_REASON_TEXT})",
                    text.len()
                ))
            } else {
                Ok(())
            };
        }
    };
    let status = mcn.status.as_ref();
    let version = status.map(|s| &s.config_version);
    let names = [
        ("spec.pool.name", Some(&mcn.pool)),
        ("spec.configVersion.desired", Some(&mcn.desired_config)),
        ("status.configVersion.desired", version.map(|v| &v.desired)),
        (
            "status.configVersion.current",
            version.and_then(|v| v.current.as_ref()),
        ),
    ];
    for (field, value) in names {
        if let Some(value) = value
            && !is_dns1123_subdomain(value)
        {
            return Err(format!(
                "{field} {} is not a DNS-1123 subdomain",
                quote(value, QUOTE)
            ));
        }
    }
    let image = status.and_then(|s| s.config_image.as_ref());
    let images = [
        mcn.desired_image.as_ref(),
        image.and_then(|i| i.current_image.as_ref()),
        image.and_then(|i| i.desired_image.as_ref()),
    ];
    if let Some(image) = images
        .into_iter()
        .flatten()
        .find(|i| i.is_empty() || i.len() > MAX_IMAGE)
    {
        return Err(format!(
            "image {} is empty or longer than {MAX_IMAGE} characters",
            quote(image, QUOTE)
        ));
    }
    // A Windows node's MCN is spec only (no daemon reports on it).
    let Some(status) = status else {
        return Ok(());
    };
    if status.observed_generation < 1 {
        return Err(format!(
            "status.observedGeneration {} is below 1",
            status.observed_generation
        ));
    }
    let conditions = &status.conditions;
    if conditions.len() > MAX_CONDITIONS {
        return Err(format!(
            "{} conditions (the CRD allows {MAX_CONDITIONS})",
            conditions.len()
        ));
    }
    let mut seen = BTreeSet::new();
    for condition in conditions {
        if !is_condition_reason(&condition.type_) || !is_condition_reason(&condition.reason) {
            return Err(format!(
                "condition type {} / reason {} is malformed",
                quote(&condition.type_, QUOTE),
                quote(&condition.reason, QUOTE)
            ));
        }
        if condition.message.len() > MAX_MESSAGE {
            return Err(format!(
                "condition {} has a message over {MAX_MESSAGE} bytes",
                condition.type_
            ));
        }
        if !seen.insert(condition.type_.as_str()) {
            return Err(format!("condition {} appears twice", condition.type_));
        }
    }
    if let Some(missing) = default_condition_types(image_mode)
        .iter()
        .find(|t| !seen.contains(*t))
    {
        return Err(format!("condition {missing} is missing"));
    }
    Ok(())
}
