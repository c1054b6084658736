//! `skillfold pin`: the reviewer's helper. Fetches one commit exactly as `prepare` would, applies
//! every check, and prints the descriptor entry that pins the named bundles ([`pin`]) or every
//! valid bundle under the root, with the refused ones and why ([`pin_all`]). It never writes a
//! corpus; the fetch goes to a temporary directory that is removed afterwards.
//!
//! - [`revision`]: `--revision` as given, a full commit id or a branch or tag resolved once from
//!   the server's ref listing (the look-up `update --to` and `import` use).
//! - [`entry`]: the descriptor entry, and the default corpus directory it names.
//! - [`write`]: `pin --write`, the entry appended to the descriptor in place.

pub mod entry;
pub mod revision;
pub mod write;

use std::sync::atomic::AtomicBool;

use crate::descriptor::Links;
use crate::descriptor::code::DescriptorCode;
use crate::descriptor::redact::RedactedUrl;
use crate::format::bundle::Bundle;
use crate::format::limits::Limits;
use crate::format::pin::CommitId;
use crate::format::root_path::RootPath;
use crate::format::skill_name::SkillName;
use crate::source::code::PrepareCode;
use crate::source::git::commit::{
    CommitError, PinnedCommit, SeenLink, TakeError, WantedBundles, bundle_folder,
};
use crate::support::error_code::ErrorCode;
use crate::support::escape;
use crate::trust::commit::policy::{Signer, TrustPolicy};

pub use crate::descriptor::VERSION_PLACEHOLDER;

/// The most folders holding a `SKILL.md` that `pin --all` takes under one root, counted before
/// any is read: each is read and hashed in full, and a tree can name one folder many times at
/// no cost to its author.
pub const MAX_ALL: usize = 1024;

/// Why pinning failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PinError {
    /// The URL carries credentials.
    #[error(
        "`{0}` carries credentials; provide them through a credential helper or GIT_ASKPASS instead"
    )]
    CredentialsInUrl(RedactedUrl),
    /// The temporary directory could not be made.
    #[error("cannot create a temporary directory: {0}")]
    Temp(std::io::Error),
    /// The commit could not be fetched or is refused.
    #[error(transparent)]
    Commit(#[from] CommitError),
    /// `--revision` names a branch or tag the server's ref listing does not resolve.
    #[error("`--revision {name}` names no commit of `{url}`: {error}")]
    Ref {
        /// The name given, escaped for display.
        name: String,
        /// The repository, without credentials.
        url: RedactedUrl,
        /// Why the listing does not resolve it.
        error: Box<crate::source::git::fetch_error::FetchError>,
    },
    /// Some named bundles cannot be pinned.
    #[error("{} bundle(s) cannot be pinned", .0.len())]
    Bundles(Vec<TakeError>),
    /// `pin --all` found more than [`MAX_ALL`] folders holding a `SKILL.md` under the root.
    #[error(
        "`{root}` holds {count} folders with a `SKILL.md`, over the {max} that `pin --all` takes; \
         name the bundles, or give a narrower `--root`"
    )]
    TooManyBundles {
        /// The root, escaped for display (`/` for the repository root).
        root: String,
        /// How many it holds.
        count: usize,
        /// [`MAX_ALL`].
        max: usize,
    },
    /// `pin --all` found no bundle under the root that can be pinned (each refused one is in
    /// the list).
    #[error("no bundle under `{root}` can be pinned ({} refused)", .refused.len())]
    NoBundles {
        /// The root, escaped for display (`/` for the repository root).
        root: String,
        /// Every folder holding a `SKILL.md`, and why it was refused.
        refused: Vec<RefusedFolder>,
        /// The hidden folders under the root that hold bundles (`skills/.curated`), as roots,
        /// escaped: what `--root` may name instead.
        hidden: Vec<String>,
    },
}

impl PinError {
    /// Stable error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            PinError::CredentialsInUrl(_) => DescriptorCode::CredentialsInUrl.into(),
            PinError::Temp(_) => PrepareCode::IoError.into(),
            PinError::Commit(e) => e.code().into(),
            PinError::Ref { error, .. } => error.code().into(),
            PinError::Bundles(_) => PrepareCode::VerificationFailed.into(),
            PinError::NoBundles { .. } => PrepareCode::NoBundles.into(),
            PinError::TooManyBundles { .. } => PrepareCode::TooManyBundles.into(),
        }
    }
}

