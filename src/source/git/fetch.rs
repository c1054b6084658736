//! Fetching exactly one pinned commit with gix.
//!
//! - The repository is a throwaway bare repository created by the caller's chosen path (on the
//!   corpus's file system), opened with [`gix::open::Options::isolated`]: no system or global
//!   Git configuration and no `GIT_*` variables change what is fetched or from where. Only what
//!   authentication needs is carried over on purpose: the user's `credential.helper` entries, and
//!   `GIT_ASKPASS` / `SSH_ASKPASS` as `core.askPass`. Without an askpass program, terminal
//!   prompts are disabled, so a run never blocks on a password.
//! - First try ([`super::partial`]): `want <commit>` with depth 1 (protocol v2 allows any object
//!   id; most forges do), without asking for any ref listing. When the server offers `filter`,
//!   that fetch brings the commit and its trees only (`blob:none`); the caller's selection then
//!   names the blobs it needs (those of the approved bundles), and one more request on the same
//!   connection brings exactly those. A server that refuses the blobs by id, answers with more
//!   than was asked for, or refuses the filter it offers, is asked for the whole commit instead; one that leaves some out
//!   fails the fetch ([`FetchError::Incomplete`], retryable). Without `filter`, the first fetch
//!   is of the whole commit. On either path a pack without the pinned commit fails the fetch
//!   ([`FetchError::CommitAbsent`], retryable) before its trees are read.
//! - Fallback, for servers that refuse a want-by-id (protocol v0/v1 without
//!   `uploadpack.allowReachableSHA1InWant`): fetch every branch and tag in full, then look the
//!   commit up locally. Either way the result must hold exactly the pinned commit.
//! - `interrupt` is polled by gix throughout; setting it stops the fetch.
//! - Every fetch has an overall deadline (the commands' default is 300 s) besides the transport's
//!   idle timeouts, so a server that trickles one byte at a time cannot hold it forever: each
//!   HTTP(S) request may last no longer than what remains of it (its whole body included), and a
//!   timer stops gix at the deadline as a signal would. Past it the fetch fails with
//!   [`FetchError::Deadline`] (retryable).
//! - HTTP(S) redirects: gix refuses to follow a redirect of any request its caller configured
//!   (the per-request timeout above is such a configuration), so the fetcher follows them
//!   itself. When gix reports a refused redirect, [`redirect_target`] asks for the same first
//!   request (the ref advertisement) without credentials, under what remains of the same
//!   deadline, and follows its redirects as gix would (at most [`MAX_REDIRECTS`], never from
//!   `https://` down to `http://`, the request's `/info/refs?…` tail kept); the fetch then runs
//!   once more against the repository URL the last one names. Credentials in the first URL stay
//!   with its origin: only a target on the same scheme, host and port gets them.
//! - Every connection is made by [`super::transport`]: over HTTP(S) each answer of the server
//!   (the capability advertisement, the ref listing, the lines of a fetch before its pack) is
//!   read through [`super::answer`], bounded before gix holds it and cut off at the deadline on
//!   every read; past a bound the fetch fails with [`FetchError::AnswerTooLarge`]
//!   (`fetch_invalid`). A pack of the commit that announces more objects than a commit may have
//!   is refused from its header ([`FetchError::PackTooLarge`]).
//! - No single object may be larger than [`MAX_OBJECT_BYTES`] once inflated. gix checks this
//!   from each object's header before allocating for it (`gitoxide.objects.allocLimit`), so a
//!   small pack of highly compressed objects (a gigabyte of zeros is a megabyte of pack) cannot
//!   exhaust memory; such a commit is refused with `object_too_large`.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::descriptor::redact::{self, RedactedUrl};
use crate::format::pin::CommitId;

use super::answer::{Refusal, Refused};
use super::{partial, transport};

/// The largest object (blob, tree, commit) a fetch accepts, inflated: 100 MiB, the largest
/// file GitHub accepts in a repository.
pub const MAX_OBJECT_BYTES: u64 = 100 * 1024 * 1024;

/// The instant `deadline` from now (far in the future if that cannot be represented).
fn until(deadline: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(deadline)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600))
}

/// How the commit was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchPath {
    /// Shallow fetch of the commit id itself (partial, or whole: see [`Fetched::full`]).
    ById,
    /// The server refused the id; all branches and tags were fetched instead.
    BranchesAndTags,
}

/// Why the whole commit was fetched rather than its trees and the selected blobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Full {
    /// The server does not offer `filter`.
    NoFilter,
    /// The server offers `filter` but refused `blob:none` (what it said, credentials scrubbed).
    FilterRefused(String),
    /// The server refused the blobs by id (what it said, credentials scrubbed).
    BlobsRefused(String),
    /// The server's answer to the request for the blobs broke its bounds (which one).
    BlobsOverBounds(String),
}

impl Full {
    /// One line for the progress output.
    pub fn describe(&self) -> String {
        match self {
            Full::NoFilter => {
                "the server offers no partial fetch (`filter`); fetched the whole commit".to_owned()
            }
            Full::FilterRefused(detail) => format!(
                "the server refused the partial fetch it offers ({}); fetched the whole commit",
                crate::support::escape::text(detail)
            ),
            Full::BlobsRefused(detail) => format!(
                "the server refused the approved files by id ({}); fetched the whole commit",
                crate::support::escape::text(detail)
            ),
            Full::BlobsOverBounds(why) => format!(
                "the server's answer for the approved files broke their bounds ({why}); fetched the whole commit"
            ),
        }
    }
}

