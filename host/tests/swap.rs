//! Hot swap through the real host path: a registry file names modules, a
//! new set is built from it, and only a module that passes every check
//! (digest pin, component of the right world, allowlisted imports, limits,
//! smoke evaluation) replaces the one serving.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::wasm::with_custom_section;
use mco_fetch::oci::PullError;
use mco_host::JOBS;
use mco_job_mcn::McnGuest;
use mco_registry::table::{Location, Registry};
use mco_registry::{
    self, Built, EntryKey, EntryName, GuestSet, Guests, JobError, Outcome, Remote, Slot,
};
use mco_registry_formats::blob::digest;
use mco_runtime::{LoadError, Runtime, RuntimeConfig};

struct World {
    dir: tempfile::TempDir,
    runtime: Runtime,
}

impl World {
    fn new() -> World {
        World {
            dir: tempfile::tempdir().unwrap_or_else(|e| panic!("{e}")),
            runtime: common::runtime(RuntimeConfig {
                memory_limit: 64 << 20,
                ..RuntimeConfig::default()
            }),
        }
    }

    fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join(file)
    }

    fn write(&self, file: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path(file);
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        path
    }

    fn registry(&self, yaml: &str) -> Location {
        Location::File(self.write("registry.yaml", yaml.as_bytes()))
    }

    /// One poll of the swapper, without the Kubernetes parts.
    fn build(
        &self,
        location: &Location,
        previous: &GuestSet,
        known_bad: &BTreeMap<EntryName, EntryKey>,
    ) -> Built {
        let registry = mco_registry::read_local(location, &JOBS).unwrap_or_else(|e| panic!("{e}"));
        let fetched = mco_registry::fetch_all(&registry, &Remote::default());
        mco_registry::build(&self.runtime, &JOBS, Some(previous), fetched, known_bad)
    }
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn mcn_outcome(built: &Built) -> &Outcome {
    built
        .outcomes
        .get(&mco_job_mcn::job::job())
        .unwrap_or_else(|| panic!("no outcome for mcn"))
}

fn failed_load(built: &Built) -> &LoadError {
    match mcn_outcome(built) {
        Outcome::Failed {
            error: JobError::Load(err),
            ..
        } => err,
        other => panic!("expected a refused module, got {other:?}"),
    }
}

/// What a refused module's error must be.
type Refusal = fn(&LoadError) -> bool;

fn mcn_slot(set: &GuestSet) -> &Slot<McnGuest> {
    mco_job_mcn::job::slot(set).unwrap_or_else(|| panic!("no mcn guest"))
}

fn serves(set: &GuestSet) -> String {
    mco_job_mcn::job::smoke(&mcn_slot(set).active)
        .unwrap_or_else(|e| panic!("the serving guest fails: {e}"));
    mcn_slot(set).active.module().digest.clone()
}

