//! One preparation of one corpus source — Git or OCI — holding its guard: what an interrupted
//! preparer left is removed, a published generation that already holds these pins and still
//! verifies ends the run without a fetch (the warm path), otherwise a staging folder is made, and
//! at the end the staged bytes are verified again and published with their manifest. Fetching and
//! taking the bundles are the source kind's own (`git.rs`, `oci.rs`).

use std::sync::atomic::Ordering;

use super::{Options, SourceFailure, io_failure};
use crate::corpus::manifest::{self, ManifestBundle, ManifestSource};
use crate::corpus::store::Staging;
use crate::corpus::{Corpus, CorpusGuard, Manifest};
use crate::corpus::{pin_check, publish};
use crate::descriptor::plan::CorpusRef;
use crate::format::pin::Pin;
use crate::source::code::PrepareCode;
use crate::trust::commit::policy::{Signer, TrustPolicy};
use crate::trust::image::policy::PublisherPolicy;
use crate::trust::verdict::{Publisher, Verified};

/// What a run prepares: the corpus, and what its manifest records of the source.
pub(super) struct RunTarget<'a> {
    /// The corpus and the pins it must hold.
    pub corpus: CorpusRef<'a>,
    /// The source's URL (credentials removed) or `REGISTRY/REPOSITORY`.
    pub url: String,
    /// The folder of the bundles in the source, if not its root.
    pub root: Option<String>,
    /// Which symbolic links the source's commit may hold (`refuse` for an image).
    pub links: crate::descriptor::Links,
    /// Who may sign the source's commit, when signatures are checked.
    pub trust: Option<&'a TrustPolicy>,
    /// Who may publish the source's image, when its publisher is checked.
    pub publisher: Option<&'a PublisherPolicy>,
}

/// What a source needs once its guard is held.
pub(super) enum Start<'a> {
    /// `current` already holds this revision with these pins, and verifies: the generation, who
    /// signed its commit (when the source requires a signature) and who published its image
    /// (when the source checks the publisher).
    UpToDate(String, Option<Signer>, Option<Publisher>),
    /// A fetch, then staging into this folder.
    Fetch(Box<CorpusRun<'a>>, Staging),
}

/// One preparation of one corpus, holding its guard.
pub(super) struct CorpusRun<'a> {
    pub target: RunTarget<'a>,
    pub options: &'a Options<'a>,
    pub corpus: Corpus,
    _guard: CorpusGuard,
}

