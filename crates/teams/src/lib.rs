//! `subagent-teams`: Claude Code's agent teams over our seam, so a team can mix providers.
//!
//! Owns:
//! - the team as data ([`model`]) and on disk ([`store`]): members, a mailbox per member and a
//!   shared task list under the project's state directory, every change made under the team's
//!   file lock, so concurrent writers (the leader's run, its teammates, a second process) never
//!   lose one another's changes and a restarted run finds the team again;
//! - the task list's rules ([`tasks`]): one owner at a time, `blockedBy` honoured;
//! - [`Teams`]: the leader's side at run time: starting teammates through the delegation tool
//!   (so the registry's gates and the leader's permission ceiling apply; teammates run in the
//!   background, where nothing asks), delivering their messages (an in-process teammate takes
//!   its mailbox at the start of each turn through the runtime's `TurnInput` hook; an idle
//!   teammate of any provider is woken by resuming its session with its messages as the next
//!   prompt), shutdown (asked by the leader, answered by each teammate), plan approval (a
//!   teammate started in plan mode is held read-only by its permission ceiling until the leader
//!   approves its plan), and stopping the whole team when the leader's run ends or is cancelled;
//! - the tools the models call ([`tools`]), in Claude Code's vocabulary: `TeamCreate`,
//!   `TeamDelete`, `SendMessage`, `TaskCreate`, `TaskList`, `TaskGet`, `TaskUpdate`,
//!   `ExitPlanMode`, and the delegation tool's arguments plus `name`, `team_name`, `mode` and
//!   `plan_mode_required` to start a teammate.
//!
//! Deliberately not here: running agents (the providers, through `subagent-core`'s
//! `Registry`), the delegation rules (the runtime's delegation tool starts every teammate), and
//! the CLI's state directory (the caller hands a [`TeamStore`]).

mod delivery;
mod live;
pub mod model;
pub mod store;
pub mod tasks;
pub mod tools;

pub use live::Teams;
pub use tools::{TeamAgentTool, leader_tools, member_tools};

pub use model::{
    EVERYONE, LEADER, Member, MemberStatus, Message, Task, TaskList, TaskStatus, TeamConfig,
};
pub use store::{TeamDir, TeamStore};
pub use tasks::TaskChanges;

use std::path::Path;

