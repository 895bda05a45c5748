//! The compiled-guest cache: compiled code on disk keyed by (module
//! sha256, engine compatibility hash), each entry with a checksum so that a
//! truncated or corrupted file is recompiled instead of being mapped as
//! native code. This is the one place that needs `unsafe`.
//!
//! A checked entry is mapped from its file, not copied into the heap: the
//! code pages are then file-backed and only those a guest runs become
//! resident (docs/dev/records/incidents.md). The directory is the host's own (an `emptyDir`
//! in `deploy/`): whoever could change a file between the check and the
//! mapping could as well change the host itself.
#![allow(unsafe_code)]

use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use wasmtime::component::Component;

use super::engine::Runtime;
use super::error::LoadError;
use mco_registry_formats::blob::{digest, write_atomically};

/// Compiles through the on-disk cache. A cache entry is only used when its
/// recorded checksum matches, so a truncated or corrupted file is
/// recompiled instead of being mapped as native code.
pub(super) fn compile_cached(
    runtime: &Runtime,
    name: &str,
    bytes: &[u8],
    digest: &str,
) -> Result<Component, LoadError> {
    let engine = runtime.engine();
    let compile = || {
        Component::new(engine, bytes).map_err(|e| LoadError::Compile {
            module: name.to_string(),
            detail: format!("{e:#}"),
        })
    };
    let Some(dir) = &runtime.config().cache_dir else {
        return compile();
    };
    let entry = CacheEntry::new(dir, digest, &engine_hash(runtime));
    if let Some(component) = entry.load(runtime) {
        return Ok(component);
    }
    let component = compile()?;
    if let Err(err) = entry.store(&component) {
        tracing::warn!(module = name, error = %err, "could not write the compiled-guest cache");
        return Ok(component);
    }
    // Served from the file just written, as every later start is.
    Ok(entry.load(runtime).unwrap_or(component))
}

struct CacheEntry {
    code: PathBuf,
    checksum: PathBuf,
}

impl CacheEntry {
    fn new(dir: &Path, digest: &str, engine: &str) -> Self {
        let stem = format!("{digest}-{engine}");
        CacheEntry {
            code: dir.join(format!("{stem}.cwasm")),
            checksum: dir.join(format!("{stem}.sha256")),
        }
    }

    fn load(&self, runtime: &Runtime) -> Option<Component> {
        let code = fs::read(&self.code).ok()?;
        let expected = fs::read_to_string(&self.checksum).ok()?;
        if digest(&code) != expected.trim() {
            tracing::warn!(path = %self.code.display(), "compiled-guest cache entry is corrupt; recompiling");
            return None;
        }
        drop(code);
        // SAFETY: the file was produced by `Component::serialize` of this
        // engine configuration (its name carries the compatibility hash),
        // matches the checksum written with it, and lives in the host's own
        // cache directory, which nothing else writes (module docs).
        match unsafe { Component::deserialize_file(runtime.engine(), &self.code) } {
            Ok(component) => Some(component),
            Err(err) => {
                tracing::warn!(path = %self.code.display(), error = %err, "unusable compiled-guest cache entry; recompiling");
                None
            }
        }
    }

    fn store(&self, component: &Component) -> std::io::Result<()> {
        let code = component.serialize().map_err(std::io::Error::other)?;
        if let Some(dir) = self.code.parent() {
            fs::create_dir_all(dir)?;
        }
        write_atomically(&self.code, &code)?;
        write_atomically(&self.checksum, digest(&code).as_bytes())
    }
}

/// The sha256 of the bytes wasmtime's compatibility hash feeds a hasher,
/// so it is stable across processes (std's hashers are not).
fn engine_hash(runtime: &Runtime) -> String {
    struct Collect(Vec<u8>);
    impl Hasher for Collect {
        fn finish(&self) -> u64 {
            0
        }
        fn write(&mut self, bytes: &[u8]) {
            self.0.extend_from_slice(bytes);
        }
    }
    let mut fed = Collect(Vec::new());
    runtime
        .engine()
        .precompile_compatibility_hash()
        .hash(&mut fed);
    digest(&fed.0)[..16].to_string()
}
