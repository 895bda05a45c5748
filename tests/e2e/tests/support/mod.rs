//! What the end-to-end tests (and `make demo`) share: the [`fixture`] (a
//! control plane set up the way `deploy/` sets up a cluster, and the objects
//! the tests write), the [`controller`] child process with its admin
//! endpoints and metrics, the boot image cluster in [`bootimages`],
//! MachineConfigGuests and module ConfigMaps in [`guests`], the [`golden`]
//! cases the MCN walks replay, and the [`wasm`] bytes the swap tests share
//! with the host's own.

pub mod bootimages;
pub mod controller;
pub mod fixture;
pub mod golden;
pub mod guests;
pub mod oci;
#[path = "../../../../host/tests/common/wasm.rs"]
pub mod wasm;
