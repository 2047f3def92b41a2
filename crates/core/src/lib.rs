//! `subagent-core`: the seam every provider plugs into.
//!
//! The crate root is the provider contract: the provider trait ([`SubagentProvider`]) and its
//! factory ([`ProviderFactory`], [`BuildContext`], with what a host asks of a kind before building
//! it: [`Placement`], [`ChildTools`], [`Requirements`], and the configured [`Secrets`] it hands over), the static capability table
//! ([`Capabilities`]), the start request ([`StartRequest`], [`ParentContext`], and the types of
//! its fields), the run handle ([`Run`], [`RunEvent`], [`Outcome`]) with the helper providers
//! build it from ([`Run::channel`], [`RunSender`]), and the one error type with stable codes
//! ([`Error`]).
//!
//! Around it, in modules: [`registry`], the gate every start passes (provider lookup →
//! capabilities → depth → schema → isolation) before a provider sees it; [`isolation`], the
//! contract of the isolator that moves a child into a place of its own (a git worktree) and
//! cleans up after it; [`skills`], what the catalog's `SKILL.md` folders and the runtime's
//! `Skill` tool share; [`memory`], an agent type's memory directory (`memory:`) as both see it; [`agents`], the delegation
//! vocabulary the catalog and the runtime share (agent profiles, the directory listing them,
//! permission modes, tool filters); [`lenient`], the serde helpers that let a provider's typed
//! wire events tolerate what a CLI adds or changes; [`text`] and [`time`], the small utilities
//! every crate shares (cutting a text to a bound, the wall clock in milliseconds).
//!
//! Deliberately not here: no model client, no process, no socket, no async runtime. Core spawns
//! nothing; providers do their work on their own tasks and report through the [`RunSender`].

#![deny(missing_docs)]

pub mod agents;
mod apart;
mod asking;
mod capabilities;
mod error;
mod extensions;
mod factory;
mod filter;
pub mod isolation;
pub mod lenient;
pub mod mcp;
pub mod memory;
mod provider;
pub mod registry;
mod request;
mod run;
pub mod skills;
mod task;
pub mod text;
pub mod time;

pub use agents::INHERIT_MODEL;
pub use apart::{Isolation, WorktreeReport};
pub use asking::{Asker, ParentAsker, PermissionRules, ToolAnswer, ToolQuestion};
pub use capabilities::{Capabilities, Capability};
pub use error::{Error, ErrorCode, Result};
pub use extensions::Extensions;
pub use factory::{
    BuildContext, ChildTools, Endpoint, Placement, Program, ProviderFactory, Requirements,
    TestedVersion,
};
pub use provider::SubagentProvider;
pub use request::{ParentContext, StartRequest, StartRequestBuilder};
pub use run::{
    DIAGNOSTIC_LIMIT, Outcome, Run, RunEmitter, RunEvent, RunEvents, RunId, RunObserver, RunSender,
    SessionRef, Usage,
};
pub use subagent_session::{Effort, Secrets, StopReason};
pub use task::{TaskKind, TaskStatus};
pub use text::{DESCRIPTION_CHARS, default_description};

/// The types of [`StartRequest::permission_ceiling`] and [`StartRequest::tool_filter`], which
/// every provider reads; they belong to the delegation vocabulary of [`agents`].
pub use agents::{PermissionMode, ToolFilter};

/// Re-exported so providers and callers name one cancellation type.
pub use tokio_util::sync::CancellationToken;
