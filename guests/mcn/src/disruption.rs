//! What moving a node from one rendered MachineConfig to another takes,
//! decided from the cluster's node disruption policies as the daemon does
//! after first boot (upstream `pkg/daemon/update.go`
//! `calculatePostConfigChangeNodeDisruptionAction` and `pkg/daemon/drain.go`
//! `isDrainRequiredForNodeDisruptionActions`): the post-config actions,
//! whether the node is drained, and the OS and files flags the
//! AppliedFilesAndOS messages print.

use std::collections::{BTreeMap, BTreeSet};

use crate::registries;
use crate::spec::{Digest, Digests, Section, Summary};
use crate::{DisruptionAction, DisruptionPolicies, FilePolicy, UnitPolicy};

/// The file the `Special` action is about.
pub const REGISTRIES_CONF: &str = "/etc/containers/registries.conf";

impl DisruptionPolicies {
    /// The operator's built-in cluster policies (MCO `7ff337a4`,
    /// `pkg/apihelpers/apihelpers.go` `defaultClusterPolicies`), in its order. Used when MachineConfiguration
    /// `cluster` has no usable status; admin policies merge onto them.
    pub fn defaults() -> DisruptionPolicies {
        use DisruptionAction::{DaemonReload, None, Reload, Restart, Special};
        let reload = |s: &str| Reload(s.to_string());
        let restart = |s: &str| Restart(s.to_string());
        let files = [
            ("/var/lib/kubelet/config.json", vec![None]),
            (
                "/etc/machine-config-daemon/no-reboot/containers-gpg.pub",
                vec![reload("crio.service")],
            ),
            ("/etc/containers/policy.json", vec![reload("crio.service")]),
            (REGISTRIES_CONF, vec![Special]),
            ("/etc/containers/registries.d", vec![reload("crio.service")]),
            ("/etc/crio/policies", vec![reload("crio.service")]),
            ("/etc/nmstate/openshift", vec![None]),
            (
                "/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt",
                vec![
                    restart("coreos-update-ca-trust.service"),
                    restart("crio.service"),
                ],
            ),
            (
                "/etc/kubernetes/credential-providers",
                vec![restart("kubelet.service")],
            ),
            (
                "/etc/systemd/system/kubelet.service.d/40-kubelet-crio-image-credential-provider.conf",
                vec![DaemonReload, restart("kubelet.service")],
            ),
            ("/etc/iri-registry", vec![restart("iri-registry.service")]),
            (
                "/usr/local/bin/load-registry-image.sh",
                vec![restart("iri-registry.service")],
            ),
            (
                "/etc/pki/ca-trust/source/anchors/iri-root-ca.crt",
                vec![restart("coreos-update-ca-trust.service")],
            ),
        ];
        DisruptionPolicies {
            files: files
                .into_iter()
                .map(|(path, actions)| FilePolicy {
                    path: path.to_string(),
                    actions,
                })
                .collect(),
            units: vec![UnitPolicy {
                name: "iri-registry.service".to_string(),
                actions: vec![DaemonReload, restart("iri-registry.service")],
            }],
            ssh_key: vec![None],
        }
    }
}

/// The decision for one update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The post-config actions in the order the daemon runs them: `[Reboot]`,
    /// `[None]`, or the policies' actions (possibly empty).
    pub actions: Vec<DisruptionAction>,
    /// Whether the node is cordoned and drained before the files change.
    pub drain: bool,
    /// The OS image, extensions or kernel type change.
    pub os: bool,
    /// Files or users change ("SSH Keys" in upstream's messages).
    pub files_or_passwd: bool,
}

impl Plan {
    pub fn reboots(&self) -> bool {
        self.actions.contains(&DisruptionAction::Reboot)
    }

