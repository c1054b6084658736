//! The file-system steps of `install`, every one relative to the open target folder and none
//! following a link: opening (or creating) the folder, its lock, its inventory, staging a bundle
//! beside its place, swapping it in, and removing what `install` owns.
//!
//! - **The folder.** An existing target is opened with `O_DIRECTORY | O_NOFOLLOW` (a link there
//!   is refused). A missing one is created one component at a time below its deepest existing
//!   ancestor ([`untrusted_fs::create_dir`]: a link planted at a component is refused, never
//!   followed). The ancestors that already exist are the operator's (a home directory may be a
//!   link) and are opened as named.
//! - **One install at a time.** An exclusive `flock` on the open folder; a second `install` into
//!   the same folder is refused at once (retryable). Nothing is written for it.
//! - **Staging.** A bundle is written into `.skillfold-install-stage-<name>` inside the folder
//!   (same file system): new files only (`O_CREAT | O_EXCL | O_NOFOLLOW`), each given its mode
//!   exactly (no umask). Every bundle of a run is staged first, then one `syncfs` makes all of
//!   them durable before the first is swapped in ([`sync_staged`]): one sync per run, not per
//!   bundle.
//! - **Swapping in.** A new bundle is renamed into place with `RENAME_NOREPLACE`. A bundle that
//!   replaces one is exchanged with it in one step (`RENAME_EXCHANGE`), so `DIR/<name>` always
//!   holds a whole bundle, old or new; the old one, now at the staging name, is then removed.
//!   Where the file system cannot exchange (`EINVAL`), the old bundle is renamed aside to
//!   `.skillfold-install-old-<name>` and the new one renamed in: between those two renames
//!   `DIR/<name>` is absent (never half written), and a crash there leaves the old bundle aside,
//!   which the next run removes before installing the new one again. The folder itself is synced
//!   once, after the last rename or removal of a run ([`sync_folder`]), before the record that
//!   names the result is written.
//! - **Removing.** A bundle no longer selected is renamed aside first, then removed, so a crash
//!   never leaves half of it at its name. Removal walks the tree by descriptors, unlinking links
//!   as entries, never following them.
//! - **Leftovers.** Names starting with `.skillfold-install-` are the tool's own (staging, the
//!   renamed-aside bundles) and the record's temporary files; the next run removes them.

use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::code::InstallCode;
use super::error::InstallError;
use super::record::RECORD_NAME;
use crate::format::untrusted_fs::{self, UntrustedOpenError};
use crate::support::escape;

/// The prefix of every name `install` writes in the folder besides the bundles and the record.
pub const OWN_PREFIX: &str = ".skillfold-install-";

/// The most entries read from the target folder (or from one directory being removed, per pass).
pub const MAX_ENTRIES: usize = 4096;

/// The deepest tree [`remove_tree`] walks (bundles nest at most 64 levels).
const MAX_REMOVE_DEPTH: usize = 128;

/// One file to stage: its bundle-relative path, exact bytes and mode.
pub struct StagedFile<'a> {
    /// Bundle-relative POSIX path (checked by the bundle rules).
    pub path: &'a str,
    /// The verified bytes.
    pub bytes: &'a [u8],
    /// The permission bits to give it.
    pub mode: u32,
}

/// The target folder, open, with its display spelling.
pub struct Target {
    /// The open folder.
    pub fd: OwnedFd,
    /// The path as the operator gave it, escaped for messages.
    pub shown: String,
}