/// Errors of this crate. Each carries a stable code ([`Error::code`], an [`ErrorCode`]) that the
/// tools put in front of their error results.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tool's arguments are missing, malformed or contradictory (a bad name, a cycle of
    /// blockers). Returned by the tools and the store; retrying with corrected arguments helps.
    #[error("{0}")]
    InvalidArguments(String),
    /// No team of that name on disk. Returned by every operation on a team; `TeamCreate`
    /// helps.
    #[error("no team named {0:?} (TeamCreate makes one)")]
    TeamNotFound(String),
    /// `TeamCreate` of a name already on disk when not reopening it. Retrying with another name
    /// helps.
    #[error("a team named {0:?} already exists")]
    TeamExists(String),
    /// `TeamDelete` while members still run or wait. Shutting them down first helps.
    #[error("team {team:?} still has active members ({}); shut them down first", .active.join(", "))]
    TeamActive {
        /// The team.
        team: String,
        /// Its members still running or idle.
        active: Vec<String>,
    },
    /// The caller is not in a team (no `TeamCreate` yet). Creating one helps.
    #[error("you are not in a team: call TeamCreate first")]
    NoTeam,
    /// A message or an operation names a member the team does not have. Returned by
    /// `SendMessage` and the store; retrying with a listed name helps.
    #[error("team {team:?} has no member named {name:?} (members: {})", .known.join(", "))]
    UnknownTeammate {
        /// The name asked for.
        name: String,
        /// The team.
        team: String,
        /// Its members.
        known: Vec<String>,
    },
    /// Starting a teammate under a name an active member has. Another name helps.
    #[error("the team already has an active member named {0:?}")]
    TeammateExists(String),
    /// A message to a member that approved its shutdown. Retrying does not help.
    #[error("{0} has stopped and takes no more messages")]
    TeammateStopped(String),
    /// Only the leader may do this (start teammates, ask for shutdown, delete the team).
    #[error("only the team lead may {0}")]
    NotLeader(String),
    /// A `plan_approval_response` whose `request_id` names no plan awaiting approval (answered
    /// already, or never sent). Returned by `SendMessage`; retrying with the id of the
    /// `plan_approval_request` helps.
    #[error("no plan awaits approval under request_id {0:?} (answered already, or never sent)")]
    UnknownPlanRequest(String),
    /// No task with that id. Returned by the task tools; `TaskList` shows the ids.
    #[error("no task with id {0:?}")]
    TaskNotFound(String),
    /// Claiming (or reassigning) a task another member owns. Another task helps.
    #[error("task {id} is already claimed by {owner}; pick another task")]
    TaskAlreadyClaimed {
        /// The task.
        id: String,
        /// Its owner.
        owner: String,
    },
    /// Claiming a task whose blockers are not all completed. Retrying once they are helps.
    #[error("task {id} is blocked by task(s) {} that are not completed yet", .blockers.join(", "))]
    TaskBlocked {
        /// The task.
        id: String,
        /// Its open blockers.
        blockers: Vec<String>,
    },
    /// A team file does not parse (edited by hand, or another version wrote it). Retrying does
    /// not help; the path says which file.
    #[error("{path}: {message}")]
    Corrupt {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Reading or writing a team file failed. Whether retrying helps depends on the cause.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The seam refused to start a teammate (its stable code is kept).
    #[error("{0}")]
    Core(#[from] subagent_core::Error),
}

/// The stable code of an [`Error`], as the tools put it in front of their error results
/// ([`Error::to_tool_text`]) and as [`ErrorCode::as_str`] spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// `TEAM_NOT_FOUND`: [`Error::TeamNotFound`].
    TeamNotFound,
    /// `TEAM_EXISTS`: [`Error::TeamExists`].
    TeamExists,
    /// `TEAM_ACTIVE`: [`Error::TeamActive`].
    TeamActive,
    /// `NO_TEAM`: [`Error::NoTeam`].
    NoTeam,
    /// `UNKNOWN_TEAMMATE`: [`Error::UnknownTeammate`].
    UnknownTeammate,
    /// `TEAMMATE_EXISTS`: [`Error::TeammateExists`].
    TeammateExists,
    /// `TEAMMATE_STOPPED`: [`Error::TeammateStopped`].
    TeammateStopped,
    /// `NOT_LEADER`: [`Error::NotLeader`].
    NotLeader,
    /// `UNKNOWN_PLAN_REQUEST`: [`Error::UnknownPlanRequest`].
    UnknownPlanRequest,
    /// `TASK_NOT_FOUND`: [`Error::TaskNotFound`].
    TaskNotFound,
    /// `TASK_ALREADY_CLAIMED`: [`Error::TaskAlreadyClaimed`].
    TaskAlreadyClaimed,
    /// `TASK_BLOCKED`: [`Error::TaskBlocked`].
    TaskBlocked,
    /// `TEAM_STATE_CORRUPT`: [`Error::Corrupt`].
    TeamStateCorrupt,
    /// `TEAM_IO`: [`Error::Io`].
    TeamIo,
    /// The seam's code: `INVALID_ARGUMENTS` ([`Error::InvalidArguments`]), or a refused start's
    /// ([`Error::Core`]).
    Core(subagent_core::ErrorCode),
}

impl ErrorCode {
    /// This crate's own codes, in declaration order (the seam's are
    /// [`subagent_core::ErrorCode::ALL`]).
    pub const OWN: [ErrorCode; 14] = [
        Self::TeamNotFound,
        Self::TeamExists,
        Self::TeamActive,
        Self::NoTeam,
        Self::UnknownTeammate,
        Self::TeammateExists,
        Self::TeammateStopped,
        Self::NotLeader,
        Self::UnknownPlanRequest,
        Self::TaskNotFound,
        Self::TaskAlreadyClaimed,
        Self::TaskBlocked,
        Self::TeamStateCorrupt,
        Self::TeamIo,
    ];

