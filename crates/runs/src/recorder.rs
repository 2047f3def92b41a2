//! The recorder a host installs in its registry: every run it starts is watched (a
//! [`RunObserver`], told in the caller's own task) and its record and events queued to the
//! writing thread as they come; it cancels the run when a `subagent
//! stop` asks.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use subagent_core::registry::{RunRecorder, StartedRun};
use subagent_core::{CancellationToken, Outcome, Run, RunEvent, RunId, RunObserver};

use crate::record::{Owner, Record, Status, now_ms};
use crate::store::Runs;
use crate::writer::{Shared, Writer};
/// How often the counts of a running run are written at most.
const COUNTS_EVERY: Duration = Duration::from_secs(1);
/// How often the process looks for stop requests while it owns a running run.
const STOP_POLL: Duration = Duration::from_millis(200);

/// Records the runs of one process (see the crate's documentation).
pub struct Recorder {
    runs: Runs,
    /// The thread writing the files (`None`: it could not start, and nothing is recorded).
    writer: Option<Writer>,
    /// This process (read once: every record names it).
    owner: Owner,
    /// What starts this process's top-level runs (`run`, `delegate`, `serve`, …).
    kind: String,
    /// The file a top-level run's output goes to, where there is one.
    output: Option<PathBuf>,
    /// The running runs this process owns, by id: how to cancel each.
    live: Mutex<HashMap<RunId, CancellationToken>>,
    /// Whether the stop watcher runs.
    watching: Mutex<bool>,
    me: Weak<Recorder>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("root", &self.runs.root())
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// A recorder writing into `runs`, its top-level runs started by `kind`.
    pub fn new(runs: Runs, kind: impl Into<String>, output: Option<PathBuf>) -> Arc<Self> {
        let kind = kind.into();
        let owner = Owner::this();
        let writer = Writer::start(runs.clone(), owner, runs.keep())
            .map_err(|error| {
                tracing::warn!(target: "subagent::runs", "runs are not recorded: {error}");
            })
            .ok();
        Arc::new_cyclic(|me| Self {
            writer,
            runs,
            owner,
            kind,
            output,
            live: Mutex::new(HashMap::new()),
            watching: Mutex::new(false),
            me: me.clone(),
        })
    }

    /// Waits until everything its runs have said so far is written.
    pub async fn flush(&self) {
        if let Some(writer) = &self.writer {
            writer.flush().await;
        }
    }

    /// The record it writes into.
    pub fn runs(&self) -> &Runs {
        &self.runs
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<RunId, CancellationToken>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts looking for stop requests, once, on the current tokio runtime; the watcher ends
    /// when this process owns no running run.
    fn watch(&self) {
        let mut watching = self.watching.lock().unwrap_or_else(PoisonError::into_inner);
        if *watching || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        *watching = true;
        let me = self.me.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(STOP_POLL).await;
                let Some(recorder) = me.upgrade() else { return };
                if recorder.live().is_empty() {
                    *recorder
                        .watching
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = false;
                    return;
                }
                for id in recorder.runs.stop_requests() {
                    let token = recorder.live().get(&id).cloned();
                    if let Some(token) = token {
                        tracing::debug!(target: "subagent::runs", %id, "stopped on request");
                        token.cancel();
                        recorder.runs.clear_stop(id);
                    }
                }
            }
        });
    }
}

impl RunRecorder for Recorder {
    fn record(&self, started: StartedRun, mut run: Run) -> Run {
        let Some(writer) = self.writer.clone() else {
            return run;
        };
        let id = run.id();
        let top = started.lineage.is_empty();
        let record = Record {
            id,
            parent: started.lineage.last().copied(),
            root: started.lineage.first().copied().unwrap_or(id),
            kind: if top {
                self.kind.clone()
            } else {
                "child".to_owned()
            },
            provider: started.provider,
            description: started.description,
            agent_type: started.agent_type,
            teammate: started.teammate,
            background: started.background,
            cwd: started.cwd,
            status: Status::Running,
            started_ms: now_ms(),
            ended_ms: None,
            usage: subagent_core::Usage::default(),
            owner: self.owner,
            output: if top { self.output.clone() } else { None },
            session: None,
            diagnostic: None,
            journal: None,
        };
        let state: Shared = Arc::new(Mutex::new(Some((record, Instant::now()))));
        writer.started(id, Arc::clone(&state));
        self.live().insert(id, run.cancel_token());
        self.watch();
        run.observe(Arc::new(Watched {
            id,
            top,
            writer,
            state,
            recorder: self.me.clone(),
        }));
        run
    }
}

/// One recorded run, told of its events and outcome as its caller takes them.
struct Watched {
    id: RunId,
    top: bool,
    writer: Writer,
    /// Its record and when its counts were last queued; `None` once it ended.
    state: Shared,
    recorder: Weak<Recorder>,
}

impl Watched {
    fn state(&self) -> std::sync::MutexGuard<'_, Option<(Record, Instant)>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn forget(&self) {
        if let Some(recorder) = self.recorder.upgrade() {
            recorder.live().remove(&self.id);
        }
    }
}

impl RunObserver for Watched {
    fn event(&self, event: &RunEvent) {
        // The start is the record's (`Runs::events_from` gives it first): not queued again.
        if matches!(event, RunEvent::Started { .. }) {
            return;
        }
        self.writer.event(self.id, event.clone());
        // A queued child's record says so until its next event.
        let queued = matches!(event, RunEvent::Queued { .. });
        if let Some((record, _)) = &mut *self.state()
            && (queued || record.status == Status::Queued)
        {
            record.status = if queued {
                Status::Queued
            } else {
                Status::Running
            };
            self.writer.record(record.clone());
        }
        if let RunEvent::Usage {
            usage,
            parent_tool_use_id: None,
        } = event
            && let Some((record, written)) = &mut *self.state()
        {
            record.usage = *usage;
            if written.elapsed() >= COUNTS_EVERY {
                *written = Instant::now();
                self.writer.record(record.clone());
            }
        }
    }

    fn ended(&self, outcome: &Outcome) -> Option<BoxFuture<'static, ()>> {
        let (mut record, _) = self.state().take()?;
        record.status = Status::ended(outcome.status);
        record.ended_ms = Some(now_ms());
        record.usage = outcome.usage;
        record.session.clone_from(&outcome.session);
        record.diagnostic.clone_from(&outcome.diagnostic);
        self.writer.record(record);
        self.forget();
        // A top-level run's end is on disk before its caller hears of it (the command may exit
        // right after); a child's is written with the next batch.
        let writer = self.writer.clone();
        self.top
            .then(|| Box::pin(async move { writer.flush().await }) as BoxFuture<'static, ()>)
    }
}

impl Drop for Watched {
    /// A run whose caller let it go without its outcome is no longer this process's to stop
    /// (its record stays running, and reads as lost once the process is gone).
    fn drop(&mut self) {
        if self.state().is_some() {
            self.forget();
        }
    }
}
