//! One `tools/call`: its arguments → a start request through the registry → the child's events
//! as progress → its outcome as the tool result.

use futures::StreamExt;
use rmcp::model::{
    CallToolResult, ContentBlock, JsonObject, MetaObject, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde::Deserialize;
use serde_json::{Value, json};
use subagent_core::agents::{AgentProfile, Layers, Settings};
use subagent_core::{
    CancellationToken, Error as CoreError, Isolation, Outcome, ParentContext, Run, RunEvent,
    SessionRef, StartRequest, default_description,
};

use crate::Shared;
use crate::tools::Entry;

/// The arguments a client sends (the delegation tool's, less `run_in_background`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Arguments {
    prompt: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    subagent_type: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    isolation: Option<String>,
    #[serde(default)]
    output_schema: Option<Value>,
    #[serde(default)]
    resume: Option<String>,
}

/// The longest progress message, in characters.
const PROGRESS_CHARS: usize = 200;

/// A refusal: an error result carrying the stable code, in the text and in `_meta.code`.
pub(crate) fn refusal(error: &CoreError) -> CallToolResult {
    let code = error.code().as_str();
    let mut meta = MetaObject::new();
    meta.0.insert("code".to_owned(), json!(code));
    CallToolResult::error(vec![ContentBlock::text(format!("error[{code}]: {error}"))])
        .with_meta(Some(meta))
}

/// Runs one call to its end and answers it.
pub(crate) async fn call(
    shared: &Shared,
    entry: &Entry,
    arguments: Option<JsonObject>,
    context: &RequestContext<RoleServer>,
    gone: Option<CancellationToken>,
) -> CallToolResult {
    let (provider, request) = match prepare(shared, entry, arguments) {
        Ok(started) => started,
        Err(error) => return refusal(&error),
    };
    let cancel = request.cancel.clone();
    let gone = gone.unwrap_or_default();
    let run = tokio::select! {
        biased;
        () = cancelled(&context.ct, &gone) => {
            cancel.cancel();
            return refusal(&CoreError::Cancelled);
        }
        started = shared.registry.start(&provider, request) => match started {
            Ok(run) => run,
            Err(error) => return refusal(&error),
        },
    };
    tracing::debug!(run_id = %run.id(), %provider, tool = %entry.row.name, "MCP call started a child");
    let progress = context
        .meta
        .get_progress_token()
        .map(|token| Progress::new(context.peer.clone(), token));
    let outcome = drive(run, progress, &context.ct, &gone).await;
    answer(&outcome, &provider)
}

/// Resolves once either token is cancelled: the client's `notifications/cancelled` (or the
/// client gone), or over HTTP the call's stream dropped or its session ended.
async fn cancelled(ct: &CancellationToken, gone: &CancellationToken) {
    tokio::select! {
        () = ct.cancelled() => {}
        () = gone.cancelled() => {}
    }
}

/// A call's arguments, as the client sent them, read and turned into the provider and the
/// request to start, or why the call is refused before anything starts. Nothing is started.
pub(crate) fn prepare(
    shared: &Shared,
    entry: &Entry,
    arguments: Option<JsonObject>,
) -> Result<(String, StartRequest), CoreError> {
    let arguments = Value::Object(arguments.unwrap_or_default());
    let args: Arguments =
        serde_json::from_value(arguments).map_err(|error| CoreError::invalid(error.to_string()))?;
    request(shared, entry, &args)
}

