//! The servers of one run: each started once, when first needed, and shared by every agent of
//! the run that may use it; stopped with the run.
//!
//! A stdio server is a process of ours ([`crate::stdio`]); an HTTP server is reached over MCP's
//! streamable HTTP ([`crate::http`]). Either way the session is rmcp's, and what can go wrong
//! (no start, no answer, an exit, a timeout, an error answer) has its [`ErrorCode`].
//!
//! Deliberately not here: the tools the model sees ([`crate::tool`]), where servers are
//! configured ([`crate::config`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::Tool;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientNotification, ClientRequest, Implementation,
    InitializeRequestParams, JsonObject, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RunningService};
use rmcp::transport::IntoTransport;
use rmcp::{RoleClient, ServiceError, ServiceExt};
use subagent_core::CancellationToken;
use subagent_process::Secrets;
use tokio::sync::Mutex;

use crate::config::{ServerConfig, Transport as Reach};
use crate::error::{Error, ErrorCode, Result};
use crate::{http, stdio};

/// How long a server may take to start and answer `initialize` and `tools/list` (Claude Code's
/// `MCP_TIMEOUT` defaults to 30 s).
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one tool call may take unless its server's `timeout` says otherwise.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(600);

/// The longest message line a server may write: a larger one stops the server (its call fails
/// with [`ErrorCode::ServerExited`]); what reaches the model is cut far below this by the run's
/// cap on a tool result.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// How a run's servers start and answer.
#[derive(Clone, Debug)]
pub struct Options {
    /// The directory servers start in (the run's).
    pub cwd: PathBuf,
    /// Values withheld from servers' environments.
    pub secrets: Secrets,
    /// How long starting may take ([`DEFAULT_STARTUP_TIMEOUT`]).
    pub startup_timeout: Duration,
    /// How long a call may take when its server sets no `timeout` ([`DEFAULT_CALL_TIMEOUT`]).
    pub call_timeout: Duration,
}

impl Options {
    /// Servers started in `cwd`, withholding `secrets`, with the default timeouts.
    pub fn new(cwd: impl Into<PathBuf>, secrets: Secrets) -> Self {
        Self {
            cwd: cwd.into(),
            secrets,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
        }
    }
}

/// One tool a server offers.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerTool {
    /// The server's name.
    pub server: String,
    /// The tool's name on its server.
    pub name: String,
    /// What the server says it does.
    pub description: String,
    /// Its input's JSON Schema.
    pub input_schema: serde_json::Value,
    /// The server says it only reads (`annotations.readOnlyHint`).
    pub read_only: bool,
}

impl ServerTool {
    /// The name the model sees: `mcp__<server>__<tool>`, as Claude Code names it.
    pub fn qualified_name(&self) -> String {
        format!("mcp__{}__{}", self.server, self.name)
    }
}

/// What a server is, as far as this run knows.
enum Slot {
    NotStarted,
    Running(Arc<Connection>),
    Failed(Error),
}

/// The servers of a run. Dropping it stops every server it started.
pub struct McpServers {
    servers: Vec<(ServerConfig, Mutex<Slot>)>,
    options: Options,
    /// Cancelled when the run's servers go: each server's process stops with it.
    stop: CancellationToken,
}

impl Drop for McpServers {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl std::fmt::Debug for McpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.servers.iter().map(|(config, _)| &config.name))
            .finish()
    }
}

impl McpServers {
    /// The servers `configs` (none started yet).
    pub fn new(configs: Vec<ServerConfig>, options: Options) -> Self {
        Self {
            servers: configs
                .into_iter()
                .map(|config| (config, Mutex::new(Slot::NotStarted)))
                .collect(),
            options,
            stop: CancellationToken::new(),
        }
    }

    /// The configured servers, in their order.
    pub fn configs(&self) -> impl Iterator<Item = &ServerConfig> {
        self.servers.iter().map(|(config, _)| config)
    }

    /// Starts every server not started yet, at once, and gives the tools of those that run (in
    /// the servers' order, each server's tools in its order) and the error of each that does
    /// not. A server that failed is not tried again in this run.
    pub async fn start_all(&self) -> (Vec<ServerTool>, Vec<(String, Error)>) {
        let started =
            futures::future::join_all(self.servers.iter().map(|(config, _)| async move {
                (config.name.clone(), self.connection(&config.name).await)
            }))
            .await;
        let mut tools = Vec::new();
        let mut failed = Vec::new();
        for (name, connection) in started {
            match connection {
                Ok(connection) => tools.extend(connection.tools.iter().cloned()),
                Err(error) => failed.push((name, error)),
            }
        }
        (tools, failed)
    }

