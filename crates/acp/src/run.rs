//! Driving one agent: its process (started and owned by `subagent-process`: own process group,
//! parent-death signal, scrubbed environment, the run's cwd) and the official SDK's client
//! connection over the process's pipes.
//!
//! The glue is small: the SDK's `Lines` transport takes a stream of incoming lines and a sink of
//! outgoing ones. The incoming lines are the process's own bounded stdout lines, which this
//! module reads (so the process owner's line bound, timeouts and reaping stay in force) and
//! hands over a channel; the outgoing sink writes to the child's stdin. The SDK spawns nothing
//! and brings no executor: its connection is one future, polled in the same task as the reading
//! (see `crate::coalesce`). The channel is unbounded because the SDK's is: its transport takes
//! every line it is offered into a queue of its own whenever it is polled, so a bound here would
//! bound nothing.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, CloseSessionRequest, ContentBlock,
    FileSystemCapabilities, InitializeRequest, LoadSessionRequest, NewSessionRequest,
    PromptRequest, PromptResponse, ReadTextFileRequest, ReadTextFileResponse,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse, SessionId,
    SessionNotification, SetSessionModeRequest, TextContent, WriteTextFileRequest,
    WriteTextFileResponse,
};
use agent_client_protocol::{Client, Lines};
use subagent_core::{
    Asker, Outcome, PermissionMode, RunEmitter, RunSender, SessionRef, ToolAnswer,
};
use subagent_process::{Process, ProcessSpec, Secrets, Signal, StdinMode, StopPolicy};
use tokio::io::AsyncWriteExt;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::client::{Files, answer};
use crate::config::PermissionPolicy;
use crate::events::StreamState;