#[test]
fn only_a_module_that_passes_every_check_is_swapped_in() {
    let world = World::new();
    let a = read(&common::installed_guest("mcn.wasm"));
    let b = with_custom_section(&a, "mco-swap-test", b"b");
    let (sha_a, sha_b) = (digest(&a), digest(&b));
    assert_ne!(sha_a, sha_b);
    world.write("mcn-a.wasm", &a);
    world.write("mcn-b.wasm", &b);

    let location = world.registry(&format!("mcn: {{module: mcn-a.wasm, sha256: {sha_a}}}\n"));
    let registry = mco_registry::read_local(&location, &JOBS).unwrap_or_else(|e| panic!("{e}"));
    let (guests, outcomes) =
        mco_registry::initial(&world.runtime, &JOBS, &registry, &Remote::default())
            .unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(
        outcomes.get(&mco_job_mcn::job::job()),
        Some(Outcome::Loaded { first: true, .. })
    ));
    assert_eq!(serves(&guests.current()), sha_a);

    // A pin that does not match: refused before compiling, both digests named.
    let location = world.registry(&format!("mcn: {{module: mcn-b.wasm, sha256: {sha_a}}}\n"));
    let built = world.build(&location, &guests.current(), &BTreeMap::new());
    let message = failed_load(&built).to_string();
    assert!(
        matches!(failed_load(&built), LoadError::Digest { .. })
            && message.contains(&format!("has sha256 {sha_b}"))
            && message.contains(&format!("pins sha256 {sha_a}")),
        "{message}"
    );
    assert!(!built.changed());
    assert_eq!(
        serves(built.set.as_ref().unwrap_or_else(|| panic!("no set"))),
        sha_a
    );

    // Modules the loader refuses, each with its reason; the old one serves on.
    let faulty = read(&common::test_guest("faulty.wasm"));
    let refused: [(&str, Vec<u8>, Refusal); 5] = [
        (
            "smoke",
            faulty,
            |e| matches!(e, LoadError::Smoke { detail, .. } if detail.contains("must be reported (apply)")),
        ),
        (
            "import",
            read(&common::test_guest("faulty-forbidden-import.wasm")),
            |e| matches!(e, LoadError::ForbiddenImport { .. }),
        ),
        (
            "world",
            read(&common::test_guest("faulty-wrong-world.wasm")),
            |e| matches!(e, LoadError::WrongWorld { .. }),
        ),
        ("garbage", b"not a module".to_vec(), |e| {
            matches!(e, LoadError::NotWasm(_))
        }),
        // Limits the pooling allocator cannot give.
        ("limits", b.clone(), |e| {
            matches!(e, LoadError::Limits { .. })
        }),
    ];
    let mut known_bad = BTreeMap::new();
    for (what, bytes, expected) in refused {
        let file = format!("{what}.wasm");
        world.write(&file, &bytes);
        let memory = if what == "limits" { 128 } else { 16 };
        let location = world.registry(&format!(
            "mcn: {{module: {file}, sha256: {}, memoryMiB: {memory}}}\n",
            digest(&bytes)
        ));
        let built = world.build(&location, &guests.current(), &known_bad);
        let err = failed_load(&built);
        assert!(expected(err), "{what}: {err}");
        assert!(!built.changed(), "{what}");
        // The same failing entry again is not retried (it is known bad).
        if let Outcome::Failed { key: Some(key), .. } = mcn_outcome(&built) {
            known_bad.insert(mco_job_mcn::job::job(), key.clone());
        }
        let set = built.set.unwrap_or_else(|| panic!("{what}: no set"));
        assert_eq!(serves(&set), sha_a, "{what}");
        let again = world.build(&location, &set, &known_bad);
        assert!(
            matches!(mcn_outcome(&again), Outcome::KnownBad),
            "{what}: {:?}",
            mcn_outcome(&again)
        );
    }

    // A good module, with limits of its own and a candidate: swapped in,
    // while an evaluation that started on the old set finishes on it.
    let in_flight: Arc<GuestSet> = guests.current();
    let location = world.registry(&format!(
        "mcn:\n  module: mcn-b.wasm\n  sha256: {sha_b}\n  memoryMiB: 32\n  deadline: 500ms\n  \
         candidate: {{module: mcn-a.wasm, sha256: {sha_a}}}\n"
    ));
    let built = world.build(&location, &in_flight, &known_bad);
    assert!(
        matches!(mcn_outcome(&built), Outcome::Loaded { first: false, .. }),
        "{:?}",
        mcn_outcome(&built)
    );
    assert!(built.changed());
    guests.replace(built.set.unwrap_or_else(|| panic!("no set")));
    let now = guests.current();
    assert_eq!(serves(&now), sha_b);
    assert_eq!(serves(&in_flight), sha_a, "the old set still evaluates");
    assert_eq!(mcn_slot(&now).active.limits().memory_limit, 32 << 20);
    assert_eq!(mcn_slot(&now).active.limits().deadline.as_millis(), 500);
    let candidate = mcn_slot(&now)
        .candidate
        .as_ref()
        .unwrap_or_else(|| panic!("no candidate"));
    assert_eq!(candidate.module().digest, sha_a);
    let status = guests.status();
    let job = &status.jobs["mcn"];
    assert_eq!((job.sha256.as_str(), job.memory_mib), (sha_b.as_str(), 32));
    assert_eq!(
        job.candidate.as_ref().map(|c| c.sha256.as_str()),
        Some(sha_a.as_str())
    );

    // Nothing changed: the loaded guest is reused, not recompiled.
    let built = world.build(&location, &now, &known_bad);
    assert!(matches!(mcn_outcome(&built), Outcome::Unchanged));
    assert!(!built.changed());
}