/// A repository holding the pinned commit.
pub struct Fetched {
    /// The bare repository.
    pub repo: gix::Repository,
    /// The commit as a gix id.
    pub commit: gix::ObjectId,
    /// How it was obtained.
    pub path: FetchPath,
    /// When the commit was fetched by id in whole rather than in part, why. `None` after a
    /// partial fetch (the trees, then the selected blobs) and after the fallback to branches
    /// and tags (see [`FetchPath`]).
    pub full: Option<Full>,
}

/// Why the commit could not be fetched.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The server could not be reached or the transfer failed (retryable).
    #[error("cannot fetch from `{url}`: {detail}")]
    Unreachable {
        /// The redacted URL.
        url: RedactedUrl,
        /// What went wrong (credentials scrubbed).
        detail: String,
    },
    /// The server was reached but does not have the commit (retryable: it may be pushed later).
    #[error("`{url}` does not have commit `{commit}`: {detail}")]
    CommitNotFound {
        /// The redacted URL.
        url: RedactedUrl,
        /// The pinned commit.
        commit: CommitId,
        /// What the server said (credentials scrubbed).
        detail: String,
    },
    /// The pinned id names an object that is not a commit (a tree or a blob).
    #[error("`{commit}` on `{url}` is not a commit: {detail}")]
    NotACommit {
        /// The redacted URL.
        url: RedactedUrl,
        /// The pinned id.
        commit: CommitId,
        /// What gix said.
        detail: String,
    },
    /// The server refused our credentials, or none were available.
    #[error("`{url}` refused access: {detail}")]
    Unauthenticated {
        /// The redacted URL.
        url: RedactedUrl,
        /// What went wrong.
        detail: String,
    },
    /// An object of the fetch is larger than [`MAX_OBJECT_BYTES`].
    #[error(
        "`{url}` sent an object larger than {max} bytes (the bound for any one object): {detail}",
        max = MAX_OBJECT_BYTES
    )]
    ObjectTooLarge {
        /// The redacted URL.
        url: RedactedUrl,
        /// What gix said (credentials scrubbed).
        detail: String,
    },
    /// A plain `http://` server asks for credentials: they are never sent in clear text, so no
    /// retry can succeed (a configuration error).
    #[error(
        "`{url}` asks for credentials, which are never sent in clear text over `http://`: {detail}"
    )]
    CleartextCredentials {
        /// The redacted URL.
        url: RedactedUrl,
        /// What gix or the server said (credentials scrubbed).
        detail: String,
    },
    /// The overall deadline passed before the fetch finished (retryable).
    #[error(
        "the fetch from `{url}` did not finish within its deadline of {}",
        crate::support::time::seconds(*.deadline)
    )]
    Deadline {
        /// The redacted URL.
        url: RedactedUrl,
        /// The deadline that passed.
        deadline: Duration,
    },
    /// The server answered the request for the selected blobs of a partial fetch without some
    /// of them (retryable: nothing is published).
    #[error(
        "`{url}` left out {count} of the requested file(s) of commit `{commit}` (the first: blob \
         `{first}`); nothing was published"
    )]
    Incomplete {
        /// The redacted URL.
        url: RedactedUrl,
        /// The pinned commit.
        commit: CommitId,
        /// How many blobs were not sent.
        count: usize,
        /// The first of them.
        first: String,
    },
    /// The server answered the fetch of the pinned commit with a pack that does not hold it (a
    /// broken cache or proxy in front of it; retryable: nothing is published).
    #[error(
        "`{url}` answered the fetch of commit `{commit}` with a pack that does not hold it; \
         nothing was published"
    )]
    CommitAbsent {
        /// The redacted URL.
        url: RedactedUrl,
        /// The pinned commit.
        commit: CommitId,
    },
    /// The server answered the fetch of the pinned commit with a pack announcing more objects
    /// than a commit may have ([`partial::MAX_COMMIT_OBJECTS`]): a tree over its bounds, or an
    /// answer that is not the commit's. Refused from the pack's header, before any object is read.
    #[error(
        "`{url}` answered the fetch of commit `{commit}` with a pack of {objects} objects, more \
         than the {max} a commit may have (one per entry of a tree of at most {entries} entries, \
         the commit and its root tree)",
        max = partial::MAX_COMMIT_OBJECTS,
        entries = super::tree::MAX_TREE_ENTRIES
    )]
    PackTooLarge {
        /// The redacted URL.
        url: RedactedUrl,
        /// The pinned commit.
        commit: CommitId,
        /// The objects the pack announced.
        objects: u32,
    },
    /// Stopped by SIGINT/SIGTERM.
    #[error("the fetch from `{url}` was interrupted")]
    Interrupted {
        /// The redacted URL.
        url: RedactedUrl,
    },
    /// An answer of the server broke a bound of [`super::answer`]: refused before gix read it
    /// (the same server answers the same way: a retry cannot help).
    #[error("`{url}` sent too much: {refusal}; refused before it was read")]
    AnswerTooLarge {
        /// The redacted URL.
        url: RedactedUrl,
        /// Which answer, and the bound it broke.
        refusal: Refusal,
    },
    /// The URL or the pin cannot be used at all.
    #[error("cannot fetch `{url}`: {detail}")]
    Invalid {
        /// The redacted URL.
        url: RedactedUrl,
        /// Why.
        detail: String,
    },
}

