//! `push --sign-key`: signing a pushed image as `cosign sign --key` does, in the cosign v2 tag
//! layout every cosign reads.
//!
//! The key is cosign's private key file: an `ENCRYPTED SIGSTORE PRIVATE KEY` (or the older
//! `ENCRYPTED COSIGN PRIVATE KEY`) PEM block holding go-securesystemslib's `encrypted` JSON
//! envelope (`{"kdf":{"name":"scrypt","params":{"N","r","p"},"salt"},"cipher":{"name":
//! "nacl/secretbox","nonce"},"ciphertext"}`, byte strings in standard base64) whose plaintext is a
//! PKCS#8 private key, decrypted with the `COSIGN_PASSWORD` (an empty one allowed, as cosign
//! allows); or an unencrypted PKCS#8 `PRIVATE KEY`. Only ECDSA P-256 keys sign (what `cosign
//! generate-key-pair` makes). Every field is bounded before it is used, and the scrypt parameters
//! must be one of the three sets go-securesystemslib itself accepts (N = 2^15, 2^16 or 2^17 with
//! r = 8, p = 1: at most 128 MiB and well under a second), so a hostile key file cannot make the
//! derivation take minutes or gigabytes. A wrong password is told apart from a damaged file only
//! by the authenticator failing, as cosign tells it; the password is never shown.
//!
//! The signature is the ASN.1 DER ECDSA P-256 / SHA-256 signature of the simple-signing payload
//! ([`crate::source::oci::publisher::simple_signing::payload`]), put as a layer of media type
//! `application/vnd.dev.cosign.simplesigning.v1+json` with the base64 signature in the
//! `dev.cosignproject.cosign/signature` annotation, in the image at tag `sha256-<hex>.sig` whose
//! config and manifest are the bytes cosign (go-containerregistry) writes ([`SignatureImage`]).
//! An existing `.sig` image gets the new layer appended, unless a layer with the same payload
//! already carries a signature this key verifies (cosign's duplicate detector). Where cosign
//! appends up to 1,000 layers, this stops where the verifier stops reading: a `.sig` image that
//! would hold more than [`MAX_SIGNATURE_LAYERS`] layers, or a manifest over
//! [`MAX_SIGNATURE_MANIFEST_BYTES`], with the new signature is refused
//! ([`SignatureImageError::OverBound`]) rather than written for `prepare` to refuse.

use std::path::Path;

use base64::Engine as _;
use crypto_secretbox::aead::{Aead as _, KeyInit as _};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair as _};
use serde::Deserialize;
use serde_json::{Value, json};
use spki::ObjectIdentifier;
use spki::der::{Decode as _, Reader as _, SliceReader};

use crate::descriptor::publishers::key::{KeyKind, PublicKey};
use crate::source::oci::image::sha256;
use crate::source::oci::publisher::cosign_v2::ANNOTATION_SIGNATURE;
use crate::source::oci::publisher::fetch::SIMPLE_SIGNING as MEDIA_SIMPLE_SIGNING;
use crate::source::oci::{MEDIA_CONFIG, MEDIA_MANIFEST};
use crate::support::escape;

/// The most bytes a private key file may hold.
pub const MAX_KEY_FILE_BYTES: u64 = 64 * 1024;
/// The most bytes of an envelope's salt (cosign writes 32).
pub const MAX_SALT_BYTES: usize = 1024;
/// The bytes of a NaCl secretbox nonce.
pub const NONCE_BYTES: usize = 24;
/// The most bytes of an envelope's ciphertext (a PKCS#8 P-256 key and its tag take about 150).
pub const MAX_CIPHERTEXT_BYTES: usize = 16 * 1024;
/// The scrypt parameters (N, r, p) accepted: exactly those go-securesystemslib's `CheckParams`
/// accepts (its legacy, standard, the one cosign writes, and OWASP sets).
pub const ACCEPTED_SCRYPT: [(u64, u32, u32); 3] =
    [(1 << 15, 8, 1), (1 << 16, 8, 1), (1 << 17, 8, 1)];
/// The most signature layers a `.sig` image may hold with the one appended: the bound the
/// verifier reads (`prepare`, `outdated`, `update`), one constant for both sides, so `push` never
/// writes a `.sig` image they refuse (cosign's own bound, 1,000, is higher).
pub use crate::source::oci::publisher::fetch::MAX_SIGNATURE_LAYERS;
/// The most bytes of a `.sig` manifest, the existing one and the one with the new layer: the
/// verifier's bound too.
pub use crate::source::oci::publisher::fetch::MAX_SIGNATURE_MANIFEST_BYTES;
/// The most bytes of an existing `.sig` image's config read.
pub const MAX_SIGNATURE_CONFIG_BYTES: u64 = 1024 * 1024;

