//! Snapshots: verified bundles held in memory, immutable, shared by `Arc`.
//!
//! Loading reads every byte with the safe reader, checks every bundle rule, and compares name,
//! declared version and digest with the pin **from the descriptor** (not only with the corpus's
//! own manifest, which is used to name the files that changed). A bundle that does not verify is
//! not loaded — and nothing older, newer or unverified is loaded in its place: the failure is
//! returned, naming the bundle and the problem. Once loaded, nothing on disk can change what a
//! snapshot serves.
//!
//! Sources: a prepared Git corpus (its `current` generation is resolved once, so a concurrent
//! preparation is seen entirely or not at all), a deployed local directory, or any
//! [`BundleSource`] a host implements in code, whose bundles go through the same verification.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::descriptor::plan::{GitSource, LocalSource, Source};
use crate::format::bundle::Bundle;
use crate::format::code::ErrorCode;
use crate::format::file_set::FileSet;
use crate::format::limits;
use crate::format::pin::Pin;
use crate::format::problem::Problems;
use crate::prepare::corpus::Corpus;
use crate::prepare::verify::{self, VerifyError};
use crate::runtime::code::RuntimeCode;

/// Where a snapshot came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Origin {
    /// `git`, `local` or `custom`.
    pub kind: &'static str,
    /// Where it is configured (`skills[0].git`, or a host's label).
    pub location: String,
    /// The repository URL without credentials (git).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The pinned commit (git).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The corpus generation it was read from (git).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<String>,
}

/// A verified bundle in memory.
#[derive(Debug)]
pub struct Snapshot {
    bundle: Bundle,
    pin: Pin,
    origin: Origin,
    location: PathBuf,
    /// The directory the bytes were read from (for a corpus: inside the generation, never
    /// through `current`), where approved helpers run; `None` for in-memory sources.
    dir: Option<PathBuf>,
    references: Vec<String>,
    /// SHA-256 (hex) of what each call can serve: the body, then each reference in order.
    body_sha256: String,
    reference_sha256: Vec<String>,
}

impl Snapshot {
    /// Verifies `bundle` against `pin` and wraps it. `location` is where its `SKILL.md` can be
    /// read by other clients (shown in the catalogue prompt).
    pub fn new(
        bundle: Bundle,
        pin: Pin,
        origin: Origin,
        location: PathBuf,
    ) -> Result<Snapshot, Box<VerifyError>> {
        let bundle = verify::verify_bundle(bundle, &location, &pin, None).map_err(Box::new)?;
        Ok(Snapshot::verified(bundle, pin, origin, location))
    }

    fn verified(bundle: Bundle, pin: Pin, origin: Origin, location: PathBuf) -> Snapshot {
        let (references, reference_sha256) = bundle
            .files()
            .iter()
            .filter(|(p, _)| p.as_str() != limits::SKILL_MD)
            .map(|(p, bytes)| (p.to_string(), crate::format::hex::sha256_hex(bytes)))
            .unzip();
        let body_sha256 = crate::format::hex::sha256_hex(bundle.body().as_bytes());
        Snapshot {
            bundle,
            pin,
            origin,
            location,
            dir: None,
            references,
            body_sha256,
            reference_sha256,
        }
    }

    /// The pin it verified against.
    pub fn pin(&self) -> &Pin {
        &self.pin
    }

    /// The skill's description.
    pub fn description(&self) -> &str {
        self.bundle.description()
    }

    /// The Markdown body of `SKILL.md`, unchanged.
    pub fn body(&self) -> &str {
        self.bundle.body()
    }

    /// The supporting files' paths, sorted (code-point order).
    pub fn references(&self) -> &[String] {
        &self.references
    }

    /// The bytes of a supporting file (never `SKILL.md`).
    pub fn reference(&self, path: &str) -> Option<&[u8]> {
        if path == limits::SKILL_MD {
            return None;
        }
        self.bundle.files().get(path)
    }

    /// The SHA-256 (lowercase hex) of what serving `reference` returns (`None`: the body),
    /// computed once when the snapshot was made.
    pub fn served_sha256(&self, reference: Option<&str>) -> Option<&str> {
        match reference {
            None => Some(&self.body_sha256),
            Some(path) => self
                .references
                .binary_search_by(|r| r.as_str().cmp(path))
                .ok()
                .map(|i| self.reference_sha256[i].as_str()),
        }
    }

    /// Every file.
    pub fn files(&self) -> &FileSet {
        self.bundle.files()
    }

    /// Where it came from.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The same snapshot, read from `dir` on disk.
    pub fn read_from(mut self, dir: PathBuf) -> Snapshot {
        self.dir = Some(dir);
        self
    }

    /// The directory its bytes were read from, if they came from disk.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The path of its `SKILL.md` as other clients see it.
    pub fn location(&self) -> &Path {
        &self.location
    }

    /// Same pin and same bytes.
    pub fn same_content(&self, other: &Snapshot) -> bool {
        self.pin == other.pin && self.bundle.digest() == other.bundle.digest()
    }
}

/// One bundle of a source: its snapshot, or why it is not served.
pub type Loaded = Result<Arc<Snapshot>, LoadFailure>;

/// A bundle that could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("`{name}` ({location}) is not served: {reason}")]
pub struct LoadFailure {
    /// The pinned name.
    pub name: String,
    /// Where it is configured.
    pub location: String,
    /// Stable code (of the area that refused the bundle: reading, pins, corpus, runtime).
    pub code: ErrorCode,
    /// Why.
    pub reason: String,
    /// Every problem, when there were several.
    pub details: Vec<String>,
    /// An I/O error kept the bytes from being read: reading again may succeed. (A bundle that
    /// was read and does not verify, or is not prepared, is not transient.)
    pub transient: bool,
}

