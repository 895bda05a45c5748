//! Bytes named by their sha256 and written whole: what the compiled-guest
//! cache (mco-runtime), the OCI blob cache (mco-fetch) and the registry's
//! `sha256` pins share, kept here so mco-fetch links no wasmtime for it.

use std::path::Path;

use sha2::{Digest as _, Sha256};

/// The hex sha256 of `bytes`, as registries pin a module and the caches
/// name their files.
pub fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes through a temporary file so a reader never sees half a file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}
