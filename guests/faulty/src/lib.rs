//! Guests that misbehave on purpose. The default build exports the real
//! node-state interface and picks its fault from the node's name, so one
//! module covers every runtime fault; the features (see Cargo.toml) build
//! modules the host must refuse at load time: forbidden WASI imports, an
//! unrelated world, a newer major version of our own package, the previous
//! minor one.

#[cfg(all(
    target_arch = "wasm32",
    not(any(
        feature = "wrong-world",
        feature = "newer-major",
        feature = "previous-minor"
    ))
))]
mod node_state {
    use exports::mco::machine_config::node_state::{
        ConfigVersion, Decision, Facts, Guest, MachineConfigNode, NodeLabels, NodeStatus,
        RenderedConfigs,
    };
    use mco::machine_config::types::{Condition, ConditionStatus};
    use std::hint::black_box;
    use std::mem::ManuallyDrop;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// The index of the labels handle a `keep-handle` node was lent.
    static KEPT: AtomicU32 = AtomicU32::new(u32::MAX);

    wit_bindgen::generate!({ world: "node-state-reporter", path: "../../wit" });

    struct Faulty;

    /// A handle to the labels at `index`, whether or not this call was
    /// lent it; never dropped, since the guest does not own it.
    fn labels_at(index: u32) -> ManuallyDrop<NodeLabels> {
        // SAFETY: wasm has no memory safety stake in a handle index: the
        // host checks every index against the instance's handle table.
        ManuallyDrop::new(unsafe { NodeLabels::from_handle(index) })
    }

    impl Guest for Faulty {
        fn derive(labels: &NodeLabels, _configs: &RenderedConfigs, facts: Facts) -> Decision {
            // `flood` passes the host's smoke evaluation (nodes named
            // `smoke-*`) with a plain MCN, so that it serves, and answers
            // every other node with the longest text its memory cap allows.
            if cfg!(feature = "flood") {
                return if facts.node.name.starts_with("smoke-") {
                    let pool = facts.pools.first().map(|p| p.name.clone());
                    overstep(&facts, &pool.unwrap_or_default(), false)
                } else {
                    Decision::Skip(longest_text())
                };
            }
            match facts.node.name.as_str() {
                // Handle misuse: a handle kept for a later call, an index
                // the host never lent, a lent handle dropped and then used,
                // and more lookups than the host answers in one call.
                "keep-handle" => {
                    KEPT.store(labels.handle(), Ordering::Relaxed);
                    Decision::Skip("kept the labels handle".into())
                }
                "use-kept-handle" => {
                    let kept = labels_at(KEPT.load(Ordering::Relaxed));
                    let role = kept.label("node-role.kubernetes.io/worker");
                    Decision::Skip(format!("through the kept handle: {role:?}"))
                }
                "forge-handle" => {
                    let role =
                        labels_at(labels.handle() + 1000).label("node-role.kubernetes.io/worker");
                    Decision::Skip(format!("through a forged handle: {role:?}"))
                }
                "drop-then-use" => {
                    // SAFETY: as in `labels_at`; dropping runs the handle's
                    // `resource.drop`, which ends this borrow early.
                    drop(unsafe { NodeLabels::from_handle(labels.handle()) });
                    let role = labels.label("node-role.kubernetes.io/worker");
                    Decision::Skip(format!("through a dropped handle: {role:?}"))
                }
                "lookup-flood" => {
                    for _ in 0..1_000_000 {
                        black_box(labels.label("node-role.kubernetes.io/worker"));
                    }
                    Decision::Skip("looked up a million labels".into())
                }
                "loop" => loop {
                    black_box(());
                },
                "allocate" => {
                    let mut hoard = Vec::new();
                    loop {
                        hoard.push(vec![1u8; 1 << 20]);
                        black_box(&hoard);
                    }
                }
                "recurse" => Decision::Skip(format!("{}", recurse(black_box(1)))),
                "panic" => panic!("faulty guest gave up on node {}", facts.node.name),
                "garbage" => Decision::Apply(MachineConfigNode {
                    pool: "Not A Pool!".into(),
                    desired_config: String::new(),
                    desired_image: None,
                    status: Some(NodeStatus {
                        observed_generation: -5,
                        config_version: ConfigVersion {
                            current: None,
                            desired: "x".repeat(300),
                        },
                        config_image: None,
                        conditions: Vec::new(),
                    }),
                }),
                "huge" => Decision::Skip("x".repeat(8 << 20)),
                "longest" => Decision::Skip(longest_text()),
                // Well-formed MCNs that claim what the facts do not give:
                // a pool the host did not pass, a condition type twice.
                "foreign-pool" => overstep(&facts, "gpu-not-passed", false),
                "duplicate-condition" => {
                    let pool = facts.pools.first().map(|p| p.name.clone());
                    overstep(&facts, &pool.unwrap_or_else(|| "not-yet-set".into()), true)
                }
                // An observedGeneration no later write could go below (the
                // CRD forbids lowering it), and a Linux node left without
                // status.
                "inflated-generation" | "no-status" => {
                    let pool = facts.pools.first().map(|p| p.name.clone());
                    let Decision::Apply(mut mcn) =
                        overstep(&facts, &pool.unwrap_or_else(|| "not-yet-set".into()), false)
                    else {
                        unreachable!("overstep always applies")
                    };
                    match (facts.node.name.as_str(), mcn.status.as_mut()) {
                        ("inflated-generation", Some(status)) => {
                            status.observed_generation = i64::MAX;
                        }
                        _ => mcn.status = None,
                    }
                    Decision::Apply(mcn)
                }
                _ => Decision::Skip(forbidden_effect()),
            }
        }
    }

