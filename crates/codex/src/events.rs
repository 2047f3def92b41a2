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
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn feed(lines: &str) -> (StreamState, Vec<RunEvent>) {
        let mut state = StreamState::default();
        let mut out = Vec::new();
        for line in lines.lines() {
            state.line(line, &mut out);
        }
        (state, out)
    }

    #[test]
    fn hello() {
        let (state, events) = feed(concat!(
            r#"{"type":"thread.started","thread_id":"t-1"}"#,
            "\n",
            r#"{"type":"turn.started"}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"hmm"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"hi from fake"}}"#,
            "\n",
            r#"{"type":"turn.completed","usage":{"input_tokens":9517,"cached_input_tokens":17,"cache_write_input_tokens":3,"output_tokens":46,"reasoning_output_tokens":0}}"#,
        ));
        let usage = Usage {
            input_tokens: 9500,
            output_tokens: 46,
            cache_read_tokens: 17,
            cache_write_tokens: 3,
            ..Usage::default()
        };
        assert_eq!(
            events,
            vec![
                RunEvent::Thinking { text: "hmm".into() },
                RunEvent::Text {
                    text: "hi from fake".into(),
                    parent_tool_use_id: None
                },
                RunEvent::Usage {
                    usage,
                    parent_tool_use_id: None
                },
            ]
        );
        assert_eq!(state.thread_id.as_deref(), Some("t-1"));
        assert_eq!(state.last_message.as_deref(), Some("hi from fake"));
        assert!(state.turn_completed);
        assert_eq!(state.usage, usage);
    }

    #[test]
    fn command_and_patch_items_become_tool_calls() {
        let (state, events) = feed(concat!(
            r#"{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'ls /x'","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'ls /x'","aggregated_output":"ls: no\n","exit_code":2,"status":"failed"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"/p/a.txt","kind":"add"}],"status":"completed"}}"#,
        ));
        assert_eq!(
            events,
            vec![
                RunEvent::ToolCall {
                    id: "item_1".into(),
                    name: "exec_command".into(),
                    input: json!({"command": "/bin/bash -lc 'ls /x'"}),
                    parent_tool_use_id: None
                },
                RunEvent::ToolResult {
                    id: "item_1".into(),
                    output: "ls: no\n".into(),
                    is_error: true,
                    parent_tool_use_id: None
                },
                RunEvent::ToolCall {
                    id: "item_2".into(),
                    name: "apply_patch".into(),
                    input: json!({"changes": [{"path": "/p/a.txt", "kind": "add"}]}),
                    parent_tool_use_id: None
                },
                RunEvent::ToolResult {
                    id: "item_2".into(),
                    output: "add /p/a.txt".into(),
                    is_error: false,
                    parent_tool_use_id: None
                },
            ]
        );
        assert_eq!(state.usage.tool_uses, 2);
    }

    #[test]
    fn failures_and_reconnects() {
        let mut state = StreamState::default();
        let mut out = Vec::new();
        let reconnect = r#"{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}"#;
        assert_eq!(state.line(reconnect, &mut out), Activity::Reconnecting);
        assert_eq!(
            state.line(
                r#"{"type":"error","message":"The model `bogus` does not exist"}"#,
                &mut out
            ),
            Activity::Progress
        );
        state.line(
            r#"{"type":"turn.failed","error":{"message":"The model `bogus` does not exist"}}"#,
            &mut out,
        );
        assert_eq!(
            state.turn_failed.as_deref(),
            Some("The model `bogus` does not exist")
        );
        assert!(!state.turn_completed);
    }

    #[test]
    fn stray_and_unknown_lines_are_tolerated() {
        let (state, events) = feed(concat!(
            "warning: something\n",
            r#"{"type":"brand.new","x":1}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `m` not found."}}"#,
            "\n[1,2]",
        ));
        assert_eq!(
            state.stray_lines,
            vec!["warning: something".to_owned(), "[1,2]".to_owned()]
        );
        assert_eq!(
            events,
            vec![
                RunEvent::progress("codex event brand.new"),
                RunEvent::progress("Model metadata for `m` not found."),
            ]
        );
    }

    /// Every line of the copies of the real CLI's output in `tests/fixtures` (from the
    /// reference transcripts of codex 0.171.0), with its file's name.
    pub(super) fn fixture_lines() -> Vec<(String, String)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        subagent_test_support::cli_lines::transcript_lines(&dir).unwrap()
    }

    /// Each recorded transcript, line by line: one compact JSON line per event it makes
    /// (`reconnecting` where a line started the reconnect timer), then what the outcome is made
    /// of.
    #[test]
    fn the_recorded_transcripts_make_these_events() {
        let lines = fixture_lines();
        let transcripts: Vec<_> = lines.chunk_by(|a, b| a.0 == b.0).collect();
        assert_eq!(transcripts.len(), 18);
        for transcript in transcripts {
            let mut state = StreamState::default();
            let mut lines = Vec::new();
            for (_, line) in transcript {
                let mut out = Vec::new();
                if state.line(line, &mut out) == Activity::Reconnecting {
                    lines.push("reconnecting".to_owned());
                }
                lines.extend(
                    out.iter()
                        .map(|event| serde_json::to_string(event).unwrap()),
                );
            }
            let mut started: Vec<_> = state.started_items.iter().collect();
            started.sort();
            lines.push(
                json!({
                    "thread_id": state.thread_id, "last_message": state.last_message,
                    "usage": state.usage, "turn_completed": state.turn_completed,
                    "turn_failed": state.turn_failed, "last_error": state.last_error,
                    "stray_lines": state.stray_lines, "started_items": started,
                })
                .to_string(),
            );
            insta::assert_snapshot!(transcript[0].0.clone(), lines.join("\n"));
        }
    }

    #[test]
    fn long_tool_output_is_bounded() {
        let long = "é".repeat(TOOL_OUTPUT_LIMIT);
        let line =
            json!({"type": "item.completed", "item": {"id": "i", "type": "command_execution",
            "command": "x", "aggregated_output": long, "exit_code": 0, "status": "completed"}})
            .to_string();
        let (_, events) = feed(&line);
        let Some(RunEvent::ToolResult { output, .. }) = events.get(1) else {
            panic!("no tool result: {events:?}");
        };
        assert!(output.len() <= TOOL_OUTPUT_LIMIT + "…[truncated]".len());
        assert!(output.ends_with("…[truncated]"));
    }
}
