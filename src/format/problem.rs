//! Problems found in a bundle: one stable code per rule, the offending path, and a message.
//!
//! Checking a bundle never stops at the first problem. Every rule that refuses something records
//! a [`Problem`] and the check goes on, so a reviewer fixes everything in one pass (the habit of
//! Go's module zip `CheckFiles`). A problem carries:
//!
//! - a [`ProblemCode`]: stable, `snake_case`, documented, used by the CLI and by JSON output;
//! - the bundle-relative path it is about (or none for bundle-wide rules);
//! - a lowercase message without a trailing period, values in backticks;
//! - for bounds, the limit and the measured value, so the report says by how much.
//!
//! Warnings use the same type with [`ProblemSeverity::Warning`]; they never refuse a bundle.

use std::fmt;

use serde::Serialize;

use crate::format::content::policy::Finding;
use crate::support::escape;

/// How serious a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProblemSeverity {
    /// The bundle is refused.
    Error,
    /// Reported, but the bundle is accepted.
    Warning,
}

crate::support::error_code::error_codes! {
    /// The stable code of each bundle rule. The string form never changes once released.
    ///
    /// ```
    /// assert_eq!(skillfold::ProblemCode::DescriptionMissing.as_str(), "description_missing");
    /// ```
    pub enum ProblemCode: "bundle", default Invalid;
    // --- the file tree -------------------------------------------------------------------
    /// A symbolic link inside the bundle (never followed).
    Symlink = "symlink",
    /// A FIFO, socket or device node inside the bundle (never opened).
    SpecialFile = "special_file",
    /// An entry changed type, identity or size between inventory and read.
    ChangedDuringRead = "changed_during_read",
    /// A path segment starts with `.`.
    HiddenPath = "hidden_path",
    /// A path contains a backslash.
    BackslashInPath = "backslash_in_path",
    /// A path contains a control character.
    ControlCharInPath = "control_char_in_path",
    /// A file or directory name is not valid UTF-8.
    PathNotUtf8 = "path_not_utf8",
    /// A path is empty, absolute, or has an empty, `.` or `..` segment (it would leave the bundle).
    PathEscapes = "path_escapes",
    /// A Git submodule (gitlink) inside a selected bundle: its content is outside the pin.
    Gitlink = "gitlink",
    /// A Git LFS pointer file inside a selected bundle: the real content is outside the pin.
    LfsPointer = "lfs_pointer",
    /// The same path twice, or a path that is both a file and a directory (malformed Git trees).
    DuplicatePath = "duplicate_path",
    /// Two paths differ only in letter case (a warning: they collide on case-insensitive disks).
    CaseCollision = "case_collision" => Ok,
    // --- contents ----------------------------------------------------------------------------
    /// A file is not valid UTF-8 text.
    NotUtf8 = "not_utf8",
    /// A file contains a NUL byte.
    NulByte = "nul_byte",
    /// A hidden character (class `tag`, `bidi`, `control` or `invisible`) in a text file or a
    /// name; refused or a warning by class, place and the source's `content:` (docs/content.md).
    HiddenCharacter = "hidden_character",
    /// An HTML comment in `SKILL.md`'s body: read by the model, hidden when rendered (a warning
    /// unless the source's `content:` says otherwise).
    HiddenComment = "hidden_comment",
    // --- bounds ------------------------------------------------------------------------------
    /// A single file is larger than its bound.
    FileTooLarge = "file_too_large",
    /// More regular files than allowed.
    TooManyFiles = "too_many_files",
    /// The files add up to more bytes than allowed.
    BundleTooLarge = "bundle_too_large",
    /// More inventory entries (root, directories, files, anything) than allowed.
    TooManyEntries = "too_many_entries",
    /// Directories nested deeper than allowed.
    TooDeep = "too_deep",
    // --- SKILL.md ------------------------------------------------------------------------------
    /// The bundle has no `SKILL.md` at its root.
    MissingSkillMd = "missing_skill_md",
    /// `SKILL.md` does not start with a `---` line.
    FrontmatterMissing = "frontmatter_missing",
    /// No closing `---` line after the opening one.
    FrontmatterUnclosed = "frontmatter_unclosed",
    /// The YAML frontmatter is larger than its bound.
    FrontmatterTooLarge = "frontmatter_too_large",
    /// The Markdown body is larger than its bound.
    BodyTooLarge = "body_too_large",
    /// The frontmatter is not well-formed YAML.
    YamlSyntax = "yaml_syntax",
    /// The frontmatter is not a YAML mapping.
    FrontmatterNotMapping = "frontmatter_not_mapping",
    /// A mapping repeats a key.
    DuplicateKey = "duplicate_key",
    /// A YAML anchor (`&x`).
    YamlAnchor = "yaml_anchor",
    /// A YAML alias (`*x`).
    YamlAlias = "yaml_alias",
    /// A YAML tag (`!!str`, `!custom`).
    YamlTag = "yaml_tag",
    /// A mapping key that is not a string (a number, boolean, null or collection).
    NonStringKey = "non_string_key",
    /// A frontmatter key contains a control character.
    KeyControlChar = "key_control_char",
    /// `name` is absent.
    NameMissing = "name_missing",
    /// `name` is not a string or does not match `^[a-z][a-z0-9-]{0,63}$`.
    NameInvalid = "name_invalid",
    /// `name` differs from the name the operator pinned.
    NameMismatch = "name_mismatch",
    /// `description` is absent.
    DescriptionMissing = "description_missing",
    /// `description` is not a string.
    DescriptionNotString = "description_not_string",
    /// `description` is blank once trimmed.
    DescriptionBlank = "description_blank",
    /// `description` is longer than its bound.
    DescriptionTooLong = "description_too_long",
    /// `description` contains a control character (newline, tab, ...).
    DescriptionControlChar = "description_control_char",
}

