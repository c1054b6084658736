//! The one capped, no-follow file-system layer: the only way skillfold opens a file or a
//! directory that came from outside (a bundle, a guides folder, a skill directory handed to the
//! spec tooling). Each caller adds its own rules on top; none spells out open flags of its own.
//!
//! Five steps, each a defence that holds on its own:
//!
//! - [`open_root`]: the directory the caller names, opened once by path with
//!   `O_DIRECTORY | O_NOFOLLOW`. A link at its last component is refused, never followed, and
//!   the failure says why (missing, a link, not a directory).
//! - [`open_dir`] and [`open_file`]: one name below an already-open directory, with `openat2`
//!   and `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`, or `openat` where the
//!   kernel refuses `openat2` (`ENOSYS` on kernels before 5.6, `EPERM` under a seccomp filter).
//!   Both add `O_NOFOLLOW`, which alone refuses a link at that one name. A directory is opened
//!   with `O_DIRECTORY` (anything else swapped in fails at once); a file with `O_NONBLOCK` and
//!   `O_NOCTTY` (a FIFO swapped in cannot block the open, a terminal cannot become ours), and its
//!   type is checked with `fstat` on the open descriptor.
//! - [`stat_at`]: what a name is, without following it, so special files are refused unopened.
//! - [`list`]: the names of an open directory, never more than a bound: an enormous directory is
//!   refused without being held in memory.
//! - [`read_capped`]: at most `cap + 1` bytes from an open file. The size `fstat` reported is
//!   only a hint for the first allocation: a file that grows, or lies about its size (as `/proc`
//!   files do), is still read no further than the cap.
//!
//! [`same_file`] compares the device and inode of what was listed with what was opened, for
//! callers that inventory a tree before reading it.
//!
//! A file the user names on the command line or in the environment (the descriptor of `-c`, a
//! tokens file, allowed signers, a TLS certificate, a Docker `config.json`) is read through
//! [`open_input`] / [`read_input`]: a link the user chose is followed, but anything that is not a
//! regular file (a FIFO, a socket, a device, a directory) is refused by `stat` before it is
//! opened, and again by `fstat` on the descriptor (opened `O_NONBLOCK | O_NOCTTY`, so a FIFO
//! swapped in between cannot block the open), which must be the file `stat` saw. No input can
//! make a command wait forever on a pipe nobody writes.
//!
//! For callers that write into a directory someone else may have planted entries in (an OCI image
//! layout): [`create_dir`] makes or opens one subdirectory by the same no-follow rules, and
//! [`replace_file`] writes a file through a fresh temporary name beneath the open directory,
//! renamed into place there, so no link is ever written through.
//!
//! The module depends on nothing but `std`, `rustix` and the crate's escaping (for the path in
//! an input's error).

#[cfg(test)]
use std::cell::Cell;
use std::ffi::CStr;
use std::fmt;
use std::io::Read as _;
use std::ops::ControlFlow;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, Stat};
use rustix::io::Errno;

/// Flags of every directory opened: read-only, must be a directory, no link at the name.
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Flags of every file opened: read-only, no link at the name, never blocking (a FIFO), never
/// a controlling terminal.
const FILE_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// How `openat2` resolves a name: below the directory, through no link of any kind.
const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// Why a directory or file could not be opened.
#[derive(Debug)]
#[non_exhaustive]
pub enum UntrustedOpenError {
    /// Nothing of that name.
    NotFound,
    /// A symbolic link where a directory or file was expected (never followed).
    Symlink,
    /// Something other than a directory where a directory was expected.
    NotADirectory,
    /// Something other than a regular file (a directory, FIFO, socket or device).
    NotRegular,
    /// Any other failure of the system call.
    Io(Errno),
}

impl fmt::Display for UntrustedOpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UntrustedOpenError::NotFound => f.write_str("no such file or directory"),
            UntrustedOpenError::Symlink => {
                f.write_str("is a symbolic link (links are never followed)")
            }
            UntrustedOpenError::NotADirectory => f.write_str("not a directory"),
            UntrustedOpenError::NotRegular => f.write_str("not a regular file"),
            UntrustedOpenError::Io(errno) => write!(f, "{}", std::io::Error::from(*errno)),
        }
    }
}

impl std::error::Error for UntrustedOpenError {}

impl UntrustedOpenError {
    /// The same failure as an I/O error (a conversion, not a `From` impl: a public impl would
    /// make this crate-private type part of the host API).
    pub fn into_io(self) -> std::io::Error {
        match self {
            UntrustedOpenError::NotFound => Errno::NOENT.into(),
            UntrustedOpenError::Symlink => Errno::LOOP.into(),
            UntrustedOpenError::NotADirectory => Errno::NOTDIR.into(),
            UntrustedOpenError::NotRegular => {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file")
            }
            UntrustedOpenError::Io(errno) => errno.into(),
        }
    }
}

/// Why [`read_capped`] refused.
#[derive(Debug)]
#[non_exhaustive]
pub enum UntrustedReadError {
    /// The file holds more than the cap (it was read no further than one byte past it).
    TooLarge {
        /// The cap.
        cap: u64,
    },
    /// The read failed.
    Io(std::io::Error),
}

