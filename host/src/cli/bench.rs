//! `mco-host guests bench MODULE --cases DIR...`: what a module costs on
//! case folders (the layout `guests test` reads), printed beside the
//! limits its registry entry would run it under, so a team sees before a
//! swap whether its module fits. Every decision gets a fresh store, as
//! `run` gives every MachineConfigNode, and is timed whole: the host
//! rules, instantiation, the guest call and the checks of its answer.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::{Failure, SandboxArgs, print};
use crate::cases::{self, Case};
use mco_job::jobs::bench::{BenchCaseError, BenchModule, Timed};
use mco_registry::EntryName;
use mco_registry::table::Registry;
use mco_runtime::{LoadError, Runtime, RuntimeConfig};

/// The most a ConfigMap holds (data and binaryData together): a larger
/// module must travel by OCI.
const CONFIGMAP_BYTES: usize = 1 << 20;
/// The ceilings a measurement runs under, far above any entry's limits, so
/// a module that does not fit still gets its figures instead of failing at
/// the first cap it meets.
const MEASURE_MEMORY: usize = 1 << 30;
const MEASURE_DEADLINE: Duration = Duration::from_secs(60);

#[derive(Args)]
pub(super) struct BenchArgs {
    /// The module to measure (a file).
    #[arg(value_name = "MODULE")]
    module: PathBuf,
    /// Case folders (as `guests test` takes them), or folders of them.
    #[arg(long, value_name = "DIR", required = true, num_args = 1..)]
    cases: Vec<PathBuf>,
    /// Decisions timed per case.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
}

