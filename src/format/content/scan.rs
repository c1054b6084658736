//! The scan for hidden characters: one pass over the bytes of a text, with a fast path that
//! skips eight printable ASCII bytes at a time and passes over any other character by its first
//! byte ([`STOP`]) and, for the few lead bytes hidden characters share, its continuation bytes
//! ([`may_hide`]); only a character that may be hidden is decoded and judged
//! ([`classes::judge`]). Consecutive hidden characters of one class are reported as one
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

/// The length of the UTF-8 sequence `lead` starts (1 for a byte that starts none).
fn utf8_len(lead: u8) -> usize {
    match lead {
        0x00..=0xBF => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// Whether the character starting with the stop byte `bytes[0]` may be hidden (or be U+1F3F4,
/// which may open an emoji flag's tag sequence), from its continuation bytes: most characters
/// behind a stop byte (typographic quotes and dashes, kana, emoji) are passed over undecoded.
/// Exact for every code point [`classes::class_of`] names (a test checks them all).
fn may_hide(bytes: &[u8]) -> bool {
    let at = |i: usize| bytes.get(i).copied().unwrap_or(0);
    let (b1, b2, b3) = (at(1), at(2), at(3));
    match bytes[0] {
        0x00..=0x7F => true,
        0xC2 => matches!(b1, 0x80..=0x9F | 0xAD),
        0xCD => b1 == 0x8F,
        0xD8 => b1 == 0x9C,
        0xE1 => matches!(
            (b1, b2),
            (0x85, 0x9F..=0xA0) | (0x9E, 0xB4..=0xB5) | (0xA0, 0x8B..=0x8F)
        ),
        0xE2 => matches!(
            (b1, b2),
            (0x80, 0x8B..=0x8F | 0xAA..=0xAE) | (0x81, 0xA0..=0xAF)
        ),
        0xE3 => (b1, b2) == (0x85, 0xA4),
        0xEF => matches!(
            (b1, b2),
            (0xB8, 0x80..=0x8F) | (0xBB, 0xBF) | (0xBE, 0xA0) | (0xBF, 0xB0..=0xBB)
        ),
        0xF0 => matches!(
            (b1, b2, b3),
            (0x9B, 0xB2, 0xA0..=0xA3) | (0x9D, 0x85, 0xB3..=0xBA) | (0x9F, 0x8F, 0xB4)
        ),
        0xF3 => b1 == 0xA0,
        _ => false,
    }
}

/// Whether the eight bytes of `word` are all printable ASCII (U+0020–U+007E), where the scan
/// has nothing to look at. Each test is exact in what it finds (a borrow may flag a byte above
/// a true hit, never a word without one), so a word it passes holds no byte of [`STOP`].
fn printable(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let non_ascii = word & HIGH;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    let del = word ^ (ONES * 0x7F);
    let is_del = del.wrapping_sub(ONES) & !del & HIGH;
    non_ascii | below_space | is_del == 0
}

/// Calls `found` with every run of hidden characters in `text`, in order. A run never crosses
/// byte `split` (where `SKILL.md`'s body starts), so each run lies in one part of the file.
pub(super) fn scan(text: &str, split: usize, mut found: impl FnMut(Run)) {
    let bytes = text.as_bytes();
    let mut pending: Option<Run> = None;
    // The scan moves by words of printable ASCII, by single bytes that cannot start a hidden
    // character, or by whole characters; so a byte of `STOP` it reaches starts a character.
    let mut i = 0;
    'scan: while i < bytes.len() {
        // The fast path: eight printable ASCII bytes at a time; then the bytes of a word that is
        // not, each passed over unless [`STOP`] and [`may_hide`] say a hidden character may
        // start there.
        if let Some(chunk) = bytes.get(i..i + 8)
            && printable(u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])))
        {
            i += 8;
            continue;
        }
        let word_end = (i + 8).min(bytes.len());
        while i < word_end {
            let byte = bytes[i];
            if !STOP[usize::from(byte)] {
                i += 1;
                continue;
            }
            let len = utf8_len(byte);
            if !may_hide(&bytes[i..]) {
                i += len;
                continue;
            }
            let Some(c) = text[i..].chars().next() else {
                break 'scan;
            };
            if c == '\u{1F3F4}'
                && let Some(end) = classes::flag_tags(text, i + len)
            {
                i = end;
                continue;
            }
            if let Some(class) = classes::judge(text, i, c) {
                match &mut pending {
                    Some(run)
                        if run.class == class
                            && run.end == i
                            && (run.start >= split || i < split) =>
                    {
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
