//! The duplicate removal upstream runs between parsing and conversion
//! (`removeIgnDuplicateFilesUnitsUsers`), kept apart from the translation
//! because it changes the config (last entry wins) where the translation
//! only refuses or maps.

use super::v2;

/// `removeIgnDuplicateFilesUnitsUsers`: spec 3 forbids duplicates, so the
/// last entry for a path or unit wins (dropins are merged), and all users
/// collapse into `core`. Like upstream, the surviving files and units come
/// out in reverse order.
pub(super) fn dedupe(mut cfg: v2::Config) -> Result<v2::Config, String> {
    if let Some(storage) = cfg.storage.as_mut()
        && let Some(files) = storage.files.take()
    {
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        for f in files.into_iter().rev() {
            let path = f.node.path.clone().unwrap_or_default();
            if seen.insert(path) {
                out.push(f);
            }
        }
        storage.files = Some(out);
    }
    if let Some(systemd) = cfg.systemd.as_mut()
        && let Some(units) = systemd.units.take()
    {
        let mut out: Vec<v2::Unit> = Vec::new();
        for u in units.into_iter().rev() {
            let name = u.name.clone().unwrap_or_default();
            if let Some(existing) = out
                .iter_mut()
                .find(|e| e.name.as_deref().unwrap_or("") == name)
            {
                for d in u.dropins.unwrap_or_default() {
                    let dropins = existing.dropins.get_or_insert_with(Vec::new);
                    if !dropins.iter().any(|e| e.name == d.name) {
                        dropins.push(d);
                    }
                }
            } else {
                out.push(u);
            }
        }
        systemd.units = Some(out);
    }
    if let Some(passwd) = cfg.passwd.as_mut()
        && let Some(users) = passwd.users.take()
    {
        let mut rev = users.into_iter().rev();
        if let Some(mut last) = rev.next() {
            let check = |u: &v2::User| {
                let n = u.name.as_deref().unwrap_or("");
                if n == "core" {
                    Ok(())
                } else {
                    Err(format!(
                        "unexpected user with name: {n}. Only core user is supported"
                    ))
                }
            };
            check(&last)?;
            let mut keys = last.ssh_authorized_keys.take().unwrap_or_default();
            for u in rev {
                check(&u)?;
                keys.extend(u.ssh_authorized_keys.unwrap_or_default());
            }
            let mut seen = std::collections::BTreeSet::new();
            keys.retain(|k| seen.insert(k.clone()));
            last.ssh_authorized_keys = Some(keys);
            passwd.users = Some(vec![last]);
        } else {
            passwd.users = Some(Vec::new());
        }
    }
    Ok(cfg)
}
