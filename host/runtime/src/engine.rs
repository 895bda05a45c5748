//! The single `Engine` and every knob that bounds a guest, in one place.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use super::error::LoadError;

/// How long one epoch tick is. Deadlines are rounded up to whole ticks.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// What bounds every guest evaluation.
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// Wall-clock budget of one evaluation (instantiation + call).
    pub deadline: Duration,
    /// Cap on a guest's linear memory, in bytes, unless its registry entry
    /// sets its own.
    pub memory_limit: usize,
    /// The most any guest's cap may be (a registry entry's `memoryMiB`), in
    /// bytes: the pooling allocator's slots are this size. Below
    /// `memory_limit` it counts as `memory_limit`.
    pub memory_ceiling: usize,
    /// Pre-reserve instance slots (fast instantiation). When the address
    /// space cannot be reserved the runtime falls back to on-demand.
    pub pooling: bool,
    /// How many evaluations may run at once with pooling.
    pub max_concurrent: u32,
    /// Where precompiled guests are cached; `None` compiles every start.
    pub cache_dir: Option<std::path::PathBuf>,
    /// Write `/tmp/perf-<pid>.map` so that `perf report` names the guests'
    /// functions (the benches' `MCO_PERF_MAP=1`); off in the controller.
    pub perf_map: bool,
}

/// The default linear-memory cap of one guest (`--guest-memory-mib`), and
/// the most any registry entry may ask for unless `--guest-memory-max-mib`
/// admits more.
///
/// What a guest returns lives in its linear memory first, so the cap is
/// also the bound on any answer: a guest cannot build a 48 MiB skip reason
/// under a 12 MiB cap, it traps at its memory limit instead, and the host
/// never copies it. Lifting an answer that fits copies at most the cap into
/// the host, next to the guest's memory, so one evaluation in flight holds
/// at most 2 × 12 = 24 MiB beyond the host's own state.
///
/// The worst case under `deploy/deployment.yaml`'s 256 MiB limit:
///
/// ```text
///   evaluations in flight:  2 MCN (mcn::controller::EVALUATIONS)
///                         + 1 boot image batch (one batch at a time)
///                         + 1 load/smoke evaluation of a swapped module
///                         = 4 × 24 MiB                          =  96 MiB
///   idle pooled slots:      8 (DEFAULT_SLOTS) × 2 MiB kept resident =  16 MiB
///   the host at 5,000 nodes (watch caches, `make bench-scale`)  ~ 130 MiB
///                                                               -------
///                                                               ~ 242 MiB < 256 MiB
/// ```
///
/// The shipped guests use a few MiB (a stream of a few hundred KiB parsed,
/// one node's facts); 12 MiB leaves them room. An entry that asks for more
/// (a guest in Python starts at about 13 MiB of CPython heap) adds twice its
/// excess per evaluation of its own in flight, and only its own.
pub const DEFAULT_MEMORY_MIB: usize = 12;
/// Pooling-allocator slots: twice the evaluations in flight above.
pub const DEFAULT_SLOTS: u32 = 8;
/// Core module instances one guest may be made of, in a store and per
/// pooled slot. A Rust guest is 3; a componentize-py guest is about 40, as
/// CPython's libraries and extension modules are linked as a core module
/// each. The count is fixed when a module is built, so it bounds a guest's
/// shape, not what it can do: its memory cap and deadline do that.
pub const MAX_CORE_INSTANCES: u32 = 64;
/// What an idle pooled slot keeps mapped of its linear memory (the stack
/// and data segments of a Rust guest sit at its start).
const KEEP_RESIDENT: usize = 2 << 20;

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            deadline: Duration::from_secs(1),
            memory_limit: DEFAULT_MEMORY_MIB << 20,
            memory_ceiling: DEFAULT_MEMORY_MIB << 20,
            pooling: true,
            max_concurrent: DEFAULT_SLOTS,
            cache_dir: None,
            perf_map: false,
        }
    }
}