    /// An update between two images of the same rendered config. Once
    /// either side has an image, upstream's `newMachineConfigDiff` takes
    /// the OS update from the images alone (or the force file), nothing
    /// else differs, and `calculatePostConfigChangeNodeDisruptionAction`
    /// reboots on an OS update, so the node drains and reboots.
    pub fn os_image_only() -> Plan {
        Plan {
            actions: vec![DisruptionAction::Reboot],
            drain: true,
            os: true,
            files_or_passwd: false,
        }
    }
}

/// Compares two MachineConfig specs by their summaries. `image_changes` is
/// whether the node's current and desired image annotations differ (image
/// mode). `Err` is a spec that cannot be read.
pub fn plan<'a>(
    current: &'a Summary,
    desired: &'a Summary,
    policies: &DisruptionPolicies,
    image_changes: bool,
) -> Result<Plan, String> {
    let readable = |summary: &'a Summary, which: &str| -> Result<&'a Digests, String> {
        summary
            .spec
            .as_ref()
            .map_err(|why| format!("the {which} MachineConfig spec {why}"))
    };
    let (current, desired) = (readable(current, "current")?, readable(desired, "desired")?);
    let differs = |section: Section| current.digest(section) != desired.digest(section);
    let os = image_changes
        || differs(Section::OsImageUrl)
        || differs(Section::Extensions)
        || current.kernel_type() != desired.kernel_type();
    let kargs = differs(Section::KernelArguments);
    let fips = current.fips != desired.fips;
    let passwd = differs(Section::Passwd);
    let files = differs(Section::Files);
    let units = differs(Section::Units);
    // Read even when a reboot settles it: a config the daemon could not
    // read fails the update upstream (W4) whatever else changed.
    let current_files = current.files.as_ref().map_err(Clone::clone)?;
    let desired_files = desired.files.as_ref().map_err(Clone::clone)?;
    let current_units = current.units.as_ref().map_err(Clone::clone)?;
    let desired_units = desired.units.as_ref().map_err(Clone::clone)?;

    let actions = if os || kargs || fips {
        vec![DisruptionAction::Reboot]
    } else if !files && !units && !passwd {
        vec![DisruptionAction::None]
    } else {
        policy_actions(
            policies,
            &changed(&current_files.by_key, &desired_files.by_key),
            &changed(&current_units.by_key, &desired_units.by_key),
            passwd,
        )
    };
    let drain = if actions
        .iter()
        .any(|a| matches!(a, DisruptionAction::Reboot | DisruptionAction::Drain))
    {
        true
    } else if actions.contains(&DisruptionAction::Special) {
        !registries::safe_change(
            current_files.registries_conf(),
            desired_files.registries_conf(),
        )
    } else {
        false
    };
    Ok(Plan {
        actions,
        drain,
        os,
        files_or_passwd: files || passwd,
    })
}

/// As `calculatePostConfigChangeNodeDisruptionActionFromMCDiffs`: the actions of the closest file policy of every changed
/// path, the unit policy of every changed unit, and the SSH key policy.
fn policy_actions(
    policies: &DisruptionPolicies,
    paths: &BTreeSet<&str>,
    units: &BTreeSet<&str>,
    passwd: bool,
) -> Vec<DisruptionAction> {
    let mut list = Vec::new();
    for path in paths {
        let mut closest: Option<&FilePolicy> = None;
        for policy in &policies.files {
            if covers(&policy.path, path)
                && closest.is_none_or(|best| policy.path.len() > best.path.len())
            {
                closest = Some(policy);
            }
        }
        match closest {
            Some(policy) => list.extend(policy.actions.iter().cloned()),
            None => return vec![DisruptionAction::Reboot],
        }
    }
    for unit in units {
        match policies.units.iter().find(|p| p.name == *unit) {
            Some(policy) => list.extend(policy.actions.iter().cloned()),
            None => return vec![DisruptionAction::Reboot],
        }
    }
    if passwd {
        list.extend(policies.ssh_key.iter().cloned());
    }
    if list.contains(&DisruptionAction::Reboot) {
        return vec![DisruptionAction::Reboot];
    }
    if list.contains(&DisruptionAction::None) {
        list.retain(|a| *a != DisruptionAction::None);
        if list.is_empty() {
            return vec![DisruptionAction::None];
        }
    }
    list
}

