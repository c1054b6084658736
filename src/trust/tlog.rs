//! Transparency-log entries (Rekor v1), verified offline under a log key of the trusted root,
//! and whether an entry's body is about the signature at hand.
//!
//! An entry counts when, in this order:
//! 1. its sizes are within bounds (body, signed entry timestamp, proof hashes, checkpoint);
//! 2. the trusted root has a log key with the entry's log id, valid at its integrated time;
//! 3. its signed entry timestamp (the inclusion promise) verifies under that key: an ECDSA
//!    signature over the SHA-256 of the canonical JSON `{"body":"<base64 body>",
//!    "integratedTime":<n>,"logID":"<hex log id>","logIndex":<n>}` (keys sorted, no spaces).
//!    It is required: without a timestamp authority it is the only thing that vouches for the
//!    integrated time a certificate is judged at (sigstore-go and sigstore-python use the
//!    integrated time only when a promise covers it);
//! 4. its inclusion proof, when present, verifies too (sigstore-go and sigstore-python check
//!    both when both are present): the RFC 6962 leaf hash of the body, the audit path up to the
//!    root hash at the tree size, and the checkpoint (a signed note: origin, tree size, base64
//!    root hash, other lines, a blank line, then `— <name> <base64(key hint ‖ signature)>`
//!    lines) naming that size and root hash, signed by the log key (its 4-byte hint is the log
//!    id's first 4 bytes);
//! 5. its body is about the signature: a `hashedrekord` 0.0.1 over the message's SHA-256 with
//!    this signature and verifier, or a `dsse` 0.0.1 with the payload's SHA-256 and exactly this
//!    one signature and verifier. Any other kind (`intoto` included, which sigstore-python
//!    refuses too) is a mismatch.
//!
//! Which entries a bundle must carry (a promise for v0.1, a proof for v0.2 and later) is the
//! bundle's rule ([`crate::trust::image::bundle`]). The checkpoint and the tree hashes are
//! [`checkpoint`]'s; why an entry cannot be read, [`error`]'s.

pub mod checkpoint;
pub mod error;

use base64::Engine as _;
use sha2::{Digest as _, Sha256};

use crate::support::{escape, hex};
use crate::trust::keys::pem;
use crate::trust::keys::public_key::KeyKind;
use crate::trust::verdict::Rejection;
use crate::trust::x509::trusted_root::{LogKey, TrustedRoot};
use checkpoint::{Checkpoint, leaf_hash, node_hash};
use error::{LogEntryError, ProofError};

/// The largest canonicalized body read (a hashedrekord with a certificate is a few KiB).
pub const MAX_BODY: usize = 128 * 1024;
/// The largest signed entry timestamp (an ASN.1 ECDSA signature is under 140 bytes).
pub const MAX_PROMISE: usize = 512;
/// The most hashes an audit path holds (a tree of 2^64 leaves needs 64).
pub const MAX_PROOF_HASHES: usize = 64;
/// The longest checkpoint (a signed note of a few lines).
pub const MAX_CHECKPOINT: usize = 4096;

/// One log entry as a bundle (or a cosign ≤ v2 `bundle` annotation) carries it.
#[derive(Debug, Clone)]
pub struct LogEntry {
    /// Its index in the log.
    pub log_index: u64,
    /// The log id (SHA-256 of the log key's DER SubjectPublicKeyInfo).
    pub log_id: Vec<u8>,
    /// When it was integrated (Unix seconds): the signing time a certificate is judged at.
    pub integrated_time: i64,
    /// The canonicalized body, as the log stores it.
    pub body: Vec<u8>,
    /// The signed entry timestamp, if any.
    pub promise: Option<Vec<u8>>,
    /// The inclusion proof, if any.
    pub proof: Option<InclusionProof>,
}

