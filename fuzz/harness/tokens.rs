//! The tokens file of `serve --listen` and the bearer verdicts it gives, against an independent
//! reading of the file.

use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// The agents the fuzzed tokens files may name.
#[cfg(feature = "http")]
const TOKEN_AGENTS: [&str; 2] = ["alpha", "beta"];

/// A tokens file of `serve --listen` and the `Authorization` values presented to it: the JSON
/// text, then each header value, separated by the byte `0xFF`.
///
/// Invariants: the file is accepted exactly when an independent reading accepts it (a JSON array
/// of objects with exactly `agent`, null or a descriptor's agent, and `sha256`, 64 lowercase hex
/// digits, each key written once, no hash twice); a refusal is `invalid_tokens` naming the source; each presented value
/// gets, at each endpoint, the verdict the reading gives (401 without a listed bearer token, 403
/// for a token of another endpoint, else allowed with the token's own hash); and a file listing
/// the presented tokens' hashes is accepted and lets each token in at its endpoint only.
/// A key written twice in any object refuses the file.
#[cfg(feature = "http")]
pub fn tokens(data: &[u8]) {
    use crate::mcp::http::tokens::{TokenVerdict, Tokens};

    let mut parts = data.split(|&b| b == 0xFF);
    let text = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let presented: Vec<&[u8]> = parts.collect();
    let agents: std::collections::BTreeSet<String> =
        TOKEN_AGENTS.iter().map(|a| (*a).to_owned()).collect();
    let endpoints = [None, Some("alpha"), Some("beta")];
    let reference = reference_tokens(&text, &agents);
    match Tokens::parse(&text, "fuzz-tokens", &agents) {
        Err(e) => {
            assert!(reference.is_none(), "refused a valid tokens file: {e}");
            assert_eq!(e.source_name, "fuzz-tokens");
            assert!(!e.message.is_empty());
            assert_eq!(e.code().as_str(), "invalid_tokens");
        }
        Ok(tokens) => {
            let entries = reference.expect("accepted a tokens file the reading refuses");
            for value in &presented {
                let hash = bearer_token(value).map(|t| <[u8; 32]>::from(Sha256::digest(t)));
                for agent in endpoints {
                    let want = match hash.and_then(|h| entries.iter().find(|(_, e)| *e == h)) {
                        None => TokenVerdict::Unauthenticated,
                        Some((owner, _)) if owner.as_deref() == agent => {
                            TokenVerdict::Allowed(hash)
                        }
                        Some(_) => TokenVerdict::Forbidden,
                    };
                    assert_eq!(tokens.authorize(Some(value), agent), want);
                }
            }
            assert_eq!(tokens.authorize(None, None), TokenVerdict::Unauthenticated);
        }
    }
    // A file listing each presented bearer token's hash, for the endpoints in turn.
    let mut listed: Vec<(Option<&str>, [u8; 32], &[u8])> = Vec::new();
    for value in &presented {
        if let Some(token) = bearer_token(value) {
            let hash: [u8; 32] = Sha256::digest(token).into();
            if !listed.iter().any(|(_, h, _)| *h == hash) {
                listed.push((endpoints[listed.len() % 3], hash, value));
            }
        }
    }
    let file: Vec<Value> = listed
        .iter()
        .map(|(agent, hash, _)| {
            serde_json::json!({"agent": agent, "sha256": crate::support::hex::encode(hash)})
        })
        .collect();
    let tokens = Tokens::parse(&Value::Array(file).to_string(), "fuzz-listed", &agents)
        .expect("a file of valid entries is accepted");
    for (owner, hash, value) in &listed {
        for agent in endpoints {
            let want = if agent == *owner {
                TokenVerdict::Allowed(Some(*hash))
            } else {
                TokenVerdict::Forbidden
            };
            assert_eq!(tokens.authorize(Some(value), agent), want);
        }
        let mut other = value.to_vec();
        other.push(b'x');
        let other_hash = bearer_token(&other).map(|t| <[u8; 32]>::from(Sha256::digest(t)));
        if !listed.iter().any(|(_, h, _)| Some(*h) == other_hash) {
            assert_eq!(
                tokens.authorize(Some(&other), *owner),
                TokenVerdict::Unauthenticated
            );
        }
    }
}

/// The token of an `Authorization` value: `Bearer` in any case, one space, then a token that is
/// not empty and holds no space.
#[cfg(feature = "http")]
fn bearer_token(value: &[u8]) -> Option<&[u8]> {
    if value.len() <= 7 || !value[..7].eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    let token = &value[7..];
    (!token.contains(&b' ')).then_some(token)
}

/// Any JSON value that writes no key twice in any of its objects (an independent reading for
/// [`reference_tokens`]: serde_json's own `Value` keeps the last of two).
#[cfg(feature = "http")]
struct KeysOnce;

#[cfg(feature = "http")]
impl<'de> serde::Deserialize<'de> for KeysOnce {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = KeysOnce;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("JSON whose objects write each key once")
            }
            fn visit_bool<E>(self, _: bool) -> Result<KeysOnce, E> {
                Ok(KeysOnce)
            }
            fn visit_i64<E>(self, _: i64) -> Result<KeysOnce, E> {
                Ok(KeysOnce)
            }
            fn visit_u64<E>(self, _: u64) -> Result<KeysOnce, E> {
                Ok(KeysOnce)
            }
            fn visit_f64<E>(self, _: f64) -> Result<KeysOnce, E> {
                Ok(KeysOnce)
            }
            fn visit_str<E>(self, _: &str) -> Result<KeysOnce, E> {
                Ok(KeysOnce)
            }
            fn visit_unit<E>(self) -> Result<KeysOnce, E> {
                Ok(KeysOnce)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<KeysOnce, A::Error> {
                while seq.next_element::<KeysOnce>()?.is_some() {}
                Ok(KeysOnce)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<KeysOnce, A::Error> {
                let mut seen = std::collections::BTreeSet::new();
                while let Some(key) = map.next_key::<String>()? {
                    if !seen.insert(key) {
                        return Err(serde::de::Error::custom("a key written twice"));
                    }
                    map.next_value::<KeysOnce>()?;
                }
                Ok(KeysOnce)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// The tokens file read independently: `(agent, hash)` of each entry, or `None` when it is
/// refused.
#[cfg(feature = "http")]
fn reference_tokens(
    text: &str,
    agents: &std::collections::BTreeSet<String>,
) -> Option<Vec<(Option<String>, [u8; 32])>> {
    if text.len() > crate::mcp::http::tokens::MAX_TOKENS_BYTES {
        return None;
    }
    // No object anywhere in the file writes a key twice.
    serde_json::from_str::<KeysOnce>(text).ok()?;
    let Value::Array(items) = serde_json::from_str::<Value>(text).ok()? else {
        return None;
    };
    let mut out: Vec<(Option<String>, [u8; 32])> = Vec::new();
    for item in items {
        let fields = item.as_object()?;
        if fields.len() != 2 {
            return None;
        }
        let agent = match fields.get("agent")? {
            Value::Null => None,
            Value::String(a) if agents.contains(a) => Some(a.clone()),
            _ => return None,
        };
        let hex = fields.get("sha256")?.as_str()?;
        if hex.len() != 64
            || !hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return None;
        }
        let mut hash = [0u8; 32];
        for (i, byte) in hash.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
        }
        if out.iter().any(|(_, h)| *h == hash) {
            return None;
        }
        out.push((agent, hash));
    }
    Some(out)
}
