//! `skillfold prepare`: make every source of a checked descriptor available as verified bundles.
//!
//! - **Git** sources (concurrently, a bounded number of commits at a time; the sources of one
//!   (URL, commit) share one fetch, see `ops/prepare/git.rs`): take the corpus guard, remove
//!   what an interrupted preparer left, and if `current` already holds this commit with these
//!   pins and its bytes still verify, stop there — no network. Otherwise fetch exactly the pinned
//!   commit (once for all its sources), walk the whole tree (any symlink refuses the source), take the approved bundles,
//!   check the bundle rules, compare name, version and digest with each pin, write them into
//!   staging, re-read and verify the staged bytes, and publish with one atomic link flip.
//! - **Local** sources: read the deployed directory with the safe reader and verify it against
//!   its pin; nothing is copied.
//!
//! Every failure is classified by its code's exit class ([`crate::support::error_code`]):
//! retryable (unreachable source, commit not (yet) on the server, guard held, interrupted, I/O)
//! or invalid (a pin or bundle that can never verify). Any failure leaves the previously
//! published generation in place.

mod git;
mod jobs;
mod oci;
mod run;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::Serialize;

use crate::descriptor::plan::{CorpusRef, LocalSource, Plan, Source};
use crate::format::hint::{Hint, Via};
use crate::format::limits::Limits;
use crate::format::pin::Pin;
use crate::source::code::PrepareCode;
use crate::support::error_code::{Coded, ErrorCode, ExitClass};
use crate::support::escape;

use crate::descriptor::kind::SourceKind;
use crate::runtime::snapshot::Origin;

use crate::corpus::{Corpus, Manifest};
use crate::corpus::{pin_check, shared_dir};
use crate::descriptor::code::DescriptorCode;

pub use jobs::prepare;

/// A failure of one source. Its exit class is its code's ([`Coded`]); the report's `severity`
/// field is that class (`retryable` or `invalid`), written from the code and nowhere else.
#[derive(Debug, Clone)]
pub struct SourceFailure {
    /// Stable code.
    pub code: ErrorCode,
    /// What went wrong (credentials never included).
    pub message: String,
    /// Every problem, one per line, when there were several (bundle rules, several bundles).
    pub details: Vec<String>,
}

impl SourceFailure {
    /// A failure with `code`.
    fn new(code: impl Into<ErrorCode>, message: impl Into<String>) -> SourceFailure {
        SourceFailure {
            code: code.into(),
            message: message.into(),
            details: Vec::new(),
        }
    }

    /// What would accept it, named as a key of the descriptor (the human output and the
    /// report's `hint` both show this one).
    pub fn hint(&self) -> Option<Hint> {
        Hint::of_refusal(self.code.as_str(), &self.details, Via::Descriptor)
    }

    /// Retryable or invalid: the exit class of its code.
    pub fn severity(&self) -> ExitClass {
        self.code.exit()
    }
}

impl Coded for SourceFailure {
    fn error_code(&self) -> ErrorCode {
        self.code
    }
}

impl Serialize for SourceFailure {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// The report's shape: `{code, message, severity, details, hint}`.
        #[derive(Serialize)]
        struct FailureWire<'a> {
            code: ErrorCode,
            message: &'a str,
            severity: ExitClass,
            #[serde(skip_serializing_if = "<[String]>::is_empty")]
            details: &'a [String],
            #[serde(skip_serializing_if = "Option::is_none")]
            hint: Option<Hint>,
        }
        FailureWire {
            code: self.code,
            message: &self.message,
            severity: self.severity(),
            details: &self.details,
            hint: self.hint(),
        }
        .serialize(serializer)
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
    /// The limits profile it was (or is to be) checked under.
    pub limits: Limits,
    /// `published`, `up-to-date`, `verified`, `rolled-back` or `failed`.
    pub status: PrepareStatus,
}

/// What `prepare` did with one bundle. Each command reports its own statuses (`VerifyStatus`,
/// `OutdatedStatus`, `UpdateStatus`), all spelled in kebab-case in `--json` (docs/cli.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PrepareStatus {
    /// Fetched, verified and published in a new generation.
    Published,
    /// The published generation already held it, and it still verifies.
    UpToDate,
    /// A local bundle, verified in place.
    Verified,
    /// `prepare --rollback`: the generation rolled back to holds it.
    RolledBack,
    /// It could not be prepared (see the source's `error`).
    Failed,
}