/// An inclusion proof and the checkpoint it is checked against.
#[derive(Debug, Clone)]
pub struct InclusionProof {
    /// The entry's index in the tree the proof is for.
    pub log_index: u64,
    /// The tree size.
    pub tree_size: u64,
    /// The root hash.
    pub root_hash: Vec<u8>,
    /// The audit path.
    pub hashes: Vec<Vec<u8>>,
    /// The signed checkpoint (a signed note).
    pub checkpoint: String,
}

/// What a log entry must be about.
#[derive(Debug, Clone, Copy)]
pub enum Signed<'a> {
    /// A signature over a message (`hashedrekord`): the message, the signature, and the
    /// verifier (a PEM certificate or public key, as the signature's material holds it).
    Message {
        /// The signed bytes.
        message: &'a [u8],
        /// The signature.
        signature: &'a [u8],
        /// The DER leaf certificate or SubjectPublicKeyInfo that verifies it.
        verifier_der: &'a [u8],
    },
    /// A signature over a message known only by its SHA-256 (a bundle's `messageSignature`):
    /// a `hashedrekord` as [`Signed::Message`].
    MessageDigest {
        /// The message's SHA-256.
        digest: &'a [u8],
        /// The signature.
        signature: &'a [u8],
        /// The DER leaf certificate or SubjectPublicKeyInfo that verifies it.
        verifier_der: &'a [u8],
    },
    /// A DSSE envelope (`dsse`, or `intoto`): its payload type, payload, signature and verifier.
    Dsse {
        /// The payload type.
        payload_type: &'a str,
        /// The payload.
        payload: &'a [u8],
        /// The signature.
        signature: &'a [u8],
        /// The DER leaf certificate or SubjectPublicKeyInfo that verifies it.
        verifier_der: &'a [u8],
    },
}

/// Verifies `entry` under `root`'s log keys (its signed entry timestamp, required, and its
/// inclusion proof with its checkpoint, when present) and that its body is about `signed`; the
/// integrated time, which the verified timestamp vouches for, on success.
pub fn verify(
    root: &TrustedRoot,
    entry: &LogEntry,
    signed: Signed<'_>,
) -> Result<i64, (Rejection, String)> {
    check_bounds(entry)?;
    let log = log_key(root, entry)?;
    verify_promise(log, entry)?;
    if let Some(proof) = &entry.proof {
        verify_proof(log, entry, proof)?;
    }
    body_is_about(&entry.body, signed)?;
    Ok(entry.integrated_time)
}

fn invalid(detail: impl Into<String>) -> (Rejection, String) {
    (Rejection::LogEntryInvalid, detail.into())
}

fn mismatch(detail: impl Into<String>) -> (Rejection, String) {
    (Rejection::LogEntryMismatch, detail.into())
}

/// Step 1: every size within its bound before any work on it.
fn check_bounds(entry: &LogEntry) -> Result<(), (Rejection, String)> {
    let malformed = |what: &str, len: usize, max: usize| {
        (
            Rejection::Malformed,
            format!("the log entry's {what} is {len} long, over the bound of {max}"),
        )
    };
    if entry.body.len() > MAX_BODY {
        return Err(malformed("body", entry.body.len(), MAX_BODY));
    }
    if let Some(promise) = &entry.promise
        && promise.len() > MAX_PROMISE
    {
        return Err(malformed(
            "signed entry timestamp",
            promise.len(),
            MAX_PROMISE,
        ));
    }
    if let Some(proof) = &entry.proof {
        if proof.hashes.len() > MAX_PROOF_HASHES {
            return Err(malformed(
                "inclusion proof",
                proof.hashes.len(),
                MAX_PROOF_HASHES,
            ));
        }
        if proof.checkpoint.len() > MAX_CHECKPOINT {
            return Err(malformed(
                "checkpoint",
                proof.checkpoint.len(),
                MAX_CHECKPOINT,
            ));
        }
    }
    Ok(())
}

