//! Sigstore bundles v0.1–v0.3 (`application/vnd.dev.sigstore.bundle…+json`): the verification
//! material (a certificate, a chain or a public-key hint), the transparency-log entries, and the
//! content (a DSSE envelope, or a message signature), read within bounds and judged.
//!
//! A bundle is judged for the pinned image in these steps:
//! 1. **read** ([`Read::parse`]): at most [`MAX_BUNDLE`] bytes of JSON; its media type (and the
//!    registry's) one of [`MEDIA_TYPES`]; exactly one of `certificate` (v0.3), an
//!    `x509CertificateChain` (v0.1, v0.2; refused in v0.3, as sigstore-go does) or a
//!    `publicKey`; at most one log entry (sigstore-python verifies exactly one); every entry of
//!    a v0.2+ bundle with an inclusion proof (sigstore-go's and sigstore-python's rule; v0.1
//!    entries need the promise, which [`tlog`] requires of every entry); the content: a
//!    DSSE envelope with exactly one signature, or a message signature;
//! 2. **bound to the pinned image**: a DSSE envelope's in-toto statement names the pinned digest
//!    as a subject ([`super::dsse::binds`]); a message signature's digest *is* the pinned digest
//!    (the signed message is then the image manifest, as `cosign verify-blob` of the manifest
//!    and sigstore-go's artifact-digest policy decide), else `NotThisImage`;
//! 3. **keyless** (a certificate): `policy.sigstore` configured (`NotConfigured`), a log entry
//!    present (`LogEntryMissing`) and verified about this signature and this leaf
//!    ([`tlog::verify`]), the certificate verified at its integrated time
//!    ([`certificate::verify`]), its identity exactly one of `policy.sigstore.identities`
//!    (`IdentityNotAllowed`), and the signature verifying under its key (`BadSignature`);
//! 4. **key-based** (a public-key hint): `policy.keys` configured (`NotConfigured`), one of them
//!    verifying the signature (the hint is not trusted to choose: every key is tried); a log
//!    entry is not required (the key is the trust anchor, as `cosign verify --key
//!    --insecure-ignore-tlog`), but one present must verify about this signature and key when
//!    `policy.sigstore` gives a trusted root.
//!
//! Signatures are checked as sigstore-go checks a bundle's ([`PublicKey::verify_bundle`]: each
//! key's natural hash). A message signature signs the manifest's digest, so it is verified
//! prehashed: ECDSA only (P-256, P-384), as an Ed25519 or RSA key cannot be checked against a
//! digest here (refused, where sigstore-go would need the manifest's bytes).

use base64::Engine as _;

use super::material::SigstoreBundle;
use super::{dsse, keyless};
use crate::support::{escape, hex};
use crate::trust::image::policy::PublisherPolicy;
use crate::trust::keys::public_key::{KeyKind, PublicKey};
use crate::trust::strict_json;
use crate::trust::tlog::{self, LogEntry, Signed};
use crate::trust::verdict::{Publisher, Rejection};
use crate::trust::x509::certificate;

/// The largest bundle read.
pub const MAX_BUNDLE: usize = 512 * 1024;
/// The most log entries a bundle may carry.
pub const MAX_LOG_ENTRIES: usize = 1;
/// The bundle media types read, with their versions.
pub const MEDIA_TYPES: [(&str, Version); 4] = [
    (
        "application/vnd.dev.sigstore.bundle+json;version=0.1",
        Version::V01,
    ),
    (
        "application/vnd.dev.sigstore.bundle+json;version=0.2",
        Version::V02,
    ),
    (
        "application/vnd.dev.sigstore.bundle+json;version=0.3",
        Version::V03,
    ),
    (
        "application/vnd.dev.sigstore.bundle.v0.3+json",
        Version::V03,
    ),
];

/// A bundle format version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// v0.1: log entries need an inclusion promise.
    V01,
    /// v0.2: log entries need an inclusion proof.
    V02,
    /// v0.3: as v0.2, and a single `certificate` instead of a chain.
    V03,
}

