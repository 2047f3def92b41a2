//! Background work of one agent run: the task table, output files and `<task-notification>`s.
//!
//! A delegation started in the background returns at once with the child's run id, which is
//! its task id; the table follows the child on a task of its own. Each task has a row
//! ([`TaskInfo`]): its kind (`agent`), status (`running`, `completed`, `failed`, `killed`),
//! description, the delegation call's id, start and end, an **output file** and progress (tool
//! uses, tokens, last activity, the five most recent activities). The output file holds the
//! child's events and then its outcome as JSON lines (secrets redacted), written as they happen
//! and flushed at each of the child's turn ends (its `usage` event) and at the end; it lives in
//! the table's directory, by default `<temp dir>/subagent-tasks/<parent run id>/<task id>.jsonl`.
//! A table that forwards into its parent's stream also puts typed events there: a
//! [`RunEvent::TaskStarted`] when a task starts (before the tool result that tells the model)
//! and a [`RunEvent::TaskEnded`] when it ends, so a view never reads the model's sentences.
//!
//! The agent loop delivers finished tasks as `<task-notification>` text in Claude Code's tag
//! spelling (`<task_id>`, `<tool_use_id>`, `<output_file>`, `<status>`, `<summary>`,
//! `<result>`, `<usage>`): appended to the next user message (after the tool results) when the
//! loop is going on anyway, or, when the model ends its answer while tasks are still running,
//! as a new user message once the next task finishes (the loop waits, cancellably). A run
//! therefore never finishes with a background child still running — unless its host keeps the
//! table beyond the run ([`AgentConfig::tasks`](crate::AgentConfig::tasks), `subagent acp`'s
//! sessions): then the run ends without waiting for its tasks or stopping them, the host watches
//! them ([`TaskTable::next_ended`]) and stops them when it ends ([`TaskTable::stop_all`]), and
//! the next run given the table tells the model, before its prompt, what ended between the
//! two. Each task is told once:
//! a task whose end the model already read through the task tools
//! ([`crate::tools::TaskOutputTool`], [`crate::tools::TaskStopTool`]) is marked notified and is
//! not told again.

pub(crate) mod dir;
mod notification;
mod output;

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use serde::Serialize;
use serde_json::json;
use subagent_core::text::{Limit, truncate};
use subagent_core::time::now_ms;
use subagent_core::{
    CancellationToken, Outcome, Run, RunEmitter, RunEvent, RunEvents, RunId, StopReason,
};
use subagent_process::{Process, Secrets, StopCause};

use crate::report::{command_report, forwarded_clean};

/// A task's last activity is cut to this (an ellipsis marking the cut).
const ACTIVITY: Limit = Limit::Chars(160);

/// How many recent activities a task's progress keeps.
pub const RECENT_ACTIVITIES: usize = 5;

pub use subagent_core::{TaskKind, TaskStatus};

/// What a task has done so far.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TaskProgress {
    /// Tool calls the child made (its own, not its descendants').
    pub tool_uses: u64,
    /// Input and output tokens the child used so far.
    pub tokens: u64,
    /// The latest activity (`tool <input>`), if any.
    pub last_activity: Option<String>,
    /// When the child last reported anything, in milliseconds since the Unix epoch.
    pub last_activity_ms: Option<u64>,
    /// The [`RECENT_ACTIVITIES`] most recent activities, oldest first.
    pub recent: Vec<String>,
    /// The child's latest progress summary ([`RunEvent::Summary`]), if it made one.
    pub summary: Option<String>,
}

/// One row of the task table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TaskInfo {
    /// The task id: the child's run id.
    pub id: RunId,
    /// What it runs.
    pub kind: TaskKind,
    /// Where it is, and once it has ended when and how.
    #[serde(flatten)]
    pub state: TaskState,
    /// Its description.
    pub description: String,
    /// The id of the tool call that started it.
    pub tool_use_id: String,
    /// When it started, in milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// The file its events and outcome are written to (`None` when it could not be created).
    pub output_file: Option<PathBuf>,
    /// What it has done so far.
    pub progress: TaskProgress,
    /// Whether the model has been told how it ended (by a notification or a task tool).
    pub notified: bool,
}