impl PrepareStatus {
    /// The spelling of the report.
    pub fn as_str(self) -> &'static str {
        match self {
            PrepareStatus::Published => "published",
            PrepareStatus::UpToDate => "up-to-date",
            PrepareStatus::Verified => "verified",
            PrepareStatus::RolledBack => "rolled-back",
            PrepareStatus::Failed => "failed",
        }
    }
}

impl std::fmt::Display for PrepareStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What happened to one source.
#[derive(Debug, Clone)]
pub struct SourceReport {
    /// Where it comes from, the record's [`Origin`]: `kind` (`git`, `oci` or `local`),
    /// `location`, `url` (the Git URL without credentials, or `REGISTRY/REPOSITORY`), `commit`
    /// (the pinned commit or manifest digest), `generation` (the one published). Flattened into
    /// the source's object.
    pub origin: Origin,
    /// The corpus (git, oci) or bundle (local) directory.
    pub directory: PathBuf,
    /// Which symbolic links the commit may hold, `refuse` or `outside-bundles` (git).
    pub links: Option<&'static str>,
    /// How the commit was fetched, when it was (git): `partial` (its trees, then the blobs of
    /// the approved bundles) or `full` (the whole commit: the server offers no partial fetch, or
    /// refused it).
    pub fetch: Option<&'static str>,
    /// Every bundle of the source.
    pub bundles: Vec<BundleReport>,
    /// Who signed the commit, when the source requires a signature.
    pub signer: Option<crate::trust::commit::policy::Signer>,
    /// Who published the image, when the source checks its publisher (`verify` of an `oci`
    /// source).
    pub publisher: Option<crate::trust::verdict::Publisher>,
    /// Why it failed, if it did.
    pub error: Option<SourceFailure>,
}

impl Serialize for SourceReport {
    /// `{kind, location, directory, url, commit, generation, links, fetch, bundles, signer,
    /// publisher, error}`: the origin's fields flattened, in the order the report has always had
    /// (`directory` after `location`), absent ones left out.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let origin = &self.origin;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("kind", &origin.kind)?;
        map.serialize_entry("location", &origin.location)?;
        map.serialize_entry("directory", &self.directory)?;
        for (key, value) in [
            ("url", &origin.url),
            ("commit", &origin.commit),
            ("generation", &origin.generation),
        ] {
            if let Some(value) = value {
                map.serialize_entry(key, value)?;
            }
        }
        if let Some(links) = self.links {
            map.serialize_entry("links", links)?;
        }
        if let Some(fetch) = self.fetch {
            map.serialize_entry("fetch", fetch)?;
        }
        map.serialize_entry("bundles", &self.bundles)?;
        if let Some(signer) = &self.signer {
            map.serialize_entry("signer", signer)?;
        }
        if let Some(publisher) = &self.publisher {
            map.serialize_entry("publisher", publisher)?;
        }
        if let Some(error) = &self.error {
            map.serialize_entry("error", error)?;
        }
        map.end()
    }
}

/// The final report (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct PrepareReport {
    /// One entry per source, in descriptor order.
    pub sources: Vec<SourceReport>,
    /// How many commits were fetched: at most one per distinct (URL, commit) that was not
    /// already published.
    pub fetches: usize,
    /// Wall time of the whole preparation.
    pub duration_ms: u64,
}

impl PrepareReport {
    /// Every failure of the report, one per failed source (what the exit status is taken from).
    pub fn failures(&self) -> impl Iterator<Item = &SourceFailure> {
        self.sources.iter().filter_map(|s| s.error.as_ref())
    }
}

/// Receives one line per step; the CLI shows them as progress or log lines.
pub trait Progress: Sync {
    /// A step of the source at `location` started or finished.
    fn step(&self, location: &str, message: &str);
    /// Something worth a permanent line (a warning, a recovered guard).
    fn note(&self, location: &str, message: &str);
    /// How a running transfer is doing (several times a second; a log may keep only some).
    /// Only the Git fetcher reports transfers.
    #[cfg_attr(
        not(feature = "git"),
        expect(dead_code, reason = "only the Git fetcher reports transfers")
    )]
    fn transfer(&self, location: &str, message: &str) {
        self.step(location, message);
    }
}

