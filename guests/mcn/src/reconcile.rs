//! Whether the daemon can move a node from one rendered config to another
//! in place: upstream's reconcilability rules (MCO `pkg/daemon/update.go`
//! `reconcilable`, which runs `pkg/controller/common/reconcile.go`
//! `IsRenderedConfigReconcilable`), with its messages. The daemon checks
//! before it prepares the update, so a refused update never shows
//! `Update Compatible`. `docs/mcn-derivation.md` lists the rules.
//!
//! Sections are compared by their digests in the config's summary
//! ([`Summary`]). What the rules read beyond equality, the desired
//! config's users and the files that append, comes from a small typed
//! view ([`view`], part of the summary) that skips everything else (file
//! contents, the bulk of a large config) as it is parsed.

use serde::Deserialize;
use serde_json::Value;

use crate::RenderedConfig;
use crate::spec::{Digests, FileNote, Section, User, View};

/// The file that makes the daemon redo an update; no config may create it
/// (`MachineConfigDaemonForceFile`).
const FORCE_FILE: &str = "/run/machine-config-daemon-force";

/// The only user the daemon manages in place.
const CORE_USER: &str = "core";

/// Checks the update from `current` to `desired`; the error is the one the
/// daemon reports (and prints in `UpdatePrepared`). A spec that cannot be
/// read is left to the plan, which reports it (upstream fails such an
/// update before this check).
pub fn check(current: &RenderedConfig, desired: &RenderedConfig) -> Result<(), String> {
    let (Ok(old), Ok(new), Some(view)) =
        (&current.spec.spec, &desired.spec.spec, &desired.spec.view)
    else {
        return Ok(());
    };
    rules(old, new, view).map_err(|why| {
        let (c, d) = (&current.name, &desired.name);
        format!(
            "configs {c}, {d} are not reconcilable: new machineconfig \"{c}\" is not reconcilable against \"{d}\": {why}"
        )
    })
}

/// `isConfigReconcilable`, in its order; `view` is the desired config's.
fn rules(old: &Digests, new: &Digests, view: &View) -> Result<(), String> {
    let differs = |section: Section| old.digest(section) != new.digest(section);
    let (groups, users) = (
        differs(Section::PasswdGroups),
        differs(Section::PasswdUsers),
    );
    if groups || users {
        passwd(groups, users, &view.users)
            .map_err(|why| format!("invalid passwd change(s): {why}"))?;
    }
    let sections = [
        (Section::IgnitionKernelArguments, "kargs"),
        (Section::Disks, "disks"),
        (Section::Filesystems, "filesystems"),
        (Section::Raid, "raid"),
        (Section::Directories, "directories"),
    ];
    for (section, name) in sections {
        if differs(section) {
            return Err(format!("ignition {name} section contains changes"));
        }
    }
    // Removing links is allowed (older configs had some).
    if differs(Section::Links) && new.digest(Section::Links).is_some() {
        return Err("ignition links section contains changes".to_string());
    }
    for file in &view.files {
        if file.appends {
            return Err(format!("ignition file {} includes append", file.path));
        }
        if file.path == FORCE_FILE {
            return Err(format!("cannot create {} via Ignition", file.path));
        }
    }
    if old.fips != new.fips {
        return Err(
            "detected change to FIPS flag; refusing to modify FIPS on a running cluster"
                .to_string(),
        );
    }
    Ok(())
}

/// `validatePasswdChanges` and `verifyUserFields`: groups never change;
/// users may change only as the `core` user's SSH keys and password hash.
fn passwd(groups_differ: bool, users_differ: bool, users: &[User]) -> Result<(), &'static str> {
    if groups_differ {
        return Err("ignition Passwd Groups section contains changes");
    }
    if !users_differ {
        return Ok(());
    }
    if users.iter().any(|u| u.name.as_deref() != Some(CORE_USER)) {
        return Err("ignition passwd user section contains unsupported changes: non-core user");
    }
    // Upstream verifies only the last user.
    let Some(user) = users.last() else {
        return Ok(());
    };
    let set = |field: &str| user.set_fields.iter().any(|f| f == field);
    if !set("passwordHash") && user.ssh_keys == 0 {
        return Err(
            "ignition passwd user section contains unsupported changes: user must be core and have 1 or more sshKeys",
        );
    }
    let managed = ["name", "passwordHash", "sshAuthorizedKeys"];
    if user
        .set_fields
        .iter()
        .any(|f| !managed.contains(&f.as_str()))
    {
        return Err("SSH keys and password hash are not reconcilable");
    }
    Ok(())
}

