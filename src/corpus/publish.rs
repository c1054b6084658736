//! Publishing staged generations, and rolling back. The steps and their order are the same for
//! one corpus and for the many corpora of one commit: the staged bytes are made durable, the
//! manifest is written, the generation moved into `generations/`, the generation it replaces
//! recorded as `previous`, `current` flipped with one `rename(2)`, and generations no longer
//! needed removed. A crash between any two steps leaves `current` on a complete, verified
//! generation.
//!
//! What differs is how a step is made durable before the next one begins ([`Durability`]).
//! One corpus fsyncs each file and folder a step changes (a `syncfs` for the staged files, then
//! five `fsync`s). The corpora published together ([`publish_together`]) share one `syncfs` per
//! file system after each phase instead — three in all for any number of corpora, where one at a
//! time would take one `syncfs` and five `fsync`s each: each `syncfs` writes what every corpus
//! of the phase changed, and no corpus starts the next step before it returns.

use super::Manifest;
#[cfg(any(feature = "git", test))]
use super::durable::sync_file_system;
use super::durable::{OpenedFolder, sync_file_systems};
use super::store::{CURRENT, Corpus, CorpusError, Generation, Staging, sync_dir, write_new};
use crate::support::failpoint;

/// How a publication step makes what it changed durable before it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Durability {
    /// It fsyncs each file and folder it changed (one corpus at a time).
    EachStep,
    /// It leaves that to its caller, which syncs each file system once for every corpus of the
    /// step ([`publish_together`]).
    SharedSync,
}

/// A staged generation placed in `generations/` with its manifest, not yet `current`.
#[derive(Debug)]
struct Placed {
    generation: Generation,
    /// The generation `current` pointed to when it was placed (recorded as `previous`).
    replaced: Option<String>,
}

/// One corpus's part in [`publish_together`]: its staged generation, verified by the caller,
/// and the manifest to publish it with.
#[derive(Debug)]
pub struct Publication<'a> {
    /// The corpus, whose guard the caller holds.
    pub corpus: &'a Corpus,
    /// Its staged generation.
    pub staging: &'a Staging,
    /// Its manifest (the generation id is filled in).
    pub manifest: Manifest,
}

impl Corpus {
    /// Publishes a staged generation whose bundles the caller has verified: makes its files
    /// durable, writes its manifest, moves it into `generations/`, records the generation it
    /// replaces, flips `current` with one rename, and removes generations no longer needed.
    pub fn publish(
        &self,
        staging: &Staging,
        manifest: &Manifest,
    ) -> Result<Generation, CorpusError> {
        // Every staged file and directory is on disk before anything refers to them.
        staging.opened.sync()?;
        failpoint::hit("staged");
        let placed = self.place(staging, manifest, Durability::EachStep)?;
        self.flip_current(&placed.generation.id, Durability::EachStep)?;
        self.finish(&placed);
        Ok(placed.generation)
    }

    /// Points `current` at the previous generation (which becomes the new "previous" in turn).
    pub fn rollback(&self) -> Result<Generation, CorpusError> {
        let Some(previous) = self.previous()? else {
            return Err(CorpusError::NoPrevious(self.dir.clone()));
        };
        let current = self.link_target(&self.dir.join(CURRENT))?;
        if current.as_deref() == Some(previous.id.as_str()) {
            return Err(CorpusError::NoPrevious(self.dir.clone()));
        }
        if let Some(old) = &current {
            self.record_previous(old, Durability::EachStep)?;
        }
        self.flip_current(&previous.id, Durability::EachStep)?;
        Ok(previous)
    }

