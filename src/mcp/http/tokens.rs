//! Who may use which endpoint of `serve --listen`: per-agent bearer tokens, known only by their
//! SHA-256.
//!
//! The tokens file (`--tokens FILE`, or `SKILLFOLD_SERVE_TOKENS` holding the same JSON) is a JSON
//! array of objects with exactly `agent` (an agent's name, or `null` for the default catalogue at
//! `/mcp`) and `sha256` (64 lowercase hex digits: the SHA-256 of the token). The server never holds
//! a token, only its hash: a leaked configuration leaks no credential. [`Tokens::authorize`] hashes
//! the presented token and compares it with every entry in constant time (no early exit, so the
//! timing tells nothing about how much of a hash matched), then answers: unknown → 401, known but
//! for another endpoint → 403, else the token's hash, which the session binding keeps.
//!
//! A key written twice in any object (`"agent"` twice, `"sha256"` twice) is refused, as the
//! descriptor refuses it: JSON parsers disagree on which of the two counts, and a file that
//! means two things must not open an endpoint. The file must be a regular file (a FIFO or a
//! device is refused before it is opened).

use std::collections::BTreeSet;

use serde::Deserialize;
use sha2::{Digest as _, Sha256};

use crate::support::escape;

/// The most bytes a tokens file may hold.
pub const MAX_TOKENS_BYTES: usize = 1024 * 1024;

/// The tokens the server accepts, by hash.
#[derive(Debug, Clone)]
pub struct Tokens {
    entries: Vec<TokenEntry>,
}

#[derive(Debug, Clone)]
struct TokenEntry {
    agent: Option<String>,
    sha256: [u8; 32],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    agent: Option<String>,
    sha256: String,
}

/// Why a tokens file is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: {message}")]
pub struct TokensError {
    /// Where the tokens came from (a path, or the environment variable).
    pub source_name: String,
    /// What is wrong, naming the entry.
    pub message: String,
}

/// The verdict on a request's credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenVerdict {
    /// Allowed; the hash of the token that allowed it (`None` without tokens).
    Allowed(Option<[u8; 32]>),
    /// No token, not a bearer token, or a token no entry lists: 401.
    Unauthenticated,
    /// A token listed for another endpoint: 403.
    Forbidden,
}

impl TokensError {
    /// Stable error code.
    pub fn code(&self) -> crate::mcp::code::ServeCode {
        crate::mcp::code::ServeCode::InvalidTokens
    }
}

impl Tokens {
    /// Parses the tokens JSON read from `source_name`; every agent named must be one of
    /// `agents`.
    pub fn parse(
        text: &str,
        source_name: &str,
        agents: &BTreeSet<String>,
    ) -> Result<Tokens, TokensError> {
        let error = |message: String| TokensError {
            source_name: source_name.to_owned(),
            message,
        };
        if text.len() > MAX_TOKENS_BYTES {
            return Err(error(format!(
                "{} bytes, over the bound of {MAX_TOKENS_BYTES}",
                text.len()
            )));
        }
        let raw: Vec<serde_json::Value> = serde_json::from_str(text).map_err(|e| {
            error(format!(
                "not a JSON array of {{agent, sha256}} objects: {}",
                escape::text(&e.to_string())
            ))
        })?;
        serde_json::from_str::<UniqueKeys>(text)
            .map_err(|e| error(escape::text(&e.to_string()).to_string()))?;
        let mut entries: Vec<TokenEntry> = Vec::new();
        for (i, value) in raw.into_iter().enumerate() {
            // `agent: null` must be written: a forgotten key must not open the default endpoint.
            if value.get("agent").is_none() {
                return Err(error(format!(
                    "entry {i}: `agent` is missing (write `null` for the default catalogue at /mcp)"
                )));
            }
            let entry: RawEntry = serde_json::from_value(value).map_err(|e| {
                error(format!(
                    "entry {i}: {} (each entry has exactly `agent`, a name or null, and `sha256`)",
                    escape::text(&e.to_string())
                ))
            })?;
            let sha256 = parse_hash(&entry.sha256).ok_or_else(|| {
                error(format!(
                    "entry {i}: `sha256` must be 64 lowercase hex digits (the SHA-256 of the token, never the token)"
                ))
            })?;
            if let Some(agent) = &entry.agent
                && !agents.contains(agent)
            {
                return Err(error(format!(
                    "entry {i}: {}",
                    crate::descriptor::plan::UnknownAgent::new(agent, agents)
                )));
            }
            if entries.iter().any(|e| e.sha256 == sha256) {
                return Err(error(format!(
                    "entry {i}: this hash is listed twice; give each agent its own token"
                )));
            }
            entries.push(TokenEntry {
                agent: entry.agent,
                sha256,
            });
        }
        Ok(Tokens { entries })
    }

