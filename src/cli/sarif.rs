//! `--format sarif`: the choice of output of the commands that judge bundles and pins (`check`,
//! `pin`, `update`, `validate`, `verify --installed`), and what each command's refusals and
//! findings become in the [`Log`] of [`crate::format::sarif`]. The commands share it: the
//! descriptor's problems, a take error of a bundle, a line of the text output (`message [code]`)
//! and the bases their paths are relative to are turned into results here, once; a bundle
//! problem goes through [`Entry::of_problem`]. The log goes to stdout through the writer of every
//! JSON report (the same escaping), whatever the command's exit status: CI reads the findings
//! of a refusal too. The diagnostics stay on stderr.

use std::path::Path;

use crate::cli::exit::Exit;
use crate::format::sarif::{Base, Entry, Level, Log, Place};
use crate::ops::check::CheckError;
use crate::support::error_code::ErrorCode;
use crate::support::escape;

#[cfg(feature = "git")]
pub mod pin;
#[cfg(feature = "git")]
pub mod update;

/// What a command prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The human-readable output (the default).
    Text,
    /// The JSON report (as `--json`).
    Json,
    /// A SARIF 2.1.0 log of the findings and refusals.
    Sarif,
}

/// The `uriBaseId` of paths relative to the descriptor's folder.
pub const DESCRIPTOR_ROOT: &str = "DESCRIPTORROOT";
/// The `uriBaseId` of paths relative to the repository (or image) a source names.
#[cfg(feature = "git")]
pub const REPO_ROOT: &str = "REPOROOT";
/// The `uriBaseId` of paths relative to an agent's folder (`verify --installed`).
pub const INSTALL_ROOT: &str = "INSTALLROOT";
/// The `uriBaseId` of paths relative to the skill folder (`validate`).
pub const SKILL_ROOT: &str = "SKILLROOT";

/// `error` for a code that fails a command, `warning` for one that does not.
pub fn level(code: ErrorCode) -> Level {
    if crate::cli::exit::of(code) == Exit::Ok {
        Level::Warning
    } else {
        Level::Error
    }
}

/// A line of the text output, `message [code]`: a result with that code and level, the line
/// without the code as its message; `fallback`'s when the line ends with no code.
#[cfg(feature = "git")]
pub fn line_entry(line: &str, fallback: ErrorCode) -> Entry {
    let coded = line.strip_suffix(']').and_then(|rest| {
        let (message, code) = rest.rsplit_once(" [")?;
        let valid = !code.is_empty()
            && code
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        valid.then_some((message, code))
    });
    match coded {
        Some((message, code)) => {
            let level = crate::codes::registry()
                .into_iter()
                .find(|c| c.as_str() == code)
                .map_or(Level::Error, level);
            Entry::new(code, level, message)
        }
        None => Entry::new(fallback, level(fallback), line),
    }
}

/// Declares the descriptor's folder as [`DESCRIPTOR_ROOT`] and returns the descriptor's place
/// under it.
pub fn descriptor(log: &mut Log, path: &Path) -> Place {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    log.base(Base::folder(
        DESCRIPTOR_ROOT,
        dir,
        format!("the folder of the descriptor `{}`", escape::path(path)),
    ));
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    Place::file(DESCRIPTOR_ROOT, name)
}

/// Declares the repository `url` (redacted) at `revision` as the base `id`.
#[cfg(feature = "git")]
pub fn repository(log: &mut Log, id: &str, url: &str, revision: &str) {
    log.base(Base {
        id: id.to_owned(),
        uri: None,
        description: format!(
            "the root of `{}` at `{}`",
            crate::descriptor::redact::RedactedUrl::new(url).as_str(),
            escape::text(revision)
        ),
    });
}

/// The results of a descriptor that cannot be used: each problem at the descriptor, its
/// location in the file first in the message (a syntax error's line as the region).
pub fn check_error(log: &mut Log, path: &Path, e: &CheckError) {
    let place = descriptor(log, path);
    match e {
        CheckError::Problems { problems, .. } => {
            for p in problems {
                let message = format!("{}: {}", escape::text(&p.location), p.message);
                log.push(Entry::new(p.code, level(p.code.into()), message).at(place.clone()));
            }
        }
        CheckError::Load(load) => {
            let mut place = place;
            if let Some((line, column)) = position(load) {
                (place.line, place.column) = (Some(line), Some(column));
            }
            let code = ErrorCode::from(load.code());
            log.push(Entry::new(code, level(code), load.to_string()).at(place));
        }
    }
}

/// Where in the file a descriptor that does not parse goes wrong, when the parser said.
fn position(e: &crate::descriptor::DescriptorError) -> Option<(usize, usize)> {
    use crate::descriptor::DescriptorError;
    match e {
        DescriptorError::Syntax { error, .. } => error.at,
        DescriptorError::TooDeep { line, column, .. } => Some((*line, *column)),
        _ => None,
    }
}

/// The results of a bundle `git` could not take from a commit: its problems, or the refusal at
/// its folder under [`REPO_ROOT`].
#[cfg(feature = "git")]
pub fn take_error(log: &mut Log, e: &crate::source::git::commit::TakeError) {
    use crate::source::git::commit::TakeError;
    let folder = match e {
        TakeError::Missing { path, .. }
        | TakeError::Invalid { path, .. }
        | TakeError::NameMismatch { path, .. }
        | TakeError::Link { path, .. } => path.as_str(),
        TakeError::Tree(_) => ".",
    };
    let problems = crate::ops::target::take_problems(e);
    if problems.is_empty() {
        let code = e.code();
        let entry = Entry::new(code, level(code), e.to_string());
        log.push(entry.at(Place::file(REPO_ROOT, format!("{folder}/"))));
    } else {
        log.problems(problems, REPO_ROOT, folder);
    }
}

/// Writes the log on stdout; the exit status the write adds, as for every JSON report.
#[must_use = "a lost log makes the command retryable"]
pub fn print(log: &Log) -> Exit {
    crate::cli::output::print_json(&log.document(env!("CARGO_PKG_VERSION")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "git")]
    #[test]
    fn a_line_gives_its_code_level_and_message() {
        let fallback = ErrorCode::from(crate::source::code::PrepareCode::VerificationFailed);
        let e = line_entry("the hash differs [digest_mismatch]", fallback);
        assert_eq!(
            (e.rule.as_str(), e.level, e.message.as_str()),
            ("digest_mismatch", Level::Error, "the hash differs")
        );
        let w = line_entry("two paths [case_collision]", fallback);
        assert_eq!(w.level, Level::Warning);
        let plain = line_entry("no code here [Not A Code]", fallback);
        assert_eq!(plain.rule, "verification_failed");
        assert_eq!(plain.message, "no code here [Not A Code]");
    }
}
