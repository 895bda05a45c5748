//! The one Event publisher. Notes are bounded in bytes, as the Events API
//! counts them (a multi-byte note cut by characters can still be refused),
//! and an outcome already published for an object is not published again,
//! so a resync that changes nothing records nothing.

use std::collections::HashMap;
use std::sync::Mutex;

use k8s_openapi::api::core::v1::ObjectReference;
use kube::Client;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

use super::FIELD_MANAGER;

/// The Events API refuses notes over 1 KiB (counted in bytes).
const NOTE_MAX_BYTES: usize = 1024;

/// Publishes Events as this host, once per distinct outcome per key.
pub struct Events {
    recorder: Recorder,
    /// The last (reason, note) published per key (usually the object).
    last: Mutex<HashMap<String, (String, String)>>,
}

/// What happened, as an Event says it.
pub struct Note<'a> {
    pub type_: EventType,
    pub reason: &'a str,
    pub action: &'a str,
    pub note: &'a str,
}

impl Events {
    pub fn new(client: Client, identity: &str) -> Events {
        let reporter = Reporter {
            controller: FIELD_MANAGER.into(),
            instance: Some(identity.to_owned()),
        };
        Events {
            recorder: Recorder::new(client, reporter),
            last: Mutex::new(HashMap::new()),
        }
    }

    /// Publishes `note` about `object` unless the last Event published
    /// under `key` said the same. Returns whether an Event was written.
    pub async fn publish_once(&self, key: &str, object: &ObjectReference, note: Note<'_>) -> bool {
        let said = (note.reason.to_owned(), note.note.to_owned());
        if self.with_last(|last| last.get(key) == Some(&said)) {
            return false;
        }
        let published = self.publish(object, note).await;
        if published {
            self.with_last(|last| last.insert(key.to_owned(), said));
        }
        published
    }

    /// Publishes `note` about `object`. Returns whether an Event was written.
    pub async fn publish(&self, object: &ObjectReference, note: Note<'_>) -> bool {
        let event = Event {
            type_: note.type_,
            reason: note.reason.into(),
            note: Some(mco_k8s_rules::bounded(note.note.to_owned(), NOTE_MAX_BYTES)),
            action: note.action.into(),
            secondary: None,
        };
        match self.recorder.publish(&event, object).await {
            Ok(()) => true,
            Err(err) => {
                tracing::warn!(error = %err, reason = note.reason, "could not publish an Event");
                false
            }
        }
    }

    /// Forgets what was published under `key`: its next outcome is news
    /// even if it repeats (a repeated patch is).
    pub fn forget(&self, key: &str) {
        self.with_last(|last| last.remove(key));
    }

    fn with_last<T>(&self, f: impl FnOnce(&mut HashMap<String, (String, String)>) -> T) -> T {
        match self.last.lock() {
            Ok(mut last) => f(&mut last),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_bounded_in_bytes_on_a_character_boundary() {
        let wide = "é".repeat(800); // 1,600 bytes
        let cut = mco_k8s_rules::bounded(wide, NOTE_MAX_BYTES);
        assert!(cut.len() <= NOTE_MAX_BYTES, "{}", cut.len());
        assert!(cut.trim_end_matches('…').chars().all(|c| c == 'é'));
    }
}