/// Who vouches for the signing key.
#[derive(Debug, Clone)]
pub enum Material {
    /// A Fulcio leaf (DER) and the chain the bundle carries after it.
    Certificate {
        /// The leaf.
        leaf: Vec<u8>,
        /// The carried intermediates (adding no trust).
        chain: Vec<Vec<u8>>,
    },
    /// A public key, named by a hint.
    PublicKey,
}

/// What is signed.
#[derive(Debug, Clone)]
pub enum Content {
    /// A DSSE envelope with its one signature.
    Dsse {
        /// The payload type.
        payload_type: String,
        /// The payload.
        payload: Vec<u8>,
        /// The signature over [`dsse::pae`].
        signature: Vec<u8>,
    },
    /// A signature over a message, of which the bundle holds the SHA-256.
    Message {
        /// The message's SHA-256.
        digest: Vec<u8>,
        /// The signature.
        signature: Vec<u8>,
    },
}

/// A bundle, read.
#[derive(Debug, Clone)]
pub struct Read {
    /// The verification material.
    pub material: Material,
    /// The log entries (at most [`MAX_LOG_ENTRIES`]).
    pub entries: Vec<LogEntry>,
    /// The content.
    pub content: Content,
}

/// Judges one Sigstore bundle for the image at `pinned`: its content must bind `pinned` (a DSSE
/// in-toto statement's subject, or a message signature's digest), and verify under a
/// configured key or a certificate for a configured identity with a log entry.
pub fn judge(
    bundle: &SigstoreBundle,
    pinned: &str,
    policy: &PublisherPolicy,
) -> Result<Publisher, (Rejection, String)> {
    let read = Read::parse(bundle).map_err(|e| (Rejection::Malformed, e))?;
    binds(&read.content, pinned)?;
    judge_signature(&read, policy)
}

/// Steps 3 and 4 on a bundle read: who signed it, whatever it binds.
pub(super) fn judge_signature(
    read: &Read,
    policy: &PublisherPolicy,
) -> Result<Publisher, (Rejection, String)> {
    match &read.material {
        Material::Certificate { leaf, chain } => judge_keyless(read, leaf, chain, policy),
        Material::PublicKey => judge_key(read, policy),
    }
}

/// Step 2: the content binds the pinned digest.
fn binds(content: &Content, pinned: &str) -> Result<(), (Rejection, String)> {
    match content {
        Content::Dsse {
            payload_type,
            payload,
            ..
        } => dsse::binds(payload_type, payload, pinned),
        Content::Message { digest, .. } => {
            let pinned_hex = pinned.strip_prefix("sha256:").unwrap_or(pinned);
            if hex::encode(digest) == pinned_hex {
                Ok(())
            } else {
                Err((
                    Rejection::NotThisImage,
                    format!(
                        "its message signature is over sha256:{}, not the pinned {pinned}",
                        hex::encode(digest)
                    ),
                ))
            }
        }
    }
}

/// Step 3: a certificate for a configured identity, with its log entry.
fn judge_keyless(
    read: &Read,
    leaf: &[u8],
    chain: &[Vec<u8>],
    policy: &PublisherPolicy,
) -> Result<Publisher, (Rejection, String)> {
    let sigstore = policy.sigstore.as_ref().ok_or_else(|| {
        (
            Rejection::NotConfigured,
            "a keyless (certificate) bundle, and `verify` has no `sigstore`".to_owned(),
        )
    })?;
    let entry = read.entries.first().ok_or_else(|| {
        (
            Rejection::LogEntryMissing,
            "a keyless bundle without a transparency-log entry".to_owned(),
        )
    })?;
    keyless::certified_signer(
        sigstore,
        entry,
        signed(&read.content, leaf),
        (leaf, chain),
        |key| content_verifies(key, &read.content),
    )
}

/// Step 4: a configured key, and its log entry if present and a trusted root is configured.
fn judge_key(read: &Read, policy: &PublisherPolicy) -> Result<Publisher, (Rejection, String)> {
    if policy.keys.is_empty() {
        return Err((
            Rejection::NotConfigured,
            "a key-based bundle, and `verify` names no `cosign_key`".to_owned(),
        ));
    }
    let key = policy
        .keys
        .iter()
        .find(|key| content_verifies(key, &read.content))
        .ok_or_else(|| {
            (
                Rejection::BadSignature,
                "no configured `cosign_key` verifies the bundle's signature".to_owned(),
            )
        })?;
    if let Some(sigstore) = &policy.sigstore {
        for entry in &read.entries {
            tlog::verify(&sigstore.root, entry, signed(&read.content, key.spki_der()))?;
        }
    }
    Ok(Publisher::Key {
        fingerprint: key.fingerprint(),
    })
}

