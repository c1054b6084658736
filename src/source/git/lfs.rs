//! Git LFS pointer files: recognising every blob that git-lfs would replace on checkout.
//!
//! A pointer's real content is stored outside the pinned commit, so a bundle that holds one is
//! refused. The test follows how git-lfs decides (its `DecodeFrom`, used by the smudge filter):
//! it reads the first 1,024 bytes of the blob, **whatever the blob's size**, trims surrounding
//! white space, then reads `key value` lines, skipping empty ones and dropping a `\r` before each
//! `\n`: `version` (one of the three spellings in [`VERSIONS`]), `oid sha256:<64 hex>`, `size
//! <integer>`, with `ext-<digit>-<name>` extension lines allowed before `size`.
//!
//! Where git-lfs versions differ or a shorter read would change the answer, this test refuses
//! more, never less: the oid may be 64 ASCII letters or digits (older releases), and whatever
//! follows the first digit of `size` is ignored (a read that stopped there would be a pointer).
//! No real text file starts with those three lines.

use gix::bstr::ByteSlice;

/// The `version` values git-lfs accepts, oldest first: the alpha, the pre-release, the launch.
pub const VERSIONS: [&[u8]; 3] = [
    b"http://git-media.io/v/2",
    b"https://hawser.github.com/spec/v1",
    b"https://git-lfs.github.com/spec/v1",
];

/// git-lfs decides from this many leading bytes of a blob.
pub const HEAD_BYTES: usize = 1024;

/// The keys a pointer holds, in their required order.
const KEYS: [&[u8]; 3] = [b"version", b"oid", b"size"];

/// Whether git-lfs would take `blob` for a pointer file (see the module doc).
pub fn is_pointer(blob: &[u8]) -> bool {
    let head = &blob[..blob.len().min(HEAD_BYTES)];
    let mut next = 0;
    for line in head.trim_start().split_str("\n") {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once_str(" ") else {
            return false;
        };
        if key != KEYS[next] {
            if is_extension_key(key) {
                continue;
            }
            return false;
        }
        let valid = match next {
            0 => VERSIONS.contains(&value),
            1 => is_sha256_oid(value),
            _ => return is_size(value),
        };
        if !valid {
            return false;
        }
        next += 1;
    }
    false
}

/// `ext-<digit>-<word character>…`, as git-lfs's `\Aext-\d{1}-\w+` (a prefix match).
fn is_extension_key(key: &[u8]) -> bool {
    match key {
        [b'e', b'x', b't', b'-', digit, b'-', first, ..] => {
            digit.is_ascii_digit() && (first.is_ascii_alphanumeric() || *first == b'_')
        }
        _ => false,
    }
}

/// `sha256:` then 64 ASCII letters or digits (current git-lfs wants lowercase hex only).
fn is_sha256_oid(value: &[u8]) -> bool {
    value
        .strip_prefix(b"sha256:")
        .and_then(|oid| oid.get(..64))
        .is_some_and(|oid| oid.iter().all(u8::is_ascii_alphanumeric))
}

/// An optional sign then a digit: the start of what Go's `ParseInt` reads.
fn is_size(value: &[u8]) -> bool {
    let digits = value
        .strip_prefix(b"+")
        .or_else(|| value.strip_prefix(b"-"))
        .unwrap_or(value);
    digits.first().is_some_and(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OID: &str = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";

    fn pointer(version: &str) -> String {
        format!("version {version}\noid sha256:{OID}\nsize 12345\n")
    }

    #[test]
    fn every_spelling_git_lfs_accepts_is_a_pointer() {
        for version in VERSIONS {
            let text = pointer(std::str::from_utf8(version).unwrap());
            assert!(is_pointer(text.as_bytes()), "{text}");
        }
    }

    #[test]
    fn variations_git_lfs_still_decodes_are_pointers() {
        let canonical = pointer("https://git-lfs.github.com/spec/v1");
        let variations = [
            format!("\n \t{canonical}"),
            canonical.replace('\n', "\r\n"),
            canonical.replace('\n', "\n\n"),
            canonical.trim_end().to_owned(),
            format!("ext-0-foo sha256:{OID}\n{canonical}"),
            canonical.replace("oid", &format!("ext-1-bar_baz sha256:{OID}\noid")),
            canonical.replace("12345", "+0"),
            // Bigger than the cutoff: git-lfs still decodes the first 1,024 bytes.
            format!("{canonical}{}", " ".repeat(2000)),
            format!("{canonical}{}trailing text", " ".repeat(2000)),
        ];
        for text in variations {
            assert!(is_pointer(text.as_bytes()), "{text:?}");
        }
    }

    #[test]
    fn text_that_is_not_a_pointer_is_not_refused() {
        let canonical = pointer("https://git-lfs.github.com/spec/v1");
        let others = [
            String::new(),
            "# A skill about Git LFS\n\nversion https://git-lfs.github.com/spec/v1\n".to_owned(),
            canonical.replace("v1", "v2"),
            canonical.replace("https://", "http://"),
            canonical.replace("version ", "version  "),
            canonical.replace("sha256", "sha1"),
            canonical.replace(&OID[..8], "4d7a-146"),
            canonical.replace("size 12345", "size x"),
            canonical.replace("size 12345\n", ""),
            canonical.replace("oid", "ext-x-foo sha256:0\noid"),
            canonical.replace("oid", " oid"),
            format!("{}{canonical}", " ".repeat(HEAD_BYTES)),
            format!("{}{canonical}", "x\n"),
        ];
        for text in others {
            assert!(!is_pointer(text.as_bytes()), "{text:?}");
        }
    }
}
