//! The run handle, its events and its outcome, and the helper providers build runs with.

use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use futures::channel::{mpsc, oneshot};
use futures::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::apart::WorktreeReport;
use crate::text::{Limit, truncate_marked};
use crate::{StopReason, TaskKind, TaskStatus};

/// A run's id: a random UUID, printed in its hyphenated form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(uuid::Uuid);

impl RunId {
    /// A fresh random id.
    pub fn new() -> Self {
        Self(uuid::Uuid::new_v4())
    }

    /// The id's eight first hex digits, for short labels.
    pub fn short(&self) -> String {
        self.0.simple().to_string()[..8].to_owned()
    }
}

impl Default for RunId {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::str::FromStr for RunId {
    type Err = uuid::Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(Self)
    }
}

/// Token and tool counts of a run: the one `Usage` type, shared with the model clients.
pub use subagent_session::Usage;

/// How to find a run's session again, to resume it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionRef {
    /// The provider that ran it.
    pub provider: String,
    /// The provider's session id (a Claude Code session id, a Codex thread id, …).
    pub id: String,
    /// The working directory the session belongs to, where the provider keys sessions by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// A transcript file, where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<PathBuf>,
}

/// The most a diagnostic keeps, in bytes.
pub const DIAGNOSTIC_LIMIT: usize = 4096;

/// How a run ended. `status` other than `completed` comes with a `diagnostic`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Outcome {
    /// Why it stopped.
    #[schemars(with = "String")]
    pub status: StopReason,
    /// The child's final answer (for a failure: whatever partial text there was).
    pub text: String,
    /// Structured output, when an output schema was requested and honoured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
    /// Counts.
    pub usage: Usage,
    /// What went wrong, bounded to [`DIAGNOSTIC_LIMIT`] bytes and sanitized.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostic: Option<String>,
    /// How to resume the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionRef>,
    /// The worktree an isolated child changed, kept for the user (an unchanged one is removed
    /// and not reported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorktreeReport>,
}

impl Outcome {
    /// A completed run with this answer.
    pub fn completed(text: impl Into<String>) -> Self {
        Self::with_status(StopReason::Completed, text.into(), None)
    }

    /// A failed run with this diagnostic.
    pub fn failed(diagnostic: impl Into<String>) -> Self {
        Self::with_status(StopReason::Failed, String::new(), Some(diagnostic.into()))
    }

    /// A cancelled run.
    pub fn cancelled() -> Self {
        Self::with_status(
            StopReason::Cancelled,
            String::new(),
            Some("the run was cancelled".to_owned()),
        )
    }

    /// A run that stopped for `status`.
    pub fn with_status(status: StopReason, text: String, diagnostic: Option<String>) -> Self {
        Self {
            status,
            text,
            structured: None,
            usage: Usage::default(),
            diagnostic,
            session: None,
            worktree: None,
        }
    }

    /// Whether the run completed.
    pub fn is_completed(&self) -> bool {
        self.status == StopReason::Completed
    }
}

