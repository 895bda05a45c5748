//! The checks every boot image decision must pass before the host acts on
//! it. The host runs them on whatever a guest returns; the library runs them
//! on its own decisions too (see [`crate::decide`]), so a hostile input turns
//! into an `error` decision that names the problem instead of output the
//! host has to throw away as a broken guest.

use base64::Engine as _;
use mco_k8s_rules::{bounded, quote};

use crate::decision::Decision;
use crate::machineset::MachineKind;

/// Bound on a reason or message.
pub const MAX_REASON_TEXT: usize = 4096;
/// Bound on a patch target (an image reference).
pub const MAX_TARGET: usize = 2048;
/// How much of an offending value an error message quotes, in bytes.
const QUOTE: usize = 200;

/// `Err` says what is wrong: a patch may only touch
/// `spec.template.spec.providerSpec.value` (and must change something
/// there), a Secret upgrade must name a Secret and carry base64 data, and
/// every text is non-empty and bounded.
pub fn validate_decision(decision: &Decision) -> Result<(), String> {
    validate_decision_for(decision, MachineKind::MachineSet)
}

/// [`validate_decision`] for a decision about an object of `kind`: a
/// ControlPlaneMachineSet's patch may only touch its own providerSpec path,
/// one level deeper.
pub fn validate_decision_for(decision: &Decision, kind: MachineKind) -> Result<(), String> {
    let (target, patch, secret) = match decision {
        Decision::Patch {
            target,
            patch,
            user_data_secret,
        } => (target, patch, user_data_secret),
        Decision::Noop { reason: text }
        | Decision::Skip { reason: text }
        | Decision::Error { message: text } => {
            return match text.len() {
                0 => Err("empty reason or message".into()),
                n if n > MAX_REASON_TEXT => Err(format!(
                    "reason or message of {n} bytes (limit {MAX_REASON_TEXT})"
                )),
                _ => Ok(()),
            };
        }
    };
    if target.is_empty() || target.len() > MAX_TARGET {
        return Err(format!(
            "patch target of {} bytes (1 to {MAX_TARGET} allowed)",
            target.len()
        ));
    }
    let mut level = patch;
    let path = kind.provider_spec_path();
    for key in path {
        level = match level.as_object() {
            Some(map) if map.len() == 1 && map.contains_key(*key) => &map[*key],
            _ => {
                return Err(format!(
                    "the merge patch touches more than {}: {}",
                    path.join("."),
                    bounded(patch.to_string(), QUOTE)
                ));
            }
        };
    }
    if level.as_object().is_none_or(|fields| fields.is_empty()) {
        return Err("the merge patch changes no providerSpec field".into());
    }
    if let Some(secret) = secret {
        if !mco_k8s_rules::is_dns1123_subdomain(&secret.name) {
            return Err(format!(
                "user-data Secret name {} is not a DNS-1123 subdomain",
                quote(&secret.name, QUOTE)
            ));
        }
        base64::engine::general_purpose::STANDARD
            .decode(&secret.data.user_data)
            .map_err(|e| format!("user-data Secret data is not base64: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::{UserData, UserDataUpgrade};
    use serde_json::{Value, json};

    fn patch(patch: Value, secret: Option<(&str, &str)>) -> Decision {
        Decision::Patch {
            target: "projects/rhcos-cloud/global/images/rhcos-x".into(),
            patch,
            user_data_secret: secret.map(|(name, data)| UserDataUpgrade {
                name: name.into(),
                data: UserData {
                    user_data: data.into(),
                },
                annotations: Default::default(),
            }),
        }
    }

    fn provider_spec(fields: Value) -> Value {
        json!({"spec": {"template": {"spec": {"providerSpec": {"value": fields}}}}})
    }

    #[test]
    fn decisions_are_checked_field_by_field() {
        let good = provider_spec(json!({"image": "x"}));
        let cases: [(Decision, Option<&str>); 9] = [
            (patch(good.clone(), None), None),
            (
                patch(good.clone(), Some(("worker-user-data", "e30="))),
                None,
            ),
            (Decision::noop("fine"), None),
            (Decision::skip(""), Some("empty reason")),
            (
                patch(json!({"spec": {"replicas": 3}}), None),
                Some("touches more than"),
            ),
            (
                patch(provider_spec(json!({})), None),
                Some("changes no providerSpec field"),
            ),
            (
                patch(good.clone(), Some(("Bad Name", "e30="))),
                Some("not a DNS-1123 subdomain"),
            ),
            (
                patch(good.clone(), Some(("worker-user-data", "not base64!"))),
                Some("not base64"),
            ),
            (
                Decision::Error {
                    message: "x".repeat(MAX_REASON_TEXT + 1),
                },
                Some("limit 4096"),
            ),
        ];
        for (decision, expected) in cases {
            match (validate_decision(&decision), expected) {
                (Ok(()), None) => {}
                (Err(err), Some(fragment)) => assert!(err.contains(fragment), "{err}"),
                (got, _) => panic!("{}: {got:?}, expected {expected:?}", decision.to_json()),
            }
        }
    }

    #[test]
    fn constructors_bound_their_text() {
        let long = "x".repeat(MAX_REASON_TEXT * 2);
        for decision in [
            Decision::noop(long.clone()),
            Decision::skip(long.clone()),
            Decision::error(long.clone()),
        ] {
            assert_eq!(
                validate_decision(&decision),
                Ok(()),
                "{}",
                decision.action()
            );
        }
    }
}
