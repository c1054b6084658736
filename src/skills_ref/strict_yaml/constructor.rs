//! The constructor: the checks strictyaml's constructor makes on the composed tree (duplicate
//! and unhashable keys, merge values, inconsistent indentation of sibling mappings), in the
//! order it makes them, then [`build`]s the [`Value`] that [`super::load`] returns.

use super::Value;
use super::composer::{ComposedNode, ScalarTag};
use super::errors::{Fail, YamlResult, err};
use super::reader::Mark;
use crate::skills_ref::python;

/// The errors `StrictYAMLConstructor` raises, in the order it raises them: ruamel builds the
/// root collection lazily and fills nested ones depth-first ("deep") from there, so a queue of
/// pending collections reproduces which problem is found first.
#[derive(Default)]
pub(super) struct Checker<'a> {
    deep: bool,
    pending: Vec<&'a ComposedNode>,
    tuple_key: Option<String>,
}

#[derive(PartialEq, Eq)]
enum MappingKey {
    Str(String),
    Tuple(Vec<String>),
}

impl<'a> Checker<'a> {
    pub(super) fn run(&mut self, root: &'a ComposedNode) -> YamlResult<()> {
        self.construct(root, false)?;
        while !self.pending.is_empty() {
            for node in std::mem::take(&mut self.pending) {
                self.fill(node)?;
            }
        }
        match self.tuple_key.take() {
            Some(why) => Err(Fail::Crash(why)),
            None => Ok(()),
        }
    }

    fn construct(&mut self, node: &'a ComposedNode, deep: bool) -> YamlResult<()> {
        let old = self.deep;
        if deep {
            self.deep = true;
        }
        if !matches!(node, ComposedNode::Scalar { .. }) {
            if self.deep {
                self.fill(node)?;
            } else {
                self.pending.push(node);
            }
        }
        if deep {
            self.deep = old;
        }
        Ok(())
    }

    fn fill(&mut self, node: &'a ComposedNode) -> YamlResult<()> {
        match node {
            ComposedNode::Scalar { .. } => Ok(()),
            ComposedNode::Seq { items, .. } => {
                for item in items {
                    self.construct(item, false)?;
                }
                Ok(())
            }
            ComposedNode::Map { entries, start, .. } => {
                let entries = self.flatten(entries, *start)?;
                let mut seen: Vec<MappingKey> = Vec::new();
                for (key, value) in &entries {
                    self.construct(key, true)?;
                    let k = match key {
                        ComposedNode::Scalar { value, .. } => MappingKey::Str(value.clone()),
                        ComposedNode::Map { .. } => {
                            return err(
                                Some("while constructing a mapping"),
                                Some(*start),
                                "found unhashable key".into(),
                                key.start(),
                            );
                        }
                        ComposedNode::Seq { items, start: at } => {
                            let mut parts = Vec::new();
                            for item in items {
                                match item {
                                    ComposedNode::Scalar { value, .. } => parts.push(value.clone()),
                                    _ => return Err(Fail::Crash(unsupported_key(*at))),
                                }
                            }
                            self.tuple_key.get_or_insert_with(|| unsupported_key(*at));
                            MappingKey::Tuple(parts)
                        }
                    };
                    self.construct(value, true)?;
                    if seen.contains(&k) {
                        let shown = match &k {
                            MappingKey::Str(s) => s.clone(),
                            MappingKey::Tuple(parts) => python_tuple(parts),
                        };
                        let end = match key {
                            ComposedNode::Scalar { end, .. } => *end,
                            other => other.start(),
                        };
                        return err(
                            Some("While parsing"),
                            Some(key.start()),
                            format!("Duplicate key '{shown}' found"),
                            end,
                        );
                    }
                    seen.push(k);
                }
                let mut previous = None;
                for (_, value) in &entries {
                    if let ComposedNode::Map { start, end, .. } = value {
                        let column = *previous.get_or_insert(start.column);
                        if start.column != column {
                            return err(
                                Some("While parsing"),
                                Some(*start),
                                "Found mapping with indentation inconsistent with previous mapping"
                                    .into(),
                                *end,
                            );
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// ruamel's `flatten_mapping`: takes the merge keys out (checking their values).
    fn flatten(
        &mut self,
        entries: &'a [(ComposedNode, ComposedNode)],
        start: Mark,
    ) -> YamlResult<Vec<(&'a ComposedNode, &'a ComposedNode)>> {
        let mut kept = Vec::new();
        let mut merged = false;
        for (key, value) in entries {
            let is_merge = matches!(
                key,
                ComposedNode::Scalar {
                    tag: ScalarTag::Merge,
                    ..
                }
            );
            if !is_merge {
                kept.push((key, value));
                continue;
            }
            if merged {
                return Err(Fail::Crash(format!(
                    "a second merge key `<<` on line {} in one mapping",
                    key.start().line + 1
                )));
            }
            merged = true;
            match value {
                ComposedNode::Map { .. } => self.construct(value, false)?,
                ComposedNode::Seq { items, .. } => {
                    for item in items {
                        if !matches!(item, ComposedNode::Map { .. }) {
                            return err(
                                Some("while constructing a mapping"),
                                Some(start),
                                format!("expected a mapping for merging, but found {}", item.id()),
                                item.start(),
                            );
                        }
                        self.construct(item, false)?;
                    }
                }
                ComposedNode::Scalar { .. } => {
                    return err(
                        Some("while constructing a mapping"),
                        Some(start),
                        "expected a mapping or list of mappings for merging, but found scalar"
                            .into(),
                        value.start(),
                    );
                }
            }
        }
        Ok(kept)
    }
}

fn unsupported_key(at: Mark) -> String {
    format!("a sequence used as a mapping key on line {}", at.line + 1)
}

fn python_tuple(parts: &[String]) -> String {
    let items: Vec<String> = parts.iter().map(|p| python::repr(p)).collect();
    if items.len() == 1 {
        format!("({},)", items[0])
    } else {
        format!("({})", items.join(", "))
    }
}

/// The value strictyaml hands back once every check passed.
pub(super) fn build(node: &ComposedNode) -> Value {
    match node {
        ComposedNode::Scalar {
            tag: ScalarTag::Str,
            value,
            ..
        } => Value::Str(value.clone()),
        ComposedNode::Scalar { value, .. } => Value::Tagged(value.clone()),
        ComposedNode::Seq { items, .. } => Value::List(items.iter().map(build).collect()),
        ComposedNode::Map { entries, .. } => Value::Map(
            entries
                .iter()
                .filter_map(|(k, v)| match k {
                    ComposedNode::Scalar {
                        tag: ScalarTag::Merge,
                        ..
                    } => None,
                    ComposedNode::Scalar { value, .. } => Some((value.clone(), build(v))),
                    _ => None,
                })
                .collect(),
        ),
    }
}