    /// The running connection of `server`, started now if it is not running (again, after it
    /// exited).
    async fn connection(&self, server: &str) -> Result<Arc<Connection>> {
        let Some((config, slot)) = self.servers.iter().find(|(c, _)| c.name == server) else {
            return Err(Error::new(
                ErrorCode::ConfigInvalid,
                format!("no MCP server `{server}` is configured"),
            ));
        };
        let mut slot = slot.lock().await;
        match &*slot {
            Slot::Running(connection) if !connection.closed() => {
                return Ok(Arc::clone(connection));
            }
            Slot::Failed(error) => return Err(error.clone()),
            Slot::Running(_) | Slot::NotStarted => {}
        }
        match Connection::start(config, &self.options, &self.stop).await {
            Ok(connection) => {
                let connection = Arc::new(connection);
                *slot = Slot::Running(Arc::clone(&connection));
                Ok(connection)
            }
            Err(error) => {
                *slot = Slot::Failed(error.clone());
                Err(error)
            }
        }
    }

    /// Calls `tool` of `server` with `arguments`, within the server's timeout; `cancel` ends the
    /// call (the server is told).
    ///
    /// # Errors
    /// [`ErrorCode::StartFailed`] when the server cannot start, [`ErrorCode::ServerExited`]
    /// when it went away (with the end of its stderr), [`ErrorCode::Timeout`],
    /// [`ErrorCode::Protocol`] for an error answer.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult> {
        let connection = self.connection(server).await?;
        let timeout = connection.timeout.unwrap_or(self.options.call_timeout);
        connection.call(tool, arguments, timeout, cancel).await
    }
}

