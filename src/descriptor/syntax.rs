//! A descriptor that is not YAML, or not a descriptor, said so a person can act on it
//! ([`SyntaxError`]): the line and column (shown as `FILE:LINE:COLUMN`), the offending line with
//! a caret under the column, and plain words for the parser's common messages.
//!
//! The two readers of the descriptor (`saphyr-parser`, which bounds the nesting first, and
//! `serde_yaml`, which deserialises it) word their messages like libyaml: "mapping values are not
//! allowed in this context". Each common one is said in plain words, the parser's own kept after
//! them. A tab is reported where it is: the scanner names the end of the scalar before it (the
//! line before), so the position moves on to the first tab from there.

use std::fmt;

use crate::support::escape;

/// Characters of the offending line shown; a longer line is cut around the column.
const MAX_EXCERPT_CHARS: usize = 100;

/// Why descriptor text is not a descriptor, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// What is wrong, in plain words when the parser's message is a common one (escaped).
    pub message: String,
    /// 1-based line and column, when the parser gave them.
    pub at: Option<(usize, usize)>,
    /// The offending line (escaped, cut to `MAX_EXCERPT_CHARS` characters) and the caret's column in it
    /// (0-based, in characters).
    pub excerpt: Option<(String, usize)>,
}

impl SyntaxError {
    /// A refusal without a position (not UTF-8, for example).
    pub fn plain(message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            message: message.into(),
            at: None,
            excerpt: None,
        }
    }

    /// The parser's `raw` message about `text`, at 1-based `line` and `column` when known.
    pub fn new(text: &str, raw: &str, at: Option<(usize, usize)>) -> SyntaxError {
        let at = match at {
            Some(at) if is_about_a_tab(raw) => Some(first_tab_from(text, at).unwrap_or(at)),
            other => other,
        };
        let message = match plain_words(raw) {
            Some(plain) => format!("{plain} (YAML: {})", escape::text(raw)),
            None => escape::text(raw).to_string(),
        };
        SyntaxError {
            message,
            at,
            excerpt: at.and_then(|(line, column)| excerpt(text, line, column)),
        }
    }

    /// A `serde_yaml` error about `text`: its message without the position it appends.
    pub fn of_serde(text: &str, e: &serde_yaml::Error) -> SyntaxError {
        let full = e.to_string();
        let Some(location) = e.location() else {
            return SyntaxError::new(text, &full, None);
        };
        let (line, column) = (location.line(), location.column());
        let suffix = format!(" at line {line} column {column}");
        let raw = full.strip_suffix(&suffix).unwrap_or(&full);
        SyntaxError::new(text, raw, Some((line, column)))
    }

    /// The offending line and a caret under the column, as two lines to show under the error
    /// (`  12 | text`, `     |    ^`); none without a position.
    pub fn excerpt_lines(&self) -> Vec<String> {
        let (Some((line, _)), Some((text, caret))) = (self.at, &self.excerpt) else {
            return Vec::new();
        };
        let number = line.to_string();
        let gutter = " ".repeat(number.len());
        vec![
            format!("  {number} | {text}"),
            format!("  {gutter} | {}^", " ".repeat(*caret)),
        ]
    }
}

impl crate::support::error_code::Coded for SyntaxError {
    /// Always `descriptor_syntax`.
    fn error_code(&self) -> crate::support::error_code::ErrorCode {
        crate::descriptor::code::DescriptorCode::DescriptorSyntax.into()
    }
}

