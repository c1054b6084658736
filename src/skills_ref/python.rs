//! Python 3.11 string semantics that skills-ref's output depends on, so the spec tooling can
//! reproduce it byte for byte: `str.strip()`'s whitespace set, `str.isalnum()` and
//! `str.isprintable()` by general category, NFKC and `str.lower()` with CPython 3.11's Unicode
//! 14.0 data, `repr()` of strings, `json.dumps(..., ensure_ascii=True)` string escaping,
//! `html.escape`, click's ANSI stripping, and how `pathlib.PurePosixPath` spells a path.
//!
//! # Unicode versions
//!
//! CPython 3.11 ships Unicode 14.0. General categories come from `unicode-general-category`
//! 0.5.1, which is Unicode 14.0 exactly. `unicode-normalization` and Rust's own case tables are
//! newer; a character unassigned in 14.0 has no decomposition and no case mapping in CPython
//! 3.11, so [`nfkc`] and [`lower`] leave such characters alone and work on the runs between
//! them (an unassigned character is a starter that composes with nothing, so splitting there is
//! exact). Decompositions of characters assigned in 14.0 are stable by Unicode policy.

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization as _;

/// Whether Python's `str.strip()` removes `c`: CPython 3.11's whitespace set. Unlike Rust's
/// `char::is_whitespace`, it includes the information separators `\x1c`–`\x1f`.
pub fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\u{0b}'
            | '\u{0c}'
            | '\r'
            | '\u{1c}'..='\u{1f}'
            | ' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// Python's `s.strip()`.
pub fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// Python's `len(s)`: code points.
pub fn len(s: &str) -> usize {
    s.chars().count()
}

fn category(c: char) -> GeneralCategory {
    get_general_category(c)
}

/// Whether `c` is assigned in Unicode 14.0 (the data of CPython 3.11).
pub fn assigned_in_unicode_14(c: char) -> bool {
    category(c) != GeneralCategory::Unassigned
}

/// Python's `c.isalnum()`: general category Lu, Ll, Lt, Lm, Lo, Nd, Nl or No (Unicode 14.0).
/// Rust's `char::is_alphanumeric` differs (it counts combining marks such as U+094C).
pub fn is_alnum(c: char) -> bool {
    use GeneralCategory as G;
    matches!(
        category(c),
        G::UppercaseLetter
            | G::LowercaseLetter
            | G::TitlecaseLetter
            | G::ModifierLetter
            | G::OtherLetter
            | G::DecimalNumber
            | G::LetterNumber
            | G::OtherNumber
    )
}

/// Python's `c.isprintable()`: everything but categories Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs,
/// except that the ASCII space is printable.
pub fn is_printable(c: char) -> bool {
    use GeneralCategory as G;
    if c == ' ' {
        return true;
    }
    !matches!(
        category(c),
        G::Control
            | G::Format
            | G::Surrogate
            | G::PrivateUse
            | G::Unassigned
            | G::LineSeparator
            | G::ParagraphSeparator
            | G::SpaceSeparator
    )
}

/// Applies `f` to the runs of characters assigned in Unicode 14.0, copying the others as they
/// are (see the module doc).
fn by_assigned_runs(s: &str, f: impl Fn(&str, &mut String)) -> String {
    let mut out = String::with_capacity(s.len());
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if !assigned_in_unicode_14(c) {
            f(&s[start..i], &mut out);
            out.push(c);
            start = i + c.len_utf8();
        }
    }
    f(&s[start..], &mut out);
    out
}

/// `unicodedata.normalize("NFKC", s)` as in CPython 3.11.
pub fn nfkc(s: &str) -> String {
    if s.is_ascii() {
        return s.to_owned();
    }
    by_assigned_runs(s, |run, out| out.extend(run.nfkc()))
}

/// Python's `s.lower()` (full lowercasing, final sigma) as in CPython 3.11.
pub fn lower(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    by_assigned_runs(s, |run, out| out.push_str(&run.to_lowercase()))
}

/// Python's `repr(s)` for a `str`.
pub fn repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_ascii() || is_printable(c) => out.push(c),
            c if (c as u32) <= 0xff => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) <= 0xffff => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push(quote);
    out
}

/// A JSON string literal as `json.dumps(s, ensure_ascii=True)` writes it: everything outside
/// printable ASCII escaped as `\uXXXX` (lowercase hex, astral characters as surrogate pairs),
/// with the short escapes `\" \\ \n \r \t \b \f`; `/` is not escaped.
pub fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
}

/// Python's `html.escape(s, quote=True)`.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}

