//! `subagent-core`: the seam every provider plugs into.
//!
//! Owns the provider trait ([`SubagentProvider`]), the static capability table
//! ([`Capabilities`]), the start request ([`StartRequest`], [`ParentContext`]), the run handle
//! ([`Run`], [`RunEvent`], [`Outcome`]) with the helper providers build it from
//! ([`Run::channel`], [`RunSender`]), the one error type with stable codes ([`Error`]), and the
//! [`Registry`] that gates every start (provider lookup → capabilities → depth → schema) before a
//! provider sees it. [`ProviderFactory`] lets a preset build providers by kind.
//!
//! Deliberately not here: no model client, no process, no socket, no async runtime. Core spawns
//! nothing; providers do their work on their own tasks and report through the [`RunSender`].

mod agents;
mod capabilities;
mod error;
mod extensions;
mod factory;
mod filter;
mod registry;
mod request;
mod run;
mod text;

pub use agents::{AgentDirectory, AgentProfile, BackgroundMode, PermissionMode, StaticAgents};
pub use capabilities::{Capabilities, Capability};
pub use error::{Error, ErrorCode, Result};
pub use extensions::Extensions;
pub use factory::{BuildContext, ProviderFactory};
pub use filter::{ToolFilter, wildcard_match};
pub use registry::{DEFAULT_MAX_DEPTH, Registry, RegistryObserver};
pub use request::{INHERIT_MODEL, ParentContext, RunId, StartRequest, StartRequestBuilder};
pub use run::{
    DIAGNOSTIC_LIMIT, Outcome, Run, RunEvent, RunEvents, RunSender, SessionRef, Usage,
    sanitize_diagnostic,
};
pub use subagent_session::StopReason;
pub use text::{DESCRIPTION_CHARS, default_description};

/// Re-exported so providers and callers name one cancellation type.
pub use tokio_util::sync::CancellationToken;

use async_trait::async_trait;

/// A way to run a child agent: in-process, a product's CLI, a protocol peer, a remote instance.
///
/// Implementors declare what they can honour in [`SubagentProvider::capabilities`]; the
/// [`Registry`] refuses any request that needs more before `start` is called, so `start` may
/// assume every set field of the request is one it declared.
#[async_trait]
pub trait SubagentProvider: Send + Sync {
    /// The name the provider is registered under.
    fn name(&self) -> &str;

    /// What the provider can honour. Static: the same value on every call.
    fn capabilities(&self) -> Capabilities;

    /// Starts a child. `Err` only for what went wrong before the child existed (a missing binary,
    /// a bad argument); everything after is reported through the run's [`Outcome`].
    async fn start(&self, request: StartRequest) -> Result<Run>;
}
