//! The bundle digest `chamvi-skill-bundle-v1`: one SHA-256 that names the exact bytes of every
//! file of a bundle and their paths, and nothing else.
//!
//! # Grammar
//!
//! The digest is SHA-256 over this preimage:
//!
//! ```text
//! preimage   = domain *file
//! domain     = "chamvi-skill-bundle-v1" LF          ; the 23 ASCII bytes, LF = 0x0A
//! file       = path-len ":" path content-len ":" content
//! path-len   = decimal                              ; length of `path` in bytes
//! path       = <the relative POSIX path, UTF-8>     ; e.g. "references/a.md"
//! content-len= decimal                              ; length of `content` in bytes
//! content    = <the exact file bytes>
//! decimal    = "0" / (%x31-39 *DIGIT)               ; base 10, no sign, no leading zeros
//! ```
//!
//! Files appear in ascending order of their whole path compared by Unicode code point, which is
//! the same as comparing the UTF-8 bytes. This is *not* the order of a per-directory walk
//! (`references/a-b/x.md` sorts before `references/a/x.md`, since `-` is 0x2D and `/` is 0x2F) and
//! *not* JavaScript's UTF-16 order (U+FF5E sorts before U+1F600). Only regular files take part:
//! no directories, no modes, no timestamps, no newline normalisation. The length prefixes make
//! the framing unambiguous: `{"ab": "c"}` and `{"a": "bc"}` have different digests.
//!
//! The digest is written as 64 lowercase hexadecimal digits. Test vectors:
//! `tests/data/digest-vectors.json`.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest as _, Sha256};

use crate::format::file_set::FileSet;

/// The domain line that starts every preimage.
pub const DOMAIN: &[u8] = b"chamvi-skill-bundle-v1\n";

/// A bundle digest: 32 bytes, shown as 64 lowercase hex digits.
///
/// ```
/// use skillfold::BundleDigest;
/// let pinned: BundleDigest = "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e".parse().unwrap();
/// assert_eq!(pinned.to_string().len(), 64);
/// assert!("not-a-digest".parse::<BundleDigest>().is_err());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BundleDigest([u8; 32]);

impl BundleDigest {
    /// Computes the digest of a file set (which is always in code-point order).
    pub fn of(files: &FileSet) -> BundleDigest {
        let mut framer = Framer::new();
        for (path, content) in files.iter() {
            framer.file(path.as_str(), content);
        }
        framer.finish()
    }

    /// The raw 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

/// Writes the preimage into SHA-256 one file at a time. Callers must give files in ascending
/// code-point order of their paths; [`BundleDigest::of`] does so by construction.
#[derive(Clone)]
pub struct Framer {
    hasher: Sha256,
}

impl Default for Framer {
    fn default() -> Self {
        Self::new()
    }
}

impl Framer {
    /// Starts a preimage with the domain line.
    pub fn new() -> Self {
        let mut hasher = Sha256::new();
        hasher.update(DOMAIN);
        Framer { hasher }
    }

    /// Appends one framed file.
    pub fn file(&mut self, path: &str, content: &[u8]) {
        self.hasher.update(path.len().to_string().as_bytes());
        self.hasher.update(b":");
        self.hasher.update(path.as_bytes());
        self.hasher.update(content.len().to_string().as_bytes());
        self.hasher.update(b":");
        self.hasher.update(content);
    }

    /// The digest of everything appended.
    pub fn finish(self) -> BundleDigest {
        BundleDigest(self.hasher.finalize().into())
    }
}

impl fmt::Display for BundleDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::support::hex::encode(&self.0))
    }
}

impl fmt::Debug for BundleDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BundleDigest({self})")
    }
}

/// Why a digest string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{}` is not a bundle digest: expected 64 lowercase hexadecimal digits", crate::support::escape::text(.value))]
pub struct DigestParseError {
    /// The refused text.
    pub value: String,
}

impl DigestParseError {
    /// Stable error code.
    pub fn code(&self) -> crate::format::code::PinCode {
        crate::format::code::PinCode::InvalidDigest
    }
}

impl FromStr for BundleDigest {
    type Err = DigestParseError;

    /// Parses exactly 64 lowercase hex digits; uppercase, prefixes and whitespace are refused, so
    /// a pin has one spelling.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        crate::support::hex::decode_lower_32(s)
            .map(BundleDigest)
            .ok_or_else(|| DigestParseError {
                value: s.to_owned(),
            })
    }
}

impl serde::Serialize for BundleDigest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for BundleDigest {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

crate::support::error_code::coded_by_code!(DigestParseError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_preimage_is_domain_only() {
        let d = Framer::new().finish();
        assert_eq!(
            d.to_string(),
            "48faea5e726361bc139dea15c3b3bf69df48b4c944c4f0f6cc12ae7572ea189d"
        );
    }

    #[test]
    fn parse_is_strict() {
        let ok = "48faea5e726361bc139dea15c3b3bf69df48b4c944c4f0f6cc12ae7572ea189d";
        assert_eq!(ok.parse::<BundleDigest>().unwrap().to_string(), ok);
        for bad in [
            "",
            &ok[..63],
            &format!("{ok}0"),
            &ok.to_uppercase(),
            &format!(" {}", &ok[1..]),
            &ok.replace('4', "g"),
        ] {
            assert!(bad.parse::<BundleDigest>().is_err(), "{bad:?}");
        }
    }
}

#[cfg(test)]
#[path = "digest_vectors_tests.rs"]
mod vector_tests;
