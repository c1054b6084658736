//! The public keys a cosign signature is checked with (`verify.cosign_key`): a PEM
//! `PUBLIC KEY` (SubjectPublicKeyInfo) of ECDSA P-256 (what `cosign generate-key-pair` makes),
//! P-384, Ed25519 or RSA of at least 2048 bits, verified as cosign verifies with such a key.
//!
//! Reading is stricter than cosign's (Go's `pem.Decode` takes the first block and ignores the
//! rest; we want exactly one `PUBLIC KEY` block and nothing but whitespace around it), and every
//! refusal names the rule broken. The DER is parsed strictly (canonical lengths, no trailing
//! bytes), an EC point must be uncompressed and on its curve, an Ed25519 key must carry no
//! parameters and an RSA key must carry NULL parameters, as Go's `x509.ParsePKIXPublicKey` wants.

use std::path::Path;

use ring::signature::{self as ring_signature, UnparsedPublicKey, VerificationAlgorithm};
use spki::ObjectIdentifier;
use spki::der::asn1::UintRef;
use spki::der::{Decode as _, Reader as _, SliceReader};

use crate::support::escape;

/// The most bytes a public key file (or PEM text) may hold.
pub const MAX_KEY_FILE_BYTES: u64 = 64 * 1024;
/// The most bytes a DER SubjectPublicKeyInfo may hold (an 8192-bit RSA key takes about 1100).
pub const MAX_SPKI_BYTES: usize = 4096;
/// The fewest RSA modulus bits accepted.
pub const MIN_RSA_BITS: usize = 2048;
/// The most RSA modulus bits accepted (what ring verifies).
pub const MAX_RSA_BITS: usize = 8192;
/// The largest RSA public exponent accepted (Go's `crypto/rsa` refuses larger ones).
const MAX_RSA_EXPONENT: u64 = (1 << 31) - 1;

/// Why a public key is refused: the rule of the PEM framing, the DER or the algorithm it breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PublicKeyError {
    /// The file cannot be read (the reader's words).
    #[error("{reason}")]
    Unreadable {
        /// Why.
        reason: String,
    },
    /// The file is over [`MAX_KEY_FILE_BYTES`].
    #[error("larger than {MAX_KEY_FILE_BYTES} bytes")]
    FileTooLarge,
    /// The file is not UTF-8.
    #[error("not UTF-8 text (a PEM `PUBLIC KEY` is)")]
    NotUtf8,
    /// The PEM text is over [`MAX_KEY_FILE_BYTES`].
    #[error("a public key is at most {MAX_KEY_FILE_BYTES} bytes of PEM")]
    PemTooLarge,
    /// Nothing but whitespace.
    #[error("empty: expected a PEM `PUBLIC KEY` block")]
    Empty,
    /// Text before the BEGIN line.
    #[error("text before the PEM block: only whitespace may surround it")]
    TextBefore,
    /// No BEGIN line.
    #[error("not PEM: expected a `-----BEGIN PUBLIC KEY-----` block")]
    NotPem,
    /// A BEGIN line without its closing dashes.
    #[error("a PEM BEGIN line without its closing dashes")]
    BeginUnclosed,
    /// A private key's block.
    #[error(
        "a private key: give the public key (`cosign public-key`, `openssl pkey -pubout`), never \
         the private one"
    )]
    PrivateKey,
    /// A certificate's block.
    #[error("a certificate, not a public key: give the key itself (`openssl x509 -pubkey -noout`)")]
    Certificate,
    /// A PKCS#1 RSA public key's block.
    #[error(
        "a PKCS#1 `RSA PUBLIC KEY`: give it as a `PUBLIC KEY` (SubjectPublicKeyInfo, `openssl \
         rsa -RSAPublicKey_in -pubout`)"
    )]
    Pkcs1,
    /// Another label.
    #[error("a PEM `{label}` block: expected `PUBLIC KEY`")]
    Label {
        /// The label (escaped).
        label: String,
    },
    /// No END line.
    #[error("a PEM `PUBLIC KEY` block without its END line")]
    NoEnd,
    /// Another BEGIN or END line inside the block.
    #[error("a PEM `PUBLIC KEY` block broken by another BEGIN or END line: exactly one block")]
    Broken,
    /// A second block after the first.
    #[error("more than one PEM block: a key file holds exactly one `PUBLIC KEY`")]
    MoreThanOne,
    /// Text after the END line.
    #[error("text after the PEM block: only whitespace may surround it")]
    TextAfter,
    /// The block is not standard base64.
    #[error("the PEM `PUBLIC KEY` block is not valid base64")]
    NotBase64,
    /// The DER is over [`MAX_SPKI_BYTES`].
    #[error("a SubjectPublicKeyInfo of {bytes} bytes: at most {MAX_SPKI_BYTES}")]
    SpkiTooLarge {
        /// Its size.
        bytes: usize,
    },
    /// Not a DER SubjectPublicKeyInfo (the reader's words).
    #[error("not a DER SubjectPublicKeyInfo ({reason})")]
    NotSpki {
        /// Why.
        reason: String,
    },
    /// Bytes after the SubjectPublicKeyInfo.
    #[error("trailing bytes after the DER SubjectPublicKeyInfo")]
    SpkiTrailingBytes,
    /// The key's BIT STRING has unused bits.
    #[error("the SubjectPublicKeyInfo's key BIT STRING does not hold whole bytes")]
    PartialBytes,
    /// Neither EC, Ed25519 nor RSA.
    #[error("a key of algorithm {oid}: a cosign key is ECDSA P-256 or P-384, Ed25519 or RSA")]
    Algorithm {
        /// The algorithm's OID.
        oid: String,
    },
    /// An EC key without a named curve.
    #[error("an EC key without a named curve")]
    EcWithoutCurve,
    /// An EC key on a curve other than P-256 and P-384.
    #[error("an EC key on {name}: an ECDSA cosign key is on P-256 or P-384")]
    Curve {
        /// The curve.
        name: String,
    },
    /// An EC point that is not uncompressed or not of its curve's length.
    #[error(
        "an EC point of {bytes} bytes that is not an uncompressed point ({length} bytes, 0x04 first)"
    )]
    PointForm {
        /// Its length.
        bytes: usize,
        /// The length of an uncompressed point on its curve.
        length: usize,
    },
    /// An EC point not on its curve.
    #[error("an EC point not on its curve")]
    OffCurve,
    /// An Ed25519 key with parameters.
    #[error("an Ed25519 key with parameters (RFC 8410 has none)")]
    Ed25519Parameters,
    /// An Ed25519 key not of 32 bytes.
    #[error("an Ed25519 key of {bytes} bytes, not 32")]
    Ed25519Length {
        /// Its length.
        bytes: usize,
    },
    /// An RSA key without NULL parameters.
    #[error("an RSA key without NULL parameters")]
    RsaParameters,
    /// An RSAPublicKey too long for the DER reader.
    #[error("an RSA key that is not a DER RSAPublicKey")]
    RsaTooLong,
    /// Not a DER RSAPublicKey (the reader's words).
    #[error("an RSA key that is not a DER RSAPublicKey ({reason})")]
    NotRsa {
        /// Why.
        reason: String,
    },
    /// Bytes after the RSAPublicKey.
    #[error("trailing bytes after the RSAPublicKey")]
    RsaTrailingBytes,
    /// Under [`MIN_RSA_BITS`].
    #[error("an RSA key of {bits} bits: at least {MIN_RSA_BITS}")]
    RsaTooSmall {
        /// The modulus's bits.
        bits: usize,
    },
    /// Over [`MAX_RSA_BITS`].
    #[error("an RSA key of {bits} bits: at most {MAX_RSA_BITS}")]
    RsaTooLarge {
        /// The modulus's bits.
        bits: usize,
    },
    /// An even modulus.
    #[error("an RSA key with an even modulus")]
    EvenModulus,
    /// A public exponent that is even, under 3 or over 2^31 - 1.
    #[error("an RSA key whose public exponent is not an odd number from 3 to {MAX_RSA_EXPONENT}")]
    Exponent,
}

