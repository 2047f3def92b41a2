//! One task: its snapshot and the events it has had that are still kept.
//!
//! A live task keeps its events, so a client that reconnects (`SubscribeToTask`) gets the
//! snapshot and then every event after it, none lost or doubled: the snapshot and the number of
//! the next event are read under one lock, and new events wake subscribers through a `watch` of
//! the event count (a subscriber marks the count seen before it looks, so a push between its
//! look and its wait still wakes it). Once a task has ended and no stream is still reading
//! them, its events are dropped: a finished task is read whole from its snapshot.
//!
//! Events are numbered from 0 (the submitted `task`) as they come; the kept ones are a window
//! `base..pushed` of them. A stream reads from a number on and says where it is, so the window
//! may start past an event only once every stream has read it ([`EntryState::shed`], when the
//! table is over its byte bound). A client that comes back for events no longer kept
//! (`SubscribeToTask` with our `from`, below the window) gets A2A's snapshot instead.
//!
//! Each entry knows its size as JSON (its kept events, and its snapshot, measured at its start
//! and end), and once in a table adds it to the table's count ([`Budget`]).

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures::Stream;
use subagent_a2a::types::{StreamResponse, Task, TaskState, apply};
use subagent_core::CancellationToken;
use tokio::sync::watch;

use super::Resumable;