    /// The code as text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TeamNotFound => "TEAM_NOT_FOUND",
            Self::TeamExists => "TEAM_EXISTS",
            Self::TeamActive => "TEAM_ACTIVE",
            Self::NoTeam => "NO_TEAM",
            Self::UnknownTeammate => "UNKNOWN_TEAMMATE",
            Self::TeammateExists => "TEAMMATE_EXISTS",
            Self::TeammateStopped => "TEAMMATE_STOPPED",
            Self::NotLeader => "NOT_LEADER",
            Self::UnknownPlanRequest => "UNKNOWN_PLAN_REQUEST",
            Self::TaskNotFound => "TASK_NOT_FOUND",
            Self::TaskAlreadyClaimed => "TASK_ALREADY_CLAIMED",
            Self::TaskBlocked => "TASK_BLOCKED",
            Self::TeamStateCorrupt => "TEAM_STATE_CORRUPT",
            Self::TeamIo => "TEAM_IO",
            Self::Core(code) => code.as_str(),
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Error {
    /// The stable code ([`ErrorCode`]): this crate's own, or the seam's for invalid arguments
    /// and a refused start.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::InvalidArguments(_) => {
                ErrorCode::Core(subagent_core::ErrorCode::InvalidArguments)
            }
            Self::TeamNotFound(_) => ErrorCode::TeamNotFound,
            Self::TeamExists(_) => ErrorCode::TeamExists,
            Self::TeamActive { .. } => ErrorCode::TeamActive,
            Self::NoTeam => ErrorCode::NoTeam,
            Self::UnknownTeammate { .. } => ErrorCode::UnknownTeammate,
            Self::TeammateExists(_) => ErrorCode::TeammateExists,
            Self::TeammateStopped(_) => ErrorCode::TeammateStopped,
            Self::NotLeader(_) => ErrorCode::NotLeader,
            Self::UnknownPlanRequest(_) => ErrorCode::UnknownPlanRequest,
            Self::TaskNotFound(_) => ErrorCode::TaskNotFound,
            Self::TaskAlreadyClaimed { .. } => ErrorCode::TaskAlreadyClaimed,
            Self::TaskBlocked { .. } => ErrorCode::TaskBlocked,
            Self::Corrupt { .. } => ErrorCode::TeamStateCorrupt,
            Self::Io { .. } => ErrorCode::TeamIo,
            Self::Core(error) => ErrorCode::Core(error.code()),
        }
    }

    /// The error as a tool result's text: `CODE: message`.
    pub fn to_tool_text(&self) -> String {
        format!("{}: {self}", self.code())
    }

    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.display().to_string(),
            source,
        }
    }

    pub(crate) fn unknown_teammate(name: &str, team: &str, known: Vec<String>) -> Self {
        Self::UnknownTeammate {
            name: name.to_owned(),
            team: team.to_owned(),
            known,
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_codes_render_as_the_tools_have_always_written_them() {
        assert_eq!(
            ErrorCode::OWN.map(ErrorCode::as_str),
            [
                "TEAM_NOT_FOUND",
                "TEAM_EXISTS",
                "TEAM_ACTIVE",
                "NO_TEAM",
                "UNKNOWN_TEAMMATE",
                "TEAMMATE_EXISTS",
                "TEAMMATE_STOPPED",
                "NOT_LEADER",
                "UNKNOWN_PLAN_REQUEST",
                "TASK_NOT_FOUND",
                "TASK_ALREADY_CLAIMED",
                "TASK_BLOCKED",
                "TEAM_STATE_CORRUPT",
                "TEAM_IO",
            ]
        );
        let invalid = Error::InvalidArguments("no name".to_owned());
        assert_eq!(invalid.code().to_string(), "INVALID_ARGUMENTS");
        assert_eq!(invalid.to_tool_text(), "INVALID_ARGUMENTS: no name");
        let refused = Error::Core(subagent_core::Error::UnknownProvider {
            name: "x".to_owned(),
            known: Vec::new(),
        });
        assert_eq!(refused.code().as_str(), "UNKNOWN_PROVIDER");
        assert_eq!(
            Error::TaskNotFound("9".to_owned()).to_tool_text(),
            "TASK_NOT_FOUND: no task with id \"9\""
        );
    }
}
