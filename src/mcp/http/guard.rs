//! The `Host` and `Origin` checks of `serve --listen`, applied to every path before anything
//! else (the probes, `/metrics` and the MCP endpoints alike), so a page that rebinds a name to
//! the server's address can read nothing.
//!
//! Bound to a loopback address, the server accepts only a `Host` that names loopback
//! (`localhost`, `127.0.0.1`, `[::1]`, any port); bound elsewhere, behind a Service or an
//! ingress, the Host is a name it cannot know and the tokens guard it instead. An `Origin`, when
//! present, must be one of `--allow-origin` or, bound to loopback, the server's own origin (its
//! scheme, a loopback name and its port); any other is refused with 403, `null` included unless
//! listed. The rules are rmcp's (which checks the MCP endpoints again with the same list): an
//! allowed origin without a port matches any port, `:*` any port, an explicit port that port
//! (the scheme's default when the origin omits it).
//!
//! First of all, a request that carries `Host`, `Authorization` or `Origin` more than once is
//! refused with 400 (RFC 9112 §3.2 for `Host`): each reader would otherwise take the first and
//! another component in front of the server may have judged the second.

use hyper::HeaderMap;
use hyper::header;

/// The loopback host names a `Host` may carry on a loopback address.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The headers a request may carry at most once.
pub const SINGLE_HEADERS: [header::HeaderName; 3] =
    [header::HOST, header::AUTHORIZATION, header::ORIGIN];

/// What the checks allow.
#[derive(Debug, Clone)]
pub struct HostOriginGuard {
    check_host: bool,
    origins: Vec<String>,
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardRefusal {
    /// No `Host`, or one that is not a valid authority (400).
    BadHost,
    /// A `Host` that does not name loopback (403).
    ForeignHost,
    /// An `Origin` that is not allowed (403).
    ForeignOrigin,
    /// One of [`SINGLE_HEADERS`] written more than once (400).
    Repeated,
}

impl GuardRefusal {
    /// What the client is told.
    pub fn message(self) -> &'static str {
        match self {
            GuardRefusal::BadHost => "a valid Host header is required",
            GuardRefusal::ForeignHost => {
                "this Host is not allowed: the server is bound to loopback (DNS rebinding protection)"
            }
            GuardRefusal::ForeignOrigin => {
                "this Origin is not allowed (--allow-origin lists the allowed ones)"
            }
            GuardRefusal::Repeated => "Host, Authorization and Origin may each be sent only once",
        }
    }
}

impl HostOriginGuard {
    /// The checks of a server bound to `loopback` or not, on `port`, serving `https` or not,
    /// with `allow_origins` (`scheme://host[:port]`).
    pub fn new(
        loopback: bool,
        port: u16,
        https: bool,
        allow_origins: &[String],
    ) -> HostOriginGuard {
        let mut origins = allow_origins.to_vec();
        if loopback {
            let scheme = if https { "https" } else { "http" };
            origins.extend(
                ["localhost", "127.0.0.1", "[::1]"]
                    .iter()
                    .map(|host| format!("{scheme}://{host}:{port}")),
            );
        }
        HostOriginGuard {
            check_host: loopback,
            origins,
        }
    }

    /// The origins allowed, for rmcp's own check of the MCP endpoints.
    pub fn origins(&self) -> &[String] {
        &self.origins
    }

    /// Whether a request with `headers` may go on.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), GuardRefusal> {
        if SINGLE_HEADERS
            .iter()
            .any(|name| headers.get_all(name).iter().nth(1).is_some())
        {
            return Err(GuardRefusal::Repeated);
        }
        if self.check_host {
            let host = headers
                .get(header::HOST)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<hyper::http::uri::Authority>().ok())
                .ok_or(GuardRefusal::BadHost)?;
            let name = normalize_host(host.host());
            if !LOOPBACK_HOSTS.contains(&name.as_str()) {
                return Err(GuardRefusal::ForeignHost);
            }
        }
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let origin = origin
            .to_str()
            .ok()
            .and_then(parse_origin)
            .ok_or(GuardRefusal::ForeignOrigin)?;
        if self
            .origins
            .iter()
            .filter_map(|allowed| parse_allowed(allowed))
            .any(|allowed| allowed.admits(&origin))
        {
            Ok(())
        } else {
            Err(GuardRefusal::ForeignOrigin)
        }
    }
}

fn normalize_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

#[derive(Debug, PartialEq, Eq)]
enum BrowserOrigin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

fn parse_origin(value: &str) -> Option<BrowserOrigin> {
    let value = value.trim();
    if value.eq_ignore_ascii_case("null") {
        return Some(BrowserOrigin::Null);
    }
    let uri: hyper::Uri = value.parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    Some(BrowserOrigin::Tuple {
        scheme,
        host: normalize_host(authority.host()),
        port: authority.port_u16(),
    })
}

#[derive(Debug)]
enum Port {
    Any,
    Exact(u16),
}

#[derive(Debug)]
enum Allowed {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Port,
    },
}