impl<'a> CorpusRun<'a> {
    pub fn new(
        target: RunTarget<'a>,
        options: &'a Options<'a>,
    ) -> Result<CorpusRun<'a>, SourceFailure> {
        let location = target.corpus.location;
        let corpus = Corpus::create(target.corpus.directory).map_err(|e| {
            let mut failure = io_failure(&e);
            failure.message = format!("cannot create the corpus: {}", failure.message);
            failure
        })?;
        let guard = corpus
            .guard()
            .map_err(|e| SourceFailure::new(e.code(), e.to_string()))?;
        if let Some(holder) = &guard.recovered {
            options.progress.note(
                location,
                &format!("recovered the guard left by {holder}, which is no longer running"),
            );
        }
        let removed = corpus.remove_leftovers().map_err(|e| io_failure(&e))?;
        if !removed.is_empty() {
            options.progress.note(
                location,
                &format!(
                    "removed {} leftover(s) of an interrupted preparation",
                    removed.len()
                ),
            );
        }
        Ok(CorpusRun {
            target,
            options,
            corpus,
            _guard: guard,
        })
    }

    /// Stops at a published generation that already holds the pins, or makes a staging folder.
    pub fn start(self) -> Result<Start<'a>, SourceFailure> {
        if let Some((generation, signer, publisher)) = self.up_to_date()? {
            self.step("up to date (verified, no fetch)");
            return Ok(Start::UpToDate(generation, signer, publisher));
        }
        self.check_interrupt()?;
        let staging = self
            .corpus
            .stage(self.target.corpus.revision)
            .map_err(|e| io_failure(&e))?;
        Ok(Start::Fetch(Box::new(self), staging))
    }

    pub fn step(&self, message: &str) {
        self.options
            .progress
            .step(self.target.corpus.location, message);
    }

    pub fn note(&self, message: &str) {
        self.options
            .progress
            .note(self.target.corpus.location, message);
    }

    pub fn check_interrupt(&self) -> Result<(), SourceFailure> {
        if self.options.interrupt.load(Ordering::Relaxed) {
            return Err(SourceFailure::new(
                PrepareCode::Interrupted,
                "interrupted by a signal",
            ));
        }
        Ok(())
    }

    /// The published generation (and who signed its commit, who published its image), if it
    /// already holds this revision and these pins and verifies.
    #[expect(
        clippy::type_complexity,
        reason = "the generation and the two signers a report shows"
    )]
    fn up_to_date(
        &self,
    ) -> Result<Option<(String, Option<Signer>, Option<Publisher>)>, SourceFailure> {
        let current = match self.corpus.current() {
            Ok(Some(current)) => current,
            Ok(None) => return Ok(None),
            Err(e @ crate::corpus::CorpusError::NotManaged { .. }) => {
                return Err(SourceFailure::new(e.code(), e.to_string()));
            }
            Err(e) => {
                self.note(&format!("ignoring the published generation: {e}"));
                return Ok(None);
            }
        };
        let target = &self.target;
        let m = &current.manifest;
        let mut pinned: Vec<&Pin> = target.corpus.approved.iter().collect();
        pinned.sort();
        let mut held: Vec<&Pin> = m.bundles.iter().map(|b| &b.pin).collect();
        held.sort();
        let same_source = m.source.commit == target.corpus.revision
            && m.source.url == target.url
            && m.source.root == target.root
            && m.source.links == target.links
            // The content policy is not recorded: verifying the generation again below applies
            // today's.
            && m.bundles.iter().all(|b| b.limits.same_bounds(&target.corpus.limits))
            // The recorded commit object's signature verifies again under today's policy (a
            // fingerprint still listed somewhere is not enough: which line decides matters).
            && target.trust.is_none_or(|trust| {
                m.source.signer.is_some()
                    && m.source.commit_object.as_ref().is_some_and(|object| {
                        crate::trust::commit::verify_commit_object(
                            &m.source.commit,
                            object.as_bytes(),
                            trust,
                        )
                        .is_ok()
                    })
            })
            // The recorded image signature verifies again under today's publisher policy,
            // offline (a signer still named in the policy is not enough either).
            && target.publisher.is_none_or(|policy| {
                m.source.publisher.as_ref().is_some_and(|recorded| {
                    crate::trust::image::verify(&recorded.material, &m.source.commit, policy)
                        .is_ok_and(|now| now.signer == recorded.signer)
                })
            });
        if !same_source || pinned != held {
            return Ok(None);
        }
        self.step("verifying the published generation");
        if let Err(e) = pin_check::verify_recorded(&current.dir, &m.bundles, target.corpus.limits) {
            self.note(&format!(
                "the published generation no longer verifies ({e}); preparing it again"
            ));
            return Ok(None);
        }
        let source = current.manifest.source;
        Ok(Some((
            current.id,
            source.signer,
            source.publisher.map(|p| p.signer),
        )))
    }

    /// Verifies the staged bytes again (read back, each bundle's digest against its pin:
    /// [`pin_check::verify_copy`]) and publishes them with their manifest.
    pub fn publish(
        &self,
        staging: &Staging,
        bundles: Vec<ManifestBundle>,
        signed: Option<(Signer, Option<String>)>,
        publisher: Option<Verified>,
    ) -> Result<String, SourceFailure> {
        let manifest = self.verify_staged(staging, bundles, signed, publisher)?;
        self.step("publishing");
        self.published(self.corpus.publish(staging, &manifest))
    }

    /// The id of the generation a publication of this run made, said on the progress display,
    /// or why it failed.
    fn published(
        &self,
        published: Result<crate::corpus::store::Generation, crate::corpus::CorpusError>,
    ) -> Result<String, SourceFailure> {
        let generation = published.map_err(|e| io_failure(&e))?;
        self.step(&format!("published generation {}", generation.id));
        Ok(generation.id)
    }

    /// Verifies the staged bytes again (read back, each bundle's digest against its pin:
    /// [`pin_check::verify_copy`]) and returns the manifest to publish them with.
    pub fn verify_staged(
        &self,
        staging: &Staging,
        bundles: Vec<ManifestBundle>,
        signed: Option<(Signer, Option<String>)>,
        publisher: Option<Verified>,
    ) -> Result<Manifest, SourceFailure> {
        let (signer, commit_object) = signed.unzip();
        self.check_interrupt()?;
        self.step("verifying the staged bytes");
        // Bytes that verified when taken and do not when read back from staging are a disk
        // problem (retryable), whatever the reader says: a code of its own; the reader's code is
        // kept in the message.
        pin_check::verify_copy(&staging.dir, &bundles, self.target.corpus.limits).map_err(|e| {
            SourceFailure::new(
                PrepareCode::CorpusStagingUnverified,
                format!("the staged copy does not verify ({}): {e}", e.code()),
            )
        })?;
        self.check_interrupt()?;
        let mut bundles = bundles;
        bundles.sort_by(|a, b| a.pin.name.cmp(&b.pin.name));
        Ok(Manifest {
            format: manifest::FORMAT.to_owned(),
            generation: String::new(),
            created_unix: crate::support::time::now_unix(),
            source: ManifestSource {
                url: self.target.url.clone(),
                commit: self.target.corpus.revision.to_owned(),
                root: self.target.root.clone(),
                links: self.target.links,
                signer,
                commit_object: commit_object.flatten(),
                publisher,
            },
            bundles,
        })
    }

    /// Publishes each run's verified staging with its manifest ([`Self::verify_staged`]),
    /// together: one `syncfs` per file system and step for all of them
    /// ([`publish::publish_together`]), on up to `workers` threads. Each result is its run's
    /// generation, or why it was not published.
    pub fn publish_together<'r>(
        runs: Vec<(&'r CorpusRun<'a>, &'r Staging, Manifest)>,
        workers: usize,
    ) -> Vec<Result<String, SourceFailure>> {
        let (items, runs): (Vec<publish::Publication<'r>>, Vec<&CorpusRun<'a>>) = runs
            .into_iter()
            .map(|(run, staging, manifest)| {
                run.step("publishing");
                let item = publish::Publication {
                    corpus: &run.corpus,
                    staging,
                    manifest,
                };
                (item, run)
            })
            .unzip();
        publish::publish_together(&items, workers)
            .into_iter()
            .zip(runs)
            .map(|(published, run)| run.published(published))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::{CorpusRun, RunTarget, Start};
    use crate::corpus::manifest::ManifestBundle;
    use crate::descriptor::kind::SourceKind;
    use crate::descriptor::plan::CorpusRef;
    use crate::format::limits::Limits;
    use crate::format::pin::Pin;
    use crate::ops::prepare::{Options, Progress};
    use crate::source::code::PrepareCode;
    use crate::support::error_code::{Coded as _, ErrorCode, ExitClass};

    struct Quiet;

    impl Progress for Quiet {
        fn step(&self, _: &str, _: &str) {}
        fn note(&self, _: &str, _: &str) {}
    }

    // Staged bytes that do not verify when read back (here: nothing was staged, which the
    // reader calls `not_found`, invalid) are a disk problem: `corpus_staging_unverified`,
    // retryable, with the reader's code in the message; nothing is published.
    #[test]
    fn a_staged_copy_that_does_not_verify_is_retryable_with_its_own_code() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let directory = tmp.path().join("corpus");
        let pin = Pin {
            name: "hello".parse().expect("name"),
            version: "1".parse().expect("version"),
            hash: "0".repeat(64).parse().expect("hash"),
        };
        let approved = [pin.clone()];
        let revision = "a".repeat(40);
        let interrupt = AtomicBool::new(false);
        let options = Options {
            interrupt: &interrupt,
            progress: &Quiet,
            concurrency: 1,
            fetch_timeout: crate::ops::prepare::DEFAULT_FETCH_TIMEOUT,
        };
        let target = RunTarget {
            corpus: CorpusRef {
                kind: SourceKind::Git,
                location: "skills[0].git",
                directory: &directory,
                approved: &approved,
                limits: Limits::default(),
                revision: &revision,
            },
            url: "https://example.com/skills.git".to_owned(),
            root: None,
            trust: None,
            publisher: None,
            links: crate::descriptor::Links::Refuse,
        };
        let run = CorpusRun::new(target, &options).expect("run");
        let Ok(Start::Fetch(run, staging)) = run.start() else {
            panic!("a new corpus is staged");
        };
        let bundles = vec![ManifestBundle {
            pin,
            path: "hello".to_owned(),
            limits: Limits::default(),
            files: Vec::new(),
        }];
        let failure = run
            .publish(&staging, bundles, None, None)
            .expect_err("refused");
        assert_eq!(
            failure.code,
            ErrorCode::from(PrepareCode::CorpusStagingUnverified)
        );
        assert_eq!(failure.exit_class(), ExitClass::Retryable);
        assert!(
            failure.message.contains("(not_found)"),
            "{}",
            failure.message
        );
        assert!(
            crate::corpus::Corpus::at(&directory)
                .current()
                .expect("readable")
                .is_none(),
            "nothing was published"
        );
    }
}
