//! A pin: the operator's reviewed identity of one bundle, `{name, version, hash}`.
//!
//! `hash` is the bundle digest ([`crate::format::digest`]); `version` an opaque release label
//! ([`crate::format::version`]); `name` the frontmatter name ([`crate::format::skill_name`]). A bundle verifies
//! against a pin when its name and digest are equal to the pin's.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::format::digest::BundleDigest;
use crate::format::skill_name::SkillName;
use crate::format::version::VersionLabel;

/// A reviewed pin, every part checked.
///
/// ```
/// # let (skills, ..) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
/// let built = skillfold::Runtime::builder()
///     .local("commit-message", "1.0.0", skills.join("commit-message"), "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e")
///     .build()
///     .unwrap();
/// let pin: &skillfold::Pin = built.runtime.snapshots().next().unwrap().pin();
/// assert_eq!((pin.name.as_str(), pin.version.to_string()), ("commit-message", "1.0.0".to_owned()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pin {
    /// The skill name.
    pub name: SkillName,
    /// The release label the reviewer gave.
    pub version: VersionLabel,
    /// The bundle digest.
    pub hash: BundleDigest,
}

impl fmt::Display for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A label may hold a backslash or a reordering character: shown escaped.
        write!(
            f,
            "{}@{} ({})",
            self.name,
            crate::support::escape::text(self.version.as_str()),
            self.hash
        )
    }
}

impl Serialize for Pin {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RawPin {
            name: self.name.to_string(),
            version: self.version.as_str().to_owned(),
            hash: self.hash.to_string(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Pin {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let raw = RawPin::deserialize(deserializer)?;
        Ok(Pin {
            name: SkillName::parse(&raw.name).map_err(D::Error::custom)?,
            version: VersionLabel::parse(&raw.version).map_err(D::Error::custom)?,
            hash: raw.hash.parse().map_err(D::Error::custom)?,
        })
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPin {
    name: String,
    version: String,
    hash: String,
}

/// A full Git commit id: 40 lowercase hex digits (SHA-1 repositories) or 64 (SHA-256).
/// Branches, tags and abbreviated ids are not commit ids: they move or are ambiguous.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CommitId(String);

/// Why a revision is not a full commit id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("revision `{}` is not a full commit id: {reason}", crate::support::escape::text(.value))]
pub struct CommitIdError {
    /// The refused revision, as given (escaped when displayed).
    pub value: String,
    /// Why.
    pub reason: &'static str,
}

impl CommitId {
    /// Checks that `value` is 40 or 64 lowercase hex digits.
    pub fn parse(value: &str) -> Result<CommitId, CommitIdError> {
        let refuse = |reason| {
            Err(CommitIdError {
                value: value.to_owned(),
                reason,
            })
        };
        let hex = value.bytes().all(|b| b.is_ascii_hexdigit());
        if hex && (value.len() == 40 || value.len() == 64) {
            if value.bytes().any(|b| b.is_ascii_uppercase()) {
                return refuse("write it in lowercase");
            }
            return Ok(CommitId(value.to_owned()));
        }
        if hex && value.len() < 40 {
            return refuse("an abbreviated id is ambiguous; write all 40 (or 64) hex digits");
        }
        refuse("branches and tags move; pin the full 40-hex (or 64-hex) commit id")
    }

    /// The id as hex.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_ids_are_full_and_lowercase() {
        let sha1 = "0123456789abcdef0123456789abcdef01234567";
        let sha256 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        assert!(CommitId::parse(sha1).is_ok());
        assert!(CommitId::parse(sha256).is_ok());
        for bad in [
            "main",
            "v1.0.0",
            "0123456",
            &sha1.to_uppercase(),
            &sha1[..39],
            &format!("{sha1}0"),
            "HEAD",
            "",
        ] {
            assert!(CommitId::parse(bad).is_err(), "{bad}");
        }
    }
}
