//! Objects at the sizes a real cluster holds, generated rather than
//! committed: rendered MachineConfigs as large as the apiserver stores
//! (many small files, or a few large ones; openshift/api#1773 reports
//! rendered configs over 1 MB), a `coreos-bootimages` stream of 1 MiB and a
//! MachineSet whose `providerSpec` fills an object. The host's tests, its
//! benchmark and the end-to-end suite all take them from here.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// The largest object the test control plane stores, give or take a few
/// hundred bytes, as the compact JSON a client sends: etcd refuses a request
/// over 1.5 MiB (its `--max-request-bytes` default, 1,572,864) with
/// "etcdserver: request is too large", and the object the apiserver writes
/// carries its metadata (uid, timestamps, managed fields) on top of what was
/// sent. Found by bisection: a MachineConfig `rendered-worker-a` applied by
/// `test-admin` is stored at 1,572,192 bytes and refused at 1,572,193.
/// `tests/e2e/tests/mcn_controller.rs` checks that 1 KiB more is refused.
pub const OBJECT_BYTES: usize = 1_572_000;

/// The `coreos-bootimages` ConfigMap's stream, at 1 MiB.
pub const STREAM_BYTES: usize = 1 << 20;

/// How a grown rendered config's bulk is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Files {
    /// Thousands of small files (about 170 bytes each).
    Many,
    /// Three files sharing the bulk (about 450 KiB each at 1.5 MiB).
    FewLarge,
}

/// The folder the generated files go under, which no disruption policy
/// covers: a change there reboots.
pub const GENERATED_DIR: &str = "/etc/mco-e2e/generated";

/// Adds the same generated files to every MachineConfig of `configs` so
/// that the largest is exactly `size` bytes of compact JSON and each still
/// differs from the others exactly as before.
pub fn grow_machineconfigs(configs: &mut [Value], files: Files, size: usize) -> Result<()> {
    let largest = configs.iter().map(json_len).max().unwrap_or_default();
    // Leaves room for the list's key and brackets when a config has none.
    let room = r#","storage":{"files":[]}"#.len();
    let Some(budget) = size.checked_sub(largest + room) else {
        bail!("the configs are already over {size} bytes");
    };
    let generated = generated_files(files, budget);
    for config in configs.iter_mut() {
        files_of(config)?.extend(generated.iter().cloned());
    }
    // The last generated file takes what is left.
    let short = size.saturating_sub(configs.iter().map(json_len).max().unwrap_or_default());
    for config in configs.iter_mut() {
        let last = files_of(config)?.last_mut();
        if let Some(Value::String(source)) = last.and_then(|f| f.pointer_mut("/contents/source")) {
            source.extend(std::iter::repeat_n('z', short));
        }
    }
    Ok(())
}

/// `spec.config.storage.files` of a MachineConfig, made when absent.
fn files_of(config: &mut Value) -> Result<&mut Vec<Value>> {
    let mut at = config
        .get_mut("spec")
        .context("a MachineConfig without a spec")?;
    for key in ["config", "storage"] {
        at = at
            .as_object_mut()
            .with_context(|| format!("the object holding {key} is not one"))?
            .entry(key)
            .or_insert_with(|| json!({}));
    }
    at.as_object_mut()
        .context("spec.config.storage is not an object")?
        .entry("files")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .context("spec.config.storage.files is not a list")
}

/// Files whose JSON list (commas included) takes at most `budget` bytes.
fn generated_files(files: Files, budget: usize) -> Vec<Value> {
    let file = |i: usize, len: usize| {
        // Varied text (not one repeated byte), plain enough for a data URL.
        let payload: String = (0..len)
            .map(|n| char::from(b'a' + ((n * 7 + i) % 26) as u8))
            .collect();
        json!({
            "path": format!("{GENERATED_DIR}/file-{i:05}.conf"),
            "mode": 420,
            "overwrite": true,
            "contents": {"source": format!("data:,{payload}")},
        })
    };
    let fixed = json_len(&file(0, 0)) + 1;
    let (count, payload) = match files {
        Files::Many => (budget / (fixed + 100), 100),
        Files::FewLarge => (3, (budget / 3).saturating_sub(fixed)),
    };
    (0..count).map(|i| file(i, payload)).collect()
}

/// A copy of the golden MCN case in `case` in `out`, its rendered configs
/// grown by [`grow_machineconfigs`] and written as one JSON `List`, which
/// `eval` and the golden runner read like the YAML they replace.
pub fn grown_case(case: &Path, out: &Path, files: Files, size: usize) -> Result<()> {
    copy_case(case, out)?;
    let mut configs = read_docs(&case.join("machineconfigs.yaml"))?;
    grow_machineconfigs(&mut configs, files, size)?;
    let list = json!({"apiVersion": "v1", "kind": "List", "items": configs});
    write(&out.join("machineconfigs.yaml"), &list)
}

