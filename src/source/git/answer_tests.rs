use std::time::Duration;

use super::*;

/// `payload` as one pkt-line.
fn pkt(payload: &[u8]) -> Vec<u8> {
    let mut line = format!("{:04x}", payload.len() + 4).into_bytes();
    line.extend_from_slice(payload);
    line
}

/// `lines` as one answer, with a flush packet at the end.
fn answer(lines: &[&[u8]]) -> Vec<u8> {
    let mut bytes: Vec<u8> = lines.iter().flat_map(|l| pkt(l)).collect();
    bytes.extend_from_slice(b"0000");
    bytes
}

fn bounds(bytes: u64, lines: u64) -> LineBounds {
    LineBounds { bytes, lines }
}

/// What [`PktLines`] makes of `bytes` fed in chunks of `chunk`.
fn take(
    kind: AnswerKind,
    limits: LineBounds,
    bytes: &[u8],
    chunk: usize,
) -> Result<(), LineBoundBroken> {
    let mut lines = PktLines::new(kind.pack_after(), limits);
    bytes.chunks(chunk).try_for_each(|c| lines.take(c))
}

/// The same verdict whatever the chunks.
fn verdict(kind: AnswerKind, limits: LineBounds, bytes: &[u8]) -> Result<(), LineBoundBroken> {
    let whole = take(kind, limits, bytes, bytes.len().max(1));
    for chunk in [1, 3, 4, 5, 7, 64] {
        assert_eq!(take(kind, limits, bytes, chunk), whole, "chunks of {chunk}");
    }
    whole
}

fn refs(count: usize) -> Vec<u8> {
    let lines: Vec<Vec<u8>> = (0..count)
        .map(|i| format!("{:040x} refs/heads/b{i}\n", i).into_bytes())
        .collect();
    let lines: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    answer(&lines)
}

#[test]
fn an_answer_within_its_bounds_passes_and_one_byte_or_line_more_does_not() {
    let bytes = refs(10);
    let len = bytes.len() as u64;
    // Ten refs and the flush: eleven packets.
    assert_eq!(
        verdict(AnswerKind::Command, bounds(len, 11), &bytes),
        Ok(())
    );
    assert_eq!(
        verdict(AnswerKind::Command, bounds(len - 1, 11), &bytes),
        Err(LineBoundBroken::Bytes(len - 1))
    );
    assert_eq!(
        verdict(AnswerKind::Command, bounds(len, 10), &bytes),
        Err(LineBoundBroken::Lines(10))
    );
}

#[test]
fn flush_and_delimiter_packets_count_as_lines() {
    let floods = b"0000".repeat(100);
    assert_eq!(
        verdict(AnswerKind::Advertisement, bounds(1 << 20, 99), &floods),
        Err(LineBoundBroken::Lines(99))
    );
    let delimiters = b"0001".repeat(100);
    assert_eq!(
        verdict(AnswerKind::Command, bounds(1 << 20, 100), &delimiters),
        Ok(())
    );
}

#[test]
fn a_v2_pack_is_not_counted_after_its_packfile_header_however_it_is_sent() {
    let pack = [1u8; 60_000];
    for header in [&b"packfile\n"[..], b"packfile", b"\x01packfile\n"] {
        let mut bytes = answer(&[b"shallow-info\n"]);
        bytes.extend(pkt(header));
        bytes.extend(pkt(&pack[..60_000]));
        assert_eq!(
            verdict(AnswerKind::Command, bounds(100, 10), &bytes),
            Ok(()),
            "{header:?}"
        );
    }
    // A line on channel 1 before the header, or a longer line, is still counted.
    for line in [&b"\x01shallow 0123\n"[..], b"packfile\nmore"] {
        let mut bytes = pkt(line);
        bytes.extend(pkt(&pack[..60_000]));
        assert_eq!(
            verdict(AnswerKind::Command, bounds(1000, 10), &bytes),
            Err(LineBoundBroken::Bytes(1000)),
            "{line:?}"
        );
    }
}

