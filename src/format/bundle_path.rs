//! The path grammar of bundle files: relative POSIX paths that cannot leave the bundle and that
//! every file system can hold.
//!
//! A bundle path is one or more segments joined by `/`. Each segment:
//!
//! - is not empty, `.` or `..`, so the path stays inside the bundle ([`PathEscapes`]);
//! - does not start with `.`: hidden files and directories are refused ([`HiddenPath`]);
//! - holds no backslash, which some systems read as a separator ([`BackslashInPath`]);
//! - holds no control character (Unicode `Cc`: C0, DEL, C1) ([`ControlCharInPath`]).
//!
//! Paths are valid UTF-8 by construction (a `String`); names that are not UTF-8 on disk are
//! refused by the reader with [`PathNotUtf8`]. Paths compare by Unicode code point, which is
//! UTF-8 byte order and the order of the digest.
//!
//! [`PathEscapes`]: ProblemCode::PathEscapes
//! [`HiddenPath`]: ProblemCode::HiddenPath
//! [`BackslashInPath`]: ProblemCode::BackslashInPath
//! [`ControlCharInPath`]: ProblemCode::ControlCharInPath
//! [`PathNotUtf8`]: ProblemCode::PathNotUtf8

use std::fmt;

use crate::format::problem::ProblemCode;

/// A checked, bundle-relative POSIX path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BundlePath(String);

/// Why a path or a segment was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRefusal {
    /// The rule that refused it.
    pub code: ProblemCode,
    /// What is wrong, lowercase.
    pub reason: &'static str,
}

impl fmt::Display for PathRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason)
    }
}

/// Its code is the rule's ([`PathRefusal::code`]).
impl crate::support::error_code::Coded for PathRefusal {
    fn error_code(&self) -> crate::support::error_code::ErrorCode {
        self.code.into()
    }
}

/// Checks one path segment (a file or directory name).
pub fn check_segment(segment: &str) -> Result<(), PathRefusal> {
    check_name(segment, true)
}

/// [`check_segment`] without the hidden-name rule: a folder on the path to the bundles (see
/// [`super::root_path`]), which is the operator's choice and no part of any bundle.
pub(crate) fn check_folder_segment(segment: &str) -> Result<(), PathRefusal> {
    check_name(segment, false)
}

/// Every rule of a segment; the hidden-name rule only when `refuse_hidden`.
fn check_name(segment: &str, refuse_hidden: bool) -> Result<(), PathRefusal> {
    let refuse = |code, reason| Err(PathRefusal { code, reason });
    if segment.is_empty() || segment == "." || segment == ".." {
        return refuse(
            ProblemCode::PathEscapes,
            "empty, `.` and `..` segments would leave the bundle",
        );
    }
    if segment.contains('/') {
        return refuse(ProblemCode::PathEscapes, "a name cannot contain `/`");
    }
    if refuse_hidden && segment.starts_with('.') {
        return refuse(
            ProblemCode::HiddenPath,
            "hidden files and directories (a name starting with `.`) are not allowed",
        );
    }
    if segment.contains('\\') {
        return refuse(
            ProblemCode::BackslashInPath,
            "backslashes are not allowed in paths",
        );
    }
    if segment.chars().any(char::is_control) {
        return refuse(
            ProblemCode::ControlCharInPath,
            "control characters are not allowed in paths",
        );
    }
    Ok(())
}

impl BundlePath {
    /// Checks a whole relative path such as `references/guide.md`.
    pub fn parse(path: &str) -> Result<BundlePath, PathRefusal> {
        if path.starts_with('/') {
            return Err(PathRefusal {
                code: ProblemCode::PathEscapes,
                reason: "absolute paths would leave the bundle",
            });
        }
        for segment in path.split('/') {
            check_segment(segment)?;
        }
        Ok(BundlePath(path.to_owned()))
    }

    /// The path of `name` inside this directory path; `name` is checked as a segment.
    pub fn join(&self, name: &str) -> Result<BundlePath, PathRefusal> {
        check_segment(name)?;
        Ok(BundlePath(format!("{}/{name}", self.0)))
    }

    /// `other` below this directory path (both already checked).
    pub fn join_path(&self, other: &BundlePath) -> BundlePath {
        BundlePath(format!("{}/{}", self.0, other.0))
    }

    /// A top-level entry of the bundle; `name` is checked as a segment.
    pub fn top(name: &str) -> Result<BundlePath, PathRefusal> {
        check_segment(name)?;
        Ok(BundlePath(name.to_owned()))
    }

    /// The path as written, `/`-separated.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Number of segments: `SKILL.md` is 1, `references/a.md` is 2.
    pub fn depth(&self) -> usize {
        self.0.split('/').count()
    }

    /// The last segment.
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }
}

impl fmt::Display for BundlePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Paths order like their strings, so maps keyed by `BundlePath` can be searched with a `&str`.
impl std::borrow::Borrow<str> for BundlePath {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for BundlePath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(path: &str) -> Option<ProblemCode> {
        BundlePath::parse(path).err().map(|r| r.code)
    }

    #[test]
    fn accepts_ordinary_paths() {
        for ok in [
            "SKILL.md",
            "references/a.md",
            "a/b/c/d.txt",
            "LICENSE",
            "x.y.z",
            "日本/語.md",
        ] {
            assert_eq!(code(ok), None, "{ok}");
        }
    }

    #[test]
    fn refuses_each_rule() {
        use ProblemCode::*;
        let cases = [
            ("", PathEscapes),
            ("/etc/passwd", PathEscapes),
            ("a//b", PathEscapes),
            ("a/./b", PathEscapes),
            ("../x", PathEscapes),
            ("a/..", PathEscapes),
            ("a/", PathEscapes),
            (".hidden", HiddenPath),
            ("a/.git/config", HiddenPath),
            ("a\\b", BackslashInPath),
            ("a\nb", ControlCharInPath),
            ("tab\there", ControlCharInPath),
            ("del\u{7f}", ControlCharInPath),
            ("c1\u{85}", ControlCharInPath),
        ];
        for (path, want) in cases {
            assert_eq!(code(path), Some(want), "{path:?}");
        }
    }

    #[test]
    fn join_and_depth() {
        let p = BundlePath::top("references").unwrap().join("a.md").unwrap();
        assert_eq!(p.as_str(), "references/a.md");
        assert_eq!(p.depth(), 2);
        assert_eq!(p.file_name(), "a.md");
        assert!(p.join("..").is_err());
    }

    #[test]
    fn order_is_code_point_order() {
        let mut v = [
            BundlePath::parse("references/a/x.md").unwrap(),
            BundlePath::parse("references/a-b/x.md").unwrap(),
            BundlePath::parse("references/a.md").unwrap(),
        ];
        v.sort();
        let s: Vec<_> = v.iter().map(BundlePath::as_str).collect();
        assert_eq!(
            s,
            [
                "references/a-b/x.md",
                "references/a.md",
                "references/a/x.md"
            ]
        );
    }
}
