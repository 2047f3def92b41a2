//! The task table: every task the server started, its snapshot and every event it streamed.
//!
//! A live task keeps all its events, so a client that reconnects (`SubscribeToTask`) gets the
//! snapshot and then every event after it, none lost or doubled: the snapshot and the index of
//! the next event are read under one lock, and new events wake subscribers through a `watch` of
//! the event count (a subscriber marks the count seen before it looks, so a push between its
//! look and its wait still wakes it). Once a task has ended and no stream is still reading
//! them, its events are dropped: a finished task is read whole from its snapshot.
//!
//! The table also counts, per transcript the server may delete ([`Transcripts`]), the kept
//! tasks that refer to it: a task counts its run's transcript once the run has ended (its
//! outcome names it), and a task that continues another counts the shared file from before its
//! run starts (a [`Hold`] taken while the continued task is surely kept), so the file is never
//! deleted under a run that writes it. When the last task referring to a transcript is
//! forgotten, the file is deleted (outside the lock); [`Tasks::close`] deletes those of every
//! task still kept.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use futures::Stream;
use subagent_a2a::types::{StreamResponse, Task, TaskState, apply};
use subagent_core::CancellationToken;
use tokio::sync::watch;

use crate::transcripts::Transcripts;

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
    /// The transcripts counted for this task in its table (changed under the table's lock).
    transcripts: Vec<PathBuf>,
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
                transcripts: Vec::new(),
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

    /// How many events the task has had (kept or not).
    pub fn pushed(&self) -> usize {
        *self.count.borrow()
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
/// bound, and with them the transcripts no kept task refers to any more. Clones share the table.
#[derive(Clone, Debug)]
pub struct Tasks {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    table: Mutex<Table>,
    keep: usize,
    transcripts: Transcripts,
}

#[derive(Debug, Default)]
struct Table {
    /// Oldest first, with the id each was inserted under (forgetting one is then a map
    /// removal, not a pass over the map).
    order: VecDeque<(String, Arc<Entry>)>,
    by_id: HashMap<String, Arc<Entry>>,
    /// Per transcript the server may delete: how many kept tasks and [holds](Hold) refer to it.
    transcripts: HashMap<PathBuf, usize>,
}

impl Table {
    fn count(&mut self, path: &Path) {
        *self.transcripts.entry(path.to_path_buf()).or_default() += 1;
    }

    /// One reference to `path` fewer; pushed to `gone` when it was the last.
    fn release(&mut self, path: PathBuf, gone: &mut Vec<PathBuf>) {
        let Some(count) = self.transcripts.get_mut(&path) else {
            return;
        };
        *count = count.saturating_sub(1);
        if *count == 0 {
            self.transcripts.remove(&path);
            gone.push(path);
        }
    }
}

/// A count on the transcripts of a finished task, taken for a run that continues it: they
/// stay while the run starts even if the task is forgotten meanwhile. Handed to the new task
/// by [`Tasks::insert`]; dropped (a run that did not start), it lets them go.
#[derive(Debug)]
pub struct Hold {
    tasks: Tasks,
    paths: Vec<PathBuf>,
}

impl Drop for Hold {
    fn drop(&mut self) {
        if self.paths.is_empty() {
            return;
        }
        let mut gone = Vec::new();
        {
            let mut table = self.tasks.lock();
            for path in std::mem::take(&mut self.paths) {
                table.release(path, &mut gone);
            }
        }
        self.tasks.shared.transcripts.remove(gone);
    }
}

impl Tasks {
    /// A table keeping at most `keep` tasks (live tasks are never forgotten), deleting their
    /// transcripts in `transcripts` (the session store's directory; `None`: none) once no
    /// kept task refers to them.
    pub fn new(keep: usize, transcripts: Option<PathBuf>) -> Self {
        Self {
            shared: Arc::new(Shared {
                table: Mutex::new(Table::default()),
                keep,
                transcripts: Transcripts::new(transcripts),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.shared
            .table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds a task (given `held`, the transcripts of the task it continues), forgetting the
    /// oldest finished ones past the bound and deleting the transcripts they were the last to
    /// refer to.
    pub fn insert(&self, id: String, entry: Arc<Entry>, held: Option<Hold>) {
        let mut gone = Vec::new();
        {
            let mut table = self.lock();
            if let Some(mut held) = held {
                entry
                    .lock()
                    .transcripts
                    .extend(std::mem::take(&mut held.paths));
            }
            table.order.push_back((id.clone(), Arc::clone(&entry)));
            table.by_id.insert(id, entry);
            while table.order.len() > self.shared.keep {
                let Some(oldest) = table.order.iter().position(|(_, entry)| entry.is_done()) else {
                    break;
                };
                if let Some((id, forgotten)) = table.order.remove(oldest) {
                    // Only if the id still names this entry (not a later one inserted under it).
                    if table
                        .by_id
                        .get(&id)
                        .is_some_and(|entry| Arc::ptr_eq(entry, &forgotten))
                    {
                        table.by_id.remove(&id);
                    }
                    let paths = std::mem::take(&mut forgotten.lock().transcripts);
                    for path in paths {
                        table.release(path, &mut gone);
                    }
                }
            }
        }
        self.shared.transcripts.remove(gone);
    }

    /// The task of that id.
    pub fn get(&self, id: &str) -> Option<Arc<Entry>> {
        self.lock().by_id.get(id).cloned()
    }

    /// The task of that id, for a run that continues it, and once it has finished (`None`
    /// while it runs) a [`Hold`] on its transcripts. Seen finished under the same lock as its
    /// transcripts: a run's transcript is counted before its task finishes, so none is missed.
    pub fn continuing(&self, id: &str) -> Option<(Arc<Entry>, Option<Hold>)> {
        let mut table = self.lock();
        let entry = table.by_id.get(id).cloned()?;
        let paths = {
            let state = entry.lock();
            if !state.done {
                return Some((Arc::clone(&entry), None));
            }
            state.transcripts.clone()
        };
        for path in &paths {
            table.count(path);
        }
        drop(table);
        let hold = Hold {
            tasks: self.clone(),
            paths,
        };
        Some((entry, Some(hold)))
    }

    /// Counts `transcript` (the run's, named by its outcome) for the task `entry`, if it is one
    /// the server may delete and not counted for it yet. Call it before the task's last event:
    /// a live task is never forgotten, so it is still in the table.
    pub fn attach(&self, entry: &Entry, transcript: &Path) {
        if !self.shared.transcripts.owns(transcript) {
            return;
        }
        let mut table = self.lock();
        let mut state = entry.lock();
        if state.transcripts.iter().any(|path| path == transcript) {
            return;
        }
        state.transcripts.push(transcript.to_path_buf());
        drop(state);
        table.count(transcript);
    }

    /// Every task, oldest first.
    pub fn all(&self) -> Vec<Arc<Entry>> {
        self.lock()
            .order
            .iter()
            .map(|(_, entry)| Arc::clone(entry))
            .collect()
    }

    /// At shutdown, once every run has ended: deletes the transcripts of the tasks still kept
    /// (nobody can reach them once the process ends) and waits for every deletion.
    pub async fn close(&self) {
        let gone: Vec<PathBuf> = {
            let mut table = self.lock();
            for (_, entry) in &table.order {
                entry.lock().transcripts.clear();
            }
            table.transcripts.drain().map(|(path, _)| path).collect()
        };
        if !gone.is_empty() {
            tracing::info!(
                transcripts = gone.len(),
                "deleting the transcripts of the tasks kept"
            );
        }
        self.shared.transcripts.remove(gone);
        self.shared.transcripts.settled().await;
    }

    /// Waits until every deletion asked for so far is done.
    #[cfg(test)]
    async fn settled(&self) {
        self.shared.transcripts.settled().await;
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
        let tasks = Tasks::new(2, None);
        let ids = ["a", "b", "c", "d"];
        for id in ids {
            let entry = Entry::new(task(id), CancellationToken::new());
            if id != "a" {
                finish(&entry);
            }
            tasks.insert(id.to_owned(), entry, None);
        }
        let kept: Vec<String> = tasks.all().iter().map(|e| e.snapshot().id).collect();
        assert_eq!(kept, ["a", "d"]);
        let found: Vec<bool> = ids.iter().map(|id| tasks.get(id).is_some()).collect();
        assert_eq!(found, [true, false, false, true]);
    }

    #[test]
    fn forgetting_an_entry_leaves_a_later_one_under_the_same_id() {
        let tasks = Tasks::new(1, None);
        let first = Entry::new(task("first"), CancellationToken::new());
        finish(&first);
        tasks.insert("same".to_owned(), Arc::clone(&first), None);
        let second = Entry::new(task("second"), CancellationToken::new());
        tasks.insert("same".to_owned(), Arc::clone(&second), None);
        let kept = tasks.get("same").map(|e| e.snapshot().id);
        assert_eq!(kept.as_deref(), Some("second"));
        assert_eq!(tasks.all().len(), 1);
    }
    /// A store directory and a finished task whose run wrote a transcript there.
    fn session_file(dir: &Path) -> PathBuf {
        let path = dir.join(format!("{}.jsonl", subagent_core::RunId::new()));
        std::fs::write(&path, "{}\n").unwrap();
        path
    }

    /// A finished task whose run's outcome named `transcript`, added to `tasks` under `id`.
    fn ran(tasks: &Tasks, id: &str, transcript: &Path, held: Option<Hold>) {
        let entry = Entry::new(task(id), CancellationToken::new());
        tasks.insert(id.to_owned(), Arc::clone(&entry), held);
        tasks.attach(&entry, transcript);
        finish(&entry);
    }

    fn exist(paths: &[&PathBuf]) -> Vec<bool> {
        paths.iter().map(|path| path.exists()).collect()
    }

    #[tokio::test]
    async fn forgetting_a_task_deletes_its_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let tasks = Tasks::new(1, Some(dir.path().to_path_buf()));
        let (a, b) = (session_file(dir.path()), session_file(dir.path()));
        ran(&tasks, "a", &a, None);
        tasks.settled().await;
        assert_eq!(exist(&[&a]), [true]);
        ran(&tasks, "b", &b, None);
        tasks.settled().await;
        assert!(tasks.get("a").is_none());
        assert_eq!(exist(&[&a, &b]), [false, true]);
    }

    #[tokio::test]
    async fn a_transcript_shared_with_a_continued_task_stays_until_both_are_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let tasks = Tasks::new(2, Some(dir.path().to_path_buf()));
        let (shared, c, d) = (
            session_file(dir.path()),
            session_file(dir.path()),
            session_file(dir.path()),
        );
        ran(&tasks, "a", &shared, None);
        // "b" continues "a": its run appends to the same file, and its outcome names it.
        let (_, held) = tasks.continuing("a").unwrap();
        let held = held.unwrap();
        ran(&tasks, "b", &shared, Some(held));
        ran(&tasks, "c", &c, None);
        tasks.settled().await;
        assert_eq!(
            (tasks.get("a").is_none(), exist(&[&shared])),
            (true, vec![true])
        );
        ran(&tasks, "d", &d, None);
        tasks.settled().await;
        assert_eq!(
            (tasks.get("b").is_none(), exist(&[&shared])),
            (true, vec![false])
        );
        assert_eq!(exist(&[&c, &d]), [true, true]);
    }

    #[tokio::test]
    async fn a_continuation_holds_the_transcript_while_it_starts_and_lets_it_go_if_it_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let tasks = Tasks::new(1, Some(dir.path().to_path_buf()));
        let (a, b) = (session_file(dir.path()), session_file(dir.path()));
        ran(&tasks, "a", &a, None);
        let (_, held) = tasks.continuing("a").unwrap();
        let held = held.unwrap();
        // "a" is forgotten while a run continuing it starts: its file stays for that run.
        ran(&tasks, "b", &b, None);
        tasks.settled().await;
        assert_eq!((tasks.get("a").is_none(), exist(&[&a])), (true, vec![true]));
        // The run did not start: nothing refers to the file any more.
        drop(held);
        tasks.settled().await;
        assert_eq!(exist(&[&a, &b]), [false, true]);
    }

    #[tokio::test]
    async fn a_transcript_that_is_not_a_session_file_of_the_store_is_never_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("sessions");
        let other = dir.path().join("claude-projects");
        let nested = store.join("nested");
        for dir in [&store, &other, &nested] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let not_a_session = store.join("notes.jsonl");
        std::fs::write(&not_a_session, "mine\n").unwrap();
        let paths = [
            session_file(&other),
            session_file(&nested),
            not_a_session,
            // The store's path through `..`: a file of the store, but not named as the server
            // names them.
            session_file(&store),
        ];
        let dotted = store
            .join("..")
            .join("sessions")
            .join(paths[3].file_name().unwrap());
        let tasks = Tasks::new(1, Some(store.clone()));
        for (n, path) in paths[..3].iter().chain([&dotted]).enumerate() {
            ran(&tasks, &n.to_string(), path, None);
        }
        tasks.close().await;
        assert_eq!(exist(&paths.iter().collect::<Vec<_>>()), [true; 4]);
    }

    #[tokio::test]
    async fn keeping_transcripts_deletes_none_neither_when_forgetting_nor_at_close() {
        let dir = tempfile::tempdir().unwrap();
        let tasks = Tasks::new(1, None);
        let (a, b) = (session_file(dir.path()), session_file(dir.path()));
        ran(&tasks, "a", &a, None);
        ran(&tasks, "b", &b, None);
        tasks.close().await;
        assert_eq!(exist(&[&a, &b]), [true, true]);
    }

    #[tokio::test]
    async fn closing_deletes_the_transcripts_of_every_task_kept() {
        let dir = tempfile::tempdir().unwrap();
        let tasks = Tasks::new(10, Some(dir.path().to_path_buf()));
        let (a, b) = (session_file(dir.path()), session_file(dir.path()));
        ran(&tasks, "a", &a, None);
        let (_, held) = tasks.continuing("a").unwrap();
        let held = held.unwrap();
        ran(&tasks, "b", &a, Some(held));
        ran(&tasks, "c", &b, None);
        // A task still running takes no hold (nor a further message).
        let live = Entry::new(task("live"), CancellationToken::new());
        tasks.insert("live".to_owned(), live, None);
        assert!(tasks.continuing("live").unwrap().1.is_none());
        let mine = dir
            .path()
            .join(format!("{}.jsonl", subagent_core::RunId::new()));
        std::fs::write(&mine, "a session of the user's own\n").unwrap();
        tasks.close().await;
        assert_eq!(exist(&[&a, &b, &mine]), [false, false, true]);
    }
}