/// Everything a run needs besides the process.
#[derive(Debug)]
pub(crate) struct RunPlan {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// The run's cwd: the process's and the session's.
    pub cwd: PathBuf,
    /// Variables set.
    pub env: Vec<(String, String)>,
    /// Variables passed although scrubbed.
    pub pass_env: Vec<String>,
    /// Withheld from the child, redacted from its output.
    pub secrets: Secrets,
    /// The provider's name (for the session reference).
    pub provider: String,
    /// The prompt's text.
    pub prompt: String,
    /// The session to load instead of a new one.
    pub resume: Option<String>,
    /// The run's permission mode.
    pub mode: PermissionMode,
    /// The agent's session mode to set.
    pub session_mode: Option<String>,
    /// How permission requests are answered.
    pub permissions: PermissionPolicy,
    /// The agent's file access.
    pub files: Files,
    /// Cancel → kill grace, and SIGTERM → SIGKILL grace.
    pub grace: Duration,
    /// Overall limit.
    pub timeout: Option<Duration>,
    /// The most permission requests answered in the run's one turn.
    pub max_permission_requests: u32,
    /// Who answers the agent's permission requests in place of the row's policy: the child's
    /// parent (`request.parent.asker`).
    pub asker: Option<Asker>,
    /// The host's MCP servers, for the session.
    pub mcp: Arc<subagent_core::mcp::HostMcpServers>,
    /// The `_meta` of `session/new` and `session/load` (what turns a known adapter's own
    /// sub-agents off, see `crate::nesting`).
    pub session_meta: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Starts the agent's process. Fails only before it exists.
pub(crate) fn spawn(plan: &RunPlan) -> crate::Result<Process> {
    let mut spec = ProcessSpec::new(&plan.program, &plan.cwd)
        .args(plan.args.iter().cloned())
        .stdin(StdinMode::Piped)
        .stop_policy(StopPolicy::new(Signal::Terminate).grace(plan.grace))
        .overall_timeout(plan.timeout)
        .withhold(plan.secrets.clone());
    for name in &plan.pass_env {
        spec = spec.pass_env(name);
    }
    spec = spec.envs(plan.env.iter().cloned());
    Ok(spec.spawn()?)
}

/// How the conversation ended.
enum Ended {
    /// The prompt was answered.
    Prompt(Box<PromptResponse>),
    /// Cancelled before the prompt was sent.
    CancelledEarly,
    /// A session to resume, and an agent that cannot load one.
    NotResumable,
}

/// Reads the agent to its end, then delivers the outcome.
/// `admitted` is the child's room among its row's starting children: let go at its first
/// output line (the agent answers `initialize`) or at its end.
pub(crate) async fn drive(
    mut process: Process,
    sender: RunSender,
    plan: RunPlan,
    mut admitted: Option<subagent_process::admission::Admitted>,
) {
    let cancel = sender.cancel_token().clone();
    // Stops the turn: the run's cancel, or the agent asking permission past the bound.
    let halt = cancel.child_token();
    let overrun = Arc::new(AtomicBool::new(false));
    let state = Arc::new(Mutex::new(StreamState::default()));
    let (lines_in, lines) = futures::channel::mpsc::unbounded::<std::io::Result<String>>();
    let outgoing = futures::sink::unfold(process.take_stdin(), async |stdin, mut line: String| {
        let Some(mut stdin) = stdin else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the agent's stdin is closed",
            ));
        };
        // One write for the line and its newline.
        line.push('\n');
        stdin.write_all(line.as_bytes()).await?;
        Ok(Some(stdin))
    });
    let transport = Lines::new(Box::pin(outgoing), lines);
    // The conversation is polled here, in the run's one task (see `crate::coalesce`), not
    // spawned: a line read is a line the SDK parses in the same turn.
    let mut conversation = Box::pin(converse(
        transport,
        Setup {
            cwd: plan.cwd.clone(),
            grace: plan.grace,
            prompt: plan.prompt.clone(),
            resume: plan.resume.clone(),
            mode: plan.mode,
            session_mode: plan.session_mode.clone(),
            permissions: plan.permissions,
            asker: plan.asker.clone(),
            files: plan.files.clone(),
            mcp: Arc::clone(&plan.mcp),
            session_meta: plan.session_meta.clone(),
            permission_bound: PermissionBound {
                max: plan.max_permission_requests,
                asked: Arc::new(AtomicU32::new(0)),
                overrun: Arc::clone(&overrun),
            },
        },
        sender.emitter(),
        halt.clone(),
        Arc::clone(&state),
    ));
    let mut stdout_open = true;
    let mut read_error = None;
    let mut kill_at: Option<Instant> = None;
    let mut overdue = false;
    // The overall limit, kept here too: the process owner's own timer is not reached while the
    // agent floods its stdout (its reads come first), so a flood would outlast it.
    let deadline = plan.timeout.map(|timeout| Instant::now() + timeout);
    let mut timed_out = false;
    let ended = loop {
        let far = Instant::now() + Duration::from_secs(86_400);
        tokio::select! {
            line = process.next_line(), if stdout_open => match line {
                Ok(Some(line)) => {
                    admitted.take();
                    // Redacted before the SDK parses it: every event and the outcome come from it.
                    let line = match plan.secrets.redact(&line) {
                        std::borrow::Cow::Borrowed(_) => line,
                        std::borrow::Cow::Owned(redacted) => redacted,
                    };
                    // A closed channel: the connection is gone, and its own result says why.
                    let _ = lines_in.unbounded_send(Ok(line));
                }
                Ok(None) => {
                    stdout_open = false;
                    lines_in.close_channel();
                }
                Err(error) => {
                    read_error = Some(error.to_string());
                    stdout_open = false;
                    lines_in.close_channel();
                }
            },
            result = &mut conversation => {
                break result.map_err(|error| error.to_string());
            }
            () = halt.cancelled(), if kill_at.is_none() => {
                // `session/cancel` went out from the conversation; it has the grace period to
                // end the prompt as cancelled.
                kill_at = Some(Instant::now() + plan.grace);
            }
            () = tokio::time::sleep_until(deadline.unwrap_or(far)), if deadline.is_some() => {
                timed_out = true;
                break Err(format!(
                    "the run took longer than its limit ({} s, the row's timeout_secs): the agent was stopped",
                    plan.timeout.unwrap_or_default().as_secs()
                ));
            }
            () = tokio::time::sleep_until(kill_at.unwrap_or(far)), if kill_at.is_some() => {
                tracing::debug!("the ACP agent did not end its prompt within the grace period");
                overdue = true;
                break Err("the agent did not end its cancelled prompt within the grace period".to_owned());
            }
        }
    };
    // Neither adapter exits when its stdin closes. A polite SIGTERM first, so the agent keeps
    // what it writes at the end of a turn (claude's session transcript: killed at once, the
    // last answer was missing when the session was loaded again); the tree dies after the grace
    // period in any case, and is reaped.
    // The connection goes (and with it the agent's stdin) before the process is ended.
    drop(conversation);
    drop(lines_in);
    if overdue {
        process.kill();
    } else if timed_out {
        process.stop();
    } else {
        // What the agent started ends first, within the grace period: claude-agent-acp stops its
        // `claude` when the session closes, and `claude` writes the session's transcript on its
        // way out (signalled with its adapter, it sometimes had not: the next `session/load`
        // found no session). An agent with no children of its own goes on at once.
        if !process.settle_then_stop(plan.grace).await {
            tracing::debug!("the ACP agent's children outlasted the grace period");
        }
    }
    let exit = process.wait().await;
    let stderr_tail = match &exit {
        Ok(exit) => plan.secrets.redact(&exit.stderr_tail).into_owned(),
        Err(_) => String::new(),
    };
    let state = match state.lock() {
        Ok(mut state) => std::mem::take(&mut *state),
        Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
    };
    let session_id = state.session_id.clone();
    let outcome = match ended {
        _ if overrun.load(Ordering::SeqCst) => Outcome::with_status(
            subagent_core::StopReason::Failed,
            state.answer,
            Some(format!(
                "the agent asked more than {} permission requests in one turn (the row's \
                 max_permission_requests): the rest were answered cancelled and its turn was \
                 cancelled",
                plan.max_permission_requests
            )),
        ),
        Err(error) if timed_out => {
            Outcome::with_status(subagent_core::StopReason::Failed, state.answer, Some(error))
        }
        Ok(Ended::Prompt(response)) => state.outcome(&response, cancel.is_cancelled()),
        Ok(Ended::CancelledEarly) => Outcome::cancelled(),
        Ok(Ended::NotResumable) => Outcome::failed(
            "the agent cannot resume a session: its initialize answer does not offer loadSession",
        ),
        Err(_) if cancel.is_cancelled() => {
            let mut outcome = Outcome::cancelled();
            outcome.text = state.answer;
            outcome
        }
        Err(error) => {
            let mut diagnostic = format!("the ACP agent failed: {error}");
            if let Some(read) = read_error {
                diagnostic.push_str(&format!("; reading its output: {read}"));
            }
            if let Ok(exit) = &exit
                && let Some(stopped) = exit.stopped
                && stopped != subagent_process::StopCause::Requested
            {
                diagnostic.push_str(&format!("; it was stopped: {}", stopped.describe()));
            }
            let tail = stderr_tail.trim();
            if !tail.is_empty() {
                let lines: Vec<&str> = tail.lines().collect();
                let start = lines.len().saturating_sub(5);
                diagnostic.push_str(&format!("; its stderr ends: {}", lines[start..].join("\n")));
            }
            Outcome::with_status(
                subagent_core::StopReason::Failed,
                state.answer,
                Some(diagnostic),
            )
        }
    };
    let mut outcome = outcome;
    if let Some(id) = session_id {
        outcome.session = Some(SessionRef {
            provider: plan.provider.clone(),
            id,
            cwd: Some(plan.cwd.clone()),
            transcript: None,
        });
    }
    sender.finish(outcome);
}