impl FetchError {
    /// Stable error code.
    pub fn code(&self) -> crate::source::code::PrepareCode {
        use crate::source::code::PrepareCode;
        match self {
            FetchError::Unreachable { .. } => PrepareCode::FetchFailed,
            FetchError::CommitNotFound { .. } => PrepareCode::CommitNotFound,
            FetchError::NotACommit { .. } => PrepareCode::NotACommit,
            FetchError::Unauthenticated { .. } => PrepareCode::FetchUnauthenticated,
            FetchError::CleartextCredentials { .. } => PrepareCode::FetchCleartextCredentials,
            FetchError::ObjectTooLarge { .. } => PrepareCode::ObjectTooLarge,
            FetchError::PackTooLarge { .. } => PrepareCode::TreeTooLarge,
            FetchError::Interrupted { .. } => PrepareCode::Interrupted,
            FetchError::Deadline { .. } => PrepareCode::FetchDeadline,
            FetchError::Incomplete { .. } | FetchError::CommitAbsent { .. } => {
                PrepareCode::FetchIncomplete
            }
            FetchError::Invalid { .. } | FetchError::AnswerTooLarge { .. } => {
                PrepareCode::FetchInvalid
            }
        }
    }
}

crate::support::error_code::coded_by_code!(FetchError);

impl FetchError {
    /// What to change so that the next run succeeds, when the error itself does not say.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            FetchError::CleartextCredentials { .. } => Some(
                "write the repository's `https://` URL in the descriptor (the pinned commit stays \
                 the same), or serve it over `http://` without authentication",
            ),
            _ => None,
        }
    }
}

/// Fetches `commit` from `url` into a new bare repository at `git_dir` (which must not exist;
/// its parent must), within `deadline` overall. `select` is called once the commit's trees are
/// in the repository (whatever the fetch brought), and chooses the blobs a partial fetch then
/// brings; its error ends the fetch.
pub fn fetch_commit<E: From<FetchError>>(
    url: &str,
    commit: &CommitId,
    git_dir: &Path,
    interrupt: &AtomicBool,
    deadline: Duration,
    report: Report<'_>,
    select: Select<'_, E>,
) -> Result<Fetched, E> {
    let root = gix::progress::prodash::tree::Root::new();
    let done = AtomicBool::new(false);
    // What gix polls: set by the watcher on a signal or at the deadline.
    let stop = AtomicBool::new(false);
    let stops = Stops {
        interrupt,
        until: until(deadline),
        deadline,
        stop: &stop,
        refused: Refused::default(),
    };
    std::thread::scope(|scope| {
        let watcher = scope.spawn(|| watch(&root, &done, &stops, report));
        let result = fetch_with(url, commit, git_dir, &stops, &root, select);
        // Wake the watcher at once: the fetch never waits for its next tick.
        done.store(true, Ordering::Release);
        watcher.thread().unpark();
        result
    })
}

/// Receives a short description of a running transfer, a few times a second.
pub type Report<'a> = &'a (dyn Fn(&str) + Sync);

/// What stops a fetch: a signal, or its deadline.
pub(super) struct Stops<'a> {
    /// Set by SIGINT/SIGTERM.
    interrupt: &'a AtomicBool,
    /// When the deadline passes.
    pub(super) until: Instant,
    /// The deadline, as given.
    deadline: Duration,
    /// The flag gix polls, set by the watcher when either happens.
    pub(super) stop: &'a AtomicBool,
    /// The first answer of the server refused for a bound, if any.
    pub(super) refused: Refused,
}

impl Stops<'_> {
    fn past_deadline(&self) -> bool {
        Instant::now() >= self.until
    }

    fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed)
    }
}

/// How often the watcher describes a running transfer.
const REPORT_EVERY: Duration = Duration::from_millis(250);
/// How often the watcher looks at the signal flag.
const POLL_EVERY: Duration = Duration::from_millis(50);

/// Until `done`: passes a signal on to gix (within [`POLL_EVERY`]), stops gix at the deadline,
/// and describes the busiest task of the fetch's progress tree every [`REPORT_EVERY`]. It sleeps
/// parked, so the fetch ends it by unparking it rather than waiting out a tick.
fn watch(
    root: &gix::progress::prodash::tree::Root,
    done: &AtomicBool,
    stops: &Stops<'_>,
    report: Report<'_>,
) {
    let mut snapshot = Vec::new();
    let mut last = String::new();
    let mut next = Instant::now() + REPORT_EVERY;
    loop {
        // Spurious wake-ups are harmless: the loop checks `done` and the time again.
        let wake = next.min(stops.until).min(Instant::now() + POLL_EVERY);
        std::thread::park_timeout(wake.saturating_duration_since(Instant::now()));
        if done.load(Ordering::Acquire) {
            return;
        }
        if stops.interrupt.load(Ordering::Relaxed) || stops.past_deadline() {
            stops.stop.store(true, Ordering::Relaxed);
        }
        if Instant::now() < next {
            continue;
        }
        next += REPORT_EVERY;
        root.sorted_snapshot(&mut snapshot);
        let busiest = snapshot.iter().rev().find_map(|(_, task)| {
            let value = task.progress.as_ref()?;
            let step = value.step.load(Ordering::Relaxed);
            (step > 0).then(|| match value.done_at {
                Some(total) => format!("{} {step}/{total}", task.name),
                None => format!("{} {step}", task.name),
            })
        });
        if let Some(line) = busiest
            && line != last
        {
            report(&line);
            last = line;
        }
    }
}