/// Opens the target folder `path`: `None` when it does not exist and `create` is false.
pub fn open_target(path: &Path, create: bool) -> Result<Option<Target>, InstallError> {
    let shown = escape::path(path).to_string();
    match untrusted_fs::open_root(path) {
        Ok(fd) => return Ok(Some(Target { fd, shown })),
        Err(UntrustedOpenError::NotFound) if create => {}
        Err(UntrustedOpenError::NotFound) => return Ok(None),
        Err(UntrustedOpenError::Io(errno)) => return Err(InstallError::io(&shown, &errno.into())),
        Err(e) => return Err(unsafe_target(&shown, &e)),
    }
    // The deepest ancestor that exists (the operator's, opened as named), then every missing
    // component created and opened without following a link.
    let mut missing: Vec<&std::ffi::OsStr> = Vec::new();
    let mut ancestor: Option<&Path> = None;
    for a in path.ancestors() {
        let probe = if a.as_os_str().is_empty() {
            Path::new(".")
        } else {
            a
        };
        match rustix::fs::lstat(probe) {
            Ok(_) => {
                ancestor = Some(probe);
                break;
            }
            Err(Errno::NOENT) => match a.file_name() {
                Some(name) => missing.push(name),
                None => return Err(unsafe_target(&shown, &UntrustedOpenError::NotADirectory)),
            },
            // A file, or a loop of links, on the way.
            Err(errno @ (Errno::NOTDIR | Errno::LOOP)) => {
                return Err(unsafe_target(&shown, &UntrustedOpenError::Io(errno)));
            }
            Err(errno) => return Err(InstallError::io(&shown, &errno.into())),
        }
    }
    let ancestor = ancestor.unwrap_or(Path::new("/"));
    let mut dir = rustix::fs::open(
        ancestor,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| match errno {
        // It exists (`lstat` saw it) yet cannot be opened as a folder: a link that points to
        // nothing, or to a file, or a loop of links, on the way to the target.
        Errno::NOENT | Errno::NOTDIR | Errno::LOOP => InstallError::new(
            InstallCode::InstallTargetUnsafe,
            format!(
                "the target folder `{shown}` cannot be used: `{}` on the way to it is not a \
                 folder ({})",
                escape::path(ancestor),
                std::io::Error::from(errno)
            ),
        ),
        errno => InstallError::io(&escape::path(ancestor).to_string(), &errno.into()),
    })?;
    for name in missing.iter().rev() {
        let c = cstr(name.as_encoded_bytes()).map_err(|e| unsafe_target(&shown, &e))?;
        dir = untrusted_fs::create_dir(&dir, &c, 0o755).map_err(|e| match e {
            UntrustedOpenError::Io(errno) => InstallError::io(&shown, &errno.into()),
            other => unsafe_target(&shown, &other),
        })?;
    }
    Ok(Some(Target { fd: dir, shown }))
}

fn unsafe_target(shown: &str, why: &UntrustedOpenError) -> InstallError {
    InstallError::new(
        InstallCode::InstallTargetUnsafe,
        format!("the target folder `{shown}` cannot be used: {why}"),
    )
}

/// One name as a C string (a name with a NUL byte cannot exist).
fn cstr(bytes: &[u8]) -> Result<Box<CStr>, UntrustedOpenError> {
    std::ffi::CString::new(bytes)
        .map(Into::into)
        .map_err(|_| UntrustedOpenError::NotFound)
}

/// Takes the folder's lock: one `install` at a time per folder.
pub fn lock(target: &Target) -> Result<(), InstallError> {
    match rustix::fs::flock(
        &target.fd,
        rustix::fs::FlockOperation::NonBlockingLockExclusive,
    ) {
        Ok(()) => Ok(()),
        Err(Errno::WOULDBLOCK) => Err(InstallError::new(
            InstallCode::InstallIo,
            format!(
                "another `install` is writing `{}` right now; run again when it is done",
                target.shown
            ),
        )),
        Err(errno) => Err(InstallError::io(&target.shown, &errno.into())),
    }
}

/// The names in the folder, sorted by bytes; more than [`MAX_ENTRIES`] is refused.
pub fn names(target: &Target) -> Result<Vec<Box<CStr>>, InstallError> {
    let listing = untrusted_fs::list(&target.fd, MAX_ENTRIES)
        .map_err(|errno| InstallError::io(&target.shown, &errno.into()))?;
    if listing.over {
        return Err(InstallError::new(
            InstallCode::InstallTargetUnsafe,
            format!(
                "the target folder `{}` holds more than {MAX_ENTRIES} entries; it is not inventoried",
                target.shown
            ),
        ));
    }
    Ok(listing.names)
}

/// What `name` is in the folder, without following it: `None` when absent.
pub fn kind_of(target: &Target, name: &str) -> Result<Option<FileType>, InstallError> {
    let c = cstr(name.as_bytes()).map_err(|e| InstallError::io(name, &e.into_io()))?;
    untrusted_fs::stat_at(&target.fd, &c)
        .map(|st| st.map(|st| untrusted_fs::kind(&st)))
        .map_err(|errno| InstallError::io(&format!("{}/{name}", target.shown), &errno.into()))
}

/// The staging name of bundle `name`.
fn stage_name(name: &str) -> String {
    format!("{OWN_PREFIX}stage-{name}")
}

