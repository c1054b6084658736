//! URLs with the credentials taken out, for every log line, error and report.
//!
//! A Git URL may carry `user:password@` or a token in its query string. [`RedactedUrl`] keeps the
//! scheme, host, port and path and replaces any user information with `***` and any query with
//! `?***`, so nothing secret is ever printed. Only the fetcher sees the original. [`scrub_urls`]
//! does the same for every URL quoted in a free text (a message that quotes a lock file).

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
    let mut secret = false;
    // Everything up to the last `@` is user information, wherever parsers disagree on where
    // the authority ends (`u:pa/ss@host`, `u:p#w@host`): hide all of it.
    let rest = match rest.rfind('@') {
        // `ssh://git@host/...`: a user name without a password is not a secret over ssh (ssh
        // authenticates with keys); over http(s) a lone user name is often a token.
        Some(at) if scheme.starts_with("ssh") && !rest[..at].contains([':', '/', '#', '?']) => {
            rest.to_owned()
        }
        Some(at) => {
            secret = true;
            format!("***@{}", &rest[at + 1..])
        }
        None => rest.to_owned(),
    };
    // A query or fragment may carry a token.
    let shown = match rest.find(['?', '#']) {
        Some(q) => {
            secret = true;
            format!("{}{}***", &rest[..q], &rest[q..q + 1])
        }
        None => rest,
    };
    (format!("{scheme}{shown}"), secret)
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

/// `text` (a message or a comment that may quote URLs it did not make) with every URL in it shown
/// as [`RedactedUrl`] shows it: each `scheme://` runs to the next space, backtick, quote or angle
/// bracket, and loses everything up to its last `@` and any query or fragment. For the texts
/// that quote values from outside (a lock file `import` reads) before they are printed.
#[cfg(feature = "git")]
pub fn scrub_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(sep) = rest.find("://") {
        let scheme_start = rest[..sep]
            .char_indices()
            .rev()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let after = sep + 3;
        let end = rest[after..]
            .find(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '<' | '>'))
            .map_or(rest.len(), |i| after + i);
        out.push_str(&rest[..scheme_start]);
        out.push_str(RedactedUrl::new(&rest[scheme_start..end]).as_str());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Replaces every occurrence of `secret_url`'s credentials in `text` (an error message from a
/// library that may echo the URL) with the redacted form (the fetcher's errors).
#[cfg(feature = "git")]
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
            ("https://u:pa/ss@host/x.git", "https://***@host/x.git", true),
            ("https://u:p#w@host/x.git", "https://***@host/x.git", true),
            ("https://host/x.git#frag", "https://host/x.git#***", true),
            (
                "ssh://git@host/org/x.git",
                "ssh://git@host/org/x.git",
                false,
            ),
            (
                "ssh://git:pw@host/org/x.git",
                "ssh://***@host/org/x.git",
                true,
            ),
            ("file:///srv/x.git", "file:///srv/x.git", false),
            ("/srv/x.git", "/srv/x.git", false),
        ];
        for (url, shown, secret) in cases {
            let r = RedactedUrl::new(url);
            assert_eq!((r.as_str(), r.had_credentials()), (shown, secret), "{url}");
        }
    }

    #[test]
    #[cfg(feature = "git")]
    fn every_url_in_a_text_loses_its_credentials() {
        let text = "`https://u:T1@host/a.git` and git://x:T2@h/o/r#p, \
                    (oci://T3@ghcr.io/a:1) \"https://h/x?token=T4\" ssh://git@h/x `https://h/ok`";
        let out = scrub_urls(text);
        for secret in ["T1", "T2", "T3", "T4"] {
            assert!(!out.contains(secret), "{out}");
        }
        assert!(
            out.contains("`https://***@host/a.git` and git://***@h/o/r#***"),
            "{out}"
        );
        assert!(out.contains("ssh://git@h/x `https://h/ok`"), "{out}");
        assert_eq!(scrub_urls("no url: a@b"), "no url: a@b");
        assert_eq!(scrub_urls("://@x"), "://***@x");
        assert_eq!(scrub_urls("ends with https://"), "ends with https://");
        assert_eq!(scrub_urls("é://u:T5@h"), "é://***@h");
    }

    #[test]
    fn scrub_removes_credentials_from_messages() {
        let url = "https://alice:s3cret@host/x.git";
        let msg = "failed to fetch https://alice:s3cret@host/x.git: 401 for alice:s3cret";
        let out = scrub(msg, url);
        assert!(!out.contains("s3cret"), "{out}");
    }
}
