//! cosign ≤ v2 signature layers: the simple-signing payload, the signature annotation, and for
//! keyless signatures the certificate, chain and Rekor bundle annotations, judged.

use base64::Engine as _;

use super::material::CosignSignature;
use super::simple_signing;
use crate::support::escape;
use crate::trust::image::policy::PublisherPolicy;
use crate::trust::keys::public_key::PublicKey;
use crate::trust::verdict::{Publisher, Rejection};

/// The layer annotation holding the base64 signature of the payload.
pub const ANNOTATION_SIGNATURE: &str = "dev.cosignproject.cosign/signature";
/// The layer annotation holding the PEM leaf certificate of a keyless signature.
pub const ANNOTATION_CERTIFICATE: &str = "dev.sigstore.cosign/certificate";
/// The layer annotation holding the PEM chain of a keyless signature.
pub const ANNOTATION_CHAIN: &str = "dev.sigstore.cosign/chain";
/// The layer annotation holding the Rekor bundle (signed entry timestamp and entry) as JSON.
pub const ANNOTATION_BUNDLE: &str = "dev.sigstore.cosign/bundle";

/// Judges one signature layer for the image at `pinned`: its payload must bind `pinned`, then a
/// certificate annotation makes it keyless ([`super::keyless::judge_v2`]), else a configured key
/// must verify it.
pub fn judge(
    signature: &CosignSignature,
    pinned: &str,
    policy: &PublisherPolicy,
) -> Result<Publisher, (Rejection, String)> {
    let payload = signature.payload.as_bytes();
    let bound =
        simple_signing::digest_of(payload).map_err(|e| (Rejection::Malformed, e.to_string()))?;
    if bound != pinned {
        return Err((
            Rejection::NotThisImage,
            format!(
                "its payload signs {}, not the pinned {pinned}",
                escape::text(&bound)
            ),
        ));
    }
    let encoded = signature
        .annotations
        .get(ANNOTATION_SIGNATURE)
        .ok_or_else(|| {
            (
                Rejection::Malformed,
                format!("no `{ANNOTATION_SIGNATURE}` annotation"),
            )
        })?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|_| {
            (
                Rejection::Malformed,
                format!("the `{ANNOTATION_SIGNATURE}` annotation is not base64"),
            )
        })?;
    match signature.annotations.get(ANNOTATION_CERTIFICATE) {
        Some(certificate) => super::keyless::judge_v2(
            payload,
            &bytes,
            certificate,
            signature
                .annotations
                .get(ANNOTATION_CHAIN)
                .map(String::as_str),
            signature
                .annotations
                .get(ANNOTATION_BUNDLE)
                .map(String::as_str),
            policy,
        ),
        None => judge_key(payload, &bytes, &policy.keys),
    }
}

/// A key signature: the first of `keys` that verifies `signature` over `payload`.
pub fn judge_key(
    payload: &[u8],
    signature: &[u8],
    keys: &[PublicKey],
) -> Result<Publisher, (Rejection, String)> {
    if keys.is_empty() {
        return Err((
            Rejection::NotConfigured,
            "a key signature, and `verify` names no `cosign_key`".to_owned(),
        ));
    }
    keys.iter()
        .find(|key| key.verify(payload, signature))
        .map(|key| Publisher::Key {
            fingerprint: key.fingerprint(),
        })
        .ok_or_else(|| {
            (
                Rejection::BadSignature,
                "no configured `cosign_key` verifies it".to_owned(),
            )
        })
}
