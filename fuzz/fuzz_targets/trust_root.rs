//! Trust material: the input's first byte picks the kind (0: a Sigstore
//! `trusted_root.json` of the rest; 1: a PKI policy's roots and
//! intermediates, 2: a Fulcio policy's CAs and Rekor key, each the rest's
//! two NUL-separated fields). Parsing must be total.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mco_registry_formats::sigstore::TrustRoot;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let mut fields = rest.splitn(2, |&b| b == 0);
    let (first, second) = (
        fields.next().unwrap_or_default(),
        fields.next().unwrap_or_default(),
    );
    let parsed = match kind % 3 {
        0 => TrustRoot::from_trusted_root_json(rest),
        1 => TrustRoot::from_pki(first, second),
        _ => TrustRoot::from_fulcio(first, second),
    };
    if let Err(why) = parsed {
        let _ = why.to_string();
    }
});
