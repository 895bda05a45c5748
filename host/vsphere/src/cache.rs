//! A digest-keyed OVA cache on local disk (the Deployment's emptyDir).
//!
//! Files are `<dir>/<sha256>.ova`: the name says what the bytes must hash
//! to, so a cached file is checked again before each use, and a changed
//! stream (a new digest) never reuses an old file. Downloads go to a
//! temporary file in the same directory and are renamed into place only
//! once their digest matched, so a crash leaves no half file under a final
//! name; leftover temporary files are removed by the next fetch.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use mco_http::{Body, Chain, ReadError};
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use crate::error::FetchError;

/// What temporary downloads are named with (`.<sha256>.<n>.part`).
const PART_SUFFIX: &str = ".part";

/// A temporary download, busy (not swept) while it lives and removed with
/// it unless renamed into place: a fetch that fails, or is dropped mid-way
/// (its replica lost the lease), leaves nothing behind.
struct Part<'a> {
    cache: &'a OvaCache,
    path: PathBuf,
}

impl<'a> Part<'a> {
    fn new(cache: &'a OvaCache, path: PathBuf) -> Part<'a> {
        cache
            .parts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(path.clone());
        Part { cache, path }
    }
}

impl Drop for Part<'_> {
    fn drop(&mut self) {
        // Gone already once renamed into place.
        let _ = std::fs::remove_file(&self.path);
        self.cache
            .parts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.path);
    }
}

/// Downloads OVAs into a directory that never holds more than
/// `max_bytes`, the download under way included: the directory is an
/// `emptyDir` with a `sizeLimit`, past which the kubelet evicts the pod, so
/// that one figure bounds it all (`--ova-cache-max-mib`, at most the
/// volume's size; `host/tests/deploy.rs` checks the Deployment).
pub struct OvaCache {
    dir: PathBuf,
    max_bytes: u64,
    /// One lock per digest: concurrent fetches of one OVA download it once.
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Temporary files being written now (not to be swept).
    parts: Mutex<HashSet<PathBuf>>,
    http: Mutex<Option<reqwest::Client>>,
    counter: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for OvaCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OvaCache")
            .field("dir", &self.dir)
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

impl OvaCache {
    /// A cache in `dir` (created on first fetch) holding at most
    /// `max_bytes` of OVAs.
    pub fn new(dir: PathBuf, max_bytes: u64) -> OvaCache {
        OvaCache {
            dir,
            max_bytes,
            locks: Mutex::new(HashMap::new()),
            parts: Mutex::new(HashSet::new()),
            http: Mutex::new(None),
            counter: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// `<dir>/<sha256>.ova` if present and its sha256 still matches; else a
    /// streamed download to a temporary file in `dir`, hashed as it
    /// arrives, checked against `sha256` and renamed into place. Room is
    /// made before the bytes land: other cached OVAs are evicted, least
    /// recently used first, so that they, other downloads and this one stay
    /// within `max_bytes` (for the announced size, then again as it grows);
    /// a download that cannot fit, or outlasts `timeout`, is aborted. So a
    /// failed download may have cost the cache an old OVA, never the pod
    /// its volume. A digest mismatch keeps nothing and names both digests
    /// and the URL.
    /// Concurrent fetches of one digest in this process download once.
    ///
    /// HTTPS is checked against the system roots (the mirror RHCOS OVAs
    /// come from is public; a cluster's additional trust bundle, injected
    /// into the pod's system roots, covers a private mirror); environment
    /// proxies apply.
    pub async fn fetch(
        &self,
        url: &str,
        sha256: &str,
        timeout: Duration,
    ) -> Result<PathBuf, FetchError> {
        let digest = sha256.trim().to_ascii_lowercase();
        if digest.len() != 64 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(FetchError::BadDigest {
                digest: sha256.to_owned(),
            });
        }
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(|p| p.into_inner());
            locks.entry(digest.clone()).or_default().clone()
        };
        let _held = lock.lock().await;
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| FetchError::Io { path, source }
        };
        tokio::fs::create_dir_all(&self.dir)
            .await
            .map_err(io(&self.dir))?;
        let final_path = self.dir.join(format!("{digest}.ova"));
        if tokio::fs::try_exists(&final_path)
            .await
            .map_err(io(&final_path))?
        {
            let actual = hash_file(&final_path).await.map_err(io(&final_path))?;
            if actual == digest {
                touch(&final_path);
                tracing::debug!(path = %final_path.display(), "OVA cache hit");
                return Ok(final_path);
            }
            tracing::warn!(path = %final_path.display(), %actual, "cached OVA no longer matches its digest; downloading again");
            tokio::fs::remove_file(&final_path)
                .await
                .map_err(io(&final_path))?;
        }
        self.sweep_parts().await;
        let n = self
            .counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let part = Part::new(self, self.dir.join(format!(".{digest}.{n}{PART_SUFFIX}")));
        self.download(url, &digest, &part.path, timeout).await?;
        tokio::fs::rename(&part.path, &final_path)
            .await
            .map_err(io(&final_path))?;
        Ok(final_path)
    }

