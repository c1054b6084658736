//! Snapshots: verified bundles, immutable, shared by `Arc`.
//!
//! Loading reads every byte with the safe reader, checks every bundle rule under the source's
//! limits profile, and compares name, declared version and digest with the pin **from the
//! descriptor** (not only with the corpus's own manifest, which is used to name the files that
//! changed). A bundle that does not verify is not loaded — and nothing older, newer or
//! unverified is loaded in its place: the failure is returned, naming the bundle and the
//! problem. Once loaded, nothing on disk can change what a snapshot serves.
//!
//! **Memory.** A snapshot keeps in memory its `SKILL.md` and the text files that fit the `chamvi`
//! budget (each at most 128 KiB, 1 MiB together, in digest order): every bundle within the
//! `chamvi` bounds is held whole, exactly as before profiles existed. Under a raised profile the
//! rest (binary files, larger files, files past the budget) stays on disk in the directory the
//! bundle was verified from (a corpus generation, never through `current`), with its size and
//! SHA-256; each read opens it beneath that directory without following links, reads at most
//! its size, and serves it only if its SHA-256 still matches (else `reference_changed`). So a
//! snapshot holds at most about 1.3 MiB of file bytes whatever its profile; the bytes of a whole
//! bundle are held only while it is verified (one bundle per loading thread, one per core). Host sources
//! ([`BundleSource`]) have no directory: their bytes stay in memory.
//!
//! Sources: a prepared Git corpus (its `current` generation is resolved once, so a concurrent
//! preparation is seen entirely or not at all), a deployed local directory, or any
//! [`BundleSource`] a host implements in code, whose bundles go through the same verification.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::descriptor::kind::SourceKind;
use crate::descriptor::plan::{CorpusRef, LocalSource, Source};
use std::borrow::Cow;

use crate::corpus::Corpus;
use crate::corpus::pin_check::{self, VerifyError};
use crate::format::bundle::{Bundle, is_binary};
use crate::format::bundle_path::BundlePath;
use crate::format::digest::BundleDigest;
use crate::format::file_set::FileSet;
use crate::format::limits;
use crate::format::limits::Limits;
use crate::format::pin::Pin;
use crate::format::problem::Problems;
use crate::format::safe_read;
use crate::runtime::code::RuntimeCode;
use crate::support::error_code::ErrorCode;

/// Where a snapshot came from.
///
/// ```
/// # let (skills, built, catalogue) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
/// let (_output, record) = catalogue
///     .call("load_skill", &serde_json::json!({"name": "commit-message", "reference": null}))
///     .unwrap();
/// let origin: &skillfold::Origin = &record.origin;
/// assert_eq!(origin.location, "skills[0].local");
/// ```
///
/// It is the one record of a source's provenance: the `prepare` report's sources carry the same
/// fields (flattened into each source's object).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Origin {
    /// `git`, `oci`, `local`, `custom` (a host's [`BundleSource`]) or `discovered` (a guide).
    pub kind: SourceKind,
    /// Where it is configured (`skills[0].git`, or a host's label).
    pub location: String,
    /// The repository URL without credentials (git), or `REGISTRY/REPOSITORY` (oci).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The pinned commit (git), or the image's manifest digest (oci).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The corpus generation it was read from (git, oci).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<String>,
}

impl Origin {
    /// A source as the descriptor gives it, before anything is known of what it holds.
    pub fn new(kind: SourceKind, location: impl Into<String>) -> Origin {
        Origin {
            kind,
            location: location.into(),
            url: None,
            commit: None,
            generation: None,
        }
    }
}

/// One file of a snapshot: what was verified, and its bytes when they are held in memory.
///
/// ```
/// # let (skills, built, catalogue) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
/// let snapshot = catalogue.get("commit-message").unwrap();
/// let file: &skillfold::StoredFile = snapshot.file("SKILL.md").unwrap();
/// assert_eq!(file.size() as usize, snapshot.skill_md().len());
/// ```
#[derive(Debug, Clone)]
pub struct StoredFile {
    path: BundlePath,
    size: u64,
    sha256: String,
    binary: bool,
    /// `None`: on disk beneath the snapshot's directory, read and hash-checked on each read.
    bytes: Option<Vec<u8>>,
}

