//! Writing an image into an OCI image layout directory (`oci-layout`, `index.json`,
//! `blobs/sha256/<hex>`), the format `skopeo`, `oras`, `crane` and container tools read, for
//! air-gapped transfer. A layout may hold several images: blobs are shared by digest, and the
//! index gains (or replaces, by reference name) one entry. Every file is written to a temporary
//! name and renamed into place, so an interrupted push leaves the layout as it was or complete.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::MEDIA_INDEX;
use super::MEDIA_MANIFEST;
use super::image::{Blob, Image, canonical, sha256};

/// The largest `index.json` read back (a layout of thousands of images stays far below).
const MAX_INDEX_BYTES: u64 = 4 * 1024 * 1024;

/// Why the layout could not be written.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// Reading or writing failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The directory holds something that is not an OCI image layout.
    #[error("`{}` is not an OCI image layout: {reason}", crate::format::escape::path(.path))]
    NotLayout {
        /// The file that is wrong.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// Writes `image` into the layout at `dir` (created if missing), named `tag` in the index when
/// given. Returns the manifest digest.
pub fn write(dir: &Path, image: &Image, tag: Option<&str>) -> Result<String, LayoutError> {
    fs_err::create_dir_all(dir.join("blobs").join("sha256"))?;
    let marker = dir.join("oci-layout");
    match crate::format::untrusted_fs::read_input(&marker, MAX_INDEX_BYTES)
        .map(|read| read.unwrap_or_default())
    {
        Ok(bytes) => {
            let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            if value["imageLayoutVersion"] != "1.0.0" {
                return Err(LayoutError::NotLayout {
                    path: marker,
                    reason: "no imageLayoutVersion 1.0.0".into(),
                });
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            replace(&marker, &canonical(&json!({"imageLayoutVersion": "1.0.0"})))?;
        }
        Err(e) => return Err(std::io::Error::from(e).into()),
    }
    for blob in image
        .layers
        .iter()
        .map(|l| &l.blob)
        .chain([&image.config, &image.manifest])
    {
        put_blob(dir, blob)?;
    }
    let index_path = dir.join("index.json");
    let mut manifests = read_index(&index_path)?;
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
    replace(&index_path, &canonical(&index))?;
    Ok(image.manifest.digest.clone())
}

fn read_index(path: &Path) -> Result<Vec<Value>, LayoutError> {
    let not_layout = |reason: String| LayoutError::NotLayout {
        path: path.to_owned(),
        reason,
    };
    // A FIFO or device is refused before it is opened; the size is checked before reading.
    let bytes = match crate::format::untrusted_fs::read_input(path, MAX_INDEX_BYTES) {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(size)) => {
            return Err(not_layout(format!(
                "index.json holds {size} bytes, over {MAX_INDEX_BYTES}"
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(not_layout(e.reason)),
    };
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| not_layout(format!("index.json is not JSON: {e}")))?;
    match value.get("manifests") {
        Some(Value::Array(items)) => Ok(items.clone()),
        _ => Err(not_layout("index.json has no `manifests` array".into())),
    }
}

/// Writes a blob unless the layout already holds exactly those bytes.
fn put_blob(dir: &Path, blob: &Blob) -> Result<(), LayoutError> {
    let hex = blob.digest.trim_start_matches("sha256:");
    let path = dir.join("blobs").join("sha256").join(hex);
    // Whatever is there that is not a regular file of those bytes (a FIFO included, unopened) is
    // replaced.
    if let Ok(Ok(existing)) =
        crate::format::untrusted_fs::read_input(&path, blob.bytes.len() as u64)
        && sha256(&existing) == blob.digest
    {
        return Ok(());
    }
    replace(&path, &blob.bytes)
}

/// Writes `bytes` to `path` through a temporary file in the same directory, synced, renamed.
fn replace(path: &Path, bytes: &[u8]) -> Result<(), LayoutError> {
    let parent = path.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(parent)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| LayoutError::Io(e.error))?;
    Ok(())
}
