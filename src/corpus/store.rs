//! Generations on disk: staging, publishing by one atomic link flip, rollback, and removal of
//! what is no longer needed. See the module doc of [`crate::corpus`] for the layout.

use std::ffi::CStr;
use std::os::fd::{AsFd as _, OwnedFd};

use fs_err::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use super::folders::{self, PRIVATE, SHARED};
use super::guard::{CorpusGuard, GuardError};
use super::manifest::{FORMAT, Manifest};
use crate::format::file_set::FileSet;
use crate::format::untrusted_fs::UntrustedOpenError;
use crate::source::code::PrepareCode;
use crate::support::escape;
use crate::support::failpoint;
use rustix::io::Errno;

/// The name of the published link.
pub const CURRENT: &str = "current";
/// The store's own folder.
pub const META: &str = ".skillfold";
/// The folders of the store, each with its mode: readers of `current` go through the
/// generations (and read the manifests); only the preparer's user enters staging and fetch.
const STORE_FOLDERS: [(&CStr, u32); 4] = [
    (c"generations", SHARED),
    (c"manifests", SHARED),
    (c"staging", PRIVATE),
    (c"fetch", PRIVATE),
];
/// The store's own folder, as a name.
const META_NAME: &CStr = c".skillfold";
/// How the name of a store being made begins (`.skillfold.new-<pid>-<nanos>`, beside where it
/// goes).
const STAGED_STORE: &str = ".skillfold.new-";

/// Whether `name` is that of a store being made: [`STAGED_STORE`], then `<pid>-<nanos>` (digits,
/// hexadecimal digits and one `-`).
pub(super) fn is_staged_store(name: &[u8]) -> bool {
    name.strip_prefix(STAGED_STORE.as_bytes())
        .and_then(|rest| {
            let dash = rest.iter().position(|&b| b == b'-')?;
            let (pid, nanos) = (&rest[..dash], &rest[dash + 1..]);
            Some(
                !pid.is_empty()
                    && pid.iter().all(u8::is_ascii_digit)
                    && !nanos.is_empty()
                    && nanos.iter().all(u8::is_ascii_hexdigit),
            )
        })
        .unwrap_or(false)
}

/// A corpus directory.
#[derive(Debug, Clone)]
pub struct Corpus {
    pub(super) dir: PathBuf,
}

/// A published (or staged) generation.
#[derive(Debug, Clone)]
pub struct Generation {
    /// Its id.
    pub id: String,
    /// Its directory: `<name>/SKILL.md`, ...
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
}

/// A generation being written.
#[derive(Debug)]
pub struct Staging {
    /// The id it will be published under.
    pub id: String,
    /// Where it is being written.
    pub dir: PathBuf,
    /// That folder, opened when it was made: its files are made durable through it.
    pub(super) opened: super::durable::OpenedFolder,
}

