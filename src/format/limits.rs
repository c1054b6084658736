//! The bounds of the bundle format (DESIGN §2). They belong to the format, not to the host: a
//! bundle that fits here fits everywhere, and a bundle over any bound is refused, never truncated.
//!
//! | bound | maximum |
//! | --- | --- |
//! | approved bundles per catalogue | 16, unique names |
//! | YAML frontmatter | 4 KiB |
//! | Markdown body | 64 KiB |
//! | each supporting file | 128 KiB |
//! | regular files, `SKILL.md` included | 64 |
//! | total file bytes | 1 MiB |
//! | inventory entries, root and directories included | 1,024 |
//! | nested directory levels | 64 |
//!
//! The digest, the reader and the validator all take their numbers from here.
//!
//! ## Profiles
//! The table above is the `chamvi` profile, the default contract of `chamvi-skill-bundle-v1`.
//! An operator may approve larger bundles and passive binary files for one source with a
//! [`Limits`] profile: `extended`, or a mapping of the five keys below. A profile only raises
//! bounds, never above the hard ceilings, and changes no other rule; the digest does not depend
//! on it.
//!
//! | key | `chamvi` | `extended` | ceiling |
//! | --- | --- | --- | --- |
//! | `skill_md_bytes` (whole `SKILL.md`) | 69,642 | 256 KiB | 1 MiB |
//! | `file_bytes` (each supporting file) | 128 KiB | 8 MiB | 16 MiB |
//! | `bundle_bytes` (all files) | 1 MiB | 32 MiB | 64 MiB |
//! | `files` (regular files) | 64 | 1,024 | 4,096 |
//! | `binary` (supporting files need not be text) | `false` | `true` | |
//!
//! Derived bounds follow the profile: the frontmatter keeps its 4 KiB; the body may take the rest
//! of `skill_md_bytes` (64 KiB under `chamvi`); inventory entries are 16 per file (1,024 under
//! `chamvi`). `SKILL.md` is text under every profile.

use crate::format::content::policy::ContentPolicy;

/// Approved bundles one agent's catalogue may hold (unique names).
pub const MAX_BUNDLES_PER_CATALOGUE: usize = 16;
/// Bytes of YAML between the two `---` fence lines of `SKILL.md`.
pub const MAX_FRONTMATTER_BYTES: u64 = 4 * 1024;
/// Bytes of Markdown after the closing fence line of `SKILL.md`.
pub const MAX_BODY_BYTES: u64 = 64 * 1024;
/// Bytes of each supporting file (every file but `SKILL.md`).
pub const MAX_SUPPORTING_FILE_BYTES: u64 = 128 * 1024;
/// Regular files in a bundle, `SKILL.md` included.
pub const MAX_FILES: usize = 64;
/// Bytes of all files of a bundle added up.
pub const MAX_TOTAL_BYTES: u64 = 1024 * 1024;
/// Inventory entries: the root, every directory, every file, and anything else found.
pub const MAX_ENTRIES: usize = 1024;
/// Nesting of directories below the bundle root (a directory directly under the root is level 1).
pub const MAX_DEPTH: usize = 64;
/// Characters of the trimmed `description`.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Longest fence line: `---\r\n`.
const MAX_FENCE_LINE_BYTES: u64 = 5;

/// Bytes of a whole `SKILL.md`: two fence lines, the frontmatter and the body at their bounds.
/// Reading stops past this; the frontmatter and body bounds are then checked exactly.
pub const MAX_SKILL_MD_BYTES: u64 =
    2 * MAX_FENCE_LINE_BYTES + MAX_FRONTMATTER_BYTES + MAX_BODY_BYTES;

/// The name of the one required file, at the bundle root.
pub const SKILL_MD: &str = "SKILL.md";

/// Bytes of the fence lines and the frontmatter at their bounds: what `SKILL.md` holds besides
/// its body.
const SKILL_MD_OVERHEAD: u64 = 2 * MAX_FENCE_LINE_BYTES + MAX_FRONTMATTER_BYTES;

/// Inventory entries allowed per regular file (1,024 entries for 64 files under `chamvi`).
const ENTRIES_PER_FILE: usize = MAX_ENTRIES / MAX_FILES;

/// The bounds one source's bundles are checked against: a profile. Made only by
/// [`Limits::named`] or [`Limits::from_keys`], so every value lies between the `chamvi` default
/// and the hard ceiling no profile may pass.
///
/// It also carries the source's content policy (its `content:` key, [`ContentPolicy`]), so the
/// policy reaches every check of the source's bundles with the bounds; the policy is no part of
/// the profile's name, text form or [`Limits::same_bounds`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Limits {
    skill_md_bytes: u64,
    file_bytes: u64,
    bundle_bytes: u64,
    files: usize,
    binary: bool,
    content: ContentPolicy,
}

