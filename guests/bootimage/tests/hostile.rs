//! Hostile and malformed inputs through the whole pipeline with the real
//! platform rules: every input must give a decision (or an input error),
//! never a panic. A panic in the guest would be a trap, reported by the host
//! as a broken guest instead of a broken MachineSet.

mod strategies;

use std::collections::BTreeSet;
use std::fs;

use mco_bootimage::vcenter::VcenterFacts;
use mco_bootimage::{ClusterFacts, Decision, MachineSetView, Platform, decide_text};
use mco_bootimage_aws::Aws;
use mco_bootimage_azure::Azure;
use mco_bootimage_gcp::Gcp;
use mco_bootimage_vsphere::Vsphere;
use serde_json::{Value, json};

const PLATFORMS: [&dyn Platform; 4] = [&Gcp, &Aws, &Azure, &Vsphere];

fn load(case: &str, file: &str) -> Value {
    let p = strategies::golden_dir().join(case).join(file);
    serde_saphyr::from_str(&fs::read_to_string(&p).unwrap()).unwrap()
}

fn cluster() -> ClusterFacts {
    ClusterFacts {
        control_plane_arch: "x86_64".into(),
        multi_arch: false,
        known_images: BTreeSet::from(["ami-0c5a8e7f3b2d1e4f6".to_owned()]),
        // vCenter holds no template yet: vSphere imports one.
        vcenter: Some(VcenterFacts {
            infrastructure_name: "c1".into(),
            failure_domain: "fd".into(),
            install_disk_type: None,
            vms: Vec::new(),
        }),
        ec2: None,
    }
}

fn stream_text() -> String {
    load("gcp-patch-boot-disk-only", "configmap.yaml")["data"]["stream"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn with_provider_spec(value: Value) -> Value {
    json!({"kind": "MachineSet", "metadata": {"name": "hostile"},
           "spec": {"template": {"spec": {"providerSpec": {"value": value}}}}})
}

fn decide_all(ms: &Value, stream: &str, user_data: Option<&str>) -> Vec<Decision> {
    let view = MachineSetView::from_object(ms).expect("readable MachineSet");
    PLATFORMS
        .iter()
        .map(|p| decide_text(*p, Some(stream), &view, &cluster(), user_data))
        .collect()
}

#[test]
fn provider_spec_of_every_wrong_type_is_an_error_decision() {
    let stream = stream_text();
    for value in [
        json!("garbage"),
        json!(42),
        json!(true),
        json!([1, 2, 3]),
        json!({"disks": "x", "ami": 7, "image": []}),
    ] {
        for d in decide_all(&with_provider_spec(value.clone()), &stream, None) {
            assert_eq!(d.action(), "error", "{value}: {}", d.to_json());
        }
    }
}

#[test]
fn deep_nesting_and_huge_strings_inside_the_provider_spec() {
    let stream = stream_text();
    let mut deep = json!("leaf");
    for _ in 0..100 {
        deep = json!({"n": [deep]});
    }
    let big = "z".repeat(4 << 20);
    let value = json!({
        "deep": deep,
        "blob": big,
        "disks": [{"boot": true, "image": "projects/rhcos-cloud/global/images/old"}],
        "ami": {"id": "ami-0c5a8e7f3b2d1e4f6"},
        "placement": {"region": "us-east-1"},
        "image": {"resourceID": "/x/gen2"},
        "workspace": {"server": "vc", "datacenter": "dc", "folder": "/dc/vm/c1"},
        "userDataSecret": {"name": "worker-user-data"}
    });
    for d in decide_all(&with_provider_spec(value), &stream, None) {
        assert_eq!(d.action(), "patch", "{}", d.to_json());
    }
}

#[test]
fn hostile_streams() {
    let ms = load("gcp-patch-boot-disk-only", "machineset.yaml");
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_obj = format!(r#"{{"architectures": {}"#, r#"{"a":"#.repeat(100_000));
    let huge_unknown = format!(r#"{{"x": "{}", "stream": "s"}}"#, "q".repeat(8 << 20));
    for s in [
        "",
        "\u{feff}{}",
        "\0",
        "{",
        "}",
        "[]",
        "null",
        deep.as_str(),
        deep_obj.as_str(),
        huge_unknown.as_str(),
        r#"{"architectures": {"x86_64": null}}"#,
        r#"{"architectures": {"x86_64": {"images": {"gcp": null, "aws": {"regions": null}}}}}"#,
        r#"{"architectures": {"x86_64": {"rhel-coreos-extensions": {"marketplace": {"azure": {"ocp": {"hyperVGen2": {}}}}}}}}"#,
        r#"{"architectures": {"x86_64": {"images": {"gcp": {"project": 1}}}}}"#,
    ] {
        for d in decide_all(&ms, s, None) {
            assert!(
                ["error", "skip"].contains(&d.action()),
                "{}: {}",
                s.chars().take(80).collect::<String>(),
                d.to_json()
            );
        }
    }
}

#[test]
fn hostile_user_data() {
    let ms = load("gcp-patch-boot-disk-only", "machineset.yaml");
    let stream = stream_text();
    let deep = format!(
        r#"{{"ignition": {{"version": "2.2.0"}}, "x": {}{}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    for ud in [
        "",
        "garbage",
        "\u{0}\u{1}",
        "[]",
        deep.as_str(),
        r#"{"ignition": {"version": "2.2.0"}, "storage": {"files": [{"path": 5}]}}"#,
        r#"{"ignition": {"version": "2.2.0"}, "passwd": {"users": [{"name": null}]}}"#,
        r#"{"ignition": {"version": "2.2.0"}, "systemd": {"units": [{"dropins": [null]}]}}"#,
    ] {
        let view = MachineSetView::from_object(&ms).unwrap();
        let d = decide_text(&Gcp, Some(&stream), &view, &cluster(), Some(ud));
        assert_eq!(d.action(), "error", "{ud:.80}: {}", d.to_json());
    }
}

/// A tiny deterministic generator, so the mutation test is reproducible.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % (n.max(1) as u64)) as usize
    }
}

fn random_value(rng: &mut Lcg) -> Value {
    match rng.below(8) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 0),
        2 => json!(rng.next()),
        3 => json!(-1.5),
        4 => json!("ami-0c5a8e7f3b2d1e4f6"),
        5 => json!("projects/rhcos-cloud/global/images/x"),
        6 => json!([]),
        _ => json!({}),
    }
}

