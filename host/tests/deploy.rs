//! `deploy/`, the Kustomize base for the in-cluster controller: it renders
//! to what `mco-host run` needs (arguments, probes, hardening), its RBAC is
//! exactly the pinned rule set, and its pieces (CRD, component, boot image
//! RBAC, Containerfile) agree with each other.
//!
//! Every assertion is on what the real `kustomize build` prints
//! ([`mco_test_support::kustomize`]: built once from the Go module proxy; where it
//! cannot be built the tests fail, they never skip).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Map, Value, json};

const NAMESPACE: &str = "mco-system";
const SERVICE_ACCOUNT: &str = "mco-host";
const GUEST_DIR: &str = "/usr/share/mco-host/guests";
const CACHE_DIR: &str = "/var/cache/mco-host";
const RUN_ARGS: &[&str] = &[
    "run",
    "--namespace",
    "$(POD_NAMESPACE)",
    "--lease-name",
    "mco-host",
    "--admin-addr",
    "0.0.0.0:8080",
    "--guest-dir",
    GUEST_DIR,
    "--registry-crd",
    "--cache-dir",
    CACHE_DIR,
    "--oci-cache-dir",
    "/var/cache/mco-host/oci",
    "--mcn-mode",
    "own",
];

// ---------------------------------------------------------------------------
// Reading deploy/
// ---------------------------------------------------------------------------

fn deploy_dir() -> PathBuf {
    common::repo_root().join("deploy")
}

fn read_text(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn parse_documents(text: &str, origin: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(text)
        .unwrap_or_else(|e| panic!("{origin}: not valid YAML: {e}"))
}

fn read_kustomization(dir: &Path) -> Map<String, Value> {
    let path = dir.join("kustomization.yaml");
    let mut docs = parse_documents(&read_text(&path), &path.display().to_string());
    assert_eq!(docs.len(), 1, "{}: one document expected", path.display());
    match docs.pop() {
        Some(Value::Object(map)) => map,
        other => panic!("{}: not a mapping: {other:?}", path.display()),
    }
}

fn strings(k: &Map<String, Value>, key: &str, dir: &Path) -> Vec<String> {
    match k.get(key) {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => s.clone(),
                other => panic!("{}: {key} entry {other} is not a path", dir.display()),
            })
            .collect(),
        Some(other) => panic!("{}: {key} is not a list: {other}", dir.display()),
    }
}

/// Kinds that are cluster-scoped, among those worth knowing here; every
/// other kind (custom resources too) is namespaced.
fn is_cluster_scoped(kind: &str) -> bool {
    matches!(
        kind,
        "Namespace"
            | "ClusterRole"
            | "ClusterRoleBinding"
            | "CustomResourceDefinition"
            | "MachineConfigGuest"
            | "PriorityClass"
            | "StorageClass"
            | "PersistentVolume"
            | "ValidatingWebhookConfiguration"
            | "MutatingWebhookConfiguration"
            | "APIService"
    )
}

// ---------------------------------------------------------------------------
// Looking things up
// ---------------------------------------------------------------------------

/// The string at a JSON pointer, or "" (absent fields compare as empty).
fn str_at<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

type Id = (String, String, String, String);

/// apiVersion, kind, namespace, name.
fn id(object: &Value) -> Id {
    (
        str_at(object, "/apiVersion").to_owned(),
        str_at(object, "/kind").to_owned(),
        str_at(object, "/metadata/namespace").to_owned(),
        str_at(object, "/metadata/name").to_owned(),
    )
}

fn by_id(objects: &[Value]) -> BTreeMap<Id, Value> {
    let mut map = BTreeMap::new();
    for object in objects {
        let previous = map.insert(id(object), object.clone());
        assert!(previous.is_none(), "duplicate object {:?}", id(object));
    }
    map
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    let found: Vec<&Value> = objects
        .iter()
        .filter(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .collect();
    assert_eq!(found.len(), 1, "exactly one {kind} {name} expected");
    found[0]
}

/// `kustomize build deploy`, once per test binary.
fn base() -> &'static [Value] {
    static BASE: OnceLock<Vec<Value>> = OnceLock::new();
    BASE.get_or_init(|| kustomize_build(&deploy_dir()))
}

fn container(objects: &[Value]) -> &Value {
    let deployment = find(objects, "Deployment", "mco-host");
    let containers = deployment
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("Deployment without containers"));
    assert_eq!(containers.len(), 1, "one container expected");
    &containers[0]
}

/// One permission: (apiGroup, resource, verb, resourceName or "").
type Grant = (String, String, String, String);

/// A rule as written in the assertions: (apiGroup, resources, verbs,
/// resourceNames).
type Rule<'a> = (&'a str, &'a [&'a str], &'a [&'a str], &'a [&'a str]);

