//! A Git server's answer over HTTP(S), read under bounds before gix holds any of it.
//!
//! gix reads the capability advertisement, the ref listing (`ls-refs`, or protocol v0/v1's ref
//! advertisement) and the lines of a `fetch` answer that come before its pack (`acknowledgments`,
//! `shallow-info`, `wanted-refs`) whole, into memory, at whatever pace the server sets. So every
//! answer body passes through [`Answer`] first, which follows the pkt-line framing of the bytes
//! it hands on ([`PktLines`]: four hex digits of length, the length itself included, then the
//! payload; `0000`, `0001` and `0002` are the flush, delimiter and end packets) and refuses the
//! answer once its lines run past [`MAX_LINES_BYTES`] or [`MAX_LINES`], before gix has read the
//! bytes that broke the bound, and at once when it holds a length of `0003` (a malformed answer,
//! which the fetcher never takes for a refusal of its request). It stops counting where the pack begins — after protocol v2's
//! `packfile` section header, at the first side-band line of pack data (band 1) in v0/v1, or at
//! the first bytes that are not a pkt-line length (a pack sent without side-band): gix reads
//! nothing but a pack past that point, and the pack has bounds of its own (see
//! [`super::partial`] and [`super::options::MAX_OBJECT_BYTES`]).
//!
//! Every read, pack included, first checks the fetch's overall deadline: a server that floods
//! lines gix works through slowly, or that trickles them, is stopped at the deadline whatever
//! gix does with each line. The refusal is kept where the fetcher finds it ([`AnswerRefusalSlot`]), since
//! gix passes a reader's error on only as text.

use std::io::{BufRead, Read};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The most bytes of pkt-lines one answer may hold before its pack (or in all, when it has
/// none): 8 MiB, some 100,000 refs of a ref listing with long names, far more than the
/// capability advertisement or the `acknowledgments` and `shallow-info` of a fetch of one commit.
pub const MAX_LINES_BYTES: u64 = 8 * 1024 * 1024;

/// The most pkt-lines (flush and delimiter packets included) one answer may hold before its
/// pack: refs of a ref listing, capabilities, `shallow` lines.
pub const MAX_LINES: u64 = 100_000;

/// The bytes read from the server at once (a pkt-line is at most 65,520 bytes).
const CHUNK: usize = 64 * 1024;

/// The bound an answer broke, or why its framing is invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineBoundBroken {
    /// More than this many bytes of lines.
    Bytes(u64),
    /// More than this many lines.
    Lines(u64),
    /// A pkt-line no answer may hold (what it is): a malformed answer, refused at once rather
    /// than taken for a refusal of the request.
    Invalid(&'static str),
}

impl std::fmt::Display for LineBoundBroken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineBoundBroken::Bytes(max) => write!(f, "more than {max} bytes of protocol lines"),
            LineBoundBroken::Lines(max) => write!(f, "more than {max} protocol lines"),
            LineBoundBroken::Invalid(what) => write!(f, "{what}"),
        }
    }
}

/// The bounds of [`PktLines`] ([`MAX_LINES_BYTES`] and [`MAX_LINES`], smaller in tests).
#[derive(Debug, Clone, Copy)]
pub struct LineBounds {
    /// Bytes of lines.
    pub bytes: u64,
    /// Lines.
    pub lines: u64,
}

impl LineBounds {
    /// The bounds of every answer.
    pub const DEFAULT: LineBounds = LineBounds {
        bytes: MAX_LINES_BYTES,
        lines: MAX_LINES,
    };
}

/// Where the pack of an answer begins, which depends on the request and the protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackAfter {
    /// No pack: the advertisement (`GET …/info/refs`). Every byte counts.
    Never,
    /// Protocol v2's `packfile` section header (as it is, or on side-band channel 1 under
    /// `sideband-all`): the answer to a v2 command.
    Header,
    /// The first line on side-band channel 1, or the first bytes that are not a pkt-line length (a
    /// pack without side-band): the answer to a v0/v1 `fetch`.
    SideBand,
}

/// Where the framing of an answer is.
#[derive(Debug, Clone, Copy)]
enum At {
    /// In the four hex digits of a length: those seen so far.
    Length { digits: [u8; 4], seen: usize },
    /// In a payload: how many bytes are left, its length, and its first bytes (enough to
    /// recognise a `packfile` header or a side-band line of pack data).
    Payload {
        left: usize,
        len: usize,
        head: [u8; HEAD],
        seen: usize,
    },
    /// Past bytes that are not a pkt-line length where no pack may begin: gix refuses them, and
    /// every byte still counts.
    Unframed,
    /// In the pack: no longer counted.
    Pack,
}

/// Protocol v2's section header that a pack follows (gix also accepts it without the newline).
const PACKFILE: &[u8] = b"packfile\n";

/// The side-band channel of pack data.
const BAND_PACK: u8 = 1;

/// The first bytes of a payload kept: a band byte and [`PACKFILE`].
const HEAD: usize = 1 + PACKFILE.len();