/// The default profile: the bounds of the table in the module doc, text only.
pub const CHAMVI: Limits = Limits {
    skill_md_bytes: MAX_SKILL_MD_BYTES,
    file_bytes: MAX_SUPPORTING_FILE_BYTES,
    bundle_bytes: MAX_TOTAL_BYTES,
    files: MAX_FILES,
    binary: false,
    content: ContentPolicy::DEFAULT,
};

/// The profile for the large public skills: 256 KiB `SKILL.md`, 8 MiB files, 32 MiB and 1,024
/// files a bundle, binary files allowed.
pub const EXTENDED: Limits = Limits {
    skill_md_bytes: 256 * 1024,
    file_bytes: 8 * 1024 * 1024,
    bundle_bytes: 32 * 1024 * 1024,
    files: 1024,
    binary: true,
    content: ContentPolicy::DEFAULT,
};

/// The hard ceilings: no profile may exceed them.
pub const CEILING: Limits = Limits {
    skill_md_bytes: 1024 * 1024,
    file_bytes: 16 * 1024 * 1024,
    bundle_bytes: 64 * 1024 * 1024,
    files: 4096,
    binary: true,
    content: ContentPolicy::DEFAULT,
};

/// The keys of a profile mapping, in the order they are written back.
pub const KEYS: [&str; 5] = [
    "skill_md_bytes",
    "file_bytes",
    "bundle_bytes",
    "files",
    "binary",
];

/// The named profiles.
pub const PROFILES: [(&str, Limits); 2] = [("chamvi", CHAMVI), ("extended", EXTENDED)];

/// A profile that cannot be made, with the offending key or name.
///
/// Its code is the descriptor's (`invalid_limits`, `limits_over_ceiling`: a profile is read only
/// from a descriptor), so `LimitsError::code` is declared with those codes, in
/// `descriptor::code`, the layer above this one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LimitsError {
    /// No profile has this name.
    #[error("unknown limits profile `{}`: expected `chamvi`, `extended` or a mapping of {}", crate::support::escape::text(.0), KEYS.join(", "))]
    UnknownProfile(String),
    /// The mapping holds a key that is not a bound.
    #[error("unknown limits key `{}`: expected one of {}", crate::support::escape::text(.0), KEYS.join(", "))]
    UnknownKey(String),
    /// The mapping names a key twice.
    #[error("limits key `{0}` is given twice")]
    DuplicateKey(&'static str),
    /// A value is not of the key's kind.
    #[error("limits key `{key}`: `{}` is not {expected}", crate::support::escape::text(.value))]
    BadValue {
        /// The key.
        key: &'static str,
        /// The value as written.
        value: String,
        /// What it should be.
        expected: &'static str,
    },
    /// A value is lower than the `chamvi` default: a profile only raises bounds.
    #[error(
        "limits key `{key}`: {value} is below the default of {default}; a profile only raises bounds"
    )]
    BelowDefault {
        /// The key.
        key: &'static str,
        /// The value given.
        value: u64,
        /// The `chamvi` value.
        default: u64,
    },
    /// A value is over its hard ceiling.
    #[error("limits key `{key}`: {value} is over the ceiling of {ceiling}")]
    OverCeiling {
        /// The key.
        key: &'static str,
        /// The value given.
        value: u64,
        /// The ceiling.
        ceiling: u64,
    },
}

impl LimitsError {
    /// Whether the error is a value over a hard ceiling (a distinct code in `check`).
    pub fn is_over_ceiling(&self) -> bool {
        matches!(self, LimitsError::OverCeiling { .. })
    }
}

impl Default for Limits {
    fn default() -> Self {
        CHAMVI
    }
}