impl StoredFile {
    /// Bundle-relative path.
    pub fn path(&self) -> &str {
        self.path.as_str()
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// SHA-256 of the verified bytes, lowercase hex.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Whether the file is binary (not UTF-8 text, or holding a NUL byte).
    pub fn is_binary(&self) -> bool {
        self.binary
    }

    /// Whether its bytes are held in memory.
    pub fn in_memory(&self) -> bool {
        self.bytes.is_some()
    }
}

/// A file kept on disk no longer holds the bytes that were verified.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileReadError {
    /// It could not be read beneath the snapshot's directory.
    #[error("`{path}` could not be read again from the verified directory: {reason}")]
    Unreadable {
        /// Bundle-relative path.
        path: String,
        /// Why.
        reason: String,
    },
    /// Its bytes differ from those verified.
    #[error(
        "`{path}` changed on disk since it was verified (SHA-256 {found}, verified {expected}); it is not served"
    )]
    Changed {
        /// Bundle-relative path.
        path: String,
        /// The verified SHA-256.
        expected: String,
        /// The SHA-256 read now.
        found: String,
    },
}

impl FileReadError {
    /// Stable error code: `reference_changed`, whichever way the file failed (what a tool call
    /// or `push` that reads it reports).
    pub fn code(&self) -> crate::runtime::tools::code::ToolCode {
        crate::runtime::tools::code::ToolCode::ReferenceChanged
    }
}

crate::support::error_code::coded_by_code!(FileReadError);

/// A verified bundle.
///
/// ```
/// # let (skills, built, catalogue) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
/// let snapshot = catalogue.get("commit-message").unwrap();
/// assert!(snapshot.body().starts_with('#') || !snapshot.body().is_empty());
/// assert_eq!(snapshot.pin().hash.to_string(), "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e");
/// ```
#[derive(Debug)]
pub struct Snapshot {
    pin: Pin,
    digest: BundleDigest,
    limits: Limits,
    description: String,
    /// `SKILL.md` whole (always in memory) and where its body starts.
    skill_md: String,
    body_start: usize,
    /// Every file, `SKILL.md` included, in digest order.
    files: Vec<StoredFile>,
    origin: Origin,
    location: PathBuf,
    /// The directory the bytes were read from (for a corpus: inside the generation, never
    /// through `current`), where approved helpers run; `None` for in-memory sources.
    dir: Option<PathBuf>,
    references: Vec<String>,
    /// SHA-256 (hex) of the body (each file's is in `files`).
    body_sha256: String,
    /// What `load_skill` returns for the body, as JSON text: the same bytes on every call, so
    /// built on the first and kept with the snapshot (a reload makes new snapshots, and so new
    /// text). See `runtime::tools::load_skill::body_json`; the MCP server is its one user.
    #[cfg(feature = "mcp")]
    body_json: std::sync::OnceLock<Arc<str>>,
}

impl Snapshot {
    /// Verifies `bundle` against `pin` and wraps it, every byte in memory. `location` is where
    /// its `SKILL.md` can be read by other clients (shown in the catalogue prompt).
    pub fn new(
        bundle: Bundle,
        pin: Pin,
        origin: Origin,
        location: PathBuf,
    ) -> Result<Snapshot, Box<VerifyError>> {
        let bundle = pin_check::verify_bundle(bundle, &location, &pin, None).map_err(Box::new)?;
        Ok(Snapshot::verified(bundle, pin, origin, location, None))
    }