/// What the conversation needs to know.
struct Setup {
    cwd: PathBuf,
    grace: Duration,
    prompt: String,
    resume: Option<String>,
    mode: PermissionMode,
    session_mode: Option<String>,
    permissions: PermissionPolicy,
    asker: Option<Asker>,
    files: Files,
    mcp: Arc<subagent_core::mcp::HostMcpServers>,
    session_meta: Option<serde_json::Map<String, serde_json::Value>>,
    permission_bound: PermissionBound,
}

/// How many permission requests the turn answers; past it each is answered `cancelled`, the
/// turn is halted and `overrun` says why.
#[derive(Clone)]
struct PermissionBound {
    max: u32,
    asked: Arc<AtomicU32>,
    overrun: Arc<AtomicBool>,
}

/// Runs `f` on the stream state (a poisoned lock is still the state).
fn with_state<T>(state: &Mutex<StreamState>, f: impl FnOnce(&mut StreamState) -> T) -> T {
    match state.lock() {
        Ok(mut state) => f(&mut state),
        Err(poisoned) => f(&mut poisoned.into_inner()),
    }
}

fn fs_error(message: String) -> agent_client_protocol::Error {
    agent_client_protocol::Error::new(agent_client_protocol::ErrorCode::INVALID_PARAMS, message)
}