#[test]
fn a_v1_pack_begins_at_its_first_line_of_pack_data_or_without_side_band() {
    let mut sideband = answer(&[b"NAK\n"]);
    sideband.extend(pkt(&[1; 60_000]));
    assert_eq!(
        verdict(AnswerKind::Fetch, bounds(100, 10), &sideband),
        Ok(())
    );
    let mut raw = pkt(b"NAK\n");
    raw.extend_from_slice(b"PACK\0\0\0\x02");
    raw.extend([0u8; 60_000]);
    assert_eq!(verdict(AnswerKind::Fetch, bounds(100, 10), &raw), Ok(()));
    // Progress (channel 2) is no pack: counted.
    let progress = pkt(&[2; 60_000]);
    assert_eq!(
        verdict(AnswerKind::Fetch, bounds(100, 10), &progress),
        Err(LineBoundBroken::Bytes(100))
    );
}

#[test]
fn an_advertisement_has_no_pack_and_every_byte_of_it_counts() {
    for escape in [pkt(b"\x01packfile\n"), pkt(b"packfile\n"), b"PACK".to_vec()] {
        let mut bytes = escape.clone();
        bytes.extend(pkt(&[b'a'; 60_000]));
        assert_eq!(
            verdict(AnswerKind::Advertisement, bounds(1000, 10), &bytes),
            Err(LineBoundBroken::Bytes(1000)),
            "{escape:?}"
        );
    }
    // In a v2 command's answer, bytes that are not a pkt-line before the pack count too.
    let mut bytes = b"PACK".to_vec();
    bytes.extend([0u8; 2000]);
    assert_eq!(
        verdict(AnswerKind::Command, bounds(1000, 10), &bytes),
        Err(LineBoundBroken::Bytes(1000))
    );
}

/// A reader that hands out `bytes` a few at a time.
struct Slow<'a>(&'a [u8]);

impl Read for Slow<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.len().min(out.len()).min(100);
        out[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn the_reader_hands_on_an_answer_within_bounds_unchanged() {
    let bytes = refs(50);
    let far = Instant::now() + Duration::from_secs(3600);
    let mut reader = Answer::new(
        Slow(&bytes),
        AnswerKind::Command,
        far,
        AnswerRefusalSlot::default(),
    );
    let mut out = Vec::new();
    reader.read_to_end(&mut out).expect("within bounds");
    assert_eq!(out, bytes);
}

#[test]
fn the_reader_refuses_before_handing_on_the_bytes_past_a_bound_and_keeps_refusing() {
    let bytes = refs(50);
    let far = Instant::now() + Duration::from_secs(3600);
    let refused = AnswerRefusalSlot::default();
    let mut reader = Answer::with_bounds(
        Slow(&bytes),
        AnswerKind::Advertisement,
        far,
        refused.clone(),
        bounds(1000, 1000),
    );
    let mut out = Vec::new();
    let error = reader.read_to_end(&mut out).expect_err("over the bound");
    assert!(out.len() <= 1000, "{} bytes handed on", out.len());
    assert!(error.to_string().contains("1000 bytes"), "{error}");
    assert_eq!(
        refused.get(),
        Some(AnswerRefusal {
            answer: AnswerKind::Advertisement,
            over: LineBoundBroken::Bytes(1000)
        })
    );
    assert!(reader.fill_buf().is_err(), "a refusal is final");
}

#[test]
fn the_reader_reads_nothing_past_the_deadline() {
    let bytes = refs(1);
    let past = Instant::now();
    let refused = AnswerRefusalSlot::default();
    let mut reader = Answer::new(Slow(&bytes), AnswerKind::Command, past, refused.clone());
    let error = reader.fill_buf().expect_err("past the deadline");
    assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
    assert_eq!(
        refused.get(),
        None,
        "the deadline is no bound of the answer"
    );
}

// A `0003` length (shorter than its own four digits) is no packet: the answer is malformed and
// refused at once, in every kind of answer, before gix reads it. gix refused it too, and the
// fetcher took that for a refusal of the commit by id.
#[test]
fn a_length_of_0003_is_refused_as_malformed() {
    let mut bytes = pkt(b"version 2\n");
    bytes.extend_from_slice(b"0003");
    bytes.extend_from_slice(&pkt(b"more\n"));
    for kind in [
        AnswerKind::Advertisement,
        AnswerKind::Command,
        AnswerKind::Fetch,
    ] {
        assert_eq!(
            verdict(kind, LineBounds::DEFAULT, &bytes),
            Err(LineBoundBroken::Invalid(INVALID_LENGTH))
        );
    }
    // `0000`, `0001`, `0002` and `0004` are packets.
    let fine = b"0000000100020004".to_vec();
    assert_eq!(
        verdict(AnswerKind::Command, LineBounds::DEFAULT, &fine),
        Ok(())
    );
}
