//! Writing an image into an OCI image layout directory (`oci-layout`, `index.json`,
//! `blobs/sha256/<hex>`), the format `skopeo`, `oras`, `crane` and container tools read, for
//! air-gapped transfer. A layout may hold several images: blobs are shared by digest, and the
//! index gains (or replaces, by reference name) one entry.
//!
//! The directory may hold what someone else planted there, so everything beneath it goes through
//! the no-follow, descriptor-relative layer of [`crate::format::untrusted_fs`]: the layout
//! directory is opened once (a link there is refused), `blobs` and `blobs/sha256` are opened (or
//! made) beneath it without following a link, and every file is opened beneath its directory's
//! descriptor without following a link. A link, a FIFO, a device, a socket or a directory where a
//! file belongs refuses the push (`not_layout`), unread; what is read is read no further than its
//! bound (`oci-layout` [`MAX_MARKER_BYTES`], `index.json` [`MAX_INDEX_BYTES`], a blob its own
//! size). Every file is written to a fresh temporary name beneath its directory and renamed into
//! place there, so an interrupted push leaves the layout as it was or complete, and nothing
//! outside the layout is ever read or written.

use std::ffi::CStr;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::format::untrusted_fs::{self, UntrustedOpenError, UntrustedReadError};
use crate::source::oci::MEDIA_INDEX;
use crate::source::oci::MEDIA_MANIFEST;
use crate::source::oci::image::{Blob, Image, canonical, sha256};

/// The largest `index.json` read back (a layout of thousands of images stays far below).
pub const MAX_INDEX_BYTES: u64 = 4 * 1024 * 1024;

/// The largest `oci-layout` read back (it holds one short JSON object).
pub const MAX_MARKER_BYTES: u64 = 4 * 1024;

/// The mode of the files written (before the umask).
const FILE_MODE: u32 = 0o644;

/// The mode of the directories made (before the umask).
const DIR_MODE: u32 = 0o755;

/// Why the layout could not be written.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// Reading or writing failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The directory holds something that is not an OCI image layout.
    #[error("`{}` is not an OCI image layout: {reason}", crate::support::escape::path(.path))]
    NotLayout {
        /// The file that is wrong.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// The open directories of a layout: its root and `blobs/sha256`.
struct OpenLayout<'a> {
    dir: &'a Path,
    root: OwnedFd,
    blobs: OwnedFd,
}

/// Writes `image` into the layout at `dir` (created if missing), named `tag` in the index when
/// given. Returns the manifest digest.
pub fn write(dir: &Path, image: &Image, tag: Option<&str>) -> Result<String, LayoutError> {
    let layout = OpenLayout::open(dir)?;
    let marker = c"oci-layout";
    match layout.read(&layout.root, marker, "oci-layout", MAX_MARKER_BYTES)? {
        Some(bytes) => {
            let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            if value["imageLayoutVersion"] != "1.0.0" {
                return Err(layout.not_layout("oci-layout", "no imageLayoutVersion 1.0.0"));
            }
        }
        None => layout.replace(
            &layout.root,
            marker,
            "oci-layout",
            &canonical(&json!({"imageLayoutVersion": "1.0.0"})),
        )?,
    }
    for blob in image
        .layers
        .iter()
        .map(|l| &l.blob)
        .chain([&image.config, &image.manifest])
    {
        layout.put_blob(blob)?;
    }
    let mut manifests = layout.read_index()?;
    let mut entry = json!({
        "mediaType": MEDIA_MANIFEST,
        "digest": image.manifest.digest,
        "size": image.manifest.size(),
    });
    if let Some(tag) = tag {
        entry["annotations"] = json!({ "org.opencontainers.image.ref.name": tag });
    }
    manifests.retain(|m| match tag {
        Some(tag) => m["annotations"]["org.opencontainers.image.ref.name"] != tag,
        None => m["digest"] != image.manifest.digest.as_str(),
    });
    manifests.push(entry);
    let index = json!({ "schemaVersion": 2, "mediaType": MEDIA_INDEX, "manifests": manifests });
    layout.replace(
        &layout.root,
        c"index.json",
        "index.json",
        &canonical(&index),
    )?;
    Ok(image.manifest.digest.clone())
}

impl<'a> OpenLayout<'a> {
    /// Opens (making what is missing) the layout directory and `blobs/sha256` beneath it.
    fn open(dir: &'a Path) -> Result<OpenLayout<'a>, LayoutError> {
        // What is already there (a link, a file) is judged by `open_root` below.
        match fs_err::create_dir_all(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e.into()),
            _ => {}
        }
        let refused = |rel: &str, e: UntrustedOpenError| -> LayoutError {
            match e {
                UntrustedOpenError::Io(errno) => LayoutError::Io(errno.into()),
                other => LayoutError::NotLayout {
                    path: dir.join(rel),
                    reason: format!("{rel} {}", what_is(&other)),
                },
            }
        };
        let root = untrusted_fs::open_root(dir).map_err(|e| match e {
            UntrustedOpenError::Io(errno) => LayoutError::Io(errno.into()),
            other => LayoutError::NotLayout {
                path: dir.to_owned(),
                reason: format!("the directory {}", what_is(&other)),
            },
        })?;
        let blobs =
            untrusted_fs::create_dir(&root, c"blobs", DIR_MODE).map_err(|e| refused("blobs", e))?;
        let blobs = untrusted_fs::create_dir(&blobs, c"sha256", DIR_MODE)
            .map_err(|e| refused("blobs/sha256", e))?;
        Ok(OpenLayout { dir, root, blobs })
    }

