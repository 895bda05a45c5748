//! providerSpec handling: any JSON document as
//! `spec.template.spec.providerSpec.value`, decided by every platform
//! against the golden stream. Each decision must pass the host's checks
//! (the library also proves its own patches converge).

#![no_main]

use libfuzzer_sys::fuzz_target;
use mco_bootimage::load_stream;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(spec) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let loaded = load_stream(Some(mco_fuzz::GOLDEN_STREAM));
    let ms = mco_fuzz::machineset(Some(spec));
    mco_fuzz::decide_everywhere(loaded.as_ref().map_err(String::as_str), &ms);
});
