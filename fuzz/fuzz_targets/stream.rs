//! CoreOS stream parsing: any bytes as the ConfigMap's `data.stream`. The
//! parser and every lookup must be total, and each platform's decision for
//! a fixed MachineSet must pass the host's checks.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mco_bootimage::{Stream, load_stream};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(stream) = Stream::parse(text) {
        for arch in ["x86_64", "aarch64", "s390x", "ppc64le", ""] {
            let _ = stream.architecture(arch);
            let _ = stream.gcp_image_path(arch);
            let _ = stream.azure_marketplace(arch);
            let _ = stream.aws_region_image(arch, "us-east-1");
        }
        let _ = stream.contains_aws_ami("ami-0c5a8e7f3b2d1e4f6");
    }
    let loaded = load_stream(Some(text));
    let spec = serde_json::from_str(include_str!("../corpus/provider_spec/gcp.json")).ok();
    let ms = mco_fuzz::machineset(spec);
    mco_fuzz::decide_everywhere(loaded.as_ref().map_err(String::as_str), &ms);
});
