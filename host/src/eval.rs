//! The offline `eval` step for the MachineConfigNode job: objects read from
//! files, one decision, the JSON the eval contract promises.

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::jiff::Timestamp;
use mco_mcn as logic;
use serde_json::{Value, json};

use crate::crd;
use crate::inputs::{InputError, Reader};
use crate::mcn::{self, MachineConfig, MachineConfigPool};

/// Everything `eval mcn` reads, parsed.
pub struct McnInputs {
    pub node: Node,
    pub pools: Vec<MachineConfigPool>,
    pub configs: Vec<MachineConfig>,
    pub previous: Option<crd::MachineConfigNode>,
}

/// Paths of the `eval mcn` inputs (`-` is standard input).
#[derive(Default)]
pub struct McnPaths<'a> {
    pub node: &'a str,
    pub pools: Option<&'a str>,
    pub machineconfigs: Option<&'a str>,
    pub previous: Option<&'a str>,
}

/// Every object in an optional file; none when it was not given.
fn all<T: serde::de::DeserializeOwned>(
    reader: &mut Reader,
    path: Option<&str>,
    kind: &str,
) -> Result<Vec<T>, InputError> {
    match path {
        Some(path) => reader.objects(path, kind),
        None => Ok(Vec::new()),
    }
}

impl McnInputs {
    pub fn read(paths: &McnPaths) -> Result<Self, InputError> {
        let mut reader = Reader::default();
        let pools = all(&mut reader, paths.pools, "MachineConfigPool")?;
        let configs = all(&mut reader, paths.machineconfigs, "MachineConfig")?;
        let node = reader.object(paths.node, "Node")?;
        let previous = match paths.previous {
            Some(path) => Some(reader.object(path, "MachineConfigNode")?),
            None => None,
        };
        Ok(McnInputs {
            node,
            pools,
            configs,
            previous,
        })
    }

    pub fn facts(&self) -> logic::Facts {
        mcn::facts(
            &self.node,
            &self.pools,
            &self.configs,
            self.previous.as_ref(),
        )
    }

    /// The eval output for a validated decision; changed conditions are
    /// stamped with `now`.
    pub fn output(&self, decision: logic::Decision, now: Timestamp) -> Value {
        match decision {
            logic::Decision::Apply(result) => {
                let object = mcn::to_object(&self.node, result, self.previous.as_ref(), now);
                json!({"action": "apply", "machineConfigNode": object})
            }
            logic::Decision::Skip(reason) => json!({"action": "skip", "reason": reason}),
            logic::Decision::Error(message) => json!({"action": "error", "message": message}),
        }
    }
}
