//! A Git server's answer, read through the bounded pkt-line reader of the fetcher.

/// The bounds [`git_answer`] reads under: small, so that inputs cross them.
#[cfg(feature = "git")]
const GIT_ANSWER_BOUNDS: crate::source::git::answer::LineBounds =
    crate::source::git::answer::LineBounds {
        bytes: 4096,
        lines: 64,
    };

/// What an answer's lines come to, read independently of [`crate::source::git::answer::PktLines`]
/// (the whole input at once, packet by packet): the bound it breaks, if any. Bytes before the
/// pack count, framing included; each packet counts as a line once its four length digits have
/// come; the pack begins after v2's `packfile` header (as it is, or on side-band channel 1), at
/// v0/v1's first side-band byte 1 or at four bytes that are not hex digits (elsewhere such bytes
/// and all after them count); a length of `0003` is invalid.
#[cfg(feature = "git")]
fn git_answer_reference(
    pack_after: crate::source::git::answer::PackAfter,
    data: &[u8],
) -> Result<(), crate::source::git::answer::LineBoundBroken> {
    use crate::source::git::answer::{LineBoundBroken, PackAfter};
    let bounds = GIT_ANSWER_BOUNDS;
    let mut counted = 0u64;
    let mut count = |n: usize| {
        counted += n as u64;
        if counted > bounds.bytes {
            Err(LineBoundBroken::Bytes(bounds.bytes))
        } else {
            Ok(())
        }
    };
    let (mut at, mut lines) = (0, 0u64);
    while at < data.len() {
        let digits = &data[at..data.len().min(at + 4)];
        count(digits.len())?;
        let hex = digits.len() == 4 && digits.iter().all(u8::is_ascii_hexdigit);
        let len = digits.iter().fold(0, |len, d| {
            len * 16 + char::from(*d).to_digit(16).unwrap_or(0) as usize
        });
        if digits.len() < 4 {
            return Ok(());
        }
        if !hex {
            return match pack_after {
                PackAfter::SideBand => Ok(()),
                PackAfter::Never | PackAfter::Header => count(data.len() - at - 4),
            };
        }
        lines += 1;
        if lines > bounds.lines {
            return Err(LineBoundBroken::Lines(bounds.lines));
        }
        if len == 3 {
            return Err(LineBoundBroken::Invalid(
                crate::source::git::answer::INVALID_LENGTH,
            ));
        }
        at += 4;
        let payload_len = len.saturating_sub(4);
        if payload_len == 0 {
            continue;
        }
        if at == data.len() {
            return Ok(());
        }
        let here = payload_len.min(data.len() - at);
        if pack_after == PackAfter::SideBand && data[at] == 1 {
            return count(1);
        }
        count(here)?;
        if here < payload_len {
            return Ok(());
        }
        let payload = &data[at..at + payload_len];
        at += payload_len;
        let header = matches!(
            payload,
            b"packfile\n" | b"packfile" | b"\x01packfile\n" | b"\x01packfile"
        );
        if pack_after == PackAfter::Header && header {
            return Ok(());
        }
    }
    Ok(())
}

/// A Git server's answer, read through the fetcher's bounded reader: the first byte chooses the
/// request it answers (the advertisement, a v2 command, a v0/v1 fetch: modulo 3) and the second
/// the size of the pieces it arrives in; the rest is the answer.
///
/// Invariants: the verdict (within the bounds, or the bound broken) does not depend on how the
/// answer is cut into pieces, and is the one an independent reading of the whole answer gives
/// ([`git_answer_reference`]); the reader hands on exactly the answer when it is within the
/// bounds, and otherwise a prefix of it no longer than the byte bound, refuses every later read,
/// and keeps the refusal for the fetcher with the request's kind and the bound.
#[cfg(feature = "git")]
pub fn git_answer(data: &[u8]) {
    use std::io::Read as _;

    use crate::source::git::answer::{
        Answer, AnswerKind, AnswerRefusal, AnswerRefusalSlot, PktLines,
    };
    let [which, piece, answer @ ..] = data else {
        return;
    };
    let kind = [
        AnswerKind::Advertisement,
        AnswerKind::Command,
        AnswerKind::Fetch,
    ][usize::from(*which % 3)];
    let piece = usize::from(*piece).max(1);
    let whole = {
        let mut lines = PktLines::new(kind.pack_after(), GIT_ANSWER_BOUNDS);
        lines.take(answer)
    };
    let mut lines = PktLines::new(kind.pack_after(), GIT_ANSWER_BOUNDS);
    let pieces = answer.chunks(piece).try_for_each(|c| lines.take(c));
    assert_eq!(pieces, whole, "pieces of {piece} bytes");
    assert_eq!(
        git_answer_reference(kind.pack_after(), answer),
        whole,
        "the independent reading"
    );

    /// Hands out the answer `piece` bytes at a time.
    struct Pieces<'a>(&'a [u8], usize);
    impl std::io::Read for Pieces<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(out.len()).min(self.1);
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let far = std::time::Instant::now() + std::time::Duration::from_secs(3600);
    let refused = AnswerRefusalSlot::default();
    let mut reader = Answer::with_bounds(
        Pieces(answer, piece),
        kind,
        far,
        refused.clone(),
        GIT_ANSWER_BOUNDS,
    );
    let mut out = Vec::new();
    let read = reader.read_to_end(&mut out);
    match whole {
        Ok(()) => {
            assert!(read.is_ok(), "{read:?}");
            assert_eq!(out, answer, "the answer handed on unchanged");
            assert_eq!(refused.get(), None);
        }
        Err(over) => {
            assert!(read.is_err(), "an answer over its bounds read whole");
            assert!(answer.starts_with(&out), "not a prefix of the answer");
            assert!(
                out.len() as u64 <= GIT_ANSWER_BOUNDS.bytes,
                "{} bytes",
                out.len()
            );
            assert_eq!(refused.get(), Some(AnswerRefusal { answer: kind, over }));
            assert!(
                std::io::BufRead::fill_buf(&mut reader).is_err(),
                "read again"
            );
        }
    }
}
