//! The task table: every task the server started, its snapshot and every event it streamed.
//!
//! A live task keeps all its events, so a client that reconnects (`SubscribeToTask`) gets the
//! snapshot and then every event after it, none lost or doubled: the snapshot and the index of
//! the next event are read under one lock, and new events wake subscribers through a `watch` of
//! the event count (a subscriber marks the count seen before it looks, so a push between its
//! look and its wait still wakes it). Once a task has ended and no stream is still reading
//! them, its events are dropped: a finished task is read whole from its snapshot.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use futures::Stream;
use subagent_a2a::types::{StreamResponse, Task, TaskState, apply};
use subagent_core::CancellationToken;
use tokio::sync::watch;

/// One task.
#[derive(Debug)]
pub struct Entry {
    state: Mutex<EntryState>,
    count: watch::Sender<usize>,
    cancel: CancellationToken,
}

#[derive(Debug)]
struct EntryState {
    task: Task,
    events: Vec<StreamResponse>,
    /// An event that ends the stream was pushed: nothing follows.
    done: bool,
    /// Streams still reading `events`.
    readers: usize,
    /// A stream has read the events: its client may have lost it and come back for what it
    /// missed (`SubscribeToTask` with our `from`), so they are kept after the end until the
    /// task [expires](Entry::expire) (a task nobody streamed drops them at its end).
    streamed: bool,
    /// The time to come back has passed.
    expired: bool,
    /// How to continue the task once it has ended: its provider, skill and session.
    resumable: Option<Resumable>,
}

/// What a finished task needs to be continued by a later message (as `resume`).
#[derive(Clone, Debug)]
pub struct Resumable {
    /// The provider that ran it.
    pub provider: String,
    /// The skill it was sent to.
    pub skill: Option<String>,
    /// Its session (with the server's own cwd and transcript: never sent to a client).
    pub session: subagent_core::SessionRef,
}

impl EntryState {
    /// Frees the events once the task has ended and nobody reads them (nor may come back).
    fn release(&mut self) {
        if self.done && self.readers == 0 && (!self.streamed || self.expired) {
            self.events = Vec::new();
        }
    }
}

/// A stream's hold on its task's events.
struct Reader {
    entry: Arc<Entry>,
}

impl Drop for Reader {
    fn drop(&mut self) {
        let mut state = self.entry.lock();
        state.readers = state.readers.saturating_sub(1);
        state.release();
    }
}

