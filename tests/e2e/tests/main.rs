//! The end-to-end tests, one binary: each file beside this one is a module
//! of it, [`support`] what they share. One binary links wasmtime and kube
//! once, where a binary per file linked them twenty-one times
//! (docs/dev/records/ci-timings.md). `make test` runs each module in a
//! process of its own, by a test filter (`test-e2e-<module>`), as it ran
//! each file's binary: a process holds one control plane at a time
//! ([`support::fixture::Fixture::run`]). One module by hand:
//! `cargo test --locked --release --workspace --test e2e -- mcn_crd::`.

mod support;

mod audit;
mod bootimage_aws_ec2;
mod bootimage_controller;
mod bootimage_rollout;
mod bootimage_vsphere;
mod cold_start;
mod control_plane;
mod decode_failures;
mod ec2_client;
mod feature_gates;
mod fleet;
mod mcn_controller;
mod mcn_crd;
mod oci;
mod ownership;
mod preflight;
mod rollout;
mod scale;
mod signing_pki;
mod status;
mod vcsim;
mod vsphere_client;
