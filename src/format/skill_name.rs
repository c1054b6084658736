//! Skill names as the bundle format defines them: `^[a-z][a-z0-9-]{0,63}$`.
//!
//! A name is an identifier: it names the bundle's directory in the corpus, the `load_skill` enum
//! value, and the pin. ASCII only, so it means the same thing on every file system and in every
//! tool. (The skills-ref dialect is looser — Unicode letters, NFKC — and lives with the spec
//! tooling; this type is the bundle format's rule.)

use std::fmt;
use std::str::FromStr;

use crate::format::problem::ProblemCode;

/// The longest name, in bytes (and characters: names are ASCII).
pub const MAX_NAME_LEN: usize = 64;

/// A valid skill name.
///
/// ```
/// let name: skillfold::SkillName = "pdf-tools".parse().unwrap();
/// assert_eq!(name.as_str(), "pdf-tools");
/// assert!("PDF Tools".parse::<skillfold::SkillName>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SkillName(String);

/// Why a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{}` is not a valid skill name: {reason}", crate::support::escape::text(.value))]
pub struct SkillNameError {
    /// The refused name, as given (escaped when displayed).
    pub value: String,
    /// Which part of `^[a-z][a-z0-9-]{{0,63}}$` it breaks.
    pub reason: &'static str,
}

impl SkillNameError {
    /// Stable error code: the bundle rule `name_invalid` (a descriptor that names an invalid
    /// skill reports its own `invalid_name`, at the entry's location).
    pub fn code(&self) -> ProblemCode {
        ProblemCode::NameInvalid
    }
}

crate::support::error_code::coded_by_code!(SkillNameError);

impl SkillName {
    /// Checks `value` against `^[a-z][a-z0-9-]{0,63}$`.
    pub fn parse(value: &str) -> Result<SkillName, SkillNameError> {
        let refuse = |reason| {
            Err(SkillNameError {
                value: value.to_owned(),
                reason,
            })
        };
        let Some(first) = value.chars().next() else {
            return refuse("it is empty");
        };
        if !first.is_ascii_lowercase() {
            return refuse("it must start with a lowercase ASCII letter `a-z`");
        }
        if value.len() > MAX_NAME_LEN {
            return refuse("it is longer than 64 characters");
        }
        if !value
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return refuse("only `a-z`, `0-9` and `-` are allowed");
        }
        Ok(SkillName(value.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for SkillName {
    type Err = SkillNameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SkillName::parse(s)
    }
}

impl fmt::Display for SkillName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for SkillName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern() {
        let max = format!("a{}", "b".repeat(63));
        for ok in ["a", "pdf", "a-b", "x9", "a--b", "a-", &max] {
            assert!(SkillName::parse(ok).is_ok(), "{ok}");
        }
        let over = format!("a{}", "b".repeat(64));
        for bad in [
            "", "9a", "-a", "A", "aB", "a_b", "a.b", "café", "a b", &over,
        ] {
            assert!(SkillName::parse(bad).is_err(), "{bad}");
        }
    }
}
