//! The settings' hooks of a run (issue 28): `SessionStart` and `UserPromptSubmit` before its
//! first turn, `Stop` before it ends, `SessionEnd` after; and around one tool call: `PreToolUse` after the deny rules and
//! before the call (it may block it, decide its permission, rewrite its input), then
//! `PermissionRequest` for a call someone would be asked about (a background run's only chance),
//! then `PostToolUse` after it (its exit 2 and its context reach the model with the result).
//!
//! A hook sees the call in Claude Code's terms, so a script written for Claude Code reads the
//! same keys: `tool_name` is Claude Code's (`Bash`, `Write`), and a file tool's input carries
//! `file_path` (absolute) beside our `path`.
//!
//! Deliberately not here: running hooks (`crate::hooks`), matching and merging rules
//! (`crate::permissions`).

use serde_json::{Map, Value, json};
use subagent_core::CancellationToken;
use subagent_session::{ContentBlock, Message};
use subagent_settings::HookEvent;

use crate::env::RunEnv;
use crate::hooks::{HookBase, HookDecision, HookRunner, HookVerdict};
use crate::permissions::claude_mode;
use crate::tools::ToolOutput;

/// The runner of the run's settings hooks; `None` when none is configured (nothing is built).
pub(super) fn runner(env: &RunEnv) -> Option<HookRunner> {
    let hooks = env.permissions.hooks()?;
    let project_dir = env
        .permissions
        .settings
        .as_ref()
        .map_or_else(|| env.roots.cwd().to_path_buf(), |s| s.project_root.clone());
    Some(
        HookRunner::new(
            hooks.clone(),
            HookBase {
                session_id: env.run_id.to_string(),
                transcript_path: None,
                cwd: env.roots.cwd().to_path_buf(),
                project_dir,
                permission_mode: claude_mode(env.permissions.mode).to_owned(),
                secrets: env.secrets.clone(),
            },
        )
        .with_env(env.permissions.settings_env().to_vec()),
    )
}

/// A call's input as a hook reads it: ours, plus `file_path` (absolute) where it names a file.
fn hook_input(input: &Value, env: &RunEnv) -> Value {
    let mut input = input.clone();
    if let Some(object) = input.as_object_mut()
        && !object.contains_key("file_path")
        && let Some(path) = object.get("path").and_then(Value::as_str)
    {
        let absolute = env.roots.cwd().join(path);
        object.insert(
            "file_path".to_owned(),
            Value::String(absolute.to_string_lossy().into_owned()),
        );
    }
    input
}

/// What a hook's `updatedInput` becomes for our tool: `file_path` read back as `path` when the
/// hook changed it, the rest as given.
fn our_input(mut updated: Value, before: &Value, env: &RunEnv) -> Value {
    if let Some(object) = updated.as_object_mut()
        && let Some(file_path) = object.remove("file_path")
    {
        let before_path = hook_input(before, env)
            .get("file_path")
            .cloned()
            .unwrap_or(Value::Null);
        if file_path != before_path || !object.contains_key("path") {
            object.insert("path".to_owned(), file_path);
        }
    }
    updated
}