    /// Reads the tokens file at `path` (at most [`MAX_TOKENS_BYTES`], checked before reading)
    /// and parses it.
    pub fn read(path: &std::path::Path, agents: &BTreeSet<String>) -> Result<Tokens, TokensError> {
        let source_name = escape::path(path).to_string();
        let error = |message: String| TokensError {
            source_name: source_name.clone(),
            message,
        };
        // A FIFO or device is refused before it is opened; the size is checked before reading.
        let bytes = crate::format::untrusted_fs::read_input(path, MAX_TOKENS_BYTES as u64)
            .map_err(|e| error(e.reason))?
            .map_err(|size| {
                error(format!(
                    "{size} bytes, over the bound of {MAX_TOKENS_BYTES}"
                ))
            })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            error(format!(
                "not UTF-8 text (an invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ))
        })?;
        Tokens::parse(&text, &source_name, agents)
    }

    /// The verdict on an `Authorization` header value (`None`: absent) for the endpoint of
    /// `agent` (`None`: `/mcp`).
    pub fn authorize(&self, authorization: Option<&[u8]>, agent: Option<&str>) -> TokenVerdict {
        let Some(token) = authorization.and_then(bearer) else {
            return TokenVerdict::Unauthenticated;
        };
        let presented: [u8; 32] = Sha256::digest(token).into();
        let mut found: Option<&TokenEntry> = None;
        for entry in &self.entries {
            // Every entry is compared, whatever matched before.
            if constant_time_eq(&entry.sha256, &presented) {
                found = Some(entry);
            }
        }
        match found {
            None => TokenVerdict::Unauthenticated,
            Some(entry) if entry.agent.as_deref() == agent => {
                TokenVerdict::Allowed(Some(presented))
            }
            Some(_) => TokenVerdict::Forbidden,
        }
    }
}

/// A JSON array whose entries write no key twice in any object; a duplicate is refused naming the
/// entry and the key.
struct UniqueKeys;

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct UniqueKeysVisitor;
        impl<'de> serde::de::Visitor<'de> for UniqueKeysVisitor {
            type Value = UniqueKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON array of {agent, sha256} objects")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<UniqueKeys, A::Error> {
                let mut i = 0usize;
                loop {
                    match seq.next_element::<Unique>() {
                        Ok(Some(_)) => i += 1,
                        Ok(None) => return Ok(UniqueKeys),
                        Err(e) => return Err(serde::de::Error::custom(format!("entry {i}: {e}"))),
                    }
                }
            }
        }
        deserializer.deserialize_seq(UniqueKeysVisitor)
    }
}

/// Any JSON value in which no object writes a key twice.
struct Unique;

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Unique)
    }
}

impl<'de> serde::de::Visitor<'de> for Unique {
    type Value = Unique;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_str<E>(self, _: &str) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_unit<E>(self) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_none<E>(self) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
        while seq.next_element::<Unique>()?.is_some() {}
        Ok(Unique)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
        let mut keys = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if keys.contains(&key) {
                return Err(serde::de::Error::custom(format!(
                    "the key `{}` is written twice (each key once)",
                    escape::text(&key)
                )));
            }
            map.next_value::<Unique>()?;
            keys.insert(key);
        }
        Ok(Unique)
    }
}

