//! Wasm bytes for the swap tests, here and in the e2e tests
//! (`tests/e2e/tests/support/mod.rs` includes this file by path): it needs only
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

/// The same component with the one occurrence of `from` in its bytes
/// replaced by `to`, of the same length so that no offset moves: the very
/// guest, saying `to` wherever it said `from` (a text in its data). A
/// candidate that differs from the installed guest exactly where that text
/// is used, without a second guest to build and keep in step.
pub fn with_text_replaced(wasm: &[u8], from: &str, to: &str) -> Vec<u8> {
    assert_eq!(from.len(), to.len(), "{from:?} and {to:?} differ in length");
    let (from, to) = (from.as_bytes(), to.as_bytes());
    let found: Vec<usize> = wasm
        .windows(from.len())
        .enumerate()
        .filter(|(_, window)| *window == from)
        .map(|(at, _)| at)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{:?} occurs {} times",
        String::from_utf8_lossy(from),
        found.len()
    );
    let mut out = wasm.to_vec();
    out[found[0]..found[0] + to.len()].copy_from_slice(to);
    out
}