    /// Every default condition `NotYetOccurred`, so only the overstep is wrong.
    fn overstep(facts: &Facts, pool: &str, duplicate: bool) -> Decision {
        const TYPES: [&str; 14] = [
            "UpdatePrepared",
            "UpdateExecuted",
            "UpdatePostActionComplete",
            "UpdateComplete",
            "Resumed",
            "Drained",
            "AppliedFilesAndOS",
            "Cordoned",
            "RebootedNode",
            "Updated",
            "Uncordoned",
            "NodeDegraded",
            "PinnedImageSetsDegraded",
            "PinnedImageSetsProgressing",
        ];
        let mut conditions: Vec<Condition> = TYPES
            .iter()
            .map(|t| Condition {
                type_: (*t).into(),
                status: ConditionStatus::False,
                reason: "NotYetOccurred".into(),
                message: format!("This node has not yet entered the {t} phase"),
            })
            .collect();
        if duplicate {
            conditions.push(Condition {
                type_: "Updated".into(),
                status: ConditionStatus::True,
                reason: "Updated".into(),
                message: "Node is up to date".into(),
            });
        }
        let annotation = |key: &str| {
            facts
                .node
                .annotations
                .iter()
                .find(|(k, _)| k == &format!("machineconfiguration.openshift.io/{key}"))
                .map(|(_, v)| v.clone())
        };
        let desired = annotation("desiredConfig").unwrap_or_else(|| "not-yet-set".into());
        Decision::Apply(MachineConfigNode {
            pool: pool.into(),
            desired_config: desired.clone(),
            desired_image: None,
            status: Some(NodeStatus {
                observed_generation: facts
                    .stored
                    .as_ref()
                    .and_then(|s| s.observed_generation)
                    .unwrap_or(2),
                config_version: ConfigVersion {
                    current: annotation("currentConfig"),
                    desired,
                },
                config_image: None,
                conditions,
            }),
        })
    }

    /// The longest text the memory cap lets this guest build: asks for
    /// 1 GiB and then for a sixteenth less each time the allocator (the
    /// host's limiter) says no, so it ends within 1/16 of the cap.
    fn longest_text() -> String {
        let mut len: usize = 1 << 30;
        while len > 0 {
            let mut text = Vec::new();
            if text.try_reserve_exact(len).is_ok() {
                text.resize(len, b'x');
                return String::from_utf8(text).unwrap_or_default();
            }
            len -= len.div_ceil(16);
        }
        String::new()
    }