impl LoadFailure {
    fn from_verify(pin: &Pin, location: &str, e: &VerifyError) -> LoadFailure {
        let details = match e {
            VerifyError::Load {
                source: crate::format::bundle::LoadError::Invalid(invalid),
                ..
            } => invalid
                .problems
                .as_slice()
                .iter()
                .filter(|p| p.is_error())
                .map(ToString::to_string)
                .collect(),
            _ => Vec::new(),
        };
        LoadFailure {
            name: pin.name.to_string(),
            location: location.to_owned(),
            code: e.code(),
            reason: e.to_string(),
            details,
            transient: e.is_transient(),
        }
    }
}

/// A host's own source of bundles (embedded, fetched by other means, ...). Its bundles go
/// through exactly the verification of every other source.
pub trait BundleSource {
    /// A label for messages and records.
    fn label(&self) -> String;
    /// The pins it provides, each with the file set (and any problems its reader found).
    fn bundles(&self) -> Vec<(Pin, FileSet, Problems)>;
}

/// Loads every bundle of a source of the plan.
pub fn load_source(source: &Source) -> Vec<Loaded> {
    match source {
        Source::Git(git) => load_corpus(git),
        Source::Local(local) => vec![load_local(local)],
    }
}

fn load_local(local: &LocalSource) -> Loaded {
    let origin = Origin {
        kind: "local",
        location: local.location.clone(),
        url: None,
        commit: None,
        generation: None,
    };
    let bundle = verify::verify_dir(&local.directory, &local.pin, None)
        .map_err(|e| LoadFailure::from_verify(&local.pin, &local.location, &e))?;
    let location = local.directory.join(limits::SKILL_MD);
    let snapshot = Snapshot::verified(bundle, local.pin.clone(), origin, location);
    Ok(Arc::new(snapshot.read_from(local.directory.clone())))
}

fn load_corpus(git: &GitSource) -> Vec<Loaded> {
    let corpus = Corpus::at(&git.directory);
    let fail_all = |code: ErrorCode, reason: String, transient: bool| {
        git.approved
            .iter()
            .map(|pin| {
                Err(LoadFailure {
                    name: pin.name.to_string(),
                    location: git.location.clone(),
                    code,
                    reason: reason.clone(),
                    details: Vec::new(),
                    transient,
                })
            })
            .collect()
    };
    let generation = match corpus.current() {
        Ok(Some(g)) => g,
        Ok(None) => {
            return fail_all(
                RuntimeCode::NotPrepared.into(),
                format!(
                    "`{}` holds no prepared generation; run `skillfold prepare`",
                    git.directory.display()
                ),
                false,
            );
        }
        Err(e) => {
            let transient = matches!(e, crate::prepare::corpus::CorpusError::Io(_));
            return fail_all(e.code().into(), e.to_string(), transient);
        }
    };
    let origin = Origin {
        kind: "git",
        location: git.location.clone(),
        url: Some(git.shown.to_string()),
        commit: Some(generation.manifest.source.commit.clone()),
        generation: Some(generation.id.clone()),
    };
    git.approved
        .iter()
        .map(|pin| {
            let recorded = generation
                .manifest
                .bundles
                .iter()
                .find(|b| b.pin.name == pin.name);
            let Some(recorded) = recorded else {
                return Err(LoadFailure {
                    name: pin.name.to_string(),
                    location: git.location.clone(),
                    code: RuntimeCode::NotPrepared.into(),
                    reason: format!(
                        "the published generation {} does not hold it; run `skillfold prepare`",
                        generation.id
                    ),
                    details: Vec::new(),
                    transient: false,
                });
            };
            if generation.manifest.source.commit != git.revision.as_str() {
                return Err(LoadFailure {
                    name: pin.name.to_string(),
                    location: git.location.clone(),
                    code: RuntimeCode::NotPrepared.into(),
                    reason: format!(
                        "the published generation holds commit {}, but the descriptor pins {}; run `skillfold prepare`",
                        generation.manifest.source.commit, git.revision
                    ),
                    details: Vec::new(),
                    transient: false,
                });
            }
            let dir = generation.dir.join(pin.name.as_str());
            let bundle = verify::verify_dir(&dir, pin, Some(&recorded.files))
                .map_err(|e| LoadFailure::from_verify(pin, &git.location, &e))?;
            let location = git
                .directory
                .join(crate::prepare::corpus::store::CURRENT)
                .join(pin.name.as_str())
                .join(limits::SKILL_MD);
            let snapshot = Snapshot::verified(bundle, pin.clone(), origin.clone(), location);
            Ok(Arc::new(snapshot.read_from(dir)))
        })
        .collect()
}

/// Loads the bundles of a host's own source.
pub fn load_custom(source: &dyn BundleSource) -> Vec<Loaded> {
    let label = source.label();
    source
        .bundles()
        .into_iter()
        .map(|(pin, files, problems)| {
            let origin = Origin {
                kind: "custom",
                location: label.clone(),
                url: None,
                commit: None,
                generation: None,
            };
            let location = PathBuf::from(format!("{label}/{}/{}", pin.name, limits::SKILL_MD));
            let bundle = Bundle::check(files, problems).map_err(|invalid| {
                LoadFailure::from_verify(
                    &pin,
                    &label,
                    &VerifyError::Load {
                        dir: location.clone(),
                        source: invalid.into(),
                    },
                )
            })?;
            Snapshot::new(bundle, pin.clone(), origin, location)
                .map(Arc::new)
                .map_err(|e| LoadFailure::from_verify(&pin, &label, &e))
        })
        .collect()
}
