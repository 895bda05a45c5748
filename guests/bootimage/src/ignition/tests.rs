//! The stub upgrade end to end through [`upgrade_stub`], plus the two helpers
//! whose Go counterparts decide error texts and duplicate detection.

use super::translate::clean_path;
use super::*;
use serde_json::json;

const STUB22: &str = r#"{"ignition":{"config":{"append":[{"source":"https://api-int.c1.example.com:22623/config/worker","verification":{}}]},"security":{"tls":{"certificateAuthorities":[{"source":"data:text/plain;charset=utf-8;base64,LS0t","verification":{}}]}},"timeouts":{},"version":"2.2.0"},"networkd":{},"passwd":{},"storage":{},"systemd":{}}"#;

fn converted(input: &str) -> Value {
    match upgrade_stub(input).unwrap() {
        StubUpgrade::Converted(s) => serde_json::from_str(&s).unwrap(),
        StubUpgrade::AlreadyCurrent => panic!("not converted"),
    }
}

#[test]
fn installer_stub_converts_like_the_spec_says() {
    let out = upgrade_stub(STUB22).unwrap();
    assert_eq!(
        out,
        StubUpgrade::Converted(
            r#"{"ignition":{"config":{"merge":[{"source":"https://api-int.c1.example.com:22623/config/worker"}]},"security":{"tls":{"certificateAuthorities":[{"source":"data:text/plain;charset=utf-8;base64,LS0t"}]}},"version":"3.5.0"}}"#
                .to_owned()
        )
    );
}

#[test]
fn spec3_is_left_alone() {
    for v in ["3.0.0", "3.2.0", "3.5.0", "3.9.9", "3"] {
        let s = json!({"ignition": {"version": v}}).to_string();
        assert_eq!(
            upgrade_stub(&s).unwrap(),
            StubUpgrade::AlreadyCurrent,
            "{v}"
        );
    }
}

