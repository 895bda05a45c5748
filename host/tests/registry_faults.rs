//! Pulls from a registry that misbehaves on purpose: a small HTTP server,
//! written here, that speaks just enough of the OCI distribution API
//! (manifests and blobs over plain HTTP, 404 for the rest) for the client
//! to reach the misbehaviour. Every pull ends in a typed error that names
//! the reference and the bound or timeout it hit; the server sees the
//! client stop reading near the bound, so the host never holds more; and
//! the module serving before keeps serving.

use crate::common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mco_fetch::oci::{Oci, PullError, PullLimits, RequestError};
use mco_fetch::signature_policy::{Policy, Requirement};
use mco_host::JOBS;
use mco_registry::table::Location;
use mco_registry::{Access, InFlight, Outcome, Remote};
use mco_registry_formats::blob::digest;
use mco_registry_formats::cosign::Key;
use mco_runtime::RuntimeConfig;
use oci_client::secrets::RegistryAuth;

/// What the hostile answers send: 300 MiB, far past every bound.
const HUGE: usize = 300 << 20;

/// The most the server may have written when the client stopped reading
/// at a bound of 1 MiB or less: the bound and the socket buffers of both
/// ends, a small part of [`HUGE`].
const STOPPED_NEAR_THE_BOUND: usize = 32 << 20;

/// A public key for `verify` (no module here is signed by it).
const KEY_PEM: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEGsE5F5TvCk5V/MHevHM8bc8QoTWC
QTHqLxqeTayeT0UzG4MFscuTu4Y1WtW2Ojow7tmrCeHXHsq/SSDjqk1+9g==
-----END PUBLIC KEY-----
";

/// Small bounds and timeouts, so each case ends in seconds.
fn limits() -> PullLimits {
    PullLimits {
        connect: Duration::from_secs(2),
        idle: Duration::from_secs(1),
        deadline: Duration::from_secs(3),
        max_module_bytes: 1 << 20,
    }
}

/// How the server answers one request.
#[derive(Clone)]
enum Answer {
    /// These bytes, with their length.
    Bytes(Vec<u8>),
    /// `len` bytes (`usize::MAX`: no end), announced as `content_length`
    /// bytes, or unannounced (the body ends when the connection closes).
    Flood {
        len: usize,
        content_length: Option<usize>,
    },
    /// The request is read and never answered.
    Silent,
    /// The headers, then one byte every 200 ms, without end: never silent
    /// for a read timeout, never done.
    Drip,
    NotFound,
}

/// The misbehaving registry: what it was asked, and how many bytes each
/// finished answer wrote before the client stopped it.
struct Registry {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
    written: Arc<Mutex<Vec<usize>>>,
}

