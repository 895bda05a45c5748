fn main() -> std::process::ExitCode {
    one_malloc_arena();
    mco_host::cli::main()
}

/// glibc gives each thread that allocates an arena of its own, up to eight
/// per core, and memory freed in one arena is not reused by another: at
/// 5,000 nodes the host kept 30 MiB more resident with them than with one
/// (`make bench-scale`). Its allocations come from a handful of threads,
/// too few to contend for one. `MALLOC_ARENA_MAX`, when set, still wins.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code, reason = "mallopt is the only way to set this")]
fn one_malloc_arena() {
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only sets an allocator tunable, and this runs
        // first in main, before any other thread exists.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn one_malloc_arena() {}
