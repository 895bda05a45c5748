//! The two child processes (etcd, kube-apiserver): spawning, stopping, logs.

use std::fs::OpenOptions;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use rustix::process::{Pid, Signal, kill_process, set_parent_process_death_signal};

/// Grace period between SIGTERM and SIGKILL. The apiserver needs about 1 s and
/// etcd 0.1 s (tests/tools/envtest/README.md); smoke.sh allows 20 s, and so do we.
pub(crate) const STOP_TIMEOUT: Duration = Duration::from_secs(20);

type SpawnJob = (Command, mpsc::SyncSender<io::Result<Child>>);

/// Forks the control-plane processes from one thread that lives exactly as long
/// as the `ControlPlane`.
///
/// Each child asks the kernel for SIGKILL when the thread that forked it exits
/// (`PR_SET_PDEATHSIG` follows the forking *thread*, not the process). A thread
/// of our own means a test binary that is killed outright (timeout, SIGKILL,
/// `panic = "abort"`) does not leave an apiserver and etcd running on a busy
/// machine, while tokio workers or test threads coming and going cannot take
/// the children down early.
pub(crate) struct Spawner {
    tx: Option<mpsc::Sender<SpawnJob>>,
    thread: Option<JoinHandle<()>>,
}

impl Spawner {
    pub(crate) fn new() -> Result<Self> {
        let (tx, rx) = mpsc::channel::<SpawnJob>();
        let thread = thread::Builder::new()
            .name("mco-envtest-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    // The requester may have given up; nothing else to tell.
                    let _ = reply.send(cmd.spawn());
                }
            })
            .context("cannot start the process-spawner thread")?;
        Ok(Self {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    fn spawn(&self, mut cmd: Command) -> Result<Child> {
        // SAFETY: runs between fork and exec; it only makes the prctl syscall,
        // which is async-signal-safe, and allocates nothing.
        #[allow(unsafe_code)]
        unsafe {
            cmd.pre_exec(|| {
                set_parent_process_death_signal(Some(Signal::KILL))?;
                Ok(())
            });
        }
        let (reply_tx, reply_rx) = mpsc::sync_channel(1);
        self.tx
            .as_ref()
            .ok_or_else(|| anyhow!("the process-spawner thread was shut down"))?
            .send((cmd, reply_tx))
            .map_err(|_| anyhow!("the process-spawner thread is gone"))?;
        let child = reply_rx
            .recv()
            .map_err(|_| anyhow!("the process-spawner thread died while spawning"))??;
        Ok(child)
    }
}

impl Drop for Spawner {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One child process whose stdout and stderr go to a log file.
///
/// Dropping it stops the process, so an early `?` in the start sequence never
/// leaks a half-started control plane.
pub(crate) struct Proc {
    name: &'static str,
    child: Option<Child>,
    log: PathBuf,
}

impl Proc {
    /// Appends to `log` rather than truncating it, so the log of an apiserver
    /// that was restarted still holds what the previous instance said.
    pub(crate) fn spawn(
        spawner: &Spawner,
        name: &'static str,
        program: &Path,
        args: &[String],
        log: &Path,
    ) -> Result<Self> {
        Self::spawn_with_env(spawner, name, program, args, &[], log)
    }

    /// [`Proc::spawn`] with these environment variables set as well.
    pub(crate) fn spawn_with_env(
        spawner: &Spawner,
        name: &'static str,
        program: &Path,
        args: &[String],
        env: &[(&str, &std::ffi::OsStr)],
        log: &Path,
    ) -> Result<Self> {
        let out = OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .with_context(|| format!("cannot open the {name} log {}", log.display()))?;
        let err = out
            .try_clone()
            .with_context(|| format!("cannot duplicate the {name} log handle"))?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        let child = spawner
            .spawn(cmd)
            .with_context(|| format!("cannot start {name} ({})", program.display()))?;
        Ok(Self {
            name,
            child: Some(child),
            log: log.to_owned(),
        })
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub(crate) fn log(&self) -> &Path {
        &self.log
    }

    /// `Some(status)` once the process has exited (and is reaped).
    pub(crate) fn exited(&mut self) -> Result<Option<ExitStatus>> {
        match self.child.as_mut() {
            None => Ok(None),
            Some(child) => child
                .try_wait()
                .with_context(|| format!("cannot poll {} (pid {})", self.name, child.id())),
        }
    }

    /// SIGTERM, up to `STOP_TIMEOUT` for a clean exit, then SIGKILL; always reaps.
    ///
    /// Only our own, not yet reaped child is signalled: while `try_wait` says it is
    /// still there, its PID cannot have been reused by anything else.
    /// Blocks the calling thread; use `spawn_blocking` from async code.
    pub(crate) fn stop_blocking(&mut self) -> Result<Duration> {
        let Some(mut child) = self.child.take() else {
            return Ok(Duration::ZERO);
        };
        let start = Instant::now();
        let name = self.name;
        let pid = child.id();
        if child.try_wait()?.is_none() {
            let raw = i32::try_from(pid).context("pid out of range")?;
            if let Some(p) = Pid::from_raw(raw) {
                // ESRCH can only mean it exited in between; wait() below reaps it.
                let _ = kill_process(p, Signal::TERM);
            }
            let deadline = start + STOP_TIMEOUT;
            while child.try_wait()?.is_none() {
                if Instant::now() >= deadline {
                    eprintln!(
                        "mco-e2e: {name} (pid {pid}) ignored SIGTERM for {STOP_TIMEOUT:?}; SIGKILL"
                    );
                    child
                        .kill()
                        .with_context(|| format!("cannot SIGKILL {name} (pid {pid})"))?;
                    break;
                }
                thread::sleep(Duration::from_millis(20));
            }
        }
        child
            .wait()
            .with_context(|| format!("cannot reap {name} (pid {pid})"))?;
        Ok(start.elapsed())
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Err(e) = self.stop_blocking() {
            eprintln!("mco-e2e: stopping {}: {e:#}", self.name);
        }
    }
}

/// The last `max_lines` lines of a log (at most 64 KiB read), for error messages:
/// the cause of a failed start is almost always near the end.
pub fn tail(path: &Path, max_lines: usize) -> String {
    const MAX_BYTES: u64 = 64 * 1024;
    const MAX_LINE: usize = 600;
    let read = || -> io::Result<String> {
        let mut f = std::fs::File::open(path)?;
        let len = f.metadata()?.len();
        f.seek(SeekFrom::Start(len.saturating_sub(MAX_BYTES)))?;
        let mut buf = Vec::new();
        f.read_to_end(&mut buf)?;
        Ok(String::from_utf8_lossy(&buf).into_owned())
    };
    match read() {
        Err(e) => format!("(cannot read {}: {e})", path.display()),
        Ok(text) => {
            let lines: Vec<&str> = text.lines().collect();
            let from = lines.len().saturating_sub(max_lines);
            let mut out = String::new();
            for line in &lines[from..] {
                if line.len() > MAX_LINE {
                    let mut cut = MAX_LINE;
                    while !line.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    out.push_str(&line[..cut]);
                    out.push_str(" [...]");
                } else {
                    out.push_str(line);
                }
                out.push('\n');
            }
            if out.is_empty() {
                out.push_str("(empty)\n");
            }
            out
        }
    }
}
