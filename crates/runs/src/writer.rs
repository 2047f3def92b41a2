//! The one thread of a process that writes its runs' files. A run only queues what is to be
//! written (no file system call, no serializing on the async workers); the thread takes
//! everything queued at once and writes it into the process's journal: every run's new events
//! in one append to `events/<journal>.jsonl`, the records of runs that ended in one append to
//! `done/<journal>.jsonl`, and a live record only for a run that has gone on half a second. A
//! thousand children ending together cost a few writes, not a few thousand files.
//!
//! A journal holds up to [`JOURNAL_RUNS`] runs or [`JOURNAL_EVENTS`] bytes of events; then new
//! runs start the next one (a run keeps writing to the journal it started in). A journal of
//! this process that no running run writes to any more may be pruned: the thread prunes the
//! record when one closes (at most once a minute), so a long-lived server stays within its
//! bounds.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use subagent_core::{RunEvent, RunId};

use crate::record::{Owner, Record};
use crate::store::{Keep, Runs, append_lines};

/// The most of one run's events kept, in bytes; past it one `truncated` event ends them.
pub(crate) const EVENTS_BYTES: u64 = 16 << 20;
/// The most runs started in one journal.
const JOURNAL_RUNS: usize = 1000;
/// The most bytes of events in one journal before new runs start the next.
const JOURNAL_EVENTS: u64 = 64 << 20;
/// How often at most the thread prunes the record (when a journal of its closes).
const PRUNE_EVERY: Duration = Duration::from_secs(60);
/// How long a run must go on before its live record is written: most children of a fan-out end
/// sooner, and then only their finished record is.
const LIVE_AFTER: Duration = Duration::from_millis(500);

/// A running run's record as its watcher keeps it (`None` once it ended), with when its counts
/// were last queued: the thread reads it when the run's live record is due, so starting a run
/// queues no copy of it.
pub(crate) type Shared = Arc<Mutex<Option<(Record, std::time::Instant)>>>;

enum Op {
    /// A run started; its record is in the cell.
    Started(RunId, Shared),
    /// A run's newer record (its counts, or its end).
    Record(Box<Record>),
    Event(RunId, RunEvent),
    /// Answered once everything queued before it is written.
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// The queue to the writing thread. Queuing wakes the thread only when the queue was empty,
/// and the thread then lets a batch gather for [`GATHER`] before it takes it: a fan-out's
/// thousands of events cost a few wake-ups, not one each (on two cores, each one is a worker's
/// time lost).
#[derive(Clone)]
pub(crate) struct Writer {
    handle: Arc<Handle>,
}

/// What every [`Writer`] shares; the thread ends when the last one is dropped.
struct Handle {
    queue: Arc<Queue>,
    thread: std::thread::Thread,
}

struct Queue {
    ops: Mutex<Vec<Op>>,
    /// A flush waits: the thread takes the batch at once.
    urgent: AtomicBool,
    closed: AtomicBool,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.queue.closed.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

/// How long the thread lets a batch gather once woken (unless a flush waits).
const GATHER: Duration = Duration::from_millis(2);

impl Writer {
    /// Starts the thread writing into `runs` as `owner`, pruning by `keep`; it ends when every
    /// `Writer` is dropped (writing what was queued first).
    pub(crate) fn start(runs: Runs, owner: Owner, keep: Keep) -> std::io::Result<Self> {
        let queue = Arc::new(Queue {
            ops: Mutex::new(Vec::new()),
            urgent: AtomicBool::new(false),
            closed: AtomicBool::new(false),
        });
        let theirs = Arc::clone(&queue);
        let thread = std::thread::Builder::new()
            .name("subagent-runs".into())
            .spawn(move || Thread::new(runs, owner, keep).write_all(&theirs))?
            .thread()
            .clone();
        Ok(Self {
            handle: Arc::new(Handle { queue, thread }),
        })
    }

    fn send(&self, op: Op, urgent: bool) {
        let was_empty = {
            let mut ops = self
                .handle
                .queue
                .ops
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let was_empty = ops.is_empty();
            ops.push(op);
            was_empty
        };
        if urgent {
            self.handle.queue.urgent.store(true, Ordering::Release);
        }
        if was_empty || urgent {
            self.handle.thread.unpark();
        }
    }

    pub(crate) fn started(&self, id: RunId, record: Shared) {
        self.send(Op::Started(id, record), false);
    }

    pub(crate) fn record(&self, record: Record) {
        self.send(Op::Record(Box::new(record)), false);
    }

    pub(crate) fn event(&self, id: RunId, event: RunEvent) {
        self.send(Op::Event(id, event), false);
    }

