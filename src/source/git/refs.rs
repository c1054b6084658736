//! Ref look-up: the commit a branch, a tag or the remote's `HEAD` names on a server now, from
//! its ref listing alone — nothing is fetched. `outdated` and `update` resolve a candidate's
//! name with it once, then fetch that commit by id as `prepare` fetches a pin. The listing
//! runs under the same options, bounds, deadline and redirect rules as a fetch.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::descriptor::redact::{self, RedactedUrl};

use super::answer::AnswerRefusalSlot;
use super::fetch_error::{FetchError, chain, transport_error};
use super::options::{Stops, scratch_repository, until, with_connection};
use super::redirect::{redirect_error, redirect_target, refused_redirect};

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
        refused: AnswerRefusalSlot::default(),
        server_error: Default::default(),
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