/// `initialize` → `session/new` → (`session/set_mode`) → `session/prompt`; a cancel sends
/// `session/cancel` and keeps waiting for the prompt's answer.
async fn converse<O, I>(
    transport: Lines<O, I>,
    setup: Setup,
    emitter: RunEmitter,
    cancel: CancellationToken,
    state: Arc<Mutex<StreamState>>,
) -> Result<Ended, agent_client_protocol::Error>
where
    O: futures::Sink<String, Error = std::io::Error> + Send + 'static,
    I: futures::Stream<Item = std::io::Result<String>> + Send + 'static,
{
    let Setup {
        cwd,
        grace,
        prompt,
        resume,
        mode,
        session_mode,
        permissions,
        asker,
        files,
        mcp,
        session_meta,
        permission_bound,
    } = setup;
    let read_files = files.clone();
    let cwd_for_questions = cwd.clone();
    let halt = cancel.clone();
    let session_state = Arc::clone(&state);
    Client
        .v1()
        .name("subagents")
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                let mut events = Vec::new();
                match state.lock() {
                    Ok(mut state) => state.update(notification.update, &mut events),
                    Err(poisoned) => poisoned
                        .into_inner()
                        .update(notification.update, &mut events),
                }
                for event in events {
                    emitter.emit(event);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, cx| {
                let asked = permission_bound.asked.fetch_add(1, Ordering::SeqCst);
                if asked >= permission_bound.max {
                    // An agent asking in a loop: no more answers, its turn is cancelled.
                    permission_bound.overrun.store(true, Ordering::SeqCst);
                    halt.cancel();
                    tracing::debug!(asked, "session/request_permission past the bound");
                    return responder.respond(RequestPermissionResponse::new(
                        RequestPermissionOutcome::Cancelled,
                    ));
                }
                if let Some(asker) = asker.clone() {
                    // The parent answers (its rules, hooks, user): beside the dispatch loop, so
                    // the agent's other messages keep flowing; a cancelled run denies.
                    let question = crate::asking::question(&request, &cwd_for_questions);
                    let cancel = halt.clone();
                    return cx.spawn(async move {
                        let answer = tokio::select! {
                            answer = asker.ask(question) => answer,
                            () = cancel.cancelled() => ToolAnswer::Deny {
                                message: "cancelled while waiting for permission".to_owned(),
                            },
                        };
                        let response = crate::asking::response(&answer, mode, &request);
                        tracing::debug!(?request, ?answer, ?response, "session/request_permission");
                        responder.respond(response)
                    });
                }
                let response = answer(permissions, mode, &request);
                tracing::debug!(?request, ?response, "session/request_permission");

                responder.respond(response)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest, responder, _cx| {
                tracing::debug!(path = %request.path.display(), "fs/read_text_file");
                match read_files.read(&request.path, request.line, request.limit) {
                    Ok(text) => responder.respond(ReadTextFileResponse::new(text)),
                    Err(message) => responder.respond_with_error(fs_error(message)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WriteTextFileRequest, responder, _cx| {
                tracing::debug!(path = %request.path.display(), "fs/write_text_file");
                match files.write(&request.path, &request.content) {
                    Ok(()) => responder.respond(WriteTextFileResponse::new()),
                    Err(message) => responder.respond_with_error(fs_error(message)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async move |cx| {
            let setup = async {
                let init = cx
                    .send_request(
                        InitializeRequest::new(ProtocolVersion::V1).client_capabilities(
                            ClientCapabilities::new().fs(FileSystemCapabilities::new()
                                .read_text_file(true)
                                .write_text_file(true)),
                        ),
                    )
                    .block_task()
                    .await?;
                let (mcp_servers, skipped) = crate::mcp::servers(
                    &mcp,
                    &cwd,
                    &init.agent_capabilities.mcp_capabilities,
                );
                if !skipped.is_empty() {
                    tracing::warn!(
                        target: "subagent::acp",
                        "the agent does not take MCP servers over HTTP or SSE (mcpCapabilities): {} not handed over",
                        skipped.join(", ")
                    );
                }
                let session_id = match resume {
                    Some(id) => {
                        if !init.agent_capabilities.load_session {
                            return Ok(None);
                        }
                        // The history the agent replays while loading is not this run's.
                        with_state(&session_state, |state| state.replaying = true);
                        let loaded = cx
                            .send_request(
                                LoadSessionRequest::new(id.clone(), cwd)
                                    .mcp_servers(mcp_servers)
                                    .meta(session_meta.clone()),
                            )
                            .block_task()
                            .await;
                        with_state(&session_state, |state| state.replaying = false);
                        loaded?;
                        SessionId::new(id)
                    }
                    None => {
                        cx.send_request(
                            NewSessionRequest::new(cwd)
                                .mcp_servers(mcp_servers)
                                .meta(session_meta.clone()),
                        )
                            .block_task()
                            .await?
                            .session_id
                    }
                };
                with_state(&session_state, |state| {
                    state.session_id = Some(session_id.0.to_string());
                });
                if let Some(mode_id) = session_mode {
                    cx.send_request(SetSessionModeRequest::new(session_id.clone(), mode_id))
                        .block_task()
                        .await?;
                }
                Ok::<_, agent_client_protocol::Error>(Some(session_id))
            };
            let session_id = tokio::select! {
                id = setup => match id? {
                    Some(id) => id,
                    None => return Ok(Ended::NotResumable),
                },
                () = cancel.cancelled() => return Ok(Ended::CancelledEarly),
            };
            let prompt = cx
                .send_request(PromptRequest::new(
                    session_id.clone(),
                    vec![ContentBlock::Text(TextContent::new(prompt))],
                ))
                .block_task();
            tokio::pin!(prompt);
            let response = tokio::select! {
                response = &mut prompt => response?,
                () = cancel.cancelled() => {
                    cx.send_notification(CancelNotification::new(session_id.clone()))?;
                    prompt.await?
                }
            };
            // The session ends before the process does: claude-agent-acp then lets claude finish
            // its transcript (stopped without it, a loaded session missed its last answer, or
            // was not found at all). An agent without `session/close` answers with an error,
            // which changes nothing; one that does not answer is not waited for past the grace
            // period.
            let close = cx
                .send_request(CloseSessionRequest::new(session_id))
                .block_task();
            if let Ok(Err(error)) = tokio::time::timeout(grace, close).await {
                tracing::debug!(%error, "session/close");
            }
            Ok(Ended::Prompt(Box::new(response)))
        })
        .await
}