    /// Waits until everything queued so far is written (what a command's last run ends with,
    /// before the process may exit).
    pub(crate) async fn flush(&self) {
        let (done, wait) = tokio::sync::oneshot::channel();
        self.send(Op::Flush(done), true);
        let _ = wait.await;
    }
}

/// One journal of this process.
struct Journal {
    name: String,
    /// Its events file, once opened.
    events: Option<std::fs::File>,
    /// Its finished records' file, once written.
    done: Option<std::fs::File>,
    /// Its events file cannot be written (said once).
    broken: bool,
    /// The batch's new event lines and finished records' lines (kept: no allocation a batch).
    events_buf: Vec<u8>,
    ended_buf: Vec<u8>,
    events_bytes: u64,
    /// Runs started in it.
    runs: usize,
    /// Of which still running.
    open: usize,
}

/// A running record to write once due.
enum Pending {
    /// As its watcher keeps it.
    Shared(Shared),
    /// This one.
    Record(Box<Record>),
}

/// A running run, as the thread knows it.
struct Open {
    journal: usize,
    written: u64,
    truncated: bool,
    /// Its live record is on disk.
    live: bool,
    /// Its newest running record not written yet, with when the run began.
    pending: Option<Pending>,
    /// The start of its event lines: `{"run":"<id>","event":`.
    prefix: Box<[u8]>,
    since: std::time::Instant,
}

struct Thread {
    runs: Runs,
    owner: String,
    keep: Keep,
    journals: Vec<Journal>,
    open: HashMap<RunId, Open>,
    /// When the record was last pruned (the process's start prunes it first).
    pruned: std::time::Instant,
}

impl Thread {
    fn new(runs: Runs, owner: Owner, keep: Keep) -> Self {
        Self {
            runs,
            owner: owner.key(),
            keep,
            journals: Vec::new(),
            open: HashMap::new(),
            pruned: std::time::Instant::now(),
        }
    }

    /// The journal new runs start in.
    fn current(&mut self) -> usize {
        let full = self.journals.last().is_none_or(|journal| {
            journal.runs >= JOURNAL_RUNS || journal.events_bytes >= JOURNAL_EVENTS
        });
        if full {
            let name = format!("{}-{}", self.owner, self.journals.len());
            self.journals.push(Journal {
                name,
                events: None,
                done: None,
                broken: false,
                events_buf: Vec::new(),
                ended_buf: Vec::new(),
                events_bytes: 0,
                runs: 0,
                open: 0,
            });
        }
        self.journals.len() - 1
    }

    fn write_all(mut self, queue: &Queue) {
        loop {
            let waiting = self.open.values().any(|open| open.pending.is_some());
            let closed = queue.closed.load(Ordering::Acquire);
            let empty = queue
                .ops
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_empty();
            if empty && closed {
                return;
            }
            if empty {
                // Woken by the first op queued, a flush, the last writer gone, or (while a live
                // record waits its turn) a tick.
                if waiting {
                    std::thread::park_timeout(LIVE_AFTER / 5);
                } else {
                    std::thread::park();
                }
            }
            if !queue.urgent.load(Ordering::Acquire) && !closed {
                std::thread::park_timeout(GATHER);
            }
            queue.urgent.store(false, Ordering::Release);
            let batch =
                std::mem::take(&mut *queue.ops.lock().unwrap_or_else(PoisonError::into_inner));
            self.write_batch(batch);
        }
    }

    fn write_batch(&mut self, batch: Vec<Op>) {
        let mut gone_live = Vec::new();
        let mut flushed = Vec::new();
        let mut closed = false;
        for op in batch {
            match op {
                Op::Started(id, shared) => {
                    self.open_run(id);
                    if let Some(open) = self.open.get_mut(&id) {
                        open.pending = Some(Pending::Shared(shared));
                    }
                }
                Op::Record(record) => closed |= self.take_record(record, &mut gone_live),
                Op::Event(id, event) => self.take_event(id, &event),
                Op::Flush(done) => flushed.push(done),
            }
        }
        // Events first: a reader that sees a run ended has its events already.
        for journal in &mut self.journals {
            if journal.events_buf.is_empty() || journal.broken {
                journal.events_buf.clear();
                continue;
            }
            if journal.events.is_none() {
                let path = self
                    .runs
                    .root()
                    .join("events")
                    .join(format!("{}.jsonl", journal.name));
                match subagent_session::private::append_file(&path) {
                    Ok(file) => journal.events = Some(file),
                    Err(error) => {
                        tracing::warn!(target: "subagent::runs", "cannot write {}: {error}", path.display());
                        journal.broken = true;
                        journal.events_buf.clear();
                        continue;
                    }
                }
            }
            if let Some(file) = &mut journal.events
                && file.write_all(&journal.events_buf).is_err()
            {
                journal.events = None;
                journal.broken = true;
            }
            journal.events_buf.clear();
        }
        for journal in &mut self.journals {
            if journal.ended_buf.is_empty() {
                continue;
            }
            let path = self.runs.done_path(&journal.name);
            let written = match &mut journal.done {
                Some(file) => file.write_all(&journal.ended_buf),
                // The first lines of its finished records (the file ends a line: a pruning
                // process may have added a lost run's).
                None => append_lines(&path, &journal.ended_buf).and_then(|()| {
                    journal.done = Some(subagent_session::private::append_file(&path)?);
                    Ok(())
                }),
            };
            if let Err(error) = written {
                tracing::warn!(target: "subagent::runs", "cannot write {}: {error}", path.display());
                journal.done = None;
            }
            journal.ended_buf.clear();
        }
        for id in gone_live {
            self.runs.forget_live(id);
        }
        let now = std::time::Instant::now();
        let flushing = !flushed.is_empty();
        for open in self.open.values_mut() {
            if open.pending.is_some() && (flushing || now.duration_since(open.since) >= LIVE_AFTER)
            {
                let record = match open.pending.take() {
                    Some(Pending::Record(record)) => Some(*record),
                    Some(Pending::Shared(shared)) => shared
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .as_ref()
                        .map(|(record, _)| record.clone()),
                    None => None,
                };
                // A run that ended meanwhile has its end queued: no live record.
                let Some(mut record) = record else { continue };
                record.journal = Some(self.journals[open.journal].name.clone());
                if let Err(error) = self.runs.write_live(&record) {
                    tracing::warn!(target: "subagent::runs", id = %record.id, "the run's record is not written: {error}");
                }
                open.live = true;
            }
        }
        if closed && self.pruned.elapsed() >= PRUNE_EVERY {
            self.pruned = std::time::Instant::now();
            self.prune_closed();
        }
        for done in flushed {
            let _ = done.send(());
        }
    }