/// A key file that is refused: the file (escaped) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {refusal}")]
pub struct KeyFileError {
    /// The file (escaped).
    pub path: String,
    /// Why.
    pub refusal: PublicKeyError,
}

const OID_EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const OID_P256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const OID_P384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");
const OID_P521: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.35");
const OID_SECP256K1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.10");
const OID_ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");
const OID_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");

/// The kind of a public key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// ECDSA on P-256; signatures ASN.1 DER over SHA-256.
    EcdsaP256,
    /// ECDSA on P-384; signatures ASN.1 DER over SHA-256, as cosign hashes with every ECDSA key.
    EcdsaP384,
    /// Ed25519 (pure).
    Ed25519,
    /// RSA PKCS#1 v1.5 over SHA-256, of this many modulus bits (at least 2048).
    Rsa {
        /// Modulus bits.
        bits: usize,
    },
}

/// A parsed public key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    spki_der: Vec<u8>,
    kind: KeyKind,
    /// The contents of the SubjectPublicKeyInfo's BIT STRING: the uncompressed EC point, the 32
    /// Ed25519 bytes, or the DER RSAPublicKey (what ring verifies with).
    key_bytes: Vec<u8>,
}

impl PublicKey {
    /// The key of a PEM `PUBLIC KEY` block (one block, nothing else but whitespace); the error
    /// names the rule broken.
    pub fn from_pem(text: &str) -> Result<PublicKey, PublicKeyError> {
        if text.len() as u64 > MAX_KEY_FILE_BYTES {
            return Err(PublicKeyError::PemTooLarge);
        }
        let der = pem_public_key_der(text)?;
        PublicKey::from_spki_der(&der)
    }

    /// The key of a DER SubjectPublicKeyInfo (what a certificate holds).
    pub fn from_spki_der(der: &[u8]) -> Result<PublicKey, PublicKeyError> {
        if der.len() > MAX_SPKI_BYTES {
            return Err(PublicKeyError::SpkiTooLarge { bytes: der.len() });
        }
        let not_spki = |reason: String| PublicKeyError::NotSpki { reason };
        let mut reader = SliceReader::new(der).map_err(|_| not_spki("too long".to_owned()))?;
        let info = spki::SubjectPublicKeyInfoRef::decode(&mut reader)
            .map_err(|e| not_spki(e.to_string()))?;
        if !reader.is_finished() {
            return Err(PublicKeyError::SpkiTrailingBytes);
        }
        let key_bytes = info
            .subject_public_key
            .as_bytes()
            .ok_or(PublicKeyError::PartialBytes)?;
        let algorithm = info.algorithm.oid;
        let parameters = info.algorithm.parameters;
        let kind = if algorithm == OID_EC_PUBLIC_KEY {
            let curve = parameters
                .and_then(|p| p.decode_as::<ObjectIdentifier>().ok())
                .ok_or(PublicKeyError::EcWithoutCurve)?;
            ec_kind(curve, key_bytes)?
        } else if algorithm == OID_ED25519 {
            if parameters.is_some() {
                return Err(PublicKeyError::Ed25519Parameters);
            }
            if key_bytes.len() != 32 {
                return Err(PublicKeyError::Ed25519Length {
                    bytes: key_bytes.len(),
                });
            }
            KeyKind::Ed25519
        } else if algorithm == OID_RSA {
            if !parameters.is_some_and(|p| p.is_null()) {
                return Err(PublicKeyError::RsaParameters);
            }
            rsa_kind(key_bytes)?
        } else {
            return Err(PublicKeyError::Algorithm {
                oid: algorithm.to_string(),
            });
        };
        Ok(PublicKey {
            spki_der: der.to_vec(),
            kind,
            key_bytes: key_bytes.to_vec(),
        })
    }

