//! A child process confined as the script runner and the scanners need it: no shell, a reduced
//! environment ([`PASSED_ENV`] and what the caller adds), its standard streams piped, its own
//! process group, a timeout and an output cap. [`command`] makes the command; [`run`] starts it
//! confined, feeds its standard input and gathers its output.
//!
//! **Descriptors.** The child gets standard input, output and error, and no other descriptor of
//! skillfold's: not one skillfold inherited without close-on-exec (`exec 7<secret.txt` in the
//! shell that started it). Right before each spawn the parent lists its open descriptors above 2
//! (`/proc/self/fd`, else `/dev/fd`); between fork and exec the child marks each of them
//! close-on-exec (`fcntl(F_SETFD)`), so exec closes them all. Why so:
//! - In the child only async-signal-safe calls may be made: the list is built before the fork
//!   and only read there, and `fcntl` is a plain system call (no allocation, no lock).
//! - The child does not close them outright: the standard library keeps a close-on-exec pipe
//!   open in it to report a failed exec, and closing that pipe would turn "cannot start the
//!   program" into a silent exit. (`close_range(3, ~0, CLOSE_RANGE_CLOEXEC)` would do it in
//!   one call, but rustix offers no wrapper for it and libc is no dependency of ours.)
//! - The parent's own descriptors are left as they are: marking them close-on-exec there would
//!   change what a host embedding the library passes to its own children.
//! - A descriptor another thread opens between the listing and the fork is not in the list:
//!   the standard library and skillfold open every descriptor close-on-exec, and the ones this
//!   guards against were inherited when skillfold started.
//!
//! If neither listing can be read, nothing starts ([`RunError::Descriptors`]).
//!
//! The child leads its own process group. The whole group receives SIGKILL when the timeout
//! passes, when stdout and stderr together exceed the cap, and after the child exits (so no
//! grandchild outlives it). A process group is not a sandbox: see the README's security model.

use std::ffi::OsStr;
use std::io::{Read as _, Write as _};
use std::os::fd::RawFd;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The variables a confined child inherits from the parent (when set).
pub const PASSED_ENV: &[&str] = &[
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

/// The bounds of one run.
#[derive(Debug, Clone, Copy)]
pub struct RunLimits {
    /// Wall-clock limit.
    pub timeout: Duration,
    /// Bytes of stdout and stderr together.
    pub output_cap: usize,
}

/// How a run ended.
#[derive(Debug)]
pub enum RunOutcome {
    /// The child exited by itself (code `-1` when killed by a signal of its own).
    Exited {
        /// Exit code.
        code: i32,
        /// Everything it wrote on stdout.
        stdout: Vec<u8>,
        /// Everything it wrote on stderr.
        stderr: Vec<u8>,
    },
    /// The timeout passed; the group was killed.
    TimedOut,
    /// The output cap was exceeded; the group was killed.
    OutputLimit,
}

/// What a pipe's reader thread reports: a chunk read (`true` for stdout, `false` for stderr),
/// or the pipe's end.
enum PipeEvent {
    Data(bool, Vec<u8>),
    Eof,
}

/// Why a child was not started.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// skillfold's open descriptors could not be listed, so none could be kept from the child.
    #[error(
        "cannot list skillfold's open file descriptors (/proc/self/fd, /dev/fd) to keep them from the child: {0}"
    )]
    Descriptors(#[source] std::io::Error),
    /// The interpreter could not be started in the working directory.
    #[error("{0}")]
    Spawn(#[source] std::io::Error),
}

/// The command running `program` in `cwd`: a cleared environment but for [`PASSED_ENV`] (when
/// set) and `env`, standard streams piped. The caller adds the arguments; [`run`] confines it.
pub fn command(program: &OsStr, cwd: &Path, env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(program);
    command
        .current_dir(cwd)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in PASSED_ENV {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    for (name, value) in env {
        command.env(name, value);
    }
    command
}

/// Starts `command` (made by [`command`]) in its own process group with none of skillfold's
/// descriptors above 2, writes `stdin` to it and gathers its output within `limits`. `Err` when
/// it could not be started.
pub fn run(
    mut command: Command,
    stdin: Vec<u8>,
    limits: RunLimits,
) -> Result<RunOutcome, RunError> {
    let inherited = open_descriptors().map_err(RunError::Descriptors)?;
    confine(&mut command, inherited);
    let mut child = command.spawn().map_err(RunError::Spawn)?;
    let deadline = Instant::now() + limits.timeout;
    let writer = feed_stdin(&mut child, stdin);
    let events = read_pipes(&mut child);
    let outcome = collect(&mut child, &events, deadline, limits.output_cap);
    let _ = writer.join();
    Ok(outcome)
}

/// The descriptors above 2 open in this process now: the entries of `/proc/self/fd` (else
/// `/dev/fd`), the one the listing itself used included (harmless: marking a closed descriptor
/// fails, and one reused by then was opened close-on-exec).
fn open_descriptors() -> std::io::Result<Vec<RawFd>> {
    let entries = fs_err::read_dir("/proc/self/fd").or_else(|_| fs_err::read_dir("/dev/fd"))?;
    let mut fds = Vec::new();
    for entry in entries {
        let name = entry?.file_name();
        if let Some(fd) = name.to_str().and_then(|n| n.parse::<RawFd>().ok())
            && fd > 2
        {
            fds.push(fd);
        }
    }
    Ok(fds)
}

/// Makes `command` lead its own process group, die with skillfold's spawning thread (Linux),
/// and leave none of `inherited` (the descriptors above 2 open before the spawn) open after
/// exec.
fn confine(command: &mut Command, inherited: Vec<RawFd>) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        command.process_group(0);
        #[allow(unsafe_code)]
        // SAFETY: the closure runs in the child between fork and exec. It makes only
        // async-signal-safe system calls (`prctl` on Linux, `fcntl`), allocates nothing (the
        // list was built before the fork) and touches no lock. `borrow_raw` is sound for the
        // call it serves: a descriptor closed since the listing only makes `fcntl` fail
        // (`EBADF`, ignored), and nothing else in the child uses these descriptors.
        unsafe {
            command.pre_exec(move || {
                // The child leads its own group, so a Ctrl-C or a SIGKILL aimed at skillfold
                // does not reach it: have the kernel kill it when skillfold's spawning thread
                // goes away.
                #[cfg(target_os = "linux")]
                rustix::process::set_parent_process_death_signal(Some(
                    rustix::process::Signal::KILL,
                ))
                .map_err(std::io::Error::from)?;
                for &fd in &inherited {
                    let fd = std::os::fd::BorrowedFd::borrow_raw(fd);
                    let _ = rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC);
                }
                Ok(())
            });
        }
    }
}