fn parse_allowed(value: &str) -> Option<Allowed> {
    let value = value.trim();
    let (base, any) = match value.strip_suffix(":*") {
        Some(base) => (base, true),
        None => (value, false),
    };
    Some(match parse_origin(base)? {
        BrowserOrigin::Null if !any => Allowed::Null,
        BrowserOrigin::Null => return None,
        BrowserOrigin::Tuple { port: Some(_), .. } if any => return None,
        BrowserOrigin::Tuple { scheme, host, port } => Allowed::Tuple {
            scheme,
            host,
            port: port.map_or(Port::Any, Port::Exact),
        },
    })
}

impl Allowed {
    fn admits(&self, origin: &BrowserOrigin) -> bool {
        match (self, origin) {
            (Allowed::Null, BrowserOrigin::Null) => true,
            (
                Allowed::Tuple { scheme, host, port },
                BrowserOrigin::Tuple {
                    scheme: o_scheme,
                    host: o_host,
                    port: o_port,
                },
            ) => {
                scheme == o_scheme
                    && host == o_host
                    && match port {
                        Port::Any => true,
                        Port::Exact(p) => o_port.or_else(|| default_port(o_scheme)) == Some(*p),
                    }
            }
            _ => false,
        }
    }
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: Option<&str>, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(host) = host {
            headers.insert(header::HOST, host.parse().unwrap());
        }
        if let Some(origin) = origin {
            headers.insert(header::ORIGIN, origin.parse().unwrap());
        }
        headers
    }

    #[test]
    fn loopback_accepts_its_own_origins_and_refuses_the_rest() {
        let guard =
            HostOriginGuard::new(true, 8080, false, &["https://app.example.com:443".into()]);
        for (host, origin) in [
            ("127.0.0.1:8080", Some("http://127.0.0.1:8080")),
            ("localhost:8080", Some("http://localhost:8080")),
            ("[::1]:8080", Some("http://[::1]:8080")),
            ("LOCALHOST:8080", Some("HTTP://LocalHost:8080")),
            ("127.0.0.1:8080", Some("https://app.example.com")),
            ("127.0.0.1:8080", None),
            ("localhost", None),
        ] {
            assert_eq!(
                guard.check(&headers(Some(host), origin)),
                Ok(()),
                "{host} {origin:?}"
            );
        }
        for (host, origin, refusal) in [
            ("evil.example:8080", None, GuardRefusal::ForeignHost),
            ("127.0.0.1.evil.example", None, GuardRefusal::ForeignHost),
            (
                "127.0.0.1:8080",
                Some("http://evil.example"),
                GuardRefusal::ForeignOrigin,
            ),
            (
                "127.0.0.1:8080",
                Some("http://127.0.0.1:8081"),
                GuardRefusal::ForeignOrigin,
            ),
            (
                "127.0.0.1:8080",
                Some("https://127.0.0.1:8080"),
                GuardRefusal::ForeignOrigin,
            ),
            (
                "127.0.0.1:8080",
                Some("http://localhost"),
                GuardRefusal::ForeignOrigin,
            ),
            ("127.0.0.1:8080", Some("null"), GuardRefusal::ForeignOrigin),
            (
                "127.0.0.1:8080",
                Some("not an origin"),
                GuardRefusal::ForeignOrigin,
            ),
        ] {
            assert_eq!(
                guard.check(&headers(Some(host), origin)),
                Err(refusal),
                "{host} {origin:?}"
            );
        }
        assert_eq!(
            guard.check(&headers(None, None)),
            Err(GuardRefusal::BadHost)
        );
    }

    #[test]
    fn host_authorization_or_origin_written_twice_is_refused_everywhere() {
        for loopback in [true, false] {
            let guard = HostOriginGuard::new(loopback, 8080, false, &["http://app.example".into()]);
            for name in SINGLE_HEADERS {
                let mut headers = headers(Some("127.0.0.1:8080"), Some("http://app.example"));
                let value = headers
                    .get(&name)
                    .cloned()
                    .unwrap_or_else(|| "Bearer t".parse().unwrap());
                headers.insert(&name, value.clone());
                headers.append(&name, value);
                assert_eq!(guard.check(&headers), Err(GuardRefusal::Repeated), "{name}");
            }
            let mut once = headers(Some("127.0.0.1:8080"), Some("http://app.example"));
            once.insert(header::AUTHORIZATION, "Bearer t".parse().unwrap());
            assert_eq!(guard.check(&once), Ok(()));
        }
    }

    #[test]
    fn elsewhere_the_host_is_free_and_only_listed_origins_pass() {
        let guard = HostOriginGuard::new(false, 8080, true, &["https://app.example.com:*".into()]);
        assert_eq!(guard.check(&headers(Some("skills.internal"), None)), Ok(()));
        assert_eq!(
            guard.check(&headers(Some("x"), Some("https://app.example.com:9443"))),
            Ok(())
        );
        assert_eq!(
            guard.check(&headers(Some("x"), Some("https://127.0.0.1:8080"))),
            Err(GuardRefusal::ForeignOrigin)
        );
    }
}