#[test]
fn version_errors() {
    // Spec 2.3 is newer than upstream's spec 2 parser; 1.x, a 2.1 patch
    // release and a 2.1 pre-release are none of the three it reads.
    for v in ["2.3.0", "1.0.0", "2.1.1", "2.0.0-experimental"] {
        let e = upgrade_stub(&json!({"ignition": {"version": v}}).to_string()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "converting ignition stub failed: failed to parse Ignition config: parsing Ignition config failed: unknown version. Supported spec versions: 2.2, 3.0, 3.1, 3.2, 3.3, 3.4, 3.5",
            "{v}"
        );
    }
    for bad in [
        r#"{"ignition":{"version":"2.2"}}"#,
        r#"{"ignition":{}}"#,
        r#"{}"#,
    ] {
        let e = upgrade_stub(bad).unwrap_err().to_string();
        assert!(e.contains("invalid version"), "{bad}: {e}");
    }
    let e = upgrade_stub(r#"{"ignition":{"version":2.2}}"#).unwrap_err();
    assert!(matches!(e, StubError::Version(_)), "{e}");
    let e = upgrade_stub(r#"{"ignition":"x"}"#).unwrap_err();
    assert!(matches!(e, StubError::Version(_)), "{e}");
}

#[test]
fn not_json_or_not_an_object() {
    for bad in ["", "garbage", "[1,2]", "\"s\"", "{\"ignition\":"] {
        let e = upgrade_stub(bad).unwrap_err();
        assert!(matches!(e, StubError::NotJson(_)), "{bad}: {e}");
    }
}

#[test]
fn wrong_types_inside_a_spec2_config() {
    let e = upgrade_stub(r#"{"ignition":{"version":"2.2.0","config":{"append":"x"}}}"#)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("converting ignition stub failed: failed to parse Ignition config: parsing Ignition spec v2 failed with error: invalid type"),
        "{e}"
    );
}

#[test]
fn only_core_user_is_supported() {
    let s = json!({"ignition": {"version": "2.2.0"}, "passwd": {"users": [
        {"name": "core", "sshAuthorizedKeys": ["a"]},
        {"name": "admin", "sshAuthorizedKeys": ["b"]}
    ]}})
    .to_string();
    assert_eq!(
        upgrade_stub(&s).unwrap_err().to_string(),
        "converting ignition stub failed: unexpected user with name: admin. Only core user is supported"
    );
}

#[test]
fn core_users_merge_and_dedupe_keys() {
    let s = json!({"ignition": {"version": "2.2.0"}, "passwd": {"users": [
        {"name": "core", "sshAuthorizedKeys": ["a", "b"]},
        {"name": "core", "sshAuthorizedKeys": ["c", "a"]}
    ]}})
    .to_string();
    assert_eq!(
        converted(&s)["passwd"],
        json!({"users": [{"name": "core", "sshAuthorizedKeys": ["c", "a", "b"]}]})
    );
}

#[test]
fn networkd_is_unconvertible() {
    let s =
        json!({"ignition": {"version": "2.2.0"}, "networkd": {"units": [{"name": "a.network"}]}})
            .to_string();
    let e = upgrade_stub(&s).unwrap_err();
    assert!(matches!(e, StubError::Convert(_)), "{e}");
}

#[test]
fn files_units_links_dirs() {
    let s = json!({"ignition": {"version": "2.2.0", "config": {"replace": {"source": "https://x/r", "verification": {"hash": "sha512-00"}}}, "timeouts": {"httpTotal": 30}},
        "storage": {
            "files": [
                {"filesystem": "root", "path": "/etc/a", "contents": {"source": "data:,1"}, "mode": 420},
                {"filesystem": "root", "path": "/etc/b", "append": true, "contents": {"source": "data:,2"}, "user": {"name": "core"}},
                {"filesystem": "root", "path": "/etc/a", "contents": {"source": "data:,3"}, "overwrite": false}
            ],
            "directories": [{"filesystem": "root", "path": "/var//d/", "mode": 493}],
            "links": [{"filesystem": "root", "path": "/etc/l", "target": "/etc/a", "hard": false}]
        },
        "systemd": {"units": [
            {"name": "a.service", "enabled": true, "contents": "[Unit]", "dropins": [{"name": "1.conf", "contents": "x"}]},
            {"name": "b.service", "mask": true},
            {"name": "a.service", "dropins": [{"name": "2.conf", "contents": "y"}, {"name": "1.conf", "contents": "z"}]}
        ]}
    })
    .to_string();
    let out = converted(&s);
    assert_eq!(
        out["ignition"],
        json!({"config": {"replace": {"source": "https://x/r", "verification": {"hash": "sha512-00"}}}, "timeouts": {"httpTotal": 30}, "version": "3.5.0"})
    );
    assert_eq!(
        out["storage"]["files"],
        json!([
            {"contents": {"source": "data:,3"}, "overwrite": false, "path": "/etc/a"},
            {"append": [{"source": "data:,2"}], "overwrite": false, "path": "/etc/b", "user": {"name": "core"}}
        ])
    );
    assert_eq!(
        out["storage"]["directories"],
        json!([{"mode": 493, "path": "/var/d"}])
    );
    assert_eq!(
        out["storage"]["links"],
        json!([{"path": "/etc/l", "target": "/etc/a"}])
    );
    assert_eq!(
        out["systemd"]["units"],
        json!([
            {"dropins": [{"contents": "y", "name": "2.conf"}, {"contents": "z", "name": "1.conf"}], "name": "a.service"},
            {"mask": true, "name": "b.service"}
        ])
    );
}

#[test]
fn unconvertible_storage() {
    for (cfg, needle) in [
        (
            json!({"storage": {"filesystems": [{"name": "data", "mount": {"device": "/dev/sdb"}}]}}),
            "filesystem \"data\"",
        ),
        (
            json!({"storage": {"disks": [{"device": "/dev/sdb"}]}}),
            "storage.disks",
        ),
        (
            json!({"storage": {"raid": [{"name": "md0"}]}}),
            "storage.raid",
        ),
        (
            json!({"storage": {"files": [{"filesystem": "data", "path": "/a"}]}}),
            "only the root filesystem",
        ),
        (
            json!({"storage": {"files": [{"filesystem": "root", "path": "/a"}], "directories": [{"filesystem": "root", "path": "/a"}]}}),
            "conflicting inodes",
        ),
        (
            json!({"storage": {"files": [{"filesystem": "root", "path": "/l/x"}], "links": [{"filesystem": "root", "path": "/l", "target": "/t"}]}}),
            "uses link",
        ),
        (
            json!({"systemd": {"units": [{"name": "a", "enable": true}]}}),
            "deprecated",
        ),
        (
            json!({"passwd": {"users": [{"name": "core", "create": {}}]}}),
            "deprecated",
        ),
        (
            json!({"systemd": {"units": [{"name": "a", "dropins": [{"name": "x"}, {"name": "x"}]}]}}),
            "duplicate dropin",
        ),
        (
            json!({"storage": {"files": [{"filesystem": "root", "path": "relative"}]}}),
            "path not absolute",
        ),
    ] {
        let mut cfg = cfg;
        cfg["ignition"] = json!({"version": "2.2.0"});
        let e = upgrade_stub(&cfg.to_string()).unwrap_err().to_string();
        assert!(e.contains(needle), "{cfg}: {e}");
    }
}

#[test]
fn root_filesystem_entry_is_implied() {
    let s = json!({"ignition": {"version": "2.2.0"}, "storage": {"filesystems": [{"name": "root", "mount": {"device": "/dev/x"}}]}})
        .to_string();
    assert_eq!(converted(&s), json!({"ignition": {"version": "3.5.0"}}));
}

#[test]
fn hostile_inputs_do_not_panic() {
    let deep = format!("{}{}", "[".repeat(50_000), "]".repeat(50_000));
    assert!(upgrade_stub(&deep).is_err());
    let deep_obj = format!(
        r#"{{"ignition":{{"version":"2.2.0"}},"x":{}{}}}"#,
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    assert!(upgrade_stub(&deep_obj).is_err());
    let huge = json!({"ignition": {"version": "2.2.0", "config": {"append": [{"source": "x".repeat(4 << 20)}]}}})
        .to_string();
    assert!(matches!(
        upgrade_stub(&huge).unwrap(),
        StubUpgrade::Converted(_)
    ));
}

#[test]
fn semver_shape() {
    assert!(is_semver("2.2.0"));
    assert!(is_semver("1.0.0-experimental"));
    assert!(!is_semver("2.2"));
    assert!(!is_semver(""));
    assert!(!is_semver("a.b.c"));
}

#[test]
fn path_cleaning() {
    assert_eq!(clean_path("/etc//a/./b/../c/"), "/etc/a/c");
    assert_eq!(clean_path("/"), "/");
    assert_eq!(clean_path("/../x"), "/x");
}

/// The installer stub of the 4.1–4.5 era in spec 2.1: no `security` section
/// exists in that spec.
const STUB21: &str = r#"{"ignition":{"config":{"append":[{"source":"https://api-int.c1.example.com:22623/config/worker","verification":{}}]},"timeouts":{},"version":"2.1.0"},"networkd":{},"passwd":{},"storage":{},"systemd":{}}"#;

#[test]
fn spec_2_1_and_2_0_stubs_convert_like_spec_2_2() {
    let want = json!({"ignition": {"config": {"merge": [{"source": "https://api-int.c1.example.com:22623/config/worker"}]}, "version": "3.5.0"}});
    assert_eq!(converted(STUB21), want);
    let stub20 = STUB21.replace(r#""timeouts":{},"version":"2.1.0""#, r#""version":"2.0.0""#);
    assert_eq!(converted(&stub20), want);
    assert_eq!(
        converted(r#"{"ignition":{"version":"2.0.0"}}"#),
        json!({"ignition": {"version": "3.5.0"}}),
        "a 2.0 stub with nothing but its version is an empty config"
    );
}

#[test]
fn keys_an_older_spec_lacks_are_dropped_whatever_their_type() {
    // Ignition's 2.1 types have no `security`: the CAs are lost, upstream too.
    let mut with_ca: Value = serde_json::from_str(STUB22).unwrap();
    with_ca["ignition"]["version"] = json!("2.1.0");
    assert!(
        converted(&with_ca.to_string())["ignition"]
            .get("security")
            .is_none()
    );
    let garbage = json!({"ignition": {"version": "2.1.0", "security": 7},
        "storage": {"files": [{"filesystem": "root", "path": "/a", "overwrite": "x", "append": [1]}]}});
    assert_eq!(
        converted(&garbage.to_string())["storage"]["files"],
        json!([{"contents": {"source": ""}, "mode": 0, "overwrite": true, "path": "/a"}])
    );
    // 2.0 has no timeouts, directories, links, owner names, `enabled`, and
    // only four user fields.
    let s = json!({"ignition": {"version": "2.0.0", "timeouts": {"httpTotal": 5}},
        "storage": {"files": [{"filesystem": "root", "path": "/etc/a", "mode": 420, "user": {"id": 7, "name": "core"}, "group": {"name": "wheel"}}],
                    "directories": [{"filesystem": "root", "path": "/d"}], "links": "garbage"},
        "systemd": {"units": [{"name": "a.service", "enabled": true, "mask": true}]},
        "passwd": {"users": [{"name": "core", "passwordHash": "", "gecos": "x", "uid": 1000, "sshAuthorizedKeys": ["k"]}]}})
    .to_string();
    assert_eq!(
        converted(&s),
        json!({"ignition": {"version": "3.5.0"},
            "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["k"]}]},
            "storage": {"files": [{"contents": {"source": ""}, "group": {"id": 0}, "mode": 420, "overwrite": true, "path": "/etc/a", "user": {"id": 7}}]},
            "systemd": {"units": [{"mask": true, "name": "a.service"}]}})
    );
}

#[test]
fn plain_values_of_an_older_spec_come_out_set() {
    // 2.1 holds modes as plain ints: absent or null is mode 0.
    let s = json!({"ignition": {"version": "2.1.0"}, "storage": {
        "files": [{"filesystem": "root", "path": "/f", "mode": null}],
        "directories": [{"filesystem": "root", "path": "/d"}]}})
    .to_string();
    let out = converted(&s);
    assert_eq!(out["storage"]["files"][0]["mode"], json!(0));
    assert_eq!(
        out["storage"]["directories"],
        json!([{"mode": 0, "path": "/d"}])
    );
    // 2.0 holds a file's owner ids as plain ints too.
    let s = json!({"ignition": {"version": "2.0.0"}, "storage": {
        "files": [{"filesystem": "root", "path": "/f", "user": null}]}})
    .to_string();
    let file = &converted(&s)["storage"]["files"][0];
    assert_eq!(
        (&file["user"], &file["group"]),
        (&json!({"id": 0}), &json!({"id": 0}))
    );
}

#[test]
fn broken_older_stubs_are_errors() {
    for (cfg, needle) in [
        (
            json!({"ignition": {"version": "2.1.0", "config": {"append": "x"}}}),
            "invalid type",
        ),
        (
            json!({"ignition": {"version": "2.1.0"}, "storage": {"files": "x"}}),
            "invalid type",
        ),
        (
            json!({"ignition": {"version": "2.1.0"}, "storage": {"files": [{"path": "/a"}]}}),
            "no filesystem specified",
        ),
        (
            json!({"ignition": {"version": "2.1.0"}, "networkd": {"units": [{"name": "a.network"}]}}),
            "networkd",
        ),
        (
            json!({"ignition": {"version": "2.0.0", "config": {"replace": {"source": "https://x", "verification": {"hash": "sha512"}}}}}),
            "hash is malformed",
        ),
        (
            json!({"ignition": {"version": "2.0.0"}, "storage": {"files": [{"filesystem": "root", "path": "/a", "contents": {"verification": {"hash": "00"}}}]}}),
            "hash is malformed",
        ),
        (
            json!({"ignition": {"version": "2.0.0"}, "storage": {"files": [{"filesystem": "root", "path": "/a", "mode": -1}]}}),
            "negative",
        ),
        (
            json!({"ignition": {"version": "2.0.0"}, "passwd": {"groups": [{"name": "g", "gid": -5}]}}),
            "negative",
        ),
        (
            json!({"ignition": {"version": "2.0.0"}, "storage": {"files": [{"filesystem": "root", "path": "rel"}]}}),
            "path not absolute",
        ),
        (
            json!({"ignition": {"version": "2.0.0"}, "passwd": {"users": [{"name": "admin"}]}}),
            "Only core user",
        ),
    ] {
        let e = upgrade_stub(&cfg.to_string()).unwrap_err().to_string();
        assert!(e.contains(needle), "{cfg}: {e}");
        assert!(e.starts_with("converting ignition stub failed: "), "{e}");
    }
}
