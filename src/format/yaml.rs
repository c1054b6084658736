//! The YAML reader of the bundle format: parses frontmatter text into a small tree that keeps
//! every fact a dialect needs to refuse something — anchors, aliases, tags, flow style, scalar
//! style and positions — which serde-level parsers hide.
//!
//! It is built on `saphyr-parser`'s event stream. The reader itself refuses only what is not YAML
//! at all (and a second document). Policy lives in the code that walks the tree: the bundle
//! dialect of DESIGN §2 ([`crate::format::frontmatter`]), which the runtime's discovered skills
//! and the MCP Skills extension read too, and `update --write`'s in-place edits of the descriptor
//! ([`crate::descriptor::edit`]).
//!
//! It is one of three YAML readers, each for one job: the descriptor itself is deserialised by
//! `serde_yaml` (bounded first by [`crate::descriptor::bounds`], with this reader's
//! [`MAX_NESTING`]), and skills-ref's strictyaml dialect has a scanner of its own that reproduces
//! ruamel's errors ([`crate::skills_ref`]'s `strict_yaml`).

use std::borrow::Cow;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

/// Where a node starts in the parsed text: 1-based line, 1-based column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
}

/// How a scalar was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Unquoted.
    Plain,
    /// `'single'` quoted.
    SingleQuoted,
    /// `"double"` quoted.
    DoubleQuoted,
    /// `|` literal block.
    Literal,
    /// `>` folded block.
    Folded,
}

/// A YAML node with the facts dialects check.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// What the node holds.
    pub kind: NodeKind,
    /// Where it starts.
    pub position: Position,
    /// Whether it carries an anchor (`&x`).
    pub anchored: bool,
    /// Its tag, if any, with the handle resolved (`!!str` is `tag:yaml.org,2002:str`).
    pub tag: Option<String>,
    /// Where it is written, as byte offsets into the parsed text: a scalar's whole text,
    /// quotes included (an in-place rewrite replaces exactly these bytes); for a collection or
    /// an alias, an empty range where it starts.
    pub bytes: std::ops::Range<usize>,
}

/// The content of a [`Node`].
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// A scalar value and how it was written.
    Scalar {
        /// The value after unquoting and folding.
        value: String,
        /// How it was written.
        style: Style,
    },
    /// A sequence; `flow` when written `[...]`.
    Sequence {
        /// The items.
        items: Vec<Node>,
        /// Written in flow style.
        flow: bool,
    },
    /// A mapping in source order (duplicates kept); `flow` when written `{...}`.
    Mapping {
        /// The entries, keys and values.
        entries: Vec<(Node, Node)>,
        /// Written in flow style.
        flow: bool,
    },
    /// An alias (`*x`).
    Alias,
}

impl Node {
    /// The scalar value, if this node is a scalar.
    pub fn as_scalar(&self) -> Option<(&str, Style)> {
        match &self.kind {
            NodeKind::Scalar { value, style } => Some((value, *style)),
            _ => None,
        }
    }

    /// The node as JSON under the YAML 1.2 core schema: plain `null`/`~`/empty become `null`,
    /// `true`/`false` booleans, core-schema integers and floats numbers; every other scalar
    /// (quoted, block, or plain text) a string; sequences arrays and mappings objects (keys by
    /// their scalar text, in source order, the last of duplicate keys winning). What JSON cannot
    /// hold stays text: `.inf`, `.nan` and integers beyond 64 bits. An alias, which no dialect
    /// accepts, becomes `null`.
    #[cfg(feature = "mcp")]
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match &self.kind {
            NodeKind::Scalar { value, style } => {
                if *style != Style::Plain || self.tag.is_some() || plain_scalar_is_string(value) {
                    return Value::String(value.clone());
                }
                core_scalar_json(value).unwrap_or_else(|| Value::String(value.clone()))
            }
            NodeKind::Sequence { items, .. } => {
                Value::Array(items.iter().map(Node::to_json).collect())
            }
            NodeKind::Mapping { entries, .. } => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| {
                        let key = match k.as_scalar() {
                            Some((text, _)) => text.to_owned(),
                            None => k.to_json().to_string(),
                        };
                        (key, v.to_json())
                    })
                    .collect(),
            ),
            NodeKind::Alias => Value::Null,
        }
    }

    /// Whether the YAML 1.2 core schema reads this node as a string: any quoted or block
    /// scalar, and plain scalars that are not null, booleans, integers or floats.
    pub fn is_core_string(&self) -> bool {
        match self.as_scalar() {
            Some((value, Style::Plain)) => plain_scalar_is_string(value),
            Some(_) => self.tag.is_none(),
            None => false,
        }
    }
}

/// Text that is not YAML (or holds more than one document).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Where the parser stopped.
    pub position: Position,
    /// The parser's description, lowercase.
    pub message: String,
    /// The error was an alias to an anchor never defined.
    pub undefined_alias: bool,
}

