//! Answers spliced together from bytes built once per snapshot.
//!
//! A `load_skill` call for a body answers the same bytes every time for a snapshot: its output's
//! JSON text (`structuredContent`) and that text as a JSON string (the text content). rmcp takes
//! only values it serialises itself, which would JSON-escape the whole body twice on every call;
//! over HTTP the handler hands rmcp two short placeholders instead
//! ([`Splicer::placeholders`]), and [`response`] puts the prebuilt bytes in their place in what
//! rmcp wrote — every SSE event, every whole (JSON) answer, replays of a stream included — so a
//! client reads the very bytes a fully serialised answer has.
//!
//! The text placeholder is the string `skillfold-splice-<nonce>-<id>-t`, the structured one the
//! object `{"skillfold-splice-<nonce>-<id>-s": null}` (an object, as rmcp keeps only an object
//! as `structuredContent` for sessions before 2026-07-28), where the nonce is 128 random bits drawn when the server starts: no input can forge one, and none leaves
//! the process (an answer whose placeholder names bytes no longer held ends there instead; the
//! bytes of a replaced snapshot are kept for [`RETIRED`] more snapshots, for streams replayed
//! after a reload).
//!
//! Nothing is copied: a spliced answer is a list of pieces ([`Pieces`]) — slices of what rmcp
//! wrote and the prebuilt bytes themselves — that hyper writes out with one vectored write.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use http_body_util::BodyExt as _;
use hyper::body::{Body as _, Bytes, Frame, SizeHint};
use hyper::{Response, StatusCode};

use super::body::Body;
use super::replies::{full, plain};

/// How many bodies of snapshots no longer served are kept (for replayed streams).
const RETIRED: usize = 8;

/// The prebuilt bytes placeholders stand for.
#[derive(Debug)]
pub(crate) struct Splicer {
    /// `"skillfold-splice-<nonce>-`: how every placeholder begins once rmcp has serialised it.
    tag: String,
    finder: memchr::memmem::Finder<'static>,
    entries: Mutex<PrebuiltBodies>,
}

#[derive(Debug, Default)]
struct PrebuiltBodies {
    next: u64,
    list: Vec<PrebuiltBody>,
}

#[derive(Debug)]
struct PrebuiltBody {
    id: u64,
    /// The output's JSON text, as the snapshot holds it (`structuredContent`).
    json: Arc<str>,
    /// The same bytes, shared with `json` (not a copy), as pieces of answers are.
    json_bytes: Bytes,
    /// The same text as a JSON string, quotes included (the text content).
    string: Bytes,
}

impl PrebuiltBody {
    /// Its snapshot is no longer served: the text is held only here (by the entry and by the
    /// owner of its bytes).
    fn retired(&self) -> bool {
        Arc::strong_count(&self.json) == 2
    }
}

/// The snapshot's JSON text as the owner of [`Bytes`] that share it.
struct SharedText(Arc<str>);

impl AsRef<[u8]> for SharedText {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// Which of an entry's bytes a placeholder stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Text,
    Structured,
}

/// A placeholder names bytes that are no longer held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Missing;

impl Splicer {
    /// A splicer with a fresh random nonce; `None` when no randomness is available (answers are
    /// then serialised whole, as without it).
    pub(crate) fn new() -> Option<Splicer> {
        let mut nonce = [0u8; 16];
        rustls::crypto::ring::default_provider()
            .secure_random
            .fill(&mut nonce)
            .ok()?;
        let hex: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
        let tag = format!("\"skillfold-splice-{hex}-");
        Some(Splicer {
            finder: memchr::memmem::Finder::new(tag.as_bytes()).into_owned(),
            tag,
            entries: Mutex::new(PrebuiltBodies::default()),
        })
    }

    /// The placeholders of the text content (a string) and of `structuredContent` (an object)
    /// for the output whose JSON text is `json` (the snapshot's, kept by it: the same `Arc` for
    /// every call).
    pub(crate) fn placeholders(&self, json: &Arc<str>) -> (String, serde_json::Value) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let id = match entries.list.iter().find(|e| Arc::ptr_eq(&e.json, json)) {
            Some(entry) => entry.id,
            None => {
                let id = entries.next;
                entries.next += 1;
                // Held only here: its snapshot is no longer served.
                let retired = entries.list.iter().filter(|e| e.retired()).count();
                if retired >= RETIRED
                    && let Some(oldest) = entries.list.iter().position(PrebuiltBody::retired)
                {
                    entries.list.remove(oldest);
                }
                let string = serde_json::to_string(&**json).unwrap_or_default();
                entries.list.push(PrebuiltBody {
                    id,
                    json: Arc::clone(json),
                    json_bytes: Bytes::from_owner(SharedText(Arc::clone(json))),
                    string: Bytes::from(string),
                });
                id
            }
        };
        let tag = &self.tag[1..];
        let mut structured = serde_json::Map::new();
        structured.insert(format!("{tag}{id}-s"), serde_json::Value::Null);
        (
            format!("{tag}{id}-t"),
            serde_json::Value::Object(structured),
        )
    }

    /// `bytes` with every placeholder (quoted, as serialised) replaced by what it stands for, as
    /// the pieces to send in order (slices of `bytes` and the prebuilt bytes, none copied);
    /// `None` when there is none.
    pub(crate) fn splice(&self, bytes: &Bytes) -> Result<Option<Vec<Bytes>>, Missing> {
        let mut found = self.finder.find_iter(bytes).peekable();
        if found.peek().is_none() {
            return Ok(None);
        }
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let mut pieces = Vec::new();
        let mut at = 0;
        for start in found {
            let (id, part, read) = parse(&bytes[start + self.tag.len()..]).ok_or(Missing)?;
            let entry = entries.list.iter().find(|e| e.id == id).ok_or(Missing)?;
            let (from, piece) = match part {
                Part::Text => (start, &entry.string),
                // The object's opening brace is the byte before the tag.
                Part::Structured => (
                    start
                        .checked_sub(1)
                        .filter(|&b| bytes[b] == b'{')
                        .ok_or(Missing)?,
                    &entry.json_bytes,
                ),
            };
            if from < at {
                return Err(Missing);
            }
            if from > at {
                pieces.push(bytes.slice(at..from));
            }
            pieces.push(piece.clone());
            at = start + self.tag.len() + read;
        }
        if at < bytes.len() {
            pieces.push(bytes.slice(at..));
        }
        Ok(Some(pieces))
    }
}

