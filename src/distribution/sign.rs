//! `push --sign-key`: signing a pushed image as `cosign sign --key` does, in the cosign v2 tag
//! layout every cosign reads. The key and the signature are [`crate::trust`]'s
//! ([`SigningKey`]); this module writes them as cosign does.
//!
//! The signature is the ASN.1 DER ECDSA P-256 / SHA-256 signature of the simple-signing payload
//! ([`crate::trust::image::simple_signing::payload`]), put as a layer of media type
//! `application/vnd.dev.cosign.simplesigning.v1+json` with the base64 signature in the
//! `dev.cosignproject.cosign/signature` annotation, in the image at tag `sha256-<hex>.sig` whose
//! config and manifest are the bytes cosign (go-containerregistry) writes ([`SignatureImage`]).
//! An existing `.sig` image gets the new layer appended, unless a layer with the same payload
//! already carries a signature this key verifies (cosign's duplicate detector). Where cosign
//! appends up to 1,000 layers, this stops where the verifier stops reading: a `.sig` image that
//! would hold more than [`MAX_SIGNATURE_LAYERS`] layers, or a manifest over
//! [`MAX_SIGNATURE_MANIFEST_BYTES`], with the new signature is refused
//! ([`SignatureImageError::OverBound`]) rather than written for `prepare` to refuse.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::source::oci::image::sha256;
use crate::source::oci::publisher::fetch::SIMPLE_SIGNING as MEDIA_SIMPLE_SIGNING;
use crate::source::oci::{MEDIA_CONFIG, MEDIA_MANIFEST};
use crate::trust::image::cosign_v2::ANNOTATION_SIGNATURE;
use crate::trust::keys::public_key::PublicKey;
use crate::trust::keys::signing_key::{RandomFailed, SigningKey};

/// The most signature layers a `.sig` image may hold with the one appended: the bound the
/// verifier reads (`prepare`, `outdated`, `update`), one constant for both sides, so `push` never
/// writes a `.sig` image they refuse (cosign's own bound, 1,000, is higher).
pub use crate::source::oci::publisher::fetch::MAX_SIGNATURE_LAYERS;
/// The most bytes of a `.sig` manifest, the existing one and the one with the new layer: the
/// verifier's bound too.
pub use crate::source::oci::publisher::fetch::MAX_SIGNATURE_MANIFEST_BYTES;
/// The most bytes of an existing `.sig` image's config read.
pub const MAX_SIGNATURE_CONFIG_BYTES: u64 = 1024 * 1024;

/// The zero time go-containerregistry writes for `created`.
const ZERO_TIME: &str = "0001-01-01T00:00:00Z";

/// One signature layer: the payload and its base64 signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureLayer {
    /// The simple-signing payload's bytes (the layer blob).
    pub payload: Vec<u8>,
    /// The standard base64 of the signature (the layer's annotation).
    pub signature: String,
}

impl SignatureLayer {
    /// `key`'s signature of the simple-signing payload for `repository` (`REGISTRY/REPOSITORY`)
    /// at `digest`.
    pub fn new(
        key: &SigningKey,
        repository: &str,
        digest: &str,
    ) -> Result<SignatureLayer, RandomFailed> {
        let payload = crate::trust::image::simple_signing::payload(repository, digest);
        let signature = key.sign(&payload)?;
        Ok(SignatureLayer {
            payload,
            signature: base64::engine::general_purpose::STANDARD.encode(signature),
        })
    }

    /// The layer descriptor cosign writes for it.
    fn descriptor(&self) -> Value {
        let mut annotations = serde_json::Map::new();
        annotations.insert(ANNOTATION_SIGNATURE.to_owned(), json!(self.signature));
        json!({
            "mediaType": MEDIA_SIMPLE_SIGNING,
            "size": self.payload.len(),
            "digest": sha256(&self.payload),
            "annotations": annotations,
        })
    }
}

/// The tag of the cosign v2 signature image of the image `digest` (`sha256:<hex>`):
/// `sha256-<hex>.sig`.
pub fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replacen(':', "-", 1))
}

/// A `.sig` image to push: its config and manifest bytes (the manifest of media type
/// `media_type`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureImage {
    /// The config blob.
    pub config: Vec<u8>,
    /// The manifest.
    pub manifest: Vec<u8>,
    /// The manifest's media type.
    pub media_type: String,
}

