//! `subagent-runtime`: the in-process agent loop and everything it runs.
//!
//! Owns:
//! - the agent loop ([`Agent`], [`AgentConfig`]): turns until the model stops or the turn limit
//!   (`max_turns` → `StopReason::MaxTurns`); of the tool calls of one assistant message, those
//!   that change things (edits, commands) run one at a time in call order, the others between
//!   them concurrently (I/O tools bounded, default 10; delegation calls all at once), and their
//!   results return in call order; text, tool
//!   calls, tool results and usage are reported as `RunEvent`s; cancellation works mid-stream
//!   and mid-tool. Every run records its conversation in a session [`EventLog`]
//!   (`turn_start` / `message` / `turn_end`), which is what a fork seeds from;
//! - transcripts and resume ([`sessions`]): a run given a [`SessionStore`] writes its log to
//!   `<dir>/<session id>.jsonl` off the loop (flushed at each turn end and at the end) and its
//!   outcome names the session; [`SessionStore::resume`] and [`Agent::resuming`] continue one;
//! - input from outside a run between its turns ([`TurnInput`], given to a child with extra
//!   tools as [`ChildExtras`]): a team's mailbox, taken at the start of each turn;
//! - the tool registry ([`ToolSet`]: stable order, specs computed once so descriptions are
//!   byte-identical across runs and forks) and the built-in tools ([`tools`]): `ls`,
//!   `read_file`, `write_file`, `edit_file`, `delete`, `glob`, `grep`, `bash`. File tools are
//!   confined to the run's [`Roots`];
//! - the cap on a tool result ([`AgentConfig::max_tool_result_bytes`], default
//!   [`DEFAULT_MAX_TOOL_RESULT_BYTES`]; children inherit it as a [`ToolResultCap`]): a longer
//!   result, or `<task-notification>`, reaches the model cut ([`cut_result`]) with a marker that
//!   says how much was left out and how to see the rest (each tool's [`Tool::cut_hint`]);
//! - permissions ([`PermissionPolicy`]: allow / deny / ask rules with patterns, the modes of
//!   `subagent_core::PermissionMode`, a [`PermissionBroker`] for `ask`; background runs never
//!   ask);
//! - a product child's permission questions ([`PolicyAsker`], the `subagent_core::ParentAsker`
//!   the delegation tool gives every child): answered by the parent's rules, mode,
//!   `PermissionRequest` hooks and broker, as its own calls are;
//! - the hook runner ([`HookRunner`]): Claude Code's command hooks for one event, run through
//!   the process owner and folded into a [`HookVerdict`] (docs/hooks.md); what a verdict does
//!   to the run is the tool loop's;
//! - tool filters (`subagent_core::ToolFilter`, applied when the tool list is built:
//!   [`ToolSet::filtered`]);
//! - skills ([`skills`]): the `Skill` tool ([`tools::SkillTool`]) that loads a skill's body
//!   into the conversation, the listing and an agent type's preloaded skills in a fresh run's
//!   first message ([`RunSkills`]), in the shape Claude Code gives them (docs/skills.md); the
//!   skills themselves come from a `subagent_core::skills::SkillDirectory` (the catalog's);
//! - agent memory ([`memory`]): an agent type's memory directory made private and ready, its
//!   instructions and `MEMORY.md` index (bounded as Claude Code bounds it) at the end of the
//!   run's system prompt ([`RunMemory`]), the directory a root of the run's file tools;
//! - structured output ([`structured`]): a `structured_output` capture tool validated with
//!   JSON Schema, or validation of the final answer (for forks, whose tool list must not change);
//! - periodic progress summaries ([`summary`]): a tool-less fork of a long run's conversation,
//!   sharing its cached prefix, reported as `RunEvent::Summary`;
//! - the delegation tool ([`DelegationTool`], [`DelegationToolConfig`]): routing (depth cap →
//!   fork → agent definition), starting children through the gating `Registry`, turning their
//!   outcome into a tool result, forwarding a foreground child's text, tool calls and tool
//!   results into the parent's event stream (tagged with `parent_tool_use_id` = the delegation
//!   call's id, so a CLI shows what the subagent does), background runs with `<task-notification>` delivery
//!   ([`TaskTable`]), and the [`ParentSnapshot`] it hands to the fork provider.
//!
//! Deliberately not here: model clients (`subagent-model`), agent definition files
//! (`subagent-catalog`; the delegation tool reads `subagent_core::agents::AgentDirectory`), and the
//! providers themselves (`subagent-spawn`, `subagent-fork` build on this crate).

