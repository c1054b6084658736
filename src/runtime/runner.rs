//! Running one approved helper: `python3 -I -c <fixed bootstrap>`, no shell, the verified bytes
//! on stdin, a reduced environment, its own process group, a timeout and an output cap.
//!
//! The bootstrap reads the program from stdin, decodes it as UTF-8 (so a PEP 263 `coding:`
//! declaration cannot make Python read the bytes differently from how they were reviewed),
//! compiles it with the helper's path as its file name, sets `sys.argv` to `[path, *args]` and `__file__` to the path, and runs it as
//! `__main__`: the bytes that run are exactly the bytes that were hashed and approved, even if
//! the file on disk is swapped afterwards. `-I` (isolated mode) ignores `PYTHON*` variables and
//! the user's site-packages. The environment holds only `PATH LANG LC_ALL LC_CTYPE TZ TMPDIR
//! SSL_CERT_FILE SSL_CERT_DIR` (from the parent, when set) and `SKILLFOLD_REPLAY=off`.
//!
//! The helper leads its own process group. The whole group receives SIGKILL when the timeout
//! passes, when stdout and stderr together exceed the cap, and after the helper exits (so no
//! grandchild outlives it). A process group is not a sandbox: see the README's security model.

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The fixed bootstrap passed to `python3 -c`.
pub const BOOTSTRAP: &str = "import sys\n\
path = sys.argv[1]\n\
source = sys.stdin.buffer.read().decode('utf-8-sig')\n\
sys.argv = sys.argv[1:]\n\
code = compile(source, path, 'exec', dont_inherit=True)\n\
namespace = {'__name__': '__main__', '__file__': path, '__builtins__': __builtins__}\n\
del path, source\n\
exec(code, namespace)\n";

/// The variables a helper inherits from the parent (when set).
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

/// What to run.
#[derive(Debug)]
pub struct RunRequest<'a> {
    /// The Python interpreter.
    pub python: &'a Path,
    /// The working directory: the skill's directory.
    pub cwd: &'a Path,
    /// The helper's path inside the skill (becomes `__file__` and `sys.argv[0]`).
    pub script: &'a str,
    /// The approved bytes.
    pub source: &'a [u8],
    /// The arguments.
    pub args: &'a [String],
}

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
    /// The helper exited by itself (code `-1` when killed by a signal of its own).
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

/// Runs the helper. `Err` when it could not be started.
pub fn run(request: &RunRequest<'_>, limits: RunLimits) -> std::io::Result<RunOutcome> {
    let mut child = helper_command(request).spawn()?;
    let deadline = Instant::now() + limits.timeout;
    let writer = feed_stdin(&mut child, request.source.to_vec());
    let events = read_pipes(&mut child);
    let outcome = collect(&mut child, &events, deadline, limits.output_cap);
    let _ = writer.join();
    Ok(outcome)
}

/// The helper's command: isolated Python running the bootstrap, a cleared environment but for
/// [`PASSED_ENV`], piped standard streams, its own process group, killed with skillfold.
fn helper_command(request: &RunRequest<'_>) -> Command {
    let mut command = Command::new(request.python);
    command
        .args(["-I", "-c", BOOTSTRAP, request.script])
        .args(request.args)
        .current_dir(request.cwd)
        .env_clear()
        .env("SKILLFOLD_REPLAY", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in PASSED_ENV {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        command.process_group(0);
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt as _;
        // The helper leads its own group, so a Ctrl-C or a SIGKILL aimed at skillfold does not
        // reach it: have the kernel kill it when skillfold's spawning thread goes away.
        #[allow(unsafe_code)]
        // SAFETY: the closure runs in the child between fork and exec. It makes one
        // async-signal-safe system call (`prctl`), allocates nothing and touches no lock.
        unsafe {
            command.pre_exec(|| {
                rustix::process::set_parent_process_death_signal(Some(
                    rustix::process::Signal::KILL,
                ))
                .map_err(std::io::Error::from)
            });
        }
    }
    command
}

/// Writes the script's source to the helper's standard input on a thread of its own.
fn feed_stdin(child: &mut Child, source: Vec<u8>) -> std::thread::JoinHandle<()> {
    let mut stdin = child.stdin.take();
    std::thread::spawn(move || {
        if let Some(stdin) = stdin.as_mut() {
            // A helper that exits without reading is not an error here.
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

/// Gathers the helper's output until it exits (its group is then killed and the pipes get a
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
        // Once the helper has exited, its group was killed; give the pipes a moment to drain.
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

/// SIGKILL to the helper's whole process group, then reap the helper.
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        // ESRCH only means everyone is gone already.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
#[path = "runner_tests.rs"]
mod boundary_tests;