/// One broken rule (or warning), with where and by how much.
///
/// ```
/// let mut files = skillfold::FileSetBuilder::new();
/// files.insert("SKILL.md", b"---\nname: hello\n---\n".to_vec());
/// let (files, problems) = files.finish();
/// let invalid = skillfold::Bundle::check(files, problems).unwrap_err();
/// let problem: &skillfold::Problem = &invalid.problems.as_slice()[0];
/// assert_eq!(problem.code, skillfold::ProblemCode::DescriptionMissing);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// Error or warning.
    pub severity: ProblemSeverity,
    /// The stable code of the rule.
    pub code: ProblemCode,
    /// The bundle-relative POSIX path the problem is about; `None` for bundle-wide rules.
    pub path: Option<String>,
    /// What is wrong, lowercase, without a trailing period.
    pub message: String,
    /// The bound that was exceeded, for bound problems.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// The measured value (at least this much), for bound problems.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<u64>,
    /// Where a content rule found what, for `hidden_character` and `hidden_comment`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<Box<Finding>>,
}

impl Problem {
    /// An error about `path` (or the whole bundle when `None`).
    pub fn error(code: ProblemCode, path: Option<&str>, message: impl Into<String>) -> Self {
        Problem {
            severity: ProblemSeverity::Error,
            code,
            path: path.map(str::to_owned),
            message: message.into(),
            limit: None,
            actual: None,
            finding: None,
        }
    }

    /// A warning about `path`.
    pub fn warning(code: ProblemCode, path: Option<&str>, message: impl Into<String>) -> Self {
        Problem {
            severity: ProblemSeverity::Warning,
            ..Problem::error(code, path, message)
        }
    }

    /// Attaches the bound and the measured value.
    pub fn with_bound(mut self, limit: u64, actual: u64) -> Self {
        self.limit = Some(limit);
        self.actual = Some(actual);
        self
    }

    /// Attaches a content rule's finding.
    pub fn with_finding(mut self, finding: Finding) -> Self {
        self.finding = Some(Box::new(finding));
        self
    }

    /// Whether this problem refuses the bundle.
    pub fn is_error(&self) -> bool {
        self.severity == ProblemSeverity::Error
    }