/// The token of a `Bearer` credential (the scheme is case-insensitive; the token is not empty).
/// The token of a `Bearer` credential (one word after the scheme, matched without case).
pub fn bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, token) = value.split_at_checked(7)?;
    (scheme.eq_ignore_ascii_case(b"bearer ") && !token.is_empty() && !token.contains(&b' '))
        .then_some(token)
}

fn parse_hash(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 || !text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// Equality of two hashes in time independent of where they differ.
fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let mut difference = 0u8;
    for (x, y) in a.iter().zip(b) {
        difference |= x ^ y;
    }
    std::hint::black_box(difference) == 0
}

crate::support::error_code::coded_by_code!(TokensError);

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(token: &str) -> String {
        crate::support::hex::sha256_hex(token.as_bytes())
    }

    fn agents() -> BTreeSet<String> {
        ["writer".to_owned(), "security".to_owned()].into()
    }

    fn tokens() -> Tokens {
        let text = format!(
            r#"[{{"agent": null, "sha256": "{}"}}, {{"agent": "writer", "sha256": "{}"}}]"#,
            hash("default-token"),
            hash("writer-token")
        );
        Tokens::parse(&text, "tokens.json", &agents()).unwrap()
    }

    #[test]
    fn each_token_opens_its_own_endpoint_only() {
        let t = tokens();
        let writer: [u8; 32] = Sha256::digest(b"writer-token").into();
        assert_eq!(
            t.authorize(Some(b"Bearer writer-token"), Some("writer")),
            TokenVerdict::Allowed(Some(writer))
        );
        assert_eq!(
            t.authorize(Some(b"bearer writer-token"), Some("writer")),
            TokenVerdict::Allowed(Some(writer))
        );
        assert_eq!(
            t.authorize(Some(b"Bearer writer-token"), None),
            TokenVerdict::Forbidden
        );
        assert_eq!(
            t.authorize(Some(b"Bearer default-token"), Some("writer")),
            TokenVerdict::Forbidden
        );
        assert!(matches!(
            t.authorize(Some(b"Bearer default-token"), None),
            TokenVerdict::Allowed(Some(_))
        ));
        for header in [
            None,
            Some(&b"Bearer nope"[..]),
            Some(b"Basic d3JpdGVyLXRva2Vu"),
            Some(b"Bearer "),
            Some(b"writer-token"),
        ] {
            assert_eq!(
                t.authorize(header, Some("writer")),
                TokenVerdict::Unauthenticated,
                "{header:?}"
            );
        }
    }

    #[test]
    fn a_bad_tokens_file_is_refused_naming_the_entry() {
        let h = hash("t");
        for (text, expected) in [
            ("{}".to_owned(), "not a JSON array"),
            (format!(r#"[{{"sha256": "{h}"}}]"#), "entry 0"),
            (
                format!(r#"[{{"agent": null, "sha256": "{h}", "token": "t"}}]"#),
                "unknown field",
            ),
            (
                r#"[{"agent": null, "sha256": "t"}]"#.to_owned(),
                "64 lowercase hex",
            ),
            (
                format!(r#"[{{"agent": null, "sha256": "{}"}}]"#, h.to_uppercase()),
                "64 lowercase hex",
            ),
            (
                format!(r#"[{{"agent": "ops", "sha256": "{h}"}}]"#),
                "no agent `ops`",
            ),
            (
                format!(
                    r#"[{{"agent": null, "sha256": "{h}"}}, {{"agent": "writer", "sha256": "{h}"}}]"#
                ),
                "entry 1: this hash is listed twice",
            ),
            (
                format!(r#"[{{"agent": "writer", "agent": null, "sha256": "{h}"}}]"#),
                "entry 0: the key `agent` is written twice",
            ),
            (
                format!(
                    r#"[{{"agent": null, "sha256": "{h}"}}, {{"agent": null, "sha256": "{}", "sha256": "{h}"}}]"#,
                    hash("u")
                ),
                "entry 1: the key `sha256` is written twice",
            ),
        ] {
            let error = Tokens::parse(&text, "tokens.json", &agents()).unwrap_err();
            assert!(error.to_string().contains(expected), "{text}: {error}");
            assert!(error.to_string().starts_with("tokens.json: "), "{error}");
        }
    }
}
