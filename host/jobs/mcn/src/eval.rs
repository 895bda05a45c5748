//! What `eval mcn` reads: the Node, its pools, the rendered configs, the
//! MachineConfiguration with the node disruption policies, the stored
//! MCN and the FeatureGate, from files laid out as the flags (or a golden case) name
//! them, and the JSON the eval contract promises for a decision.

use std::path::Path;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::jiff::Timestamp;
use mco_mcn as logic;
use serde_json::{Value, json};

use super::crd;
use super::objects::{MachineConfig, MachineConfigPool};
use super::{policies, rules};
use mco_job::feature_gates::{self, FeatureGates, Modelled};
use mco_job::manifests::{InputError, Reader, case_file};

/// Everything `eval mcn` reads, parsed.
pub struct McnInputs {
    pub node: Node,
    pub pools: Vec<MachineConfigPool>,
    pub configs: Vec<MachineConfig>,
    /// The node disruption policies of `--machineconfiguration`, read as
    /// the controller reads them; the defaults without it.
    pub policies: logic::DisruptionPolicies,
    pub previous: Option<crd::MachineConfigNode>,
    /// The gates in force: the FeatureGate given, else the Default set.
    pub gates: FeatureGates,
}

/// Paths of the `eval mcn` inputs (`-` is standard input); the audit
/// (`audit.rs`) reads them too, with any number of Nodes in `node` and of
/// stored MCNs in `previous`.
#[derive(Default)]
pub struct McnPaths<'a> {
    pub node: &'a str,
    pub pools: Option<&'a str>,
    pub machineconfigs: Option<&'a str>,
    pub machineconfiguration: Option<&'a str>,
    pub previous: Option<&'a str>,
    pub featuregate: Option<&'a str>,
}

impl McnInputs {
    /// Reads a case directory holding files named after the flags
    /// (`node.yaml`, optional `pools.yaml`, `machineconfigs.yaml`,
    /// `machineconfiguration.yaml`, `previous.yaml`, `featuregate.yaml`), as
    /// the golden cases are laid out; `gates`: every job's.
    pub fn read_case(dir: &Path, gates: &Modelled) -> Result<Self, InputError> {
        let [
            node,
            pools,
            machineconfigs,
            machineconfiguration,
            previous,
            featuregate,
        ] = [
            "node",
            "pools",
            "machineconfigs",
            "machineconfiguration",
            "previous",
            "featuregate",
        ]
        .map(|flag| case_file(dir, &format!("{flag}.yaml")));
        McnInputs::read(
            &McnPaths {
                node: node.as_deref().unwrap_or("node.yaml"),
                pools: pools.as_deref(),
                machineconfigs: machineconfigs.as_deref(),
                machineconfiguration: machineconfiguration.as_deref(),
                previous: previous.as_deref(),
                featuregate: featuregate.as_deref(),
            },
            gates,
        )
    }

    /// Reads the files of `paths`, the FeatureGate's `gates` (every job's,
    /// the modelled ones) among them.
    pub fn read(paths: &McnPaths, gates: &Modelled) -> Result<Self, InputError> {
        let mut reader = Reader::default();
        let pools = reader.all(paths.pools, "MachineConfigPool")?;
        let configs = reader.all(paths.machineconfigs, "MachineConfig")?;
        let node = reader.object(paths.node, "Node")?;
        let policies = policies::from_file(&mut reader, paths.machineconfiguration)?;
        let previous = match paths.previous {
            Some(path) => Some(reader.object(path, "MachineConfigNode")?),
            None => None,
        };
        // `eval mcn` reads no ClusterVersion: the first entry counts.
        let gates = feature_gates::read(&mut reader, paths.featuregate, None, gates)?;
        Ok(McnInputs {
            node,
            pools,
            configs,
            policies,
            previous,
            gates,
        })
    }

    pub fn facts(&self) -> logic::Facts {
        let pools: Vec<&MachineConfigPool> = self.pools.iter().collect();
        let configs: Vec<&MachineConfig> = self.configs.iter().collect();
        rules::facts(
            &self.node,
            &pools,
            &configs,
            self.policies.clone(),
            self.previous.as_ref(),
            &self.gates,
        )
    }

    /// The eval output for a validated decision; changed conditions are
    /// stamped with `now`.
    pub fn output(&self, decision: logic::Decision, now: Timestamp) -> Value {
        match decision {
            logic::Decision::Apply(result) => {
                let object = rules::to_object(&self.node, result, self.previous.as_ref(), now);
                json!({"action": "apply", "machineConfigNode": object})
            }
            logic::Decision::Skip(reason) => json!({"action": "skip", "reason": reason}),
            logic::Decision::Error(message) => json!({"action": "error", "message": message}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mco_job::case_check::now;
    use mco_test_support::large::OBJECT_BYTES;

    /// A Node as large as the apiserver stores one (its annotations grown
    /// to about 1.5 MiB) decodes through the typed read `eval mcn` uses and
    /// decides as the golden case it was grown from.
    #[test]
    fn a_node_at_the_apiservers_size_decodes_and_decides() {
        let golden = mco_job::crate_dir(env!("CARGO_MANIFEST_DIR"))
            .join("../../../tests/golden/mcn/reboot-05-drained");
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for entry in std::fs::read_dir(&golden).unwrap_or_else(|e| panic!("{e}")) {
            let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
            let to = dir.path().join(path.file_name().unwrap_or_default());
            std::fs::copy(&path, to).unwrap_or_else(|e| panic!("{e}"));
        }
        let text =
            std::fs::read_to_string(golden.join("node.yaml")).unwrap_or_else(|e| panic!("{e}"));
        let mut node: Value = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        let room = OBJECT_BYTES.saturating_sub(node.to_string().len() + 64);
        node["metadata"]["annotations"]["example.com/bulk"] = Value::String("x".repeat(room));
        let grown = node.to_string();
        assert!(grown.len() > OBJECT_BYTES - 128 && grown.len() <= OBJECT_BYTES);
        std::fs::write(dir.path().join("node.yaml"), grown).unwrap_or_else(|e| panic!("{e}"));

        let inputs = McnInputs::read_case(dir.path(), crate::FEATURE_GATES)
            .unwrap_or_else(|e| panic!("{e}"));
        let decision = mco_mcn::derive(&inputs.facts());
        let now = now(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let expected =
            std::fs::read_to_string(golden.join("expected.json")).unwrap_or_else(|e| panic!("{e}"));
        let expected: Value = serde_json::from_str(&expected).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(inputs.output(decision, now), expected);
    }
}