/// The name a bundle being replaced or removed is renamed aside to.
fn aside_name(name: &str) -> String {
    format!("{OWN_PREFIX}old-{name}")
}

/// Writes `files` into the staging folder of bundle `name` (made new); [`sync_staged`] makes
/// them durable.
pub fn stage(target: &Target, name: &str, files: &[StagedFile<'_>]) -> Result<(), InstallError> {
    let staged = stage_name(name);
    let io = |e: std::io::Error| InstallError::io(&format!("{}/{staged}", target.shown), &e);
    remove_tree(target.fd.as_fd(), &staged, 0).map_err(io)?;
    let staged_c = cstr(staged.as_bytes()).map_err(|e| io(e.into_io()))?;
    let root =
        untrusted_fs::create_dir(&target.fd, &staged_c, 0o755).map_err(|e| io(e.into_io()))?;
    let written = files.iter().try_for_each(|file| {
        write_file(&root, file).map_err(|e| {
            InstallError::io(
                &format!("{}/{staged}/{}", target.shown, escape::text(file.path)),
                &e,
            )
        })
    });
    if written.is_err() {
        // What was staged is of no use (a full disk wants its space back); a crash here leaves
        // it for the next run.
        let _ = remove_tree(target.fd.as_fd(), &staged, 0);
    }
    written
}

/// Makes every bundle staged so far durable (one `syncfs` of the folder's file system), before
/// the first of them is swapped in.
pub fn sync_staged(target: &Target) -> Result<(), InstallError> {
    rustix::fs::syncfs(&target.fd)
        .map_err(|errno| InstallError::io(&target.shown, &std::io::Error::from(errno)))
}

/// Makes the renames and removals of a run durable (one `fsync` of the folder), before the
/// record that names their result is written.
pub fn sync_folder(target: &Target) -> Result<(), InstallError> {
    rustix::fs::fsync(&target.fd)
        .map_err(|errno| InstallError::io(&target.shown, &std::io::Error::from(errno)))
}

/// Removes the staging folder of bundle `name` (a run that failed before swapping it in).
pub fn unstage(target: &Target, name: &str) {
    let _ = remove_tree(target.fd.as_fd(), &stage_name(name), 0);
}

/// Creates `file` below the open directory `root`: its folders (`0755`), then the file itself,
/// new, with its exact mode.
fn write_file(root: &OwnedFd, file: &StagedFile<'_>) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut segments: Vec<&str> = file.path.split('/').collect();
    let last = segments.pop().unwrap_or_default();
    let mut dir: Option<OwnedFd> = None;
    for segment in segments {
        let c = untrusted_fs::component(segment).map_err(UntrustedOpenError::into_io)?;
        let parent = dir.as_ref().map_or(root.as_fd(), AsFd::as_fd);
        dir =
            Some(untrusted_fs::create_dir(parent, &c, 0o755).map_err(UntrustedOpenError::into_io)?);
    }
    let parent = dir.as_ref().map_or(root.as_fd(), AsFd::as_fd);
    let name = untrusted_fs::component(last).map_err(UntrustedOpenError::into_io)?;
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(parent, &*name, flags, Mode::from_raw_mode(0o600))?;
    // The mode exactly, whatever the umask.
    rustix::fs::fchmod(&fd, Mode::from_raw_mode(file.mode))?;
    std::fs::File::from(fd).write_all(file.bytes)
}

/// Puts the staged bundle `name` in place: renamed in when `DIR/<name>` is absent, exchanged
/// with it when it holds the bundle being replaced (see the module doc), the old one removed.
/// [`sync_folder`] makes it durable.
pub fn swap_in(target: &Target, name: &str, replace: bool) -> Result<(), InstallError> {
    let staged = stage_name(name);
    let io = |e: std::io::Error| InstallError::io(&format!("{}/{name}", target.shown), &e);
    let dir = target.fd.as_fd();
    if !replace {
        rename(dir, &staged, name, rustix::fs::RenameFlags::NOREPLACE).map_err(io)?;
    } else {
        match rename(dir, &staged, name, rustix::fs::RenameFlags::EXCHANGE) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(Errno::INVAL.raw_os_error()) => {
                let aside = aside_name(name);
                remove_tree(dir, &aside, 0).map_err(io)?;
                rename(dir, name, &aside, rustix::fs::RenameFlags::NOREPLACE).map_err(io)?;
                crate::support::failpoint::hit("install-renamed-aside");
                rename(dir, &staged, name, rustix::fs::RenameFlags::NOREPLACE).map_err(io)?;
                remove_tree(dir, &aside, 0).map_err(io)?;
            }
            Err(e) => return Err(io(e)),
        }
        // After an exchange the old bundle is at the staging name.
        remove_tree(dir, &staged, 0).map_err(io)?;
    }
    Ok(())
}

