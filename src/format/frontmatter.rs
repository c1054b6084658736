//! `SKILL.md` in the bundle dialect (DESIGN §2): the fences, the frontmatter and body bounds, and
//! the strict YAML rules for the frontmatter.
//!
//! # Layout
//!
//! `SKILL.md` starts with a line that is exactly `---` (ending in LF or CRLF). The frontmatter is
//! every byte after that line up to the next line that is exactly `---`; the body is every byte
//! after that closing line, unchanged. A `---` inside a line is ordinary text. At most
//! 4 KiB of frontmatter and 64 KiB of body.
//!
//! # The bundle YAML dialect
//!
//! The frontmatter is one YAML mapping. Refused anywhere in it: duplicate keys (`name` and
//! `'name'` are the same key), anchors, aliases, tags, keys that are not strings under the YAML 1.2
//! core schema (`1:`, `true:`, `null:`, collections), and keys holding control characters. Flow
//! collections and nested values are allowed.
//!
//! - `name`: required, a string matching `^[a-z][a-z0-9-]{0,63}$`.
//! - `description`: required, a string; trimmed of surrounding whitespace it must be non-blank, at
//!   most 1,024 characters, with no control characters (no newlines, no tabs).
//! - Every other key grants nothing; their names are reported, sorted, as ignored fields.

use std::collections::BTreeSet;

use crate::format::limits;
use crate::format::problem::{Problem, ProblemCode, Problems};
use crate::format::skill_name::SkillName;
use crate::format::yaml::{self, Node, NodeKind};
use crate::support::escape;

/// The parts of a `SKILL.md`, as byte ranges of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The YAML between the fences.
    pub frontmatter: std::ops::Range<usize>,
    /// The Markdown after the closing fence line.
    pub body: std::ops::Range<usize>,
}

/// What the frontmatter says, once it passed every rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frontmatter {
    /// The skill's name.
    pub name: SkillName,
    /// The trimmed description.
    pub description: String,
    /// Other top-level keys, sorted: they grant nothing.
    pub ignored_fields: Vec<String>,
    /// The release the bundle says it is, from a top-level `version` or else `metadata.version`
    /// (string scalars only). A pin's version must agree with it.
    pub declared_version: Option<String>,
}

/// Finds the fences. Problems: [`ProblemCode::FrontmatterMissing`],
/// [`ProblemCode::FrontmatterUnclosed`].
pub fn layout(text: &str) -> Result<Layout, Problem> {
    let mut lines = LineIter { text, pos: 0 };
    let opening = lines.next();
    if opening.map(|l| l.content) != Some("---") {
        let hint = if text.starts_with('\u{feff}') {
            " (it starts with a UTF-8 byte order mark; remove it)"
        } else {
            ""
        };
        return Err(skill_md_error(
            ProblemCode::FrontmatterMissing,
            format!(
                "`SKILL.md` must start with a `---` line that opens the YAML frontmatter{hint}"
            ),
        ));
    }
    let start = lines.pos;
    for line in lines.by_ref() {
        if line.content == "---" {
            return Ok(Layout {
                frontmatter: start..line.start,
                body: line.end..text.len(),
            });
        }
    }
    Err(skill_md_error(
        ProblemCode::FrontmatterUnclosed,
        "the YAML frontmatter is not closed by a `---` line",
    ))
}

/// Checks a whole `SKILL.md` under the bounds of `limits` (the body bound follows the profile;
/// the frontmatter's does not); every problem goes to `problems`. Returns the frontmatter and the
/// layout when nothing refused them.
pub fn check(
    text: &str,
    limits: &limits::Limits,
    problems: &mut Problems,
) -> Option<(Frontmatter, Layout)> {
    let layout = match layout(text) {
        Ok(layout) => layout,
        Err(problem) => {
            problems.push(problem);
            return None;
        }
    };
    let mut ok = true;
    let body_len = layout.body.len() as u64;
    let max_body = limits.body_bytes();
    if body_len > max_body {
        ok = false;
        problems.push(
            skill_md_error(
                ProblemCode::BodyTooLarge,
                format!(
                    "the Markdown body is {body_len} bytes, over the bound of {max_body} bytes"
                ),
            )
            .with_bound(max_body, body_len),
        );
    }
    let yaml_len = layout.frontmatter.len() as u64;
    if yaml_len > limits::MAX_FRONTMATTER_BYTES {
        problems.push(
            skill_md_error(
                ProblemCode::FrontmatterTooLarge,
                format!(
                    "the YAML frontmatter is {yaml_len} bytes, over the bound of {} bytes",
                    limits::MAX_FRONTMATTER_BYTES
                ),
            )
            .with_bound(limits::MAX_FRONTMATTER_BYTES, yaml_len),
        );
        return None;
    }
    let frontmatter = check_yaml(&text[layout.frontmatter.clone()], problems)?;
    ok.then_some((frontmatter, layout))
}

