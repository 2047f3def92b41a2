//! The connection: initialize, sessions, prompts, cancel.
//!
//! A prompt runs on a task of its own (the connection keeps reading, so `session/cancel` and
//! the answers to permission questions arrive while it runs); it streams its run's updates and
//! answers with the stop reason.
//!
//! A session keeps its background tasks beyond a prompt: each prompt's parent is given the
//! session's task table ([`Agent::with_tasks`]), so the turn ends while background children
//! run. A watcher of the session sends the client each task's end as soon as it comes while no
//! prompt runs (outside any turn: the delegation's tool call updated with the result, and a
//! line of agent message naming it); the next prompt's parent tells the model. A task that ends
//! while a prompt runs is that prompt's to tell, as in any run. When the client goes away (end
//! of input), every running prompt is cancelled and waited for, then every session's background
//! tasks are stopped, so no child process outlives the server.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ContentBlock as AcpBlock, Implementation,
    InitializeRequest, InitializeResponse, McpCapabilities, NewSessionRequest, NewSessionResponse,
    PromptRequest, PromptResponse, SessionNotification, StopReason as AcpStop,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent as AcpAgent, Client, Lines};
use futures::StreamExt;
use serde_json::json;
use subagent_core::{
    CancellationToken, ErrorCode, Run, RunId, SessionRef, StartRequest, StopReason,
};
use subagent_runtime::{Agent, EventLog, PermissionBroker, Seed, TaskTable, ToolKind};
use subagent_session::ContentBlock;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::broker::AcpBroker;
use crate::frames::{self, MAX_FRAME};
use crate::updates::{Translator, task_ended};
use crate::{Error, ParentFactory, Result, SessionTools};

/// The provider name a parent's transcript is kept under.
const PARENT: &str = "parent";

