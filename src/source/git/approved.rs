//! The approved bundles of one Git source, as every command takes them from a fetched commit:
//! `prepare` (a pin), `outdated` and `update` (a candidate) run this one check, so a review can
//! never approve what `prepare` refuses (DESIGN §9, "the review path is the prepare path").
//!
//! Two halves. Before the fetch, [`SharedFetchKey`] says which sources may share one fetch — the same
//! URL, the same commit (or target) and the same `links` policy, since the policy decides what
//! the tree walk refuses — and [`wanted`] is what that fetch must bring: the approved folders of
//! every source that shares it, each under its own limits profile. After the fetch,
//! [`ApprovedSource::check`] refuses the source under its own `links` policy (a link inside or
//! above an approved folder) and lists what is skipped, and [`ApprovedSource::take`] takes each
//! approved bundle under the source's own limits.

use super::commit::{CommitError, PinnedCommit, SeenLink, TakeError, WantedBundles, bundle_folder};
use crate::descriptor::Links;
use crate::descriptor::plan::GitSource;
use crate::format::bundle::Bundle;
use crate::format::pin::Pin;

/// What sources must agree on to share one fetch: the URL, what is fetched (a pinned commit, a
/// tracked branch, a named target, as the caller spells it) and the `links` policy.
pub type SharedFetchKey<'a, T> = (&'a str, T, Links);

/// The key of `git` fetching `target`.
pub fn fetch_key<T>(git: &GitSource, target: T) -> SharedFetchKey<'_, T> {
    (git.url.as_str(), target, git.links)
}

/// What a fetch shared by `sharing` must bring: the approved folders of each of them, under
/// each one's limits profile (a folder two sources approve comes once per profile, and the
/// partial fetch asks for each blob once).
pub fn wanted<'a>(sharing: impl IntoIterator<Item = &'a GitSource>) -> WantedBundles<'static> {
    let mut folders: Vec<(String, crate::format::limits::Limits)> = Vec::new();
    for git in sharing {
        for pin in &git.approved {
            let folder = (bundle_folder(git.root.as_ref(), &pin.name), git.limits);
            if !folders.contains(&folder) {
                folders.push(folder);
            }
        }
    }
    WantedBundles::Folders(folders)
}

/// One source's view of a fetched commit, after the source-level checks passed.
pub struct ApprovedSource<'a> {
    commit: &'a PinnedCommit,
    git: &'a GitSource,
    /// The symbolic links outside the approved bundles (`links: outside-bundles`), skipped: at
    /// most [`super::tree::MAX_REPORTED`], and how many more there are.
    pub links: (Vec<SeenLink>, usize),
    /// The submodules outside the approved bundles, never followed: at most
    /// [`super::tree::MAX_REPORTED`], and how many more there are.
    pub gitlinks: (Vec<String>, usize),
}

impl<'a> ApprovedSource<'a> {
    /// Checks `commit` for `git` under `git`'s own `links` policy: under `refuse` any link in
    /// the tree refuses the source ([`CommitError::Symlinks`]); under `outside-bundles`, a link
    /// inside or above one of `git`'s approved folders does ([`CommitError::LinkInBundle`]).
    pub fn check(commit: &'a PinnedCommit, git: &'a GitSource) -> Result<Self, CommitError> {
        if git.links == Links::Refuse {
            // The fetch may have been shared under another policy: this source refuses any
            // link in the tree on its own.
            commit.refuse_links()?;
        }
        let folders = Self::folders(git);
        let links = commit.check_links(&folders)?;
        let gitlinks = commit.gitlinks_outside(&folders);
        Ok(ApprovedSource {
            commit,
            git,
            links,
            gitlinks,
        })
    }

    /// The folder of each approved bundle, in pin order.
    fn folders(git: &GitSource) -> Vec<String> {
        git.approved
            .iter()
            .map(|pin| bundle_folder(git.root.as_ref(), &pin.name))
            .collect()
    }

    /// Where the approved bundle `pin` is in the repository.
    pub fn folder(&self, pin: &Pin) -> String {
        bundle_folder(self.git.root.as_ref(), &pin.name)
    }

    /// The bundle in `pin`'s folder, checked against every bundle rule under the source's
    /// limits profile (its name is not compared with the pin's: see [`take_named`](Self::take_named)).
    pub fn take(&self, pin: &Pin) -> Result<Bundle, TakeError> {
        self.commit
            .take(self.git.root.as_ref(), &pin.name, self.git.limits)
    }

    /// [`take`](Self::take), refusing a bundle whose frontmatter names another bundle than
    /// `pin` (`name_mismatch`, as `prepare` would).
    pub fn take_named(&self, pin: &Pin) -> Result<Bundle, TakeError> {
        self.commit
            .take_named(self.git.root.as_ref(), &pin.name, self.git.limits)
    }
}
