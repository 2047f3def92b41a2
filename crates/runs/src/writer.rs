//! The one thread of a process that writes its runs' files: a run's relay only queues what is
//! to be written (no file system call on the async workers), and the thread takes everything
//! queued at once, writes each run's new events in one append and only the newest of its records
//! (a record that ended replaces the live one). A hundred children ending together cost a few
//! writes, not a few hundred.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::mpsc;

use subagent_core::RunId;
use subagent_session::private;

use crate::record::Record;
use crate::store::Runs;

/// The most of one run's events kept, in bytes; past it one `truncated` line ends the file.
pub(crate) const EVENTS_BYTES: u64 = 16 << 20;
/// The most operations taken in one batch.
const BATCH: usize = 65_536;
/// How long a run must go on before its live record is written: most children of a fan-out end
/// sooner, and then only their finished record is (a file made, renamed and removed less).
const LIVE_AFTER: std::time::Duration = std::time::Duration::from_millis(500);

enum Op {
    Record(Box<Record>),
    Events(RunId, Vec<u8>),
    /// Answered once everything queued before it is written.
    Flush(mpsc::Sender<()>),
}

/// The queue to the writing thread.
#[derive(Clone)]
pub(crate) struct Writer {
    queue: mpsc::Sender<Op>,
}

impl Writer {
    /// Starts the thread writing into `runs`; it ends when every `Writer` is dropped.
    pub(crate) fn start(runs: Runs) -> std::io::Result<Self> {
        let (queue, ops) = mpsc::channel();
        std::thread::Builder::new()
            .name("subagent-runs".into())
            .spawn(move || write_all(&runs, &ops))?;
        Ok(Self { queue })
    }

    pub(crate) fn record(&self, record: &Record) {
        let _ = self.queue.send(Op::Record(Box::new(record.clone())));
    }

    pub(crate) fn events(&self, id: RunId, line: Vec<u8>) {
        let _ = self.queue.send(Op::Events(id, line));
    }

    /// Waits until everything queued so far is written (what a command's last run ends with,
    /// before the process may exit).
    pub(crate) async fn flush(&self) {
        let (done, wait) = mpsc::channel();
        if self.queue.send(Op::Flush(done)).is_err() {
            return;
        }
        let _ = tokio::task::spawn_blocking(move || wait.recv()).await;
    }
}

/// One run's events file, open while the run goes.
struct Open {
    file: Option<std::fs::File>,
    written: u64,
}

fn write_all(runs: &Runs, ops: &mpsc::Receiver<Op>) {
    let mut open: HashMap<RunId, Open> = HashMap::new();
    // Live records not written yet, with when they came.
    let mut pending: HashMap<RunId, (std::time::Instant, Box<Record>)> = HashMap::new();
    loop {
        let first = if pending.is_empty() {
            match ops.recv() {
                Ok(op) => Some(op),
                Err(_) => return,
            }
        } else {
            match ops.recv_timeout(LIVE_AFTER / 5) {
                Ok(op) => Some(op),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        };
        let mut batch: Vec<Op> = first.into_iter().collect();
        while batch.len() < BATCH {
            match ops.try_recv() {
                Ok(op) => batch.push(op),
                Err(_) => break,
            }
        }
        // Each run's newest record and all its new events, in the order runs first appear.
        let mut records: Vec<(RunId, Box<Record>)> = Vec::new();
        let mut record_at: HashMap<RunId, usize> = HashMap::new();
        let mut events: Vec<(RunId, Vec<u8>)> = Vec::new();
        let mut events_at: HashMap<RunId, usize> = HashMap::new();
        let mut flushed = Vec::new();
        for op in batch {
            match op {
                Op::Record(record) => match record_at.get(&record.id) {
                    Some(&at) => records[at].1 = record,
                    None => {
                        record_at.insert(record.id, records.len());
                        records.push((record.id, record));
                    }
                },
                Op::Events(id, mut line) => match events_at.get(&id) {
                    Some(&at) => events[at].1.append(&mut line),
                    None => {
                        events_at.insert(id, events.len());
                        events.push((id, line));
                    }
                },
                Op::Flush(done) => flushed.push(done),
            }
        }
        // Events first: a reader that sees a run ended has its events already.
        for (id, bytes) in events {
            append(
                runs,
                open.entry(id).or_insert_with(|| create(runs, id)),
                &bytes,
            );
        }
        let now = std::time::Instant::now();
        let flushing = !flushed.is_empty();
        for (id, record) in records {
            if record.running() {
                // A live record waits; a newer one replaces it, keeping its time.
                let since = pending.get(&id).map_or(now, |(since, _)| *since);
                pending.insert(id, (since, record));
                continue;
            }
            open.remove(&id);
            // Its live record, if it was written, goes with this write.
            pending.remove(&id);
            write(runs, &record);
        }
        let due: Vec<RunId> = pending
            .iter()
            .filter(|(_, (since, _))| flushing || now.duration_since(*since) >= LIVE_AFTER)
            .map(|(id, _)| *id)
            .collect();
        for id in due {
            if let Some((_, record)) = pending.remove(&id) {
                write(runs, &record);
            }
        }
        for done in flushed {
            let _ = done.send(());
        }
    }
}

fn write(runs: &Runs, record: &Record) {
    if let Err(error) = runs.write(record) {
        tracing::warn!(target: "subagent::runs", id = %record.id, "the run's record is not written: {error}");
    }
}

fn create(runs: &Runs, id: RunId) -> Open {
    let path = runs.events_path(id);
    let file = private::create_file(&path)
        .map_err(|error| {
            tracing::warn!(target: "subagent::runs", "cannot write {}: {error}", path.display());
        })
        .ok();
    Open { file, written: 0 }
}

/// `bytes` (whole lines) at the end of the run's events, within [`EVENTS_BYTES`].
fn append(runs: &Runs, open: &mut Open, bytes: &[u8]) {
    let _ = runs;
    let Some(file) = &mut open.file else { return };
    let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if open.written.saturating_add(size) > EVENTS_BYTES {
        // What fits, line by line, then the mark.
        let room = EVENTS_BYTES.saturating_sub(open.written);
        let fits = bytes[..usize::try_from(room)
            .unwrap_or(bytes.len())
            .min(bytes.len())]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |end| end + 1);
        let _ = file.write_all(&bytes[..fits]);
        let _ = file.write_all(b"{\"type\":\"truncated\"}\n");
        open.file = None;
        return;
    }
    if file.write_all(bytes).is_err() {
        open.file = None;
    }
    open.written += size;
}
