//! The task table: every task the server started, its snapshot and the events it streamed.
//!
//! Two bounds: at most `keep` tasks, and at most `keep_bytes` bytes of them (their kept events
//! and snapshots, as JSON). Past the count, the oldest finished tasks are forgotten. Past the
//! bytes ([`Tasks::push`] checks), down to three quarters of them: first the events of finished
//! tasks, oldest first (kept for a client that lost its stream: it gets the snapshot instead);
//! then the events of live tasks that every stream has already read, oldest task first (the
//! same); then the oldest finished tasks themselves that no stream still reads. A live task, a
//! finished one whose stream is still behind (its client, once it has read the end, may ask for
//! the task) and the events a stream has yet to read are never dropped.
//!
//! One concern a module: this one is the table (its bounds, what goes past them); [`entry`]
//! is one task's snapshot and event log, read by its streams; [`references`] counts, per
//! transcript, the kept tasks that refer to it, and deletes the file after the last.

mod entry;
mod references;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use subagent_a2a::types::StreamResponse;

use entry::Budget;
pub(crate) use entry::Entry;
pub(crate) use references::Hold;
use references::References;

use crate::transcripts::Transcripts;

/// What a finished task needs to be continued by a later message (as `resume`).
#[derive(Clone, Debug)]
pub(crate) struct Resumable {
    /// The provider that ran it.
    pub provider: String,
    /// The skill it was sent to.
    pub skill: Option<String>,
    /// Its session (with the server's own cwd and transcript: never sent to a client).
    pub session: subagent_core::SessionRef,
}

/// Every task, in creation order and by id; past a bound (in count or in bytes) the oldest
/// finished ones are forgotten, and with them the transcripts no kept task refers to any more.
/// Clones share the table.
#[derive(Clone, Debug)]
pub(crate) struct Tasks {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    table: Mutex<Table>,
    keep: usize,
    keep_bytes: usize,
    /// The bytes the kept tasks take (as JSON), kept by the entries themselves.
    used: Budget,
    /// Past this many bytes, a push sheds (at least `keep_bytes`; after a shed that could not
    /// get under it, an eighth of it further, so that pushes do not each scan the table).
    shed_at: AtomicUsize,
    transcripts: Transcripts,
}

#[derive(Debug, Default)]
struct Table {
    /// Oldest first, with the id each was inserted under (forgetting one is then a map
    /// removal, not a pass over the map).
    order: VecDeque<(String, Arc<Entry>)>,
    by_id: HashMap<String, Arc<Entry>>,
    /// Per transcript the server may delete: how many kept tasks and [holds](Hold) refer to it.
    references: References,
}

impl Table {
    /// Forgets the oldest finished task that no stream still reads (out of the byte count, its
    /// transcripts released into `gone`); `false` when there is none. A task whose stream is
    /// still behind stays like a live one: its client, once it reads the end, may ask for it.
    fn forget_oldest_finished(&mut self, gone: &mut Vec<PathBuf>) -> bool {
        let Some(oldest) = self
            .order
            .iter()
            .position(|(_, entry)| entry.lock().may_forget())
        else {
            return false;
        };
        let Some((id, forgotten)) = self.order.remove(oldest) else {
            return false;
        };
        // Only if the id still names this entry (not a later one inserted under it).
        if self
            .by_id
            .get(&id)
            .is_some_and(|entry| Arc::ptr_eq(entry, &forgotten))
        {
            self.by_id.remove(&id);
        }
        let paths = {
            let mut state = forgotten.lock();
            state.leave();
            std::mem::take(&mut state.transcripts)
        };
        for path in paths {
            self.references.release(path, gone);
        }
        true
    }
}

impl Tasks {
    /// A table keeping at most `keep` tasks and `keep_bytes` bytes of them (live tasks are
    /// never forgotten), deleting their transcripts in `transcripts` (the session store's
    /// directory; `None`: none) once no kept task refers to them.
    pub(crate) fn new(keep: usize, keep_bytes: usize, transcripts: Option<PathBuf>) -> Self {
        Self {
            shared: Arc::new(Shared {
                table: Mutex::new(Table::default()),
                keep,
                keep_bytes,
                used: Budget::default(),
                shed_at: AtomicUsize::new(keep_bytes),
                transcripts: Transcripts::new(transcripts),
            }),
        }
    }