#[test]
fn boot_image_platforms_come_and_go_and_a_bad_one_keeps_its_predecessor() {
    let world = World::new();
    let mcn = common::installed_guest("mcn.wasm");
    let gcp = read(&common::installed_guest("bootimage-gcp.wasm"));
    let aws = read(&common::installed_guest("bootimage-aws.wasm"));
    world.write("gcp.wasm", &gcp);
    world.write("aws.wasm", &aws);
    let location = world.registry(&format!(
        "mcn: {}\nbootImage:\n  GCP: gcp.wasm\n  AWS: aws.wasm\n",
        mcn.display()
    ));
    let registry = mco_registry::read_local(&location, &JOBS).unwrap_or_else(|e| panic!("{e}"));
    let (guests, _) = mco_registry::initial(&world.runtime, &JOBS, &registry, &Remote::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let platforms = |g: &Guests| Vec::from_iter(mco_job_bootimage::job::platforms(&g.current()));
    assert_eq!(platforms(&guests), ["AWS", "GCP"]);

    // GCP now names the MCN guest (wrong world): refused, the GCP guest
    // stays; AWS leaves the registry; Azure joins.
    let azure = read(&common::installed_guest("bootimage-azure.wasm"));
    world.write("azure.wasm", &azure);
    let location = world.registry(&format!(
        "mcn: {0}\nbootImage:\n  GCP: {0}\n  Azure: azure.wasm\n",
        mcn.display()
    ));
    let built = world.build(&location, &guests.current(), &BTreeMap::new());
    let outcome = |platform: &str| &built.outcomes[&mco_job_bootimage::job::job(platform)];
    assert!(matches!(
        outcome("GCP"),
        Outcome::Failed {
            error: JobError::Load(LoadError::WrongWorld { .. }),
            ..
        }
    ));
    assert!(matches!(outcome("AWS"), Outcome::Removed));
    assert!(matches!(
        outcome("Azure"),
        Outcome::Loaded { first: true, .. }
    ));
    guests.replace(built.set.unwrap_or_else(|| panic!("no set")));
    assert_eq!(platforms(&guests), ["Azure", "GCP"]);
    let gcp_now = guests.current();
    let gcp_now = &mco_job_bootimage::job::slot(&gcp_now, "GCP")
        .unwrap_or_else(|| panic!("no GCP"))
        .active;
    assert_eq!(gcp_now.module().digest, digest(&gcp));
    mco_job_bootimage::job::smoke("GCP", gcp_now).unwrap_or_else(|e| panic!("{e}"));

    // A registry without an mcn entry keeps the MCN guest and says why.
    let location = world.registry("bootImage:\n  Azure: azure.wasm\n");
    let built = world.build(&location, &guests.current(), &BTreeMap::new());
    assert!(matches!(
        mcn_outcome(&built),
        Outcome::Failed {
            error: JobError::Missing(_),
            ..
        }
    ));
    assert!(built.set.is_some());
}

#[test]
fn a_bad_module_at_start_names_its_registry_entry() {
    let world = World::new();
    let a = read(&common::installed_guest("mcn.wasm"));
    world.write("mcn.wasm", &a);
    let pin = "0".repeat(64);
    let location = world.registry(&format!("mcn: {{module: mcn.wasm, sha256: {pin}}}\n"));
    let registry = mco_registry::read_local(&location, &JOBS).unwrap_or_else(|e| panic!("{e}"));
    match mco_registry::initial(&world.runtime, &JOBS, &registry, &Remote::default()) {
        Err(err) => {
            let message = err.to_string();
            assert!(
                message.starts_with("registry entry mcn: ")
                    && message.contains(&digest(&a))
                    && message.contains(&pin),
                "{message}"
            );
        }
        Ok(_) => panic!("a module with the wrong digest was loaded"),
    }
}

#[test]
fn every_shipped_guest_passes_its_smoke_evaluation() {
    let world = World::new();
    let mcn = common::installed_guest("mcn.wasm");
    let dir = mcn.parent().unwrap_or_else(|| panic!("no guest dir"));
    let registry = Registry::installed(dir, &JOBS);
    let (guests, _) = mco_registry::initial(&world.runtime, &JOBS, &registry, &Remote::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let set = guests.current();
    assert_eq!(mco_job_bootimage::job::platforms(&set).len(), 4);
    // What every poll of an unchanged registry costs: reading and hashing
    // the modules; nothing is compiled.
    let started = std::time::Instant::now();
    let fetched = mco_registry::fetch_all(&registry, &Remote::default());
    let built = mco_registry::build(&world.runtime, &JOBS, Some(&set), fetched, &BTreeMap::new());
    assert!(!built.changed());
    eprintln!(
        "an unchanged poll of the 5 installed guests took {:.2?}",
        started.elapsed()
    );
    for platform in mco_job_bootimage::job::platforms(&set) {
        let guest = mco_job_bootimage::job::slot(&set, &platform)
            .unwrap_or_else(|| panic!("{platform}: no guest"));
        // The fixtures are meaningful: each shipped guest patches its
        // platform's MachineSet to the fixture stream's image.
        let decision = mco_job_bootimage::job::decision(&platform, &guest.active)
            .unwrap_or_else(|e| panic!("{platform}: {e}"));
        assert_eq!(decision.action(), "patch", "{platform}: {decision:?}");
    }
}

/// A pod restarted while its registry entry cannot load (a module missing
/// here, as when the registry is down) starts on the module that last
/// served the job, then on the installed one, reports the entry degraded,
/// and refuses to start only with `--strict-start`.
#[test]
fn a_failing_entry_at_start_falls_back_to_the_last_good_module() {
    let world = World::new();
    let installed_mcn = common::installed_guest("mcn.wasm");
    let installed_dir = installed_mcn
        .parent()
        .unwrap_or_else(|| panic!("no guest dir"));
    let installed = Registry::installed(installed_dir, &JOBS);
    let cache = mco_fetch::oci::Oci::new(&[], Some(world.path("cache")));
    let good = with_custom_section(&read(&installed_mcn), "last-good", b"1");
    world.write("mcn.wasm", &good);
    let location = world.registry("mcn: {module: mcn.wasm, memoryMiB: 32}\n");
    let registry = mco_registry::read_local(&location, &JOBS).unwrap_or_else(|e| panic!("{e}"));
    let fallback = |strict| mco_registry::Fallback {
        strict,
        last_good: Some(&cache),
        installed: &installed,
    };
    let serving = |started: &mco_registry::Started| {
        mcn_slot(&started.guests.current())
            .active
            .module()
            .digest
            .clone()
    };

    // Before any module served, a missing one falls back to the installed
    // module, under the entry's limits.
    std::fs::remove_file(world.path("mcn.wasm")).unwrap_or_else(|e| panic!("{e}"));
    let started = mco_registry::start_set(
        &world.runtime,
        &JOBS,
        &registry,
        &Remote::default(),
        &fallback(false),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(serving(&started), digest(&read(&installed_mcn)));
    assert_eq!(
        mcn_slot(&started.guests.current())
            .active
            .limits()
            .memory_limit,
        32 << 20
    );
    let why = started
        .degraded
        .get(&mco_job_mcn::job::job())
        .cloned()
        .unwrap_or_default();
    assert!(
        why.contains("could not read guest module") && why.contains("the installed module"),
        "{why}"
    );

    // A start that loads the entry remembers it ...
    world.write("mcn.wasm", &good);
    let started = mco_registry::start_set(
        &world.runtime,
        &JOBS,
        &registry,
        &Remote::default(),
        &fallback(false),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(started.degraded.is_empty());
    assert_eq!(serving(&started), digest(&good));

    // ... so the next start without it serves that module again, not the
    // installed one.
    world.write("mcn.wasm", b"\0asm broken");
    let started = mco_registry::start_set(
        &world.runtime,
        &JOBS,
        &registry,
        &Remote::default(),
        &fallback(false),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let why = started
        .degraded
        .get(&mco_job_mcn::job::job())
        .cloned()
        .unwrap_or_default();
    assert_eq!(serving(&started), digest(&good), "{why}");
    assert!(
        why.contains("last served it") && why.contains(&digest(&good)),
        "{why}"
    );

    // --strict-start keeps the old behaviour.
    match mco_registry::start_set(
        &world.runtime,
        &JOBS,
        &registry,
        &Remote::default(),
        &fallback(true),
    ) {
        Err(err) => assert!(err.to_string().starts_with("registry entry mcn: "), "{err}"),
        Ok(_) => panic!("a strict start served a fallback"),
    }
}

#[test]
fn a_module_refused_for_its_signature_keeps_the_old_one_serving() {
    let world = World::new();
    let a = read(&common::installed_guest("mcn.wasm"));
    world.write("mcn-a.wasm", &a);
    let registry = mco_registry::read_local(&world.registry("mcn: mcn-a.wasm\n"), &JOBS)
        .unwrap_or_else(|e| panic!("{e}"));
    let (guests, _) = mco_registry::initial(&world.runtime, &JOBS, &registry, &Remote::default())
        .unwrap_or_else(|e| panic!("{e}"));

    // The pull of the new module was refused as the OCI pull refuses an unsigned
    // one; the swapper gets that error in place of its bytes.
    let reference = "r.example/g/mcn:v2";
    let registry = mco_registry::read_local(
        &world.registry(&format!(
            "mcn:\n  oci: {reference}\n  verify: {{keys: [{{file: team.pub}}]}}\n"
        )),
        &JOBS,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let refusal = PullError::Signature {
        reference: reference.into(),
        digest: format!("sha256:{}", "e".repeat(64)),
        keys: world.path("team.pub").display().to_string(),
        detail: "no cosign signature found".into(),
    };
    assert_eq!(refusal.kind(), "signature_failure");
    let refusal = Arc::new(refusal);
    let remote = Remote {
        pulls: mco_registry::oci_sources(&registry)
            .into_iter()
            .map(|source| (source, Err(refusal.clone())))
            .collect(),
        ..Remote::default()
    };
    let fetched = mco_registry::fetch_all(&registry, &remote);
    // The pull's error reaches the entry typed: its kind, and its words.
    match fetched.get(&mco_job_mcn::job::job()) {
        Some(Err(mco_registry::FetchError::Oci(err))) => {
            assert_eq!(err.kind(), "signature_failure");
            assert_eq!(err.to_string(), refusal.to_string());
        }
        other => panic!("{other:?}"),
    }
    let built = mco_registry::build(
        &world.runtime,
        &JOBS,
        Some(&guests.current()),
        fetched,
        &BTreeMap::new(),
    );
    match mcn_outcome(&built) {
        Outcome::Failed { error, .. } => {
            let message = error.to_string();
            assert!(
                message.contains(&format!("oci:{reference}"))
                    && message.contains("team.pub")
                    && message.contains("no valid cosign signature"),
                "{message}"
            );
            assert_eq!(message, refusal.to_string());
        }
        other => panic!("{other:?}"),
    }
    assert!(!built.changed());
    assert_eq!(
        serves(built.set.as_ref().unwrap_or_else(|| panic!("no set"))),
        digest(&a)
    );
}
