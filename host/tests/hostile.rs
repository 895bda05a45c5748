//! Misbehaving guests are contained: each failure is classified, nothing
//! else is affected, and the same runtime keeps serving good guests of both
//! jobs.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use mco_bootimage::Decision as BootDecision;
use mco_job_bootimage::eval::BootImageInputs;
use mco_job_bootimage::prepared::Prepared;
use mco_job_bootimage::rules::Step;
use mco_job_bootimage::{BatchItem, BootImageGuest, BootImageGuestExt as _, StreamInput};
use mco_job_mcn::{McnGuest, McnGuestExt as _, NODE_STATE_INTERFACE};
use mco_mcn::{Decision, Facts, Node};
use mco_runtime::{GuestError, GuestModule, Runtime, RuntimeConfig};

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

/// What a working node-state guest says of [`facts`]' node, which no pool
/// selects: an MCN under the placeholder pool.
fn reports_pool_less(decision: Result<Decision, GuestError>) -> bool {
    matches!(decision, Ok(Decision::Apply(mcn)) if mcn.pool == "not-yet-set")
}

/// Good guests of both jobs on one runtime, and a boot image case that
/// reaches the guest, to show a fault elsewhere left them working.
struct Bystanders {
    mcn: McnGuest,
    gcp: BootImageGuest,
    prepared: Prepared,
    stream: String,
}

impl Bystanders {
    fn new(runtime: &Runtime) -> Self {
        let case = common::repo_root().join("tests/golden/bootimage/gcp-patch-boot-disk-only");
        let inputs = BootImageInputs::read_case(&case, &mco_host::FEATURE_GATES)
            .unwrap_or_else(|e| panic!("{e}"));
        let stream = inputs
            .stream()
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("the case has a stream"))
            .to_owned();
        let Ok(Step::Guest(prepared)) = inputs.host_rules("x86_64").map(|r| r.step) else {
            panic!("the case should reach the guest");
        };
        Bystanders {
            mcn: common::mcn_guest(runtime, &common::installed_guest("mcn.wasm")),
            gcp: common::bootimage_guest(runtime, &common::installed_guest("bootimage-gcp.wasm")),
            prepared: *prepared,
            stream,
        }
    }

    fn still_serve(&self, after: &str) {
        assert!(
            reports_pool_less(self.mcn.derive(&facts("worker-0"))),
            "after {after}: the node-state guest stopped working"
        );
        let decision = self.gcp.decide_one(
            "GCP",
            &StreamInput::new(Some(&self.stream)),
            &self.prepared.machineset,
            &self.prepared.cluster,
            None,
        );
        assert!(
            matches!(decision, Ok(BootDecision::Patch { .. })),
            "after {after}: the boot image guest gave {decision:?}"
        );
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
        let others = Bystanders::new(&runtime);
        let cases: [(&str, &str, Expectation); 4] = [
            ("loop", "deadline", |e| {
                matches!(e, GuestError::Deadline { .. })
            }),
            ("allocate", "memory_limit", |e| {
                matches!(e, GuestError::MemoryLimit { .. })
            }),
            ("recurse", "stack_overflow", |e| {
                matches!(e, GuestError::StackOverflow { .. })
            }),
            (
                "panic",
                "trap",
                |e| matches!(e, GuestError::Trap { detail, .. } if detail.contains("faulty guest gave up on node panic")),
            ),
        ];
        for (fault, kind, expected) in cases {
            match faulty.derive(&facts(fault)) {
                Err(err) => {
                    assert!(
                        expected(&err),
                        "{fault} (pooling {pooling}): unexpected {err}"
                    );
                    assert_eq!(err.kind(), kind, "{fault}: {err}");
                }
                Ok(decision) => panic!("{fault} (pooling {pooling}): returned {decision:?}"),
            }
            // The failure touched nothing shared: good guests of both jobs
            // still work, and so does the faulty module on a harmless node.
            others.still_serve(fault);
            assert!(matches!(
                faulty.derive(&facts("worker-1")),
                Ok(Decision::Skip(_))
            ));
        }
    }
}

