//! What the boot image controller remembers across restarts and failovers,
//! kept in one ConfigMap in the host's namespace:
//!
//! - `hot-loops.json`: per MachineSet (and per ControlPlaneMachineSet, under
//!   its own key, `ControlPlaneMachineSet/<name>`), the last patch applied
//!   and how many times in a row. Upstream keeps this in memory, so a restart re-arms a
//!   competing writer's loop; here the guard outlives the process.
//! - `known-images`: every boot image seen in a stream, one per line, so a
//!   MachineSet installed from an older stream still counts as RHCOS.

use std::collections::{BTreeMap, BTreeSet};

use mco_bootimage::vcenter::TemplateImport;
use serde::{Deserialize, Serialize};

use super::error::RecordError;

/// Patches of a MachineSet to the same target allowed in a row; the next
/// one is refused (upstream's `HotLoopLimit`).
pub const HOT_LOOP_LIMIT: u32 = 3;
/// Bound on remembered images, far above real history (upstream's AMI
/// allowlist holds under 10,000) and well inside a ConfigMap's 1 MiB.
pub const MAX_KNOWN_IMAGES: usize = 30_000;

const HOT_LOOPS_KEY: &str = "hot-loops.json";
const KNOWN_IMAGES_KEY: &str = "known-images";

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ControllerState {
    pub hot_loops: BTreeMap<String, HotLoop>,
    pub known_images: BTreeSet<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HotLoop {
    /// sha256 of the merge patch: the same patch means the same target.
    pub patch: String,
    pub count: u32,
}

/// The guard's verdict on a patch about to be applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    Allow,
    /// The same patch was applied [`HOT_LOOP_LIMIT`] times in a row: someone
    /// keeps undoing it.
    HotLoop,
}

/// Identifies what a decision writes, for the hot-loop guard: equal patches
/// have equal fingerprints (the records written before vSphere hold these).
/// A vSphere decision that imports a template is counted by the release it
/// imports under that template name, as upstream counts it by the OVA
/// release (`getMAPIBootImageValue`): the template is replaced in place,
/// so the same import again means someone keeps undoing it.
pub fn decision_fingerprint(patch: &serde_json::Value, import: Option<&TemplateImport>) -> String {
    let value = match import {
        None => patch.to_string(),
        Some(import) => serde_json::json!({
            "patch": patch,
            "import": {"template": import.template, "release": import.release},
        })
        .to_string(),
    };
    mco_registry_formats::blob::digest(value.as_bytes())
}

impl ControllerState {
    /// Reads the ConfigMap's `data`. An unreadable record is an error, not
    /// an empty state: forgetting a hot loop would let it run again.
    pub fn from_data(data: &BTreeMap<String, String>) -> Result<ControllerState, RecordError> {
        let hot_loops = match data.get(HOT_LOOPS_KEY) {
            None => BTreeMap::new(),
            Some(text) => serde_json::from_str(text).map_err(|source| RecordError {
                key: HOT_LOOPS_KEY,
                source,
            })?,
        };
        let known_images = data
            .get(KNOWN_IMAGES_KEY)
            .map(|text| super::rules::known_images_from_text(text))
            .unwrap_or_default();
        Ok(ControllerState {
            hot_loops,
            known_images,
        })
    }

    pub fn to_data(&self) -> BTreeMap<String, String> {
        let mut data = BTreeMap::new();
        if !self.hot_loops.is_empty() {
            // A map of plain structs cannot fail to serialize.
            let text = serde_json::to_string(&self.hot_loops).unwrap_or_default();
            data.insert(HOT_LOOPS_KEY.to_owned(), text);
        }
        if !self.known_images.is_empty() {
            let mut text = self
                .known_images
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join("\n");
            text.push('\n');
            data.insert(KNOWN_IMAGES_KEY.to_owned(), text);
        }
        data
    }

    pub fn guard(&self, machineset: &str, fingerprint: &str) -> Guard {
        match self.hot_loops.get(machineset) {
            Some(h) if h.patch == fingerprint && h.count >= HOT_LOOP_LIMIT => Guard::HotLoop,
            _ => Guard::Allow,
        }
    }

    /// Counts an applied patch: one more in a row if it is the same as the
    /// last, else the first of a new run.
    pub fn record_patch(&mut self, machineset: &str, fingerprint: &str) {
        let entry = self
            .hot_loops
            .entry(machineset.to_owned())
            .or_insert_with(|| HotLoop {
                patch: fingerprint.to_owned(),
                count: 0,
            });
        if entry.patch != fingerprint {
            entry.patch = fingerprint.to_owned();
            entry.count = 0;
        }
        entry.count = entry.count.saturating_add(1);
    }