/// The RBAC rules of a role flattened to (apiGroup, resource, verb,
/// resourceName or ""), so the assertion does not depend on how rules are
/// grouped. A non-resource URL is a resource of group "" that starts with
/// `/`.
fn grants(role: &Value) -> BTreeSet<Grant> {
    let mut grants = BTreeSet::new();
    let name = str_at(role, "/metadata/name");
    for rule in role["rules"].as_array().into_iter().flatten() {
        for key in rule.as_object().into_iter().flatten().map(|(k, _)| k) {
            assert!(
                [
                    "apiGroups",
                    "resources",
                    "verbs",
                    "resourceNames",
                    "nonResourceURLs"
                ]
                .contains(&key.as_str()),
                "{name}: unexpected rule field {key} in {rule}"
            );
        }
        for url in rule["nonResourceURLs"].as_array().into_iter().flatten() {
            for verb in rule["verbs"].as_array().into_iter().flatten() {
                let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
                grants.insert((String::new(), text(url), text(verb), String::new()));
            }
        }
        let list = |key: &str| -> Vec<String> {
            rule[key]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| {
                    v.as_str()
                        .unwrap_or_else(|| panic!("{name}: {key} entry {v} is not a string"))
                        .to_owned()
                })
                .collect()
        };
        let names = match list("resourceNames") {
            names if names.is_empty() => vec![String::new()],
            names => names,
        };
        for group in list("apiGroups") {
            for resource in list("resources") {
                for verb in list("verbs") {
                    for resource_name in &names {
                        grants.insert((
                            group.clone(),
                            resource.clone(),
                            verb.clone(),
                            resource_name.clone(),
                        ));
                    }
                }
            }
        }
    }
    grants
}

fn expect_grants(rules: &[Rule]) -> BTreeSet<Grant> {
    let mut grants = BTreeSet::new();
    for (group, resources, verbs, names) in rules {
        let names: &[&str] = if names.is_empty() { &[""] } else { names };
        for resource in *resources {
            for verb in *verbs {
                for name in names {
                    grants.insert((
                        group.to_string(),
                        resource.to_string(),
                        verb.to_string(),
                        name.to_string(),
                    ));
                }
            }
        }
    }
    grants
}

/// No wildcard anywhere, and none of the verbs that let a role grow.
fn assert_no_wildcards(objects: &[Value]) {
    for role in objects
        .iter()
        .filter(|o| o["kind"] == "Role" || o["kind"] == "ClusterRole")
    {
        let name = str_at(role, "/metadata/name");
        assert!(
            role.get("aggregationRule").is_none(),
            "{name}: aggregated roles grow silently"
        );
        for (group, resource, verb, _) in grants(role) {
            assert!(
                group != "*" && resource != "*" && verb != "*" && !resource.ends_with("/*"),
                "{name}: wildcard in {group}/{resource} {verb}"
            );
            assert!(
                !["escalate", "bind", "impersonate", "deletecollection"].contains(&verb.as_str()),
                "{name}: {verb} on {group}/{resource} is never needed"
            );
        }
    }
}

/// Every binding grants a role of the same build to the controller's
/// ServiceAccount in mco-system, and nobody else.
fn assert_bindings_name_the_service_account(objects: &[Value]) -> usize {
    let mut count = 0;
    for binding in objects
        .iter()
        .filter(|o| o["kind"] == "RoleBinding" || o["kind"] == "ClusterRoleBinding")
    {
        count += 1;
        let name = str_at(binding, "/metadata/name");
        assert_eq!(
            binding["subjects"],
            json!([{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}]),
            "{} {name}: subjects",
            binding["kind"]
        );
        let role_kind = str_at(binding, "/roleRef/kind");
        assert_eq!(
            binding["roleRef"]["apiGroup"], "rbac.authorization.k8s.io",
            "{name}: roleRef.apiGroup"
        );
        if binding["kind"] == "ClusterRoleBinding" {
            assert_eq!(
                role_kind, "ClusterRole",
                "{name}: a ClusterRoleBinding grants a ClusterRole"
            );
        }
        // A Role is looked up in the binding's namespace; a ClusterRole has none.
        let namespace = match role_kind {
            "Role" => str_at(binding, "/metadata/namespace"),
            _ => "",
        };
        let role_name = str_at(binding, "/roleRef/name");
        let roles = objects
            .iter()
            .filter(|o| {
                o["kind"] == role_kind
                    && o["metadata"]["name"] == role_name
                    && str_at(o, "/metadata/namespace") == namespace
            })
            .count();
        assert_eq!(roles, 1, "{name}: {role_kind} {role_name} not in the build");
    }
    count
}

// ---------------------------------------------------------------------------
// The base
// ---------------------------------------------------------------------------

