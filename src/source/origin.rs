//! The origin of a URL — scheme, host and port — the unit every credential is scoped to
//! (DESIGN.md §8): a redirect, a token realm or a key set on another origin gets nothing. One
//! type serves the Git fetcher (whose credentials follow a redirect only to the same origin), the
//! OCI registry session (where `Authorization` may go, which token realm gets the registry's
//! credentials) and the JWKS fetch (redirects and `jwks_uri` on the issuer's origin).
//!
//! Two rules live here: [`same_origin`] (two URLs share scheme, host and port, an absent port
//! being the scheme's default), and [`Scope::matches`] (a credential configured under a key
//! `[scheme://]host[:port]` belongs to the origins with that host, that port — the scheme's
//! default when the key names none — and, when the key names a scheme, that scheme).

use reqwest::Url;

/// A scheme, host and port: where a credential may go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// `https` or `http`.
    pub scheme: String,
    /// The host, lowercase.
    pub host: String,
    /// The port (the scheme's default when the URL names none).
    pub port: u16,
}

impl Origin {
    /// The origin of `url`, when it is an `http(s)` URL with a host.
    pub fn of(url: &Url) -> Option<Origin> {
        let scheme = url.scheme();
        if scheme != "https" && scheme != "http" {
            return None;
        }
        Some(Origin {
            scheme: scheme.to_owned(),
            host: url.host_str()?.to_ascii_lowercase(),
            port: url.port_or_known_default()?,
        })
    }

    /// The origin of a registry `host[:port]` spoken to over HTTPS, or HTTP when `plain_http`.
    pub fn registry(registry: &str, plain_http: bool) -> Option<Origin> {
        let scheme = if plain_http { "http" } else { "https" };
        Origin::of(&Url::parse(&format!("{scheme}://{registry}/")).ok()?)
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}://{}:{}",
            self.scheme,
            crate::support::escape::text(&self.host),
            self.port
        )
    }
}

/// Whether `a` and `b` are `http(s)` URLs of one [`Origin`] (an absent port is the scheme's
/// default).
pub fn same_origin(a: &Url, b: &Url) -> bool {
    Origin::of(a).is_some_and(|a| Origin::of(b) == Some(a))
}

/// A credential key: `[scheme://]host[:port][/path]`, as `SKILLFOLD_REGISTRY_AUTH`,
/// `SKILLFOLD_REGISTRY_TOKEN_REALMS` and Docker's `auths` write it; the origins it
/// [`matches`](Scope::matches) are the ones a credential configured under it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    scheme: Option<String>,
    host: String,
    port: Option<u16>,
}

impl Scope {
    /// The key `key`, or `None` when it is not one (another scheme than `http(s)`, no host, a
    /// user name).
    pub fn parse(key: &str) -> Option<Scope> {
        let (scheme, rest) = match key.split_once("://") {
            Some((scheme, rest)) => (Some(scheme.to_ascii_lowercase()), rest),
            None => (None, key),
        };
        if scheme
            .as_deref()
            .is_some_and(|s| s != "https" && s != "http")
        {
            return None;
        }
        let authority = rest.split('/').next().unwrap_or_default();
        if authority.is_empty() || authority.contains('@') {
            return None;
        }
        let url = Url::parse(&format!("https://{authority}/")).ok()?;
        let host = url.host_str()?.to_ascii_lowercase();
        // `Url` drops a port that is the default for https; read it from the text.
        let port = match authority.rsplit_once(':') {
            Some((_, port)) if !authority.ends_with(']') => Some(port.parse().ok()?),
            _ => None,
        };
        Some(Scope { scheme, host, port })
    }

    /// Whether a credential under this key belongs to `origin`: the same host (ASCII case
    /// folded), the same port (a key without one: the default of the origin's scheme, 443 or 80)
    /// and, when the key names a scheme, the same scheme.
    pub fn matches(&self, origin: &Origin) -> bool {
        let default = if origin.scheme == "https" { 443 } else { 80 };
        self.host == origin.host
            && self.port.unwrap_or(default) == origin.port
            && self.scheme.as_deref().is_none_or(|s| s == origin.scheme)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        s.parse().expect("url")
    }

    #[test]
    fn an_origin_is_scheme_host_and_port() {
        assert!(same_origin(
            &url("https://h.test/a"),
            &url("https://h.test:443/b?c")
        ));
        assert!(!same_origin(
            &url("https://h.test/"),
            &url("http://h.test/")
        ));
        assert!(!same_origin(
            &url("https://h.test/"),
            &url("https://h.test:8443/")
        ));
        assert!(!same_origin(
            &url("https://h.test/"),
            &url("https://g.test/")
        ));
        assert_eq!(
            Origin::of(&url("https://H.test/a")),
            Origin::registry("h.test:443", false)
        );
        assert_eq!(Origin::of(&url("file:///a")), None);
    }

    #[test]
    fn a_key_scopes_a_credential_to_host_port_and_named_scheme() {
        let origin = |registry: &str, plain_http: bool| {
            Origin::registry(registry, plain_http).expect("origin")
        };
        let key = Scope::parse("Registry.example.com/v1/").expect("key");
        assert!(key.matches(&origin("registry.example.com:443", false)));
        assert!(key.matches(&origin("registry.example.com", true)));
        assert!(!key.matches(&origin("registry.example.com:5000", false)));
        let key = Scope::parse("http://h.test:8080").expect("key");
        assert!(key.matches(&origin("h.test:8080", true)));
        assert!(!key.matches(&origin("h.test:8080", false)));
        for not_a_key in ["", "ftp://h.test", "https://", "user@h.test", "h.test:port"] {
            assert!(Scope::parse(not_a_key).is_none(), "{not_a_key}");
        }
    }
}