/// A new length's digits.
const NEXT: At = At::Length {
    digits: [0; 4],
    seen: 0,
};

/// The pkt-line framing of one answer, byte by byte, with the count of its lines and their bytes
/// before the pack (see the module doc). Pure: no I/O, so it is fuzzed alone.
#[derive(Debug, Clone)]
pub struct PktLines {
    at: At,
    pack_after: PackAfter,
    bytes: u64,
    lines: u64,
    bounds: LineBounds,
}

impl PktLines {
    /// The framing of a new answer whose pack begins as `pack_after` says, under `bounds`.
    pub fn new(pack_after: PackAfter, bounds: LineBounds) -> PktLines {
        PktLines {
            at: NEXT,
            pack_after,
            bytes: 0,
            lines: 0,
            bounds,
        }
    }

    /// Follows the next `bytes` of the answer; `Err` as soon as its lines break a bound (the
    /// rest of `bytes` is then not looked at).
    pub fn take(&mut self, mut bytes: &[u8]) -> Result<(), LineBoundBroken> {
        while !bytes.is_empty() {
            // Every byte before the pack counts, framing included.
            let step = match self.at {
                At::Pack => return Ok(()),
                // The first bytes of a payload one by one, to see a pack begin at once.
                At::Payload { seen, .. } if seen < HEAD => 1,
                At::Payload { left, .. } => left.min(bytes.len()),
                At::Unframed => bytes.len(),
                At::Length { .. } => 1,
            };
            self.bytes += step as u64;
            if self.bytes > self.bounds.bytes {
                return Err(LineBoundBroken::Bytes(self.bounds.bytes));
            }
            let (now, rest) = bytes.split_at(step);
            bytes = rest;
            self.at = match self.at {
                At::Length { mut digits, seen } if seen + 1 < digits.len() => {
                    digits[seen] = now[0];
                    At::Length {
                        digits,
                        seen: seen + 1,
                    }
                }
                At::Length { mut digits, seen } => {
                    digits[seen] = now[0];
                    self.packet(digits)?
                }
                At::Payload {
                    left,
                    len,
                    mut head,
                    seen,
                } => {
                    let copy = HEAD.saturating_sub(seen).min(now.len());
                    head[seen..seen + copy].copy_from_slice(&now[..copy]);
                    if left == now.len() {
                        self.after_payload(&head[..len.min(HEAD)], len)
                    } else if self.pack_after == PackAfter::SideBand && head[0] == BAND_PACK {
                        // Pack data on the side-band: the rest of this line is the pack's.
                        At::Pack
                    } else {
                        At::Payload {
                            left: left - now.len(),
                            len,
                            head,
                            seen: seen + copy,
                        }
                    }
                }
                at @ (At::Unframed | At::Pack) => at,
            };
        }
        Ok(())
    }

    /// A new packet of length `digits`: counted, and where the framing goes next.
    fn packet(&mut self, digits: [u8; 4]) -> Result<At, LineBoundBroken> {
        let Some(len) = length(digits) else {
            // Not a pkt-line: a pack without side-band, where one may begin.
            return Ok(match self.pack_after {
                PackAfter::SideBand => At::Pack,
                PackAfter::Never | PackAfter::Header => At::Unframed,
            });
        };
        self.lines += 1;
        if self.lines > self.bounds.lines {
            return Err(LineBoundBroken::Lines(self.bounds.lines));
        }
        // `0000`…`0002` are packets without a payload; `0003` is no packet at all.
        if len == 3 {
            return Err(LineBoundBroken::Invalid(INVALID_LENGTH));
        }
        Ok(match len.checked_sub(4) {
            None | Some(0) => NEXT,
            Some(len) => At::Payload {
                left: len,
                len,
                head: [0; HEAD],
                seen: 0,
            },
        })
    }

    /// Where the framing goes after a payload of `len` bytes beginning with `head`.
    fn after_payload(&self, head: &[u8], len: usize) -> At {
        let packfile = |payload: &[u8]| {
            len <= HEAD && (payload == PACKFILE || payload == &PACKFILE[..PACKFILE.len() - 1])
        };
        let pack = match self.pack_after {
            PackAfter::Never => false,
            PackAfter::Header => {
                packfile(head) || (head.first() == Some(&BAND_PACK) && packfile(&head[1..]))
            }
            PackAfter::SideBand => head.first() == Some(&BAND_PACK),
        };
        if pack { At::Pack } else { NEXT }
    }
}

/// What a `0003` length is (a length counts its own four digits: no packet is three bytes long).
pub const INVALID_LENGTH: &str = "a pkt-line of length `0003`, shorter than its own length";

/// The value of four hex digits (either case, as gix reads them), or `None`.
fn length(digits: [u8; 4]) -> Option<usize> {
    digits.iter().try_fold(0usize, |value, digit| {
        let nibble = char::from(*digit).to_digit(16)?;
        Some(value * 16 + nibble as usize)
    })
}