/// Serves ACP on `incoming`/`outgoing` (stdin and stdout in the CLI) until the client closes
/// its end; then cancels what still runs and waits for it. A bad line (not UTF-8, over
/// [`MAX_FRAME`](crate::MAX_FRAME)) is answered with a JSON-RPC error and skipped
/// (`frames.rs`). `Connection` when the transport fails.
pub async fn serve<R, W>(factory: Arc<dyn ParentFactory>, incoming: R, outgoing: W) -> Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let server = Arc::new(Server {
        factory,
        sessions: Mutex::new(HashMap::new()),
        running: Mutex::new(Vec::new()),
        closed: CancellationToken::new(),
    });
    let takes_mcp = server.factory.takes_mcp_servers();
    let (sink, lines, writer) = frames::transport(incoming, outgoing, MAX_FRAME);
    let transport = Lines::new(sink, lines);
    let (on_new, on_prompt, on_cancel) = (
        Arc::clone(&server),
        Arc::clone(&server),
        Arc::clone(&server),
    );
    let served = AcpAgent
        .v1()
        .name("subagent")
        .on_receive_request(
            async move |request: InitializeRequest,
                        responder: Responder<InitializeResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond(initialize(&request, takes_mcp))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest,
                        responder: Responder<NewSessionResponse>,
                        cx: ConnectionTo<Client>| {
                match on_new.new_session(request, cx).await {
                    Ok(response) => responder.respond(response),
                    Err(error) => responder.respond_with_error(error),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest,
                        responder: Responder<PromptResponse>,
                        cx: ConnectionTo<Client>| {
                Arc::clone(&on_prompt).prompt(request, responder, cx);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx: ConnectionTo<Client>| {
                on_cancel.cancel(&notification.session_id.0);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport);
    // The writer ends once the connection has dropped its ends, everything written.
    let (served, written) = futures::join!(served, writer);
    server.shutdown().await;
    served.map_err(|error| Error::Connection(error.to_string()))?;
    written.map_err(|error| Error::Connection(format!("writing to the client: {error}")))
}

/// The answer to `initialize`: protocol 1 whatever was asked (a client that cannot speak it
/// closes the connection), and only what is implemented.
fn initialize(request: &InitializeRequest, takes_mcp: bool) -> InitializeResponse {
    tracing::debug!(
        asked = %request.protocol_version,
        client = %request.client_info.as_ref().map_or("unnamed", |info| info.name.as_str()),
        "initialize"
    );
    InitializeResponse::new(ProtocolVersion::V1)
        // MCP servers over streamable HTTP when the factory starts servers (stdio ones it must
        // take by the protocol); not the older SSE transport.
        .agent_capabilities(
            AgentCapabilities::new().mcp_capabilities(McpCapabilities::new().http(takes_mcp)),
        )
        .agent_info(Implementation::new("subagent", env!("CARGO_PKG_VERSION")))
}

/// A JSON-RPC error carrying our stable code.
fn refusal(
    base: agent_client_protocol::Error,
    code: ErrorCode,
    message: impl Into<String>,
) -> agent_client_protocol::Error {
    let message = message.into();
    agent_client_protocol::Error::new(base.code, message.clone())
        .data(json!({"code": code.as_str(), "message": message}))
}

struct Server {
    factory: Arc<dyn ParentFactory>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// Prompt tasks, awaited at shutdown.
    running: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Cancelled at shutdown: the sessions' watchers end.
    closed: CancellationToken,
}

struct Session {
    id: String,
    cwd: PathBuf,
    broker: Arc<AcpBroker>,
    /// The session's own tools (its MCP servers'), for every parent of the session.
    tools: SessionTools,
    state: Mutex<Conversation>,
    /// The session's background tasks, kept beyond each prompt (output files under the task
    /// root's directory named after the session id); stopped at shutdown.
    tasks: Arc<TaskTable>,
    /// Whether a prompt runs (set and cleared with `Conversation::running`), for the watcher.
    busy: tokio::sync::watch::Sender<bool>,
}

#[derive(Default)]
struct Conversation {
    /// The parent built at `session/new`, used by the first prompt.
    prepared: Option<Agent>,
    /// The conversation so far.
    log: Option<EventLog>,
    /// Its transcript, when the parent keeps one (the next prompt appends to it).
    transcript: Option<SessionRef>,
    /// The running prompt's cancellation.
    running: Option<CancellationToken>,
}

impl Server {
    async fn new_session(
        &self,
        request: NewSessionRequest,
        cx: ConnectionTo<Client>,
    ) -> std::result::Result<NewSessionResponse, agent_client_protocol::Error> {
        let invalid = agent_client_protocol::Error::invalid_params;
        let servers = crate::servers::specs(&request.mcp_servers)
            .map_err(|message| refusal(invalid(), ErrorCode::InvalidArguments, message))?;
        if !request.cwd.is_absolute() {
            return Err(refusal(
                invalid(),
                ErrorCode::InvalidArguments,
                format!(
                    "cwd must be an absolute path, not {}",
                    request.cwd.display()
                ),
            ));
        }
        let session_tools = self
            .factory
            .session_tools(&request.cwd, servers)
            .await
            .map_err(|message| refusal(invalid(), ErrorCode::InvalidArguments, message))?;
        let run_id = RunId::new();
        let id = run_id.to_string();
        let broker = Arc::new(AcpBroker::new(cx.clone(), id.clone(), request.cwd.clone()));
        let agent = self
            .factory
            .build(
                &request.cwd,
                Arc::clone(&broker) as Arc<dyn PermissionBroker>,
                &session_tools,
            )
            .map_err(|message| refusal(invalid(), ErrorCode::InvalidArguments, message))?;
        let tools = &agent.config().tools;
        let kinds: HashMap<String, ToolKind> = tools
            .tools()
            .iter()
            .zip(tools.specs())
            .map(|(tool, spec)| (spec.name.clone(), tool.kind()))
            .collect();
        *broker.kinds.lock().unwrap_or_else(PoisonError::into_inner) = Arc::new(kinds);
        let config = agent.config();
        let tasks = Arc::new(TaskTable::for_run(
            run_id,
            config.task_dir.clone(),
            config.secrets.clone(),
        ));
        let session = Arc::new(Session {
            id: id.clone(),
            cwd: request.cwd,
            broker,
            tools: session_tools,
            state: Mutex::new(Conversation {
                prepared: Some(agent),
                ..Conversation::default()
            }),
            tasks,
            busy: tokio::sync::watch::Sender::new(false),
        });
        tokio::spawn(watch(Arc::clone(&session), cx, self.closed.clone()));
        tracing::debug!(session = %id, cwd = %session.cwd.display(), "session/new");
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), session);
        Ok(NewSessionResponse::new(id))
    }

    fn session(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    fn cancel(&self, id: &str) {
        if let Some(session) = self.session(id) {
            let state = session.state.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(token) = &state.running {
                tracing::debug!(session = %id, "session/cancel");
                token.cancel();
            }
        }
    }

    /// Starts the prompt on a task of its own; the task answers the request.
    fn prompt(
        self: Arc<Self>,
        request: PromptRequest,
        responder: Responder<PromptResponse>,
        cx: ConnectionTo<Client>,
    ) {
        let server = Arc::clone(&self);
        let task = tokio::spawn(async move {
            let answer = match server.session(&request.session_id.0) {
                None => Err(refusal(
                    agent_client_protocol::Error::invalid_params(),
                    ErrorCode::InvalidArguments,
                    format!("no session {}", request.session_id.0),
                )),
                Some(session) => server.run_prompt(&session, request.prompt, &cx).await,
            };
            let sent = match answer {
                Ok(stop) => responder.respond(PromptResponse::new(stop)),
                Err(error) => responder.respond_with_error(error),
            };
            if let Err(error) = sent {
                tracing::debug!(%error, "the prompt's answer was not sent");
            }
        });
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        running.retain(|task| !task.is_finished());
        running.push(task);
    }

    async fn run_prompt(
        &self,
        session: &Session,
        prompt: Vec<AcpBlock>,
        cx: &ConnectionTo<Client>,
    ) -> std::result::Result<AcpStop, agent_client_protocol::Error> {
        let blocks = prompt_blocks(prompt)?;
        let cancel = CancellationToken::new();
        let (prepared, log, transcript) = {
            let mut state = session.state.lock().unwrap_or_else(PoisonError::into_inner);
            if state.running.is_some() {
                return Err(refusal(
                    agent_client_protocol::Error::invalid_request(),
                    ErrorCode::InvalidArguments,
                    "a prompt is already running in this session: wait for its answer or cancel it",
                ));
            }
            state.running = Some(cancel.clone());
            session.busy.send_replace(true);
            (
                state.prepared.take(),
                state.log.take(),
                state.transcript.take(),
            )
        };
        *session
            .broker
            .cancel
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = cancel.clone();
        session.broker.seen.clear();
        let result = self
            .drive(session, prepared, log, transcript, blocks, cancel, cx)
            .await;
        let mut state = session.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.running = None;
        session.busy.send_replace(false);
        let (stop, log, transcript) = result?;
        state.log = log;
        state.transcript = transcript;
        Ok(stop)
    }

    /// Runs one prompt of the session to its end; returns the stop reason and what the next
    /// prompt continues.
    #[allow(clippy::too_many_arguments)]
    async fn drive(
        &self,
        session: &Session,
        prepared: Option<Agent>,
        log: Option<EventLog>,
        transcript: Option<SessionRef>,
        blocks: Vec<ContentBlock>,
        cancel: CancellationToken,
        cx: &ConnectionTo<Client>,
    ) -> std::result::Result<
        (AcpStop, Option<EventLog>, Option<SessionRef>),
        agent_client_protocol::Error,
    > {
        let internal = agent_client_protocol::Error::internal_error;
        let built = match prepared {
            Some(agent) => Ok(agent),
            None => self.factory.build(
                &session.cwd,
                Arc::clone(&session.broker) as Arc<dyn PermissionBroker>,
                &session.tools,
            ),
        };
        let mut agent = match built {
            Ok(agent) => agent.with_tasks(Arc::clone(&session.tasks)),
            Err(message) => {
                // The conversation so far is kept for the next prompt.
                let mut state = session.state.lock().unwrap_or_else(PoisonError::into_inner);
                state.log = log;
                state.transcript = transcript;
                return Err(refusal(internal(), ErrorCode::InvalidArguments, message));
            }
        };
        // The conversation so far: from the transcript when the parent keeps one (so the file
        // goes on), else from memory.
        let mut seed = None;
        if let (Some(store), Some(reference)) = (agent.config().sessions.clone(), &transcript) {
            match store.resume(PARENT, reference, blocks.clone()).await {
                Ok(resumed) => {
                    agent = agent.resuming(resumed.session);
                    seed = Some(resumed.seed);
                }
                Err(error) => tracing::warn!(%error, "continuing the session from memory"),
            }
        }
        let seed = match (seed, log) {
            (Some(seed), _) => seed,
            (None, Some(log)) => Seed::resumed(log, blocks),
            (None, None) => Seed::fresh(blocks),
        };
        let request = StartRequest::builder(seed.prompt.text())
            .cwd(&session.cwd)
            .cancel(cancel)
            .build();
        let (sender, mut run) = Run::channel(PARENT, &request);
        let (log_tx, log_rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let (mut outcome, log) = agent.run(seed, &sender).await;
            if let Some(session) = &mut outcome.session {
                PARENT.clone_into(&mut session.provider);
            }
            let _ = log_tx.send((log, outcome.session.clone()));
            sender.finish(outcome);
        });
        let kinds = Arc::clone(
            &session
                .broker
                .kinds
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let mut translator =
            Translator::new(session.cwd.clone(), kinds, Arc::clone(&session.broker.seen));
        if let Some(mut events) = run.take_events() {
            while let Some(event) = events.next().await {
                if let Some(update) = translator.translate(event) {
                    // A client that stopped listening does not stop the run; its end does.
                    if let Err(error) =
                        cx.send_notification(SessionNotification::new(session.id.clone(), update))
                    {
                        tracing::debug!(%error, "session/update not sent");
                    }
                    translator.sent();
                }
            }
        }
        let outcome = run.outcome().await;
        let (log, transcript) = match log_rx.await {
            Ok((log, transcript)) => (Some(log), transcript),
            Err(_) => (None, None),
        };
        tracing::debug!(status = %outcome.status, "prompt finished");
        let stop = match outcome.status {
            StopReason::Completed => AcpStop::EndTurn,
            StopReason::Cancelled => AcpStop::Cancelled,
            StopReason::MaxTurns => AcpStop::MaxTurnRequests,
            StopReason::MaxTokens => AcpStop::MaxTokens,
            StopReason::Refused => AcpStop::Refusal,
            // Failed (and any status this build does not know).
            _ => {
                let message = outcome
                    .diagnostic
                    .unwrap_or_else(|| "the parent agent failed".to_owned());
                // The conversation so far is kept: the next prompt continues it.
                let mut state = session.state.lock().unwrap_or_else(PoisonError::into_inner);
                state.log = log;
                state.transcript = transcript;
                // Not a refusal (no stable code): the run ran and failed, as an outcome says.
                return Err(
                    agent_client_protocol::Error::new(internal().code, message.clone())
                        .data(json!({"status": "failed", "message": message})),
                );
            }
        };
        Ok((stop, log, transcript))
    }

    /// Cancels every running prompt and waits for them (their children stop with them), then
    /// stops every session's background tasks and waits for them too.
    async fn shutdown(&self) {
        let sessions: Vec<Arc<Session>> = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        for session in &sessions {
            let state = session.state.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(token) = &state.running {
                token.cancel();
            }
        }
        let tasks =
            std::mem::take(&mut *self.running.lock().unwrap_or_else(PoisonError::into_inner));
        for task in tasks {
            let _ = task.await;
        }
        self.closed.cancel();
        for session in sessions {
            session.tasks.stop_all().await;
        }
    }
}

/// A prompt's content as the parent's user message: text as it is, a resource link as a
/// mention of its URI (what ACP requires every agent to accept); anything else is refused, as
/// `initialize` said.
fn prompt_blocks(
    prompt: Vec<AcpBlock>,
) -> std::result::Result<Vec<ContentBlock>, agent_client_protocol::Error> {
    let mut blocks = Vec::with_capacity(prompt.len());
    for block in prompt {
        match block {
            AcpBlock::Text(text) => blocks.push(ContentBlock::text(text.text)),
            AcpBlock::ResourceLink(link) => {
                blocks.push(ContentBlock::text(format!(
                    "[@{}]({})",
                    link.name, link.uri
                )));
            }
            _ => {
                return Err(refusal(
                    agent_client_protocol::Error::invalid_params(),
                    ErrorCode::InvalidArguments,
                    "subagent acp takes text and resource links in a prompt (no images, audio or embedded resources)",
                ));
            }
        }
    }
    if blocks.is_empty() {
        return Err(refusal(
            agent_client_protocol::Error::invalid_params(),
            ErrorCode::InvalidArguments,
            "the prompt is empty",
        ));
    }
    Ok(blocks)
}

/// Watches `session`'s background tasks until `closed`: each task's end is sent to the client
/// once no prompt runs, unless a prompt has told the model already (that turn showed it).
async fn watch(session: Arc<Session>, cx: ConnectionTo<Client>, closed: CancellationToken) {
    let mut busy = session.busy.subscribe();
    let mut seen = HashSet::new();
    loop {
        let ended = tokio::select! {
            biased;
            () = closed.cancelled() => return,
            ended = session.tasks.next_ended(&seen) => ended,
        };
        let idle = tokio::select! {
            biased;
            () = closed.cancelled() => return,
            idle = busy.wait_for(|busy| !*busy) => idle.is_ok(),
        };
        if !idle {
            return;
        }
        // Under the lock a prompt starts under: either the update goes out before the next
        // prompt runs, or that prompt tells the model and the task is looked at again after it.
        let state = session.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.running.is_some() {
            continue;
        }
        seen.insert(ended.id);
        if session
            .tasks
            .get(ended.id)
            .is_some_and(|task| task.notified)
        {
            continue;
        }
        tracing::debug!(session = %session.id, task = %ended.id, "background task ended");
        for update in task_ended(&ended) {
            if let Err(error) =
                cx.send_notification(SessionNotification::new(session.id.clone(), update))
            {
                tracing::debug!(%error, "session/update not sent");
            }
        }
        drop(state);
    }
}
