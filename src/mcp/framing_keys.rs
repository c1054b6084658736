//! Keys written twice in one object of a client message (`{"id":1,"id":2}`), found before the
//! message is used. RFC 8259 leaves what a parser makes of them open: `serde_json`'s `Value`
//! keeps the last, rmcp's typed reads refuse the whole message, and a proxy in front may have
//! read the first. The framing refuses such a message instead, as `-32600`, the same on both
//! transports ([`super::judge`]).

use std::collections::HashSet;

use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};

/// A key written twice in one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RepeatedKey {
    /// The key (decoded; `"id"` and `"\u0069d"` are one key).
    pub key: String,
    /// Whether the object is the message itself: its `id` cannot be trusted then.
    pub top_level: bool,
}

/// The first key written twice in one object of the JSON text `text`, at any depth (`None` when
/// every object's keys are distinct, or `text` is not JSON).
pub(super) fn repeated_key(text: &[u8]) -> Option<RepeatedKey> {
    let mut found = None;
    let mut parser = serde_json::Deserializer::from_slice(text);
    // Once a repeat is found the walk ends in an error; the finding is in `found`.
    let _ = UniqueKeys {
        depth: 0,
        found: &mut found,
    }
    .deserialize(&mut parser);
    found
}

/// Walks one value, checking the keys of every object in it.
struct UniqueKeys<'a> {
    depth: usize,
    found: &'a mut Option<RepeatedKey>,
}

impl<'de> DeserializeSeed<'de> for UniqueKeys<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let UniqueKeys { depth, found } = self;
        while seq
            .next_element_seed(UniqueKeys {
                depth: depth + 1,
                found: &mut *found,
            })?
            .is_some()
        {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let UniqueKeys { depth, found } = self;
        let mut keys = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if keys.contains(&key) {
                *found = Some(RepeatedKey {
                    key,
                    top_level: depth == 0,
                });
                return Err(A::Error::custom("a key written twice"));
            }
            map.next_value_seed(UniqueKeys {
                depth: depth + 1,
                found: &mut *found,
            })?;
            keys.insert(key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repeated(text: &str) -> Option<(String, bool)> {
        repeated_key(text.as_bytes()).map(|r| (r.key, r.top_level))
    }

    #[test]
    fn a_key_written_twice_is_found_at_any_depth_and_escapes_do_not_hide_it() {
        for (text, key, top) in [
            (
                r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
                "id",
                true,
            ),
            (
                r#"{"method":"a","jsonrpc":"2.0","method":"b"}"#,
                "method",
                true,
            ),
            (r#"{"jsonrpc":"2.0","jsonrpc":"2.0"}"#, "jsonrpc", true),
            (r#"{"id":1,"\u0069d":2}"#, "id", true),
            (
                r#"{"id":1,"params":{"name":"a","name":"b"}}"#,
                "name",
                false,
            ),
            (r#"{"params":{"a":[{"x":1},{"y":1,"y":2}]}}"#, "y", false),
        ] {
            assert_eq!(repeated(text), Some((key.to_owned(), top)), "{text}");
        }
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"id":1,"a":{"id":1}}}"#,
            r#"[{"a":1},{"a":1}]"#,
            "not json",
            "7",
        ] {
            assert_eq!(repeated(text), None, "{text}");
        }
    }
}
