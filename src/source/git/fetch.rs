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
//!   `uploadpack.allowReachableSHA1InWant`): fetch every branch and tag in full
//!   ([`partial::fetch_history`]), then look the commit up locally. Either way the result must
//!   hold exactly the pinned commit. Only a server that answered and refused falls back: a
//!   malformed answer ([`FetchError::Malformed`], `fetch_invalid`) ends the fetch.
//! - `interrupt` is polled by gix throughout; setting it stops the fetch.
//! - Every fetch has an overall deadline (the commands' default is 300 s) besides the transport's
//!   idle timeouts, so a server that trickles one byte at a time cannot hold it forever: each
//!   HTTP(S) request may last no longer than what remains of it (its whole body included), and a
//!   timer stops gix at the deadline as a signal would. Past it the fetch fails with
//!   [`FetchError::Deadline`] (retryable).
//! - HTTP(S) redirects: gix refuses to follow a redirect of any request its caller configured
//!   (the per-request timeout above is such a configuration), so the fetcher follows them
//!   itself, by gix's rules and no laxer, credentials kept to their origin ([`super::redirect`]);
//!   the fetch then runs once more against the repository URL the last one names.
//! - Every connection is made by [`super::transport`]: over HTTP(S) each answer of the server
//!   (the capability advertisement, the ref listing, the lines of a fetch before its pack) is
//!   read through [`super::answer`], bounded before gix holds it and cut off at the deadline on
//!   every read; past a bound the fetch fails with [`FetchError::AnswerTooLarge`]
//!   (`fetch_invalid`). A pack of the commit that announces more objects than a commit may have
//!   is refused from its header ([`FetchError::PackTooLarge`]); every pack, over any transport,
//!   is refused as it arrives past the bytes its request may need or when one of its objects
//!   runs past the size it declares ([`super::pack`], [`FetchError::PackOverBound`]).
//! - An error the server reports on its side-band (channel 3) stops the fetch within a tick of
//!   the watcher, or as soon as a pack is in, and is shown escaped ([`FetchError::ServerError`]).
//! - No single object may be larger than [`super::options::MAX_OBJECT_BYTES`] once inflated. gix checks this
//!   from each object's header before allocating for it (`gitoxide.objects.allocLimit`), so a
//!   small pack of highly compressed objects (a gigabyte of zeros is a megabyte of pack) cannot
//!   exhaust memory; such a commit is refused with `object_too_large`.
//!
//! Around it: [`super::options`] (the repository and transport options, and what stops a fetch),
//! [`super::redirect`], [`super::fetch_error`] (what a failure is, read from gix's errors) and
//! [`super::refs`] (a name on the server resolved to a commit, by the same rules).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::descriptor::redact::{self, RedactedUrl};
use crate::format::pin::CommitId;

use super::answer::AnswerRefusalSlot;
use super::fetch_error::{FetchError, chain, classify, stopped, transport_error};
use super::options::{POLL_EVERY, Stops, note_server_error, scratch_repository, until};
use super::pack::PackBroken;
use super::partial;
use super::redirect::{redirect_error, redirect_target, refused_redirect};

