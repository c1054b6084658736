//! Certificate transparency for a Fulcio leaf: the signed certificate timestamps (SCTs, RFC 6962)
//! the leaf embeds, at least one of which must be signed by a CT log the trusted root names
//! (`ctlogs`), as cosign (without `--insecure-ignore-sct`), sigstore-go and sigstore-js require.
//!
//! The SCT list is the extension 1.3.6.1.4.1.11129.2.4.2: an OCTET STRING holding the TLS
//! encoding of a `SignedCertificateTimestampList` (a 2-byte length, then SCTs, each behind its own
//! 2-byte length), at most [`MAX_SCTS`] of them; a list that does not read is refused whole. Each
//! SCT v1 (version 0; another version never counts) names its log by a 32-byte id, which must be
//! a `ctlogs` entry's `logId.keyId` whose key's `validFor` covers the SCT's timestamp (compared to
//! the second, as the root's times are read); its `DigitallySigned` signature is SHA-256 with
//! ECDSA (for an EC log key, what every Sigstore CT log uses) or RSA PKCS#1 v1.5 (for an RSA log
//! key), over RFC 6962 §3.2's data for a precertificate: version 0, signature type 0
//! (certificate_timestamp), the timestamp, entry type 1 (precert_entry), the SHA-256 of the
//! issuing CA's SubjectPublicKeyInfo (the certificate that signed the leaf on the path webpki
//! built), the leaf's TBSCertificate without the SCT list extension (3-byte length), and the
//! SCT's extensions (2-byte length). Any other hash or signature algorithm does not count.

use sha2::{Digest as _, Sha256};

use crate::trust::keys::public_key::KeyKind;
use crate::trust::x509::error::X509Error;
use crate::trust::x509::trusted_root::TrustedRoot;
use crate::trust::x509::{self, Certificate};

/// The OID of the embedded SCT list extension, 1.3.6.1.4.1.11129.2.4.2 (DER content bytes).
pub const OID_SCT_LIST: &[u8] = &[0x2b, 0x06, 0x01, 0x04, 0x01, 0xd6, 0x79, 0x02, 0x04, 0x02];
/// The most SCTs a leaf's list may hold (Fulcio embeds one).
pub const MAX_SCTS: usize = 16;

/// TLS `HashAlgorithm` sha256.
const HASH_SHA256: u8 = 4;
/// TLS `SignatureAlgorithm` rsa.
const SIGNATURE_RSA: u8 = 1;
/// TLS `SignatureAlgorithm` ecdsa.
const SIGNATURE_ECDSA: u8 = 3;

/// One SCT as read from the list.
struct Sct<'a> {
    version: u8,
    log_id: &'a [u8],
    timestamp: u64,
    extensions: &'a [u8],
    hash_algorithm: u8,
    signature_algorithm: u8,
    signature: &'a [u8],
}

/// Why a leaf's SCTs do not show it was logged to certificate transparency, or cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SctError {
    /// No SCT list extension.
    #[error(
        "the certificate carries no SCT (extension 1.3.6.1.4.1.11129.2.4.2): it was not logged \
         to certificate transparency"
    )]
    NoSct,
    /// The SCT list cannot be read.
    #[error("its SCT list: {0}")]
    List(Box<SctError>),
    /// The trusted root names no CT log.
    #[error(
        "the trusted root names no CT log (`ctlogs`), so no SCT of the certificate can be checked"
    )]
    NoCtLog,
    /// The TBSCertificate without the SCT list cannot be made.
    #[error("its TBSCertificate without the SCT list: {0}")]
    Tbs(X509Error),
    /// The TBSCertificate is over the 24-bit length an SCT signs.
    #[error("its TBSCertificate is too long for an SCT")]
    TbsTooLong,
    /// Every SCT fails, each for its reason (with its position in the list).
    #[error(
        "no SCT of the certificate is signed by a CT log the trusted root names ({})",
        .problems.iter().map(|(index, problem)| format!("SCT {index}: {problem}")).collect::<Vec<_>>().join("; ")
    )]
    NoneSigned {
        /// Each SCT's position and why it does not count.
        problems: Vec<(usize, SctRefusal)>,
    },
    /// The extension is not one OCTET STRING.
    #[error("{0}")]
    Extension(X509Error),
    /// A field is cut short.
    #[error("{what} is cut short")]
    Cut {
        /// The field, as said.
        what: String,
    },
    /// Bytes after the list.
    #[error("bytes after the SCT list")]
    TrailingList,
    /// Over [`MAX_SCTS`] SCTs.
    #[error("over {MAX_SCTS} SCTs")]
    TooMany,
    /// One SCT cannot be read.
    #[error("SCT {index}: {reason}")]
    Entry {
        /// Its position in the list.
        index: usize,
        /// Why.
        reason: Box<SctError>,
    },
    /// An empty list.
    #[error("an empty SCT list")]
    EmptyList,
    /// Bytes after an SCT's signature.
    #[error("bytes after its signature")]
    TrailingSct,
}