fn fetch_with<E: From<FetchError>>(
    url: &str,
    commit: &CommitId,
    git_dir: &Path,
    stops: &Stops<'_>,
    root: &gix::progress::prodash::tree::Root,
    select: Select<'_, E>,
) -> Result<Fetched, E> {
    crate::source::tls::install_provider();
    let shown = RedactedUrl::new(url);
    let id = gix::ObjectId::from_hex(commit.as_str().as_bytes()).map_err(|e| FetchError::Invalid {
        url: shown.clone(),
        detail: format!(
            "`{commit}` cannot be used with this build ({e}); only SHA-1 repositories are supported"
        ),
    })?;
    let attempt = |url: &str, partial: bool, select: Select<'_, E>| {
        let repo = scratch_repository(git_dir).map_err(partial::Failed::Fetch)?;
        let arrived = partial::fetch_pinned(&repo, url, id, stops, root, partial, select)?;
        Ok::<_, partial::Failed<E>>((repo, arrived))
    };
    let (url, by_id) = match attempt(url, true, &mut *select) {
        Err(partial::Failed::Fetch(e)) if refused_redirect(&e) => {
            let target = redirect_target(url, stops)
                .map_err(|detail| redirect_error(detail, url, &shown, stops))?;
            // The refused attempt left its scratch repository behind.
            let _ = fs_err::remove_dir_all(git_dir);
            let by_id = attempt(&target, true, &mut *select);
            (std::borrow::Cow::Owned(target), by_id)
        }
        by_id => (std::borrow::Cow::Borrowed(url), by_id),
    };
    let url = url.as_ref();
    let classify = |e: gix::Error| classify(e, url, &shown, commit, stops);
    // An answer without the pinned commit, or with too many objects, on either path.
    let absent = || FetchError::CommitAbsent {
        url: shown.clone(),
        commit: commit.clone(),
    };
    let too_large = |objects| FetchError::PackTooLarge {
        url: shown.clone(),
        commit: commit.clone(),
        objects,
    };
    // The whole commit from the same server, for the reason `why` (said once in the progress).
    let mut fall_back = |why: Full| {
        whole(url, id, git_dir, stops, root, &mut *select, why).map_err(|e| match e {
            WholeError::Fetch(e) => classify(e).0.into(),
            WholeError::Absent => absent().into(),
            WholeError::TooLarge(objects) => too_large(objects).into(),
            WholeError::Select(e) => e,
        })
    };

    let first_error = match by_id {
        Ok((repo, arrived)) => {
            let full = match arrived {
                partial::Arrived::Partial => None,
                partial::Arrived::Whole => Some(Full::NoFilter),
            };
            return Ok(Fetched {
                repo,
                commit: id,
                path: FetchPath::ById,
                full,
            });
        }
        Err(partial::Failed::Select(e)) => return Err(e),
        Err(partial::Failed::CommitAbsent) => return Err(absent().into()),
        Err(partial::Failed::CommitPackTooLarge { objects }) => {
            return Err(too_large(objects).into());
        }
        Err(partial::Failed::Missing { count, first }) => {
            return Err(FetchError::Incomplete {
                url: shown,
                commit: commit.clone(),
                count,
                first: first.to_string(),
            }
            .into());
        }
        Err(partial::Failed::Blobs(e)) => {
            let detail = redact::scrub(&chain(&e), url);
            // Out of time, stopped, or cut off: the same failure as any fetch's.
            if !e.is_resource_exhausted()
                && let Some(error) = transport_error(&e, detail.clone(), &shown, stops)
            {
                return Err(error.into());
            }
            return fall_back(Full::BlobsRefused(detail));
        }
        Err(partial::Failed::OverBounds(why)) => {
            return fall_back(Full::BlobsOverBounds(why));
        }
        Err(partial::Failed::Fetch(e)) if refused_filter(&e) => {
            // It offers `filter` but not this one (`uploadpackfilter.blob:none.allow=false`).
            let detail = redact::scrub(&chain(&e), url);
            return fall_back(Full::FilterRefused(detail));
        }
        Err(partial::Failed::Fetch(e)) => classify(e),
    };
    let (first_error, server_answered) = first_error;
    // Only a server that answered and refused the want is worth a second, wider fetch.
    if !server_answered {
        return Err(first_error.into());
    }
    // The first attempt removed its directory; fetch branches and tags instead.
    let _ = fs_err::remove_dir_all(git_dir);
    let repo = fetch_branches_and_tags(url, git_dir, stops, root).map_err(|e| classify(e).0)?;
    if repo.find_commit(id).is_err() {
        return Err(FetchError::CommitNotFound {
            url: shown,
            commit: commit.clone(),
            detail: format!(
                "not reachable from any branch or tag, and the server refused it by id ({first_error})"
            ),
        }
        .into());
    }
    select(&repo, id)?;
    Ok(Fetched {
        repo,
        commit: id,
        path: FetchPath::BranchesAndTags,
        full: None,
    })
}

/// Whether the server refused the filter it offered: git's upload-pack answers `filter '…' not
/// supported` for a filter its configuration disallows.
fn refused_filter(e: &gix::Error) -> bool {
    let chain = chain(e);
    chain.contains("filter '") && chain.contains("not supported")
}

/// Chooses the blobs to fetch once the commit's trees are in the repository (see
/// [`fetch_commit`]).
pub type Select<'a, E> =
    &'a mut dyn FnMut(&gix::Repository, gix::ObjectId) -> Result<partial::BlobRequest, E>;

/// A failure of the whole-commit fetch after a partial one gave up: the fetch's (to classify),
/// an answer without the commit or with too many objects (how many), or the selection's.
enum WholeError<E> {
    Fetch(gix::Error),
    Absent,
    TooLarge(u32),
    Select(E),
}

