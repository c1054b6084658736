//! The runner itself, without a catalogue or a policy: the output cap to the byte, the answer
//! once the helper's pipes close, the drain wait after an exit, and a helper's own signal.
//! (Moved from the integration tests: `run` is not host API. What a host sees of the runner,
//! through `skill_run_script`, is tested in `tests/it/runner.rs`.)

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{RunLimits, RunOutcome, RunRequest, run};

/// The interpreter `python3` resolves to (through any shim).
fn real_python() -> PathBuf {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is on every machine");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// Runs `source` with the runner itself (no catalogue, no policy) under `python`, in a fresh
/// directory, with a 10-second timeout and `output_cap` bytes of output.
fn run_direct(python: &Path, source: &str, output_cap: usize) -> (RunOutcome, Duration) {
    let cwd = tempfile::tempdir().expect("tempdir");
    let request = RunRequest {
        python,
        cwd: cwd.path(),
        script: "scripts/t.py",
        source: source.as_bytes(),
        args: &[],
    };
    let limits = RunLimits {
        timeout: Duration::from_secs(10),
        output_cap,
    };
    let started = Instant::now();
    let outcome = run(&request, limits).expect("started");
    (outcome, started.elapsed())
}

// The output cap holds to the byte: exactly the cap is kept, one byte past it kills the helper.
#[test]
fn the_output_cap_holds_at_the_cap_and_one_byte_past() {
    let python = real_python();
    let (at, _) = run_direct(&python, "import sys\nsys.stdout.write('x' * 10)\n", 10);
    assert!(
        matches!(&at, RunOutcome::Exited { code: 0, stdout, .. } if stdout.len() == 10),
        "{at:?}"
    );
    let (past, _) = run_direct(&python, "import sys\nsys.stdout.write('x' * 11)\n", 10);
    assert!(matches!(past, RunOutcome::OutputLimit), "{past:?}");
}

// The cap counts stdout and stderr together: output spread over both streams cannot pass it.
#[test]
fn the_output_cap_counts_stdout_and_stderr_together() {
    let helper = "import sys, time\n\
for stream in (sys.stdout, sys.stderr, sys.stdout):\n    stream.write('x' * 4)\n    stream.flush()\n    time.sleep(0.2)\n";
    let (outcome, _) = run_direct(&real_python(), helper, 10);
    assert!(matches!(outcome, RunOutcome::OutputLimit), "{outcome:?}");
}

// Once both pipes are closed the answer comes at once, not after the one-second drain wait.
#[test]
fn a_helper_that_exits_is_answered_as_soon_as_its_pipes_close() {
    // Any program stands in for the interpreter: `true` exits at once without reading stdin.
    let (outcome, elapsed) = run_direct(Path::new("/bin/true"), "", 1024);
    assert!(
        matches!(outcome, RunOutcome::Exited { code: 0, .. }),
        "{outcome:?}"
    );
    assert!(elapsed < Duration::from_secs(1), "{elapsed:?}");
}

/// Kills the detached process whose pid is the first line of `stdout`.
fn kill_detached(stdout: &[u8]) {
    let text = String::from_utf8_lossy(stdout);
    let pid: i32 = text.lines().next().unwrap_or("").parse().expect("pid");
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}

// A pipe held open by a process outside the helper's group (a new session escapes the group
// kill) delays the answer by the drain wait only: the run is not held until the timeout.
#[test]
fn a_pipe_held_open_after_the_helper_exits_delays_the_answer_by_a_moment_only() {
    let helper = "import subprocess\n\
p = subprocess.Popen(['sleep', '30'], start_new_session=True)\n\
print(p.pid, flush=True)\n";
    let (outcome, elapsed) = run_direct(&real_python(), helper, 1024);
    let RunOutcome::Exited { code, stdout, .. } = &outcome else {
        panic!("{outcome:?} after {elapsed:?}");
    };
    kill_detached(stdout);
    assert_eq!(*code, 0);
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

// A helper killed by a signal of its own reports exit code -1, never a code it did not choose.
#[test]
fn a_helper_killed_by_its_own_signal_exits_with_minus_one() {
    let helper = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n";
    let (outcome, _) = run_direct(&real_python(), helper, 1024);
    assert!(
        matches!(outcome, RunOutcome::Exited { code: -1, .. }),
        "{outcome:?}"
    );
}

// Output still on its way when the helper exits is collected during the drain wait, not cut
// off at the exit: here a detached grandchild writes a moment after the helper is gone.
#[test]
fn output_arriving_just_after_the_helper_exits_is_kept() {
    let helper = "import subprocess\n\
p = subprocess.Popen(['sh', '-c', 'sleep 0.2; echo late; exec sleep 30'], start_new_session=True)\n\
print(p.pid, flush=True)\n";
    let (outcome, elapsed) = run_direct(&real_python(), helper, 1024);
    let RunOutcome::Exited { stdout, .. } = &outcome else {
        panic!("{outcome:?} after {elapsed:?}");
    };
    kill_detached(stdout);
    let text = String::from_utf8_lossy(stdout);
    assert!(text.ends_with("\nlate\n"), "{text:?} after {elapsed:?}");
}
