//! A checked bundle: the file set, the parsed `SKILL.md`, and the digest — made only when every
//! rule of DESIGN §2 holds.
//!
//! [`Bundle::check`] applies the content rules to a [`FileSet`] under the profile it was read
//! with (every file valid UTF-8 with no NUL byte, unless the profile allows binary supporting
//! files; `SKILL.md` is text under every profile), the content rules of [`crate::format::content`]
//! (hidden characters, HTML comments, under the source's policy), `SKILL.md` present at the root
//! and valid in the bundle dialect of [`crate::format::frontmatter`]), adds them to the problems the source already found (paths, links,
//! bounds), and either returns a [`Bundle`] or an [`InvalidBundle`] listing every problem.
//! Paths that differ only in letter case are accepted with a warning.

use std::collections::BTreeMap;
use std::path::Path;

use crate::format::code::ReadCode;
use crate::format::content;
use crate::format::digest::BundleDigest;
use crate::format::file_set::FileSet;
pub use crate::format::file_set::is_binary;
use crate::format::frontmatter::{self, Frontmatter, Layout};
use crate::format::limits::{self, Limits};
use crate::format::problem::{Problem, ProblemCode, Problems};
use crate::format::safe_read::{self, BundleReadError};
use crate::format::skill_name::SkillName;

/// A bundle that passed every rule, with its digest.
///
/// ```
/// # let (skills, ..) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
/// let bundle = skillfold::Bundle::read_dir(&skills.join("commit-message")).unwrap();
/// assert_eq!(bundle.name().as_str(), "commit-message");
/// assert_eq!(bundle.digest().to_string(), "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e");
/// ```
#[derive(Debug, Clone)]
pub struct Bundle {
    files: FileSet,
    frontmatter: Frontmatter,
    layout: Layout,
    digest: BundleDigest,
    warnings: Vec<Problem>,
}

/// A bundle that broke at least one rule; `problems` lists them all (warnings included).
///
/// ```
/// let mut files = skillfold::FileSetBuilder::new();
/// files.insert("SKILL.md", b"---\nname: Bad Name\ndescription: x\n---\n".to_vec());
/// let (files, problems) = files.finish();
/// let invalid: skillfold::InvalidBundle = skillfold::Bundle::check(files, problems).unwrap_err();
/// assert!(invalid.problems.as_slice().iter().any(|p| p.is_error()));
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid bundle: {} problem(s), first: {}", .problems.as_slice().iter().filter(|p| p.is_error()).count(), first_error(.problems))]
pub struct InvalidBundle {
    /// Every problem found, in the order found.
    pub problems: Problems,
}

fn first_error(problems: &Problems) -> String {
    problems
        .as_slice()
        .iter()
        .find(|p| p.is_error())
        .map(ToString::to_string)
        .unwrap_or_default()
}

impl InvalidBundle {
    /// Stable error code.
    pub fn code(&self) -> ReadCode {
        ReadCode::InvalidBundle
    }
}

