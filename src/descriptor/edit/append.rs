//! Appending to a descriptor in place, for `skillfold pin --write`: a new source at the end of the
//! defaults' `skills` or an agent's ([`append_source`]), or new approved entries at the end of a
//! source's `approved` list ([`append_approved`]). Only new lines are inserted; no byte of the
//! file is changed, except that an empty flow collection standing for the list (`skills: []`,
//! `agents: {}`) is taken out for the block that replaces it.
//!
//! A block list is extended after the last line of its last item (the last line indented past
//! the item's `-`; comment lines and blank lines after it stay after the new item), at its
//! items' indentation. What is missing is written in block style, two spaces a level: the
//! `skills:` key, the agent, `agents:`. A list in flow style that holds items (`[ a, b ]`), or a
//! value of another kind, is refused with its line, never rewritten. The caller reads the text
//! back and checks it: this module knows where lines go, not what the descriptor means.

use crate::format::yaml::{self, Node, NodeKind, Style};
use crate::support::escape;

use super::{Edit, EditError, double_quoted, get, mapping, plain_safe};

/// Which list of sources [`append_source`] extends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    /// The defaults: the top-level `skills`.
    Defaults,
    /// The extras of this agent: `agents.<name>.skills`.
    Agent(&'a str),
}

/// The edits that append the sequence item `item` (written with its `-` in the first column,
/// each line ending in `\n`) to the sources of `scope`, written where that list is (with its
/// items' indentation and the file's line endings), the list, the agent and `agents:` made when
/// missing.
pub fn append_source(text: &str, scope: Scope<'_>, item: &str) -> Result<Vec<Edit>, EditError> {
    let root = parse(text)?;
    let root = match &root {
        None => return Ok(vec![at_end(text, &block(scope, item, 0))]),
        Some(node) => node,
    };
    let top = block_mapping(root, "the descriptor")?;
    let Scope::Agent(agent) = scope else {
        return match find(top, "skills") {
            Some((key, list)) => extend_list(text, key, list, item),
            None => Ok(vec![at_end(text, &block(scope, item, 0))]),
        };
    };
    let Some((agents_key, agents)) = find(top, "agents") else {
        return Ok(vec![at_end(text, &block(scope, item, 0))]);
    };
    let lines = agent_block(agent, item, 0);
    let Some(entries) = block_entries(agents) else {
        return under_empty(text, agents_key, agents, &lines, "agents");
    };
    let Some((agent_key, spec)) = entries
        .iter()
        .find(|(k, _)| k.as_scalar().is_some_and(|(k, _)| k == agent))
        .map(|(k, v)| (k, v))
    else {
        // After the last agent, at the agents' indentation.
        let (last, _) = entries.last().expect("a block mapping holds an entry");
        let column = last.position.column - 1;
        let at = block_end(text, last.position.line, column);
        return Ok(vec![insert(text, at, &indented(&lines, column))]);
    };
    match block_entries(spec) {
        None => under_empty(text, agent_key, spec, &skills_block(item, 0), "the agent"),
        Some(entries) => match entries
            .iter()
            .find(|(k, _)| k.as_scalar().is_some_and(|(k, _)| k == "skills"))
        {
            Some((key, list)) => extend_list(text, key, list, item),
            None => {
                let (last, _) = entries.last().expect("a block mapping holds an entry");
                let column = last.position.column - 1;
                let at = block_end(text, last.position.line, column);
                Ok(vec![insert(
                    text,
                    at,
                    &indented(&skills_block(item, 0), column),
                )])
            }
        },
    }
}

/// The edits that append `items` (sequence items written with their `-` in the first column,
/// each line ending in `\n`) to the `approved` list of the source written at `location` (as
/// `check` names it: `skills[0].git`, `agents.<name>.skills[1].git`).
pub fn append_approved(text: &str, location: &str, items: &str) -> Result<Vec<Edit>, EditError> {
    let root = parse(text)?;
    let source = root
        .as_ref()
        .and_then(|root| source_at(root, location))
        .ok_or_else(|| EditError {
            line: 1,
            message: format!("no source is written at {location}"),
        })?;
    match mapping(source)
        .iter()
        .rev()
        .find(|(k, _)| k.as_scalar().is_some_and(|(k, _)| k == "approved"))
    {
        Some((key, list)) => extend_list(text, key, list, items),
        None => Err(EditError {
            line: source.position.line,
            message: format!("{location} has no `approved` list to add to"),
        }),
    }
}

