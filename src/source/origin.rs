//! The origin of a URL — scheme, host and port — the unit every credential is scoped to
//! (DESIGN.md §8): a redirect, a token realm or a key set on another origin gets nothing.

/// Whether `a` and `b` have one origin (an absent port is the scheme's default).
pub fn same_origin(a: &reqwest::Url, b: &reqwest::Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> reqwest::Url {
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
    }
}
