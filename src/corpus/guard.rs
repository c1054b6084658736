//! The corpus guard: one preparer per corpus at a time.
//!
//! The guard is an exclusive `flock` on `<directory>/.skillfold/guard`, taken without waiting:
//! a second preparer is refused at once with a message naming the holder (pid, host, start time,
//! which the holder writes into the file). The kernel releases the lock when its holder exits,
//! however it exits, so a guard is never obeyed forever; a holder that died without clearing its
//! record leaves the record behind, and the next preparer reports it as recovered. Distinct
//! corpora use distinct files and never block each other. Dropping the [`CorpusGuard`] clears the
//! record and releases the lock. The record is informational and never synced to disk: taking
//! and releasing a guard costs no disk flush.

use std::fmt;
use std::io::{Read as _, Seek as _, Write as _};
use std::os::fd::AsFd as _;

use fs_err::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::source::code::PrepareCode;
use crate::support::escape;

/// Who holds (or held) a guard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// Process id.
    pub pid: u32,
    /// Host name.
    pub host: String,
    /// When it took the guard (seconds since the Unix epoch).
    pub since_unix: u64,
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "pid {} on `{}` since {}",
            self.pid,
            escape::text(&self.host),
            crate::support::time::format_unix(self.since_unix)
        )
    }
}

/// A held guard; released on drop.
#[derive(Debug)]
pub struct CorpusGuard {
    file: fs_err::File,
    /// A record left by a holder that died without releasing, if one was found.
    pub recovered: Option<Holder>,
}

/// Why the guard could not be taken.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GuardError {
    /// Another preparer holds it.
    #[error("the corpus `{}` is being prepared by {holder}; try again when it finishes", escape::path(.directory))]
    Held {
        /// The corpus directory.
        directory: PathBuf,
        /// Who holds it (as recorded; `unknown` when the record is being written).
        holder: HolderText,
    },
    /// The guard file could not be created or locked.
    #[error("cannot take the guard of `{}`: {}", escape::path(.directory), escape::text(&.source.to_string()))]
    Io {
        /// The corpus directory.
        directory: PathBuf,
        /// The system error.
        source: std::io::Error,
    },
}

impl GuardError {
    /// Stable error code.
    pub fn code(&self) -> PrepareCode {
        match self {
            GuardError::Held { .. } => PrepareCode::GuardHeld,
            GuardError::Io { .. } => PrepareCode::GuardIo,
        }
    }
}

/// A holder as shown in messages.
#[derive(Debug)]
pub struct HolderText(pub Option<Holder>);

impl fmt::Display for HolderText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(h) => h.fmt(f),
            None => f.write_str("another process"),
        }
    }
}

impl CorpusGuard {
    /// Takes the guard of the corpus at `directory` (whose `.skillfold/` must exist), or fails at
    /// once if another process holds it.
    pub fn acquire(directory: &Path, guard_file: &Path) -> Result<CorpusGuard, GuardError> {
        let io = |source| GuardError::Io {
            directory: directory.to_owned(),
            source,
        };
        let mut file = fs_err::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(guard_file)
            .map_err(io)?;
        if !file.metadata().map_err(io)?.is_file() {
            return Err(io(std::io::Error::other(format!(
                "`{}` is not a regular file",
                guard_file.display()
            ))));
        }
        match rustix::fs::flock(
            file.file().as_fd(),
            rustix::fs::FlockOperation::NonBlockingLockExclusive,
        ) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => {
                return Err(GuardError::Held {
                    directory: directory.to_owned(),
                    holder: HolderText(read_holder(&mut file)),
                });
            }
            Err(e) => return Err(io(e.into())),
        }
        let recovered = read_holder(&mut file);
        let me = Holder {
            pid: std::process::id(),
            host: host_name(),
            since_unix: crate::support::time::now_unix(),
        };
        let record = serde_json::to_vec(&me).unwrap_or_default();
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        // Not synced: the lock, not the record, is the guard, and a crash of the holder leaves
        // the record in the page cache for the next preparer to report. Only a power loss could
        // lose it, and with it nothing but that report.
        file.write_all(&record).map_err(io)?;
        Ok(CorpusGuard { file, recovered })
    }
}

/// Whether a preparer holds the guard at `guard_file` now, without taking it (a shared lock is
/// tried and released at once; nothing is created or written, so it works on a read-only mount).
/// Returns the holder when it is held.
pub fn probe(guard_file: &Path) -> Option<HolderText> {
    let mut file = fs_err::File::open(guard_file).ok()?;
    match rustix::fs::flock(
        file.file().as_fd(),
        rustix::fs::FlockOperation::NonBlockingLockShared,
    ) {
        Ok(()) => {
            let _ = rustix::fs::flock(file.file().as_fd(), rustix::fs::FlockOperation::Unlock);
            None
        }
        Err(rustix::io::Errno::WOULDBLOCK) => Some(HolderText(read_holder(&mut file))),
        // Any other failure says nothing about a preparer.
        Err(_) => None,
    }
}

impl Drop for CorpusGuard {
    fn drop(&mut self) {
        // Clear the record first: an empty record means "released cleanly". The lock itself
        // goes with the descriptor.
        let _ = self.file.set_len(0);
    }
}

fn read_holder(file: &mut fs_err::File) -> Option<Holder> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

crate::support::error_code::coded_by_code!(GuardError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_is_refused_and_release_clears_the_record() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("guard");
        let first = CorpusGuard::acquire(dir.path(), &file).unwrap();
        assert!(first.recovered.is_none());
        // flock locks belong to open file descriptions: a second open conflicts even in-process.
        let err = CorpusGuard::acquire(dir.path(), &file).unwrap_err();
        assert_eq!(err.code(), PrepareCode::GuardHeld);
        assert!(
            err.to_string()
                .contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        // The holder's host is this machine's name, as the kernel reports it.
        let host = fs_err::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert!(
            err.to_string()
                .contains(&format!("on `{}`", host.trim_end())),
            "{err}"
        );
        drop(first);
        let again = CorpusGuard::acquire(dir.path(), &file).unwrap();
        assert!(
            again.recovered.is_none(),
            "a clean release leaves no record"
        );
    }

    #[test]
    fn a_record_left_behind_is_reported_as_recovered() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("guard");
        let dead = Holder {
            pid: 999_999,
            host: "gone".into(),
            since_unix: 1,
        };
        fs_err::write(&file, serde_json::to_vec(&dead).unwrap()).unwrap();
        let guard = CorpusGuard::acquire(dir.path(), &file).unwrap();
        assert_eq!(guard.recovered, Some(dead));
    }
}
