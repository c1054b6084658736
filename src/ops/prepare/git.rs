//! Git sources, one commit at a time: every source that pins the same (URL, commit) is prepared
//! by one job that fetches that commit once, into one object store, and takes each source's
//! bundles from it. Each source still has its own corpus, guard, staging, verification and atomic
//! promotion, and fails on its own: one corpus whose guard is held, or whose bundles do not
//! verify, does not stop the others of the same commit. A failed fetch fails every source that
//! needed it, with the same error.
//!
//! The shared object store is the fetch folder of the first source that needs it (on that
//! corpus's file system, under its guard, which this job holds until the store is removed).
//!
//! Because the sources are independent, their work runs side by side on up to
//! `min(--concurrency, cores)` workers: before the fetch, each takes its guard and checks its
//! published generation (the warm path); after it, each checks the signature, takes, stages and
//! verifies its bundles, with a gix handle of its own on the fetched commit. Only the fetched
//! objects are shared; every corpus gets its own copy of the bytes, verified there. The verified
//! corpora are then published together ([`crate::corpus::publish::publish_together`]): the same
//! steps as one at a time, each made durable by one `syncfs` per file system for all of them.

use std::sync::atomic::{AtomicUsize, Ordering};

#[cfg(feature = "git")]
use super::io_failure;
use super::run::{CorpusRun, RunTarget, Start};
use super::{Options, PrepareStatus, SourceFailure, SourceReport, bundle_reports, short};
use crate::corpus::Manifest;
#[cfg(feature = "git")]
use crate::corpus::manifest::ManifestBundle;
#[cfg(feature = "git")]
use crate::corpus::pin_check;
use crate::corpus::store::Staging;
use crate::descriptor::kind::SourceKind;
use crate::descriptor::plan::GitSource;
use crate::runtime::snapshot::Origin;
use crate::source::code::PrepareCode;
use crate::support::escape;
use crate::trust::commit::policy::Signer;