/// Where a task is: running, or ended with its outcome. Its [`TaskStatus`] is read from the
/// outcome, so a status and an outcome that disagree cannot be built. Serialized as the
/// fields `status`, `ended_ms` and `outcome`.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskState {
    /// Still going.
    Running,
    /// Ended.
    Ended {
        /// When, in milliseconds since the Unix epoch.
        ended_ms: u64,
        /// How.
        outcome: Box<Outcome>,
    },
}

impl TaskState {
    /// Where the task is: running, or as its outcome says.
    pub fn status(&self) -> TaskStatus {
        match self {
            Self::Running => TaskStatus::Running,
            Self::Ended { outcome, .. } => TaskStatus::of(outcome.status),
        }
    }

    /// Whether it is still going.
    pub fn is_running(&self) -> bool {
        matches!(self, Self::Running)
    }

    /// When it ended, in milliseconds since the Unix epoch.
    pub fn ended_ms(&self) -> Option<u64> {
        match self {
            Self::Running => None,
            Self::Ended { ended_ms, .. } => Some(*ended_ms),
        }
    }

    /// How it ended.
    pub fn outcome(&self) -> Option<&Outcome> {
        match self {
            Self::Running => None,
            Self::Ended { outcome, .. } => Some(outcome),
        }
    }
}

impl Serialize for TaskState {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Fields<'a> {
            status: TaskStatus,
            ended_ms: Option<u64>,
            outcome: Option<&'a Outcome>,
        }
        Fields {
            status: self.status(),
            ended_ms: self.ended_ms(),
            outcome: self.outcome(),
        }
        .serialize(serializer)
    }
}

struct Entry {
    info: TaskInfo,
    cancel: CancellationToken,
}

#[derive(Default)]
struct Inner {
    tasks: Vec<Entry>,
    /// Finished tasks not told yet, oldest first.
    finished: VecDeque<RunId>,
}

impl Inner {
    fn entry(&mut self, id: RunId) -> Option<&mut Entry> {
        self.tasks.iter_mut().find(|entry| entry.info.id == id)
    }

    fn running(&self) -> usize {
        self.tasks
            .iter()
            .filter(|entry| entry.info.state.is_running())
            .count()
    }

    /// Running tasks the run waits for before it ends: agents (a background command, like a
    /// server, may never end; it is stopped with the run).
    fn awaited(&self) -> usize {
        self.tasks
            .iter()
            .filter(|entry| entry.info.state.is_running() && entry.info.kind == TaskKind::Agent)
            .count()
    }
}

pub use dir::{TASK_RETENTION, TaskDir};
pub use notification::TaskNotification;
use output::OutputFile;

/// Where a table's output files go.
enum Place {
    /// A directory given as is ([`TaskTable::new`]).
    Dir(PathBuf),
    /// A run's directory under a root, both computed with the first task (the root set
    /// beforehand when configured).
    Run {
        id: RunId,
        root: OnceLock<TaskDir>,
        dir: OnceLock<PathBuf>,
    },
}

/// The background tasks of one agent run.
pub struct TaskTable {
    inner: Mutex<Inner>,
    changed: tokio::sync::Notify,
    place: Place,
    secrets: Secrets,
    /// The stream of the run using the table now (see [`TaskTable::forward_to`]).
    parent: Mutex<Option<RunEmitter>>,
}

impl Default for TaskTable {
    /// A table writing output files under `<temp dir>/subagent-tasks/<random id>`.
    fn default() -> Self {
        Self::for_run(RunId::new(), None, Secrets::new())
    }
}

impl std::fmt::Debug for TaskTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskTable")
            .field("running", &self.running())
            .finish_non_exhaustive()
    }
}