/// What a log entry must be about: this content's signature, by `verifier_der`.
fn signed<'a>(content: &'a Content, verifier_der: &'a [u8]) -> Signed<'a> {
    match content {
        Content::Dsse {
            payload_type,
            payload,
            signature,
        } => Signed::Dsse {
            payload_type,
            payload,
            signature,
            verifier_der,
        },
        Content::Message { digest, signature } => Signed::MessageDigest {
            digest,
            signature,
            verifier_der,
        },
    }
}

/// Whether `key` verifies the content's signature.
fn content_verifies(key: &PublicKey, content: &Content) -> bool {
    match content {
        Content::Dsse {
            payload_type,
            payload,
            signature,
        } => key.verify_bundle(&dsse::pae(payload_type, payload), signature),
        Content::Message { digest, signature } => verify_prehashed(key, digest, signature),
    }
}

/// Whether `signature` (ASN.1 DER ECDSA) is `key`'s signature of the SHA-256 `digest`.
fn verify_prehashed(key: &PublicKey, digest: &[u8], signature: &[u8]) -> bool {
    use p256::ecdsa::signature::hazmat::PrehashVerifier as _;
    use spki::DecodePublicKey as _;
    match key.kind() {
        KeyKind::EcdsaP256 => {
            let (Ok(verifying), Ok(signature)) = (
                p256::ecdsa::VerifyingKey::from_public_key_der(key.spki_der()),
                p256::ecdsa::Signature::from_der(signature),
            ) else {
                return false;
            };
            verifying.verify_prehash(digest, &signature).is_ok()
        }
        KeyKind::EcdsaP384 => {
            let (Ok(verifying), Ok(signature)) = (
                p384::ecdsa::VerifyingKey::from_public_key_der(key.spki_der()),
                p384::ecdsa::Signature::from_der(signature),
            ) else {
                return false;
            };
            verifying.verify_prehash(digest, &signature).is_ok()
        }
        KeyKind::Ed25519 | KeyKind::Rsa { .. } => false,
    }
}

fn base64_of(value: Option<&serde_json::Value>, what: &str) -> Result<Vec<u8>, String> {
    let text = value
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| format!("the bundle has no {what}"))?;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|_| format!("the bundle's {what} is not base64"))
}

fn version_of(media_type: &str) -> Option<Version> {
    MEDIA_TYPES
        .iter()
        .find(|(name, _)| *name == media_type)
        .map(|(_, version)| *version)
}

impl Read {
    /// Reads `bundle` (step 1); the error says what is wrong.
    pub fn parse(bundle: &SigstoreBundle) -> Result<Read, String> {
        if bundle.json.len() > MAX_BUNDLE {
            return Err(format!(
                "the bundle is {} bytes, over the bound of {MAX_BUNDLE}",
                bundle.json.len()
            ));
        }
        let outer = version_of(&bundle.media_type).ok_or_else(|| {
            format!(
                "the media type `{}` is not a Sigstore bundle v0.1–v0.3",
                escape::text(&bundle.media_type)
            )
        })?;
        let value = strict_json::parse(&bundle.json).map_err(|e| format!("the bundle: {e}"))?;
        let media_type = value
            .get("mediaType")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        let version = version_of(media_type).ok_or_else(|| {
            format!(
                "the bundle's `mediaType` `{}` is not a Sigstore bundle v0.1–v0.3",
                escape::text(media_type)
            )
        })?;
        if version != outer {
            return Err("the bundle's `mediaType` is another version than the registry's".into());
        }
        let material = value
            .get("verificationMaterial")
            .ok_or("the bundle has no `verificationMaterial`")?;
        let read = Read {
            material: Self::material(material, version)?,
            entries: Self::entries(material, version)?,
            content: Self::content(&value)?,
        };
        Ok(read)
    }

