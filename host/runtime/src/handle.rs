//! One loaded guest of any world: its module, its pre-instantiated
//! bindings and its limits. Each job adds its own calls on top, as an
//! extension trait on `Guest<ItsWorldPre>` (`McnGuestExt` in the host's
//! `mcn/guest.rs`); everything about linking, limits, fresh stores and
//! failure classification is written once, here.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use wasmtime::Store;
use wasmtime::component::{InstancePre, Linker};

use super::engine::{GuestLimits, Runtime};
use super::error::{GuestError, LoadError};
use super::module::GuestModule;
use super::store::GuestState;

/// A world's pre-instantiated bindings, as `bindgen!` generates them
/// (`NodeStateReporterPre`, ...).
pub trait World: Clone + Sized {
    /// The interface a module must export to serve this world.
    const INTERFACE: &'static str;
    fn bind(pre: InstancePre<GuestState>) -> wasmtime::Result<Self>;
    /// Adds what the host serves to this world's guests beyond the
    /// sandbox's WASI (the handles of `node-inputs`, say); nothing by
    /// default.
    fn link(_linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
        Ok(())
    }
}

/// A guest ready for any number of evaluations, each in a fresh store.
#[derive(Clone)]
pub struct Guest<W> {
    runtime: Runtime,
    module: GuestModule,
    pre: W,
    limits: GuestLimits,
    /// The largest linear memory any evaluation reached (see
    /// [`Guest::peak_memory`]); shared by clones.
    peak_memory: Arc<AtomicUsize>,
}

impl<W: World> Guest<W> {
    /// Links `module` against the sandbox's WASI and type-checks it against
    /// the world; it runs under the runtime's default limits.
    pub fn new(runtime: &Runtime, module: GuestModule) -> Result<Self, LoadError> {
        let wrong_world = |detail: wasmtime::Error| LoadError::WrongWorld {
            module: module.name.clone(),
            expected: W::INTERFACE.to_string(),
            found: format!("{detail:#}"),
        };
        let mut linker = Linker::new(runtime.engine());
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .and_then(|()| W::link(&mut linker))
            .map_err(|e| LoadError::Engine(e.to_string()))?;
        let instance_pre = linker
            .instantiate_pre(&module.component)
            .map_err(wrong_world)?;
        let pre = W::bind(instance_pre).map_err(wrong_world)?;
        Ok(Guest {
            runtime: runtime.clone(),
            limits: runtime.default_limits(),
            module,
            pre,
            peak_memory: Arc::default(),
        })
    }

    /// Validates, compiles and links module bytes (refused unless their
    /// sha256 is `sha256`, when given).
    pub fn load(
        runtime: &Runtime,
        name: &str,
        bytes: &[u8],
        sha256: Option<&str>,
    ) -> Result<Self, LoadError> {
        let module = GuestModule::pinned(runtime, name, bytes, W::INTERFACE, sha256)?;
        Guest::new(runtime, module)
    }

    /// The same guest under its registry entry's own limits. The pooling
    /// allocator's slots are sized for the host's memory ceiling, so an
    /// entry may ask for any cap up to it.
    pub fn with_limits(mut self, limits: GuestLimits) -> Result<Self, LoadError> {
        let ceiling = self.runtime.config().memory_ceiling;
        let refused = if limits.memory_limit > ceiling {
            Some(format!(
                "memory cap {} MiB is above the host's {} MiB (--guest-memory-max-mib)",
                limits.memory_limit >> 20,
                ceiling >> 20
            ))
        } else if limits.memory_limit == 0 || limits.deadline.is_zero() {
            Some("a zero memory cap or deadline would fail every evaluation".to_string())
        } else {
            None
        };
        if let Some(detail) = refused {
            return Err(LoadError::Limits {
                module: self.module.name.clone(),
                detail,
            });
        }
        self.limits = limits;
        Ok(self)
    }
}

impl<W> Guest<W> {
    pub fn module(&self) -> &GuestModule {
        &self.module
    }

    pub fn limits(&self) -> &GuestLimits {
        &self.limits
    }

    pub fn bindings(&self) -> &W {
        &self.pre
    }

    /// A fresh store under this guest's memory cap and deadline.
    pub fn store(&self) -> Store<GuestState> {
        self.runtime.new_store(&self.limits)
    }

    /// The largest linear memory, in bytes, any evaluation of this guest
    /// (or of a clone) has reached so far, as the store's limiter granted
    /// it: what a team compares with `memoryMiB` before a swap.
    pub fn peak_memory(&self) -> usize {
        self.peak_memory.load(Ordering::Relaxed)
    }

    /// A full deadline again before the next call on `store`.
    pub fn rearm(&self, store: &mut Store<GuestState>) {
        self.runtime.rearm(store, &self.limits);
    }

    /// Passes the guest's stderr on to the log, then classifies `result`'s
    /// failure (deadline, memory, stack, trap) with what `store` saw.
    pub fn finish<T>(
        &self,
        store: &Store<GuestState>,
        result: wasmtime::Result<T>,
    ) -> Result<T, GuestError> {
        store.data().log_stderr(&self.module.name);
        self.peak_memory
            .fetch_max(store.data().peak_memory(), Ordering::Relaxed);
        result.map_err(|err| {
            self.runtime
                .classify(&self.module.name, &err, store.data(), &self.limits)
        })
    }

    /// Output the host refuses, as the failure of this guest.
    pub fn invalid_output(&self, detail: String) -> GuestError {
        GuestError::InvalidOutput {
            guest: self.module.name.clone(),
            detail,
        }
    }
}