/// What `click.echo` does to text written to a stream that is not a terminal: removes ANSI CSI
/// sequences, `\x1b\[[0-?]*[ -/]*[@-~]` (click 8.5.1).
pub fn strip_ansi(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('\u{1b}') {
        return std::borrow::Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == 0x1b && b.get(i + 1) == Some(&b'[') {
            let mut j = i + 2;
            while j < b.len() && (0x30..=0x3f).contains(&b[j]) {
                j += 1;
            }
            while j < b.len() && (0x20..=0x2f).contains(&b[j]) {
                j += 1;
            }
            if j < b.len() && (0x40..=0x7e).contains(&b[j]) {
                i = j + 1;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    // Only ASCII bytes were removed, so the rest is still UTF-8.
    std::borrow::Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// A path as `str(pathlib.PurePosixPath(arg))` spells it in Python 3.11: empty and `.`
/// segments dropped, `..` kept, one leading `/` (two stay two, three or more become one), and
/// `.` for an empty path.
pub fn pure_path(arg: &[u8]) -> PurePath {
    let root: &[u8] = if arg.starts_with(b"//") && !arg.starts_with(b"///") {
        b"//"
    } else if arg.starts_with(b"/") {
        b"/"
    } else {
        b""
    };
    let parts = arg
        .split(|&b| b == b'/')
        .filter(|p| !p.is_empty() && *p != b".")
        .map(<[u8]>::to_vec)
        .collect();
    PurePath {
        root: root.to_vec(),
        parts,
    }
}

/// A parsed `PurePosixPath`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PurePath {
    root: Vec<u8>,
    parts: Vec<Vec<u8>>,
}

impl PurePath {
    /// `str(path)` as bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        if self.root.is_empty() && self.parts.is_empty() {
            return b".".to_vec();
        }
        let mut out = self.root.clone();
        out.extend(self.parts.join(&b'/'));
        out
    }

    /// `path.parent`.
    pub fn parent(&self) -> PurePath {
        let mut parts = self.parts.clone();
        parts.pop();
        PurePath {
            root: self.root.clone(),
            parts,
        }
    }

    /// `path.name`: the last segment, empty for `.` and `/`.
    pub fn name(&self) -> &[u8] {
        self.parts.last().map(Vec::as_slice).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_uses_pythons_whitespace() {
        assert_eq!(strip("\u{1c} a \u{3000}"), "a");
        assert_eq!(strip("\u{1f}"), "");
        assert_eq!(strip("\u{200b}a"), "\u{200b}a");
    }

    #[test]
    fn isalnum_is_by_category() {
        assert!(is_alnum('a') && is_alnum('技') && is_alnum('²') && is_alnum('ⅻ'));
        assert!(!is_alnum('\u{094c}'), "Devanagari vowel sign (Mc)");
        assert!(!is_alnum('\u{094d}'), "virama (Mn)");
        assert!(!is_alnum('-') && !is_alnum('_') && !is_alnum('\u{200d}'));
    }

    #[test]
    fn nfkc_and_lower_match_cpython() {
        assert_eq!(nfkc("ﬁle"), "file");
        assert_eq!(nfkc("ＡＢＣ"), "ABC");
        assert_eq!(nfkc("ⅻ"), "xii");
        assert_eq!(nfkc("ǅ"), "Dž");
        assert_eq!(nfkc("½"), "1⁄2");
        assert_eq!(nfkc("cafe\u{301}"), "café");
        // U+1E030 (Unicode 15) has a compatibility decomposition; CPython 3.11 does not know it.
        assert_eq!(nfkc("\u{1e030}"), "\u{1e030}");
        assert_eq!(lower("İ"), "i\u{307}");
        assert_eq!(lower("ΛΌΓΟΣ"), "λόγος");
    }

    #[test]
    fn repr_like_python() {
        assert_eq!(repr("\t"), "'\\t'");
        assert_eq!(repr("it's"), "\"it's\"");
        assert_eq!(repr("a'\""), "'a\\'\"'");
        assert_eq!(repr("é\u{85}\u{200b}😀"), "'é\\x85\\u200b😀'");
    }

    #[test]
    fn json_escapes_like_ensure_ascii() {
        let mut s = String::new();
        json_string("a\"\\/\u{7f}\u{1b}é😀\u{8}\u{c}", &mut s);
        assert_eq!(s, r#""a\"\\/\u007f\u001b\u00e9\ud83d\ude00\b\f""#);
    }

    #[test]
    fn ansi_and_html() {
        assert_eq!(strip_ansi("a\u{1b}[31mb\u{1b}[0m\u{1b}x"), "ab\u{1b}x");
        assert_eq!(
            html_escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#x27;&amp;&#x27;&lt;/a&gt;"
        );
    }

    #[test]
    fn pathlib_spelling() {
        let s = |a: &str| String::from_utf8(pure_path(a.as_bytes()).to_bytes()).unwrap();
        assert_eq!(s("./a"), "a");
        assert_eq!(s("a//b/./"), "a/b");
        assert_eq!(s("./"), ".");
        assert_eq!(s("///a"), "/a");
        assert_eq!(s("//a"), "//a");
        assert_eq!(s("a/../b"), "a/../b");
        assert_eq!(pure_path(b"SKILL.md").parent().to_bytes(), b".");
        assert_eq!(pure_path(b".").name(), b"");
    }
}