/// The provider and the request a call asks for, or why it is refused before anything starts.
fn request(
    shared: &Shared,
    entry: &Entry,
    args: &Arguments,
) -> Result<(String, StartRequest), CoreError> {
    if args.prompt.trim().is_empty() {
        return Err(CoreError::invalid("\"prompt\" must not be empty"));
    }
    let row = &entry.row;
    let profile = match &args.subagent_type {
        Some(name) => Some(
            shared
                .agents
                .get(name)
                .ok_or_else(|| CoreError::UnknownAgentType {
                    name: name.clone(),
                    available: shared.agents.agents().into_iter().map(|a| a.name).collect(),
                })?,
        ),
        None => None,
    };
    let provider = profile
        .as_ref()
        .and_then(|profile| profile.provider.clone())
        .unwrap_or_else(|| row.provider.clone());
    let isolation = Isolation::resolve(args.isolation.as_deref(), profile.as_ref())?;
    let capabilities = shared
        .registry
        .get(&provider)
        .map(|p| p.capabilities())
        .unwrap_or(subagent_core::Capabilities::NONE);
    let config = &shared.config;
    let mut parent = ParentContext::new(&config.cwd);
    parent.extensions = config.extensions.clone();
    let description = args
        .description
        .clone()
        .filter(|d| !d.trim().is_empty())
        .unwrap_or_else(|| default_description(&args.prompt));
    let mut builder = StartRequest::builder(args.prompt.clone())
        .description(description)
        .parent(parent)
        .cancel(shared.connection.child_token())
        .permission_rules(config.permission_rules.clone());
    if let Some(schema) = &args.output_schema {
        builder = builder.output_schema(schema.clone());
    }
    // The caller is a top-level parent (depth 0): its child runs at depth 1. As the delegation
    // tool does, a provider that enforces depth is told the cap, which is the child's own depth
    // unless the row or the agent type opts into nesting.
    let cap = config
        .max_depth
        .min(shared.registry.max_depth())
        .min(row.max_depth.unwrap_or(u32::MAX));
    if capabilities.depth_limit {
        let child_cap = if nests(row, profile.as_ref()) {
            cap
        } else {
            cap.min(1)
        };
        builder = builder.max_depth(child_cap);
    } else if cap < shared.registry.max_depth() {
        builder = builder.max_depth(cap);
    }
    // The one resolver: the call's model > the agent type > the row's filter > the server's
    // ceiling (never loosened by an agent type's mode).
    let mut layers = Layers::default();
    if let Some(mode) = config.permission_ceiling {
        layers.parent = Settings::default().permission_mode(mode);
    }
    if let Some(model) = &args.model {
        layers.request = Settings::default().model(model.clone());
    }
    if let Some(filter) = &row.tool_filter {
        layers.persona = Settings::default().tool_filter(filter.clone());
    }
    if let Some(persona) = &row.persona {
        builder = builder.add_persona(persona);
    }
    builder = builder.agent_with(profile.as_ref(), layers);
    let mut request = builder.build();
    // What the agent type gives its child beyond its settings (skills, memory, MCP servers;
    // its hooks run only where a child runs in process, and not through this door).
    if let Some(profile) = &profile {
        for warning in profile.give(&mut request) {
            tracing::warn!("{warning}");
        }
    }
    request.isolation = isolation;
    request.resume = args.resume.as_ref().map(|id| SessionRef {
        provider: provider.clone(),
        id: id.clone(),
        cwd: Some(config.cwd.clone()),
        transcript: None,
    });
    Ok((provider, request))
}

/// Whether a child of `row`, of agent type `profile`, may delegate in turn (the delegation
/// tool's rule): the row sets `max_depth`, or the agent type lists the row's tool or agent
/// types of its own.
fn nests(row: &subagent_preset::ToolRow, profile: Option<&AgentProfile>) -> bool {
    let listed = profile
        .and_then(|profile| profile.tool_filter.as_ref())
        .and_then(|filter| filter.allow.as_ref())
        .is_some_and(|allow| allow.contains(&row.name));
    let restricted = profile.is_some_and(|profile| profile.agent_types.is_some());
    row.max_depth.is_some() || listed || restricted
}

/// Progress notifications of one call.
struct Progress {
    peer: Peer<RoleServer>,
    token: ProgressToken,
    count: u32,
    /// The child's text since its last tool call.
    text: String,
}

impl Progress {
    fn new(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        Self {
            peer,
            token,
            count: 0,
            text: String::new(),
        }
    }

