//! proptest strategies for boot image inputs: golden MachineSets of every
//! platform and the golden stream, with arbitrary JSON grafted in at any
//! place (providerSpec fields, metadata, stream entries), plus hostile labels,
//! annotations, cluster facts and user data. Shared with the host's
//! wasm-against-native property test (`host/tests/properties.rs`), which
//! includes this file by path.

#![allow(dead_code, reason = "each including test uses a different subset")]

use std::collections::BTreeSet;
use std::path::PathBuf;

use base64::Engine as _;
use mco_bootimage::ec2::{Ec2Facts, Ec2Image};
use mco_bootimage::vcenter::{VcenterFacts, VcenterVm};
use mco_bootimage::{ClusterFacts, OS_ID_LABEL, OS_STREAM_LABEL};
use proptest::collection::{btree_map, btree_set, vec};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::Value;

/// One golden MachineSet per platform and providerSpec flavour.
const MACHINESETS: [&str; 7] = [
    "gcp-patch-boot-disk-only",
    "gcp-patch-two-boot-disks",
    "aws-patch-arm64",
    "azure-patch-ocp-paid-gen2",
    "azure-patch-legacy-gen1",
    "vsphere-patch-new-template",
    "vsphere-patch-swap-outdated-template",
];
const ARCH_ANNOTATION: &str = "capacity.cluster-autoscaler.kubernetes.io/labels";

/// The golden inputs the strategies start from.
pub struct Seeds {
    pub machinesets: Vec<Value>,
    pub stream: Value,
    /// A decoded spec-2 Ignition stub, which the guests upgrade.
    pub stub: String,
}

/// `tests/golden/bootimage`, found above the crate's directory as cargo
/// gives it at run time: the path compiled in can name another clone that
/// shares the target directory (docs/dev/testing.md, "Where the tests find things").
pub fn golden_dir() -> PathBuf {
    let start = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| env!("CARGO_MANIFEST_DIR").into(), PathBuf::from);
    start
        .ancestors()
        .map(|dir| dir.join("tests/golden/bootimage"))
        .find(|dir| dir.is_dir())
        .unwrap_or_else(|| panic!("no tests/golden/bootimage above {}", start.display()))
}

fn golden(case: &str, file: &str) -> Value {
    let path = golden_dir().join(case).join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

impl Seeds {
    pub fn load() -> Seeds {
        let configmap = golden("gcp-patch-boot-disk-only", "configmap.yaml");
        let stream = configmap["data"]["stream"]
            .as_str()
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or_else(|| panic!("the golden stream is JSON text"));
        let secret = golden("gcp-patch-stub-v2-converted", "user-data-secret.yaml");
        let stub = secret["data"]["userData"]
            .as_str()
            .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .unwrap_or_else(|| panic!("the golden stub is base64 UTF-8"));
        Seeds {
            machinesets: MACHINESETS
                .iter()
                .map(|case| golden(case, "machineset.yaml"))
                .collect(),
            stream,
            stub,
        }
    }
}

/// Values that make rules take every branch: real image names, regions,
/// architectures, plus empty, blank, any Unicode and very long text.
const REAL_VALUES: [&str; 14] = [
    "projects/rhcos-cloud/global/images/rhcos-9-8-20260428-0-gcp-x86-64",
    "projects/rhcos-cloud/global/images/old",
    "projects/other/global/images/custom",
    "ami-0c5a8e7f3b2d1e4f6",
    "us-east-1",
    "eu-west-3",
    "x86_64",
    "aarch64",
    "kubernetes.io/arch=amd64",
    "kubernetes.io/arch=arm64",
    "rhel-9",
    "Windows",
    "worker-user-data",
    "MarketplaceWithPlan",
];

pub fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(REAL_VALUES.to_vec()).prop_map(str::to_owned),
        1 => Just(String::new()),
        1 => "[ \t\r\n]{1,3}",
        2 => "[a-z0-9./-]{1,30}",
        2 => any::<String>(),
        1 => (2000usize..10_000).prop_map(|n| "x".repeat(n)),
    ]
}

