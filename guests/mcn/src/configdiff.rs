//! What moving a node from one rendered MachineConfig to another takes: the
//! post-config action (nothing, a CRI-O reload, or a reboot), whether the
//! node must be drained, and whether the OS image and SSH keys change.

use std::collections::BTreeMap;

use serde_json::Value;

/// Ordered from least to most disruptive, so the plan takes the maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PostAction {
    None,
    ReloadCrio,
    Reboot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UpdatePlan {
    pub action: PostAction,
    pub os_update: bool,
    pub ssh_update: bool,
}

impl UpdatePlan {
    /// Only a reboot needs the node drained; the rebootless actions keep
    /// workloads running.
    pub fn drain_required(&self) -> bool {
        self.action == PostAction::Reboot
    }

    /// The action list as the MCD prints it in the UpdatePrepared message.
    pub fn actions_text(&self) -> &'static str {
        match self.action {
            PostAction::None => "[none]",
            PostAction::ReloadCrio => "[reload crio]",
            PostAction::Reboot => "[reboot]",
        }
    }
}

/// Files whose change upstream applies without a reboot.
const PULL_SECRET: &str = "/var/lib/kubelet/config.json";
const CRIO_RELOAD_FILES: [&str; 2] = [
    "/etc/containers/registries.conf",
    "/etc/containers/policy.json",
];
const CRIO_RELOAD_DIR: &str = "/etc/containers/registries.d/";

/// Fields outside the Ignition config whose change means a new OS.
const OS_FIELDS: [&str; 3] = ["osImageURL", "extensions", "kernelType"];

/// Compares two MachineConfig specs given as JSON text.
pub fn plan(current_spec: &str, desired_spec: &str) -> Result<UpdatePlan, String> {
    let current = parse_spec(current_spec, "current")?;
    let desired = parse_spec(desired_spec, "desired")?;

    let os_update = OS_FIELDS.iter().any(|f| current.get(*f) != desired.get(*f));
    let mut action = PostAction::None;

    let (current_files, current_rest) = split_config(&current)?;
    let (desired_files, desired_rest) = split_config(&desired)?;
    if current_rest.without_keys != desired_rest.without_keys {
        action = PostAction::Reboot;
    }
    if current_rest.users_without_keys != desired_rest.users_without_keys {
        action = PostAction::Reboot;
    }
    let ssh_update = current_rest.ssh_keys != desired_rest.ssh_keys;

    let changed_paths = current_files
        .keys()
        .chain(desired_files.keys())
        .filter(|path| current_files.get(*path) != desired_files.get(*path));
    for path in changed_paths {
        action = action.max(file_action(path));
    }
    Ok(UpdatePlan {
        action,
        os_update,
        ssh_update,
    })
}

fn file_action(path: &str) -> PostAction {
    if path == PULL_SECRET {
        PostAction::None
    } else if CRIO_RELOAD_FILES.contains(&path) || path.starts_with(CRIO_RELOAD_DIR) {
        PostAction::ReloadCrio
    } else {
        PostAction::Reboot
    }
}

fn parse_spec(text: &str, which: &str) -> Result<Value, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(format!("the {which} MachineConfig spec is not an object")),
        Err(err) => Err(format!(
            "the {which} MachineConfig spec is not valid JSON: {err}"
        )),
    }
}

/// A spec with the parts that have their own rules taken out.
struct Remainder {
    /// The spec without `config.storage.files` and `config.passwd`.
    without_keys: Value,
    /// `config.passwd.users` without their SSH keys.
    users_without_keys: Vec<Value>,
    /// SSH keys by user name.
    ssh_keys: BTreeMap<String, Value>,
}

type FilesByPath = BTreeMap<String, Value>;