/// Parses one YAML document. `Ok(None)` for a document with no content (empty or comments only).
pub fn parse(text: &str) -> Result<Option<Node>, SyntaxError> {
    let mut reader = TreeReader {
        text,
        depth: 0,
        parser: Parser::new_from_str(text),
        char_index: None,
    };
    reader.document()
}

/// Collections nested deeper than this are refused (a syntax error), so hostile input cannot
/// exhaust the stack; no real frontmatter comes close.
pub const MAX_NESTING: usize = 64;

struct TreeReader<'a> {
    text: &'a str,
    /// Collections open around the node being read.
    depth: usize,
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    /// Byte offset of each character, built on first use (flow detection needs it).
    char_index: Option<Vec<usize>>,
}

impl<'a> TreeReader<'a> {
    fn next(&mut self) -> Result<(Event<'a>, Span), SyntaxError> {
        match self.parser.next() {
            Some(Ok(pair)) => Ok(pair),
            Some(Err(e)) => {
                let m = e.marker();
                Err(SyntaxError {
                    position: Position {
                        line: m.line(),
                        column: m.col() + 1,
                    },
                    undefined_alias: e.info().contains("unknown anchor"),
                    message: e.info().to_owned(),
                })
            }
            None => Err(SyntaxError {
                position: self.end_position(),
                message: "unexpected end of the event stream".to_owned(),
                undefined_alias: false,
            }),
        }
    }

    fn end_position(&self) -> Position {
        Position {
            line: self.text.lines().count().max(1),
            column: 1,
        }
    }

    fn document(&mut self) -> Result<Option<Node>, SyntaxError> {
        let mut root = None;
        let mut documents = 0;
        loop {
            let (event, span) = self.next()?;
            match event {
                Event::StreamStart | Event::Nothing | Event::DocumentEnd => {}
                Event::DocumentStart(_) => {
                    documents += 1;
                    if documents > 1 {
                        return Err(SyntaxError {
                            position: position(&span),
                            message: "more than one YAML document".to_owned(),
                            undefined_alias: false,
                        });
                    }
                }
                Event::StreamEnd => return Ok(root),
                other => root = Some(self.node(other, span)?),
            }
        }
    }

    fn node(&mut self, event: Event<'a>, span: Span) -> Result<Node, SyntaxError> {
        if matches!(event, Event::SequenceStart(..) | Event::MappingStart(..)) {
            if self.depth >= MAX_NESTING {
                return Err(SyntaxError {
                    position: position(&span),
                    message: format!("collections nested deeper than {MAX_NESTING} levels"),
                    undefined_alias: false,
                });
            }
            self.depth += 1;
            let node = self.node_inner(event, span);
            self.depth -= 1;
            return node;
        }
        self.node_inner(event, span)
    }

