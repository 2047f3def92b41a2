//! The recorder a host installs in its registry: every run it starts passes through a relay
//! that writes the run's record and events as they come, and cancels the run when a `subagent
//! stop` asks.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use futures::StreamExt;
use subagent_core::registry::{RunRecorder, StartedRun};
use subagent_core::{CancellationToken, Run, RunEvent, RunId};
use subagent_session::private;

use crate::record::{Owner, Record, Status, now_ms};
use crate::store::Runs;

/// The most of one run's events kept, in bytes; past it one `truncated` line ends the file.
const EVENTS_BYTES: u64 = 16 << 20;
/// How often the counts of a running run are written at most.
const COUNTS_EVERY: Duration = Duration::from_secs(1);
/// How often the process looks for stop requests while it owns a running run.
const STOP_POLL: Duration = Duration::from_millis(200);

/// Records the runs of one process (see the crate's documentation).
pub struct Recorder {
    runs: Runs,
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
        Arc::new_cyclic(|me| Self {
            runs,
            kind,
            output,
            live: Mutex::new(HashMap::new()),
            watching: Mutex::new(false),
            me: me.clone(),
        })
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
        let id = run.id();
        let top = started.lineage.is_empty();
        let mut record = Record {
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
            owner: Owner::this(),
            output: if top { self.output.clone() } else { None },
            session: None,
            diagnostic: None,
        };
        if let Err(error) = self.runs.write(&record) {
            tracing::warn!(target: "subagent::runs", %id, "the run is not recorded: {error}");
            return run;
        }
        let Some(mut events) = run.take_events() else {
            return run;
        };
        let (sender, relay) = Run::relay(&run);
        self.live().insert(id, run.cancel_token());
        self.watch();
        let runs = self.runs.clone();
        let me = self.me.clone();
        let mut log = Events::open(&runs, id);
        tokio::spawn(async move {
            let mut written = Instant::now();
            while let Some(event) = events.next().await {
                log.append(&event);
                if let RunEvent::Usage {
                    usage,
                    parent_tool_use_id: None,
                } = &event
                {
                    record.usage = *usage;
                    if written.elapsed() >= COUNTS_EVERY {
                        written = Instant::now();
                        let _ = runs.write(&record);
                    }
                }
                // The relay's own `finish` reports the end.
                if !matches!(event, RunEvent::Finished { .. }) {
                    sender.emit(event);
                }
            }
            let outcome = run.outcome().await;
            record.status = Status::ended(outcome.status);
            record.ended_ms = Some(now_ms());
            record.usage = outcome.usage;
            record.session.clone_from(&outcome.session);
            record.diagnostic.clone_from(&outcome.diagnostic);
            if let Err(error) = runs.write(&record) {
                tracing::warn!(target: "subagent::runs", %id, "the run's end is not recorded: {error}");
            }
            if let Some(recorder) = me.upgrade() {
                recorder.live().remove(&id);
            }
            sender.finish(outcome);
        });
        relay
    }
}

/// A run's events file, appended one line at a time, up to [`EVENTS_BYTES`].
struct Events {
    file: Option<std::fs::File>,
    written: u64,
}

impl Events {
    fn open(runs: &Runs, id: RunId) -> Self {
        let path = runs.events_path(id);
        let file = private::create_file(&path)
            .map_err(|error| {
                tracing::warn!(target: "subagent::runs", "cannot write {}: {error}", path.display());
            })
            .ok();
        Self { file, written: 0 }
    }

    fn append(&mut self, event: &RunEvent) {
        let Some(file) = &mut self.file else { return };
        let Ok(mut line) = serde_json::to_vec(event) else {
            return;
        };
        line.push(b'\n');
        let size = u64::try_from(line.len()).unwrap_or(u64::MAX);
        if self.written.saturating_add(size) > EVENTS_BYTES {
            let _ = file.write_all(b"{\"type\":\"truncated\"}\n");
            self.file = None;
            return;
        }
        // One write per event: a crash loses at most the line being written.
        if file.write_all(&line).is_err() {
            self.file = None;
        }
        self.written += size;
    }
}