impl Limits {
    /// The named profile `name` (`chamvi` or `extended`).
    pub fn named(name: &str) -> Result<Limits, LimitsError> {
        PROFILES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, l)| *l)
            .ok_or_else(|| LimitsError::UnknownProfile(name.to_owned()))
    }

    /// A profile from `key = value` pairs (values as written: a decimal count, optionally with a
    /// `KiB` or `MiB` suffix for byte keys, or `true`/`false` for `binary`); keys not given keep
    /// their `chamvi` value.
    pub fn from_keys<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Limits, LimitsError> {
        let mut limits = CHAMVI;
        let mut seen = [false; KEYS.len()];
        for (key, value) in pairs {
            let index = KEYS
                .iter()
                .position(|k| *k == key)
                .ok_or_else(|| LimitsError::UnknownKey(key.to_owned()))?;
            let key = KEYS[index];
            if std::mem::replace(&mut seen[index], true) {
                return Err(LimitsError::DuplicateKey(key));
            }
            match key {
                "binary" => {
                    limits.binary = match value {
                        "true" => true,
                        "false" => false,
                        _ => {
                            return Err(LimitsError::BadValue {
                                key,
                                value: value.to_owned(),
                                expected: "`true` or `false`",
                            });
                        }
                    }
                }
                "files" => limits.files = bounded(key, count(key, value, false)?)? as usize,
                _ => {
                    let v = bounded(key, count(key, value, true)?)?;
                    match key {
                        "skill_md_bytes" => limits.skill_md_bytes = v,
                        "file_bytes" => limits.file_bytes = v,
                        _ => limits.bundle_bytes = v,
                    }
                }
            }
        }
        Ok(limits)
    }

    /// A profile as written on a command line: a name, or `key=value` pairs separated by commas.
    pub fn parse(spec: &str) -> Result<Limits, LimitsError> {
        if !spec.contains('=') {
            return Limits::named(spec);
        }
        let mut pairs = Vec::new();
        for pair in spec.split(',') {
            let (key, value) = pair.split_once('=').ok_or_else(|| LimitsError::BadValue {
                key: "limits",
                value: pair.to_owned(),
                expected: "a `key=value` pair",
            })?;
            pairs.push((key.trim(), value.trim()));
        }
        Limits::from_keys(pairs)
    }

    /// The name of the profile when it is a named one (the content policy aside).
    pub fn name(&self) -> Option<&'static str> {
        PROFILES
            .iter()
            .find(|(_, l)| l.same_bounds(self))
            .map(|(n, _)| *n)
    }

    /// Whether the bounds are the default `chamvi` profile's (the content policy aside).
    pub fn is_default(&self) -> bool {
        self.same_bounds(&CHAMVI)
    }

    /// Whether both have the same bounds, whatever their content policies.
    pub fn same_bounds(&self, other: &Limits) -> bool {
        Limits {
            content: other.content,
            ..*self
        } == *other
    }

    /// The same bounds under the content policy `content`.
    pub fn with_content(self, content: ContentPolicy) -> Limits {
        Limits { content, ..self }
    }

    /// The content policy of the source (its `content:` key; the defaults without one).
    pub fn content(&self) -> ContentPolicy {
        self.content
    }

    /// The value of `key` as text (as [`Limits::parse`] reads it back).
    fn value(&self, key: &str) -> String {
        match key {
            "skill_md_bytes" => self.skill_md_bytes.to_string(),
            "file_bytes" => self.file_bytes.to_string(),
            "bundle_bytes" => self.bundle_bytes.to_string(),
            "files" => self.files.to_string(),
            _ => self.binary.to_string(),
        }
    }

    /// Bytes of a whole `SKILL.md`.
    pub fn skill_md_bytes(&self) -> u64 {
        self.skill_md_bytes
    }

    /// Bytes of the Markdown body: what `SKILL.md` may hold besides fences and frontmatter.
    pub fn body_bytes(&self) -> u64 {
        self.skill_md_bytes - SKILL_MD_OVERHEAD
    }

    /// Bytes of each supporting file.
    pub fn file_bytes(&self) -> u64 {
        self.file_bytes
    }

    /// Bytes of all files added up.
    pub const fn bundle_bytes(&self) -> u64 {
        self.bundle_bytes
    }

    /// Regular files, `SKILL.md` included.
    pub fn files(&self) -> usize {
        self.files
    }

    /// Inventory entries: the root, every directory, every file, and anything else found.
    pub const fn entries(&self) -> usize {
        self.files * ENTRIES_PER_FILE
    }

    /// Whether supporting files may be binary (not UTF-8 text, or holding a NUL byte).
    pub fn binary(&self) -> bool {
        self.binary
    }

    /// The most bytes the file at `path` may hold.
    pub fn max_file_bytes(&self, path: &str) -> u64 {
        if path == SKILL_MD {
            self.skill_md_bytes
        } else {
            self.file_bytes
        }
    }
}

/// `chamvi`, `extended`, or every key as `key=value,…` (which [`Limits::parse`] reads back); the
/// content policy is not part of it.
impl std::fmt::Display for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(name) = self.name() {
            return f.write_str(name);
        }
        for (i, key) in KEYS.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(f, "{sep}{key}={}", self.value(key))?;
        }
        Ok(())
    }
}

