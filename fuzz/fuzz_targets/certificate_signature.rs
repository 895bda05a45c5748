//! Certificate-based cosign signatures: the input's first byte picks the
//! form (even: a Sigstore bundle of the rest; odd: a `.sig` layer whose
//! signature, certificate, chain and Rekor bundle annotations and payload
//! are the rest's NUL-separated fields). Certificates, chains, log entries,
//! inclusion proofs and checkpoints are parsed and checked by hand-kept
//! code; it must be total, and nothing may verify under trust nobody can
//! sign under.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mco_registry_formats::cosign::{CertificateAnnotations, Signature};

fuzz_target!(|data: &[u8]| {
    let Some((&form, rest)) = data.split_first() else {
        return;
    };
    let signature = if form % 2 == 0 {
        Signature::Bundle(rest.to_vec())
    } else {
        let mut fields = rest.splitn(5, |&b| b == 0);
        let mut text = || {
            fields
                .next()
                .map(|f| String::from_utf8_lossy(f).into_owned())
        };
        let (signature, certificate, chain, rekor_bundle) = (text(), text(), text(), text());
        Signature::SimpleSigning {
            signature,
            certificate: CertificateAnnotations {
                certificate,
                chain,
                rekor_bundle,
            },
            payload: fields.next().unwrap_or_default().to_vec(),
        }
    };
    mco_fuzz::never_verifies_certificate(&signature);
});
