//! Wasm bytes for the swap tests, here and in the e2e tests
//! (`tests/tests/support/mod.rs` includes this file by path): it needs only
//! `wasm-encoder`, a dev-dependency of both crates.

/// The same component with a custom section appended: another digest,
/// identical behaviour (the engine ignores custom sections).
pub fn with_custom_section(wasm: &[u8], name: &str, payload: &[u8]) -> Vec<u8> {
    use wasm_encoder::{Encode, Section};
    let section = wasm_encoder::CustomSection {
        name: name.into(),
        data: payload.into(),
    };
    let mut out = wasm.to_vec();
    out.push(section.id());
    section.encode(&mut out);
    out
}