fn keys(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// What `PreToolUse` decided about a call.
pub(super) enum Before {
    /// The call goes on (with this input), its permission decided by the hooks or not.
    Proceed {
        input: Value,
        permission: Option<HookDecision>,
        context: Vec<String>,
    },
    /// Refused: the text the model reads.
    Refused(String),
}

/// Runs `PreToolUse` for the call.
pub(super) async fn before(
    runner: &HookRunner,
    env: &RunEnv,
    name: &str,
    call_id: &str,
    input: Value,
    cancel: &CancellationToken,
) -> Before {
    let event_input = keys(json!({
        "tool_name": claude_name(name),
        "tool_input": hook_input(&input, env),
        "tool_use_id": call_id,
    }));
    let verdict = runner
        .run(&HookEvent::PreToolUse, Some(name), event_input, cancel)
        .await;
    report(&verdict);
    if let Some(text) = verdict.blocked {
        return Before::Refused(text);
    }
    if let Some((HookDecision::Deny, reason)) = &verdict.permission {
        return Before::Refused(format!("permission denied by a PreToolUse hook: {reason}"));
    }
    let input = match verdict.updated_input {
        Some(updated) => our_input(updated, &input, env),
        None => input,
    };
    Before::Proceed {
        input,
        permission: verdict.permission.map(|(decision, _)| decision),
        context: verdict.additional_context,
    }
}

/// Runs `PermissionRequest` for a call someone would be asked about: `Some(Ok)` allowed,
/// `Some(Err)` denied (with the text the model reads), `None` when no hook decided.
pub(super) async fn permission_request(
    runner: &HookRunner,
    env: &RunEnv,
    name: &str,
    input: &Value,
    cancel: &CancellationToken,
) -> Option<Result<(), String>> {
    let event_input = keys(json!({
        "tool_name": claude_name(name),
        "tool_input": hook_input(input, env),
    }));
    let verdict = runner
        .run(
            &HookEvent::PermissionRequest,
            Some(name),
            event_input,
            cancel,
        )
        .await;
    report(&verdict);
    if let Some(text) = verdict.blocked {
        return Some(Err(text));
    }
    match verdict.permission {
        Some((HookDecision::Allow, _)) => Some(Ok(())),
        Some((HookDecision::Deny, reason)) => Some(Err(format!(
            "permission denied by a PermissionRequest hook: {reason}"
        ))),
        _ => None,
    }
}

/// Runs `Notification` as the user is about to be asked about a call (Claude Code's
/// `permission_prompt`, its matcher): a hook can tell the user elsewhere; nothing it answers
/// changes the call.
pub(super) async fn notify_permission(runner: &HookRunner, name: &str, cancel: &CancellationToken) {
    let tool = claude_name(name);
    let event_input = keys(json!({
        "message": format!("Claude needs your permission to use {tool}"),
        "notification_type": "permission_prompt",
    }));
    let verdict = runner
        .run(
            &HookEvent::Notification,
            Some("permission_prompt"),
            event_input,
            cancel,
        )
        .await;
    report(&verdict);
}

/// Runs `PostToolUse` for a call that ran: what it adds to the result the model reads.
pub(super) async fn after(
    runner: &HookRunner,
    env: &RunEnv,
    name: &str,
    call_id: &str,
    input: &Value,
    output: &ToolOutput,
    cancel: &CancellationToken,
) -> Vec<String> {
    let response = if name == "bash" {
        json!({"stdout": output.content, "stderr": "", "interrupted": false, "isImage": false})
    } else {
        json!({"content": output.content, "is_error": output.is_error})
    };
    let event_input = keys(json!({
        "tool_name": claude_name(name),
        "tool_input": hook_input(input, env),
        "tool_response": response,
        "tool_use_id": call_id,
    }));
    let verdict = runner
        .run(&HookEvent::PostToolUse, Some(name), event_input, cancel)
        .await;
    report(&verdict);
    let mut added = verdict.additional_context;
    if let Some(text) = verdict.blocked {
        added.insert(0, text);
    }
    added
}

/// Runs the `Stop` hooks (a child's: `SubagentStop`) of a run about to end with `answer`: the text that keeps it going
/// (a hook's exit 2 stderr, or its `decision: block` reason), or `None` to end. A hook that has
/// kept the run going once sees `stop_hook_active: true` next time (and should let it end).
pub(super) async fn stop(
    env: &RunEnv,
    answer: &str,
    active: bool,
    cancel: &CancellationToken,
) -> Option<String> {
    let runner = runner(env)?;
    // A child's end is `SubagentStop`, the session's `Stop`, as in Claude Code.
    let (event, mut event_input) = if session(env) {
        (HookEvent::Stop, Map::new())
    } else {
        (
            HookEvent::SubagentStop,
            keys(json!({"agent_id": env.run_id.to_string()})),
        )
    };
    event_input.insert("stop_hook_active".to_owned(), Value::Bool(active));
    event_input.insert(
        "last_assistant_message".to_owned(),
        Value::String(answer.to_owned()),
    );
    let verdict = runner.run(&event, None, event_input, cancel).await;
    report(&verdict);
    // `continue: false` stops whatever else a hook said.
    if verdict.stop.is_some() {
        return None;
    }
    verdict.blocked
}

/// Runs a child's `SubagentStart`, or for the session `SessionStart` (`source`: `startup`, or
/// `resume` for a continued session) and then `UserPromptSubmit` for its prompt: what they add (`additionalContext`, or a hook's plain
/// stdout) goes into the prompt's message after its text; `Err` with the text that blocks the
/// prompt (then the model is never called).
pub(super) async fn prompt(
    env: &RunEnv,
    message: &mut Message,
    resumed: bool,
    cancel: &CancellationToken,
) -> Result<(), String> {
    let Some(runner) = runner(env) else {
        return Ok(());
    };
    // A child gets `SubagentStart` (its context goes into its prompt), the session the rest.
    if !session(env) {
        let verdict = runner
            .run(
                &HookEvent::SubagentStart,
                None,
                keys(json!({"agent_id": env.run_id.to_string()})),
                cancel,
            )
            .await;
        report(&verdict);
        for context in verdict.additional_context {
            message.content.push(ContentBlock::text(context));
        }
        return Ok(());
    }
    let source = if resumed { "resume" } else { "startup" };
    let start = runner
        .run(
            &HookEvent::SessionStart,
            Some(source),
            keys(json!({"source": source})),
            cancel,
        )
        .await;
    report(&start);
    let submitted = runner
        .run(
            &HookEvent::UserPromptSubmit,
            None,
            keys(json!({"prompt": message.text()})),
            cancel,
        )
        .await;
    report(&submitted);
    if let Some(text) = submitted.blocked {
        return Err(text);
    }
    for context in start
        .additional_context
        .into_iter()
        .chain(submitted.additional_context)
    {
        message.content.push(ContentBlock::text(context));
    }
    Ok(())
}

/// Runs the session's `SessionEnd` (`reason`: `other`, as after `claude -p`).
pub(super) async fn session_end(env: &RunEnv, cancel: &CancellationToken) {
    if !session(env) {
        return;
    }
    if let Some(runner) = runner(env) {
        let verdict = runner
            .run(
                &HookEvent::SessionEnd,
                None,
                keys(json!({"reason": "other"})),
                cancel,
            )
            .await;
        report(&verdict);
    }
}

/// Whether the run is the session (what a user started: `run`, `delegate`, a served task), not
/// a child of an in-process run, which has a lineage.
fn session(env: &RunEnv) -> bool {
    env.lineage.is_empty()
}

/// Claude Code's name of our tool (ours when it has none).
fn claude_name(name: &str) -> &str {
    subagent_settings::claude_tool_name(name).unwrap_or(name)
}

/// A hook's non-blocking errors and system messages go to the user (the log), never the model.
fn report(verdict: &HookVerdict) {
    for error in &verdict.errors {
        tracing::warn!(target: "subagent::hooks", "{error}");
    }
    for message in &verdict.system_messages {
        tracing::info!(target: "subagent::hooks", "{message}");
    }
}
