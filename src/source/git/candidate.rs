//! A candidate commit of a Git source: a commit other than its pin that `outdated` and `update`
//! weigh against the pin — the head of its tracked branch, a branch or tag the operator names,
//! or a full commit id. Names are resolved once from the server's ref listing; the commit is
//! fetched into a temporary repository exactly as `prepare` fetches a pin, so every check of
//! the tree applies. Nothing is written outside that directory, which is removed when the
//! [`Candidate`] is dropped; its failures are [`SourceError`]s.

use std::sync::atomic::AtomicBool;

use crate::descriptor::plan::GitSource;
use crate::format::pin::CommitId;
use crate::source::code::PrepareCode;
use crate::source::error::SourceError;
use crate::source::git::approved;
use crate::source::git::commit::PinnedCommit;
use crate::source::git::refs::{self, RefQuery};
use crate::support::escape;

/// Which commit to look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CandidateTarget {
    /// The head of the source's `track` branch, or the remote's `HEAD`.
    Tracked,
    /// A branch, else a tag, of that name (resolved once to a full id).
    Named(String),
    /// This commit.
    Commit(CommitId),
}

impl CandidateTarget {
    /// `--to`'s value: a full commit id, or a branch or tag name. Refused (with the reason)
    /// when it is neither, such as an abbreviated id or a name Git would refuse.
    // A `String`: the caller refuses the argument with it (one kind, `--to` invalid), only shown.
    pub fn parse(value: &str) -> Result<CandidateTarget, String> {
        let looks_like_id = value.len() >= 7 && value.bytes().all(|b| b.is_ascii_hexdigit());
        if looks_like_id {
            return CommitId::parse(value).map(CandidateTarget::Commit).map_err(|_| {
                format!(
                    "`{}` looks like an abbreviated commit id; give the full id (40 or 64 hex digits), a branch or a tag",
                    escape::text(value)
                )
            });
        }
        crate::descriptor::plan::check_branch(value)
            .map(|()| CandidateTarget::Named(value.to_owned()))
            .map_err(|why| {
                format!(
                    "`{}` is neither a full commit id nor a branch or tag name: {why}",
                    escape::text(value)
                )
            })
    }

    /// What is looked at for `git`, as shown: `HEAD`, `refs/heads/<track>`, the name, or the id.
    pub fn describe(&self, git: &GitSource) -> String {
        match self {
            CandidateTarget::Tracked => git
                .track
                .as_ref()
                .map_or_else(|| "HEAD".to_owned(), |b| format!("refs/heads/{b}")),
            CandidateTarget::Named(name) => escape::text(name).to_string(),
            CandidateTarget::Commit(id) => id.to_string(),
        }
    }
}

/// A candidate commit, fetched and walked.
pub struct Candidate {
    /// Its full id.
    pub id: CommitId,
    /// The ref that named it (absent for a commit named by id).
    pub reference: Option<String>,
    /// The fetched commit.
    pub commit: PinnedCommit,
    /// Removed when the candidate is dropped.
    _temp: tempfile::TempDir,
}

impl Candidate {
    /// Resolves `target` on `git`'s server and fetches that commit with the files of the
    /// approved bundles of every source in `sharing` (which holds `git`; see
    /// [`approved::wanted`]), under `git`'s `links` policy.
    pub fn fetch(
        git: &GitSource,
        target: &CandidateTarget,
        sharing: &[&GitSource],
        interrupt: &AtomicBool,
        deadline: std::time::Duration,
    ) -> Result<Candidate, SourceError> {
        let started = std::time::Instant::now();
        let temp = tempfile::tempdir().map_err(|e| {
            let message = format!("cannot create a temporary directory: {e}");
            SourceError::of(PrepareCode::IoError, &message)
        })?;
        let query = match target {
            CandidateTarget::Tracked => git
                .track
                .as_deref()
                .map_or(RefQuery::Head, RefQuery::Branch),
            CandidateTarget::Named(name) => RefQuery::BranchOrTag(name),
            CandidateTarget::Commit(id) => {
                let fetch = (git, sharing);
                return Self::fetch_commit(fetch, id.clone(), None, temp, interrupt, deadline);
            }
        };
        let (object, name) = refs::resolve_ref(
            &git.url,
            query,
            &temp.path().join("refs.git"),
            interrupt,
            deadline,
        )
        .map_err(|e| SourceError::from_error(&e))?;
        let id = CommitId::parse(&object.to_string())
            .map_err(|e| SourceError::of(PrepareCode::FetchInvalid, &e))?;
        // The listing and the fetch share one deadline.
        let left = deadline.saturating_sub(started.elapsed());
        Self::fetch_commit((git, sharing), id, Some(name), temp, interrupt, left)
    }

    fn fetch_commit(
        (git, sharing): (&GitSource, &[&GitSource]),
        id: CommitId,
        reference: Option<String>,
        temp: tempfile::TempDir,
        interrupt: &AtomicBool,
        deadline: std::time::Duration,
    ) -> Result<Candidate, SourceError> {
        // The approved bundles of the sources sharing the fetch are all that outdated and
        // update take from a candidate.
        let wanted = approved::wanted(sharing.iter().copied());
        let commit = PinnedCommit::fetch(
            &git.url,
            &id,
            &temp.path().join("commit.git"),
            (git.links, &wanted),
            interrupt,
            deadline,
            &|_| {},
        )
        .map_err(|e| SourceError::from_error(&e))?;
        Ok(Candidate {
            id,
            reference,
            commit,
            _temp: temp,
        })
    }
}