/// The frontmatter starts on line 2 of `SKILL.md`.
const FIRST_YAML_LINE: usize = 2;

fn skill_md_error(code: ProblemCode, message: impl Into<String>) -> Problem {
    Problem::error(code, Some(limits::SKILL_MD), message)
}

fn at_line(code: ProblemCode, node_line: usize, message: impl std::fmt::Display) -> Problem {
    let line = node_line + FIRST_YAML_LINE - 1;
    skill_md_error(code, format!("line {line}: {message}"))
}

fn check_yaml(yaml_text: &str, problems: &mut Problems) -> Option<Frontmatter> {
    let root = match yaml::parse(yaml_text) {
        Ok(Some(root)) => root,
        Ok(None) => {
            problems.push(skill_md_error(
                ProblemCode::FrontmatterNotMapping,
                "the YAML frontmatter is empty; it must be a mapping with `name` and `description`",
            ));
            return None;
        }
        Err(e) => {
            let code = if e.undefined_alias {
                ProblemCode::YamlAlias
            } else {
                ProblemCode::YamlSyntax
            };
            problems.push(at_line(
                code,
                e.position.line,
                format_args!(
                    "invalid YAML: {} (column {})",
                    escape::text(&e.message),
                    e.position.column
                ),
            ));
            return None;
        }
    };
    let before = problems.as_slice().len();
    check_node(&root, problems);
    let NodeKind::Mapping { entries, .. } = &root.kind else {
        problems.push(at_line(
            ProblemCode::FrontmatterNotMapping,
            root.position.line,
            "the YAML frontmatter must be a mapping of keys to values",
        ));
        return None;
    };
    let name = top_level_name(entries, problems);
    let description = top_level_description(entries, problems);
    let ignored_fields: BTreeSet<String> = entries
        .iter()
        .filter_map(|(k, _)| k.as_scalar().map(|(v, _)| v))
        .filter(|k| *k != "name" && *k != "description")
        .map(str::to_owned)
        .collect();
    let clean = problems.as_slice().len() == before;
    match (name, description, clean) {
        (Some(name), Some(description), true) => Some(Frontmatter {
            name,
            description,
            ignored_fields: ignored_fields.into_iter().collect(),
            declared_version: declared_version(entries),
        }),
        _ => None,
    }
}

/// Anchors, aliases, tags and keys, anywhere in the tree.
fn check_node(node: &Node, problems: &mut Problems) {
    let line = node.position.line;
    if node.anchored {
        problems.push(at_line(
            ProblemCode::YamlAnchor,
            line,
            "YAML anchors (`&name`) are not allowed",
        ));
    }
    if let Some(tag) = &node.tag {
        problems.push(at_line(
            ProblemCode::YamlTag,
            line,
            format_args!("YAML tags are not allowed (found `{}`)", escape::text(tag)),
        ));
    }
    match &node.kind {
        NodeKind::Alias => problems.push(at_line(
            ProblemCode::YamlAlias,
            line,
            "YAML aliases (`*name`) are not allowed",
        )),
        NodeKind::Scalar { .. } => {}
        NodeKind::Sequence { items, .. } => items.iter().for_each(|n| check_node(n, problems)),
        NodeKind::Mapping { entries, .. } => {
            let mut seen = BTreeSet::new();
            for (key, value) in entries {
                check_node(key, problems);
                check_key(key, &mut seen, problems);
                check_node(value, problems);
            }
        }
    }
}

