//! `mco-host`: runs OpenShift Machine Config logic as sandboxed WebAssembly
//! guests. `runtime` is the wasmtime façade; `mcn` and `bootimage` are the
//! host rules of the two jobs; `controller` (MachineConfigNodes) and
//! `bootimage_controller` run them against the cluster; `registry`,
//! `guests` and `swap` decide which module serves each job; `cli` wires it
//! all to the command line.

pub mod admin;
pub mod bootimage;
pub mod bootimage_controller;
pub mod cli;
pub mod controller;
pub mod crd;
pub mod eval;
pub mod guests;
pub mod inputs;
pub mod mcn;
pub mod metrics;
pub mod registry;
pub mod run;
pub mod runtime;
pub mod shadow;
pub mod smoke;
pub mod swap;
