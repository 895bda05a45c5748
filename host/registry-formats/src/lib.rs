//! The bytes from registries and pull Secrets that mco-host parses with
//! its own code rather than a client library's: a guest artifact's
//! manifest and config (`artifact`), cosign signatures (`cosign`) and
//! Docker configs (`docker_config`), and the sha256-named blobs the caches
//! and pins share (`blob`). They are their own crate so the fuzz targets
//! (fuzz/) and mco-fetch build them without wasmtime and kube.

pub mod artifact;
pub mod blob;
pub mod cosign;
pub mod docker_config;
mod public_key;
mod refusal;
pub mod sigstore;