#[test]
fn a_fault_in_a_batch_fails_only_its_own_node() {
    let runtime = common::runtime(config());
    let faulty = common::mcn_guest(&runtime, &common::test_guest("faulty.wasm"));
    let batch: Vec<Facts> = ["worker-0", "loop", "worker-1", "panic", "worker-2"]
        .into_iter()
        .map(facts)
        .collect();
    let results = faulty.derive_batch(&batch);
    let kinds: Vec<&str> = results
        .iter()
        .map(|r| r.as_ref().map_or_else(GuestError::kind, |_| "ok"))
        .collect();
    assert_eq!(kinds, ["ok", "deadline", "ok", "trap", "ok"]);
    Bystanders::new(&runtime).still_serve("a batch with faults");
}

/// The handles a node-state guest is lent (WIT `node-inputs`) are valid
/// for its call only: a forged index, a handle used after the guest
/// dropped it, and more lookups than a handle answers in a call each fail
/// that evaluation with a message naming the rule; an index kept from an
/// earlier call of a shared instance reaches nothing of that call.
#[test]
fn handles_are_lent_for_one_call_only() {
    let runtime = common::runtime(config());
    let faulty = common::mcn_guest(&runtime, &common::test_guest("faulty.wasm"));
    for (fault, rule) in [
        ("forge-handle", "used a handle it was not lent in this call"),
        (
            "drop-then-use",
            "used a handle it was not lent in this call",
        ),
        ("lookup-flood", "the lookup budget of a handle per call"),
    ] {
        match faulty.derive(&facts(fault)) {
            Err(GuestError::Trap { detail, .. }) => {
                assert!(detail.contains(rule), "{fault}: {detail}");
            }
            other => panic!("{fault}: {other:?}"),
        }
    }
    let worker = |node: &str, role: &str| {
        let mut facts = facts(node);
        facts.node.labels = [("node-role.kubernetes.io/worker".into(), role.into())].into();
        facts
    };
    let batch = [
        worker("keep-handle", "the first node's"),
        worker("use-kept-handle", "the second node's"),
    ];
    let results = faulty.derive_batch(&batch);
    assert!(
        matches!(&results[0], Ok(Decision::Skip(text)) if text == "kept the labels handle"),
        "{results:?}"
    );
    match &results[1] {
        Ok(Decision::Skip(text)) => assert_eq!(
            text, "through the kept handle: Some(\"the second node's\")",
            "a kept index may only name the current call's own handle"
        ),
        Err(GuestError::Trap { detail, .. }) => {
            assert!(detail.contains("not lent in this call"), "{detail}");
        }
        other => panic!("{other:?}"),
    }
    Bystanders::new(&runtime).still_serve("handle misuse");
}

/// The same for the handles a boot image guest is lent (WIT
/// `boot-image-inputs`): the hostile guest misuses the stream's by
/// MachineSet name, whatever its variant.
#[test]
fn boot_image_handles_are_lent_for_one_call_only() {
    let runtime = common::runtime(config());
    let hostile =
        common::bootimage_guest(&runtime, &common::test_guest("hostile-gcp-reorder.wasm"));
    let bystanders = Bystanders::new(&runtime);
    let stream = StreamInput::new(Some(&bystanders.stream));
    let named = |name: &str| {
        let mut machineset = bystanders.prepared.machineset.clone();
        machineset.name = name.to_owned();
        BatchItem {
            machineset,
            cluster: bystanders.prepared.cluster.clone(),
            user_data: None,
        }
    };
    for (fault, rule) in [
        ("forge-handle", "used a handle it was not lent in this call"),
        ("lookup-flood", "the lookup budget of a handle per call"),
    ] {
        let item = named(fault);
        match hostile.decide_one("GCP", &stream, &item.machineset, &item.cluster, None) {
            Err(GuestError::Trap { detail, .. }) => {
                assert!(detail.contains(rule), "{fault}: {detail}");
            }
            other => panic!("{fault}: {other:?}"),
        }
    }
    let batch = [named("keep-handle"), named("use-kept-handle")];
    let results = hostile.decide_batch("GCP", &stream, &batch);
    assert!(
        matches!(&results[0], Ok(BootDecision::Skip { reason }) if reason == "kept the stream handle"),
        "{results:?}"
    );
    match &results[1] {
        // The index may only name the current call's own handle.
        Ok(BootDecision::Skip { reason }) => {
            assert_eq!(reason, "through the kept handle: rhcos-4.21");
        }
        Err(GuestError::Trap { detail, .. }) => {
            assert!(detail.contains("not lent in this call"), "{detail}");
        }
        other => panic!("{other:?}"),
    }
    bystanders.still_serve("boot image handle misuse");
}

