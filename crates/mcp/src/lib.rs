//! `subagent-mcp`: `subagent mcp`, every delegation row of a preset served as an MCP tool over
//! stdio ([`McpServer::serve`]) or MCP streamable HTTP ([`McpServer::serve_http`], `http.rs`:
//! sessions, a bearer token, DNS-rebinding checks), on the official Rust SDK (`rmcp`).
//!
//! One tool per row ([`subagent_preset::ToolRow`]): its name and description come from the row,
//! the agent types the caller may name (`subagent_type`) are listed in the description (never in
//! a schema enum), and the input schema has the delegation tool's arguments that the row's
//! provider declares (`model`, `output_schema`, `resume`, and `isolation` when the registry can
//! isolate). A call becomes a [`StartRequest`](subagent_core::StartRequest) started through the
//! [`Registry`], so every gate applies before anything runs; a refusal is a tool result with
//! `isError` and our stable code (`error[CODE]: …`, the code again in `_meta`), never a protocol
//! error. A call that carries an `output_schema` gets the child's structured output as the
//! result's `structuredContent`.
//!
//! The input is framed here, not by rmcp: a line that is not UTF-8 or not JSON is a parse error
//! (`id: null`), one over [`MAX_FRAME`] bytes or not a message an invalid request, and the
//! connection goes on (rmcp alone would skip them without a word).
//!
//! While a child runs, its events become `notifications/progress` when the client sent a
//! progress token. `notifications/cancelled` cancels the run (its provider stops its process
//! tree) and the call answers nothing, as the protocol asks; a client that goes away (its input
//! ends) cancels every run it started, and [`McpServer::serve`] returns once they have all
//! ended.
//!
//! Depth and permissions: a call is a delegation from a top-level parent, so its child runs at
//! depth 1 under the smaller of the registry's cap, the row's `max_depth` and
//! [`McpConfig::max_depth`]; the permission ceiling is [`McpConfig::permission_ceiling`]
//! tightened by the agent type's mode: no argument of a call can loosen it.
//!
//! Deliberately not here: no provider and no preset loading (the caller hands over a built
//! registry, its rows and its agent types), no listening socket of its own (the caller binds
//! it), no resuming a call's stream after a disconnect (no event store: a dropped stream
//! cancels its call), no MCP tasks (a call waits for its child; `run_in_background` is not
//! offered).

mod call;
mod eof;
mod error;
#[doc(hidden)]
pub mod frames;
mod http;
mod tools;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use subagent_core::agents::AgentDirectory;
use subagent_core::registry::Registry;
use subagent_core::{CancellationToken, Extensions, PermissionMode};
use subagent_preset::ToolRow;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::task::TaskTracker;

pub use error::{Error, Result};
pub use frames::MAX_FRAME;
pub use http::{HttpConfig, MCP_PATH};
pub use subagent_http::Token;

/// How the server runs its calls.
#[derive(Clone, Debug)]
pub struct McpConfig {
    /// The name the server gives itself in `initialize`.
    pub name: String,
    /// The working directory children start in.
    pub cwd: PathBuf,
    /// The depth cap of calls (each call's child runs at depth 1); the registry's own cap and a
    /// row's `max_depth` still apply when smaller.
    pub max_depth: u32,
    /// The loosest permission mode a child may run in (`None`: what the provider's row and the
    /// agent type say). An agent type's mode only tightens it.
    pub permission_ceiling: Option<PermissionMode>,
    /// What every request's parent context carries (the default model, the secrets), as the
    /// CLI hands its own delegations.
    pub extensions: Extensions,
    /// The permission rules every child holds to (the settings'): a provider that cannot keep
    /// them refuses the call (`UNSUPPORTED_CAPABILITY`, `permission_rules`).
    pub permission_rules: subagent_core::PermissionRules,
}

