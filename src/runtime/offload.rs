//! Blocking work awaited from any async executor: [`offload`] runs a closure on a thread of its
//! own and returns a future that completes with its result. The script runner waits on a child
//! process for up to its time limit; an async host must not spend one of its executor's workers on
//! that, and this crate must not choose the host's executor (tokio, async-std, smol or a
//! hand-rolled one all poll the same [`Future`]). A panic in the closure becomes
//! [`OffloadError`] instead of crossing into the host's task.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

/// The closure panicked, or its thread could not be started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the blocking work {0}")]
pub struct OffloadError(&'static str);

struct ResultSlot<T> {
    result: Option<Result<T, OffloadError>>,
    waker: Option<Waker>,
}

/// Runs `work` on a new thread; the returned future resolves to its result.
pub fn offload<T, F>(work: F) -> Offloaded<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let slot = Arc::new(Mutex::new(ResultSlot {
        result: None,
        waker: None,
    }));
    let filled = Arc::clone(&slot);
    let spawned = std::thread::Builder::new()
        .name("skillfold-offload".into())
        .spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                .map_err(|_| OffloadError("panicked"));
            let mut slot = filled.lock().unwrap_or_else(PoisonError::into_inner);
            slot.result = Some(result);
            if let Some(waker) = slot.waker.take() {
                waker.wake();
            }
        });
    if spawned.is_err() {
        slot.lock().unwrap_or_else(PoisonError::into_inner).result =
            Some(Err(OffloadError("could not start a thread")));
    }
    Offloaded { slot }
}

/// The future [`offload`] returns.
#[must_use = "the work runs regardless, but its result is only seen by awaiting this"]
pub struct Offloaded<T> {
    slot: Arc<Mutex<ResultSlot<T>>>,
}

impl<T> Future for Offloaded<T> {
    type Output = Result<T, OffloadError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        match slot.result.take() {
            Some(result) => Poll::Ready(result),
            None => {
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::task::Wake;

    struct Signal(Mutex<mpsc::Sender<()>>);

    impl Wake for Signal {
        fn wake(self: Arc<Self>) {
            let _ = self.0.lock().unwrap().send(());
        }
    }

    /// A minimal executor: polls, and waits for a wake between polls.
    fn block_on<T>(future: impl Future<Output = T>) -> T {
        let (tx, rx) = mpsc::channel();
        let waker = Waker::from(Arc::new(Signal(Mutex::new(tx))));
        let mut cx = Context::from_waker(&waker);
        let mut future = std::pin::pin!(future);
        loop {
            if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
                return value;
            }
            rx.recv().unwrap();
        }
    }

    #[test]
    fn the_result_arrives_after_the_work_finishes_on_its_own_thread() {
        let (release, gate) = mpsc::channel::<()>();
        let caller = std::thread::current().id();
        let future = offload(move || {
            gate.recv().unwrap();
            std::thread::current().id()
        });
        release.send(()).unwrap();
        let worker = block_on(future).unwrap();
        assert_ne!(worker, caller);
    }

    #[test]
    fn a_panic_becomes_an_error_not_a_panic_in_the_awaiting_task() {
        let outcome = block_on(offload(|| -> u8 { panic!("boom") }));
        assert_eq!(outcome, Err(OffloadError("panicked")));
    }
}
