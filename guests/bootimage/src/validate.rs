//! The checks every boot image decision must pass before the host acts on
//! it. The host runs them on whatever a guest returns; the library runs them
//! on its own decisions too (see [`crate::decide`]), so a hostile input turns
//! into an `error` decision that names the problem instead of output the
//! host has to throw away as a broken guest.

use base64::Engine as _;
use mco_k8s_rules::{bounded, quote};

use crate::decision::{Decision, UserDataUpgrade};
use crate::machineset::MachineKind;
use crate::vcenter::{MAX_TEMPLATE_NAME, TemplateImport, check_disk_type};

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
    let (target, patch, secret, import) = match decision {
        Decision::Patch {
            target,
            patch,
            user_data_secret,
            import,
        } => (target, patch, user_data_secret, import),
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
    if let Some(import) = import {
        validate_import(import)?;
        // The MachineSet already names the template being replaced.
        if patch.as_object().is_some_and(|fields| fields.is_empty()) {
            return validate_secret(secret.as_ref());
        }
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
    validate_secret(secret.as_ref())
}

fn validate_secret(secret: Option<&UserDataUpgrade>) -> Result<(), String> {
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

/// Every field of an import request is set and bounded, the template name
/// fits vCenter's limit, and the disk type is one vCenter imports with.
fn validate_import(import: &TemplateImport) -> Result<(), String> {
    let fields = [
        ("server", &import.server),
        ("datacenter", &import.datacenter),
        ("folder", &import.folder),
        ("template", &import.template),
        ("release", &import.release),
        ("url", &import.url),
        ("sha256", &import.sha256),
    ];
    for (name, value) in fields {
        if value.is_empty() || value.len() > MAX_TARGET {
            return Err(format!(
                "template import {name} of {} bytes (1 to {MAX_TARGET} allowed)",
                value.len()
            ));
        }
    }
    if import.template.chars().count() > MAX_TEMPLATE_NAME {
        return Err(format!(
            "template import name {} is longer than {MAX_TEMPLATE_NAME} characters",
            quote(&import.template, QUOTE)
        ));
    }
    match &import.disk_type {
        Some(disk_type) => check_disk_type(disk_type),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::UserData;
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
            import: None,
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

    fn import(change: impl FnOnce(&mut TemplateImport)) -> TemplateImport {
        let mut import = TemplateImport {
            server: "vcenter.example.com".into(),
            datacenter: "dc1".into(),
            folder: "/dc1/vm/c1".into(),
            template: "c1-rhcos-fd".into(),
            release: "9.8.20260428-0".into(),
            url: "https://mirror/rhcos.ova".into(),
            sha256: "29dc".into(),
            disk_type: None,
        };
        change(&mut import);
        import
    }

    #[test]
    fn an_import_may_come_alone_and_is_checked_field_by_field() {
        let with = |patch: Value, import: TemplateImport| Decision::Patch {
            target: "c1-rhcos-fd".into(),
            patch,
            user_data_secret: None,
            import: Some(Box::new(import)),
        };
        let template = provider_spec(json!({"template": "c1-rhcos-fd"}));
        let cases = [
            (with(json!({}), import(|_| {})), None),
            (with(template.clone(), import(|_| {})), None),
            (
                with(json!({}), import(|i| i.disk_type = Some("thin".into()))),
                None,
            ),
            (
                with(json!({"spec": {"replicas": 1}}), import(|_| {})),
                Some("touches more than"),
            ),
            (
                with(json!({}), import(|i| i.url.clear())),
                Some("template import url of 0 bytes"),
            ),
            (
                with(json!({}), import(|i| i.template = "t".repeat(81))),
                Some("longer than 80 characters"),
            ),
            (
                with(json!({}), import(|i| i.disk_type = Some("sparse".into()))),
                Some("disk provisioning type \"sparse\" is not supported"),
            ),
            // Without an import an empty patch is still refused.
            (patch(json!({}), None), Some("touches more than")),
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