/// Replaces one randomly chosen node of `v` with a random value.
fn mutate(v: &mut Value, rng: &mut Lcg, depth: usize) {
    let stop = depth > 0 && rng.below(4) == 0;
    match v {
        Value::Object(m) if !m.is_empty() && !stop => {
            let i = rng.below(m.len());
            if let Some(k) = m.keys().nth(i).cloned()
                && let Some(child) = m.get_mut(&k)
            {
                mutate(child, rng, depth + 1);
            }
        }
        Value::Array(a) if !a.is_empty() && !stop => {
            let i = rng.below(a.len());
            if let Some(child) = a.get_mut(i) {
                mutate(child, rng, depth + 1);
            }
        }
        _ => *v = random_value(rng),
    }
}

#[test]
fn mutated_golden_inputs_never_panic() {
    let root = strategies::golden_dir();
    let mut dirs: Vec<_> = fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut rng = Lcg(0x5eed_b007_1a6e);
    let mut decisions = 0usize;
    for dir in &dirs {
        let read = |f: &str| -> Option<Value> {
            fs::read_to_string(dir.join(f))
                .ok()
                .map(|t| serde_saphyr::from_str(&t).unwrap())
        };
        let (Some(ms), Some(cm)) = (read("machineset.yaml"), read("configmap.yaml")) else {
            continue;
        };
        for _ in 0..40 {
            let mut ms = ms.clone();
            let mut cm = cm.clone();
            for _ in 0..=rng.below(3) {
                mutate(&mut ms, &mut rng, 0);
            }
            if rng.below(4) == 0 {
                // Mutate the stream JSON itself.
                if let Some(Ok(mut s)) = cm["data"]["stream"]
                    .as_str()
                    .map(serde_json::from_str::<Value>)
                {
                    mutate(&mut s, &mut rng, 0);
                    cm["data"]["stream"] = Value::String(s.to_string());
                }
            }
            // A MachineSet the mutation made unreadable is an input error.
            let Ok(view) = MachineSetView::from_object(&ms) else {
                continue;
            };
            for p in PLATFORMS {
                let d = decide_text(p, cm["data"]["stream"].as_str(), &view, &cluster(), None);
                // Every decision serializes to the contract shape.
                let v: Value = serde_json::from_str(&d.to_json()).unwrap();
                assert!(v["action"].is_string());
                decisions += 1;
            }
        }
    }
    assert!(decisions > 1000, "only {decisions} decisions");
}

/// What the property test found before the rules checked their own
/// decisions: each would have been refused by the host as a broken guest.
#[test]
fn decisions_the_host_would_refuse_become_error_decisions() {
    use base64::Engine as _;

    let stream = stream_text();
    let stub_case = "gcp-patch-stub-v2-converted";
    let stub = load(stub_case, "user-data-secret.yaml")["data"]["userData"]
        .as_str()
        .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap();
    let mut bad_secret = load(stub_case, "machineset.yaml");
    bad_secret["spec"]["template"]["spec"]["providerSpec"]["value"]["userDataSecret"]["name"] =
        json!("\t");
    let mut long_arch = load("gcp-patch-boot-disk-only", "machineset.yaml");
    long_arch["metadata"]["annotations"]["capacity.cluster-autoscaler.kubernetes.io/labels"] =
        json!("x".repeat(5000));
    let cases = [
        // The stub upgrade named a Secret the API server cannot have.
        (
            bad_secret,
            Some(stub.as_str()),
            "is not a DNS-1123 subdomain",
        ),
        // The error quoted a 5000-byte annotation in full.
        (long_arch, None, "kubernetes.io/arch label not found"),
    ];
    for (ms, user_data, fragment) in cases {
        let view = MachineSetView::from_object(&ms).unwrap();
        let d = decide_text(&Gcp, Some(&stream), &view, &cluster(), user_data);
        assert_eq!(d.action(), "error", "{:.300}", d.to_json());
        assert!(d.to_json().contains(fragment), "{:.300}", d.to_json());
        assert_eq!(mco_bootimage::validate_decision(&d), Ok(()));
    }
}
