//! The proof that a transparency-log entry is in the log: RFC 6962 leaf and node hashes, and the
//! checkpoint the log signs over a tree size and its root hash (a signed note: origin, tree size,
//! base64 root hash, other lines, a blank line, then `— <name> <base64(key hint ‖ signature)>`
//! lines), read strictly and verified under the log's key. The audit path from an entry to the
//! root hash is [`crate::trust::tlog`]'s.

use base64::Engine as _;
use sha2::{Digest as _, Sha256};

use crate::support::escape;
use crate::trust::keys::public_key::PublicKey;

/// The most signature lines a checkpoint holds.
pub const MAX_CHECKPOINT_SIGNATURES: usize = 8;

/// Why a checkpoint is refused: how it is not a signed note of the log's, or its signature fails.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointError {
    /// Not exactly one blank line between the note and its signatures.
    #[error("the checkpoint does not have exactly one blank line before its signatures")]
    BlankLines,
    /// No signature lines, or the last one without its line break.
    #[error("the checkpoint's signature lines are missing or unterminated")]
    SignaturesMissing,
    /// The first line is empty.
    #[error("the checkpoint has no origin line")]
    NoOrigin,
    /// The second line is not decimal digits.
    #[error("the checkpoint's second line is not a tree size")]
    NotTreeSize,
    /// The tree size does not fit 64 bits.
    #[error("the checkpoint's tree size is out of range")]
    TreeSizeOutOfRange,
    /// The third line is not standard base64.
    #[error("the checkpoint's third line is not a base64 root hash")]
    NotRootHash,
    /// Over [`MAX_CHECKPOINT_SIGNATURES`] signature lines.
    #[error("the checkpoint has more than {MAX_CHECKPOINT_SIGNATURES} signature lines")]
    TooManySignatures,
    /// A line after the blank one that does not start with `— `.
    #[error("the checkpoint line `{line}` is not a signature line")]
    NotSignatureLine {
        /// The line (escaped).
        line: String,
    },
    /// A signature line that is not `— <name> <signature>`.
    #[error("a checkpoint signature line is not `— <name> <signature>`")]
    SignatureLineShape,
    /// A signature that is not standard base64.
    #[error("a checkpoint signature is not base64")]
    SignatureNotBase64,
    /// A signature without a key hint and at least one byte.
    #[error("a checkpoint signature is too short")]
    SignatureTooShort,
    /// No signature line carries the log's key hint.
    #[error("the checkpoint has no signature by the entry's log")]
    NoSignatureByLog,
    /// A signature line with the log's key hint does not verify under its key.
    #[error("the checkpoint's signature does not verify under the log's key")]
    BadSignature,
}

/// The RFC 6962 hash of a leaf.
pub fn leaf_hash(leaf: &[u8]) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update([0u8]);
    hash.update(leaf);
    hash.finalize().into()
}

/// The RFC 6962 hash of an inner node.
pub fn node_hash(left: &[u8], right: &[u8]) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update([1u8]);
    hash.update(left);
    hash.update(right);
    hash.finalize().into()
}

/// A parsed checkpoint: the signed note's text and what it says.
pub struct Checkpoint<'a> {
    /// The signed text: everything up to and including the first line break of the blank line.
    pub note: &'a str,
    /// The tree size it names.
    pub tree_size: u64,
    /// The root hash it names.
    pub root_hash: Vec<u8>,
    /// Each signature line's key hint and signature.
    pub signatures: Vec<([u8; 4], Vec<u8>)>,
}

impl<'a> Checkpoint<'a> {
    /// Reads the signed note `text`: origin, tree size, base64 root hash, other lines, a blank
    /// line, then at most [`MAX_CHECKPOINT_SIGNATURES`] lines
    /// `— <name> <base64(key hint ‖ signature)>`.
    pub fn parse(text: &'a str) -> Result<Checkpoint<'a>, CheckpointError> {
        let split = match text
            .match_indices("\n\n")
            .map(|(at, _)| at)
            .collect::<Vec<_>>()[..]
        {
            [at] => at,
            _ => {
                return Err(CheckpointError::BlankLines);
            }
        };
        let note = &text[..=split];
        let signature_block = &text[split + 2..];
        if signature_block.is_empty() || !signature_block.ends_with('\n') {
            return Err(CheckpointError::SignaturesMissing);
        }
        let mut lines = note.strip_suffix('\n').unwrap_or(note).split('\n');
        let origin = lines.next().unwrap_or_default();
        if origin.is_empty() {
            return Err(CheckpointError::NoOrigin);
        }
        let size_line = lines.next().unwrap_or_default();
        if size_line.is_empty() || !size_line.bytes().all(|b| b.is_ascii_digit()) {
            return Err(CheckpointError::NotTreeSize);
        }
        let tree_size = size_line
            .parse::<u64>()
            .map_err(|_| CheckpointError::TreeSizeOutOfRange)?;
        let root_hash = base64::engine::general_purpose::STANDARD
            .decode(lines.next().unwrap_or_default())
            .map_err(|_| CheckpointError::NotRootHash)?;
        let mut signatures = Vec::new();
        for line in signature_block
            .strip_suffix('\n')
            .unwrap_or(signature_block)
            .split('\n')
        {
            if signatures.len() == MAX_CHECKPOINT_SIGNATURES {
                return Err(CheckpointError::TooManySignatures);
            }
            let rest = line.strip_prefix("\u{2014} ").ok_or_else(|| {
                CheckpointError::NotSignatureLine {
                    line: escape::text(line).to_string(),
                }
            })?;
            let (name, encoded) = match rest.split(' ').collect::<Vec<_>>()[..] {
                [name, encoded] if !name.is_empty() => (name, encoded),
                _ => {
                    return Err(CheckpointError::SignatureLineShape);
                }
            };
            let _ = name;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|_| CheckpointError::SignatureNotBase64)?;
            if bytes.len() < 5 {
                return Err(CheckpointError::SignatureTooShort);
            }
            let mut hint = [0u8; 4];
            hint.copy_from_slice(&bytes[..4]);
            signatures.push((hint, bytes[4..].to_vec()));
        }
        Ok(Checkpoint {
            note,
            tree_size,
            root_hash,
            signatures,
        })
    }

    /// Every signature line with the log's key hint verifies under its key, and there is one.
    pub fn verify(&self, key: &PublicKey, log_id: &[u8]) -> Result<(), CheckpointError> {
        let hint = log_id.get(..4).unwrap_or_default();
        let mut ours = self
            .signatures
            .iter()
            .filter(|(line_hint, _)| line_hint.as_slice() == hint)
            .peekable();
        if ours.peek().is_none() {
            return Err(CheckpointError::NoSignatureByLog);
        }
        if ours.all(|(_, signature)| key.verify(self.note.as_bytes(), signature)) {
            Ok(())
        } else {
            Err(CheckpointError::BadSignature)
        }
    }
}
