//! One run's record: what `ps` shows of it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use subagent_core::{RunId, SessionRef, StopReason, Usage};

/// Where a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It waits for room to start: its provider bounds how many of its children are starting
    /// at once.
    Queued,
    /// It runs.
    Running,
    /// It ended, as its outcome says.
    Completed,
    /// It failed.
    Failed,
    /// It was cancelled (`subagent stop`, Ctrl-C, its parent).
    Cancelled,
    /// It reached its turn limit.
    MaxTurns,
    /// It reached its model's output limit.
    MaxTokens,
    /// Its model refused.
    Refused,
    /// It spent its budget.
    BudgetExceeded,
    /// Its record says it runs, but the process that owned it is gone (killed, crashed).
    Lost,
}

impl Status {
    /// The status of a run that ended with `reason`.
    pub fn ended(reason: StopReason) -> Self {
        match reason {
            StopReason::Completed => Self::Completed,
            StopReason::Cancelled => Self::Cancelled,
            StopReason::Failed => Self::Failed,
            StopReason::MaxTurns => Self::MaxTurns,
            StopReason::MaxTokens => Self::MaxTokens,
            StopReason::Refused => Self::Refused,
            StopReason::BudgetExceeded => Self::BudgetExceeded,
            _ => Self::Failed,
        }
    }

    /// Whether the run has not ended (queued or running).
    pub fn live(self) -> bool {
        matches!(self, Self::Queued | Self::Running)
    }

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::MaxTurns => "max_turns",
            Self::MaxTokens => "max_tokens",
            Self::Refused => "refused",
            Self::BudgetExceeded => "budget_exceeded",
            Self::Lost => "lost",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The process that owns a run (its record's only writer, and who stops it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// Its process id.
    pub pid: u32,
    /// When it started, in clock ticks after boot (`/proc/<pid>/stat`'s 22nd field): a pid the
    /// system reused for another process does not pass for the owner.
    pub start_ticks: u64,
}

impl Owner {
    /// This process.
    pub fn this() -> Self {
        let pid = std::process::id();
        Self {
            pid,
            start_ticks: start_ticks(pid).unwrap_or(0),
        }
    }

    /// Its name in file names: `<pid>-<start ticks>`.
    pub fn key(&self) -> String {
        format!("{}-{}", self.pid, self.start_ticks)
    }

    /// Whether the owner still runs (the same process, not a zombie).
    pub fn alive(&self) -> bool {
        let Some(stat) = stat(self.pid) else {
            return false;
        };
        let Some((_, rest)) = stat.rsplit_once(") ") else {
            return false;
        };
        !rest.starts_with('Z') && ticks_of(rest).is_some_and(|ticks| ticks == self.start_ticks)
    }
}

/// The start time of `pid` in clock ticks after boot.
fn start_ticks(pid: u32) -> Option<u64> {
    ticks_of(stat(pid)?.rsplit_once(") ")?.1)
}

/// `/proc/<pid>/stat`, when the process is listed.
fn stat(pid: u32) -> Option<String> {
    subagent_session::read_user_text(std::path::Path::new(&format!("/proc/{pid}/stat")), 4096).ok()
}

/// Field 22 of a `stat` line, given the fields after `(comm) ` (field 3 on).
fn ticks_of(rest: &str) -> Option<u64> {
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// What is known of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Its id.
    pub id: RunId,
    /// The run that started it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<RunId>,
    /// The top-level run of its tree (itself for a top-level run).
    pub root: RunId,
    /// What started it: `run`, `delegate`, `serve`, `mcp`, `acp`, `worker`, or `child` for a
    /// run another run started.
    pub kind: String,
    /// The provider running it.
    pub provider: String,
    /// Its description.
    pub description: String,
    /// Its agent type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// Its name in a team.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teammate: Option<String>,
    /// Whether it runs in the background.
    #[serde(default)]
    pub background: bool,
    /// Where it works.
    pub cwd: PathBuf,
    /// Where it is.
    pub status: Status,
    /// When it started, in milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_ms: Option<u64>,
    /// Its counts so far.
    #[serde(default)]
    pub usage: Usage,
    /// The process that owns it.
    pub owner: Owner,
    /// The file its output goes to, where there is one (a `--bg` run's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<PathBuf>,
    /// How to resume it, once it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionRef>,
    /// What went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostic: Option<String>,
    /// The journal its events and its end are written in (`<owner key>-<n>`: its owner's
    /// `events/<journal>.jsonl` and `done/<journal>.jsonl`), set by the writer; `None`: the
    /// owner's first (`<owner key>-0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<String>,
}

impl Record {
    /// Whether it still runs (a live record whose owner is gone does not).
    pub fn running(&self) -> bool {
        self.status.live()
    }

    /// The name of the journal its events and end are in.
    pub fn journal(&self) -> String {
        self.journal
            .clone()
            .unwrap_or_else(|| format!("{}-0", self.owner.key()))
    }
}

/// Now, in milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
