//! What the end-to-end tests (and `make demo`) share: the [`fixture`] (a
//! control plane set up the way `deploy/` sets up a cluster, and the objects
//! the tests write), the [`controller`] child process with its admin
//! endpoints and metrics, the boot image cluster in [`bootimages`], and the
//! [`golden`] cases the MCN walks replay.

pub mod bootimages;
pub mod controller;
pub mod fixture;
pub mod golden;
pub mod oci;