    fn material(material: &serde_json::Value, version: Version) -> Result<Material, String> {
        let certificate = material.get("certificate");
        let chain = material.get("x509CertificateChain");
        let key = material.get("publicKey");
        match (certificate, chain, key) {
            (Some(certificate), None, None) => Ok(Material::Certificate {
                leaf: base64_of(certificate.get("rawBytes"), "`certificate.rawBytes`")?,
                chain: Vec::new(),
            }),
            (None, Some(_), None) if version == Version::V03 => {
                Err("a v0.3 bundle with an `x509CertificateChain` (one `certificate` only)".into())
            }
            (None, Some(chain), None) => {
                let certificates = chain
                    .get("certificates")
                    .and_then(serde_json::Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                if certificates.is_empty()
                    || certificates.len() > 1 + certificate::MAX_CARRIED_CHAIN
                {
                    return Err(format!(
                        "the bundle's chain holds {} certificates (1 to {} read)",
                        certificates.len(),
                        1 + certificate::MAX_CARRIED_CHAIN
                    ));
                }
                let mut ders = certificates
                    .iter()
                    .map(|c| base64_of(c.get("rawBytes"), "chain certificate's `rawBytes`"))
                    .collect::<Result<Vec<_>, _>>()?;
                let leaf = ders.remove(0);
                Ok(Material::Certificate { leaf, chain: ders })
            }
            (None, None, Some(_)) => Ok(Material::PublicKey),
            _ => Err(
                "the bundle's verification material is not exactly one of `certificate`, \
                 `x509CertificateChain` and `publicKey`"
                    .into(),
            ),
        }
    }

    fn entries(material: &serde_json::Value, version: Version) -> Result<Vec<LogEntry>, String> {
        let entries = match material.get("tlogEntries") {
            None => return Ok(Vec::new()),
            Some(entries) => entries
                .as_array()
                .ok_or("the bundle's `tlogEntries` is not a list")?,
        };
        if entries.len() > MAX_LOG_ENTRIES {
            return Err(format!(
                "the bundle carries {} log entries, over the bound of {MAX_LOG_ENTRIES}",
                entries.len()
            ));
        }
        let entries = entries
            .iter()
            .map(LogEntry::from_bundle_json)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        if version != Version::V01 && entries.iter().any(|entry| entry.proof.is_none()) {
            return Err("a v0.2+ bundle's log entry without an inclusion proof".into());
        }
        Ok(entries)
    }

    fn content(value: &serde_json::Value) -> Result<Content, String> {
        match (value.get("dsseEnvelope"), value.get("messageSignature")) {
            (Some(envelope), None) => {
                let payload_type = envelope
                    .get("payloadType")
                    .and_then(serde_json::Value::as_str)
                    .ok_or("the envelope has no `payloadType`")?;
                let signatures = envelope
                    .get("signatures")
                    .and_then(serde_json::Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                let [one] = signatures else {
                    return Err(format!(
                        "the envelope holds {} signatures, not exactly one",
                        signatures.len()
                    ));
                };
                Ok(Content::Dsse {
                    payload_type: payload_type.to_owned(),
                    payload: base64_of(envelope.get("payload"), "envelope `payload`")?,
                    signature: base64_of(one.get("sig"), "envelope signature")?,
                })
            }
            (None, Some(message)) => {
                let algorithm = message
                    .pointer("/messageDigest/algorithm")
                    .and_then(serde_json::Value::as_str);
                if algorithm != Some("SHA2_256") {
                    return Err(format!(
                        "the message digest's algorithm is `{}`, not SHA2_256",
                        escape::text(algorithm.unwrap_or("?"))
                    ));
                }
                let digest = base64_of(message.pointer("/messageDigest/digest"), "message digest")?;
                if digest.len() != 32 {
                    return Err("the message digest is not 32 bytes".into());
                }
                Ok(Content::Message {
                    digest,
                    signature: base64_of(message.get("signature"), "message signature")?,
                })
            }
            _ => Err(
                "the bundle's content is not exactly one of `dsseEnvelope` and `messageSignature`"
                    .into(),
            ),
        }
    }
}

#[cfg(test)]
#[path = "bundle_tests.rs"]
mod tests;
