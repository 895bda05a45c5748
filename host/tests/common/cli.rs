//! The built `mco-host` as the CLI tests run it: the installed guests,
//! no `RUST_LOG`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

pub fn host() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mco-host"));
    command.env(
        "MCO_GUEST_DIR",
        super::installed_guest("mcn.wasm")
            .parent()
            .unwrap_or(Path::new(".")),
    );
    command.env_remove("RUST_LOG");
    command
}

pub fn run(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = host()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn mco-host: {e}"));
    if let Some(mut pipe) = child.stdin.take() {
        pipe.write_all(stdin.unwrap_or_default().as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
    }
    child.wait_with_output().unwrap_or_else(|e| panic!("{e}"))
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