/// The whole commit, into a new repository at `git_dir` (the partial attempt's is removed),
/// after the server refused or overran the request for its blobs (`why`).
fn whole<E>(
    url: &str,
    id: gix::ObjectId,
    git_dir: &Path,
    stops: &Stops<'_>,
    root: &gix::progress::prodash::tree::Root,
    select: Select<'_, E>,
    why: Full,
) -> Result<Fetched, WholeError<E>> {
    let _ = fs_err::remove_dir_all(git_dir);
    let repo = scratch_repository(git_dir).map_err(WholeError::Fetch)?;
    match partial::fetch_pinned(&repo, url, id, stops, root, false, select) {
        Ok(_) => Ok(Fetched {
            repo,
            commit: id,
            path: FetchPath::ById,
            full: Some(why),
        }),
        Err(partial::Failed::Select(e)) => Err(WholeError::Select(e)),
        Err(partial::Failed::CommitAbsent) => Err(WholeError::Absent),
        Err(partial::Failed::CommitPackTooLarge { objects }) => Err(WholeError::TooLarge(objects)),
        Err(partial::Failed::Fetch(e) | partial::Failed::Blobs(e)) => Err(WholeError::Fetch(e)),
        Err(partial::Failed::OverBounds(why)) => Err(WholeError::Fetch(gix::Error::from_error(
            std::io::Error::other(why),
        ))),
        Err(partial::Failed::Missing { .. }) => Err(WholeError::Fetch(gix::Error::from_error(
            std::io::Error::other("the whole commit was fetched, yet blobs are missing"),
        ))),
    }
}

/// A new, minimal bare repository at `git_dir`, opened.
fn scratch_repository(git_dir: &Path) -> gix::Result<gix::Repository> {
    init_bare(git_dir).map_err(gix::Error::from_error)?;
    gix::open_opts(git_dir, open_options()).map_err(gix::Error::from_error)
}

/// Connects `repo` to `url` for fetching with the refspecs `refspecs` (no tags), with this
/// crate's transport options (every HTTP(S) request ending by the deadline of `stops`, every
/// answer bounded: [`transport::connect`]), and hands the connection to `use_it`.
fn with_connection<T>(
    repo: &gix::Repository,
    url: &str,
    refspecs: &[&str],
    stops: &Stops<'_>,
    use_it: impl FnOnce(transport::Connection<'_, '_>) -> gix::Result<T>,
) -> gix::Result<T> {
    use gix::remote::Direction;

    let remote = repo
        .remote_at(url)
        .map_err(gix::Error::from_error)?
        .with_fetch_tags(gix::remote::fetch::Tags::None)
        .with_refspecs(refspecs.iter().copied(), Direction::Fetch)
        .map_err(gix::Error::from_error)?;
    let mut connection = transport::connect(&remote, stops.until, &stops.refused)?;
    if let Some(options) = transport_options(repo, url, stops.until)? {
        connection.set_transport_options(options);
    }
    use_it(connection)
}

/// A name to look up in a server's ref listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefQuery<'a> {
    /// The remote's `HEAD`.
    Head,
    /// `refs/heads/<name>`.
    Branch(&'a str),
    /// `refs/heads/<name>`, else `refs/tags/<name>` (an annotated tag peeled to its commit).
    BranchOrTag(&'a str),
}

impl RefQuery<'_> {
    /// The full ref names that answer the query, the preferred first.
    fn candidates(self) -> Vec<String> {
        match self {
            RefQuery::Head => vec!["HEAD".to_owned()],
            RefQuery::Branch(name) => vec![format!("refs/heads/{name}")],
            RefQuery::BranchOrTag(name) => {
                vec![format!("refs/heads/{name}"), format!("refs/tags/{name}")]
            }
        }
    }
}

/// The commit `query` names on `url` now, from the server's ref listing alone (nothing is
/// fetched), and the full name of the ref that named it, within `deadline`. `git_dir` is a
/// scratch repository path that must not exist; it is left for the caller to remove.
pub fn resolve_ref(
    url: &str,
    query: RefQuery<'_>,
    git_dir: &Path,
    interrupt: &AtomicBool,
    deadline: Duration,
) -> Result<(gix::ObjectId, String), FetchError> {
    crate::source::tls::install_provider();
    // The listing polls no flag: the deadline bounds its HTTP(S) requests.
    let stops = Stops {
        interrupt,
        until: until(deadline),
        deadline,
        stop: interrupt,
        refused: Refused::default(),
    };
    let shown = RedactedUrl::new(url);
    let candidates = query.candidates();
    // A branch or the `HEAD` narrows the listing to itself; a name that may be a tag lists
    // every ref (one listing instead of one connection per kind).
    let narrow = !matches!(query, RefQuery::BranchOrTag(_));
    let list = |url: &str| {
        scratch_repository(git_dir).and_then(|repo| {
            with_connection(&repo, url, &[&candidates[0]], &stops, |connection| {
                let options = gix::remote::ref_map::Options {
                    prefix_from_spec_as_filter_on_remote: narrow,
                    ..Default::default()
                };
                let (map, _) = connection.ref_map(gix::progress::Discard, options)?;
                Ok(map.remote_refs)
            })
        })
    };
    let (url, listed) = match list(url) {
        Err(e) if refused_redirect(&e) => {
            let target = redirect_target(url, &stops)
                .map_err(|detail| redirect_error(detail, url, &shown, &stops))?;
            let _ = fs_err::remove_dir_all(git_dir);
            let listed = list(&target);
            (std::borrow::Cow::Owned(target), listed)
        }
        listed => (std::borrow::Cow::Borrowed(url), listed),
    };
    let url = url.as_ref();
    let listed = listed.map_err(|e| {
        let detail = redact::scrub(&chain(&e), url);
        transport_error(&e, detail.clone(), &shown, &stops).unwrap_or_else(|| {
            FetchError::Unreachable {
                url: shown.clone(),
                detail,
            }
        })
    })?;
    let listed: Vec<(&[u8], gix::ObjectId)> = listed
        .iter()
        .filter_map(|r| match r {
            gix::protocol::handshake::Ref::Direct {
                full_ref_name,
                object,
            }
            | gix::protocol::handshake::Ref::Peeled {
                full_ref_name,
                object,
                ..
            }
            | gix::protocol::handshake::Ref::Symbolic {
                full_ref_name,
                object,
                ..
            } => Some((full_ref_name.as_slice(), *object)),
            gix::protocol::handshake::Ref::Unborn { .. } => None,
        })
        .collect();
    candidates
        .iter()
        .find_map(|name| {
            listed
                .iter()
                .find(|(full, _)| *full == name.as_bytes())
                .map(|(_, object)| (*object, name.clone()))
        })
        .ok_or_else(|| FetchError::Invalid {
            url: shown,
            detail: format!(
                "the server lists no `{}`",
                crate::support::escape::text(&candidates.join("` or `"))
            ),
        })
}

