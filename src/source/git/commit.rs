//! A fetched, policy-checked commit: the fetch, the whole-tree walk and the symlink refusal in
//! one place, and the approved bundles taken from it as checked [`Bundle`]s. `prepare` and `pin`
//! both go through here, so they apply exactly the same rules.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use super::fetch::{self, FetchPath};
use super::fetch_error::FetchError;
use super::tree::{self, Summary, TreeError};
use super::{partial, select};
use crate::descriptor::Links;
use crate::format::bundle::Bundle;
use crate::format::limits::Limits;
use crate::format::pin::CommitId;
use crate::format::problem::Problems;
use crate::format::root_path::RootPath;
use crate::format::skill_name::SkillName;
use crate::trust::commit::policy::{Signer, TrustPolicy};
use crate::trust::commit::{SignatureError, verify_commit_object};
use gix::bstr::BString;
mod hidden;

/// The bundles whose files a fetch brings. A partial fetch asks the server for their blobs
/// alone (and for those of the symbolic links it reports, under `links: outside-bundles`): only
/// these bundles can be taken from the commit afterwards.
#[derive(Debug, Clone)]
pub enum WantedBundles<'a> {
    /// These folders (see [`bundle_folder`]), each under its limits profile.
    Folders(Vec<(String, Limits)>),
    /// Every folder [`PinnedCommit::bundle_names`] lists under `root`, under `limits`, when
    /// there are at most `max` of them (none otherwise).
    All {
        /// The root path.
        root: Option<&'a RootPath>,
        /// The limits profile of every bundle.
        limits: Limits,
        /// The most folders worth fetching.
        max: usize,
    },
}

/// A commit whose whole tree passed the policy walk. A clone is another handle on the same
/// object database (with object caches of its own), for another thread.
#[derive(Clone)]
pub struct PinnedCommit {
    fetched: fetch::FetchedCommit,
    summary: Summary,
    /// The links policy it was fetched under: with `outside-bundles` the tree may hold links,
    /// and every bundle taken is checked for one inside or above it.
    links: Links,
}

/// A symbolic link a commit holds outside its approved bundles (`links: outside-bundles`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SeenLink {
    /// Its path in the repository, escaped for display.
    pub path: String,
    /// What it points to, escaped for display.
    pub target: String,
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
    #[error(
        "commit {commit} holds {count} symbolic link(s){}; a source with links anywhere in its tree is refused",
        listed(*.count, .paths.len())
    )]
    Symlinks {
        /// The commit.
        commit: CommitId,
        /// The first links found (at most [`tree::MAX_REPORTED`]), by path, escaped for display.
        paths: Vec<String>,
        /// How many links the tree holds (a link in a subtree named twice counts once).
        count: usize,
    },
    /// Under `links: outside-bundles`, a symbolic link inside an approved bundle or as a
    /// folder on the path to one.
    #[error(
        "commit {commit} holds a symbolic link at `{path}`, inside or above the approved folder \
         `{folder}`; `links: outside-bundles` accepts links only outside the approved bundles"
    )]
    LinkInBundle {
        /// The commit.
        commit: CommitId,
        /// The link, escaped for display.
        path: String,
        /// The approved folder, escaped for display.
        folder: String,
    },
    /// The commit's signature is refused by the source's trust policy.
    #[error(transparent)]
    Signature(#[from] SignatureError),
}

impl CommitError {
    /// Stable error code.
    pub fn code(&self) -> crate::source::code::PrepareCode {
        use crate::source::code::PrepareCode;
        match self {
            CommitError::Fetch(e) => e.code(),
            CommitError::Tree(e) => e.code(),
            CommitError::Symlinks { .. } | CommitError::LinkInBundle { .. } => {
                PrepareCode::SymlinkInTree
            }
            CommitError::Signature(e) => e.code(),
        }
    }
}

crate::support::error_code::coded_by_code!(CommitError, TakeError);