impl fmt::Display for UntrustedReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UntrustedReadError::TooLarge { cap } => write!(f, "larger than {cap} bytes"),
            UntrustedReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for UntrustedReadError {}

/// Opens the directory at `path` (as the caller spelled it) without following a link at its
/// last component.
pub fn open_root(path: &Path) -> Result<OwnedFd, UntrustedOpenError> {
    rustix::fs::open(path, DIR_FLAGS, Mode::empty()).map_err(|errno| match errno {
        Errno::NOENT => UntrustedOpenError::NotFound,
        Errno::LOOP => UntrustedOpenError::Symlink,
        // `O_DIRECTORY | O_NOFOLLOW` on a link says "not a directory": tell the two apart.
        Errno::NOTDIR => match rustix::fs::lstat(path) {
            Ok(st) if kind(&st) == FileType::Symlink => UntrustedOpenError::Symlink,
            _ => UntrustedOpenError::NotADirectory,
        },
        other => UntrustedOpenError::Io(other),
    })
}

/// Opens the subdirectory `name` (one path component) of `dir`.
pub fn open_dir(dir: impl AsFd, name: &CStr) -> Result<OwnedFd, UntrustedOpenError> {
    let dir = dir.as_fd();
    open_beneath(dir, name, DIR_FLAGS).map_err(|errno| match errno {
        Errno::NOENT => UntrustedOpenError::NotFound,
        Errno::LOOP | Errno::XDEV => UntrustedOpenError::Symlink,
        Errno::NOTDIR => match stat_at(dir, name) {
            Ok(Some(st)) if kind(&st) == FileType::Symlink => UntrustedOpenError::Symlink,
            _ => UntrustedOpenError::NotADirectory,
        },
        other => UntrustedOpenError::Io(other),
    })
}

/// Opens the regular file `name` (one path component) of `dir`, with the `fstat` of the open
/// descriptor.
pub fn open_file(dir: impl AsFd, name: &CStr) -> Result<(OwnedFd, Stat), UntrustedOpenError> {
    let fd = open_beneath(dir.as_fd(), name, FILE_FLAGS).map_err(|errno| match errno {
        Errno::NOENT => UntrustedOpenError::NotFound,
        Errno::LOOP | Errno::XDEV => UntrustedOpenError::Symlink,
        // A socket cannot be opened; a device without its driver neither.
        Errno::NXIO | Errno::NODEV => UntrustedOpenError::NotRegular,
        Errno::NOTDIR => UntrustedOpenError::NotADirectory,
        other => UntrustedOpenError::Io(other),
    })?;
    let stat = rustix::fs::fstat(&fd).map_err(UntrustedOpenError::Io)?;
    if kind(&stat) != FileType::RegularFile {
        return Err(UntrustedOpenError::NotRegular);
    }
    Ok((fd, stat))
}

/// Opens the directory `segments` (path components, each one name) below `root`, one at a time.
pub fn open_dir_path<'a>(
    root: &Path,
    segments: impl IntoIterator<Item = &'a str>,
) -> Result<OwnedFd, UntrustedOpenError> {
    let mut dir = open_root(root)?;
    for segment in segments {
        dir = open_dir(&dir, &component(segment)?)?;
    }
    Ok(dir)
}

/// The permission bits (`0o7777`) of the regular file `rel` (`/`-separated) below the directory
/// `root`, every folder on the way opened without following a link; `ENOENT` when it is no
/// regular file (a link, a folder, nothing).
pub fn mode_beneath(root: &Path, rel: &str) -> std::io::Result<u32> {
    let mut segments: Vec<&str> = rel.split('/').collect();
    let last = segments.pop().unwrap_or_default();
    let dir = open_dir_path(root, segments).map_err(UntrustedOpenError::into_io)?;
    let name = component(last).map_err(UntrustedOpenError::into_io)?;
    match stat_at(&dir, &name)? {
        Some(st) if kind(&st) == FileType::RegularFile => Ok(st.st_mode & 0o7777),
        _ => Err(Errno::NOENT.into()),
    }
}

/// One path component as a C string; an empty one, `.`, `..`, one holding `/` or NUL is refused
/// as not found (no such single name exists below a directory).
pub fn component(segment: &str) -> Result<Box<CStr>, UntrustedOpenError> {
    if matches!(segment, "" | "." | "..") || segment.contains('/') {
        return Err(UntrustedOpenError::NotFound);
    }
    std::ffi::CString::new(segment)
        .map(Into::into)
        .map_err(|_| UntrustedOpenError::NotFound)
}

/// What `name` in `dir` is, without following a link: `None` when it does not exist (any more).
pub fn stat_at(dir: impl AsFd, name: &CStr) -> Result<Option<Stat>, Errno> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => Ok(Some(stat)),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The kind of a [`Stat`].
pub fn kind(stat: &Stat) -> FileType {
    FileType::from_raw_mode(stat.st_mode)
}

/// Whether two stats are of one object: the same device and the same inode.
pub fn same_file(listed: &Stat, opened: &Stat) -> bool {
    listed.st_dev == opened.st_dev && listed.st_ino == opened.st_ino
}