    async fn event(&mut self, event: &RunEvent) {
        // A text delta is reported with the text before it (a word alone says little).
        let message = match event {
            RunEvent::Text {
                text,
                parent_tool_use_id: None,
            } => {
                self.text.push_str(text);
                (!self.text.trim().is_empty()).then(|| format!("text: {}", tail(&self.text)))
            }
            other => {
                if matches!(other, RunEvent::ToolCall { .. }) {
                    self.text.clear();
                }
                progress_message(other)
            }
        };
        let Some(message) = message else {
            return;
        };
        self.count += 1;
        let param = ProgressNotificationParam::new(self.token.clone(), f64::from(self.count))
            .with_message(message);
        if let Err(error) = self.peer.notify_progress(param).await {
            tracing::debug!(%error, "a progress notification was not sent");
        }
    }
}

fn shorten(text: &str) -> String {
    let trimmed = text.trim();
    match trimmed.char_indices().nth(PROGRESS_CHARS) {
        Some((at, _)) => format!("{}…", &trimmed[..at]),
        None => trimmed.to_owned(),
    }
}

/// The last [`PROGRESS_CHARS`] characters of `text`, trimmed.
fn tail(text: &str) -> String {
    let trimmed = text.trim();
    let count = trimmed.chars().count();
    match trimmed
        .char_indices()
        .nth(count.saturating_sub(PROGRESS_CHARS))
    {
        Some((at, _)) if at > 0 => format!("…{}", &trimmed[at..]),
        _ => trimmed.to_owned(),
    }
}

/// What a progress notification says of an event (`None`: nothing worth one).
fn progress_message(event: &RunEvent) -> Option<String> {
    match event {
        RunEvent::Started {
            provider,
            description,
            ..
        } => Some(format!("started on {provider}: {description}")),
        RunEvent::Text { text, .. } if !text.trim().is_empty() => {
            Some(format!("text: {}", shorten(text)))
        }
        RunEvent::ToolCall { name, .. } => Some(format!("tool call: {name}")),
        RunEvent::ToolResult { is_error, .. } => Some(
            if *is_error {
                "tool result (error)"
            } else {
                "tool result"
            }
            .to_owned(),
        ),
        RunEvent::Usage { usage, .. } => Some(format!(
            "usage: {} input tokens, {} output tokens",
            usage.input_tokens, usage.output_tokens
        )),
        RunEvent::Progress { message, .. } => Some(shorten(message)),
        RunEvent::TaskStarted {
            task_id,
            description,
            ..
        } => Some(format!(
            "background task {task_id} started: {}",
            shorten(description)
        )),
        RunEvent::TaskEnded {
            task_id,
            status,
            description,
            ..
        } => Some(format!(
            "background task {task_id} {status}: {}",
            shorten(description)
        )),
        RunEvent::Summary { text, .. } => Some(format!("summary: {}", shorten(text))),
        _ => None,
    }
}

/// Waits for the run's outcome, turning its events into progress meanwhile; `ct` or `gone`
/// cancelled ([`cancelled`]) cancels the run, whose outcome is
/// still awaited so its process tree is gone before the call ends.
async fn drive(
    mut run: Run,
    mut progress: Option<Progress>,
    ct: &CancellationToken,
    gone: &CancellationToken,
) -> Outcome {
    let mut events = run.take_events();
    let mut watching = true;
    loop {
        tokio::select! {
            biased;
            () = cancelled(ct, gone), if watching => {
                tracing::debug!(run_id = %run.id(), "the MCP client cancelled the call");
                run.cancel();
                watching = false;
            }
            event = next(&mut events) => match event {
                Some(event) => {
                    if let Some(progress) = progress.as_mut() {
                        progress.event(&event).await;
                    }
                }
                None => break,
            },
        }
    }
    run.outcome().await
}

async fn next(events: &mut Option<subagent_core::RunEvents>) -> Option<RunEvent> {
    match events {
        Some(events) => events.next().await,
        None => None,
    }
}

