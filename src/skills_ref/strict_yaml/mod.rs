//! The YAML dialect of skills-ref 0.1.1: `strictyaml.load(text)` (strictyaml 1.7.3 with its
//! vendored ruamel.yaml, schema `Any()`), reproduced down to the text of its error messages.
//!
//! # Why a scanner of our own
//!
//! [`crate::format::yaml`] (saphyr) sees anchors, tags and flow style, but its errors, their positions
//! and the order in which problems are found are saphyr's. skills-ref prints `str(e)` of
//! ruamel's exceptions — context, marks with a source snippet and a caret, problem — and which
//! error wins depends on how far ruamel's scanner has looked ahead (simple-key lookahead, the
//! round-trip scanner's comment tokens). So this module re-implements that pipeline's
//! *behaviour*: a reader over code points with ruamel's line/column rules, a token scanner
//! with the same simple-key and indentation bookkeeping, the block-style parser, the composer
//! and the constructor checks strictyaml adds. The code is ours; the algorithm follows the
//! documented behaviour of PyYAML/ruamel so that every message and mark comes out the same.
//!
//! # The dialect
//!
//! - Every scalar is a string: `123`, `true`, `null`, `~`, dates stay as written; `key:` is `""`.
//! - Refused (`Invalid YAML` in skills-ref): flow collections `[…]`/`{…}` (when the parser
//!   reaches them), anchors, tags, aliases (never defined, since anchors are refused), duplicate
//!   keys (`name` and `'name'` too), sibling mappings at different indentation, a scalar merge
//!   value, a second document, and everything ruamel's scanner refuses (tabs where a token
//!   would start, `@`/`` ` ``/`%` starting a value, `: ` inside a plain value, …).
//! - A merge key `<<` with a mapping value is accepted and its keys are dropped, as strictyaml's
//!   `.data` does.
//! - Inputs on which strictyaml itself crashes instead of raising a YAML error (raw control
//!   characters, an escape outside Unicode, a lone surrogate escape, a sequence as a key, two
//!   merge keys in one mapping) give [`StrictYamlError::Unsupported`]: skillfold reports them as
//!   errors rather than mimicking a traceback.
//!
//! Comment bookkeeping of ruamel's round-trip scanner is modelled only as far as it changes
//! which tokens are scanned and where empty values are marked.
//!
//! # The stages
//!
//! The pipeline is ruamel's, one private module per stage, each handing its output to the
//! next:
//!
//! - `reader`: code points with ruamel's line/column rules, and the marks that point into them;
//! - `scanner`: tokens, with the simple-key, indentation and comment bookkeeping (its children
//!   scan the long tokens: `directives`, `properties` (anchors, aliases, tags) and `scalars`);
//! - `parser`: block-style events;
//! - `composer`: one document's tree of nodes;
//! - `constructor`: the checks `StrictYAMLConstructor` adds, then the [`Value`] (`value`, what
//!   [`load`] returns);
//! - `errors`: the marked errors every stage raises, rendered as ruamel's `str(e)`.

mod composer;
mod constructor;
mod errors;
mod parser;
mod reader;
mod scanner;
mod value;

use composer::{ComposedNode, Composer};
use constructor::{Checker, build};
use errors::Fail;
use parser::Parser;
use reader::Reader;
use scanner::Scanner;

pub use value::Value;

/// Why the frontmatter could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrictYamlError {
    /// strictyaml raises a YAML error; this is `str(e)`, byte for byte.
    Yaml(String),
    /// A character YAML does not allow in a stream (a control character, U+FFFE, …). skills-ref
    /// crashes with a traceback here.
    ControlChar {
        /// The character.
        ch: char,
        /// 1-based line in the frontmatter text (the `SKILL.md` line, since the text starts on
        /// the line of the opening fence).
        line: usize,
    },
    /// Input on which strictyaml crashes with something other than a YAML error.
    Unsupported(String),
}

/// Loads frontmatter text the way `strictyaml.load(text).data` does.
pub fn load(text: &str) -> Result<Value, StrictYamlError> {
    if let Some((i, ch)) = text.char_indices().find(|&(_, c)| !stream_printable(c)) {
        let line = text[..i].matches('\n').count() + 1;
        return Err(StrictYamlError::ControlChar { ch, line });
    }
    let mut buf: Vec<char> = text.chars().collect();
    buf.push('\0');
    let mut composer = Composer {
        parser: Parser::new(Scanner::new(Reader::new(buf))),
        depth: 0,
    };
    let result = composer.single_node().and_then(|root| {
        let mut checker = Checker::default();
        if let Some(root) = &root {
            checker.run(root)?;
        }
        Ok(root)
    });
    match result {
        Ok(Some(root @ (ComposedNode::Map { .. } | ComposedNode::Seq { .. }))) => Ok(build(&root)),
        Ok(_) => Ok(Value::Str(text.to_owned())),
        Err(Fail::Marked(e)) => Err(StrictYamlError::Yaml(
            e.render(&composer.parser.scanner.reader.buf),
        )),
        Err(Fail::Crash(why)) => Err(StrictYamlError::Unsupported(why)),
    }
}

