//! The outcome for one MachineSet, in the exact shape `mco-host eval
//! bootimage` prints (see eval-contract.md).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use mco_k8s_rules::bounded;

use crate::validate::MAX_REASON_TEXT;
use crate::vcenter::TemplateImport;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "lowercase")]
pub enum Decision {
    /// Apply `patch` (RFC 7386) to the MachineSet. If `user_data_secret` is
    /// set, that Secret must be updated first: machines booted from the new
    /// image could not read the old stub; then `import`, if set.
    Patch {
        target: String,
        patch: serde_json::Value,
        #[serde(rename = "userDataSecret")]
        user_data_secret: Option<UserDataUpgrade>,
        /// vSphere: the template to import before the patch is applied (the
        /// patch is `{}` when the MachineSet already names it). Absent from
        /// the output of every other platform, as before.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        import: Option<Box<TemplateImport>>,
    },
    /// Nothing to do: already on the target, or the rules do not apply.
    Noop { reason: String },
    /// Deliberately left alone; the controller counts these as skipped.
    Skip { reason: String },
    /// Cannot decide; the controller reports this as Degraded.
    Error { message: String },
}

/// The new content of the user-data Secret after the stub Ignition upgrade.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserDataUpgrade {
    pub name: String,
    pub data: UserData,
    /// Annotations to set on the Secret. The `…-upgraded-at` timestamp is not
    /// here: guests have no clock, so the host adds it when it writes.
    pub annotations: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserData {
    /// Base64 (standard, padded) of the new Ignition JSON, as Secret `data`
    /// holds it.
    #[serde(rename = "userData")]
    pub user_data: String,
}

/// The constructors bound their text to what the host accepts
/// ([`MAX_REASON_TEXT`]): reasons quote MachineSet names, images and stream
/// fields, which hostile input can make arbitrarily long.
impl Decision {
    pub fn noop(reason: impl Into<String>) -> Decision {
        Decision::Noop {
            reason: bounded(reason.into(), MAX_REASON_TEXT),
        }
    }

    pub fn skip(reason: impl Into<String>) -> Decision {
        Decision::Skip {
            reason: bounded(reason.into(), MAX_REASON_TEXT),
        }
    }

    pub fn error(message: impl Into<String>) -> Decision {
        Decision::Error {
            message: bounded(message.into(), MAX_REASON_TEXT),
        }
    }

    /// `patch`, `noop`, `skip` or `error`.
    pub fn action(&self) -> &'static str {
        match self {
            Decision::Patch { .. } => "patch",
            Decision::Noop { .. } => "noop",
            Decision::Skip { .. } => "skip",
            Decision::Error { .. } => "error",
        }
    }

    /// The eval-contract JSON text, without the trailing newline.
    pub fn to_json(&self) -> String {
        // Serializing these plain types cannot fail; the fallback keeps the
        // function total instead of panicking.
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(
                r#"{{"action":"error","message":{}}}"#,
                serde_json::Value::String(format!("cannot serialize decision: {e}"))
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serializes_to_the_eval_contract_shape() {
        let d = Decision::Patch {
            target: "ami-1".into(),
            patch: json!({"spec": {}}),
            user_data_secret: None,
            import: None,
        };
        assert_eq!(
            serde_json::to_value(&d).unwrap(),
            json!({"action": "patch", "target": "ami-1", "patch": {"spec": {}}, "userDataSecret": null})
        );
        let d = Decision::Patch {
            target: "t".into(),
            patch: json!({}),
            user_data_secret: Some(UserDataUpgrade {
                name: "worker-user-data".into(),
                data: UserData {
                    user_data: "e30=".into(),
                },
                annotations: BTreeMap::from([("a".to_owned(), "b".to_owned())]),
            }),
            import: None,
        };
        assert_eq!(
            serde_json::to_value(&d).unwrap()["userDataSecret"],
            json!({"name": "worker-user-data", "data": {"userData": "e30="}, "annotations": {"a": "b"}})
        );
        assert_eq!(
            Decision::noop("r").to_json(),
            r#"{"action":"noop","reason":"r"}"#
        );
        assert_eq!(
            Decision::skip("r").to_json(),
            r#"{"action":"skip","reason":"r"}"#
        );
        assert_eq!(
            Decision::error("m").to_json(),
            r#"{"action":"error","message":"m"}"#
        );
    }

    fn import() -> TemplateImport {
        TemplateImport {
            server: "vcenter.example.com".into(),
            datacenter: "dc1".into(),
            folder: "/dc1/vm/c1".into(),
            template: "c1-rhcos-fd".into(),
            release: "9.8.20260428-0".into(),
            url: "https://mirror/rhcos.ova".into(),
            sha256: "29dc".into(),
            disk_type: Some("thin".into()),
        }
    }

    #[test]
    fn an_import_is_shown_only_when_there_is_one() {
        let d = Decision::Patch {
            target: "c1-rhcos-fd".into(),
            patch: json!({}),
            user_data_secret: None,
            import: Some(Box::new(import())),
        };
        assert_eq!(
            serde_json::to_value(&d).unwrap()["import"],
            json!({"server": "vcenter.example.com", "datacenter": "dc1", "folder": "/dc1/vm/c1",
                   "template": "c1-rhcos-fd", "release": "9.8.20260428-0",
                   "url": "https://mirror/rhcos.ova", "sha256": "29dc", "diskType": "thin"})
        );
    }

    #[test]
    fn round_trips() {
        for d in [
            Decision::noop("a"),
            Decision::skip("b"),
            Decision::error("c"),
            Decision::Patch {
                target: "t".into(),
                patch: json!({"spec": {"x": null}}),
                user_data_secret: None,
                import: None,
            },
            Decision::Patch {
                target: "c1-rhcos-fd".into(),
                patch: json!({}),
                user_data_secret: None,
                import: Some(Box::new(import())),
            },
        ] {
            let back: Decision = serde_json::from_str(&d.to_json()).unwrap();
            assert_eq!(back, d);
            assert_eq!(back.action(), d.action());
        }
    }
}