    fn not_layout(&self, rel: &str, reason: impl Into<String>) -> LayoutError {
        LayoutError::NotLayout {
            path: self.dir.join(rel),
            reason: reason.into(),
        }
    }

    /// The bytes of the regular file `name` of `dir` (`rel` beneath the layout), at most `cap`;
    /// `None` when there is no such file. A link or a special file there is refused unread.
    fn read(
        &self,
        dir: impl AsFd,
        name: &CStr,
        rel: &str,
        cap: u64,
    ) -> Result<Option<Vec<u8>>, LayoutError> {
        match self.read_capped(dir, name, rel, cap)? {
            Capped::Missing => Ok(None),
            Capped::Bytes(bytes) => Ok(Some(bytes)),
            Capped::Over => Err(self.not_layout(rel, format!("{rel} holds more than {cap} bytes"))),
        }
    }

    fn read_capped(
        &self,
        dir: impl AsFd,
        name: &CStr,
        rel: &str,
        cap: u64,
    ) -> Result<Capped, LayoutError> {
        let (fd, stat) = match untrusted_fs::open_file(dir, name) {
            Ok(opened) => opened,
            Err(UntrustedOpenError::NotFound) => return Ok(Capped::Missing),
            Err(UntrustedOpenError::Io(errno)) => return Err(LayoutError::Io(errno.into())),
            Err(other) => return Err(self.not_layout(rel, format!("{rel} {}", what_is(&other)))),
        };
        let hint = u64::try_from(stat.st_size).unwrap_or(0);
        match untrusted_fs::read_capped(fd, cap, hint) {
            Ok(bytes) => Ok(Capped::Bytes(bytes)),
            Err(UntrustedReadError::TooLarge { .. }) => Ok(Capped::Over),
            Err(UntrustedReadError::Io(e)) => Err(e.into()),
        }
    }

    /// Writes `bytes` as `name` of `dir` through a temporary file beneath it.
    fn replace(
        &self,
        dir: impl AsFd,
        name: &CStr,
        rel: &str,
        bytes: &[u8],
    ) -> Result<(), LayoutError> {
        untrusted_fs::replace_file(dir, name, bytes, FILE_MODE).map_err(|e| {
            LayoutError::Io(std::io::Error::new(
                e.kind(),
                format!(
                    "writing {}: {e}",
                    crate::support::escape::path(&self.dir.join(rel))
                ),
            ))
        })
    }

    /// The `manifests` of `index.json`, none when there is no index yet.
    fn read_index(&self) -> Result<Vec<Value>, LayoutError> {
        let Some(bytes) = self.read(&self.root, c"index.json", "index.json", MAX_INDEX_BYTES)?
        else {
            return Ok(Vec::new());
        };
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| self.not_layout("index.json", format!("index.json is not JSON: {e}")))?;
        match value.get("manifests") {
            Some(Value::Array(items)) => Ok(items.clone()),
            _ => Err(self.not_layout("index.json", "index.json has no `manifests` array")),
        }
    }

    /// Writes a blob unless the layout already holds exactly those bytes (read no further than
    /// the blob's size).
    fn put_blob(&self, blob: &Blob) -> Result<(), LayoutError> {
        let hex = blob.digest.trim_start_matches("sha256:");
        let rel = format!("blobs/sha256/{hex}");
        let name = untrusted_fs::component(hex)
            .map_err(|_| self.not_layout(&rel, "a digest that is not a file name"))?;
        let same = match self.read_capped(&self.blobs, &name, &rel, blob.size())? {
            Capped::Bytes(existing) => sha256(&existing) == blob.digest,
            Capped::Missing | Capped::Over => false,
        };
        if same {
            return Ok(());
        }
        self.replace(&self.blobs, &name, &rel, &blob.bytes)
    }
}

/// What was found where a directory or a regular file belongs.
fn what_is(refusal: &UntrustedOpenError) -> String {
    match refusal {
        UntrustedOpenError::Symlink => "is a symbolic link (links are never followed)".into(),
        UntrustedOpenError::NotRegular => {
            "is not a regular file (a directory, FIFO, socket or device)".into()
        }
        UntrustedOpenError::NotADirectory => "is not a directory".into(),
        UntrustedOpenError::NotFound => "does not exist".into(),
        other => other.to_string(),
    }
}

/// A file read no further than its bound.
enum Capped {
    Missing,
    Bytes(Vec<u8>),
    Over,
}