/// ruamel's `Reader.NON_PRINTABLE` complement: what a YAML stream may contain.
fn stream_printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml_err(text: &str) -> String {
        match load(text) {
            Err(StrictYamlError::Yaml(m)) => m,
            other => panic!("expected a YAML error, got {other:?}"),
        }
    }

    fn map(text: &str) -> Vec<(String, Value)> {
        match load(text) {
            Ok(Value::Map(m)) => m,
            other => panic!("expected a mapping, got {other:?}"),
        }
    }

    fn s(v: &str) -> Value {
        Value::Str(v.into())
    }

    #[test]
    fn every_scalar_is_a_string() {
        let m = map("\na: 123\nb: true\nc: null\nd: ~\ne:\nf: 2024-01-01\n");
        let values: Vec<&Value> = m.iter().map(|(_, v)| v).collect();
        assert_eq!(
            values,
            [
                &s("123"),
                &s("true"),
                &s("null"),
                &s("~"),
                &s(""),
                &s("2024-01-01")
            ]
        );
    }

    #[test]
    fn block_scalars_and_quotes() {
        let m = map(
            "a: |\n  x\n  y\n\nb: >-\n  p\n  q\nc: 'it''s'\nd: \"\\u00e9\\t\"\ne: plain\n  folded\n",
        );
        assert_eq!(m[0].1, s("x\ny\n"));
        assert_eq!(m[1].1, s("p q"));
        assert_eq!(m[2].1, s("it's"));
        assert_eq!(m[3].1, s("é\t"));
        assert_eq!(m[4].1, s("plain folded"));
    }

    #[test]
    fn nested_collections_and_merge() {
        let m = map("a:\n  - x\n  - y\nb:\n  k: v\n<<:\n  z: w\n");
        assert_eq!(m[0].1, Value::List(vec![s("x"), s("y")]));
        assert_eq!(m[1].1, Value::Map(vec![("k".into(), s("v"))]));
        assert_eq!(m.len(), 2, "merged keys are dropped");
        assert_eq!(map("a: =\n")[0].1, Value::Tagged("=".into()));
    }

    #[test]
    fn refusals_carry_rueamels_text() {
        assert_eq!(
            yaml_err("\nname: &n x\n"),
            "While scanning\n  in \"<unicode string>\", line 2, column 7:\n    name: &n x\n          ^ (line: 2)\nFound confusing disallowed anchor token (surround with ' and ' to make text appear literally)\n  in \"<unicode string>\", line 2, column 9:\n    name: &n x\n            ^ (line: 2)"
        );
        assert!(yaml_err("a: [b]\n").starts_with("While scanning"));
        assert!(yaml_err("a: !!str b\n").contains("Found disallowed tag tokens"));
        assert!(yaml_err("a: *x\n").starts_with("found undefined alias 'x'"));
        assert!(yaml_err("a: 1\na: 2\n").contains("Duplicate key 'a' found"));
        assert!(yaml_err("a: b: c\n").starts_with("mapping values are not allowed here"));
        assert!(yaml_err("a: x\t\n").contains("found character '\\t' that cannot start any token"));
    }

    #[test]
    fn crashes_are_reported_as_unsupported() {
        assert!(matches!(
            load("a: \u{7}\n"),
            Err(StrictYamlError::ControlChar {
                ch: '\u{7}',
                line: 1
            })
        ));
        assert!(matches!(
            load("a: \"\\ud800\"\n"),
            Err(StrictYamlError::Unsupported(_))
        ));
        assert!(matches!(
            load("? - a\n: b\n"),
            Err(StrictYamlError::Unsupported(_))
        ));
    }

    #[test]
    fn scalar_and_empty_documents_are_not_mappings() {
        assert_eq!(load("\n").unwrap(), s("\n"));
        assert_eq!(load("# c\n").unwrap(), s("# c\n"));
        assert_eq!(load("x\n").unwrap(), s("x\n"));
        assert!(matches!(load("- a\n").unwrap(), Value::List(_)));
    }
}