#[test]
fn bad_output_is_rejected_before_anything_is_written() {
    let runtime = common::runtime(config());
    let faulty = common::mcn_guest(&runtime, &common::test_guest("faulty.wasm"));
    let cases = [
        (
            "garbage",
            "spec.pool.name \"Not A Pool!\" is not a DNS-1123 subdomain",
        ),
        (
            "huge",
            "skip reason or error message of 8388608 bytes (limit 4096)",
        ),
    ];
    for (fault, message) in cases {
        match faulty.derive(&facts(fault)) {
            Err(err @ GuestError::InvalidOutput { .. }) => {
                assert!(err.to_string().contains(message), "{fault}: {err}")
            }
            other => panic!("{fault}: output accepted or misclassified: {other:?}"),
        }
    }
    Bystanders::new(&runtime).still_serve("bad output");
}

/// The host's memory is bounded by the guest's cap, whatever it answers:
/// the longest text a guest can build fits its linear memory, so lifting it
/// copies at most the cap, and the answer is refused after that one copy.
#[test]
fn the_longest_answer_a_cap_allows_is_refused() {
    // What is tested is where memory is bounded, not time: building and
    // lifting 32 MiB takes a moment, which a busy machine can stretch past
    // the other tests' deadline (seen in a cold CI run).
    let runtime = common::runtime(RuntimeConfig {
        deadline: Duration::from_secs(30),
        ..config()
    });
    let faulty = common::mcn_guest(&runtime, &common::test_guest("faulty.wasm"));
    let cap = config().memory_limit;
    let err = match faulty.derive(&facts("longest")) {
        Err(err @ GuestError::InvalidOutput { .. }) => err.to_string(),
        other => panic!("the longest answer was accepted or misclassified: {other:?}"),
    };
    let bytes: usize = err
        .split("message of ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no size in {err:?}"));
    // Within a sixteenth of the cap, less what the guest's own code and
    // stack take: the answer really is as long as the cap allows, and no longer.
    assert!(
        bytes > cap / 16 * 14 && bytes < cap,
        "{bytes} bytes under a {cap}-byte cap"
    );
    Bystanders::new(&runtime).still_serve("the longest answer");
}

/// A module the host must refuse when loading it: its file, the error kind
/// and what the message must name.
struct Refusal {
    module: PathBuf,
    kind: &'static str,
    names: &'static [&'static str],
}