/// Step 2: the trusted root's key for the entry's log, valid at its integrated time.
fn log_key<'r>(root: &'r TrustedRoot, entry: &LogEntry) -> Result<&'r LogKey, (Rejection, String)> {
    let time = entry.integrated_time;
    let mut known = false;
    for log in root.logs.iter().filter(|log| log.log_id == entry.log_id) {
        known = true;
        if log.valid_from <= time && log.valid_until.is_none_or(|until| time <= until) {
            return Ok(log);
        }
    }
    Err(invalid(if known {
        format!(
            "the trusted root's key of log {} was not valid at the entry's integrated time {time}",
            hex::encode(&entry.log_id)
        )
    } else {
        format!(
            "the entry's log {} is not a log of the trusted root",
            hex::encode(&entry.log_id)
        )
    }))
}

/// The bytes a signed entry timestamp signs.
pub fn promise_payload(entry: &LogEntry) -> String {
    // Standard base64 and lowercase hex need no JSON escaping; the keys are in JCS order.
    format!(
        "{{\"body\":\"{}\",\"integratedTime\":{},\"logID\":\"{}\",\"logIndex\":{}}}",
        base64::engine::general_purpose::STANDARD.encode(&entry.body),
        entry.integrated_time,
        hex::encode(&entry.log_id),
        entry.log_index
    )
}

/// Step 3: the signed entry timestamp, required, under the log's (ECDSA) key.
fn verify_promise(log: &LogKey, entry: &LogEntry) -> Result<(), (Rejection, String)> {
    let promise = entry.promise.as_ref().ok_or_else(|| {
        invalid(
            "the log entry has no signed entry timestamp (inclusion promise), so nothing vouches \
             for its integrated time",
        )
    })?;
    if !matches!(log.key.kind(), KeyKind::EcdsaP256 | KeyKind::EcdsaP384) {
        return Err(invalid(
            "the log's key is not an ECDSA key, the only kind a signed entry timestamp is checked with",
        ));
    }
    if !log.key.verify(promise_payload(entry).as_bytes(), promise) {
        return Err(invalid(
            "the log entry's signed entry timestamp does not verify under the log's key",
        ));
    }
    Ok(())
}

/// Step 4: the inclusion proof and its checkpoint.
fn verify_proof(
    log: &LogKey,
    entry: &LogEntry,
    proof: &InclusionProof,
) -> Result<(), (Rejection, String)> {
    let root_hash = root_from_proof(&entry.body, proof).map_err(|e| invalid(e.to_string()))?;
    if root_hash.as_slice() != proof.root_hash.as_slice() {
        return Err(invalid(
            "the inclusion proof does not lead from the entry to its root hash",
        ));
    }
    let checkpoint = Checkpoint::parse(&proof.checkpoint).map_err(|e| invalid(e.to_string()))?;
    if checkpoint.tree_size != proof.tree_size || checkpoint.root_hash != proof.root_hash {
        return Err(invalid(format!(
            "the checkpoint names tree size {} and another root hash than the proof's (size {})",
            checkpoint.tree_size, proof.tree_size
        )));
    }
    checkpoint
        .verify(&log.key, &log.log_id)
        .map_err(|e| invalid(e.to_string()))
}

/// The root hash the audit path of `proof` leads to from the leaf `body` at `proof.log_index`
/// in a tree of `proof.tree_size` leaves (RFC 6962 §2.1.1, RFC 9162 §2.1.3.2).
fn root_from_proof(body: &[u8], proof: &InclusionProof) -> Result<[u8; 32], ProofError> {
    let (index, size) = (proof.log_index, proof.tree_size);
    if index >= size {
        return Err(ProofError::IndexOutside { index, size });
    }
    if proof.root_hash.len() != 32 || proof.hashes.iter().any(|hash| hash.len() != 32) {
        return Err(ProofError::HashLength);
    }
    // The path first climbs the subtrees in which the leaf's and the last leaf's positions
    // differ (the leaf is a left or a right child by its index bit), then only right edges
    // remain, where the leaf's subtree is the right child of a complete left sibling.
    let inner = (u64::BITS - (index ^ (size - 1)).leading_zeros()) as usize;
    let border = (index >> inner).count_ones() as usize;
    if proof.hashes.len() != inner + border {
        return Err(ProofError::HashCount {
            count: proof.hashes.len(),
            index,
            size,
            needs: inner + border,
        });
    }
    let mut hash = leaf_hash(body);
    for (level, sibling) in proof.hashes[..inner].iter().enumerate() {
        hash = if (index >> level) & 1 == 0 {
            node_hash(&hash, sibling)
        } else {
            node_hash(sibling, &hash)
        };
    }
    for sibling in &proof.hashes[inner..] {
        hash = node_hash(sibling, &hash);
    }
    Ok(hash)
}

