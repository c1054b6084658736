//! The `skillfold` binary, run as a user runs it: its path, a run in a directory, and its
//! output read back as text.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `skillfold` binary the tests run.
pub const BIN: &str = env!("CARGO_BIN_EXE_skillfold");

/// The target directory the test binaries were built into (tools the tests install live there).
pub fn target_dir() -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_skillfold"));
    bin.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// Runs the `skillfold` binary.
pub fn skillfold(args: &[&str]) -> Output {
    skillfold_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

/// Runs `skillfold COMMAND -c CONFIG REST...` for `args` = `[COMMAND, REST...]`.
pub fn skillfold_with(config: &Path, args: &[&str]) -> Output {
    let mut all = vec![args[0], "-c", config.to_str().expect("utf8")];
    all.extend_from_slice(&args[1..]);
    skillfold(&all)
}

/// Runs the `skillfold` binary in `cwd`.
pub fn skillfold_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skillfold"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run skillfold")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts that the command's stderr contains `needle`, showing stderr when it does not.
#[track_caller]
pub fn assert_stderr_has(o: &Output, needle: &str) {
    let err = stderr(o);
    assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
}