/// Why the `.sig` image a registry holds does not take the new signature.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureImageError {
    /// It is not a `.sig` image as cosign writes it (the rule broken).
    #[error("{0}")]
    Unreadable(String),
    /// With the new signature it would be over what the verifier reads (its layers or its
    /// manifest's bytes): written, `prepare` would refuse the image's every signature.
    #[error("{0}")]
    OverBound(String),
}

/// What the `.sig` image a registry holds asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Existing {
    /// A layer with the same payload already holds a signature by this key: nothing to push.
    AlreadySigned,
    /// Append the layer; the image's config (this digest and size, within its bound) is needed.
    Append {
        /// The config's digest.
        config_digest: String,
        /// Its size in bytes.
        config_size: u64,
    },
}

/// The `.sig` image cosign writes for one new signature layer: go-containerregistry's empty
/// image in OCI media types with the layer appended.
pub fn new_signature_image(layer: &SignatureLayer) -> SignatureImage {
    let config = json!({
        "architecture": "",
        "created": ZERO_TIME,
        "history": [{ "created": ZERO_TIME }],
        "os": "",
        "rootfs": { "type": "layers", "diff_ids": [sha256(&layer.payload)] },
        "config": {},
    });
    let config = config.to_string().into_bytes();
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": MEDIA_MANIFEST,
        "config": { "mediaType": MEDIA_CONFIG, "size": config.len(), "digest": sha256(&config) },
        "layers": [layer.descriptor()],
    });
    SignatureImage {
        manifest: manifest.to_string().into_bytes(),
        config,
        media_type: MEDIA_MANIFEST.to_owned(),
    }
}

/// What the `.sig` `manifest` a registry holds asks for before `layer` is added: nothing when
/// a layer with the same payload holds a signature `key` verifies (cosign's duplicate detector),
/// else its config. Refused when it cannot be read, or when the verifier would refuse it: over
/// [`MAX_SIGNATURE_MANIFEST_BYTES`] or [`MAX_SIGNATURE_LAYERS`] layers already, or at that many
/// with no signature by this key among them.
pub fn existing(
    manifest: &[u8],
    layer: &SignatureLayer,
    key: &PublicKey,
) -> Result<Existing, SignatureImageError> {
    use SignatureImageError::{OverBound, Unreadable};
    let unreadable = |why: &str| Unreadable(format!("the existing signature manifest {why}"));
    if manifest.len() as u64 > MAX_SIGNATURE_MANIFEST_BYTES {
        return Err(OverBound(format!(
            "the existing signature manifest is {} bytes, over the {MAX_SIGNATURE_MANIFEST_BYTES} a verifier (`prepare`) reads",
            manifest.len()
        )));
    }
    let manifest: Value =
        serde_json::from_slice(manifest).map_err(|_| unreadable("is not JSON"))?;
    if manifest.get("schemaVersion") != Some(&json!(2)) {
        return Err(unreadable("is not schemaVersion 2"));
    }
    let layers = manifest
        .get("layers")
        .and_then(Value::as_array)
        .ok_or_else(|| unreadable("has no `layers` array"))?;
    if layers.len() > MAX_SIGNATURE_LAYERS {
        return Err(OverBound(format!(
            "the existing signature manifest holds {} layers, over the {MAX_SIGNATURE_LAYERS} a verifier (`prepare`) reads",
            layers.len()
        )));
    }
    let payload_digest = sha256(&layer.payload);
    let duplicate = layers.iter().any(|existing| {
        existing.get("mediaType").and_then(Value::as_str) == Some(MEDIA_SIMPLE_SIGNING)
            && existing.get("digest").and_then(Value::as_str) == Some(payload_digest.as_str())
            && existing
                .get("annotations")
                .and_then(|a| a.get(ANNOTATION_SIGNATURE))
                .and_then(Value::as_str)
                .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
                .is_some_and(|signature| key.verify(&layer.payload, &signature))
    });
    if duplicate {
        return Ok(Existing::AlreadySigned);
    }
    if layers.len() >= MAX_SIGNATURE_LAYERS {
        return Err(OverBound(format!(
            "the existing signature manifest holds {} layers, none signed by this key: at most {MAX_SIGNATURE_LAYERS} with the new one, what a verifier (`prepare`) reads",
            layers.len()
        )));
    }
    let config = manifest
        .get("config")
        .ok_or_else(|| unreadable("has no `config`"))?;
    let config_digest = config
        .get("digest")
        .and_then(Value::as_str)
        .filter(|d| crate::descriptor::plan::is_sha256_digest(d))
        .ok_or_else(|| {
            Unreadable(
                "the existing signature config's digest is not `sha256:` and 64 lowercase hex digits"
                    .to_owned(),
            )
        })?
        .to_owned();
    let config_size = config
        .get("size")
        .and_then(Value::as_u64)
        .filter(|size| *size <= MAX_SIGNATURE_CONFIG_BYTES)
        .ok_or_else(|| {
            Unreadable(format!(
                "the existing signature config's size is missing or over {MAX_SIGNATURE_CONFIG_BYTES} bytes"
            ))
        })?;
    Ok(Existing::Append {
        config_digest,
        config_size,
    })
}

