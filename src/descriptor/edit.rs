//! In-place rewrites of a descriptor's pins, for `skillfold update --write`, and appended
//! entries, for `skillfold pin --write` ([`append_source`], [`append_approved`]: only new lines
//! inserted).
//!
//! The descriptor is the operator's file: comments, key order, quoting, flow or block style and
//! line endings are theirs. A rewrite therefore never re-serialises it. [`locate`] reads the text
//! with the one YAML reader ([`crate::format::yaml`]), which knows the bytes each scalar was
//! written as, and finds the scalars an update may change: each Git source's `revision` (each OCI
//! source's `reference`, [`locate_images`]) and each approved entry's `version` and `hash`. [`Site::replace`] writes a new value in the style of
//! the old one (plain stays plain when the new value reads back as the same string, an image
//! reference included, otherwise it is double-quoted; quoted stays quoted the same way, except that a value holding a control
//! character is double-quoted, with escapes), and [`apply`] splices the edits into the
//! text, touching no other byte. A scalar that cannot be rewritten in place (a block scalar, an
//! alias, one with an anchor or a tag, an empty value) is refused with its line, never worked around.

mod append;

use std::ops::Range;

use crate::descriptor::code::DescriptorCode;
use crate::format::yaml::{self, Node, NodeKind, Style};
use crate::support::escape;

pub use append::{Scope, append_approved, append_source};

/// A scalar an update may rewrite: where it is written, and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// The value it holds.
    pub value: String,
    /// 1-based line where it is written.
    pub line: usize,
    /// The bytes it is written as.
    bytes: Range<usize>,
    /// How it is written, or why it cannot be rewritten in place.
    style: Result<Style, &'static str>,
}

/// The rewritable scalars of one Git source ([`locate`]) or OCI source ([`locate_images`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSites {
    /// Where the source is written, as `check` names it (`skills[0].git`,
    /// `agents.<name>.skills[1].git`, `skills[2].oci`).
    pub location: String,
    /// The scalar naming what is pinned: a Git source's `revision`, an OCI source's `reference`.
    pub revision: Option<Site>,
    /// Its approved entries, in the order written.
    pub approved: Vec<PinSites>,
}

/// The rewritable scalars of one approved entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinSites {
    /// Its `name`, when it is a scalar.
    pub name: Option<String>,
    /// Its `version`.
    pub version: Option<Site>,
    /// Its `hash`.
    pub hash: Option<Site>,
}

/// One replacement of a scalar's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    bytes: Range<usize>,
    text: String,
}

/// Why the descriptor cannot be rewritten in place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct EditError {
    /// 1-based line.
    pub line: usize,
    /// What stands in the way.
    pub message: String,
}

impl EditError {
    /// Stable error code.
    pub fn code(&self) -> DescriptorCode {
        DescriptorCode::NotRewritable
    }
}

impl Site {
    fn of(node: &Node) -> Option<Site> {
        let NodeKind::Scalar { value, style } = &node.kind else {
            return match node.kind {
                NodeKind::Alias => Some(Site {
                    value: String::new(),
                    line: node.position.line,
                    bytes: node.bytes.clone(),
                    style: Err("it is an alias (`*name`)"),
                }),
                _ => None,
            };
        };
        let style = if node.bytes.is_empty() {
            // Nothing is written where the value would go (`version:` with no value): there
            // are no bytes to replace, and inserting where the reader places the empty value
            // can land inside the key.
            Err("it is empty (nothing is written after the key)")
        } else if node.anchored {
            Err("it carries an anchor (`&name`) that other values may share")
        } else if node.tag.is_some() {
            Err("it carries a tag")
        } else if matches!(style, Style::Literal | Style::Folded) {
            Err("it is a block scalar (`|` or `>`)")
        } else {
            Ok(*style)
        };
        Some(Site {
            value: value.clone(),
            line: node.position.line,
            bytes: node.bytes.clone(),
            style,
        })
    }

    /// The edit that makes this scalar hold `value`, written as the old value was: plain stays
    /// plain when `value` reads back as that same string in any context (block or flow),
    /// otherwise it becomes double-quoted; single- and double-quoted stay so, except that a value
    /// holding a control character (which single quotes cannot escape) is double-quoted.
    pub fn replace(&self, value: &str) -> Result<Edit, EditError> {
        let style = self.style.map_err(|why| EditError {
            line: self.line,
            message: format!(
                "`{}` must change but cannot be rewritten in place: {why}; write it as a plain or quoted scalar",
                escape::text(&self.value)
            ),
        })?;
        let text = match style {
            Style::Plain if plain_safe(value) => value.to_owned(),
            // A single-quoted scalar cannot escape: a line break in it folds (or, in a flow
            // collection, breaks the indentation), and a raw control character is refused by the
            // descriptor's reader; such a value is double-quoted, with escapes, instead.
            Style::SingleQuoted if !value.chars().any(char::is_control) => {
                format!("'{}'", value.replace('\'', "''"))
            }
            _ => double_quoted(value),
        };
        Ok(Edit {
            bytes: self.bytes.clone(),
            text,
        })
    }
}

