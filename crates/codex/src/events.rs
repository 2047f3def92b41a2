//! Reading `codex exec --json` output: one JSON object per stdout line, turned into
//! [`RunEvent`]s and the facts the outcome is made of (thread id, last answer, usage, failure).
//!
//! Event shapes (codex 0.171.0): `thread.started {thread_id}`, `turn.started`,
//! `item.started` / `item.updated` / `item.completed {item: {id, type, …}}`,
//! `turn.completed {usage}`, `turn.failed {error: {message}}`, `error {message}`. Each line is
//! parsed once into the typed events of [`wire`]. Unknown event and item types are tolerated
//! (codex adds them between releases): they become progress events.

mod wire;

use serde_json::{Value, json};
use subagent_core::text::{Limit, truncate_marked};
use subagent_core::{RunEvent, Usage};

use wire::{Change, Event, Item, ItemKind, Kind, Parsed, Unnamed};

/// The prefix of the `error` events codex emits while it retries (forever, for a refused
/// connection). They are progress, not a failure, and not activity either.
pub const RECONNECTING_PREFIX: &str = "Reconnecting...";

/// The most of a tool's output a [`RunEvent::ToolResult`] carries, in bytes.
pub const TOOL_OUTPUT_LIMIT: usize = 16 * 1024;

/// How a line moved the run along, for the idle timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    /// Real progress: resets both idle timers.
    Progress,
    /// Codex is reconnecting to the model server: starts (or keeps) the reconnect timer.
    Reconnecting,
}

/// What the stream said so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamState {
    /// The thread id from `thread.started`.
    pub thread_id: Option<String>,
    /// The text of the last `agent_message` item.
    pub last_message: Option<String>,
    /// Usage summed over `turn.completed` events, plus the tool-use count.
    pub usage: Usage,
    /// A `turn.completed` was seen.
    pub turn_completed: bool,
    /// The message of `turn.failed`, if any.
    pub turn_failed: Option<String>,
    /// The last `error` event's message (reconnect messages included).
    pub last_error: Option<String>,
    /// Lines that were not JSON objects (kept short, for diagnostics).
    pub stray_lines: Vec<String>,
    started_items: std::collections::HashSet<String>,
}

/// `text` within `limit` bytes, a cut marked so the model knows output is missing.
fn truncate(text: &str, limit: usize) -> String {
    truncate_marked(text, Limit::Bytes(limit), "…[truncated]").into_owned()
}

/// The tool name and input a tool-like item is reported with, or `None` for other items.
fn tool_call_of(kind: &ItemKind) -> Option<(String, Value)> {
    match kind {
        ItemKind::CommandExecution { command, .. } => {
            Some(("exec_command".to_owned(), json!({"command": command})))
        }
        ItemKind::FileChange { changes } => {
            Some(("apply_patch".to_owned(), json!({"changes": changes})))
        }
        ItemKind::CollabToolCall { tool, prompt, .. } => Some((
            tool.as_deref().unwrap_or("collab_tool_call").to_owned(),
            json!({"prompt": prompt}),
        )),
        ItemKind::McpToolCall {
            server,
            tool,
            arguments,
            ..
        } => Some((
            format!(
                "mcp__{}__{}",
                server.as_deref().unwrap_or("unknown"),
                tool.as_deref().unwrap_or("unknown")
            ),
            arguments.clone(),
        )),
        ItemKind::WebSearch { query, .. } => {
            Some(("web_search".to_owned(), json!({"query": query})))
        }
        ItemKind::AgentMessage { .. } | ItemKind::Reasoning { .. } | ItemKind::Error { .. } => None,
    }
}

