//! Polling a future again at once when it wakes itself while it is being polled.
//!
//! The official SDK's connection is one future made of several actors that talk over channels:
//! a line read wakes the transport actor, which hands the parsed message to the dispatch actor,
//! which answers a waiting request, and so on, each hand-off a wake of the same task while that
//! task runs. tokio treats such a wake as a yield: the task goes to the back of the run queue
//! and another worker is woken to look for work, a thread switch on another core (where the
//! agent runs) for every hand-off. [`Coalesced`] keeps those wakes to itself and polls again in
//! the same turn; a wake from anywhere else (the reactor, another task) reaches the scheduler as
//! before.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use futures::task::AtomicWaker;

/// Set while the inner future is polled.
const POLLING: u8 = 1;
/// Set by a wake since the poll began.
const WOKEN: u8 = 2;
/// Polls in one turn at most; a future still waking itself then yields to the scheduler, as it
/// would have without this (tokio's cooperative budget, for one, ends in a self-wake).
const POLLS_PER_TURN: usize = 16;

/// The waker the inner future sees.
#[derive(Debug, Default)]
struct Flag {
    state: AtomicU8,
    outer: AtomicWaker,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.state.fetch_or(WOKEN, Ordering::AcqRel) & POLLING == 0 {
            self.outer.wake();
        }
    }
}

/// `inner`, polled again at once after a wake during its own poll. See the module docs.
#[derive(Debug)]
pub(crate) struct Coalesced<F> {
    inner: Pin<Box<F>>,
    flag: Arc<Flag>,
    waker: Waker,
}

impl<F: Future> Coalesced<F> {
    pub(crate) fn new(inner: F) -> Self {
        let flag = Arc::new(Flag::default());
        Self {
            inner: Box::pin(inner),
            waker: Waker::from(Arc::clone(&flag)),
            flag,
        }
    }
}

impl<F: Future> Future for Coalesced<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        this.flag.outer.register(cx.waker());
        let mut inner_cx = Context::from_waker(&this.waker);
        for _ in 0..POLLS_PER_TURN {
            this.flag.state.store(POLLING, Ordering::Release);
            if let Poll::Ready(output) = this.inner.as_mut().poll(&mut inner_cx) {
                this.flag.state.store(0, Ordering::Release);
                return Poll::Ready(output);
            }
            // A wake that comes after this reaches the scheduler; one that came during the
            // poll is this loop's to answer.
            if this.flag.state.swap(0, Ordering::AcqRel) & WOKEN == 0 {
                return Poll::Pending;
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Counts the wakes that reach it.
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Wakes itself `times` times, once per poll, then is ready with how often it was polled.
    struct SelfWaking {
        times: usize,
        polls: usize,
    }

    impl Future for SelfWaking {
        type Output = usize;

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
            self.polls += 1;
            if self.polls > self.times {
                return Poll::Ready(self.polls);
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    #[test]
    fn a_wake_during_the_poll_is_answered_in_the_same_turn() {
        let count = Arc::new(Count::default());
        let waker = Waker::from(Arc::clone(&count));
        let mut cx = Context::from_waker(&waker);
        let mut future = Coalesced::new(SelfWaking { times: 5, polls: 0 });
        assert_eq!(Pin::new(&mut future).poll(&mut cx), Poll::Ready(6));
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            0,
            "no wake reached the scheduler"
        );
    }

    #[test]
    fn a_future_that_keeps_waking_itself_yields_to_the_scheduler() {
        let count = Arc::new(Count::default());
        let waker = Waker::from(Arc::clone(&count));
        let mut cx = Context::from_waker(&waker);
        let mut future = Coalesced::new(SelfWaking {
            times: usize::MAX,
            polls: 0,
        });
        assert_eq!(Pin::new(&mut future).poll(&mut cx), Poll::Pending);
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            1,
            "the turn ended in one wake"
        );
        assert_eq!(future.inner.polls, POLLS_PER_TURN);
    }

    #[test]
    fn a_wake_after_the_poll_reaches_the_scheduler() {
        let count = Arc::new(Count::default());
        let waker = Waker::from(Arc::clone(&count));
        let mut cx = Context::from_waker(&waker);
        let (sender, receiver) = futures::channel::oneshot::channel::<u8>();
        let mut future = Coalesced::new(receiver);
        assert!(Pin::new(&mut future).poll(&mut cx).is_pending());
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        sender.send(7).unwrap();
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "the send woke the task");
        assert_eq!(Pin::new(&mut future).poll(&mut cx), Poll::Ready(Ok(7)));
    }
}