/// Whether `value` can be written as a plain scalar anywhere in the descriptor and read back as
/// the same string: letters, digits and `.`, `_`, `+`, `-` (never first), and not a value the
/// core schema reads as a number, a boolean or null. An image reference
/// (`registry:5000/team/skills@sha256:…`) is one too: `/`, `@` and `:` are taken inside a value
/// that holds a `/`, where a `:` is never followed by a space or a flow indicator (neither is
/// allowed) nor last, and no YAML 1.1 time (`1:30`) or timestamp can be read.
fn plain_safe(value: &str) -> bool {
    let reference = value.contains('/') && !value.ends_with(':');
    value.starts_with(|c: char| c.is_ascii_alphanumeric())
        && value.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '.' | '_' | '+' | '-')
                || (reference && matches!(c, '/' | '@' | ':'))
        })
        && yaml::plain_scalar_is_string(value)
        // YAML 1.1 readers also take these as booleans.
        && !matches!(
            value.to_ascii_lowercase().as_str(),
            "y" | "n" | "yes" | "no" | "on" | "off"
        )
}

/// `value` as a YAML double-quoted scalar.
fn double_quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Finds every Git source's rewritable scalars in descriptor `text`, in the order `check`
/// visits them (the defaults, then each agent's extras, agents by name).
pub fn locate(text: &str) -> Result<Vec<GitSites>, EditError> {
    locate_kind(text, SourceEntry::Git)
}

/// Finds every OCI source's rewritable scalars in descriptor `text` — its `reference` and each
/// approved entry's `version` and `hash` — in the order `check` visits them.
// `update` (the Git fetcher's build) rewrites images; the fuzz target, built without it, edits
// the Git sites alone.
#[cfg_attr(
    not(feature = "git"),
    expect(
        dead_code,
        reason = "only `update` (the Git fetcher's build) rewrites images"
    )
)]
pub fn locate_images(text: &str) -> Result<Vec<GitSites>, EditError> {
    locate_kind(text, SourceEntry::Oci)
}

/// Which sources to find: the key of their entry and of the scalar naming what is pinned.
#[derive(Clone, Copy)]
enum SourceEntry {
    Git,
    #[cfg_attr(
        not(feature = "git"),
        expect(
            dead_code,
            reason = "only `update` (the Git fetcher's build) rewrites images"
        )
    )]
    Oci,
}

impl SourceEntry {
    fn keys(self) -> (&'static str, &'static str) {
        match self {
            SourceEntry::Git => ("git", "revision"),
            SourceEntry::Oci => ("oci", "reference"),
        }
    }
}

fn locate_kind(text: &str, kind: SourceEntry) -> Result<Vec<GitSites>, EditError> {
    let root = yaml::parse(text).map_err(|e| EditError {
        line: e.position.line,
        message: format!("not YAML: {}", escape::text(&e.message)),
    })?;
    let mut found = Vec::new();
    let Some(root) = root else {
        return Ok(found);
    };
    if let Some(skills) = get(&root, "skills") {
        entries(skills, "skills", kind, &mut found);
    }
    if let Some(agents) = get(&root, "agents") {
        let mut named: Vec<(&str, &Node)> = mapping(agents)
            .iter()
            .filter_map(|(k, v)| Some((k.as_scalar()?.0, v)))
            .collect();
        named.sort_by(|a, b| a.0.cmp(b.0));
        for (agent, spec) in named {
            if let Some(skills) = get(spec, "skills") {
                entries(skills, &format!("agents.{agent}.skills"), kind, &mut found);
            }
        }
    }
    Ok(found)
}