impl TaskTable {
    /// A table whose output files go to `dir` (created, mode 0700, with the first task), with
    /// `secrets` redacted from them.
    pub fn new(dir: impl Into<PathBuf>, secrets: Secrets) -> Self {
        Self {
            inner: Mutex::default(),
            changed: tokio::sync::Notify::new(),
            place: Place::Dir(dir.into()),
            secrets,
            parent: Mutex::new(None),
        }
    }

    /// Forwards the events of every subagent task into `parent` (the stream of the run that
    /// started them), tagged with the id of the call that started each, as a foreground
    /// child's are (secrets redacted).
    #[must_use]
    pub fn forwarding(self, parent: RunEmitter) -> Self {
        self.forward_to(Some(parent));
        self
    }

    /// From now on forwards into `parent` (`None`: nowhere): a table that outlives its runs
    /// ([`AgentConfig::tasks`](crate::AgentConfig::tasks)) forwards into the stream of the run
    /// using it, and between runs nowhere (its tasks' events still go to their output files).
    pub fn forward_to(&self, parent: Option<RunEmitter>) {
        *self.parent.lock().unwrap_or_else(PoisonError::into_inner) = parent;
    }

    /// The stream of the run that owns the table, when it forwards (see
    /// [`TaskTable::forwarding`]): where other work the run started and that outlives one tool
    /// call (a team's teammates) reports its events.
    pub fn emitter(&self) -> Option<RunEmitter> {
        self.parent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Puts `event` into the stream the table forwards into, if any.
    fn emit(&self, event: RunEvent) {
        if let Some(parent) = &*self.parent.lock().unwrap_or_else(PoisonError::into_inner) {
            parent.emit(event);
        }
    }

    /// The table of run `run_id`: output files under `<root>/<run_id>` of `root`
    /// ([`TaskDir::temp`] when `None`). Costs nothing until the first task: then the directory
    /// is made and the root pruned once (see [`TaskDir::prune_once`]).
    pub fn for_run(run_id: RunId, root: Option<TaskDir>, secrets: Secrets) -> Self {
        Self {
            inner: Mutex::default(),
            changed: tokio::sync::Notify::new(),
            place: Place::Run {
                id: run_id,
                root: root.map(OnceLock::from).unwrap_or_default(),
                dir: OnceLock::new(),
            },
            secrets,
            parent: Mutex::new(None),
        }
    }

    /// The root the runs this run starts keep their tasks under: its own (the temp root, made
    /// now, when none was configured); `None` for a table given a directory as is.
    pub fn root(&self) -> Option<TaskDir> {
        match &self.place {
            Place::Dir(_) => None,
            Place::Run { root, .. } => Some(root.get_or_init(TaskDir::temp).clone()),
        }
    }

    /// The directory output files go to (computed, not made).
    pub fn dir(&self) -> &Path {
        match &self.place {
            Place::Dir(dir) => dir,
            Place::Run { id, root, dir } => {
                dir.get_or_init(|| root.get_or_init(TaskDir::temp).run_dir(*id))
            }
        }
    }

    /// The output file of task `id`, pruning the root first (once).
    fn output_file(&self, id: RunId) -> Option<OutputFile> {
        if let Place::Run { root, .. } = &self.place {
            root.get_or_init(TaskDir::temp).prune_once();
        }
        OutputFile::create(self.dir(), id)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes over a started run: it becomes a running `agent` task whose events go to its output
    /// file and update its progress, and whose outcome becomes a notification when it ends.
    pub fn adopt(self: &Arc<Self>, mut run: Run, tool_use_id: String) -> RunId {
        let events = run.take_events();
        self.adopt_with_events(run, events, tool_use_id)
    }

    /// [`TaskTable::adopt`] for a run whose events were taken already (a foreground delegation
    /// moving to the background): `events` is what is left of them, and the output file starts
    /// there.
    pub fn adopt_with_events(
        self: &Arc<Self>,
        run: Run,
        events: Option<RunEvents>,
        tool_use_id: String,
    ) -> RunId {
        let id = run.id();
        let call_id = tool_use_id.clone();
        let output = self.output_file(id);
        let info = TaskInfo {
            id,
            kind: TaskKind::Agent,
            state: TaskState::Running,
            description: run.description().to_owned(),
            tool_use_id,
            started_ms: now_ms(),
            output_file: output.as_ref().map(|file| file.path.clone()),
            progress: TaskProgress::default(),
            notified: false,
        };
        self.started(&info);
        self.lock().tasks.push(Entry {
            info,
            cancel: run.cancel_token(),
        });
        let table = Arc::clone(self);
        tokio::spawn(async move {
            let mut output = output;
            if let Some(mut events) = events {
                while let Some(event) = events.next().await {
                    table.progress(id, &event);
                    table.forward(&event, &call_id);
                    if let Some(file) = &mut output {
                        let turn_end = matches!(
                            event,
                            RunEvent::Usage {
                                parent_tool_use_id: None,
                                ..
                            }
                        );
                        file.write(&table.secrets, &json!(event), turn_end).await;
                    }
                }
            }
            let outcome = run.outcome().await;
            if let Some(file) = &mut output {
                let line = json!({"type": "outcome", "outcome": outcome});
                file.write(&table.secrets, &line, true).await;
            }
            table.finish(id, outcome);
        });
        id
    }

    /// Takes over a started shell command (the bash tool's `run_in_background`): it becomes a
    /// running `bash` task whose stdout lines go to its output file as they come (each flushed)
    /// and update its progress (the latest lines), and whose end (the bash tool's report of it,
    /// stdout bounded by `limit`) becomes a notification. `cancel` is the command's token:
    /// stopping the task cancels it.
    pub fn adopt_process(
        self: &Arc<Self>,
        mut process: Process,
        cancel: CancellationToken,
        tool_use_id: String,
        description: String,
        limit: usize,
    ) -> TaskInfo {
        let id = RunId::new();
        let output = self.output_file(id);
        let info = TaskInfo {
            id,
            kind: TaskKind::Bash,
            state: TaskState::Running,
            description,
            tool_use_id,
            started_ms: now_ms(),
            output_file: output.as_ref().map(|file| file.path.clone()),
            progress: TaskProgress::default(),
            notified: false,
        };
        self.started(&info);
        self.lock().tasks.push(Entry {
            info: info.clone(),
            cancel,
        });
        let table = Arc::clone(self);
        let started = std::time::Instant::now();
        tokio::spawn(async move {
            let mut output = output;
            let mut lines = String::new();
            loop {
                let line = match process.next_line().await {
                    Ok(Some(line)) => line,
                    Ok(None) => break,
                    Err(error) => {
                        lines.push_str(&format!("({error})\n"));
                        break;
                    }
                };
                table.activity(id, &line);
                if lines.len().saturating_add(line.len()) < limit {
                    lines.push_str(&line);
                    lines.push('\n');
                }
                if let Some(file) = &mut output {
                    let event = json!({"type": "stdout", "line": line});
                    file.write(&table.secrets, &event, true).await;
                }
            }
            let mut outcome = match process.wait_with_output().await {
                Ok(captured) => {
                    let (text, is_error) = command_report(&captured, None, limit, &lines);
                    let status = match captured.exit.stopped {
                        Some(StopCause::Cancelled) => StopReason::Cancelled,
                        _ if is_error => StopReason::Failed,
                        _ => StopReason::Completed,
                    };
                    Outcome::with_status(status, text, None)
                }
                Err(error) => Outcome::failed(format!("waiting for bash failed: {error}")),
            };
            outcome.usage.duration_ms =
                u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            if let Some(file) = &mut output {
                let line = json!({"type": "outcome", "outcome": outcome});
                file.write(&table.secrets, &line, true).await;
            }
            table.finish(id, outcome);
        });
        info
    }

    /// Tells the parent's stream that the task of `info` started.
    fn started(&self, info: &TaskInfo) {
        self.emit(RunEvent::TaskStarted {
            task_id: info.id,
            tool_use_id: info.tool_use_id.clone(),
            kind: info.kind,
            description: self.secrets.redact(&info.description).into_owned(),
        });
    }

    /// Passes a subagent task's event on to the parent's stream, tagged with `call_id`.
    fn forward(&self, event: &RunEvent, call_id: &str) {
        if self
            .parent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none()
        {
            return;
        }
        if let Some(event) = forwarded_clean(event.clone(), call_id, &self.secrets) {
            self.emit(event);
        }
    }

    /// Records `activity` (a command's output line) as task `id`'s latest.
    fn activity(&self, id: RunId, activity: &str) {
        let activity = self
            .secrets
            .redact(&truncate(activity, ACTIVITY))
            .into_owned();
        if let Some(entry) = self.lock().entry(id) {
            let progress = &mut entry.info.progress;
            progress.last_activity_ms = Some(now_ms());
            progress.recent.push(activity.clone());
            if progress.recent.len() > RECENT_ACTIVITIES {
                progress.recent.remove(0);
            }
            progress.last_activity = Some(activity);
        }
    }

    fn progress(&self, id: RunId, event: &RunEvent) {
        let mut inner = self.lock();
        let Some(entry) = inner.entry(id) else {
            return;
        };
        let progress = &mut entry.info.progress;
        progress.last_activity_ms = Some(now_ms());
        match event {
            RunEvent::ToolCall {
                name,
                input,
                parent_tool_use_id: None,
                ..
            } => {
                progress.tool_uses = progress.tool_uses.saturating_add(1);
                let activity = truncate(&format!("{name} {input}"), ACTIVITY).into_owned();
                let activity = self.secrets.redact(&activity).into_owned();
                progress.recent.push(activity.clone());
                if progress.recent.len() > RECENT_ACTIVITIES {
                    progress.recent.remove(0);
                }
                progress.last_activity = Some(activity);
            }
            RunEvent::Usage {
                usage,
                parent_tool_use_id: None,
            } => {
                progress.tokens = usage.input_tokens.saturating_add(usage.output_tokens);
            }
            RunEvent::Summary {
                text,
                parent_tool_use_id: None,
            } => progress.summary = Some(self.secrets.redact(text).into_owned()),
            _ => {}
        }
    }

    fn finish(&self, id: RunId, mut outcome: Outcome) {
        if !self.secrets.is_empty() {
            outcome.text = self.secrets.redact(&outcome.text).into_owned();
        }
        let ended = {
            let mut inner = self.lock();
            let ended = inner.entry(id).map(|entry| {
                entry.info.progress.tool_uses =
                    entry.info.progress.tool_uses.max(outcome.usage.tool_uses);
                entry.info.state = TaskState::Ended {
                    ended_ms: now_ms(),
                    outcome: Box::new(outcome),
                };
                RunEvent::TaskEnded {
                    task_id: id,
                    tool_use_id: entry.info.tool_use_id.clone(),
                    status: entry.info.state.status(),
                    description: self.secrets.redact(&entry.info.description).into_owned(),
                }
            });
            if ended.is_some() {
                inner.finished.push_back(id);
            }
            ended
        };
        // The parent's stream hears of the end (`subagent run` shows it), as it hears the
        // task's events.
        if let Some(ended) = ended {
            self.emit(ended);
        }
        self.changed.notify_waiters();
    }

    /// The row of task `id`.
    pub fn get(&self, id: RunId) -> Option<TaskInfo> {
        self.lock().entry(id).map(|entry| entry.info.clone())
    }

    /// Every row, in the order the tasks started.
    pub fn list(&self) -> Vec<TaskInfo> {
        self.lock()
            .tasks
            .iter()
            .map(|entry| entry.info.clone())
            .collect()
    }

    /// How many tasks are still going.
    pub fn running(&self) -> usize {
        self.lock().running()
    }

    /// Marks task `id` as told (the model read how it ended): no notification will repeat it.
    pub fn mark_notified(&self, id: RunId) {
        if let Some(entry) = self.lock().entry(id) {
            entry.info.notified = true;
        }
    }

    /// The notifications not delivered yet, oldest first; they count as delivered.
    pub fn take_finished(&self) -> Vec<TaskNotification> {
        let mut inner = self.lock();
        let ids: Vec<RunId> = inner.finished.drain(..).collect();
        ids.into_iter()
            .filter_map(|id| Self::deliver(&mut inner, id))
            .collect()
    }

    fn deliver(inner: &mut Inner, id: RunId) -> Option<TaskNotification> {
        let entry = inner.entry(id)?;
        if entry.info.notified {
            return None;
        }
        entry.info.notified = true;
        Some(TaskNotification {
            task: entry.info.clone(),
        })
    }

    /// Waits for the next notification; `None` when no agent task is running and nothing is
    /// waiting to be told (background commands are not waited for).
    pub async fn next_finished(&self) -> Option<TaskNotification> {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut inner = self.lock();
                while let Some(id) = inner.finished.pop_front() {
                    if let Some(notification) = Self::deliver(&mut inner, id) {
                        return Some(notification);
                    }
                }
                if inner.awaited() == 0 {
                    return None;
                }
            }
            notified.await;
        }
    }