impl Entry {
    /// A task whose first event is its submitted snapshot; `cancel` stops its run.
    pub fn new(task: Task, cancel: CancellationToken) -> Arc<Self> {
        let first = StreamResponse::Task(task.clone());
        Arc::new(Self {
            state: Mutex::new(EntryState {
                task,
                events: vec![first],
                done: false,
                readers: 0,
                streamed: false,
                expired: false,
                resumable: None,
            }),
            count: watch::Sender::new(1),
            cancel,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, EntryState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records an event (ignored once the stream has ended) and wakes subscribers.
    pub fn push(&self, event: StreamResponse) {
        let count = {
            let mut state = self.lock();
            if state.done {
                return;
            }
            apply(&mut state.task, &event);
            state.done = event.ends_stream();
            state.events.push(event);
            let count = state.events.len();
            state.release();
            count
        };
        self.count.send_replace(count);
    }

    /// Sets the finished task's metadata (before its last event).
    pub fn set_metadata(&self, metadata: subagent_a2a::types::Metadata) {
        self.lock().task.metadata = Some(metadata);
    }

    /// The time a client had to come back for the events it missed has passed: once the task
    /// has ended and no stream reads them, they are dropped (its snapshot stays).
    pub fn expire(&self) {
        let mut state = self.lock();
        state.expired = true;
        state.release();
    }

    /// Remembers how to continue the task once it has ended.
    pub fn set_resumable(&self, resumable: Resumable) {
        self.lock().resumable = Some(resumable);
    }

    /// How to continue the task, if it can be.
    pub fn resumable(&self) -> Option<Resumable> {
        self.lock().resumable.clone()
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Task {
        self.lock().task.clone()
    }

    /// The current state.
    pub fn state(&self) -> TaskState {
        self.lock().task.status.state
    }

    /// Whether the task's stream has ended.
    pub fn is_done(&self) -> bool {
        self.lock().done
    }

    /// Cancels the task's run.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// Every event from the first (what `SendStreamingMessage` streams): take it before the
    /// run can end, or there may be nothing left to read.
    pub fn events(self: &Arc<Self>) -> impl Stream<Item = StreamResponse> + Send + 'static + use<> {
        {
            let mut state = self.lock();
            state.readers += 1;
            state.streamed = true;
        }
        self.events_from(0, None)
    }

    /// The snapshot as a `task` event, then every event after it (what `SubscribeToTask`
    /// streams); `None` when the task's stream has already ended.
    pub fn subscribe(
        self: &Arc<Self>,
    ) -> Option<impl Stream<Item = StreamResponse> + Send + 'static + use<>> {
        let (snapshot, next) = {
            let mut state = self.lock();
            if state.done {
                return None;
            }
            state.readers += 1;
            state.streamed = true;
            (state.task.clone(), state.events.len())
        };
        Some(self.events_from(next, Some(StreamResponse::Task(snapshot))))
    }

    /// The events from index `from` on (our extension's re-subscribe: the client has read
    /// `from` events of this task's streams); `None` when they are no longer kept (the task
    /// ended and expired, or nobody streamed it) or `from` is past them.
    pub fn resume_from(
        self: &Arc<Self>,
        from: usize,
    ) -> Option<impl Stream<Item = StreamResponse> + Send + 'static + use<>> {
        {
            let mut state = self.lock();
            if state.events.is_empty() || from > state.events.len() {
                return None;
            }
            state.readers += 1;
            state.streamed = true;
        }
        Some(self.events_from(from, None))
    }

    /// The stream from `next` on, for a reader already counted in `readers`.
    fn events_from(
        self: &Arc<Self>,
        next: usize,
        first: Option<StreamResponse>,
    ) -> impl Stream<Item = StreamResponse> + Send + 'static + use<> {
        let receiver = self.count.subscribe();
        let reader = Reader {
            entry: Arc::clone(self),
        };
        let start = (reader, receiver, next, first);
        futures::stream::unfold(start, |(entry, mut receiver, next, first)| async move {
            if let Some(first) = first {
                return Some((first, (entry, receiver, next, None)));
            }
            loop {
                receiver.borrow_and_update();
                {
                    let state = entry.entry.lock();
                    if let Some(event) = state.events.get(next) {
                        let event = event.clone();
                        drop(state);
                        return Some((event, (entry, receiver, next + 1, None)));
                    }
                    if state.done {
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
    fn retained(&self) -> usize {
        self.lock().events.len()
    }

    /// Waits until the task's stream has ended.
    pub async fn finished(&self) {
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

/// Every task, in creation order and by id; the oldest finished ones are forgotten past a
/// bound.
#[derive(Debug)]
pub struct Tasks {
    table: Mutex<Table>,
    keep: usize,
}

#[derive(Debug, Default)]
struct Table {
    /// Oldest first, with the id each was inserted under (forgetting one is then a map
    /// removal, not a pass over the map).
    order: VecDeque<(String, Arc<Entry>)>,
    by_id: HashMap<String, Arc<Entry>>,
}

impl Tasks {
    /// A table keeping at most `keep` tasks (live tasks are never forgotten).
    pub fn new(keep: usize) -> Self {
        Self {
            table: Mutex::new(Table::default()),
            keep,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds a task, forgetting the oldest finished ones past the bound.
    pub fn insert(&self, id: String, entry: Arc<Entry>) {
        let mut table = self.lock();
        table.order.push_back((id.clone(), Arc::clone(&entry)));
        table.by_id.insert(id, entry);
        while table.order.len() > self.keep {
            let Some(oldest) = table.order.iter().position(|(_, entry)| entry.is_done()) else {
                break;
            };
            if let Some((id, gone)) = table.order.remove(oldest) {
                // Only if the id still names this entry (not a later one inserted under it).
                if table
                    .by_id
                    .get(&id)
                    .is_some_and(|entry| Arc::ptr_eq(entry, &gone))
                {
                    table.by_id.remove(&id);
                }
            }
        }
    }

    /// The task of that id.
    pub fn get(&self, id: &str) -> Option<Arc<Entry>> {
        self.lock().by_id.get(id).cloned()
    }

    /// Every task, oldest first.
    pub fn all(&self) -> Vec<Arc<Entry>> {
        self.lock()
            .order
            .iter()
            .map(|(_, entry)| Arc::clone(entry))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use subagent_a2a::types::{TaskStatus, TaskStatusUpdateEvent};

    use super::*;

    fn task(id: &str) -> Task {
        Task {
            id: id.to_owned(),
            ..Task::default()
        }
    }

    fn finish(entry: &Entry) {
        entry.push(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            status: TaskStatus {
                state: TaskState::Completed,
                ..TaskStatus::default()
            },
            ..TaskStatusUpdateEvent::default()
        }));
    }

    /// A status update numbered `n` (the number rides in the status's timestamp, so a
    /// snapshot says which update it reflects).
    fn numbered(n: u64, state: TaskState) -> StreamResponse {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            status: TaskStatus {
                state,
                timestamp: Some(n.to_string()),
                ..TaskStatus::default()
            },
            ..TaskStatusUpdateEvent::default()
        })
    }

    fn number(status: &TaskStatus) -> Option<u64> {
        status.timestamp.as_deref()?.parse().ok()
    }

    /// Subscribers joining at every moment of a busy task each get the snapshot and then
    /// exactly the events after it: none missing, none twice, in order.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn subscribers_joining_while_events_arrive_miss_nothing_and_get_nothing_twice() {
        use futures::StreamExt;

        const EVENTS: u64 = 1_000;
        let entry = Entry::new(task("busy"), CancellationToken::new());
        entry.push(numbered(0, TaskState::Working));
        // Subscribers join every 25 events and read on the other worker while events go on
        // arriving.
        let mut subscribers = Vec::new();
        for n in 1..EVENTS {
            entry.push(numbered(n, TaskState::Working));
            if n % 25 == 0 {
                let stream = entry.subscribe().unwrap();
                subscribers.push(tokio::spawn(stream.collect::<Vec<_>>()));
            }
            if n % 7 == 0 {
                tokio::task::yield_now().await;
            }
        }
        entry.push(numbered(EVENTS, TaskState::Completed));
        assert!(entry.subscribe().is_none());
        for subscriber in subscribers {
            let events = subscriber.await.unwrap();
            let StreamResponse::Task(snapshot) = &events[0] else {
                panic!("the first event is not the snapshot: {:?}", events[0]);
            };
            let from = number(&snapshot.status)
                .unwrap_or_else(|| panic!("snapshot without a number: {snapshot:?}"));
            let after: Vec<u64> = events[1..]
                .iter()
                .filter_map(|event| match event {
                    StreamResponse::StatusUpdate(update) => number(&update.status),
                    _ => None,
                })
                .collect();
            assert_eq!(after.len(), events.len() - 1);
            let expected: Vec<u64> = (from + 1..=EVENTS).collect();
            assert_eq!(after, expected);
        }
    }

    #[tokio::test]
    async fn a_finished_task_drops_its_events_at_its_end_or_once_streamed_when_it_expires() {
        use futures::StreamExt;

        let unread = Entry::new(task("unread"), CancellationToken::new());
        unread.push(numbered(1, TaskState::Working));
        finish(&unread);
        let read = Entry::new(task("read"), CancellationToken::new());
        let stream = read.events();
        let subscriber = read.subscribe().unwrap();
        read.push(numbered(1, TaskState::Working));
        finish(&read);
        assert_eq!((unread.retained(), read.retained()), (0, 3));
        let all = stream.collect::<Vec<_>>().await;
        assert_eq!((all.len(), read.retained()), (3, 3));
        let later = subscriber.collect::<Vec<_>>().await;
        // Streamed: kept for a client that lost its stream, until the task expires.
        assert_eq!((later.len(), read.retained()), (3, 3));
        let again = read.resume_from(1).unwrap().collect::<Vec<_>>().await;
        assert_eq!(again.len(), 2);
        read.expire();
        assert_eq!(read.retained(), 0);
        assert!(read.resume_from(1).is_none());
        assert_eq!(read.snapshot().status.state, TaskState::Completed);
    }

    #[test]
    fn past_the_bound_the_oldest_finished_tasks_are_forgotten_and_live_ones_kept() {
        let tasks = Tasks::new(2);
        let ids = ["a", "b", "c", "d"];
        for id in ids {
            let entry = Entry::new(task(id), CancellationToken::new());
            if id != "a" {
                finish(&entry);
            }
            tasks.insert(id.to_owned(), entry);
        }
        let kept: Vec<String> = tasks.all().iter().map(|e| e.snapshot().id).collect();
        assert_eq!(kept, ["a", "d"]);
        let found: Vec<bool> = ids.iter().map(|id| tasks.get(id).is_some()).collect();
        assert_eq!(found, [true, false, false, true]);
    }

    #[test]
    fn forgetting_an_entry_leaves_a_later_one_under_the_same_id() {
        let tasks = Tasks::new(1);
        let first = Entry::new(task("first"), CancellationToken::new());
        finish(&first);
        tasks.insert("same".to_owned(), Arc::clone(&first));
        let second = Entry::new(task("second"), CancellationToken::new());
        tasks.insert("same".to_owned(), Arc::clone(&second));
        let kept = tasks.get("same").map(|e| e.snapshot().id);
        assert_eq!(kept.as_deref(), Some("second"));
        assert_eq!(tasks.all().len(), 1);
    }
}