impl McpConfig {
    /// Runs in `cwd`, depth cap [`DEFAULT_MAX_DEPTH`](subagent_core::registry::DEFAULT_MAX_DEPTH),
    /// no ceiling of its own, no extensions.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            name: "subagents".to_owned(),
            cwd: cwd.into(),
            max_depth: subagent_core::registry::DEFAULT_MAX_DEPTH,
            permission_ceiling: None,
            extensions: Extensions::new(),
            permission_rules: subagent_core::PermissionRules::default(),
        }
    }
}

/// What the handler shares with its calls: one per client (over HTTP, one per session).
struct Shared {
    registry: Arc<Registry>,
    agents: Arc<dyn AgentDirectory>,
    tools: Arc<[tools::Entry]>,
    config: Arc<McpConfig>,
    /// Cancelled when the client goes away: every run's token is a child of it. Over HTTP a
    /// session's is a child of the server's.
    connection: CancellationToken,
    /// One token per call in flight, so `serve` can wait for their runs to end (over HTTP,
    /// shared by every session).
    calls: TaskTracker,
    /// Over HTTP: the sessions whose end (`DELETE`) cancels their runs, and this one's id once
    /// a request has named it.
    session: Option<http::SessionSlot>,
}

impl Shared {
    /// A new client's share of the same server: its own connection token (a child of this
    /// one's), the same calls.
    fn for_session(&self, sessions: Arc<http::Sessions>) -> Self {
        Self {
            registry: Arc::clone(&self.registry),
            agents: Arc::clone(&self.agents),
            tools: Arc::clone(&self.tools),
            config: Arc::clone(&self.config),
            connection: self.connection.child_token(),
            calls: self.calls.clone(),
            session: Some(http::SessionSlot::new(sessions)),
        }
    }
}