/// A bare repository with nothing but what Git needs to open it: `HEAD`, `config`, `objects/`
/// and `refs/`. `git_dir` must not exist; its parent must.
fn init_bare(git_dir: &Path) -> std::io::Result<()> {
    fs_err::create_dir(git_dir)?;
    for dir in ["objects", "objects/pack", "refs"] {
        fs_err::create_dir(git_dir.join(dir))?;
    }
    fs_err::write(git_dir.join("HEAD"), "ref: refs/heads/main\n")?;
    fs_err::write(
        git_dir.join("config"),
        "[core]\n\trepositoryformatversion = 0\n\tbare = true\n",
    )
}

/// The transport options for `url`: the repository's own, with every HTTP(S) request given a
/// timeout of what remains until `until` — reqwest applies it to the whole request, its body
/// included, which its idle timeouts never do — and a plain `http://` URL an HTTP client with
/// an empty set of certificate roots. Building the default client reads and parses every system
/// root certificate (milliseconds on each run) for a connection that never uses TLS. Because
/// every request is configured, gix follows no redirect of these connections: the callers
/// follow them with [`redirect_target`] (which loads the roots should a plain-HTTP server
/// redirect to `https://`).
pub(super) fn transport_options(
    repo: &gix::Repository,
    url: &str,
    until: Instant,
) -> gix::Result<Option<Box<dyn std::any::Any>>> {
    use gix::protocol::transport::client::blocking_io::http;

    let Some(mut options) = repo.transport_options(url, None)? else {
        return Ok(None);
    };
    if let Some(options) = options.downcast_mut::<http::Options>() {
        let mut client = http::reqwest::Options::default();
        if is_plain_http(url) {
            client.configure_client = Some(Box::new(|builder| Ok(builder.tls_certs_only([]))));
        }
        client.configure_request = Some(Box::new(move |request| {
            // Past the deadline a request still gets a moment, to fail as timed out.
            let left = until.saturating_duration_since(Instant::now());
            *request.timeout_mut() = Some(left.max(Duration::from_millis(1)));
            Ok(())
        }));
        options.backend = Some(std::sync::Arc::new(std::sync::Mutex::new(client)));
    }
    Ok(Some(options))
}

/// The first request gix makes on every HTTP(S) connection, after the repository URL: the ref
/// advertisement, the one request whose redirect gix follows (`http.followRedirects=initial`).
const ADVERTISEMENT: &str = "/info/refs?service=git-upload-pack";

/// The most redirects one fetch follows: git's bound (`CURLOPT_MAXREDIRS` of its `http.c`).
pub const MAX_REDIRECTS: usize = 20;

/// Whether gix stopped at a redirect it would not follow because the request was configured
/// (as [`transport_options`] configures every request).
fn refused_redirect(e: &gix::Error) -> bool {
    e.iter_errors().any(|cause| {
        cause
            .downcast_ref::<reqwest::Error>()
            .is_some_and(reqwest::Error::is_redirect)
    })
}

/// The repository URL that `url`'s ref advertisement redirects to, by the rules gix applies
/// when it follows a redirect itself, and no laxer: the request carries no credentials; at most
/// [`MAX_REDIRECTS`] redirects; only to `http://` or `https://`, and never from `https://` to
/// `http://`; each target must end with the request's own tail (`/info/refs?service=…`), which
/// is how the new repository URL is known. The target keeps the credentials of `url` only on
/// the same origin (scheme, host and port); elsewhere it has none, so gix asks the credential
/// helpers for that origin's own, if it must. All of it within what remains of the deadline of
/// `stops`, and no longer than until they stop the fetch (a signal). `Err` holds why no target
/// could be had.
fn redirect_target(url: &str, stops: &Stops<'_>) -> Result<String, String> {
    let original = reqwest::Url::parse(url).map_err(|e| format!("not a URL ({e})"))?;
    let mut anonymous = original.clone();
    // Only fails for URLs that cannot hold credentials, which then hold none.
    let _ = anonymous.set_username("");
    let _ = anonymous.set_password(None);
    let first = format!(
        "{}{ADVERTISEMENT}",
        anonymous.as_str().trim_end_matches('/')
    );
    let left = stops.until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err("the deadline passed before the redirect could be followed".to_owned());
    }
    // Asked from a thread of our own — reqwest's blocking client must not run on an async
    // runtime's thread, which the caller's may be — that a signal (or the deadline) need not
    // wait for: left behind, it ends by its own timeout.
    let (sender, answer) = std::sync::mpsc::sync_channel(1);
    std::thread::spawn(move || {
        let _ = sender.send(last_location(&first, left));
    });
    let last = loop {
        match answer.recv_timeout(POLL_EVERY) {
            Ok(last) => break last,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if stops.interrupted() => {
                return Err("the redirect was not followed: stopped".to_owned());
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                break Err("the redirect follower failed".to_owned());
            }
        }
    }?;
    let base = last.as_str().strip_suffix(ADVERTISEMENT).ok_or_else(|| {
        format!(
            "the redirect target `{}` lost the request's path",
            redact::scrub(last.as_str(), url)
        )
    })?;
    let target = reqwest::Url::parse(base).map_err(|e| format!("not a URL ({e})"))?;
    let target = with_credentials_of(target, &original);
    Ok(target.as_str().trim_end_matches('/').to_owned())
}

