//! `mco-host`: runs OpenShift Machine Config logic as sandboxed WebAssembly
//! guests. `runtime` is the wasmtime façade; `mcn` turns cluster objects
//! into guest input and guest output into the object to write; `cli` wires
//! them to the command line.

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