    /// The bytes the kept tasks take, as JSON.
    pub(crate) fn used(&self) -> usize {
        self.shared.used.load(Ordering::Relaxed)
    }

    /// Records `event` for the task `entry` ([`Entry::push`]), then sheds past the byte bound.
    pub(crate) fn push(&self, entry: &Entry, event: StreamResponse) {
        entry.push(event);
        if self.used() > self.shared.shed_at.load(Ordering::Relaxed) {
            let target = self.shared.keep_bytes / 4 * 3;
            self.shed_to(target);
            let after = self.used();
            let next = if after > self.shared.keep_bytes {
                after.saturating_add(self.shared.keep_bytes / 8)
            } else {
                self.shared.keep_bytes
            };
            self.shared.shed_at.store(next, Ordering::Relaxed);
        }
    }

    /// Drops what may go, in the order the module says, until the kept tasks take at most
    /// `target` bytes or nothing more may go.
    pub(crate) fn shed_to(&self, target: usize) {
        let over = || self.used() > target;
        let mut gone = Vec::new();
        {
            let mut table = self.lock();
            for finished in [true, false] {
                for (_, entry) in &table.order {
                    if !over() {
                        break;
                    }
                    let mut state = entry.lock();
                    if state.done == finished {
                        state.shed();
                    }
                }
            }
            while over() && table.forget_oldest_finished(&mut gone) {}
        }
        if !gone.is_empty() {
            tracing::debug!(
                transcripts = gone.len(),
                used = self.used(),
                "tasks forgotten past the byte bound"
            );
        }
        self.shared.transcripts.remove(gone);
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
    pub(crate) fn insert(&self, id: String, entry: Arc<Entry>, held: Option<Hold>) {
        let mut gone = Vec::new();
        {
            let mut table = self.lock();
            if let Some(held) = held {
                entry.lock().transcripts.extend(held.hand_over());
            }
            entry.lock().join(&self.shared.used);
            table.order.push_back((id.clone(), Arc::clone(&entry)));
            table.by_id.insert(id, entry);
            while table.order.len() > self.shared.keep {
                if !table.forget_oldest_finished(&mut gone) {
                    break;
                }
            }
        }
        self.shared.transcripts.remove(gone);
    }

    /// The task of that id.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<Entry>> {
        self.lock().by_id.get(id).cloned()
    }

    /// The task of that id, for a run that continues it, and once it has finished (`None`
    /// while it runs) a [`Hold`] on its transcripts. Seen finished under the same lock as its
    /// transcripts: a run's transcript is counted before its task finishes, so none is missed.
    pub(crate) fn continuing(&self, id: &str) -> Option<(Arc<Entry>, Option<Hold>)> {
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
            table.references.count(path);
        }
        drop(table);
        Some((entry, Some(Hold::new(self.clone(), paths))))
    }

    /// Counts `transcript` (the run's, named by its outcome) for the task `entry`, if it is one
    /// the server may delete and not counted for it yet. Call it before the task's last event:
    /// a live task is never forgotten, so it is still in the table.
    pub(crate) fn attach(&self, entry: &Entry, transcript: &Path) {
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
        table.references.count(transcript);
    }

    /// Every task, oldest first.
    pub(crate) fn all(&self) -> Vec<Arc<Entry>> {
        self.lock()
            .order
            .iter()
            .map(|(_, entry)| Arc::clone(entry))
            .collect()
    }

    /// At shutdown, once every run has ended: deletes the transcripts of the tasks still kept
    /// (nobody can reach them once the process ends) and waits for every deletion.
    pub(crate) async fn close(&self) {
        let gone: Vec<PathBuf> = {
            let mut table = self.lock();
            for (_, entry) in &table.order {
                entry.lock().transcripts.clear();
            }
            table.references.drain()
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