impl PinError {
    /// A line that says what to do next, when there is one: for a name the server does not
    /// resolve, the command that lists its branches and tags.
    pub fn hint(&self) -> Option<String> {
        match self {
            PinError::Ref { url, .. } => Some(format!(
                "list the branches and tags the server has with `git ls-remote --heads --tags {}`, \
                 or give the full commit id",
                escape::text(url.as_str())
            )),
            PinError::Commit(CommitError::Fetch(fetch)) => fetch.hint().map(str::to_owned),
            _ => None,
        }
    }
}

crate::support::error_code::coded_by_code!(PinError);

/// What `pin` took from a commit.
#[derive(Debug)]
pub struct Pinned {
    /// The checked bundles, in the order named.
    pub bundles: Vec<Bundle>,
    /// Who signed the commit, when a trust policy was given.
    pub signer: Option<Signer>,
    /// Under `links: outside-bundles`, the links the commit holds (all outside the bundles).
    pub links: OutsideLinks,
}

/// The symbolic links a commit holds outside the pinned bundles (`--links outside-bundles`):
/// the first few, and how many more.
#[derive(Debug, Default)]
pub struct OutsideLinks {
    /// The links listed.
    pub listed: Vec<SeenLink>,
    /// How many more the commit holds.
    pub more: usize,
}

/// What `pin --all` took from a commit: every bundle under the root that can be pinned, and
/// every other folder holding a `SKILL.md` with why it cannot.
#[derive(Debug)]
pub struct PinnedAll {
    /// The checked bundles, by folder name (what the entry needs of each: their files are not
    /// kept).
    pub bundles: Vec<PinnedBundle>,
    /// The refused folders, by name.
    pub refused: Vec<RefusedFolder>,
    /// Who signed the commit, when a trust policy was given.
    pub signer: Option<Signer>,
    /// Under `links: outside-bundles`, the links the commit holds outside the pinned bundles.
    pub links: OutsideLinks,
}

/// What a descriptor entry needs of a checked bundle.
#[derive(Debug, Clone)]
pub struct PinnedBundle {
    name: SkillName,
    digest: crate::format::digest::BundleDigest,
    declared_version: Option<String>,
    scans: Vec<crate::descriptor::scanners::ScanSpec>,
}

impl PinnedBundle {
    /// The name.
    pub fn name(&self) -> &SkillName {
        &self.name
    }

    /// The digest.
    pub fn digest(&self) -> crate::format::digest::BundleDigest {
        self.digest
    }

    /// The version the frontmatter declares, if any.
    pub fn declared_version(&self) -> Option<&str> {
        self.declared_version.as_deref()
    }

    /// The scanners' verdicts its entry records (`pin --scan`).
    pub fn scans(&self) -> &[crate::descriptor::scanners::ScanSpec] {
        &self.scans
    }

    /// It with the verdicts `scans` recorded.
    pub fn with_scans(mut self, scans: Vec<crate::descriptor::scanners::ScanSpec>) -> PinnedBundle {
        self.scans = scans;
        self
    }
}

impl From<&Bundle> for PinnedBundle {
    fn from(bundle: &Bundle) -> PinnedBundle {
        PinnedBundle {
            name: bundle.name().clone(),
            digest: bundle.digest(),
            declared_version: bundle.declared_version().map(str::to_owned),
            scans: Vec::new(),
        }
    }
}

/// A folder under the root holding a `SKILL.md` that cannot be pinned.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RefusedFolder {
    /// The folder in the repository, escaped for display.
    pub folder: String,
    /// The stable code of the refusal.
    pub code: ErrorCode,
    /// Every reason, one line each, escaped for display.
    pub problems: Vec<String>,
    /// The bundle problems behind them, with their places (none when it is refused for
    /// another reason; `--format sarif`).
    #[serde(skip)]
    pub found: Vec<crate::format::problem::Problem>,
}