    /// Writes the manifest of `staging`, moves it into `generations/` and records the generation
    /// `current` points to as `previous`: everything but the flip.
    fn place(
        &self,
        staging: &Staging,
        manifest: &Manifest,
        durability: Durability,
    ) -> Result<Placed, CorpusError> {
        let each_step = durability == Durability::EachStep;
        let mut manifest = manifest.clone();
        manifest.generation = staging.id.clone();
        let id = staging.id.clone();
        let manifest_path = self.manifest_path(&id);
        let tmp = manifest_path.with_extension("json.tmp");
        let written = write_new(
            &tmp,
            &serde_json::to_vec_pretty(&manifest).unwrap_or_default(),
            0o444,
        )?;
        if each_step {
            written.sync_all()?;
        }
        fs_err::rename(&tmp, &manifest_path)?;
        if each_step {
            sync_dir(&self.meta().join("manifests"))?;
        }
        failpoint::hit("manifest-written");

        fs_err::rename(&staging.dir, self.generation_dir(&id))?;
        if each_step {
            sync_dir(&self.meta().join("generations"))?;
            sync_dir(&self.meta().join("staging"))?;
        }
        failpoint::hit("generation-renamed");

        let replaced = self.link_target(&self.dir.join(CURRENT))?;
        if let Some(old) = &replaced {
            self.record_previous(old, durability)?;
        }
        failpoint::hit("previous-recorded");
        Ok(Placed {
            generation: Generation {
                dir: self.generation_dir(&id),
                id,
                manifest,
            },
            replaced,
        })
    }

    /// Removes what the publication of `placed` left unneeded.
    /// Published already: removing what is no longer needed is housekeeping; if it fails, the
    /// next preparation tries again, and it never turns a published generation into a failure.
    fn finish(&self, placed: &Placed) {
        let _ = self.remove_unneeded(&placed.generation.id, placed.replaced.as_deref());
        failpoint::hit("cleaned");
    }

    /// Writes the id of the generation being replaced to `previous` (via a temporary file that a
    /// crash may leave behind; it is replaced, and removed with the other leftovers).
    fn record_previous(&self, id: &str, durability: Durability) -> Result<(), CorpusError> {
        let path = self.meta().join("previous");
        let tmp = path.with_extension("tmp");
        if fs_err::symlink_metadata(&tmp).is_ok() {
            fs_err::remove_file(&tmp)?;
        }
        let written = write_new(&tmp, id.as_bytes(), 0o644)?;
        if durability == Durability::EachStep {
            written.sync_all()?;
        }
        fs_err::rename(&tmp, &path)?;
        Ok(())
    }

    fn flip_current(&self, id: &str, durability: Durability) -> Result<(), CorpusError> {
        let next = self.meta().join("current.next");
        if fs_err::symlink_metadata(&next).is_ok() {
            fs_err::remove_file(&next)?;
        }
        std::os::unix::fs::symlink(format!(".skillfold/generations/{id}"), &next).map_err(|e| {
            std::io::Error::new(e.kind(), format!("{e} when creating `{}`", next.display()))
        })?;
        failpoint::hit("link-created");
        fs_err::rename(&next, self.dir.join(CURRENT))?;
        if durability == Durability::EachStep {
            sync_dir(&self.dir)?;
        }
        failpoint::hit("link-flipped");
        Ok(())
    }

    /// Removes every generation but `keep` and `previous`, with its manifest, without following
    /// a link on the way ([`super::folders::remove_tree`]).
    fn remove_unneeded(&self, keep: &str, previous: Option<&str>) -> Result<(), CorpusError> {
        use super::folders;
        let generations = self.open_own(Some(c"generations"))?;
        let manifests = self.open_own(Some(c"manifests"))?;
        let names = folders::names(&generations).map_err(std::io::Error::from)?;
        for name in names {
            let id = name.to_string_lossy();
            if id == keep || Some(id.as_ref()) == previous {
                continue;
            }
            folders::remove_tree(&generations, &name).map_err(std::io::Error::from)?;
            let manifest =
                std::ffi::CString::new(format!("{id}.json")).map_err(std::io::Error::other)?;
            folders::remove_tree(&manifests, &manifest).map_err(std::io::Error::from)?;
        }
        Ok(())
    }
}

