//! The bounds of `serve --listen` on requests below the MCP layer (the connections' are
//! [`super::connections`]'): the time a request body may take to arrive, the time an answer's
//! bytes may wait for the client to take them, and the requests in flight that open no session
//! (in total and per token).
//!
//! A request's place in flight is a counter behind a guard that gives it back when dropped,
//! once its answer has been sent (or dropped), so a streamed answer holds its place until its
//! last byte.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Body, Bytes, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Which bound a request in flight went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InFlightFull {
    /// Its token's (`--max-in-flight-per-token`).
    Token,
    /// The server's (`--max-in-flight`).
    Server,
}

#[derive(Debug, Default)]
struct Flights {
    total: usize,
    per_token: HashMap<Option<[u8; 32]>, usize>,
}

/// The requests in flight that open no session, counted in total and per token (the requests
/// of no token share one count).
#[derive(Debug)]
pub struct InFlight {
    max_total: usize,
    max_per_token: usize,
    flights: Mutex<Flights>,
}

impl InFlight {
    /// At most `max_total` requests, `max_per_token` of one token.
    pub fn new(max_total: usize, max_per_token: usize) -> Arc<InFlight> {
        Arc::new(InFlight {
            max_total,
            max_per_token,
            flights: Mutex::new(Flights::default()),
        })
    }

    fn flights(&self) -> MutexGuard<'_, Flights> {
        self.flights.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place for one more request of `token`, or the bound it would exceed.
    pub fn enter(self: &Arc<Self>, token: Option<[u8; 32]>) -> Result<Flight, InFlightFull> {
        let mut flights = self.flights();
        let mine = flights.per_token.get(&token).copied().unwrap_or(0);
        if mine >= self.max_per_token {
            return Err(InFlightFull::Token);
        }
        if flights.total >= self.max_total {
            return Err(InFlightFull::Server);
        }
        flights.total += 1;
        *flights.per_token.entry(token).or_insert(0) += 1;
        Ok(Flight {
            in_flight: Arc::clone(self),
            token,
        })
    }
}

/// One request's place in flight; given back when dropped.
#[derive(Debug)]
pub struct Flight {
    in_flight: Arc<InFlight>,
    token: Option<[u8; 32]>,
}

impl Drop for Flight {
    fn drop(&mut self) {
        let mut flights = self.in_flight.flights();
        flights.total = flights.total.saturating_sub(1);
        if let Some(n) = flights.per_token.get_mut(&self.token) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                flights.per_token.remove(&self.token);
            }
        }
    }
}

/// A body that holds `guard` until it ends or is dropped (an answer holding its request's
/// place in flight).
pub struct Holding<B, G> {
    inner: B,
    _guard: G,
}

impl<B, G> Holding<B, G> {
    /// `inner`, holding `guard`.
    pub fn new(inner: B, guard: G) -> Holding<B, G> {
        Holding {
            inner,
            _guard: guard,
        }
    }
}

impl<B: Body + Unpin, G: Unpin> Body for Holding<B, G> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Why a request body could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// The connection failed.
    #[error("{0}")]
    Read(#[from] hyper::Error),
    /// It did not all arrive within the body timeout.
    #[error("the request body did not arrive within {0:?}")]
    TimedOut(Duration),
}

/// A request body that must arrive whole within a deadline, counted from its headers: past
/// it, reading fails and `timed_out` is set (the answer is then 408 and the connection closed).
pub struct Deadline<B> {
    inner: B,
    limit: Duration,
    sleep: Pin<Box<tokio::time::Sleep>>,
    timed_out: Arc<AtomicBool>,
}

impl<B> Deadline<B> {
    /// `inner`, to be read within `limit` from now; `timed_out` is set if it is not.
    pub fn new(inner: B, limit: Duration, timed_out: Arc<AtomicBool>) -> Deadline<B> {
        Deadline {
            inner,
            limit,
            sleep: Box::pin(tokio::time::sleep(limit)),
            timed_out,
        }
    }
}

impl<B> Body for Deadline<B>
where
    B: Body<Data = Bytes, Error = hyper::Error> + Unpin,
{
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = &mut *self;
        if this.timed_out.load(Ordering::Relaxed) {
            return Poll::Ready(Some(Err(BodyError::TimedOut(this.limit))));
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => Poll::Ready(frame.map(|f| f.map_err(BodyError::Read))),
            Poll::Pending => match this.sleep.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    this.timed_out.store(true, Ordering::Relaxed);
                    Poll::Ready(Some(Err(BodyError::TimedOut(this.limit))))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A connection whose answers must be taken: a write (or flush) that the client leaves waiting
/// for `limit` fails with [`std::io::ErrorKind::TimedOut`], and hyper closes the connection.
/// The clock runs only while bytes wait for the client, from the first write it does not take
/// to the next it does: a GET stream waiting for its next event writes nothing and runs no clock,
/// while a client that pipelines requests and never reads their answers is closed once the
/// kernel's buffers are full and `limit` has passed.
pub struct WriteDeadline<I> {
    inner: I,
    limit: Duration,
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<I> WriteDeadline<I> {
    /// `inner`, each write taken within `limit`.
    pub fn new(inner: I, limit: Duration) -> WriteDeadline<I> {
        WriteDeadline {
            inner,
            limit,
            stalled: None,
        }
    }

    /// `polled`, a write's outcome: progress stops the clock, waiting starts it (once), and
    /// waiting past the limit is an error.
    fn within<T>(
        &mut self,
        polled: Poll<std::io::Result<T>>,
        cx: &mut Context<'_>,
    ) -> Poll<std::io::Result<T>> {
        if polled.is_ready() {
            self.stalled = None;
            return polled;
        }
        let limit = self.limit;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match stalled.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("the client took no bytes of the answer for {limit:?}"),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for WriteDeadline<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.within(polled, cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.within(polled, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        self.within(polled, cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.within(polled, cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_write_the_client_never_takes_fails_after_the_limit_and_progress_resets_it() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let (server, mut client) = tokio::io::duplex(16);
        let mut io = WriteDeadline::new(server, Duration::from_millis(50));
        // Taken: no clock.
        io.write_all(b"0123456789abcdef").await.unwrap();
        let mut got = [0u8; 16];
        client.read_exact(&mut got).await.unwrap();
        io.write_all(b"0123456789abcdef").await.unwrap();
        // Not taken: the next write waits, then fails.
        let error = io.write_all(b"more").await.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
    }

    #[test]
    fn requests_in_flight_are_bounded_per_token_and_in_total() {
        let in_flight = InFlight::new(3, 2);
        let one = Some([1; 32]);
        let two = Some([2; 32]);
        let held: Vec<Flight> = (0..2).map(|_| in_flight.enter(one).unwrap()).collect();
        assert_eq!(in_flight.enter(one).unwrap_err(), InFlightFull::Token);
        let other = in_flight.enter(two).unwrap();
        assert_eq!(in_flight.enter(None).unwrap_err(), InFlightFull::Server);
        drop(other);
        assert!(in_flight.enter(None).is_ok());
        drop(held);
        assert!(in_flight.enter(one).is_ok());
    }
}