/// What [`grown_aws_bootimage_case`] grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootImageBulk {
    /// The `coreos-bootimages` stream, to about [`STREAM_BYTES`], with
    /// regions no MachineSet is in.
    Stream,
    /// The MachineSet, to about [`OBJECT_BYTES`], with 10,000 tags.
    MachineSet,
}

/// A copy of the AWS boot image golden case in `case` in `out`, grown as
/// `bulk` says; neither changes the decision.
pub fn grown_aws_bootimage_case(case: &Path, out: &Path, bulk: BootImageBulk) -> Result<()> {
    copy_case(case, out)?;
    match bulk {
        BootImageBulk::Stream => grow_stream(case, out),
        BootImageBulk::MachineSet => grow_machineset(case, out),
    }
}

fn grow_stream(case: &Path, out: &Path) -> Result<()> {
    let mut configmap = one_doc(&case.join("configmap.yaml"))?;
    let text = configmap["data"]["stream"]
        .as_str()
        .context("the ConfigMap has no data.stream")?;
    let mut stream: Value = serde_json::from_str(text).context("data.stream is not JSON")?;
    let room = STREAM_BYTES.saturating_sub(json_len(&stream));
    let regions = stream
        .pointer_mut("/architectures/x86_64/images/aws/regions")
        .and_then(Value::as_object_mut)
        .context("the stream has no x86_64 AWS regions")?;
    let region = |i: usize| json!({"release": "9.8.20260428-0", "image": format!("ami-{i:017}")});
    let cost = json_len(&region(0)) + r#","mco-e2e-region-00000":"#.len();
    for i in 0..room / cost {
        regions.insert(format!("mco-e2e-region-{i:05}"), region(i));
    }
    configmap["data"]["stream"] = Value::String(stream.to_string());
    write(&out.join("configmap.yaml"), &configmap)
}

fn grow_machineset(case: &Path, out: &Path) -> Result<()> {
    let mut machineset = one_doc(&case.join("machineset.yaml"))?;
    let room = OBJECT_BYTES.saturating_sub(json_len(&machineset));
    let tags = machineset
        .pointer_mut("/spec/template/spec/providerSpec/value/tags")
        .and_then(Value::as_array_mut)
        .context("the MachineSet's providerSpec has no tags")?;
    let tag = |i: usize| json!({"name": format!("mco-e2e/tag-{i:05}"), "value": "v".repeat(100)});
    let cost = json_len(&tag(0)) + 1;
    tags.extend((0..room / cost).map(tag));
    write(&out.join("machineset.yaml"), &machineset)
}

fn copy_case(case: &Path, out: &Path) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    for entry in
        std::fs::read_dir(case).with_context(|| format!("cannot read {}", case.display()))?
    {
        let path = entry?.path();
        if let Some(name) = path.file_name() {
            std::fs::copy(&path, out.join(name))
                .with_context(|| format!("cannot copy {}", path.display()))?;
        }
    }
    Ok(())
}

/// The documents of a YAML file.
fn read_docs(file: &Path) -> Result<Vec<Value>> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
        .with_context(|| format!("cannot parse {}", file.display()))?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

fn one_doc(file: &Path) -> Result<Value> {
    let mut docs = read_docs(file)?;
    match docs.len() {
        1 => Ok(docs.remove(0)),
        n => bail!("{}: {n} documents, not one", file.display()),
    }
}

/// Writes `value` as JSON, which every reader of these files also takes.
fn write(file: &Path, value: &Value) -> Result<()> {
    std::fs::write(file, value.to_string())
        .with_context(|| format!("cannot write {}", file.display()))
}

fn json_len(value: &Value) -> usize {
    value.to_string().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> Vec<Value> {
        let mc = |name: &str, files: Value| {
            json!({"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
                   "metadata": {"name": name},
                   "spec": {"osImageURL": "os", "config": {"storage": {"files": files}}}})
        };
        vec![
            mc("a", json!([])),
            mc(
                "b",
                json!([{"path": "/etc/x", "contents": {"source": "data:,x"}}]),
            ),
        ]
    }

    #[test]
    fn grown_configs_are_the_size_asked_and_differ_only_as_before() -> Result<()> {
        for (files, count) in [(Files::Many, 900), (Files::FewLarge, 3)] {
            let mut configs = pair();
            grow_machineconfigs(&mut configs, files, 200_000)?;
            assert_eq!(json_len(&configs[1]), 200_000, "{files:?}");
            let list = |c: &Value| c["spec"]["config"]["storage"]["files"].as_array().cloned();
            let (a, b) = (
                list(&configs[0]).unwrap_or_default(),
                list(&configs[1]).unwrap_or_default(),
            );
            assert!(a.len() >= count, "{files:?}: {} files", a.len());
            assert_eq!(a[..], b[1..], "{files:?}");
        }
        assert!(grow_machineconfigs(&mut pair(), Files::Many, 100).is_err());
        Ok(())
    }
}
