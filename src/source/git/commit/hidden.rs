//! The hidden folders of a root that hold bundles (`skills/.curated`): what `pin --all` names in
//! its hint when it finds no bundle under the root, since only the folders directly under a root
//! are bundles and a hidden folder is searched only when the root names it.

use super::{CommitError, Descent, PinnedCommit, bundle_names, tree_entries};
use crate::format::root_path::RootPath;

/// The most hidden folders looked into.
const MAX_HIDDEN: usize = 16;

impl PinnedCommit {
    /// The hidden folders directly under `root` (the repository's root for `None`) that hold at
    /// least one bundle, each as a root (`skills/.curated`), sorted; at most [`MAX_HIDDEN`] are
    /// looked into.
    pub fn hidden_roots(&self, root: Option<&RootPath>) -> Result<Vec<String>, CommitError> {
        use gix::objs::tree::EntryKind;

        let repo = &self.fetched.repo;
        let folder = match root {
            None => self.summary.root,
            Some(root) => match self.descend(root.as_str())? {
                Descent::Tree(id, _) => id,
                Descent::Link(_) | Descent::Absent => return Ok(Vec::new()),
            },
        };
        let mut roots = Vec::new();
        let hidden = tree_entries(repo, folder)?
            .into_iter()
            .filter(|(name, kind, _)| name.first() == Some(&b'.') && *kind == EntryKind::Tree)
            .take(MAX_HIDDEN);
        for (name, _, _) in hidden {
            let Ok(name) = std::str::from_utf8(&name) else {
                continue;
            };
            let path = match root {
                Some(root) => format!("{root}/{name}"),
                None => name.to_owned(),
            };
            let Ok(candidate) = RootPath::parse(&path) else {
                continue;
            };
            if !bundle_names(repo, self.summary.root, Some(&candidate))?.is_empty() {
                roots.push(path);
            }
        }
        Ok(roots)
    }
}