    fn client(&self) -> Result<reqwest::Client, FetchError> {
        let mut http = self.http.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = http.as_ref() {
            return Ok(c.clone());
        }
        let client =
            crate::session::http_client(&crate::Trust::Public).map_err(|e| FetchError::Http {
                url: String::new(),
                detail: e.to_string(),
            })?;
        *http = Some(client.clone());
        Ok(client)
    }

    /// Streams `url` into `part`, hashing, and checks the digest.
    async fn download(
        &self,
        url: &str,
        digest: &str,
        part: &Path,
        timeout: Duration,
    ) -> Result<(), FetchError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let timed_out = || FetchError::Timeout {
            url: url.to_owned(),
            after: timeout,
        };
        let http_err = |e: reqwest::Error| {
            if e.is_timeout() {
                timed_out()
            } else {
                FetchError::Http {
                    url: url.to_owned(),
                    detail: Chain(&e).to_string(),
                }
            }
        };
        let too_large = || FetchError::TooLarge {
            url: url.to_owned(),
            limit: self.max_bytes,
        };
        let client = self.client()?;
        let response = client
            .get(url)
            .timeout(timeout)
            .send()
            .await
            .map_err(http_err)?;
        if !response.status().is_success() {
            return Err(FetchError::Status {
                url: url.to_owned(),
                status: response.status().as_u16(),
            });
        }
        let announced = response.content_length().unwrap_or(0);
        let read_err = |e| match e {
            ReadError::TooLarge { .. } => too_large(),
            ReadError::Deadline => timed_out(),
            ReadError::Transport(e) => http_err(e),
        };
        let mut body = Body::new(response, self.max_bytes).until(deadline);
        // Read before anything is evicted: an answer announced over the
        // bound is refused here.
        let mut next = body.chunk().await.map_err(read_err)?;
        let mut room = self.make_room(announced, part).await;
        let io = |source| FetchError::Io {
            path: part.to_owned(),
            source,
        };
        let mut file = tokio::fs::File::create(part).await.map_err(io)?;
        let mut hasher = Sha256::new();
        let mut size = 0u64;
        while let Some(chunk) = next {
            size += chunk.len() as u64;
            if size > room {
                // More than announced (or nothing was): evict again.
                room = self.make_room(size, part).await;
                if size > room {
                    return Err(too_large());
                }
            }
            hasher.update(&chunk);
            file.write_all(&chunk).await.map_err(io)?;
            next = body.chunk().await.map_err(read_err)?;
        }
        file.flush().await.map_err(io)?;
        file.sync_all().await.map_err(io)?;
        let actual = hex::encode(hasher.finalize());
        if actual != digest {
            return Err(FetchError::DigestMismatch {
                url: url.to_owned(),
                expected: digest.to_owned(),
                actual,
            });
        }
        tracing::info!(%url, size, "OVA downloaded");
        Ok(())
    }

    /// Removes temporary files this process is not writing (a crash's).
    async fn sweep_parts(&self) {
        let Ok(mut dir) = tokio::fs::read_dir(&self.dir).await else {
            return;
        };
        while let Ok(Some(entry)) = dir.next_entry().await {
            let path = entry.path();
            let is_part = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.') && n.ends_with(PART_SUFFIX));
            let busy = self
                .parts
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(&path);
            if is_part && !busy {
                let _ = tokio::fs::remove_file(&path).await;
            }
        }
    }

    /// Evicts cached OVAs, least recently used first, until everything in
    /// the directory but `part` (cached OVAs, other downloads) leaves
    /// `need` bytes within `max_bytes`; the bytes `part` may then grow to.
    async fn make_room(&self, need: u64, part: &Path) -> u64 {
        let Ok(mut dir) = tokio::fs::read_dir(&self.dir).await else {
            return 0;
        };
        let mut others = 0u64;
        let mut cached: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        while let Ok(Some(entry)) = dir.next_entry().await {
            let path = entry.path();
            let Ok(meta) = entry.metadata().await else {
                continue;
            };
            if path == part || !meta.is_file() {
                continue;
            }
            others += meta.len();
            if path.extension().and_then(|e| e.to_str()) == Some("ova") {
                let used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                cached.push((used, meta.len(), path));
            }
        }
        cached.sort();
        for (_, len, path) in cached {
            if others.saturating_add(need) <= self.max_bytes {
                break;
            }
            match tokio::fs::remove_file(&path).await {
                Ok(()) => {
                    tracing::info!(path = %path.display(), "evicted a cached OVA");
                    others -= len;
                }
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "cannot evict a cached OVA")
                }
            }
        }
        self.max_bytes.saturating_sub(others)
    }
}

/// The sha256 of a file, hashed off the async threads.
async fn hash_file(path: &Path) -> std::io::Result<String> {
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut file = std::fs::File::open(&path)?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        Ok(hex::encode(hasher.finalize()))
    })
    .await
    .map_err(std::io::Error::other)?
}

/// Marks a cached OVA as just used (its mtime orders eviction).
fn touch(path: &Path) {
    let now = SystemTime::now();
    if let Err(e) = std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(now))
    {
        tracing::debug!(path = %path.display(), error = %e, "cannot touch a cached OVA");
    }
}