#[test]
fn the_base_renders_to_named_objects_in_mco_system() {
    let objects = base();
    for object in objects {
        for field in ["/apiVersion", "/kind", "/metadata/name"] {
            assert!(
                !str_at(object, field).is_empty(),
                "document without {field}: {object}"
            );
        }
        let kind = str_at(object, "/kind");
        let namespace = str_at(object, "/metadata/namespace");
        if is_cluster_scoped(kind) {
            assert_eq!(namespace, "", "{:?} is cluster-scoped", id(object));
        } else {
            assert_eq!(namespace, NAMESPACE, "{:?}", id(object));
        }
    }
    let ids: BTreeSet<(String, String)> = by_id(objects)
        .keys()
        .map(|(_, kind, _, name)| (kind.clone(), name.clone()))
        .collect();
    let expected: BTreeSet<(String, String)> = [
        ("Namespace", NAMESPACE),
        (
            "CustomResourceDefinition",
            "machineconfigguests.mco-wasm.io",
        ),
        ("ServiceAccount", SERVICE_ACCOUNT),
        ("ClusterRole", "mco-host"),
        ("ClusterRole", "mco-host-metrics-reader"),
        ("ClusterRole", "mco-host-status-reader"),
        ("ClusterRoleBinding", "mco-host"),
        ("Role", "mco-host-leader-election"),
        ("RoleBinding", "mco-host-leader-election"),
        ("Role", "mco-host-guest-registry"),
        ("RoleBinding", "mco-host-guest-registry"),
        ("Deployment", "mco-host"),
        ("PodDisruptionBudget", "mco-host"),
        ("Service", "mco-host-metrics"),
    ]
    .into_iter()
    .map(|(k, n)| (k.to_owned(), n.to_owned()))
    .collect();
    assert_eq!(ids, expected);
}

/// The components that carry the MachineConfigNode CRD, one per feature
/// set (plain Kubernetes and the e2e harness add one of them), with the
/// set each is for.
const MCN_CRD_COMPONENTS: [(&str, &str); 2] = [
    ("machineconfignode-crd", "Default"),
    ("machineconfignode-crd-techpreview", "TechPreviewNoUpgrade"),
];

/// The base with the component `name` of `deploy/components/`.
fn with_component(name: &str) -> Vec<Value> {
    kustomize_build(overlay(&format!("components:\n  - <deploy>/components/{name}\n")).path())
}

#[test]
fn the_crds_are_the_ones_the_types_generate() {
    for (file, crd) in mco_host::crds().unwrap_or_else(|e| panic!("{e}")) {
        let name = crd.metadata.name.clone().unwrap_or_default();
        // Each file is rendered through the kustomization that holds it.
        let rendered = match file
            .strip_prefix("components/")
            .and_then(|f| f.split_once('/'))
        {
            Some((component, _)) => with_component(component),
            None => base().to_vec(),
        };
        let mut generated = serde_json::to_value(&crd).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut rendered = find(&rendered, "CustomResourceDefinition", &name).clone();
        normalize_numbers(&mut rendered);
        normalize_numbers(&mut generated);
        assert!(
            rendered == generated,
            "deploy/{file} differs from the Rust types: run `make crds`"
        );
    }
}

/// On OpenShift the MachineConfigNode CRD comes with the release payload;
/// a second owner would fight the cluster-version operator over it. Each
/// component adds the CRD of its feature set, and nothing else.
#[test]
fn only_the_component_installs_the_machine_config_node_crd() {
    let mcn_crd = "machineconfignodes.machineconfiguration.openshift.io";
    let crds = |objects: &[Value]| -> BTreeSet<String> {
        objects
            .iter()
            .filter(|o| str_at(o, "/kind") == "CustomResourceDefinition")
            .map(|o| str_at(o, "/metadata/name").to_owned())
            .collect()
    };
    assert!(!crds(base()).contains(mcn_crd), "{:?}", crds(base()));
    for (component, feature_set) in MCN_CRD_COMPONENTS {
        let rendered = with_component(component);
        let crd = find(&rendered, "CustomResourceDefinition", mcn_crd);
        assert_eq!(
            crd["metadata"]["annotations"]["release.openshift.io/feature-set"], feature_set,
            "{component}"
        );
        let properties = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
            ["properties"];
        assert_eq!(
            properties["configImage"].is_object(),
            feature_set == "TechPreviewNoUpgrade",
            "{component}: spec.configImage"
        );
        let mut expected = base().to_vec();
        expected.push(crd.clone());
        assert_eq!(
            by_id(&rendered),
            by_id(&expected),
            "{component} adds the MachineConfigNode CRD and nothing else"
        );
    }
}

