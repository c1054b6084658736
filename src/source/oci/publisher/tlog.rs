//! Transparency-log entries (Rekor v1): an entry's signed entry timestamp (the inclusion
//! promise) or its inclusion proof with a signed checkpoint, verified offline under a log key
//! of the trusted root; and whether the entry's body is about the signature at hand.

use super::Rejection;
use crate::descriptor::publishers::trusted_root::TrustedRoot;

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

/// Verifies `entry` under `root`'s log keys (its promise, or its proof and checkpoint; either
/// suffices) and that its body is about `signed`; the integrated time on success.
pub fn verify(
    root: &TrustedRoot,
    entry: &LogEntry,
    signed: Signed<'_>,
) -> Result<i64, (Rejection, String)> {
    let _ = (root, entry, signed);
    Err((Rejection::LogEntryInvalid, "not implemented yet".to_owned()))
}
