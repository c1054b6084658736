//! The one escaping function for untrusted text in human-readable output.
//!
//! Names, paths, URLs and values that came from outside (a tree entry, a file name, a descriptor
//! value, a frontmatter key) may hold characters that rewrite a terminal: a newline forges a new
//! log line, `ESC [ 8 m` hides what follows, a right-to-left override reorders it. Every
//! human-readable line that shows such a string passes it through [`text`] (or [`bytes`] for raw
//! bytes that may not be UTF-8), which renders it unambiguously on one line:
//!
//! - `\` is written `\\`, so an escape in the output always means an escape;
//! - `\n`, `\r`, `\t` are written as those two-character escapes;
//! - every other C0 control, DEL and every C1 control (U+0080–U+009F) is written `\u{XX}`;
//! - the invisible characters that reorder or hide text — bidi embeddings, overrides and isolates
//!   (U+202A–U+202E, U+2066–U+2069), zero-width and direction marks (U+200B–U+200F), the line
//!   and paragraph separators (U+2028, U+2029), the byte-order mark (U+FEFF), the word joiner
//!   and invisible operators (U+2060–U+2064), the tag characters (U+E0000–U+E007F) and the
//!   supplementary variation selectors (U+E0100–U+E01EF) — are written `\u{XXXX}` too;
//! - in [`bytes`], a byte that is not part of valid UTF-8 is written `\xNN`.
//!
//! Everything else (printable ASCII and printable non-ASCII text) is shown as it is. JSON output
//! does not use this: it is written by [`super::json_text`], which escapes the same characters
//! the JSON way.

use std::fmt::{self, Display, Write};

/// Untrusted text, displayed escaped. See the module doc for the rules.
#[derive(Debug, Clone, Copy)]
pub struct Text<'a>(&'a str);

/// Untrusted bytes (perhaps not UTF-8), displayed escaped. See the module doc for the rules.
#[derive(Debug, Clone, Copy)]
pub struct Bytes<'a>(&'a [u8]);

/// Escapes untrusted text for a human-readable line: a newline is shown as the two characters
/// `\n`, an ESC as `\u{1b}` (the test `the_doc_examples_hold` checks each example here).
pub fn text(s: &str) -> Text<'_> {
    Text(s)
}

/// Escapes untrusted bytes for a human-readable line; invalid UTF-8 is shown as `\xNN` (the
/// byte 0xFF as the four characters `\xff`).
pub fn bytes(b: &[u8]) -> Bytes<'_> {
    Bytes(b)
}

/// Escapes a file-system path for a human-readable line: its bytes, as [`bytes`] shows them
/// (`a<newline>b/c` is shown as `a\nb/c`).
pub fn path(p: &std::path::Path) -> Bytes<'_> {
    bytes(p.as_os_str().as_encoded_bytes())
}

/// Whether `c` is shown escaped rather than as it is.
pub fn needs_escape(c: char) -> bool {
    matches!(c,
        '\\'
        | '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{200b}'..='\u{200f}'
        | '\u{2028}' | '\u{2029}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}'
        | '\u{e0000}'..='\u{e007f}'
        | '\u{e0100}'..='\u{e01ef}')
}

fn write_char(f: &mut fmt::Formatter<'_>, c: char) -> fmt::Result {
    match c {
        '\\' => f.write_str("\\\\"),
        '\n' => f.write_str("\\n"),
        '\r' => f.write_str("\\r"),
        '\t' => f.write_str("\\t"),
        c if needs_escape(c) => write!(f, "\\u{{{:x}}}", c as u32),
        c => f.write_char(c),
    }
}

fn write_str(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    // Fast path: most input needs nothing.
    if !s.chars().any(needs_escape) {
        return f.write_str(s);
    }
    s.chars().try_for_each(|c| write_char(f, c))
}

impl Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_str(f, self.0)
    }
}

impl Display for Bytes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.0.utf8_chunks() {
            write_str(f, chunk.valid())?;
            for b in chunk.invalid() {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_doc_examples_hold() {
        assert_eq!(text("x\nok: \u{1b}[8m").to_string(), "x\\nok: \\u{1b}[8m");
        assert_eq!(bytes(b"a\xffb\n").to_string(), "a\\xffb\\n");
        assert_eq!(path(std::path::Path::new("a\nb/c")).to_string(), "a\\nb/c");
    }

    #[test]
    fn forged_log_line_stays_on_one_line() {
        let hostile = "x\nok: skills[0].git: all bundles verified and published\n\u{1b}[8m";
        let shown = text(hostile).to_string();
        assert!(!shown.contains('\n'));
        assert!(!shown.contains('\u{1b}'));
        assert_eq!(
            shown,
            "x\\nok: skills[0].git: all bundles verified and published\\n\\u{1b}[8m"
        );
    }

    #[test]
    fn every_control_and_reordering_character_is_escaped() {
        for c in (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32) {
            let shown = text(&c.to_string()).to_string();
            assert!(shown.starts_with('\\'), "{c:?} shown as {shown:?}");
        }
        for c in [
            '\u{202e}',
            '\u{2066}',
            '\u{200b}',
            '\u{200f}',
            '\u{2028}',
            '\u{feff}',
            '\u{2060}',
            '\u{e0041}',
            '\u{e007f}',
            '\u{e0100}',
        ] {
            assert_eq!(
                text(&c.to_string()).to_string(),
                format!("\\u{{{:x}}}", c as u32)
            );
        }
    }

    #[test]
    fn printable_text_is_unchanged_and_backslash_is_unambiguous() {
        assert_eq!(
            text("références/guide.md").to_string(),
            "références/guide.md"
        );
        assert_eq!(text("a\\nb").to_string(), "a\\\\nb");
        assert_ne!(text("a\\nb").to_string(), text("a\nb").to_string());
    }

    #[test]
    fn invalid_utf8_is_visible() {
        assert_eq!(bytes(b"ok\xff\xfe/\xc3").to_string(), "ok\\xff\\xfe/\\xc3");
        assert_eq!(bytes("é\t".as_bytes()).to_string(), "é\\t");
    }
}