/// What a pin checks the commit and its bundles against.
#[derive(Debug, Clone, Copy)]
pub struct PinPolicy<'a> {
    /// The bounds of the bundles (`--limits`).
    pub limits: Limits,
    /// Who must have signed the commit, if anyone.
    pub trust: Option<&'a TrustPolicy>,
    /// Which symbolic links the commit may hold (`--links`).
    pub links: Links,
}

/// What stops the fetch of a pin before it ends.
#[derive(Debug, Clone, Copy)]
pub struct Stop<'a> {
    /// Set by SIGINT/SIGTERM.
    pub interrupt: &'a AtomicBool,
    /// The overall deadline of the fetch (`--fetch-timeout`).
    pub deadline: std::time::Duration,
}

/// Fetches `revision` of `url`, checks its signature against `trust` (when given) and the
/// bundles `names` under `root`, and returns them.
pub fn pin(
    url: &str,
    revision: &CommitId,
    root: Option<&RootPath>,
    names: &[SkillName],
    policy: PinPolicy<'_>,
    stop: Stop<'_>,
) -> Result<Pinned, PinError> {
    let PinPolicy {
        limits,
        trust,
        links,
    } = policy;
    let folders: Vec<String> = names.iter().map(|n| bundle_folder(root, n)).collect();
    let wanted = WantedBundles::Folders(folders.iter().map(|f| (f.clone(), limits)).collect());
    let (_temp, commit, signer) = fetch(url, revision, trust, (links, &wanted), stop)?;
    let (listed, more) = commit.check_links(&folders)?;
    let mut bundles = Vec::new();
    let mut errors = Vec::new();
    for name in names {
        match commit.take_named(root, name, limits) {
            Ok(bundle) => bundles.push(bundle),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(Pinned {
            bundles,
            signer,
            links: OutsideLinks { listed, more },
        })
    } else {
        Err(PinError::Bundles(errors))
    }
}

/// Fetches `revision` of `url` as [`pin`] does and takes every folder directly under `root`
/// that holds a `SKILL.md`: each is pinned if its name is a skill name, it passes every bundle
/// rule under `limits` and its frontmatter names it; otherwise it is listed as refused, with
/// every reason. Refused only when none can be pinned ([`PinError::NoBundles`]).
pub fn pin_all(
    url: &str,
    revision: &CommitId,
    root: Option<&RootPath>,
    policy: PinPolicy<'_>,
    stop: Stop<'_>,
) -> Result<PinnedAll, PinError> {
    let PinPolicy {
        limits,
        trust,
        links,
    } = policy;
    let wanted = WantedBundles::All {
        root,
        limits,
        max: MAX_ALL,
    };
    let (_temp, commit, signer) = fetch(url, revision, trust, (links, &wanted), stop)?;
    if let Some(root) = root {
        commit.check_path(root.as_str())?;
    }
    let shown_root =
        || root.map_or_else(|| "/".to_owned(), |r| escape::text(r.as_str()).to_string());
    let folders = commit.bundle_names(root)?;
    if folders.len() > MAX_ALL {
        return Err(PinError::TooManyBundles {
            root: shown_root(),
            count: folders.len(),
            max: MAX_ALL,
        });
    }
    let mut bundles = Vec::new();
    let mut refused = Vec::new();
    for folder in folders {
        let shown = escape::text(&match root {
            Some(root) => format!("{root}/{folder}"),
            None => folder.clone(),
        })
        .to_string();
        let name = match SkillName::parse(&folder) {
            Ok(name) => name,
            Err(e) => {
                refused.push(RefusedFolder {
                    folder: shown,
                    code: DescriptorCode::InvalidName.into(),
                    // The error escapes the name it shows.
                    problems: vec![format!("{e} [{}]", DescriptorCode::InvalidName)],
                    found: Vec::new(),
                });
                continue;
            }
        };
        match commit.take_named(root, &name, limits) {
            Ok(bundle) => bundles.push(PinnedBundle::from(&bundle)),
            Err(e) => refused.push(RefusedFolder {
                folder: shown,
                code: e.code(),
                // Each line escaped its values when it was built.
                problems: e.lines(),
                found: crate::ops::target::take_problems(&e).to_vec(),
            }),
        }
    }
    if bundles.is_empty() {
        let hidden = commit.hidden_roots(root)?;
        return Err(PinError::NoBundles {
            root: shown_root(),
            refused,
            hidden: hidden.iter().map(|h| escape::text(h).to_string()).collect(),
        });
    }
    // Links inside the refused folders are outside every pinned bundle.
    let folders: Vec<String> = bundles
        .iter()
        .map(|b| bundle_folder(root, b.name()))
        .collect();
    let (listed, more) = commit.check_links(&folders)?;
    Ok(PinnedAll {
        bundles,
        refused,
        signer,
        links: OutsideLinks { listed, more },
    })
}

/// What [`pin_each`] found of one bundle: the bundle, the root it was under, and the Git tree
/// id of its folder.
#[derive(Debug)]
pub struct Found {
    /// The root the bundle was found under.
    pub root: Option<RootPath>,
    /// The checked bundle.
    pub bundle: Bundle,
    /// The Git tree id of its folder.
    pub tree: Option<String>,
}

/// A bundle [`pin_each`] looks for: its name, and the roots to look under, in order.
pub type Sought = (Vec<Option<RootPath>>, SkillName);

/// Fetches `revision` of `url` once, as [`pin`] does, and takes each `sought` bundle from the
/// first of its roots that holds its folder, with every check of [`pin`]: a refusal of the
/// commit as a whole is the outer error, a refusal of one bundle its own (when no root holds
/// it, naming the first folder looked for).
pub fn pin_each(
    url: &str,
    revision: &CommitId,
    sought: &[Sought],
    policy: PinPolicy<'_>,
    stop: Stop<'_>,
) -> Result<Vec<Result<Found, PinError>>, PinError> {
    let mut folders: Vec<(String, Limits)> = Vec::new();
    for (roots, name) in sought {
        for root in roots {
            let folder = bundle_folder(root.as_ref(), name);
            if !folders.iter().any(|(f, _)| *f == folder) {
                folders.push((folder, policy.limits));
            }
        }
    }
    let wanted = WantedBundles::Folders(folders);
    let (_temp, commit, _) = fetch(url, revision, policy.trust, (policy.links, &wanted), stop)?;
    Ok(sought
        .iter()
        .map(|(roots, name)| find(&commit, roots, name, policy.limits))
        .collect())
}

/// Bundle `name` under the first of `roots` that holds its folder in `commit`.
fn find(
    commit: &PinnedCommit,
    roots: &[Option<RootPath>],
    name: &SkillName,
    limits: Limits,
) -> Result<Found, PinError> {
    let mut missing = None;
    for root in roots {
        let folder = bundle_folder(root.as_ref(), name);
        commit.check_path(&folder)?;
        match commit.take_named(root.as_ref(), name, limits) {
            Ok(bundle) => {
                commit.check_links(std::slice::from_ref(&folder))?;
                return Ok(Found {
                    root: root.clone(),
                    tree: commit.folder_tree(&folder),
                    bundle,
                });
            }
            Err(e @ TakeError::Missing { .. }) => {
                missing.get_or_insert(e);
            }
            Err(e) => return Err(PinError::Bundles(vec![e])),
        }
    }
    Err(PinError::Bundles(missing.into_iter().collect()))
}

/// The fetch and the signature check of a pin: the commit (in a temporary directory, removed
/// when the returned guard drops) with the files of the `wanted` bundles, and who signed it,
/// when `trust` is given.
fn fetch(
    url: &str,
    revision: &CommitId,
    trust: Option<&TrustPolicy>,
    policy: (Links, &WantedBundles<'_>),
    stop: Stop<'_>,
) -> Result<(tempfile::TempDir, PinnedCommit, Option<Signer>), PinError> {
    let shown = RedactedUrl::new(url);
    if shown.had_credentials() {
        return Err(PinError::CredentialsInUrl(shown));
    }
    let temp = tempfile::tempdir().map_err(PinError::Temp)?;
    let commit = PinnedCommit::fetch(
        url,
        revision,
        &temp.path().join("repo.git"),
        policy,
        stop.interrupt,
        stop.deadline,
        &|_| {},
    )?;
    let signer = trust
        .map(|trust| commit.verify_signature(trust))
        .transpose()?;
    Ok((temp, commit, signer))
}

pub(crate) use entry::{corpus_name, yaml_string};
