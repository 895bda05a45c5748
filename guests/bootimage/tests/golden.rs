//! Runs every golden case under `tests/golden/bootimage/` natively.
//!
//! The host runs the same cases through the wasm guests; both must print the
//! exact `expected.json`. Each case directory holds files named after the
//! `mco-host eval bootimage` flags. Besides the expected decision, every
//! patch is applied (RFC 7386) and re-evaluated, which must give `noop`: a
//! patch that does not converge would make the controller hot-loop.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use mco_bootimage::eval::{self, EvalInputs};
use mco_bootimage::ignition::{self, StubUpgrade};
use mco_bootimage::{Decision, Platform};
use mco_bootimage_aws::Aws;
use mco_bootimage_azure::Azure;
use mco_bootimage_gcp::Gcp;
use serde_json::Value;

/// The tests (and the host in its tests) run as an amd64 control plane.
const CONTROL_PLANE_ARCH: &str = "x86_64";

fn golden_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/bootimage")
}

fn read_yaml(path: &Path) -> Option<Value> {
    let text = fs::read_to_string(path).ok()?;
    let v: Value = serde_saphyr::from_str(&text)
        .unwrap_or_else(|e| panic!("{}: not valid YAML: {e}", path.display()));
    Some(v)
}

fn platform_for(platform_type: &str) -> Option<&'static dyn Platform> {
    match platform_type {
        "GCP" => Some(&Gcp),
        "AWS" => Some(&Aws),
        "Azure" => Some(&Azure),
        _ => None,
    }
}

struct Case {
    name: String,
    machineset: Value,
    configmap: Value,
    infrastructure: Value,
    clusterversion: Option<Value>,
    machineconfiguration: Option<Value>,
    user_data_secret: Option<Value>,
    known_images: BTreeSet<String>,
    expected: Value,
}

impl Case {
    fn load(dir: &Path) -> Case {
        let need = |f: &str| {
            read_yaml(&dir.join(f)).unwrap_or_else(|| panic!("{}: missing {f}", dir.display()))
        };
        let known_images = fs::read_to_string(dir.join("known-images.txt"))
            .map(|t| eval::known_images_from_text(&t))
            .unwrap_or_default();
        let expected_text = fs::read_to_string(dir.join("expected.json"))
            .unwrap_or_else(|_| panic!("{}: missing expected.json", dir.display()));
        Case {
            name: dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            machineset: need("machineset.yaml"),
            configmap: need("configmap.yaml"),
            infrastructure: need("infrastructure.yaml"),
            clusterversion: read_yaml(&dir.join("clusterversion.yaml")),
            machineconfiguration: read_yaml(&dir.join("machineconfiguration.yaml")),
            user_data_secret: read_yaml(&dir.join("user-data-secret.yaml")),
            known_images,
            expected: serde_json::from_str(&expected_text)
                .unwrap_or_else(|e| panic!("{}: bad expected.json: {e}", dir.display())),
        }
    }

    fn run(&self, machineset: &Value) -> Decision {
        let inputs = EvalInputs {
            machineset,
            configmap: &self.configmap,
            infrastructure: &self.infrastructure,
            clusterversion: self.clusterversion.as_ref(),
            machineconfiguration: self.machineconfiguration.as_ref(),
            user_data_secret: self.user_data_secret.as_ref(),
            known_images: &self.known_images,
            control_plane_arch: CONTROL_PLANE_ARCH,
        };
        let platform_type = eval::platform_type(&self.infrastructure)
            .unwrap_or_else(|e| panic!("{}: {e}", self.name));
        eval::evaluate(&inputs, platform_for(&platform_type))
            .unwrap_or_else(|e| panic!("{}: input error: {e}", self.name))
    }

    /// Everything that must hold beyond "output equals expected.json".
    fn check_patch(&self, decision: &Decision) -> Result<(), String> {
        let Decision::Patch {
            patch,
            user_data_secret,
            ..
        } = decision
        else {
            return Ok(());
        };
        let value = patch
            .pointer("/spec/template/spec/providerSpec/value")
            .and_then(Value::as_object)
            .ok_or("patch does not target providerSpec.value")?;
        let keys: Vec<&str> = value.keys().map(String::as_str).collect();
        if keys.len() != 1 || !["disks", "ami", "image"].contains(&keys[0]) {
            return Err(format!(
                "patch is not minimal: providerSpec.value keys {keys:?}"
            ));
        }
        let outer = patch.as_object().map(|m| m.len()).unwrap_or(0);
        if outer != 1 {
            return Err("patch touches more than spec".into());
        }

        let mut patched = self.machineset.clone();
        json_patch::merge(&mut patched, patch);
        if patched == self.machineset {
            return Err("patch changes nothing".into());
        }
        let again = self.run(&patched);
        if again.action() != "noop" {
            return Err(format!(
                "re-evaluating the patched MachineSet gave {} instead of noop",
                again.to_json()
            ));
        }

        if let Some(uds) = user_data_secret {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(&uds.data.user_data)
                .map_err(|e| format!("userData is not base64: {e}"))?;
            let text = String::from_utf8(bytes).map_err(|e| e.to_string())?;
            let cfg: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            if cfg.pointer("/ignition/version") != Some(&Value::from("3.5.0")) {
                return Err(format!("converted stub is not 3.5.0: {text}"));
            }
            if ignition::upgrade_stub(&text) != Ok(StubUpgrade::AlreadyCurrent) {
                return Err("converted stub would be converted again".into());
            }
        }
        Ok(())
    }
}

#[test]
fn golden_cases() {
    let root = golden_root();
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 40, "only {} golden cases", dirs.len());

    let mut failures = Vec::new();
    let mut actions = std::collections::BTreeMap::<&str, usize>::new();
    for dir in &dirs {
        let case = Case::load(dir);
        let decision = case.run(&case.machineset);
        *actions.entry(decision.action()).or_default() += 1;
        let actual = serde_json::to_value(&decision).expect("decision serializes");
        if actual != case.expected {
            failures.push(format!(
                "{}:\n  expected {}\n  actual   {}",
                case.name,
                case.expected,
                decision.to_json()
            ));
            continue;
        }
        // Deterministic down to the bytes.
        if case.run(&case.machineset).to_json() != decision.to_json() {
            failures.push(format!("{}: output differs between runs", case.name));
        }
        if let Err(e) = case.check_patch(&decision) {
            failures.push(format!("{}: {e}", case.name));
        }
    }
    eprintln!("golden bootimage cases: {} ({actions:?})", dirs.len());
    assert!(
        failures.is_empty(),
        "{} of {} golden cases failed:\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n")
    );
    for a in ["patch", "noop", "skip", "error"] {
        assert!(
            actions.get(a).copied().unwrap_or(0) >= 3,
            "too few {a} cases"
        );
    }
}