/// The names in a directory, `.` and `..` left out, sorted by bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// The names read, at most the bound.
    pub names: Vec<Box<CStr>>,
    /// Whether the directory holds more names than the bound (the rest were not read).
    pub over: bool,
}

/// Lists `dir`, reading at most `max` names: one more means [`Listing::over`].
pub fn list(dir: impl AsFd, max: usize) -> Result<Listing, Errno> {
    let mut names: Vec<Box<CStr>> = Vec::new();
    let mut over = false;
    scan(dir, |name| {
        if names.len() == max {
            over = true;
            return ControlFlow::Break(());
        }
        names.push(name.into());
        ControlFlow::Continue(())
    })?;
    names.sort_unstable();
    Ok(Listing { names, over })
}

/// Calls `visit` with each name in `dir` (`.` and `..` left out), in directory order, until it
/// breaks. Nothing is kept: for callers that look for names without listing them all.
pub fn scan(dir: impl AsFd, mut visit: impl FnMut(&CStr) -> ControlFlow<()>) -> Result<(), Errno> {
    let mut reader = rustix::fs::Dir::read_from(dir)?;
    while let Some(entry) = reader.read() {
        let entry = entry?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        if visit(name).is_break() {
            break;
        }
    }
    Ok(())
}

/// Flags of an input file the user named: read-only, never blocking (a FIFO swapped in after the
/// `stat`), never a controlling terminal. A link is followed: the user chose the path.
const INPUT_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// What a file type is called in a refusal.
fn kind_name(kind: FileType) -> &'static str {
    match kind {
        FileType::Fifo => "a FIFO (named pipe)",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Directory => "a directory",
        _ => "not a regular file",
    }
}

