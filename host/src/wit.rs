//! The WIT package the host calls guests through (`wit/` of the repository,
//! the same files `bindgen!` reads), embedded at build time so `guests wit`
//! hands a guest's tooling exactly the contract of this binary, never a
//! copy that drifted.

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

#[cfg(test)]
mod tests {
    use super::*;

    /// A file added to `wit/` must be embedded too, and every file must
    /// belong to the one package.
    #[test]
    fn every_file_of_wit_is_embedded_under_one_package() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit");
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
