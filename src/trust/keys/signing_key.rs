//! "Sign this image": the signing key of `push --sign-key`, read as `cosign sign --key` reads it,
//! and the signature it makes.
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
//! The signature is the ASN.1 DER ECDSA P-256 / SHA-256 signature of a message
//! ([`SigningKey::sign`]); what is signed (the simple-signing payload) and where it is written
//! (the `.sig` image) is [`crate::distribution::sign`]'s.

use std::path::Path;

use base64::Engine as _;
use crypto_secretbox::aead::{Aead as _, KeyInit as _};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair as _};
use serde::Deserialize;
use spki::ObjectIdentifier;
use spki::der::{Decode as _, Reader as _, SliceReader};

use crate::support::escape;
use crate::trust::keys::public_key::{KeyKind, PublicKey, PublicKeyError};

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

const PEM_SIGSTORE: &str = "ENCRYPTED SIGSTORE PRIVATE KEY";
const PEM_COSIGN: &str = "ENCRYPTED COSIGN PRIVATE KEY";
/// The PEM label of an unencrypted PKCS#8 private key.
pub(crate) const PEM_PKCS8: &str = "PRIVATE KEY";
const OID_EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const OID_P256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");

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
    /// The file is not a key that signs (the rule of its form broken).
    #[error("the signing key {path}: {refusal}")]
    Form {
        /// The file (escaped).
        path: String,
        /// The rule broken.
        refusal: KeyFormError,
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

/// How the key file is not a key that signs: its PEM framing, its PKCS#8 or its algorithm.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyFormError {
    /// Over [`MAX_KEY_FILE_BYTES`].
    #[error("larger than {MAX_KEY_FILE_BYTES} bytes")]
    TooLarge,
    /// Not UTF-8.
    #[error("not UTF-8 text (a PEM key is)")]
    NotUtf8,
    /// No BEGIN line first.
    #[error("not a PEM key: expected a `-----BEGIN …-----` block and nothing before it")]
    NotPem,
    /// A BEGIN line without its closing dashes.
    #[error("a PEM BEGIN line without its closing dashes")]
    BeginUnclosed,
    /// A label over 64 characters.
    #[error("a PEM label over 64 characters")]
    LabelTooLong,
    /// No END line for the label.
    #[error("a PEM block without its END line")]
    NoEnd,
    /// Another BEGIN or END line inside the block.
    #[error("a PEM block broken by another BEGIN or END line: exactly one block")]
    Broken,
    /// Text after the END line.
    #[error("text after the PEM block: a key file holds exactly one block")]
    TextAfter,
    /// The block is not standard base64 (PEM headers included).
    #[error("the PEM block is not valid base64 (or has headers)")]
    NotBase64,
    /// A block of another label than cosign's or PKCS#8's.
    #[error(
        "a PEM `{label}` block: expected `{PEM_SIGSTORE}` (cosign generate-key-pair), `{PEM_COSIGN}` or an unencrypted PKCS#8 `{PEM_PKCS8}`"
    )]
    Label {
        /// The label (escaped).
        label: String,
    },
    /// Not a DER PKCS#8 `PrivateKeyInfo`.
    #[error("not a DER PKCS#8 private key")]
    NotPkcs8,
    /// A private key of another algorithm than EC.
    #[error(
        "a private key of algorithm {oid}: `push --sign-key` signs with ECDSA P-256 keys (what `cosign generate-key-pair` makes)"
    )]
    Algorithm {
        /// The algorithm's OID.
        oid: String,
    },
    /// An EC key on another curve than P-256 (or none named).
    #[error(
        "an EC private key on {named}: `push --sign-key` signs with ECDSA P-256 keys (what `cosign generate-key-pair` makes)"
    )]
    Curve {
        /// The curve, as said (`the curve <OID>`, `no named curve`).
        named: String,
    },
    /// ring refuses the P-256 key (its public key does not match, say).
    #[error("not a valid PKCS#8 ECDSA P-256 private key")]
    InvalidP256,
    /// The public key of the pair cannot be read.
    #[error("{0}")]
    PublicKey(PublicKeyError),
    /// The public key of the pair is not P-256.
    #[error("not an ECDSA P-256 key")]
    NotP256,
}