/// The `.sig` image `manifest` (checked by [`existing`]) with `layer` appended, as cosign's
/// `mutate.Append` makes it: the layer's descriptor after the others, its diff ID and an empty
/// history entry after theirs in `config` (the bytes of the config the manifest names). Refused
/// when the manifest it makes is over [`MAX_SIGNATURE_MANIFEST_BYTES`].
pub fn append_signature(
    manifest: &[u8],
    config: &[u8],
    layer: &SignatureLayer,
) -> Result<SignatureImage, SignatureImageError> {
    let image = append(manifest, config, layer).map_err(SignatureImageError::Unreadable)?;
    if image.manifest.len() as u64 > MAX_SIGNATURE_MANIFEST_BYTES {
        return Err(SignatureImageError::OverBound(format!(
            "the signature manifest with the new signature would be {} bytes, over the {MAX_SIGNATURE_MANIFEST_BYTES} a verifier (`prepare`) reads",
            image.manifest.len()
        )));
    }
    Ok(image)
}

/// [`append_signature`], unbounded.
fn append(
    manifest: &[u8],
    config: &[u8],
    layer: &SignatureLayer,
) -> Result<SignatureImage, String> {
    let mut manifest: Value = serde_json::from_slice(manifest)
        .map_err(|_| "the existing signature manifest is not JSON".to_owned())?;
    let named = manifest
        .get("config")
        .and_then(|c| c.get("digest"))
        .and_then(Value::as_str);
    if named != Some(sha256(config).as_str()) {
        return Err(
            "the existing signature config does not have the digest its manifest names".to_owned(),
        );
    }
    let mut config: Value = serde_json::from_slice(config)
        .map_err(|_| "the existing signature config is not JSON".to_owned())?;
    config
        .get_mut("rootfs")
        .and_then(|r| r.get_mut("diff_ids"))
        .and_then(Value::as_array_mut)
        .ok_or_else(|| "the existing signature config has no `rootfs.diff_ids` array".to_owned())?
        .push(json!(sha256(&layer.payload)));
    match config.get_mut("history") {
        Some(Value::Array(history)) => history.push(json!({ "created": ZERO_TIME })),
        None => {}
        Some(_) => {
            return Err("the existing signature config's `history` is not an array".to_owned());
        }
    }
    let config = config.to_string().into_bytes();
    let media_type = manifest
        .get("mediaType")
        .and_then(Value::as_str)
        .unwrap_or(MEDIA_MANIFEST)
        .to_owned();
    let object = manifest
        .as_object_mut()
        .ok_or_else(|| "the existing signature manifest is not a JSON object".to_owned())?;
    let config_media = object
        .get("config")
        .and_then(|c| c.get("mediaType"))
        .cloned()
        .unwrap_or_else(|| json!(MEDIA_CONFIG));
    object.insert(
        "config".to_owned(),
        json!({ "mediaType": config_media, "size": config.len(), "digest": sha256(&config) }),
    );
    object
        .get_mut("layers")
        .and_then(Value::as_array_mut)
        .ok_or_else(|| "the existing signature manifest has no `layers` array".to_owned())?
        .push(layer.descriptor());
    Ok(SignatureImage {
        manifest: manifest.to_string().into_bytes(),
        config,
        media_type,
    })
}

#[cfg(test)]
#[path = "sign_tests.rs"]
mod tests;
