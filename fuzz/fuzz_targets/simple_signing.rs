//! cosign simple-signing payloads: the input's first line as the layer's
//! signature annotation (none when there is no newline), the rest as the
//! payload. Checking must be total, and nothing may verify under a key
//! nobody can sign with.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mco_registry_formats::cosign::{CertificateAnnotations, Signature};

fuzz_target!(|data: &[u8]| {
    let (signature, payload) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (
            Some(String::from_utf8_lossy(&data[..i]).into_owned()),
            data[i + 1..].to_vec(),
        ),
        None => (None, data.to_vec()),
    };
    mco_fuzz::never_verifies(&Signature::SimpleSigning {
        payload,
        signature,
        certificate: CertificateAnnotations::default(),
    });
});