/// The usage and session lines after the answer.
fn trailer(outcome: &Outcome) -> String {
    let u = &outcome.usage;
    let mut text = String::new();
    if let Some(session) = &outcome.session {
        text.push_str(&format!("<session_id>{}</session_id>\n", session.id));
    }
    if let Some(worktree) = &outcome.worktree {
        text.push_str(&format!(
            "<worktree>\npath: {}\nbranch: {}\nchanges:\n{}\n</worktree>\n",
            worktree.path.display(),
            worktree.branch,
            worktree.diffstat
        ));
    }
    text.push_str(&format!(
        "<usage>input_tokens: {}, output_tokens: {}, tool_uses: {}, duration_ms: {}</usage>",
        u.input_tokens, u.output_tokens, u.tool_uses, u.duration_ms
    ));
    text
}

/// The tool result of an outcome: the answer (the structured output as JSON text and as
/// `structuredContent` when there is one), then the session, worktree and usage; anything but
/// `completed` is an error result with the status, the diagnostic and the partial text.
pub(crate) fn answer(outcome: &Outcome, provider: &str) -> CallToolResult {
    let mut meta = MetaObject::new();
    meta.0.insert("provider".to_owned(), json!(provider));
    meta.0.insert("status".to_owned(), json!(outcome.status));
    if let Some(session) = &outcome.session {
        meta.0.insert("sessionId".to_owned(), json!(session.id));
    }
    if outcome.is_completed() {
        let body = match &outcome.structured {
            Some(value) => value.to_string(),
            None => outcome.text.clone(),
        };
        let mut result = CallToolResult::success(vec![
            ContentBlock::text(body),
            ContentBlock::text(trailer(outcome)),
        ]);
        result.structured_content = outcome.structured.clone();
        return result.with_meta(Some(meta));
    }
    let mut text = format!("The agent did not complete: {}", outcome.status);
    if let Some(diagnostic) = &outcome.diagnostic {
        text.push_str(&format!("\nDiagnostic: {diagnostic}"));
    }
    if !outcome.text.is_empty() {
        text.push_str(&format!("\nPartial output:\n{}", outcome.text));
    }
    CallToolResult::error(vec![
        ContentBlock::text(text),
        ContentBlock::text(trailer(outcome)),
    ])
    .with_meta(Some(meta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_refusal_carries_the_code_in_text_and_meta() {
        let result = refusal(&CoreError::DepthExceeded {
            child_depth: 1,
            max_depth: 0,
        });
        let value = serde_json::to_value(&result).unwrap();
        assert_eq!(value["isError"], true);
        assert_eq!(
            value["content"][0]["text"],
            "error[DEPTH_EXCEEDED]: subagent depth 1 exceeds max_depth 0"
        );
        assert_eq!(value["_meta"]["code"], "DEPTH_EXCEEDED");
    }

    #[test]
    fn progress_messages_are_short_and_skip_lifecycle_ends() {
        let long = "x".repeat(500);
        let message = progress_message(&RunEvent::Text {
            text: long,
            parent_tool_use_id: None,
        })
        .unwrap();
        assert_eq!(message.chars().count(), "text: ".len() + PROGRESS_CHARS + 1);
        assert_eq!(
            progress_message(&RunEvent::Finished {
                status: subagent_core::StopReason::Completed
            }),
            None
        );
        assert_eq!(
            progress_message(&RunEvent::Summary {
                text: "Reading the parser.\n".into(),
                parent_tool_use_id: None
            }),
            Some("summary: Reading the parser.".to_owned())
        );
    }

    #[test]
    fn the_tail_keeps_the_last_characters() {
        assert_eq!(tail("  short  "), "short");
        let long = format!("{}end", "é".repeat(300));
        let kept = tail(&long);
        assert!(kept.starts_with('…') && kept.ends_with("end"), "{kept}");
        assert_eq!(kept.chars().count(), PROGRESS_CHARS + 1);
    }

    #[test]
    fn an_outcome_that_did_not_complete_is_an_error_with_its_diagnostic() {
        let outcome = Outcome::failed("the model went away");
        let value = serde_json::to_value(answer(&outcome, "spawn")).unwrap();
        assert_eq!(value["isError"], true);
        assert_eq!(
            value["content"][0]["text"],
            "The agent did not complete: failed\nDiagnostic: the model went away"
        );
        assert_eq!(value["_meta"]["status"], "failed");
    }
}
