//! The bytes from registries and pull Secrets that mco-host parses with
//! its own code rather than a client library's: cosign signatures
//! (`cosign`) and Docker configs (`docker_config`). They are their own
//! crate so the fuzz targets (fuzz/) build them without wasmtime and kube.

pub mod cosign;
pub mod docker_config;