/// Reading a bundle from a directory failed, or the bundle is invalid.
///
/// ```
/// let verdict = match skillfold::Bundle::read_dir("/nowhere".as_ref()) {
///     Err(skillfold::BundleError::Invalid(invalid)) => format!("refused: {invalid}"),
///     Err(other) => format!("unreadable [{}]", other.code()),
///     Ok(bundle) => bundle.digest().to_string(),
/// };
/// assert!(verdict.starts_with("unreadable"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BundleError {
    /// The directory could not be read at all.
    #[error(transparent)]
    Read(#[from] BundleReadError),
    /// The directory was read but breaks the bundle rules.
    #[error(transparent)]
    Invalid(#[from] InvalidBundle),
}

impl BundleError {
    /// Stable error code.
    pub fn code(&self) -> ReadCode {
        match self {
            BundleError::Read(e) => e.code(),
            BundleError::Invalid(e) => e.code(),
        }
    }
}

impl Bundle {
    /// Reads the directory at `dir` with the safe reader and checks it under the `chamvi` bounds.
    pub fn read_dir(dir: &Path) -> Result<Bundle, BundleError> {
        Bundle::read_dir_under(dir, limits::CHAMVI)
    }

    /// Reads the directory at `dir` with the safe reader and checks it under `limits`.
    pub fn read_dir_under(dir: &Path, limits: Limits) -> Result<Bundle, BundleError> {
        let outcome = safe_read::read_bundle_dir_under(dir, limits)?;
        Ok(Bundle::check(outcome.files, outcome.problems)?)
    }

    /// Checks a file set under the profile it was read with; `problems` are those its source
    /// already found.
    pub fn check(files: FileSet, mut problems: Problems) -> Result<Bundle, InvalidBundle> {
        let limits = files.limits();
        for (path, bytes) in files.iter() {
            if path.as_str() == limits::SKILL_MD || !limits.binary() {
                check_text(path.as_str(), bytes, &mut problems);
            }
        }
        content::check(&files, &mut problems);
        let parsed = match files.get(limits::SKILL_MD) {
            Some(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => frontmatter::check(text, &limits, &mut problems),
                Err(_) => None, // already reported as not UTF-8
            },
            // A walk stopped early may never have reached `SKILL.md`, and a `SKILL.md` that was
            // refused (over its bound, a symlink, a special file) exists: saying it is missing
            // would be wrong, and the problem that kept it out is already recorded.
            None if files.is_partial() || refused(&problems, limits::SKILL_MD) => None,
            None => {
                problems.push(missing_skill_md(&files));
                None
            }
        };
        if let (Some((frontmatter, layout)), Some(text)) = (&parsed, files.get(limits::SKILL_MD)) {
            let yaml = std::str::from_utf8(&text[layout.frontmatter.clone()]).unwrap_or_default();
            let policy = limits.content();
            content::check_description(&frontmatter.description, yaml, policy, &mut problems);
        }
        problems.extend(case_collisions(&files));
        match parsed {
            Some((frontmatter, layout)) if !problems.has_errors() => {
                let digest = BundleDigest::of(&files);
                Ok(Bundle {
                    files,
                    frontmatter,
                    layout,
                    digest,
                    warnings: problems.into_vec(),
                })
            }
            _ => Err(InvalidBundle { problems }),
        }
    }

    /// The skill's name from the frontmatter.
    pub fn name(&self) -> &SkillName {
        &self.frontmatter.name
    }

    /// The trimmed description.
    pub fn description(&self) -> &str {
        &self.frontmatter.description
    }

    /// Frontmatter keys other than `name` and `description`, sorted; they grant nothing.
    pub fn ignored_fields(&self) -> &[String] {
        &self.frontmatter.ignored_fields
    }

    /// The release the frontmatter declares (`version`, else `metadata.version`), if any.
    pub fn declared_version(&self) -> Option<&str> {
        self.frontmatter.declared_version.as_deref()
    }

    /// The `chamvi-skill-bundle-v1` digest.
    pub fn digest(&self) -> BundleDigest {
        self.digest
    }

    /// Every file, in digest order.
    pub fn files(&self) -> &FileSet {
        &self.files
    }

    /// The Markdown body of `SKILL.md`: the exact bytes after the closing fence line.
    pub fn body(&self) -> &str {
        let skill_md = self.files.get(limits::SKILL_MD).unwrap_or_default();
        // Checked UTF-8 when the bundle was made, and the layout splits at line boundaries.
        std::str::from_utf8(&skill_md[self.layout.body.clone()]).unwrap_or_default()
    }

    /// The profile it was checked under.
    pub fn limits(&self) -> Limits {
        self.files.limits()
    }

    /// Warnings (never errors) found while checking, such as case collisions.
    pub fn warnings(&self) -> &[Problem] {
        &self.warnings
    }
}

/// UTF-8 with no NUL byte. A file that is not text is one problem, whatever makes it so: a NUL
/// byte (`nul_byte`, the usual mark of a binary file, whether or not it is also invalid UTF-8),
/// else invalid UTF-8 (`not_utf8`).
fn check_text(path: &str, bytes: &[u8], problems: &mut Problems) {
    let nul = bytes.iter().position(|&b| b == 0);
    let bad_utf8 = std::str::from_utf8(bytes).err().map(|e| e.valid_up_to());
    let problem = match (nul, bad_utf8) {
        (None, None) => return,
        (Some(at), None) => Problem::error(
            ProblemCode::NulByte,
            Some(path),
            format!("binary content: NUL byte at offset {at}; bundle files must be text"),
        ),
        (Some(at), Some(bad)) => Problem::error(
            ProblemCode::NulByte,
            Some(path),
            format!(
                "binary content: NUL byte at offset {at}, not valid UTF-8 from offset {bad}; \
                 bundle files must be text"
            ),
        ),
        (None, Some(bad)) => Problem::error(
            ProblemCode::NotUtf8,
            Some(path),
            format!(
                "not valid UTF-8 (first bad byte at offset {bad}); bundle files must be UTF-8 text"
            ),
        ),
    };
    problems.push(problem);
}

/// Whether an error about the file at `path` is already recorded.
fn refused(problems: &Problems, path: &str) -> bool {
    problems
        .as_slice()
        .iter()
        .any(|p| p.is_error() && p.path.as_deref() == Some(path))
}

fn missing_skill_md(files: &FileSet) -> Problem {
    let near_miss = files
        .iter()
        .map(|(p, _)| p.as_str())
        .find(|p| p.eq_ignore_ascii_case(limits::SKILL_MD));
    let hint = match near_miss {
        Some(found) => format!("; found `{found}`: the name is case-sensitive, rename it"),
        None => String::new(),
    };
    Problem::error(
        ProblemCode::MissingSkillMd,
        Some(limits::SKILL_MD),
        format!("the bundle has no `SKILL.md` at its root{hint}"),
    )
}

/// One warning per group of paths equal under Unicode lowercasing.
fn case_collisions(files: &FileSet) -> Vec<Problem> {
    let mut groups: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (path, _) in files.iter() {
        groups
            .entry(path.as_str().to_lowercase())
            .or_default()
            .push(path.as_str());
    }
    groups
        .into_values()
        .filter(|g| g.len() > 1)
        .map(|g| {
            let others: Vec<String> = g[1..].iter().map(|p| format!("`{p}`")).collect();
            Problem::warning(
                ProblemCode::CaseCollision,
                Some(g[0]),
                format!(
                    "differs only in letter case from {}; they collide on case-insensitive file systems",
                    others.join(", ")
                ),
            )
        })
        .collect()
}

crate::support::error_code::coded_by_code!(InvalidBundle, BundleError);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::file_set::FileSetBuilder;

    #[test]
    fn binary_means_a_nul_byte_or_invalid_utf8() {
        assert!(
            is_binary(b"text with a \0 inside"),
            "valid UTF-8 with a NUL"
        );
        assert!(is_binary(b"\xff\xfe"), "invalid UTF-8 without a NUL");
        assert!(!is_binary("plain text, \u{e9}t\u{e9}\n".as_bytes()));
        assert!(!is_binary(b""));
    }

    const SKILL: &str = "---\nname: demo\ndescription: A demo.\n---\n# Demo\n";

    fn bundle(files: &[(&str, &[u8])]) -> Result<Bundle, InvalidBundle> {
        let mut b = FileSetBuilder::new();
        for (p, bytes) in files {
            b.insert(p, bytes.to_vec());
        }
        let (fs, problems) = b.finish();
        Bundle::check(fs, problems)
    }

    fn codes(r: Result<Bundle, InvalidBundle>) -> Vec<ProblemCode> {
        r.unwrap_err()
            .problems
            .as_slice()
            .iter()
            .map(|p| p.code)
            .collect()
    }

    #[test]
    fn valid_bundle_exposes_its_parts() {
        let b = bundle(&[("SKILL.md", SKILL.as_bytes()), ("references/a.md", b"A")]).unwrap();
        assert_eq!(b.name().as_str(), "demo");
        assert_eq!(b.description(), "A demo.");
        assert_eq!(b.body(), "# Demo\n");
        assert_eq!(b.files().len(), 2);
        assert!(b.warnings().is_empty());
    }

    #[test]
    fn every_problem_is_reported_together() {
        let got = codes(bundle(&[
            ("SKILL.md", b"---\nname: Bad\ndescription: ''\n---\n"),
            ("a.bin", b"\x00\xff"),
            ("latin1.md", b"caf\xe9"),
            (".hidden", b"x"),
        ]));
        use ProblemCode::*;
        for want in [HiddenPath, NulByte, NotUtf8, NameInvalid, DescriptionBlank] {
            assert!(got.contains(&want), "{want:?} missing from {got:?}");
        }
        // One problem a file that is not text, whatever makes it so.
        assert_eq!(
            got.iter()
                .filter(|c| matches!(c, NulByte | NotUtf8))
                .count(),
            2
        );
    }

    #[test]
    fn missing_skill_md_names_the_near_miss() {
        let err = bundle(&[("skill.md", SKILL.as_bytes())]).unwrap_err();
        let p = &err.problems.as_slice()[0];
        assert_eq!(p.code, ProblemCode::MissingSkillMd);
        assert!(p.message.contains("`skill.md`"), "{}", p.message);
    }

    #[test]
    fn case_collisions_warn_but_accept() {
        let b = bundle(&[
            ("SKILL.md", SKILL.as_bytes()),
            ("a.md", b"1"),
            ("A.md", b"2"),
        ])
        .unwrap();
        assert_eq!(b.warnings().len(), 1);
        assert_eq!(b.warnings()[0].code, ProblemCode::CaseCollision);
    }
}