/// Failures of the store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CorpusError {
    /// A file-system operation failed.
    #[error("{}", escape::text(&.0.to_string()))]
    Io(#[from] std::io::Error),
    /// The directory holds something skillfold did not put there.
    #[error("`{}` is not a corpus managed by skillfold: {reason}", escape::path(.path))]
    NotManaged {
        /// The offending path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A manifest is unreadable or of an unknown format.
    #[error("manifest `{}` cannot be used: {}", escape::path(.path), escape::text(.detail))]
    BadManifest {
        /// Its path.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// Nothing to roll back to.
    #[error("`{}` has no previous generation to roll back to", escape::path(.0))]
    NoPrevious(PathBuf),
}

impl CorpusError {
    /// Stable error code.
    pub fn code(&self) -> PrepareCode {
        match self {
            CorpusError::Io(_) => PrepareCode::CorpusIo,
            CorpusError::NotManaged { .. } => PrepareCode::CorpusNotManaged,
            CorpusError::BadManifest { .. } => PrepareCode::CorpusBadManifest,
            CorpusError::NoPrevious(_) => PrepareCode::CorpusNoPrevious,
        }
    }
}

impl Corpus {
    /// A corpus at `dir`, without touching the disk (for reading).
    pub fn at(dir: &Path) -> Corpus {
        Corpus {
            dir: dir.to_owned(),
        }
    }

    /// Creates the corpus directory and the store's folders if missing (for preparing).
    ///
    /// A directory that already exists must be a skillfold corpus (it holds `.skillfold/`) or be
    /// empty; a `lost+found` alone (the root of a fresh file system, as a mounted volume is)
    /// counts as empty. Anything else is refused with [`CorpusError::NotManaged`] before anything
    /// is written — no guard, no staging — so a descriptor naming `/` or a home directory
    /// cannot make skillfold write into it.
    ///
    /// Preparers may start together on a corpus that does not exist yet (pods sharing a volume
    /// on their first start). None of them ever sees a store half made: each builds the store's
    /// folders under a name of its own (`.skillfold.new-<pid>-<nanos>`) and renames them to
    /// `.skillfold` in one `rename(2)`; the first rename wins, and the others use what it put
    /// there. The losers are then refused by the guard (retryable), never by this check.
    pub fn create(dir: &Path) -> Result<Corpus, CorpusError> {
        let corpus = Corpus::at(dir);
        corpus.check_manageable()?;
        corpus.make_dir()?;
        if !corpus.exists()? {
            corpus.make_store()?;
        }
        // A `.skillfold/` made by hand (or before the store had every folder, or by an earlier
        // version under a permissive umask) is completed, each folder held to its mode; a link
        // in place of one is refused.
        let meta = corpus.open_own(None)?;
        folders::restrict(&meta, SHARED).map_err(|e| named_io(&corpus.meta(), e))?;
        for (sub, mode) in STORE_FOLDERS {
            let path = corpus.meta().join(sub.to_string_lossy().as_ref());
            let folder = folders::make(&meta, sub, mode, false).map_err(|e| refused(&path, e))?;
            folders::restrict(&folder, mode).map_err(|e| named_io(&path, e))?;
        }
        Ok(corpus)
    }

    /// Makes the corpus directory if it is missing (and the folders above it), with [`SHARED`]
    /// whatever the umask: others may read it, never rename `.skillfold/` or `current` there.
    fn make_dir(&self) -> Result<(), CorpusError> {
        use std::os::unix::fs::PermissionsExt as _;
        let missing: Vec<&Path> = self
            .dir
            .ancestors()
            .filter(|dir| !dir.as_os_str().is_empty())
            .take_while(|dir| fs_err::symlink_metadata(dir).is_err())
            .collect();
        for dir in missing.into_iter().rev() {
            match fs_err::create_dir(dir) {
                Ok(()) => fs_err::set_permissions(dir, std::fs::Permissions::from_mode(SHARED))?,
                // Made meanwhile by another preparer.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Whether the store's folder `.skillfold/` exists (as a directory, not followed).
    pub fn exists(&self) -> Result<bool, CorpusError> {
        match fs_err::symlink_metadata(self.meta()) {
            Ok(m) => Ok(m.is_dir()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Builds `.skillfold/` with its folders (each with its mode) under a name of this
    /// process's own, then renames it into place. If another preparer's rename came first (ours
    /// then fails: its store is not empty), that store is used and ours is removed. Nothing is
    /// synced here: a store lost to a power cut holds nothing yet, and the next preparer makes it
    /// again; the publication's `syncfs` makes it durable before any `current` refers to it.
    fn make_store(&self) -> Result<(), CorpusError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let staged =
            std::ffi::CString::new(format!("{STAGED_STORE}{}-{nanos:x}", std::process::id()))
                .map_err(std::io::Error::other)?;
        let corpus = folders::open_below(&self.dir, &[]).map_err(|e| refused(&self.dir, e))?;
        let made = (|| -> Result<(), Errno> {
            let store = folders::make(&corpus, &staged, SHARED, true).map_err(folders::errno_of)?;
            for (sub, mode) in STORE_FOLDERS {
                folders::make(&store, sub, mode, true).map_err(folders::errno_of)?;
            }
            failpoint::pause("store-staged");
            rustix::fs::renameat(&corpus, staged.as_c_str(), &corpus, META_NAME)
        })();
        match made {
            Ok(()) => Ok(()),
            Err(e) => {
                // Ours may be gone already: a preparer holding the guard removes staged stores.
                let _ = folders::remove_tree(&corpus, &staged);
                if self.exists()? {
                    Ok(())
                } else {
                    Err(named_io(
                        &self.dir.join(staged.to_string_lossy().as_ref()),
                        e,
                    ))
                }
            }
        }
    }

    /// Whether skillfold may write here: the directory is missing, empty (but for a
    /// `lost+found` and stores being made), or already a corpus; [`CorpusError::NotManaged`]
    /// otherwise. Reads only.
    pub fn check_manageable(&self) -> Result<(), CorpusError> {
        let not_managed = |path: &Path, reason: String| CorpusError::NotManaged {
            path: path.to_owned(),
            reason,
        };
        // The corpus directory itself may be a link (to a volume); what is inside is not followed.
        match fs_err::metadata(&self.dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(not_managed(&self.dir, "it is not a directory".into())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e.into()),
        }
        match fs_err::symlink_metadata(self.meta()) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) => {
                return Err(not_managed(
                    &self.meta(),
                    "it is not a directory (links are not followed); move it away".into(),
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
        failpoint::pause("corpus-looked");
        for entry in fs_err::read_dir(&self.dir)? {
            let name = entry?.file_name();
            if name == "lost+found" || is_staged_store(name.as_encoded_bytes()) {
                continue;
            }
            // `.skillfold/` appeared since it was looked for: another preparer made the store
            // meanwhile (whole, by one rename). Look again rather than call it foreign.
            if name == META && self.exists()? {
                return Ok(());
            }
            return Err(not_managed(
                &self.dir,
                format!(
                    "it is not empty (it holds `{}`) and holds no `{META}/`; name an empty or \
                     missing directory for each Git source",
                    escape::bytes(name.as_encoded_bytes())
                ),
            ));
        }
        Ok(())
    }

    pub(super) fn meta(&self) -> PathBuf {
        self.dir.join(META)
    }

    pub(super) fn generation_dir(&self, id: &str) -> PathBuf {
        self.meta().join("generations").join(id)
    }

    pub(super) fn manifest_path(&self, id: &str) -> PathBuf {
        self.meta().join("manifests").join(format!("{id}.json"))
    }

    /// Takes the preparer's guard.
    pub fn guard(&self) -> Result<CorpusGuard, GuardError> {
        CorpusGuard::acquire(&self.dir, &self.meta().join("guard"))
    }

    /// The preparer holding this corpus's guard right now, if any (read-only probe).
    pub fn preparer(&self) -> Option<super::guard::HolderText> {
        super::guard::probe(&self.meta().join("guard"))
    }

    /// Where a fetch may put its throwaway repository (on the corpus's file system).
    pub fn fetch_dir(&self, id: &str) -> PathBuf {
        self.meta().join("fetch").join(format!("{id}.git"))
    }

    /// The generation `current` points to, if any.
    pub fn current(&self) -> Result<Option<Generation>, CorpusError> {
        match self.link_target(&self.dir.join(CURRENT))? {
            Some(id) => self.generation(&id).map(Some),
            None => Ok(None),
        }
    }

    /// The id a store link points to; `None` if the link does not exist.
    pub(super) fn link_target(&self, link: &Path) -> Result<Option<String>, CorpusError> {
        let target = match fs_err::read_link(link) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            // readlink(2) says EINVAL for anything that is not a link (kept as the error kind).
            Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
                return Err(CorpusError::NotManaged {
                    path: link.to_owned(),
                    reason: "it is not a symbolic link to a generation; move it away".into(),
                });
            }
            Err(e) => return Err(e.into()),
        };
        let text = target.to_string_lossy();
        match text.strip_prefix(".skillfold/generations/") {
            Some(id) if valid_id(id) => Ok(Some(id.to_owned())),
            _ => Err(CorpusError::NotManaged {
                path: link.to_owned(),
                reason: format!(
                    "it points to `{}`, not to one of its generations",
                    escape::text(&text)
                ),
            }),
        }
    }

    /// A generation by id, with its manifest.
    pub fn generation(&self, id: &str) -> Result<Generation, CorpusError> {
        let path = self.manifest_path(id);
        let text = fs_err::read_to_string(&path)?;
        let manifest: Manifest =
            serde_json::from_str(&text).map_err(|e| CorpusError::BadManifest {
                path: path.clone(),
                detail: e.to_string(),
            })?;
        if manifest.format != FORMAT || manifest.generation != id {
            return Err(CorpusError::BadManifest {
                path,
                detail: format!(
                    "format `{}` generation `{}`",
                    manifest.format, manifest.generation
                ),
            });
        }
        Ok(Generation {
            id: id.to_owned(),
            dir: self.generation_dir(id),
            manifest,
        })
    }

    /// The generation `current` replaced, if it still exists.
    pub fn previous(&self) -> Result<Option<Generation>, CorpusError> {
        let id = match fs_err::read_to_string(self.meta().join("previous")) {
            Ok(id) => id.trim().to_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        if !valid_id(&id) || !self.generation_dir(&id).is_dir() {
            return Ok(None);
        }
        self.generation(&id).map(Some)
    }

    /// `.skillfold/`, or its folder `sub`, opened without following a link on the way (only the
    /// corpus directory itself may be one); a link or anything but a folder there is refused
    /// ([`CorpusError::NotManaged`], naming it).
    pub(super) fn open_own(&self, sub: Option<&CStr>) -> Result<OwnedFd, CorpusError> {
        let meta = folders::open_below(&self.dir, &[META_NAME]).map_err(|e| {
            // Tell the corpus directory's own failure from `.skillfold`'s.
            match folders::open_below(&self.dir, &[]) {
                Err(e) => refused(&self.dir, e),
                Ok(_) => refused(&self.meta(), e),
            }
        })?;
        match sub {
            None => Ok(meta),
            Some(sub) => crate::format::untrusted_fs::open_dir(&meta, sub)
                .map_err(|e| refused(&self.meta().join(sub.to_string_lossy().as_ref()), e)),
        }
    }

    /// Starts a new generation in `staging/`: a folder of its own ([`SHARED`], since it becomes
    /// a generation), made and opened without following a link on the way.
    pub fn stage(&self, hint: &str) -> Result<Staging, CorpusError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let hint: String = hint
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(12)
            .collect();
        let id = format!("{nanos:x}-{hint}");
        let dir = self.meta().join("staging").join(&id);
        let staging = self.open_own(Some(c"staging"))?;
        let name = std::ffi::CString::new(id.as_str()).map_err(std::io::Error::other)?;
        let made = folders::make(&staging, &name, SHARED, true).map_err(|e| refused(&dir, e))?;
        let opened = super::durable::OpenedFolder::of(made)?;
        Ok(Staging { id, dir, opened })
    }
}

/// Why a folder of the store could not be opened or made: a link or anything but a folder in
/// its place is not the store's ([`CorpusError::NotManaged`]); any other failure is I/O.
pub(super) fn refused(path: &Path, e: UntrustedOpenError) -> CorpusError {
    let what = match e {
        UntrustedOpenError::Symlink => "a symbolic link",
        UntrustedOpenError::NotADirectory => "not a directory",
        other => return named_io(path, folders::errno_of(other)),
    };
    CorpusError::NotManaged {
        path: path.to_owned(),
        reason: format!(
            "it is {what} where skillfold keeps a folder of its own, and skillfold never follows \
             a link where it writes or removes; move it away"
        ),
    }
}

/// A failure of the system call `errno` on `path`, as I/O naming the path.
pub(super) fn named_io(path: &Path, errno: Errno) -> CorpusError {
    let e = std::io::Error::from(errno);
    CorpusError::Io(std::io::Error::new(
        e.kind(),
        format!("{e}: `{}`", path.display()),
    ))
}

impl Staging {
    /// Makes the folder `<staging>/<name>/`, its `files` (relative paths; empty, writable by
    /// their owner) and the folders that hold them ahead of [`write_bundle`](Self::write_bundle),
    /// which then finds them made and writes into them: a Git source does it while the server
    /// still sends the files, so that making folders and files (~12 µs and ~4 µs each on ext4) is
    /// not left to the staging. Best effort: it stops at the first folder or file it cannot make,
    /// never follows a link in place of the bundle's folder, and what it did not make is made, or
    /// fails, when the bundle is written.
    #[cfg(any(feature = "git", test))]
    pub fn make_ahead(&self, name: &str, files: &[String]) {
        use rustix::fs::{Mode, OFlags};
        let Ok(folder) = self.bundle_folder(name) else {
            return;
        };
        let mut folders = folders::BundleFolders::new(folder.as_fd());
        for file in files {
            let Ok((parent, file)) = folders.parent_of(file) else {
                return;
            };
            // Read bits as a file of `write_bundle` gets them (0o444 less the umask), and the
            // owner's write bit until it is written.
            let created = rustix::fs::openat(
                parent,
                &*file,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o644),
            );
            if created.is_err() {
                return;
            }
        }
    }

    /// Makes the folder of the bundle `name` in this staging ([`SHARED`]), or opens the one made
    /// ahead, relative to the staging's own folder: never a link in its place.
    fn bundle_folder(&self, name: &str) -> Result<OwnedFd, UntrustedOpenError> {
        let name = crate::format::untrusted_fs::component(name)?;
        folders::make(self.opened.fd(), &name, SHARED, false)
    }

    /// Whether folders and files cost so little to make here that handing them to another thread
    /// ([`make_ahead`](Self::make_ahead)) costs more than it saves: on tmpfs a `mkdir` is a few
    /// µs (31 agents × 16 bundles: 3–5 ms slower with the folders made ahead, 3–9 ms faster on
    /// ext4).
    #[cfg(any(feature = "git", test))]
    pub fn folders_are_cheap(&self) -> bool {
        const TMPFS_MAGIC: u64 = 0x0102_1994;
        rustix::fs::fstatfs(self.opened.fd())
            .is_ok_and(|stats| u64::try_from(stats.f_type).is_ok_and(|kind| kind == TMPFS_MAGIC))
    }

    /// Writes `files` as `<staging>/<name>/<path>`: new read-only regular files (`0444`, or
    /// `0555` for one its source marks executable: a Git tree's `100755`, an image layer's
    /// execute bit, less the umask), never following
    /// or overwriting anything but the empty files made ahead for them. They reach the disk when
    /// the generation is published (one `syncfs` for all of them, rather than one `fsync` per
    /// file). Files and folders are made relative to the bundle's folder (`openat`, `mkdirat`),
    /// so the corpus path is not walked again for each of them, and each folder is made once;
    /// folders and files made ahead ([`make_ahead`](Self::make_ahead)) are used as they are
    /// ([`open_for_writing`]), each file made read-only once written.
    pub fn write_bundle(&self, name: &str, files: &FileSet) -> Result<PathBuf, CorpusError> {
        let root = self.dir.join(name);
        let named = |path: &str, e: Errno| {
            let e = std::io::Error::from(e);
            std::io::Error::new(
                e.kind(),
                format!("{e} when creating `{}`", root.join(path).display()),
            )
        };
        let folder = self
            .bundle_folder(name)
            .map_err(|e| named("", folders::errno_of(e)))?;
        let owner = rustix::process::geteuid();
        let mut folders = folders::BundleFolders::new(folder.as_fd());
        for (path, bytes) in files.iter() {
            let path = path.as_str();
            let (parent, file_name) = folders.parent_of(path).map_err(|(sub, e)| named(sub, e))?;
            let executable = files.is_executable(path);
            let (file, read_only) = open_for_writing(parent, &file_name, owner, executable)
                .map_err(|e| named(path, e))?;
            let mut file = std::fs::File::from(file);
            std::io::Write::write_all(&mut file, bytes).map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("{e} when writing `{}`", root.join(path).display()),
                )
            })?;
            if let Some(mode) = read_only {
                rustix::fs::fchmod(&file, mode).map_err(|e| named(path, e))?;
            }
        }
        Ok(root)
    }
}

/// Opens the file `name` of a `folder` of a bundle in a staging to write it: made new and read-only
/// (`O_EXCL`, never through a link), or the empty file [`Staging::make_ahead`] made there, with
/// the mode to give it once written (its read bits). Anything else in its place is refused
/// (`EEXIST`), and nothing is opened through a link or a FIFO. A file made ahead that its owner
/// may not write (a umask without the owner's write bit, for a process without
/// `CAP_DAC_OVERRIDE`) is made again. An `executable` file gets an execute bit beside each read
/// bit.
fn open_for_writing(
    folder: std::os::fd::BorrowedFd<'_>,
    name: &CStr,
    owner: rustix::process::Uid,
    executable: bool,
) -> rustix::io::Result<(OwnedFd, Option<rustix::fs::Mode>)> {
    use rustix::fs::{AtFlags, Mode, OFlags};
    let with_execute =
        |read: u32| Mode::from_raw_mode(read | if executable { read >> 2 } else { 0 });
    let create = || {
        rustix::fs::openat(
            folder,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            with_execute(0o444),
        )
    };
    match create() {
        Err(Errno::EXIST) => {}
        made => return made.map(|file| (file, None)),
    }
    let opened = rustix::fs::openat(
        folder,
        name,
        OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    );
    match opened {
        Ok(file) => match made_ahead(&rustix::fs::fstat(&file)?, owner) {
            Some(mode) => Ok((file, Some(with_execute(mode.as_raw_mode())))),
            None => Err(Errno::EXIST),
        },
        Err(Errno::ACCESS)
            if rustix::fs::statat(folder, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|stat| made_ahead(&stat, owner).is_some()) =>
        {
            rustix::fs::unlinkat(folder, name, AtFlags::empty())?;
            create().map(|file| (file, None))
        }
        Err(_) => Err(Errno::EXIST),
    }
}

/// The read-only mode of a file [`Staging::make_ahead`] made, if `stat` is one: an empty regular
/// file of one link, owned by `owner` (this process's effective user).
fn made_ahead(stat: &rustix::fs::Stat, owner: rustix::process::Uid) -> Option<rustix::fs::Mode> {
    let regular =
        rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::RegularFile;
    let ours = stat.st_uid == owner.as_raw();
    (regular && ours && stat.st_size == 0 && stat.st_nlink == 1)
        .then(|| rustix::fs::Mode::from_raw_mode(stat.st_mode & 0o444))
}

/// Ids are ours: `[0-9a-z-]`, never `.` or `/`.
fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Creates `path` (which must not exist, and is never followed) and writes `bytes`.
pub(super) fn write_new(path: &Path, bytes: &[u8], mode: u32) -> Result<fs_err::File, CorpusError> {
    use std::io::Write as _;
    let mut file = fs_err::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)?;
    file.write_all(bytes)?;
    Ok(file)
}

pub(super) fn sync_dir(dir: &Path) -> Result<(), CorpusError> {
    fs_err::File::open(dir)?.sync_all()?;
    Ok(())
}

crate::support::error_code::coded_by_code!(CorpusError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_corpus_path_that_cannot_be_looked_up_is_an_error_not_a_missing_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("a-file");
        fs_err::write(&file, b"not a directory").unwrap();
        // `a-file/corpus` is not "missing": looking it up fails (ENOTDIR).
        let corpus = Corpus::at(&file.join("corpus"));
        assert!(corpus.check_manageable().is_err());
        // A path that really is missing may be created.
        assert!(
            Corpus::at(&tmp.path().join("new"))
                .check_manageable()
                .is_ok()
        );
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs_err::read_dir(dir)
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_directory_that_holds_something_else_is_refused_before_anything_is_written() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("home");
        fs_err::create_dir(&dir).expect("mkdir");
        fs_err::write(dir.join("notes.txt"), "mine\n").expect("write");
        let err = Corpus::create(&dir).expect_err("refused");
        assert_eq!(err.code(), "corpus_not_managed");
        assert!(err.to_string().contains("`notes.txt`"), "{err}");
        assert_eq!(
            entries(&dir),
            ["notes.txt"],
            "nothing written: no guard, no staging"
        );
        // Refused again, the same way, on the next attempt.
        assert_eq!(
            Corpus::create(&dir).expect_err("refused").code(),
            "corpus_not_managed"
        );
        assert_eq!(entries(&dir), ["notes.txt"]);
    }

    #[test]
    fn the_refusal_shows_what_it_found_escaped() {
        let tmp = tempfile::tempdir().expect("tempdir");
        fs_err::write(tmp.path().join("x\nok: forged\u{1b}[8m"), "").expect("write");
        let shown = Corpus::create(tmp.path()).expect_err("refused").to_string();
        assert!(shown.contains("`x\\nok: forged\\u{1b}[8m`"), "{shown}");
    }

    #[test]
    fn a_file_where_the_corpus_should_be_is_refused() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let file = tmp.path().join("corpus");
        fs_err::write(&file, "x").expect("write");
        assert_eq!(
            Corpus::create(&file).expect_err("refused").code(),
            "corpus_not_managed"
        );
        let meta_file = tmp.path().join("other");
        fs_err::create_dir(&meta_file).expect("mkdir");
        fs_err::write(meta_file.join(META), "not a folder").expect("write");
        assert_eq!(
            Corpus::create(&meta_file).expect_err("refused").code(),
            "corpus_not_managed"
        );
    }

    #[test]
    fn a_missing_or_empty_directory_or_an_existing_corpus_is_accepted() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let missing = tmp.path().join("a/b/corpus");
        Corpus::create(&missing).expect("created");
        assert_eq!(entries(&missing), [META]);
        let empty = tmp.path().join("empty");
        fs_err::create_dir(&empty).expect("mkdir");
        Corpus::create(&empty).expect("accepted");
        assert_eq!(entries(&empty), [META]);
        // An existing corpus, with what a publication leaves beside `.skillfold/`.
        fs_err::write(empty.join("README"), "an operator's note\n").expect("write");
        std::os::unix::fs::symlink(".skillfold/generations/x", empty.join(CURRENT))
            .expect("symlink");
        Corpus::create(&empty).expect("still a corpus");
    }

    #[test]
    fn a_fresh_file_system_with_only_lost_and_found_counts_as_empty() {
        let tmp = tempfile::tempdir().expect("tempdir");
        fs_err::create_dir(tmp.path().join("lost+found")).expect("mkdir");
        Corpus::create(tmp.path()).expect("accepted");
        assert_eq!(entries(tmp.path()), [META, "lost+found"]);
    }

    // A store another preparer is making (or left behind when it was killed) is not something
    // foreign: the directory still counts as empty, and the next preparer holding the guard
    // removes it. A name that only looks like one does not count.
    #[test]
    fn a_store_being_made_beside_is_ours_and_a_leftover_one_is_removed() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let staged = tmp.path().join(format!("{STAGED_STORE}4242-18c0ffee"));
        fs_err::create_dir_all(staged.join("generations")).expect("mkdir");
        let corpus = Corpus::create(tmp.path()).expect("accepted");
        let removed = corpus.remove_leftovers().expect("removed");
        assert_eq!(removed, [staged]);
        assert_eq!(entries(tmp.path()), [META]);
        for name in [
            ".skillfold.new-",
            ".skillfold.new-12",
            ".skillfold.new-x-1",
            ".skillfold.new-1-z",
        ] {
            assert!(!is_staged_store(name.as_bytes()), "{name}");
            let other = tempfile::tempdir().expect("tempdir");
            fs_err::create_dir(other.path().join(name)).expect("mkdir");
            let err = Corpus::create(other.path()).expect_err("refused");
            assert_eq!(err.code(), "corpus_not_managed", "{name}");
        }
    }

    // A preparer that lost the race to make the store uses the winner's: its own rename fails
    // (the winner's store is not empty) and its staged copy is removed.
    #[test]
    fn a_store_made_by_another_preparer_first_is_used() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let winner = Corpus::create(tmp.path()).expect("created");
        fs_err::write(tmp.path().join(META).join("generations/marker"), "").expect("write");
        winner
            .make_store()
            .expect("the loser uses the winner's store");
        assert_eq!(entries(tmp.path()), [META]);
        assert!(tmp.path().join(META).join("generations/marker").exists());
    }

    // A `.skillfold` that cannot be looked up (for another reason than being missing) stops the
    // preparer: the directory is never taken for an empty one it may fill.
    #[test]
    fn a_store_folder_that_cannot_be_looked_up_is_an_error_not_a_missing_one() {
        let tmp = tempfile::tempdir().expect("tempdir");
        // A directory whose path fits in PATH_MAX (4096 bytes with the NUL) while its
        // `.skillfold` does not: looking that up fails with ENAMETOOLONG.
        let mut dir = tmp.path().to_path_buf();
        while dir.as_os_str().len() < 4086 {
            let room = 4095 - dir.as_os_str().len() - 1;
            dir.push("d".repeat(room.min(200)));
        }
        fs_err::create_dir_all(&dir).expect("mkdir");
        assert!(fs_err::metadata(&dir).expect("reachable").is_dir());
        let err = Corpus::at(&dir)
            .check_manageable()
            .expect_err("not taken for an empty directory");
        assert_eq!(err.code(), "corpus_io", "{err}");
    }

    // Only "not a link" makes `current` a file skillfold did not put there; any other failure to
    // read it stays an I/O error (retryable), never a verdict on the directory.
    #[test]
    fn a_current_link_that_cannot_be_read_is_an_io_error() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let file = tmp.path().join("a-file");
        fs_err::write(&file, "not a directory").expect("write");
        // `a-file/current` cannot be read: ENOTDIR.
        let err = Corpus::at(&file).current().expect_err("unreadable");
        assert_eq!(err.code(), "corpus_io", "{err}");
    }

    /// A manifest of `generation` in `format`, with no bundles.
    fn manifest_json(format: &str, generation: &str) -> String {
        serde_json::json!({
            "format": format,
            "generation": generation,
            "created_unix": 0,
            "source": {"url": "https://example.invalid/r.git", "commit": "0".repeat(40), "root": null},
            "bundles": [],
        })
        .to_string()
    }

    // `current` leads only to one of the corpus's own generations: a link whose id climbs out
    // with `..` is refused, never used to read a manifest planted elsewhere.
    #[test]
    fn a_current_link_climbing_out_of_the_generations_is_refused() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("corpus");
        let corpus = Corpus::create(&dir).expect("created");
        // Where the manifest of the id `../../forged` would be looked up: `<corpus>/forged.json`.
        fs_err::write(
            dir.join("forged.json"),
            manifest_json(FORMAT, "../../forged"),
        )
        .expect("write");
        std::os::unix::fs::symlink(".skillfold/generations/../../forged", dir.join(CURRENT))
            .expect("symlink");
        let err = corpus.current().expect_err("refused");
        assert_eq!(err.code(), "corpus_not_managed", "{err}");
    }

    // A manifest is used only in the known format and under its own id: either check refuses
    // on its own.
    #[test]
    fn a_manifest_of_another_format_or_generation_is_refused() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let corpus = Corpus::create(tmp.path()).expect("created");
        fs_err::create_dir(corpus.generation_dir("g1")).expect("mkdir");
        for (format, generation) in [(FORMAT, "g2"), ("skillfold-corpus-manifest-v0", "g1")] {
            fs_err::write(
                corpus.manifest_path("g1"),
                manifest_json(format, generation),
            )
            .expect("write");
            let err = corpus.generation("g1").expect_err("refused");
            assert_eq!(err.code(), "corpus_bad_manifest", "{format} {generation}");
        }
        fs_err::write(corpus.manifest_path("g1"), manifest_json(FORMAT, "g1")).expect("write");
        assert_eq!(corpus.generation("g1").expect("used").id, "g1");
    }

    // No `previous` file means nothing to roll back to; one that cannot be read is an error,
    // never taken for a missing one.
    #[test]
    fn a_missing_previous_is_none_and_an_unreadable_one_an_error() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let corpus = Corpus::create(tmp.path()).expect("created");
        assert!(corpus.previous().expect("nothing yet").is_none());
        // A directory where the file should be: reading it fails with EISDIR.
        fs_err::create_dir(tmp.path().join(META).join("previous")).expect("mkdir");
        let err = corpus.previous().expect_err("unreadable");
        assert_eq!(err.code(), "corpus_io", "{err}");
    }

    // A `previous` naming a generation whose folder is gone is not offered, even with its
    // manifest left behind: a rollback never points `current` at a missing generation.
    #[test]
    fn a_previous_generation_without_its_folder_is_not_offered() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let corpus = Corpus::create(tmp.path()).expect("created");
        fs_err::write(tmp.path().join(META).join("previous"), "g0\n").expect("write");
        fs_err::write(corpus.manifest_path("g0"), manifest_json(FORMAT, "g0")).expect("write");
        assert!(corpus.previous().expect("read").is_none());
        let err = corpus.rollback().expect_err("nothing to roll back to");
        assert_eq!(err.code(), "corpus_no_previous", "{err}");
        assert!(fs_err::symlink_metadata(tmp.path().join(CURRENT)).is_err());
    }

    // A manifest whose generation was never moved into place is a leftover and is removed; the
    // manifest of a generation on disk stays.
    #[test]
    fn a_manifest_without_its_generation_is_a_leftover() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let corpus = Corpus::create(tmp.path()).expect("created");
        fs_err::create_dir(corpus.generation_dir("g1")).expect("mkdir");
        for id in ["g1", "g9"] {
            fs_err::write(corpus.manifest_path(id), manifest_json(FORMAT, id)).expect("write");
        }
        let removed = corpus.remove_leftovers().expect("removed");
        assert_eq!(removed, [corpus.manifest_path("g9")]);
        assert_eq!(
            entries(&tmp.path().join(META).join("manifests")),
            ["g1.json"]
        );
    }

    // A bundle's folders are made once each, at any depth and in any order the code-point order
    // of the paths brings them (a deeper folder before its parent's own files); every file is
    // written read-only with its exact bytes.
    #[test]
    fn a_staged_bundle_holds_every_file_of_nested_folders() {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().expect("tempdir");
        let corpus = Corpus::create(tmp.path()).expect("created");
        let staging = corpus.stage("nested").expect("staged");
        let paths = [
            "SKILL.md",
            "a/b/c/deep.md",
            "a/b/mid.md",
            "a/top.md",
            "a-b/side.md",
            "z.md",
        ];
        let root = staging
            .write_bundle("hello", &file_set(&paths))
            .expect("written");
        for path in paths {
            let file = root.join(path);
            assert_eq!(
                fs_err::read(&file).expect("read"),
                format!("# {path}\n").into_bytes()
            );
            let mode = fs_err::metadata(&file).expect("meta").permissions().mode();
            assert_eq!(mode & 0o222, 0, "{path} is writable");
        }
    }

    fn file_set(paths: &[&str]) -> FileSet {
        let mut builder = crate::format::file_set::FileSetBuilder::new();
        for path in paths {
            builder.insert(path, format!("# {path}\n").into_bytes());
        }
        let (files, problems) = builder.finish();
        assert!(problems.as_slice().is_empty(), "{problems:?}");
        files
    }

    /// The mode of each file of `paths` under `root`, by path.
    fn modes(root: &Path, paths: &[&str]) -> Vec<u32> {
        use std::os::unix::fs::PermissionsExt as _;
        paths
            .iter()
            .map(|path| {
                fs_err::metadata(root.join(path))
                    .expect("meta")
                    .permissions()
                    .mode()
            })
            .collect()
    }

    // A file its source marks executable gets an execute bit beside each read bit, written
    // fresh or into a file made ahead; the others none, and none is writable.
    #[test]
    fn an_executable_file_is_written_with_execute_bits() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let corpus = Corpus::create(tmp.path()).expect("created");
        let paths = ["SKILL.md", "scripts/run.sh"];
        let mut builder = crate::format::file_set::FileSetBuilder::new();
        for path in paths {
            builder.insert(path, format!("# {path}\n").into_bytes());
        }
        builder.mark_executable("scripts/run.sh");
        let files = builder.finish().0;
        for ahead in [false, true] {
            let staging = corpus.stage("exec").expect("staged");
            if ahead {
                staging.make_ahead("hello", &paths.map(String::from));
            }
            let root = staging.write_bundle("hello", &files).expect("written");
            let [skill, script] = modes(&root, &paths)[..] else {
                unreachable!()
            };
            assert_eq!(skill & 0o111, 0, "made ahead: {ahead}");
            assert_eq!(script & 0o111, (script & 0o444) >> 2, "made ahead: {ahead}");
            assert!(script & 0o100 != 0 && (skill | script) & 0o222 == 0);
        }
    }

    // The folders and files made ahead are the ones the bundle is written into: every file
    // holds its exact bytes and ends with the mode a file written without them gets.
    #[test]
    fn folders_and_files_made_ahead_are_used_by_the_bundle_written_into_them() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let corpus = Corpus::create(tmp.path()).expect("created");
        let staging = corpus.stage("ahead").expect("staged");
        let paths = ["SKILL.md", "a/b/c/deep.md", "a/top.md", "a-b/side.md"];
        let files = paths.map(String::from);
        staging.make_ahead("hello", &files);
        for sub in ["a", "a/b", "a/b/c", "a-b"] {
            assert!(staging.dir.join("hello").join(sub).is_dir(), "{sub} made");
        }
        for file in &files {
            let made = fs_err::metadata(staging.dir.join("hello").join(file)).expect("made");
            assert!(made.is_file() && made.len() == 0, "{file} made empty");
        }
        let root = staging
            .write_bundle("hello", &file_set(&paths))
            .expect("written into the folders and files made ahead");
        for path in paths {
            assert_eq!(
                fs_err::read(root.join(path)).expect("read"),
                format!("# {path}\n").into_bytes()
            );
        }
        let plain = corpus.stage("plain").expect("staged");
        let written = plain
            .write_bundle("hello", &file_set(&paths))
            .expect("written");
        assert_eq!(modes(&root, &paths), modes(&written, &paths));
        assert!(modes(&root, &paths).iter().all(|mode| mode & 0o222 == 0));
    }

    // Only an empty regular file of one link is taken for a file made ahead: a file with
    // bytes, a second link to a file elsewhere, a symbolic link or a FIFO in its place is
    // refused, and nothing it leads to is written (or waited for).
    #[test]
    fn only_an_empty_file_of_one_link_is_written_in_place() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        let corpus = Corpus::create(tmp.path()).expect("created");
        let target = outside.path().join("target");
        // Each plants something at the file's place, or says it cannot here (a device node and
        // another owner need privileges).
        type Plant = fn(&Path, &Path) -> bool;
        let plants: [(&str, Plant); 6] = [
            ("bytes", |_, at| {
                fs_err::write(at, "planted").expect("write");
                true
            }),
            ("hard link", |target, at| {
                fs_err::write(target, "").expect("write");
                fs_err::hard_link(target, at).expect("link");
                true
            }),
            ("symbolic link", |target, at| {
                fs_err::write(target, "").expect("write");
                std::os::unix::fs::symlink(target, at).expect("link");
                true
            }),
            ("fifo", |_, at| {
                let fifo = rustix::fs::FileType::Fifo;
                let mode = rustix::fs::Mode::from_raw_mode(0o600);
                rustix::fs::mknodat(rustix::fs::CWD, at, fifo, mode, 0).expect("fifo");
                true
            }),
            ("device", |_, at| {
                // The device of /dev/null: written to, it would swallow the bundle's bytes.
                let device = rustix::fs::FileType::CharacterDevice;
                let mode = rustix::fs::Mode::from_raw_mode(0o600);
                let null = rustix::fs::makedev(1, 3);
                rustix::fs::mknodat(rustix::fs::CWD, at, device, mode, null).is_ok()
            }),
            ("another owner", |_, at| {
                fs_err::write(at, "").expect("write");
                let nobody = rustix::fs::Uid::from_raw(65534);
                rustix::fs::chown(at, Some(nobody), None).is_ok()
            }),
        ];
        let mut refused = Vec::new();
        for (what, plant) in plants {
            let staging = corpus.stage("planted").expect("staged");
            staging.make_ahead("hello", &[]);
            let at = staging.dir.join("hello").join("SKILL.md");
            if !plant(&target, &at) {
                continue;
            }
            let err = staging
                .write_bundle("hello", &file_set(&["SKILL.md"]))
                .expect_err(what);
            assert_eq!(err.code(), "corpus_io", "{what}: {err}");
            match what {
                "bytes" => assert_eq!(fs_err::read_to_string(&at).expect("read"), "planted"),
                "hard link" | "symbolic link" => {
                    assert_eq!(fs_err::read(&target).expect("read"), b"", "{what}");
                }
                _ => {}
            }
            let _ = fs_err::remove_file(&target);
            refused.push(what);
        }
        assert!(refused.len() >= 4, "{refused:?}");
    }

    // A file made ahead that its owner may not write (as a umask without the owner's write bit
    // makes it) is still written: in place when the process may override file permissions (as
    // root), made again otherwise. Either way it ends with its bytes and read-only.
    #[test]
    fn a_file_made_ahead_without_the_owners_write_bit_is_still_written() {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().expect("tempdir");
        let corpus = Corpus::create(tmp.path()).expect("created");
        let staging = corpus.stage("masked").expect("staged");
        staging.make_ahead("hello", &["SKILL.md".to_owned()]);
        let at = staging.dir.join("hello").join("SKILL.md");
        fs_err::set_permissions(&at, std::fs::Permissions::from_mode(0o444)).expect("chmod");
        let root = staging
            .write_bundle("hello", &file_set(&["SKILL.md"]))
            .expect("written");
        assert_eq!(
            fs_err::read(root.join("SKILL.md")).expect("read"),
            b"# SKILL.md\n"
        );
        assert_eq!(modes(&root, &["SKILL.md"])[0] & 0o777, 0o444);
    }

    #[test]
    fn folders_are_cheap_on_tmpfs_only() {
        // coreutils' `stat` names the file system type: the oracle.
        let kind = |dir: &Path| {
            let out = std::process::Command::new("stat")
                .args(["-f", "-c", "%T"])
                .arg(dir)
                .output()
                .expect("stat runs");
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        };
        let temp = std::env::temp_dir();
        for parent in [Path::new("/dev/shm"), &temp]
            .into_iter()
            .filter(|dir| dir.is_dir())
        {
            let tmp = tempfile::tempdir_in(parent).expect("tempdir");
            let staging = Corpus::create(tmp.path())
                .expect("created")
                .stage("kind")
                .expect("staged");
            assert_eq!(
                staging.folders_are_cheap(),
                kind(tmp.path()) == "tmpfs",
                "{}",
                parent.display()
            );
        }
    }

    #[test]
    fn a_link_in_place_of_a_bundle_folder_is_never_followed() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        let corpus = Corpus::create(tmp.path()).expect("created");
        let staging = corpus.stage("linked").expect("staged");
        std::os::unix::fs::symlink(outside.path(), staging.dir.join("hello")).expect("link");
        staging.make_ahead("hello", &["a/x.md".to_owned()]);
        assert!(
            staging
                .write_bundle("hello", &file_set(&["SKILL.md", "a/x.md"]))
                .is_err()
        );
        assert_eq!(
            entries(outside.path()),
            Vec::<String>::new(),
            "nothing written through the link"
        );
    }

    // A folder of a bundle made ahead and then swapped for a link (as another user could in a
    // staging anyone may enter) is never written through: the bundle is refused and nothing
    // lands outside the corpus, whichever folder on the way was swapped. A link planted before
    // the folders are made ahead is not followed either.
    #[test]
    fn a_folder_swapped_for_a_link_after_being_made_ahead_is_never_written_through() {
        let paths = ["SKILL.md", "references/a.md", "references/deep/b.md"];
        for (swapped, before) in [
            ("references", false),
            ("references/deep", false),
            ("references", true),
        ] {
            let tmp = tempfile::tempdir().expect("tempdir");
            let outside = tempfile::tempdir().expect("tempdir");
            let corpus = Corpus::create(tmp.path()).expect("created");
            let staging = corpus.stage("swapped").expect("staged");
            let bundle = staging.dir.join("hello");
            let swap = || {
                let at = bundle.join(swapped);
                if at.exists() {
                    fs_err::rename(&at, staging.dir.join("moved")).expect("move away");
                }
                std::os::unix::fs::symlink(outside.path(), &at).expect("link");
            };
            if before {
                fs_err::create_dir(&bundle).expect("mkdir");
                swap();
            }
            staging.make_ahead("hello", &paths.map(String::from));
            if !before {
                swap();
            }
            let err = staging
                .write_bundle("hello", &file_set(&paths))
                .expect_err("refused");
            assert_eq!(err.code(), "corpus_io", "{swapped}: {err}");
            assert!(err.to_string().contains(swapped), "{swapped}: {err}");
            assert_eq!(
                entries(outside.path()),
                Vec::<String>::new(),
                "{swapped}: nothing written through the link"
            );
        }
    }

    // Leftover removal never follows a link: one in place of `staging/`, `fetch/` or
    // `manifests/` is refused, naming it, and what it leads to keeps its files; a link inside
    // `staging/` is removed as a name.
    #[test]
    fn leftover_removal_never_empties_what_a_link_leads_to() {
        for sub in ["staging", "fetch", "manifests"] {
            let tmp = tempfile::tempdir().expect("tempdir");
            let victim = tempfile::tempdir().expect("tempdir");
            fs_err::write(victim.path().join("precious"), "keep").expect("write");
            let corpus = Corpus::create(tmp.path()).expect("created");
            let link = tmp.path().join(META).join(sub);
            fs_err::remove_dir(&link).expect("rmdir");
            std::os::unix::fs::symlink(victim.path(), &link).expect("link");
            let err = corpus.remove_leftovers().expect_err("refused");
            assert_eq!(err.code(), "corpus_not_managed", "{sub}: {err}");
            assert!(err.to_string().contains(&format!("{sub}`")), "{err}");
            assert_eq!(entries(victim.path()), ["precious"], "{sub}");
        }
        let tmp = tempfile::tempdir().expect("tempdir");
        let victim = tempfile::tempdir().expect("tempdir");
        fs_err::write(victim.path().join("precious"), "keep").expect("write");
        let corpus = Corpus::create(tmp.path()).expect("created");
        let staging = tmp.path().join(META).join("staging");
        std::os::unix::fs::symlink(victim.path(), staging.join("left")).expect("link");
        assert_eq!(
            corpus.remove_leftovers().expect("removed"),
            [staging.join("left")]
        );
        assert_eq!(entries(&staging), Vec::<String>::new());
        assert_eq!(entries(victim.path()), ["precious"]);
    }

    // After a publication only the new generation and the one it replaced stay on disk, each
    // with its manifest: older ones are removed.
    #[test]
    fn publishing_keeps_only_the_current_and_the_previous_generation() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let corpus = Corpus::create(tmp.path()).expect("created");
        let manifest: Manifest = serde_json::from_str(&manifest_json(FORMAT, "")).expect("json");
        let mut ids = Vec::new();
        for hint in ["one", "two", "three"] {
            let staging = corpus.stage(hint).expect("staged");
            let published = corpus.publish(&staging, &manifest).expect("published");
            ids.push(published.id);
        }
        let mut kept = vec![ids[1].clone(), ids[2].clone()];
        kept.sort();
        let meta = tmp.path().join(META);
        assert_eq!(entries(&meta.join("generations")), kept);
        let manifests: Vec<String> = kept.iter().map(|id| format!("{id}.json")).collect();
        assert_eq!(entries(&meta.join("manifests")), manifests);
    }
}
