//! Managed boot image updates for MAPI MachineSets, as pure functions: what
//! keeps each MachineSet's boot image in line with the release's CoreOS
//! stream and does not depend on the cloud (the stream model, the
//! architecture rule, the common per-MachineSet rules, the stub Ignition
//! upgrade, the merge patch). Each cloud's rule is a crate implementing
//! [`Platform`], so a guest carries only the rule it needs. Everything here
//! is deterministic and total (no clock, randomness, environment, I/O or
//! hash-ordered collections; malformed input is an error value, never a
//! panic), so the same code runs natively and as a guest with byte-identical
//! answers.

// The component bindings wit-bindgen generates for wasm32 use `unsafe`.
#![cfg_attr(target_arch = "wasm32", allow(unsafe_code))]

pub mod arch;
#[cfg(target_arch = "wasm32")]
pub mod component;
mod decide;
mod decision;
pub mod ec2;
pub mod fields;
pub mod ignition;
mod machineset;
mod platform;
pub mod stream;
mod validate;
pub mod vcenter;

pub use decide::{
    ClusterFacts, OS_ID_LABEL, OS_STREAM_LABEL, SUPPORTED_OS_STREAM, common_rules, decide,
    decide_loaded, decide_text, load_stream, unsupported_platform,
};
pub use decision::{Decision, UserData, UserDataUpgrade};
pub use machineset::{
    COMMON_PROVIDER_SPEC_FIELDS, CPMS_MACHINE_TYPE, InputError, MachineKind, MachineSetView,
    ProviderSpec,
};
pub use platform::{Platform, PlatformOutcome, RuleError};
pub use stream::{AzureVariant, LookupError, Stream, StreamError, StreamQuery};
pub use validate::{MAX_REASON_TEXT, MAX_TARGET, validate_decision, validate_decision_for};

// Platform crates depend on this one only, so they get json helpers here.
pub use serde_json;
