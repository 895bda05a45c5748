//! Offline demo: replays the recorded reboot update of one node
//! (`tests/golden/mcn/reboot-*`) through the installed wasm guest and
//! prints the MachineConfigNode after each step the way
//! `oc get machineconfignodes -o wide` shows it.
//!
//! Run with `make demo`, or `cargo run --release --example update_walk`
//! after `guests/build.sh`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use mco_host::eval::McnInputs;
use mco_host::mcn;
use mco_host::runtime::{GuestModule, McnGuest, NODE_STATE_INTERFACE, Runtime, RuntimeConfig};
use serde_json::Value;

/// `-o wide` columns after NAME: (header, condition type or field).
const COLUMNS: [(&str, &str); 14] = [
    ("POOLNAME", ".pool"),
    ("DESIREDCONFIG", ".desired"),
    ("CURRENTCONFIG", ".current"),
    ("UPDATED", "Updated"),
    ("UPDATEPREPARED", "UpdatePrepared"),
    ("UPDATEEXECUTED", "UpdateExecuted"),
    ("UPDATEPOSTACTIONCOMPLETE", "UpdatePostActionComplete"),
    ("UPDATECOMPLETE", "UpdateComplete"),
    ("RESUMED", "Resumed"),
    ("UPDATEDFILESANDOS", "AppliedFilesAndOS"),
    ("CORDONEDNODE", "Cordoned"),
    ("DRAINEDNODE", "Drained"),
    ("REBOOTEDNODE", "RebootedNode"),
    ("UNCORDONEDNODE", "Uncordoned"),
];

fn main() -> anyhow::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let exe = std::env::current_exe()?;
    let guest_path = exe
        .ancestors()
        .nth(3)
        .map(PathBuf::from)
        .unwrap_or_default()
        .join("release/guests/mcn.wasm");
    let runtime = Runtime::new(RuntimeConfig::default())?;
    let module = GuestModule::from_file(&runtime, &guest_path, NODE_STATE_INTERFACE)
        .with_context(|| "build the guests first: guests/build.sh")?;
    let guest = McnGuest::new(&runtime, module)?;

    let mut steps: Vec<PathBuf> = std::fs::read_dir(root.join("tests/golden/mcn"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("reboot-"))
        })
        .collect();
    steps.sort();
    println!(
        "Guest {} (sha256 {}), one node through a reboot update:\n",
        guest_path.display(),
        &guest.module().digest[..12]
    );
    let header: Vec<&str> = std::iter::once("NAME")
        .chain(COLUMNS.iter().map(|(h, _)| *h))
        .collect();
    for step in steps {
        let inputs = McnInputs::read_case(&step)?;
        let decision = guest.derive(&inputs.facts())?;
        mcn::validate(&decision).map_err(anyhow::Error::msg)?;
        let output = inputs.output(decision, k8s_openapi::jiff::Timestamp::now());
        let label = step
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        println!("step {label}");
        print_row(&header);
        print_row(&row(&output["machineConfigNode"]));
        println!();
    }
    Ok(())
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

fn row(mcn: &Value) -> Vec<&str> {
    let condition = |type_: &str| {
        mcn["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
            .map_or("", |c| text(&c["status"]))
    };
    std::iter::once(text(&mcn["metadata"]["name"]))
        .chain(COLUMNS.iter().map(|(_, source)| match *source {
            ".pool" => text(&mcn["spec"]["pool"]["name"]),
            ".desired" => text(&mcn["spec"]["configVersion"]["desired"]),
            ".current" => text(&mcn["status"]["configVersion"]["current"]),
            type_ => condition(type_),
        }))
        .collect()
}

fn print_row(cells: &[&str]) {
    let widths = [9, 9, 18, 18, 8, 15, 15, 25, 15, 8, 18, 13, 12, 13, 15];
    let line: Vec<String> = cells
        .iter()
        .zip(widths)
        .map(|(c, w)| format!("{c:<w$}"))
        .collect();
    println!("{}", line.join(" ").trim_end());
}
