//! The WIT package the host calls guests through (`wit/` of the repository,
//! the same files `bindgen!` reads), embedded at build time so `guests wit`
//! hands a guest's tooling exactly the contract of this binary, never a
//! copy that drifted; and the same package encoded as a WIT package binary
//! (what `wkg wit build` makes of a `wit/` folder), the layer `guests wit
//! --push` publishes.

use wit_parser::{PackageId, Resolve, SourceMap};

/// Each file of the package: its name and text.
pub const FILES: [(&str, &str); 3] = [
    ("types.wit", include_str!("../../wit/types.wit")),
    ("node-state.wit", include_str!("../../wit/node-state.wit")),
    ("boot-image.wit", include_str!("../../wit/boot-image.wit")),
];

/// `mco:machine-config@<version>`, as every file declares it.
pub fn package() -> &'static str {
    let (_, types) = FILES[0];
    types
        .lines()
        .find_map(|line| line.trim().strip_prefix("package "))
        .map_or("", |rest| rest.trim_end_matches(';').trim())
}

/// Why the embedded files do not make a WIT package binary (a defect of
/// this build, which the unit tests catch first).
#[derive(Debug, thiserror::Error)]
#[error("the embedded WIT package {}: {:#}", package(), .0)]
pub struct EncodeError(anyhow::Error);

/// The package, resolved from the embedded files.
fn resolve() -> Result<(Resolve, PackageId), EncodeError> {
    let mut map = SourceMap::default();
    for (name, text) in FILES {
        map.push_str(name, text);
    }
    let group = map.parse().map_err(|(_, e)| EncodeError(e.into()))?;
    let mut resolve = Resolve::default();
    let id = resolve
        .push_group(group)
        .map_err(|e| EncodeError(e.into()))?;
    Ok((resolve, id))
}

/// The package as a WIT package binary (a component holding only types),
/// byte for byte the same for the same files.
pub fn encode() -> Result<Vec<u8>, EncodeError> {
    let (resolve, id) = resolve()?;
    wit_component::encode(&resolve, id).map_err(EncodeError)
}

/// What the package offers, as the CNCF wasm config of a WIT package lists
/// it (wasm-pkg-tools' `oci-wasm` `Component::from_package`): every
/// interface and every world, fully qualified with the version, and the
/// interfaces each world exports; sorted.
pub fn exports() -> Result<Vec<String>, EncodeError> {
    let (resolve, id) = resolve()?;
    let package = &resolve.packages[id];
    let mut exports: Vec<String> = package
        .interfaces
        .values()
        .filter_map(|&interface| resolve.id_of(interface))
        .collect();
    for &world in package.worlds.values() {
        let world = &resolve.worlds[world];
        exports.extend(world.exports.keys().map(|key| resolve.name_world_key(key)));
        let version = package
            .name
            .version
            .as_ref()
            .map_or_else(String::new, |v| format!("@{v}"));
        exports.push(format!(
            "{}:{}/{}{version}",
            package.name.namespace, package.name.name, world.name
        ));
    }
    exports.sort();
    exports.dedup();
    Ok(exports)
}

/// `machine-config`, the name in `mco:machine-config@<version>`, as wkg
/// names the layer's file (`<name>.wasm`).
pub fn name() -> &'static str {
    let full = package();
    let without_version = full.split('@').next().unwrap_or(full);
    without_version
        .split_once(':')
        .map_or(without_version, |(_, name)| name)
}

/// The `<version>` of `mco:machine-config@<version>`.
pub fn version() -> &'static str {
    package().split_once('@').map_or("", |(_, version)| version)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The binary decodes to the same package, with every world and
    /// interface the files declare, and encoding is deterministic (the
    /// pushed digest depends on the WIT alone).
    #[test]
    fn the_package_binary_decodes_to_the_embedded_package() {
        let bytes = encode().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(bytes, encode().unwrap_or_else(|e| panic!("{e}")));
        let decoded = wit_component::decode(&bytes).unwrap_or_else(|e| panic!("{e:#}"));
        let wit_component::DecodedWasm::WitPackage(resolve, id) = decoded else {
            panic!("not a WIT package binary")
        };
        let decoded = &resolve.packages[id];
        assert_eq!(decoded.name.to_string(), package());
        let mut worlds: Vec<&str> = decoded.worlds.keys().map(String::as_str).collect();
        worlds.sort();
        assert_eq!(
            worlds,
            [
                "boot-image-selector",
                "node-state-offline",
                "node-state-reporter"
            ]
        );
        let mut interfaces: Vec<&str> = decoded.interfaces.keys().map(String::as_str).collect();
        interfaces.sort();
        assert_eq!(
            interfaces,
            [
                "boot-image",
                "boot-image-inputs",
                "node-inputs",
                "node-state",
                "node-state-records",
                "types"
            ]
        );
    }

    #[test]
    fn exports_name_every_world_and_interface_with_the_version() {
        let v = version();
        assert_eq!(package(), format!("mco:{}@{v}", name()));
        let mut expected: Vec<String> = [
            "boot-image",
            "boot-image-inputs",
            "boot-image-selector",
            "node-inputs",
            "node-state",
            "node-state-offline",
            "node-state-records",
            "node-state-reporter",
            "types",
        ]
        .iter()
        .map(|item| format!("mco:machine-config/{item}@{v}"))
        .collect();
        expected.sort();
        assert_eq!(exports().unwrap_or_else(|e| panic!("{e}")), expected);
        assert_eq!(name(), "machine-config");
    }

    /// A file added to `wit/` must be embedded too, and every file must
    /// belong to the one package.
    #[test]
    fn every_file_of_wit_is_embedded_under_one_package() {
        let dir = crate::crate_dir().join("../wit");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|entry| entry.ok())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".wit"))
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = FILES.iter().map(|(name, _)| name.to_string()).collect();
        embedded.sort();
        assert_eq!(embedded, on_disk);
        assert!(
            package().starts_with("mco:machine-config@"),
            "{}",
            package()
        );
        for (name, text) in FILES {
            assert!(
                text.contains(&format!("package {};", package())),
                "{name} is not in {}",
                package()
            );
        }
    }
}