/// Publishes several corpora's staged generations (each verified by the caller, each corpus's
/// guard held) with the same steps as [`Corpus::publish`], on up to `workers` threads, each
/// phase made durable by one `syncfs` per file system: the staged files of every corpus, then
/// every manifest, move and `previous`, then every flip. Each corpus succeeds or fails on its
/// own; one that fails a step (or whose file system fails to sync) goes no further, and keeps
/// its published generation. Results keep the order of `items`.
pub fn publish_together(
    items: &[Publication<'_>],
    workers: usize,
) -> Vec<Result<Generation, CorpusError>> {
    use crate::support::parallel::map;

    if let [one] = items {
        return vec![one.corpus.publish(one.staging, &one.manifest)];
    }
    let stagings: Vec<Option<&OpenedFolder>> =
        items.iter().map(|p| Some(&p.staging.opened)).collect();
    // The corpus folders through which the later steps are synced, opened before they write.
    let corpora: Vec<std::io::Result<OpenedFolder>> = items
        .iter()
        .map(|p| OpenedFolder::open(&p.corpus.dir))
        .collect();
    let mut steps: Vec<Step> = sync_file_systems(&stagings)
        .into_iter()
        .zip(&corpora)
        .map(|(synced, corpus)| match (synced, corpus) {
            (Ok(()), Ok(_)) => Step::Staged,
            (Err(e), _) => Step::Failed(e.into()),
            (_, Err(e)) => Step::Failed(std::io::Error::new(e.kind(), e.to_string()).into()),
        })
        .collect();
    failpoint::hit("staged");

    let placed = map(&pair(items, &steps), workers, |(p, step)| {
        matches!(step, Step::Staged).then(|| {
            p.corpus
                .place(p.staging, &p.manifest, Durability::SharedSync)
        })
    });
    for (step, placed) in steps.iter_mut().zip(placed) {
        match placed {
            Some(Ok(placed)) => *step = Step::Placed(placed),
            Some(Err(e)) => *step = Step::Failed(e),
            None => {}
        }
    }
    fail_unsynced(&mut steps, &corpora, |step| matches!(step, Step::Placed(_)));

    let flipped = map(&pair(items, &steps), workers, |(p, step)| match step {
        Step::Placed(placed) => Some(
            p.corpus
                .flip_current(&placed.generation.id, Durability::SharedSync),
        ),
        _ => None,
    });
    for (step, flipped) in steps.iter_mut().zip(flipped) {
        match (std::mem::replace(step, Step::Staged), flipped) {
            (Step::Placed(placed), Some(Ok(()))) => *step = Step::Flipped(placed),
            (_, Some(Err(e))) => *step = Step::Failed(e),
            (before, _) => *step = before,
        }
    }
    fail_unsynced(&mut steps, &corpora, |step| {
        matches!(step, Step::Flipped(_))
    });

    map(&pair(items, &steps), workers, |(p, step)| {
        if let Step::Flipped(placed) = step {
            p.corpus.finish(placed);
        }
    });
    steps
        .into_iter()
        .map(|step| match step {
            Step::Flipped(placed) => Ok(placed.generation),
            Step::Failed(e) => Err(e),
            Step::Staged | Step::Placed(_) => Err(CorpusError::Io(std::io::Error::other(
                "the publication stopped before this corpus was published",
            ))),
        })
        .collect()
}

/// Where one corpus of [`publish_together`] is.
#[derive(Debug)]
enum Step {
    /// Its staged files are durable.
    Staged,
    /// Its generation and manifest are in place, not yet `current`.
    Placed(Placed),
    /// `current` points to its new generation.
    Flipped(Placed),
    /// A step failed; it goes no further.
    Failed(CorpusError),
}

/// Each publication beside its step.
fn pair<'i, 'a>(
    items: &'i [Publication<'a>],
    steps: &'i [Step],
) -> Vec<(&'i Publication<'a>, &'i Step)> {
    items.iter().zip(steps).collect()
}