    /// Takes a run's newer record: a running one waits to be written live, one that ended
    /// joins its journal's lines. Returns whether a journal of this process closed.
    fn take_record(&mut self, mut record: Box<Record>, gone_live: &mut Vec<RunId>) -> bool {
        let id = record.id;
        self.open_run(id);
        if record.running() {
            if let Some(open) = self.open.get_mut(&id) {
                open.pending = Some(Pending::Record(record));
            }
            return false;
        }
        let Some(open) = self.open.remove(&id) else {
            return false;
        };
        let current = self.journals.len() - 1;
        let journal = &mut self.journals[open.journal];
        record.journal = Some(journal.name.clone());
        if serde_json::to_writer(&mut journal.ended_buf, &record).is_ok() {
            journal.ended_buf.push(b'\n');
        }
        if open.live {
            gone_live.push(id);
        }
        journal.open -= 1;
        if journal.open == 0 && open.journal != current {
            // Nothing more is written to it.
            journal.events = None;
            journal.done = None;
            return true;
        }
        false
    }

    /// Starts knowing of run `id` (in the current journal), unless it does.
    fn open_run(&mut self, id: RunId) {
        if self.open.contains_key(&id) {
            return;
        }
        let journal = self.current();
        self.journals[journal].runs += 1;
        self.journals[journal].open += 1;
        self.open.insert(
            id,
            Open {
                journal,
                written: 0,
                truncated: false,
                live: false,
                pending: None,
                prefix: format!("{{\"run\":\"{id}\",\"event\":").into_bytes().into(),
                since: std::time::Instant::now(),
            },
        );
    }

    /// Adds one event to its run's journal lines, within [`EVENTS_BYTES`] for the run.
    fn take_event(&mut self, id: RunId, event: &RunEvent) {
        // An event after its run ended goes into the current journal (made only then).
        let index = match self.open.get(&id) {
            Some(open) => open.journal,
            None => self.current(),
        };
        let open = self.open.get_mut(&id);
        let journal = &mut self.journals[index];
        let buf = &mut journal.events_buf;
        let start = buf.len();
        match &open {
            Some(open) => buf.extend_from_slice(&open.prefix),
            None => buf.extend_from_slice(format!("{{\"run\":\"{id}\",\"event\":").as_bytes()),
        }
        if serde_json::to_writer(&mut *buf, event).is_err() {
            buf.truncate(start);
            return;
        }
        buf.extend_from_slice(b"}\n");
        if let Some(open) = open {
            let size = u64::try_from(buf.len() - start).unwrap_or(u64::MAX);
            if open.truncated {
                buf.truncate(start);
                return;
            }
            if open.written.saturating_add(size) > EVENTS_BYTES {
                open.truncated = true;
                buf.truncate(start);
                buf.extend_from_slice(&open.prefix);
                buf.extend_from_slice(b"{\"type\":\"truncated\"}}\n");
            }
            open.written += size;
        }
        journal.events_bytes += u64::try_from(buf.len() - start).unwrap_or(0);
    }

    /// Prunes the record, this process's closed journals among what may go.
    fn prune_closed(&self) {
        let current = self.journals.len() - 1;
        let closed: Vec<String> = self
            .journals
            .iter()
            .enumerate()
            .filter(|(index, journal)| *index != current && journal.open == 0)
            .map(|(_, journal)| journal.name.clone())
            .collect();
        self.runs.prune_journals(self.keep, &closed);
    }
}
