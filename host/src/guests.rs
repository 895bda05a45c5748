//! The guests serving each job right now. Controllers read the current set
//! for every evaluation, so a new set takes effect on the next one while
//! evaluations already running finish on the modules they started with.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use crate::runtime::{BootImageGuest, McnGuest};

/// One loaded module per job.
pub struct GuestSet {
    pub mcn: McnGuest,
    /// By Infrastructure `status.platformStatus.type`; a platform without a
    /// guest gets the common rules and then `noop`.
    pub boot_images: BTreeMap<String, BootImageGuest>,
}

/// A cheap handle on the current [`GuestSet`].
#[derive(Clone)]
pub struct Guests {
    current: Arc<RwLock<Arc<GuestSet>>>,
}

impl Guests {
    pub fn new(set: GuestSet) -> Guests {
        Guests {
            current: Arc::new(RwLock::new(Arc::new(set))),
        }
    }

    pub fn current(&self) -> Arc<GuestSet> {
        // A poisoned lock only means a writer panicked between two complete
        // sets; the set inside is still whole.
        match self.current.read() {
            Ok(set) => set.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Replaces the whole set at once.
    pub fn replace(&self, set: GuestSet) {
        let set = Arc::new(set);
        match self.current.write() {
            Ok(mut current) => *current = set,
            Err(poisoned) => *poisoned.into_inner() = set,
        }
    }
}