/// The overall deadline of each fetch or pull of a preparation nobody gave one (the reload of
/// `serve --watch`): 300 s, `--fetch-timeout`'s default.
#[cfg(feature = "mcp")]
pub const DEFAULT_FETCH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// How to prepare.
pub struct Options<'a> {
    /// Set by SIGINT/SIGTERM; polled throughout.
    pub interrupt: &'a AtomicBool,
    /// Progress lines.
    pub progress: &'a dyn Progress,
    /// Sources prepared at the same time.
    pub concurrency: usize,
    /// The overall deadline of each fetch (Git) or pull (OCI), besides the transports' idle
    /// timeouts: past it the source fails, retryable, and nothing of it is published.
    pub fetch_timeout: std::time::Duration,
}

fn bundle_reports(pins: &[Pin], limits: Limits, status: PrepareStatus) -> Vec<BundleReport> {
    pins.iter()
        .map(|p| BundleReport {
            name: p.name.to_string(),
            version: p.version.as_str().to_owned(),
            hash: p.hash.to_string(),
            limits,
            status,
        })
        .collect()
}

fn verify_local(local: &LocalSource, options: &Options<'_>) -> SourceReport {
    options.progress.step(
        &local.location,
        &format!("verifying `{}`", escape::path(&local.directory)),
    );
    let result = pin_check::verify_dir(&local.directory, &local.pin, local.limits, None);
    let pins = std::slice::from_ref(&local.pin);
    let (status, error) = match result {
        Ok(_) => (PrepareStatus::Verified, None),
        Err(e) => {
            let details = e.problem_lines();
            let mut failure = SourceFailure::new(e.code(), e.to_string());
            failure.details = details;
            (PrepareStatus::Failed, Some(failure))
        }
    };
    SourceReport {
        origin: Origin::new(SourceKind::Local, local.location.clone()),
        directory: local.directory.clone(),
        links: None,
        fetch: None,
        bundles: bundle_reports(pins, local.limits, status),
        signer: None,
        publisher: None,
        error,
    }
}

