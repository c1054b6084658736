//! Finding, reading and splitting a skill's `SKILL.md` for the spec tooling, safely, through
//! [`crate::format::untrusted_fs`].
//!
//! - The skill directory is opened once without following a link: a skill directory that is
//!   itself a symbolic link is refused (skills-ref reads through it).
//! - `SKILL.md` is preferred over `skill.md`, decided from the directory listing by exact
//!   name (as skills-ref's `exists()` does on a case-sensitive file system).
//! - The chosen entry is inspected with `fstatat(AT_SYMLINK_NOFOLLOW)` and opened relative to the
//!   directory, never through a link: a symlinked `SKILL.md` (even a dangling one) is refused,
//!   and so is a directory or special file of that name (skills-ref crashes on a directory).
//! - At most [`MAX_SKILL_MD_BYTES`] (8 MiB) are read, and a larger file is refused, where
//!   skills-ref reads any size (before this bound a sparse 3 GiB `SKILL.md` cost 6 GB of memory
//!   here, and a 10 GiB one aborted).
//! - The bytes must be UTF-8 (skills-ref crashes otherwise); `\r\n` and lone `\r` become `\n`
//!   (Python's universal newlines), a byte order mark is kept.
//! - Fences are whole lines: the text must start with a `---` line and the frontmatter ends at
//!   the next line that is `---`, trailing spaces or tabs allowed. skills-ref splits on the
//!   first two `---` anywhere, so `a --- b` in a value cuts its frontmatter short; here it is
//!   text.
//!
//! The frontmatter text handed to [`super::strict_yaml`] starts right after the opening `---`,
//! exactly as skills-ref's `parts[1]` does, so YAML line numbers are `SKILL.md` line numbers.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::FileType;

use super::code::SpecCode;
use super::strict_yaml::{self, StrictYamlError, Value};
use crate::format::untrusted_fs::{self, UntrustedOpenError};

/// The two accepted spellings, in order of preference.
pub const SKILL_MD_NAMES: [&str; 2] = ["SKILL.md", "skill.md"];

/// The largest `SKILL.md` the spec tooling (`validate`, `read-properties`, `to-prompt`) reads:
/// 8 MiB. skills-ref sets no bound and reads any size, so this one is
/// generous on purpose: a real skill (the format's own bound for a pinned bundle is under
/// 70 KiB) never meets it, and no real skill is judged differently from skills-ref. It exists
/// so that a huge or sparse file is refused after reading one byte past the bound, instead of
/// being read whole into memory.
pub const MAX_SKILL_MD_BYTES: u64 = 8 * 1024 * 1024;

/// Why a skill directory could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DirError {
    /// Nothing at that path.
    #[error("Path does not exist: {}", .0.display())]
    NotFound(PathBuf),
    /// The path is not a directory.
    #[error("Not a directory: {}", .0.display())]
    NotADirectory(PathBuf),
    /// The path is a symbolic link (deviation: skills-ref follows it).
    #[error("`{}` is a symbolic link; skillfold does not follow links to a skill directory (give the real directory) [symlink]", crate::support::escape::path(.0))]
    Symlink(PathBuf),
    /// Another I/O failure.
    #[error("cannot open `{}`: {source} [io_error]", crate::support::escape::path(.path))]
    Io {
        /// The directory.
        path: PathBuf,
        /// The system error.
        source: std::io::Error,
    },
}

impl DirError {
    /// Stable error code.
    pub fn code(&self) -> SpecCode {
        match self {
            DirError::NotFound(_) => SpecCode::NotFound,
            DirError::NotADirectory(_) => SpecCode::NotADirectory,
            DirError::Symlink(_) => SpecCode::Symlink,
            DirError::Io { .. } => SpecCode::IoError,
        }
    }
}

