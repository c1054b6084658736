//! `update --write`: the new pins written into the descriptor in place.
//!
//! Only the `revision` (of an OCI source: the digest inside `reference`, its registry and
//! repository as written), `hash` and `version` scalars that change are rewritten
//! ([`crate::descriptor::edit`]); every other byte stays. Before anything is written the new
//! text is read back: it must parse and pass `check`, and mean exactly the old descriptor with
//! the new pins (compared field by field on the parsed descriptors), so a rewrite that would
//! change anything else is refused. The file is then replaced atomically — a new file beside it
//! with the old one's owner, group and permissions, written and fsynced, renamed over it, the folder fsynced —
//! and only if it still holds the text that was reviewed. A descriptor reached through a
//! symbolic link is rewritten where the link points, and the link stays.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::descriptor::edit::{self, Edit, EditError, GitSites};
use crate::descriptor::{self, Descriptor, PinSpec, SkillSource};
use crate::format::pin::{CommitId, Pin};
use crate::ops::pin::VERSION_PLACEHOLDER;
use crate::support::escape;

/// The new pins of one Git or OCI source.
#[derive(Debug, Clone)]
pub struct Change {
    /// Where the source is written (`skills[0].git`, `skills[1].oci`).
    pub location: String,
    /// The new commit or image.
    pub pinned: PinnedId,
    /// Its approved entries at the new commit or image, in the order written.
    pub pins: Vec<Pin>,
}

/// What a source pins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinnedId {
    /// A Git source's commit: its `revision`.
    Revision(CommitId),
    /// An OCI source's manifest digest: what follows the `@` of its `reference` (the registry
    /// and repository stay as written).
    Digest(String),
}

impl PinnedId {
    /// The value of the scalar that names what is pinned, which reads `old` now.
    fn value(&self, old: &str) -> String {
        match self {
            PinnedId::Revision(id) => id.to_string(),
            PinnedId::Digest(digest) => match old.rsplit_once('@') {
                Some((name, _)) => format!("{name}@{digest}"),
                None => format!("{old}@{digest}"),
            },
        }
    }
}

/// What the placeholders stand in as while the descriptor is checked: a label `check` accepts.
const STAND_IN: &str = "0";

/// Descriptor `text` with each `"<version>"` placeholder of `pin` replaced by a label `check`
/// accepts (so that the rest can be checked and updated), and where they were: the location of
/// the source and the entry's index.
pub fn stand_in(text: &str) -> (String, Vec<(String, usize)>) {
    let (Ok(mut sites), Ok(images)) = (edit::locate(text), edit::locate_images(text)) else {
        return (text.to_owned(), Vec::new());
    };
    sites.extend(images);
    let mut edits = Vec::new();
    let mut found = Vec::new();
    for source in &sites {
        for (i, pin) in source.approved.iter().enumerate() {
            if let Some(site) = pin
                .version
                .as_ref()
                .filter(|v| v.value == VERSION_PLACEHOLDER)
                && let Ok(edit) = site.replace(STAND_IN)
            {
                edits.push(edit);
                found.push((source.location.clone(), i));
            }
        }
    }
    match edit::apply(text, edits) {
        Ok(replaced) => (replaced, found),
        Err(_) => (text.to_owned(), Vec::new()),
    }
}

/// Why the descriptor was not rewritten.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RewriteError {
    /// A scalar that must change cannot be rewritten in place.
    #[error("`{}`: {error}", escape::path(.path))]
    Edit {
        /// The descriptor.
        path: PathBuf,
        /// The scalar and why.
        error: EditError,
    },
    /// The rewritten text would not mean the old descriptor with the new pins.
    #[error("`{}`: the rewritten descriptor would not read back as intended ({detail}); nothing was written", escape::path(.path))]
    ReadBack {
        /// The descriptor.
        path: PathBuf,
        /// What differed.
        detail: String,
    },
    /// The file changed after it was read.
    #[error("`{}` changed while it was being rewritten; nothing was written: run the command again", escape::path(.path))]
    Changed {
        /// The descriptor.
        path: PathBuf,
    },
    /// The new file could not be written.
    #[error("cannot write `{}`: {}", escape::path(.path), escape::text(&.source.to_string()))]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl RewriteError {
    /// Stable error code.
    pub fn code(&self) -> crate::support::error_code::ErrorCode {
        use crate::descriptor::code::DescriptorCode;
        use crate::source::code::PrepareCode;
        match self {
            RewriteError::Edit { .. } | RewriteError::ReadBack { .. } => {
                DescriptorCode::NotRewritable.into()
            }
            RewriteError::Changed { .. } | RewriteError::Write { .. } => {
                PrepareCode::IoError.into()
            }
        }
    }
}