/// An MCP server over a registry, ready to [`serve`](McpServer::serve) one client.
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("tools", &self.tool_names())
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server offering one tool per row of `rows` (rows whose provider is not in `registry`
    /// are skipped with a warning), starting children through `registry`, with the agent types
    /// of `agents`.
    pub fn new(
        registry: Arc<Registry>,
        rows: &[ToolRow],
        agents: Arc<dyn AgentDirectory>,
        config: McpConfig,
    ) -> Self {
        let tools = tools::entries(&registry, rows, agents.as_ref());
        Self {
            shared: Arc::new(Shared {
                registry,
                agents,
                tools: tools.into(),
                config: Arc::new(config),
                connection: CancellationToken::new(),
                calls: TaskTracker::new(),
                session: None,
            }),
        }
    }

    /// The tools offered, in the rows' order.
    pub fn tools(&self) -> Vec<Tool> {
        self.shared.tools.iter().map(|t| t.tool.clone()).collect()
    }

    /// The names of the tools offered.
    pub fn tool_names(&self) -> Vec<String> {
        self.shared
            .tools
            .iter()
            .map(|t| t.tool.name.to_string())
            .collect()
    }

    /// What a call of `tool` with `arguments` would start: the provider and the request, or
    /// the refusal the client would get (`None`: no such tool, a protocol error). Starts
    /// nothing; the registry's gates are not applied (`Registry::check` does that).
    ///
    /// Not part of the API: the way in for the `mcp_arguments` fuzz target (rmcp reads a call
    /// privately), reading arguments exactly as [`serve`](Self::serve) does.
    #[doc(hidden)]
    pub fn call_request(
        &self,
        tool: &str,
        arguments: Option<rmcp::model::JsonObject>,
    ) -> Option<std::result::Result<(String, subagent_core::StartRequest), subagent_core::Error>>
    {
        let entry = self.shared.tools.iter().find(|t| t.tool.name == tool)?;
        Some(call::prepare(&self.shared, entry, arguments))
    }

    /// Serves one client on `reader`/`writer` (stdin/stdout for `subagent mcp`) until its input
    /// ends; then cancels the runs it left going and returns once they have ended (their
    /// providers have stopped their process trees). A bad line (not UTF-8, not JSON, not a
    /// message, over [`MAX_FRAME`]) is answered with a JSON-RPC error and skipped (`frames.rs`).
    /// `Err` only when the client never completed the `initialize` handshake.
    pub async fn serve<R, W>(self, reader: R, writer: W) -> Result<()>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        self.serve_until(reader, writer, std::future::pending())
            .await
    }

    /// [`serve`](Self::serve), or until `stop` resolves (a signal): then the runs are
    /// cancelled, the calls they served answer with their cancelled outcome, the connection is
    /// closed, and this returns once every run has ended.
    pub async fn serve_until<R, W>(
        self,
        reader: R,
        writer: W,
        stop: impl Future<Output = ()> + Send,
    ) -> Result<()>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let shared = Arc::clone(&self.shared);
        let reader = eof::CancelOnEof::new(reader, shared.connection.clone());
        let (sink, messages, writer) = frames::transport(reader, writer, MAX_FRAME);
        // The writer ends once rmcp has dropped the transport, everything written.
        let (served, written) = tokio::join!(self.run(sink, messages, stop), writer);
        if let Err(error) = written {
            tracing::debug!(%error, "writing to the MCP client failed");
        }
        served
    }

    async fn run<Si, St>(
        self,
        sink: Si,
        messages: St,
        stop: impl Future<Output = ()> + Send,
    ) -> Result<()>
    where
        Si: futures::Sink<rmcp::service::TxJsonRpcMessage<RoleServer>, Error = std::io::Error>
            + Send
            + Unpin
            + 'static,
        St: futures::Stream<Item = rmcp::service::RxJsonRpcMessage<RoleServer>>
            + Send
            + Unpin
            + 'static,
    {
        let shared = Arc::clone(&self.shared);
        let mut stop = std::pin::pin!(stop);
        let started = tokio::select! {
            started = ServiceExt::serve(self, (sink, messages)) => started,
            () = &mut stop => {
                shared.finish().await;
                return Ok(());
            }
        };
        let running = match started {
            Ok(running) => running,
            Err(error) => {
                shared.finish().await;
                return Err(Error::Handshake {
                    message: error.to_string(),
                });
            }
        };
        let closing = running.cancellation_token();
        let mut waiting = std::pin::pin!(running.waiting());
        tokio::select! {
            quit = &mut waiting => {
                if let Err(error) = quit {
                    tracing::warn!(%error, "the MCP service task failed");
                }
            }
            () = &mut stop => {
                tracing::debug!("told to stop: cancelling every run");
                // The calls answer (cancelled) while the connection is still open.
                shared.finish().await;
                closing.cancel();
                if let Err(error) = waiting.await {
                    tracing::warn!(%error, "the MCP service task failed");
                }
            }
        }
        // The client is gone (or we were told to stop): nothing it started may go on.
        shared.finish().await;
        tracing::debug!("every run the MCP client started has ended");
        Ok(())
    }
}

impl Shared {
    /// Cancels every run and waits until every call has ended (each run's provider has stopped
    /// its process tree by then).
    async fn finish(&self) {
        self.connection.cancel();
        self.calls.close();
        self.calls.wait().await;
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new(&self.shared.config.name, env!("CARGO_PKG_VERSION"));
        info.instructions = Some(
            "Each tool delegates a self-contained task to another agent, which works on its own and reports back; its report is the tool's result.".to_owned(),
        );
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.shared
            .tools
            .iter()
            .find(|t| t.tool.name == name)
            .map(|t| t.tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let shared = &self.shared;
        let Some(entry) = shared.tools.iter().find(|t| t.tool.name == request.name) else {
            // An unknown tool cannot be routed: the one protocol error of a call.
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool \"{}\" here (tools: {})",
                    request.name,
                    self.tool_names().join(", ")
                ),
                None,
            ));
        };
        let _in_flight = shared.calls.token();
        // Over HTTP: the session's end or the call's dropped stream cancels it too.
        let gone = http::joined(shared, &context);
        let result = call::call(shared, entry, request.arguments, &context, gone).await;
        Ok(result.into())
    }
}