    /// Renders the problem as one line, with the path shown under `root` (a directory name the
    /// user typed, for example): `root/path: message [code]`. The root and the path are escaped
    /// (with the escaping of all untrusted text); the message escaped its values when it was built.
    pub fn display_under<'a, R>(&'a self, root: &'a R) -> impl fmt::Display + 'a
    where
        R: AsRef<std::ffi::OsStr> + ?Sized,
    {
        DisplayUnder {
            problem: self,
            root: root.as_ref().as_encoded_bytes(),
        }
    }
}

struct DisplayUnder<'a> {
    problem: &'a Problem,
    root: &'a [u8],
}

impl fmt::Display for DisplayUnder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.problem;
        let mut root = self.root;
        while let Some(shorter) = root.strip_suffix(b"/") {
            root = shorter;
        }
        let shown = escape::bytes(root);
        match (&p.path, root.is_empty()) {
            (Some(path), true) => write!(f, "{}", escape::text(path))?,
            (Some(path), false) => write!(f, "{shown}/{}", escape::text(path))?,
            (None, true) => f.write_str("bundle")?,
            (None, false) => write!(f, "{shown}")?,
        }
        write!(f, ": {} [{}]", p.message, p.code)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.display_under("").fmt(f)
    }
}

/// The problems of one bundle, in the order they were found.
///
/// ```
/// let mut builder = skillfold::FileSetBuilder::new();
/// builder.insert("SKILL.md", b"no frontmatter".to_vec());
/// let (files, problems) = builder.finish();
/// let refused = skillfold::Bundle::check(files, problems).unwrap_err();
/// assert!(!refused.to_string().is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Problems(Vec<Problem>);

impl Problems {
    /// No problems yet.
    pub fn new() -> Self {
        Problems(Vec::new())
    }

    /// Records a problem.
    pub fn push(&mut self, problem: Problem) {
        self.0.push(problem);
    }

    /// Whether any recorded problem is an error.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Problem::is_error)
    }

    /// Whether a problem with `code` was recorded.
    pub fn contains(&self, code: ProblemCode) -> bool {
        self.0.iter().any(|p| p.code == code)
    }

    /// All problems, errors and warnings.
    pub fn as_slice(&self) -> &[Problem] {
        &self.0
    }

    /// Only the warnings.
    pub fn warnings(&self) -> impl Iterator<Item = &Problem> {
        self.0.iter().filter(|p| !p.is_error())
    }

    /// Takes the problems out.
    pub fn into_vec(self) -> Vec<Problem> {
        self.0
    }
}

impl Extend<Problem> for Problems {
    fn extend<T: IntoIterator<Item = Problem>>(&mut self, iter: T) {
        self.0.extend(iter);
    }
}

impl IntoIterator for Problems {
    type Item = Problem;
    type IntoIter = std::vec::IntoIter<Problem>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_snake_case() {
        let mut seen = std::collections::BTreeSet::new();
        for code in ProblemCode::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "duplicate code {s}");
            assert!(
                s.chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit()),
                "{s} is not snake_case"
            );
        }
    }

    #[test]
    fn display_names_root_path_and_code() {
        let p = Problem::error(ProblemCode::Symlink, Some("refs/a.md"), "symbolic link");
        assert_eq!(
            p.display_under("skills/pdf/").to_string(),
            "skills/pdf/refs/a.md: symbolic link [symlink]"
        );
        let q = Problem::error(ProblemCode::TooManyFiles, None, "too many");
        assert_eq!(
            q.display_under("x").to_string(),
            "x: too many [too_many_files]"
        );
        assert_eq!(q.to_string(), "bundle: too many [too_many_files]");
    }

    #[test]
    fn display_escapes_the_root_and_the_path() {
        let p = Problem::error(
            ProblemCode::ControlCharInPath,
            Some("x\nok: forged\u{1b}[8m"),
            "control characters are not allowed in paths",
        );
        let root = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"d\\ir\xff\n/");
        assert_eq!(
            p.display_under(root).to_string(),
            "d\\\\ir\\xff\\n/x\\nok: forged\\u{1b}[8m: control characters are not allowed in paths [control_char_in_path]"
        );
    }
}
