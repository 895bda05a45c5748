//! Loading a guest module: it must be a component, import only what the
//! sandbox provides, and export the interface its job calls. A module that
//! passes is compiled (through the cache, see `cache.rs`) and addressed by
//! its sha256.

use std::fs;
use std::path::Path;

use mco_registry_formats::artifact::same_interface;
use wasmtime::component::Component;

use super::cache::compile_cached;
use super::engine::Runtime;
use super::error::LoadError;
use mco_registry_formats::blob::digest;

/// WASI interfaces a guest may import. Everything a pure function could use
/// to observe the world (clocks, random, filesystem, sockets) is absent;
/// `insecure-seed` is served with a fixed seed for Rust's HashMap.
const ALLOWED_IMPORTS: [&str; 13] = [
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/stderr",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:cli/terminal-stderr",
];
const SEED_IMPORT: &str = "wasi:random/insecure-seed";
/// Our own package: the shared types (nothing to call), and the handles
/// the host lends a node-state guest (`node-inputs`) and a boot image
/// guest (`boot-image-inputs`), which only a world that serves them links.
const OWN_IMPORTS: [&str; 3] = [
    "mco:machine-config/types",
    "mco:machine-config/node-inputs",
    "mco:machine-config/boot-image-inputs",
];

/// Whether a guest may import `name` (`ns:pkg/iface@version`).
pub(super) fn allowed_import(name: &str) -> bool {
    let unversioned = name.split('@').next().unwrap_or(name);
    unversioned == SEED_IMPORT
        || OWN_IMPORTS.contains(&unversioned)
        || ALLOWED_IMPORTS.contains(&unversioned)
}

/// A validated, compiled component and where it came from.
#[derive(Clone)]
pub struct GuestModule {
    pub name: String,
    /// sha256 of the module bytes, hex.
    pub digest: String,
    pub component: Component,
}

impl GuestModule {
    /// Like [`Self::from_bytes`], but refuses bytes whose sha256 is not
    /// `sha256` (hex) before compiling anything: a registry that pins a
    /// digest gets exactly that module or none.
    pub fn pinned(
        runtime: &Runtime,
        name: &str,
        bytes: &[u8],
        export: &str,
        sha256: Option<&str>,
    ) -> Result<Self, LoadError> {
        if let Some(expected) = sha256 {
            let actual = digest(bytes);
            if !actual.eq_ignore_ascii_case(expected) {
                return Err(LoadError::Digest {
                    module: name.to_string(),
                    expected: expected.to_ascii_lowercase(),
                    actual,
                });
            }
        }
        Self::from_bytes(runtime, name, bytes, export)
    }

    pub fn from_file(runtime: &Runtime, path: &Path, export: &str) -> Result<Self, LoadError> {
        let bytes = fs::read(path).map_err(|source| LoadError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_bytes(runtime, &path.display().to_string(), &bytes, export)
    }

    /// Validates and compiles `bytes`; `export` is the interface the guest
    /// must provide, matched without its patch version.
    pub fn from_bytes(
        runtime: &Runtime,
        name: &str,
        bytes: &[u8],
        export: &str,
    ) -> Result<Self, LoadError> {
        check_header(name, bytes)?;
        let digest = digest(bytes);
        let component = compile_cached(runtime, name, bytes, &digest)?;
        let ty = component.component_type();
        let engine = runtime.engine();
        // Every forbidden import is named, not just the first: one family
        // often drags in another (wasi:filesystem uses wasi:clocks types).
        let forbidden: Vec<&str> = ty
            .imports(engine)
            .map(|(import, _)| import)
            .filter(|import| !allowed_import(import))
            .collect();
        if !forbidden.is_empty() {
            return Err(LoadError::ForbiddenImport {
                module: name.to_string(),
                import: forbidden.join(", "),
            });
        }
        let exports: Vec<String> = ty.exports(engine).map(|(e, _)| e.to_string()).collect();
        if !exports.iter().any(|e| same_interface(e, export)) {
            // The interface at another major version is a different, clearer
            // failure than a module that has nothing to do with the job.
            let wanted = interface_name(export);
            if let Some(found) = exports.iter().find(|e| interface_name(e) == wanted) {
                return Err(LoadError::IncompatibleVersion {
                    module: name.to_string(),
                    expected: export.to_string(),
                    found: found.clone(),
                });
            }
            return Err(LoadError::WrongWorld {
                module: name.to_string(),
                expected: export.to_string(),
                found: if exports.is_empty() {
                    "nothing".into()
                } else {
                    exports.join(", ")
                },
            });
        }
        Ok(GuestModule {
            name: name.to_string(),
            digest,
            component,
        })
    }
}

/// The interfaces a component exports and imports (`ns:pkg/iface@version`),
/// as the CNCF wasm config lists them.
pub fn interfaces(
    runtime: &Runtime,
    name: &str,
    bytes: &[u8],
) -> Result<(Vec<String>, Vec<String>), LoadError> {
    check_header(name, bytes)?;
    let component = compile_cached(runtime, name, bytes, &digest(bytes))?;
    let ty = component.component_type();
    let engine = runtime.engine();
    let exports = ty.exports(engine).map(|(e, _)| e.to_string()).collect();
    let imports = ty.imports(engine).map(|(i, _)| i.to_string()).collect();
    Ok((exports, imports))
}

/// `ns:pkg/iface` without its version.
fn interface_name(name: &str) -> &str {
    name.split('@').next().unwrap_or(name)
}

fn check_header(name: &str, bytes: &[u8]) -> Result<(), LoadError> {
    match bytes.get(..8) {
        Some([0, b'a', b's', b'm', _, _, 1, 0]) => Ok(()),
        Some([0, b'a', b's', b'm', ..]) => Err(LoadError::CoreModule(name.to_string())),
        _ => Err(LoadError::NotWasm(name.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowlist_ignores_versions_and_refuses_the_world() {
        assert!(allowed_import("wasi:io/streams@0.2.6"));
        assert!(allowed_import("wasi:random/insecure-seed@0.2.6"));
        assert!(allowed_import("mco:machine-config/types@0.1.0"));
        assert!(allowed_import("mco:machine-config/node-inputs@0.6.0"));
        assert!(allowed_import("mco:machine-config/boot-image-inputs@0.6.0"));
        for forbidden in [
            "wasi:filesystem/preopens@0.2.6",
            "wasi:clocks/wall-clock@0.2.6",
            "wasi:random/random@0.2.6",
            "wasi:sockets/tcp@0.2.6",
            "wasi:io/streamsx",
        ] {
            assert!(!allowed_import(forbidden), "{forbidden}");
        }
    }

    #[test]
    fn headers_are_classified() {
        assert!(matches!(
            check_header("x", b"\0asm\x01\0\0\0"),
            Err(LoadError::CoreModule(_))
        ));
        assert!(matches!(check_header("x", b"\0asm\x0d\0\x01\0"), Ok(())));
        assert!(matches!(
            check_header("x", b"hello world"),
            Err(LoadError::NotWasm(_))
        ));
        assert!(matches!(check_header("x", b""), Err(LoadError::NotWasm(_))));
    }
}