fn split_config(spec: &Value) -> Result<(FilesByPath, Remainder), String> {
    let mut rest = spec.clone();
    let config = rest.get_mut("config").and_then(Value::as_object_mut);
    let (files, passwd) = match config {
        Some(config) => {
            let files = config
                .get_mut("storage")
                .and_then(Value::as_object_mut)
                .and_then(|storage| storage.remove("files"));
            (files, config.remove("passwd"))
        }
        None => (None, None),
    };

    let mut by_path = FilesByPath::new();
    for file in list(files, "config.storage.files")? {
        let path = file
            .get("path")
            .and_then(Value::as_str)
            .ok_or("a file in config.storage.files has no string path")?
            .to_string();
        by_path.insert(path, file);
    }

    let mut users_without_keys = Vec::new();
    let mut ssh_keys = BTreeMap::new();
    let users = passwd.and_then(|mut p| p.get_mut("users").map(Value::take));
    for mut user in list(users, "config.passwd.users")? {
        let name = user
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let keys = user
            .as_object_mut()
            .and_then(|u| u.remove("sshAuthorizedKeys"))
            .unwrap_or(Value::Null);
        ssh_keys.insert(name, keys);
        users_without_keys.push(user);
    }
    Ok((
        by_path,
        Remainder {
            without_keys: rest,
            users_without_keys,
            ssh_keys,
        },
    ))
}

fn list(value: Option<Value>, field: &str) -> Result<Vec<Value>, String> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(format!("{field} is not a list")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(files: Value, keys: Value, os: &str) -> String {
        json!({
            "osImageURL": os,
            "config": {
                "ignition": {"version": "3.4.0"},
                "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": keys}]},
                "storage": {"files": files},
            }
        })
        .to_string()
    }

    fn file(path: &str, data: &str) -> Value {
        json!({"path": path, "contents": {"source": format!("data:,{data}")}})
    }

    #[test]
    fn identical_configs_need_nothing() {
        let a = spec(json!([file("/etc/a", "1")]), json!(["k1"]), "os1");
        let plan = plan(&a, &a).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            plan,
            UpdatePlan {
                action: PostAction::None,
                os_update: false,
                ssh_update: false
            }
        );
        assert!(!plan.drain_required());
    }

    #[test]
    fn ssh_keys_and_pull_secret_need_no_reboot() {
        let a = spec(json!([file(PULL_SECRET, "1")]), json!(["k1"]), "os1");
        let b = spec(json!([file(PULL_SECRET, "2")]), json!(["k2"]), "os1");
        let plan = plan(&a, &b).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plan.action, PostAction::None);
        assert!(plan.ssh_update);
        assert_eq!(plan.actions_text(), "[none]");
    }

    #[test]
    fn registries_reload_crio() {
        let a = spec(json!([]), json!([]), "os1");
        let b = spec(
            json!([file("/etc/containers/registries.d/x.yaml", "2")]),
            json!([]),
            "os1",
        );
        assert_eq!(plan(&a, &b).map(|p| p.action), Ok(PostAction::ReloadCrio));
        let c = spec(
            json!([file("/etc/containers/registries.conf", "2")]),
            json!([]),
            "os1",
        );
        assert_eq!(plan(&a, &c).map(|p| p.action), Ok(PostAction::ReloadCrio));
    }

    #[test]
    fn anything_else_reboots() {
        let a = spec(
            json!([file("/etc/containers/registries.conf", "1")]),
            json!([]),
            "os1",
        );
        let b = spec(
            json!([
                file("/etc/containers/registries.conf", "2"),
                file("/etc/motd", "x")
            ]),
            json!([]),
            "os1",
        );
        assert_eq!(plan(&a, &b).map(|p| p.action), Ok(PostAction::Reboot));
        let os = spec(
            json!([file("/etc/containers/registries.conf", "1")]),
            json!([]),
            "os2",
        );
        let p = plan(&a, &os).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (p.action, p.os_update, p.drain_required()),
            (PostAction::Reboot, true, true)
        );
    }

    #[test]
    fn broken_specs_are_errors_not_panics() {
        let good = spec(json!([]), json!([]), "os1");
        for bad in [
            "",
            "[]",
            "{\"config\":{\"storage\":{\"files\":7}}}",
            "{\"config\":{\"storage\":{\"files\":[{}]}}}",
            "{\"config\":{\"passwd\":{\"users\":\"x\"}}}",
            "{",
        ] {
            assert!(plan(&good, bad).is_err(), "{bad:?} accepted");
        }
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(plan(&good, &deep).is_err());
    }
}