    /// Reads and parses the key file at `path` (bounded like every key file).
    pub fn read(path: &Path) -> Result<PublicKey, KeyFileError> {
        let named = |refusal: PublicKeyError| KeyFileError {
            path: escape::path(path).to_string(),
            refusal,
        };
        let bytes = crate::format::untrusted_fs::read_input(path, MAX_KEY_FILE_BYTES)
            .map_err(|e| named(PublicKeyError::Unreadable { reason: e.reason }))?
            .map_err(|_| named(PublicKeyError::FileTooLarge))?;
        let text = std::str::from_utf8(&bytes).map_err(|_| named(PublicKeyError::NotUtf8))?;
        PublicKey::from_pem(text).map_err(named)
    }

    /// `sha256:` and the lowercase hex SHA-256 of the DER SubjectPublicKeyInfo (what
    /// `openssl pkey -pubin -outform DER | sha256sum` prints).
    pub fn fingerprint(&self) -> String {
        format!("sha256:{}", crate::support::hex::sha256_hex(&self.spki_der))
    }

    /// Its kind.
    pub fn kind(&self) -> KeyKind {
        self.kind
    }

    /// The DER SubjectPublicKeyInfo.
    pub fn spki_der(&self) -> &[u8] {
        &self.spki_der
    }

    /// Whether `signature` is this key's signature of `message`, as cosign checks it with this
    /// kind of key.
    ///
    /// cosign's `verify --key` loads the key with `signature.LoadVerifier(key, crypto.SHA256)`
    /// (its `--signature-digest-algorithm` defaults to sha256): ECDSA (P-256 and P-384 alike)
    /// over SHA-256 with an ASN.1 DER signature, Ed25519 pure (no prehash), RSA PKCS#1 v1.5 over
    /// SHA-256.
    pub fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        let algorithm: &dyn VerificationAlgorithm = match self.kind {
            KeyKind::EcdsaP256 => &ring_signature::ECDSA_P256_SHA256_ASN1,
            KeyKind::EcdsaP384 => &ring_signature::ECDSA_P384_SHA256_ASN1,
            KeyKind::Ed25519 => &ring_signature::ED25519,
            KeyKind::Rsa { .. } => &ring_signature::RSA_PKCS1_2048_8192_SHA256,
        };
        UnparsedPublicKey::new(algorithm, &self.key_bytes)
            .verify(message, signature)
            .is_ok()
    }

    /// Whether `signature` is this key's signature of `message` in a Sigstore bundle, with the
    /// key's *natural* algorithm, which differs from [`PublicKey::verify`]'s for some keys.
    ///
    /// sigstore-go leaves the verifier of a bundle's public key to its caller; the one Sigstore
    /// names for each key is its algorithm registry's default (sigstore/sigstore
    /// `signature.GetDefaultPublicKeyDetails`, what `LoadDefaultVerifier` and cosign's signing
    /// with a key file use): P-256 with SHA-256, P-384 with SHA-384 (not SHA-256), RSA PKCS#1
    /// v1.5 with SHA-256 only for moduli of 2048, 3072 or 4096 bits (Go's `Size() * 8`; the
    /// registry has no other size, so another refuses here), and Ed25519 pure. The registry's
    /// Ed25519ph (cosign's default for a `hashedrekord` entry signed with an Ed25519 key) is not
    /// supported and refuses: a verdict never more lenient than the reference's.
    pub fn verify_bundle(&self, message: &[u8], signature: &[u8]) -> bool {
        let algorithm: &dyn VerificationAlgorithm = match self.kind {
            KeyKind::EcdsaP256 => &ring_signature::ECDSA_P256_SHA256_ASN1,
            KeyKind::EcdsaP384 => &ring_signature::ECDSA_P384_SHA384_ASN1,
            KeyKind::Ed25519 => &ring_signature::ED25519,
            KeyKind::Rsa { bits } => match bits.div_ceil(8) * 8 {
                2048 | 3072 | 4096 => &ring_signature::RSA_PKCS1_2048_8192_SHA256,
                _ => return false,
            },
        };
        UnparsedPublicKey::new(algorithm, &self.key_bytes)
            .verify(message, signature)
            .is_ok()
    }
}