/// Step 5: the body is about `signed`.
fn body_is_about(body: &[u8], signed: Signed<'_>) -> Result<(), (Rejection, String)> {
    let value = std::str::from_utf8(body)
        .ok()
        .and_then(|text| crate::trust::strict_json::parse(text).ok())
        .ok_or_else(|| mismatch("the log entry's body is not JSON (or gives a key twice)"))?;
    let kind = value.get("kind").and_then(serde_json::Value::as_str);
    let version = value.get("apiVersion").and_then(serde_json::Value::as_str);
    let spec = value.get("spec").unwrap_or(&serde_json::Value::Null);
    let message_digest: [u8; 32];
    let hashed = match signed {
        Signed::Message {
            message,
            signature,
            verifier_der,
        } => {
            message_digest = Sha256::digest(message).into();
            Some((&message_digest[..], signature, verifier_der))
        }
        Signed::MessageDigest {
            digest,
            signature,
            verifier_der,
        } => Some((digest, signature, verifier_der)),
        Signed::Dsse { .. } => None,
    };
    match (signed, kind, version) {
        (
            Signed::Message { .. } | Signed::MessageDigest { .. },
            Some("hashedrekord"),
            Some("0.0.1"),
        ) => {
            let Some((digest, signature, verifier_der)) = hashed else {
                return Err(mismatch("no message signature"));
            };
            expect_sha256(spec.pointer("/data/hash"), digest, "message")?;
            expect_bytes(
                spec.pointer("/signature/content"),
                signature,
                "the signature",
            )?;
            expect_verifier(spec.pointer("/signature/publicKey/content"), verifier_der)
        }
        (
            Signed::Dsse {
                payload_type,
                payload,
                signature,
                verifier_der,
            },
            Some("dsse"),
            Some("0.0.1"),
        ) => {
            let what = format!("`{}` payload", escape::text(payload_type));
            expect_sha256(spec.get("payloadHash"), &Sha256::digest(payload), &what)?;
            let signatures = spec
                .get("signatures")
                .and_then(serde_json::Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let [one] = signatures else {
                return Err(mismatch(format!(
                    "the log entry records {} signatures, not this envelope's one",
                    signatures.len()
                )));
            };
            expect_bytes(one.get("signature"), signature, "the signature")?;
            expect_verifier(one.get("verifier"), verifier_der)
        }
        (_, kind, version) => Err(mismatch(format!(
            "the log entry is a `{}` {} entry, not the {} entry this signature needs",
            escape::text(kind.unwrap_or("?")),
            escape::text(version.unwrap_or("?")),
            match signed {
                Signed::Message { .. } | Signed::MessageDigest { .. } => "hashedrekord 0.0.1",
                Signed::Dsse { .. } => "dsse 0.0.1",
            }
        ))),
    }
}

fn expect_sha256(
    hash: Option<&serde_json::Value>,
    expected: &[u8],
    what: &str,
) -> Result<(), (Rejection, String)> {
    let algorithm = hash
        .and_then(|hash| hash.get("algorithm"))
        .and_then(serde_json::Value::as_str);
    let value = hash
        .and_then(|hash| hash.get("value"))
        .and_then(serde_json::Value::as_str);
    if algorithm != Some("sha256") || value != Some(hex::encode(expected).as_str()) {
        return Err(mismatch(format!(
            "the log entry records another {what} hash than this {what}'s SHA-256"
        )));
    }
    Ok(())
}

fn decode_field(field: Option<&serde_json::Value>) -> Option<Vec<u8>> {
    field
        .and_then(serde_json::Value::as_str)
        .and_then(|text| base64::engine::general_purpose::STANDARD.decode(text).ok())
}

fn expect_bytes(
    field: Option<&serde_json::Value>,
    expected: &[u8],
    what: &str,
) -> Result<(), (Rejection, String)> {
    if decode_field(field).as_deref() != Some(expected) {
        return Err(mismatch(format!(
            "the log entry records another signature than {what}"
        )));
    }
    Ok(())
}

fn expect_verifier(
    field: Option<&serde_json::Value>,
    expected_der: &[u8],
) -> Result<(), (Rejection, String)> {
    let recorded = decode_field(field)
        .and_then(|pem| String::from_utf8(pem).ok())
        .and_then(|pem| pem::verifier(&pem).ok());
    if recorded.as_deref() != Some(expected_der) {
        return Err(mismatch(
            "the log entry records another certificate or key than this signature's",
        ));
    }
    Ok(())
}

/// Reads an integer as protobuf JSON writes an int64: a decimal string, or a number.
fn integer(value: Option<&serde_json::Value>) -> Option<i64> {
    match value? {
        serde_json::Value::String(text)
            if !text.is_empty()
                && text.len() <= 20
                && text
                    .trim_start_matches('-')
                    .bytes()
                    .all(|b| b.is_ascii_digit()) =>
        {
            text.parse().ok()
        }
        serde_json::Value::Number(number) => number.as_i64(),
        _ => None,
    }
}

fn base64_field(
    value: Option<&serde_json::Value>,
    max: usize,
    what: &'static str,
) -> Result<Vec<u8>, LogEntryError> {
    let text = value
        .and_then(serde_json::Value::as_str)
        .ok_or(LogEntryError::NoField { what })?;
    if text.len() > max.div_ceil(3) * 4 {
        return Err(LogEntryError::OverBound { what, max });
    }
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|_| LogEntryError::NotBase64 { what })
}