impl Registry {
    /// A registry answering each request path as `answer` says.
    fn start(answer: impl Fn(&str) -> Answer + Send + Sync + 'static) -> Registry {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let port = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("{e}"))
            .port();
        let registry = Registry {
            port,
            requests: Arc::default(),
            written: Arc::default(),
        };
        let (requests, written) = (registry.requests.clone(), registry.written.clone());
        let answer = Arc::new(answer);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (answer, requests, written) =
                    (answer.clone(), requests.clone(), written.clone());
                std::thread::spawn(move || {
                    let Some(path) = read_request(&stream) else {
                        return;
                    };
                    requests
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(path.clone());
                    let bytes = send(stream, answer(&path));
                    written
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(bytes);
                });
            }
        });
        registry
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn reference(&self) -> String {
        format!("{}/team/mcn:v1", self.host())
    }

    fn oci(&self) -> Oci {
        Oci::with_limits(&[self.host()], None, limits())
    }

    fn requests(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The bytes the largest answer wrote, once `answers` have finished
    /// (the client's close ends a flood; waited for, at most 20 s, while
    /// the runtime closes the client's connections).
    async fn most_written(&self, answers: usize) -> usize {
        for _ in 0..200 {
            let written = self
                .written
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            if written.len() >= answers {
                return written.into_iter().max().unwrap_or(0);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the registry's answers did not finish: the client kept reading")
    }
}

/// The path of the request on `stream`.
fn read_request(mut stream: &TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 64 << 10 {
        if stream.read(&mut byte).ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    head.split(' ').nth(1).map(str::to_string)
}

/// Writes `answer`; the bytes of body written.
fn send(mut stream: TcpStream, answer: Answer) -> usize {
    let head = |status: &str, length: Option<usize>| {
        let length = length.map_or(String::new(), |l| format!("Content-Length: {l}\r\n"));
        format!("HTTP/1.1 {status}\r\n{length}Connection: close\r\n\r\n")
    };
    match answer {
        Answer::Bytes(body) => {
            let _ = stream.write_all(head("200 OK", Some(body.len())).as_bytes());
            let _ = stream.write_all(&body);
            body.len()
        }
        Answer::Flood {
            len,
            content_length,
        } => {
            let _ = stream.write_all(head("200 OK", content_length).as_bytes());
            let chunk = vec![b' '; 64 << 10];
            let mut written = 0;
            while written < len {
                let n = chunk.len().min(len - written);
                if stream.write_all(&chunk[..n]).is_err() {
                    break;
                }
                written += n;
            }
            written
        }
        Answer::Silent => {
            std::thread::sleep(Duration::from_secs(30));
            0
        }
        Answer::Drip => {
            let _ = stream.write_all(head("200 OK", None).as_bytes());
            let mut written = 0;
            while stream.write_all(b" ").is_ok() {
                written += 1;
                std::thread::sleep(Duration::from_millis(200));
            }
            written
        }
        Answer::NotFound => {
            let _ = stream.write_all(head("404 Not Found", Some(0)).as_bytes());
            0
        }
    }
}

const CONFIG_DIGEST: &str =
    "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";
const LAYER_DIGEST: &str =
    "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/// A CNCF wasm artifact's manifest whose config and layer declare these
/// sizes.
fn manifest(config_size: usize, layer_size: usize) -> Answer {
    Answer::Bytes(
        serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.wasm.config.v0+json",
                       "digest": CONFIG_DIGEST, "size": config_size},
            "layers": [{"mediaType": "application/wasm",
                        "digest": LAYER_DIGEST, "size": layer_size}],
        }))
        .unwrap_or_else(|e| panic!("{e}")),
    )
}

/// A registry whose manifest declares these sizes and whose config and
/// layer are answered as given.
fn artifact(config_size: usize, layer_size: usize, config: Answer, layer: Answer) -> Registry {
    Registry::start(move |path| {
        if path.ends_with("/manifests/v1") {
            manifest(config_size, layer_size)
        } else if path.ends_with(&format!("/blobs/{CONFIG_DIGEST}")) {
            config.clone()
        } else if path.ends_with(&format!("/blobs/{LAYER_DIGEST}")) {
            layer.clone()
        } else {
            Answer::NotFound
        }
    })
}

/// The error of an anonymous pull of `registry`'s module.
async fn pull_error(registry: &Registry, policy: Option<&Policy>) -> PullError {
    match (registry.oci())
        .pull(
            &registry.reference(),
            &RegistryAuth::Anonymous,
            policy,
            None,
        )
        .await
    {
        Ok(pulled) => panic!("pulled {} bytes", pulled.bytes.len()),
        Err(err) => err,
    }
}

/// `error` names the reference, and is a request for `what` that ended as
/// `ended` says; its `kind()` is `kind`.
fn assert_request(
    error: &PullError,
    registry: &Registry,
    what: &str,
    kind: &str,
    ended: impl Fn(&RequestError) -> bool,
) {
    let message = error.to_string();
    assert!(
        message.starts_with(&format!("oci:{}: ", registry.reference())),
        "{message}"
    );
    assert_eq!(error.kind(), kind, "{message}");
    match error {
        PullError::Request {
            what: failed,
            source,
            ..
        } => assert!(*failed == what && ended(source), "{message}"),
        other => panic!("not a failed request: {other:?}"),
    }
}

#[tokio::test]
async fn a_300_mib_manifest_is_cut_off_at_1_mib() {
    let flood = |content_length| {
        Registry::start(move |_| Answer::Flood {
            len: HUGE,
            content_length,
        })
    };
    // Unannounced: read up to the bound, and not a byte past it.
    let unannounced = flood(None);
    let error = pull_error(&unannounced, None).await;
    assert_request(
        &error,
        &unannounced,
        "the manifest",
        "too_large",
        |e| matches!(e, RequestError::TooLarge { limit, .. } if *limit == 1 << 20),
    );
    assert!(
        error.to_string().contains("larger than 1048576 bytes"),
        "{error}"
    );
    assert!(unannounced.most_written(1).await < STOPPED_NEAR_THE_BOUND);
    // Announced: refused before its body is read.
    let announced = flood(Some(HUGE));
    let error = pull_error(&announced, None).await;
    assert_request(&error, &announced, "the manifest", "too_large", |e| {
        matches!(e, RequestError::TooLarge { .. })
    });
    assert!(announced.most_written(1).await < STOPPED_NEAR_THE_BOUND);
}

