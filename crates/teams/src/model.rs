//! The team as plain data: what `config.json`, `inboxes/<name>.json` and `tasks.json` hold.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{Error, Result};

/// The name a team's leader has in it (what a teammate sends to, as in Claude Code).
pub const LEADER: &str = "team-lead";

/// The recipient that means every member but the sender.
pub const EVERYONE: &str = "*";

/// The longest team, member or task name.
pub const MAX_NAME: usize = 64;

/// Checks a team or member name: 1 to [`MAX_NAME`] ASCII letters, digits, `-` and `_` (it
/// becomes a file name).
pub fn check_name(what: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArguments(format!(
            "{what} {name:?} must be 1 to {MAX_NAME} ASCII letters, digits, '-' or '_'"
        )))
    }
}

/// A team's members and who leads it (`config.json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TeamConfig {
    /// The team's name (its folder).
    pub name: String,
    /// What the team is for.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The leader's member name ([`LEADER`]).
    pub lead: String,
    /// Milliseconds since the epoch when the team was created.
    pub created_at: u64,
    /// The members, the leader first, in the order they joined.
    pub members: Vec<Member>,
}

impl TeamConfig {
    /// The member named `name`.
    pub fn member(&self, name: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.name == name)
    }

    /// The member named `name`, to change.
    pub fn member_mut(&mut self, name: &str) -> Option<&mut Member> {
        self.members.iter_mut().find(|m| m.name == name)
    }

    /// The members' names, the leader first.
    pub fn names(&self) -> Vec<String> {
        self.members.iter().map(|m| m.name.clone()).collect()
    }
}

/// One member of a team.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    /// Its name in the team (what messages are sent to).
    pub name: String,
    /// Its agent type (`general-purpose`, a catalog definition), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// The provider that runs it (`spawn`, `claude-code`, …); empty for the leader.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub provider: String,
    /// Where it is.
    pub status: MemberStatus,
    /// Its session at its provider, once a turn ended with one: what it is resumed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The working directory its session belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Held in plan mode (read-only) until the leader approves its plan (Claude Code's
    /// `planModeRequired`); cleared by the approval.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plan_mode_required: bool,
    /// The id of its plan awaiting the leader's answer (`plan_approval_request`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_request: Option<String>,
}

/// Where a member is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum MemberStatus {
    /// The leader (its run is the one holding the team).
    Lead,
    /// Working on a turn.
    Running,
    /// Between turns, waiting for a message.
    Idle,
    /// Approved a shutdown (or was stopped); it takes no more messages.
    Stopped,
    /// Its last turn failed; a message starts it again.
    Failed,
}

impl MemberStatus {
    /// Whether the member still takes messages and may wake.
    pub fn is_active(self) -> bool {
        matches!(self, Self::Running | Self::Idle | Self::Failed)
    }

    /// The status as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lead => "lead",
            Self::Running => "running",
            Self::Idle => "idle",
            Self::Stopped => "stopped",
            Self::Failed => "failed",
        }
    }
}

/// One message in a member's inbox (`inboxes/<name>.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Its id in this inbox (1, 2, …).
    pub id: u64,
    /// The sender's member name.
    pub from: String,
    /// A plain text message, or a control message's JSON text.
    pub text: String,
    /// A short preview.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// A structured control message (`shutdown_request`, `shutdown_response`,
    /// `plan_approval_request`, `plan_approval_response`), when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<Value>,
    /// Milliseconds since the epoch when it was sent.
    pub timestamp: u64,
    /// Whether it was handed to one of the recipient's turns.
    pub read: bool,
}

impl Message {
    /// The message as a recipient's turn sees it (Claude Code's tag).
    pub fn to_prompt(&self) -> String {
        let summary = self
            .summary
            .as_deref()
            .map(|s| format!(" summary=\"{}\"", s.replace('"', "'")))
            .unwrap_or_default();
        format!(
            "<teammate-message teammate_id=\"{}\"{summary}>\n{}\n</teammate-message>",
            self.from, self.text
        )
    }

    /// The control message's `type`, if it is one.
    pub fn control_type(&self) -> Option<&str> {
        self.control.as_ref()?.get("type")?.as_str()
    }
}

/// A member's inbox.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Inbox {
    /// The id the next message gets.
    pub next_id: u64,
    /// Messages, oldest first.
    pub messages: Vec<Message>,
}

/// A task's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// Not started.
    Pending,
    /// Claimed and being worked on.
    InProgress,
    /// Done: tasks it blocked may be claimed.
    Completed,
}

impl TaskStatus {
    /// The status as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
        }
    }
}

/// One task of a team's list (Claude Code's fields).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Its id (1, 2, …, as text).
    pub id: String,
    /// A brief title.
    pub subject: String,
    /// What needs to be done.
    #[serde(default)]
    pub description: String,
    /// Present continuous form shown while in progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
    /// Where it is.
    pub status: TaskStatus,
    /// Who claimed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Tasks this one blocks.
    #[serde(default)]
    pub blocks: Vec<String>,
    /// Tasks that must be completed before this one may be claimed.
    #[serde(default)]
    pub blocked_by: Vec<String>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}

/// A team's task list (`tasks.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskList {
    /// The id the next task gets.
    pub next_id: u64,
    /// The tasks, in creation order (deleted ones removed).
    pub tasks: Vec<Task>,
}
