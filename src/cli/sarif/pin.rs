//! The SARIF log of `pin --format sarif`: the bundles' findings and refusals at their folders in
//! the repository (the base [`REPO_ROOT`], the repository's root at the commit), or the refusal of
//! the whole commit at that root.

use crate::cli::exit::Exit;
use crate::format::root_path::RootPath;
use crate::format::sarif::{Entry, Log, Place};
use crate::ops::pin::{PinError, RefusedFolder};
use crate::source::git::commit::TakeError;

use super::{Format, REPO_ROOT, level, line_entry, repository, take_error};

/// What `pin` needs to make its log: whether to, and the repository it names.
#[derive(Debug, Clone, Copy)]
pub struct PinLog<'a> {
    /// `--format`.
    pub format: Format,
    /// `--source`.
    pub source: &'a str,
    /// `--root`.
    pub root: Option<&'a RootPath>,
}

impl PinLog<'_> {
    /// An empty log whose base is the repository at `commit`, when the format is `sarif`.
    fn log(&self, commit: &str) -> Option<Log> {
        (self.format == Format::Sarif).then(|| {
            let mut log = Log::new();
            repository(&mut log, REPO_ROOT, self.source, commit);
            log
        })
    }

    /// A pin refused as a whole (the ref, the fetch, the tree, the signature): its result at the
    /// repository's root, written; the exit status the write adds (none without `sarif`).
    pub fn refused(&self, commit: Option<&str>, e: &PinError) -> Exit {
        let Some(mut log) = self.log(commit.unwrap_or("the revision asked for")) else {
            return Exit::Ok;
        };
        let code = e.code();
        log.push(Entry::new(code, level(code), e.to_string()).at(Place::file(REPO_ROOT, "./")));
        super::print(&log)
    }

    /// The findings of the pinned bundles (their warnings).
    pub fn pinned(&self, commit: &str, bundles: &[crate::format::bundle::Bundle]) -> Option<Log> {
        let mut log = self.log(commit)?;
        for bundle in bundles {
            let folder = crate::source::git::commit::bundle_folder(self.root, bundle.name());
            log.problems(bundle.warnings(), REPO_ROOT, &folder);
        }
        Some(log)
    }

    /// The named bundles the commit cannot give.
    pub fn not_taken(&self, commit: &str, errors: &[TakeError]) -> Option<Log> {
        let mut log = self.log(commit)?;
        for e in errors {
            take_error(&mut log, e);
        }
        Some(log)
    }

    /// The folders `pin --all` refused, each problem at its place.
    pub fn refused_folders(&self, commit: &str, refused: &[RefusedFolder]) -> Option<Log> {
        let mut log = self.log(commit)?;
        for folder in refused {
            if folder.found.is_empty() {
                let place = Place::file(REPO_ROOT, format!("{}/", folder.folder));
                for line in &folder.problems {
                    log.push(line_entry(line, folder.code).at(place.clone()));
                }
            } else {
                log.problems(&folder.found, REPO_ROOT, &folder.folder);
            }
        }
        Some(log)
    }
}

/// Writes `log` when there is one; the exit status the write adds.
pub fn print(log: Option<&Log>) -> Exit {
    log.map_or(Exit::Ok, super::print)
}