    fn node_inner(&mut self, event: Event<'a>, span: Span) -> Result<Node, SyntaxError> {
        let position = position(&span);
        let (kind, anchor_id, tag) = match event {
            Event::Scalar(value, style, anchor, tag) => (
                NodeKind::Scalar {
                    value: value.into_owned(),
                    style: match style {
                        ScalarStyle::Plain => Style::Plain,
                        ScalarStyle::SingleQuoted => Style::SingleQuoted,
                        ScalarStyle::DoubleQuoted => Style::DoubleQuoted,
                        ScalarStyle::Literal => Style::Literal,
                        ScalarStyle::Folded => Style::Folded,
                    },
                },
                anchor,
                tag,
            ),
            Event::Alias(_) => (NodeKind::Alias, 0, None),
            Event::SequenceStart(anchor, tag) => {
                let flow = self.starts_with(&span, '[');
                let mut items = Vec::new();
                loop {
                    let (event, span) = self.next()?;
                    if matches!(event, Event::SequenceEnd) {
                        break;
                    }
                    items.push(self.node(event, span)?);
                }
                (NodeKind::Sequence { items, flow }, anchor, tag)
            }
            Event::MappingStart(anchor, tag) => {
                let flow = self.starts_with(&span, '{');
                let mut entries = Vec::new();
                loop {
                    let (event, span) = self.next()?;
                    if matches!(event, Event::MappingEnd) {
                        break;
                    }
                    let key = self.node(event, span)?;
                    let (event, span) = self.next()?;
                    let value = self.node(event, span)?;
                    entries.push((key, value));
                }
                (NodeKind::Mapping { entries, flow }, anchor, tag)
            }
            other => {
                return Err(SyntaxError {
                    position,
                    message: format!("unexpected YAML event {other:?}"),
                    undefined_alias: false,
                });
            }
        };
        let start = self.byte_offset(span.start.index());
        let bytes = match &kind {
            NodeKind::Scalar { style, .. } => {
                let end = self.byte_offset(span.end.index()).max(start);
                start..scalar_end(self.text, start, end, *style)
            }
            _ => start..start,
        };
        Ok(Node {
            kind,
            position,
            anchored: anchor_id != 0,
            tag: tag.map(|t: Cow<'_, saphyr_parser::Tag>| format!("{}{}", t.handle, t.suffix)),
            bytes,
        })
    }

    /// The byte offset of the character at `char_index` (the text's length past its end).
    fn byte_offset(&mut self, char_index: usize) -> usize {
        let text = self.text;
        let index = self
            .char_index
            .get_or_insert_with(|| text.char_indices().map(|(i, _)| i).collect());
        index.get(char_index).copied().unwrap_or(text.len())
    }

    /// Whether the character at the start of `span` is `c` (how flow collections are told apart).
    fn starts_with(&mut self, span: &Span, c: char) -> bool {
        let byte = self.byte_offset(span.start.index());
        self.text[byte..].starts_with(c)
    }
}

/// Where the scalar written at `start` ends. The parser's span of a quoted scalar in a flow
/// collection runs on over the blanks after it; the closing quote is found instead. A plain
/// scalar's span is trimmed of trailing blanks; a block scalar keeps its span.
fn scalar_end(text: &str, start: usize, span_end: usize, style: Style) -> usize {
    let bytes = text.as_bytes();
    match style {
        Style::SingleQuoted => {
            let mut i = start + 1;
            while i < bytes.len() {
                if bytes[i] == b'\'' {
                    if bytes.get(i + 1) == Some(&b'\'') {
                        i += 2;
                        continue;
                    }
                    return i + 1;
                }
                i += 1;
            }
            span_end
        }
        Style::DoubleQuoted => {
            let mut i = start + 1;
            while i < bytes.len() {
                match bytes[i] {
                    b'\\' => i += 2,
                    b'"' => return i + 1,
                    _ => i += 1,
                }
            }
            span_end
        }
        Style::Plain => start + text[start..span_end].trim_end().len(),
        Style::Literal | Style::Folded => span_end,
    }
}

fn position(span: &Span) -> Position {
    Position {
        line: span.start.line(),
        column: span.start.col() + 1,
    }
}

/// Whether a plain scalar is a string under the YAML 1.2 core schema (not null, bool, int or
/// float).
pub fn plain_scalar_is_string(value: &str) -> bool {
    let is_null = matches!(value, "" | "~" | "null" | "Null" | "NULL");
    let is_bool = matches!(
        value,
        "true" | "True" | "TRUE" | "false" | "False" | "FALSE"
    );
    !(is_null || is_bool || is_core_int(value) || is_core_float(value))
}

/// A plain scalar that the core schema does not read as a string, as JSON; `None` when JSON
/// cannot hold it (infinities, NaN, integers beyond 64 bits).
#[cfg(feature = "mcp")]
fn core_scalar_json(value: &str) -> Option<serde_json::Value> {
    use serde_json::Value;
    if matches!(value, "" | "~" | "null" | "Null" | "NULL") {
        return Some(Value::Null);
    }
    if matches!(value, "true" | "True" | "TRUE") {
        return Some(Value::Bool(true));
    }
    if matches!(value, "false" | "False" | "FALSE") {
        return Some(Value::Bool(false));
    }
    if is_core_int(value) {
        let (radix, digits) = if let Some(rest) = value.strip_prefix("0o") {
            (8, rest)
        } else if let Some(rest) = value.strip_prefix("0x") {
            (16, rest)
        } else {
            (10, value.strip_prefix('+').unwrap_or(value))
        };
        return i64::from_str_radix(digits, radix)
            .map(Value::from)
            .or_else(|_| u64::from_str_radix(digits, radix).map(Value::from))
            .ok();
    }
    value
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map(Value::Number)
}

fn is_core_int(v: &str) -> bool {
    let digits = |s: &str, radix: u32| !s.is_empty() && s.chars().all(|c| c.is_digit(radix));
    if let Some(rest) = v.strip_prefix("0o") {
        return digits(rest, 8);
    }
    if let Some(rest) = v.strip_prefix("0x") {
        return digits(rest, 16);
    }
    digits(v.strip_prefix(['-', '+']).unwrap_or(v), 10)
}

fn is_core_float(v: &str) -> bool {
    let unsigned = v.strip_prefix(['-', '+']).unwrap_or(v);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") || matches!(v, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    // [0-9]+(\.[0-9]*)? | \.[0-9]+ , then optional [eE][-+]?[0-9]+
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let all_digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => {
            all_digits(int) && all_digits(frac) && (!int.is_empty() || !frac.is_empty())
        }
        None => !mantissa.is_empty() && all_digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && all_digits(e)
    });
    mantissa_ok && exponent_ok && (mantissa.contains('.') || exponent.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Node {
        parse(text).unwrap().unwrap()
    }

    #[test]
    fn a_scalar_knows_the_bytes_it_was_written_as() {
        let text =
            "a: plain\nb: 'sin''gle'\nc: \"dou\\\"ble\"\nd: { x: é1, y: \"é2\" }\r\ne: [ 'z' ]\n";
        let node = root(text);
        let NodeKind::Mapping { entries, .. } = &node.kind else {
            panic!("mapping")
        };
        let written = |n: &Node| &text[n.bytes.clone()];
        assert_eq!(written(&entries[0].1), "plain");
        assert_eq!(written(&entries[1].1), "'sin''gle'");
        assert_eq!(written(&entries[2].1), "\"dou\\\"ble\"");
        let NodeKind::Mapping { entries: inner, .. } = &entries[3].1.kind else {
            panic!("flow mapping")
        };
        assert_eq!(written(&inner[0].1), "é1");
        assert_eq!(written(&inner[1].1), "\"é2\"");
        let NodeKind::Sequence { items, .. } = &entries[4].1.kind else {
            panic!("sequence")
        };
        assert_eq!(written(&items[0]), "'z'");
        assert_eq!(written(&entries[4].0), "e");
    }

    #[test]
    fn json_follows_the_core_schema() {
        let json = root(
            "name: demo\nn: 12\nneg: -3\noct: 0o17\nhex: 0x1F\nf: 1.5e3\nt: true\nnil: ~\n\
             empty:\nq: '12'\nv: 1.0.0\ninf: .inf\nbig: 99999999999999999999\n\
             list: [a, 2]\nmeta:\n  version: \"1.0\"\n",
        )
        .to_json();
        assert_eq!(
            json,
            serde_json::json!({
                "name": "demo", "n": 12, "neg": -3, "oct": 15, "hex": 31, "f": 1500.0,
                "t": true, "nil": null, "empty": null, "q": "12", "v": "1.0.0", "inf": ".inf",
                "big": "99999999999999999999", "list": ["a", 2], "meta": {"version": "1.0"}
            })
        );
        let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
        assert_eq!(keys[0], "name", "source order is kept");
    }

    #[test]
    fn core_schema_strings() {
        for s in [
            "abc",
            "1.0.0",
            "v1",
            "0x",
            "1e",
            "yes",
            "2024-01-01",
            ".",
            "-",
            "1_000",
        ] {
            assert!(plain_scalar_is_string(s), "{s}");
        }
        for s in [
            "", "~", "null", "true", "FALSE", "12", "-3", "0o17", "0xff", "1.5", ".5", "1e3",
            "-.inf", ".nan",
        ] {
            assert!(!plain_scalar_is_string(s), "{s}");
        }
    }

    #[test]
    fn flow_and_block_collections_are_told_apart() {
        let n = root("a: [1, 2]\nb:\n  - x\nc: {k: v}\nd:\n  k: v\n");
        let NodeKind::Mapping { entries, flow } = &n.kind else {
            panic!()
        };
        assert!(!flow);
        let flows: Vec<bool> = entries
            .iter()
            .map(|(_, v)| match &v.kind {
                NodeKind::Sequence { flow, .. } | NodeKind::Mapping { flow, .. } => *flow,
                _ => panic!(),
            })
            .collect();
        assert_eq!(flows, [true, false, true, false]);
    }

    #[test]
    fn anchors_aliases_tags_are_seen() {
        let n = root("a: &x v\nb: *x\nc: !!str 1\n");
        let NodeKind::Mapping { entries, .. } = &n.kind else {
            panic!()
        };
        assert!(entries[0].1.anchored);
        assert_eq!(entries[1].1.kind, NodeKind::Alias);
        assert_eq!(entries[2].1.tag.as_deref(), Some("tag:yaml.org,2002:str"));
        let err = parse("b: *nowhere\n").unwrap_err();
        assert!(err.undefined_alias, "{err:?}");
    }

    #[test]
    fn positions_and_documents() {
        let n = root("\n\nkey: value\n");
        let NodeKind::Mapping { entries, .. } = &n.kind else {
            panic!()
        };
        assert_eq!(entries[0].0.position, Position { line: 3, column: 1 });
        assert_eq!(parse("# only a comment\n").unwrap(), None);
        assert!(parse("a: b\n---\nc: d\n").is_err());
        assert!(parse("a: [unclosed\n").is_err());
    }

    #[test]
    fn nesting_is_bounded() {
        let ok = format!("{}x\n", "- ".repeat(MAX_NESTING));
        assert!(parse(&ok).is_ok());
        let deep = format!("{}x\n", "- ".repeat(100_000));
        let err = parse(&deep).unwrap_err();
        assert!(err.message.contains("nested deeper"), "{err:?}");
    }
}
