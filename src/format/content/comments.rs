//! HTML comments in `SKILL.md`'s Markdown body: text a model reads and a rendered page does not
//! show. A comment starts at `<!--` and ends after the next `-->` (or at the end of the body,
//! where an unclosed one hides everything after it). A `<!--` inside a fenced code block
//! (``` or `~~~`, at most three spaces in) or an inline code span on its line is shown as written,
//! so it is not one.

/// One comment: byte offsets in the body, the end just past `-->` (or the body's end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Comment {
    pub start: usize,
    pub end: usize,
    /// Whether a `-->` closes it.
    pub closed: bool,
}

/// Every comment of `body`, in order.
pub(super) fn find(body: &str) -> Vec<Comment> {
    let mut found = Vec::new();
    let mut fence: Option<(u8, usize)> = None;
    let mut pos = 0;
    while pos < body.len() {
        let line_end = body[pos..].find('\n').map_or(body.len(), |i| pos + i + 1);
        let at_line_start = pos == 0 || body.as_bytes()[pos - 1] == b'\n';
        let line = &body[pos..line_end];
        if at_line_start {
            if let Some(open) = fence {
                if closes(line, open) {
                    fence = None;
                }
                pos = line_end;
                continue;
            }
            if let Some(open) = opens(line) {
                fence = Some(open);
                pos = line_end;
                continue;
            }
        }
        match start_outside_code(line) {
            Some(at) => {
                let start = pos + at;
                let (end, closed) = match body[start + 4..].find("-->") {
                    Some(i) => (start + 4 + i + 3, true),
                    None => (body.len(), false),
                };
                found.push(Comment { start, end, closed });
                pos = end;
            }
            None => pos = line_end,
        }
    }
    found
}

/// The fence a line opens: its character and length.
fn opens(line: &str) -> Option<(u8, usize)> {
    let rest = indented(line)?;
    let fence = *rest.as_bytes().first()?;
    if fence != b'`' && fence != b'~' {
        return None;
    }
    let len = rest.bytes().take_while(|&b| b == fence).count();
    // A backtick fence's info string holds no backtick.
    let ok = len >= 3 && (fence == b'~' || !rest[len..].contains('`'));
    ok.then_some((fence, len))
}

/// Whether `line` closes the fence `(char, len)`.
fn closes(line: &str, (fence, len): (u8, usize)) -> bool {
    indented(line).is_some_and(|rest| {
        let run = rest.bytes().take_while(|&b| b == fence).count();
        run >= len && rest[run..].trim().is_empty()
    })
}

/// The line after at most three spaces of indentation (`None` when more: an indented code
/// line, or not a fence).
fn indented(line: &str) -> Option<&str> {
    let spaces = line.bytes().take_while(|&b| b == b' ').count();
    (spaces <= 3).then(|| &line[spaces..])
}

/// Where `<!--` starts on `line`, outside inline code spans.
fn start_outside_code(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'`' => {
                let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
                // The span closes at the next run of the same length; unclosed, the backticks
                // are literal.
                i = closing_run(bytes, i + run, run).unwrap_or(i + run);
            }
            b'<' if bytes[i..].starts_with(b"<!--") => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The offset just past the next run of exactly `len` backticks from `from`.
fn closing_run(bytes: &[u8], from: usize, len: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
            if run == len {
                return Some(i + run);
            }
            i += run;
        } else {
            i += 1;
        }
    }
    None
}