impl serde::Serialize for Limits {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Limits {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Limits::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A decimal count; byte keys also take a `KiB` or `MiB` suffix.
fn count(key: &'static str, value: &str, bytes: bool) -> Result<u64, LimitsError> {
    let bad = || LimitsError::BadValue {
        key,
        value: value.to_owned(),
        expected: if bytes {
            "a byte count (digits, optionally followed by `KiB` or `MiB`)"
        } else {
            "a count (digits)"
        },
    };
    let (digits, unit) = match value.strip_suffix("KiB").or(value.strip_suffix("MiB")) {
        Some(digits) if bytes => (
            digits.trim_end(),
            if value.ends_with("KiB") {
                1024
            } else {
                1024 * 1024
            },
        ),
        _ => (value, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .ok_or_else(bad)
}

/// `value` if it lies between the `chamvi` value of `key` and its ceiling.
fn bounded(key: &'static str, value: u64) -> Result<u64, LimitsError> {
    let default = CHAMVI.value(key).parse::<u64>().unwrap_or(0);
    let ceiling = CEILING.value(key).parse::<u64>().unwrap_or(0);
    if value > ceiling {
        return Err(LimitsError::OverCeiling {
            key,
            value,
            ceiling,
        });
    }
    if value < default {
        return Err(LimitsError::BelowDefault {
            key,
            value,
            default,
        });
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chamvi_is_the_table_of_the_format() {
        assert_eq!(CHAMVI.body_bytes(), MAX_BODY_BYTES);
        assert_eq!(CHAMVI.entries(), MAX_ENTRIES);
        assert_eq!(CHAMVI.max_file_bytes(SKILL_MD), MAX_SKILL_MD_BYTES);
        assert_eq!(CHAMVI.max_file_bytes("a.md"), MAX_SUPPORTING_FILE_BYTES);
        assert!(!CHAMVI.binary());
        assert_eq!(Limits::default(), CHAMVI);
        assert!(CHAMVI.is_default() && !EXTENDED.is_default());
    }

    #[test]
    fn names_and_mappings_round_trip_through_text() {
        assert_eq!(Limits::parse("chamvi"), Ok(CHAMVI));
        assert_eq!(Limits::parse("extended"), Ok(EXTENDED));
        assert_eq!(EXTENDED.to_string(), "extended");
        let custom = Limits::parse("file_bytes=1MiB, binary=true").unwrap();
        assert_eq!(custom.file_bytes(), 1024 * 1024);
        assert!(custom.binary());
        assert_eq!(custom.files(), MAX_FILES);
        let text = custom.to_string();
        assert_eq!(
            text,
            "skill_md_bytes=69642,file_bytes=1048576,bundle_bytes=1048576,files=64,binary=true"
        );
        assert_eq!(Limits::parse(&text), Ok(custom));
        // Every key at the extended values is the extended profile, named.
        let spelled =
            "skill_md_bytes=256KiB,file_bytes=8MiB,bundle_bytes=32MiB,files=1024,binary=true";
        assert_eq!(Limits::parse(spelled).unwrap().to_string(), "extended");
        assert_eq!(Limits::from_keys([]), Ok(CHAMVI));
    }

    #[test]
    fn refuses_unknown_names_keys_bad_values_and_repeats() {
        assert!(matches!(
            Limits::parse("huge"),
            Err(LimitsError::UnknownProfile(_))
        ));
        assert!(matches!(
            Limits::parse("size=1"),
            Err(LimitsError::UnknownKey(_))
        ));
        assert!(matches!(
            Limits::parse("files=65,files=66"),
            Err(LimitsError::DuplicateKey("files"))
        ));
        for bad in [
            "files=1KiB",
            "files=-1",
            "files=",
            "file_bytes=1GiB",
            "file_bytes=0x10",
            "binary=yes",
            "file_bytes=99999999999999999999",
            "files=65,oops",
            "files=+65",
            "file_bytes= 1MiB x",
        ] {
            assert!(
                matches!(Limits::parse(bad), Err(LimitsError::BadValue { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn values_lie_between_the_default_and_the_ceiling() {
        for (key, ceiling) in [
            ("skill_md_bytes", 1024 * 1024u64),
            ("file_bytes", 16 * 1024 * 1024),
            ("bundle_bytes", 64 * 1024 * 1024),
            ("files", 4096),
        ] {
            let at = Limits::from_keys([(key, ceiling.to_string().as_str())]).unwrap();
            assert_eq!(at.value(key), ceiling.to_string());
            let over = (ceiling + 1).to_string();
            let err = Limits::from_keys([(key, over.as_str())]).unwrap_err();
            assert!(err.is_over_ceiling(), "{key}: {err}");
            let default = CHAMVI.value(key).parse::<u64>().unwrap();
            let below = (default - 1).to_string();
            assert!(matches!(
                Limits::from_keys([(key, below.as_str())]),
                Err(LimitsError::BelowDefault { .. })
            ));
        }
        for named in [CHAMVI, EXTENDED] {
            for key in KEYS {
                let v = named.value(key);
                assert!(Limits::from_keys([(key, v.as_str())]).is_ok());
            }
        }
    }
}