/// The two bounds of one guest's evaluations. The runtime's configuration
/// gives the defaults; a registry entry may set its own (never more memory
/// than the pooling allocator's slots hold).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GuestLimits {
    /// Wall-clock budget of one evaluation (instantiation + call).
    pub deadline: Duration,
    /// Cap on the guest's linear memory, in bytes.
    pub memory_limit: usize,
}

impl GuestLimits {
    /// The deadline in epoch ticks, rounded up; never zero.
    pub fn deadline_ticks(&self) -> u64 {
        let ticks = self.deadline.as_nanos().div_ceil(EPOCH_TICK.as_nanos());
        u64::try_from(ticks).unwrap_or(u64::MAX).max(1)
    }
}

/// Owns the engine and the epoch ticker that enforces deadlines.
#[derive(Clone)]
pub struct Runtime {
    engine: Engine,
    config: Arc<RuntimeConfig>,
    pooling: bool,
}

impl Runtime {
    pub fn new(mut config: RuntimeConfig) -> Result<Self, LoadError> {
        config.memory_ceiling = config.memory_ceiling.max(config.memory_limit);
        let (engine, pooling) = match config.pooling {
            true => match Engine::new(&wasmtime_config(&config, true)) {
                Ok(engine) => (engine, true),
                Err(err) => {
                    tracing::warn!(error = %err, "pooling allocator unavailable, using on-demand instantiation");
                    (on_demand(&config)?, false)
                }
            },
            false => (on_demand(&config)?, false),
        };
        start_ticker(&engine)
            .map_err(|e| LoadError::Engine(format!("could not start the epoch ticker: {e}")))?;
        Ok(Runtime {
            engine,
            config: Arc::new(config),
            pooling,
        })
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    pub fn uses_pooling(&self) -> bool {
        self.pooling
    }

    /// The limits of a guest whose registry entry sets none.
    pub fn default_limits(&self) -> GuestLimits {
        GuestLimits {
            deadline: self.config.deadline,
            memory_limit: self.config.memory_limit,
        }
    }
}

fn on_demand(config: &RuntimeConfig) -> Result<Engine, LoadError> {
    Engine::new(&wasmtime_config(config, false)).map_err(|e| LoadError::Engine(e.to_string()))
}

fn wasmtime_config(config: &RuntimeConfig, pooling: bool) -> Config {
    let mut wasm = Config::new();
    // Deadlines: cheaper than fuel, and every store gets one (see store.rs).
    wasm.epoch_interruption(true);
    // Guests are synchronous; the async component runtime only adds cost.
    wasm.concurrency_support(false);
    // Instantiation maps the initial heap copy-on-write instead of copying it.
    wasm.memory_init_cow(true);
    // Deterministic floating point, so wasm and native results agree.
    wasm.cranelift_nan_canonicalization(true);
    if config.perf_map {
        wasm.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    if pooling {
        let slots = config.max_concurrent.max(1);
        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(slots)
            .total_core_instances(slots * MAX_CORE_INSTANCES)
            .max_core_instances_per_component(MAX_CORE_INSTANCES)
            .total_memories(slots * 2)
            .total_tables(slots * 4)
            .total_stacks(slots)
            .max_memory_size(config.memory_ceiling.max(config.memory_limit))
            // Keep the first pages of a slot mapped between evaluations: the
            // first call's page faults dominate a fresh instance's cost.
            .linear_memory_keep_resident(KEEP_RESIDENT.min(config.memory_limit))
            .table_keep_resident(64 << 10)
            // Reset only the pages an evaluation touched (Linux 6.7+ where
            // available; otherwise the memset above): the reset of a slot
            // was a quarter of a fresh evaluation (docs/dev/records/benchmarks.md).
            .pagemap_scan(wasmtime::Enabled::Auto);
        wasm.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    wasm
}

/// Advances the engine's epoch every tick until the engine is dropped.
/// Without it no deadline would ever fire, so failing to start is fatal.
fn start_ticker(engine: &Engine) -> std::io::Result<()> {
    let weak = engine.weak();
    thread::Builder::new()
        .name("wasm-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                thread::sleep(EPOCH_TICK);
            }
        })?;
    Ok(())
}