fn check_key<'a>(key: &'a Node, seen: &mut BTreeSet<&'a str>, problems: &mut Problems) {
    let line = key.position.line;
    let text = match key.as_scalar() {
        Some((text, _)) if key.is_core_string() => text,
        Some((text, _)) => {
            problems.push(at_line(
                ProblemCode::NonStringKey,
                line,
                format_args!(
                    "key `{}` is not a string (a number, boolean or null); quote it",
                    escape::text(text)
                ),
            ));
            return;
        }
        None => {
            problems.push(at_line(
                ProblemCode::NonStringKey,
                line,
                "a key must be a string, not a collection or alias",
            ));
            return;
        }
    };
    if text.chars().any(char::is_control) {
        problems.push(at_line(
            ProblemCode::KeyControlChar,
            line,
            format_args!("key `{}` contains a control character", escape::text(text)),
        ));
    }
    if !seen.insert(text) {
        problems.push(at_line(
            ProblemCode::DuplicateKey,
            line,
            format_args!("duplicate key `{}`", escape::text(text)),
        ));
    }
}

fn declared_version(entries: &[(Node, Node)]) -> Option<String> {
    let scalar = |node: &Node| {
        node.as_scalar()
            .filter(|_| {
                node.is_core_string()
                    || node
                        .as_scalar()
                        .is_some_and(|(_, s)| s == yaml::Style::Plain)
            })
            .map(|(v, _)| v.to_owned())
    };
    if let Some(v) = find(entries, "version").and_then(scalar) {
        return Some(v);
    }
    match &find(entries, "metadata")?.kind {
        NodeKind::Mapping { entries, .. } => find(entries, "version").and_then(scalar),
        _ => None,
    }
}

fn find<'a>(entries: &'a [(Node, Node)], key: &str) -> Option<&'a Node> {
    entries
        .iter()
        .find(|(k, _)| k.as_scalar().map(|(v, _)| v) == Some(key))
        .map(|(_, v)| v)
}

fn top_level_name(entries: &[(Node, Node)], problems: &mut Problems) -> Option<SkillName> {
    let Some(node) = find(entries, "name") else {
        problems.push(skill_md_error(
            ProblemCode::NameMissing,
            "the frontmatter has no `name`",
        ));
        return None;
    };
    let line = node.position.line;
    let Some((value, _)) = node.as_scalar().filter(|_| node.is_core_string()) else {
        problems.push(at_line(
            ProblemCode::NameInvalid,
            line,
            "`name` must be a string",
        ));
        return None;
    };
    match SkillName::parse(value) {
        Ok(name) => Some(name),
        Err(e) => {
            problems.push(at_line(
                ProblemCode::NameInvalid,
                line,
                format_args!("{e} (pattern `^[a-z][a-z0-9-]{{0,63}}$`)"),
            ));
            None
        }
    }
}

fn top_level_description(entries: &[(Node, Node)], problems: &mut Problems) -> Option<String> {
    let Some(node) = find(entries, "description") else {
        problems.push(skill_md_error(
            ProblemCode::DescriptionMissing,
            "the frontmatter has no `description`",
        ));
        return None;
    };
    let line = node.position.line;
    let value = match node.as_scalar() {
        Some((value, _)) if node.is_core_string() => value,
        Some((value, yaml::Style::Plain))
            if yaml::plain_scalar_is_string(value) || is_null(value) =>
        {
            ""
        }
        _ => {
            problems.push(at_line(
                ProblemCode::DescriptionNotString,
                line,
                "`description` must be a string (quote numbers and booleans)",
            ));
            return None;
        }
    };
    let trimmed = value.trim();
    if trimmed.is_empty() {
        problems.push(at_line(
            ProblemCode::DescriptionBlank,
            line,
            "`description` is blank; say what the skill does and when to use it",
        ));
        return None;
    }
    let mut ok = true;
    let chars = trimmed.chars().count();
    if chars > limits::MAX_DESCRIPTION_CHARS {
        ok = false;
        problems.push(
            at_line(
                ProblemCode::DescriptionTooLong,
                line,
                format_args!(
                    "`description` is {chars} characters, over the bound of {}",
                    limits::MAX_DESCRIPTION_CHARS
                ),
            )
            .with_bound(limits::MAX_DESCRIPTION_CHARS as u64, chars as u64),
        );
    }
    if let Some(c) = trimmed.chars().find(|c| c.is_control()) {
        ok = false;
        problems.push(at_line(
            ProblemCode::DescriptionControlChar,
            line,
            format_args!(
                "`description` contains the control character `{}`; keep it on one line without tabs",
                escape::text(c.encode_utf8(&mut [0; 4]))
            ),
        ));
    }
    ok.then(|| trimmed.to_owned())
}

