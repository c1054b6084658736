//! The path grammar of a source's `root`: the folder of a repository (or `pin --root`) that holds
//! `<name>/SKILL.md`. It is the operator's choice of where to look, not a part of any bundle, so
//! it follows the [bundle path grammar](super::bundle_path) except that a segment **may** start
//! with `.`: vendors group skills in folders such as `skills/.curated`. It stays a relative path
//! inside the repository that every tool reads alike:
//!
//! - not absolute, no empty, `.` or `..` segment ([`PathEscapes`]);
//! - no backslash ([`BackslashInPath`]), no control character ([`ControlCharInPath`]).
//!
//! Every rule inside a bundle is unchanged: a hidden file or folder *in* a bundle is still
//! refused ([`HiddenPath`]). A [`RootPath`] is a type of its own so that a path with hidden
//! segments can never be taken for a [`BundlePath`](super::bundle_path::BundlePath).
//!
//! [`PathEscapes`]: ProblemCode::PathEscapes
//! [`HiddenPath`]: ProblemCode::HiddenPath
//! [`BackslashInPath`]: ProblemCode::BackslashInPath
//! [`ControlCharInPath`]: ProblemCode::ControlCharInPath

use std::fmt;

use super::bundle_path::{PathRefusal, check_folder_segment};
use crate::format::problem::ProblemCode;

/// A checked folder of a repository, `/`-separated, relative to its root.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RootPath(String);

// Only the Git fetcher and `pin` walk a root; every build checks one.
#[cfg_attr(
    not(feature = "git"),
    expect(dead_code, reason = "only the Git fetcher and `pin` walk a root")
)]
impl RootPath {
    /// Checks a folder path such as `skills` or `skills/.curated`.
    pub fn parse(path: &str) -> Result<RootPath, PathRefusal> {
        if path.starts_with('/') {
            return Err(PathRefusal {
                code: ProblemCode::PathEscapes,
                reason: "an absolute path would leave the repository",
            });
        }
        for segment in path.split('/') {
            if segment.is_empty() || segment == "." || segment == ".." {
                return Err(PathRefusal {
                    code: ProblemCode::PathEscapes,
                    reason: "empty, `.` and `..` segments are not allowed in a folder of the repository",
                });
            }
            check_folder_segment(segment)?;
        }
        Ok(RootPath(path.to_owned()))
    }

    /// The path as written, `/`-separated.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Its segments, from the repository root down.
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }
}

impl fmt::Display for RootPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::bundle_path::BundlePath;

    fn code(path: &str) -> Option<ProblemCode> {
        RootPath::parse(path).err().map(|r| r.code)
    }

    #[test]
    fn hidden_segments_are_accepted_in_a_root_and_nowhere_else() {
        for ok in [
            "skills",
            "skills/.curated",
            ".agents/skills",
            "skills/.system/.x",
            "..dots",
            "日本/.語",
        ] {
            assert_eq!(code(ok), None, "{ok}");
        }
        // The same path is still refused as a path inside a bundle.
        assert_eq!(
            BundlePath::parse("skills/.curated").map_err(|r| r.code),
            Err(ProblemCode::HiddenPath)
        );
    }

    #[test]
    fn every_other_rule_still_refuses() {
        use ProblemCode::*;
        let cases = [
            ("", PathEscapes),
            ("/skills", PathEscapes),
            ("/", PathEscapes),
            ("a//b", PathEscapes),
            ("a/./b", PathEscapes),
            (".", PathEscapes),
            ("..", PathEscapes),
            ("../x", PathEscapes),
            ("skills/..", PathEscapes),
            ("skills/../..", PathEscapes),
            ("a/", PathEscapes),
            ("a\\b", BackslashInPath),
            (".a\\b", BackslashInPath),
            ("a\nb", ControlCharInPath),
            (".tab\there", ControlCharInPath),
            ("del\u{7f}", ControlCharInPath),
            ("c1\u{85}", ControlCharInPath),
        ];
        for (path, want) in cases {
            assert_eq!(code(path), Some(want), "{path:?}");
        }
    }
}
