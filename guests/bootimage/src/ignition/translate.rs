//! ign-converter's v2.3 → v3.0 translation: every check the converter makes
//! before it converts (networkd, deprecated fields, filesystems other than
//! root, conflicting inodes, links, duplicate dropins), then the field-by-field
//! mapping from `v2` to `v3` types.

use super::{STUB_TARGET_VERSION, v2, v3};

/// Go's `path.Clean` for absolute paths, so duplicate detection sees
/// `/etc//a` and `/etc/a` as one inode, as the converter does.
pub(super) fn clean_path(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.is_empty())
}

fn resource(r: v2::Reference) -> v3::Resource {
    v3::Resource {
        compression: None,
        source: Some(r.source.unwrap_or_default()),
        verification: v3::Verification {
            hash: r.verification.and_then(|v| v.hash),
        },
    }
}

fn owner(o: Option<v2::NodeOwner>) -> v3::NodeOwner {
    let o = o.unwrap_or_default();
    v3::NodeOwner {
        id: o.id,
        name: non_empty(o.name),
    }
}

/// ign-converter `Check2_3` + `Translate` (v2.3 → v3.0), then the version
/// bump to 3.5 (3.0 configs are valid 3.5 configs).
pub(super) fn translate(cfg: v2::Config) -> Result<v3::Config, String> {
    let v2::Config {
        ignition,
        networkd,
        passwd,
        storage,
        systemd,
    } = cfg;

    if networkd
        .and_then(|n| n.units)
        .is_some_and(|u| !u.is_empty())
    {
        return Err(
            "config includes a networkd section, which Ignition spec 3 does not support".into(),
        );
    }
    for u in passwd.iter().flat_map(|p| p.users.iter().flatten()) {
        if u.create.is_some() {
            return Err(
                "Invalid input config: the create field has been deprecated in favor of user-level options"
                    .into(),
            );
        }
    }
    for u in systemd.iter().flat_map(|s| s.units.iter().flatten()) {
        if u.enable.is_some() {
            return Err(
                "Invalid input config: the enable field has been deprecated in favor of enabled"
                    .into(),
            );
        }
    }

    let storage = storage.unwrap_or_default();
    if storage.disks.as_ref().is_some_and(|d| !d.is_empty()) {
        return Err("storage.disks cannot be converted by the stub upgrade".into());
    }
    if storage.raid.as_ref().is_some_and(|r| !r.is_empty()) {
        return Err("storage.raid cannot be converted by the stub upgrade".into());
    }
    for fs in storage.filesystems.iter().flatten() {
        let name = fs.name.as_deref().unwrap_or("");
        if name != "root" {
            return Err(format!(
                "config defined filesystem {name:?} but no mapping to a path was defined"
            ));
        }
    }

    // Every node must be on the root filesystem, the only one mapped.
    let mut entries: std::collections::BTreeMap<String, String> = Default::default();
    let files = storage.files.unwrap_or_default();
    let dirs = storage.directories.unwrap_or_default();
    let links = storage.links.unwrap_or_default();
    let link_paths: Vec<String> = links
        .iter()
        .map(|l| clean_path(l.node.path.as_deref().unwrap_or("")))
        .collect();
    let nodes = files
        .iter()
        .map(|f| ("File", &f.node))
        .chain(dirs.iter().map(|d| ("Directory", d)))
        .chain(links.iter().map(|l| ("Link", &l.node)));
    for (kind, n) in nodes {
        let fs = n.filesystem.as_deref().unwrap_or("");
        let p = clean_path(n.path.as_deref().unwrap_or(""));
        if fs != "root" {
            return Err(format!(
                "{kind} {p} is on filesystem {fs:?}; only the root filesystem can be converted"
            ));
        }
        let name = format!("{kind}: {p}");
        if let Some(old) = entries.get(&p) {
            return Err(format!(
                "config has conflicting inodes: {old:?} and {name:?}; all files, directories and links must specify a unique path"
            ));
        }
        if kind != "Link"
            && let Some(l) = link_paths
                .iter()
                .find(|l| p.starts_with(&format!("{}/", l.trim_end_matches('/'))))
        {
            return Err(format!(
                "{name} uses link defined in config {l:?}; please use a link not defined in storage.links"
            ));
        }
        entries.insert(p, name);
    }
    for u in systemd.iter().flat_map(|s| s.units.iter().flatten()) {
        let mut seen = std::collections::BTreeSet::new();
        for d in u.dropins.iter().flatten() {
            if !seen.insert(d.name.clone()) {
                return Err(format!(
                    "config has duplicate dropin {:?} for unit {:?}",
                    d.name.as_deref().unwrap_or(""),
                    u.name.as_deref().unwrap_or("")
                ));
            }
        }
    }

    let ignition = ignition.unwrap_or_default();
    let icfg = ignition.config.unwrap_or_default();
    let out_ignition = v3::Ignition {
        config: v3::IgnitionConfig {
            merge: icfg
                .append
                .unwrap_or_default()
                .into_iter()
                .map(resource)
                .collect(),
            replace: icfg.replace.map(resource),
        },
        security: v3::Security {
            tls: v3::Tls {
                certificate_authorities: ignition
                    .security
                    .and_then(|s| s.tls)
                    .and_then(|t| t.certificate_authorities)
                    .unwrap_or_default()
                    .into_iter()
                    .map(resource)
                    .collect(),
            },
        },
        timeouts: ignition
            .timeouts
            .map(|t| v3::Timeouts {
                http_response_headers: t.http_response_headers,
                http_total: t.http_total,
            })
            .unwrap_or_default(),
        version: STUB_TARGET_VERSION.to_owned(),
    };

    let passwd = passwd.unwrap_or_default();
    let out_passwd = v3::Passwd {
        groups: passwd
            .groups
            .unwrap_or_default()
            .into_iter()
            .map(|g| v3::Group {
                gid: g.gid,
                name: g.name.unwrap_or_default(),
                password_hash: non_empty(g.password_hash),
                system: g.system,
            })
            .collect(),
        users: passwd
            .users
            .unwrap_or_default()
            .into_iter()
            .map(|u| v3::User {
                gecos: non_empty(u.gecos),
                groups: u.groups.unwrap_or_default(),
                home_dir: non_empty(u.home_dir),
                name: u.name.unwrap_or_default(),
                no_create_home: u.no_create_home,
                no_log_init: u.no_log_init,
                no_user_group: u.no_user_group,
                password_hash: u.password_hash,
                primary_group: non_empty(u.primary_group),
                shell: non_empty(u.shell),
                ssh_authorized_keys: u.ssh_authorized_keys.unwrap_or_default(),
                system: u.system,
                uid: u.uid,
            })
            .collect(),
    };

    let out_storage = v3::Storage {
        directories: dirs
            .into_iter()
            .map(|d| v3::Directory {
                group: owner(d.group),
                mode: d.mode,
                overwrite: d.overwrite,
                path: clean_path(d.path.as_deref().unwrap_or("")),
                user: owner(d.user),
            })
            .collect(),
        files: files
            .into_iter()
            .map(|f| {
                let append = f.append.unwrap_or(false);
                let c = f.contents.unwrap_or_default();
                let contents = v3::Resource {
                    compression: non_empty(c.compression),
                    source: Some(c.source.unwrap_or_default()),
                    verification: v3::Verification {
                        hash: c.verification.and_then(|v| v.hash),
                    },
                };
                // Spec 2 files overwrite by default; spec 3 needs it spelled
                // out, and forbids it together with append.
                let overwrite = if append {
                    Some(false)
                } else {
                    Some(f.node.overwrite.unwrap_or(true))
                };
                let (append, contents) = if append {
                    (vec![contents], v3::Resource::default())
                } else {
                    (Vec::new(), contents)
                };
                v3::File {
                    append,
                    contents,
                    group: owner(f.node.group),
                    mode: f.node.mode,
                    overwrite,
                    path: clean_path(f.node.path.as_deref().unwrap_or("")),
                    user: owner(f.node.user),
                }
            })
            .collect(),
        links: links
            .into_iter()
            .map(|l| v3::Link {
                group: owner(l.node.group),
                hard: l.hard,
                overwrite: l.node.overwrite,
                path: clean_path(l.node.path.as_deref().unwrap_or("")),
                target: l.target.unwrap_or_default(),
                user: owner(l.node.user),
            })
            .collect(),
    };

    let out_systemd = v3::Systemd {
        units: systemd
            .and_then(|s| s.units)
            .unwrap_or_default()
            .into_iter()
            .map(|u| v3::Unit {
                contents: non_empty(u.contents),
                dropins: u
                    .dropins
                    .unwrap_or_default()
                    .into_iter()
                    .map(|d| v3::Dropin {
                        contents: non_empty(d.contents),
                        name: d.name.unwrap_or_default(),
                    })
                    .collect(),
                enabled: u.enabled,
                mask: u.mask,
                name: u.name.unwrap_or_default(),
            })
            .collect(),
    };

    Ok(v3::Config {
        ignition: out_ignition,
        passwd: out_passwd,
        storage: out_storage,
        systemd: out_systemd,
    })
}
