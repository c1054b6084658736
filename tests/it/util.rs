//! Test helpers: bundles written to temporary directories, and the `skillfold` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "../../src/testing/bundle_dir.rs"]
mod bundle_dir;
pub use bundle_dir::{TempBundle, skill_md};

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

/// SHA-256 of `bytes`, lowercase hex.
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Holds the guard of the prepared corpus at `corpus` (the `flock` a preparer takes on
/// `.skillfold/guard`, which the binary honours) until the returned file is dropped.
pub fn hold_corpus_guard(corpus: &Path) -> fs_err::File {
    use std::os::fd::AsFd as _;
    let file = fs_err::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(corpus.join(".skillfold/guard"))
        .expect("open the guard file");
    rustix::fs::flock(
        file.file().as_fd(),
        rustix::fs::FlockOperation::NonBlockingLockExclusive,
    )
    .expect("take the guard");
    file
}
