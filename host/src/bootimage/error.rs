//! Why one MachineSet was not brought to its boot image in a pass. The
//! texts follow upstream's (`failed to reconcile machineset X, err: ...`),
//! which end up in `BootImageUpdateDegraded` and in Events.

use crate::runtime::GuestError;

#[derive(Debug, Clone, thiserror::Error)]
pub enum PassError {
    #[error("unreadable MachineSet: {0}")]
    Unreadable(String),
    /// The host rules could not read an input object for it.
    #[error("failed to reconcile machineset {machineset}, err: {detail}")]
    Rules { machineset: String, detail: String },
    #[error(
        "failed to reconcile machineset {machineset}, err: boot image guest {guest} failed: {error}"
    )]
    Guest {
        machineset: String,
        guest: String,
        error: GuestError,
    },
    #[error(
        "failed to reconcile machineset {machineset}, err: the boot image guest for {platform} was removed from the registry; deciding again on the next pass"
    )]
    GuestRemoved {
        machineset: String,
        platform: String,
    },
    /// The guest's own `error` decision, as it worded it.
    #[error("{0}")]
    Undecidable(String),
    #[error(
        "failed to reconcile machineset {machineset}, err: error grabbing user data secret referenced in machineset: {detail}"
    )]
    SecretRead { machineset: String, detail: String },
    #[error(
        "refusing to reconcile machineset {0}, hot loop detected. Please opt-out of boot image updates, adjust your machine provisioning workflow to prevent hot loops and opt back in to resume boot image updates"
    )]
    HotLoop(String),
    #[error("could not update secret {namespace}/{secret}: {detail}")]
    StubWrite {
        namespace: String,
        secret: String,
        detail: String,
    },
    #[error("failed to patch machineset {machineset}: {detail}")]
    Patch { machineset: String, detail: String },
    #[error("patched machineset {machineset}, but {detail}")]
    StateAfterPatch { machineset: String, detail: String },
}

impl PassError {
    /// The Event reason it is reported under.
    pub fn reason(&self) -> &'static str {
        match self {
            PassError::HotLoop(_) => "HotLoopDetected",
            _ => "BootImageUpdateFailed",
        }
    }
}
