//! `skillfold prepare`: make every source of a checked descriptor available as verified bundles.
//!
//! - **Git** sources (concurrently, a bounded number at a time): take the corpus guard, remove
//!   what an interrupted preparer left, and if `current` already holds this commit with these
//!   pins and its bytes still verify, stop there — no network. Otherwise fetch exactly the pinned
//!   commit, walk the whole tree (any symlink refuses the source), take the approved bundles,
//!   check the bundle rules, compare name, version and digest with each pin, write them into
//!   staging, re-read and verify the staged bytes, and publish with one atomic link flip.
//! - **Local** sources: read the deployed directory with the safe reader and verify it against
//!   its pin; nothing is copied.
//!
//! Every failure is classified by its code's exit class ([`crate::format::code`]):
//! [`Severity::Retryable`] (unreachable source, commit not (yet) on the server, guard held,
//! interrupted, I/O) or [`Severity::Invalid`] (a pin or bundle that can never verify). Any
//! failure leaves the previously published generation in place.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::Serialize;

use crate::descriptor::plan::{GitSource, LocalSource, Plan, Source};
use crate::format::code::{ErrorCode, ExitClass};
use crate::format::escape;
use crate::format::pin::Pin;
use crate::prepare::code::PrepareCode;
use crate::prepare::corpus::manifest::{self, ManifestBundle, ManifestSource};
use crate::prepare::corpus::store::Staging;
use crate::prepare::corpus::{Corpus, Manifest};
use crate::prepare::verify;

/// How bad a failure is, for the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Running again later may succeed (exit 1).
    Retryable,
    /// Configuration or verification: it will not succeed until someone changes something
    /// (exit 2).
    Invalid,
}

impl Severity {
    /// The severity of a failure with `code`: its exit class. (A failure never has a code of
    /// class `Ok`; only warnings do.)
    pub fn of(code: ErrorCode) -> Severity {
        match code.exit() {
            ExitClass::Retryable => Severity::Retryable,
            ExitClass::Ok | ExitClass::Invalid => Severity::Invalid,
        }
    }
}

impl From<Severity> for ExitClass {
    fn from(severity: Severity) -> ExitClass {
        match severity {
            Severity::Retryable => ExitClass::Retryable,
            Severity::Invalid => ExitClass::Invalid,
        }
    }
}

/// A failure of one source.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    /// Stable code.
    pub code: ErrorCode,
    /// What went wrong (credentials never included).
    pub message: String,
    /// Retryable or invalid.
    pub severity: Severity,
    /// Every problem, one per line, when there were several (bundle rules, several bundles).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
}

impl Failure {
    /// A failure with `code`, as severe as the code's exit class.
    fn new(code: impl Into<ErrorCode>, message: impl Into<String>) -> Failure {
        let code = code.into();
        Failure {
            code,
            message: message.into(),
            severity: Severity::of(code),
            details: Vec::new(),
        }
    }

    /// The same failure, with the severity the situation gives it rather than its code's (a
    /// staged copy that does not verify is a disk problem; a previous generation that does not
    /// verify cannot be rolled back to, whatever the reason).
    fn with_severity(mut self, severity: Severity) -> Failure {
        self.severity = severity;
        self
    }
}

/// What happened to one bundle.
#[derive(Debug, Clone, Serialize)]
pub struct BundleReport {
    /// The pinned name.
    pub name: String,
    /// The pinned version.
    pub version: String,
    /// The pinned hash.
    pub hash: String,
    /// `published`, `up-to-date`, `verified` or `failed`.
    pub status: &'static str,
}

/// What happened to one source.
#[derive(Debug, Clone, Serialize)]
pub struct SourceReport {
    /// `git` or `local`.
    pub kind: &'static str,
    /// Where it is written in the descriptor.
    pub location: String,
    /// The corpus (git) or bundle (local) directory.
    pub directory: PathBuf,
    /// The repository URL without credentials (git).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The pinned commit (git).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The published generation (git).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<String>,
    /// Every bundle of the source.
    pub bundles: Vec<BundleReport>,
    /// Why it failed, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Failure>,
}

/// The final report (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct PrepareReport {
    /// One entry per source, in descriptor order.
    pub sources: Vec<SourceReport>,
    /// Wall time of the whole preparation.
    pub duration_ms: u64,
}

impl PrepareReport {
    /// The worst failure, if any.
    pub fn worst(&self) -> Option<Severity> {
        self.sources
            .iter()
            .filter_map(|s| s.error.as_ref().map(|e| e.severity))
            .max()
    }
}