/// The system's random source failed while signing: nothing was signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the system's random source failed while signing")]
pub struct RandomFailed;

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
        let malformed = |refusal: KeyFormError| SignKeyError::Form {
            path: shown.to_owned(),
            refusal,
        };
        if bytes.len() as u64 > MAX_KEY_FILE_BYTES {
            return Err(malformed(KeyFormError::TooLarge));
        }
        let text = std::str::from_utf8(bytes).map_err(|_| malformed(KeyFormError::NotUtf8))?;
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
                return Err(malformed(KeyFormError::Label {
                    label: escape::text(other).to_string(),
                }));
            }
        };
        let result = SigningKey::from_pkcs8(&pkcs8).map_err(malformed);
        drop(Wipe(pkcs8));
        result
    }

    /// The key of a PKCS#8 `PrivateKeyInfo`: ECDSA P-256 only.
    fn from_pkcs8(pkcs8: &[u8]) -> Result<SigningKey, KeyFormError> {
        check_p256_pkcs8(pkcs8)?;
        let rng = SystemRandom::new();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8, &rng)
            .map_err(|_| KeyFormError::InvalidP256)?;
        let public = public_key_of(pair.public_key().as_ref())?;
        Ok(SigningKey { pair, public })
    }

    /// Its public key (what `verify.cosign_key` names; its fingerprint is reported).
    pub fn public_key(&self) -> &PublicKey {
        &self.public
    }

    /// The ASN.1 DER ECDSA P-256 / SHA-256 signature of `message`.
    pub fn sign(&self, message: &[u8]) -> Result<Vec<u8>, RandomFailed> {
        self.pair
            .sign(&SystemRandom::new(), message)
            .map(|signature| signature.as_ref().to_vec())
            .map_err(|_| RandomFailed)
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
fn public_key_of(point: &[u8]) -> Result<PublicKey, KeyFormError> {
    // SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING point }.
    let mut der = vec![
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08,
        0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ];
    der.extend_from_slice(point);
    let key = PublicKey::from_spki_der(&der).map_err(KeyFormError::PublicKey)?;
    if key.kind() != KeyKind::EcdsaP256 {
        return Err(KeyFormError::NotP256);
    }
    Ok(key)
}

/// Refuses, by name, a PKCS#8 key of another algorithm than ECDSA P-256.
fn check_p256_pkcs8(pkcs8: &[u8]) -> Result<(), KeyFormError> {
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
    let (algorithm, curve) = parsed.map_err(|_| KeyFormError::NotPkcs8)?;
    if algorithm != OID_EC_PUBLIC_KEY {
        return Err(KeyFormError::Algorithm {
            oid: algorithm.to_string(),
        });
    }
    if curve != Some(OID_P256) {
        let named = curve.map_or_else(|| "no named curve".to_owned(), |c| format!("the curve {c}"));
        return Err(KeyFormError::Curve { named });
    }
    Ok(())
}

/// The label and DER of the one PEM block `text` holds, nothing but whitespace around it.
fn one_pem_block(text: &str) -> Result<(String, Vec<u8>), KeyFormError> {
    let text = text.trim_matches(|c: char| c.is_ascii_whitespace());
    let rest = text
        .strip_prefix("-----BEGIN ")
        .ok_or(KeyFormError::NotPem)?;
    let (label, rest) = rest
        .split_once("-----")
        .ok_or(KeyFormError::BeginUnclosed)?;
    if label.len() > 64 {
        return Err(KeyFormError::LabelTooLong);
    }
    let end = format!("-----END {label}-----");
    let (body, after) = rest.split_once(&end).ok_or(KeyFormError::NoEnd)?;
    if body.contains("-----") {
        return Err(KeyFormError::Broken);
    }
    if !after
        .trim_matches(|c: char| c.is_ascii_whitespace())
        .is_empty()
    {
        return Err(KeyFormError::TextAfter);
    }
    let encoded: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(encoded.as_bytes())
        .map_err(|_| KeyFormError::NotBase64)?;
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

#[cfg(test)]
#[path = "signing_key_tests.rs"]
pub(crate) mod tests;