#[derive(Debug, thiserror::Error)]
pub(super) enum BenchError {
    #[error("no case reached the module: the host rules decided every one alone")]
    NothingMeasured,
    #[error("{failed} of {total} jobs do not fit their limits")]
    DoesNotFit { failed: usize, total: usize },
    /// A case that could not be measured ([`mco_job::jobs::Cases::bench`]).
    #[error(transparent)]
    Case(#[from] BenchCaseError),
}

impl BenchError {
    pub(super) fn exit_code(&self) -> u8 {
        match self {
            BenchError::NothingMeasured => 2,
            BenchError::DoesNotFit { .. } => 1,
            BenchError::Case(
                BenchCaseError::Input(_) | BenchCaseError::Load(LoadError::Read { .. }),
            ) => 2,
            BenchError::Case(BenchCaseError::Load(_) | BenchCaseError::Guest(_)) => 3,
            BenchError::Case(BenchCaseError::Other(_)) => 1,
        }
    }
}

/// One entry's measurements, over the cases that reached its guest.
#[derive(Default)]
struct Stats {
    cases: usize,
    times: Vec<Duration>,
    /// The first decision that failed, and why.
    failure: Option<String>,
    peak_memory: usize,
}

impl Stats {
    /// Adds `case`'s timed decisions.
    fn add(&mut self, case: &Case, timed: Timed) {
        self.cases += 1;
        self.times.extend(timed.times);
        if let Some(e) = timed.failure {
            self.failure
                .get_or_insert_with(|| format!("{}: {e}", case.dir.display()));
        }
        self.peak_memory = self.peak_memory.max(timed.peak_memory);
    }
}

struct Bench {
    module: BenchModule,
    runs: u32,
    /// By entry, in the registry's order (jobs, then keys).
    measured: BTreeMap<EntryName, Stats>,
    /// Cases the host rules decided without the module.
    host_alone: usize,
}

impl Bench {
    fn case(&mut self, case: &Case) -> Result<(), BenchCaseError> {
        match (case.cases.bench)(
            &case.dir,
            &mut self.module,
            self.runs,
            &crate::FEATURE_GATES,
        )? {
            Some(timed) => self
                .measured
                .entry(timed.entry.clone())
                .or_default()
                .add(case, timed),
            None => self.host_alone += 1,
        }
        Ok(())
    }
}

/// The limits `run` would give the job: its registry entry's, the host's
/// flags where the entry sets none (or without `--registry`).
struct Limits {
    deadline: Duration,
    deadline_from_entry: bool,
    memory: usize,
    memory_from_entry: bool,
    /// `--guest-memory-max-mib`: the most any entry may ask for.
    host_memory: usize,
}

fn limits(sandbox: &SandboxArgs, registry: &Registry, job: &EntryName) -> Limits {
    let entry = registry.get(job);
    let deadline = entry.and_then(|e| e.deadline);
    let memory_mib = entry.and_then(|e| e.memory_mib);
    Limits {
        deadline: deadline.unwrap_or(sandbox.guest_deadline),
        deadline_from_entry: deadline.is_some(),
        memory: memory_mib
            .unwrap_or(sandbox.guest_memory_mib)
            .saturating_mul(1 << 20),
        memory_from_entry: memory_mib.is_some(),
        host_memory: sandbox.memory_ceiling_mib().saturating_mul(1 << 20),
    }
}

/// One row of the table, and whether the job fits.
struct Row {
    cells: [String; 9],
    fits: bool,
}

fn row(job: &EntryName, stats: &Stats, limits: &Limits) -> Row {
    let peak = stats.peak_memory;
    let mut sorted = stats.times.clone();
    sorted.sort();
    let (p50, p99) = (percentile(&sorted, 50), percentile(&sorted, 99));
    let mut problems = Vec::new();
    if let Some(failure) = &stats.failure {
        problems.push(format!("a decision failed ({failure})"));
    }
    if p99 > limits.deadline {
        problems.push(format!(
            "p99 {} > deadline {}",
            duration(p99),
            duration(limits.deadline)
        ));
    }
    if peak > limits.memory {
        problems.push(format!(
            "peak memory {} > memoryMiB {}",
            mib(peak),
            limits.memory >> 20
        ));
    }
    if limits.memory > limits.host_memory {
        problems.push(format!(
            "memoryMiB {} is above the host's --guest-memory-max-mib {}, so run refuses the entry",
            limits.memory >> 20,
            limits.host_memory >> 20
        ));
    }
    let source = |from_entry: bool| if from_entry { "" } else { " (default)" };
    let verdict = if problems.is_empty() {
        "fits".to_string()
    } else {
        format!("does not fit: {}", problems.join("; "))
    };
    Row {
        cells: [
            job.to_string(),
            stats.cases.to_string(),
            stats.times.len().to_string(),
            duration(p50),
            duration(p99),
            format!(
                "{}{}",
                humantime::format_duration(limits.deadline),
                source(limits.deadline_from_entry)
            ),
            mib(peak),
            format!(
                "{}{}",
                limits.memory >> 20,
                source(limits.memory_from_entry)
            ),
            verdict,
        ],
        fits: problems.is_empty(),
    }
}

/// Nearest rank: the smallest time that `pct` percent of the runs do not
/// exceed.
fn percentile(sorted: &[Duration], pct: usize) -> Duration {
    let rank = (sorted.len() * pct).div_ceil(100).max(1);
    sorted.get(rank - 1).copied().unwrap_or_default()
}

fn duration(d: Duration) -> String {
    let micros = d.as_secs_f64() * 1e6;
    if micros < 1_000.0 {
        format!("{micros:.0} µs")
    } else if micros < 1_000_000.0 {
        format!("{:.2} ms", micros / 1e3)
    } else {
        format!("{:.2} s", micros / 1e6)
    }
}

fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

const HEADER: [&str; 9] = [
    "job",
    "cases",
    "decisions",
    "p50",
    "p99",
    "deadline",
    "peak memory",
    "memoryMiB",
    "verdict",
];

/// Columns padded to their widest cell; the verdict, last, is not.
fn table(rows: &[Row]) -> String {
    let mut widths = HEADER.map(|h| h.chars().count());
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(&row.cells) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut text = String::new();
    let lines =
        std::iter::once(HEADER.map(str::to_string)).chain(rows.iter().map(|r| r.cells.clone()));
    for cells in lines {
        let mut line = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<width$}  ", width = widths[i]);
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

pub(super) fn run(sandbox: &SandboxArgs, args: BenchArgs) -> Result<(), Failure> {
    let found = cases::find(&args.cases)?;
    let name = args.module.display().to_string();
    let bytes = std::fs::read(&args.module).map_err(|source| LoadError::Read {
        path: name.clone(),
        source,
    })?;
    let registry = match sandbox.registry {
        Some(_) => sandbox.registry()?,
        None => Registry::default(),
    };
    let runtime = Runtime::new(RuntimeConfig {
        deadline: MEASURE_DEADLINE,
        memory_limit: MEASURE_MEMORY,
        memory_ceiling: MEASURE_MEMORY,
        pooling: !sandbox.no_pooling,
        max_concurrent: 1,
        cache_dir: None,
        perf_map: sandbox.perf_map,
    })?;
    let size = bytes.len();
    let mut bench = Bench {
        module: BenchModule::new(name.clone(), bytes, runtime),
        runs: args.runs,
        measured: BTreeMap::new(),
        host_alone: 0,
    };
    for case in &found {
        bench.case(case).map_err(BenchError::from)?;
    }

    let rows: Vec<Row> = bench
        .measured
        .iter()
        .map(|(job, stats)| row(job, stats, &limits(sandbox, &registry, job)))
        .collect();
    let Some(compile) = bench.module.compile_time().filter(|_| !rows.is_empty()) else {
        return Err(BenchError::NothingMeasured.into());
    };

    let mut text = format!(
        "module  {name}: {size} bytes ({}), compiled in {}\n",
        mib(size),
        duration(compile)
    );
    if size > CONFIGMAP_BYTES {
        text.push_str(
            "        over the 1 MiB a ConfigMap holds: it must travel by OCI (an `oci:` entry)\n",
        );
    }
    text.push_str(&table(&rows));
    if bench.host_alone > 0 {
        let _ = writeln!(
            text,
            "{} cases decided by the host rules alone, not timed",
            bench.host_alone
        );
    }
    print(&text)?;
    let failed = rows.iter().filter(|r| !r.fits).count();
    if failed > 0 {
        return Err(BenchError::DoesNotFit {
            failed,
            total: rows.len(),
        }
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let sorted: Vec<Duration> = (1..=100).map(ms).collect();
        assert_eq!(percentile(&sorted, 50), ms(50));
        assert_eq!(percentile(&sorted, 99), ms(99));
        assert_eq!(percentile(&[ms(7)], 99), ms(7));
        assert_eq!(percentile(&[ms(1), ms(9)], 50), ms(1));
        assert_eq!(percentile(&[ms(1), ms(9)], 99), ms(9));
    }

    #[test]
    fn durations_read_at_their_scale() {
        assert_eq!(duration(Duration::from_micros(42)), "42 µs");
        assert_eq!(duration(Duration::from_micros(1_500)), "1.50 ms");
        assert_eq!(duration(Duration::from_millis(2_250)), "2.25 s");
    }
}