/// Replaces the bytes of each edit in `text`; edits must not overlap.
pub fn apply(text: &str, mut edits: Vec<Edit>) -> Result<String, EditError> {
    edits.sort_by_key(|e| e.bytes.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for edit in &edits {
        if edit.bytes.start < at || edit.bytes.end > text.len() {
            return Err(EditError {
                line: line_of(text, edit.bytes.start.min(text.len())),
                message: "one scalar would be rewritten twice".to_owned(),
            });
        }
        out.push_str(&text[at..edit.bytes.start]);
        out.push_str(&edit.text);
        at = edit.bytes.end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

fn line_of(text: &str, byte: usize) -> usize {
    text[..byte].matches('\n').count() + 1
}

fn entries(skills: &Node, location: &str, kind: SourceEntry, found: &mut Vec<GitSites>) {
    let NodeKind::Sequence { items, .. } = &skills.kind else {
        return;
    };
    let (key, pinned) = kind.keys();
    for (i, item) in items.iter().enumerate() {
        let Some(git) = get(item, key) else {
            continue;
        };
        let approved = get(git, "approved")
            .map(|approved| match &approved.kind {
                NodeKind::Sequence { items, .. } => items
                    .iter()
                    .map(|pin| PinSites {
                        name: get(pin, "name")
                            .and_then(Node::as_scalar)
                            .map(|(name, _)| name.to_owned()),
                        version: get(pin, "version").and_then(Site::of),
                        hash: get(pin, "hash").and_then(Site::of),
                    })
                    .collect(),
                _ => Vec::new(),
            })
            .unwrap_or_default();
        found.push(GitSites {
            location: format!("{location}[{i}].{key}"),
            revision: get(git, pinned).and_then(Site::of),
            approved,
        });
    }
}

fn mapping(node: &Node) -> &[(Node, Node)] {
    match &node.kind {
        NodeKind::Mapping { entries, .. } => entries,
        _ => &[],
    }
}

/// The value of `key` in mapping `node` (the last one, as a YAML reader that allows duplicates
/// would keep; the descriptor's parser refuses duplicates anyway).
fn get<'n>(node: &'n Node, key: &str) -> Option<&'n Node> {
    mapping(node)
        .iter()
        .rev()
        .find(|(k, _)| k.as_scalar().is_some_and(|(k, _)| k == key))
        .map(|(_, v)| v)
}

crate::support::error_code::coded_by_code!(EditError);

#[cfg(test)]
mod tests {
    use super::*;

    const DESCRIPTOR: &str = "# the team's skills\r\nskills:\r\n  - git:\r\n      source: https://example.com/s.git   # upstream\r\n      revision: \"0123456789abcdef0123456789abcdef01234567\"\r\n      directory: /c\r\n      approved:\r\n        - { name: pdf, version: 1.0.0, hash: 'aa' } # flow\r\n        - name: docx\r\n          version: \"<version>\"\r\n          hash: bb\r\nagents:\r\n  writer:\r\n    skills:\r\n      - git: { source: x, revision: cc, directory: /d, approved: [ { name: a, version: '1', hash: dd } ] }\r\n";

    #[test]
    fn an_oci_sources_reference_and_pins_are_found_apart_from_the_git_sources() {
        let text = format!(
            "{DESCRIPTOR_LF}  - oci:\n      reference: 'r.example/a@sha256:{0}'  # pinned\n      directory: /o\n      track: stable\n      approved: [ {{ name: b, version: 2, hash: ee }} ]\n",
            "0".repeat(64)
        );
        let images = locate_images(&text).unwrap();
        assert_eq!(images.len(), 1);
        assert_eq!(images[0].location, "skills[1].oci");
        let reference = images[0].revision.as_ref().unwrap();
        assert_eq!(
            reference.value,
            format!("r.example/a@sha256:{}", "0".repeat(64))
        );
        assert_eq!(images[0].approved[0].hash.as_ref().unwrap().value, "ee");
        // The Git sources are what `locate` finds, as before.
        assert!(
            locate(&text)
                .unwrap()
                .iter()
                .all(|s| s.location.ends_with(".git"))
        );
        let new = format!("r.example/a@sha256:{}", "1".repeat(64));
        let edited = apply(&text, vec![reference.replace(&new).unwrap()]).unwrap();
        assert_eq!(edited, text.replace(&reference.value, &new));
        assert!(edited.contains(&format!("'{new}'  # pinned")));
    }

    const DESCRIPTOR_LF: &str = "skills:\n  - git: { source: x, revision: cc, directory: /d, approved: [ { name: a, version: '1', hash: dd } ] }\n";

    #[test]
    fn every_rewritable_scalar_is_found_with_its_value() {
        let sites = locate(DESCRIPTOR).unwrap();
        assert_eq!(sites.len(), 2);
        assert_eq!(sites[0].location, "skills[0].git");
        assert_eq!(
            sites[0].revision.as_ref().unwrap().value,
            "0123456789abcdef0123456789abcdef01234567"
        );
        assert_eq!(sites[0].approved[0].name.as_deref(), Some("pdf"));
        assert_eq!(sites[0].approved[0].hash.as_ref().unwrap().value, "aa");
        assert_eq!(
            sites[0].approved[1].version.as_ref().unwrap().value,
            "<version>"
        );
        assert_eq!(sites[1].location, "agents.writer.skills[0].git");
        assert_eq!(sites[1].approved[0].hash.as_ref().unwrap().line, 15);
    }

    #[test]
    fn a_rewrite_touches_only_the_changed_scalars_and_keeps_their_style() {
        let sites = locate(DESCRIPTOR).unwrap();
        let edits = vec![
            sites[0]
                .revision
                .as_ref()
                .unwrap()
                .replace(&"f".repeat(40))
                .unwrap(),
            sites[0].approved[0]
                .version
                .as_ref()
                .unwrap()
                .replace("1.1.0")
                .unwrap(),
            sites[0].approved[0]
                .hash
                .as_ref()
                .unwrap()
                .replace("it's")
                .unwrap(),
            sites[0].approved[1]
                .version
                .as_ref()
                .unwrap()
                .replace("2.0")
                .unwrap(),
            sites[1].approved[0]
                .hash
                .as_ref()
                .unwrap()
                .replace("ee")
                .unwrap(),
        ];
        let out = apply(DESCRIPTOR, edits).unwrap();
        let expected = DESCRIPTOR
            .replace(
                "\"0123456789abcdef0123456789abcdef01234567\"",
                &format!("\"{}\"", "f".repeat(40)),
            )
            .replace("version: 1.0.0", "version: 1.1.0")
            .replace("hash: 'aa'", "hash: 'it''s'")
            .replace("\"<version>\"", "\"2.0\"")
            .replace("hash: dd", "hash: ee");
        assert_eq!(out, expected);
        // And it reads back as the values written.
        let again = locate(&out).unwrap();
        assert_eq!(again[0].approved[0].hash.as_ref().unwrap().value, "it's");
        assert_eq!(again[0].approved[1].version.as_ref().unwrap().value, "2.0");
    }

    #[test]
    fn a_plain_value_that_would_read_back_differently_is_quoted() {
        let text = "skills:\n  - git:\n      revision: abc\n      approved:\n        - { name: a, version: v1, hash: h }\n";
        let sites = locate(text).unwrap();
        let version = sites[0].approved[0].version.as_ref().unwrap();
        for (value, written) in [
            ("1.0", "\"1.0\""),
            ("2", "\"2\""),
            ("yes", "\"yes\""),
            ("1,0", "\"1,0\""),
            ("#1", "\"#1\""),
            ("a\"b", "\"a\\\"b\""),
            ("1.0.0-rc.1+b7", "1.0.0-rc.1+b7"),
        ] {
            let out = apply(text, vec![version.replace(value).unwrap()]).unwrap();
            assert!(
                out.contains(&format!("version: {written}, hash")),
                "{value}: {out}"
            );
            let again = locate(&out).unwrap();
            assert_eq!(again[0].approved[0].version.as_ref().unwrap().value, value);
        }
    }

    #[test]
    fn a_plain_image_reference_stays_plain_in_block_and_flow() {
        let old = format!("127.0.0.1:5000/team/skills@sha256:{}", "0".repeat(64));
        let new = format!("127.0.0.1:5000/team/skills@sha256:{}", "1".repeat(64));
        for text in [
            format!("skills:\n  - oci:\n      reference: {old}  # v1\n      approved: []\n"),
            format!("skills:\n  - oci: {{ reference: {old}, approved: [] }}\n"),
        ] {
            let images = locate_images(&text).unwrap();
            let reference = images[0].revision.as_ref().unwrap();
            assert_eq!(reference.value, old);
            let edited = apply(&text, vec![reference.replace(&new).unwrap()]).unwrap();
            assert_eq!(edited, text.replace(&old, &new), "plain stays plain");
            let again = locate_images(&edited).unwrap();
            assert_eq!(again[0].revision.as_ref().unwrap().value, new);
        }
        // Without a `/`, a `:` could be a YAML 1.1 time; a `:` last would end a key.
        for value in ["1:30", "a/b:", "a/b: c", "a/b,c", "@a/b", "a/b #c"] {
            assert!(!plain_safe(value), "{value}");
        }
    }

    #[test]
    fn a_scalar_that_cannot_be_rewritten_in_place_is_refused_with_its_line() {
        for (text, why) in [
            ("skills:\n  - git:\n      revision: &r abc\n", "anchor"),
            (
                "x: &r abc\nskills:\n  - git:\n      revision: *r\n",
                "alias",
            ),
            ("skills:\n  - git:\n      revision: !!str abc\n", "tag"),
            (
                "skills:\n  - git:\n      revision: |\n        abc\n",
                "block scalar",
            ),
        ] {
            let sites = locate(text).unwrap();
            let error = sites[0]
                .revision
                .as_ref()
                .unwrap()
                .replace("def")
                .unwrap_err();
            assert!(error.message.contains(why), "{text}: {error}");
            assert!(error.line >= 3, "{text}: {error}");
        }
    }

    #[test]
    fn overlapping_edits_are_refused_with_their_line() {
        let text = "# one\nskills:\n  - git:\n      revision: abc\n";
        let site = locate(text).unwrap()[0].revision.clone().unwrap();
        let edits = vec![site.replace("x").unwrap(), site.replace("y").unwrap()];
        let error = apply(text, edits).unwrap_err();
        assert_eq!(error.line, 4, "{error}");
    }

    #[test]
    fn edits_may_touch_each_other_and_the_end_of_the_text() {
        let text = "revision: abc";
        let edits = vec![
            Edit {
                bytes: 10..11,
                text: "x".into(),
            },
            Edit {
                bytes: 11..13,
                text: "yz!".into(),
            },
        ];
        assert_eq!(apply(text, edits).unwrap(), "revision: xyz!");
        let past = vec![Edit {
            bytes: 10..14,
            text: "x".into(),
        }];
        assert!(apply(text, past).is_err());
    }

    #[test]
    fn double_quoting_escapes_quotes_backslashes_and_controls() {
        assert_eq!(double_quoted("a\"b\\c\u{7}"), "\"a\\\"b\\\\c\\u0007\"");
    }

    /// Found by the `descriptor_edit` fuzz target: a single-quoted scalar rewritten with a value
    /// holding a line break gave text that is not YAML, and one holding a control character
    /// text the descriptor's reader refuses. Every value reads back as itself, in both readers.
    #[test]
    fn values_a_quoted_scalar_cannot_hold_raw_are_escaped() {
        let text = "skills:\n  - git: { source: s, revision: 'cc', directory: d, approved: [ { name: a, version: \"1\", hash: 'h' } ] }\n";
        for value in [
            "line\nbreak",
            "cr\rlf",
            "bell\u{7}",
            "tab\there",
            "nel\u{85}",
            "ls\u{2028}ps\u{2029}",
            "bom\u{feff}",
            "it's \"q\" \\ é",
        ] {
            let sites = locate(text).expect("sites");
            let pin = &sites[0].approved[0];
            let edits = vec![
                sites[0]
                    .revision
                    .as_ref()
                    .expect("revision")
                    .replace(value)
                    .expect("edit"),
                pin.version
                    .as_ref()
                    .expect("version")
                    .replace(value)
                    .expect("edit"),
                pin.hash
                    .as_ref()
                    .expect("hash")
                    .replace(value)
                    .expect("edit"),
            ];
            let out = apply(text, edits).expect("applied");
            let again = locate(&out).expect("still YAML");
            assert_eq!(
                again[0].revision.as_ref().expect("revision").value,
                value,
                "{out}"
            );
            assert_eq!(
                again[0].approved[0].hash.as_ref().expect("hash").value,
                value
            );
            let descriptor =
                crate::descriptor::parse(&out).unwrap_or_else(|e| panic!("{value:?}: {e}\n{out}"));
            let crate::descriptor::SkillSource::Git(git) = &descriptor.skills[0] else {
                panic!("a Git source");
            };
            assert_eq!(git.revision, value, "{out}");
            assert_eq!(git.approved[0].version, value, "{out}");
            assert_eq!(git.approved[0].hash, value, "{out}");
        }
    }

    /// Found by the `descriptor_edit` fuzz target: an empty value (`version: ,` in a flow
    /// mapping) was rewritten by inserting the new value into its key (`version"1.1": ,`).
    #[test]
    fn an_empty_value_is_refused_not_inserted_into_its_key() {
        for text in [
            "skills:\n  - git: { source: s, revision: r, directory: d, approved: [ { name: a, version: , hash: h } ] }\n",
            "skills:\n  - git:\n      source: s\n      revision:\n      directory: d\n      approved: []\n",
        ] {
            let sites = locate(text).expect("sites");
            let site = match sites[0].approved.first() {
                Some(pin) => pin.version.as_ref(),
                None => sites[0].revision.as_ref(),
            }
            .expect("the empty scalar is a site");
            let err = site.replace("1.1").expect_err("an empty value is refused");
            assert!(err.message.contains("empty"), "{err}");
        }
    }
}