#[test]
fn the_deployment_runs_two_hardened_controllers() {
    let objects = base();
    let deployment = find(objects, "Deployment", "mco-host");
    let spec = &deployment["spec"];
    let pod = &spec["template"]["spec"];
    let c = container(objects);

    assert_eq!(spec["replicas"], 2);
    assert_eq!(pod["serviceAccountName"], SERVICE_ACCOUNT);
    find(objects, "ServiceAccount", SERVICE_ACCOUNT);
    assert_eq!(c["image"], "mco-host:latest");

    // The image's ENTRYPOINT is mco-host; args replace its CMD.
    assert!(
        c.get("command").is_none(),
        "command would bypass the image's ENTRYPOINT"
    );
    assert_eq!(c["args"], json!(RUN_ARGS));
    // Every $(VAR) in the arguments is defined, POD_NAMESPACE by the downward API.
    assert_eq!(
        c["env"],
        json!([
            {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "MCO_SERVICE_ACCOUNT", "valueFrom": {"fieldRef": {"fieldPath": "spec.serviceAccountName"}}}
        ])
    );

    assert_eq!(
        c["ports"],
        json!([{"name": "admin", "containerPort": 8080, "protocol": "TCP"}])
    );
    for (probe, path) in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
        assert_eq!(
            c[probe]["httpGet"],
            json!({"path": path, "port": "admin"}),
            "{probe}"
        );
    }
    assert_eq!(
        c["resources"],
        json!({"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}})
    );

    // Container settings win over pod settings.
    let effective = |field: &str| -> Value {
        match c["securityContext"].get(field) {
            Some(value) => value.clone(),
            None => pod["securityContext"][field].clone(),
        }
    };
    let sc = &c["securityContext"];
    assert_eq!(effective("runAsNonRoot"), true);
    assert_eq!(
        effective("seccompProfile"),
        json!({"type": "RuntimeDefault"})
    );
    assert_ne!(effective("runAsUser"), 0, "root UID");
    assert_eq!(sc["readOnlyRootFilesystem"], true);
    assert_eq!(sc["allowPrivilegeEscalation"], false);
    assert_eq!(sc["capabilities"], json!({"drop": ["ALL"]}));
    assert_ne!(sc["privileged"], true);
    for field in ["hostNetwork", "hostPID", "hostIPC"] {
        assert_ne!(pod[field], true, "{field}");
    }

    // The root filesystem is read-only: the cache directories are the
    // writable mounts, emptyDirs: the guests' and, where --ova-cache-dir
    // points by default, the vSphere OVAs'. The guests come from the image.
    let volumes = pod["volumes"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        c["volumeMounts"],
        json!([{"name": "guest-cache", "mountPath": CACHE_DIR},
               {"name": "ova-cache", "mountPath": "/var/cache/mco-host/ova"}])
    );
    for name in ["guest-cache", "ova-cache"] {
        let cache = volumes
            .iter()
            .find(|v| v["name"] == name)
            .unwrap_or_else(|| panic!("no {name} volume"));
        assert!(cache["emptyDir"].is_object(), "{name} is not an emptyDir");
    }
    // The OVA cache's bound, which covers its download under way too,
    // fits the volume: past its sizeLimit the kubelet evicts the pod.
    let ova = volumes.iter().find(|v| v["name"] == "ova-cache");
    let limit = ova.map(|v| str_at(v, "/emptyDir/sizeLimit")).unwrap_or("");
    let arg = |name: &str| {
        let args = c["args"].as_array().cloned().unwrap_or_default();
        let at = args.iter().position(|a| a == name)?;
        args.get(at + 1).and_then(|v| v.as_str()).map(str::to_owned)
    };
    let cache_mib = match arg("--ova-cache-max-mib") {
        Some(mib) => mib.parse().unwrap_or_else(|e| panic!("{mib}: {e}")),
        None => mco_job_bootimage::vcenter::live::DEFAULT_OVA_CACHE_MAX_MIB,
    };
    assert!(
        cache_mib <= mebibytes(limit),
        "--ova-cache-max-mib {cache_mib} exceeds the ova-cache volume's sizeLimit {limit}"
    );
    assert_eq!(volumes.len(), 2);
}

/// A quantity with a binary suffix (`4Gi`, `512Mi`) in MiB.
fn mebibytes(quantity: &str) -> u64 {
    let (digits, scale) = match quantity {
        q if q.ends_with("Gi") => (&q[..q.len() - 2], 1024),
        q if q.ends_with("Mi") => (&q[..q.len() - 2], 1),
        q => panic!("{q}: not in Mi or Gi"),
    };
    digits
        .parse::<u64>()
        .unwrap_or_else(|e| panic!("{quantity}: {e}"))
        * scale
}

#[test]
fn the_service_pdb_and_anti_affinity_select_the_controller_pods() {
    let objects = base();
    let deployment = find(objects, "Deployment", "mco-host");
    let pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let selects_pods = |selector: &Value, what: &str| {
        let selector = selector
            .as_object()
            .unwrap_or_else(|| panic!("{what}: no selector"));
        assert!(!selector.is_empty(), "{what}: empty selector");
        for (key, value) in selector {
            assert_eq!(
                pod_labels.get(key),
                Some(value),
                "{what}: {key} does not select the pods"
            );
        }
    };
    selects_pods(&deployment["spec"]["selector"]["matchLabels"], "Deployment");

    let pdb = find(objects, "PodDisruptionBudget", "mco-host");
    selects_pods(
        &pdb["spec"]["selector"]["matchLabels"],
        "PodDisruptionBudget",
    );
    assert_eq!(pdb["spec"]["maxUnavailable"], 1);

    let anti = &deployment["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"];
    let term = &anti["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"];
    assert_eq!(term["topologyKey"], "kubernetes.io/hostname");
    selects_pods(&term["labelSelector"]["matchLabels"], "podAntiAffinity");

    let service = find(objects, "Service", "mco-host-metrics");
    selects_pods(&service["spec"]["selector"], "Service");
    assert_eq!(
        service["spec"]["ports"],
        json!([{"name": "metrics", "port": 8080, "targetPort": "admin", "protocol": "TCP"}])
    );
    let annotations = &service["metadata"]["annotations"];
    assert_eq!(annotations["prometheus.io/scrape"], "true");
    assert_eq!(annotations["prometheus.io/port"], "8080");
    assert_eq!(annotations["prometheus.io/path"], "/metrics");
}

#[test]
fn the_cluster_role_grants_exactly_what_the_mcn_controller_needs() {
    let objects = base();
    assert_no_wildcards(objects);
    let mco = "machineconfiguration.openshift.io";
    assert_eq!(
        grants(find(objects, "ClusterRole", "mco-host")),
        expect_grants(&[
            ("", &["nodes"], &["get", "list", "watch"], &[]),
            (
                mco,
                &["machineconfigpools", "machineconfigs"],
                &["get", "list", "watch"],
                &[]
            ),
            (
                mco,
                &["machineconfignodes"],
                &["get", "list", "watch", "create", "patch", "delete"],
                &[]
            ),
            (mco, &["machineconfignodes/status"], &["patch"], &[]),
            (
                "apiextensions.k8s.io",
                &["customresourcedefinitions"],
                &["get"],
                &["machineconfignodes.machineconfiguration.openshift.io"]
            ),
            (
                "operator.openshift.io",
                &["machineconfigurations"],
                &["get", "list", "watch"],
                &[]
            ),
            (
                "mco-wasm.io",
                &["machineconfigguests"],
                &["get", "list"],
                &[]
            ),
            (
                "mco-wasm.io",
                &["machineconfigguests/status"],
                &["patch"],
                &[]
            ),
            (
                "config.openshift.io",
                &["clusterimagepolicies"],
                &["list"],
                &[]
            ),
            (
                "config.openshift.io",
                &["featuregates"],
                &["get", "list", "watch"],
                &["cluster"]
            ),
            (
                "config.openshift.io",
                &["clusterversions"],
                &["get", "list", "watch"],
                &["version"]
            ),
            ("events.k8s.io", &["events"], &["create", "patch"], &[]),
            ("authentication.k8s.io", &["tokenreviews"], &["create"], &[]),
            (
                "authorization.k8s.io",
                &["subjectaccessreviews"],
                &["create"],
                &[]
            ),
        ])
    );
    assert_eq!(
        objects
            .iter()
            .filter(|o| o["kind"] == "ClusterRole")
            .count(),
        3,
        "the base has the controller's ClusterRole and the two readers'; boot image rules live in deploy/boot-images"
    );
}

/// The admin endpoint's readers: Prometheus gets `/metrics` only; a person
/// running `mco-host status --admin-url` all three. Nothing binds them.
#[test]
fn the_reader_roles_reach_only_the_admin_paths() {
    let objects = base();
    assert_eq!(
        grants(find(objects, "ClusterRole", "mco-host-metrics-reader")),
        expect_grants(&[("", &["/metrics"], &["get"], &[])])
    );
    assert_eq!(
        grants(find(objects, "ClusterRole", "mco-host-status-reader")),
        expect_grants(&[("", &["/metrics", "/guests", "/ownership"], &["get"], &[])])
    );
    // The controller guards these paths by default: no flag turns it off.
    let args = &container(objects)["args"];
    assert!(
        !args
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == "--admin-auth")),
        "{args}"
    );
}

