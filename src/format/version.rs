//! Version labels of pins (DESIGN §2): an opaque release label that names exactly one reviewed
//! release, never a moving target.
//!
//! A label is non-blank, at most 128 characters, holds no whitespace or control characters, no
//! wildcard or range syntax (`*` `^` `~` `>` `<` `=` `|`, or a `.`-separated segment that is `x` or
//! `X`, as in `1.x`), and is not a rolling label (`latest`, `main`, `master`, `head`, in any case).

use std::fmt;
use std::str::FromStr;

use crate::format::code::PinCode;

/// The longest label, in characters.
pub const MAX_VERSION_CHARS: usize = 128;

/// A checked version label.
///
/// ```
/// let version: skillfold::VersionLabel = "1.2.0".parse().unwrap();
/// assert_eq!(version.to_string(), "1.2.0");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VersionLabel(String);

/// Which version rule was broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum VersionRule {
    /// Empty or only whitespace.
    Blank,
    /// Longer than 128 characters.
    TooLong,
    /// Holds whitespace.
    Whitespace,
    /// Holds a control character.
    ControlChar,
    /// Wildcard or range syntax.
    Range,
    /// `latest`, `main`, `master`, `head`.
    Rolling,
}

impl crate::support::error_code::Coded for VersionRule {
    fn error_code(&self) -> crate::support::error_code::ErrorCode {
        self.code().into()
    }
}

impl VersionRule {
    /// Stable error code.
    pub fn code(self) -> PinCode {
        match self {
            VersionRule::Blank => PinCode::VersionBlank,
            VersionRule::TooLong => PinCode::VersionTooLong,
            VersionRule::Whitespace => PinCode::VersionWhitespace,
            VersionRule::ControlChar => PinCode::VersionControlChar,
            VersionRule::Range => PinCode::VersionRange,
            VersionRule::Rolling => PinCode::VersionRolling,
        }
    }
}

/// Why a label was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("version `{}` is refused: {reason} [{}]", crate::support::escape::text(.value), .rule.code())]
pub struct VersionError {
    /// The refused label, as given (escaped when displayed).
    pub value: String,
    /// The rule.
    pub rule: VersionRule,
    /// What is wrong, lowercase.
    pub reason: &'static str,
}

/// Its code is the rule's (shown in brackets at the end of its message).
impl crate::support::error_code::Coded for VersionError {
    fn error_code(&self) -> crate::support::error_code::ErrorCode {
        self.rule.code().into()
    }
}

impl VersionLabel {
    /// Checks `value` against every rule.
    pub fn parse(value: &str) -> Result<VersionLabel, VersionError> {
        let refuse = |rule, reason| {
            Err(VersionError {
                value: value.to_owned(),
                rule,
                reason,
            })
        };
        if value.trim().is_empty() {
            return refuse(VersionRule::Blank, "a version label cannot be blank");
        }
        if value.chars().count() > MAX_VERSION_CHARS {
            return refuse(
                VersionRule::TooLong,
                "a version label has at most 128 characters",
            );
        }
        if value.chars().any(char::is_control) {
            return refuse(
                VersionRule::ControlChar,
                "control characters are not allowed",
            );
        }
        if value.chars().any(char::is_whitespace) {
            return refuse(VersionRule::Whitespace, "whitespace is not allowed");
        }
        let range_char = value.contains(['*', '^', '~', '>', '<', '=', '|']);
        let x_segment = value.split('.').any(|s| s == "x" || s == "X");
        if range_char || x_segment {
            return refuse(
                VersionRule::Range,
                "wildcards and ranges name many releases; pin exactly one",
            );
        }
        let lower = value.to_ascii_lowercase();
        if matches!(lower.as_str(), "latest" | "main" | "master" | "head") {
            return refuse(
                VersionRule::Rolling,
                "a rolling label moves; pin a release label",
            );
        }
        Ok(VersionLabel(value.to_owned()))
    }

    /// The label.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for VersionLabel {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        VersionLabel::parse(s)
    }
}

impl fmt::Display for VersionLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_release_labels() {
        let max = "1".repeat(128);
        for ok in [
            "1.0.0",
            "v2",
            "2024-06-01",
            "1.0.0-rc.1+build.5",
            "release-7",
            "héad",
            "x1",
            &max,
        ] {
            assert!(VersionLabel::parse(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn refuses_each_rule() {
        use VersionRule::*;
        let over = "1".repeat(129);
        let cases = [
            ("", Blank),
            ("   ", Blank),
            (over.as_str(), TooLong),
            ("1.0 beta", Whitespace),
            ("1.0\u{a0}", Whitespace),
            ("1.0\u{7}", ControlChar),
            ("1.0\t", ControlChar),
            ("*", Range),
            ("^1.2", Range),
            ("~1.2", Range),
            (">=1", Range),
            ("<2", Range),
            ("=1.0", Range),
            ("1|2", Range),
            ("1.x", Range),
            ("1.2.X", Range),
            ("x", Range),
            ("latest", Rolling),
            ("MAIN", Rolling),
            ("Master", Rolling),
            ("HEAD", Rolling),
        ];
        for (value, rule) in cases {
            assert_eq!(
                VersionLabel::parse(value).unwrap_err().rule,
                rule,
                "{value:?}"
            );
        }
    }
}
