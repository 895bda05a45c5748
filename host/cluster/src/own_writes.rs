//! "Our write until the watch shows it." After a write, the watched copy
//! lags behind for a moment; deciding again from it would write the same
//! change twice. Each job keeps what it wrote here and reads through
//! [`OwnWrites::newest`].
//!
//! The watch may also show a write before its response is back. A write
//! therefore opens a [`Flight`] first: what the watch shows of that object
//! meanwhile is held back, and judged against the write once it lands.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::{Resource, ResourceExt};

use super::resource_version;

/// How long our own write may be missing from the watch before the watch
/// is believed (someone deleted the object behind our back).
const WRITE_VISIBILITY: Duration = Duration::from_secs(10);

/// The last object this replica wrote, per name.
pub struct OwnWrites<K> {
    written: Mutex<HashMap<String, (Instant, Arc<K>)>>,
    /// Objects with a write on its way, and the newest resource version
    /// the watch showed of each meanwhile.
    in_flight: Mutex<HashMap<String, u64>>,
}

impl<K> Default for OwnWrites<K> {
    fn default() -> Self {
        OwnWrites {
            written: Mutex::new(HashMap::new()),
            in_flight: Mutex::new(HashMap::new()),
        }
    }
}

/// A write on its way to the API (see [`OwnWrites::take_off`]). Dropped
/// without [`Flight::land`] (the write failed), it just ends.
pub struct Flight<'a, K: Resource> {
    writes: &'a OwnWrites<K>,
    name: String,
}

impl<K: Resource> Flight<'_, K> {
    /// Records what the API returned for the flight's last write. Returns
    /// whether the watch showed a copy newer than it meanwhile: someone
    /// else changed the object, and the caller should decide again.
    pub fn land(self, object: K) -> bool {
        let seen = lock(&self.writes.in_flight).remove(&self.name);
        let newer = seen.is_some_and(|seen| seen > resource_version(&object));
        self.writes.remember(object);
        newer
    }
}

impl<K: Resource> Drop for Flight<'_, K> {
    fn drop(&mut self) {
        lock(&self.writes.in_flight).remove(&self.name);
    }
}

/// A poisoned lock only means another task panicked mid-update of an
/// entry; the map itself is whole.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl<K: Resource> OwnWrites<K> {
    /// Opens a flight for writes to `name`, before the first request goes
    /// out. One reconcile writes an object at a time, so one flight is open
    /// per name at most.
    pub fn take_off(&self, name: &str) -> Flight<'_, K> {
        lock(&self.in_flight).insert(name.to_string(), 0);
        Flight {
            writes: self,
            name: name.to_string(),
        }
    }

    /// Records what the API returned for our write.
    pub fn remember(&self, object: K) {
        let name = object.name_any();
        self.with(|written| written.insert(name, (Instant::now(), Arc::new(object))));
    }

    pub fn forget(&self, name: &str) {
        self.with(|written| written.remove(name));
    }

    /// The newer of the watched copy and our own last write. A write the
    /// watch never shows is trusted only briefly, so a deleted object is
    /// recreated.
    pub fn newest(&self, name: &str, stored: Option<Arc<K>>) -> Option<Arc<K>> {
        self.with(|written| {
            let ours_is_newer = |(at, ours): &(Instant, Arc<K>)| match &stored {
                Some(stored) => resource_version(stored.as_ref()) < resource_version(ours.as_ref()),
                None => at.elapsed() < WRITE_VISIBILITY,
            };
            match written.get(name) {
                Some(entry) if ours_is_newer(entry) => Some(entry.1.clone()),
                _ => {
                    written.remove(name);
                    stored.clone()
                }
            }
        })
    }

    /// Whether a watched copy is one of our own writes (or older than our
    /// last one): the reconcile that wrote it already acted on what it
    /// shows, so its echo need not wake the job again. A copy newer than
    /// our last write (another writer, a deletion) is news. A copy seen
    /// while a write to it is in flight is held back for [`Flight::land`].
    pub fn is_echo(&self, watched: &K) -> bool {
        if let Some(seen) = lock(&self.in_flight).get_mut(&watched.name_any()) {
            *seen = (*seen).max(resource_version(watched));
            return true;
        }
        self.with(|written| {
            written.get(&watched.name_any()).is_some_and(|(_, ours)| {
                resource_version(watched) <= resource_version(ours.as_ref())
            })
        })
    }

    /// Forgets every write the watch has caught up with (`stored` gives the
    /// watched copy by name), so the cache holds only writes in flight and
    /// not a second copy of every object ever written.
    pub fn prune(&self, stored: impl Fn(&str) -> Option<Arc<K>>) {
        self.with(|written| {
            written.retain(|name, (at, ours)| match stored(name) {
                Some(stored) => resource_version(stored.as_ref()) < resource_version(ours.as_ref()),
                None => at.elapsed() < WRITE_VISIBILITY,
            })
        });
    }

    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, (Instant, Arc<K>)>) -> T) -> T {
        f(&mut lock(&self.written))
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    use super::*;

    fn cm(rv: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".into()),
                resource_version: Some(rv.into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    #[test]
    fn only_copies_up_to_our_last_write_are_echoes() {
        let writes = OwnWrites::default();
        assert!(!writes.is_echo(&cm("4")), "nothing written yet");
        writes.remember(cm("5"));
        assert!(writes.is_echo(&cm("4")));
        assert!(writes.is_echo(&cm("5")));
        assert!(!writes.is_echo(&cm("6")), "a newer copy is someone else's");
        writes.forget("a");
        assert!(!writes.is_echo(&cm("5")));
    }

    #[test]
    fn copies_seen_in_flight_are_judged_when_the_write_lands() {
        let writes = OwnWrites::default();
        // The watch shows our write before its response is back.
        let flight = writes.take_off("a");
        assert!(writes.is_echo(&cm("5")));
        assert!(!flight.land(cm("5")), "only our own write was seen");
        assert!(writes.is_echo(&cm("5")));
        // Someone else wrote after us while ours was in flight.
        let flight = writes.take_off("a");
        assert!(writes.is_echo(&cm("7")));
        assert!(flight.land(cm("6")), "a newer copy is news");
        // A failed write ends its flight: the watch is judged as before.
        drop(writes.take_off("a"));
        assert!(!writes.is_echo(&cm("8")));
    }

    #[test]
    fn our_write_wins_until_the_watch_catches_up() {
        let writes = OwnWrites::default();
        assert_eq!(writes.newest("a", None), None);
        writes.remember(cm("5"));
        let newest = |stored: &str| {
            writes
                .newest("a", Some(Arc::new(cm(stored))))
                .and_then(|o| o.metadata.resource_version.clone())
        };
        assert_eq!(newest("4").as_deref(), Some("5"));
        // Not yet watched at all: ours, for a while.
        assert!(writes.newest("a", None).is_some());
        // The watch shows it (or something newer): the watch, and ours is gone.
        assert_eq!(newest("5").as_deref(), Some("5"));
        assert_eq!(newest("3").as_deref(), Some("3"));
        writes.remember(cm("9"));
        writes.forget("a");
        assert_eq!(newest("3").as_deref(), Some("3"));
        // Pruning keeps only what the watch has not shown yet.
        writes.remember(cm("9"));
        writes.prune(|_| Some(Arc::new(cm("9"))));
        assert_eq!(writes.newest("a", None), None);
        writes.remember(cm("9"));
        writes.prune(|_| Some(Arc::new(cm("8"))));
        assert!(writes.newest("a", None).is_some());
    }
}
