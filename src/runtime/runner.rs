//! Running one approved helper: `python3 -I -c <fixed bootstrap>`, no shell, the verified bytes
//! on stdin, a reduced environment, its own process group, a timeout and an output cap.
//!
//! The bootstrap reads the program from stdin, decodes it as UTF-8 (so a PEP 263 `coding:`
//! declaration cannot make Python read the bytes differently from how they were reviewed),
//! compiles it with the helper's path as its file name, sets `sys.argv` to `[path, *args]` and `__file__` to the path, and runs it as
//! `__main__`: the bytes that run are exactly the bytes that were hashed and approved, even if
//! the file on disk is swapped afterwards. `-I` (isolated mode) ignores `PYTHON*` variables and
//! the user's site-packages. The environment holds only [`crate::support::confined::PASSED_ENV`]
//! (from the parent, when set) and `SKILLFOLD_REPLAY=off`.
//!
//! How the process is confined — the environment, no descriptor of skillfold's past the three
//! standard ones, its own process group killed at the timeout, past the output cap and after it
//! exits — is [`crate::support::confined`], which `pin --scan`'s scanners share. A process group
//! is not a sandbox: see the README's security model.

#[path = "runner_workdir.rs"]
pub mod workdir;

use std::path::Path;

use crate::support::confined;
pub use crate::support::confined::{RunError, RunLimits, RunOutcome};

/// The fixed bootstrap passed to `python3 -c`.
pub const BOOTSTRAP: &str = "import sys\n\
path = sys.argv[1]\n\
source = sys.stdin.buffer.read().decode('utf-8-sig')\n\
sys.argv = sys.argv[1:]\n\
code = compile(source, path, 'exec', dont_inherit=True)\n\
namespace = {'__name__': '__main__', '__file__': path, '__builtins__': __builtins__}\n\
del path, source\n\
exec(code, namespace)\n";

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

/// Runs the helper. `Err` when it could not be started.
pub fn run(request: &RunRequest<'_>, limits: RunLimits) -> Result<RunOutcome, RunError> {
    let mut command = confined::command(
        request.python.as_os_str(),
        request.cwd,
        &[("SKILLFOLD_REPLAY", "off")],
    );
    command
        .args(["-I", "-c", BOOTSTRAP, request.script])
        .args(request.args);
    confined::run(command, request.source.to_vec(), limits)
}

#[cfg(test)]
#[path = "runner_tests.rs"]
mod boundary_tests;