/// ` (N listed)` when not every path is listed.
fn listed(count: usize, shown: usize) -> String {
    if count > shown {
        format!(" ({shown} listed)")
    } else {
        String::new()
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
    /// The bundle's frontmatter names another bundle than its folder (see
    /// [`PinnedCommit::take_named`]).
    #[error("`{path}/SKILL.md` names the bundle `{found}`, not `{name}`, the name of its folder")]
    NameMismatch {
        /// The name of the folder.
        name: SkillName,
        /// The folder.
        path: String,
        /// The frontmatter `name`.
        found: SkillName,
    },
    /// Under `links: outside-bundles`, a symbolic link inside the bundle or above it.
    #[error("`{path}` holds a symbolic link, or is reached through one: `{link}`")]
    Link {
        /// The folder.
        path: String,
        /// The link, escaped for display.
        link: String,
    },
    /// The object database could not be read.
    #[error(transparent)]
    Tree(#[from] TreeError),
}

impl TakeError {
    /// Stable error code.
    pub fn code(&self) -> crate::support::error_code::ErrorCode {
        use crate::source::code::PrepareCode;
        match self {
            TakeError::Missing { .. } => PrepareCode::BundleMissing.into(),
            TakeError::Invalid { .. } => crate::format::code::ReadCode::InvalidBundle.into(),
            TakeError::NameMismatch { .. } => crate::format::code::PinCode::NameMismatch.into(),
            TakeError::Link { .. } => PrepareCode::SymlinkInTree.into(),
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
    /// tree (see [`tree::walk`]) and, under `links: refuse`, refuses it if any entry is a
    /// symbolic link. Under `outside-bundles` links are kept for [`check_links`](Self::check_links)
    /// and every [`take`](Self::take) refuses a bundle with a link inside or above it.
    pub fn fetch(
        url: &str,
        revision: &CommitId,
        git_dir: &Path,
        wanted: (Links, &WantedBundles<'_>),
        interrupt: &AtomicBool,
        deadline: std::time::Duration,
        report: fetch::Report<'_>,
    ) -> Result<PinnedCommit, CommitError> {
        Self::fetch_laid_out(
            url,
            revision,
            git_dir,
            wanted,
            (interrupt, deadline),
            report,
            &mut |_| {},
        )
    }

    /// [`fetch`](Self::fetch), telling `laid_out` where the files of the wanted bundles go as
    /// soon as the trees are walked, when their blobs are still to be fetched (a partial fetch):
    /// what needs only their paths can be done while the server sends the files. A whole-commit
    /// fetch has every blob by then, and does not call it.
    pub fn fetch_laid_out(
        url: &str,
        revision: &CommitId,
        git_dir: &Path,
        (links, wanted): (Links, &WantedBundles<'_>),
        (interrupt, deadline): (&AtomicBool, std::time::Duration),
        report: fetch::Report<'_>,
        laid_out: &mut dyn FnMut(Layout),
    ) -> Result<PinnedCommit, CommitError> {
        let mut walked = None;
        let fetched = fetch::fetch_commit(
            url,
            revision,
            git_dir,
            interrupt,
            deadline,
            report,
            &mut |repo, commit, blobs_follow| {
                let summary = tree::walk(repo, commit, interrupt)?;
                if links == Links::Refuse
                    && let Err(refused) = refuse_links(revision, &summary)
                {
                    return Err(refused);
                }
                let (request, layout) = blob_request(repo, commit, &summary, wanted)?;
                if blobs_follow {
                    laid_out(layout);
                }
                walked = Some(summary);
                Ok(request)
            },
        )?;
        let summary = walked.expect("a fetch selects its blobs once it has the trees");
        Ok(PinnedCommit {
            fetched,
            summary,
            links,
        })
    }

    /// Refuses the commit if its tree holds a symbolic link anywhere (what `links: refuse`
    /// asks of a source, whichever policy the commit was fetched under).
    pub fn refuse_links(&self) -> Result<(), CommitError> {
        let id = CommitId::parse(&self.fetched.commit.to_string()).expect("a fetched commit id");
        refuse_links(&id, &self.summary)
    }

    /// Why the whole commit was fetched by id rather than its trees and the wanted blobs, if
    /// it was (see [`fetch::Full`]).
    pub fn fetched_whole(&self) -> Option<&fetch::Full> {
        self.fetched.full.as_ref()
    }

    /// Under `links: outside-bundles`, refuses the commit if a symbolic link is inside one of
    /// the approved `folders` or is a folder on the path to one ([`CommitError::LinkInBundle`]);
    /// otherwise returns the links it holds (all outside the approved bundles, skipped), at most
    /// [`tree::MAX_REPORTED`], and how many more there are. Under `refuse` the commit holds none.
    pub fn check_links(&self, folders: &[String]) -> Result<(Vec<SeenLink>, usize), CommitError> {
        for folder in folders {
            if let Some(path) = self.link_in_folder(folder, usize::MAX)? {
                return Err(self.link_in_bundle(&path, folder));
            }
        }
        let found = &self.summary.symlinks;
        let seen = found
            .paths
            .iter()
            .zip(&found.ids)
            .map(|(path, id)| SeenLink {
                path: tree::shown(path),
                target: self.link_target(*id),
            })
            .collect();
        Ok((seen, found.count - found.paths.len()))
    }

    /// Refuses the commit if a folder on the path to `folder` (or `folder` itself) is a
    /// symbolic link ([`CommitError::LinkInBundle`]); what is below it is not looked at.
    pub fn check_path(&self, folder: &str) -> Result<(), CommitError> {
        if self.summary.symlinks.count == 0 {
            return Ok(());
        }
        match self.descend(folder)? {
            Descent::Link(path) => Err(self.link_in_bundle(&path, folder)),
            Descent::Tree(..) | Descent::Absent => Ok(()),
        }
    }

    fn link_in_bundle(&self, path: &[u8], folder: &str) -> CommitError {
        CommitError::LinkInBundle {
            commit: CommitId::parse(&self.fetched.commit.to_string()).expect("a fetched commit id"),
            path: tree::shown(path),
            folder: crate::support::escape::text(folder).to_string(),
        }
    }

    /// Follows `folder` from the root tree, segment by segment.
    fn descend(&self, folder: &str) -> Result<Descent, TreeError> {
        use gix::objs::tree::EntryKind;

        let mut tree = self.summary.root;
        let mut path = BString::default();
        for segment in folder.split('/') {
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(segment.as_bytes());
            match self
                .entries(tree)?
                .into_iter()
                .find(|(name, _, _)| name == segment.as_bytes())
            {
                Some((_, EntryKind::Link, _)) => return Ok(Descent::Link(path)),
                Some((_, EntryKind::Tree, id)) => tree = id,
                // Missing, or not a folder: taking the bundle says so.
                _ => return Ok(Descent::Absent),
            }
        }
        Ok(Descent::Tree(tree, path))
    }

    /// The first symbolic link on the path to `folder` or anywhere below it, if the commit
    /// holds links at all. Each distinct tree below the folder is read once, so a subtree named
    /// under many paths costs what it costs once (the whole-tree walk bounded them all); the
    /// search stops with `None` after `budget` entries (a bundle that large is refused by its
    /// own bounds when it is taken).
    fn link_in_folder(&self, folder: &str, budget: usize) -> Result<Option<BString>, TreeError> {
        use gix::objs::tree::EntryKind;

        if self.summary.symlinks.count == 0 {
            return Ok(None);
        }
        let (tree, mut path) = match self.descend(folder)? {
            Descent::Link(path) => return Ok(Some(path)),
            Descent::Absent => return Ok(None),
            Descent::Tree(tree, path) => (tree, path),
        };
        struct LinkSearchFrame {
            entries: Vec<(BString, EntryKind, gix::ObjectId)>,
            next: usize,
            path_len: usize,
        }
        let mut seen = std::collections::HashSet::from([tree]);
        let mut stack = vec![LinkSearchFrame {
            entries: self.entries(tree)?,
            next: 0,
            path_len: path.len(),
        }];
        let mut read = stack[0].entries.len();
        while let Some(top) = stack.last_mut() {
            let Some((name, kind, id)) = top.entries.get(top.next).cloned() else {
                stack.pop();
                continue;
            };
            top.next += 1;
            path.truncate(top.path_len);
            path.push(b'/');
            path.extend_from_slice(&name);
            match kind {
                EntryKind::Link => return Ok(Some(path)),
                EntryKind::Tree if seen.insert(id) => {
                    if read > budget {
                        return Ok(None);
                    }
                    let entries = self.entries(id)?;
                    read += entries.len();
                    stack.push(LinkSearchFrame {
                        entries,
                        next: 0,
                        path_len: path.len(),
                    });
                }
                _ => {}
            }
        }
        Ok(None)
    }

    /// The entries of tree `id` (see [`tree_entries`]).
    fn entries(&self, id: gix::ObjectId) -> Result<Vec<TreeEntry>, TreeError> {
        tree_entries(&self.fetched.repo, id)
    }

    /// The target of the link whose blob is `id`, escaped; a blob longer than any path is not
    /// read.
    fn link_target(&self, id: gix::ObjectId) -> String {
        let repo = &self.fetched.repo;
        match repo.find_header(id) {
            Ok(header) if header.size() <= tree::MAX_PATH_BYTES as u64 => {
                match repo.find_object(id) {
                    Ok(object) => crate::support::escape::bytes(&object.data).to_string(),
                    Err(_) => "(unreadable)".to_owned(),
                }
            }
            Ok(header) => format!("(a target of {} bytes, not read)", header.size()),
            Err(_) => "(unreadable)".to_owned(),
        }
    }

    /// The id of the tree at `folder` (what other tools record as a skill folder's hash), when
    /// the commit holds a folder there.
    pub fn folder_tree(&self, folder: &str) -> Option<String> {
        match self.descend(folder) {
            Ok(Descent::Tree(id, _)) => Some(id.to_string()),
            _ => None,
        }
    }

    /// The names of the folders directly under `root` that hold a `SKILL.md` file: the bundles
    /// the commit offers, approved or not, sorted.
    pub fn bundle_names(&self, root: Option<&RootPath>) -> Result<Vec<String>, CommitError> {
        bundle_names(&self.fetched.repo, self.summary.root, root)
    }

    /// The raw commit object (without the `commit <len>\0` prefix).
    pub fn commit_object(&self) -> Result<Vec<u8>, CommitError> {
        let id = self.fetched.commit;
        let object = self
            .fetched
            .repo
            .find_object(id)
            .map_err(|e| tree::object_error(id, &e))?;
        Ok(object.data.clone())
    }

    /// Checks the commit's signature against `policy`: the `gpgsig` header over the commit
    /// object without its signature headers, as Git reads it (see
    /// [`SignedCommit::parse`](crate::trust::commit::SignedCommit::parse)).
    pub fn verify_signature(&self, policy: &TrustPolicy) -> Result<Signer, CommitError> {
        let object = self.commit_object()?;
        let id = self.fetched.commit.to_string();
        Ok(verify_commit_object(&id, &object, policy)?)
    }

    /// Whether the server refused the id and branches and tags were fetched instead.
    pub fn used_fallback(&self) -> bool {
        self.fetched.path == FetchPath::BranchesAndTags
    }

    /// Gitlinks outside every folder in `inside` (reported, never followed), escaped for
    /// display, and how many more the tree holds that are not listed. Each is found once, under
    /// the first path that reached it; at most [`tree::MAX_REPORTED`] are listed.
    pub fn gitlinks_outside(&self, inside: &[String]) -> (Vec<String>, usize) {
        let found = &self.summary.gitlinks;
        let outside = found
            .paths
            .iter()
            .filter(|g| {
                !inside
                    .iter()
                    .any(|dir| g.starts_with(dir.as_bytes()) && g.get(dir.len()) == Some(&b'/'))
            })
            .map(|g| tree::shown(g))
            .collect();
        (outside, found.count - found.paths.len())
    }

    /// The approved bundle `name` under `root`, checked against every bundle rule under the
    /// bounds of `limits`.
    pub fn take(
        &self,
        root: Option<&RootPath>,
        name: &SkillName,
        limits: Limits,
    ) -> Result<Bundle, TakeError> {
        let path = bundle_folder(root, name);
        // Bounded like the bundle: past its entries the search stops, and selecting the bundle
        // refuses it for its size (a link it did not reach is refused there too).
        if self.links == Links::OutsideBundles
            && let Some(link) = self.link_in_folder(&path, limits.entries())?
        {
            return Err(TakeError::Link {
                path,
                link: tree::shown(&link),
            });
        }
        let Some((files, problems)) = select::select_bundle(
            &self.fetched.repo,
            self.fetched.commit,
            self.summary.root,
            &path,
            limits,
        )?
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

    /// [`take`](Self::take), refusing a bundle whose frontmatter `name` is not `name`: a pin
    /// names the folder, and `prepare` would refuse the bundle it finds there
    /// (`name_mismatch`).
    pub fn take_named(
        &self,
        root: Option<&RootPath>,
        name: &SkillName,
        limits: Limits,
    ) -> Result<Bundle, TakeError> {
        let bundle = self.take(root, name, limits)?;
        if bundle.name() != name {
            return Err(TakeError::NameMismatch {
                name: name.clone(),
                path: bundle_folder(root, name),
                found: bundle.name().clone(),
            });
        }
        Ok(bundle)
    }
}

/// [`CommitError::Symlinks`] when the walk of `commit` (`summary`) found a symbolic link.
fn refuse_links(commit: &CommitId, summary: &Summary) -> Result<(), CommitError> {
    if summary.symlinks.count == 0 {
        return Ok(());
    }
    Err(CommitError::Symlinks {
        commit: commit.clone(),
        paths: summary
            .symlinks
            .paths
            .iter()
            .map(|p| tree::shown(p))
            .collect(),
        count: summary.symlinks.count,
    })
}

/// Where a folder's path leads in a tree.
enum Descent {
    /// Through (or to) a symbolic link, at this path.
    Link(BString),
    /// To a tree: its id and path.
    Tree(gix::ObjectId, BString),
    /// Nowhere: a segment is missing or a file.
    Absent,
}

/// One entry of a tree: its name (the bytes the tree holds), kind and object.
type TreeEntry = (BString, gix::objs::tree::EntryKind, gix::ObjectId);

/// The entries of tree `id` in `repo`, in the tree's order.
fn tree_entries(repo: &gix::Repository, id: gix::ObjectId) -> Result<Vec<TreeEntry>, TreeError> {
    let object = repo
        .find_object(id)
        .map_err(|e| tree::object_error(id, &e))?;
    gix::objs::TreeRefIter::from_bytes(&object.data, repo.object_hash())
        .map(|entry| {
            let entry = entry.map_err(|e| tree::object_error(id, &e))?;
            Ok((
                entry.filename.to_owned(),
                entry.mode.kind(),
                entry.oid.to_owned(),
            ))
        })
        .collect()
}

/// Where the files of the bundles a fetch wants go, from the commit's trees: by each bundle's
/// folder in the repository, its files relative to that folder (see
/// [`PinnedCommit::fetch_laid_out`]).
pub type Layout = std::collections::HashMap<String, Vec<String>>;

/// The folder of bundle `name` in the repository.
pub fn bundle_folder(root: Option<&RootPath>, name: &SkillName) -> String {
    match root {
        Some(root) => format!("{root}/{name}"),
        None => name.to_string(),
    }
}

/// The folders directly under `root` of the commit's root `tree` that hold a `SKILL.md` file
/// (see [`PinnedCommit::bundle_names`]).
fn bundle_names(
    repo: &gix::Repository,
    tree: gix::ObjectId,
    root: Option<&RootPath>,
) -> Result<Vec<String>, CommitError> {
    use gix::objs::tree::EntryKind;

    // Names are matched as the bytes the tree holds: a lossy reading would take `sk\x80` for
    // the root `sk\u{fffd}`.
    let entries = |id: gix::ObjectId| tree_entries(repo, id);
    let mut folder = tree;
    for segment in root.into_iter().flat_map(RootPath::segments) {
        match entries(folder)?
            .into_iter()
            .find(|(name, kind, _)| name == segment.as_bytes() && *kind == EntryKind::Tree)
        {
            Some((_, _, id)) => folder = id,
            None => return Ok(Vec::new()),
        }
    }
    let mut names = Vec::new();
    for (name, kind, id) in entries(folder)? {
        if kind == EntryKind::Tree
            && entries(id)?.iter().any(|(file, kind, _)| {
                file == crate::format::limits::SKILL_MD.as_bytes()
                    && matches!(kind, EntryKind::Blob | EntryKind::BlobExecutable)
            })
        {
            // A name that is not UTF-8 is no skill name: it is only shown.
            names.push(String::from_utf8_lossy(&name).into_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// The blobs a partial fetch asks for, once the trees of `commit` passed the walk (`summary`):
/// those [`select::select_bundle`] reads for each wanted bundle under its limits, and the
/// targets of the symbolic links the walk reports. Their bounds: no object larger than the
/// largest file any of the limits allows (a link target is at most a path), no more bytes than
/// every bundle's total and every reported target together.
fn blob_request(
    repo: &gix::Repository,
    commit: gix::ObjectId,
    summary: &Summary,
    wanted: &WantedBundles<'_>,
) -> Result<(partial::BlobRequest, Layout), CommitError> {
    let folders = match wanted {
        WantedBundles::Folders(folders) => folders.clone(),
        WantedBundles::All { root, limits, max } => {
            let names = bundle_names(repo, summary.root, *root)?;
            if names.len() > *max {
                Vec::new()
            } else {
                names
                    .into_iter()
                    .map(|name| match root {
                        Some(root) => (format!("{root}/{name}"), *limits),
                        None => (name, *limits),
                    })
                    .collect()
            }
        }
    };
    let mut seen = std::collections::HashSet::new();
    let mut request = partial::BlobRequest::default();
    let mut layout = Layout::with_capacity(folders.len());
    for (folder, limits) in &folders {
        let wanted = select::wanted_blobs(repo, commit, summary.root, folder, *limits)?;
        for id in wanted.blobs {
            if seen.insert(id) {
                request.ids.push(id);
            }
        }
        layout.insert(folder.clone(), wanted.files);
        request.object_bytes = request
            .object_bytes
            .max(limits.skill_md_bytes())
            .max(limits.file_bytes());
        request.total_bytes = request.total_bytes.saturating_add(limits.bundle_bytes());
    }
    for id in &summary.symlinks.ids {
        if seen.insert(*id) {
            request.ids.push(*id);
            request.object_bytes = request.object_bytes.max(tree::MAX_PATH_BYTES as u64);
            request.total_bytes = request
                .total_bytes
                .saturating_add(tree::MAX_PATH_BYTES as u64);
        }
    }
    Ok((request, layout))
}
