//! An error as one line of text: its message, then each of its sources', repeats dropped.

/// `e` and its sources, joined with `: ` (a source that repeats its cause's message once).
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut cause = e.source();
    while let Some(next) = cause {
        parts.push(next.to_string());
        cause = next.source();
    }
    parts.dedup();
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn sources_follow_the_message_and_repeats_go() {
        let outer = std::io::Error::other(std::io::Error::other("refused"));
        // io::Error's message is its inner error's: the repeat is dropped.
        assert_eq!(super::chain(&outer), "refused");
        #[derive(Debug, thiserror::Error)]
        #[error("fetch failed")]
        struct Outer(#[source] std::io::Error);
        assert_eq!(
            super::chain(&Outer(std::io::Error::other("refused"))),
            "fetch failed: refused"
        );
    }
}
