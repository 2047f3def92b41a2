//! Admission: a bound on how many of a provider's children are starting at once. Fifty node
//! processes booting together on two cores make every one of them late; admitted a few at a
//! time, each boots at full speed and the last one asks its model sooner (measured in
//! docs/performance.md). A child holds its [`Admitted`] from launch until it has started — the
//! provider drops it at the child's first output line, or when the child ends — and a child
//! that finds no room waits in [`Admission::admit`], where cancelling it ends the wait before
//! anything starts.
//!
//! [`Admission::start`] is the one way a provider starts a child under it: at once when there is
//! room, else queued on a task of its own.
//!
//! Deliberately not here: what "started" means for a product (the provider decides when to
//! drop the permit) and how a wait is shown (the provider's `queued` event).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// The bound of one provider's starting children (cheap to clone: clones share it).
#[derive(Clone, Debug)]
pub struct Admission {
    permits: Arc<Semaphore>,
    bound: usize,
    waiting: Arc<AtomicUsize>,
}

/// Room for one starting child; dropping it lets the next one start.
#[derive(Debug)]
pub struct Admitted {
    _permit: OwnedSemaphorePermit,
}

impl Admission {
    /// At most `bound` children starting at once (at least one).
    #[must_use]
    pub fn new(bound: usize) -> Self {
        let bound = bound.max(1);
        Self {
            permits: Arc::new(Semaphore::new(bound)),
            bound,
            waiting: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// As many as this machine has CPUs (what a row gets unless it says otherwise).
    #[must_use]
    pub fn per_cpu() -> Self {
        Self::new(std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
    }

    /// The bound.
    #[must_use]
    pub fn bound(&self) -> usize {
        self.bound
    }

    /// Room now, if there is some.
    #[must_use]
    pub fn try_admit(&self) -> Option<Admitted> {
        Arc::clone(&self.permits)
            .try_acquire_owned()
            .ok()
            .map(|permit| Admitted { _permit: permit })
    }

    /// How many children wait for room.
    #[must_use]
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Waits for room (first come, first served); `None` when `cancel` fires first.
    pub async fn admit(&self, cancel: &CancellationToken) -> Option<Admitted> {
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let admitted = tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            permit = Arc::clone(&self.permits).acquire_owned() => permit.ok(),
        };
        self.waiting.fetch_sub(1, Ordering::Relaxed);
        admitted.map(|permit| Admitted { _permit: permit })
    }
}

/// How a provider's child reports what [`Admission::start`] does with it: `S` is its run's
/// sender, which the helper hands to the launched child's work, or ends itself.
pub struct Report<S> {
    /// The child waits, `ahead` before it.
    pub queued: fn(&S, usize),
    /// It never started: `None` when cancelled while it waited, else why it could not launch.
    pub never_started: fn(S, Option<String>),
}

impl Admission {
    /// Starts a child: `launch` launches it (its process, say) and returns the work that drives
    /// it given `sender`. With room now, `launch` runs here and its error is this call's (the
    /// start fails as without admission); without, the child is reported queued and waits on a
    /// task of its own — a cancel of `cancel` then ends it through
    /// `never_started` with nothing launched, and a launch that fails ends it with the error.
    ///
    /// # Errors
    /// `launch`'s, when it ran here.
    pub fn start<S, L, D, F, E>(
        &self,
        sender: S,
        cancel: CancellationToken,
        report: Report<S>,
        launch: L,
    ) -> Result<(), E>
    where
        S: Send + 'static,
        L: FnOnce(Admitted) -> Result<D, E> + Send + 'static,
        D: FnOnce(S) -> F + Send,
        F: std::future::Future<Output = ()> + Send + 'static,
        E: std::fmt::Display + Send,
    {
        if let Some(admitted) = self.try_admit() {
            tokio::spawn(launch(admitted)?(sender));
            return Ok(());
        }
        (report.queued)(&sender, self.waiting());
        let admission = self.clone();
        tokio::spawn(async move {
            let Some(admitted) = admission.admit(&cancel).await else {
                (report.never_started)(sender, None);
                return;
            };
            match launch(admitted) {
                Ok(drive) => drive(sender).await,
                Err(error) => (report.never_started)(sender, Some(error.to_string())),
            }
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_child_waits_for_room_and_a_cancelled_wait_starts_nothing() {
        let admission = Admission::new(1);
        let first = admission.try_admit().expect("room for one");
        assert!(admission.try_admit().is_none());
        // A cancelled wait ends without room.
        let cancel = CancellationToken::new();
        let waiting = tokio::spawn({
            let admission = admission.clone();
            let cancel = cancel.clone();
            async move { admission.admit(&cancel).await.is_some() }
        });
        while admission.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        cancel.cancel();
        assert!(!waiting.await.unwrap());
        assert_eq!(admission.waiting(), 0);
        // A wait ends when the first one has started.
        let next = tokio::spawn({
            let admission = admission.clone();
            async move { admission.admit(&CancellationToken::new()).await.is_some() }
        });
        while admission.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        drop(first);
        assert!(next.await.unwrap());
        assert_eq!(Admission::new(0).bound(), 1);
    }
}