/// `<id>-t"` or `<id>-s":null}` after a placeholder's tag: the id, the part and the length
/// read.
fn parse(rest: &[u8]) -> Option<(u64, Part, usize)> {
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let id = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    let after = &rest[digits..];
    if after.starts_with(b"-t\"") {
        Some((id, Part::Text, digits + 3))
    } else if after.starts_with(b"-s\":null}") {
        Some((id, Part::Structured, digits + 9))
    } else {
        None
    }
}

/// rmcp's `response` with the placeholders in it spliced: a whole answer (its length known, a
/// JSON answer) at once, keeping its length exact; an event stream event by event.
pub(crate) async fn response(splicer: &Arc<Splicer>, response: Response<Body>) -> Response<Body> {
    if response.body().size_hint().exact().is_none() {
        return response.map(|inner| {
            Spliced {
                inner,
                splicer: Arc::clone(splicer),
                pending: Vec::new(),
                ended: false,
            }
            .boxed()
        });
    }
    let (parts, body) = response.into_parts();
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    };
    match splicer.splice(&bytes) {
        Ok(None) => Response::from_parts(parts, full(bytes)),
        Ok(Some(pieces)) => Response::from_parts(parts, Pieces::new(pieces).boxed()),
        Err(Missing) => gone(),
    }
}

/// The answer to a request whose answer names bytes no longer held.
pub(super) fn gone() -> Response<Body> {
    plain(
        StatusCode::INTERNAL_SERVER_ERROR,
        "the answer refers to a snapshot no longer held; send the request again\n",
    )
}

/// An event stream with its placeholders spliced, frame by frame (rmcp writes one event per
/// frame), each spliced frame sent as its pieces; a frame whose placeholder names bytes no
/// longer held ends the stream.
struct Spliced {
    inner: Body,
    splicer: Arc<Splicer>,
    /// The pieces of the frame being sent, in reverse order.
    pending: Vec<Bytes>,
    ended: bool,
}

impl hyper::body::Body for Spliced {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(piece) = self.pending.pop() {
            return Poll::Ready(Some(Ok(Frame::data(piece))));
        }
        if self.ended {
            return Poll::Ready(None);
        }
        let frame = match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            other => return other,
        };
        let data = match frame.into_data() {
            Ok(data) => data,
            Err(frame) => return Poll::Ready(Some(Ok(frame))),
        };
        match self.splicer.splice(&data) {
            Ok(None) => Poll::Ready(Some(Ok(Frame::data(data)))),
            Ok(Some(mut pieces)) => {
                pieces.reverse();
                let first = pieces.pop().unwrap_or_default();
                self.pending = pieces;
                Poll::Ready(Some(Ok(Frame::data(first))))
            }
            Err(Missing) => {
                self.ended = true;
                Poll::Ready(None)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.pending.is_empty() && (self.ended || self.inner.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

/// A whole body sent as its pieces, one frame each, its length exact (`Content-Length`):
/// hyper writes the pieces out with one vectored write, none copied.
pub(super) struct Pieces {
    /// The pieces not yet sent, in reverse order.
    rest: Vec<Bytes>,
    length: u64,
}

impl Pieces {
    pub(super) fn new(mut pieces: Vec<Bytes>) -> Pieces {
        pieces.retain(|p| !p.is_empty());
        pieces.reverse();
        let length = pieces.iter().map(|p| p.len() as u64).sum();
        Pieces {
            rest: pieces,
            length,
        }
    }
}

impl hyper::body::Body for Pieces {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.rest.pop().map(|piece| {
            self.length -= piece.len() as u64;
            Ok(Frame::data(piece))
        }))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.length)
    }
}

#[cfg(test)]
#[path = "splice_tests.rs"]
mod tests;