    #[expect(unconditional_recursion, reason = "overflowing the stack is the point")]
    fn recurse(depth: u64) -> u64 {
        black_box(recurse(depth + 1)) + depth
    }

    /// With `forbidden-import`, reaches for the host's files and clock, which
    /// pulls `wasi:filesystem` and `wasi:clocks` into the component's imports.
    #[cfg(feature = "forbidden-import")]
    fn forbidden_effect() -> String {
        let hostname = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
        format!("{hostname} at {:?}", std::time::SystemTime::now())
    }

    /// Reading a file imports `wasi:filesystem` (whose types also pull in
    /// `wasi:clocks/wall-clock` for file times).
    #[cfg(feature = "import-filesystem")]
    fn forbidden_effect() -> String {
        std::fs::read_to_string("/etc/hostname").unwrap_or_default()
    }

    /// Opening a connection imports `wasi:sockets`.
    #[cfg(feature = "import-sockets")]
    fn forbidden_effect() -> String {
        match std::net::TcpStream::connect(("127.0.0.1", 6443)) {
            Ok(_) => "connected to the apiserver".into(),
            Err(err) => err.to_string(),
        }
    }

    /// Reading the monotonic clock imports `wasi:clocks/monotonic-clock`.
    #[cfg(feature = "import-clocks")]
    fn forbidden_effect() -> String {
        format!("{:?}", std::time::Instant::now())
    }

    /// wasi-libc's `getentropy` imports `wasi:random/random` (std itself only
    /// uses the allowed `insecure-seed`).
    #[cfg(feature = "import-random")]
    fn forbidden_effect() -> String {
        unsafe extern "C" {
            fn getentropy(buffer: *mut u8, len: usize) -> i32;
        }
        let mut bytes = [0u8; 8];
        // SAFETY: getentropy writes at most `len` bytes into `buffer`, which
        // points at `bytes` of exactly that length.
        let rc = unsafe { getentropy(bytes.as_mut_ptr(), bytes.len()) };
        format!("{rc}: {bytes:?}")
    }

    #[cfg(not(any(
        feature = "forbidden-import",
        feature = "import-filesystem",
        feature = "import-sockets",
        feature = "import-clocks",
        feature = "import-random"
    )))]
    fn forbidden_effect() -> String {
        "faulty guest: no fault requested".into()
    }

    export!(Faulty);
}

#[cfg(all(target_arch = "wasm32", feature = "wrong-world"))]
mod wrong_world {
    wit_bindgen::generate!({
        inline: "package test:unrelated@1.0.0; world greeter { export greet: func(name: string) -> string; }",
    });

    struct Greeter;

    impl Guest for Greeter {
        fn greet(name: String) -> String {
            format!("hello {name}")
        }
    }

    export!(Greeter);
}

#[cfg(all(target_arch = "wasm32", feature = "newer-major"))]
mod newer_major {
    wit_bindgen::generate!({ world: "node-state-reporter", path: "wit-next" });

    struct Next;

    impl exports::mco::machine_config::node_state::Guest for Next {
        fn derive(facts: String) -> Result<String, String> {
            Err(format!(
                "node-state 1.0.0 got {} bytes of facts",
                facts.len()
            ))
        }
    }

    export!(Next);
}

/// A guest built against the 0.1 contract (`wit-0.1/`, the WIT as it was):
/// a 0.2 host must refuse it at load and say which version it needs.
#[cfg(all(target_arch = "wasm32", feature = "previous-minor"))]
mod previous_minor {
    use exports::mco::machine_config::node_state::{Decision, Facts, Guest};

    wit_bindgen::generate!({ world: "node-state-reporter", path: "wit-0.1" });

    struct Old;

    impl Guest for Old {
        fn derive(facts: Facts) -> Decision {
            Decision::Skip(format!("0.1 guest on node {}", facts.node.name))
        }
    }

    export!(Old);
}