fn parse(text: &str) -> Result<Option<Node>, EditError> {
    yaml::parse(text).map_err(|e| EditError {
        line: e.position.line,
        message: format!("not YAML: {}", escape::text(&e.message)),
    })
}

/// The entries of `node`, a block mapping; refused with its line otherwise.
fn block_mapping<'n>(node: &'n Node, what: &str) -> Result<&'n [(Node, Node)], EditError> {
    block_entries(node).ok_or_else(|| EditError {
        line: node.position.line,
        message: format!("{what} is not a mapping written in block style"),
    })
}

/// The entries of `node` when it is a block mapping that holds one.
fn block_entries(node: &Node) -> Option<&[(Node, Node)]> {
    match &node.kind {
        NodeKind::Mapping {
            entries,
            flow: false,
        } if !entries.is_empty() => Some(entries),
        _ => None,
    }
}

/// The key and value of `key` in `entries` (the last one, as [`get`] takes).
fn find<'n>(entries: &'n [(Node, Node)], key: &str) -> Option<(&'n Node, &'n Node)> {
    entries
        .iter()
        .rev()
        .find(|(k, _)| k.as_scalar().is_some_and(|(k, _)| k == key))
        .map(|(k, v)| (k, v))
}

/// The `git` mapping of the source written at `location`.
fn source_at<'n>(root: &'n Node, location: &str) -> Option<&'n Node> {
    let (list, rest) = match location.strip_prefix("agents.") {
        Some(rest) => {
            let (agent, rest) = rest.split_once(".skills[")?;
            (get(get(get(root, "agents")?, agent)?, "skills")?, rest)
        }
        None => (get(root, "skills")?, location.strip_prefix("skills[")?),
    };
    let (index, key) = rest.split_once("].")?;
    let NodeKind::Sequence { items, .. } = &list.kind else {
        return None;
    };
    get(items.get(index.parse::<usize>().ok()?)?, key)
}

/// The edits that append `item` to `list`, the value of `key`: after its last item when it is a
/// block sequence, in place of an empty value or `[]`, refused otherwise.
fn extend_list(text: &str, key: &Node, list: &Node, item: &str) -> Result<Vec<Edit>, EditError> {
    let name = key.as_scalar().map_or("", |(k, _)| k);
    match &list.kind {
        NodeKind::Sequence { items, flow: false } if !items.is_empty() => {
            let column = dash_column(text, list, &items[0]);
            let last = items.last().expect("not empty");
            let at = block_end(text, last.position.line, column);
            Ok(vec![insert(text, at, &indented(item, column))])
        }
        _ => under_empty(text, key, list, item, &format!("`{name}`")),
    }
}

/// The edits that write `lines` (in the first column) under `key` whose value is empty
/// (nothing, or an empty flow collection, which is taken out): one level deeper than the key,
/// after the key's line. Any other value is refused.
fn under_empty(
    text: &str,
    key: &Node,
    value: &Node,
    lines: &str,
    what: &str,
) -> Result<Vec<Edit>, EditError> {
    let refused = |why: &str| EditError {
        line: value.position.line,
        message: format!(
            "{what} is {why}; write it in block style (one item a line), or add the entry by hand"
        ),
    };
    let taken_out = match &value.kind {
        NodeKind::Scalar {
            value: v,
            style: Style::Plain,
        } if v.is_empty() && value.bytes.is_empty() && !value.anchored && value.tag.is_none() => {
            None
        }
        NodeKind::Sequence { items, flow: true } if items.is_empty() => {
            Some(empty_flow(text, value, ']').ok_or_else(|| refused("not an empty `[]`"))?)
        }
        NodeKind::Mapping {
            entries,
            flow: true,
        } if entries.is_empty() => {
            Some(empty_flow(text, value, '}').ok_or_else(|| refused("not an empty `{}`"))?)
        }
        NodeKind::Sequence { flow: true, .. } | NodeKind::Mapping { flow: true, .. } => {
            return Err(refused("written in flow style"));
        }
        _ => return Err(refused("not a list or mapping this edit can extend")),
    };
    if value.anchored || value.tag.is_some() {
        return Err(refused("anchored or tagged"));
    }
    let column = key.position.column - 1;
    let line_end = block_end(text, key.position.line, usize::MAX);
    let mut edits = Vec::new();
    if let Some(bytes) = taken_out {
        edits.push(Edit {
            bytes,
            text: String::new(),
        });
    }
    edits.push(insert(text, line_end, &indented(lines, column + 2)));
    Ok(edits)
}