/// The DER of the one PEM `PUBLIC KEY` block `text` holds, nothing else around it but
/// whitespace.
fn pem_public_key_der(text: &str) -> Result<Vec<u8>, PublicKeyError> {
    const BEGIN: &str = "-----BEGIN ";
    const DASHES: &str = "-----";
    const END: &str = "-----END PUBLIC KEY-----";
    let text = text.trim_matches(|c: char| c.is_ascii_whitespace());
    if text.is_empty() {
        return Err(PublicKeyError::Empty);
    }
    let Some(after_begin) = text.strip_prefix(BEGIN) else {
        return Err(if text.contains(BEGIN) {
            PublicKeyError::TextBefore
        } else {
            PublicKeyError::NotPem
        });
    };
    let (label, rest) = after_begin
        .split_once(DASHES)
        .ok_or(PublicKeyError::BeginUnclosed)?;
    if label != "PUBLIC KEY" {
        return Err(wrong_label(label));
    }
    let (body, after_end) = rest.split_once(END).ok_or(PublicKeyError::NoEnd)?;
    if body.contains(DASHES) {
        return Err(PublicKeyError::Broken);
    }
    if !after_end
        .trim_matches(|c: char| c.is_ascii_whitespace())
        .is_empty()
    {
        return Err(if after_end.contains(BEGIN) {
            PublicKeyError::MoreThanOne
        } else {
            PublicKeyError::TextAfter
        });
    }
    let base64_text: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(base64_text.as_bytes())
        .map_err(|_| PublicKeyError::NotBase64)
}

/// The refusal of a PEM block labelled `label` where a `PUBLIC KEY` is wanted.
fn wrong_label(label: &str) -> PublicKeyError {
    if label.contains("PRIVATE KEY") {
        PublicKeyError::PrivateKey
    } else if label.contains("CERTIFICATE") {
        PublicKeyError::Certificate
    } else if label == "RSA PUBLIC KEY" {
        PublicKeyError::Pkcs1
    } else {
        PublicKeyError::Label {
            label: escape::text(label).to_string(),
        }
    }
}

/// The kind of an EC key on `curve` with the point `point`: P-256 or P-384, an uncompressed
/// point on the curve.
fn ec_kind(curve: ObjectIdentifier, point: &[u8]) -> Result<KeyKind, PublicKeyError> {
    let (kind, length, on_curve) = if curve == OID_P256 {
        (
            KeyKind::EcdsaP256,
            65,
            p256::PublicKey::from_sec1_bytes(point).is_ok(),
        )
    } else if curve == OID_P384 {
        (
            KeyKind::EcdsaP384,
            97,
            p384::PublicKey::from_sec1_bytes(point).is_ok(),
        )
    } else {
        let name = if curve == OID_P521 {
            "P-521".to_owned()
        } else if curve == OID_SECP256K1 {
            "secp256k1".to_owned()
        } else {
            format!("the curve {curve}")
        };
        return Err(PublicKeyError::Curve { name });
    };
    if point.len() != length || point.first() != Some(&0x04) {
        return Err(PublicKeyError::PointForm {
            bytes: point.len(),
            length,
        });
    }
    if !on_curve {
        return Err(PublicKeyError::OffCurve);
    }
    Ok(kind)
}