/// `target` (which holds no credentials) with those of `original` if both have one origin.
fn with_credentials_of(mut target: reqwest::Url, original: &reqwest::Url) -> reqwest::Url {
    if crate::source::origin::same_origin(&target, original) {
        let _ = target.set_username(original.username());
        let _ = target.set_password(original.password());
    }
    target
}

/// Where the chain of redirects from `first` ends (the URL of the first answer that is no
/// redirect), within `left`, under the rules of [`redirect_target`].
fn last_location(first: &str, left: Duration) -> Result<reqwest::Url, String> {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let next = attempt.url();
        let previous = attempt.previous();
        if previous.len() > MAX_REDIRECTS {
            return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
        }
        let from_https = previous
            .last()
            .is_some_and(|url| url.scheme().eq_ignore_ascii_case("https"));
        let refusal = if !matches!(next.scheme(), "http" | "https") {
            Some("a redirect leads only to `http://` or `https://`")
        } else if from_https && next.scheme() != "https" {
            Some("a redirect never leaves `https://` for `http://`")
        } else if !next.username().is_empty() || next.password().is_some() {
            Some("a redirect never brings credentials")
        } else if !next.as_str().ends_with(ADVERTISEMENT) {
            Some("a redirect keeps the request's `/info/refs?service=git-upload-pack` tail")
        } else {
            None
        };
        match refusal {
            // The target is not shown: it may be anything a hostile server wrote.
            Some(rule) => attempt.error(format!("refused a redirect: {rule}")),
            None => attempt.follow(),
        }
    });
    // The default roots, as gix's own client has them: a plain-HTTP server may redirect to
    // `https://`.
    let client = reqwest::blocking::Client::builder()
        .redirect(policy)
        // Servers tell Git clients from browsers by a `git/` agent (as gix's `git/oxide-…`).
        .user_agent(concat!("git/skillfold-", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(20))
        .timeout(left)
        .build()
        .map_err(|e| {
            format!(
                "cannot follow the redirect ({})",
                crate::support::error_text::chain(&e)
            )
        })?;
    let response = client
        .get(first)
        .header("Git-Protocol", "version=2")
        .send()
        .map_err(|e| {
            format!(
                "cannot follow the redirect ({})",
                crate::support::error_text::chain(&e)
            )
        })?;
    // Only where the chain ends matters: the body is never read.
    Ok(response.url().clone())
}

/// The error of a redirect that could not be followed: the deadline's if it passed, a signal's
/// if one came, otherwise a failed (retryable) fetch naming the rule.
fn redirect_error(detail: String, url: &str, shown: &RedactedUrl, stops: &Stops<'_>) -> FetchError {
    if stops.past_deadline() {
        return FetchError::Deadline {
            url: shown.clone(),
            deadline: stops.deadline,
        };
    }
    if stops.interrupted() {
        return FetchError::Interrupted { url: shown.clone() };
    }
    FetchError::Unreachable {
        url: shown.clone(),
        // The detail may quote a URL a hostile server wrote.
        detail: format!(
            "the server redirects, and {}",
            crate::support::escape::text(&redact::scrub(&detail, url))
        ),
    }
}

/// Every branch and tag of `url`, in full, into a new repository at `git_dir`.
fn fetch_branches_and_tags(
    url: &str,
    git_dir: &Path,
    stops: &Stops<'_>,
    root: &gix::progress::prodash::tree::Root,
) -> gix::Result<gix::Repository> {
    let repo = scratch_repository(git_dir)?;
    let refspecs = [
        "+refs/heads/*:refs/remotes/origin/*",
        "+refs/tags/*:refs/tags/*",
    ];
    with_connection(&repo, url, &refspecs, stops, |connection| {
        let mut progress = root.add_child("fetch branches and tags");
        connection
            .prepare_fetch(&mut progress, gix::remote::ref_map::Options::default())?
            .receive(&mut progress, stops.stop)?;
        Ok(())
    })?;
    Ok(repo)
}

/// Isolated options plus exactly the authentication settings we carry over.
///
/// gix treats `GIT_ASKPASS` as a kind of prompt: with terminal prompts disabled it is not asked
/// either. So prompts stay enabled only when an askpass program is configured (it answers instead
/// of the terminal); otherwise they are disabled and a missing credential fails at once.
fn open_options() -> gix::open::Options {
    let mut overrides: Vec<String> =
        vec![format!("gitoxide.objects.allocLimit={MAX_OBJECT_BYTES}")];
    for helper in user_credential_helpers() {
        overrides.push(format!("credential.helper={helper}"));
    }
    match std::env::var_os("GIT_ASKPASS").or_else(|| std::env::var_os("SSH_ASKPASS")) {
        Some(askpass) if !askpass.is_empty() => {
            overrides.push(format!("core.askPass={}", askpass.to_string_lossy()));
        }
        _ => overrides.push("gitoxide.credentials.terminalPrompt=false".to_owned()),
    }
    gix::open::Options::isolated().config_overrides(overrides)
}