fn refusal(file: &str, kind: &'static str, names: &'static [&'static str]) -> Refusal {
    Refusal {
        module: common::test_guest(file),
        kind,
        names,
    }
}

fn written(dir: &Path, file: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(file);
    std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
    path
}

#[test]
fn modules_outside_the_contract_are_refused_at_load() {
    let runtime = common::runtime(config());
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let good = std::fs::read(common::installed_guest("mcn.wasm")).unwrap_or_else(|e| panic!("{e}"));
    let cases = [
        refusal(
            "faulty-forbidden-import.wasm",
            "forbidden_import",
            &["wasi:filesystem/", "wasi:clocks/wall-clock", "may not use"],
        ),
        refusal(
            "faulty-import-filesystem.wasm",
            "forbidden_import",
            &["wasi:filesystem/preopens", "may not use"],
        ),
        refusal(
            "faulty-import-sockets.wasm",
            "forbidden_import",
            &["wasi:sockets/", "may not use"],
        ),
        refusal(
            "faulty-import-clocks.wasm",
            "forbidden_import",
            &["wasi:clocks/monotonic-clock", "may not use"],
        ),
        refusal(
            "faulty-import-random.wasm",
            "forbidden_import",
            &["wasi:random/random", "may not use"],
        ),
        refusal(
            "faulty-wrong-world.wasm",
            "wrong_world",
            &[
                "does not export mco:machine-config/node-state@0.6.0",
                "greet",
            ],
        ),
        refusal(
            "faulty-newer-major.wasm",
            "incompatible_version",
            &[
                "exports mco:machine-config/node-state@1.0.0",
                "needs mco:machine-config/node-state@0.6.0",
            ],
        ),
        // Built against the previous minor contract: refused, naming the
        // version this host needs.
        refusal(
            "faulty-previous-minor.wasm",
            "incompatible_version",
            &[
                "exports mco:machine-config/node-state@0.1.0",
                "needs mco:machine-config/node-state@0.6.0",
                "rebuild the guest",
            ],
        ),
        Refusal {
            module: written(dir.path(), "not.wasm", b"#!/bin/sh\necho hello\n"),
            kind: "not_wasm",
            names: &["is not WebAssembly"],
        },
        Refusal {
            module: written(dir.path(), "core.wasm", b"\0asm\x01\0\0\0"),
            kind: "core_module",
            names: &["core WebAssembly module, not a component"],
        },
        Refusal {
            module: written(dir.path(), "truncated.wasm", &good[..good.len() / 2]),
            kind: "compile",
            names: &["could not be compiled"],
        },
        Refusal {
            module: dir.path().join("missing.wasm"),
            kind: "read",
            names: &["could not read guest module"],
        },
    ];
    let others = Bystanders::new(&runtime);
    for case in cases {
        let file = case.module.display().to_string();
        match GuestModule::from_file(&runtime, &case.module, NODE_STATE_INTERFACE) {
            Err(err) => {
                let message = err.to_string();
                assert_eq!(err.kind(), case.kind, "{file}: {message}");
                for name in case.names {
                    assert!(message.contains(name), "{file}: {message} lacks {name:?}");
                }
            }
            Ok(_) => panic!("{file} was accepted"),
        }
        others.still_serve(&file);
    }
}

/// Ways a compiled-guest cache entry can go bad on disk.
type Spoil = fn(&Path, &Path);

fn flip_middle_byte(code: &Path, _: &Path) {
    let mut bytes = std::fs::read(code).unwrap_or_else(|e| panic!("{e}"));
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(code, &bytes).unwrap_or_else(|e| panic!("{e}"));
}

fn truncate(code: &Path, _: &Path) {
    let bytes = std::fs::read(code).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(code, &bytes[..bytes.len() / 3]).unwrap_or_else(|e| panic!("{e}"));
}

/// Garbage with a checksum that matches it: only wasmtime's own checks stand
/// between these bytes and native code.
fn garbage_with_matching_checksum(code: &Path, checksum: &Path) {
    let garbage = b"\x7fELF not really a precompiled component".repeat(100);
    std::fs::write(code, &garbage).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(checksum, sha256_hex(&garbage)).unwrap_or_else(|e| panic!("{e}"));
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn remove_checksum(_: &Path, checksum: &Path) {
    std::fs::remove_file(checksum).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn corrupt_cache_entries_are_recompiled() {
    let spoilers: [(&str, Spoil); 4] = [
        ("flipped byte", flip_middle_byte),
        ("truncated", truncate),
        (
            "garbage with a matching checksum",
            garbage_with_matching_checksum,
        ),
        ("checksum missing", remove_checksum),
    ];
    let guest = common::installed_guest("mcn.wasm");
    for (how, spoil) in spoilers {
        let cache = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let runtime = common::runtime(RuntimeConfig {
            cache_dir: Some(cache.path().to_path_buf()),
            ..config()
        });
        common::mcn_guest(&runtime, &guest);
        let entries: Vec<_> = std::fs::read_dir(cache.path())
            .unwrap_or_else(|e| panic!("{e}"))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "cwasm"))
            .collect();
        assert_eq!(entries.len(), 1, "one compiled entry expected: {entries:?}");
        let code = &entries[0];
        let checksum = code.with_extension("sha256");
        spoil(code, &checksum);

        let again = common::mcn_guest(&runtime, &guest);
        assert!(
            reports_pool_less(again.derive(&facts("worker-0"))),
            "{how}: the recompiled guest does not work"
        );
        // The entry was rewritten whole: code and checksum agree again.
        let rewritten = std::fs::read(code).unwrap_or_else(|e| panic!("{e}"));
        let recorded = std::fs::read_to_string(&checksum).unwrap_or_default();
        assert_eq!(
            recorded.trim(),
            sha256_hex(&rewritten),
            "{how}: the corrupt entry was not replaced"
        );
    }
}