#[test]
fn the_lease_role_reaches_only_the_lease() {
    let objects = base();
    let role = find(objects, "Role", "mco-host-leader-election");
    assert_eq!(role["metadata"]["namespace"], NAMESPACE);
    let lease = "coordination.k8s.io";
    assert_eq!(
        grants(role),
        expect_grants(&[
            (lease, &["leases"], &["create"], &[]),
            (
                lease,
                &["leases"],
                &["get", "update", "patch"],
                &["mco-host"]
            ),
        ])
    );
    // resourceNames follows the lease the controller is told to hold.
    let args = &container(objects)["args"];
    let lease_name = args
        .as_array()
        .and_then(|a| {
            a.iter()
                .position(|v| v == "--lease-name")
                .map(|i| &a[i + 1])
        })
        .unwrap_or_else(|| panic!("no --lease-name"));
    assert_eq!(lease_name, "mco-host");
}

#[test]
fn the_registry_role_reads_configmaps_and_pull_secrets_in_its_namespace_only() {
    let objects = base();
    let role = find(objects, "Role", "mco-host-guest-registry");
    assert_eq!(role["metadata"]["namespace"], NAMESPACE);
    assert_eq!(
        grants(role),
        expect_grants(&[
            ("", &["configmaps", "secrets"], &["get"], &[]),
            ("", &["serviceaccounts"], &["get"], &[SERVICE_ACCOUNT]),
        ])
    );
}

#[test]
fn the_bindings_grant_the_roles_to_the_service_account() {
    let objects = base();
    let sa = find(objects, "ServiceAccount", SERVICE_ACCOUNT);
    assert_eq!(sa["metadata"]["namespace"], NAMESPACE);
    assert_eq!(assert_bindings_name_the_service_account(objects), 3);
}

// ---------------------------------------------------------------------------
// Boot images, custom guests, the image
// ---------------------------------------------------------------------------