/// A policy path covers the same path and everything below it, compared
/// after cleaning both (`//`, `.`, `..`, a trailing `/`).
fn covers(policy: &str, path: &str) -> bool {
    if policy == path {
        return true;
    }
    let (policy, path) = (clean(policy), clean(path));
    policy == path || path.starts_with(&format!("{}/", policy.trim_end_matches('/')))
}

fn clean(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    let joined = parts.join("/");
    if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

/// Keys present on one side only, or on both with different entries: one
/// walk of the two maps in key order (a config holds thousands of files).
pub fn changed<'a>(
    current: &'a BTreeMap<String, Digest>,
    desired: &'a BTreeMap<String, Digest>,
) -> BTreeSet<&'a str> {
    use std::cmp::Ordering;
    let (mut current, mut desired) = (current.iter().peekable(), desired.iter().peekable());
    let mut keys = BTreeSet::new();
    loop {
        let order = match (current.peek(), desired.peek()) {
            (None, None) => return keys,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((c, _)), Some((d, _))) => c.cmp(d),
        };
        match order {
            Ordering::Less => keys.extend(current.next().map(|(key, _)| key.as_str())),
            Ordering::Greater => keys.extend(desired.next().map(|(key, _)| key.as_str())),
            Ordering::Equal => {
                if let (Some((key, c)), Some((_, d))) = (current.next(), desired.next())
                    && c != d
                {
                    keys.insert(key.as_str());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DisruptionAction::*;
    use serde_json::{Value, json};

    /// Added, removed and edited keys, in key order; equal ones are not.
    #[test]
    fn changed_keys_are_those_added_removed_or_edited() {
        let map = |entries: &[(&str, u8)]| -> BTreeMap<String, Digest> {
            entries
                .iter()
                .map(|(k, d)| (k.to_string(), [*d; 32]))
                .collect()
        };
        let current = map(&[("/a", 1), ("/b", 1), ("/c", 1), ("/e", 1)]);
        let desired = map(&[("/b", 1), ("/c", 2), ("/d", 1), ("/e", 1), ("/f", 1)]);
        let keys: Vec<&str> = changed(&current, &desired).into_iter().collect();
        assert_eq!(keys, ["/a", "/c", "/d", "/f"]);
        assert_eq!(
            changed(&desired, &current).into_iter().collect::<Vec<_>>(),
            keys
        );
        assert!(changed(&current, &current).is_empty());
        assert_eq!(changed(&BTreeMap::new(), &current).len(), 4);
    }

    fn policies() -> DisruptionPolicies {
        let file = |path: &str, actions: Vec<DisruptionAction>| FilePolicy {
            path: path.into(),
            actions,
        };
        DisruptionPolicies {
            files: vec![
                file("/var/lib/kubelet/config.json", vec![None]),
                file(
                    "/etc/containers/registries.d",
                    vec![Reload("crio.service".into())],
                ),
                file(REGISTRIES_CONF, vec![Special]),
                file("/etc/drain-me", vec![Drain]),
                file("/etc/two", vec![DaemonReload, Restart("a.service".into())]),
                file("/etc/two/deeper", vec![Restart("b.service".into())]),
            ],
            units: vec![UnitPolicy {
                name: "x.service".into(),
                actions: vec![Restart("x.service".into())],
            }],
            ssh_key: vec![None],
        }
    }

    fn spec(files: &[(&str, &str)], units: &[(&str, &str)], key: &str) -> String {
        let files: Vec<Value> = files
            .iter()
            .map(|(p, d)| json!({"path": p, "contents": {"source": format!("data:,{d}")}}))
            .collect();
        let units: Vec<Value> = units
            .iter()
            .map(|(n, c)| json!({"name": n, "contents": c}))
            .collect();
        json!({
            "osImageURL": "os",
            "config": {
                "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": [key]}]},
                "storage": {"files": files},
                "systemd": {"units": units},
            }
        })
        .to_string()
    }

    fn actions(a: &str, b: &str) -> (Vec<DisruptionAction>, bool) {
        let plan = plan(&Summary::read(a), &Summary::read(b), &policies(), false)
            .unwrap_or_else(|e| panic!("{e}"));
        (plan.actions, plan.drain)
    }

    #[test]
    fn closest_policy_wins_and_paths_are_cleaned() {
        let a = spec(&[], &[], "k");
        let deeper = spec(&[("/etc/two/deeper/f", "1")], &[], "k");
        assert_eq!(
            actions(&a, &deeper),
            (vec![Restart("b.service".into())], false)
        );
        let odd = spec(&[("/etc//two/./x", "1")], &[], "k");
        assert_eq!(
            actions(&a, &odd),
            (vec![DaemonReload, Restart("a.service".into())], false)
        );
        // A policy on a file does not cover a sibling sharing its prefix.
        let sibling = spec(&[("/etc/containers/registries.conf.d/x", "1")], &[], "k");
        assert_eq!(actions(&a, &sibling), (vec![Reboot], true));
    }

    #[test]
    fn none_drops_out_unless_alone_and_reboot_wins() {
        let a = spec(&[("/var/lib/kubelet/config.json", "1")], &[], "k");
        let b = spec(&[("/var/lib/kubelet/config.json", "2")], &[], "k2");
        assert_eq!(actions(&a, &b), (vec![None], false));
        let c = spec(
            &[
                ("/var/lib/kubelet/config.json", "2"),
                ("/etc/drain-me", "x"),
            ],
            &[("x.service", "y")],
            "k",
        );
        assert_eq!(
            actions(&a, &c),
            (vec![Drain, Restart("x.service".into())], true)
        );
        let unknown_unit = spec(
            &[("/var/lib/kubelet/config.json", "1")],
            &[("y.service", "")],
            "k",
        );
        assert_eq!(actions(&a, &unknown_unit), (vec![Reboot], true));
    }

    #[test]
    fn os_kargs_and_fips_reboot_without_asking_policies() {
        let a = spec(&[], &[], "k");
        let mut b: Value = serde_json::from_str(&a).unwrap_or_default();
        b["kernelArguments"] = json!(["nosmt"]);
        assert_eq!(actions(&a, &b.to_string()), (vec![Reboot], true));
        b["kernelArguments"] = json!([]);
        b["kernelType"] = json!("something-odd");
        b["fips"] = json!(false);
        assert_eq!(actions(&a, &b.to_string()), (vec![None], false));
        let a = Summary::read(&a);
        let plan = plan(&a, &a, &policies(), true).unwrap_or_else(|e| panic!("{e}"));
        assert!(plan.os && plan.reboots());
    }

    #[test]
    fn broken_specs_are_errors_not_panics() {
        let good = spec(&[("/etc/a", "1")], &[], "k");
        for bad in [
            "",
            "[]",
            "{\"config\":{\"storage\":{\"files\":7}}}",
            "{\"config\":{\"storage\":{\"files\":[{\"x\":1}]}}}",
            "{\"config\":{\"systemd\":{\"units\":[{\"name\":3}]}}}",
            "{",
        ] {
            assert!(
                plan(
                    &Summary::read(&good),
                    &Summary::read(bad),
                    &policies(),
                    false
                )
                .is_err(),
                "{bad:?} accepted"
            );
        }
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let (good, deep) = (Summary::read(&good), Summary::read(&deep));
        assert!(plan(&good, &deep, &policies(), false).is_err());
    }
}