/// Why one SCT does not count.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SctRefusal {
    /// Not a v1 SCT.
    #[error("version {version}, not v1 (0)")]
    Version {
        /// Its version.
        version: u8,
    },
    /// From a CT log the trusted root does not name.
    #[error("from the CT log {log_id}, which the trusted root does not name")]
    UnknownLog {
        /// The log id, hex.
        log_id: String,
    },
    /// Its timestamp is outside every validity the root gives that log.
    #[error(
        "its timestamp ({timestamp} ms) is outside the validity the trusted root gives the CT log {log_id}"
    )]
    OutsideValidity {
        /// Its timestamp (Unix milliseconds).
        timestamp: u64,
        /// The log id, hex.
        log_id: String,
    },
    /// Hashed with another algorithm than SHA-256.
    #[error("signed with TLS hash algorithm {hash}, not SHA-256 (4)")]
    HashAlgorithm {
        /// The TLS hash algorithm.
        hash: u8,
    },
    /// Its extensions are over 2^16 - 1 bytes.
    #[error("its extensions are too long")]
    ExtensionsTooLong,
    /// Its signature does not verify under the log's key.
    #[error(
        "its signature (TLS signature algorithm {algorithm}) does not verify with the key of the CT log {log_id}"
    )]
    BadSignature {
        /// The TLS signature algorithm.
        algorithm: u8,
        /// The log id, hex.
        log_id: String,
    },
}

/// Reads big-endian TLS fields one after another from a slice.
struct TlsReader<'a> {
    rest: &'a [u8],
}

impl<'a> TlsReader<'a> {
    fn bytes(&mut self, count: usize, what: &str) -> Result<&'a [u8], SctError> {
        if count > self.rest.len() {
            return Err(SctError::Cut {
                what: what.to_owned(),
            });
        }
        let (taken, rest) = self.rest.split_at(count);
        self.rest = rest;
        Ok(taken)
    }

    fn number(&mut self, size: usize, what: &str) -> Result<u64, SctError> {
        Ok(self
            .bytes(size, what)?
            .iter()
            .fold(0u64, |sum, &b| (sum << 8) | u64::from(b)))
    }

    /// Bytes behind a 2-byte length.
    fn opaque16(&mut self, what: &str) -> Result<&'a [u8], SctError> {
        let length = self.number(2, what)?;
        self.bytes(usize::try_from(length).unwrap_or(usize::MAX), what)
    }
}

/// Whether `leaf` (read from `leaf_der`), issued by the CA whose DER SubjectPublicKeyInfo is
/// `issuer_spki`, carries an SCT that a CT log of `root` signed; the error names why not.
pub fn check(
    root: &TrustedRoot,
    leaf_der: &[u8],
    leaf: &Certificate,
    issuer_spki: &[u8],
) -> Result<(), SctError> {
    let extension = leaf.extension(OID_SCT_LIST).ok_or(SctError::NoSct)?;
    let scts = read_list(&extension.value).map_err(|e| SctError::List(Box::new(e)))?;
    if root.ct_logs.is_empty() {
        return Err(SctError::NoCtLog);
    }
    let tbs = x509::tbs_without_extension(leaf_der, OID_SCT_LIST).map_err(SctError::Tbs)?;
    let tbs_length = u32::try_from(tbs.len())
        .ok()
        .filter(|&length| length < 1 << 24)
        .ok_or(SctError::TbsTooLong)?;
    let issuer_key_hash = Sha256::digest(issuer_spki);

    let mut problems = Vec::with_capacity(scts.len());
    for (index, sct) in scts.iter().enumerate() {
        match judge(root, sct, &issuer_key_hash, &tbs, tbs_length) {
            Ok(()) => return Ok(()),
            Err(problem) => problems.push((index, problem)),
        }
    }
    Err(SctError::NoneSigned { problems })
}