/// The output text and error flag a completed tool-like item is reported with.
fn tool_result_of(kind: &ItemKind, failed: bool) -> (String, bool) {
    match kind {
        ItemKind::CommandExecution {
            aggregated_output,
            exit_code,
            ..
        } => (
            aggregated_output.clone(),
            failed || exit_code.is_some_and(|code| code != 0),
        ),
        ItemKind::FileChange { changes } => {
            let changes = Change::all(changes)
                .iter()
                .map(|change| {
                    format!(
                        "{} {}",
                        change.kind.as_deref().unwrap_or("update"),
                        change.path.as_deref().unwrap_or("?")
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            (changes, failed)
        }
        ItemKind::CollabToolCall {
            receiver_thread_ids,
            ..
        } => (
            json!({"receiver_thread_ids": receiver_thread_ids}).to_string(),
            failed,
        ),
        ItemKind::McpToolCall { answer, .. } | ItemKind::WebSearch { answer, .. } => {
            let result = answer
                .result
                .as_ref()
                .or(answer.error.as_ref())
                .map(|value| match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_default();
            (
                result,
                failed || answer.error.as_ref().is_some_and(|e| !e.is_null()),
            )
        }
        ItemKind::AgentMessage { .. } | ItemKind::Reasoning { .. } | ItemKind::Error { .. } => {
            (String::new(), failed)
        }
    }
}

impl StreamState {
    /// Reads one stdout line, pushing the events it makes into `out`. Returns how the line moved
    /// the run along.
    pub fn line(&mut self, line: &str, out: &mut Vec<RunEvent>) -> Activity {
        let line = line.trim();
        if line.is_empty() {
            return Activity::Progress;
        }
        let event = match wire::parse(line) {
            Parsed::Event(event) => event,
            Parsed::Unknown(kind) => {
                out.push(RunEvent::progress(format!("codex event {kind}")));
                return Activity::Progress;
            }
            Parsed::Stray => {
                if self.stray_lines.len() < 8 {
                    self.stray_lines.push(truncate(line, 512));
                }
                return Activity::Progress;
            }
        };
        match *event {
            Event::ThreadStarted { thread_id } => {
                if thread_id.is_some() {
                    self.thread_id = thread_id;
                }
            }
            Event::TurnStarted => {}
            Event::TurnCompleted { usage } => {
                self.turn_completed = true;
                self.usage.add(&Usage::from(usage));
                out.push(RunEvent::Usage {
                    usage: self.usage,
                    parent_tool_use_id: None,
                });
            }
            Event::TurnFailed { error } => {
                self.turn_failed = Some(error.message.unwrap_or_else(|| {
                    "codex reported a failed turn without a message".to_owned()
                }));
            }
            Event::Error { message } => {
                let message = message.unwrap_or_else(|| "codex reported an error".to_owned());
                self.last_error = Some(message.clone());
                let reconnecting = message.starts_with(RECONNECTING_PREFIX);
                out.push(RunEvent::progress(message));
                if reconnecting {
                    return Activity::Reconnecting;
                }
            }
            Event::ItemStarted(event) | Event::ItemUpdated(event) => {
                if let Some(item) = event.item() {
                    self.item(item, false, out);
                }
            }
            Event::ItemCompleted(event) => {
                if let Some(item) = event.item() {
                    self.item(item, true, out);
                }
            }
        }
        Activity::Progress
    }

    fn item(&mut self, item: Item, completed: bool, out: &mut Vec<RunEvent>) {
        let Item { id, status, kind } = item;
        let kind = match kind {
            Kind::Known(kind) => kind,
            Kind::Unknown(Unnamed { kind }) => {
                if completed {
                    out.push(RunEvent::progress(format!("codex item {kind}")));
                }
                return;
            }
        };
        if let Some((name, input)) = tool_call_of(&kind) {
            if self.started_items.insert(id.clone()) {
                self.usage.tool_uses += 1;
                out.push(RunEvent::ToolCall {
                    id: id.clone(),
                    name,
                    input,
                    parent_tool_use_id: None,
                });
            }
            if completed {
                let (output, is_error) = tool_result_of(&kind, status.as_deref() == Some("failed"));
                out.push(RunEvent::ToolResult {
                    id,
                    output: truncate(&output, TOOL_OUTPUT_LIMIT),
                    is_error,
                    parent_tool_use_id: None,
                });
            }
            return;
        }
        if !completed {
            return;
        }
        out.push(match *kind {
            ItemKind::AgentMessage { text } => {
                self.last_message = Some(text.clone());
                RunEvent::Text {
                    text,
                    parent_tool_use_id: None,
                }
            }
            ItemKind::Reasoning { text } => RunEvent::Thinking { text },
            ItemKind::Error { message } => {
                RunEvent::progress(message.unwrap_or_else(|| "codex warning".to_owned()))
            }
            // Tool-like kinds returned above.
            _ => return,
        });
    }
}

#[cfg(test)]
mod tests;