mod agent;
pub mod agent_parts;
pub mod asking;
pub mod budget;
mod child_record;
mod child_rules;
pub mod delegation;
mod env;
pub mod hooks;
mod input;
pub mod memory;
mod paths;
mod permissions;
mod report;
mod result_cap;
mod seed;
mod session_info;
pub mod sessions;
pub mod skills;
pub mod structured;
pub mod summary;
mod tasks;
pub mod tools;

pub use agent::{Agent, AgentConfig, DefaultModel};
pub use asking::PolicyAsker;
pub use child_record::ChildRecord;
pub use delegation::{
    BackgroundMode, DelegationTool, DelegationToolConfig, FORK_PREAMBLE, NESTED_REFUSAL,
    ParentSnapshot, nesting_refusal,
};
pub use env::RunEnv;
pub use hooks::{HookBase, HookDecision, HookRunner, HookVerdict};
pub use input::{ChildExtras, TurnInput};
pub use memory::RunMemory;
pub use permissions::{
    AgentHooks, Decision, PermissionBroker, PermissionPolicy, PermissionRequest, PermissionRule,
    SettingsRules,
};
pub use result_cap::{DEFAULT_MAX_TOOL_RESULT_BYTES, ToolResultCap, cut_result};
pub use seed::{Seed, UNANSWERED_TOOL_RESULT};
pub use session_info::SessionInfo;
pub use sessions::{OpenSession, Resumed, SessionEntry, SessionState, SessionStore};
pub use skills::{PreloadSkills, RunSkills, SKILL_TOOL, Skills};
pub use structured::OutputMode;
pub use summary::{SummaryConfig, SummaryStats, SummaryTicks};
pub use tasks::{
    RECENT_ACTIVITIES, TASK_RETENTION, TaskDir, TaskInfo, TaskKind, TaskNotification, TaskProgress,
    TaskState, TaskStatus, TaskTable,
};
pub use tools::{EventSink, HostTools, Roots, Tool, ToolContext, ToolKind, ToolOutput, ToolSet};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A configuration value is unusable (an empty root list, a bad permission rule, an output
    /// schema that does not compile). Returned by constructors; retrying does not help.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A path names something outside the run's roots (`..`, an absolute path elsewhere, a
    /// symlink pointing out). Returned by file tools as an error result; retrying with a path
    /// inside the roots helps.
    #[error("path {path} is outside the allowed roots ({roots}): {reason}")]
    PathEscape {
        /// The path as given.
        path: String,
        /// The roots, comma-separated.
        roots: String,
        /// Why it is outside.
        reason: String,
    },
    /// A tool's arguments are missing or of the wrong type. Returned by tools as an error
    /// result; retrying with correct arguments helps.
    #[error("invalid arguments: {0}")]
    Arguments(String),
    /// A tool failed while doing its work (file not found, no unique match, command failed to
    /// start). Returned by tools as an error result; whether retrying helps depends on the cause.
    #[error("{0}")]
    Tool(String),
    /// An I/O error on a path. Returned by file tools as an error result.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// An error of the seam (a refused start). Returned by the delegation tool as an error
    /// result carrying the stable code.
    #[error("{code}: {0}", code = .0.code())]
    Core(#[from] subagent_core::Error),
}

impl Error {
    pub(crate) fn io(path: impl std::fmt::Display, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_string(),
            source,
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub use subagent_session::EventLog;

/// The configured secrets a run keeps in ([`AgentConfig::secrets`]); providers find them in
/// `BuildContext::extensions`.
pub use subagent_process::Secrets;