/// Why `SKILL.md` could not be read or split. The first five are skills-ref's own errors (their
/// [`std::fmt::Display`] is its text); the rest are where skillfold deliberately differs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillMdError {
    /// Neither `SKILL.md` nor `skill.md` exists.
    #[error("Missing required file: SKILL.md")]
    Missing,
    /// The text does not start with a `---` line.
    #[error("SKILL.md must start with YAML frontmatter (---)")]
    NoFrontmatter,
    /// No closing `---` line.
    #[error("SKILL.md frontmatter not properly closed with ---")]
    Unclosed,
    /// strictyaml refused the frontmatter; the text is its message.
    #[error("Invalid YAML in frontmatter: {0}")]
    InvalidYaml(String),
    /// The frontmatter is not a mapping.
    #[error("SKILL.md frontmatter must be a YAML mapping")]
    NotMapping,
    /// `SKILL.md` is a symbolic link.
    #[error(
        "`{0}` is a symbolic link; skillfold reads only regular files and never follows links [symlink]"
    )]
    Symlink(&'static str),
    /// `SKILL.md` is a directory or special file.
    #[error("`{0}` is not a regular file [not_a_file]")]
    NotAFile(&'static str),
    /// `SKILL.md` is larger than [`MAX_SKILL_MD_BYTES`] (deviation: skills-ref reads any size).
    #[error(
        "`{name}` is larger than {cap} bytes ({} MiB), the most skillfold reads for a skill file [file_too_large]",
        .cap >> 20
    )]
    TooLarge {
        /// Which spelling.
        name: &'static str,
        /// The bound, [`MAX_SKILL_MD_BYTES`].
        cap: u64,
    },
    /// `SKILL.md` is not UTF-8.
    #[error("`{name}` is not valid UTF-8: byte 0x{byte:02x} at offset {offset} [not_utf8]")]
    NotUtf8 {
        /// Which spelling.
        name: &'static str,
        /// The first offending byte.
        byte: u8,
        /// Its byte offset.
        offset: usize,
    },
    /// A character YAML does not allow, in the frontmatter.
    #[error("the YAML frontmatter holds the character U+{:04X} on line {line}, which YAML does not allow [control_char]", *.ch as u32)]
    ControlChar {
        /// The character.
        ch: char,
        /// Its `SKILL.md` line.
        line: usize,
    },
    /// YAML on which strictyaml crashes instead of reporting an error.
    #[error("the YAML frontmatter cannot be loaded: {0} [yaml_unsupported]")]
    Unsupported(String),
    /// Another I/O failure.
    #[error("cannot read `{name}`: {source} [io_error]")]
    Io {
        /// Which spelling.
        name: &'static str,
        /// The system error.
        source: std::io::Error,
    },
}

impl SkillMdError {
    /// Stable error code.
    pub fn code(&self) -> SpecCode {
        match self {
            SkillMdError::Missing => SpecCode::MissingSkillMd,
            SkillMdError::NoFrontmatter => SpecCode::FrontmatterMissing,
            SkillMdError::Unclosed => SpecCode::FrontmatterUnclosed,
            SkillMdError::InvalidYaml(_) => SpecCode::YamlInvalid,
            SkillMdError::NotMapping => SpecCode::FrontmatterNotMapping,
            SkillMdError::Symlink(_) => SpecCode::Symlink,
            SkillMdError::NotAFile(_) => SpecCode::NotAFile,
            SkillMdError::TooLarge { .. } => SpecCode::FileTooLarge,
            SkillMdError::NotUtf8 { .. } => SpecCode::NotUtf8,
            SkillMdError::ControlChar { .. } => SpecCode::ControlChar,
            SkillMdError::Unsupported(_) => SpecCode::YamlUnsupported,
            SkillMdError::Io { .. } => SpecCode::IoError,
        }
    }

    /// Whether skills-ref reports the same problem (as opposed to crashing or reading on).
    #[cfg(test)]
    pub fn is_reference_error(&self) -> bool {
        matches!(
            self,
            SkillMdError::Missing
                | SkillMdError::NoFrontmatter
                | SkillMdError::Unclosed
                | SkillMdError::InvalidYaml(_)
                | SkillMdError::NotMapping
        )
    }
}

/// Opens a skill directory without following a link at its last component.
pub fn open_dir(path: &Path) -> Result<OwnedFd, DirError> {
    untrusted_fs::open_root(path).map_err(|e| {
        let path = path.to_owned();
        match e {
            UntrustedOpenError::NotFound => DirError::NotFound(path),
            UntrustedOpenError::Symlink => DirError::Symlink(path),
            UntrustedOpenError::NotADirectory | UntrustedOpenError::NotRegular => {
                DirError::NotADirectory(path)
            }
            UntrustedOpenError::Io(errno) => DirError::Io {
                path,
                source: errno.into(),
            },
        }
    })
}

/// Which spelling of `SKILL.md` the directory holds, from its listing, by exact name.
pub fn find_name(dir: &OwnedFd) -> Result<Option<&'static str>, std::io::Error> {
    let mut found = [false; 2];
    untrusted_fs::scan(dir, |name| {
        for (i, want) in SKILL_MD_NAMES.iter().enumerate() {
            if name.to_bytes() == want.as_bytes() {
                found[i] = true;
            }
        }
        std::ops::ControlFlow::Continue(())
    })?;
    Ok(SKILL_MD_NAMES
        .iter()
        .zip(found)
        .find(|(_, f)| *f)
        .map(|(n, _)| *n))
}

/// `SKILL.md` read from a directory, decoded, with newlines made `\n`.
#[derive(Debug, Clone)]
pub struct SkillMd {
    /// `SKILL.md` or `skill.md`.
    pub name: &'static str,
    /// The text after universal-newline translation.
    pub text: String,
}

