//! The scan for hidden characters: one pass over the bytes of a text, with a fast path that
//! looks each byte up in a table and stops only at an ASCII control, DEL, or the lead byte of a
//! UTF-8 sequence that may encode a hidden code point; only there is a character decoded and
//! judged ([`classes::judge`]). Consecutive hidden characters of one class are reported as one
//! [`Run`].

use super::classes::{self, HiddenClass};

/// Consecutive hidden characters of one class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Run {
    /// Byte offset of the first.
    pub start: usize,
    /// Byte offset just past the last.
    pub end: usize,
    /// The first character.
    pub first: char,
    /// Their class.
    pub class: HiddenClass,
    /// How many.
    pub count: usize,
}

/// The bytes at which the fast path stops: C0 controls but NUL (its own rule), TAB, LF and CR;
/// DEL; and the lead bytes of the UTF-8 sequences of every code point [`classes::class_of`]
/// names (U+0080–U+00BF, U+0340–U+037F, U+0600–U+063F, U+1000–U+1FFF, U+2000–U+2FFF,
/// U+3000–U+3FFF, U+F000–U+FFFF, U+10000–U+3FFFF (with the emoji flags), U+C0000–U+FFFFF).
static STOP: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 1;
    while b < 0x20 {
        table[b] = !matches!(b, 0x09 | 0x0A | 0x0D);
        b += 1;
    }
    table[0x7F] = true;
    table[0xC2] = true;
    table[0xCD] = true;
    table[0xD8] = true;
    table[0xE1] = true;
    table[0xE2] = true;
    table[0xE3] = true;
    table[0xEF] = true;
    table[0xF0] = true;
    table[0xF3] = true;
    table
};

/// Calls `found` with every run of hidden characters in `text`, in order. A run never crosses
/// byte `split` (where `SKILL.md`'s body starts), so each run lies in one part of the file.
pub(super) fn scan(text: &str, split: usize, mut found: impl FnMut(Run)) {
    let bytes = text.as_bytes();
    let mut pending: Option<Run> = None;
    let mut i = 0;
    while i < bytes.len() {
        if !STOP[usize::from(bytes[i])] {
            i += 1;
            continue;
        }
        // A stop byte is ASCII or a lead byte, so `i` is a character boundary.
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        let len = c.len_utf8();
        if c == '\u{1F3F4}'
            && let Some(end) = classes::flag_tags(text, i + len)
        {
            i = end;
            continue;
        }
        if let Some(class) = classes::judge(text, i, c) {
            match &mut pending {
                Some(run) if run.class == class && run.end == i && (run.start >= split || i < split) => {
                    run.end = i + len;
                    run.count += 1;
                }
                _ => {
                    let run = Run {
                        start: i,
                        end: i + len,
                        first: c,
                        class,
                        count: 1,
                    };
                    if let Some(done) = pending.replace(run) {
                        found(done);
                    }
                }
            }
        }
        i += len;
    }
    if let Some(done) = pending {
        found(done);
    }
}

/// Line and column of byte offsets visited in increasing order: lines counted by LF from 1,
/// columns in characters from 1. Each byte is counted once however many offsets are asked.
pub(super) struct Cursor<'a> {
    text: &'a str,
    at: usize,
    line: usize,
    line_start: usize,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Cursor {
            text,
            at: 0,
            line: 1,
            line_start: 0,
        }
    }

    /// The line and column of byte `offset` (not before the last one asked).
    pub(super) fn position(&mut self, offset: usize) -> (usize, usize) {
        let offset = offset.max(self.at);
        let skipped = &self.text.as_bytes()[self.at..offset];
        if let Some(last) = skipped.iter().rposition(|&b| b == b'\n') {
            self.line += skipped.iter().filter(|&&b| b == b'\n').count();
            self.line_start = self.at + last + 1;
        }
        self.at = offset;
        let column = self.text[self.line_start..offset].chars().count() + 1;
        (self.line, column)
    }
}