/// A non-negative integer field; absent is 0, as protobuf JSON omits zero values.
fn non_negative(
    value: Option<&serde_json::Value>,
    what: &'static str,
) -> Result<u64, LogEntryError> {
    let Some(value) = value else {
        return Ok(0);
    };
    integer(Some(value))
        .and_then(|n| u64::try_from(n).ok())
        .ok_or(LogEntryError::NotNonNegative { what })
}

impl LogEntry {
    /// Reads one `verificationMaterial.tlogEntries` element of a Sigstore bundle (protobuf
    /// JSON); its `kindVersion` must name the body's own kind and version. The error says what
    /// is wrong.
    pub fn from_bundle_json(value: &serde_json::Value) -> Result<LogEntry, LogEntryError> {
        let log_index = non_negative(value.get("logIndex"), "`logIndex`")?;
        let log_id = base64_field(value.pointer("/logId/keyId"), 64, "`logId.keyId`")?;
        let integrated_time = integer(value.get("integratedTime"))
            .filter(|time| *time > 0)
            .ok_or(LogEntryError::NoIntegratedTime)?;
        let body = base64_field(
            value.get("canonicalizedBody"),
            MAX_BODY,
            "`canonicalizedBody`",
        )?;
        let promise = match value.pointer("/inclusionPromise/signedEntryTimestamp") {
            None => None,
            Some(field) => Some(base64_field(
                Some(field),
                MAX_PROMISE,
                "`signedEntryTimestamp`",
            )?),
        };
        let proof = match value.get("inclusionProof") {
            None => None,
            Some(proof) => Some(InclusionProof::from_bundle_json(proof)?),
        };
        let declared = (
            value
                .pointer("/kindVersion/kind")
                .and_then(serde_json::Value::as_str),
            value
                .pointer("/kindVersion/version")
                .and_then(serde_json::Value::as_str),
        );
        let parsed: serde_json::Value =
            serde_json::from_slice(&body).map_err(|_| LogEntryError::BodyNotJson)?;
        let actual = (
            parsed.get("kind").and_then(serde_json::Value::as_str),
            parsed.get("apiVersion").and_then(serde_json::Value::as_str),
        );
        if declared.0.is_none() || declared != actual {
            return Err(LogEntryError::KindVersion);
        }
        Ok(LogEntry {
            log_index,
            log_id,
            integrated_time,
            body,
            promise,
            proof,
        })
    }

