//! The only way to make a `Store`: every store gets the memory cap and the
//! epoch deadline, so no evaluation can run unbounded by forgetting one.

use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, Store, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::engine::{GuestLimits, MAX_CORE_INSTANCES, Runtime};
use super::error::GuestError;

/// Guest stderr kept per evaluation (a panic message fits easily).
const STDERR_CAPACITY: usize = 16 << 10;

/// Per-evaluation host state: an empty WASI context (no files, env, args,
/// network or clocks; a fixed random seed) and the limits.
pub struct GuestState {
    wasi: WasiCtx,
    table: ResourceTable,
    limits: Limits,
    stderr: MemoryOutputPipe,
}

impl GuestState {
    /// Whether the guest asked for more memory than its cap allows.
    pub fn hit_memory_limit(&self) -> bool {
        self.limits.denied
    }

    /// The largest size any one linear memory of this store was granted,
    /// in bytes: what the memory cap (`memoryMiB`) bounds, since the cap
    /// applies to each memory.
    pub fn peak_memory(&self) -> usize {
        self.limits.peak
    }

    /// What the guest wrote to stderr (a Rust panic message lands here).
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.contents())
            .trim()
            .to_string()
    }

    /// Passes what a guest printed on to the host's logs.
    pub fn log_stderr(&self, guest: &str) {
        let stderr = self.stderr();
        if !stderr.is_empty() {
            tracing::info!(guest, stderr = %stderr, "guest wrote to stderr");
        }
    }
}

impl WasiView for GuestState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// `StoreLimits` plus a record of whether it refused a growth, so a guest
/// that dies after a refused allocation is reported as out of memory, and
/// of the largest memory it granted (the initial size counts: wasmtime
/// asks the limiter for it too).
struct Limits {
    inner: StoreLimits,
    denied: bool,
    peak: usize,
}

impl ResourceLimiter for Limits {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = self.inner.memory_growing(current, desired, maximum)?;
        self.denied |= !allowed;
        if allowed {
            self.peak = self.peak.max(desired);
        }
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = self.inner.table_growing(current, desired, maximum)?;
        self.denied |= !allowed;
        Ok(allowed)
    }

    fn instances(&self) -> usize {
        self.inner.instances()
    }

    fn tables(&self) -> usize {
        self.inner.tables()
    }

    fn memories(&self) -> usize {
        self.inner.memories()
    }
}

impl Runtime {
    /// A fresh store for one evaluation, with the guest's memory cap and
    /// deadline.
    pub fn new_store(&self, limits: &GuestLimits) -> Store<GuestState> {
        let stderr = MemoryOutputPipe::new(STDERR_CAPACITY);
        let wasi = WasiCtxBuilder::new()
            .stderr(stderr.clone())
            // Rust's HashMap asks for a seed; a fixed one keeps guests
            // deterministic. Nothing else random is linked for guests.
            .insecure_random_seed(0)
            .build();
        let store_limits = StoreLimitsBuilder::new()
            .memory_size(limits.memory_limit)
            .instances(MAX_CORE_INSTANCES as usize)
            .tables(16)
            .memories(4)
            .build();
        let state = GuestState {
            wasi,
            table: ResourceTable::new(),
            limits: Limits {
                inner: store_limits,
                denied: false,
                peak: 0,
            },
            stderr,
        };
        let mut store = Store::new(self.engine(), state);
        store.limiter(|state| &mut state.limits);
        store.set_epoch_deadline(limits.deadline_ticks());
        store
    }

    /// Gives a store a fresh deadline before the next call on it.
    pub fn rearm(&self, store: &mut Store<GuestState>, limits: &GuestLimits) {
        store.set_epoch_deadline(limits.deadline_ticks());
    }

    /// Classifies a failed instantiation or call under the guest's limits.
    pub fn classify(
        &self,
        guest: &str,
        err: &wasmtime::Error,
        state: &GuestState,
        limits: &GuestLimits,
    ) -> GuestError {
        GuestError::classify(
            guest,
            err,
            state.hit_memory_limit(),
            state.stderr(),
            limits.deadline,
            limits.memory_limit,
        )
    }
}
