//! `subagent-acp-agent`: our parent agent served as an Agent Client Protocol (ACP) agent, so
//! that an ACP client (an editor such as Zed) drives the same parent `subagent run` runs.
//!
//! Owns the agent side of ACP protocol version 1 over any byte pipe ([`serve`]): `initialize`
//! (honest capabilities: text and resource-link prompts, no `loadSession`, MCP servers over stdio
//! and HTTP),
//! `session/new` (a parent for the session's `cwd`, built by the caller's [`ParentFactory`], with
//! the tools of the MCP servers the client names, started for the session),
//! `session/prompt` (the parent's run streamed back as `session/update`s: message and thought
//! chunks, one tool call per parent tool call, a delegation's child progress in its call's
//! updates; the stop reason at the end; the next prompt continues the conversation),
//! `session/request_permission` (every question the parent's permission policy would ask goes
//! to the client; its answer is obeyed) and `session/cancel` (cancels the run and its children;
//! the prompt answers `cancelled`). A session's background tasks outlive the prompt that started
//! them: the turn ends while they run, each one's end is sent as a `session/update` outside any
//! turn while no prompt runs and told to the model at the next prompt, and they are stopped when
//! the client goes away. A line of input that is not UTF-8 or is over [`MAX_FRAME`]
//! bytes is answered with a JSON-RPC error (`id: null`) and skipped; the connection goes on.
//!
//! Deliberately not here: which model, tools, delegation rows and preset the parent has (the
//! CLI builds it, through [`ParentFactory`]), any provider (this crate depends on `core` and
//! `runtime` only), the client direction (an ACP agent as a child: `crates/acp`), and stdio
//! itself (the CLI hands its stdin and stdout to [`serve`]).

mod broker;
#[doc(hidden)]
pub mod frames;
mod server;
mod servers;
mod updates;

use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;
use subagent_core::mcp::McpServerSpec;
use subagent_runtime::{Agent, PermissionBroker, Tool};

pub use frames::MAX_FRAME;
pub use server::serve;

/// The protocol version this agent speaks (the stable one).
pub const PROTOCOL_VERSION: u16 = 1;

/// Builds the parent agent of a session's prompts. The CLI implements it from the preset (the
/// same parent `subagent run` runs); tests build one over a fake model server.
pub trait ParentFactory: Send + Sync {
    /// A parent ready to run one prompt in `cwd` (absolute, from `session/new`), whose
    /// permission policy asks `broker` what no rule decides, with the session's own tools
    /// ([`ParentFactory::session_tools`]) after its others. Called at `session/new` (an error
    /// refuses the session with its text) and for each later prompt (an agent runs once; the
    /// conversation is carried over by the server).
    fn build(
        &self,
        cwd: &Path,
        broker: Arc<dyn PermissionBroker>,
        session: &SessionTools,
    ) -> std::result::Result<Agent, String>;

    /// Whether [`ParentFactory::session_tools`] starts the MCP servers a client names
    /// (`initialize` then offers HTTP servers too). The default does not.
    fn takes_mcp_servers(&self) -> bool {
        false
    }

    /// Starts what a session in `cwd` needs before its first parent is built: the MCP servers
    /// the client names in `session/new` (`servers`), and whatever the factory starts once per
    /// project. Their tools go to every parent of the session; they stop when the session's
    /// [`SessionTools`] is dropped (with the connection). The default takes no server: a
    /// session naming one is refused with the text.
    fn session_tools<'a>(
        &'a self,
        cwd: &'a Path,
        servers: Vec<McpServerSpec>,
    ) -> BoxFuture<'a, std::result::Result<SessionTools, String>> {
        let _ = cwd;
        Box::pin(async move {
            if servers.is_empty() {
                Ok(SessionTools::default())
            } else {
                Err("this agent does not connect to MCP servers: start the session with mcpServers: []".to_owned())
            }
        })
    }
}

/// The tools a session's parents get beyond the factory's own (its MCP servers'), and what keeps
/// them running.
#[derive(Clone, Default)]
pub struct SessionTools {
    /// Offered after the parent's other tools, in this order.
    pub tools: Vec<Arc<dyn Tool>>,
    /// Dropped with the session: stops what was started for it.
    pub keep: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

impl std::fmt::Debug for SessionTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionTools")
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The connection to the client failed (a write to a closed pipe, a transport error).
    /// Returned by [`serve`]; retrying does not help, the client is gone.
    #[error("the ACP connection failed: {0}")]
    Connection(String),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