    /// Waits until a task not in `seen` has ended; its row (the first started, when several
    /// have). How a host that keeps the table beyond its runs
    /// ([`AgentConfig::tasks`](crate::AgentConfig::tasks)) hears of an end between them: it
    /// neither delivers nor marks anything, so the next run still tells the model.
    pub async fn next_ended(&self, seen: &HashSet<RunId>) -> TaskInfo {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let ended = self
                .lock()
                .tasks
                .iter()
                .find(|entry| !entry.info.state.is_running() && !seen.contains(&entry.info.id))
                .map(|entry| entry.info.clone());
            if let Some(info) = ended {
                return info;
            }
            notified.await;
        }
    }

    /// Waits until task `id` is no longer running, at most `timeout`; its row then (`None` for
    /// an unknown id).
    pub async fn wait(&self, id: RunId, timeout: Duration) -> Option<TaskInfo> {
        let ended = async {
            loop {
                let notified = self.changed.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                match self.get(id) {
                    Some(info) if info.state.is_running() => {}
                    other => return other,
                }
                notified.await;
            }
        };
        match tokio::time::timeout(timeout, ended).await {
            Ok(info) => info,
            Err(_) => self.get(id),
        }
    }

    /// Stops task `id` (its run is cancelled) and waits for it to end; its row then. `None`
    /// for an unknown id.
    pub async fn stop(&self, id: RunId) -> Option<TaskInfo> {
        let cancel = self.lock().entry(id).map(|entry| entry.cancel.clone())?;
        cancel.cancel();
        self.wait(id, Duration::MAX).await
    }

    /// Cancels every running task.
    pub fn cancel_all(&self) {
        for entry in &self.lock().tasks {
            entry.cancel.cancel();
        }
    }

    /// Cancels every running task and waits until each has ended and written its outcome (a
    /// command is stopped within its grace period, then killed), so that whoever takes the
    /// run's outcome and exits finds every output file complete.
    pub async fn stop_all(&self) {
        self.cancel_all();
        let running: Vec<RunId> = self
            .list()
            .into_iter()
            .filter(|task| task.state.is_running())
            .map(|task| task.id)
            .collect();
        for id in running {
            self.wait(id, Duration::MAX).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn statuses_map_from_stop_reasons() {
        assert_eq!(
            [
                StopReason::Completed,
                StopReason::Cancelled,
                StopReason::Failed,
                StopReason::MaxTurns
            ]
            .map(TaskStatus::of),
            [
                TaskStatus::Completed,
                TaskStatus::Killed,
                TaskStatus::Failed,
                TaskStatus::Failed
            ]
        );
    }
}