/// The size of `value` as JSON, in bytes, without building the JSON.
pub(super) fn json_len(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// What keeping `event` costs, as the table counts it: its size as JSON and its fixed size in
/// memory (a status update of a few words is some 250 bytes of JSON in a 424-byte value), so
/// that a task of tens of thousands of small events is counted near what it holds.
pub(super) fn kept_bytes(event: &StreamResponse) -> usize {
    json_len(event) + std::mem::size_of::<StreamResponse>()
}

/// The bytes a table's entries take (as JSON): each entry in the table keeps its share in it.
pub(super) type Budget = Arc<AtomicUsize>;

/// One task.
#[derive(Debug)]
pub(crate) struct Entry {
    state: Mutex<EntryState>,
    /// How many events the task has had (kept or not).
    count: watch::Sender<usize>,
    cancel: CancellationToken,
}

#[derive(Debug)]
pub(super) struct EntryState {
    task: Task,
    /// The kept events, with their size as JSON: the first is the task's event number `base`.
    events: VecDeque<(Box<StreamResponse>, usize)>,
    base: usize,
    /// An event that ends the stream was pushed: nothing follows.
    pub(super) done: bool,
    /// Streams reading the events, by id: the number of the next event each reads.
    readers: HashMap<u64, usize>,
    next_reader: u64,
    /// A stream has read the events: its client may have lost it and come back for what it
    /// missed (`SubscribeToTask` with our `from`), so they are kept after the end until the
    /// task [expires](Entry::expire) (a task nobody streamed drops them at its end).
    streamed: bool,
    /// The time to come back has passed.
    expired: bool,
    /// How to continue the task once it has ended: its provider, skill and session.
    resumable: Option<Resumable>,
    /// The transcripts counted for this task in its table (changed under the table's lock).
    pub(super) transcripts: Vec<PathBuf>,
    /// The kept events' size as JSON.
    event_bytes: usize,
    /// The snapshot's size as JSON, as of the task's start, then of its end.
    snapshot_bytes: usize,
    /// The table's count, once the task is in one, and what this entry has added to it.
    budget: Option<Budget>,
    counted: usize,
}

impl EntryState {
    /// Brings the table's count up to date with this entry's size.
    fn settle(&mut self) {
        let now = self.event_bytes + self.snapshot_bytes;
        if let Some(budget) = &self.budget {
            if now >= self.counted {
                budget.fetch_add(now - self.counted, Ordering::Relaxed);
            } else {
                budget.fetch_sub(self.counted - now, Ordering::Relaxed);
            }
        }
        self.counted = now;
    }

    /// Counts this entry in `budget` (it joined a table).
    pub(super) fn join(&mut self, budget: &Budget) {
        self.budget = Some(Arc::clone(budget));
        self.counted = 0;
        self.settle();
    }

    /// Takes this entry out of its table's count (it was forgotten).
    pub(super) fn leave(&mut self) {
        if let Some(budget) = self.budget.take() {
            budget.fetch_sub(self.counted, Ordering::Relaxed);
        }
        self.counted = 0;
    }

    /// The number of the event after the last kept one.
    fn end(&self) -> usize {
        self.base + self.events.len()
    }

    /// Drops the kept events before `until` (their number).
    fn drop_before(&mut self, until: usize) {
        while self.base < until {
            let Some((_, bytes)) = self.events.pop_front() else {
                break;
            };
            self.event_bytes = self.event_bytes.saturating_sub(bytes);
            self.base += 1;
        }
        // The room goes with the events (a streamed answer is tens of thousands of them): all
        // of it when none is left, down to twice what is left when that is under a quarter.
        if self.events.is_empty() {
            self.events = VecDeque::new();
        } else if self.events.len() < self.events.capacity() / 4 {
            self.events.shrink_to(self.events.len() * 2);
        }
        self.settle();
    }

    /// Frees the events once the task has ended and nobody reads them (nor may come back).
    fn release(&mut self) {
        if self.done && self.readers.is_empty() && (!self.streamed || self.expired) {
            self.drop_before(self.end());
        }
    }

    /// Whether the task may be forgotten: it has ended and no stream still reads its events.
    pub(super) fn may_forget(&self) -> bool {
        self.done && self.readers.is_empty()
    }

    /// Drops the kept events every stream has read (all of them when none reads): what is
    /// lost is only a returning client's exact events, which then gets the snapshot.
    pub(super) fn shed(&mut self) {
        let until = self.readers.values().copied().min().unwrap_or(self.end());
        self.drop_before(until.min(self.end()));
    }
}

/// A stream's hold on its task's events.
struct Reader {
    entry: Arc<Entry>,
    id: u64,
}

impl Drop for Reader {
    fn drop(&mut self) {
        let mut state = self.entry.lock();
        state.readers.remove(&self.id);
        state.release();
    }
}

impl Entry {
    /// A task whose first event is its submitted snapshot; `cancel` stops its run.
    pub(crate) fn new(task: Task, cancel: CancellationToken) -> Arc<Self> {
        let first = StreamResponse::Task(task.clone());
        let first_bytes = kept_bytes(&first);
        let snapshot_bytes = json_len(&task);
        Arc::new(Self {
            state: Mutex::new(EntryState {
                task,
                events: VecDeque::from([(Box::new(first), first_bytes)]),
                base: 0,
                done: false,
                readers: HashMap::new(),
                next_reader: 0,
                streamed: false,
                expired: false,
                resumable: None,
                transcripts: Vec::new(),
                event_bytes: first_bytes,
                snapshot_bytes,
                budget: None,
                counted: 0,
            }),
            count: watch::Sender::new(1),
            cancel,
        })
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, EntryState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records an event (ignored once the stream has ended) and wakes subscribers.
    pub(crate) fn push(&self, event: StreamResponse) {
        let bytes = kept_bytes(&event);
        let count = {
            let mut state = self.lock();
            if state.done {
                return;
            }
            apply(&mut state.task, &event);
            state.done = event.ends_stream();
            state.events.push_back((Box::new(event), bytes));
            state.event_bytes += bytes;
            if state.done {
                state.snapshot_bytes = json_len(&state.task);
            }
            let count = state.end();
            state.settle();
            state.release();
            count
        };
        self.count.send_replace(count);
    }

    /// Sets the finished task's metadata (before its last event).
    pub(crate) fn set_metadata(&self, metadata: subagent_a2a::types::Metadata) {
        self.lock().task.metadata = Some(metadata);
    }

    /// The time a client had to come back for the events it missed has passed: once the task
    /// has ended and no stream reads them, they are dropped (its snapshot stays).
    pub(crate) fn expire(&self) {
        let mut state = self.lock();
        state.expired = true;
        state.release();
    }

    /// Remembers how to continue the task once it has ended.
    pub(crate) fn set_resumable(&self, resumable: Resumable) {
        self.lock().resumable = Some(resumable);
    }

    /// How to continue the task, if it can be.
    pub(crate) fn resumable(&self) -> Option<Resumable> {
        self.lock().resumable.clone()
    }

    /// The current snapshot.
    pub(crate) fn snapshot(&self) -> Task {
        self.lock().task.clone()
    }

    /// The current state.
    pub(crate) fn state(&self) -> TaskState {
        self.lock().task.status.state
    }

    /// How many events the task has had (kept or not).
    pub(crate) fn pushed(&self) -> usize {
        *self.count.borrow()
    }

    /// Whether the task's stream has ended.
    pub(crate) fn is_done(&self) -> bool {
        self.lock().done
    }

    /// Cancels the task's run.
    pub(crate) fn cancel(&self) {
        self.cancel.cancel();
    }

    /// Every event from the first (what `SendStreamingMessage` streams): take it before the
    /// task goes into the table (which may drop events nobody reads) and before its run can
    /// end, or there may be nothing left to read.
    pub(crate) fn events(
        self: &Arc<Self>,
    ) -> impl Stream<Item = StreamResponse> + Send + 'static + use<> {
        let (id, next) = {
            let mut state = self.lock();
            state.streamed = true;
            let next = state.base;
            (Self::add_reader(&mut state, next), next)
        };
        self.events_from(id, next, None)
    }

    fn add_reader(state: &mut EntryState, next: usize) -> u64 {
        let id = state.next_reader;
        state.next_reader += 1;
        state.readers.insert(id, next);
        id
    }

    /// The snapshot as a `task` event, then every event after it (what `SubscribeToTask`
    /// streams); `None` when the task's stream has already ended.
    pub(crate) fn subscribe(
        self: &Arc<Self>,
    ) -> Option<impl Stream<Item = StreamResponse> + Send + 'static + use<>> {
        let (id, snapshot, next) = {
            let mut state = self.lock();
            if state.done {
                return None;
            }
            state.streamed = true;
            let next = state.end();
            let id = Self::add_reader(&mut state, next);
            (id, state.task.clone(), next)
        };
        Some(self.events_from(id, next, Some(StreamResponse::Task(snapshot))))
    }

    /// The events from number `from` on (our extension's re-subscribe: the client has read
    /// `from` events of this task's streams); `None` when they are no longer kept (dropped
    /// past the byte bound, the task ended and expired, or nobody streamed it) or `from` is
    /// past them.
    pub(crate) fn resume_from(
        self: &Arc<Self>,
        from: usize,
    ) -> Option<impl Stream<Item = StreamResponse> + Send + 'static + use<>> {
        let id = {
            let mut state = self.lock();
            if from < state.base || from > state.end() || (state.done && state.events.is_empty()) {
                return None;
            }
            state.streamed = true;
            Self::add_reader(&mut state, from)
        };
        Some(self.events_from(id, from, None))
    }

    /// The stream from event number `next` on, for the reader `id`.
    fn events_from(
        self: &Arc<Self>,
        id: u64,
        next: usize,
        first: Option<StreamResponse>,
    ) -> impl Stream<Item = StreamResponse> + Send + 'static + use<> {
        let receiver = self.count.subscribe();
        let reader = Reader {
            entry: Arc::clone(self),
            id,
        };
        let start = (reader, receiver, next, first);
        futures::stream::unfold(start, |(reader, mut receiver, next, first)| async move {
            if let Some(first) = first {
                return Some((first, (reader, receiver, next, None)));
            }
            loop {
                receiver.borrow_and_update();
                {
                    let mut state = reader.entry.lock();
                    // Never below the window while reading: events are dropped only once
                    // every stream has read them.
                    let kept = next
                        .checked_sub(state.base)
                        .and_then(|index| state.events.get(index));
                    if let Some((event, _)) = kept {
                        let event = StreamResponse::clone(event);
                        state.readers.insert(reader.id, next + 1);
                        drop(state);
                        return Some((event, (reader, receiver, next + 1, None)));
                    }
                    if state.done || next < state.base {
                        return None;
                    }
                }
                if receiver.changed().await.is_err() {
                    return None;
                }
            }
        })
    }

    /// How many events are kept.
    #[cfg(test)]
    pub(super) fn retained(&self) -> usize {
        self.lock().events.len()
    }

    /// How many events the kept events' buffer has room for (what it holds on to).
    #[cfg(test)]
    pub(super) fn room(&self) -> usize {
        self.lock().events.capacity()
    }

    /// Waits until the task's stream has ended.
    pub(crate) async fn finished(&self) {
        let mut receiver = self.count.subscribe();
        loop {
            receiver.borrow_and_update();
            if self.is_done() {
                return;
            }
            if receiver.changed().await.is_err() {
                return;
            }
        }
    }
}
