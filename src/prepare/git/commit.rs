//! A fetched, policy-checked commit: the fetch, the whole-tree walk and the symlink refusal in
//! one place, and the approved bundles taken from it as checked [`Bundle`]s. `prepare` and `pin`
//! both go through here, so they apply exactly the same rules.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use super::fetch::{self, FetchError, FetchPath};
use super::tree::{self, Inventory, TreeError};
use crate::format::bundle::Bundle;
use crate::format::bundle_path::BundlePath;
use crate::format::pin::CommitId;
use crate::format::problem::Problems;
use crate::format::skill_name::SkillName;

/// A commit whose whole tree passed the policy walk.
pub struct PinnedCommit {
    fetched: fetch::Fetched,
    inventory: Inventory,
}

/// Why a commit cannot be used as a source.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommitError {
    /// The fetch failed.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The object database could not be read, or the id is not a commit.
    #[error(transparent)]
    Tree(#[from] TreeError),
    /// The tree holds symbolic links.
    #[error("commit {commit} holds {} symbolic link(s); a source with links anywhere in its tree is refused", .paths.len())]
    Symlinks {
        /// The commit.
        commit: CommitId,
        /// Every link, by path.
        paths: Vec<String>,
    },
}

impl CommitError {
    /// Stable error code.
    pub fn code(&self) -> crate::prepare::code::PrepareCode {
        use crate::prepare::code::PrepareCode;
        match self {
            CommitError::Fetch(e) => e.code(),
            CommitError::Tree(e) => e.code(),
            CommitError::Symlinks { .. } => PrepareCode::SymlinkInTree,
        }
    }

    /// Whether running again later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, CommitError::Fetch(e) if e.is_retryable())
    }
}

/// Why an approved bundle cannot be taken from the commit.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TakeError {
    /// No `root/name/` folder in the tree.
    #[error("approved bundle `{name}` is not in the commit (no folder `{path}`)")]
    Missing {
        /// The name.
        name: SkillName,
        /// The folder looked for.
        path: String,
    },
    /// The bundle breaks the bundle rules.
    #[error("`{path}` breaks the bundle rules")]
    Invalid {
        /// The folder.
        path: String,
        /// Every problem.
        problems: Problems,
    },
    /// The object database could not be read.
    #[error(transparent)]
    Tree(#[from] TreeError),
}

impl TakeError {
    /// Stable error code.
    pub fn code(&self) -> crate::format::code::ErrorCode {
        use crate::prepare::code::PrepareCode;
        match self {
            TakeError::Missing { .. } => PrepareCode::BundleMissing.into(),
            TakeError::Invalid { .. } => crate::format::codes::ReadCode::InvalidBundle.into(),
            TakeError::Tree(e) => e.code().into(),
        }
    }

    /// Every problem as one line each (for reports).
    pub fn lines(&self) -> Vec<String> {
        match self {
            TakeError::Invalid { path, problems } => problems
                .as_slice()
                .iter()
                .filter(|p| p.is_error())
                .map(|p| p.display_under(path).to_string())
                .collect(),
            other => vec![format!("{other} [{}]", other.code())],
        }
    }
}

impl PinnedCommit {
    /// Fetches `revision` from `url` into a new bare repository at `git_dir`, walks its whole
    /// tree and refuses it if any entry is a symbolic link.
    pub fn fetch(
        url: &str,
        revision: &CommitId,
        git_dir: &Path,
        interrupt: &AtomicBool,
        report: fetch::Report<'_>,
    ) -> Result<PinnedCommit, CommitError> {
        let fetched = fetch::fetch_commit(url, revision, git_dir, interrupt, report)?;
        let inventory = tree::inventory(&fetched.repo, fetched.commit)?;
        if !inventory.symlinks.is_empty() {
            return Err(CommitError::Symlinks {
                commit: revision.clone(),
                paths: inventory.symlinks.iter().map(ToString::to_string).collect(),
            });
        }
        Ok(PinnedCommit { fetched, inventory })
    }

    /// Whether the server refused the id and branches and tags were fetched instead.
    pub fn used_fallback(&self) -> bool {
        self.fetched.path == FetchPath::BranchesAndTags
    }

    /// Gitlinks outside every folder in `inside` (reported, never followed).
    pub fn gitlinks_outside(&self, inside: &[String]) -> Vec<String> {
        self.inventory
            .gitlinks
            .iter()
            .map(ToString::to_string)
            .filter(|g| !inside.iter().any(|dir| g.starts_with(&format!("{dir}/"))))
            .collect()
    }

    /// The approved bundle `name` under `root`, checked against every bundle rule.
    pub fn take(&self, root: Option<&BundlePath>, name: &SkillName) -> Result<Bundle, TakeError> {
        let path = bundle_folder(root, name);
        let Some((files, problems)) =
            tree::select_bundle(&self.fetched.repo, &self.inventory, root, name)?
        else {
            return Err(TakeError::Missing {
                name: name.clone(),
                path,
            });
        };
        Bundle::check(files, problems).map_err(|invalid| TakeError::Invalid {
            path,
            problems: invalid.problems,
        })
    }
}

/// The folder of bundle `name` in the repository.
pub fn bundle_folder(root: Option<&BundlePath>, name: &SkillName) -> String {
    match root {
        Some(root) => format!("{root}/{name}"),
        None => name.to_string(),
    }
}