/// Any JSON value, a few levels deep.
pub fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        hostile_text().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map(hostile_text(), inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// One step into a JSON document.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// Every place in `value`, the root (the empty path) included.
fn places(value: &Value) -> Vec<Vec<Step>> {
    let mut out = vec![Vec::new()];
    let mut stack = vec![(Vec::new(), value)];
    while let Some((path, v)) = stack.pop() {
        let children: Vec<(Step, &Value)> = match v {
            Value::Object(map) => map.iter().map(|(k, c)| (Step::Key(k.clone()), c)).collect(),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, c)| (Step::Index(i), c))
                .collect(),
            _ => Vec::new(),
        };
        for (step, child) in children {
            let mut next: Vec<Step> = path.clone();
            next.push(step);
            out.push(next.clone());
            stack.push((next, child));
        }
    }
    out
}

/// Replaces the value at `path`, if it is still there (an earlier graft
/// may have replaced a parent).
fn graft(root: &mut Value, path: &[Step], new: Value) {
    let mut cur = root;
    for step in path {
        let next = match (step, cur) {
            (Step::Key(k), Value::Object(map)) => map.get_mut(k),
            (Step::Index(i), Value::Array(items)) => items.get_mut(*i),
            _ => None,
        };
        match next {
            Some(v) => cur = v,
            None => return,
        }
    }
    *cur = new;
}

/// Sets `keys` as nested object fields, turning what is in the way into
/// objects.
fn set(root: &mut Value, keys: &[&str], new: Value) {
    let mut cur = root;
    for key in keys {
        if !cur.is_object() {
            *cur = Value::Object(Default::default());
        }
        let Value::Object(map) = cur else { return };
        cur = map.entry(key.to_string()).or_insert(Value::Null);
    }
    *cur = new;
}

/// `base` with up to three places replaced by arbitrary JSON.
pub fn mutated(base: Value) -> impl Strategy<Value = Value> {
    let places = places(&base);
    vec((select(places), arb_json()), 0..4).prop_map(move |grafts| {
        let mut value = base.clone();
        for (path, new) in grafts {
            graft(&mut value, &path, new);
        }
        value
    })
}

/// The fields the common rules read, set to real or hostile values.
fn rule_fields() -> impl Strategy<Value = Vec<(&'static [&'static str], Value)>> {
    let text = || hostile_text().prop_map(Value::from);
    let owners = vec(
        (hostile_text(), hostile_text())
            .prop_map(|(kind, name)| serde_json::json!({"kind": kind, "name": name})),
        0..2,
    )
    .prop_map(Value::Array);
    let fields: [(&'static [&'static str], BoxedStrategy<Value>); 5] = [
        (&["metadata", "labels", OS_STREAM_LABEL], text().boxed()),
        (
            &["metadata", "annotations", ARCH_ANNOTATION],
            text().boxed(),
        ),
        (
            &["spec", "template", "metadata", "labels", OS_ID_LABEL],
            text().boxed(),
        ),
        (&["metadata", "ownerReferences"], owners.boxed()),
        (
            &[
                "spec",
                "template",
                "spec",
                "providerSpec",
                "value",
                "userDataSecret",
                "name",
            ],
            text().boxed(),
        ),
    ];
    let each: Vec<_> = fields
        .into_iter()
        .map(|(path, value)| proptest::option::weighted(0.2, value.prop_map(move |v| (path, v))))
        .collect();
    each.prop_map(|set| set.into_iter().flatten().collect())
}

/// A MachineSet of any platform, mutated anywhere, with hostile rule fields.
pub fn machineset(seeds: &Seeds) -> impl Strategy<Value = Value> {
    let bases = seeds.machinesets.clone();
    (select(bases).prop_flat_map(mutated), rule_fields()).prop_map(|(mut ms, fields)| {
        for (path, value) in fields {
            set(&mut ms, path, value);
        }
        ms
    })
}

/// `data.stream` of the ConfigMap: absent, the golden stream mutated, or
/// any text or JSON.
pub fn stream(seeds: &Seeds) -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        6 => mutated(seeds.stream.clone()).prop_map(|v| Some(v.to_string())),
        1 => Just(None),
        1 => hostile_text().prop_map(Some),
        1 => arb_json().prop_map(|v| Some(v.to_string())),
    ]
}