/// How the commit was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchPath {
    /// Shallow fetch of the commit id itself (partial, or whole: see [`FetchedCommit::full`]).
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
#[derive(Clone)]
pub struct FetchedCommit {
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
) -> Result<FetchedCommit, E> {
    let root = gix::progress::prodash::tree::Root::new();
    let done = AtomicBool::new(false);
    // What gix polls: set by the watcher on a signal or at the deadline.
    let stop = AtomicBool::new(false);
    let stops = Stops {
        interrupt,
        until: until(deadline),
        deadline,
        stop: &stop,
        refused: AnswerRefusalSlot::default(),
        server_error: Default::default(),
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

/// How often the watcher describes a running transfer.
const REPORT_EVERY: Duration = Duration::from_millis(250);

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
        note_server_error(root, stops);
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

/// The fetch of [`fetch_commit`], under `stops`: by id (following a redirect once), then, if
/// the server answered and refused the id, every branch and tag.
fn fetch_with<E: From<FetchError>>(
    url: &str,
    commit: &CommitId,
    git_dir: &Path,
    stops: &Stops<'_>,
    root: &gix::progress::prodash::tree::Root,
    select: Select<'_, E>,
) -> Result<FetchedCommit, E> {
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
    let pinned = (url, &shown, commit, id);
    let (first_error, server_answered) =
        match settle_by_id(by_id, pinned, git_dir, stops, root, &mut *select) {
            Ok(fetched) => return Ok(fetched),
            Err(ByIdFailed::Final(e)) => return Err(e),
            Err(ByIdFailed::Refused(first_error, server_answered)) => {
                (first_error, server_answered)
            }
        };
    // Only a server that answered and refused the want is worth a second, wider fetch.
    if !server_answered {
        return Err(first_error.into());
    }
    // The first attempt removed its directory; fetch branches and tags instead.
    let _ = fs_err::remove_dir_all(git_dir);
    let repo = fetch_branches_and_tags((url, &shown, commit), git_dir, stops, root)?;
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
    select(&repo, id, false)?;
    Ok(FetchedCommit {
        repo,
        commit: id,
        path: FetchPath::BranchesAndTags,
        full: None,
    })
}

/// How the fetch by id failed.
enum ByIdFailed<E> {
    /// With the failure to report: the fetch ends.
    Final(E),
    /// With this error, and whether the server answered (and refused the id).
    Refused(FetchError, bool),
}

/// The outcome of the fetch by id (`by_id`) of `pinned` (the URL it ran against, as shown, the
/// pin and its id): the commit, whole or in part; a failure that ends the fetch; the whole commit
/// when the server refused or overran the partial fetch; or the refusal to weigh for the
/// fallback to branches and tags.
fn settle_by_id<E: From<FetchError>>(
    by_id: Result<(gix::Repository, partial::Arrived), partial::Failed<E>>,
    (url, shown, commit, id): (&str, &RedactedUrl, &CommitId, gix::ObjectId),
    git_dir: &Path,
    stops: &Stops<'_>,
    root: &gix::progress::prodash::tree::Root,
    select: Select<'_, E>,
) -> Result<FetchedCommit, ByIdFailed<E>> {
    let classify = |e: gix::Error| classify(e, url, shown, commit, stops);
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
    // A pack over its bytes, or a malformed answer: never a reason to ask for more.
    let over_bound = |why| FetchError::PackOverBound {
        url: shown.clone(),
        commit: commit.clone(),
        why,
    };
    let malformed = |detail: String| {
        stopped(stops, shown).unwrap_or_else(|| FetchError::Malformed {
            url: shown.clone(),
            detail: redact::scrub(&detail, url),
        })
    };
    // The whole commit from the same server, for the reason `why` (said once in the progress).
    let mut fall_back = |why: Full| {
        whole(url, id, git_dir, stops, root, select, why).map_err(|e| {
            ByIdFailed::Final(match e {
                WholeError::Fetch(e) => classify(e).0.into(),
                WholeError::Absent => absent().into(),
                WholeError::TooLarge(objects) => too_large(objects).into(),
                WholeError::OverBound(why) => over_bound(why).into(),
                WholeError::Malformed(detail) => malformed(detail).into(),
                WholeError::Select(e) => e,
            })
        })
    };
    let settled = match by_id {
        Ok((repo, arrived)) => {
            let full = match arrived {
                partial::Arrived::Partial => None,
                partial::Arrived::Whole => Some(Full::NoFilter),
            };
            Ok(FetchedCommit {
                repo,
                commit: id,
                path: FetchPath::ById,
                full,
            })
        }
        Err(partial::Failed::Select(e)) => Err(e),
        Err(partial::Failed::CommitAbsent) => Err(absent().into()),
        Err(partial::Failed::CommitPackTooLarge { objects }) => Err(too_large(objects).into()),
        Err(partial::Failed::PackOverBound(why)) => Err(over_bound(why).into()),
        Err(partial::Failed::Malformed(detail)) => Err(malformed(detail).into()),
        Err(partial::Failed::Missing { count, first }) => Err(FetchError::Incomplete {
            url: shown.clone(),
            commit: commit.clone(),
            count,
            first: first.to_string(),
        }
        .into()),
        Err(partial::Failed::Blobs(e)) => {
            let detail = redact::scrub(&chain(&e), url);
            // Out of time, stopped, or cut off: the same failure as any fetch's.
            if !e.is_resource_exhausted()
                && let Some(error) = transport_error(&e, detail.clone(), shown, stops)
            {
                return Err(ByIdFailed::Final(error.into()));
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
        Err(partial::Failed::Fetch(e)) => {
            let (error, server_answered) = classify(e);
            return Err(ByIdFailed::Refused(error, server_answered));
        }
    };
    settled.map_err(ByIdFailed::Final)
}

/// Whether the server refused the filter it offered: git's upload-pack answers `filter '…' not
/// supported` for a filter its configuration disallows.
fn refused_filter(e: &gix::Error) -> bool {
    let chain = chain(e);
    chain.contains("filter '") && chain.contains("not supported")
}

/// Chooses the blobs to fetch once the commit's trees are in the repository (see
/// [`fetch_commit`]); its last argument says whether they are still to be fetched (a partial
/// fetch) or came with the whole commit.
pub type Select<'a, E> =
    &'a mut dyn FnMut(&gix::Repository, gix::ObjectId, bool) -> Result<partial::BlobRequest, E>;

/// A failure of the whole-commit fetch after a partial one gave up: the fetch's (to classify),
/// an answer without the commit, with too many objects (how many), over its bytes or malformed,
/// or the selection's.
enum WholeError<E> {
    Fetch(gix::Error),
    Absent,
    TooLarge(u32),
    OverBound(PackBroken),
    Malformed(String),
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
) -> Result<FetchedCommit, WholeError<E>> {
    let _ = fs_err::remove_dir_all(git_dir);
    let repo = scratch_repository(git_dir).map_err(WholeError::Fetch)?;
    match partial::fetch_pinned(&repo, url, id, stops, root, false, select) {
        Ok(_) => Ok(FetchedCommit {
            repo,
            commit: id,
            path: FetchPath::ById,
            full: Some(why),
        }),
        Err(partial::Failed::Select(e)) => Err(WholeError::Select(e)),
        Err(partial::Failed::CommitAbsent) => Err(WholeError::Absent),
        Err(partial::Failed::CommitPackTooLarge { objects }) => Err(WholeError::TooLarge(objects)),
        Err(partial::Failed::PackOverBound(why)) => Err(WholeError::OverBound(why)),
        Err(partial::Failed::Malformed(detail)) => Err(WholeError::Malformed(detail)),
        Err(partial::Failed::Fetch(e) | partial::Failed::Blobs(e)) => Err(WholeError::Fetch(e)),
        Err(partial::Failed::OverBounds(why)) => Err(WholeError::Fetch(gix::Error::from_error(
            std::io::Error::other(why),
        ))),
        Err(partial::Failed::Missing { .. }) => Err(WholeError::Fetch(gix::Error::from_error(
            std::io::Error::other("the whole commit was fetched, yet blobs are missing"),
        ))),
    }
}

/// Every branch and tag of `url` (as shown, for the pin), in full, into a new repository at
/// `git_dir` ([`partial::fetch_history`]).
fn fetch_branches_and_tags(
    (url, shown, commit): (&str, &RedactedUrl, &CommitId),
    git_dir: &Path,
    stops: &Stops<'_>,
    root: &gix::progress::prodash::tree::Root,
) -> Result<gix::Repository, FetchError> {
    let classify = |e| classify(e, url, shown, commit, stops).0;
    let repo = scratch_repository(git_dir).map_err(classify)?;
    match partial::fetch_history(&repo, url, stops, root) {
        Ok(()) => Ok(repo),
        Err(partial::Failed::PackOverBound(why)) => Err(FetchError::PackOverBound {
            url: shown.clone(),
            commit: commit.clone(),
            why,
        }),
        Err(partial::Failed::Malformed(detail)) => Err(stopped(stops, shown).unwrap_or_else(
            || FetchError::Malformed {
                url: shown.clone(),
                detail: redact::scrub(&detail, url),
            },
        )),
        Err(partial::Failed::Fetch(e) | partial::Failed::Blobs(e)) => Err(classify(e)),
        // Only a fetch by id selects, counts a commit's objects or asks for blobs.
        Err(
            partial::Failed::OverBounds(_)
            | partial::Failed::Missing { .. }
            | partial::Failed::CommitPackTooLarge { .. }
            | partial::Failed::CommitAbsent
            | partial::Failed::Select(_),
        ) => Err(FetchError::Invalid {
            url: shown.clone(),
            detail: "the fetch of every branch and tag failed as only a fetch by id can".into(),
        }),
    }
}