/// Receives one line per step; the CLI shows them as progress or log lines.
pub trait Progress: Sync {
    /// A step of the source at `location` started or finished.
    fn step(&self, location: &str, message: &str);
    /// Something worth a permanent line (a warning, a recovered guard).
    fn note(&self, location: &str, message: &str);
    /// How a running transfer is doing (several times a second; a log may keep only some).
    fn transfer(&self, location: &str, message: &str) {
        self.step(location, message);
    }
}

/// How to prepare.
pub struct Options<'a> {
    /// Set by SIGINT/SIGTERM; polled throughout.
    pub interrupt: &'a AtomicBool,
    /// Progress lines.
    pub progress: &'a dyn Progress,
    /// Sources prepared at the same time.
    pub concurrency: usize,
}

/// Prepares every source of `plan`.
pub fn prepare(plan: &Plan, options: &Options<'_>) -> PrepareReport {
    let started = Instant::now();
    let sources = crate::parallel::map(&plan.sources, options.concurrency, |source| match source {
        Source::Git(git) => prepare_git(git, options),
        Source::Local(local) => verify_local(local, options),
    });
    PrepareReport {
        sources,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }
}

fn bundle_reports(pins: &[Pin], status: &'static str) -> Vec<BundleReport> {
    pins.iter()
        .map(|p| BundleReport {
            name: p.name.to_string(),
            version: p.version.as_str().to_owned(),
            hash: p.hash.to_string(),
            status,
        })
        .collect()
}

fn verify_local(local: &LocalSource, options: &Options<'_>) -> SourceReport {
    options.progress.step(
        &local.location,
        &format!("verifying `{}`", escape::path(&local.directory)),
    );
    let result = verify::verify_dir(&local.directory, &local.pin, None);
    let pins = std::slice::from_ref(&local.pin);
    let (status, error) = match result {
        Ok(_) => ("verified", None),
        Err(e) => {
            let details = match &e {
                verify::VerifyError::Load {
                    source: crate::format::bundle::LoadError::Invalid(invalid),
                    ..
                } => invalid
                    .problems
                    .as_slice()
                    .iter()
                    .map(ToString::to_string)
                    .collect(),
                _ => Vec::new(),
            };
            let mut failure = Failure::new(e.code(), e.to_string());
            failure.details = details;
            ("failed", Some(failure))
        }
    };
    SourceReport {
        kind: "local",
        location: local.location.clone(),
        directory: local.directory.clone(),
        url: None,
        commit: None,
        generation: None,
        bundles: bundle_reports(pins, status),
        error,
    }
}

fn prepare_git(git: &GitSource, options: &Options<'_>) -> SourceReport {
    let mut report = SourceReport {
        kind: "git",
        location: git.location.clone(),
        directory: git.directory.clone(),
        url: Some(git.shown.as_str().to_owned()),
        commit: Some(git.revision.to_string()),
        generation: None,
        bundles: bundle_reports(&git.approved, "failed"),
        error: None,
    };
    match GitRun::new(git, options).and_then(|run| run.run()) {
        Ok((generation, status)) => {
            report.generation = Some(generation);
            report.bundles = bundle_reports(&git.approved, status);
        }
        Err(failure) => {
            options
                .progress
                .note(&git.location, &format!("failed: {}", failure.message));
            report.error = Some(failure);
        }
    }
    report
}

/// One preparation of one Git source, holding its guard.
struct GitRun<'a> {
    git: &'a GitSource,
    options: &'a Options<'a>,
    corpus: Corpus,
    _guard: crate::prepare::corpus::Guard,
}