/// Syncs the file system of each corpus whose step is `synced` (once per file system, through
/// the corpus folders opened before the steps), and fails the corpora whose file system did not
/// sync.
fn fail_unsynced(
    steps: &mut [Step],
    corpora: &[std::io::Result<OpenedFolder>],
    synced: impl Fn(&Step) -> bool,
) {
    let folders: Vec<Option<&OpenedFolder>> = corpora
        .iter()
        .zip(steps.iter())
        .map(|(corpus, step)| corpus.as_ref().ok().filter(|_| synced(step)))
        .collect();
    let outcomes = sync_file_systems(&folders);
    for (step, outcome) in steps.iter_mut().zip(outcomes) {
        if let Err(e) = outcome {
            *step = Step::Failed(e.into());
        }
    }
}

/// Runs `work`, which stages generations and calls its argument with each staged folder, while a
/// thread of its own starts writing them to the disk (one `syncfs` at a time, of the file system
/// of the folder staged last): the first `syncfs` of [`publish_together`] then finds most of
/// them written, instead of writing them all while every corpus waits. A head start only: it
/// changes nothing of what is durable when. A file system that fails to sync here is an error
/// (returned beside `work`'s result) even if the later `syncfs` succeeds, since that one may no
/// longer report a write that failed before it began.
#[cfg(any(feature = "git", test))]
pub fn writing_early<R>(
    work: impl FnOnce(&(dyn Fn(&std::path::Path) + Sync)) -> R,
) -> (R, Result<(), CorpusError>) {
    let (staged, folders) = std::sync::mpsc::channel::<std::path::PathBuf>();
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || {
            let mut failed = None;
            while let Ok(mut folder) = folders.recv() {
                while let Ok(later) = folders.try_recv() {
                    folder = later;
                }
                if let Err(e) = sync_file_system(&folder) {
                    failed.get_or_insert(e);
                }
            }
            failed
        });
        let notify = |folder: &std::path::Path| {
            // The writer ends only after every sender is gone: it cannot have hung up here.
            let _ = staged.send(folder.to_owned());
        };
        let result = work(&notify);
        drop(staged);
        let early = match writer.join() {
            Ok(None) => Ok(()),
            Ok(Some(e)) => Err(e.into()),
            Err(_) => Err(CorpusError::Io(std::io::Error::other(
                "the thread writing staged files early stopped",
            ))),
        };
        (result, early)
    })
}

#[cfg(test)]
mod tests {
    use super::{Publication, publish_together};
    use crate::corpus::store::{CURRENT, Corpus, Staging};
    use crate::corpus::{Manifest, manifest::FORMAT};

    fn manifest() -> Manifest {
        serde_json::from_value(serde_json::json!({
            "format": FORMAT,
            "generation": "",
            "created_unix": 0,
            "source": {"url": "https://example.invalid/r.git", "commit": "0".repeat(40), "root": null},
            "bundles": [],
        }))
        .expect("a manifest")
    }

    /// Three new corpora `a`, `b` and `c` under `root`: their folders and the corpora.
    fn three_corpora(root: &std::path::Path) -> (Vec<std::path::PathBuf>, Vec<Corpus>) {
        let dirs: Vec<_> = ["a", "b", "c"].iter().map(|n| root.join(n)).collect();
        let corpora = dirs
            .iter()
            .map(|d| Corpus::create(d).expect("created"))
            .collect();
        (dirs, corpora)
    }

    /// Each corpus's staging with a fresh manifest, ready to publish together.
    fn publications<'a>(corpora: &'a [Corpus], stagings: &'a [Staging]) -> Vec<Publication<'a>> {
        corpora
            .iter()
            .zip(stagings)
            .map(|(corpus, staging)| Publication {
                corpus,
                staging,
                manifest: manifest(),
            })
            .collect()
    }

    fn current(dir: &std::path::Path) -> Option<String> {
        Corpus::at(dir).current().expect("readable").map(|g| g.id)
    }

