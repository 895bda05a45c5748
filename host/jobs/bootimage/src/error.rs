//! Why one MachineSet (or ControlPlaneMachineSet) was not brought to its
//! boot image in a pass. The texts follow upstream's (`failed to reconcile
//! machineset X, err: ...`, `... ControlPlaneMachineSet X ...`), which end
//! up in `BootImageUpdateDegraded` and in Events.

use std::fmt;

use mco_bootimage::MachineKind;

use mco_runtime::GuestError;

/// The object a pass decides for, named as upstream's messages name it:
/// `machineset workers-a`, `ControlPlaneMachineSet cluster`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    pub kind: MachineKind,
    pub name: String,
}

impl Subject {
    pub fn machineset(name: impl Into<String>) -> Subject {
        Subject {
            kind: MachineKind::MachineSet,
            name: name.into(),
        }
    }

    /// Its key in the controller's record (hot loops) and in Event
    /// de-duplication. A MachineSet keeps its bare name, as records written
    /// before ControlPlaneMachineSets were managed have it; a
    /// ControlPlaneMachineSet gets its own key space (upstream keeps a
    /// separate hot-loop map for it in `syncControlPlaneMachineSets`), so a MachineSet named `cluster`
    /// never shares its entry.
    pub fn key(&self) -> String {
        match self.kind {
            MachineKind::MachineSet => self.name.clone(),
            MachineKind::ControlPlaneMachineSet => format!("{}/{}", self.kind.kind(), self.name),
        }
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind.noun(), self.name)
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum PassError {
    #[error("unreadable {kind}: {detail}")]
    Unreadable { kind: &'static str, detail: String },
    /// The host rules could not read an input object for it.
    #[error("failed to reconcile {subject}, err: {detail}")]
    Rules { subject: Subject, detail: String },
    #[error("failed to reconcile {subject}, err: boot image guest {guest} failed: {error}")]
    Guest {
        subject: Subject,
        guest: String,
        error: GuestError,
    },
    #[error(
        "failed to reconcile {subject}, err: the boot image guest for {platform} was removed from the registry; deciding again on the next pass"
    )]
    GuestRemoved { subject: Subject, platform: String },
    /// The guest's own `error` decision, as it worded it.
    #[error("{0}")]
    Undecidable(String),
    #[error(
        "failed to reconcile {subject}, err: error grabbing user data secret referenced in machineset: {detail}"
    )]
    SecretRead { subject: Subject, detail: String },
    #[error(
        "refusing to reconcile {0}, hot loop detected. Please opt-out of boot image updates, adjust your machine provisioning workflow to prevent hot loops and opt back in to resume boot image updates"
    )]
    HotLoop(Subject),
    #[error("could not update secret {namespace}/{secret}: {detail}")]
    StubWrite {
        namespace: String,
        secret: String,
        detail: String,
    },
    #[error("failed to patch {subject}: {detail}")]
    Patch { subject: Subject, detail: String },
    /// A vCenter read or import for it failed: `detail` names the step.
    #[error("failed to reconcile {subject}, err: vCenter {server}: {detail}")]
    Vcenter {
        subject: Subject,
        server: String,
        detail: String,
    },
    #[error("patched {subject}, but {detail}")]
    StateAfterPatch { subject: Subject, detail: String },
}

/// Why the controller's record (`state`) could not be read or written. A
/// pass stops on it: forgetting a hot loop would let it run again.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error(
        "boot image controller state {namespace}/{name} is unreadable ({source}); fix or delete it"
    )]
    Unreadable {
        namespace: String,
        name: String,
        source: RecordError,
    },
    #[error("reading boot image controller state {namespace}/{name}: {source}")]
    Read {
        namespace: String,
        name: String,
        source: kube::Error,
    },
    #[error("could not record the boot image controller state in {namespace}/{name}: {source}")]
    Write {
        namespace: String,
        name: String,
        source: kube::Error,
    },
}

/// A key of the record that does not hold what it should.
#[derive(Debug, thiserror::Error)]
#[error("data.{key} is not a hot-loop record: {source}")]
pub struct RecordError {
    pub key: &'static str,
    pub source: serde_json::Error,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_kind_as_upstream_does() {
        let cpms = Subject {
            kind: MachineKind::ControlPlaneMachineSet,
            name: "cluster".into(),
        };
        assert!(PassError::HotLoop(cpms.clone()).to_string().starts_with(
            "refusing to reconcile ControlPlaneMachineSet cluster, hot loop detected."
        ));
        assert!(
            PassError::HotLoop(Subject::machineset("a"))
                .to_string()
                .starts_with("refusing to reconcile machineset a, hot loop detected.")
        );
        assert_eq!(cpms.key(), "ControlPlaneMachineSet/cluster");
        assert_eq!(Subject::machineset("cluster").key(), "cluster");
    }
}