impl<'a> GitRun<'a> {
    fn new(git: &'a GitSource, options: &'a Options<'a>) -> Result<GitRun<'a>, Failure> {
        let corpus = Corpus::create(&git.directory).map_err(|e| {
            let mut failure = io_failure(&e);
            failure.message = format!("cannot create the corpus: {}", failure.message);
            failure
        })?;
        let guard = corpus
            .guard()
            .map_err(|e| Failure::new(e.code(), e.to_string()))?;
        if let Some(holder) = &guard.recovered {
            options.progress.note(
                &git.location,
                &format!("recovered the guard left by {holder}, which is no longer running"),
            );
        }
        let removed = corpus.remove_leftovers().map_err(|e| io_failure(&e))?;
        if !removed.is_empty() {
            options.progress.note(
                &git.location,
                &format!(
                    "removed {} leftover(s) of an interrupted preparation",
                    removed.len()
                ),
            );
        }
        Ok(GitRun {
            git,
            options,
            corpus,
            _guard: guard,
        })
    }

    fn step(&self, message: &str) {
        self.options.progress.step(&self.git.location, message);
    }

    fn note(&self, message: &str) {
        self.options.progress.note(&self.git.location, message);
    }

    fn check_interrupt(&self) -> Result<(), Failure> {
        if self.options.interrupt.load(Ordering::Relaxed) {
            return Err(Failure::new(
                PrepareCode::Interrupted,
                "interrupted by a signal",
            ));
        }
        Ok(())
    }

    /// Returns the published generation and the bundles' status.
    fn run(self) -> Result<(String, &'static str), Failure> {
        if let Some(generation) = self.up_to_date()? {
            self.step("up to date (verified, no fetch)");
            return Ok((generation, "up-to-date"));
        }
        self.check_interrupt()?;
        let staging = self
            .corpus
            .stage(self.git.revision.as_str())
            .map_err(|e| io_failure(&e))?;
        let result = self.fetch_and_stage(&staging);
        let result = result.and_then(|bundles| self.publish(&staging, bundles));
        match result {
            Ok(generation) => Ok((generation, "published")),
            Err(failure) => {
                // Leave the published generation alone; remove what this run wrote.
                let _ = fs_err::remove_dir_all(&staging.dir);
                let _ = fs_err::remove_dir_all(self.corpus.fetch_dir(&staging.id));
                Err(failure)
            }
        }
    }

    /// The published generation, if it already holds this commit and these pins and verifies.
    fn up_to_date(&self) -> Result<Option<String>, Failure> {
        let current = match self.corpus.current() {
            Ok(Some(current)) => current,
            Ok(None) => return Ok(None),
            Err(e @ crate::prepare::corpus::CorpusError::NotManaged { .. }) => {
                return Err(Failure::new(e.code(), e.to_string()));
            }
            Err(e) => {
                self.note(&format!("ignoring the published generation: {e}"));
                return Ok(None);
            }
        };
        let m = &current.manifest;
        let mut pinned: Vec<&Pin> = self.git.approved.iter().collect();
        pinned.sort();
        let mut held: Vec<&Pin> = m.bundles.iter().map(|b| &b.pin).collect();
        held.sort();
        let same_source = m.source.commit == self.git.revision.as_str()
            && m.source.url == self.git.shown.as_str()
            && m.source.root.as_deref() == self.git.root.as_ref().map(|r| r.as_str());
        if !same_source || pinned != held {
            return Ok(None);
        }
        self.step("verifying the published generation");
        if let Err(e) = verify::verify_recorded(&current.dir, &m.bundles) {
            self.note(&format!(
                "the published generation no longer verifies ({e}); preparing it again"
            ));
            return Ok(None);
        }
        Ok(Some(current.id))
    }

    #[cfg(feature = "git")]
    fn fetch_and_stage(&self, staging: &Staging) -> Result<Vec<ManifestBundle>, Failure> {
        use crate::prepare::git::commit::{PinnedCommit, bundle_folder};

        let git_dir = self.corpus.fetch_dir(&staging.id);
        let url = escape::text(self.git.shown.as_str());
        self.step(&format!(
            "fetching {url} at {}",
            short(self.git.revision.as_str())
        ));
        let fetching = format!("fetching {url}");
        let report = |transfer: &str| {
            let line = format!("{fetching}: {transfer}");
            self.options.progress.transfer(&self.git.location, &line);
        };
        let commit = PinnedCommit::fetch(
            &self.git.url,
            &self.git.revision,
            &git_dir,
            self.options.interrupt,
            &report,
        )
        .map_err(|e| {
            let mut failure = Failure::new(e.code(), e.to_string());
            if let crate::prepare::git::commit::CommitError::Symlinks { paths, count, .. } = &e {
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
            failure
        })?;
        if commit.used_fallback() {
            self.note("the server refused to send the commit by id; fetched its branches and tags instead");
        }
        let root = self.git.root.as_ref();
        let folders: Vec<String> = self
            .git
            .approved
            .iter()
            .map(|p| bundle_folder(root, &p.name))
            .collect();
        let (gitlinks, unlisted) = commit.gitlinks_outside(&folders);
        for gitlink in gitlinks {
            self.note(&format!(
                "submodule `{}` outside the approved bundles is ignored (never followed)",
                escape::text(&gitlink)
            ));
        }
        if unlisted > 0 {
            self.note(&format!(
                "{unlisted} more submodule(s) are not listed; none is followed"
            ));
        }
        let mut bundles = Vec::new();
        let mut details = Vec::new();
        for (pin, folder) in self.git.approved.iter().zip(folders) {
            self.check_interrupt()?;
            let bundle = match commit.take(root, &pin.name) {
                Ok(bundle) => bundle,
                Err(e) => {
                    details.extend(e.lines());
                    continue;
                }
            };
            match verify::verify_bundle(bundle, std::path::Path::new(&folder), pin, None) {
                Ok(bundle) => {
                    staging
                        .write_bundle(pin.name.as_str(), bundle.files())
                        .map_err(|e| io_failure(&e))?;
                    bundles.push(ManifestBundle::of(pin, folder, &bundle));
                }
                Err(e) => details.push(format!("{e} [{}]", e.code())),
            }
        }
        drop(commit);
        let _ = fs_err::remove_dir_all(&git_dir);
        if !details.is_empty() {
            let mut failure = Failure::new(
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

    #[cfg(not(feature = "git"))]
    fn fetch_and_stage(&self, _staging: &Staging) -> Result<Vec<ManifestBundle>, Failure> {
        Err(Failure::new(
            PrepareCode::GitDisabled,
            "this build of skillfold has no Git fetcher (built without the `git` feature)",
        ))
    }

    fn publish(&self, staging: &Staging, bundles: Vec<ManifestBundle>) -> Result<String, Failure> {
        self.check_interrupt()?;
        self.step("verifying the staged bytes");
        verify::verify_recorded(&staging.dir, &bundles).map_err(|e| {
            Failure::new(e.code(), format!("the staged copy does not verify: {e}"))
                .with_severity(Severity::Retryable)
        })?;
        self.check_interrupt()?;
        self.step("publishing");
        let mut bundles = bundles;
        bundles.sort_by(|a, b| a.pin.name.cmp(&b.pin.name));
        let manifest = Manifest {
            format: manifest::FORMAT.to_owned(),
            generation: String::new(),
            created_unix: crate::time::now_unix(),
            source: ManifestSource {
                url: self.git.shown.as_str().to_owned(),
                commit: self.git.revision.to_string(),
                root: self.git.root.as_ref().map(ToString::to_string),
            },
            bundles,
        };
        let generation = self
            .corpus
            .publish(staging, manifest)
            .map_err(|e| io_failure(&e))?;
        self.step(&format!("published generation {}", generation.id));
        Ok(generation.id)
    }
}

fn io_failure(e: &crate::prepare::corpus::CorpusError) -> Failure {
    Failure::new(e.code(), e.to_string())
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// `prepare --rollback`: points every Git corpus back at the generation its last preparation
/// replaced, after verifying that generation against its own manifest. The descriptor must then
/// be changed to pin what is published again, or `verify` will report the difference.
pub fn rollback(plan: &Plan, progress: &dyn Progress) -> PrepareReport {
    let started = Instant::now();
    let sources = plan
        .git_sources()
        .map(|git| {
            let mut report = SourceReport {
                kind: "git",
                location: git.location.clone(),
                directory: git.directory.clone(),
                url: Some(git.shown.as_str().to_owned()),
                commit: None,
                generation: None,
                bundles: Vec::new(),
                error: None,
            };
            match rollback_one(git, progress) {
                Ok((id, manifest)) => {
                    report.commit = Some(manifest.source.commit.clone());
                    report.generation = Some(id);
                    let pins: Vec<Pin> = manifest.bundles.iter().map(|b| b.pin.clone()).collect();
                    report.bundles = bundle_reports(&pins, "rolled-back");
                }
                Err(failure) => report.error = Some(failure),
            }
            report
        })
        .collect();
    PrepareReport {
        sources,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }
}

fn rollback_one(git: &GitSource, progress: &dyn Progress) -> Result<(String, Manifest), Failure> {
    let corpus = Corpus::at(&git.directory);
    corpus.check_manageable().map_err(|e| io_failure(&e))?;
    let _guard = corpus
        .guard()
        .map_err(|e| Failure::new(e.code(), e.to_string()))?;
    let previous = corpus
        .previous()
        .map_err(|e| io_failure(&e))?
        .ok_or_else(|| {
            Failure::new(
                PrepareCode::CorpusNoPrevious,
                format!(
                    "`{}` has no previous generation to roll back to",
                    escape::path(&git.directory)
                ),
            )
        })?;
    progress.step(
        &git.location,
        &format!("verifying generation {}", previous.id),
    );
    verify::verify_recorded(&previous.dir, &previous.manifest.bundles).map_err(|e| {
        Failure::new(
            e.code(),
            format!("the previous generation does not verify: {e}"),
        )
        .with_severity(Severity::Invalid)
    })?;
    let generation = corpus.rollback().map_err(|e| io_failure(&e))?;
    progress.note(
        &git.location,
        &format!(
            "rolled back to generation {} (commit {}); pin it in the descriptor again",
            generation.id,
            short(&generation.manifest.source.commit)
        ),
    );
    Ok((generation.id, generation.manifest))
}