/// What the rules read of a config as the desired one, from its JSON
/// text: every user, and the files that append or are the force file.
/// `None` when the typed view cannot be read.
pub(crate) fn view(text: &str) -> Option<View> {
    let spec = serde_json::from_str::<SpecText>(text).ok()?;
    let config = spec.config.unwrap_or_default();
    let users = config.passwd.map(|p| p.users).unwrap_or_default();
    let files = config.storage.map(|s| s.files).unwrap_or_default();
    Some(View {
        users: users.iter().map(user).collect(),
        files: files
            .into_iter()
            .filter(|file| file.appends() || file.path == FORCE_FILE)
            .map(|file| FileNote {
                appends: file.appends(),
                path: file.path,
            })
            .collect(),
    })
}

fn user(value: &Value) -> User {
    User {
        name: value["name"].as_str().map(str::to_string),
        set_fields: value
            .as_object()
            .map(|fields| {
                fields
                    .iter()
                    .filter(|(_, v)| !is_unset(v))
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .unwrap_or_default(),
        ssh_keys: value["sshAuthorizedKeys"]
            .as_array()
            .map_or(0, |keys| u32::try_from(keys.len()).unwrap_or(u32::MAX)),
    }
}

/// Absent, `null`, `[]` and `{}`: the same as not set.
fn is_unset(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

// The typed view: only these fields are read; every other one (file
// contents, units, the OS image) is skipped by the parser.

#[derive(Deserialize, Default)]
#[serde(default)]
struct SpecText {
    config: Option<ConfigText>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ConfigText {
    passwd: Option<PasswdText>,
    storage: Option<StorageText>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PasswdText {
    #[serde(deserialize_with = "list")]
    users: Vec<Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct StorageText {
    #[serde(deserialize_with = "list")]
    files: Vec<FileText>,
}

/// A list that may be `null`.
fn list<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct FileText {
    path: String,
    append: Value,
}

impl FileText {
    /// Ignition 3 lists the appended contents; a converted Ignition 2
    /// file says `append: true`.
    fn appends(&self) -> bool {
        match &self.append {
            Value::Array(items) => !items.is_empty(),
            Value::Bool(append) => *append,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(name: &str, spec: Value) -> RenderedConfig {
        RenderedConfig::new(name, &spec.to_string())
    }

    /// A rendered config as the render controller writes one.
    fn base() -> Value {
        json!({
            "osImageURL": "quay.io/os@sha256:00",
            "fips": false,
            "config": {
                "ignition": {"version": "3.5.0"},
                "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 a"]}]},
                "storage": {
                    "files": [{"path": "/etc/motd", "contents": {"source": "data:,hi"}, "mode": 420}],
                    "disks": [{"device": "/dev/vdb", "partitions": [{"label": "data"}]}],
                },
                "systemd": {"units": [{"name": "a.service", "enabled": true}]},
            },
        })
    }

    fn push(list: &mut Value, item: Value) {
        if let Some(items) = list.as_array_mut() {
            items.push(item);
        }
    }

    /// The error for `base` changed by `change`, or `None` when the update
    /// is reconcilable.
    fn refused(change: impl FnOnce(&mut Value)) -> Option<String> {
        let mut desired = base();
        change(&mut desired);
        check(&config("a", base()), &config("b", desired)).err()
    }

    fn why(change: impl FnOnce(&mut Value)) -> String {
        let err = refused(change).unwrap_or_else(|| panic!("accepted"));
        let wrapping = "configs a, b are not reconcilable: new machineconfig \"a\" is not reconcilable against \"b\": ";
        err.strip_prefix(wrapping)
            .unwrap_or_else(|| panic!("not wrapped as upstream: {err}"))
            .to_string()
    }

    #[test]
    fn what_the_daemon_does_in_place_is_reconcilable() {
        assert_eq!(refused(|_| {}), None);
        // Files, units, the OS, kernel arguments of the MachineConfig (not
        // Ignition's), the core user's keys and password hash.
        assert_eq!(
            refused(|d| {
                d["osImageURL"] = json!("quay.io/os@sha256:11");
                d["kernelArguments"] = json!(["nosmt"]);
                d["config"]["storage"]["files"][0]["contents"]["source"] = json!("data:,bye");
                d["config"]["systemd"]["units"] = json!([]);
                d["config"]["passwd"]["users"] =
                    json!([{"name": "core", "sshAuthorizedKeys": ["b"], "passwordHash": "$6$x"}]);
            }),
            None
        );
        // Absent, null, [] and {} are the same configuration.
        assert_eq!(
            refused(|d| {
                d["config"]["storage"]["raid"] = json!([]);
                d["config"]["storage"]["links"] = Value::Null;
                d["config"]["passwd"]["groups"] = json!([]);
                d["config"]["kernelArguments"] = json!({});
            }),
            None
        );
        // Links may go.
        let mut with_links = base();
        with_links["config"]["storage"]["links"] = json!([{"path": "/etc/l", "target": "/x"}]);
        assert_eq!(
            check(&config("a", with_links), &config("b", base())).err(),
            None
        );
    }

    #[test]
    fn each_rule_refuses_with_upstreams_message() {
        type Change = fn(&mut Value);
        let cases: [(Change, &str); 13] = [
            (
                |d| d["config"]["passwd"]["groups"] = json!([{"name": "wheel"}]),
                "invalid passwd change(s): ignition Passwd Groups section contains changes",
            ),
            (
                |d| {
                    push(
                        &mut d["config"]["passwd"]["users"],
                        json!({"name": "admin"}),
                    )
                },
                "invalid passwd change(s): ignition passwd user section contains unsupported changes: non-core user",
            ),
            (
                |d| d["config"]["passwd"]["users"][0]["shell"] = json!("/bin/zsh"),
                "invalid passwd change(s): SSH keys and password hash are not reconcilable",
            ),
            (
                |d| d["config"]["passwd"]["users"][0]["sshAuthorizedKeys"] = json!([]),
                "invalid passwd change(s): ignition passwd user section contains unsupported changes: user must be core and have 1 or more sshKeys",
            ),
            (
                |d| d["config"]["kernelArguments"] = json!({"shouldExist": ["nosmt"]}),
                "ignition kargs section contains changes",
            ),
            (
                |d| d["config"]["storage"]["disks"][0]["wipeTable"] = json!(true),
                "ignition disks section contains changes",
            ),
            (
                |d| {
                    d["config"]["storage"]["filesystems"] =
                        json!([{"device": "/dev/vdb1", "format": "xfs", "path": "/var/data"}]);
                },
                "ignition filesystems section contains changes",
            ),
            (
                |d| d["config"]["storage"]["raid"] = json!([{"name": "md0", "level": "raid1"}]),
                "ignition raid section contains changes",
            ),
            (
                |d| d["config"]["storage"]["directories"] = json!([{"path": "/var/x"}]),
                "ignition directories section contains changes",
            ),
            (
                |d| d["config"]["storage"]["links"] = json!([{"path": "/etc/l", "target": "/x"}]),
                "ignition links section contains changes",
            ),
            (
                |d| d["config"]["storage"]["files"][0]["append"] = json!([{"source": "data:,x"}]),
                "ignition file /etc/motd includes append",
            ),
            (
                |d| {
                    push(
                        &mut d["config"]["storage"]["files"],
                        json!({"path": FORCE_FILE}),
                    )
                },
                "cannot create /run/machine-config-daemon-force via Ignition",
            ),
            (
                |d| d["fips"] = json!(true),
                "detected change to FIPS flag; refusing to modify FIPS on a running cluster",
            ),
        ];
        for (change, message) in cases {
            assert_eq!(why(change), message);
        }
    }

    /// The first rule that fails names the error, in upstream's order.
    #[test]
    fn the_first_failing_rule_wins() {
        assert_eq!(
            why(|d| {
                d["fips"] = json!(true);
                d["config"]["storage"]["raid"] = json!([{"name": "md0"}]);
                d["config"]["passwd"]["groups"] = json!([{"name": "wheel"}]);
            }),
            "invalid passwd change(s): ignition Passwd Groups section contains changes"
        );
        // Only the last user is verified, and only when users change.
        assert_eq!(
            refused(|d| {
                d["config"]["passwd"]["users"] = json!([
                    {"name": "core", "shell": "/bin/sh"},
                    {"name": "core", "sshAuthorizedKeys": ["k"]},
                ]);
            }),
            None
        );
    }

    #[test]
    fn unreadable_specs_are_left_to_the_plan() {
        let good = config("a", base());
        for bad in ["", "[]", "{\"config\": {\"storage\": {\"files\": 3}}}", "{"] {
            let bad = RenderedConfig::new("b", bad);
            assert_eq!(check(&good, &bad), Ok(()));
        }
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let deep = RenderedConfig::new(
            "b",
            &format!("{{\"config\": {{\"storage\": {{\"disks\": {deep}}}}}}}"),
        );
        assert_eq!(check(&good, &deep), Ok(()));
    }

    /// A config of the size the API server holds (~1.5 MiB, mostly file
    /// contents) is read without keeping its contents.
    #[test]
    fn large_configs_are_checked() {
        let files: Vec<Value> = (0..1500)
            .map(|i| json!({"path": format!("/etc/f{i}"), "contents": {"source": format!("data:,{}", "x".repeat(1000))}}))
            .collect();
        let mut big = base();
        big["config"]["storage"]["files"] = json!(files);
        let mut refused_big = big.clone();
        refused_big["config"]["storage"]["files"][1499]["append"] = json!([{"source": "data:,y"}]);
        assert!(big.to_string().len() > 1_500_000);
        assert_eq!(check(&config("a", base()), &config("b", big)), Ok(()));
        let err = check(&config("a", base()), &config("b", refused_big)).err();
        assert!(err.is_some_and(|e| e.ends_with("ignition file /etc/f1499 includes append")));
    }
}
