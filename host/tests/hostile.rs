//! Misbehaving guests are contained: each failure is classified, nothing
//! else is affected, and the same runtime keeps serving a good guest.

mod common;

use std::time::Duration;

use mco_host::runtime::{GuestError, GuestModule, LoadError, NODE_STATE_INTERFACE, RuntimeConfig};
use mco_mcn::{Decision, Facts, Node};

/// What a fault must be classified as.
type Expectation = fn(&GuestError) -> bool;

fn config() -> RuntimeConfig {
    RuntimeConfig {
        deadline: Duration::from_millis(300),
        memory_limit: 32 << 20,
        ..RuntimeConfig::default()
    }
}

fn facts(node: &str) -> Facts {
    Facts {
        node: Node {
            name: node.into(),
            ..Node::default()
        },
        ..Facts::default()
    }
}

#[test]
fn runtime_faults_are_classified_and_the_host_keeps_serving() {
    for pooling in [true, false] {
        let runtime = common::runtime(RuntimeConfig {
            pooling,
            ..config()
        });
        let faulty = common::mcn_guest(&runtime, &common::test_guest("faulty.wasm"));
        let good = common::mcn_guest(&runtime, &common::installed_guest("mcn.wasm"));
        let cases: [(&str, Expectation); 4] = [
            ("loop", |e| matches!(e, GuestError::Deadline { .. })),
            ("allocate", |e| matches!(e, GuestError::MemoryLimit { .. })),
            ("recurse", |e| matches!(e, GuestError::StackOverflow { .. })),
            (
                "panic",
                |e| matches!(e, GuestError::Trap { detail, .. } if detail.contains("faulty guest gave up on node panic")),
            ),
        ];
        for (fault, expected) in cases {
            match faulty.derive(&facts(fault)) {
                Err(err) => assert!(
                    expected(&err),
                    "{fault} (pooling {pooling}): unexpected {err}"
                ),
                Ok(decision) => panic!("{fault} (pooling {pooling}): returned {decision:?}"),
            }
            // The failure touched nothing shared: a good guest still works.
            assert!(matches!(
                good.derive(&facts("worker-0")),
                Ok(Decision::Skip(_))
            ));
        }
    }
}

#[test]
fn bad_output_is_rejected_before_anything_is_written() {
    let runtime = common::runtime(config());
    let faulty = common::mcn_guest(&runtime, &common::test_guest("faulty.wasm"));
    for fault in ["garbage", "huge"] {
        let decision = faulty
            .derive(&facts(fault))
            .unwrap_or_else(|e| panic!("{fault}: {e}"));
        let invalid = mco_host::mcn::validate(&decision);
        assert!(invalid.is_err(), "{fault}: output accepted");
    }
}

#[test]
fn modules_outside_the_contract_are_refused_at_load() {
    let runtime = common::runtime(config());
    let load = |path: &std::path::Path| {
        GuestModule::from_file(&runtime, path, NODE_STATE_INTERFACE).map(|_| ())
    };
    match load(&common::test_guest("faulty-forbidden-import.wasm")) {
        Err(LoadError::ForbiddenImport { import, .. }) => {
            assert!(
                import.starts_with("wasi:filesystem") || import.starts_with("wasi:clocks"),
                "{import}"
            )
        }
        other => panic!("forbidden import accepted: {:?}", other.err()),
    }
    match load(&common::test_guest("faulty-wrong-world.wasm")) {
        Err(err @ LoadError::WrongWorld { .. }) => {
            assert!(err.to_string().contains("greet"), "{err}")
        }
        other => panic!("wrong world accepted: {:?}", other.err()),
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let not_wasm = dir.path().join("not.wasm");
    std::fs::write(&not_wasm, b"#!/bin/sh\necho hello\n").unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(load(&not_wasm), Err(LoadError::NotWasm(_))));
    let core = dir.path().join("core.wasm");
    std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(load(&core), Err(LoadError::CoreModule(_))));
    let truncated = dir.path().join("truncated.wasm");
    let good = std::fs::read(common::installed_guest("mcn.wasm")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&truncated, &good[..good.len() / 2]).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(load(&truncated), Err(LoadError::Compile { .. })));
}

#[test]
fn corrupt_cache_entries_are_recompiled() {
    let cache = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let runtime = common::runtime(RuntimeConfig {
        cache_dir: Some(cache.path().to_path_buf()),
        ..config()
    });
    let guest = common::installed_guest("mcn.wasm");
    common::mcn_guest(&runtime, &guest);
    let entries: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cwasm"))
        .collect();
    assert_eq!(entries.len(), 1, "one compiled entry expected: {entries:?}");
    let mut bytes = std::fs::read(&entries[0]).unwrap_or_else(|e| panic!("{e}"));
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&entries[0], &bytes).unwrap_or_else(|e| panic!("{e}"));

    let again = common::mcn_guest(&runtime, &guest);
    assert!(matches!(
        again.derive(&facts("worker-0")),
        Ok(Decision::Skip(_))
    ));
    let rewritten = std::fs::read(&entries[0]).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(rewritten, bytes, "the corrupt entry was not replaced");
}