/// Removes the installed bundle `name`: renamed aside, then removed ([`sync_folder`] makes it
/// durable).
pub fn remove(target: &Target, name: &str) -> Result<(), InstallError> {
    let aside = aside_name(name);
    let io = |e: std::io::Error| InstallError::io(&format!("{}/{name}", target.shown), &e);
    let dir = target.fd.as_fd();
    remove_tree(dir, &aside, 0).map_err(io)?;
    rename(dir, name, &aside, rustix::fs::RenameFlags::NOREPLACE).map_err(io)?;
    remove_tree(dir, &aside, 0).map_err(io)
}

/// Removes what an interrupted run left: every name of `names` that is the tool's own
/// ([`is_own`]).
pub fn remove_leftovers(target: &Target, names: &[Box<CStr>]) -> Result<usize, InstallError> {
    let mut removed = 0;
    for name in names.iter().filter(|n| is_own(n)) {
        remove_entry(target.fd.as_fd(), name, 0).map_err(|e| {
            InstallError::io(
                &format!("{}/{}", target.shown, escape::bytes(name.to_bytes())),
                &e,
            )
        })?;
        removed += 1;
    }
    Ok(removed)
}

/// Whether `name` is one the tool writes besides the bundles and the record: its staging and
/// renamed-aside folders (`.skillfold-install-…`), and the record's temporary files
/// ([`untrusted_fs::replace_file`] names them `.<name>.tmp-…`).
pub fn is_own(name: &CStr) -> bool {
    let bytes = name.to_bytes();
    bytes.starts_with(OWN_PREFIX.as_bytes())
        || bytes.starts_with(format!(".{RECORD_NAME}.tmp-").as_bytes())
}

fn rename(
    dir: BorrowedFd<'_>,
    from: &str,
    to: &str,
    flags: rustix::fs::RenameFlags,
) -> std::io::Result<()> {
    let from = untrusted_fs::component(from).map_err(UntrustedOpenError::into_io)?;
    let to = untrusted_fs::component(to).map_err(UntrustedOpenError::into_io)?;
    match rustix::fs::renameat_with(dir, &*from, dir, &*to, flags) {
        // A file system without `RENAME_NOREPLACE`: the caller checked that `to` is absent
        // while holding the folder's lock.
        Err(Errno::INVAL) if flags == rustix::fs::RenameFlags::NOREPLACE => {
            Ok(rustix::fs::renameat(dir, &*from, dir, &*to)?)
        }
        other => Ok(other?),
    }
}

/// Removes `name` below `dir` and everything in it, walking by descriptors: a link is removed as
/// an entry, never followed. Absent is done.
fn remove_tree(dir: BorrowedFd<'_>, name: &str, depth: usize) -> std::io::Result<()> {
    let c = untrusted_fs::component(name).map_err(UntrustedOpenError::into_io)?;
    remove_entry(dir, &c, depth)
}

fn remove_entry(dir: BorrowedFd<'_>, name: &CStr, depth: usize) -> std::io::Result<()> {
    let Some(stat) = untrusted_fs::stat_at(dir, name)? else {
        return Ok(());
    };
    if untrusted_fs::kind(&stat) != FileType::Directory {
        return Ok(rustix::fs::unlinkat(dir, name, AtFlags::empty())?);
    }
    if depth > MAX_REMOVE_DEPTH {
        return Err(std::io::Error::other(format!(
            "nested deeper than {MAX_REMOVE_DEPTH} levels; remove it by hand"
        )));
    }
    let sub = untrusted_fs::open_dir(dir, name).map_err(UntrustedOpenError::into_io)?;
    loop {
        let listing = untrusted_fs::list(&sub, MAX_ENTRIES)?;
        for entry in &listing.names {
            remove_entry(sub.as_fd(), entry, depth + 1)?;
        }
        if !listing.over {
            break;
        }
    }
    Ok(rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?)
}