#[test]
fn boot_image_rbac_stays_in_the_namespaces_it_is_for() {
    let dir = deploy_dir().join("boot-images");
    assert!(
        read_kustomization(&dir).get("namespace").is_none(),
        "a namespace: would move the Roles out of openshift-machine-api and openshift-machine-config-operator"
    );
    let objects = kustomize_build(&dir);
    assert_no_wildcards(&objects);
    assert_eq!(assert_bindings_name_the_service_account(&objects), 5);

    let role_in = |namespace: &str| {
        let found: Vec<&Value> = objects
            .iter()
            .filter(|o| o["kind"] == "Role" && o["metadata"]["namespace"] == namespace)
            .collect();
        assert_eq!(found.len(), 1, "one Role in {namespace}");
        grants(found[0])
    };
    assert_eq!(
        grants(find(&objects, "ClusterRole", "mco-host-boot-images")),
        expect_grants(&[
            (
                "config.openshift.io",
                &["infrastructures"],
                &["get", "list", "watch"],
                &[]
            ),
            (
                "operator.openshift.io",
                &["machineconfigurations/status"],
                &["patch"],
                &["cluster"]
            ),
        ])
    );
    // What the base's ClusterRole grants already (MachineConfiguration,
    // the feature gates and ClusterVersion, read by both jobs) is not
    // granted twice.
    let base_grants = grants(find(base(), "ClusterRole", "mco-host"));
    let overlay_grants = grants(find(&objects, "ClusterRole", "mco-host-boot-images"));
    let twice: Vec<&Grant> = overlay_grants.intersection(&base_grants).collect();
    assert!(twice.is_empty(), "granted by the base too: {twice:?}");
    assert_eq!(
        role_in("openshift-machine-api"),
        expect_grants(&[
            (
                "machine.openshift.io",
                &["machinesets"],
                &["get", "list", "watch", "patch"],
                &[]
            ),
            (
                "machine.openshift.io",
                &["controlplanemachinesets"],
                &["get", "list", "watch", "patch"],
                &["cluster"]
            ),
            ("", &["secrets"], &["get", "patch"], &USER_DATA_SECRETS),
            // AWS: the EC2 credentials, read only.
            ("", &["secrets"], &["get"], &["aws-cloud-credentials"]),
        ])
    );
    assert_eq!(
        role_in("openshift-machine-config-operator"),
        expect_grants(&[(
            "",
            &["configmaps"],
            &["get", "list", "watch"],
            &["coreos-bootimages"]
        )])
    );
    assert_eq!(
        role_in("mco-system"),
        expect_grants(&[(
            "",
            &["configmaps"],
            &["get", "list", "watch", "create", "patch"],
            &[]
        )])
    );
    // vSphere: the credentials of the workspaces' vCenters and
    // install-config (the disk type of a new template), by name.
    assert_eq!(
        role_in("kube-system"),
        expect_grants(&[
            ("", &["secrets"], &["get"], &["vsphere-creds"]),
            ("", &["configmaps"], &["get"], &["cluster-config-v1"]),
        ])
    );
    assert_eq!(
        objects.len(),
        10,
        "a ClusterRole and four Roles, each with its binding"
    );
}

/// The user-data Secrets the boot image Role names: the installer's
/// (`<role>-user-data`) and the copies the Machine Config Operator keeps
/// (`-managed`).
const USER_DATA_SECRETS: [&str; 4] = [
    "master-user-data",
    "master-user-data-managed",
    "worker-user-data",
    "worker-user-data-managed",
];

/// deploy/README.md, "User-data Secrets with other names": the patch that
/// adds one.
const OTHER_USER_DATA_SECRET: &str = "patches:\n  - target: {kind: Role, name: mco-host-boot-images, namespace: openshift-machine-api}\n    patch: |-\n      - op: add\n        path: /rules/2/resourceNames/-\n        value: infra-user-data\n";

#[test]
fn the_documented_patch_adds_a_user_data_secret_by_name() {
    let overlay = overlay_on("boot-images", OTHER_USER_DATA_SECRET);
    let objects = kustomize_build(overlay.path());
    let role = objects
        .iter()
        .find(|o| o["kind"] == "Role" && o["metadata"]["namespace"] == "openshift-machine-api")
        .unwrap_or_else(|| panic!("no Role in openshift-machine-api"));
    let secrets: BTreeSet<Grant> = grants(role)
        .into_iter()
        .filter(|(_, resource, _, _)| resource == "secrets")
        .collect();
    let mut names = USER_DATA_SECRETS.to_vec();
    names.push("infra-user-data");
    assert_eq!(
        secrets,
        expect_grants(&[
            ("", &["secrets"], &["get", "patch"], &names),
            ("", &["secrets"], &["get"], &["aws-cloud-credentials"]),
        ])
    );
}

/// An overlay outside `deploy/` (kustomize refuses one nested in its base)
/// with the given extra kustomization lines, `<deploy>` standing for the
/// relative path to `deploy/`.
fn overlay(extra: &str) -> tempfile::TempDir {
    overlay_on("", extra)
}