/// The Git and OCI sources of `plan` whose corpus directories are one folder on disk, or one
/// inside the other (through a link or a mount: `check` compares them as text), by descriptor
/// index, each with its failure (`shared_directory`) naming the other source. With `make`, each
/// corpus directory is first made as preparing it would ([`Corpus::create`], whose failures its
/// own run reports), so that directories that do not exist yet are compared too.
pub(crate) fn shared_directories(plan: &Plan, make: bool) -> BTreeMap<usize, SourceFailure> {
    let corpora: Vec<(usize, CorpusRef<'_>)> = plan
        .sources
        .iter()
        .enumerate()
        .filter_map(|(index, source)| match source {
            Source::Git(git) => Some((index, git.corpus())),
            Source::Oci(oci) => Some((index, oci.corpus())),
            Source::Local(_) => None,
        })
        .collect();
    let mut refused = BTreeMap::new();
    if corpora.len() < 2 {
        return refused;
    }
    if make {
        for (_, corpus) in &corpora {
            let _ = Corpus::create(corpus.directory);
        }
    }
    let directories: Vec<&std::path::Path> = corpora.iter().map(|(_, c)| c.directory).collect();
    let locations: Vec<&str> = corpora.iter().map(|(_, c)| c.location).collect();
    for shared in shared_dir::shared_directories(&directories) {
        for this in [shared.first, shared.second] {
            refused.entry(corpora[this].0).or_insert_with(|| {
                SourceFailure::new(
                    DescriptorCode::SharedDirectory,
                    shared.message(this, &locations, &directories),
                )
            });
        }
    }
    refused
}

fn io_failure(e: &crate::corpus::CorpusError) -> SourceFailure {
    SourceFailure::new(e.code(), e.to_string())
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// `prepare --rollback`: points every Git corpus back at the generation its last preparation
/// replaced, after verifying that generation against its own manifest. The descriptor must then
/// be changed to pin what is published again, or `verify` will report the difference.
pub fn rollback(plan: &Plan, progress: &dyn Progress) -> PrepareReport {
    let started = Instant::now();
    let mut refused = shared_directories(plan, false);
    let sources = plan
        .sources
        .iter()
        .enumerate()
        .filter_map(|(index, source)| {
            // What is rolled back to is known only once it is found.
            let (mut report, corpus) = match source {
                Source::Git(git) => (SourceReport::git(git), git.corpus()),
                Source::Oci(oci) => (SourceReport::oci(oci), oci.corpus()),
                Source::Local(_) => return None,
            };
            report.origin.commit = None;
            report.bundles = Vec::new();
            if let Some(failure) = refused.remove(&index) {
                report.error = Some(failure);
                return Some(report);
            }
            match rollback_one(corpus, progress) {
                Ok((id, manifest)) => {
                    report.origin.commit = Some(manifest.source.commit.clone());
                    report.origin.generation = Some(id);
                    let pins: Vec<Pin> = manifest.bundles.iter().map(|b| b.pin.clone()).collect();
                    report.bundles =
                        bundle_reports(&pins, corpus.limits, PrepareStatus::RolledBack);
                }
                Err(failure) => report.error = Some(failure),
            }
            Some(report)
        })
        .collect();
    PrepareReport {
        sources,
        fetches: 0,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }
}

fn rollback_one(
    git: CorpusRef<'_>,
    progress: &dyn Progress,
) -> Result<(String, Manifest), SourceFailure> {
    let corpus = Corpus::at(git.directory);
    corpus.check_manageable().map_err(|e| io_failure(&e))?;
    // No store (yet: a first preparation may be making it right now) is nothing to roll back
    // to, not a guard that cannot be taken.
    if !corpus.exists().map_err(|e| io_failure(&e))? {
        return Err(SourceFailure::new(
            PrepareCode::CorpusNoPrevious,
            format!(
                "`{}` has no previous generation to roll back to (it was never prepared)",
                escape::path(git.directory)
            ),
        ));
    }
    let _guard = corpus
        .guard()
        .map_err(|e| SourceFailure::new(e.code(), e.to_string()))?;
    let previous = corpus
        .previous()
        .map_err(|e| io_failure(&e))?
        .ok_or_else(|| {
            SourceFailure::new(
                PrepareCode::CorpusNoPrevious,
                format!(
                    "`{}` has no previous generation to roll back to",
                    escape::path(git.directory)
                ),
            )
        })?;
    progress.step(
        git.location,
        &format!("verifying generation {}", previous.id),
    );
    // Whatever the reason (an I/O error too), a generation that does not verify cannot be
    // rolled back to: a code of its own, invalid; the reader's code is kept in the message.
    pin_check::verify_recorded(&previous.dir, &previous.manifest.bundles, git.limits).map_err(
        |e| {
            SourceFailure::new(
                PrepareCode::CorpusPreviousUnverified,
                format!(
                    "the previous generation does not verify ({}): {e}",
                    e.code()
                ),
            )
        },
    )?;
    let generation = corpus.rollback().map_err(|e| io_failure(&e))?;
    progress.note(
        git.location,
        &format!(
            "rolled back to generation {} (commit {}); pin it in the descriptor again",
            generation.id,
            short(&generation.manifest.source.commit)
        ),
    );
    Ok((generation.id, generation.manifest))
}

#[cfg(test)]
mod tests {
    use super::{PrepareStatus, SourceFailure, SourceReport, bundle_reports};
    use crate::descriptor::kind::SourceKind;
    use crate::format::limits::Limits;
    use crate::runtime::snapshot::Origin;
    use crate::source::code::PrepareCode;

    // The report's JSON is a stable interface: the origin's fields flattened in the order the
    // report always had, the kind and statuses spelled as before, `severity` from the code.
    #[test]
    fn a_source_report_serialises_as_it_always_did() {
        let pin = crate::format::pin::Pin {
            name: "hello".parse().expect("name"),
            version: "1".parse().expect("version"),
            hash: "0".repeat(64).parse().expect("hash"),
        };
        let report = SourceReport {
            origin: Origin {
                url: Some("127.0.0.1:5000/skills".to_owned()),
                commit: Some(format!("sha256:{}", "a".repeat(64))),
                ..Origin::new(SourceKind::Oci, "skills[0].oci")
            },
            directory: "corpus".into(),
            links: None,
            fetch: None,
            bundles: bundle_reports(&[pin], Limits::default(), PrepareStatus::UpToDate),
            signer: None,
            publisher: None,
            error: Some(SourceFailure::new(PrepareCode::GuardHeld, "held")),
        };
        let json = serde_json::to_string(&report).expect("json");
        let keys: Vec<&str> = [
            "\"kind\":\"oci\"",
            "\"location\"",
            "\"directory\"",
            "\"url\"",
            "\"commit\"",
            "\"bundles\"",
            "\"status\":\"up-to-date\"",
            "\"error\"",
            "\"code\":\"guard_held\"",
            "\"severity\":\"retryable\"",
        ]
        .to_vec();
        let mut at = 0;
        for key in keys {
            let found = json[at..]
                .find(key)
                .unwrap_or_else(|| panic!("{key} in order: {json}"));
            at += found + key.len();
        }
        assert!(
            !json.contains("generation") && !json.contains("signer"),
            "{json}"
        );
    }
}