    /// Wraps a verified bundle read from `dir` (`None`: from memory, every byte kept).
    fn verified(
        bundle: Bundle,
        pin: Pin,
        origin: Origin,
        location: PathBuf,
        dir: Option<PathBuf>,
    ) -> Snapshot {
        let skill_md = bundle.files().get(limits::SKILL_MD).unwrap_or_default();
        let body = bundle.body();
        let body_start = skill_md.len() - body.len();
        let mut budget = limits::MAX_TOTAL_BYTES;
        let files: Vec<StoredFile> = bundle
            .files()
            .iter()
            .map(|(path, bytes)| {
                let size = bytes.len() as u64;
                let binary = is_binary(bytes);
                let keep = dir.is_none()
                    || path.as_str() == limits::SKILL_MD
                    || (!binary && size <= limits::MAX_SUPPORTING_FILE_BYTES && size <= budget);
                if keep && path.as_str() != limits::SKILL_MD {
                    budget = budget.saturating_sub(size);
                }
                StoredFile {
                    path: path.clone(),
                    size,
                    sha256: crate::support::hex::sha256_hex(bytes),
                    binary,
                    bytes: keep.then(|| bytes.to_vec()),
                }
            })
            .collect();
        let references = files
            .iter()
            .filter(|f| f.path() != limits::SKILL_MD)
            .map(|f| f.path().to_owned())
            .collect();
        let body_sha256 = crate::support::hex::sha256_hex(body.as_bytes());
        Snapshot {
            pin,
            digest: bundle.digest(),
            limits: bundle.limits(),
            description: bundle.description().to_owned(),
            // Checked UTF-8 when the bundle was made.
            skill_md: String::from_utf8_lossy(skill_md).into_owned(),
            body_start,
            files,
            origin,
            location,
            dir,
            references,
            body_sha256,
            #[cfg(feature = "mcp")]
            body_json: std::sync::OnceLock::new(),
        }
    }

    /// The pin it verified against.
    pub fn pin(&self) -> &Pin {
        &self.pin
    }

    /// The skill's description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The Markdown body of `SKILL.md`, unchanged.
    pub fn body(&self) -> &str {
        &self.skill_md[self.body_start..]
    }

    /// The whole `SKILL.md`.
    pub fn skill_md(&self) -> &str {
        &self.skill_md
    }

    /// The limits profile it was verified under.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The supporting files' paths, sorted (code-point order).
    pub fn references(&self) -> &[String] {
        &self.references
    }

    /// The supporting files that are binary, in digest order.
    pub fn binary_references(&self) -> Vec<String> {
        self.files
            .iter()
            .filter(|f| f.binary)
            .map(|f| f.path().to_owned())
            .collect()
    }

    /// A supporting file (never `SKILL.md`).
    pub fn reference(&self, path: &str) -> Option<&StoredFile> {
        if path == limits::SKILL_MD {
            return None;
        }
        self.file(path)
    }

    /// Any file, `SKILL.md` included.
    pub fn file(&self, path: &str) -> Option<&StoredFile> {
        self.files
            .binary_search_by(|f| f.path().cmp(path))
            .ok()
            .map(|i| &self.files[i])
    }

    /// The verified bytes of `file` (one of [`Snapshot::files`]): from memory, or read again
    /// beneath the snapshot's directory and served only if their SHA-256 still matches.
    pub fn read<'a>(&'a self, file: &'a StoredFile) -> Result<Cow<'a, [u8]>, FileReadError> {
        if let Some(bytes) = &file.bytes {
            return Ok(Cow::Borrowed(bytes));
        }
        let unreadable = |reason: String| FileReadError::Unreadable {
            path: file.path().to_owned(),
            reason,
        };
        let dir = self
            .dir
            .as_deref()
            .ok_or_else(|| unreadable("the snapshot has no directory".into()))?;
        let bytes = safe_read::read_file_beneath(dir, &file.path, file.size)
            .map_err(|e| unreadable(e.to_string()))?;
        let found = crate::support::hex::sha256_hex(&bytes);
        if found != file.sha256 {
            return Err(FileReadError::Changed {
                path: file.path().to_owned(),
                expected: file.sha256.clone(),
                found,
            });
        }
        Ok(Cow::Owned(bytes))
    }

