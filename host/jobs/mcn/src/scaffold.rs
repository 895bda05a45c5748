//! `guests new --job mcn`: a MachineConfigNode guest crate, the files
//! under `scaffold/` (its guest and two cases).

use mco_job::jobs::scaffold::{Scaffold, Template};

/// The MCN job's crate template.
pub(super) struct McnScaffold;

const FILES: [Template; 8] = [
    ("src/lib.rs", include_str!("../scaffold/lib.rs")),
    (
        "cases/updated/node.yaml",
        include_str!("../scaffold/cases/updated/node.yaml"),
    ),
    (
        "cases/updated/pools.yaml",
        include_str!("../scaffold/cases/updated/pools.yaml"),
    ),
    (
        "cases/updated/expected.json",
        include_str!("../scaffold/cases/updated/expected.json"),
    ),
    (
        "cases/updating/node.yaml",
        include_str!("../scaffold/cases/updating/node.yaml"),
    ),
    (
        "cases/updating/pools.yaml",
        include_str!("../scaffold/cases/updating/pools.yaml"),
    ),
    (
        "cases/updating/now.txt",
        include_str!("../scaffold/cases/updating/now.txt"),
    ),
    (
        "cases/updating/expected.json",
        include_str!("../scaffold/cases/updating/expected.json"),
    ),
];

impl Scaffold for McnScaffold {
    fn help(&self) -> &'static str {
        "The MachineConfigNode job (world `node-state-reporter`)"
    }

    fn templates(&self) -> Vec<Template> {
        FILES.to_vec()
    }

    fn what(&self, _: Option<&str>) -> String {
        "A MachineConfigNode guest for mco-host: it derives each node's MachineConfigNode."
            .to_string()
    }

    fn limits(&self, _: Option<&str>) -> String {
        "Its pool, config names and condition types must be ones the host passed or the \
         MachineConfigNode CRD allows."
            .to_string()
    }
}