/// Finds and reads `SKILL.md` in an opened directory. `Ok(None)` when neither spelling exists.
pub fn read(dir: &OwnedFd) -> Result<Option<SkillMd>, SkillMdError> {
    let Some(name) = find_name(dir).map_err(|source| SkillMdError::Io {
        name: SKILL_MD_NAMES[0],
        source,
    })?
    else {
        return Ok(None);
    };
    let name_c = untrusted_fs::component(name).map_err(|e| SkillMdError::Io {
        name,
        source: e.into_io(),
    })?;
    // Looked at before it is opened: a special file of that name is never opened.
    let stat = match untrusted_fs::stat_at(dir, &name_c) {
        Ok(Some(stat)) => stat,
        Ok(None) => return Ok(None),
        Err(e) => {
            return Err(SkillMdError::Io {
                name,
                source: e.into(),
            });
        }
    };
    match untrusted_fs::kind(&stat) {
        FileType::RegularFile => {}
        FileType::Symlink => return Err(SkillMdError::Symlink(name)),
        _ => return Err(SkillMdError::NotAFile(name)),
    }
    let (fd, now) = untrusted_fs::open_file(dir, &name_c).map_err(|e| match e {
        UntrustedOpenError::Symlink => SkillMdError::Symlink(name),
        UntrustedOpenError::NotRegular | UntrustedOpenError::NotADirectory => {
            SkillMdError::NotAFile(name)
        }
        other => SkillMdError::Io {
            name,
            source: other.into_io(),
        },
    })?;
    let hint = u64::try_from(now.st_size).unwrap_or(0);
    let bytes = untrusted_fs::read_capped(fd, MAX_SKILL_MD_BYTES, hint).map_err(|e| match e {
        untrusted_fs::UntrustedReadError::TooLarge { cap } => SkillMdError::TooLarge { name, cap },
        untrusted_fs::UntrustedReadError::Io(source) => SkillMdError::Io { name, source },
    })?;
    let text =
        decode(&bytes).map_err(|(byte, offset)| SkillMdError::NotUtf8 { name, byte, offset })?;
    Ok(Some(SkillMd { name, text }))
}

/// UTF-8 decoding plus Python's universal newlines. The error is the first bad byte and its
/// offset.
pub fn decode(bytes: &[u8]) -> Result<String, (u8, usize)> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        (bytes[at], at)
    })?;
    if !text.contains('\r') {
        return Ok(text.to_owned());
    }
    Ok(text.replace("\r\n", "\n").replace('\r', "\n"))
}

fn is_fence(line: &str) -> bool {
    line.strip_prefix("---")
        .is_some_and(|rest| rest.chars().all(|c| c == ' ' || c == '\t'))
}

/// The frontmatter text between whole-line fences: from just after the opening `---` to the
/// start of the closing `---` line.
pub fn frontmatter(text: &str) -> Result<&str, SkillMdError> {
    let first_end = text.find('\n').unwrap_or(text.len());
    if !is_fence(&text[..first_end]) {
        return Err(SkillMdError::NoFrontmatter);
    }
    let mut start = first_end + 1;
    while start < text.len() {
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        if is_fence(&text[start..end]) {
            return Ok(&text[3..start]);
        }
        start = end + 1;
    }
    Err(SkillMdError::Unclosed)
}

/// `parse_frontmatter` of skills-ref (with whole-line fences): the frontmatter as a mapping.
pub fn parse(text: &str) -> Result<Vec<(String, Value)>, SkillMdError> {
    let yaml = frontmatter(text)?;
    match strict_yaml::load(yaml) {
        Ok(Value::Map(entries)) => Ok(entries),
        Ok(_) => Err(SkillMdError::NotMapping),
        Err(StrictYamlError::Yaml(message)) => Err(SkillMdError::InvalidYaml(message)),
        Err(StrictYamlError::ControlChar { ch, line }) => {
            Err(SkillMdError::ControlChar { ch, line })
        }
        Err(StrictYamlError::Unsupported(why)) => Err(SkillMdError::Unsupported(why)),
    }
}

/// Looks a key up in a frontmatter mapping.
pub fn get<'a>(map: &'a [(String, Value)], key: &str) -> Option<&'a Value> {
    map.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

crate::support::error_code::coded_by_code!(DirError, SkillMdError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_are_whole_lines() {
        assert_eq!(
            frontmatter("---\nname: x\n---\nbody").unwrap(),
            "\nname: x\n"
        );
        assert_eq!(
            frontmatter("---  \na: b ---\n---   \n").unwrap(),
            "  \na: b ---\n"
        );
        assert!(matches!(
            frontmatter("---name: x\n---\n"),
            Err(SkillMdError::NoFrontmatter)
        ));
        assert!(matches!(
            frontmatter("----\n---\n"),
            Err(SkillMdError::NoFrontmatter)
        ));
        assert!(matches!(
            frontmatter("---\na: foo---\n"),
            Err(SkillMdError::Unclosed)
        ));
        assert!(matches!(
            frontmatter("\u{feff}---\n---\n"),
            Err(SkillMdError::NoFrontmatter)
        ));
        assert!(matches!(frontmatter(""), Err(SkillMdError::NoFrontmatter)));
    }

    #[test]
    fn universal_newlines() {
        assert_eq!(decode(b"a\r\nb\rc\n").unwrap(), "a\nb\nc\n");
        assert_eq!(decode(b"ab\xffc"), Err((0xff, 2)));
    }
}

#[cfg(test)]
#[path = "skill_file_tests.rs"]
mod boundary_tests;
