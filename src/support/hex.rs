//! Lowercase hexadecimal, the one spelling of every digest this crate prints or accepts.

/// Encodes bytes as lowercase hex.
pub fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

/// How many digits a shortened commit id or digest keeps (as a generation id does).
pub const SHORT_DIGITS: usize = 12;

/// A commit id or digest as a human reads it: its first [`SHORT_DIGITS`] digits, after its
/// algorithm prefix if it has one (`sha256:4f0c2a9e1b3d`). Reports in JSON keep the whole id;
/// this is for the lines a person reads, where the whole id is noise.
pub fn short(id: &str) -> &str {
    let start = id.find(':').map_or(0, |at| at + 1);
    let end = id[start..]
        .char_indices()
        .nth(SHORT_DIGITS)
        .map_or(id.len(), |(at, _)| start + at);
    &id[..end]
}

/// Decodes exactly 64 lowercase hex digits into 32 bytes.
pub fn decode_lower_32(s: &str) -> Option<[u8; 32]> {
    let s = s.as_bytes();
    if s.len() != 64 {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (i, pair) in s.chunks_exact(2).enumerate() {
        out[i] = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(out)
}

/// The SHA-256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    encode(&sha2::Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::short;

    #[test]
    fn short_keeps_twelve_digits_after_the_algorithm() {
        let commit = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(short(commit), "0123456789ab");
        assert_eq!(
            short(&format!("sha256:{}", "4f".repeat(32))),
            "sha256:4f4f4f4f4f4f"
        );
        assert_eq!(short("abc"), "abc");
        assert_eq!(short("ééééééééééééééé"), "éééééééééééé");
    }
}
