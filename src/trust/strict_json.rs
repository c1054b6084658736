//! JSON as the signature material's readers take it: a [`serde_json::Value`] whose objects have
//! no duplicate keys. Protobuf JSON (how sigstore-go reads a bundle) refuses a field given twice,
//! where `serde_json` keeps the last; a bundle read two ways by two verifiers is refused here.

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

/// Why a text is not JSON as the signature material's readers take it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StrictJsonError {
    /// The text is JSON but not as read: a key given twice, a number out of range (the
    /// reader's words, escaped).
    #[error("not JSON as read: {reason}")]
    NotAsRead {
        /// What the reader found (escaped).
        reason: String,
    },
    /// The text is not JSON at all (its syntax, or it ends early).
    #[error("not JSON")]
    NotJson,
}

/// Parses `text`, refusing an object with a key given twice; the error says what is wrong.
pub fn parse(text: &str) -> Result<serde_json::Value, StrictJsonError> {
    serde_json::from_str::<Unique>(text)
        .map(|unique| unique.0)
        .map_err(|e| {
            if e.is_data() {
                StrictJsonError::NotAsRead {
                    reason: crate::support::escape::text(&e.to_string()).to_string(),
                }
            } else {
                StrictJsonError::NotJson
            }
        })
}

struct Unique(serde_json::Value);

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Unique, D::Error> {
        deserializer.deserialize_any(UniqueVisitor).map(Unique)
    }
}

struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, Into::into))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Unique(value)) = seq.next_element()? {
            out.push(value);
        }
        Ok(out.into())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Unique(value) = map.next_value()?;
            if out.insert(key.clone(), value).is_some() {
                return Err(de::Error::custom(format!("the key `{key}` is given twice")));
            }
        }
        Ok(out.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_json_and_refuses_a_key_given_twice_at_any_depth() {
        let value = parse(r#"{"a":[1,-2,1.5,"x",null,true,{"b":{}}]}"#).unwrap();
        assert_eq!(value["a"][6]["b"], serde_json::json!({}));
        for twice in [r#"{"a":1,"a":2}"#, r#"{"a":[{"b":1,"b":1}]}"#] {
            let err = parse(twice).unwrap_err();
            assert!(
                matches!(&err, StrictJsonError::NotAsRead { reason } if reason.contains("twice")),
                "{err:?}"
            );
        }
        assert_eq!(parse("{").unwrap_err(), StrictJsonError::NotJson);
        assert_eq!(parse("{").unwrap_err().to_string(), "not JSON");
        assert!(parse(&format!("{}{}", "[".repeat(10_000), "]".repeat(10_000))).is_err());
    }
}
