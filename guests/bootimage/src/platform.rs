//! The seam between the shared rules and one cloud's providerSpec.

use serde_json::{Map, Value};

use crate::decide::ClusterFacts;
use crate::fields::FieldError;
#[cfg(doc)]
use crate::machineset::ProviderSpec;
use crate::stream::{LookupError, StreamQuery};
use crate::vcenter::TemplateImport;

/// One platform's boot image rule (GCP, AWS, Azure, ...).
///
/// Implementations only look at the providerSpec and the stream: the common
/// rules (owner references, OS stream, Windows, architecture), the stub
/// upgrade and the patch envelope are the caller's, so every platform gets
/// them identically.
pub trait Platform {
    /// `status.platformStatus.type` of the Infrastructure this rule serves.
    fn platform_type(&self) -> &'static str;

    /// The keys of `providerSpec.value` the rule reads: a guest asks the
    /// host for these fields only (WIT `boot-image-inputs.provider-spec`),
    /// and the native library hands the rule the same part, so both
    /// decide on the same input.
    fn provider_spec_fields(&self) -> &'static [&'static str];

    /// Decides for one providerSpec value, of which the rule sees the
    /// [`Platform::provider_spec_fields`] (see [`ProviderSpec::part`]).
    ///
    /// `arch` is a stream architecture name (`x86_64`, `aarch64`, ...).
    /// From `facts`, a cloud reads `known_images` (extra image identifiers
    /// that count as published RHCOS images although the stream does not
    /// list them), vSphere what the host read from vCenter. Must be pure
    /// and total: bad input is an [`PlatformOutcome::Error`], never a panic.
    fn reconcile(
        &self,
        stream: &dyn StreamQuery,
        arch: &str,
        provider_spec: &Value,
        facts: &ClusterFacts,
    ) -> PlatformOutcome;
}

#[derive(Debug, Clone, PartialEq)]
pub enum PlatformOutcome {
    /// The boot image already is `target`.
    OnTarget { target: String },
    /// Nothing to do for another reason (e.g. an architecture or security
    /// profile the platform does not update).
    Noop { reason: String },
    /// Leave the MachineSet alone (custom image, unknown region, ...).
    Skip { reason: String },
    /// Cannot decide: missing stream data, wrong field types, ...
    Error { message: String },
    /// Move to `target`. `fragment` is an RFC 7386 merge patch for
    /// `providerSpec.value` that touches only the boot image fields; with
    /// an `import` (vSphere) it may be empty, the MachineSet already naming
    /// the template the import replaces.
    Update {
        target: String,
        fragment: Map<String, Value>,
        import: Option<Box<TemplateImport>>,
    },
}

impl PlatformOutcome {
    pub fn skip(reason: impl Into<String>) -> PlatformOutcome {
        PlatformOutcome::Skip {
            reason: reason.into(),
        }
    }

    pub fn error(message: impl Into<String>) -> PlatformOutcome {
        PlatformOutcome::Error {
            message: message.into(),
        }
    }

    pub fn noop(reason: impl Into<String>) -> PlatformOutcome {
        PlatformOutcome::Noop {
            reason: reason.into(),
        }
    }
}

/// An error inside a platform rule, so that rules can use `?` on field and
/// stream lookups and still end in an `error` outcome.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error(transparent)]
    Field(#[from] FieldError),
    #[error(transparent)]
    Lookup(#[from] LookupError),
    #[error("{0}")]
    Other(String),
}

impl From<Result<PlatformOutcome, RuleError>> for PlatformOutcome {
    fn from(r: Result<PlatformOutcome, RuleError>) -> PlatformOutcome {
        r.unwrap_or_else(|e| PlatformOutcome::error(e.to_string()))
    }
}