impl std::error::Error for SyntaxError {}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some((line, column)) => write!(f, "{line}:{column}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

fn is_about_a_tab(raw: &str) -> bool {
    raw.contains("found a tab") || raw.contains("tabs disallowed") || raw.contains("tab character")
}

/// The 1-based line and column of the first tab at or after `at` in `text`.
fn first_tab_from(text: &str, (line, column): (usize, usize)) -> Option<(usize, usize)> {
    for (index, content) in text.split('\n').enumerate().skip(line.saturating_sub(1)) {
        let from = if index + 1 == line {
            column.saturating_sub(1)
        } else {
            0
        };
        if let Some(tab) = content.chars().skip(from).position(|c| c == '\t') {
            return Some((index + 1, from + tab + 1));
        }
    }
    None
}

/// Line `line` of `text` (escaped; cut around `column` when long) and the caret's position in
/// what is shown; none past the end (a refusal at the end of the text).
fn excerpt(text: &str, line: usize, column: usize) -> Option<(String, usize)> {
    let content = text.split('\n').nth(line.checked_sub(1)?)?;
    let chars: Vec<char> = content.trim_end_matches('\r').chars().collect();
    let column = column.saturating_sub(1).min(chars.len());
    let start = column.saturating_sub(MAX_EXCERPT_CHARS / 2);
    let end = (start + MAX_EXCERPT_CHARS).min(chars.len());
    let mut shown = String::new();
    let mut caret = 0;
    if start > 0 {
        shown.push('…');
        caret += 1;
    }
    for (i, c) in chars[start..end].iter().enumerate() {
        // A tab is shown as `\t` (what the escaping writes): two columns wide.
        let piece = escape::text(c.encode_utf8(&mut [0; 4])).to_string();
        if start + i < column {
            caret += piece.chars().count();
        }
        shown.push_str(&piece);
    }
    if end < chars.len() {
        shown.push('…');
    }
    Some((shown, caret))
}

/// Plain words for the parsers' common messages (libyaml's wording, which both use).
fn plain_words(raw: &str) -> Option<&'static str> {
    const PLAIN: &[(&str, &str)] = &[
        (
            "found a tab",
            "a tab where YAML needs spaces: indent with spaces only",
        ),
        (
            "tabs disallowed",
            "a tab where YAML needs spaces: indent with spaces only",
        ),
        (
            "mapping values are not allowed",
            "a `:` where no key can start: quote a value that holds `: `, or put the key on a \
             line of its own",
        ),
        (
            "did not find expected key",
            "this line is not indented like the keys around it (or a `- ` item is out of place)",
        ),
        (
            "did not find expected '-' indicator",
            "this line is not indented like the list items around it",
        ),
        (
            "block sequence entries are not allowed",
            "a `- ` list item where a value was expected: start the list on the next line, indented",
        ),
        (
            "expected ',' or ']'",
            "a `[` list is not closed: add the missing `,` or `]`",
        ),
        (
            "expected ',' or '}'",
            "a `{` mapping is not closed: add the missing `,` or `}`",
        ),
        (
            "could not find expected ':'",
            "a key without its `:` (or a key that runs over two lines)",
        ),
        (
            "did not find expected node content",
            "a value is missing here (or starts with a character that needs quotes)",
        ),
        (
            "found character that cannot start any token",
            "a character that cannot start a value here (`@`, `` ` ``, `%`): put the value in \
             quotes",
        ),
        (
            "found unexpected end of stream",
            "the file ends inside a quoted string: add the closing quote",
        ),
        (
            "found unknown escape character",
            "an unknown `\\` escape in a double-quoted string: use single quotes, or `\\\\`",
        ),
        (
            "did not find expected comment or line break",
            "something follows a value on its line: quote the whole value, or start a new line",
        ),
    ];
    PLAIN
        .iter()
        .find(|(libyaml, _)| raw.contains(libyaml))
        .map(|(_, plain)| *plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tab_is_reported_on_its_own_line_with_a_caret() {
        let text = "skills:\n  - local:\n      name: x\n\t  version: 1\n";
        let e = SyntaxError::new(
            text,
            "while scanning a plain scalar, found a tab",
            Some((3, 13)),
        );
        assert_eq!(e.at, Some((4, 1)));
        assert!(
            e.to_string()
                .starts_with("4:1: a tab where YAML needs spaces"),
            "{e}"
        );
        assert_eq!(e.excerpt_lines(), ["  4 | \\t  version: 1", "    | ^"]);
    }

    #[test]
    fn common_messages_get_plain_words_and_keep_the_parser_s() {
        let e = SyntaxError::new(
            "a: b: c\n",
            "mapping values are not allowed in this context",
            Some((1, 5)),
        );
        assert_eq!(
            e.to_string(),
            "1:5: a `:` where no key can start: quote a value that holds `: `, or put the key on \
             a line of its own (YAML: mapping values are not allowed in this context)"
        );
        assert_eq!(e.excerpt_lines(), ["  1 | a: b: c", "    |     ^"]);
        let other = SyntaxError::new("x", "unknown field `y`", None);
        assert_eq!(other.to_string(), "unknown field `y`");
        assert!(other.excerpt_lines().is_empty());
    }

    #[test]
    fn a_long_line_is_cut_around_the_column_and_escaped() {
        let long = format!("{}\u{1b}{}", "a".repeat(300), "b".repeat(300));
        let e = SyntaxError::new(&long, "did not find expected key", Some((1, 302)));
        let lines = e.excerpt_lines();
        assert!(
            lines[0].contains("\\u{1b}") && lines[0].contains('…'),
            "{}",
            lines[0]
        );
        let caret = lines[1].find('^').expect("a caret") - "  1 | ".len();
        let shown: String = lines[0]["  1 | ".len()..]
            .chars()
            .skip(caret)
            .take(1)
            .collect();
        assert_eq!(shown, "b");
    }

    #[test]
    fn serde_yaml_s_position_is_taken_off_its_message() {
        let text = "skills: 3\n";
        let e = serde_yaml::from_str::<crate::descriptor::Descriptor>(text).unwrap_err();
        let got = SyntaxError::of_serde(text, &e);
        assert_eq!(got.at.map(|(line, _)| line), Some(1));
        assert!(!got.message.contains(" at line "), "{}", got.message);
    }
}