/// [`overlay`] of `deploy/<sub>`.
fn overlay_on(sub: &str, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("deploy-overlay-")
        .tempdir_in(common::target_dir())
        .unwrap_or_else(|e| panic!("temp dir: {e}"));
    let to_deploy = relative(dir.path(), &deploy_dir().join(sub));
    let text = format!(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - <deploy>\n{extra}"
    )
    .replace("<deploy>", &to_deploy.display().to_string());
    fs::write(dir.path().join("kustomization.yaml"), text).unwrap_or_else(|e| panic!("{e}"));
    dir
}

/// The path from directory `from` to `to` (kustomize wants relative paths).
fn relative(from: &Path, to: &Path) -> PathBuf {
    let canonical =
        |p: &Path| fs::canonicalize(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let (from, to) = (canonical(from), canonical(to));
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut path = PathBuf::new();
    for _ in common..from.len() {
        path.push("..");
    }
    for part in &to[common..] {
        path.push(part);
    }
    path
}

const CUSTOM_GUESTS: &str = "components:\n  - <deploy>/components/custom-guests\n";

#[test]
fn the_custom_guests_component_reads_the_registry_from_a_configmap() {
    let component = deploy_dir().join("components/custom-guests");
    let text = read_text(&component.join("kustomization.yaml"));
    assert!(
        text.contains("kubectl -n mco-system create configmap mco-guest-registry")
            && text.contains("mco-host guests push"),
        "the component must tell how to publish a guest and create the registry it reads"
    );

    let overlay = overlay(CUSTOM_GUESTS);
    let rendered = kustomize_build(overlay.path());
    let mut expected = base().to_vec();
    {
        let deployment = expected
            .iter_mut()
            .find(|o| o["kind"] == "Deployment")
            .unwrap_or_else(|| panic!("no Deployment"));
        let args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
            .as_array_mut()
            .unwrap_or_else(|| panic!("no args"));
        args.push(json!("--registry-configmap"));
        args.push(json!("mco-guest-registry"));
    }
    assert_eq!(
        by_id(&rendered),
        by_id(&expected),
        "the component changes nothing but the registry flag"
    );
}

/// `object` read into the k8s-openapi type of its kind and written back: a
/// misspelt or misplaced field is dropped on the way, so the result differs.
fn round_trip(object: &Value) -> Value {
    fn via<T: serde::de::DeserializeOwned + serde::Serialize>(object: &Value) -> Value {
        let typed: T = serde_json::from_value(object.clone())
            .unwrap_or_else(|e| panic!("{:?}: {e}", id(object)));
        serde_json::to_value(typed).unwrap_or_else(|e| panic!("{:?}: {e}", id(object)))
    }
    use k8s_openapi::api::{apps, core, policy, rbac};
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions;
    match (str_at(object, "/apiVersion"), str_at(object, "/kind")) {
        ("v1", "Namespace") => via::<core::v1::Namespace>(object),
        ("v1", "ServiceAccount") => via::<core::v1::ServiceAccount>(object),
        ("v1", "Service") => via::<core::v1::Service>(object),
        ("apps/v1", "Deployment") => via::<apps::v1::Deployment>(object),
        ("policy/v1", "PodDisruptionBudget") => via::<policy::v1::PodDisruptionBudget>(object),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => via::<rbac::v1::ClusterRole>(object),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
            via::<rbac::v1::ClusterRoleBinding>(object)
        }
        ("rbac.authorization.k8s.io/v1", "Role") => via::<rbac::v1::Role>(object),
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => via::<rbac::v1::RoleBinding>(object),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition") => {
            via::<apiextensions::v1::CustomResourceDefinition>(object)
        }
        _ => panic!("{:?}: no schema known to this test", id(object)),
    }
}

#[test]
fn every_object_matches_its_kubernetes_schema() {
    let custom = overlay(CUSTOM_GUESTS);
    let mut objects = base().to_vec();
    objects.extend(kustomize_build(&deploy_dir().join("boot-images")));
    objects.extend(kustomize_build(custom.path()));
    for (component, _) in MCN_CRD_COMPONENTS {
        objects.extend(with_component(component));
    }
    for object in &objects {
        let mut typed = round_trip(object);
        let mut object = object.clone();
        normalize_numbers(&mut typed);
        normalize_numbers(&mut object);
        assert!(
            typed == object,
            "{:?}: fields the Kubernetes schema does not have (or wrong types):\nwritten:\n{object:#}\nas Kubernetes reads it:\n{typed:#}",
            id(&object)
        );
    }
}

/// Logical Containerfile lines (continuations joined), without comments.
fn containerfile() -> Vec<String> {
    let text = read_text(&deploy_dir().join("Containerfile"));
    let mut lines = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && current.is_empty()) {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(part) => {
                current.push_str(part);
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                lines.push(std::mem::take(&mut current));
            }
        }
    }
    lines
}

