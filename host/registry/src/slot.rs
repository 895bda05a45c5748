//! A job's loaded guests: the module serving and the candidate shadowing
//! it ([`Slot`]), loaded from an entry whose bytes are in hand
//! ([`Fetched`]). The set holds every job's slot type-erased ([`Served`]),
//! as the registry knows no job's world; each job's folder reads its own
//! back typed.

use std::any::Any;
use std::fmt::Display;
use std::sync::Arc;

use super::entries::{Entry, Module};
use mco_registry_formats::blob::digest;
use mco_runtime::{Guest, GuestLimits, GuestModule, LoadError, Runtime, World};

/// One entry with its modules' bytes in hand.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub entry: Entry,
    pub bytes: Arc<Vec<u8>>,
    pub candidate: Option<Arc<Vec<u8>>>,
}

impl Fetched {
    pub fn key(&self) -> EntryKey {
        EntryKey {
            entry: self.entry.clone(),
            sha256: digest(&self.bytes),
            candidate_sha256: self.candidate.as_deref().map(|b| digest(b)),
        }
    }
}

/// What a job was loaded from: an entry whose key did not change is
/// reused as it is, not reloaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryKey {
    entry: Entry,
    sha256: String,
    candidate_sha256: Option<String>,
}

impl EntryKey {
    /// Where the active module came from.
    pub fn module(&self) -> String {
        self.entry.module.source.to_string()
    }

    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    pub fn candidate_sha256(&self) -> Option<&str> {
        self.candidate_sha256.as_deref()
    }
}

/// A job's module, and the candidate shadowing it.
#[derive(Clone)]
pub struct Slot<G> {
    pub active: G,
    pub candidate: Option<G>,
}

impl<G> Slot<G> {
    pub fn new(active: G) -> Slot<G> {
        Slot {
            active,
            candidate: None,
        }
    }
}

/// What the registry reads of any slot, whatever its world.
trait Erased: Send + Sync {
    fn active(&self) -> (&GuestModule, &GuestLimits);
    fn candidate(&self) -> Option<&GuestModule>;
    fn as_any(&self) -> &dyn Any;
}

impl<W: World + Send + Sync + 'static> Erased for Slot<Guest<W>> {
    fn active(&self) -> (&GuestModule, &GuestLimits) {
        (self.active.module(), self.active.limits())
    }

    fn candidate(&self) -> Option<&GuestModule> {
        self.candidate.as_ref().map(Guest::module)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// One job's [`Slot`], of a world only its job knows.
#[derive(Clone)]
pub struct Served(Arc<dyn Erased>);

impl Served {
    fn new<W: World + Send + Sync + 'static>(slot: Slot<Guest<W>>) -> Served {
        Served(Arc::new(slot))
    }

    /// Loads, links and smoke-evaluates an entry's module and candidate:
    /// being a component of the right world only proves a module links,
    /// while one that traps or returns garbage on an ordinary object would
    /// fail every evaluation once it serves.
    pub fn load<W, E>(
        runtime: &Runtime,
        fetched: &Fetched,
        smoke: impl Fn(&Guest<W>) -> Result<(), E>,
    ) -> Result<Served, LoadError>
    where
        W: World + Send + Sync + 'static,
        E: Display,
    {
        let slot = load::<W>(runtime, fetched)?;
        for guest in std::iter::once(&slot.active).chain(slot.candidate.as_ref()) {
            smoke(guest).map_err(|e| LoadError::Smoke {
                module: guest.module().name.clone(),
                detail: e.to_string(),
            })?;
        }
        Ok(Served::new(slot))
    }

    /// The slot, if it holds guests of type `G`.
    pub fn get<G: 'static>(&self) -> Option<&Slot<G>> {
        self.0.as_any().downcast_ref()
    }

    pub fn active(&self) -> (&GuestModule, &GuestLimits) {
        self.0.active()
    }

    pub fn candidate(&self) -> Option<&GuestModule> {
        self.0.candidate()
    }
}

/// The limits an entry asks for, the runtime's where it asks for none.
fn limits(runtime: &Runtime, entry: &Entry) -> GuestLimits {
    let default = runtime.default_limits();
    GuestLimits {
        deadline: entry.deadline.unwrap_or(default.deadline),
        memory_limit: entry
            .memory_mib
            .map_or(default.memory_limit, |mib| mib.saturating_mul(1 << 20)),
    }
}

fn load_module<W: World>(
    runtime: &Runtime,
    module: &Module,
    bytes: &[u8],
    limits: GuestLimits,
) -> Result<Guest<W>, LoadError> {
    let name = module.source.to_string();
    Guest::<W>::load(runtime, &name, bytes, module.sha256.as_deref())?.with_limits(limits)
}

/// Loads an entry's module (and candidate) without smoke evaluations, as
/// `eval` runs whatever it is given.
pub fn load<W: World>(runtime: &Runtime, fetched: &Fetched) -> Result<Slot<Guest<W>>, LoadError> {
    let limits = limits(runtime, &fetched.entry);
    let active = load_module(runtime, &fetched.entry.module, &fetched.bytes, limits)?;
    let candidate = match (&fetched.entry.candidate, &fetched.candidate) {
        (Some(module), Some(bytes)) => Some(load_module(runtime, module, bytes, limits)?),
        _ => None,
    };
    Ok(Slot { active, candidate })
}
