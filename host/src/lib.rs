//! `mco-host`: runs OpenShift Machine Config logic as sandboxed WebAssembly
//! guests. One folder per job (`mcn`, `bootimage`: objects, rules, guest
//! binding, controller, writes, eval inputs), the cluster plumbing both use
//! (`kube`), which module serves which job (`guests`), the wasmtime façade
//! that knows no job (`runtime`), and the command line (`cli`).

pub mod admin;
pub mod bootimage;
pub mod cli;
pub mod guests;
pub mod kube;
pub mod mcn;
pub mod metrics;
pub mod run;
pub mod runtime;
mod telemetry;
