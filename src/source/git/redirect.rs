//! HTTP(S) redirects of a fetch. gix refuses to follow a redirect of any request its caller
//! configured (every request of a fetch is: [`super::options::transport_options`] gives each
//! its deadline), so the fetcher follows them itself: when gix reports a refused redirect
//! ([`refused_redirect`]), [`redirect_target`] asks for the same first request (the ref
//! advertisement) without credentials, under what remains of the same deadline, and follows its
//! redirects as gix would (at most [`MAX_REDIRECTS`], never from `https://` down to `http://`,
//! the request's `/info/refs?…` tail kept); the fetch then runs once more against the
//! repository URL the last one names. Credentials in the first URL stay with its origin
//! ([`crate::source::origin`]): only a target on the same scheme, host and port gets them.

use std::time::{Duration, Instant};

use crate::descriptor::redact::{self, RedactedUrl};

use super::fetch_error::FetchError;
use super::options::{POLL_EVERY, Stops};

/// The first request gix makes on every HTTP(S) connection, after the repository URL: the ref
/// advertisement, the one request whose redirect gix follows (`http.followRedirects=initial`).
const ADVERTISEMENT: &str = "/info/refs?service=git-upload-pack";

/// The most redirects one fetch follows: git's bound (`CURLOPT_MAXREDIRS` of its `http.c`).
pub const MAX_REDIRECTS: usize = 20;

/// Whether gix stopped at a redirect it would not follow because the request was configured
/// (as [`super::options::transport_options`] configures every request).
pub(super) fn refused_redirect(e: &gix::Error) -> bool {
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
// A `String`: only shown (in [`redirect_error`]); the kind of failure comes from `stops`.
pub(super) fn redirect_target(url: &str, stops: &Stops<'_>) -> Result<String, String> {
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
// A `String`: only shown, as [`redirect_target`]'s is.
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
pub(super) fn redirect_error(
    detail: String,
    url: &str,
    shown: &RedactedUrl,
    stops: &Stops<'_>,
) -> FetchError {
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