/// Where the first refusal of a fetch's answers is kept, for the fetcher to name it (gix keeps
/// only the text of a reader's error). Shared by every answer of one fetch.
#[derive(Debug, Clone, Default)]
pub struct AnswerRefusalSlot(Arc<Mutex<Option<AnswerRefusal>>>);

/// An answer refused for a bound: which answer, and the bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerRefusal {
    /// The answer.
    pub answer: AnswerKind,
    /// The bound it broke.
    pub over: LineBoundBroken,
}

impl std::fmt::Display for AnswerRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} holds {}", self.answer, self.over)
    }
}

impl AnswerRefusalSlot {
    /// The first refusal, if an answer was refused.
    pub fn get(&self) -> Option<AnswerRefusal> {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn set(&self, refusal: AnswerRefusal) {
        let mut slot = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        slot.get_or_insert(refusal);
    }
}

/// Which request an answer is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerKind {
    /// `GET …/info/refs`: the capability advertisement (protocol v2) or the ref advertisement.
    Advertisement,
    /// `POST …/git-upload-pack` in protocol v2: a ref listing (`ls-refs`) or a `fetch`.
    Command,
    /// `POST …/git-upload-pack` in protocol v0/v1: a `fetch`.
    Fetch,
}

impl AnswerKind {
    /// Where the pack of such an answer begins.
    pub fn pack_after(self) -> PackAfter {
        match self {
            AnswerKind::Advertisement => PackAfter::Never,
            AnswerKind::Command => PackAfter::Header,
            AnswerKind::Fetch => PackAfter::SideBand,
        }
    }
}

impl std::fmt::Display for AnswerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AnswerKind::Advertisement => "its ref advertisement (`info/refs`)",
            AnswerKind::Command => "its answer to a ref listing or a fetch (before any pack)",
            AnswerKind::Fetch => "its answer to a fetch (before the pack)",
        })
    }
}

/// One answer body, read through its [`PktLines`] under the fetch's deadline (see the module doc).
pub struct Answer<R> {
    inner: R,
    kind: AnswerKind,
    lines: PktLines,
    until: Instant,
    refused: AnswerRefusalSlot,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// Set once the answer was refused: every later read fails the same way.
    failed: Option<(std::io::ErrorKind, String)>,
}

impl<R: Read> Answer<R> {
    /// `inner`, the body of the answer to a request of `kind`, to be read before `until`; a
    /// refusal is also kept in `refused`.
    pub fn new(
        inner: R,
        kind: AnswerKind,
        until: Instant,
        refused: AnswerRefusalSlot,
    ) -> Answer<R> {
        Answer::with_bounds(inner, kind, until, refused, LineBounds::DEFAULT)
    }

    /// Like [`Answer::new`], under `bounds`.
    pub fn with_bounds(
        inner: R,
        kind: AnswerKind,
        until: Instant,
        refused: AnswerRefusalSlot,
        bounds: LineBounds,
    ) -> Answer<R> {
        Answer {
            inner,
            kind,
            lines: PktLines::new(kind.pack_after(), bounds),
            until,
            refused,
            buf: Box::default(),
            pos: 0,
            end: 0,
            failed: None,
        }
    }

    fn fail(&mut self, kind: std::io::ErrorKind, why: String) -> std::io::Error {
        self.failed = Some((kind, why.clone()));
        std::io::Error::new(kind, why)
    }
}

impl<R: Read> BufRead for Answer<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if let Some((kind, why)) = &self.failed {
            return Err(std::io::Error::new(*kind, why.clone()));
        }
        if Instant::now() >= self.until {
            return Err(self.fail(
                std::io::ErrorKind::TimedOut,
                "the fetch's overall deadline passed while the server's answer was read".into(),
            ));
        }
        if self.pos == self.end {
            if self.buf.is_empty() {
                self.buf = vec![0; CHUNK].into_boxed_slice();
            }
            let n = self.inner.read(&mut self.buf)?;
            if let Err(over) = self.lines.take(&self.buf[..n]) {
                let refusal = AnswerRefusal {
                    answer: self.kind,
                    over,
                };
                self.refused.set(refusal);
                return Err(self.fail(
                    std::io::ErrorKind::InvalidData,
                    format!("refused the server's answer: {refusal}"),
                ));
            }
            self.pos = 0;
            self.end = n;
        }
        Ok(&self.buf[self.pos..self.end])
    }

    fn consume(&mut self, amount: usize) {
        self.pos = (self.pos + amount).min(self.end);
    }
}

impl<R: Read> Read for Answer<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        read_buffered(self, out)
    }
}

/// [`Read::read`] of a reader whose checks live in its [`BufRead`] half: what `fill_buf`
/// gives, as much as fits in `out`.
pub(super) fn read_buffered(reader: &mut impl BufRead, out: &mut [u8]) -> std::io::Result<usize> {
    let available = reader.fill_buf()?;
    let n = available.len().min(out.len());
    out[..n].copy_from_slice(&available[..n]);
    reader.consume(n);
    Ok(n)
}

#[cfg(test)]
#[path = "answer_tests.rs"]
mod tests;