#[test]
fn the_containerfile_builds_what_the_deployment_runs() {
    let lines = containerfile();
    let has = |needle: &str| lines.iter().any(|l| l.contains(needle));
    let froms: Vec<&String> = lines.iter().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(froms.len(), 2, "two stages: {froms:?}");
    assert!(
        froms[0].contains("rust:1.95") && froms[0].ends_with(" AS build"),
        "{}",
        froms[0]
    );
    assert!(has("rustup target add wasm32-wasip2"));
    assert!(has("guests/build.sh"));
    assert!(has("cargo build --locked --release -p mco-host"));

    // The runtime stage: the binary, the guests where --guest-dir points,
    // a numeric non-root user (runAsNonRoot can only check a number).
    let runtime: Vec<&String> = lines
        .iter()
        .skip_while(|l| !std::ptr::eq(*l, froms[1]))
        .collect();
    let runtime_has = |needle: &str| runtime.iter().any(|l| l.contains(needle));
    assert!(runtime_has(
        "COPY --from=build /out/bin/mco-host /usr/local/bin/mco-host"
    ));
    assert!(
        runtime_has(&format!(" {GUEST_DIR}/")),
        "guests not copied to {GUEST_DIR}"
    );
    let user = runtime
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("USER "))
        .unwrap_or_else(|| panic!("no USER in the runtime stage"));
    let uid: u32 = user
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("USER {user} is not numeric"));
    assert_ne!(uid, 0);
    assert_eq!(
        runtime
            .iter()
            .rev()
            .find(|l| l.starts_with("ENTRYPOINT "))
            .map(|l| l.as_str()),
        Some(r#"ENTRYPOINT ["/usr/local/bin/mco-host"]"#)
    );
    assert_eq!(
        runtime
            .iter()
            .rev()
            .find(|l| l.starts_with("CMD "))
            .map(|l| l.as_str()),
        Some(r#"CMD ["run"]"#)
    );
    assert_eq!(container(base())["args"][0], "run");
}

#[test]
fn every_manifest_under_deploy_is_used() {
    fn walk(dir: &Path, files: &mut BTreeSet<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
            if path.is_dir() {
                walk(&path, files);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml")
                // promtool's unit tests of the alert rules, not manifests.
                && !path.to_string_lossy().ends_with(".test.yaml")
            {
                files.insert(path);
            }
        }
    }
    let mut files = BTreeSet::new();
    walk(&deploy_dir(), &mut files);
    let mut used = BTreeSet::new();
    for file in files.iter().filter(|f| f.ends_with("kustomization.yaml")) {
        let dir = file.parent().unwrap_or(Path::new("."));
        used.insert(file.clone());
        let k = read_kustomization(dir);
        let mut entries = strings(&k, "resources", dir);
        for patch in k
            .get("patches")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            entries.extend(patch["path"].as_str().map(str::to_owned));
        }
        for entry in entries {
            let path = dir.join(&entry);
            assert!(path.exists(), "{}: {entry} does not exist", file.display());
            if path.is_file() {
                used.insert(path);
            }
        }
    }
    let unused: Vec<&PathBuf> = files.difference(&used).collect();
    assert!(
        unused.is_empty(),
        "manifests no kustomization uses: {unused:?}"
    );
}

// ---------------------------------------------------------------------------
// The real kustomize
// ---------------------------------------------------------------------------

/// `kustomize build DIR`, every document it prints (`mco_test_support::kustomize`:
/// built once from the Go module proxy; a failure fails the test).
fn kustomize_build(dir: &Path) -> Vec<Value> {
    mco_test_support::kustomize::kustomize_build(dir).unwrap_or_else(|e| panic!("{e:#}"))
}

/// JSON has one number type: kustomize prints the CRD's `minimum: 1.0` as
/// `1`, which means the same to the apiserver.
fn normalize_numbers(value: &mut Value) {
    match value {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|f| n.is_f64() && f.fract() == 0.0) {
                // Integral floats within i64 convert exactly.
                if f.abs() < 9.0e15 {
                    *value = json!(f as i64);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_numbers),
        Value::Object(map) => map.values_mut().for_each(normalize_numbers),
        _ => {}
    }
}

/// The documented ways to customise the base: the guests component with an
/// image override, and another namespace (the binding subjects follow).
#[test]
fn the_documented_overrides_apply() {
    let custom = overlay(&format!(
        "{CUSTOM_GUESTS}images:\n  - name: mco-host\n    newName: registry.example.com/mco/mco-host\n    newTag: v0.1.0\n"
    ));
    assert_eq!(
        container(&kustomize_build(custom.path()))["image"],
        "registry.example.com/mco/mco-host:v0.1.0"
    );

    // deploy/README.md: beside the Machine Config Operator, observe.
    let observe = overlay(
        "patches:\n  - target: {kind: Deployment, name: mco-host}\n    patch: |-\n      - op: replace\n        path: /spec/template/spec/containers/0/args/15\n        value: observe\n",
    );
    let args = container(&kustomize_build(observe.path()))["args"].clone();
    assert_eq!(
        (&args[14], &args[15]),
        (&json!("--mcn-mode"), &json!("observe")),
        "{args}"
    );

    let moved = overlay("namespace: mco-elsewhere\n");
    let moved = kustomize_build(moved.path());
    for binding in moved
        .iter()
        .filter(|o| o["kind"] == "RoleBinding" || o["kind"] == "ClusterRoleBinding")
    {
        assert_eq!(
            binding["subjects"][0]["namespace"], "mco-elsewhere",
            "{}: subject left behind",
            binding["metadata"]["name"]
        );
    }
}
