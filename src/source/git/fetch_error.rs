//! Why a fetch failed: [`FetchError`], each variant with its stable code and whether a retry
//! may help, and the reading of gix's errors into it — out of time, stopped, refused
//! credentials (or credentials that would go in clear text), an object over
//! [`MAX_OBJECT_BYTES`], an answer over the bounds of [`super::answer`] or malformed, a pack
//! over the bounds of [`super::pack`], an error the server reported on its side-band, or a
//! server that answered and refused the commit. Every detail is scrubbed of the URL's credentials.

use std::time::Duration;

use crate::descriptor::redact::{self, RedactedUrl};
use crate::format::pin::CommitId;

use super::answer::{AnswerRefusal, LineBoundBroken};
use super::options::{MAX_OBJECT_BYTES, Stops, is_plain_http};
use super::pack::PackBroken;
use super::partial;

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
    /// A pack of the fetch ran past the bytes its request may need, or one of its objects past
    /// the size it declares ([`super::pack`]): refused as the bytes arrived, before gix held
    /// them (the same server answers the same way: a retry cannot help).
    #[error(
        "`{url}` answered the fetch of commit `{commit}` with too much: {why}; refused as it arrived"
    )]
    PackOverBound {
        /// The redacted URL.
        url: RedactedUrl,
        /// The pinned commit.
        commit: CommitId,
        /// The bound it broke.
        why: PackBroken,
    },
    /// The server's answer is malformed: an invalid pkt-line, or a pack gix or the bounded
    /// reader refused although every byte of it arrived. Never a reason to ask for more.
    #[error("`{url}` sent a malformed answer: {detail}; nothing was published")]
    Malformed {
        /// The redacted URL.
        url: RedactedUrl,
        /// What is wrong with it (credentials scrubbed).
        detail: String,
    },
    /// The server reported an error on its side-band (channel 3) and the fetch stopped
    /// (retryable: a server's own failure).
    #[error("`{url}` reported an error and the fetch stopped: {}", crate::support::escape::text(.message))]
    ServerError {
        /// The redacted URL.
        url: RedactedUrl,
        /// What the server said, as it said it (escaped when shown).
        message: String,
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
        refusal: AnswerRefusal,
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
            FetchError::Unreachable { .. } | FetchError::ServerError { .. } => {
                PrepareCode::FetchFailed
            }
            FetchError::PackOverBound { .. } => PrepareCode::PackTooLarge,
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
            FetchError::Invalid { .. }
            | FetchError::AnswerTooLarge { .. }
            | FetchError::Malformed { .. } => PrepareCode::FetchInvalid,
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

/// Maps a gix error to ours; the flag says whether the server answered (and refused), as
/// opposed to a connection, authentication or interruption failure.
pub(super) fn classify(
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
pub(super) fn transport_error(
    e: &gix::Error,
    detail: String,
    shown: &RedactedUrl,
    stops: &Stops<'_>,
) -> Option<FetchError> {
    let url = shown.clone();
    if let Some(stopped) = stopped(stops, shown) {
        Some(stopped)
    } else if e.is_cancelled() {
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

/// What stopped the fetch early, whatever gix made of it: the deadline, an answer refused by
/// [`super::answer`], an error the server reported on its side-band, or a signal.
pub(super) fn stopped(stops: &Stops<'_>, shown: &RedactedUrl) -> Option<FetchError> {
    let url = shown.clone();
    if stops.past_deadline() {
        // Stopped, timed out or cut off: the deadline ended it.
        Some(FetchError::Deadline {
            url,
            deadline: stops.deadline,
        })
    } else if let Some(refusal) = stops.refused.get() {
        Some(match refusal.over {
            LineBoundBroken::Invalid(_) => FetchError::Malformed {
                url,
                detail: refusal.to_string(),
            },
            _ => FetchError::AnswerTooLarge { url, refusal },
        })
    } else if let Some(message) = stops.server_error() {
        Some(FetchError::ServerError { url, message })
    } else if stops.interrupted() {
        Some(FetchError::Interrupted { url })
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

/// The error and its sources on one line.
pub(super) fn chain(e: &gix::Error) -> String {
    let mut parts: Vec<String> = e.iter_errors().map(ToString::to_string).collect();
    parts.dedup();
    parts.join(": ")
}
