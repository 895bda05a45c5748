//! What the tests of pure crates share with the end-to-end suite, without
//! a cluster: objects at the sizes a real cluster holds ([`large`]), a PKI
//! and transparency log made at test time ([`pki`]), and the real
//! `kustomize` ([`kustomize`]). The end-to-end harness (`mco-e2e`, beside
//! this crate) re-exports all three.

pub mod kustomize;
pub mod large;
pub mod pki;