/// Writes `source` to the child's standard input on a thread of its own.
fn feed_stdin(child: &mut Child, source: Vec<u8>) -> std::thread::JoinHandle<()> {
    let mut stdin = child.stdin.take();
    std::thread::spawn(move || {
        if let Some(stdin) = stdin.as_mut() {
            // A child that exits without reading is not an error here.
            let _ = stdin.write_all(&source);
        }
    })
}

/// One reader thread per output pipe; each sends what it reads, then [`PipeEvent::Eof`].
fn read_pipes(child: &mut Child) -> mpsc::Receiver<PipeEvent> {
    let (tx, rx) = mpsc::channel::<PipeEvent>();
    let pipes: [(bool, Option<Box<dyn std::io::Read + Send>>); 2] = [
        (true, child.stdout.take().map(|p| Box::new(p) as _)),
        (false, child.stderr.take().map(|p| Box::new(p) as _)),
    ];
    for (is_stdout, pipe) in pipes {
        let tx = tx.clone();
        std::thread::spawn(move || {
            if let Some(mut pipe) = pipe {
                let mut buf = vec![0u8; 16 * 1024];
                while let Ok(n) = pipe.read(&mut buf) {
                    if n == 0
                        || tx
                            .send(PipeEvent::Data(is_stdout, buf[..n].to_vec()))
                            .is_err()
                    {
                        break;
                    }
                }
            }
            let _ = tx.send(PipeEvent::Eof);
        });
    }
    rx
}

/// Gathers the child's output until it exits (its group is then killed and the pipes get a
/// moment to drain), the deadline passes or the output outgrows `output_cap`.
fn collect(
    child: &mut Child,
    events: &mpsc::Receiver<PipeEvent>,
    deadline: Instant,
    output_cap: usize,
) -> RunOutcome {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut eofs = 0;
    let mut exited: Option<i32> = None;
    let mut exited_at: Option<Instant> = None;
    loop {
        let now = Instant::now();
        if now >= deadline {
            kill_group(child);
            return RunOutcome::TimedOut;
        }
        // Once the child has exited, its group was killed; give the pipes a moment to drain.
        if let Some(at) = exited_at
            && (eofs == 2 || now.duration_since(at) > Duration::from_secs(1))
        {
            return RunOutcome::Exited {
                code: exited.unwrap_or(-1),
                stdout,
                stderr,
            };
        }
        match events.recv_timeout((deadline - now).min(Duration::from_millis(20))) {
            Ok(PipeEvent::Data(is_stdout, bytes)) => {
                if stdout.len() + stderr.len() + bytes.len() > output_cap {
                    kill_group(child);
                    return RunOutcome::OutputLimit;
                }
                if is_stdout { &mut stdout } else { &mut stderr }.extend_from_slice(&bytes);
            }
            Ok(PipeEvent::Eof) => eofs += 1,
            Err(mpsc::RecvTimeoutError::Timeout | mpsc::RecvTimeoutError::Disconnected) => {}
        }
        if exited_at.is_none()
            && let Ok(Some(status)) = child.try_wait()
        {
            exited = Some(status.code().unwrap_or(-1));
            exited_at = Some(Instant::now());
            kill_group(child);
        }
    }
}

/// SIGKILL to the child's whole process group, then reap the child.
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        // ESRCH only means everyone is gone already.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}