/// The kind of the DER RSAPublicKey `der`: a modulus of 2048 to 8192 bits and an odd exponent
/// from 3 to 2^31 - 1.
fn rsa_kind(der: &[u8]) -> Result<KeyKind, PublicKeyError> {
    let mut reader = SliceReader::new(der).map_err(|_| PublicKeyError::RsaTooLong)?;
    let (modulus, exponent) = reader
        .sequence(|r| Ok((UintRef::decode(r)?, UintRef::decode(r)?)))
        .map_err(|e| PublicKeyError::NotRsa {
            reason: e.to_string(),
        })?;
    if !reader.is_finished() {
        return Err(PublicKeyError::RsaTrailingBytes);
    }
    let modulus = modulus.as_bytes();
    let bits = match modulus.first() {
        Some(&first) if first != 0 => modulus.len() * 8 - first.leading_zeros() as usize,
        _ => 0,
    };
    if bits < MIN_RSA_BITS {
        return Err(PublicKeyError::RsaTooSmall { bits });
    }
    if bits > MAX_RSA_BITS {
        return Err(PublicKeyError::RsaTooLarge { bits });
    }
    if modulus.last().is_some_and(|last| last & 1 == 0) {
        return Err(PublicKeyError::EvenModulus);
    }
    let exponent = exponent.as_bytes();
    let value = if exponent.len() > 8 {
        u64::MAX
    } else {
        exponent
            .iter()
            .fold(0u64, |value, &byte| value << 8 | u64::from(byte))
    };
    if !(3..=MAX_RSA_EXPONENT).contains(&value) || value & 1 == 0 {
        return Err(PublicKeyError::Exponent);
    }
    Ok(KeyKind::Rsa { bits })
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use super::*;

    /// A key pair made by `openssl` in a temporary directory.
    struct OpensslKey {
        dir: tempfile::TempDir,
    }

    impl OpensslKey {
        fn new(genpkey_args: &[&str]) -> OpensslKey {
            let dir = tempfile::tempdir().unwrap();
            let key = dir.path().join("key.pem");
            let mut args = vec!["genpkey"];
            args.extend_from_slice(genpkey_args);
            args.extend_from_slice(&["-out", key.to_str().unwrap()]);
            openssl(&args);
            openssl(&[
                "pkey",
                "-in",
                key.to_str().unwrap(),
                "-pubout",
                "-out",
                dir.path().join("pub.pem").to_str().unwrap(),
            ]);
            OpensslKey { dir }
        }

        fn p256() -> OpensslKey {
            OpensslKey::new(&["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"])
        }

        fn p384() -> OpensslKey {
            OpensslKey::new(&["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"])
        }

        fn ed25519() -> OpensslKey {
            OpensslKey::new(&["-algorithm", "ED25519"])
        }

        fn rsa(bits: usize) -> OpensslKey {
            OpensslKey::new(&[
                "-algorithm",
                "RSA",
                "-pkeyopt",
                &format!("rsa_keygen_bits:{bits}"),
            ])
        }

        fn path(&self, name: &str) -> PathBuf {
            self.dir.path().join(name)
        }

        fn public_pem(&self) -> String {
            fs_err::read_to_string(self.path("pub.pem")).unwrap()
        }

        fn private_pem(&self) -> String {
            fs_err::read_to_string(self.path("key.pem")).unwrap()
        }

        fn public_key(&self) -> PublicKey {
            PublicKey::from_pem(&self.public_pem()).unwrap()
        }

        /// The DER SubjectPublicKeyInfo as openssl writes it.
        fn public_der(&self) -> Vec<u8> {
            let out = self.path("pub.der");
            openssl(&[
                "pkey",
                "-pubin",
                "-in",
                self.path("pub.pem").to_str().unwrap(),
                "-outform",
                "DER",
                "-out",
                out.to_str().unwrap(),
            ]);
            fs_err::read(out).unwrap()
        }

        /// openssl's signature of `message`: `dgst -sha256 -sign` for ECDSA and RSA (`digest`
        /// chooses the hash), `pkeyutl -sign -rawin` for Ed25519.
        fn sign(&self, message: &[u8], digest: &str) -> Vec<u8> {
            let input = self.path("message");
            let out = self.path("signature");
            fs_err::write(&input, message).unwrap();
            let key = self.path("key.pem");
            if digest == "ed25519" {
                openssl(&[
                    "pkeyutl",
                    "-sign",
                    "-rawin",
                    "-inkey",
                    key.to_str().unwrap(),
                    "-in",
                    input.to_str().unwrap(),
                    "-out",
                    out.to_str().unwrap(),
                ]);
            } else {
                openssl(&[
                    "dgst",
                    &format!("-{digest}"),
                    "-sign",
                    key.to_str().unwrap(),
                    "-out",
                    out.to_str().unwrap(),
                    input.to_str().unwrap(),
                ]);
            }
            fs_err::read(out).unwrap()
        }
    }

    fn openssl(args: &[&str]) -> Vec<u8> {
        let output = Command::new("openssl").args(args).output().unwrap();
        assert!(
            output.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output.stdout
    }

    fn pem(label: &str, der: &[u8]) -> String {
        use base64::Engine as _;
        let encoded = base64::engine::general_purpose::STANDARD.encode(der);
        let mut text = format!("-----BEGIN {label}-----\n");
        for line in encoded.as_bytes().chunks(64) {
            text.push_str(std::str::from_utf8(line).unwrap());
            text.push('\n');
        }
        text.push_str(&format!("-----END {label}-----\n"));
        text
    }

    fn refusal(text: &str) -> String {
        PublicKey::from_pem(text).unwrap_err().to_string()
    }

    /// Each kind verifies openssl's signature; the wrong key, a flipped payload byte and a
    /// flipped signature byte refuse.
    fn verifies_and_refuses(key: &OpensslKey, digest: &str, kind: KeyKind) {
        let message = br#"{"critical":{"type":"cosign container image signature"}}"#;
        let public = key.public_key();
        assert_eq!(public.kind(), kind);
        let signature = key.sign(message, digest);
        assert!(public.verify(message, &signature));

        let mut flipped_message = message.to_vec();
        flipped_message[5] ^= 1;
        assert!(!public.verify(&flipped_message, &signature));
        for at in [0, signature.len() / 2, signature.len() - 1] {
            let mut flipped = signature.clone();
            flipped[at] ^= 1;
            assert!(!public.verify(message, &flipped), "flipped byte {at}");
        }
        assert!(!public.verify(message, &[]));

        let other = OpensslKey::p256().public_key();
        assert!(!other.verify(message, &signature));
    }

    #[test]
    fn p256_verifies_with_sha256() {
        verifies_and_refuses(&OpensslKey::p256(), "sha256", KeyKind::EcdsaP256);
    }

    #[test]
    fn p384_verifies_with_sha256_as_cosign_and_sha384_in_bundles() {
        let key = OpensslKey::p384();
        verifies_and_refuses(&key, "sha256", KeyKind::EcdsaP384);
        let message = b"a bundle's message";
        let public = key.public_key();
        let sha384 = key.sign(message, "sha384");
        let sha256 = key.sign(message, "sha256");
        assert!(public.verify_bundle(message, &sha384));
        assert!(!public.verify_bundle(message, &sha256));
        assert!(!public.verify(message, &sha384));
    }

    #[test]
    fn ed25519_verifies_pure() {
        let key = OpensslKey::ed25519();
        verifies_and_refuses(&key, "ed25519", KeyKind::Ed25519);
        let message = b"pure";
        let signature = key.sign(message, "ed25519");
        assert!(key.public_key().verify_bundle(message, &signature));
    }

    #[test]
    fn rsa_verifies_pkcs1_sha256() {
        let key = OpensslKey::rsa(2048);
        verifies_and_refuses(&key, "sha256", KeyKind::Rsa { bits: 2048 });
        let message = b"rsa";
        let signature = key.sign(message, "sha256");
        assert!(key.public_key().verify_bundle(message, &signature));
        // PSS is another scheme: refused.
        let input = key.path("message");
        fs_err::write(&input, message).unwrap();
        let pss = key.path("pss");
        openssl(&[
            "dgst",
            "-sha256",
            "-sigopt",
            "rsa_padding_mode:pss",
            "-sign",
            key.path("key.pem").to_str().unwrap(),
            "-out",
            pss.to_str().unwrap(),
            input.to_str().unwrap(),
        ]);
        assert!(
            !key.public_key()
                .verify(message, &fs_err::read(pss).unwrap())
        );
    }

    #[test]
    fn rsa_of_an_unregistered_size_verifies_as_cosign_but_not_in_bundles() {
        let key = OpensslKey::rsa(2560);
        let message = b"rsa 2560";
        let signature = key.sign(message, "sha256");
        let public = key.public_key();
        assert_eq!(public.kind(), KeyKind::Rsa { bits: 2560 });
        assert!(public.verify(message, &signature));
        assert!(!public.verify_bundle(message, &signature));
    }

    #[test]
    fn fingerprint_is_the_sha256_of_openssls_der() {
        for key in [OpensslKey::p256(), OpensslKey::ed25519()] {
            let der = key.public_der();
            let public = key.public_key();
            assert_eq!(public.spki_der(), der.as_slice());
            let sha256sum = openssl(&[
                "dgst",
                "-sha256",
                "-r",
                key.path("pub.der").to_str().unwrap(),
            ]);
            let hex = String::from_utf8(sha256sum).unwrap();
            let hex = hex.split_whitespace().next().unwrap();
            assert_eq!(public.fingerprint(), format!("sha256:{hex}"));
            assert_eq!(PublicKey::from_spki_der(&der).unwrap(), public);
        }
    }

    #[test]
    fn whitespace_around_the_block_is_allowed() {
        let key = OpensslKey::p256();
        let text = format!("\n\n  {}  \n\t\n", key.public_pem());
        assert_eq!(PublicKey::from_pem(&text).unwrap(), key.public_key());
        let crlf = key.public_pem().replace('\n', "\r\n");
        assert_eq!(PublicKey::from_pem(&crlf).unwrap(), key.public_key());
    }

    #[test]
    fn other_curves_are_refused() {
        for (curve, name) in [("P-521", "P-521"), ("secp256k1", "secp256k1")] {
            let key = OpensslKey::new(&[
                "-algorithm",
                "EC",
                "-pkeyopt",
                &format!("ec_paramgen_curve:{curve}"),
            ]);
            let message = refusal(&key.public_pem());
            assert!(message.contains(name), "{message}");
            assert!(message.contains("P-256 or P-384"), "{message}");
        }
    }

    #[test]
    fn small_rsa_is_refused() {
        let key = OpensslKey::rsa(1024);
        assert_eq!(
            refusal(&key.public_pem()),
            "an RSA key of 1024 bits: at least 2048"
        );
    }

    /// A DER TLV.
    fn tlv(tag: u8, value: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        let length = value.len();
        if length < 0x80 {
            out.push(length as u8);
        } else if length < 0x100 {
            out.extend_from_slice(&[0x81, length as u8]);
        } else {
            out.extend_from_slice(&[0x82, (length >> 8) as u8, length as u8]);
        }
        out.extend_from_slice(value);
        out
    }

    /// The SubjectPublicKeyInfo of an RSA key of `modulus` (its DER INTEGER contents) and
    /// `exponent`.
    fn rsa_spki(modulus: &[u8], exponent: &[u8]) -> Vec<u8> {
        rsa_spki_then(modulus, exponent, &[])
    }

    /// [`rsa_spki`] with `trailing` bytes after the RSAPublicKey, in the BIT STRING.
    fn rsa_spki_then(modulus: &[u8], exponent: &[u8], trailing: &[u8]) -> Vec<u8> {
        let rsa_public_key = [
            tlv(0x30, &[tlv(0x02, modulus), tlv(0x02, exponent)].concat()),
            trailing.to_vec(),
        ]
        .concat();
        let algorithm = [
            tlv(
                0x06,
                &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01],
            ),
            vec![0x05, 0x00],
        ]
        .concat();
        let bit_string = [&[0u8][..], &rsa_public_key].concat();
        tlv(
            0x30,
            &[tlv(0x30, &algorithm), tlv(0x03, &bit_string)].concat(),
        )
    }

    /// The DER INTEGER contents of the modulus of an openssl RSA key.
    fn openssl_modulus(key: &OpensslKey) -> Vec<u8> {
        let der = key.public_der();
        let info = spki::SubjectPublicKeyInfoRef::from_der(&der).unwrap();
        let mut reader = SliceReader::new(info.subject_public_key.as_bytes().unwrap()).unwrap();
        let modulus = reader
            .sequence(|r| {
                let modulus = UintRef::decode(r)?;
                UintRef::decode(r)?;
                Ok(modulus)
            })
            .unwrap();
        [&[0u8][..], modulus.as_bytes()].concat()
    }

    #[test]
    fn rsa_exponents_are_bounded() {
        let key = OpensslKey::new(&[
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-pkeyopt",
            "rsa_keygen_pubexp:3",
        ]);
        assert_eq!(key.public_key().kind(), KeyKind::Rsa { bits: 2048 });
        let modulus = openssl_modulus(&OpensslKey::rsa(2048));
        assert!(PublicKey::from_spki_der(&rsa_spki(&modulus, &[0x01, 0x00, 0x01])).is_ok());
        assert!(PublicKey::from_spki_der(&rsa_spki(&modulus, &[0x7f, 0xff, 0xff, 0xff])).is_ok());
        for exponent in [
            &[0x01][..],
            &[0x02],
            &[0x01, 0x00, 0x00],
            &[0x00, 0x80, 0x00, 0x00, 0x01],
            &[0x01, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        ] {
            let err = PublicKey::from_spki_der(&rsa_spki(&modulus, exponent)).unwrap_err();
            assert_eq!(err, PublicKeyError::Exponent, "{exponent:?}");
        }
        // An even modulus, and a modulus over 8192 bits.
        let mut even = modulus.clone();
        *even.last_mut().unwrap() &= 0xfe;
        assert_eq!(
            PublicKey::from_spki_der(&rsa_spki(&even, &[0x01, 0x00, 0x01])).unwrap_err(),
            PublicKeyError::EvenModulus
        );
        let mut huge = vec![0x00, 0x80];
        huge.extend_from_slice(&[0x01; 1024]);
        assert_eq!(
            PublicKey::from_spki_der(&rsa_spki(&huge, &[0x01, 0x00, 0x01])).unwrap_err(),
            PublicKeyError::RsaTooLarge { bits: 8200 }
        );
        assert_eq!(
            PublicKey::from_spki_der(&rsa_spki_then(&modulus, &[0x01, 0x00, 0x01], &[0x05, 0x00]))
                .unwrap_err(),
            PublicKeyError::RsaTrailingBytes
        );
        // A negative modulus.
        let err =
            PublicKey::from_spki_der(&rsa_spki(&modulus[1..], &[0x01, 0x00, 0x01])).unwrap_err();
        assert!(matches!(err, PublicKeyError::NotRsa { .. }), "{err}");
    }

    #[test]
    fn private_keys_and_certificates_are_refused() {
        let key = OpensslKey::p256();
        let message = refusal(&key.private_pem());
        assert!(message.starts_with("a private key"), "{message}");
        let sec1 = pem("EC PRIVATE KEY", b"anything");
        assert!(refusal(&sec1).starts_with("a private key"));

        let cert = key.path("cert.pem");
        openssl(&[
            "req",
            "-new",
            "-x509",
            "-key",
            key.path("key.pem").to_str().unwrap(),
            "-subj",
            "/CN=test",
            "-days",
            "1",
            "-out",
            cert.to_str().unwrap(),
        ]);
        let message = refusal(&fs_err::read_to_string(cert).unwrap());
        assert!(message.starts_with("a certificate"), "{message}");

        let rsa = OpensslKey::rsa(2048);
        let pkcs1 = rsa.path("pkcs1.pem");
        openssl(&[
            "rsa",
            "-in",
            rsa.path("key.pem").to_str().unwrap(),
            "-RSAPublicKey_out",
            "-out",
            pkcs1.to_str().unwrap(),
        ]);
        let message = refusal(&fs_err::read_to_string(pkcs1).unwrap());
        assert!(
            message.starts_with("a PKCS#1 `RSA PUBLIC KEY`"),
            "{message}"
        );

        let message = refusal(&pem("SOMETHING\u{1b}[8m", b"x"));
        assert!(message.contains("\\u{1b}"), "escaped: {message}");
    }

    #[test]
    fn the_pem_framing_is_strict() {
        let good = OpensslKey::p256().public_pem();
        let other = OpensslKey::p256().public_pem();
        assert!(refusal(&format!("{good}{other}")).starts_with("more than one PEM block"));
        assert!(refusal(&format!("{good}garbage\n")).starts_with("text after the PEM block"));
        assert!(refusal(&format!("comment\n{good}")).starts_with("text before the PEM block"));
        assert!(refusal("").starts_with("empty"));
        assert!(refusal("   \n").starts_with("empty"));
        assert!(refusal("ssh-ed25519 AAAA").starts_with("not PEM"));
        let no_end = good.replace("-----END PUBLIC KEY-----", "");
        assert!(refusal(&no_end).contains("without its END line"));
        let nested = good.replacen('\n', "\n-----BEGIN PUBLIC KEY-----\n", 2);
        assert!(
            refusal(&nested).contains("exactly one block"),
            "{}",
            refusal(&nested)
        );
        let bad_base64 = good.replacen('\n', "\n*", 1);
        assert!(refusal(&bad_base64).contains("not valid base64"));
        let headers = good.replacen('\n', "\nProc-Type: 4,ENCRYPTED\n", 1);
        assert!(refusal(&headers).contains("not valid base64"));
        let huge = format!("{good}{}", " ".repeat(MAX_KEY_FILE_BYTES as usize));
        assert!(refusal(&huge).contains("at most"));
    }

    #[test]
    fn the_der_is_strict() {
        let key = OpensslKey::p256();
        let der = key.public_der();

        let mut trailing = der.clone();
        trailing.push(0);
        assert_eq!(
            refusal(&pem("PUBLIC KEY", &trailing)),
            "trailing bytes after the DER SubjectPublicKeyInfo"
        );
        assert!(refusal(&pem("PUBLIC KEY", &der[..der.len() - 1])).starts_with("not a DER"));
        assert!(refusal(&pem("PUBLIC KEY", b"\x30\x00")).starts_with("not a DER"));
        // A long-form length where the short form fits (BER, not DER).
        let mut long_form = vec![0x30, 0x81, der[1]];
        long_form.extend_from_slice(&der[2..]);
        assert!(refusal(&pem("PUBLIC KEY", &long_form)).starts_with("not a DER"));
        // A compressed point.
        let compressed = key.path("compressed.der");
        openssl(&[
            "ec",
            "-pubin",
            "-in",
            key.path("pub.pem").to_str().unwrap(),
            "-conv_form",
            "compressed",
            "-outform",
            "DER",
            "-out",
            compressed.to_str().unwrap(),
        ]);
        let err = PublicKey::from_spki_der(&fs_err::read(compressed).unwrap()).unwrap_err();
        assert!(
            matches!(
                err,
                PublicKeyError::PointForm {
                    bytes: 33,
                    length: 65
                }
            ),
            "{err}"
        );
        // A BIT STRING whose last bits are unused: 03 42 00 04 … becomes 03 42 01 04 ….
        let at = der.len() - 68;
        assert_eq!(&der[at..at + 4], &[0x03, 0x42, 0x00, 0x04]);
        let mut unused_bits = der.clone();
        unused_bits[at + 2] = 1;
        *unused_bits.last_mut().unwrap() &= 0xfe;
        assert_eq!(
            PublicKey::from_spki_der(&unused_bits).unwrap_err(),
            PublicKeyError::PartialBytes
        );
        // A point off the curve: the last byte of y changed.
        let mut off_curve = der.clone();
        let last = off_curve.len() - 1;
        off_curve[last] ^= 1;
        assert_eq!(
            PublicKey::from_spki_der(&off_curve).unwrap_err(),
            PublicKeyError::OffCurve
        );
        let err = PublicKey::from_spki_der(&vec![0x30; MAX_SPKI_BYTES + 1]).unwrap_err();
        assert_eq!(err, PublicKeyError::SpkiTooLarge { bytes: 4097 });
        assert_eq!(
            err.to_string(),
            "a SubjectPublicKeyInfo of 4097 bytes: at most 4096"
        );
    }

    #[test]
    fn ed25519_and_rsa_parameters_are_checked() {
        let ed = OpensslKey::ed25519().public_der();
        // 30 2a 30 05 06 03 2b 65 70 03 21 00 <32>: give the algorithm a NULL parameter.
        let mut with_null = vec![
            0x30, 0x2c, 0x30, 0x07, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x05, 0x00,
        ];
        with_null.extend_from_slice(&ed[9..]);
        assert_eq!(
            PublicKey::from_spki_der(&with_null).unwrap_err(),
            PublicKeyError::Ed25519Parameters
        );
        let mut short = vec![
            0x30, 0x29, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x20, 0x00,
        ];
        short.extend_from_slice(&ed[12..43]);
        assert_eq!(
            PublicKey::from_spki_der(&short).unwrap_err(),
            PublicKeyError::Ed25519Length { bytes: 31 }
        );

        let rsa = OpensslKey::rsa(2048).public_der();
        // 30 82 01 22 30 0d 06 09 <rsaEncryption> 05 00 03 82 01 0f …: drop the NULL.
        assert_eq!(&rsa[17..19], &[0x05, 0x00]);
        let mut without_null = vec![0x30, 0x82, 0x01, 0x20, 0x30, 0x0b];
        without_null.extend_from_slice(&rsa[6..17]);
        without_null.extend_from_slice(&rsa[19..]);
        assert_eq!(
            PublicKey::from_spki_der(&without_null).unwrap_err(),
            PublicKeyError::RsaParameters
        );
    }

    #[test]
    fn other_algorithms_are_refused() {
        let ed448 = OpensslKey::new(&["-algorithm", "ED448"]);
        let message = refusal(&ed448.public_pem());
        assert!(
            message.starts_with("a key of algorithm 1.3.101.113"),
            "{message}"
        );
        let x25519 = OpensslKey::new(&["-algorithm", "X25519"]);
        assert!(refusal(&x25519.public_pem()).starts_with("a key of algorithm 1.3.101.110"));
    }

    #[test]
    fn read_names_the_file_and_is_bounded() {
        let key = OpensslKey::p256();
        assert_eq!(
            PublicKey::read(&key.path("pub.pem")).unwrap(),
            key.public_key()
        );
        let err = PublicKey::read(&key.path("key.pem")).unwrap_err();
        assert_eq!(err.refusal, PublicKeyError::PrivateKey);
        assert!(err.to_string().contains("key.pem: a private key"), "{err}");
        let missing = PublicKey::read(Path::new("/nonexistent/cosign.pub")).unwrap_err();
        assert!(
            matches!(missing.refusal, PublicKeyError::Unreadable { .. }),
            "{missing}"
        );
        assert!(
            missing.to_string().starts_with("/nonexistent/cosign.pub"),
            "{missing}"
        );
        let big = key.path("big.pem");
        fs_err::write(&big, vec![b' '; MAX_KEY_FILE_BYTES as usize + 1]).unwrap();
        let err = PublicKey::read(&big).unwrap_err();
        assert_eq!(err.refusal, PublicKeyError::FileTooLarge);
        assert!(err.to_string().contains("larger than 65536 bytes"), "{err}");
        let binary = key.path("binary");
        fs_err::write(&binary, [0xff, 0xfe]).unwrap();
        assert_eq!(
            PublicKey::read(&binary).unwrap_err().refusal,
            PublicKeyError::NotUtf8
        );
    }
}