    /// Forgets MachineSets that no longer exist or are no longer enrolled:
    /// opting out (and back in) is how an administrator clears a hot loop.
    /// Returns whether anything was forgotten.
    pub fn retain_hot_loops(&mut self, keep: impl Fn(&str) -> bool) -> bool {
        let before = self.hot_loops.len();
        self.hot_loops.retain(|name, _| keep(name));
        self.hot_loops.len() < before
    }

    /// Adds images; returns how many were new. Stops at
    /// [`MAX_KNOWN_IMAGES`] rather than grow the ConfigMap past its limit.
    pub fn learn(&mut self, images: impl IntoIterator<Item = String>) -> usize {
        let mut added = 0;
        for image in images {
            if self.known_images.len() >= MAX_KNOWN_IMAGES {
                break;
            }
            if self.known_images.insert(image) {
                added += 1;
            }
        }
        added
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fingerprints_of_patches_are_those_records_hold_and_imports_count_by_release() {
        // The digest of the patch text, as records before vSphere hold it.
        let patch = json!({"spec": {"ami": "a"}});
        assert_eq!(
            decision_fingerprint(&patch, None),
            mco_registry_formats::blob::digest(patch.to_string().as_bytes())
        );
        let import = |release: &str| TemplateImport {
            server: "vc".into(),
            datacenter: "dc".into(),
            folder: "/dc/vm/c1".into(),
            template: "c1-rhcos-fd".into(),
            release: release.into(),
            url: format!("https://mirror/{release}.ova"),
            sha256: "ab".into(),
            disk_type: None,
        };
        let empty = json!({});
        let first = decision_fingerprint(&empty, Some(&import("9.8.1")));
        let mut mirrored = import("9.8.1");
        mirrored.url = "https://other-mirror/x.ova".into();
        assert_eq!(decision_fingerprint(&empty, Some(&mirrored)), first);
        assert_ne!(decision_fingerprint(&empty, Some(&import("9.8.2"))), first);
        assert_ne!(decision_fingerprint(&empty, None), first);
    }

    #[test]
    fn the_fourth_identical_patch_is_refused() {
        let mut state = ControllerState::default();
        let a = decision_fingerprint(&json!({"ami": "a"}), None);
        let b = decision_fingerprint(&json!({"ami": "b"}), None);
        for _ in 0..HOT_LOOP_LIMIT {
            assert_eq!(state.guard("ms", &a), Guard::Allow);
            state.record_patch("ms", &a);
        }
        assert_eq!(state.guard("ms", &a), Guard::HotLoop);
        // A different target starts a new run; other MachineSets are apart.
        assert_eq!(state.guard("ms", &b), Guard::Allow);
        assert_eq!(state.guard("other", &a), Guard::Allow);
        state.record_patch("ms", &b);
        assert_eq!(state.hot_loops["ms"].count, 1);
        assert!(state.retain_hot_loops(|_| false));
        assert!(state.hot_loops.is_empty());
        assert!(!state.retain_hot_loops(|_| false));
    }

    #[test]
    fn the_record_round_trips_and_refuses_garbage() {
        let mut state = ControllerState::default();
        state.record_patch("ms", "f");
        assert_eq!(state.learn(["ami-1".to_owned(), "ami-1".to_owned()]), 1);
        let back = ControllerState::from_data(&state.to_data()).unwrap();
        assert_eq!(back, state);
        assert_eq!(
            ControllerState::from_data(&BTreeMap::new()).unwrap(),
            ControllerState::default()
        );
        for garbage in [
            "",
            "[]",
            "{\"ms\": 3}",
            "{\"ms\": {\"patch\": 1, \"count\": 1}}",
        ] {
            let data = BTreeMap::from([(HOT_LOOPS_KEY.to_owned(), garbage.to_owned())]);
            let err = ControllerState::from_data(&data).unwrap_err().to_string();
            assert!(err.contains(HOT_LOOPS_KEY), "{err}");
        }
    }

    #[test]
    fn known_images_are_bounded() {
        let mut state = ControllerState::default();
        let added = state.learn((0..MAX_KNOWN_IMAGES + 10).map(|i| format!("ami-{i}")));
        assert_eq!(added, MAX_KNOWN_IMAGES);
        assert_eq!(state.learn(["ami-new".to_owned()]), 0);
    }
}