/// The `credential.helper` entries of the system, XDG and user Git configuration (honouring
/// `GIT_CONFIG_SYSTEM`, `GIT_CONFIG_NOSYSTEM` and `GIT_CONFIG_GLOBAL`), read directly from those
/// files — nothing else of them is used.
fn user_credential_helpers() -> Vec<String> {
    use gix::config::Source;
    let files = [Source::System, Source::Git, Source::User]
        .into_iter()
        .filter_map(|source| {
            let path = source.storage_location(&mut gix::path::env::var)?;
            if !path.is_file() {
                return None;
            }
            Some(gix::config::file::Metadata {
                path: Some(path),
                source,
                level: 0,
                trust: gix::sec::Trust::Full,
            })
        });
    gix::config::File::from_paths_metadata(files, Default::default())
        .ok()
        .flatten()
        .and_then(|config| config.strings("credential.helper"))
        .map(|helpers| helpers.iter().map(ToString::to_string).collect())
        .unwrap_or_default()
}

/// Maps a gix error to ours; the flag says whether the server answered (and refused), as
/// opposed to a connection, authentication or interruption failure.
fn classify(
    e: gix::Error,
    url: &str,
    shown: &RedactedUrl,
    commit: &CommitId,
    stops: &Stops<'_>,
) -> (FetchError, bool) {
    let detail = redact::scrub(&chain(&e), url);
    if let Some(error) = transport_error(&e, detail.clone(), shown, stops) {
        return (error, false);
    }
    let shown = shown.clone();
    if detail.contains("did not peel to a commit") {
        let commit = commit.clone();
        return (
            FetchError::NotACommit {
                url: shown,
                commit,
                detail,
            },
            false,
        );
    }
    if detail.contains("not our ref") {
        let commit = commit.clone();
        return (
            FetchError::CommitNotFound {
                url: shown,
                commit,
                detail,
            },
            true,
        );
    }
    (FetchError::Unreachable { url: shown, detail }, true)
}

/// The refusals any conversation with the server can end in, whatever it asked for: out of
/// time, stopped, not allowed in, an object over the bound, or a transient failure. `None` for
/// the rest.
fn transport_error(
    e: &gix::Error,
    detail: String,
    shown: &RedactedUrl,
    stops: &Stops<'_>,
) -> Option<FetchError> {
    let url = shown.clone();
    if stops.past_deadline() {
        // Whatever gix made of it (stopped, timed out, cut off): the deadline ended it.
        Some(FetchError::Deadline {
            url,
            deadline: stops.deadline,
        })
    } else if let Some(refusal) = stops.refused.get() {
        // Whatever gix made of the reader's error: the answer broke a bound.
        Some(FetchError::AnswerTooLarge { url, refusal })
    } else if e.is_cancelled() || stops.interrupted() {
        Some(FetchError::Interrupted { url })
    } else if is_plain_http(shown.as_str()) && (refused_identity(e) || e.is_unauthenticated()) {
        // Over `http://` gix never sends credentials (it refuses the identity it was given), so
        // a server that asks for them is never satisfied, with credentials at hand or not.
        Some(FetchError::CleartextCredentials { url, detail })
    } else if e.is_unauthenticated() {
        Some(FetchError::Unauthenticated { url, detail })
    } else if e.is_resource_exhausted() {
        Some(FetchError::ObjectTooLarge { url, detail })
    } else if e.can_retry() {
        Some(FetchError::Unreachable { url, detail })
    } else {
        None
    }
}

/// Whether gix's transport refused to use the credentials it was given (as it does over
/// `http://`).
fn refused_identity(e: &gix::Error) -> bool {
    use gix::protocol::transport::client::Error;
    e.iter_errors()
        .any(|cause| matches!(cause.downcast_ref(), Some(Error::AuthenticationRefused(_))))
}

/// Whether `url` is a plain `http://` URL.
fn is_plain_http(url: &str) -> bool {
    url.get(..7)
        .is_some_and(|s| s.eq_ignore_ascii_case("http://"))
}

/// The error and its sources on one line.
fn chain(e: &gix::Error) -> String {
    let mut parts: Vec<String> = e.iter_errors().map(ToString::to_string).collect();
    parts.dedup();
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> reqwest::Url {
        reqwest::Url::parse(s).expect("a URL")
    }

    #[test]
    fn credentials_follow_a_redirect_only_on_their_origin() {
        let original = url("https://alice:pw@git.example:8443/old.git");
        let kept = with_credentials_of(url("https://git.example:8443/new.git"), &original);
        assert_eq!(kept.as_str(), "https://alice:pw@git.example:8443/new.git");
        for elsewhere in [
            "https://git.example/new.git",
            "https://other.example:8443/new.git",
            "http://git.example:8443/new.git",
        ] {
            let target = with_credentials_of(url(elsewhere), &original);
            assert_eq!(target.as_str(), elsewhere);
        }
        // The default port is the same origin as no port.
        let plain = url("https://alice:pw@git.example/old.git");
        let kept = with_credentials_of(url("https://git.example:443/new.git"), &plain);
        assert_eq!(kept.username(), "alice");
    }

    #[test]
    fn only_a_redirect_error_is_a_refused_redirect() {
        let e = gix::Error::from_error(std::io::Error::other("refusing to follow redirect"));
        assert!(!refused_redirect(&e));
    }
}
