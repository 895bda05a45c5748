//! What `guests bench` asks of a job ([`Cases::bench`](super::Cases::bench)):
//! one case folder's decisions, timed with the module under test as the
//! guest of the entry the case reaches. The table, the limits and the
//! exit statuses are the command's (`cli/bench.rs`).

use std::collections::BTreeMap;
use std::fmt::Display;
use std::time::{Duration, Instant};

use mco_registry::EntryName;
use mco_runtime::{Guest, GuestError, GuestModule, LoadError, Runtime, World};

/// The module under test, compiled once per world the cases need.
pub struct BenchModule {
    name: String,
    bytes: Vec<u8>,
    runtime: Runtime,
    compiled: BTreeMap<&'static str, GuestModule>,
    /// How long validating and compiling took, the first time.
    compile: Option<Duration>,
}

impl BenchModule {
    pub fn new(name: String, bytes: Vec<u8>, runtime: Runtime) -> BenchModule {
        BenchModule {
            name,
            bytes,
            runtime,
            compiled: BTreeMap::new(),
            compile: None,
        }
    }

    /// A guest of its own, so its peak memory is its case's alone; the
    /// module is compiled for the world on first use.
    pub fn guest<W: World>(&mut self) -> Result<Guest<W>, LoadError> {
        let module = match self.compiled.get(W::INTERFACE) {
            Some(module) => module.clone(),
            None => {
                let started = Instant::now();
                let module =
                    GuestModule::from_bytes(&self.runtime, &self.name, &self.bytes, W::INTERFACE)?;
                self.compile.get_or_insert(started.elapsed());
                self.compiled.insert(W::INTERFACE, module.clone());
                module
            }
        };
        Guest::new(&self.runtime, module)
    }

    /// How long the first compilation took; none before one.
    pub fn compile_time(&self) -> Option<Duration> {
        self.compile
    }
}

/// One case's decisions, timed.
pub struct Timed {
    /// The registry entry whose guest made them.
    pub entry: EntryName,
    pub times: Vec<Duration>,
    /// Why the first decision that failed did.
    pub failure: Option<String>,
    /// The largest linear memory a decision reached, in bytes.
    pub peak_memory: usize,
}

impl Timed {
    /// Times `runs` decisions of `guest` as `entry`'s, each whole (host
    /// rules, instantiation, the call, the checks of its answer); the
    /// first failure ends them.
    pub fn run<W, T, E: Display>(
        entry: EntryName,
        guest: &Guest<W>,
        runs: u32,
        mut decide: impl FnMut(&Guest<W>) -> Result<T, E>,
    ) -> Timed {
        let mut times = Vec::new();
        let mut failure = None;
        for _ in 0..runs {
            let started = Instant::now();
            let result = decide(guest);
            times.push(started.elapsed());
            if let Err(e) = result {
                failure = Some(e.to_string());
                break;
            }
        }
        Timed {
            entry,
            times,
            failure,
            peak_memory: guest.peak_memory(),
        }
    }
}

/// Why a case could not be measured, as `guests bench` maps it to the exit
/// statuses of `guests test`.
#[derive(Debug, thiserror::Error)]
pub enum BenchCaseError {
    /// The case's files are missing or malformed (exit status 2).
    #[error(transparent)]
    Input(Box<dyn std::error::Error + Send + Sync>),
    /// The module is not a guest of the case's job (exit status 3).
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The guest failed where no decision is timed (exit status 3).
    #[error(transparent)]
    Guest(#[from] GuestError),
    /// Anything else (exit status 1).
    #[error("{0}")]
    Other(String),
}

impl BenchCaseError {
    /// A case file's error.
    pub fn input(error: impl std::error::Error + Send + Sync + 'static) -> BenchCaseError {
        BenchCaseError::Input(Box::new(error))
    }
}
