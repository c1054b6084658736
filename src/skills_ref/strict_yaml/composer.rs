//! The composer: turns the parser's events into one document's tree of [`ComposedNode`]s (scalars
//! tagged `str`, merge or value; sequences; mappings), refuses aliases and a second document,
//! and bounds the nesting. It hands the root node to the constructor.

use super::errors::{Fail, YamlResult, err};
use super::parser::{EventKind, Parser};
use super::reader::Mark;
use crate::skills_ref::python;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ScalarTag {
    Str,
    Merge,
    Value,
}

#[derive(Debug)]
pub(super) enum ComposedNode {
    Scalar {
        tag: ScalarTag,
        value: String,
        start: Mark,
        end: Mark,
    },
    Seq {
        items: Vec<ComposedNode>,
        start: Mark,
    },
    Map {
        entries: Vec<(ComposedNode, ComposedNode)>,
        start: Mark,
        end: Mark,
    },
}

impl ComposedNode {
    pub(super) fn start(&self) -> Mark {
        match self {
            ComposedNode::Scalar { start, .. }
            | ComposedNode::Seq { start, .. }
            | ComposedNode::Map { start, .. } => *start,
        }
    }

    pub(super) fn id(&self) -> &'static str {
        match self {
            ComposedNode::Scalar { .. } => "scalar",
            ComposedNode::Seq { .. } => "sequence",
            ComposedNode::Map { .. } => "mapping",
        }
    }
}

pub(super) struct Composer {
    pub(super) parser: Parser,
    /// Collections open around the node being composed (bounded: see [`MAX_NESTING`]).
    pub(super) depth: usize,
}

/// Deeper nesting is refused (as a YAML the reference cannot load: Python's recursion limit
/// stops ruamel long before) instead of exhausting the stack.
const MAX_NESTING: usize = 200;

impl Composer {
    fn is_next(&mut self, f: impl Fn(&EventKind) -> bool) -> YamlResult<bool> {
        Ok(self.parser.peek_event()?.is_some_and(|e| f(&e.kind)))
    }

    pub(super) fn single_node(&mut self) -> YamlResult<Option<ComposedNode>> {
        self.parser.get_event()?;
        let mut document = None;
        if !self.is_next(|e| matches!(e, EventKind::StreamEnd))? {
            self.parser.get_event()?;
            document = Some(self.node()?);
            self.parser.get_event()?;
        }
        if !self.is_next(|e| matches!(e, EventKind::StreamEnd))? {
            let event = self.parser.get_event()?;
            let mark = event.map(|e| e.start).unwrap_or(self.parser.scanner.mark());
            return err(
                Some("expected a single document in the stream"),
                document.as_ref().map(ComposedNode::start),
                "but found another document".into(),
                mark,
            );
        }
        self.parser.get_event()?;
        Ok(document)
    }

    fn node(&mut self) -> YamlResult<ComposedNode> {
        if self.depth >= MAX_NESTING {
            return Err(Fail::Crash(format!(
                "collections nested deeper than {MAX_NESTING} levels"
            )));
        }
        self.depth += 1;
        let node = self.node_at_depth();
        self.depth -= 1;
        node
    }

    fn node_at_depth(&mut self) -> YamlResult<ComposedNode> {
        let Some(event) = self.parser.get_event()? else {
            return Err(Fail::Crash("the YAML event stream ended early".into()));
        };
        match event.kind {
            EventKind::Alias(name) => err(
                None,
                None,
                format!("found undefined alias {}", python::repr(&name)),
                event.start,
            ),
            EventKind::Scalar { value, plain } => {
                let tag = match (plain, value.as_str()) {
                    (true, "<<") => ScalarTag::Merge,
                    (true, "=") => ScalarTag::Value,
                    _ => ScalarTag::Str,
                };
                Ok(ComposedNode::Scalar {
                    tag,
                    value,
                    start: event.start,
                    end: event.end,
                })
            }
            EventKind::SequenceStart => {
                let mut items = Vec::new();
                while !self.is_next(|e| matches!(e, EventKind::SequenceEnd))? {
                    items.push(self.node()?);
                }
                self.parser.get_event()?;
                Ok(ComposedNode::Seq {
                    items,
                    start: event.start,
                })
            }
            EventKind::MappingStart => {
                let mut entries = Vec::new();
                while !self.is_next(|e| matches!(e, EventKind::MappingEnd))? {
                    let key = self.node()?;
                    let value = self.node()?;
                    entries.push((key, value));
                }
                let end = self.parser.get_event()?.map(|e| e.end).unwrap_or(event.end);
                Ok(ComposedNode::Map {
                    entries,
                    start: event.start,
                    end,
                })
            }
            other => Err(Fail::Crash(format!("unexpected YAML event {other:?}"))),
        }
    }
}
