//! Trust material: the input's first byte picks the kind (0: a Sigstore
//! `trusted_root.json` of the rest; 1: a PKI policy's roots and
//! intermediates, 2: a Fulcio policy's CAs and Rekor key, each the rest's
//! two NUL-separated fields; 3: a cosign public key, PEM, of the rest
//! (ECDSA, RSA with its modulus sized, Ed25519 refused); 4: an identity
//! pattern and a name it is matched against, the rest's two fields).
//! Parsing must be total, and matching bounded.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mco_registry_formats::cosign::Key;
use mco_registry_formats::sigstore::{Pattern, TrustRoot};

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let mut fields = rest.splitn(2, |&b| b == 0);
    let (first, second) = (
        fields.next().unwrap_or_default(),
        fields.next().unwrap_or_default(),
    );
    let why = match kind % 5 {
        0 => TrustRoot::from_trusted_root_json(rest)
            .err()
            .map(|e| e.to_string()),
        1 => TrustRoot::from_pki(first, second)
            .err()
            .map(|e| e.to_string()),
        2 => TrustRoot::from_fulcio(first, second)
            .err()
            .map(|e| e.to_string()),
        3 => Key::from_pem("fuzz.pub", rest).err().map(|e| e.to_string()),
        _ => match Pattern::new(&String::from_utf8_lossy(first)) {
            Ok(pattern) => {
                pattern.matches(&String::from_utf8_lossy(second));
                None
            }
            Err(e) => Some(e.to_string()),
        },
    };
    let _ = why;
});