pub fn cluster() -> impl Strategy<Value = ClusterFacts> {
    let arch = prop_oneof![
        4 => select(vec!["x86_64", "aarch64", "s390x", "ppc64le"]).prop_map(str::to_owned),
        1 => hostile_text(),
    ];
    (
        arch,
        any::<bool>(),
        btree_set(hostile_text(), 0..3),
        proptest::option::weighted(0.7, vcenter()),
        proptest::option::weighted(0.7, ec2()),
    )
        .prop_map(
            |(control_plane_arch, multi_arch, known_images, vcenter, ec2): (
                String,
                bool,
                BTreeSet<String>,
                Option<VcenterFacts>,
                Option<Ec2Facts>,
            )| {
                ClusterFacts {
                    control_plane_arch,
                    multi_arch,
                    known_images,
                    vcenter,
                    ec2,
                }
            },
        )
}

/// What the host read from EC2: the golden AWS cases' AMIs, owners,
/// marketplace names and descriptions, or anything.
fn ec2() -> impl Strategy<Value = Ec2Facts> {
    let text = |real: Vec<&'static str>| {
        prop_oneof![
            3 => select(real).prop_map(str::to_owned),
            1 => hostile_text(),
        ]
    };
    let image = (
        text(vec![
            "ami-0a1b2c3d4e5f60718",
            "ami-0fbc8be8796dc1df5",
            "ami-0c5a8e7f3b2d1e4f6",
        ]),
        text(vec!["531415883065", "679593333241", "123456789012"]),
        text(vec![
            "RHEL-9.4-RHCOS-9.6_HVM_GA-20260210-x86_64-0-59ead7de-2540-4653-a8b0-fa7926d5c845",
            "rhcos-9.6.20250701-0-x86_64-34850061-abaf-402d-92df-94325c9e947f",
            "rhcos-418.94.202511191518-0-x86_64",
        ]),
        text(vec![
            "RHEL CoreOS 9.6 9.6.20260210-0 x86_64",
            "rhcos-9.8.20260428-0-x86_64",
            "OpenShift 4.18 418.94.202511191518-0 x86_64",
        ]),
        text(vec!["2026-02-10T00:00:00.000Z", "2025-07-01T00:00:00.000Z"]),
    )
        .prop_map(
            |(image_id, owner_id, name, description, creation_date)| Ec2Image {
                image_id,
                owner_id,
                name,
                description,
                creation_date,
            },
        );
    (
        proptest::option::weighted(0.8, image.clone()),
        vec(image, 0..4),
    )
        .prop_map(|(image, marketplace)| Ec2Facts { image, marketplace })
}

/// What the host read from vCenter: the golden vSphere cases' names,
/// folders and releases, or anything.
fn vcenter() -> impl Strategy<Value = VcenterFacts> {
    let text = |real: Vec<&'static str>| {
        prop_oneof![
            3 => select(real).prop_map(str::to_owned),
            1 => hostile_text(),
        ]
    };
    let disk = proptest::option::of(text(vec!["thin", "thick", "eagerZeroedThick"]));
    let vm = (
        text(vec![
            "c1-x7k2p-rhcos-generated-region-generated-zone",
            "c1-x7k2p-rhcos-fd-a",
            "rhcos-golden",
        ]),
        text(vec!["/dc1/vm/c1-x7k2p", "/dc1/vm/templates"]),
        any::<bool>(),
        proptest::option::of(text(vec!["9.8.20260428-0", "9.6.20250701-0"])),
        disk.clone(),
    )
        .prop_map(|(name, folder, template, release, disk_type)| VcenterVm {
            name,
            folder,
            template,
            release,
            disk_type,
        });
    (
        text(vec!["c1-x7k2p"]),
        text(vec!["generated-region-generated-zone", "fd-a"]),
        disk,
        vec(vm, 0..4),
    )
        .prop_map(
            |(infrastructure_name, failure_domain, install_disk_type, vms)| VcenterFacts {
                infrastructure_name,
                failure_domain,
                install_disk_type,
                vms,
            },
        )
}

/// The decoded user-data Secret: absent, the golden spec-2 stub (mutated
/// or not), or anything.
pub fn user_data(seeds: &Seeds) -> impl Strategy<Value = Option<String>> {
    let stub: Value = serde_json::from_str(&seeds.stub).unwrap_or(Value::Null);
    prop_oneof![
        3 => Just(None),
        2 => Just(Some(seeds.stub.clone())),
        2 => mutated(stub).prop_map(|v| Some(v.to_string())),
        1 => hostile_text().prop_map(Some),
    ]
}
