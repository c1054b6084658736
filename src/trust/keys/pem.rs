//! PEM text as signature material carries it (a cosign ≤ v2 certificate or chain annotation, a
//! log entry body's verifier): a bounded reader of `-----BEGIN <label>-----` blocks, each
//! decoded to its DER bytes. Nothing but blocks and whitespace is accepted between them.

use base64::Engine as _;

use crate::support::escape;

/// The most PEM text read at once (a leaf and a few intermediates fit many times over).
pub const MAX_TEXT: usize = 64 * 1024;

/// One decoded block: its label and its DER bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The label of its `BEGIN` line (`CERTIFICATE`, `PUBLIC KEY`).
    pub label: String,
    /// The decoded bytes.
    pub der: Vec<u8>,
}

/// Every block of `text`, in order, at most `max_blocks` of them; the error says what is wrong.
pub fn blocks(text: &str, max_blocks: usize) -> Result<Vec<Block>, String> {
    if text.len() > MAX_TEXT {
        return Err(format!(
            "PEM text of {} bytes, over the bound of {MAX_TEXT}",
            text.len()
        ));
    }
    let mut out = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        let line = line.trim_end_matches('\r').trim();
        match &mut open {
            None => {
                if line.is_empty() {
                    continue;
                }
                let label = line
                    .strip_prefix("-----BEGIN ")
                    .and_then(|rest| rest.strip_suffix("-----"))
                    .ok_or_else(|| {
                        format!(
                            "PEM text holds `{}` outside a block",
                            escape::text(&line.chars().take(40).collect::<String>())
                        )
                    })?;
                if out.len() == max_blocks {
                    return Err(format!("more than {max_blocks} PEM blocks"));
                }
                open = Some((label.to_owned(), String::new()));
            }
            Some((label, body)) => {
                if let Some(rest) = line.strip_prefix("-----END ") {
                    if rest.strip_suffix("-----") != Some(label.as_str()) {
                        return Err(format!(
                            "the PEM block `{}` ends with another label",
                            escape::text(label)
                        ));
                    }
                    let der = base64::engine::general_purpose::STANDARD
                        .decode(body.as_bytes())
                        .map_err(|_| {
                            format!("the PEM block `{}` is not base64", escape::text(label))
                        })?;
                    if der.is_empty() {
                        return Err(format!("the PEM block `{}` is empty", escape::text(label)));
                    }
                    out.push(Block {
                        label: std::mem::take(label),
                        der,
                    });
                    open = None;
                } else {
                    body.push_str(line);
                }
            }
        }
    }
    if let Some((label, _)) = open {
        return Err(format!(
            "the PEM block `{}` has no END line",
            escape::text(&label)
        ));
    }
    Ok(out)
}

/// The DER certificates of `text` (every block labelled `CERTIFICATE`), at least one and at most
/// `max`.
pub fn certificates(text: &str, max: usize) -> Result<Vec<Vec<u8>>, String> {
    let blocks = blocks(text, max)?;
    if blocks.is_empty() {
        return Err("no PEM certificate".to_owned());
    }
    blocks
        .into_iter()
        .map(|block| {
            if block.label == "CERTIFICATE" {
                Ok(block.der)
            } else {
                Err(format!(
                    "a PEM `{}` block where a CERTIFICATE is expected",
                    escape::text(&block.label)
                ))
            }
        })
        .collect()
}

/// The DER of the one block of `text`, labelled `CERTIFICATE` or `PUBLIC KEY` (what a log
/// entry's verifier holds).
pub fn verifier(text: &str) -> Result<Vec<u8>, String> {
    let mut blocks = blocks(text, 1)?;
    match blocks.pop() {
        Some(block) if block.label == "CERTIFICATE" || block.label == "PUBLIC KEY" => Ok(block.der),
        Some(block) => Err(format!(
            "a PEM `{}` block where a certificate or public key is expected",
            escape::text(&block.label)
        )),
        None => Err("no PEM block".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_blocks_in_order_and_refuses_stray_text_and_mismatched_ends() {
        let text = "-----BEGIN CERTIFICATE-----\nAQID\n-----END CERTIFICATE-----\n\n-----BEGIN CERTIFICATE-----\nBAUG\n-----END CERTIFICATE-----\n";
        assert_eq!(
            certificates(text, 2).unwrap(),
            vec![vec![1, 2, 3], vec![4, 5, 6]]
        );
        assert!(certificates(text, 1).unwrap_err().contains("more than 1"));
        assert!(blocks("junk\n", 4).unwrap_err().contains("outside a block"));
        assert!(
            blocks("-----BEGIN A-----\nAQID\n-----END B-----\n", 4)
                .unwrap_err()
                .contains("another label")
        );
        assert!(
            blocks("-----BEGIN A-----\nAQID\n", 4)
                .unwrap_err()
                .contains("no END")
        );
        assert!(
            blocks("-----BEGIN A-----\n!!\n-----END A-----\n", 4)
                .unwrap_err()
                .contains("not base64")
        );
        assert!(certificates("", 4).unwrap_err().contains("no PEM"));
        assert!(
            certificates(
                "-----BEGIN PUBLIC KEY-----\nAQID\n-----END PUBLIC KEY-----\n",
                4
            )
            .unwrap_err()
            .contains("where a CERTIFICATE")
        );
        assert!(
            blocks(&" ".repeat(MAX_TEXT + 1), 4)
                .unwrap_err()
                .contains("over the bound")
        );
        assert_eq!(
            verifier("-----BEGIN PUBLIC KEY-----\nAQID\n-----END PUBLIC KEY-----\n").unwrap(),
            vec![1, 2, 3]
        );
    }
}