/// The bytes of the empty flow collection `node` (which closes with `close`), with the blanks
/// before it on its line: `[]` or `[ ]`, nothing else between.
fn empty_flow(text: &str, node: &Node, close: char) -> Option<std::ops::Range<usize>> {
    let start = node.bytes.start;
    let after = &text[start + 1..];
    let inner = after.len() - after.trim_start_matches([' ', '\t']).len();
    if !after[inner..].starts_with(close) {
        return None;
    }
    let before = text[..start].trim_end_matches([' ', '\t']).len();
    Some(before..start + 1 + inner + 1)
}

/// The column (0-based) of the `-` of the block sequence `list`, read from the line of its first
/// item: the last `-` before the item on that line, else where the sequence starts.
fn dash_column(text: &str, list: &Node, first: &Node) -> usize {
    let start = line_start(text, first.position.line);
    let line = &text[start..];
    let prefix: String = line.chars().take(first.position.column - 1).collect();
    if prefix.trim_start_matches(' ').starts_with('-')
        && let Some(dash) = prefix.rfind('-')
    {
        return dash;
    }
    list.position.column - 1
}

/// Byte offset where 1-based `line` starts.
fn line_start(text: &str, line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    text.match_indices('\n')
        .nth(line - 2)
        .map_or(text.len(), |(i, _)| i + 1)
}

/// Where the block that starts on 1-based `line`, with children indented past `column`, ends:
/// past the line ending of its last line that holds something indented more than `column` (that
/// line itself when none does). Blank lines and comments less indented may sit between its
/// lines; after its last line they stay after it.
fn block_end(text: &str, line: usize, column: usize) -> usize {
    let start = line_start(text, line);
    let line_end = |from: usize| text[from..].find('\n').map_or(text.len(), |i| from + i + 1);
    let mut end = line_end(start);
    let mut at = end;
    while at < text.len() {
        let next = line_end(at);
        let body = text[at..next].trim_end_matches(['\n', '\r']);
        let content = body.trim_start_matches(' ');
        let indent = body.len() - content.len();
        if !content.trim().is_empty() {
            if indent > column {
                end = next;
            } else if !content.starts_with('#') {
                break;
            }
        }
        at = next;
    }
    end
}

/// Inserts `lines` at byte `at` (a line start, or the end of the text), in the text's line
/// endings, after a line break when the text ends without one.
fn insert(text: &str, at: usize, lines: &str) -> Edit {
    let crlf = text.contains("\r\n");
    let mut out = String::new();
    if at == text.len() && !text.is_empty() && !text.ends_with('\n') {
        out.push_str(if crlf { "\r\n" } else { "\n" });
    }
    out.push_str(&if crlf {
        lines.replace('\n', "\r\n")
    } else {
        lines.to_owned()
    });
    Edit {
        bytes: at..at,
        text: out,
    }
}

/// [`insert`] at the end of the text.
fn at_end(text: &str, lines: &str) -> Edit {
    insert(text, text.len(), lines)
}

/// `lines` with `column` spaces before each.
fn indented(lines: &str, column: usize) -> String {
    let pad = " ".repeat(column);
    lines
        .split_inclusive('\n')
        .map(|line| format!("{pad}{line}"))
        .collect()
}

/// The lines that give `scope` its first source `item`, from the top level: `skills:`, or
/// `agents:` with the agent.
fn block(scope: Scope<'_>, item: &str, column: usize) -> String {
    match scope {
        Scope::Defaults => skills_block(item, column),
        Scope::Agent(agent) => format!("agents:\n{}", agent_block(agent, item, column + 2)),
    }
}

/// `skills:` and `item` under it, at `column`.
fn skills_block(item: &str, column: usize) -> String {
    indented(&format!("skills:\n{}", indented(item, 2)), column)
}

/// The agent's key and its `skills:` with `item`, at `column`.
fn agent_block(agent: &str, item: &str, column: usize) -> String {
    let key = if plain_safe(agent) {
        agent.to_owned()
    } else {
        double_quoted(agent)
    };
    indented(&format!("{key}:\n{}", skills_block(item, 2)), column)
}

#[cfg(test)]
#[path = "append_tests.rs"]
mod tests;
