//! A verified set of bundles as an OCI image: one gzip-compressed tar layer per bundle (entries
//! `<name>/<path>`, see [`super::tar`]), a standard image config listing the layers' diff ids, and
//! an image manifest whose layer descriptors carry each bundle's name, version and
//! `chamvi-skill-bundle-v1` digest as annotations, with the Git source and commit on the manifest
//! when every bundle came from one. Nothing in an image depends on the time, the machine or the
//! order bundles were given in: the same bundles give the same manifest digest, and the same
//! bundle gives the same layer in every image.

use std::io::Write as _;

use serde_json::{Map, Value, json};

use super::tar::{TarFile, archive};
use super::{
    ANNOTATION_BUNDLE_DIGEST, ANNOTATION_BUNDLE_NAME, ANNOTATION_BUNDLE_VERSION, MEDIA_CONFIG,
    MEDIA_LAYER_TAR_GZIP, MEDIA_MANIFEST,
};
use crate::format::pin::Pin;

/// The gzip level of every layer: fixed, so that the compressed bytes are too.
const GZIP_LEVEL: u32 = 6;

/// Content-addressed bytes: a blob of the image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// `sha256:<64 hex>` of the bytes.
    pub digest: String,
}

impl Blob {
    fn of(bytes: Vec<u8>) -> Blob {
        let digest = sha256(&bytes);
        Blob { bytes, digest }
    }

    /// Its size in bytes.
    pub fn size(&self) -> u64 {
        self.bytes.len() as u64
    }
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", crate::support::hex::sha256_hex(bytes))
}

/// One verified bundle to put in an image.
pub struct ImageBundle<'a> {
    /// Its pin (name, version, digest), verified.
    pub pin: &'a Pin,
    /// Every file: bundle-relative path, verified bytes, and whether it is executable.
    pub files: Vec<ImageFile>,
}

/// One file of a bundle in an image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageFile {
    /// Its bundle-relative path.
    pub path: String,
    /// Its verified bytes.
    pub bytes: Vec<u8>,
    /// Whether its source marks it executable (a Git tree's `100755`, an image layer's execute
    /// bit): written `0555` in the layer, else `0444`, so a re-published helper keeps its bit.
    pub executable: bool,
}

/// Where the bundles came from, for the manifest's standard annotations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// The Git source URL (credentials never appear in a descriptor).
    pub source: String,
    /// The full commit id.
    pub revision: String,
}

/// The platform recorded in the image config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform {
    /// `linux`.
    pub os: String,
    /// `amd64`, `arm64`, …
    pub architecture: String,
}

impl Default for Platform {
    fn default() -> Platform {
        Platform {
            os: "linux".into(),
            architecture: "amd64".into(),
        }
    }
}

/// One layer: the compressed blob, the uncompressed tar's digest, and the bundle's pin.
#[derive(Debug, Clone)]
pub struct Layer {
    /// The `tar+gzip` blob.
    pub blob: Blob,
    /// `sha256:` of the uncompressed tar (the config's diff id).
    pub diff_id: String,
    /// Name, version and digest of the bundle it holds.
    pub pin: Pin,
}

/// A built image: its layers, config and manifest.
#[derive(Debug, Clone)]
pub struct Image {
    /// One per bundle, by name.
    pub layers: Vec<Layer>,
    /// The image config.
    pub config: Blob,
    /// The image manifest; its digest names the image.
    pub manifest: Blob,
}

/// The layer of one bundle.
pub fn layer(bundle: &ImageBundle<'_>) -> Layer {
    let name = bundle.pin.name.as_str();
    let files: Vec<TarFile<'_>> = bundle
        .files
        .iter()
        .map(|file| TarFile {
            path: format!("{name}/{}", file.path),
            bytes: &file.bytes,
            executable: file.executable,
        })
        .collect();
    let tar = archive(&files);
    let diff_id = sha256(&tar);
    Layer {
        blob: Blob::of(gzip(&tar)),
        diff_id,
        pin: bundle.pin.clone(),
    }
}

/// gzip with no file name, no time, the "unknown" operating system byte and one fixed level.
fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), flate2::Compression::new(GZIP_LEVEL));
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(bytes);
    encoder.finish().unwrap_or_default()
}

/// The image of `bundles` (any order: layers are ordered by bundle name).
pub fn image(
    bundles: &[ImageBundle<'_>],
    provenance: Option<&Provenance>,
    platform: &Platform,
) -> Image {
    let mut layers: Vec<Layer> = bundles.iter().map(layer).collect();
    layers.sort_by(|a, b| a.pin.name.cmp(&b.pin.name));
    let config = json!({
        "architecture": platform.architecture,
        "os": platform.os,
        "config": {},
        "rootfs": {
            "type": "layers",
            "diff_ids": layers.iter().map(|l| l.diff_id.as_str()).collect::<Vec<_>>(),
        },
    });
    let config = Blob::of(canonical(&config));
    let descriptors: Vec<Value> = layers
        .iter()
        .map(|l| {
            json!({
                "mediaType": MEDIA_LAYER_TAR_GZIP,
                "digest": l.blob.digest,
                "size": l.blob.size(),
                "annotations": {
                    ANNOTATION_BUNDLE_NAME: l.pin.name.as_str(),
                    ANNOTATION_BUNDLE_VERSION: l.pin.version.to_string(),
                    ANNOTATION_BUNDLE_DIGEST: l.pin.hash.to_string(),
                    "org.opencontainers.image.title": l.pin.name.as_str(),
                },
            })
        })
        .collect();
    let mut manifest = json!({
        "schemaVersion": 2,
        "mediaType": MEDIA_MANIFEST,
        "config": {
            "mediaType": MEDIA_CONFIG,
            "digest": config.digest,
            "size": config.size(),
        },
        "layers": descriptors,
    });
    if let Some(p) = provenance {
        manifest["annotations"] = json!({
            "org.opencontainers.image.source": p.source,
            "org.opencontainers.image.revision": p.revision,
        });
    }
    let manifest = Blob::of(canonical(&manifest));
    Image {
        layers,
        config,
        manifest,
    }
}

/// JSON with object keys sorted and no insignificant whitespace: one spelling per value.
pub fn canonical(value: &Value) -> Vec<u8> {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for key in keys {
                    out.insert(key.clone(), sorted(&map[key]));
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_vec(&sorted(value)).unwrap_or_default()
}