/// Why an input file could not be read: the path and the reason (its display names both, the path
/// escaped).
#[derive(Debug)]
pub struct InputError {
    /// The path given.
    pub path: std::path::PathBuf,
    /// What is wrong, without the path (for errors that name the file themselves).
    pub reason: String,
    kind: std::io::ErrorKind,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}`: {}",
            crate::support::escape::path(&self.path),
            self.reason
        )
    }
}

impl std::error::Error for InputError {}

impl InputError {
    /// The same failure as an I/O error (see [`UntrustedOpenError::into_io`]).
    pub fn into_io(self) -> std::io::Error {
        std::io::Error::new(self.kind, self.to_string())
    }
}

fn input_error(path: &Path, kind: std::io::ErrorKind, what: &dyn fmt::Display) -> InputError {
    InputError {
        path: path.to_owned(),
        reason: what.to_string(),
        kind,
    }
}

/// Opens the input file at `path` for reading: a regular file only, refused before it is opened
/// otherwise (`stat`), checked again on the open descriptor (`fstat`, the same device and inode).
/// The error names the path and what it is.
pub fn open_input(path: &Path) -> Result<(OwnedFd, Stat), InputError> {
    let not_regular = |kind: FileType| {
        input_error(
            path,
            std::io::ErrorKind::InvalidInput,
            &format_args!(
                "is {}, not a regular file (inputs are read from regular files only)",
                kind_name(kind)
            ),
        )
    };
    let system = |errno: Errno| {
        let error = std::io::Error::from(errno);
        input_error(path, error.kind(), &error)
    };
    let listed = rustix::fs::stat(path).map_err(system)?;
    if kind(&listed) != FileType::RegularFile {
        return Err(not_regular(kind(&listed)));
    }
    let file = rustix::fs::open(path, INPUT_FLAGS, Mode::empty()).map_err(system)?;
    let opened = rustix::fs::fstat(&file).map_err(system)?;
    if kind(&opened) != FileType::RegularFile {
        return Err(not_regular(kind(&opened)));
    }
    if !same_file(&listed, &opened) {
        return Err(input_error(
            path,
            std::io::ErrorKind::Other,
            &"was replaced while it was opened",
        ));
    }
    Ok((file, opened))
}

/// Reads the input file at `path` ([`open_input`]): its bytes, or `Ok(Err(size))` when it holds
/// more than `cap` (at least `size` bytes; checked from `fstat` before reading, and the read stops
/// one byte past the cap whatever the file does).
pub fn read_input(path: &Path, cap: u64) -> Result<Result<Vec<u8>, u64>, InputError> {
    let (file, stat) = open_input(path)?;
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    if size > cap {
        return Ok(Err(size));
    }
    let bytes = read_at_most(file, cap.saturating_add(1), size)
        .map_err(|e| input_error(path, e.kind(), &e))?;
    if bytes.len() as u64 > cap {
        return Ok(Err(bytes.len() as u64));
    }
    Ok(Ok(bytes))
}

/// Reads `file` to its end, at most `cap + 1` bytes: more than `cap` is refused. `size_hint`
/// (from `fstat`) only sizes the first allocation, never more than the cap.
pub fn read_capped(file: OwnedFd, cap: u64, size_hint: u64) -> Result<Vec<u8>, UntrustedReadError> {
    let bytes =
        read_at_most(file, cap.saturating_add(1), size_hint).map_err(UntrustedReadError::Io)?;
    if bytes.len() as u64 > cap {
        return Err(UntrustedReadError::TooLarge { cap });
    }
    Ok(bytes)
}

/// Reads `file` to its end, but never more than `limit` bytes (the caller judges a read that
/// reached the limit). `size_hint` only sizes the first allocation.
pub fn read_at_most(file: OwnedFd, limit: u64, size_hint: u64) -> std::io::Result<Vec<u8>> {
    let first = size_hint.min(limit);
    let mut buf = Vec::with_capacity(usize::try_from(first).unwrap_or(0));
    // A `File` made from the descriptor opened and checked; no path is resolved again.
    std::fs::File::from(file)
        .take(limit)
        .read_to_end(&mut buf)?;
    Ok(buf)
}

/// Creates the subdirectory `name` of `dir` unless it exists, then opens it as [`open_dir`] does:
/// a link or anything but a directory at `name` is refused, never followed.
pub fn create_dir(dir: impl AsFd, name: &CStr, mode: u32) -> Result<OwnedFd, UntrustedOpenError> {
    let dir = dir.as_fd();
    match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(mode)) {
        Ok(()) | Err(Errno::EXIST) => open_dir(dir, name),
        Err(errno) => Err(UntrustedOpenError::Io(errno)),
    }
}

/// Replaces (or creates) the regular file `name` of `dir` with `bytes`, its permission bits
/// exactly `mode` (not narrowed by the umask): written to a new temporary name beside it
/// (`O_CREAT | O_EXCL | O_NOFOLLOW`, so nothing planted there is followed), synced, renamed
/// over `name` within `dir`, and the directory synced. A rename replaces a link at `name`
/// itself, never what it points to; the temporary file is removed when anything fails.
pub fn replace_file(dir: impl AsFd, name: &CStr, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = dir.as_fd();
    let flags = OFlags::WRONLY
        .union(OFlags::CREATE)
        .union(OFlags::EXCL)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);
    let stem = name.to_string_lossy();
    let mut attempt = 0u32;
    let (temp, fd) = loop {
        let temp = std::ffi::CString::new(format!(
            ".{stem}.tmp-{}-{}-{attempt}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos())
        ))
        .map_err(std::io::Error::other)?;
        match rustix::fs::openat(dir, &temp, flags, Mode::from_raw_mode(mode)) {
            Ok(fd) => break (temp, fd),
            Err(Errno::EXIST) if attempt < 16 => attempt += 1,
            Err(errno) => return Err(errno.into()),
        }
    };
    let written = (|| {
        // `mode` exactly, whatever the umask took from it at creation.
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))?;
        let mut file = std::fs::File::from(fd);
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        rustix::fs::renameat(dir, &temp, dir, name)?;
        rustix::fs::fsync(dir)?;
        Ok(())
    })();
    if written.is_err() {
        let _ = rustix::fs::unlinkat(dir, &temp, AtFlags::empty());
    }
    written
}

/// `openat2(dir, name, flags, RESOLVE)`, or `openat(dir, name, flags)` where the kernel refuses
/// `openat2` itself. `name` is a single component, so `O_NOFOLLOW` in `flags` alone keeps the
/// fallback from traversing a link.
fn open_beneath(
    dir: rustix::fd::BorrowedFd<'_>,
    name: &CStr,
    flags: OFlags,
) -> Result<OwnedFd, Errno> {
    match openat2(dir, name, flags) {
        Err(errno) if openat2_unavailable(errno) => {
            rustix::fs::openat(dir, name, flags, Mode::empty())
        }
        other => other,
    }
}

/// Whether `openat2` failed because the kernel does not offer it to us (too old: `ENOSYS`;
/// filtered by a seccomp policy: `EPERM`), rather than because of the name.
fn openat2_unavailable(errno: Errno) -> bool {
    errno == Errno::NOSYS || errno == Errno::PERM
}

#[cfg(test)]
thread_local! {
    /// The error `openat2` is made to fail with on this thread, for [`with_openat2_failing`].
    static OPENAT2_FAILS: Cell<Option<Errno>> = const { Cell::new(None) };
}

fn openat2(dir: rustix::fd::BorrowedFd<'_>, name: &CStr, flags: OFlags) -> Result<OwnedFd, Errno> {
    #[cfg(test)]
    if let Some(errno) = OPENAT2_FAILS.get() {
        return Err(errno);
    }
    rustix::fs::openat2(dir, name, flags, Mode::empty(), RESOLVE)
}

/// Runs `f` with every `openat2` on this thread failing with `errno`, as on a kernel without it
/// (`ENOSYS`) or under a seccomp filter (`EPERM`): the fallback path, for tests.
#[cfg(test)]
pub fn with_openat2_failing<R>(errno: Errno, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Errno>);
    impl Drop for Restore {
        fn drop(&mut self) {
            OPENAT2_FAILS.set(self.0);
        }
    }
    let _restore = Restore(OPENAT2_FAILS.replace(Some(errno)));
    f()
}

#[cfg(test)]
mod tests {
    //! Each defence on its own: where two layers would refuse the same attack, the test makes
    //! the other one unable to see it (a forced fallback, flags without `O_NOFOLLOW`, a name
    //! `openat` would resolve), so removing the layer under test makes it fail.

    use std::os::unix::fs::symlink;
    use std::path::PathBuf;
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().expect("tempdir")
    }

    fn fifo(path: &Path) {
        rustix::fs::mkfifoat(rustix::fs::CWD, path, Mode::from(0o644)).expect("mkfifo");
    }

    /// Runs `f` on another thread and fails if it has not returned within a few seconds (an open
    /// blocked on `fifo`, which nobody writes to). The blocked open is then released by opening
    /// the FIFO for writing, so a failing test never hangs.
    fn without_blocking<R: Send + 'static>(
        fifo: &Path,
        f: impl FnOnce() -> R + Send + 'static,
    ) -> R {
        let (tx, rx) = mpsc::channel();
        let worker = std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        match rx.recv_timeout(Duration::from_secs(5)) {
            Ok(r) => {
                worker.join().expect("worker");
                r
            }
            Err(_) => {
                let _writer = rustix::fs::open(
                    fifo,
                    OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
                    Mode::empty(),
                );
                let _ = worker.join();
                panic!("the open blocked on a FIFO");
            }
        }
    }

    /// Whether this kernel offers `openat2` to us at all (the tests of its own flags need it).
    fn openat2_offered() -> bool {
        let dir = open_root(Path::new("/")).expect("/");
        match rustix::fs::openat2(&dir, c".", DIR_FLAGS, Mode::empty(), RESOLVE) {
            Ok(_) => true,
            // Not offered by this kernel: the tests of openat2's own flags have nothing to test.
            Err(e) if openat2_unavailable(e) => false,
            Err(e) => panic!("openat2 probe: {e}"),
        }
    }

    #[test]
    fn open_root_tells_missing_link_and_non_directory_apart() {
        let t = tmp();
        let root = t.path();
        fs_err::create_dir(root.join("dir")).unwrap();
        fs_err::write(root.join("file"), b"x").unwrap();
        symlink(root.join("dir"), root.join("link")).unwrap();
        symlink(root.join("gone"), root.join("dangling")).unwrap();
        assert!(open_root(&root.join("dir")).is_ok());
        assert!(matches!(
            open_root(&root.join("nope")),
            Err(UntrustedOpenError::NotFound)
        ));
        assert!(matches!(
            open_root(&root.join("link")),
            Err(UntrustedOpenError::Symlink)
        ));
        assert!(matches!(
            open_root(&root.join("dangling")),
            Err(UntrustedOpenError::Symlink)
        ));
        assert!(matches!(
            open_root(&root.join("file")),
            Err(UntrustedOpenError::NotADirectory)
        ));
        let fifo_path = root.join("fifo");
        fifo(&fifo_path);
        let p = fifo_path.clone();
        let r = without_blocking(&fifo_path, move || open_root(&p).map(drop));
        assert!(matches!(r, Err(UntrustedOpenError::NotADirectory)));
    }

    #[test]
    fn listing_bound_exactly_at_and_one_past() {
        let t = tmp();
        for name in ["c", "a", "b"] {
            fs_err::write(t.path().join(name), b"").unwrap();
        }
        let dir = open_root(t.path()).unwrap();
        let at = list(&dir, 3).unwrap();
        assert!(!at.over);
        let names: Vec<&CStr> = at.names.iter().map(AsRef::as_ref).collect();
        assert_eq!(names, [c"a", c"b", c"c"], "sorted, without . and ..");
        let dir = open_root(t.path()).unwrap();
        let past = list(&dir, 2).unwrap();
        assert!(past.over);
        assert_eq!(past.names.len(), 2);
        let dir = open_root(t.path()).unwrap();
        let none = list(&dir, 0).unwrap();
        assert!(none.over && none.names.is_empty());
    }

    #[test]
    fn scan_stops_when_told() {
        let t = tmp();
        for name in ["a", "b", "c"] {
            fs_err::write(t.path().join(name), b"").unwrap();
        }
        let dir = open_root(t.path()).unwrap();
        let mut seen = Vec::new();
        scan(&dir, |name| {
            seen.push(name.to_owned());
            if seen.len() == 2 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap();
        assert_eq!(seen.len(), 2);
    }

    #[test]
    fn a_fifo_opened_as_a_file_never_blocks_o_nonblock() {
        for fallback in [false, true] {
            let t = tmp();
            let fifo_path = t.path().join("pipe");
            fifo(&fifo_path);
            let dir = open_root(t.path()).unwrap();
            let r = without_blocking(&fifo_path, move || {
                let open = || open_file(&dir, c"pipe").map(drop);
                if fallback {
                    with_openat2_failing(Errno::NOSYS, open)
                } else {
                    open()
                }
            });
            assert!(
                matches!(r, Err(UntrustedOpenError::NotRegular)),
                "fallback {fallback}"
            );
        }
    }

    #[test]
    fn a_fifo_opened_as_a_directory_never_blocks_o_directory() {
        for fallback in [false, true] {
            let t = tmp();
            let fifo_path = t.path().join("pipe");
            fifo(&fifo_path);
            let dir = open_root(t.path()).unwrap();
            let r = without_blocking(&fifo_path, move || {
                let open = || open_dir(&dir, c"pipe").map(drop);
                if fallback {
                    with_openat2_failing(Errno::NOSYS, open)
                } else {
                    open()
                }
            });
            assert!(
                matches!(r, Err(UntrustedOpenError::NotADirectory)),
                "fallback {fallback}"
            );
        }
    }

    #[test]
    fn a_link_is_refused_by_o_nofollow_alone_in_the_fallback() {
        let t = tmp();
        fs_err::create_dir(t.path().join("sub")).unwrap();
        fs_err::write(t.path().join("file"), b"x").unwrap();
        symlink("file", t.path().join("file-link")).unwrap();
        symlink("sub", t.path().join("dir-link")).unwrap();
        let dir = open_root(t.path()).unwrap();
        with_openat2_failing(Errno::NOSYS, || {
            assert!(open_file(&dir, c"file").is_ok());
            assert!(open_dir(&dir, c"sub").is_ok());
            assert!(matches!(
                open_file(&dir, c"file-link"),
                Err(UntrustedOpenError::Symlink)
            ));
            assert!(matches!(
                open_dir(&dir, c"dir-link"),
                Err(UntrustedOpenError::Symlink)
            ));
        });
    }

    #[test]
    fn a_link_is_refused_by_resolve_no_symlinks_alone() {
        if !openat2_offered() {
            return;
        }
        let t = tmp();
        fs_err::write(t.path().join("file"), b"x").unwrap();
        symlink("file", t.path().join("link")).unwrap();
        let dir = open_root(t.path()).unwrap();
        let no_nofollow = OFlags::RDONLY | OFlags::CLOEXEC;
        // Without `O_NOFOLLOW`, `openat` follows the link: only `openat2` can refuse it.
        let followed = with_openat2_failing(Errno::NOSYS, || {
            open_beneath(dir.as_fd(), c"link", no_nofollow)
        });
        assert!(followed.is_ok());
        assert_eq!(
            open_beneath(dir.as_fd(), c"link", no_nofollow).map(drop),
            Err(Errno::LOOP)
        );
    }

    #[test]
    fn a_name_leaving_the_directory_is_refused_by_resolve_beneath_alone() {
        if !openat2_offered() {
            return;
        }
        let t = tmp();
        fs_err::create_dir(t.path().join("sub")).unwrap();
        let dir = open_root(&t.path().join("sub")).unwrap();
        // `openat` would open the parent: only `RESOLVE_BENEATH` refuses.
        let escaped =
            with_openat2_failing(Errno::NOSYS, || open_beneath(dir.as_fd(), c"..", DIR_FLAGS));
        assert!(escaped.is_ok());
        assert_eq!(
            open_beneath(dir.as_fd(), c"..", DIR_FLAGS).map(drop),
            Err(Errno::XDEV)
        );
    }

    #[test]
    fn openat2_is_used_where_offered_and_openat_only_where_refused() {
        if !openat2_offered() {
            return;
        }
        let t = tmp();
        fs_err::create_dir(t.path().join("sub")).unwrap();
        fs_err::write(t.path().join("sub/file"), b"x").unwrap();
        symlink("sub", t.path().join("link")).unwrap();
        let dir = open_root(t.path()).unwrap();
        // A link in the middle of a name: `O_NOFOLLOW` only guards the last component, so only
        // `openat2` tells which call was made.
        assert!(matches!(
            open_file(&dir, c"link/file"),
            Err(UntrustedOpenError::Symlink)
        ));
        for unavailable in [Errno::NOSYS, Errno::PERM] {
            let r = with_openat2_failing(unavailable, || open_file(&dir, c"link/file"));
            assert!(r.is_ok(), "{unavailable:?}: the fallback was not taken");
        }
        // Any other failure of `openat2` is the answer, not a reason to fall back.
        let r = with_openat2_failing(Errno::INVAL, || open_file(&dir, c"sub/file"));
        assert!(
            matches!(r, Err(UntrustedOpenError::Io(Errno::INVAL))),
            "{r:?}"
        );
        // And the hook is gone afterwards.
        assert!(matches!(
            open_file(&dir, c"link/file"),
            Err(UntrustedOpenError::Symlink)
        ));
    }

    #[test]
    fn openat2_unavailable_means_enosys_or_eperm_only() {
        assert!(openat2_unavailable(Errno::NOSYS));
        assert!(openat2_unavailable(Errno::PERM));
        for other in [
            Errno::INVAL,
            Errno::LOOP,
            Errno::XDEV,
            Errno::AGAIN,
            Errno::NOENT,
        ] {
            assert!(!openat2_unavailable(other), "{other:?}");
        }
    }

    #[test]
    fn open_file_refuses_what_is_not_a_regular_file() {
        let t = tmp();
        fs_err::create_dir(t.path().join("sub")).unwrap();
        let _listener =
            std::os::unix::net::UnixListener::bind(t.path().join("sock")).expect("bind");
        let dir = open_root(t.path()).unwrap();
        for fallback in [false, true] {
            let check = || {
                assert!(matches!(
                    open_file(&dir, c"sub"),
                    Err(UntrustedOpenError::NotRegular)
                ));
                assert!(matches!(
                    open_file(&dir, c"sock"),
                    Err(UntrustedOpenError::NotRegular)
                ));
                assert!(matches!(
                    open_file(&dir, c"nope"),
                    Err(UntrustedOpenError::NotFound)
                ));
            };
            if fallback {
                with_openat2_failing(Errno::NOSYS, check);
            } else {
                check();
            }
        }
        let (_, stat) = {
            fs_err::write(t.path().join("file"), b"abc").unwrap();
            open_file(&dir, c"file").unwrap()
        };
        assert_eq!(kind(&stat), FileType::RegularFile);
        assert_eq!(stat.st_size, 3);
    }

    #[test]
    fn descriptors_are_closed_on_exec() {
        let t = tmp();
        fs_err::create_dir(t.path().join("sub")).unwrap();
        fs_err::write(t.path().join("file"), b"x").unwrap();
        let root = open_root(t.path()).unwrap();
        let sub = open_dir(&root, c"sub").unwrap();
        let (file, _) = open_file(&root, c"file").unwrap();
        for fd in [&root, &sub, &file] {
            let flags = rustix::io::fcntl_getfd(fd).unwrap();
            assert!(flags.contains(rustix::io::FdFlags::CLOEXEC));
        }
    }

    #[test]
    fn open_dir_refuses_files_and_missing_names() {
        let t = tmp();
        fs_err::write(t.path().join("file"), b"x").unwrap();
        let dir = open_root(t.path()).unwrap();
        assert!(matches!(
            open_dir(&dir, c"file"),
            Err(UntrustedOpenError::NotADirectory)
        ));
        assert!(matches!(
            open_dir(&dir, c"nope"),
            Err(UntrustedOpenError::NotFound)
        ));
    }

    #[test]
    fn open_dir_path_walks_one_name_at_a_time() {
        let t = tmp();
        fs_err::create_dir_all(t.path().join("a/b")).unwrap();
        fs_err::write(t.path().join("a/b/f"), b"x").unwrap();
        symlink("a", t.path().join("link")).unwrap();
        let b = open_dir_path(t.path(), ["a", "b"]).unwrap();
        assert!(open_file(&b, c"f").is_ok());
        assert!(open_dir_path(t.path(), []).is_ok());
        assert!(matches!(
            open_dir_path(t.path(), ["link", "b"]),
            Err(UntrustedOpenError::Symlink)
        ));
        assert!(matches!(
            open_dir_path(t.path(), ["a", "nope"]),
            Err(UntrustedOpenError::NotFound)
        ));
        assert!(matches!(
            open_dir_path(t.path(), ["a", ".."]),
            Err(UntrustedOpenError::NotFound)
        ));
        assert!(matches!(
            open_dir_path(&t.path().join("missing"), ["a"]),
            Err(UntrustedOpenError::NotFound)
        ));
    }

    #[test]
    fn a_component_is_exactly_one_name() {
        for bad in ["", ".", "..", "a/b", "/a", "a\0b"] {
            assert!(
                matches!(component(bad), Err(UntrustedOpenError::NotFound)),
                "{bad:?}"
            );
        }
        for good in ["a", "...", ".hidden", "SKILL.md"] {
            assert_eq!(component(good).unwrap().to_str().unwrap(), good);
        }
    }

    #[test]
    fn stat_at_never_follows_and_says_none_for_a_missing_name() {
        let t = tmp();
        symlink("nowhere", t.path().join("link")).unwrap();
        fs_err::write(t.path().join("file"), b"x").unwrap();
        let dir = open_root(t.path()).unwrap();
        let link = stat_at(&dir, c"link").unwrap().expect("exists");
        assert_eq!(kind(&link), FileType::Symlink);
        assert_eq!(
            kind(&stat_at(&dir, c"file").unwrap().unwrap()),
            FileType::RegularFile
        );
        assert!(stat_at(&dir, c"nope").unwrap().is_none());
        assert_eq!(stat_at(&dir, c"file/x").map(drop), Err(Errno::NOTDIR));
    }

    #[test]
    fn same_file_needs_the_same_device_and_the_same_inode() {
        let t = tmp();
        fs_err::write(t.path().join("a"), b"x").unwrap();
        let dir = open_root(t.path()).unwrap();
        let a = stat_at(&dir, c"a").unwrap().unwrap();
        assert!(same_file(&a, &a));
        let mut other_device = a;
        other_device.st_dev ^= 1;
        assert!(!same_file(&a, &other_device), "same inode, other device");
        let mut other_inode = a;
        other_inode.st_ino ^= 1;
        assert!(!same_file(&a, &other_inode), "same device, other inode");
        let mut both = other_inode;
        both.st_dev ^= 1;
        assert!(!same_file(&a, &both));
    }

    fn opened(path: &Path) -> (OwnedFd, u64) {
        let dir = open_root(path.parent().unwrap()).unwrap();
        let name = component(path.file_name().unwrap().to_str().unwrap()).unwrap();
        let (fd, stat) = open_file(&dir, &name).unwrap();
        (fd, stat.st_size as u64)
    }

    #[test]
    fn read_capped_at_the_cap_and_one_past() {
        let t = tmp();
        let path = t.path().join("f");
        fs_err::write(&path, b"0123456789").unwrap();
        let (fd, size) = opened(&path);
        assert_eq!(read_capped(fd, 10, size).unwrap(), b"0123456789");
        let (fd, size) = opened(&path);
        assert!(matches!(
            read_capped(fd, 9, size),
            Err(UntrustedReadError::TooLarge { cap: 9 })
        ));
        let (fd, size) = opened(&path);
        assert_eq!(read_at_most(fd, 4, size).unwrap(), b"0123");
        let (fd, _) = opened(&path);
        assert_eq!(read_at_most(fd, 11, u64::MAX).unwrap(), b"0123456789");
        let (fd, _) = opened(&path);
        assert!(matches!(
            read_capped(fd, u64::MAX, 0),
            Ok(bytes) if bytes == b"0123456789"
        ));
    }

    #[test]
    fn a_huge_sparse_file_is_refused_after_one_byte_past_the_cap() {
        let t = tmp();
        let path = t.path().join("sparse");
        fs_err::File::create(&path)
            .unwrap()
            .set_len(10 * 1024 * 1024 * 1024)
            .unwrap();
        let (fd, size) = opened(&path);
        assert_eq!(size, 10 * 1024 * 1024 * 1024);
        // A duplicate shares the file offset: it tells how far the read went.
        let probe = rustix::io::dup(&fd).unwrap();
        assert!(matches!(
            read_capped(fd, 1024, size),
            Err(UntrustedReadError::TooLarge { cap: 1024 })
        ));
        let read = rustix::fs::seek(&probe, rustix::fs::SeekFrom::Current(0)).unwrap();
        assert_eq!(read, 1025, "read past the cap plus one byte");
    }

    #[test]
    fn the_size_from_stat_is_never_trusted() {
        // `/proc` files say they are empty and are not.
        let proc_self = PathBuf::from(format!("/proc/{}", std::process::id()));
        let dir = open_root(&proc_self).unwrap();
        let (fd, stat) = open_file(&dir, c"status").unwrap();
        assert_eq!(stat.st_size, 0);
        let bytes = read_capped(fd, 1 << 20, 0).unwrap();
        assert!(
            bytes.starts_with(b"Name:"),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
        let (fd, _) = open_file(&dir, c"status").unwrap();
        assert!(matches!(
            read_capped(fd, 8, 0),
            Err(UntrustedReadError::TooLarge { cap: 8 })
        ));
    }

    #[test]
    fn open_errors_become_io_errors_of_their_kind() {
        let kind = |e: UntrustedOpenError| e.into_io().kind();
        use std::io::ErrorKind;
        assert_eq!(kind(UntrustedOpenError::NotFound), ErrorKind::NotFound);
        assert_eq!(
            kind(UntrustedOpenError::NotADirectory),
            ErrorKind::NotADirectory
        );
        assert_eq!(
            kind(UntrustedOpenError::NotRegular),
            ErrorKind::InvalidInput
        );
        assert_eq!(
            kind(UntrustedOpenError::Io(Errno::ACCESS)),
            ErrorKind::PermissionDenied
        );
        assert_eq!(
            UntrustedOpenError::Symlink.into_io().raw_os_error(),
            Some(Errno::LOOP.raw_os_error())
        );
    }

    #[test]
    fn create_dir_makes_or_opens_a_directory_and_never_follows_a_link() {
        let t = tmp();
        let root = open_root(t.path()).expect("root");
        let made = create_dir(&root, c"blobs", 0o755).expect("made");
        assert!(t.path().join("blobs").is_dir());
        drop(made);
        create_dir(&root, c"blobs", 0o755).expect("opened again");
        let outside = tmp();
        symlink(outside.path(), t.path().join("linked")).expect("ln");
        assert!(matches!(
            create_dir(&root, c"linked", 0o755),
            Err(UntrustedOpenError::Symlink)
        ));
        fs_err::write(t.path().join("file"), "f").expect("write");
        assert!(matches!(
            create_dir(&root, c"file", 0o755),
            Err(UntrustedOpenError::NotADirectory)
        ));
    }

    #[test]
    fn replace_file_replaces_a_link_itself_and_leaves_no_temporary_file() {
        let t = tmp();
        let root = open_root(t.path()).expect("root");
        replace_file(&root, c"index.json", b"one", 0o644).expect("written");
        assert_eq!(
            fs_err::read(t.path().join("index.json")).expect("read"),
            b"one"
        );
        replace_file(&root, c"index.json", b"two", 0o644).expect("replaced");
        assert_eq!(
            fs_err::read(t.path().join("index.json")).expect("read"),
            b"two"
        );
        // A link planted at the name is replaced; what it points to is never written.
        let outside = tmp();
        let target = outside.path().join("secret");
        fs_err::write(&target, "untouched").expect("write");
        symlink(&target, t.path().join("planted")).expect("ln");
        replace_file(&root, c"planted", b"mine", 0o644).expect("replaced");
        assert_eq!(fs_err::read_to_string(&target).expect("read"), "untouched");
        assert!(
            !fs_err::symlink_metadata(t.path().join("planted"))
                .expect("stat")
                .is_symlink()
        );
        // A directory at the name: refused, and the temporary file is gone.
        fs_err::create_dir(t.path().join("dir")).expect("mkdir");
        assert!(replace_file(&root, c"dir", b"x", 0o644).is_err());
        let names: Vec<_> = fs_err::read_dir(t.path())
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names.len(), 3, "{names:?}");
    }
}
