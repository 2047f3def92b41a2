//! Background runs of one agent: the task table and `<task-notification>` messages.
//!
//! A delegation started in the background returns at once with the run's id; the table awaits
//! the child's outcome on its own task. The agent loop delivers finished tasks as
//! `<task-notification>` text: appended to the next user message (after the tool results) when
//! the loop is going on anyway, or, when the model ends its answer while tasks are still
//! running, as a new user message once the next task finishes (the loop waits, cancellably).
//! A run therefore never finishes with a background child still running.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use subagent_core::{CancellationToken, Outcome, Run, RunId};

/// A finished background run, ready to be told to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskNotification {
    /// The child's run id.
    pub run_id: RunId,
    /// The delegation call that started it.
    pub tool_use_id: String,
    /// Its description.
    pub description: String,
    /// How it ended.
    pub outcome: Outcome,
}

impl TaskNotification {
    /// The `<task-notification>` text the model reads.
    pub fn to_text(&self) -> String {
        let outcome = &self.outcome;
        let result = match &outcome.structured {
            Some(value) => value.to_string(),
            None => outcome.text.clone(),
        };
        let mut text = format!(
            "<task-notification>\n<task-id>{}</task-id>\n<tool-use-id>{}</tool-use-id>\n<status>{}</status>\n<summary>{}</summary>\n<result>{result}</result>\n",
            self.run_id, self.tool_use_id, outcome.status, self.description
        );
        if let Some(diagnostic) = &outcome.diagnostic {
            text.push_str(&format!("<diagnostic>{diagnostic}</diagnostic>\n"));
        }
        text.push_str(&format!(
            "<usage>input_tokens: {}, output_tokens: {}, tool_uses: {}, duration_ms: {}</usage>\n</task-notification>",
            outcome.usage.input_tokens,
            outcome.usage.output_tokens,
            outcome.usage.tool_uses,
            outcome.usage.duration_ms
        ));
        text
    }
}

#[derive(Default)]
struct Inner {
    running: BTreeMap<RunId, CancellationToken>,
    finished: VecDeque<TaskNotification>,
}

/// The background runs of one agent run.
#[derive(Default)]
pub struct TaskTable {
    inner: Mutex<Inner>,
    changed: tokio::sync::Notify,
}

impl std::fmt::Debug for TaskTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskTable")
            .field("running", &self.running())
            .finish_non_exhaustive()
    }
}

impl TaskTable {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes over a started run: its outcome becomes a notification when it ends.
    pub fn adopt(self: &std::sync::Arc<Self>, run: Run, tool_use_id: String) -> RunId {
        let run_id = run.id();
        let description = run.description().to_owned();
        self.lock().running.insert(run_id, run.cancel_token());
        let table = std::sync::Arc::clone(self);
        tokio::spawn(async move {
            let outcome = run.outcome().await;
            {
                let mut inner = table.lock();
                inner.running.remove(&run_id);
                inner.finished.push_back(TaskNotification {
                    run_id,
                    tool_use_id,
                    description,
                    outcome,
                });
            }
            table.changed.notify_waiters();
        });
        run_id
    }

    /// How many runs are still going.
    pub fn running(&self) -> usize {
        self.lock().running.len()
    }

    /// The notifications not delivered yet, oldest first (they are removed).
    pub fn take_finished(&self) -> Vec<TaskNotification> {
        self.lock().finished.drain(..).collect()
    }

    /// Waits for the next notification; `None` when nothing is running and nothing is waiting.
    pub async fn next_finished(&self) -> Option<TaskNotification> {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut inner = self.lock();
                if let Some(notification) = inner.finished.pop_front() {
                    return Some(notification);
                }
                if inner.running.is_empty() {
                    return None;
                }
            }
            notified.await;
        }
    }

    /// Cancels every running task.
    pub fn cancel_all(&self) {
        for token in self.lock().running.values() {
            token.cancel();
        }
    }
}