    /// The permission bits of `file` (one of [`Snapshot::files`]) where it was verified: read
    /// beneath the snapshot's directory without following a link (`0o555` for a file its source
    /// marks executable, as `prepare` writes it); `0o644` for a snapshot held in memory only.
    pub fn mode(&self, file: &StoredFile) -> std::io::Result<u32> {
        match self.dir.as_deref() {
            Some(dir) => crate::format::untrusted_fs::mode_beneath(dir, file.path()),
            None => Ok(0o644),
        }
    }

    /// The SHA-256 (lowercase hex) of what serving `reference` returns (`None`: the body),
    /// computed once when the snapshot was made.
    pub fn served_sha256(&self, reference: Option<&str>) -> Option<&str> {
        match reference {
            None => Some(&self.body_sha256),
            Some(path) => self.reference(path).map(StoredFile::sha256),
        }
    }

    /// The JSON text `load_skill` serves for the body, built by `build` on first use and kept.
    #[cfg(feature = "mcp")]
    pub(crate) fn body_json(&self, build: impl FnOnce() -> String) -> &Arc<str> {
        self.body_json.get_or_init(|| Arc::from(build()))
    }

    /// Every file, `SKILL.md` included, in digest order.
    pub fn files(&self) -> &[StoredFile] {
        &self.files
    }

    /// Where it came from.
    pub fn origin(&self) -> &Origin {
        &self.origin
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
        self.pin == other.pin && self.digest == other.digest
    }
}

/// One bundle of a source: its snapshot, or why it is not served.
pub type BundleLoad = Result<Arc<Snapshot>, LoadFailure>;

/// A bundle that could not be loaded.
///
/// ```
/// # let (skills, ..) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
/// let built = skillfold::Runtime::builder()
///     .local("commit-message", "1.0.0", skills.join("commit-message"), &"0".repeat(64))
///     .build()
///     .unwrap();
/// let failure = &built.refused[0];
/// assert_eq!((failure.name.as_str(), failure.location.as_str()), ("commit-message", "skills[0].local"));
/// assert!(failure.reason.contains("but the pin is") && !failure.transient());
/// ```
#[derive(Debug, Clone, thiserror::Error)]
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
}

impl LoadFailure {
    /// Whether reading again may succeed (an I/O error kept the bytes from being read): its
    /// code's class is retryable. A bundle that was read and does not verify, or is not
    /// prepared, is not transient.
    pub fn transient(&self) -> bool {
        self.code.exit() == crate::support::error_code::ExitClass::Retryable
    }

