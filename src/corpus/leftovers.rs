//! Removing what a preparation leaves in a corpus's store, never following a link: the
//! leftovers of an interrupted or crashed preparer ([`Corpus::remove_leftovers`], under the
//! guard) and this preparation's own scratch once it is done with it
//! ([`Corpus::remove_scratch`]: a staging that did not publish, a fetch's repository or
//! layers). Both reach the store's folders with `Corpus::open_own` and remove with
//! [`folders::remove_tree`]: a link in place of `staging/`, `fetch/` or `manifests/` is refused,
//! naming it, and one inside them is removed as a name.

use std::path::{Path, PathBuf};

use super::folders;
use super::store::{Corpus, CorpusError, is_staged_store, named_io, refused};

impl Corpus {
    /// Removes what an interrupted or crashed preparer left: staging and fetch folders, a link
    /// not yet flipped, and manifests of generations that were never moved into place.
    /// Call it with the guard held. Nothing is followed: a link in place of `staging/`,
    /// `fetch/` or `manifests/` is refused ([`CorpusError::NotManaged`], naming it), and one
    /// inside them is removed as a name.
    pub fn remove_leftovers(&self) -> Result<Vec<PathBuf>, CorpusError> {
        let mut removed = Vec::new();
        for sub in [c"staging", c"fetch"] {
            let path = self.meta().join(sub.to_string_lossy().as_ref());
            let folder = self.open_own(Some(sub))?;
            for name in folders::names(&folder).map_err(|e| named_io(&path, e))? {
                let at = path.join(name.to_string_lossy().as_ref());
                folders::remove_tree(&folder, &name).map_err(|e| named_io(&at, e))?;
                removed.push(at);
            }
        }
        // Stores another preparer was making when this one's rename came first. Removing one
        // that is still being made is harmless (its maker then finds this store and uses it),
        // but may fail while it is: a housekeeping failure, never this run's.
        let corpus = folders::open_below(&self.dir, &[]).map_err(|e| refused(&self.dir, e))?;
        for name in folders::names(&corpus).map_err(|e| named_io(&self.dir, e))? {
            if is_staged_store(name.to_bytes())
                && folders::stat_is_dir(&corpus, &name)
                && folders::remove_tree(&corpus, &name).is_ok()
            {
                removed.push(self.dir.join(name.to_string_lossy().as_ref()));
            }
        }
        for stale in ["current.next", "previous.tmp"] {
            let path = self.meta().join(stale);
            if fs_err::symlink_metadata(&path).is_ok() {
                fs_err::remove_file(&path)?;
                removed.push(path);
            }
        }
        let manifests_path = self.meta().join("manifests");
        let manifests = self.open_own(Some(c"manifests"))?;
        for name in folders::names(&manifests).map_err(|e| named_io(&manifests_path, e))? {
            let path = manifests_path.join(name.to_string_lossy().as_ref());
            let id = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let orphan =
                path.extension().is_none_or(|e| e != "json") || !self.generation_dir(&id).is_dir();
            if orphan {
                folders::remove_tree(&manifests, &name).map_err(|e| named_io(&path, e))?;
                removed.push(path);
            }
        }
        Ok(removed)
    }

    /// Removes `path`, a folder of `staging/` or `fetch/` this preparation made (a staging that
    /// did not publish, the scratch of a fetch), without following a link on the way; a path
    /// elsewhere is left alone and refused.
    pub fn remove_scratch(&self, path: &Path) -> Result<(), CorpusError> {
        let sub = [c"staging", c"fetch"]
            .into_iter()
            .find(|sub| path.parent() == Some(&self.meta().join(sub.to_string_lossy().as_ref())));
        let (Some(sub), Some(name)) = (sub, path.file_name()) else {
            return Err(CorpusError::NotManaged {
                path: path.to_owned(),
                reason: "it is not a folder of the store's staging or fetch".into(),
            });
        };
        let name =
            std::ffi::CString::new(name.as_encoded_bytes()).map_err(std::io::Error::other)?;
        let folder = self.open_own(Some(sub))?;
        folders::remove_tree(&folder, &name).map_err(|e| named_io(path, e))
    }
}