/// What a run reports while it goes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunEvent {
    /// The child waits for room before it starts: its provider bounds how many of its children
    /// are starting at once. `ahead` wait before it. Cancelling it now starts nothing.
    Queued {
        /// How many children of the provider wait before it.
        ahead: usize,
    },
    /// The run started.
    Started {
        /// Its id.
        run_id: RunId,
        /// The provider running it.
        provider: String,
        /// Its description.
        description: String,
    },
    /// Text from the child (a delta or a whole block, as the provider sees it).
    Text {
        /// The text.
        text: String,
        /// Set when a nested agent of the child said it: the id of the call that started it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_use_id: Option<String>,
    },
    /// The child's reasoning.
    Thinking {
        /// The text.
        text: String,
    },
    /// The child called a tool.
    ToolCall {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// The arguments.
        input: Value,
        /// Set when a nested agent of the child made the call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_use_id: Option<String>,
    },
    /// A tool answered.
    ToolResult {
        /// The call's id.
        id: String,
        /// The result's text (possibly shortened by the provider).
        output: String,
        /// Whether it is an error.
        is_error: bool,
        /// Set when it answers a nested agent's call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_use_id: Option<String>,
    },
    /// Usage so far (cumulative), of the run itself or, when tagged, of one nested agent.
    Usage {
        /// The counts.
        usage: Usage,
        /// Set when a nested agent of the child used it: the id of the call that started it
        /// (each nested agent's events are cumulative on their own; the run's untagged ones do
        /// not include them).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_use_id: Option<String>,
    },
    /// A short account of the run's progress so far (one or two sentences, present tense),
    /// made now and then while a long run goes on by a tool-less fork of its conversation (see
    /// `subagent_runtime::summary`). Informational only: nothing the run does depends on it.
    Summary {
        /// The summary.
        text: String,
        /// Set when a nested agent of the child is summarized: the id of the call that started
        /// it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_use_id: Option<String>,
    },
    /// Free-form progress (a retry, a phase change). [`RunEvent::progress`] makes one.
    Progress {
        /// What happened.
        message: String,
        /// Set when a nested agent of the child reported it: the id of the call that started
        /// it (a product child's own progress forwarded into its parent's stream).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_use_id: Option<String>,
    },
    /// A background task of this run started: a delegation or a command sent to the
    /// background, or a foreground delegation that moved there. Put into its own stream by the
    /// in-process runtime, before the tool result that tells the model.
    TaskStarted {
        /// The task's id (a subagent's run id).
        task_id: RunId,
        /// The id of the tool call that started it (its subagent's forwarded events carry it
        /// as their `parent_tool_use_id`).
        tool_use_id: String,
        /// What it runs.
        kind: TaskKind,
        /// Its description.
        description: String,
    },
    /// A background task of this run ended.
    TaskEnded {
        /// The task's id.
        task_id: RunId,
        /// The id of the tool call that started it.
        tool_use_id: String,
        /// How it ended (never `running`).
        status: TaskStatus,
        /// Its description.
        description: String,
    },
    /// The run ended; the outcome is ready.
    Finished {
        /// How.
        status: StopReason,
    },
}

impl RunEvent {
    /// A run's own [`RunEvent::Progress`].
    pub fn progress(message: impl Into<String>) -> Self {
        Self::Progress {
            message: message.into(),
            parent_tool_use_id: None,
        }
    }
}

/// Removes what must not travel (terminal escapes, control characters, things that look like
/// credentials) and bounds the text to [`DIAGNOSTIC_LIMIT`] bytes without splitting a character.
pub(crate) fn sanitize_diagnostic(text: &str) -> String {
    let mut clean = String::with_capacity(text.len().min(DIAGNOSTIC_LIMIT));
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == '\u{1b}' {
            // CSI sequence: ESC [ params final-byte; other escapes: drop ESC and the next char.
            if chars.next_if_eq(&'[').is_some() {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            } else {
                chars.next();
            }
            continue;
        }
        if ch.is_control() && ch != '\n' && ch != '\t' {
            continue;
        }
        clean.push(ch);
    }
    let redacted = redact_secrets(&clean);
    truncate_marked(&redacted, Limit::Bytes(DIAGNOSTIC_LIMIT), "…[truncated]").into_owned()
}

fn redact_secrets(text: &str) -> String {
    const MARKERS: [&str; 5] = ["sk-", "Bearer ", "bearer ", "x-api-key: ", "api_key="];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'scan: while !rest.is_empty() {
        for marker in MARKERS {
            if let Some(tail) = rest.strip_prefix(marker) {
                let secret_len = tail
                    .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
                    .unwrap_or(tail.len());
                if secret_len >= 8 {
                    out.push_str(marker);
                    out.push_str("[redacted]");
                    rest = &tail[secret_len..];
                    continue 'scan;
                }
            }
        }
        let mut chars = rest.chars();
        if let Some(ch) = chars.next() {
            out.push(ch);
        }
        rest = chars.as_str();
    }
    out
}

/// What a host learns of a run as its caller takes it, told in the caller's own task (no task
/// or channel of its own, so watching a hundred children costs next to nothing): each event as
/// the caller's [`RunEvents`] yields it, and the outcome as [`Run::outcome`] returns it. A
/// record of runs is one (see [`Run::observe`]).
pub trait RunObserver: Send + Sync {
    /// An event of the run, as its stream yields it.
    fn event(&self, event: &RunEvent);