    fn from_verify(pin: &Pin, location: &str, e: &VerifyError) -> LoadFailure {
        let details = match e {
            VerifyError::Load {
                source: crate::format::bundle::BundleError::Invalid(invalid),
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
        }
    }
}

impl crate::support::error_code::Coded for LoadFailure {
    fn error_code(&self) -> ErrorCode {
        self.code
    }
}

/// A host's own source of bundles (embedded, fetched by other means, ...). Its bundles go
/// through exactly the verification of every other source.
///
/// ```
/// use skillfold::{Bundle, BundleSource, FileSet, FileSetBuilder, Pin, Problems};
///
/// /// Bundles compiled into the host.
/// struct Embedded;
///
/// impl BundleSource for Embedded {
///     fn label(&self) -> String {
///         "embedded".to_owned()
///     }
///     fn bundles(&self) -> Vec<(Pin, FileSet, Problems)> {
///         let mut files = FileSetBuilder::new();
///         files.insert("SKILL.md", b"---\nname: hello\ndescription: Says hello.\n---\n# Hi\n".to_vec());
///         let (files, problems) = files.finish();
///         let pin = Pin {
///             name: "hello".parse().unwrap(),
///             version: "1".parse().unwrap(),
///             hash: skillfold::BundleDigest::of(&files), // in a real host: the reviewed digest
///         };
///         vec![(pin, files, problems)]
///     }
/// }
///
/// let built = skillfold::Runtime::builder().source(Embedded).build().unwrap();
/// assert_eq!(built.runtime.catalogue(None).unwrap().skills().count(), 1);
/// # let _ = Bundle::check;
/// ```
pub trait BundleSource {
    /// A label for messages and records.
    fn label(&self) -> String;
    /// The pins it provides, each with the file set (and any problems its reader found).
    fn bundles(&self) -> Vec<(Pin, FileSet, Problems)>;
}

/// Loads every bundle of a source of the plan.
pub fn load_source(source: &Source) -> Vec<BundleLoad> {
    match source {
        Source::Git(git) => load_corpus(git.corpus(), git.shown.to_string()),
        Source::Oci(oci) => load_corpus(oci.corpus(), oci.repository()),
        Source::Local(local) => vec![load_local(local)],
    }
}

fn load_local(local: &LocalSource) -> BundleLoad {
    let origin = Origin {
        kind: SourceKind::Local,
        location: local.location.clone(),
        url: None,
        commit: None,
        generation: None,
    };
    let bundle = pin_check::verify_dir(&local.directory, &local.pin, local.limits, None)
        .map_err(|e| LoadFailure::from_verify(&local.pin, &local.location, &e))?;
    let location = local.directory.join(limits::SKILL_MD);
    let dir = Some(local.directory.clone());
    let snapshot = Snapshot::verified(bundle, local.pin.clone(), origin, location, dir);
    Ok(Arc::new(snapshot))
}

/// Loads the approved bundles of a Git or OCI source's corpus; `url` is what records show of where
/// it came from.
fn load_corpus(git: CorpusRef<'_>, url: String) -> Vec<BundleLoad> {
    let corpus = Corpus::at(git.directory);
    let fail_all = |code: ErrorCode, reason: String| {
        git.approved
            .iter()
            .map(|pin| {
                Err(LoadFailure {
                    name: pin.name.to_string(),
                    location: git.location.to_owned(),
                    code,
                    reason: reason.clone(),
                    details: Vec::new(),
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
            );
        }
        Err(e) => {
            // A manifest that cannot be used keeps the bundles from being served until a
            // preparation publishes a fresh one: the runtime's code of that spelling (invalid),
            // not the corpus's (retryable in `prepare --rollback`).
            let code = match e {
                crate::corpus::CorpusError::BadManifest { .. } => {
                    RuntimeCode::CorpusBadManifest.into()
                }
                _ => e.code().into(),
            };
            return fail_all(code, e.to_string());
        }
    };
    let origin = Origin {
        kind: git.kind,
        location: git.location.to_owned(),
        url: Some(url),
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
                    location: git.location.to_owned(),
                    code: RuntimeCode::NotPrepared.into(),
                    reason: format!(
                        "the published generation {} does not hold it; run `skillfold prepare`",
                        generation.id
                    ),
                    details: Vec::new(),
                });
            };
            if generation.manifest.source.commit != git.revision {
                return Err(LoadFailure {
                    name: pin.name.to_string(),
                    location: git.location.to_owned(),
                    code: RuntimeCode::NotPrepared.into(),
                    reason: format!(
                        "the published generation holds commit {}, but the descriptor pins {}; run `skillfold prepare`",
                        generation.manifest.source.commit, git.revision
                    ),
                    details: Vec::new(),
                });
            }
            let dir = generation.dir.join(pin.name.as_str());
            let bundle = pin_check::verify_dir(&dir, pin, git.limits, Some(&recorded.files))
                .map_err(|e| LoadFailure::from_verify(pin, git.location, &e))?;
            let location = git
                .directory
                .join(crate::corpus::store::CURRENT)
                .join(pin.name.as_str())
                .join(limits::SKILL_MD);
            let snapshot =
                Snapshot::verified(bundle, pin.clone(), origin.clone(), location, Some(dir));
            Ok(Arc::new(snapshot))
        })
        .collect()
}

/// Loads the bundles of a host's own source.
pub fn load_custom(source: &dyn BundleSource) -> Vec<BundleLoad> {
    let label = source.label();
    source
        .bundles()
        .into_iter()
        .map(|(pin, files, problems)| {
            let origin = Origin {
                kind: SourceKind::Custom,
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
