//! `.dockerconfigjson`: any bytes as a pull Secret's Docker config, looked
//! up for repositories of every shape the matching rules tell apart
//! (path depth, globs, ports, Docker Hub). Parsing, lookup and decoding
//! must be total, and an entry is chosen only if it covers the repository.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mco_registry_formats::docker_config::{DockerConfig, Target, credentials_for};

const TARGETS: [(&str, &str); 6] = [
    ("quay.io", "team-a/mcn"),
    ("quay.io", "team-b/special/mcn"),
    ("r.example.com", "ns/m"),
    ("r.example:5000", "m"),
    ("index.docker.io", "library/m"),
    ("127.0.0.1:5000", "team-a/mcn"),
];

fuzz_target!(|data: &[u8]| {
    let Ok(config) = DockerConfig::parse(data) else {
        return;
    };
    for (registry, repository) in TARGETS {
        let target = Target::new(registry, repository);
        let chosen = config.lookup(&target).map(|c| c.credentials());
        let direct = credentials_for(data, &target);
        // The one-call form agrees with lookup + decode.
        match (chosen, direct) {
            (None, Err(_)) => {}
            (Some(Ok(a)), Ok(b)) => assert_eq!(a, b),
            (Some(Err(a)), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (chosen, direct) => panic!("{target}: lookup {chosen:?}, credentials_for {direct:?}"),
        }
    }
});