/// `text` (the descriptor at `path`) with `changes` written in: each changed scalar replaced,
/// read back and compared. Returns the new text and how many scalars changed.
pub fn rewrite(
    path: &Path,
    text: &str,
    changes: &[Change],
) -> Result<(String, usize), RewriteError> {
    let edit_error = |error| RewriteError::Edit {
        path: path.to_owned(),
        error,
    };
    let read_back = |detail: String| RewriteError::ReadBack {
        path: path.to_owned(),
        detail,
    };
    let mut sites = edit::locate(text).map_err(edit_error)?;
    sites.extend(edit::locate_images(text).map_err(edit_error)?);
    let mut edits = Vec::new();
    for change in changes {
        let source = sites
            .iter()
            .find(|s| s.location == change.location)
            .ok_or_else(|| read_back(format!("no source at {}", change.location)))?;
        edits.extend(source_edits(source, change).map_err(edit_error)?);
    }
    let count = edits.len();
    let new_text = edit::apply(text, edits).map_err(edit_error)?;

    let parsed = |text: &str| {
        let (stood_in, _) = stand_in(text);
        descriptor::from_text(path, &stood_in)
    };
    let mut expected = parsed(text)
        .map_err(|e| read_back(e.to_string()))?
        .descriptor;
    for change in changes {
        let (pinned, approved) = spec_mut(&mut expected, &change.location)
            .ok_or_else(|| read_back(format!("no source at {}", change.location)))?;
        *pinned = change.pinned.value(pinned);
        for (entry, pin) in approved.iter_mut().zip(&change.pins) {
            entry.version = pin.version.as_str().to_owned();
            entry.hash = pin.hash.to_string();
        }
    }
    let loaded = parsed(&new_text).map_err(|e| read_back(e.to_string()))?;
    if loaded.descriptor != expected {
        return Err(read_back(
            "a value other than the pins would change".to_owned(),
        ));
    }
    crate::ops::check::check_loaded_for_review(loaded)
        .map_err(|e| read_back(e.lines().join("; ")))?;
    Ok((new_text, count))
}

/// The edits that make `source` hold `change`.
fn source_edits(source: &GitSites, change: &Change) -> Result<Vec<Edit>, EditError> {
    let missing = |what: &str| EditError {
        line: source.revision.as_ref().map_or(1, |r| r.line),
        message: format!("{} has no {what} written as a scalar", source.location),
    };
    let mut edits = Vec::new();
    let what = match change.pinned {
        PinnedId::Revision(_) => "revision",
        PinnedId::Digest(_) => "reference",
    };
    let revision = source.revision.as_ref().ok_or_else(|| missing(what))?;
    let value = change.pinned.value(&revision.value);
    if revision.value != value {
        edits.push(revision.replace(&value)?);
    }
    if source.approved.len() != change.pins.len() {
        return Err(missing("approved list of the expected length"));
    }
    for (sites, pin) in source.approved.iter().zip(&change.pins) {
        let hash = sites.hash.as_ref().ok_or_else(|| missing("hash"))?;
        if hash.value != pin.hash.to_string() {
            edits.push(hash.replace(&pin.hash.to_string())?);
        }
        let version = sites.version.as_ref().ok_or_else(|| missing("version"))?;
        if version.value != pin.version.as_str() {
            edits.push(version.replace(pin.version.as_str())?);
        }
    }
    Ok(edits)
}

/// The source written at `location` (as `check` names it): the value naming what it pins (a Git
/// source's `revision`, an OCI source's `reference`) and its approved entries.
fn spec_mut<'d>(
    descriptor: &'d mut Descriptor,
    location: &str,
) -> Option<(&'d mut String, &'d mut Vec<PinSpec>)> {
    let defaults = descriptor
        .skills
        .iter_mut()
        .enumerate()
        .map(|(i, s)| (format!("skills[{i}]"), s));
    let extras = descriptor.agents.iter_mut().flat_map(|(agent, spec)| {
        spec.skills
            .iter_mut()
            .enumerate()
            .map(move |(i, s)| (format!("agents.{agent}.skills[{i}]"), s))
    });
    defaults
        .chain(extras)
        .find_map(|(at, source)| match source {
            SkillSource::Git(spec) if location == format!("{at}.git") => {
                Some((&mut spec.revision, &mut spec.approved))
            }
            SkillSource::Oci(spec) if location == format!("{at}.oci") => {
                Some((&mut spec.reference, &mut spec.approved))
            }
            _ => None,
        })
}

/// Replaces the descriptor at `path` with `new_text`, provided it still holds `old_text`.
pub fn write(path: &Path, old_text: &str, new_text: &str) -> Result<(), RewriteError> {
    let failed = |path: &Path| {
        let path = path.to_owned();
        move |source| RewriteError::Write { path, source }
    };
    // Through a link, the file it points to is replaced and the link stays.
    let target = fs_err::canonicalize(path).map_err(failed(path))?;
    let folder = target.parent().unwrap_or(Path::new("/"));
    let current = descriptor::read_text(&target)
        .map_err(|e| std::io::Error::other(e.to_string()))
        .map_err(failed(&target))?;
    if current != old_text {
        return Err(RewriteError::Changed {
            path: path.to_owned(),
        });
    }
    let old = fs_err::metadata(&target).map_err(failed(&target))?;
    let mut file = tempfile::Builder::new()
        .prefix(".skillfold-update-")
        .tempfile_in(folder)
        .map_err(failed(folder))?;
    // The owner first: a change of owner clears the set-id bits the mode then sets.
    file.write_all(new_text.as_bytes())
        .and_then(|()| keep_owner(file.as_file(), &old))
        .and_then(|()| file.as_file().set_permissions(old.permissions()))
        .and_then(|()| file.as_file().sync_all())
        .map_err(failed(file.path()))?;
    file.persist(&target)
        .map_err(|e| e.error)
        .map_err(failed(&target))?;
    fs_err::File::open(folder)
        .and_then(|dir| dir.sync_all())
        .map_err(failed(folder))
}

/// Gives `file` the owner and group of the old descriptor (`old`) when they are not already
/// its own: a rewrite run as root leaves another user's descriptor theirs. A process that may not
/// give the file away gets the system's error, and nothing is replaced.
fn keep_owner(file: &std::fs::File, old: &std::fs::Metadata) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt as _;
    let new = file.metadata()?;
    if (new.uid(), new.gid()) == (old.uid(), old.gid()) {
        return Ok(());
    }
    std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()))
}

crate::support::error_code::coded_by_code!(RewriteError);