    /// The run's outcome, as [`Run::outcome`] is about to return it. What it returns is
    /// awaited first (a host that must have the end written down before the caller hears of
    /// it, say because the command may exit right after).
    fn ended(&self, outcome: &Outcome) -> Option<futures::future::BoxFuture<'static, ()>>;
}

/// The events of a run, as a stream. Ends after [`RunEvent::Finished`].
pub struct RunEvents {
    receiver: mpsc::UnboundedReceiver<RunEvent>,
    observer: Option<Arc<dyn RunObserver>>,
}

impl Stream for RunEvents {
    type Item = RunEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<RunEvent>> {
        let next = Pin::new(&mut self.receiver).poll_next(cx);
        if let (Poll::Ready(Some(event)), Some(observer)) = (&next, &self.observer) {
            observer.event(event);
        }
        next
    }
}

/// A running child, as the caller holds it.
pub struct Run {
    id: RunId,
    provider: String,
    description: String,
    events: Option<RunEvents>,
    outcome: oneshot::Receiver<Outcome>,
    cancel: CancellationToken,
    observer: Option<Arc<dyn RunObserver>>,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("id", &self.id)
            .field("provider", &self.provider)
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}

impl Run {
    /// The run [`Run::channel`] makes: named `description`, cancelled by `cancel`.
    pub(crate) fn open(
        provider: &str,
        description: String,
        cancel: CancellationToken,
    ) -> (RunSender, Run) {
        let id = RunId::new();
        let (events_tx, events_rx) = mpsc::unbounded();
        let (outcome_tx, outcome_rx) = oneshot::channel();
        let sender = RunSender {
            id,
            events: events_tx,
            outcome: Some(outcome_tx),
            cancel: cancel.clone(),
            started: Instant::now(),
        };
        sender.emit(RunEvent::Started {
            run_id: id,
            provider: provider.to_owned(),
            description: description.clone(),
        });
        let run = Run {
            id,
            provider: provider.to_owned(),
            description,
            events: Some(RunEvents {
                receiver: events_rx,
                observer: None,
            }),
            outcome: outcome_rx,
            cancel,
            observer: None,
        };
        (sender, run)
    }

    /// A run standing in for `inner`, for a layer between the registry and the caller (an
    /// [`Isolated`](crate::isolation::Isolated) place): the same id, provider, description and
    /// cancellation (cancelling either cancels the child). It emits nothing of its own: the
    /// layer hands `inner` to the returned sender's [`RunSender::forward`], which passes its
    /// events on (`Started` included), then finishes with the outcome, amended as it needs.
    pub fn relay(inner: &Run) -> (RunSender, Run) {
        let (events_tx, events_rx) = mpsc::unbounded();
        let (outcome_tx, outcome_rx) = oneshot::channel();
        let sender = RunSender {
            id: inner.id,
            events: events_tx,
            outcome: Some(outcome_tx),
            cancel: inner.cancel.clone(),
            started: Instant::now(),
        };
        let run = Run {
            id: inner.id,
            provider: inner.provider.clone(),
            description: inner.description.clone(),
            events: Some(RunEvents {
                receiver: events_rx,
                observer: None,
            }),
            outcome: outcome_rx,
            cancel: inner.cancel.clone(),
            observer: None,
        };
        (sender, run)
    }

    /// The run's id.
    pub fn id(&self) -> RunId {
        self.id
    }

    /// The provider running it.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// Its description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Takes the event stream (once; later calls return `None`). Events not taken are dropped
    /// when `outcome()` is awaited.
    pub fn take_events(&mut self) -> Option<RunEvents> {
        self.events.take()
    }

    /// Tells `observer` of the run's events as the stream taken from it yields them (when the
    /// stream is still here to take: events taken before are not seen), and of its outcome as
    /// [`Run::outcome`] returns it. One observer per run: a second replaces the first.
    pub fn observe(&mut self, observer: Arc<dyn RunObserver>) {
        if let Some(events) = &mut self.events {
            events.observer = Some(Arc::clone(&observer));
        }
        self.observer = Some(observer);
    }