/// A registry of Kubewarden's layout (no config worth downloading: the
/// layer comes next) whose layer declares `layer_size` and is answered as
/// `layer`.
fn layer_only(layer_size: usize, layer: Answer) -> Registry {
    let manifest = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": CONFIG_DIGEST, "size": 2},
        "layers": [{"mediaType": "application/vnd.wasm.content.layer.v1+wasm",
                    "digest": LAYER_DIGEST, "size": layer_size}],
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    Registry::start(move |path| {
        if path.ends_with("/manifests/v1") {
            Answer::Bytes(manifest.clone())
        } else if path.ends_with(&format!("/blobs/{LAYER_DIGEST}")) {
            layer.clone()
        } else {
            Answer::NotFound
        }
    })
}

#[tokio::test]
async fn a_config_or_layer_that_sends_more_than_it_declares_is_cut_off() {
    let huge = |content_length| Answer::Flood {
        len: HUGE,
        content_length,
    };
    // Declared as 2 bytes in the manifest and in its Content-Length: the
    // client reads 2 bytes, which are not the config.
    let config = artifact(2, 2, huge(Some(2)), Answer::NotFound);
    let error = pull_error(&config, None).await;
    assert!(
        matches!(&error, PullError::DigestMismatch { what, .. } if what == "the config"),
        "{error}"
    );
    assert!(config.most_written(2).await < STOPPED_NEAR_THE_BOUND);
    // No Content-Length: cut off after the 2 bytes declared, for the
    // config and for the layer alike.
    let config = artifact(2, 2, huge(None), Answer::NotFound);
    let error = pull_error(&config, None).await;
    assert_request(&error, &config, "the config", "too_large", |e| {
        matches!(e, RequestError::TooLarge { limit: 2, .. })
    });
    assert!(config.most_written(2).await < STOPPED_NEAR_THE_BOUND);
    let layer = layer_only(2, huge(None));
    let error = pull_error(&layer, None).await;
    assert_request(&error, &layer, "the module layer", "too_large", |e| {
        matches!(e, RequestError::TooLarge { limit: 2, .. })
    });
    assert!(layer.most_written(2).await < STOPPED_NEAR_THE_BOUND);
}

#[tokio::test]
async fn an_endless_layer_is_cut_off_at_its_declared_size_and_a_large_one_is_refused() {
    let endless = Answer::Flood {
        len: usize::MAX,
        content_length: None,
    };
    let declared = 512 << 10;
    let registry = layer_only(declared, endless.clone());
    let error = pull_error(&registry, None).await;
    assert_request(
        &error,
        &registry,
        "the module layer",
        "too_large",
        |e| matches!(e, RequestError::TooLarge { limit, .. } if *limit == declared),
    );
    assert!(registry.most_written(2).await < STOPPED_NEAR_THE_BOUND);
    // Declaring more than --oci-max-module-mib: refused, never requested.
    let registry = layer_only(2 << 20, endless);
    let error = pull_error(&registry, None).await;
    assert_eq!(error.kind(), "refused", "{error}");
    assert!(
        error
            .to_string()
            .contains("the module layer claims 2097152 bytes"),
        "{error}"
    );
    assert!(!registry.requests().iter().any(|p| p.contains("/blobs/")));
}

#[tokio::test]
async fn a_registry_that_never_answers_fails_the_pull_at_the_read_timeout() {
    let registry = Registry::start(|_| Answer::Silent);
    let error = pull_error(&registry, None).await;
    assert_request(
        &error,
        &registry,
        "the manifest",
        "timeout",
        |e| matches!(e, RequestError::Idle { after, .. } if *after == limits().idle),
    );
    assert!(
        error
            .to_string()
            .contains("no answer for 1s (--oci-read-timeout)"),
        "{error}"
    );
}

#[tokio::test]
async fn a_registry_that_drips_fails_the_pull_at_its_deadline() {
    let registry = Registry::start(|_| Answer::Drip);
    let error = pull_error(&registry, None).await;
    assert!(
        matches!(&error, PullError::Deadline { after, .. } if *after == limits().deadline),
        "{error}"
    );
    assert_eq!(error.kind(), "timeout");
    assert_eq!(
        error.to_string(),
        format!(
            "oci:{}: the pull did not finish within 3s (--oci-pull-timeout)",
            registry.reference()
        )
    );
}

