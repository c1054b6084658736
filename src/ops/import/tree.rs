//! The strict reader of lock files: JSON or YAML text into one tree (`serde_json::Value`),
//! refusing what a lock file written by its tool never holds and a hostile one might — a key
//! twice in one mapping (parsers commonly keep the last silently, so two readers of one file
//! could disagree), nesting past [`MAX_DEPTH`], and in YAML anchors, aliases and tags.
//!
//! JSON goes through `serde_json` with a visitor of our own (`serde_json`'s `Value` keeps the
//! last of duplicate keys); YAML through the project's event-level reader
//! ([`crate::format::yaml`]), which keeps duplicates, anchors and tags visible.

use std::cell::Cell;
use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::format::yaml::{self, Node, NodeKind, Style};
use crate::support::escape;

/// Mappings and sequences nested deeper than this are refused: the lock files `import` reads
/// nest three or four levels.
pub const MAX_DEPTH: usize = 32;

/// Why a lock file's text cannot be read as a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeError {
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A key twice in one mapping (escaped for display).
    DuplicateKey(String),
    /// Not JSON or YAML, or YAML with what lock files never use (the message escaped).
    Syntax(String),
}

/// Parses `text` as JSON.
pub fn json(text: &str) -> Result<Value, TreeError> {
    let refusal = Cell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    // Our bound is far below serde_json's own, which stays as a second guard.
    let value = Seed {
        depth: 0,
        refusal: &refusal,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    match (value, refusal.take()) {
        (_, Some(refusal)) => Err(refusal),
        (Ok(value), None) => Ok(value),
        (Err(e), None) => Err(TreeError::Syntax(escape::text(&e.to_string()).to_string())),
    }
}

/// Parses `text` as one YAML document (an empty one is an empty mapping).
pub fn yaml(text: &str) -> Result<Value, TreeError> {
    match yaml::parse(text) {
        Ok(Some(node)) => from_node(&node, 0),
        Ok(None) => Ok(Value::Object(Map::new())),
        // The reader's own bound, and the scanner's on flow collections (`[[[…` past 255
        // levels, refused while scanning ahead, before the reader sees the 64th).
        Err(e) if e.message.contains("nested deeper") || e.message.contains("recursion limit") => {
            Err(TreeError::TooDeep)
        }
        Err(e) => Err(TreeError::Syntax(format!(
            "line {} column {}: {}",
            e.position.line,
            e.position.column,
            escape::text(&e.message)
        ))),
    }
}

fn from_node(node: &Node, depth: usize) -> Result<Value, TreeError> {
    let at = |what: &str| {
        TreeError::Syntax(format!(
            "line {} column {}: {what}, which lock files never use",
            node.position.line, node.position.column
        ))
    };
    if node.anchored {
        return Err(at("an anchor"));
    }
    if node.tag.is_some() {
        return Err(at("a tag"));
    }
    if depth > MAX_DEPTH {
        return Err(TreeError::TooDeep);
    }
    match &node.kind {
        NodeKind::Alias => Err(at("an alias")),
        NodeKind::Scalar { value, style } => Ok(scalar(value, *style)),
        NodeKind::Sequence { items, .. } => items
            .iter()
            .map(|item| from_node(item, depth + 1))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        NodeKind::Mapping { entries, .. } => {
            let mut map = Map::new();
            for (key, value) in entries {
                let Some((key, _)) = key.as_scalar() else {
                    return Err(at("a key that is not text"));
                };
                if map.contains_key(key) {
                    return Err(TreeError::DuplicateKey(escape::text(key).to_string()));
                }
                map.insert(key.to_owned(), from_node(value, depth + 1)?);
            }
            Ok(Value::Object(map))
        }
    }
}

/// A YAML scalar under the core schema: quoted and block scalars are text; plain ones may be
/// null, a boolean or a number.
fn scalar(value: &str, style: Style) -> Value {
    if style != Style::Plain || yaml::plain_scalar_is_string(value) {
        return Value::String(value.to_owned());
    }
    match value {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        _ => value
            .parse::<i64>()
            .ok()
            .map(Number::from)
            .or_else(|| value.parse::<f64>().ok().and_then(Number::from_f64))
            .map_or_else(|| Value::String(value.to_owned()), Value::Number),
    }
}

/// Builds a [`Value`] one level at a time, refusing duplicate keys and depth past the bound;
/// the refusal is left in `refusal` so the caller can tell it from a syntax error.
#[derive(Clone, Copy)]
struct Seed<'a> {
    depth: usize,
    refusal: &'a Cell<Option<TreeError>>,
}