/// One running server.
struct Connection {
    name: String,
    service: RunningService<RoleClient, InitializeRequestParams>,
    tools: Vec<ServerTool>,
    timeout: Option<Duration>,
    /// A stdio server's: set once its stdout ended, what became of it. An HTTP server's: the
    /// last failure on the wire.
    ended: Arc<std::sync::Mutex<Option<String>>>,
    /// Lines on its stdout (answers over HTTP) that were not MCP messages.
    garbage: Arc<AtomicUsize>,
    /// Whether it is a process of ours (else reached over HTTP).
    stdio: bool,
    /// Stops this server's process (or ends the HTTP session).
    stop: CancellationToken,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Connection {
    async fn start(
        config: &ServerConfig,
        options: &Options,
        stop_all: &CancellationToken,
    ) -> Result<Self> {
        let name = config.name.clone();
        let failed = |what: String| {
            Error::new(
                ErrorCode::StartFailed,
                format!("MCP server `{name}` ({}): {what}", config.source),
            )
        };
        let stop = stop_all.child_token();
        let ended = Arc::new(std::sync::Mutex::new(None));
        let garbage = Arc::new(AtomicUsize::new(0));
        let handshake = match &config.transport {
            Reach::Stdio { command, args, env } => {
                let started = stdio::start(
                    &name,
                    command,
                    args,
                    env,
                    (&options.cwd, &options.secrets, MAX_MESSAGE_BYTES),
                    &stop,
                )
                .map_err(&failed)?;
                let (ended, garbage) = (Arc::clone(&started.ended), Arc::clone(&started.garbage));
                let shake = handshake(started.transport);
                let shaken = tokio::time::timeout(options.startup_timeout, shake).await;
                (shaken, ended, garbage)
            }
            Reach::Http { kind, .. } if kind == "sse" => {
                return Err(Error::new(
                    ErrorCode::UnsupportedTransport,
                    format!(
                        "MCP server `{name}` ({}) uses the older SSE transport, which the MCP SDK we build on no longer speaks; if the server also serves streamable HTTP, set `\"type\": \"http\"` and its URL",
                        config.source
                    ),
                ));
            }
            Reach::Http { url, headers, .. } => {
                let notes = http::Notes {
                    last: Arc::clone(&ended),
                    garbage: Arc::clone(&garbage),
                };
                let transport =
                    http::transport(url, headers, notes, MAX_MESSAGE_BYTES).map_err(&failed)?;
                let shake = handshake(transport);
                let shaken = tokio::time::timeout(options.startup_timeout, shake).await;
                (shaken, ended, garbage)
            }
        };
        let (shaken, ended, garbage) = handshake;
        let (service, listed) = match shaken {
            Ok(Ok(done)) => done,
            Ok(Err(e)) => {
                stop.cancel();
                if !config.transport.is_stdio()
                    && let Some(last) = ended.lock().ok().and_then(|l| l.clone())
                {
                    // rmcp's words name its types; what went wrong on the wire is the news.
                    return Err(failed(format!("the MCP handshake failed: {last}")));
                }
                let why = stdio::wait_for_end(&ended).await;
                return Err(failed(format!("the MCP handshake failed: {e}{why}")));
            }
            Err(_) => {
                stop.cancel();
                return Err(failed(format!(
                    "no answer to `initialize` and `tools/list` within {} s{}",
                    options.startup_timeout.as_secs(),
                    stdio::garbage_note(garbage.load(Ordering::Relaxed))
                )));
            }
        };
        let tools = listed
            .into_iter()
            .map(|tool| ServerTool {
                server: name.clone(),
                name: tool.name.to_string(),
                description: tool.description.as_deref().unwrap_or_default().to_owned(),
                input_schema: serde_json::Value::Object((*tool.input_schema).clone()),
                read_only: tool
                    .annotations
                    .as_ref()
                    .and_then(|a| a.read_only_hint)
                    .unwrap_or(false),
            })
            .collect();
        tracing::debug!(server = %name, "MCP server started");
        Ok(Self {
            name,
            service,
            tools,
            timeout: config.timeout_ms.map(Duration::from_millis),
            ended,
            garbage,
            stdio: config.transport.is_stdio(),
            stop,
        })
    }

    /// Whether the session ended (the server exited, was stopped, or closed the connection).
    fn closed(&self) -> bool {
        self.service.is_closed()
            || (self.stdio && self.ended.lock().map(|e| e.is_some()).unwrap_or(true))
    }

    async fn call(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let peer = self.service.peer();
        let handle = peer
            .send_cancellable_request(request, PeerRequestOptions::with_timeout(timeout))
            .await
            .map_err(|e| self.service_error(e, timeout))?;
        let id = handle.id.clone();
        let answer = tokio::select! {
            answer = handle.await_response() => answer,
            () = cancel.cancelled() => {
                let params = CancelledNotificationParam::new(
                    Some(id),
                    Some("the run was cancelled".to_owned()),
                );
                let _ = peer
                    .send_notification(ClientNotification::CancelledNotification(
                        CancelledNotification::new(params),
                    ))
                    .await;
                return Err(Error::new(
                    ErrorCode::Cancelled,
                    format!("the call of `{tool}` on MCP server `{}` was cancelled", self.name),
                ));
            }
        };
        match answer {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(other) => Err(Error::new(
                ErrorCode::Protocol,
                format!(
                    "MCP server `{}` answered tools/call with something else: {}",
                    self.name,
                    serde_json::to_string(&other).unwrap_or_default()
                ),
            )),
            Err(e) => {
                if matches!(
                    e,
                    ServiceError::TransportClosed | ServiceError::TransportSend(_)
                ) {
                    // The reader records how the server ended just after its output closes.
                    if self.stdio {
                        stdio::wait_for_end(&self.ended).await;
                    }
                }
                Err(self.service_error(e, timeout))
            }
        }
    }

    fn service_error(&self, error: ServiceError, timeout: Duration) -> Error {
        match error {
            ServiceError::Timeout { .. } => Error::new(
                ErrorCode::Timeout,
                format!(
                    "MCP server `{}` did not answer within {} s (its `timeout`, in milliseconds, sets how long a call may take){}",
                    self.name,
                    timeout.as_secs_f64(),
                    stdio::garbage_note(self.garbage.load(Ordering::Relaxed))
                ),
            ),
            ServiceError::McpError(error) => Error::new(
                ErrorCode::Protocol,
                format!("MCP server `{}`: {}", self.name, error.message),
            ),
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                let ended = self
                    .ended
                    .lock()
                    .ok()
                    .and_then(|e| e.clone())
                    .unwrap_or_else(|| {
                        if self.stdio {
                            "its output closed"
                        } else {
                            "the connection closed"
                        }
                        .to_owned()
                    });
                if self.stdio {
                    return Error::new(
                        ErrorCode::ServerExited,
                        format!(
                            "MCP server `{}` went away during the call: {ended}",
                            self.name
                        ),
                    );
                }
                // Over HTTP the session ends when the server's answer could not be read: a
                // garbled answer is the server's fault in the protocol, a failed connection its
                // going away.
                let code = if self.garbage.load(Ordering::Relaxed) > 0 {
                    ErrorCode::Protocol
                } else {
                    ErrorCode::ServerExited
                };
                Error::new(
                    code,
                    format!(
                        "MCP server `{}` ended the session during the call: {ended}",
                        self.name
                    ),
                )
            }
            other => Error::new(
                ErrorCode::Protocol,
                format!("MCP server `{}`: {other}", self.name),
            ),
        }
    }
}

/// The running session over `transport`, after `initialize`, and the server's tools.
async fn handshake<T, E, A>(
    transport: T,
) -> std::result::Result<
    (
        RunningService<RoleClient, InitializeRequestParams>,
        Vec<Tool>,
    ),
    String,
>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let info = InitializeRequestParams::new(
        Default::default(),
        Implementation::new("subagent", env!("CARGO_PKG_VERSION")),
    );
    let service = info.serve(transport).await.map_err(|e| e.to_string())?;
    let tools = service
        .peer()
        .list_all_tools()
        .await
        .map_err(|e| e.to_string())?;
    Ok((service, tools))
}
