//! The on-disk blob cache, keyed by digest and checked against it on every
//! read, and the last-good record: which cached module served each job
//! last, for the fallback at the next start (see `set::start`).

use std::fmt;
use std::path::PathBuf;

use oci_client::Reference;

use super::{Oci, oci_digest};
use mco_registry_formats::blob::{digest, write_atomically};

impl Oci {
    /// The cached manifest of a reference by digest.
    pub(super) fn cached_manifest(&self, reference: &Reference) -> Option<(Vec<u8>, String)> {
        let digest = reference.digest()?;
        self.cached_blob(digest).map(|b| (b, digest.to_string()))
    }

    fn cache_path(&self, digest_text: &str) -> Option<PathBuf> {
        let hex = digest_text.strip_prefix("sha256:")?;
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        Some(self.cache.as_ref()?.join("sha256").join(hex))
    }

    /// A cached blob, if present and still of its digest.
    pub(super) fn cached_blob(&self, digest_text: &str) -> Option<Vec<u8>> {
        let path = self.cache_path(digest_text)?;
        let bytes = std::fs::read(&path).ok()?;
        (oci_digest(&bytes) == digest_text).then_some(bytes)
    }

    /// Records `bytes` as the module that serves `job` (by its name, the
    /// `job` label) now, for the fallback at the next start. Best effort.
    pub fn remember(&self, job: &impl fmt::Display, bytes: &[u8]) {
        let hex = digest(bytes);
        let Some(path) = self.last_good_path(job) else {
            return;
        };
        self.store(&format!("sha256:{hex}"), bytes);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| write_atomically(&path, hex.as_bytes()));
        if let Err(err) = written {
            tracing::warn!(path = %path.display(), error = %err, "cannot record the last good guest module");
        }
    }

    /// The module that last served `job`, if the cache still has it intact.
    pub fn last_good(&self, job: &impl fmt::Display) -> Option<Vec<u8>> {
        let hex = std::fs::read_to_string(self.last_good_path(job)?).ok()?;
        self.cached_blob(&format!("sha256:{}", hex.trim()))
    }

    /// `<cache>/last-good/<job>`; none for a platform name that is no
    /// plain file name.
    fn last_good_path(&self, job: &impl fmt::Display) -> Option<PathBuf> {
        let name = job.to_string();
        let plain = name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_');
        (plain && !name.starts_with('.'))
            .then(|| self.cache.as_ref().map(|c| c.join("last-good").join(name)))?
    }

    /// Best effort: a cache that cannot be written costs a download later.
    pub(super) fn store(&self, digest_text: &str, bytes: &[u8]) {
        let Some(path) = self.cache_path(digest_text) else {
            return;
        };
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| write_atomically(&path, bytes));
        if let Err(err) = written {
            tracing::warn!(path = %path.display(), error = %err, "cannot cache a pulled guest module");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_is_keyed_by_digest_and_ignores_corrupt_files() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let oci = Oci::new(&[], Some(dir.path().to_path_buf()));
        let bytes = b"\0asm module".to_vec();
        let key = oci_digest(&bytes);
        assert_eq!(oci.cached_blob(&key), None);
        oci.store(&key, &bytes);
        assert_eq!(oci.cached_blob(&key), Some(bytes.clone()));
        // A digest that is no hex digest never names a path.
        assert_eq!(oci.cache_path("sha256:../../etc/passwd"), None);
        assert_eq!(oci.cache_path("md5:00"), None);
        let path = oci.cache_path(&key).unwrap_or_else(|| panic!("no path"));
        std::fs::write(&path, b"tampered").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(oci.cached_blob(&key), None);
    }

    /// Jobs are recorded by name (`Job`'s `Display`, the `job` label).
    #[test]
    fn the_last_good_module_is_remembered_per_job() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let oci = Oci::new(&[], Some(dir.path().to_path_buf()));
        let gcp = "bootImage.GCP";
        assert_eq!(oci.last_good(&gcp), None);
        oci.remember(&gcp, b"one");
        oci.remember(&gcp, b"two");
        oci.remember(&"mcn", b"mcn");
        assert_eq!(oci.last_good(&gcp), Some(b"two".to_vec()));
        assert_eq!(oci.last_good(&"mcn"), Some(b"mcn".to_vec()));
        // A platform name that would leave the directory is not recorded.
        let hostile = "bootImage.../../x";
        oci.remember(&hostile, b"x");
        assert_eq!(oci.last_good(&hostile), None);
        assert!(!dir.path().join("x").exists());
        // Without a cache nothing is remembered.
        let none = Oci::new(&[], None);
        none.remember(&"mcn", b"mcn");
        assert_eq!(none.last_good(&"mcn"), None);
    }
}