#[tokio::test]
async fn an_unsigned_module_is_refused_before_any_blob_is_fetched() {
    let flood = Answer::Flood {
        len: HUGE,
        content_length: None,
    };
    let registry = artifact(2, 2, flood.clone(), flood);
    let key = Key::from_pem("team.pub", KEY_PEM.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let policy = Policy {
        any_one: vec![Requirement::key(key)],
        ..Policy::default()
    };
    let error = pull_error(&registry, Some(&policy)).await;
    assert_eq!(error.kind(), "signature_failure", "{error}");
    let requests = registry.requests();
    assert!(
        requests.iter().any(|p| p.contains(".sig")),
        "the signatures were not looked up: {requests:?}"
    );
    assert!(
        !requests.iter().any(|p| p.contains("/blobs/")),
        "a blob was fetched before the signature was checked: {requests:?}"
    );
}

/// The module serving keeps serving when its entry's pull fails, and while
/// a pull outlasts the pass that started it; a later pass takes its result.
#[tokio::test(flavor = "multi_thread")]
async fn the_module_serving_keeps_serving_through_a_misbehaving_registry() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let runtime = common::runtime(RuntimeConfig {
        memory_limit: 64 << 20,
        ..RuntimeConfig::default()
    });
    let module =
        std::fs::read(common::installed_guest("mcn.wasm")).unwrap_or_else(|e| panic!("{e}"));
    let write_registry = |yaml: String| {
        let path = dir.path().join("registry.yaml");
        std::fs::write(&path, yaml).unwrap_or_else(|e| panic!("{e}"));
        mco_registry::read_local(&Location::File(path), &JOBS).unwrap_or_else(|e| panic!("{e}"))
    };
    std::fs::write(dir.path().join("mcn.wasm"), &module).unwrap_or_else(|e| panic!("{e}"));
    let from_file = write_registry("mcn: {module: mcn.wasm}\n".into());
    let (guests, _) = mco_registry::initial(&runtime, &JOBS, &from_file, &Remote::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let serving = || {
        let set = guests.current();
        let slot = mco_job_mcn::job::slot(&set).unwrap_or_else(|| panic!("no mcn guest"));
        slot.active.module().digest.clone()
    };
    assert_eq!(serving(), digest(&module));

    let anonymous = |_| async {
        Ok::<_, PullError>(Access {
            auth: RegistryAuth::Anonymous,
            policy: None,
        })
    };
    let flooding = Registry::start(|_| Answer::Flood {
        len: HUGE,
        content_length: None,
    });
    let silent = Registry::start(|_| Answer::Silent);
    let mut in_flight = InFlight::default();
    for (registry, wait) in [
        (&flooding, None),
        (&silent, Some(Duration::from_millis(100))),
    ] {
        let table = write_registry(format!("mcn:\n  oci: {}\n", registry.reference()));
        let oci = registry.oci();
        let round = mco_registry::pull_all(&oci, &table, anonymous, &mut in_flight, wait).await;
        let mut remote = Remote::default();
        for (key, pulled) in round {
            match pulled {
                Some(pulled) => {
                    remote.pulls.insert(key, pulled.map_err(Arc::new));
                }
                None => {
                    remote.pulling.insert(key);
                }
            }
        }
        let fetched = mco_registry::fetch_all(&table, &remote);
        let previous = guests.current();
        let built =
            mco_registry::build(&runtime, &JOBS, Some(&previous), fetched, &BTreeMap::new());
        let outcome = built.outcomes.get(&mco_job_mcn::job::job());
        match wait {
            None => assert!(
                matches!(outcome, Some(Outcome::Failed { error, .. })
                    if error.to_string().contains("larger than 1048576 bytes")),
                "{outcome:?}"
            ),
            Some(_) => assert!(matches!(outcome, Some(Outcome::Pulling)), "{outcome:?}"),
        }
        assert!(!built.changed());
        if let Some(set) = built.set {
            guests.replace(set);
        }
        assert_eq!(serving(), digest(&module));
    }
    // The silent registry's pull went on; the next pass waits for it.
    let table = write_registry(format!("mcn:\n  oci: {}\n", silent.reference()));
    let round =
        mco_registry::pull_all(&silent.oci(), &table, anonymous, &mut in_flight, None).await;
    let pulled = round.into_values().next().flatten();
    assert!(
        matches!(&pulled, Some(Err(e)) if e.kind() == "timeout"),
        "{pulled:?}"
    );
}

/// The manifest of a Kubewarden-layout module whose layer is `layer`.
fn module_manifest(layer: &[u8]) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": CONFIG_DIGEST, "size": 2},
        "layers": [{"mediaType": "application/vnd.wasm.content.layer.v1+wasm",
                    "digest": format!("sha256:{}", digest(layer)), "size": layer.len()}],
    }))
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Polls of an unchanged entry ask its registry for the manifest once per
/// refresh (`--oci-refresh`), where every poll (`--registry-poll`, 2 s)
/// asked before; a tag moved to another module is noticed once the refresh
/// has passed; other credentials, and a failed pull, are asked at once.
#[tokio::test]
async fn polls_ask_the_registry_once_per_refresh_not_once_per_poll() {
    let (one, two) = (b"\0asm one".to_vec(), b"\0asm two".to_vec());
    let moved = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let registry = {
        let (one, two, moved) = (one.clone(), two.clone(), moved.clone());
        Registry::start(move |path| {
            let layer = if moved.load(std::sync::atomic::Ordering::SeqCst) {
                &two
            } else {
                &one
            };
            if path.ends_with("/manifests/v1") {
                Answer::Bytes(module_manifest(layer))
            } else if path.ends_with(&format!("/blobs/sha256:{}", digest(layer))) {
                Answer::Bytes(layer.clone())
            } else {
                Answer::NotFound
            }
        })
    };
    let gone = Registry::start(|_| Answer::NotFound);
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let table = |registry: &Registry| {
        let path = dir.path().join("registry.yaml");
        std::fs::write(&path, format!("mcn:\n  oci: {}\n", registry.reference()))
            .unwrap_or_else(|e| panic!("{e}"));
        mco_registry::read_local(&Location::File(path), &JOBS).unwrap_or_else(|e| panic!("{e}"))
    };
    let manifest_reads = |registry: &Registry| {
        let requests = registry.requests();
        requests
            .iter()
            .filter(|p| p.contains("/manifests/"))
            .count()
    };
    let poll = async |registry: &Registry, in_flight: &mut InFlight, auth: &RegistryAuth| {
        let access = |_| async {
            Ok::<_, PullError>(Access {
                auth: auth.clone(),
                policy: None,
            })
        };
        let round =
            mco_registry::pull_all(&registry.oci(), &table(registry), access, in_flight, None)
                .await;
        match round.into_values().next() {
            Some(Some(pulled)) => pulled,
            other => panic!("{other:?}"),
        }
    };
    let anonymous = RegistryAuth::Anonymous;
    let layer = |pulled: Result<mco_fetch::oci::Pulled, PullError>| {
        let pulled = pulled.unwrap_or_else(|e| panic!("{e}"));
        (pulled.bytes.to_vec(), pulled.cached)
    };

    let mut in_flight = InFlight::refreshed_every(Duration::from_millis(500));
    assert_eq!(
        layer(poll(&registry, &mut in_flight, &anonymous).await),
        (one.clone(), false)
    );
    for _ in 0..5 {
        // Served again, as taken from a cache: not counted as a download.
        assert_eq!(
            layer(poll(&registry, &mut in_flight, &anonymous).await),
            (one.clone(), true)
        );
    }
    assert_eq!(manifest_reads(&registry), 1);
    // The tag moves: noticed once the refresh has passed, not before.
    moved.store(true, std::sync::atomic::Ordering::SeqCst);
    let (still, _) = layer(poll(&registry, &mut in_flight, &anonymous).await);
    assert_eq!((still, manifest_reads(&registry)), (one.clone(), 1));
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        layer(poll(&registry, &mut in_flight, &anonymous).await),
        (two.clone(), false)
    );
    assert_eq!(manifest_reads(&registry), 2);
    // Other credentials pull at once.
    let basic = RegistryAuth::Basic("team".into(), "rotated".into());
    layer(poll(&registry, &mut in_flight, &basic).await);
    assert_eq!(manifest_reads(&registry), 3);
    // A zero refresh asks every poll.
    let mut every = InFlight::refreshed_every(Duration::ZERO);
    for _ in 0..3 {
        layer(poll(&registry, &mut every, &anonymous).await);
    }
    assert_eq!(manifest_reads(&registry), 6);
    // A failed pull is tried again at the next poll.
    let mut failing = InFlight::refreshed_every(Duration::from_secs(3600));
    for _ in 0..3 {
        let err = poll(&gone, &mut failing, &anonymous).await.unwrap_err();
        assert_eq!(err.kind(), "manifest_failure", "{err}");
    }
    assert_eq!(manifest_reads(&gone), 3);
}