const PEM_SIGSTORE: &str = "ENCRYPTED SIGSTORE PRIVATE KEY";
const PEM_COSIGN: &str = "ENCRYPTED COSIGN PRIVATE KEY";
const PEM_PKCS8: &str = "PRIVATE KEY";
const OID_EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const OID_P256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
/// The zero time go-containerregistry writes for `created`.
const ZERO_TIME: &str = "0001-01-01T00:00:00Z";

/// Why the signing key cannot be used; nothing is pushed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignKeyError {
    /// The file cannot be read, or is over its bound.
    #[error("the signing key {path}: {reason}")]
    Unreadable {
        /// The file (escaped).
        path: String,
        /// Why.
        reason: String,
    },
    /// The file is not a key this command reads (the rule broken).
    #[error("the signing key {path}: {reason}")]
    Malformed {
        /// The file (escaped).
        path: String,
        /// The rule broken.
        reason: String,
    },
    /// The key is encrypted and `COSIGN_PASSWORD` is not set.
    #[error(
        "the signing key {path} is encrypted: set COSIGN_PASSWORD to its password (empty for none)"
    )]
    NoPassword {
        /// The file (escaped).
        path: String,
    },
    /// The password does not open the key (or the ciphertext was tampered with).
    #[error(
        "the signing key {path} does not open with the password in COSIGN_PASSWORD (a wrong password, or a damaged file)"
    )]
    WrongPassword {
        /// The file (escaped).
        path: String,
    },
}

/// An ECDSA P-256 key that signs, and its public key.
pub struct SigningKey {
    pair: EcdsaKeyPair,
    public: PublicKey,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("public", &self.public.fingerprint())
            .finish_non_exhaustive()
    }
}

