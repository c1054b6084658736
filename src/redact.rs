//! URLs with the credentials taken out, for every log line, error and report.
//!
//! A Git URL may carry `user:password@` or a token in its query string. [`RedactedUrl`] keeps the
//! scheme, host, port and path and replaces any user information with `***` and any query with
//! `?***`, so nothing secret is ever printed. Only the fetcher sees the original.

use std::fmt;

/// A URL safe to print.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RedactedUrl {
    shown: String,
    had_credentials: bool,
}

impl RedactedUrl {
    /// Redacts `url` (any URL-like string; scp-like `user@host:path` keeps a user without a
    /// password, which is not a secret).
    pub fn new(url: &str) -> RedactedUrl {
        let (shown, had_credentials) = redact(url);
        RedactedUrl {
            shown,
            had_credentials,
        }
    }

    /// Whether the original held a password or a query string (likely a token).
    pub fn had_credentials(&self) -> bool {
        self.had_credentials
    }

    /// The redacted text.
    pub fn as_str(&self) -> &str {
        &self.shown
    }
}

fn redact(url: &str) -> (String, bool) {
    let Some(scheme_end) = url.find("://") else {
        return (url.to_owned(), false);
    };
    let (scheme, rest) = url.split_at(scheme_end + 3);
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let mut secret = false;
    let host = match authority.rfind('@') {
        Some(at) => {
            secret = true;
            format!("***@{}", &authority[at + 1..])
        }
        None => authority.to_owned(),
    };
    let tail = match tail.find('?') {
        Some(q) => {
            secret = true;
            format!("{}?***", &tail[..q])
        }
        None => tail.to_owned(),
    };
    (format!("{scheme}{host}{tail}"), secret)
}

impl fmt::Display for RedactedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for RedactedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RedactedUrl({})", self.shown)
    }
}

/// Replaces every occurrence of `secret_url`'s credentials in `text` (an error message from a
/// library that may echo the URL) with the redacted form.
pub fn scrub(text: &str, secret_url: &str) -> String {
    let redacted = RedactedUrl::new(secret_url);
    let mut out = text.replace(secret_url, redacted.as_str());
    // Libraries sometimes print the URL without its query or with the password only.
    if let Some(scheme_end) = secret_url.find("://") {
        let rest = &secret_url[scheme_end + 3..];
        let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
        if let Some(at) = authority.rfind('@') {
            let userinfo = &authority[..at];
            if !userinfo.is_empty() {
                out = out.replace(userinfo, "***");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_userinfo_and_queries() {
        let cases = [
            (
                "https://user:s3cret@host/x.git",
                "https://***@host/x.git",
                true,
            ),
            (
                "https://token@host:8443/x.git",
                "https://***@host:8443/x.git",
                true,
            ),
            (
                "https://host/x.git?token=abc",
                "https://host/x.git?***",
                true,
            ),
            ("https://host/x.git", "https://host/x.git", false),
            ("file:///srv/x.git", "file:///srv/x.git", false),
            ("/srv/x.git", "/srv/x.git", false),
        ];
        for (url, shown, secret) in cases {
            let r = RedactedUrl::new(url);
            assert_eq!((r.as_str(), r.had_credentials()), (shown, secret), "{url}");
        }
    }

    #[test]
    fn scrub_removes_credentials_from_messages() {
        let url = "https://alice:s3cret@host/x.git";
        let msg = "failed to fetch https://alice:s3cret@host/x.git: 401 for alice:s3cret";
        let out = scrub(msg, url);
        assert!(!out.contains("s3cret"), "{out}");
    }
}
