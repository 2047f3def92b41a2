//! The servers of one run: each started once, when first needed, and shared by every agent of
//! the run that may use it; stopped with the run.
//!
//! A stdio server runs under the process owner (`subagent-process`): in its own process group,
//! under the host's guardian, with the model products' keys and the run's secrets withheld
//! from its environment (what its `env` names is added), and with its tree killed when the run
//! ends, is cancelled, or the host dies. Its stdout carries MCP's JSON-RPC messages, one a
//! line; what else it writes there is logged and skipped; its stderr goes to the log.
//!
//! Deliberately not here: the tools the model sees ([`crate::tool`]), where servers are
//! configured ([`crate::config`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientNotification, ClientRequest, Implementation,
    InitializeRequestParams, JsonObject, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RunningService, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleClient, ServiceError, ServiceExt};
use subagent_core::CancellationToken;
use subagent_process::{Process, ProcessSpec, Scrub, Secrets, StdinMode, StopPolicy};
use tokio::io::AsyncWriteExt;
use tokio::sync::{Mutex, mpsc};

use crate::config::{ServerConfig, Transport as Reach};
use crate::error::{Error, ErrorCode, Result};

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
    /// Set once the server's stdout ended: what became of it.
    ended: Arc<std::sync::Mutex<Option<String>>>,
    /// Lines on its stdout that were not MCP messages.
    garbage: Arc<AtomicUsize>,
    /// Stops this server's process.
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
        let Reach::Stdio { command, args, env } = &config.transport else {
            return Err(Error::new(
                ErrorCode::UnsupportedTransport,
                format!(
                    "MCP server `{name}` ({}) is reached over HTTP, which this version does not connect to yet; run it as a stdio server (`command`)",
                    config.source
                ),
            ));
        };
        let failed = |what: String| {
            Error::new(
                ErrorCode::StartFailed,
                format!("MCP server `{name}` ({}): {what}", config.source),
            )
        };
        let stop = stop_all.child_token();
        let mut process = ProcessSpec::new(command, &options.cwd)
            .args(args)
            .scrub(Scrub::ModelKeys)
            .withhold(options.secrets.clone())
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(StdinMode::Piped)
            .max_line_bytes(MAX_MESSAGE_BYTES)
            .stop_policy(StopPolicy::default().grace(Duration::from_secs(2)))
            .cancel(stop.clone())
            .spawn()
            .map_err(|e| failed(format!("`{command}` could not be started: {e}")))?;
        let stdin = process
            .take_stdin()
            .ok_or_else(|| failed("no stdin pipe".to_owned()))?;
        let (sender, incoming) = mpsc::channel(64);
        let ended = Arc::new(std::sync::Mutex::new(None));
        let garbage = Arc::new(AtomicUsize::new(0));
        tokio::spawn(read(
            process,
            sender,
            Arc::clone(&ended),
            Arc::clone(&garbage),
            name.clone(),
        ));
        let transport = LineTransport {
            stdin: Arc::new(Mutex::new(stdin)),
            incoming,
        };
        let info = InitializeRequestParams::new(
            Default::default(),
            Implementation::new("subagent", env!("CARGO_PKG_VERSION")),
        );
        let handshake = async {
            let service = info.serve(transport).await.map_err(|e| e.to_string())?;
            let tools = service
                .peer()
                .list_all_tools()
                .await
                .map_err(|e| e.to_string())?;
            Ok::<_, String>((service, tools))
        };
        let (service, listed) = match tokio::time::timeout(options.startup_timeout, handshake).await
        {
            Ok(Ok(done)) => done,
            Ok(Err(e)) => {
                stop.cancel();
                let why = wait_for_end(&ended).await;
                return Err(failed(format!("the MCP handshake failed: {e}{why}")));
            }
            Err(_) => {
                stop.cancel();
                return Err(failed(format!(
                    "no answer to `initialize` and `tools/list` within {} s{}",
                    options.startup_timeout.as_secs(),
                    garbage_note(garbage.load(Ordering::Relaxed))
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
            stop,
        })
    }

    /// Whether the server's stdout ended (it exited, or was stopped).
    fn closed(&self) -> bool {
        self.ended.lock().map(|e| e.is_some()).unwrap_or(true)
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
                    wait_for_end(&self.ended).await;
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
                    garbage_note(self.garbage.load(Ordering::Relaxed))
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
                    .unwrap_or_else(|| "its output closed".to_owned());
                Error::new(
                    ErrorCode::ServerExited,
                    format!(
                        "MCP server `{}` went away during the call: {ended}",
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

/// What the user should know of lines that were not MCP messages.
fn garbage_note(count: usize) -> String {
    if count == 0 {
        String::new()
    } else {
        format!("; it wrote {count} line(s) on stdout that are not MCP messages (see the log, -v)")
    }
}

/// What became of a server whose handshake failed, once its output ended (briefly waited for).
async fn wait_for_end(ended: &std::sync::Mutex<Option<String>>) -> String {
    for _ in 0..50 {
        if let Some(end) = ended.lock().ok().and_then(|e| e.clone()) {
            return format!(" ({end})");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    String::new()
}

/// Reads the server's stdout: each line that is an MCP message goes to the client; at the end,
/// what became of the server is recorded in `ended`.
async fn read(
    mut process: Process,
    sender: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
    ended: Arc<std::sync::Mutex<Option<String>>>,
    garbage: Arc<AtomicUsize>,
    name: String,
) {
    let failure = loop {
        match process.next_line().await {
            Ok(Some(line)) if line.trim().is_empty() => {}
            Ok(Some(line)) => match serde_json::from_str(&line) {
                Ok(message) => {
                    if sender.send(message).await.is_err() {
                        process.stop();
                    }
                }
                Err(e) => {
                    garbage.fetch_add(1, Ordering::Relaxed);
                    let start: String = line.chars().take(200).collect();
                    tracing::warn!(target: "subagent::mcp", server = %name, "not an MCP message ({e}): {start}");
                }
            },
            Ok(None) => break None,
            Err(e) => break Some(e.to_string()),
        }
    };
    drop(sender);
    let end = match process.wait().await {
        Ok(exit) => {
            let tail = exit.stderr_tail.trim();
            let status = match (exit.code(), exit.signal()) {
                (Some(code), _) => format!("it exited with status {code}"),
                (None, Some(signal)) => format!("it was killed by signal {signal}"),
                (None, None) => "it ended".to_owned(),
            };
            let mut end = failure.map_or(status.clone(), |f| format!("{f}; {status}"));
            if !tail.is_empty() {
                end.push_str(&format!(
                    "; its stderr ends: {}",
                    tail.lines().last().unwrap_or_default()
                ));
            }
            end
        }
        Err(e) => failure.unwrap_or_else(|| e.to_string()),
    };
    tracing::debug!(target: "subagent::mcp", server = %name, "{end}");
    if let Ok(mut slot) = ended.lock() {
        *slot = Some(end);
    }
}

/// MCP over a server's stdin and the lines [`read`] hands on.
struct LineTransport {
    stdin: Arc<Mutex<tokio::process::ChildStdin>>,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
}

impl Transport<RoleClient> for LineTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = std::result::Result<(), Self::Error>> + Send + 'static
    {
        let stdin = Arc::clone(&self.stdin);
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            let mut stdin = stdin.lock().await;
            stdin.write_all(&line).await?;
            stdin.flush().await
        }
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> std::result::Result<(), Self::Error> {
        self.stdin.lock().await.shutdown().await
    }
}
