//! Turns `data/aws-rhcos-amis.txt` (upstream's static RHCOS AMI list, one
//! `ami-` + 17 hex digit ID per line) into a sorted table of 9-byte
//! big-endian numbers in `$OUT_DIR/rhcos_amis.bin`, so the guest carries
//! 9 bytes per AMI instead of a text it would parse at every call. The
//! encoding is shared with the lookup through `src/amis_encoding.rs`.

use std::path::Path;

include!("src/amis_encoding.rs");

fn main() {
    let source = "data/aws-rhcos-amis.txt";
    println!("cargo::rerun-if-changed={source}");
    println!("cargo::rerun-if-changed=src/amis_encoding.rs");
    let text = std::fs::read_to_string(source).unwrap_or_else(|e| panic!("{source}: {e}"));
    let mut table: Vec<[u8; AMI_BYTES]> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let encoded = encode_ami(line)
            .unwrap_or_else(|| panic!("{source}:{}: not an AMI ID: {line:?}", number + 1));
        table.push(encoded);
    }
    table.sort_unstable();
    table.dedup();
    assert!(!table.is_empty(), "{source} lists no AMI");
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    let bytes: Vec<u8> = table.concat();
    std::fs::write(Path::new(&out).join("rhcos_amis.bin"), bytes)
        .unwrap_or_else(|e| panic!("writing the AMI table: {e}"));
}