    /// Reads a cosign ≤ v2 `dev.sigstore.cosign/bundle` annotation: `{"SignedEntryTimestamp":
    /// <base64>, "Payload": {"body": <base64>, "integratedTime": n, "logIndex": n, "logID":
    /// <hex>}}`. The error says what is wrong.
    pub fn from_cosign_bundle(text: &str) -> Result<LogEntry, LogEntryError> {
        if text.len() > 2 * MAX_BODY {
            return Err(LogEntryError::AnnotationOverBound { max: 2 * MAX_BODY });
        }
        let value =
            crate::trust::strict_json::parse(text).map_err(LogEntryError::AnnotationNotJson)?;
        let payload = value.get("Payload").ok_or(LogEntryError::NoPayload)?;
        let log_id_hex = payload
            .get("logID")
            .and_then(serde_json::Value::as_str)
            .ok_or(LogEntryError::NoLogId)?;
        let log_id = hex::decode_lower_32(log_id_hex)
            .ok_or(LogEntryError::LogIdHex)?
            .to_vec();
        Ok(LogEntry {
            log_index: non_negative(payload.get("logIndex"), "`logIndex`")?,
            log_id,
            integrated_time: payload
                .get("integratedTime")
                .and_then(serde_json::Value::as_i64)
                .filter(|time| *time > 0)
                .ok_or(LogEntryError::AnnotationNoIntegratedTime)?,
            body: base64_field(payload.get("body"), MAX_BODY, "`body`")?,
            promise: Some(base64_field(
                value.get("SignedEntryTimestamp"),
                MAX_PROMISE,
                "`SignedEntryTimestamp`",
            )?),
            proof: None,
        })
    }
}

impl InclusionProof {
    fn from_bundle_json(value: &serde_json::Value) -> Result<InclusionProof, LogEntryError> {
        let hashes = value
            .get("hashes")
            .map(|hashes| hashes.as_array().ok_or(LogEntryError::HashesNotList))
            .transpose()?
            .map(Vec::as_slice)
            .unwrap_or_default();
        if hashes.len() > MAX_PROOF_HASHES {
            return Err(LogEntryError::TooManyHashes {
                count: hashes.len(),
                max: MAX_PROOF_HASHES,
            });
        }
        let checkpoint = value
            .pointer("/checkpoint/envelope")
            .and_then(serde_json::Value::as_str)
            .ok_or(LogEntryError::NoCheckpoint)?;
        if checkpoint.len() > MAX_CHECKPOINT {
            return Err(LogEntryError::CheckpointOverBound {
                max: MAX_CHECKPOINT,
            });
        }
        Ok(InclusionProof {
            log_index: non_negative(value.get("logIndex"), "proof's `logIndex`")?,
            tree_size: non_negative(value.get("treeSize"), "proof's `treeSize`")?,
            root_hash: base64_field(value.get("rootHash"), 32, "proof's `rootHash`")?,
            hashes: hashes
                .iter()
                .map(|hash| base64_field(Some(hash), 32, "proof hash"))
                .collect::<Result<_, _>>()?,
            checkpoint: checkpoint.to_owned(),
        })
    }
}

#[cfg(test)]
#[path = "tlog_tests.rs"]
mod tests;