/// The envelope go-securesystemslib's `encrypted.Encrypt` writes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope {
    kdf: Kdf,
    cipher: Cipher,
    ciphertext: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Kdf {
    name: String,
    params: ScryptParams,
    salt: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScryptParams {
    #[serde(rename = "N")]
    n: u64,
    r: u32,
    p: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Cipher {
    name: String,
    nonce: String,
}

impl SigningKey {
    /// Reads the key file at `path`, decrypting it with `password` (`COSIGN_PASSWORD`; `None`
    /// when it is not set).
    pub fn read(path: &Path, password: Option<&[u8]>) -> Result<SigningKey, SignKeyError> {
        let shown = escape::path(path).to_string();
        let bytes = crate::format::untrusted_fs::read_input(path, MAX_KEY_FILE_BYTES)
            .map_err(|e| SignKeyError::Unreadable {
                path: shown.clone(),
                reason: e.reason,
            })?
            .map_err(|_| SignKeyError::Unreadable {
                path: shown.clone(),
                reason: format!("larger than {MAX_KEY_FILE_BYTES} bytes"),
            })?;
        SigningKey::from_pem(&bytes, password, &shown)
    }

    /// The key of the PEM `bytes` (named `shown` in errors).
    pub fn from_pem(
        bytes: &[u8],
        password: Option<&[u8]>,
        shown: &str,
    ) -> Result<SigningKey, SignKeyError> {
        let malformed = |reason: String| SignKeyError::Malformed {
            path: shown.to_owned(),
            reason,
        };
        if bytes.len() as u64 > MAX_KEY_FILE_BYTES {
            return Err(malformed(format!("larger than {MAX_KEY_FILE_BYTES} bytes")));
        }
        let text = std::str::from_utf8(bytes)
            .map_err(|_| malformed("not UTF-8 text (a PEM key is)".to_owned()))?;
        let (label, der) = one_pem_block(text).map_err(malformed)?;
        let pkcs8 = match label.as_str() {
            PEM_SIGSTORE | PEM_COSIGN => {
                let password = password.ok_or_else(|| SignKeyError::NoPassword {
                    path: shown.to_owned(),
                })?;
                decrypt(&der, password, shown)?
            }
            PEM_PKCS8 => der,
            other => {
                return Err(malformed(format!(
                    "a PEM `{}` block: expected `{PEM_SIGSTORE}` (cosign generate-key-pair), `{PEM_COSIGN}` or an unencrypted PKCS#8 `{PEM_PKCS8}`",
                    escape::text(other)
                )));
            }
        };
        let result = SigningKey::from_pkcs8(&pkcs8).map_err(malformed);
        drop(Wipe(pkcs8));
        result
    }

    /// The key of a PKCS#8 `PrivateKeyInfo`: ECDSA P-256 only.
    fn from_pkcs8(pkcs8: &[u8]) -> Result<SigningKey, String> {
        check_p256_pkcs8(pkcs8)?;
        let rng = SystemRandom::new();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8, &rng)
            .map_err(|_| "not a valid PKCS#8 ECDSA P-256 private key".to_owned())?;
        let public = public_key_of(pair.public_key().as_ref())?;
        Ok(SigningKey { pair, public })
    }

    /// Its public key (what `verify.cosign_key` names; its fingerprint is reported).
    pub fn public_key(&self) -> &PublicKey {
        &self.public
    }

    /// The ASN.1 DER ECDSA P-256 / SHA-256 signature of `message`.
    pub fn sign(&self, message: &[u8]) -> Result<Vec<u8>, String> {
        self.pair
            .sign(&SystemRandom::new(), message)
            .map(|signature| signature.as_ref().to_vec())
            .map_err(|_| "the system's random source failed while signing".to_owned())
    }
}

/// Bytes overwritten with zeros when dropped (the decrypted private key).
struct Wipe(Vec<u8>);

impl Drop for Wipe {
    fn drop(&mut self) {
        for byte in self.0.iter_mut() {
            // A volatile write is unsafe; a black-boxed one is not optimised away.
            *byte = std::hint::black_box(0);
        }
    }
}

/// The PublicKey of an uncompressed P-256 point.
fn public_key_of(point: &[u8]) -> Result<PublicKey, String> {
    // SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING point }.
    let mut der = vec![
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08,
        0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ];
    der.extend_from_slice(point);
    let key = PublicKey::from_spki_der(&der)?;
    if key.kind() != KeyKind::EcdsaP256 {
        return Err("not an ECDSA P-256 key".to_owned());
    }
    Ok(key)
}

/// Refuses, by name, a PKCS#8 key of another algorithm than ECDSA P-256.
fn check_p256_pkcs8(pkcs8: &[u8]) -> Result<(), String> {
    let parsed = SliceReader::new(pkcs8).and_then(|mut reader| {
        let found = reader.sequence(|r| {
            let _version = spki::der::asn1::UintRef::decode(r)?;
            let algorithm = spki::AlgorithmIdentifierRef::decode(r)?;
            let curve = algorithm
                .parameters
                .and_then(|p| p.decode_as::<ObjectIdentifier>().ok());
            let rest = r.remaining_len();
            r.read_slice(rest)?;
            Ok((algorithm.oid, curve))
        })?;
        reader.finish(found)
    });
    let (algorithm, curve) = parsed.map_err(|_| "not a DER PKCS#8 private key".to_owned())?;
    if algorithm != OID_EC_PUBLIC_KEY {
        return Err(format!(
            "a private key of algorithm {algorithm}: `push --sign-key` signs with ECDSA P-256 keys (what `cosign generate-key-pair` makes)"
        ));
    }
    if curve != Some(OID_P256) {
        let named = curve.map_or_else(|| "no named curve".to_owned(), |c| format!("the curve {c}"));
        return Err(format!(
            "an EC private key on {named}: `push --sign-key` signs with ECDSA P-256 keys (what `cosign generate-key-pair` makes)"
        ));
    }
    Ok(())
}

/// The label and DER of the one PEM block `text` holds, nothing but whitespace around it.
fn one_pem_block(text: &str) -> Result<(String, Vec<u8>), String> {
    let text = text.trim_matches(|c: char| c.is_ascii_whitespace());
    let rest = text.strip_prefix("-----BEGIN ").ok_or_else(|| {
        "not a PEM key: expected a `-----BEGIN …-----` block and nothing before it".to_owned()
    })?;
    let (label, rest) = rest
        .split_once("-----")
        .ok_or_else(|| "a PEM BEGIN line without its closing dashes".to_owned())?;
    if label.len() > 64 {
        return Err("a PEM label over 64 characters".to_owned());
    }
    let end = format!("-----END {label}-----");
    let (body, after) = rest
        .split_once(&end)
        .ok_or_else(|| "a PEM block without its END line".to_owned())?;
    if body.contains("-----") {
        return Err(
            "a PEM block broken by another BEGIN or END line: exactly one block".to_owned(),
        );
    }
    if !after
        .trim_matches(|c: char| c.is_ascii_whitespace())
        .is_empty()
    {
        return Err("text after the PEM block: a key file holds exactly one block".to_owned());
    }
    let encoded: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(encoded.as_bytes())
        .map_err(|_| "the PEM block is not valid base64 (or has headers)".to_owned())?;
    Ok((label.to_owned(), der))
}

/// The plaintext of go-securesystemslib's encrypted `envelope` under `password`.
fn decrypt(envelope: &[u8], password: &[u8], shown: &str) -> Result<Vec<u8>, SignKeyError> {
    let malformed = |reason: String| SignKeyError::Malformed {
        path: shown.to_owned(),
        reason: format!("its encrypted envelope: {reason}"),
    };
    let parsed: Envelope = serde_json::from_slice(envelope).map_err(|e| {
        malformed(format!(
            "not the JSON cosign writes ({})",
            escape::text(&e.to_string())
        ))
    })?;
    if parsed.kdf.name != "scrypt" {
        return Err(malformed(format!(
            "the kdf `{}` is not `scrypt`",
            escape::text(&parsed.kdf.name)
        )));
    }
    if parsed.cipher.name != "nacl/secretbox" {
        return Err(malformed(format!(
            "the cipher `{}` is not `nacl/secretbox`",
            escape::text(&parsed.cipher.name)
        )));
    }
    let ScryptParams { n, r, p } = parsed.kdf.params;
    if !ACCEPTED_SCRYPT.contains(&(n, r, p)) {
        return Err(malformed(format!(
            "the scrypt parameters N={n}, r={r}, p={p} are not one of the sets cosign reads (N = 32768, 65536 or 131072 with r = 8, p = 1)"
        )));
    }
    let base64_field = |name: &str, value: &str, most: usize| {
        // Base64 takes 4 characters for 3 bytes: bound the text before decoding it.
        if value.len() > most.div_ceil(3) * 4 {
            return Err(malformed(format!("its `{name}` is over {most} bytes")));
        }
        base64::engine::general_purpose::STANDARD
            .decode(value.as_bytes())
            .map_err(|_| malformed(format!("its `{name}` is not standard base64")))
    };
    let salt = base64_field("salt", &parsed.kdf.salt, MAX_SALT_BYTES)?;
    let nonce = base64_field("nonce", &parsed.cipher.nonce, NONCE_BYTES)?;
    let ciphertext = base64_field("ciphertext", &parsed.ciphertext, MAX_CIPHERTEXT_BYTES)?;
    if salt.len() > MAX_SALT_BYTES {
        return Err(malformed(format!(
            "its `salt` is over {MAX_SALT_BYTES} bytes"
        )));
    }
    if nonce.len() != NONCE_BYTES {
        return Err(malformed(format!(
            "its `nonce` is {} bytes, not {NONCE_BYTES}",
            nonce.len()
        )));
    }
    if ciphertext.len() < 16 || ciphertext.len() > MAX_CIPHERTEXT_BYTES {
        return Err(malformed(format!(
            "its `ciphertext` of {} bytes is not from 16 to {MAX_CIPHERTEXT_BYTES}",
            ciphertext.len()
        )));
    }
    let log_n = n.trailing_zeros() as u8;
    let params = scrypt::Params::new(log_n, r, p, 32)
        .map_err(|_| malformed("scrypt refuses its parameters".to_owned()))?;
    let mut key = Wipe(vec![0u8; 32]);
    scrypt::scrypt(password, &salt, &params, &mut key.0)
        .map_err(|_| malformed("scrypt refuses its parameters".to_owned()))?;
    let cipher = crypto_secretbox::XSalsa20Poly1305::new_from_slice(&key.0)
        .map_err(|_| malformed("a secretbox key of another size".to_owned()))?;
    let nonce = crypto_secretbox::Nonce::from_slice(&nonce);
    cipher
        .decrypt(nonce, ciphertext.as_slice())
        .map_err(|_| SignKeyError::WrongPassword {
            path: shown.to_owned(),
        })
}

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
    pub fn new(key: &SigningKey, repository: &str, digest: &str) -> Result<SignatureLayer, String> {
        let payload = crate::source::oci::publisher::simple_signing::payload(repository, digest);
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