fn is_null(value: &str) -> bool {
    matches!(value, "" | "~" | "null" | "Null" | "NULL")
}

/// One line of text: its content without the line ending, and its byte range with it.
#[derive(Debug, Clone, Copy)]
struct TextLine<'a> {
    content: &'a str,
    start: usize,
    end: usize,
}

struct LineIter<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for LineIter<'a> {
    type Item = TextLine<'a>;
    fn next(&mut self) -> Option<TextLine<'a>> {
        if self.pos >= self.text.len() {
            return None;
        }
        let start = self.pos;
        let rest = &self.text[start..];
        let (content, end) = match rest.find('\n') {
            Some(i) => (&rest[..i], start + i + 1),
            None => (rest, self.text.len()),
        };
        self.pos = end;
        Some(TextLine {
            content: content.strip_suffix('\r').unwrap_or(content),
            start,
            end,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(text: &str) -> Vec<ProblemCode> {
        let mut p = Problems::new();
        check(text, &limits::CHAMVI, &mut p);
        p.as_slice().iter().map(|p| p.code).collect()
    }

    fn ok(text: &str) -> Frontmatter {
        let mut p = Problems::new();
        let r = check(text, &limits::CHAMVI, &mut p);
        assert!(p.as_slice().is_empty(), "{p:?}");
        r.unwrap().0
    }

    #[test]
    fn layout_is_line_anchored() {
        let t = "---\nname: a\ndescription: x --- y\n---\nbody ---\n";
        let l = layout(t).unwrap();
        assert_eq!(&t[l.frontmatter.clone()], "name: a\ndescription: x --- y\n");
        assert_eq!(&t[l.body], "body ---\n");
        let crlf = "---\r\nname: a\r\n---\r\nB";
        let l = layout(crlf).unwrap();
        assert_eq!(&crlf[l.frontmatter], "name: a\r\n");
        assert_eq!(&crlf[l.body], "B");
        let no_body = "---\nname: a\n---";
        assert_eq!(layout(no_body).unwrap().body, no_body.len()..no_body.len());
    }

    #[test]
    fn accepts_and_reports_ignored_fields() {
        let f = ok(
            "---\nname: pdf\ndescription: '  Reads PDFs.  '\nmodel: x\nallowed-tools: [Read, Write]\nmetadata:\n  a: {b: c}\n---\n# Body\n",
        );
        assert_eq!(f.name.as_str(), "pdf");
        assert_eq!(f.description, "Reads PDFs.");
        assert_eq!(f.ignored_fields, ["allowed-tools", "metadata", "model"]);
        assert_eq!(f.declared_version, None);
        let v = ok("---\nname: a\ndescription: d\nmetadata:\n  version: 1.2\n---\n");
        assert_eq!(v.declared_version.as_deref(), Some("1.2"));
        let top =
            ok("---\nname: a\ndescription: d\nversion: '2.0'\nmetadata:\n  version: '1'\n---\n");
        assert_eq!(top.declared_version.as_deref(), Some("2.0"));
    }

    #[test]
    fn each_rule_refuses() {
        use ProblemCode::*;
        let d = "description: d\n";
        let cases: Vec<(String, ProblemCode)> = vec![
            ("no fence\n".into(), FrontmatterMissing),
            ("\u{feff}---\nname: a\n---\n".into(), FrontmatterMissing),
            ("---\nname: a\n".into(), FrontmatterUnclosed),
            ("---\n- a\n---\n".into(), FrontmatterNotMapping),
            ("---\njust text\n---\n".into(), FrontmatterNotMapping),
            ("---\n# nothing\n---\n".into(), FrontmatterNotMapping),
            (format!("---\nname: a\n{d}name: b\n---\n"), DuplicateKey),
            (format!("---\nname: a\n{d}'name': b\n---\n"), DuplicateKey),
            (
                format!("---\nname: a\n{d}m:\n  k: 1\n  k: 2\n---\n"),
                DuplicateKey,
            ),
            (format!("---\nname: &x a\n{d}---\n"), YamlAnchor),
            (
                format!("---\nname: a\n{d}x: &y 1\nz: *y\n---\n"),
                YamlAnchor,
            ),
            (format!("---\nname: a\n{d}z: *nowhere\n---\n"), YamlAlias),
            (format!("---\nname: !!str a\n{d}---\n"), YamlTag),
            (format!("---\nname: a\n{d}x: !custom v\n---\n"), YamlTag),
            (format!("---\nname: a\n{d}1: x\n---\n"), NonStringKey),
            (format!("---\nname: a\n{d}true: x\n---\n"), NonStringKey),
            (format!("---\nname: a\n{d}? [a]\n: x\n---\n"), NonStringKey),
            (
                format!("---\nname: a\n{d}\"k\\x01\": x\n---\n"),
                KeyControlChar,
            ),
            (format!("---\n{d}---\n"), NameMissing),
            (format!("---\nname: Bad\n{d}---\n"), NameInvalid),
            (format!("---\nname: true\n{d}---\n"), NameInvalid),
            (format!("---\nname: [a]\n{d}---\n"), NameInvalid),
            ("---\nname: a\n---\n".into(), DescriptionMissing),
            (
                "---\nname: a\ndescription: '   '\n---\n".into(),
                DescriptionBlank,
            ),
            ("---\nname: a\ndescription:\n---\n".into(), DescriptionBlank),
            (
                "---\nname: a\ndescription: 12\n---\n".into(),
                DescriptionNotString,
            ),
            (
                "---\nname: a\ndescription: \"a\\tb\"\n---\n".into(),
                DescriptionControlChar,
            ),
            (
                "---\nname: a\ndescription: |\n  two\n  lines\n---\n".into(),
                DescriptionControlChar,
            ),
            ("---\nname: a\ndescription: [x\n---\n".into(), YamlSyntax),
        ];
        for (text, want) in cases {
            let got = codes(&text);
            assert!(got.contains(&want), "{text:?}: want {want:?}, got {got:?}");
        }
    }

    #[test]
    fn description_bound_counts_trimmed_characters() {
        let at = format!(
            "---\nname: a\ndescription: '  {}  '\n---\n",
            "é".repeat(1024)
        );
        assert_eq!(ok(&at).description.chars().count(), 1024);
        let over = format!("---\nname: a\ndescription: {}\n---\n", "x".repeat(1025));
        assert_eq!(codes(&over), [ProblemCode::DescriptionTooLong]);
    }

    #[test]
    fn frontmatter_and_body_bounds() {
        let pad = |n: usize| format!("x: '{}'\n", "y".repeat(n - 6));
        let head = "name: a\ndescription: d\n";
        let fm_at = format!("---\n{head}{}---\n", pad(4096 - head.len()));
        ok(&fm_at);
        let fm_over = format!("---\n{head}{}---\n", pad(4097 - head.len()));
        assert_eq!(codes(&fm_over), [ProblemCode::FrontmatterTooLarge]);
        let body_at = format!("---\n{head}---\n{}", "b".repeat(65536));
        ok(&body_at);
        let body_over = format!("---\n{head}---\n{}", "b".repeat(65537));
        assert_eq!(codes(&body_over), [ProblemCode::BodyTooLarge]);
    }

    #[test]
    fn problems_name_the_skill_md_line() {
        let mut p = Problems::new();
        check(
            "---\nname: a\ndescription: d\nname: b\n---\n",
            &limits::CHAMVI,
            &mut p,
        );
        assert_eq!(p.as_slice()[0].path.as_deref(), Some("SKILL.md"));
        assert!(p.as_slice()[0].message.starts_with("line 4: "), "{p:?}");
    }
}
