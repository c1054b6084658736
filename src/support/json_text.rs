//! JSON text that a person may read: what `--json` prints, and the YAML double-quoted strings
//! `pin` writes (JSON's string escapes are a subset of YAML's).
//!
//! `serde_json` escapes `"`, `\` and the C0 controls, but writes every other character as it
//! is: DEL, the C1 controls (U+0080–U+009F; U+009B starts a terminal sequence as ESC `[` does),
//! the bidi embeddings, overrides and isolates, the zero-width and direction marks, the line and
//! paragraph separators (U+2028, U+2029: a line break to JavaScript before ES2019, and to YAML
//! 1.1) and the byte-order mark. A string from outside (a folder name of a remote tree, a
//! frontmatter value) holding one would reach a terminal raw, or reorder what a reviewer reads.
//! Here every character [`escape::needs_escape`] names that `serde_json` leaves raw is written
//! `\uXXXX` instead.
//!
//! The escaping runs on the text `serde_json` made, and is sound there: outside its string
//! literals that text holds only ASCII (structure, numbers, `true`, and the spaces and newlines
//! of pretty printing), so each character escaped sits inside a string literal, where `\uXXXX`
//! reads back as the same character. Every character escaped is in the Basic Multilingual Plane
//! and is not a surrogate, so one `\uXXXX` is its whole escape. The result parses to the same
//! value.

use std::fmt::Write as _;

use super::escape;

/// `value` as pretty JSON (`serde_json`'s layout), escaped as the module doc says.
pub fn pretty<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    serde_json::to_string_pretty(value).map(escaped)
}

/// `text` as one JSON (and YAML double-quoted) string literal, escaped as the module doc says.
// `pin` (which comes with the Git fetcher) writes YAML strings.
#[cfg(feature = "git")]
pub fn string(text: &str) -> String {
    // A `str` always serialises.
    serde_json::to_string(text).map(escaped).unwrap_or_default()
}

/// Whether `c` is left raw by `serde_json` but written `\uXXXX` here.
fn escaped_here(c: char) -> bool {
    c >= '\u{7f}' && escape::needs_escape(c)
}

/// `json` (the text `serde_json` made) with every character of [`escaped_here`] written `\uXXXX`.
fn escaped(json: String) -> String {
    if !json.chars().any(escaped_here) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if escaped_here(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character the module doc names, and a few that stay raw.
    const HOSTILE: &str = "a\u{7f}\u{80}\u{9b}[8m\u{9f}\u{200b}\u{200f}\u{202a}\u{202e}\u{2028}\u{2029}\u{2066}\u{2069}\u{feff}é漢🦀\n\"\\";

    #[test]
    fn every_invisible_character_is_escaped_and_reads_back() {
        let value = serde_json::json!({ HOSTILE: [HOSTILE, { "k": HOSTILE }] });
        let text = pretty(&value).unwrap();
        assert!(
            !text
                .chars()
                .any(|c| c >= '\u{7f}' && escape::needs_escape(c)),
            "{text:?}"
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
    }

    #[cfg(feature = "git")]
    #[test]
    fn a_string_literal_is_escaped_the_same_way() {
        let text = string(HOSTILE);
        assert!(
            !text
                .chars()
                .any(|c| c >= '\u{7f}' && escape::needs_escape(c)),
            "{text:?}"
        );
        let back: String = serde_json::from_str(&text).unwrap();
        assert_eq!(back, HOSTILE);
        assert_eq!(
            string("\u{202e}x\u{2028}é"),
            "\"\\u202ex\\u2028é\"",
            "four hex digits, lowercase"
        );
        assert!(text.contains("é漢🦀\\n\\\"\\\\"));
    }

    #[test]
    fn text_without_them_is_serde_jsons() {
        let value = serde_json::json!({ "a": ["b", 1, null, "é\t"] });
        assert_eq!(
            pretty(&value).unwrap(),
            serde_json::to_string_pretty(&value).unwrap()
        );
    }
}
