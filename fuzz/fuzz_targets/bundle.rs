//! Sigstore bundles: any bytes as a referrer's bundle layer. The bundle,
//! its DSSE envelope and in-toto statement are parsed by hand-kept code;
//! it must be total, and nothing may verify under a key nobody can sign
//! with.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mco_registry_formats::cosign::Signature;

fuzz_target!(|data: &[u8]| {
    mco_fuzz::never_verifies(&Signature::Bundle(data.to_vec()));
});