/// Prepares `sources` (each with its index in the descriptor), which all pin one URL and commit,
/// with at most one fetch; `fetches` counts the fetches made.
pub(super) fn prepare_commit(
    sources: &[(usize, &GitSource)],
    options: &Options<'_>,
    fetches: &AtomicUsize,
) -> Vec<(usize, SourceReport)> {
    // Each source's guard, leftovers and warm check (its published generation verified again)
    // are its own: they run side by side too.
    let started =
        crate::support::parallel::map(sources, workers(options, sources.len()), |&(_, git)| {
            start(git, options)
        });
    let mut reports = Vec::with_capacity(sources.len());
    let mut pending: Vec<(usize, GitRun<'_>, Staging)> = Vec::new();
    for (&(index, _), (report, run)) in sources.iter().zip(started) {
        if let Some((run, staging)) = run {
            pending.push((reports.len(), run, staging));
        }
        reports.push((index, report));
    }
    let Some((_, first, first_staging)) = pending.first() else {
        return reports;
    };
    let store = first.run.corpus.fetch_dir(&first_staging.id);
    let others = &pending[1..];
    for (_, run, _) in others {
        run.run.step(&format!(
            "sharing the fetch of {} at {} with {}",
            escape::text(run.git.shown.as_str()),
            short(run.git.revision.as_str()),
            escape::text(&first.git.location)
        ));
    }
    fetches.fetch_add(1, Ordering::Relaxed);
    let fetched = first.fetch(&store, &pending);
    let how = fetched.as_ref().ok().map(fetched_how);
    let verified = match &fetched {
        Ok(commit) => finish_side_by_side(commit, &pending, options),
        Err(failure) => pending
            .iter()
            .map(|_| (None, Err(failure.clone())))
            .collect(),
    };
    let published = publish_verified(&pending, verified, options);
    for ((slot, run, staging), (signer, result)) in pending.iter().zip(published) {
        let report = &mut reports[*slot].1;
        report.fetch = how;
        report.signer = signer;
        match result {
            Ok(generation) => {
                report.origin.generation = Some(generation);
                report.bundles =
                    bundle_reports(&run.git.approved, run.git.limits, PrepareStatus::Published);
            }
            Err(failure) => {
                // Leave the published generation alone; remove what this run wrote.
                let _ = run.run.corpus.remove_scratch(&staging.dir);
                report.fail(failure, options);
            }
        }
    }
    drop(fetched);
    let _ = first.run.corpus.remove_scratch(&store);
    reports
}

/// How many sources of one commit are worked on at once: `--concurrency`, at most one per core
/// and one per source.
fn workers(options: &Options<'_>, sources: usize) -> usize {
    options
        .concurrency
        .min(crate::support::parallel::cores())
        .clamp(1, sources.max(1))
}

/// Publishes the sources of `pending` whose staged bundles verified (`verified`, in the same
/// order) together: one `syncfs` per file system and step for all their corpora
/// ([`CorpusRun::publish_together`]). Each result is the source's signer and its generation, or
/// why it was not published.
fn publish_verified(
    pending: &[(usize, GitRun<'_>, Staging)],
    verified: Vec<(Option<Signer>, Result<Manifest, SourceFailure>)>,
    options: &Options<'_>,
) -> Vec<(Option<Signer>, Result<String, SourceFailure>)> {
    let mut ready = Vec::new();
    let mut outcomes: Vec<(Option<Signer>, Result<(), SourceFailure>)> =
        Vec::with_capacity(pending.len());
    for ((_, run, staging), (signer, manifest)) in pending.iter().zip(verified) {
        let outcome = match manifest {
            Ok(manifest) => {
                ready.push((&run.run, staging, manifest));
                Ok(())
            }
            Err(failure) => Err(failure),
        };
        outcomes.push((signer, outcome));
    }
    let workers = workers(options, ready.len());
    // One generation per source that verified, in the order of `pending`.
    let mut published = CorpusRun::publish_together(ready, workers).into_iter();
    outcomes
        .into_iter()
        .map(|(signer, verified)| {
            let generation = verified.and_then(|()| {
                published.next().unwrap_or_else(|| {
                    Err(SourceFailure::new(
                        PrepareCode::CorpusIo,
                        "the publication ended before this source",
                    ))
                })
            });
            (signer, generation)
        })
        .collect()
}

/// Takes `git`'s corpus guard and checks its published generation: the report of a source that
/// is up to date (or failed), or the run and staging folder of one that needs the fetch.
fn start<'a>(
    git: &'a GitSource,
    options: &'a Options<'a>,
) -> (SourceReport, Option<(GitRun<'a>, Staging)>) {
    let mut report = SourceReport::git(git);
    let target = RunTarget {
        corpus: git.corpus(),
        url: git.shown.as_str().to_owned(),
        root: git.root.as_ref().map(ToString::to_string),
        links: git.links,
        trust: git.trust.as_deref(),
        publisher: None,
    };
    match CorpusRun::new(target, options).and_then(CorpusRun::start) {
        Ok(Start::UpToDate(generation, signer, _)) => {
            report.origin.generation = Some(generation);
            report.signer = signer;
            report.bundles = bundle_reports(&git.approved, git.limits, PrepareStatus::UpToDate);
            (report, None)
        }
        Ok(Start::Fetch(run, staging)) => (report, Some((GitRun { git, run: *run }, staging))),
        Err(failure) => {
            report.fail(failure, options);
            (report, None)
        }
    }
}

/// What happened after the fetch to each source of `pending`: each source's signature, staging
/// and verification are its own, so they run side by side, a handle on the fetched commit per
/// worker, while the stagings already verified are written to the disk
/// ([`crate::corpus::publish::writing_early`]). Each result is the source's signer and the
/// manifest its verified staging is to be published with.
#[cfg(feature = "git")]
fn finish_side_by_side(
    commit: &SharedCommit,
    pending: &[(usize, GitRun<'_>, Staging)],
    options: &Options<'_>,
) -> Vec<(Option<Signer>, Result<Manifest, SourceFailure>)> {
    let commits = vec![commit.clone(); workers(options, pending.len())];
    let finish = |staged: &(dyn Fn(&std::path::Path) + Sync)| {
        crate::support::parallel::map_with(pending, commits, |commit, (_, run, staging)| {
            let verified = run.finish(commit, staging);
            if verified.1.is_ok() {
                staged(&staging.dir);
            }
            verified
        })
    };
    // One source has nothing to overlap its writing with.
    if pending.len() <= 1 {
        return finish(&|_| {});
    }
    let (verified, written) = crate::corpus::publish::writing_early(finish);
    match written {
        Ok(()) => verified,
        // A file system that failed to write what was staged: nothing staged is published.
        Err(e) => {
            let failure = io_failure(&e);
            verified
                .into_iter()
                .map(|(signer, result)| (signer, result.and(Err(failure.clone()))))
                .collect()
        }
    }
}

#[cfg(not(feature = "git"))]
fn finish_side_by_side(
    commit: &SharedCommit,
    _pending: &[(usize, GitRun<'_>, Staging)],
    _options: &Options<'_>,
) -> Vec<(Option<Signer>, Result<Manifest, SourceFailure>)> {
    match *commit {}
}

/// `partial` when the commit came as its trees and then the approved blobs, `full` when it came
/// whole (the server offers no partial fetch, or refused it).
#[cfg(feature = "git")]
fn fetched_how(commit: &SharedCommit) -> &'static str {
    if commit.fetched_whole().is_some() || commit.used_fallback() {
        "full"
    } else {
        "partial"
    }
}

#[cfg(not(feature = "git"))]
fn fetched_how(commit: &SharedCommit) -> &'static str {
    match *commit {}
}

impl SourceReport {
    /// The report of a Git source before anything happened: every bundle `failed`.
    pub(super) fn git(git: &GitSource) -> SourceReport {
        SourceReport {
            origin: Origin {
                url: Some(git.shown.as_str().to_owned()),
                commit: Some(git.revision.to_string()),
                ..Origin::new(SourceKind::Git, git.location.clone())
            },
            directory: git.directory.clone(),
            links: Some(git.links.as_str()),
            fetch: None,
            bundles: bundle_reports(&git.approved, git.limits, PrepareStatus::Failed),
            signer: None,
            publisher: None,
            error: None,
        }
    }

    /// Records `failure` and says so on the progress display (a step: the report's own line
    /// names it at the end).
    pub(super) fn fail(&mut self, failure: SourceFailure, options: &Options<'_>) {
        options.progress.step(
            &self.origin.location,
            &format!("failed: {}", failure.message),
        );
        self.error = Some(failure);
    }
}

/// One preparation of one Git source: its corpus run and the source.
struct GitRun<'a> {
    git: &'a GitSource,
    run: CorpusRun<'a>,
}

/// The fetched commit, shared by the sources of one job.
#[cfg(feature = "git")]
type SharedCommit = crate::source::git::commit::PinnedCommit;
#[cfg(not(feature = "git"))]
type SharedCommit = std::convert::Infallible;

impl GitRun<'_> {
    /// Everything after the fetch up to the publication, for this source (a build without the
    /// fetcher has no fetched commit): who signed the commit (when required; kept even when a
    /// later step fails), then its bundles staged and verified, with the manifest to publish
    /// them with.
    #[cfg(feature = "git")]
    fn finish(
        &self,
        commit: &SharedCommit,
        staging: &Staging,
    ) -> (Option<Signer>, Result<Manifest, SourceFailure>) {
        let signed = match self.check_signature(commit) {
            Ok(signed) => signed,
            Err(failure) => return (None, Err(failure)),
        };
        let signer = signed.as_ref().map(|(s, _)| s.clone());
        let verified = self
            .stage_bundles(commit, staging)
            .and_then(|bundles| self.run.verify_staged(staging, bundles, signed, None));
        (signer, verified)
    }

    /// Fetches the pinned commit into `store` and walks its whole tree, with the files of the
    /// approved bundles of every source in `sharing` (this one's too).
    #[cfg(feature = "git")]
    fn fetch(
        &self,
        store: &std::path::Path,
        sharing: &[(usize, GitRun<'_>, Staging)],
    ) -> Result<SharedCommit, SourceFailure> {
        use crate::source::git::approved;
        use crate::source::git::commit::{Layout, PinnedCommit, bundle_folder};

        let url = escape::text(self.git.shown.as_str());
        self.run.step(&format!(
            "fetching {url} at {}",
            short(self.git.revision.as_str())
        ));
        let fetching = format!("fetching {url}");
        let report = |transfer: &str| {
            let line = format!("{fetching}: {transfer}");
            self.run
                .options
                .progress
                .transfer(&self.git.location, &line);
        };
        let wanted = approved::wanted(sharing.iter().map(|(_, run, _)| run.git));
        // While the server sends the files, a thread makes the stagings' folders and (empty)
        // files, where that costs more than handing them over.
        let commit = std::thread::scope(|scope| {
            let mut make_ahead = |layout: Layout| {
                let mut ahead = Vec::new();
                for (_, run, staging) in sharing {
                    if staging.folders_are_cheap() {
                        continue;
                    }
                    for pin in &run.git.approved {
                        let folder = bundle_folder(run.git.root.as_ref(), &pin.name);
                        ahead.push((staging, pin.name.as_str(), folder));
                    }
                }
                if ahead.is_empty() {
                    return;
                }
                scope.spawn(move || {
                    for (staging, name, folder) in ahead {
                        if let Some(files) = layout.get(&folder) {
                            staging.make_ahead(name, files);
                        }
                    }
                });
            };
            PinnedCommit::fetch_laid_out(
                &self.git.url,
                &self.git.revision,
                store,
                (self.git.links, &wanted),
                (self.run.options.interrupt, self.run.options.fetch_timeout),
                &report,
                &mut make_ahead,
            )
        })
        .map_err(commit_failure)?;
        if commit.used_fallback() {
            self.run.note("the server refused to send the commit by id; fetched its branches and tags instead");
        } else if let Some(full) = commit.fetched_whole() {
            // A server without partial fetch is common and nothing to act on: a step line.
            match full {
                crate::source::git::fetch::Full::NoFilter => self.run.step(&full.describe()),
                _ => self.run.note(&full.describe()),
            }
        }
        Ok(commit)
    }

    #[cfg(not(feature = "git"))]
    fn fetch(
        &self,
        _store: &std::path::Path,
        _sharing: &[(usize, GitRun<'_>, Staging)],
    ) -> Result<SharedCommit, SourceFailure> {
        Err(SourceFailure::new(
            PrepareCode::GitDisabled,
            "this build of skillfold has no Git fetcher (built without the `git` feature)",
        ))
    }

    /// Takes this source's approved bundles from the fetched commit, verifies each against its
    /// pin and writes it into `staging`.
    #[cfg(feature = "git")]
    fn stage_bundles(
        &self,
        commit: &SharedCommit,
        staging: &Staging,
    ) -> Result<Vec<ManifestBundle>, SourceFailure> {
        use crate::source::git::approved::ApprovedSource;

        self.run.check_interrupt()?;
        let source = ApprovedSource::check(commit, self.git).map_err(commit_failure)?;
        let (links, more) = &source.links;
        for link in links {
            self.run.note(&format!(
                "symbolic link `{}` -> `{}` outside the approved bundles is skipped (links: outside-bundles)",
                link.path, link.target
            ));
        }
        if *more > 0 {
            self.run.note(&format!(
                "{more} more symbolic link(s) outside the approved bundles are not listed"
            ));
        }
        let (gitlinks, unlisted) = &source.gitlinks;
        for gitlink in gitlinks {
            self.run.note(&format!(
                "submodule `{}` outside the approved bundles is ignored (never followed)",
                escape::text(gitlink)
            ));
        }
        if *unlisted > 0 {
            self.run.note(&format!(
                "{unlisted} more submodule(s) are not listed; none is followed"
            ));
        }
        let mut bundles = Vec::new();
        let mut details = Vec::new();
        for pin in &self.git.approved {
            self.run.check_interrupt()?;
            let folder = source.folder(pin);
            let bundle = match source.take(pin) {
                Ok(bundle) => bundle,
                Err(e) => {
                    details.extend(e.lines());
                    continue;
                }
            };
            match pin_check::verify_bundle(bundle, std::path::Path::new(&folder), pin, None) {
                Ok(bundle) => {
                    staging
                        .write_bundle(pin.name.as_str(), bundle.files())
                        .map_err(|e| io_failure(&e))?;
                    bundles.push(ManifestBundle::of(pin, folder, &bundle));
                }
                Err(e) => details.push(format!("{e} [{}]", e.code())),
            }
        }
        if !details.is_empty() {
            let mut failure = SourceFailure::new(
                PrepareCode::VerificationFailed,
                format!(
                    "{} problem(s) with the approved bundles of commit {}",
                    details.len(),
                    short(self.git.revision.as_str())
                ),
            );
            failure.details = details;
            return Err(failure);
        }
        Ok(bundles)
    }

    /// Checks the commit's signature when the source requires one (`verify`): who signed it,
    /// and the commit object (kept in the manifest when it is UTF-8 text).
    #[cfg(feature = "git")]
    fn check_signature(
        &self,
        commit: &SharedCommit,
    ) -> Result<Option<(Signer, Option<String>)>, SourceFailure> {
        let Some(trust) = &self.git.trust else {
            return Ok(None);
        };
        self.run.step("checking the commit's signature");
        let failure = |e: crate::source::git::commit::CommitError| {
            SourceFailure::new(e.code(), e.to_string())
        };
        let signer = commit.verify_signature(trust).map_err(failure)?;
        let object = commit.commit_object().map_err(failure)?;
        self.run.note(&format!(
            "commit signed by {} ({})",
            escape::text(&signer.principal),
            signer.fingerprint
        ));
        Ok(Some((signer, String::from_utf8(object).ok())))
    }
}

/// The failure of a commit that cannot be used: its error, with what helps to act on it (the
/// server's hint, the links found, the rule of `links: outside-bundles`).
#[cfg(feature = "git")]
fn commit_failure(e: crate::source::git::commit::CommitError) -> SourceFailure {
    use crate::source::git::commit::CommitError;

    let mut failure = SourceFailure::new(e.code(), e.to_string());
    match &e {
        CommitError::Fetch(fetch) => {
            if let Some(hint) = fetch.hint() {
                failure.details.push(format!("hint: {hint}"));
            }
        }
        CommitError::Symlinks { paths, count, .. } => {
            failure.details = paths
                .iter()
                .map(|p| format!("symbolic link: {}", escape::text(p)))
                .collect();
            if *count > paths.len() {
                failure
                    .details
                    .push(format!("and {} more", count - paths.len()));
            }
        }
        CommitError::LinkInBundle { .. } => failure.details.push(
            "`links: outside-bundles` accepts links only outside the approved bundles".to_owned(),
        ),
        _ => {}
    }
    failure
}