    /// Asks the run to stop. The outcome then reports `cancelled` (or how the run ended, if it
    /// ended first).
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// A token that cancels this run.
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Waits for the outcome. Never fails: a broken provider yields `failed` with a diagnostic.
    pub async fn outcome(self) -> Outcome {
        let Run {
            outcome,
            cancel,
            observer,
            ..
        } = self;
        // Drop the event receiver (if not taken) so unread events stop piling up.
        let outcome = match outcome.await {
            Ok(outcome) => outcome,
            Err(_) if cancel.is_cancelled() => Outcome::cancelled(),
            Err(_) => Outcome::failed("the provider ended the run without an outcome"),
        };
        if let Some(written) = observer.and_then(|observer| observer.ended(&outcome)) {
            written.await;
        }
        outcome
    }
}

/// A clonable handle on a run's event stream, for work of the run that outlives one call (a
/// background task reporting into its parent's stream). Events sent after the run finished are
/// dropped.
#[derive(Clone, Debug)]
pub struct RunEmitter(mpsc::UnboundedSender<RunEvent>);

impl RunEmitter {
    /// Reports an event into the run's stream. Never blocks.
    pub fn emit(&self, event: RunEvent) {
        let _ = self.0.unbounded_send(event);
    }
}

/// The provider's side of a [`Run`].
pub struct RunSender {
    id: RunId,
    events: mpsc::UnboundedSender<RunEvent>,
    outcome: Option<oneshot::Sender<Outcome>>,
    cancel: CancellationToken,
    started: Instant,
}

impl std::fmt::Debug for RunSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunSender")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl RunSender {
    /// The run's id.
    pub fn id(&self) -> RunId {
        self.id
    }

    /// Reports an event. Never blocks; dropped silently if nobody listens.
    pub fn emit(&self, event: RunEvent) {
        let _ = self.events.unbounded_send(event);
    }

    /// The token the provider must watch: cancelled when the caller cancels.
    pub fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// A handle emitting into this run's events (see [`RunEmitter`]).
    pub fn emitter(&self) -> RunEmitter {
        RunEmitter(self.events.clone())
    }

    /// Whether the run was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Time since the run started.
    pub fn elapsed(&self) -> std::time::Duration {
        self.started.elapsed()
    }

    /// Passes `inner`'s events on to this run as they come (all but its `Finished`: this
    /// run's own [`RunSender::finish`] reports the end) and returns its outcome once it has
    /// ended, for the caller to amend and finish with. See [`Run::relay`].
    pub async fn forward(&self, mut inner: Run) -> Outcome {
        if let Some(mut events) = inner.take_events() {
            // The stream ends when the child's sender delivers its outcome (or is dropped).
            while let Some(event) = events.next().await {
                if !matches!(event, RunEvent::Finished { .. }) {
                    self.emit(event);
                }
            }
        }
        inner.outcome().await
    }

    /// Reports that the run waits for room to start ([`RunEvent::Queued`]: its provider bounds
    /// how many of its children are starting at once).
    pub fn queued(&self, ahead: usize) {
        self.emit(RunEvent::Queued { ahead });
    }

    /// Ends a run that never started: `cancelled` when it was cancelled while it waited to
    /// start (`why` is `None`), else `failed` with why it could not.
    pub fn never_started(self, why: Option<String>) {
        self.finish(why.map_or_else(Outcome::cancelled, Outcome::failed));
    }

    /// Ends the run: the diagnostic is sanitized, the duration filled in when the provider left
    /// it at 0, [`RunEvent::Finished`] emitted and the outcome delivered.
    pub fn finish(mut self, outcome: Outcome) {
        self.deliver(outcome);
    }

    fn deliver(&mut self, mut outcome: Outcome) {
        let Some(sender) = self.outcome.take() else {
            return;
        };
        if outcome.usage.duration_ms == 0 {
            outcome.usage.duration_ms =
                u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        }
        outcome.diagnostic = outcome.diagnostic.as_deref().map(sanitize_diagnostic);
        self.emit(RunEvent::Finished {
            status: outcome.status,
        });
        self.events.close_channel();
        let _ = sender.send(outcome);
    }
}

impl Drop for RunSender {
    fn drop(&mut self) {
        if self.outcome.is_none() {
            return;
        }
        let outcome = if std::thread::panicking() {
            Outcome::failed("the provider's task panicked before the run finished")
        } else if self.cancel.is_cancelled() {
            Outcome::cancelled()
        } else {
            Outcome::failed("the provider dropped the run without reporting an outcome")
        };
        self.deliver(outcome);
    }
}
