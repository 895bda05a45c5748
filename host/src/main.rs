fn main() -> std::process::ExitCode {
    tune_malloc();
    mco_host::cli::main()
}

/// Two glibc tunables that decide how much the host keeps resident at
/// 5,000 nodes (`make bench-scale`, docs/dev/records/benchmarks.md); the environment's
/// `MALLOC_ARENA_MAX` and `MALLOC_MMAP_THRESHOLD_`, when set, still win.
///
/// - One arena: glibc gives each thread that allocates an arena of its own,
///   up to eight per core, and memory freed in one arena is not reused by
///   another, so more stays resident (docs/dev/records/incidents.md).
///   Its allocations come from a handful of threads, too few to contend.
/// - A fixed mmap threshold of 128 KiB: by default glibc raises the
///   threshold to the size of each large block freed, so the watch lists'
///   and the API responses' buffers end up inside the heap, whose freed
///   middle is never returned. Fixed, they are mapped and unmapped.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code, reason = "mallopt is the only way to set these")]
fn tune_malloc() {
    for (variable, parameter, value) in [
        ("MALLOC_ARENA_MAX", libc::M_ARENA_MAX, 1),
        ("MALLOC_MMAP_THRESHOLD_", libc::M_MMAP_THRESHOLD, 128 << 10),
    ] {
        if std::env::var_os(variable).is_none() {
            // SAFETY: mallopt only sets an allocator tunable, and this
            // runs first in main, before any other thread exists.
            unsafe {
                libc::mallopt(parameter, value);
            }
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_malloc() {}
