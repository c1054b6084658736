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
    pub fn parse(text: &'a str) -> Result<Checkpoint<'a>, String> {
        let split = match text
            .match_indices("\n\n")
            .map(|(at, _)| at)
            .collect::<Vec<_>>()[..]
        {
            [at] => at,
            _ => {
                return Err(
                    "the checkpoint does not have exactly one blank line before its signatures"
                        .to_owned(),
                );
            }
        };
        let note = &text[..=split];
        let signature_block = &text[split + 2..];
        if signature_block.is_empty() || !signature_block.ends_with('\n') {
            return Err("the checkpoint's signature lines are missing or unterminated".to_owned());
        }
        let mut lines = note.strip_suffix('\n').unwrap_or(note).split('\n');
        let origin = lines.next().unwrap_or_default();
        if origin.is_empty() {
            return Err("the checkpoint has no origin line".to_owned());
        }
        let size_line = lines.next().unwrap_or_default();
        if size_line.is_empty() || !size_line.bytes().all(|b| b.is_ascii_digit()) {
            return Err("the checkpoint's second line is not a tree size".to_owned());
        }
        let tree_size = size_line
            .parse::<u64>()
            .map_err(|_| "the checkpoint's tree size is out of range".to_owned())?;
        let root_hash = base64::engine::general_purpose::STANDARD
            .decode(lines.next().unwrap_or_default())
            .map_err(|_| "the checkpoint's third line is not a base64 root hash".to_owned())?;
        let mut signatures = Vec::new();
        for line in signature_block
            .strip_suffix('\n')
            .unwrap_or(signature_block)
            .split('\n')
        {
            if signatures.len() == MAX_CHECKPOINT_SIGNATURES {
                return Err(format!(
                    "the checkpoint has more than {MAX_CHECKPOINT_SIGNATURES} signature lines"
                ));
            }
            let rest = line.strip_prefix("\u{2014} ").ok_or_else(|| {
                format!(
                    "the checkpoint line `{}` is not a signature line",
                    escape::text(line)
                )
            })?;
            let (name, encoded) = match rest.split(' ').collect::<Vec<_>>()[..] {
                [name, encoded] if !name.is_empty() => (name, encoded),
                _ => {
                    return Err(
                        "a checkpoint signature line is not `— <name> <signature>`".to_owned()
                    );
                }
            };
            let _ = name;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|_| "a checkpoint signature is not base64".to_owned())?;
            if bytes.len() < 5 {
                return Err("a checkpoint signature is too short".to_owned());
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
    pub fn verify(&self, key: &PublicKey, log_id: &[u8]) -> Result<(), String> {
        let hint = log_id.get(..4).unwrap_or_default();
        let mut ours = self
            .signatures
            .iter()
            .filter(|(line_hint, _)| line_hint.as_slice() == hint)
            .peekable();
        if ours.peek().is_none() {
            return Err("the checkpoint has no signature by the entry's log".to_owned());
        }
        if ours.all(|(_, signature)| key.verify(self.note.as_bytes(), signature)) {
            Ok(())
        } else {
            Err("the checkpoint's signature does not verify under the log's key".to_owned())
        }
    }
}
