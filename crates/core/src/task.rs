//! What a run's background tasks are, as its event stream tells them ([`crate::RunEvent::TaskStarted`],
//! [`crate::RunEvent::TaskEnded`]): typed, so that whoever shows them (a live view, `--json`, a
//! served stream) never reads the sentences the runtime writes for the model.

use serde::{Deserialize, Serialize};

use crate::StopReason;

/// What a task runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    /// A subagent started by a delegation tool.
    Agent,
    /// A shell command started by the bash tool.
    Bash,
}

/// Where a task is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Still going.
    Running,
    /// Ended with a result.
    Completed,
    /// Ended without one (an error, a turn or token limit, a refusal).
    Failed,
    /// Stopped: by the task tools, or cancelled with its parent.
    Killed,
}

impl TaskStatus {
    /// The status of a run that ended this way.
    pub fn of(status: StopReason) -> Self {
        match status {
            StopReason::Completed => Self::Completed,
            StopReason::Cancelled => Self::Killed,
            _ => Self::Failed,
        }
    }

    /// The spelling people and models read.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Killed => "killed",
        }
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