impl<'a> Seed<'a> {
    fn refuse<E: serde::de::Error>(self, refusal: TreeError) -> E {
        self.refusal.set(Some(refusal));
        E::custom("refused")
    }

    fn deeper<E: serde::de::Error>(self) -> Result<Seed<'a>, E> {
        if self.depth >= MAX_DEPTH {
            return Err(self.refuse(TreeError::TooDeep));
        }
        Ok(Seed {
            depth: self.depth + 1,
            refusal: self.refusal,
        })
    }
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inner = self.deeper()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(inner)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let inner = self.deeper()?;
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if map.contains_key(&key) {
                return Err(self.refuse(TreeError::DuplicateKey(escape::text(&key).to_string())));
            }
            let value = access.next_value_seed(inner)?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_refuses_a_key_twice_at_any_level() {
        assert_eq!(
            json(r#"{"version": 1, "version": 2}"#),
            Err(TreeError::DuplicateKey("version".to_owned()))
        );
        assert_eq!(
            json(r#"{"skills": {"a": {"source": "x", "source": "y"}}}"#),
            Err(TreeError::DuplicateKey("source".to_owned()))
        );
        assert!(json(r#"{"a": {"source": "x"}, "b": {"source": "y"}}"#).is_ok());
    }

    #[test]
    fn json_refuses_nesting_past_the_bound_and_takes_it_at_the_bound() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(json(&nested(MAX_DEPTH)).is_ok());
        assert_eq!(json(&nested(MAX_DEPTH + 1)), Err(TreeError::TooDeep));
        assert_eq!(json(&nested(100_000)), Err(TreeError::TooDeep));
    }

    #[test]
    fn json_syntax_errors_are_escaped_and_trailing_text_refused() {
        assert!(matches!(json("{\"a\": 1} x"), Err(TreeError::Syntax(_))));
        let Err(TreeError::Syntax(m)) = json("{\"a\u{1b}[31m\" 1}") else {
            panic!("a syntax error");
        };
        assert!(!m.contains('\u{1b}'), "{m}");
    }

    #[test]
    fn yaml_refuses_duplicates_anchors_aliases_tags_and_depth() {
        assert_eq!(
            yaml("version: 1\nversion: 1\n"),
            Err(TreeError::DuplicateKey("version".to_owned()))
        );
        assert_eq!(
            yaml("skills:\n  - name: a\n    name: b\n"),
            Err(TreeError::DuplicateKey("name".to_owned()))
        );
        for text in ["a: &x 1\nb: *x\n", "a: !!str 1\n", "a: !custom x\n"] {
            assert!(matches!(yaml(text), Err(TreeError::Syntax(_))), "{text}");
        }
        let deep = format!("{}x\n", "- ".repeat(MAX_DEPTH + 2));
        assert_eq!(yaml(&deep), Err(TreeError::TooDeep));
        assert_eq!(
            yaml(&format!("{}x\n", "- ".repeat(100_000))),
            Err(TreeError::TooDeep)
        );
        // Flow collections, past the reader's bound and past the scanner's.
        for levels in [40, 100, 300, 1_000, 100_000] {
            let flow = format!("skills: {}{}\n", "[".repeat(levels), "]".repeat(levels));
            assert_eq!(yaml(&flow), Err(TreeError::TooDeep), "{levels}");
            let flow = format!("skills: {}x{}\n", "{a: ".repeat(levels), "}".repeat(levels));
            assert_eq!(yaml(&flow), Err(TreeError::TooDeep), "{levels}");
        }
    }

    #[test]
    fn yaml_scalars_follow_the_core_schema() {
        let v = yaml("version: 1\nexplicit: true\nname: \"1\"\ndigest: abc\nnone:\n").unwrap();
        assert_eq!(v["version"], Value::from(1));
        assert_eq!(v["explicit"], Value::Bool(true));
        assert_eq!(v["name"], Value::from("1"));
        assert_eq!(v["digest"], Value::from("abc"));
        assert_eq!(v["none"], Value::Null);
    }
}