    // Corpora published together each end on their new generation, with its manifest and the
    // generation it replaced recorded as `previous`, exactly as one at a time.
    #[test]
    fn corpora_published_together_each_get_their_generation_and_previous() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (dirs, corpora) = three_corpora(tmp.path());
        // `a` and `b` hold a generation already; `c` is new.
        let mut before = Vec::new();
        for corpus in &corpora[..2] {
            let staging = corpus.stage("old").expect("staged");
            before.push(corpus.publish(&staging, &manifest()).expect("published").id);
        }
        let stagings: Vec<_> = corpora
            .iter()
            .map(|c| c.stage("new").expect("staged"))
            .collect();
        let published = publish_together(&publications(&corpora, &stagings), 2);
        for ((dir, staging), result) in dirs.iter().zip(&stagings).zip(published) {
            let generation = result.expect("published");
            assert_eq!(generation.id, staging.id);
            assert_eq!(generation.manifest.generation, staging.id);
            assert_eq!(current(dir).as_deref(), Some(staging.id.as_str()));
            assert!(!staging.dir.exists(), "the staging folder was moved");
        }
        for (corpus, old) in corpora.iter().zip(&before) {
            assert_eq!(&corpus.previous().expect("readable").expect("one").id, old);
        }
        assert!(corpora[2].previous().expect("readable").is_none());
    }

    // The work's result comes back once every staged folder it named was handed to the writer
    // (from any thread); a folder whose file system cannot be synced is an error of its own.
    #[test]
    fn writing_early_returns_the_work_and_any_failure_to_write() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (sum, written) = super::writing_early(|staged| {
            crate::support::parallel::map(&[1, 2, 3, 4], 2, |n| {
                staged(tmp.path());
                n * 2
            })
            .into_iter()
            .sum::<i32>()
        });
        assert_eq!(sum, 20);
        written.expect("written");
        let gone = tmp.path().join("gone");
        let ((), written) = super::writing_early(|staged| staged(&gone));
        assert!(
            written.is_err(),
            "a folder that cannot be synced is a failure"
        );
    }

    // The staged files are synced through the staging folder opened when it was made, not
    // through the path opened again at the sync (which would miss a write that failed in
    // between): a staging whose path is gone by then still syncs.
    #[test]
    fn stagings_are_synced_through_the_folder_opened_when_they_were_made() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (_, corpora) = three_corpora(tmp.path());
        let stagings: Vec<Staging> = corpora
            .iter()
            .map(|c| c.stage("new").expect("staged"))
            .collect();
        fs_err::remove_dir(&stagings[0].dir).expect("removed");
        let folders: Vec<_> = stagings.iter().map(|s| Some(&s.opened)).collect();
        for outcome in super::sync_file_systems(&folders) {
            outcome.expect("synced through the folder opened before");
        }
        assert!(super::sync_file_system(&stagings[0].dir).is_err());
    }

    // A corpus whose step fails (here: its staged generation is gone) is not published and keeps
    // its generation; the others are published all the same.
    #[test]
    fn a_corpus_that_fails_a_step_fails_alone() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (dirs, corpora) = three_corpora(tmp.path());
        let old = corpora[1]
            .publish(&corpora[1].stage("old").expect("staged"), &manifest())
            .expect("published")
            .id;
        let stagings: Vec<_> = corpora
            .iter()
            .map(|c| c.stage("new").expect("staged"))
            .collect();
        fs_err::remove_dir(&stagings[1].dir).expect("removed");
        let published = publish_together(&publications(&corpora, &stagings), 2);
        assert!(
            published[0].is_ok() && published[2].is_ok(),
            "{published:?}"
        );
        assert!(published[1].is_err(), "{published:?}");
        assert_eq!(current(&dirs[0]).as_deref(), Some(stagings[0].id.as_str()));
        assert_eq!(current(&dirs[1]).as_deref(), Some(old.as_str()));
        assert_eq!(current(&dirs[2]).as_deref(), Some(stagings[2].id.as_str()));
        assert!(dirs[1].join(CURRENT).exists());
    }
}