/// Why one SCT does not count, if it does not.
fn judge(
    root: &TrustedRoot,
    sct: &Sct<'_>,
    issuer_key_hash: &[u8],
    tbs: &[u8],
    tbs_length: u32,
) -> Result<(), SctRefusal> {
    if sct.version != 0 {
        return Err(SctRefusal::Version {
            version: sct.version,
        });
    }
    let log_id_hex: String = sct.log_id.iter().map(|b| format!("{b:02x}")).collect();
    let named: Vec<_> = root
        .ct_logs
        .iter()
        .filter(|log| log.log_id == sct.log_id)
        .collect();
    if named.is_empty() {
        return Err(SctRefusal::UnknownLog { log_id: log_id_hex });
    }
    let seconds = i64::try_from(sct.timestamp / 1000).unwrap_or(i64::MAX);
    let current: Vec<_> = named
        .into_iter()
        .filter(|log| seconds >= log.valid_from && seconds <= log.valid_until.unwrap_or(i64::MAX))
        .collect();
    if current.is_empty() {
        return Err(SctRefusal::OutsideValidity {
            timestamp: sct.timestamp,
            log_id: log_id_hex,
        });
    }
    if sct.hash_algorithm != HASH_SHA256 {
        return Err(SctRefusal::HashAlgorithm {
            hash: sct.hash_algorithm,
        });
    }
    let mut signed = Vec::with_capacity(tbs.len() + sct.extensions.len() + 64);
    signed.push(0); // version v1
    signed.push(0); // signature type certificate_timestamp
    signed.extend_from_slice(&sct.timestamp.to_be_bytes());
    signed.extend_from_slice(&1u16.to_be_bytes()); // entry type precert_entry
    signed.extend_from_slice(issuer_key_hash);
    signed.extend_from_slice(&tbs_length.to_be_bytes()[1..]);
    signed.extend_from_slice(tbs);
    let extensions_length =
        u16::try_from(sct.extensions.len()).map_err(|_| SctRefusal::ExtensionsTooLong)?;
    signed.extend_from_slice(&extensions_length.to_be_bytes());
    signed.extend_from_slice(sct.extensions);

    for log in current {
        let expected = match log.key.kind() {
            KeyKind::EcdsaP256 | KeyKind::EcdsaP384 => SIGNATURE_ECDSA,
            KeyKind::Rsa { .. } => SIGNATURE_RSA,
            KeyKind::Ed25519 => continue,
        };
        if sct.signature_algorithm == expected && log.key.verify(&signed, sct.signature) {
            return Ok(());
        }
    }
    Err(SctRefusal::BadSignature {
        algorithm: sct.signature_algorithm,
        log_id: log_id_hex,
    })
}

/// The SCTs of an SCT list extension's value, bounded; any flaw refuses the whole list.
fn read_list(value: &[u8]) -> Result<Vec<Sct<'_>>, SctError> {
    // The extension's value is itself an OCTET STRING around the TLS bytes: located here, then
    // read from the value's own bytes so the SCTs borrow from it.
    let inner = x509::octet_string(value, "the SCT list extension").map_err(SctError::Extension)?;
    let inner = &value[value.len() - inner.len()..];
    let mut list = TlsReader { rest: inner };
    let body = list.opaque16("the SCT list")?;
    if !list.rest.is_empty() {
        return Err(SctError::TrailingList);
    }
    let mut entries = TlsReader { rest: body };
    let mut scts = Vec::new();
    while !entries.rest.is_empty() {
        if scts.len() == MAX_SCTS {
            return Err(SctError::TooMany);
        }
        let index = scts.len();
        let what = format!("SCT {index}");
        let serialized = entries.opaque16(&what)?;
        scts.push(read_sct(serialized).map_err(|e| SctError::Entry {
            index,
            reason: Box::new(e),
        })?);
    }
    if scts.is_empty() {
        return Err(SctError::EmptyList);
    }
    Ok(scts)
}

fn read_sct(serialized: &[u8]) -> Result<Sct<'_>, SctError> {
    let mut fields = TlsReader { rest: serialized };
    let version = fields.bytes(1, "its version")?[0];
    let log_id = fields.bytes(32, "its log id")?;
    let timestamp = fields.number(8, "its timestamp")?;
    let extensions = fields.opaque16("its extensions")?;
    let algorithms = fields.bytes(2, "its signature's algorithms")?;
    let signature = fields.opaque16("its signature")?;
    if !fields.rest.is_empty() {
        return Err(SctError::TrailingSct);
    }
    Ok(Sct {
        version,
        log_id,
        timestamp,
        extensions,
        hash_algorithm: algorithms[0],
        signature_algorithm: algorithms[1],
        signature,
    })
}
